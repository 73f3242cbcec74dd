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
//! What a connection does whatever the backend (its [`Session`], the
//! transport around it, opening it again with its [`Redial`] when
//! `--mysql-ignore-errors` lists the error, as sysbench reconnects) is done
//! once, in `conn_io`; a backend only moves bytes between the socket and
//! its buffers: io_uring (batched submissions and completions), epoll
//! (tokio), or the connection's own socket (`send`, `poll`, `recv`: the
//! socket loop, which the wait plan chooses). `--mysql-dry-run` drives the
//! sessions with no I/O ([`dry`]).
//!
//! Files:
//! - `engine_options.rs`: the driver's own settings (`--cpus`, `--io`,
//!   `--poll`, `--pipeline`, `--db-ps-mode`, `--mysql-ignore-errors`).
//! - `uring/` and `tokio_backend/`: the two backends `--io` chooses
//!   (`--io=uring`, `--io=epoll`); `socket_loop/`: the backend of a loop
//!   whose wait plan is to wait on each connection's own socket
//!   ([`WaitMode::OnSocket`]); `dry.rs`: `--mysql-dry-run`, no I/O.
//! - `task_queue.rs`: a loop's tasks and what each waits for, shared by
//!   the loops without a runtime (io_uring, socket); `task_calls.rs`: a
//!   task's calls on their connections, for the same two; `recv_buffer.rs`:
//!   a connection's unread bytes, for the same two.
//! - `session.rs`: a connection's hot-path state machine; `conn_io.rs`: its
//!   work above the socket, the same under both backends; `call_session.rs`:
//!   the state machine of a caller making one call at a time (a script).
//! - `fiber_task.rs`: tasks (a script's states) run on a loop as fibers;
//!   `start_gate.rs`: where they wait for the run to start.
//! - `budget.rs`: when an event may start (the run's limits, `--rate`);
//!   `arrivals.rs`: when `--rate`'s events arrive; `rate_stages.rs`:
//!   `--rate-stages`' target over time; `shard_split.rs`: `--shard=I/N`'s part of the totals.
//! - `client_delay.rs`: the client's own delay of each event under
//!   `--rate`; `active_span.rs`: how hard a loop worked while it ran
//!   events (its busy share).
//! - `idle.rs`: `--idle-connections`, held beside the active ones on each
//!   loop's own readiness set, served from the loop's turn.
//! - `redial.rs`: a lost connection opened again; `waits.rs`: how long each
//!   connection waits, and its timeouts.
//! - `replay/`: a capture's connections replayed (`wirebench replay`): the
//!   feed from the capture's reader, each connection's state machine, what
//!   a loop counts of them.
//! - `wait_plan/`: how each loop waits (the one place that decides), from
//!   where its servers run; `spin.rs`: how long a loop spins; `cpus.rs`:
//!   the cores a loop may be pinned to.

mod active_span;
mod arrivals;
mod budget;
mod call_session;
mod client_delay;
mod conn_io;
mod cpus;
pub(crate) mod dry;
mod engine_options;
mod fiber_task;
mod idle;
mod rate_stages;
mod recv_buffer;
mod redial;
pub(crate) mod replay;
mod session;
mod shard_split;
mod socket_loop;
mod spin;
mod start_gate;
mod task_calls;
mod task_queue;
mod tokio_backend;
mod uring;
mod wait_plan;
mod waits;

use std::fmt;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use wirebench_protocol::response::ServerError;
use wirebench_protocol::ServerText;

