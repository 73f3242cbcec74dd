//! Why a loop stopped before the run was over ([`DriverError`]), each
//! with where it happened and what to do.

use std::fmt;
use std::io;

use wirebench_protocol::response::ServerError;
use wirebench_protocol::ServerText;

use crate::client::Endpoint;
use crate::driver::connections::idle::IdleTrouble;
use crate::driver::{CallError, Lost, PipelineError, TaskError};
use crate::transport::TransportError;

/// Why a loop stopped before the run was over.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    /// The server refused a statement with an error `--mysql-ignore-errors`
    /// does not list (boxed: a rare error keeps the hot path's `Result`
    /// small).
    #[error("{0}")]
    Statement(Box<FailedStatement>),
    #[error("{endpoint}: {source}")]
    EventPipeline { endpoint: Endpoint, source: PipelineError },
    #[error("{endpoint}: {source}")]
    Io { endpoint: Endpoint, source: io::Error },
    #[error("{endpoint}: {source}")]
    Transport { endpoint: Endpoint, source: TransportError },
    /// A task's connection received an answer it cannot take (it is then
    /// lost to the task, not to the run).
    #[error("{endpoint}: {source}")]
    Call { endpoint: Endpoint, source: CallError },
    /// A lost connection whose error code `--mysql-ignore-errors` does not list.
    #[error("{endpoint}: {lost}; list {} in --mysql-ignore-errors to reconnect and go on", lost.code())]
    Lost { endpoint: Endpoint, lost: Lost },
    /// A loop's own machinery failed: its runtime or its ring.
    #[error("event loop {index}: cannot {op}: {source}")]
    Loop { index: usize, op: LoopOp, source: io::Error },
    /// An idle connection's login failed, or it received what it cannot
    /// take (it is then lost, counted, and logged in again; never the
    /// run's end).
    #[error("{0}")]
    Idle(Box<IdleTrouble>),
    /// A task (a script's state) failed: the script's error.
    #[error("{0}")]
    Script(TaskError),
    /// A connection task of the tokio backend's loop panicked.
    #[error("event loop {index}: a connection task failed: {source}")]
    Task { index: usize, source: tokio::task::JoinError },
}

/// A statement the server refused, and where: [`DriverError::Statement`].
#[derive(Debug)]
pub struct FailedStatement {
    pub endpoint: Endpoint,
    /// The sysbench test whose event sent it.
    pub test: &'static str,
    /// Executed as a prepared statement, or sent as text.
    pub prepared: bool,
    pub sql: String,
    pub error: ServerError,
}

impl fmt::Display for FailedStatement {
    /// sysbench's line for a failed statement (`check_error` in
    /// drv_mysql.c: `mysql_stmt_execute() returned error 1146 (Table
    /// 'sbtest.sbtest1' doesn't exist) for query 'SELECT c FROM sbtest1
    /// WHERE id=?'`; a text query is `mysql_drv_query()`'s), then which
    /// test's event failed where, and what to do. Values are not kept once
    /// sent: the SQL shows `?` (or the Lua script's `%d`) in their place.
    /// The server's text is shown safe to print ([`ServerText`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let FailedStatement { endpoint, test, prepared, sql, error } = self;
        let call = if *prepared { "mysql_stmt_execute()" } else { "mysql_drv_query()" };
        let message = ServerText(&error.message);
        write!(
            f,
            "{call} returned error {} ({message}) for query '{sql}', in an event of {test} on {endpoint}",
            error.code
        )?;
        if let Some(state) = error.sql_state_str() {
            write!(f, " (SQLSTATE {})", ServerText(state))?;
        }
        match error.code {
            1146 => f.write_str("; create the tables with the prepare command (same --tables and --mysql-db) first"),
            code => write!(f, "; list {code} in --mysql-ignore-errors to count it as an ignored error and go on"),
        }
    }
}

/// What a loop could not do ([`DriverError::Loop`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoopOp {
    StartRuntime,
    CreateRing,
    RegisterSockets,
    RegisterBuffers,
    SubmitToRing,
    WaitOnRing,
    StartTask,
}

impl fmt::Display for LoopOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LoopOp::StartRuntime => "start its runtime",
            LoopOp::CreateRing => "create its io_uring",
            LoopOp::RegisterSockets => "register its sockets with its io_uring",
            LoopOp::RegisterBuffers => "register its receive buffers with its io_uring",
            LoopOp::SubmitToRing => "submit to its io_uring",
            LoopOp::WaitOnRing => "wait on its io_uring",
            LoopOp::StartTask => "start a task (map its stack)",
        })
    }
}
