//! Opening a lost connection again, as sysbench does when the error is
//! listed in `--mysql-ignore-errors`: `check_error` (drv_mysql.c) calls
//! `mysql_drv_reconnect` for CR_SERVER_LOST (2013), CR_SERVER_GONE_ERROR
//! (2006), CR_TCP_CONNECTION (2011) and CR_SERVER_LOST_EXTENDED (2055),
//! which retries the connect every millisecond until it works; then the
//! event restarts and `oltp_common.lua`'s `before_restart_event` prepares
//! the statements again. The failed query counts as a reconnect, once the
//! connection is back.
//!
//! wirebench sees a lost connection as a socket failure and names it as
//! libmysqlclient would: a failed write is 2006 ("server has gone away"),
//! a read that fails or finds the socket closed is 2013 ("lost connection
//! during query"); so is a wait past `--mysql-write-timeout` (2006) or
//! `--mysql-read-timeout` (2013), as libmysqlclient's own timeouts are.
//!
//! Unlike `mysql_drv_reconnect`, which retries until it works, a reconnect
//! gives up when the run is over (its `--time`, a stop), even in the middle
//! of an attempt; only a reconnect that succeeded counts as one, and the
//! failed attempts are counted apart.

use std::fmt;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use bytes::BytesMut;
use wirebench_protocol::Capabilities;

use crate::client::{ClientError, ConnectOptions, Connection};
use crate::driver::StdSocket;
use crate::transport::Transport;
use crate::workload::StatementSpec;

pub use wirebench_protocol::constants::client_error::{CR_SERVER_GONE_ERROR, CR_SERVER_LOST};

/// How a connection was lost.
#[derive(Debug)]
pub enum Lost {
    /// Writing a command failed.
    Write(io::Error),
    /// Reading an answer failed.
    Read(io::Error),
    /// The server closed the connection.
    Closed,
    /// No answer within `--mysql-read-timeout`.
    ReadTimeout(Duration),
    /// The socket took nothing within `--mysql-write-timeout`.
    WriteTimeout(Duration),
}

impl Lost {
    /// The client error code libmysqlclient reports for it.
    pub fn code(&self) -> u16 {
        match self {
            Lost::Write(_) | Lost::WriteTimeout(_) => CR_SERVER_GONE_ERROR,
            Lost::Read(_) | Lost::Closed | Lost::ReadTimeout(_) => CR_SERVER_LOST,
        }
    }
}

impl fmt::Display for Lost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Lost::Write(e) => write!(f, "the server has gone away (client error 2006: {e})"),
            Lost::Read(e) => write!(f, "lost connection to the server during a query (client error 2013: {e})"),
            Lost::Closed => write!(
                f,
                "lost connection to the server during a query (client error 2013: the server closed the connection)"
            ),
            Lost::ReadTimeout(after) => write!(
                f,
                "lost connection to the server during a query (client error 2013: no answer for {}s, \
                 --mysql-read-timeout)",
                after.as_secs_f64()
            ),
            Lost::WriteTimeout(after) => write!(
                f,
                "the server has gone away (client error 2006: it took no command for {}s, --mysql-write-timeout)",
                after.as_secs_f64()
            ),
        }
    }
}

/// Everything needed to open one connection of the run, again if it is
/// lost: where and how to log in, and what to prepare.
#[derive(Debug, Clone)]
pub struct Redial {
    pub options: ConnectOptions,
    pub statements: Arc<Vec<StatementSpec>>,
    /// Prepare the statements on the server; false with
    /// `--db-ps-mode=disable`, where they are sent as text.
    pub prepare: bool,
    /// SQL run after every login, before the prepares: `SET autocommit=0`
    /// when `--pipeline` > 1 keeps a transactional test's commands in
    /// flight (see [`EventPipeline::autocommit_off`](crate::driver::EventPipeline::autocommit_off)).
    pub init: &'static [&'static str],
}

/// Why opening a connection failed.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error(transparent)]
    Connect(ClientError),
    #[error("cannot run {sql:?} after login: {source}")]
    Init { sql: &'static str, source: ClientError },
    #[error("cannot prepare {sql:?}: {source}")]
    Prepare { sql: String, source: ClientError },
    /// The run ended while the connection was being opened.
    #[error("the run ended before the connection was open")]
    GivenUp,
}

/// A connection opened again, in the form a loop without tokio (io_uring)
/// takes over.
#[derive(Debug)]
pub struct Reopened {
    /// Non-blocking, as tokio left it.
    pub socket: StdSocket,
    /// Bytes already read from the socket during the login.
    pub leftover: BytesMut,
    pub capabilities: Capabilities,
    /// What the login negotiated between the socket and the packet stream.
    pub transport: Transport,
    /// For [`EventPipeline::reconnected`](crate::driver::EventPipeline::reconnected).
    pub statement_ids: Vec<u32>,
}