pub use arrivals::Arrival;
pub(crate) use budget::Admission;
pub use budget::{Budget, RunControl, Tardiness};
pub(crate) use call_session::{decode_walked, CallAnswer, CallError, Expect, KeptTextRows};
pub(crate) use cpus::{allowed_cpus, check_loop_cpus, CpuUnavailable};
pub(crate) use engine_options::EngineOptions;
pub use engine_options::{IgnoreErrors, IoBackend, PollMode, PsMode};
pub(crate) use fiber_task::{with_caller, ConnId, CounterKind, EventTimes, OpenedConn, TaskBody, TaskError, TaskMaker};
pub(crate) use idle::IdleSet;
pub use idle::{IdlePlan, IdleSettings, IdleSetupError};
pub use rate_stages::{RateStages, Stage, StagesError};
pub use redial::{Lost, Redial};
pub(crate) use redial::{OpenError, Reopened};
pub use session::Session;
pub(crate) use session::{RefusedCommand, SessionError};
pub(crate) use shard_split::Shard;
pub(crate) use start_gate::{StartGate, Started};
pub(crate) use uring::UringUnavailable;
pub(crate) use wait_plan::{plan_wait, LoopRuns, LoopSite, ServerPlacement, ServerPlacements, WaitRequest};
pub use wait_plan::{LoopWait, WaitMode, WaitReason};
pub(crate) use waits::Stalls;

use crate::client::{Endpoint, Stream};
use crate::stats::StatsBoard;
use crate::transport::{Transport, TransportError};

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
    pub session: Session,
    /// What the bytes pass through between the socket and the session
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

/// How hard the loops worked ([`LoopUsage::load`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoopLoad {
    /// Working or wanting to, 0 to 1.
    pub busy_share: f64,
    /// Time ready to run while another task had the core.
    pub run_delay: Duration,
    /// That time's share, 0 to 1.
    pub core_wait_share: f64,
}

/// What the loops spent, each adding its share as it ends: their threads'
/// CPU time, how much of it went to spinning for answers, how long they
/// waited for a core while ready to run, and how long they lived.
#[derive(Debug, Default)]
pub struct LoopUsage {
    cpu_ns: AtomicU64,
    spinning_ns: AtomicU64,
    /// Loops that spun at all (`--poll=spin`, or a script's brief looks).
    spinning_loops: AtomicUsize,
    /// Time ready to run while another task had the core (the run queue).
    run_delay_ns: AtomicU64,
    /// The loop threads' lives, summed.
    lived_ns: AtomicU64,
}

impl LoopUsage {
    /// The loop threads' CPU time (user and system).
    pub fn cpu(&self) -> Duration {
        Duration::from_nanos(self.cpu_ns.load(Ordering::Relaxed))
    }

    /// Time spent spinning for completions: a loop that spins owns its
    /// core, so this is CPU time too, spent waiting rather than working.
    pub fn spinning(&self) -> Duration {
        Duration::from_nanos(self.spinning_ns.load(Ordering::Relaxed))
    }

    /// Whether any loop spun.
    pub fn spun(&self) -> bool {
        self.spinning_loops.load(Ordering::Relaxed) > 0
    }

    /// How hard the loops worked: the share of the time they were working
    /// or wanted to (CPU time less spinning, as a spinning loop has
    /// nothing to do, plus time ready to run without a core) and the share
    /// they waited for a core. Near 1, the client itself is the limit: an
    /// event that arrives waits for the loop, not the server. Counted over
    /// the loops' active spans (from their first event to the first
    /// refused, [`RunControl::span_work`]) where they have them, the share
    /// of their CPU time spent spinning taken out as over their lives;
    /// else over their lives. `None` before any loop has ended.
    pub fn load(&self, control: &RunControl) -> Option<LoopLoad> {
        let spin_share = self.spinning().as_secs_f64() / self.cpu().as_secs_f64().max(f64::MIN_POSITIVE);
        if let Some(work) = control.span_work() {
            let span = work.span.as_secs_f64();
            let spun = work.cpu.as_secs_f64() * spin_share.min(1.0);
            let run_delay = work.busy.saturating_sub(work.cpu);
            return Some(LoopLoad {
                busy_share: ((work.busy.as_secs_f64() - spun).max(0.0) / span).min(1.0),
                run_delay,
                core_wait_share: (run_delay.as_secs_f64() / span).min(1.0),
            });
        }
        let lived = self.lived_ns.load(Ordering::Relaxed);
        let working = self.cpu().saturating_sub(self.spinning()).as_nanos() as u64;
        let wanting = self.run_delay_ns.load(Ordering::Relaxed);
        (lived > 0).then(|| LoopLoad {
            busy_share: ((working + wanting) as f64 / lived as f64).min(1.0),
            run_delay: self.run_delay(),
            core_wait_share: (wanting as f64 / lived as f64).min(1.0),
        })
    }

