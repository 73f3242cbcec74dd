//! The tokio backend (`--io=epoll`): a tokio current-thread runtime per loop, one task per
//! connection. Portable and simple; io_uring amortises wake-ups better.
//!
//! A connection task stamps its waits for the server ([`Waits`]); the
//! loop's ticker, which runs every few milliseconds anyway, looks at them
//! and shuts down the socket of a connection that waited past its read or
//! write timeout, or that still waits when the run is cut: its read or
//! write then returns, and the task learns from its [`WatchedConn`] why.
//!
//! The chores every loop does at its turn ([`Chores`]) are the ticker's:
//! it runs every [`PUBLISH_TICK`] whatever the connections do.
//!
//! Files:
//! - `tasks.rs`: the loop's tasks (a script's states), one tokio task
//!   each.
//! - `idle.rs`: `--idle-connections`, one tokio task each, logged in
//!   through the client's login as the active ones are.

mod idle;
mod tasks;

use std::cell::{Cell, RefCell};
use std::os::fd::{AsRawFd, RawFd};
use std::rc::Rc;
use std::time::Duration;

use bytes::{Buf, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Notify;

use crate::client::Stream;
use crate::driver::connections::conn_io::{AfterSend, ConnIo};
use crate::driver::connections::waits::{Overdue, WaitLimits, Waits};
use crate::driver::event_loop::{Chores, WaitsDue};
use crate::driver::{Budget, ConnPlan, DriverError, LoopContext, LoopOp, Lost, Stalls, PUBLISH_TICK};
use crate::stats::LoopStats;

/// Bytes a read may fill at least.
const READ_CHUNK: usize = 4096;

/// How long COM_QUIT may wait for the socket to take it.
const QUIT_WAIT: Duration = Duration::from_secs(1);

/// How long connections waiting for a `--rate` arrival may miss a stop.
const STOP_POLL_NS: u64 = 10_000_000;

/// A `--rate` wait shorter than this, on a loop whose connections all
/// wait, sleeps the loop's thread precisely (nothing else can happen on it
/// meanwhile) instead of through tokio's timer, whose 1 ms ticks would
/// show in every such event's latency.
const PRECISE_WAIT_NS: u64 = 2_000_000;

/// What a loop's tasks share, on its one thread.
struct EpollLoop {
    index: usize,
    context: LoopContext,
    stats: RefCell<LoopStats>,
    budget: RefCell<Budget>,
    waiters: Waiters,
    /// What the ticker sees of each connection, by its index in the loop.
    watches: Box<[WatchedConn]>,
    /// The run's clock and deadline (the loop's set-up ones until a start
    /// gate opens).
    clock: Cell<crate::driver::Clock>,
    deadline_ns: Cell<Option<u64>>,
    /// Where a script run's tasks wait for its start (`tasks.rs`).
    start: tasks::StartWait,
    /// `--idle-connections`: this loop's share, served by the ticker.
    idle: Option<idle::IdleTasks>,
}

/// A connection as the ticker sees it: its waits, its socket, and why the
/// ticker cut it off, if it did.
struct WatchedConn {
    waits: Waits,
    limits: Cell<WaitLimits>,
    /// The socket, while the connection has one.
    fd: Cell<Option<RawFd>>,
    cut: Cell<Option<Cut>>,
}

/// Why the ticker shut a connection's socket down.
#[derive(Debug, Clone, Copy)]
enum Cut {
    /// It waited past its read or write timeout: it is lost.
    Overdue(Overdue),
    /// It still waited for an answer when the run was cut: it ends.
    Stalled,
}

impl WatchedConn {
    /// A task's watch: its connections' limits are set as it calls on them.
    fn idle() -> Self {
        let limits = Cell::new(WaitLimits::default());
        WatchedConn { waits: Waits::default(), limits, fd: Cell::new(None), cut: Cell::new(None) }
    }

    fn new(plan: &ConnPlan) -> Self {
        let limits = WaitLimits { read: plan.redial.options.read_timeout, write: plan.redial.options.write_timeout };
        WatchedConn { waits: Waits::default(), limits: Cell::new(limits), fd: Cell::new(None), cut: Cell::new(None) }
    }

    /// Ends the connection's wait: its pending read or write returns at
    /// once (end of file, or a broken pipe).
    fn shut(&self, cut: Cut) {
        self.cut.set(Some(cut));
        if let Some(fd) = self.fd.get() {
            // SAFETY: `fd` is the socket of a stream its connection task
            // still owns (the task clears `fd` before it drops the stream),
            // and shutdown(2) neither closes nor frees it.
            unsafe { libc::shutdown(fd, libc::SHUT_RDWR) };
        }
    }
}

pub fn run_tokio_loop(
    index: usize,
    connections: Vec<ConnPlan>,
    tasks: Vec<crate::driver::TaskBody>,
    context: &LoopContext,
    arrival: Option<crate::driver::tasks::start_gate::ArrivalGuard>,
) -> Result<(), DriverError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|source| DriverError::Loop { index, op: LoopOp::StartRuntime, source })?;
    let idle = idle::IdleTasks::for_loop(index, context);
    let shared = Rc::new(EpollLoop {
        index,
        context: context.clone(),
        stats: RefCell::new(context.board.loop_stats(index)),
        budget: RefCell::new(Budget::for_loop(context.control.clone(), context.deadline_ns, index)),
        waiters: Waiters::new(connections.len() + tasks.len()),
        watches: connections.iter().map(WatchedConn::new).chain(tasks.iter().map(|_| WatchedConn::idle())).collect(),
        clock: Cell::new(context.clock),
        deadline_ns: Cell::new(context.deadline_ns),
        start: tasks::StartWait::new(tasks.len(), arrival),
        idle,
    });
    let local = tokio::task::LocalSet::new();
    let result = local.block_on(&runtime, run_all(connections, tasks, &shared));
    context.board.publish(index, &mut shared.stats.borrow_mut());
    result
}