/// How long to wait between attempts, as `mysql_drv_reconnect`'s `usleep(1000)`.
const RETRY_PAUSE: Duration = Duration::from_millis(1);

/// How soon an attempt in progress notices that the run is over.
const GIVE_UP_POLL: Duration = Duration::from_millis(10);

impl Redial {
    /// Logs in, runs the [`init`](Self::init) SQL and prepares the
    /// statements; their ids come back in statement order (none when
    /// nothing is prepared).
    pub async fn open(&self) -> Result<(Connection, Vec<u32>), OpenError> {
        let mut conn = Connection::connect(&self.options).await.map_err(OpenError::Connect)?;
        for &sql in self.init {
            conn.query_drop(sql).await.map_err(|source| OpenError::Init { sql, source })?;
        }
        let mut ids = Vec::new();
        if self.prepare {
            ids.reserve(self.statements.len());
            for spec in self.statements.iter() {
                let prepared = conn
                    .prepare(&spec.sql)
                    .await
                    .map_err(|source| OpenError::Prepare { sql: spec.sql.clone(), source })?;
                ids.push(prepared.statement_id());
            }
        }
        Ok((conn, ids))
    }

    /// [`open`](Self::open), retried every millisecond until it works or
    /// `give_up` says the run is over, which is looked at during an attempt
    /// too: a server that accepts connections and never answers holds an
    /// attempt up to the connect timeout otherwise.
    pub async fn reopen(&self, give_up: impl Fn() -> bool) -> Redialled<(Connection, Vec<u32>)> {
        let mut failed_attempts = 0;
        loop {
            if give_up() {
                return Redialled { opened: None, failed_attempts };
            }
            tokio::select! {
                opened = self.open() => match opened {
                    Ok(opened) => return Redialled { opened: Some(opened), failed_attempts },
                    Err(_) => failed_attempts += 1,
                },
                () = given_up(&give_up) => {
                    failed_attempts += 1;
                    continue;
                }
            }
            tokio::time::sleep(RETRY_PAUSE).await;
        }
    }

    /// One attempt at [`open`](Self::open) for a loop thread without a
    /// tokio runtime (a task's new connection): blocks the calling thread
    /// until it is open, fails, times out, or `give_up` says the run is
    /// over. Must not be called from within a tokio runtime. The error is
    /// boxed: a `ClientError` inside makes it large for a return value.
    pub fn open_once_blocking(&self, give_up: impl Fn() -> bool) -> Result<Reopened, Box<OpenError>> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|source| {
            OpenError::Connect(ClientError::Io { endpoint: self.options.endpoint.clone(), source })
        })?;
        runtime.block_on(async {
            let (conn, statement_ids) = tokio::select! {
                opened = self.open() => opened?,
                () = given_up(&give_up) => return Err(Box::new(OpenError::GivenUp)),
            };
            let (stream, leftover, login, transport) = conn.into_parts();
            let socket = StdSocket::from_stream(stream).map_err(|source| {
                OpenError::Connect(ClientError::Io { endpoint: self.options.endpoint.clone(), source })
            })?;
            Ok(Reopened { socket, leftover, capabilities: login.capabilities, transport, statement_ids })
        })
    }

    /// [`reopen`](Self::reopen) for a loop thread without a tokio runtime:
    /// blocks the calling thread (and so the loop's other connections)
    /// until the connection is back or `give_up` says the run is over.
    /// Must not be called from within a tokio runtime.
    pub fn reopen_blocking(&self, give_up: impl Fn() -> bool) -> io::Result<Redialled<Reopened>> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        runtime.block_on(async {
            let Redialled { opened, failed_attempts } = self.reopen(give_up).await;
            let Some((conn, statement_ids)) = opened else { return Ok(Redialled { opened: None, failed_attempts }) };
            let (stream, leftover, login, transport) = conn.into_parts();
            let reopened = Reopened {
                socket: StdSocket::from_stream(stream)?,
                leftover,
                capabilities: login.capabilities,
                transport,
                statement_ids,
            };
            Ok(Redialled { opened: Some(reopened), failed_attempts })
        })
    }
}

/// What reopening a lost connection came to: the connection, or none when
/// the run ended first, and the attempts that failed on the way.
#[derive(Debug)]
pub struct Redialled<T> {
    pub opened: Option<T>,
    pub failed_attempts: u64,
}

/// Resolves once `give_up` says so; looked at every [`GIVE_UP_POLL`].
async fn given_up(give_up: &impl Fn() -> bool) {
    while !give_up() {
        tokio::time::sleep(GIVE_UP_POLL).await;
    }
}
