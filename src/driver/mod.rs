//! The driver layer: how commands reach the server and their answers are
//! counted, once the connections are open. One event loop per chosen core,
//! each pinned and owning its connections outright; nothing is shared per
//! query, and loops hand their statistics to the collector once per report
//! interval (`crate::stats::StatsBoard`).
//!
//! It may import `client`, `transport`, `workload`, `stats`, `rand` and the
//! protocol crate; never `cli` or `run`, which sit above it and fill its
//! settings ([`EngineOptions`], [`IgnoreErrors`], ...).
//!
//! What a connection does whatever the backend (its work, the transport
//! around it, opening it again with its [`Redial`] when
//! `--mysql-ignore-errors` lists the error, as sysbench reconnects) is done
//! once, in `connections/`; what a loop does with its connections, tasks
//! and idle connections is done once, in `event_loop/`, for every backend
//! that runs on its own thread: io_uring (batched submissions and
//! completions) and the connection's own socket (`send`, `ppoll`, `recv`:
//! the socket loop, which the wait plan chooses) only submit and wait.
//! The epoll backend (tokio) runs each connection as a task, with the same
//! chores. `--mysql-dry-run` drives the pipelines with no I/O
//! (`backends/dry.rs`).
//!
//! Folders, one for each part:
//! - `event_loop/`: the one loop of the backends without a runtime, its
//!   chores, its connections' lives, its tasks' and idle connections'
//!   requests.
//! - `pacing/`: when an event may start (the run's limits, `--rate`'s
//!   arrivals, `--rate-stages`, the client's delay, the active span,
//!   `--shard`'s part).
//! - `connections/`: a connection's work (a built-in test's pipeline of
//!   events, a task's calls), its transport and redial, its receive buffer, its waits;
//!   `--idle-connections`.
//! - `tasks/`: a script's states as fibers on a loop, their queue, their
//!   calls, the start gate.
//! - `backends/`: how a loop submits and waits: io_uring, each
//!   connection's own socket, tokio (epoll); the dry run
//!   (`--mysql-dry-run`).
//! - `wait_plan/`: how each loop waits (the one place that decides), from
//!   where its servers run; how long a loop spins.
//! - `threads/`: the loops' threads, the cores they may be pinned to, their
//!   time slices, what they spent.
//! - `relay/`: `wirebench record`'s proxy, a task per proxied pair on
//!   pinned loops of its own.
//! - `engine_options.rs`: the driver's own settings (`--cpus`, `--io`,
//!   `--poll`, `--pipeline`, `--db-ps-mode`, `--mysql-ignore-errors`).
//! - `replay/`: a capture's connections replayed (`wirebench replay`): the
//!   feed from the capture's reader, each connection's state machine, what
//!   a loop counts of them.

pub(crate) mod backends;
mod connections;
mod engine_options;
pub(crate) mod event_loop;
mod pacing;
pub mod relay;
pub(crate) mod replay;
mod tasks;
mod threads;
mod wait_plan;

use std::fmt;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use wirebench_protocol::response::ServerError;
use wirebench_protocol::ServerText;

pub(crate) use backends::uring::UringUnavailable;
pub(crate) use connections::call_exchange::{decode_walked, CallAnswer, CallError, Expect, KeptTextRows};
pub use connections::event_pipeline::EventPipeline;
pub(crate) use connections::event_pipeline::{PipelineError, RefusedCommand};
pub use connections::idle::{IdlePlan, IdleSetupError};
pub use connections::redial::{Lost, Redial};
pub(crate) use connections::redial::{OpenError, Reopened};
pub(crate) use engine_options::EngineOptions;
pub use engine_options::{IdleSettings, IgnoreErrors, IoBackend, PollMode, PsMode};
pub use pacing::arrivals::Arrival;
pub use pacing::budget::Budget;
// What a replayed connection is without I/O, for tests/alloc's replay case.
pub use pacing::event_permits::ExtraEvents;
pub use pacing::rate_stages::{RateStages, Stage, StagesError};
pub use pacing::run_control::{Backlog, RunControl, Stalls, Tardiness};
pub(crate) use pacing::shard_split::Shard;
pub(crate) use pacing::Admission;
pub use replay::feed::{CapturedAnswer, CommandItem, FeedItem, COMMAND_ANSWER_CAPTURED};
pub use replay::replay_tally::ReplayTally;
pub use replay::replayed_conn::{ReplaySchedule, ReplayStep, ReplayTurn, ReplayedConn};
pub(crate) use tasks::fiber_task::{
    with_caller, ConnId, CounterKind, EventTimes, OpenedConn, TaskBody, TaskError, TaskMaker,
};
pub(crate) use tasks::start_gate::{StartGate, Started};
pub(crate) use threads::cpus::{allowed_cpus, check_loop_cpus, CpuUnavailable};
pub use threads::loop_usage::{LoopLoad, LoopUsage, SpanWork};
pub use threads::spawn::{Finished, FinishedGuard};
pub(crate) use wait_plan::{plan_wait, LoopRuns, LoopSite, ServerPlacement, ServerPlacements, WaitRequest};
pub use wait_plan::{LoopWait, WaitMode, WaitReason};