    /// Time the loops were ready to run while another task had their core.
    pub fn run_delay(&self) -> Duration {
        Duration::from_nanos(self.run_delay_ns.load(Ordering::Relaxed))
    }

    fn add_cpu(&self, spent: Duration) {
        self.cpu_ns.fetch_add(spent.as_nanos() as u64, Ordering::Relaxed);
    }

    /// A loop thread's life and its run delay, once, as it ends.
    fn add_life(&self, lived: Duration, run_delay: Option<Duration>) {
        self.lived_ns.fetch_add(lived.as_nanos() as u64, Ordering::Relaxed);
        let delay = run_delay.map_or(0, |d| d.as_nanos() as u64);
        self.run_delay_ns.fetch_add(delay, Ordering::Relaxed);
    }

    /// A spinning loop's time spinning, once, as it ends.
    fn add_spinning(&self, spun: Duration) {
        self.spinning_ns.fetch_add(spun.as_nanos() as u64, Ordering::Relaxed);
        self.spinning_loops.fetch_add(1, Ordering::Relaxed);
    }
}

/// The calling thread's CPU time so far.
fn thread_cpu_time() -> Option<Duration> {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is valid for the write.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0).then(|| Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32))
}

/// Counts loop threads that have ended, and wakes whoever waits for them:
/// the report thread sleeps until a loop ends or its next report is due,
/// instead of looking again and again (a wake-up costs more than it looks). An
/// [`alert`](Finished::alert) wakes it too, for a stop from outside (a
/// signal).
#[derive(Clone, Default)]
pub struct Finished(Arc<(Mutex<Ended>, Condvar)>);

#[derive(Default)]
struct Ended {
    loops: usize,
    /// An alert not yet seen by a [`Finished::wait`].
    alerted: bool,
}

impl Finished {
    /// Held by a loop thread; counts it as ended when dropped, which also
    /// happens when the loop panics.
    pub fn guard(&self) -> FinishedGuard {
        FinishedGuard(self.clone())
    }

    /// How many loops have ended.
    pub fn count(&self) -> usize {
        self.0 .0.lock().unwrap_or_else(PoisonError::into_inner).loops
    }

    /// Waits until `count` loops have ended, `deadline` passes (`None`: no
    /// deadline) or an alert comes (one that came before the call counts,
    /// once); whether the loops have ended.
    pub fn wait(&self, count: usize, deadline: Option<Instant>) -> bool {
        let (ended, wake) = &*self.0;
        let mut ended = ended.lock().unwrap_or_else(PoisonError::into_inner);
        while ended.loops < count {
            if std::mem::take(&mut ended.alerted) {
                return false;
            }
            let Some(deadline) = deadline else {
                ended = wake.wait(ended).unwrap_or_else(PoisonError::into_inner);
                continue;
            };
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            ended = wake.wait_timeout(ended, left).unwrap_or_else(PoisonError::into_inner).0;
        }
        true
    }

    /// Wakes the thread in [`wait`](Self::wait), or makes its next wait
    /// return at once.
    pub fn alert(&self) {
        let (ended, wake) = &*self.0;
        ended.lock().unwrap_or_else(PoisonError::into_inner).alerted = true;
        wake.notify_all();
    }
}

pub struct FinishedGuard(Finished);