impl EpollLoop {
    /// True once no event may start any more: the run was stopped, or its
    /// deadline (on the loop's clock) has passed.
    fn run_over(&self) -> bool {
        self.context.control.is_stopped() || self.deadline_ns.get().is_some_and(|d| self.clock.get().now_ns() >= d)
    }
}

/// Runs one tokio task per connection, and one per task (a script's
/// state, see `tasks.rs`), until all are done, with the `--rate`
/// dispatcher and the publishing ticker beside them.
async fn run_all(
    connections: Vec<ConnPlan>,
    bodies: Vec<crate::driver::TaskBody>,
    shared: &Rc<EpollLoop>,
) -> Result<(), DriverError> {
    let mut tasks = Vec::with_capacity(connections.len() + bodies.len());
    let first_task = connections.len();
    for (i, conn) in connections.into_iter().enumerate() {
        tasks.push(tokio::task::spawn_local(drive(conn, shared.clone(), i)));
    }
    for (t, body) in bodies.into_iter().enumerate() {
        tasks.push(tokio::task::spawn_local(tasks::drive_task(body, shared.clone(), t, first_task + t)));
    }
    let dispatcher = shared.budget.borrow().has_rate().then(|| tokio::task::spawn_local(dispatch(shared.clone())));
    let ticker = tokio::task::spawn_local(tick(shared.clone()));
    let mut first_error = None;
    for task in tasks {
        let outcome = task.await.unwrap_or_else(|source| Err(DriverError::Task { index: shared.index, source }));
        if let Err(e) = outcome {
            shared.context.control.stop();
            first_error.get_or_insert(e);
        }
    }
    ticker.abort();
    if let Some(dispatcher) = dispatcher {
        dispatcher.abort();
    }
    if let Some(idle) = &shared.idle {
        idle.say_goodbye().await;
    }
    first_error.map_or(Ok(()), Err)
}

/// The loop's [`Chores`], even when no connection is busy: answers the
/// collector, brings the `--rate` queue up to date, looks at the
/// connections' waits; then serves the idle connections.
async fn tick(shared: Rc<EpollLoop>) {
    let mut tick = tokio::time::interval(PUBLISH_TICK);
    let mut chores = Chores::default();
    loop {
        tick.tick().await;
        let now = shared.clock.get().now_ns();
        let due = {
            let (mut budget, mut stats) = (shared.budget.borrow_mut(), shared.stats.borrow_mut());
            chores.turn(now, &shared.context, &mut budget, &mut stats)
        };
        match due {
            WaitsDue::Nothing => {}
            WaitsDue::Timeouts => shut_late_connections(&shared, now),
            WaitsDue::Cut => shut_stalled_connections(&shared, now),
        }
        if let Some(idle) = &shared.idle {
            idle.serve(&shared, now);
        }
    }
}

/// Cuts off the connections that waited past their timeout.
fn shut_late_connections(shared: &EpollLoop, now: u64) {
    for watch in shared.watches.iter().filter(|w| w.cut.get().is_none()) {
        if let Some(overdue) = watch.waits.overdue(now, watch.limits.get()) {
            watch.shut(Cut::Overdue(overdue));
        }
    }
}