use backends::run_loop;
pub(crate) use backends::spawn_replay_loops;
use threads::spawn::spawn_pinned;

use crate::client::{Endpoint, Stream};
use crate::stats::StatsBoard;
use crate::transport::{Transport, TransportError};
use connections::idle::IdleTrouble;

/// The longest a loop goes without looking at the run (the collector's
/// requests, the timeouts, the run's cut) while it waits.
const PUBLISH_TICK: Duration = Duration::from_millis(5);

/// Nanoseconds since the run started, from the monotonic clock.
#[derive(Debug, Clone, Copy)]
pub struct Clock(Instant);

impl Clock {
    pub fn start() -> Self {
        Clock(Instant::now())
    }

    #[inline]
    pub fn now_ns(&self) -> u64 {
        self.0.elapsed().as_nanos() as u64
    }

    pub fn started(&self) -> Instant {
        self.0
    }
}

/// A connected, logged-in socket with its statements prepared.
pub struct ConnPlan {
    pub endpoint: Endpoint,
    pub socket: StdSocket,
    /// Bytes already read from the socket during set-up.
    pub leftover: BytesMut,
    pub pipeline: EventPipeline,
    /// What the bytes pass through between the socket and the pipeline
    /// (compression, TLS); plain in most runs.
    pub transport: Transport,
    /// How to open it again if it is lost and `--mysql-ignore-errors`
    /// lists the error.
    pub redial: Redial,
}

/// A socket in blocking-agnostic std form, ready to move to a loop thread.
#[derive(Debug)]
pub enum StdSocket {
    Tcp(std::net::TcpStream),
    Unix(std::os::unix::net::UnixStream),
}

impl StdSocket {
    pub fn from_stream(stream: Stream) -> io::Result<Self> {
        Ok(match stream {
            Stream::Tcp(s) => StdSocket::Tcp(s.into_std()?),
            Stream::Unix(s) => StdSocket::Unix(s.into_std()?),
        })
    }

    /// Back to a tokio stream, registered with the current runtime (which
    /// wants it non-blocking: tokio refuses a blocking one).
    fn into_stream(self) -> io::Result<Stream> {
        self.set_nonblocking(true)?;
        Ok(match self {
            StdSocket::Tcp(s) => Stream::Tcp(tokio::net::TcpStream::from_std(s)?),
            StdSocket::Unix(s) => Stream::Unix(tokio::net::UnixStream::from_std(s)?),
        })
    }

    /// A socket the client opened (its connect under way): a unix
    /// socket's when `unix`.
    pub(crate) fn from_socket(socket: socket2::Socket, unix: bool) -> Self {
        if unix {
            StdSocket::Unix(socket.into())
        } else {
            StdSocket::Tcp(socket.into())
        }
    }

    /// Sends what the socket takes of `bytes` at once, without waiting and
    /// without a signal if the peer is gone: for a goodbye as a loop ends.
    pub(crate) fn send_now(&self, bytes: &[u8]) {
        // SAFETY: `bytes` is valid for `bytes.len()` bytes of reads, and the
        // descriptor is this socket's own.
        unsafe {
            libc::send(self.as_raw_fd(), bytes.as_ptr().cast(), bytes.len(), libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL)
        };
    }

    pub fn set_nonblocking(&self, nonblocking: bool) -> io::Result<()> {
        match self {
            StdSocket::Tcp(s) => s.set_nonblocking(nonblocking),
            StdSocket::Unix(s) => s.set_nonblocking(nonblocking),
        }
    }
}

impl AsRawFd for StdSocket {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            StdSocket::Tcp(s) => s.as_raw_fd(),
            StdSocket::Unix(s) => s.as_raw_fd(),
        }
    }
}

/// The connections one loop drives, the core it is pinned to, and what it
/// does with nothing to do.
pub struct LoopPlan {
    pub cpu: Option<usize>,
    pub connections: Vec<ConnPlan>,
    /// How it waits for answers ([`plan_wait`]).
    pub wait: LoopWait,
}

