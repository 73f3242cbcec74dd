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
//! - `engine_options.rs`: the driver's own settings (`--cpus`, `--io`,
//!   `--poll`, `--pipeline`, `--db-ps-mode`, `--mysql-ignore-errors`).

pub(crate) mod backends;
mod connections;
mod driver_error;
mod engine_options;
pub(crate) mod event_loop;
mod pacing;
mod tasks;
mod threads;
mod wait_plan;

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::BytesMut;

pub(crate) use backends::uring::UringUnavailable;
pub use backends::Backend;
pub(crate) use connections::call_exchange::{decode_walked, CallAnswer, CallError, Expect, KeptTextRows};
pub use connections::event_pipeline::EventPipeline;
pub(crate) use connections::event_pipeline::{PipelineError, RefusedCommand};
pub use connections::idle::{IdlePlan, IdleSettings, IdleSetupError};
pub use connections::redial::{Lost, Redial};
pub(crate) use connections::redial::{OpenError, Reopened};
pub(crate) use connections::waits::Stalls;
pub use driver_error::{DriverError, FailedStatement, LoopOp};
pub(crate) use engine_options::EngineOptions;
pub use engine_options::{IgnoreErrors, IoBackend, PollMode, PsMode};
pub use pacing::arrivals::Arrival;
pub use pacing::budget::Budget;
pub use pacing::event_permits::ExtraEvents;
pub use pacing::rate_stages::{RateStages, Stage, StagesError};
pub use pacing::run_control::{Backlog, RunControl, Tardiness};
pub(crate) use pacing::shard_split::Shard;
pub(crate) use pacing::Admission;
pub(crate) use tasks::fiber_task::{
    with_caller, ConnId, CounterKind, EventTimes, OpenedConn, TaskBody, TaskError, TaskMaker,
};
pub(crate) use tasks::start_gate::{StartGate, Started};
pub(crate) use threads::cpus::{allowed_cpus, check_loop_cpus, CpuUnavailable};
pub use threads::loop_usage::{LoopLoad, LoopUsage};
pub use threads::spawn::{Finished, FinishedGuard};
pub(crate) use wait_plan::{
    plan_wait, waits_on_its_socket, LoopRuns, LoopSite, ServerPlacement, ServerPlacements, WaitRequest,
};
pub use wait_plan::{LoopWait, WaitMode, WaitReason};

use backends::run_loop;
use threads::spawn::spawn_pinned;

use crate::client::{Endpoint, Stream};
use crate::stats::StatsBoard;
use crate::transport::Transport;

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

/// The tasks one loop runs (a script's states; see [`fiber_task`]), the core it
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
    /// each its share ([`idle::IdleSet`]); `None` for none.
    pub idle: Option<Arc<IdlePlan>>,
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