/// The run is cut: every connection still waiting ends, counted as
/// stalled.
fn shut_stalled_connections(shared: &EpollLoop, now: u64) {
    let control = &shared.context.control;
    let waiting = shared.watches.iter().filter(|w| w.cut.get().is_none());
    control.stop();
    let mut stalls = Stalls::default();
    for watch in waiting {
        if let Some(waited) = watch.waits.waited(now) {
            stalls.add(waited);
            watch.shut(Cut::Stalled);
        }
    }
    if stalls.connections > 0 {
        control.record_stalls(stalls);
    }
}

/// `--rate`: the loop's connections waiting for an arrival.
struct Waiters {
    /// One waiting connection is woken per due arrival; all at the end.
    arrival: Notify,
    /// Connections waiting now.
    count: Cell<usize>,
    /// Wakes the dispatcher when the loop's last busy connection starts waiting.
    all_waiting: Notify,
    connections: usize,
}

impl Waiters {
    fn new(connections: usize) -> Self {
        Waiters { arrival: Notify::new(), count: Cell::new(0), all_waiting: Notify::new(), connections }
    }

    fn all_wait(&self) -> bool {
        self.count.get() >= self.connections
    }

    /// Waits until the dispatcher says an arrival is due (or the run is over).
    async fn wait(&self) {
        self.count.set(self.count.get() + 1);
        if self.all_wait() {
            self.all_waiting.notify_one();
        }
        self.arrival.notified().await;
        self.count.set(self.count.get() - 1);
    }
}

/// `--rate`: wakes a waiting connection for each arrival that comes due
/// and sleeps until the next one. Busy connections take due arrivals
/// themselves when they finish an event. While some connection is busy the
/// sleep is tokio's (wake-ups up to about 1 ms late, which such an event's
/// latency then includes); once all wait, the last stretch is slept
/// precisely.
async fn dispatch(shared: Rc<EpollLoop>) {
    let waiters = &shared.waiters;
    loop {
        let clock = shared.clock.get();
        let now = clock.now_ns();
        let (queued, wake_at) = {
            let mut budget = shared.budget.borrow_mut();
            budget.publish(now);
            (budget.queued(), budget.wake_at(now))
        };
        let Some(at) = wake_at else {
            // No event can start any more: the waiting connections finish.
            waiters.arrival.notify_waiters();
            return;
        };
        let woken = usize::try_from(queued).unwrap_or(usize::MAX).min(waiters.count.get());
        if woken > 0 {
            for _ in 0..woken {
                waiters.arrival.notify_one();
            }
            // Let them start their events before this loop sleeps.
            tokio::task::yield_now().await;
            continue;
        }
        let at = at.min(now + STOP_POLL_NS).max(now);
        if waiters.all_wait() && at - now <= PRECISE_WAIT_NS {
            std::thread::sleep(Duration::from_nanos(at - now));
            continue;
        }
        let coarse = if waiters.all_wait() { at - PRECISE_WAIT_NS } else { at };
        let deadline = tokio::time::Instant::from_std(clock.started() + Duration::from_nanos(coarse));
        tokio::select! {
            () = tokio::time::sleep_until(deadline) => {}
            () = waiters.all_waiting.notified() => {}
        }
    }
}

/// Drives connection `i`; a fatal error stops the whole run at once, so
/// the other connections finish their events instead of running on.
async fn drive(conn: ConnPlan, shared: Rc<EpollLoop>, i: usize) -> Result<(), DriverError> {
    let Some(watch) = shared.watches.get(i) else { return Ok(()) };
    let result = drive_connection(conn, &shared, watch).await;
    if result.is_err() {
        shared.context.control.stop();
    }
    result
}

/// Exchanges commands and answers until the connection is done (or cut
/// off, stalled); opens it again each time it is lost, if that is not
/// fatal.
async fn drive_connection(conn: ConnPlan, shared: &EpollLoop, watch: &WatchedConn) -> Result<(), DriverError> {
    let (mut io, socket, leftover) = ConnIo::from_plan(conn);
    let stream = socket.into_stream().map_err(|e| io.io_error(e))?;
    watch.fd.set(Some(stream.as_raw_fd()));
    let mut wire = Wire::new(stream, leftover);
    loop {
        let lost = exchange(&mut io, &mut wire, shared, &watch.waits).await?;
        let lost = match (lost, watch.cut.take()) {
            (None, None) => {
                wire.send_quit(&mut io).await;
                return Ok(());
            }
            (None, Some(_)) | (Some(_), Some(Cut::Stalled)) => return Ok(()),
            (Some(_), Some(Cut::Overdue(overdue))) => overdue.lost(),
            (Some(lost), None) => lost,
        };
        watch.fd.set(None);
        io.lost(lost, &shared.context.ignore)?;
        let Some((stream, leftover)) = io.reopen(|| shared.run_over(), &shared.stats).await else { return Ok(()) };
        watch.fd.set(Some(stream.as_raw_fd()));
        wire.replace(stream, leftover);
    }
}