/// The tasks one loop runs (a script's states; see [`tasks::fiber_task`]), the core it
/// is pinned to, and what it does with nothing to do.
pub struct TaskLoopPlan {
    pub cpu: Option<usize>,
    pub tasks: Vec<TaskMaker>,
    /// How it waits for answers ([`plan_wait`]).
    pub wait: LoopWait,
}

/// What every loop needs to know about the run.
#[derive(Clone)]
pub struct LoopContext {
    pub board: Arc<StatsBoard>,
    pub control: Arc<RunControl>,
    pub clock: Clock,
    /// No event starts after this (ns since the run's start).
    pub deadline_ns: Option<u64>,
    pub ignore: IgnoreErrors,
    pub finished: Finished,
    pub usage: Arc<LoopUsage>,
    /// `--idle-connections`: what the loops hold beside their connections,
    /// each its share, as connections of its own; `None` for none.
    pub idle: Option<Arc<IdlePlan>>,
}

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
    /// A replayed connection's login failed or its answer broke the
    /// protocol (it is then counted, refused or lost; never the run's end).
    #[error("{0}")]
    Replayed(Box<replay::replay_work::ReplayTrouble>),
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

/// Which backend a loop runs, after `--io=auto` is resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Uring,
    /// tokio's current-thread runtime (epoll readiness): `--io=epoll`.
    Tokio,
}

impl Backend {
    /// `--io=auto` picks io_uring where the kernel allows it; `--io=uring`
    /// fails where it does not.
    pub fn resolve(choice: IoBackend) -> Result<Backend, UringUnavailable> {
        match choice {
            IoBackend::Epoll => Ok(Backend::Tokio),
            IoBackend::Uring => backends::uring::probe().map(|()| Backend::Uring),
            IoBackend::Auto => Ok(if backends::uring::probe().is_ok() { Backend::Uring } else { Backend::Tokio }),
        }
    }
}

/// Starts one pinned thread per loop. Each returns when its connections
/// are done (budget spent, every answer in) or on the first fatal error,
/// which also stops the other loops.
pub fn spawn_loops(
    plans: Vec<LoopPlan>,
    backend: Backend,
    context: &LoopContext,
) -> io::Result<Vec<JoinHandle<Result<(), DriverError>>>> {
    let plans = plans.into_iter().map(|plan| (plan.cpu, (plan.connections, plan.wait.mode)));
    spawn_pinned("wirebench-loop", plans, context, move |index, (connections, wait), context| {
        run_loop(index, connections, Vec::new(), backend, wait, context, None)
    })
}

/// Starts one pinned thread per loop of tasks, as [`spawn_loops`] does for
/// a built-in test's connections: the tasks' code is made on the loop's
/// thread, and the loop ends when every task has.
pub fn spawn_task_loops(
    plans: Vec<TaskLoopPlan>,
    backend: Backend,
    context: &LoopContext,
    gate: &Arc<StartGate>,
) -> io::Result<Vec<JoinHandle<Result<(), DriverError>>>> {
    let plans = plans.into_iter().map(|plan| (plan.cpu, (plan.tasks, plan.wait.mode, gate.clone())));
    spawn_pinned("wirebench-loop", plans, context, move |index, (makers, wait, gate), context| {
        let tasks = makers.into_iter().map(|make| make()).collect();
        let arrival = tasks::start_gate::ArrivalGuard::new(gate);
        run_loop(index, Vec::new(), tasks, backend, wait, context, Some(arrival))
    })
}

/// Runs `tasks` on a loop on this thread until every one has ended (a
/// script's command, its `init()`): the loop's statistics go to slot
/// `index` of `context`'s board.
pub fn run_tasks(
    index: usize,
    tasks: Vec<TaskBody>,
    backend: Backend,
    wait: WaitMode,
    context: &LoopContext,
) -> Result<(), DriverError> {
    run_loop(index, Vec::new(), tasks, backend, wait, context, None)
}

/// What the driver's unit tests share.
#[cfg(test)]
mod testing {
    use crate::rand::Rng;
    use crate::workload::{CommandSink, Script, Step, WorkloadError};

    /// A script whose every event is one `SELECT 1`.
    pub(super) struct SelectOne;

    impl Script for SelectOne {
        fn next(&mut self, _: &mut Rng, sink: &mut CommandSink<'_>) -> Result<Step, WorkloadError> {
            sink.query(b"SELECT 1");
            Ok(Step::Last)
        }
        fn restart_event(&mut self) {}
    }
}