impl Drop for FinishedGuard {
    fn drop(&mut self) {
        let (ended, wake) = &*(self.0).0;
        ended.lock().unwrap_or_else(PoisonError::into_inner).loops += 1;
        wake.notify_all();
    }
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

impl LoopContext {
    /// Loop `index`'s idle connections, if it holds any.
    fn idle_set(&self, index: usize) -> Result<Option<IdleSet>, DriverError> {
        let Some(plan) = &self.idle else { return Ok(None) };
        IdleSet::for_loop(plan, index).map_err(|source| DriverError::Loop { index, op: LoopOp::StartIdle, source })
    }
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
    Session { endpoint: Endpoint, source: SessionError },
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
    StartIdle,
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
            LoopOp::StartIdle => "make the readiness set of its idle connections (--idle-connections)",
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
            IoBackend::Uring => uring::probe().map(|()| Backend::Uring),
            IoBackend::Auto => Ok(if uring::probe().is_ok() { Backend::Uring } else { Backend::Tokio }),
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
        let arrival = start_gate::ArrivalGuard::new(gate);
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

/// Runs one loop on this thread with the backend that does its wait: the
/// socket loop for a wait on each connection's own socket, else the one
/// `--io` chose (the epoll backend always sleeps in `epoll_wait`; the run
/// layer says so when `--poll` asks otherwise).
fn run_loop(
    index: usize,
    connections: Vec<ConnPlan>,
    tasks: Vec<TaskBody>,
    backend: Backend,
    wait: WaitMode,
    context: &LoopContext,
    arrival: Option<start_gate::ArrivalGuard>,
) -> Result<(), DriverError> {
    match (wait, backend) {
        (WaitMode::OnSocket, _) => socket_loop::run_socket_loop(index, connections, tasks, context, arrival),
        (_, Backend::Tokio) => tokio_backend::run_tokio_loop(index, connections, tasks, context, arrival),
        (_, Backend::Uring) => uring::run_uring_loop(index, connections, tasks, context, wait, arrival),
    }
}

/// Starts one thread per loop, named `name-INDEX` and pinned to its cpu
/// (if any), that runs `run` on the loop's connections. The thread counts
/// as ended for the report thread whatever happens, and a failed loop stops
/// the others.
fn spawn_pinned<C: Send + 'static>(
    name: &str,
    plans: impl Iterator<Item = (Option<usize>, C)>,
    context: &LoopContext,
    run: impl Fn(usize, C, &LoopContext) -> Result<(), DriverError> + Copy + Send + 'static,
) -> io::Result<Vec<JoinHandle<Result<(), DriverError>>>> {
    let mut handles = Vec::new();
    for (index, (cpu, connections)) in plans.enumerate() {
        let context = context.clone();
        let handle = std::thread::Builder::new().name(format!("{name}-{index}")).spawn(move || {
            let _ended = context.finished.guard();
            let born = Instant::now();
            if let Some(cpu) = cpu {
                core_affinity::set_for_current(core_affinity::CoreId { id: cpu });
            }
            cpus::ask_short_slice();
            let result = run(index, connections, &context);
            if let Some(spent) = thread_cpu_time() {
                context.usage.add_cpu(spent);
            }
            context.usage.add_life(born.elapsed(), cpus::own_run_delay());
            if result.is_err() {
                context.control.stop();
            }
            result
        })?;
        handles.push(handle);
    }
    Ok(handles)
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// An alert wakes a wait without a deadline, counts once when it came
    /// before the wait, and a loop that ends still ends the wait.
    #[test]
    fn an_alert_wakes_the_waiting_report_thread() {
        let finished = Finished::default();
        let alerter = finished.clone();
        let waker = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            alerter.alert();
        });
        assert!(!finished.wait(1, None), "woken by the alert, no loop ended");
        waker.join().unwrap();
        finished.alert();
        assert!(!finished.wait(1, None), "an alert before the wait counts");
        let soon = Instant::now() + Duration::from_millis(20);
        assert!(!finished.wait(1, Some(soon)), "and only once: this one times out");
        assert!(Instant::now() >= soon);
        drop(finished.guard());
        assert!(finished.wait(1, None));
        assert_eq!(finished.count(), 1);
    }
}