/// Sends the session's commands and hands it the answers, until it is
/// done (`None`) or the connection is lost; stamps its waits in `waits`.
async fn exchange(
    io: &mut ConnIo,
    wire: &mut Wire,
    shared: &EpollLoop,
    waits: &Waits,
) -> Result<Option<Lost>, DriverError> {
    let context = &shared.context;
    loop {
        let now = shared.clock.get().now_ns();
        io.fill(&mut wire.wbuf, now, &mut shared.budget.borrow_mut(), &mut shared.stats.borrow_mut())?;
        // Written out here rather than in awaited helpers: each nested
        // future is one more state machine to poll on every query. Each
        // wait for the socket to take more is stamped, the next one from
        // when the last took some.
        let mut sent = 0;
        while sent < wire.wbuf.len() {
            waits.start_write(if sent == 0 { now } else { shared.clock.get().now_ns() });
            let written = wire.stream.write(wire.wbuf.get(sent..).unwrap_or_default()).await;
            waits.end_write();
            match written {
                Ok(0) => return Ok(Some(Lost::Write(std::io::ErrorKind::WriteZero.into()))),
                Ok(n) => sent += n,
                Err(e) => return Ok(Some(Lost::Write(e))),
            }
        }
        if sent > 0 && shared.budget.borrow().has_unsent() {
            let now = shared.clock.get().now_ns();
            shared.budget.borrow_mut().sent(now, &mut shared.stats.borrow_mut());
        }
        wire.wbuf.clear();
        match io.after_send() {
            AfterSend::Quit | AfterSend::CallAnswered | AfterSend::Idle | AfterSend::Later => return Ok(None),
            AfterSend::Arrival => {
                shared.waiters.wait().await;
                continue;
            }
            AfterSend::Answers => {}
        }
        wire.make_room();
        waits.start_read(now);
        let read = wire.stream.read_buf(&mut wire.rbuf).await;
        waits.end_read();
        match read {
            Ok(0) => return Ok(Some(Lost::Closed)),
            Ok(_) => {}
            Err(e) => return Ok(Some(Lost::Read(e))),
        }
        let mut stats = shared.stats.borrow_mut();
        let used = io.on_input(&wire.rbuf, shared.clock.get().now_ns(), &mut stats, &context.ignore)?;
        wire.rbuf.advance(used);
        shared.budget.borrow_mut().hand_over(&context.board, &mut stats);
        if io.is_task_conn() && !io.awaits_answers() {
            return Ok(None);
        }
    }
}

/// A connection's stream, and its buffers of wire bytes.
struct Wire {
    stream: Stream,
    /// Received and not yet consumed.
    rbuf: BytesMut,
    /// To send.
    wbuf: Vec<u8>,
}

impl Wire {
    fn new(stream: Stream, leftover: BytesMut) -> Self {
        // Small to start with: 10,000 connections must fit in a few hundred
        // MiB. The buffers grow when commands or responses are bigger.
        let mut rbuf = leftover;
        rbuf.reserve(READ_CHUNK);
        Wire { stream, rbuf, wbuf: Vec::with_capacity(1024) }
    }

    /// Takes over the stream of a connection opened again.
    fn replace(&mut self, stream: Stream, leftover: BytesMut) {
        self.stream = stream;
        self.rbuf = leftover;
        self.rbuf.reserve(READ_CHUNK);
        self.wbuf.clear();
    }

    /// Sends COM_QUIT on a connection whose work is done; it closes when
    /// dropped. A server already gone makes no difference now.
    async fn send_quit(&mut self, io: &mut ConnIo) {
        if io.write_quit(&mut self.wbuf).is_ok() {
            // A goodbye is not worth a hang: a server that takes nothing
            // more in a second gets none.
            let _ = tokio::time::timeout(QUIT_WAIT, self.stream.write_all(&self.wbuf)).await;
            self.wbuf.clear();
        }
    }

    /// Makes sure a read has room to fill.
    fn make_room(&mut self) {
        if self.rbuf.capacity() - self.rbuf.len() < READ_CHUNK / 2 {
            self.rbuf.reserve(READ_CHUNK.max(self.rbuf.len()));
        }
    }
}
