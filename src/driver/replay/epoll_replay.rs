//! Replayed connections on a loop of the epoll backend: a tokio
//! current-thread runtime per loop, pinned, as `--io=epoll` runs a
//! built-in test's connections, one task per connection.
//!
//! The loop's ticker takes its feed's batches every [`INTAKE_TICK`] (a
//! connection's records arrive well before they are due: the reader reads
//! its lookahead ahead of the schedule), starts a task
//! for each connection the capture opens and hands each its records; it
//! also answers the collector, and cuts off the connections that still
//! wait for an answer once the run is cut. A connection's task opens it
//! when it is due (its login a little ahead, so that it is done by then),
//! then sends each command when [`ReplayedConn`] says it is due and reads
//! its answer; a connection the server closes or breaks is counted lost,
//! and what it still held is counted as not replayed.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::os::fd::{AsRawFd, RawFd};
use std::rc::Rc;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::{Buf, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Notify;
use wirebench_protocol::command;
use wirebench_protocol::Capabilities;

use super::feed::{FeedItem, FeedReceiver, OpenItem, ReplayConnId, OPEN_ALREADY};
use super::replay_tally::{LoopSkip, ReplayTally};
use super::replayed_conn::{ReplaySchedule, ReplayStep, ReplayTurn, ReplayedConn};
use crate::client::{ConnectOptions, Connection, Stream};
use crate::driver::{Backend, Budget, Clock, DriverError, LoopContext, LoopOp, Stalls};
use crate::stats::LoopStats;
use crate::transport::Transport;

/// How often the loop takes its feed's batches and answers the collector.
const INTAKE_TICK: Duration = Duration::from_millis(1);

/// The most bytes of records a loop's connections hold before it takes no
/// more from its feed (the reader then waits): at `--speed=max` a
/// connection held up by a slow answer must not make its loop hold the
/// rest of the capture.
const MAX_QUEUED: usize = 32 << 20;

/// How long before its time a connection starts its login.
pub const OPEN_LEAD_NS: u64 = 100_000_000;

/// The longest a connection waiting for its next command's time goes
/// without looking at the run (a stop).
const STOP_LOOK: Duration = Duration::from_millis(50);

/// tokio's timer's resolution: its sleeps end on the next whole millisecond.
const TIMER_TICK_NS: u64 = 1_000_000;

/// Bytes a read may fill at least.
const READ_CHUNK: usize = 4096;

/// How long COM_QUIT may wait for the socket to take it.
const QUIT_WAIT: Duration = Duration::from_secs(1);

/// The capabilities of a captured login that change what its session
/// answers: they are asked for again.
pub const SESSION_CAPABILITIES: Capabilities = Capabilities(
    Capabilities::FOUND_ROWS.0
        | Capabilities::IGNORE_SPACE.0
        | Capabilities::INTERACTIVE.0
        | Capabilities::MARIADB_CLIENT_STMT_BULK_OPERATIONS.0,
);

/// What every replay loop shares: how to log in, when captured times are
/// due, and where each loop leaves its tally as it ends.
#[derive(Debug)]
pub struct ReplaySettings {
    /// By the feed's login number: 0 is `--mysql-user`'s.
    pub logins: Vec<ConnectOptions>,
    pub schedule: ReplaySchedule,
    /// The loops' tallies, merged as each ends.
    pub tally: Mutex<ReplayTally>,
    /// The loops' backend: the engine's io_uring loop, or a tokio runtime
    /// each (`--io=epoll`).
    pub backend: Backend,
}

/// One loop of a replay: its core and its feed.
pub struct ReplayLoopPlan {
    pub cpu: Option<usize>,
    pub feed: FeedReceiver,
}

/// Runs one replay loop on this thread until its feed has ended and every
/// connection it started is done.
pub(crate) fn run_replay_loop(
    index: usize,
    feed: FeedReceiver,
    settings: Arc<ReplaySettings>,
    context: &LoopContext,
) -> Result<(), DriverError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|source| DriverError::Loop { index, op: LoopOp::StartRuntime, source })?;
    let shared = Rc::new(ReplayLoop {
        index,
        context: context.clone(),
        settings: settings.clone(),
        stats: RefCell::new(context.board.loop_stats(index)),
        tally: RefCell::new(ReplayTally::default()),
        budget: RefCell::new(Budget::for_loop(context.control.clone(), context.deadline_ns, index)),
        conns: RefCell::new(HashMap::new()),
        live: Cell::new(0),
        queued: Cell::new(0),
        feed_ended: Cell::new(false),
        done: Notify::new(),
    });
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, run_replay_tasks(&shared, feed));
    context.board.publish(index, &mut shared.stats.borrow_mut());
    settings.tally.lock().unwrap_or_else(PoisonError::into_inner).merge(&shared.tally.borrow());
    Ok(())
}

/// What a loop's tasks share, on its one thread.
struct ReplayLoop {
    index: usize,
    context: LoopContext,
    settings: Arc<ReplaySettings>,
    stats: RefCell<LoopStats>,
    tally: RefCell<ReplayTally>,
    budget: RefCell<Budget>,
    /// The connections whose records still come, by id.
    conns: RefCell<HashMap<ReplayConnId, Rc<ReplaySlot>>>,
    /// Connection tasks not yet ended.
    live: Cell<usize>,
    /// Bytes of records its connections hold, not yet used.
    queued: Cell<usize>,
    feed_ended: Cell<bool>,
    /// Wakes the loop when its last connection has ended.
    done: Notify,
}

impl ReplayLoop {
    fn clock(&self) -> Clock {
        self.context.clock
    }

    /// A connection's turn: the loop's counts, limits and schedule.
    fn with_turn<T>(&self, f: impl FnOnce(&mut ReplayTurn<'_>) -> T) -> T {
        let (mut stats, mut tally, mut budget) =
            (self.stats.borrow_mut(), self.tally.borrow_mut(), self.budget.borrow_mut());
        let mut turn =
            ReplayTurn { stats: &mut stats, tally: &mut tally, budget: &mut budget, schedule: &self.settings.schedule };
        f(&mut turn)
    }

    fn stopped(&self) -> bool {
        self.context.control.is_stopped()
    }

    /// `f` on a connection, the bytes of records it uses counted off.
    fn with_conn<T>(&self, slot: &ReplaySlot, f: impl FnOnce(&mut ReplayedConn) -> T) -> T {
        let mut conn = slot.conn.borrow_mut();
        let before = conn.queued();
        let out = f(&mut conn);
        let used = before.saturating_sub(conn.queued());
        self.queued.set(self.queued.get().saturating_sub(used));
        out
    }
}

/// A connection as its loop's ticker and its task share it.
struct ReplaySlot {
    conn: RefCell<ReplayedConn>,
    /// Its records came, or the run stopped.
    wake: Notify,
    /// Its socket, while it waits for an answer on it, and since when.
    waiting: Cell<Option<(RawFd, u64)>>,
    /// The ticker shut its socket: the run was cut while it waited.
    cut: Cell<bool>,
}

async fn run_replay_tasks(shared: &Rc<ReplayLoop>, feed: FeedReceiver) {
    let ticker = tokio::task::spawn_local(replay_ticker(shared.clone(), feed));
    loop {
        let over = shared.feed_ended.get() || shared.stopped();
        if over && shared.live.get() == 0 {
            break;
        }
        tokio::select! {
            () = shared.done.notified() => {}
            () = tokio::time::sleep(STOP_LOOK) => {}
        }
    }
    ticker.abort();
}

/// The loop's ticker: its feed taken, the collector answered, the run's
/// cut carried out.
async fn replay_ticker(shared: Rc<ReplayLoop>, feed: FeedReceiver) {
    let mut tick = tokio::time::interval(INTAKE_TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut batches = Vec::new();
    loop {
        tick.tick().await;
        if !shared.feed_ended.get() && shared.queued.get() < MAX_QUEUED {
            let ended = feed.take(&mut batches);
            for batch in &batches {
                take_batch(&shared, batch);
            }
            feed.recycle(&mut batches);
            if ended {
                shared.feed_ended.set(true);
                shared.done.notify_one();
                for slot in shared.conns.borrow().values() {
                    slot.wake.notify_one();
                }
            }
        }
        let now = shared.clock().now_ns();
        shared.budget.borrow_mut().publish(now);
        shared.context.board.publish_if_requested(shared.index, &mut shared.stats.borrow_mut());
        if shared.context.control.cut_due(now) || shared.stopped() {
            cut_waiting(&shared, now);
        }
    }
}

/// Hands each item of `batch` to its connection, starting the task of
/// each connection it opens.
fn take_batch(shared: &Rc<ReplayLoop>, batch: &[u8]) {
    let mut rest = batch;
    let now = shared.clock().now_ns();
    while let Some((item, len)) = FeedItem::parse(rest) {
        let bytes = rest.get(..len).unwrap_or_default();
        rest = rest.get(len..).unwrap_or_default();
        if let FeedItem::Open(open) = item {
            start_connection(shared, &open, now);
            continue;
        }
        let slot = shared.conns.borrow().get(&item.conn()).cloned();
        match slot {
            Some(slot) => {
                let mut conn = slot.conn.borrow_mut();
                conn.push(bytes);
                conn.fed(now);
                drop(conn);
                shared.queued.set(shared.queued.get() + bytes.len());
                slot.wake.notify_one();
            }
            // Its connection is gone (lost, or refused): not replayed.
            None if matches!(item, FeedItem::Command(_)) => {
                let ended = shared.stopped() || shared.context.deadline_ns.is_some_and(|end| now >= end);
                let why = if ended { LoopSkip::RunEnded } else { LoopSkip::NoConnection };
                shared.tally.borrow_mut().record_skip(why);
            }
            None => {}
        }
    }
}

/// What a connection's task needs of its OPEN item.
struct OpenSpec {
    id: ReplayConnId,
    offset_ns: u64,
    login: u32,
    flags: u8,
    charset: u8,
    capabilities: u64,
    database: Vec<u8>,
}

fn start_connection(shared: &Rc<ReplayLoop>, open: &OpenItem<'_>, now: u64) {
    let slot = Rc::new(ReplaySlot {
        conn: RefCell::new(ReplayedConn::new(open.conn, now)),
        wake: Notify::new(),
        waiting: Cell::new(None),
        cut: Cell::new(false),
    });
    shared.conns.borrow_mut().insert(open.conn, slot.clone());
    shared.live.set(shared.live.get() + 1);
    let spec = OpenSpec {
        id: open.conn,
        offset_ns: open.offset_ns,
        login: open.login,
        flags: open.flags,
        charset: open.charset,
        capabilities: open.capabilities,
        database: open.database.to_vec(),
    };
    tokio::task::spawn_local(replay_connection(shared.clone(), slot, spec));
}

/// Once the run is cut (or stopped), every connection still waiting for
/// an answer is cut off: its read returns, and it ends.
fn cut_waiting(shared: &ReplayLoop, now: u64) {
    shared.context.control.stop();
    let mut stalls = Stalls::default();
    for slot in shared.conns.borrow().values() {
        slot.wake.notify_one();
        if let Some((fd, since)) = slot.waiting.take() {
            stalls.add(now.saturating_sub(since));
            slot.cut.set(true);
            // SAFETY: `fd` is the socket of a stream its task still owns
            // (the task clears `waiting` before it drops the stream), and
            // shutdown(2) neither closes nor frees it.
            unsafe { libc::shutdown(fd, libc::SHUT_RDWR) };
        }
    }
    if stalls.connections > 0 && shared.context.control.cut_due(now) {
        shared.context.control.record_stalls(stalls);
    }
}

/// A connection's life: opened when due, its commands replayed, closed.
async fn replay_connection(shared: Rc<ReplayLoop>, slot: Rc<ReplaySlot>, spec: OpenSpec) {
    if let Some(link) = open_connection(&shared, &slot, &spec).await {
        replay_commands(&shared, &slot, link).await;
    }
    slot.waiting.set(None);
    let mut conns = shared.conns.borrow_mut();
    // The id may have come back for a new connection (a log's thread id).
    if conns.get(&spec.id).is_some_and(|current| Rc::ptr_eq(current, &slot)) {
        conns.remove(&spec.id);
    }
    drop(conns);
    shared.live.set(shared.live.get().saturating_sub(1));
    if shared.live.get() == 0 {
        shared.done.notify_one();
    }
}

/// A connection's stream, its transport and its buffers.
struct Link {
    stream: Stream,
    transport: Transport,
    /// Received wire bytes not yet decoded (or, plain, not yet walked).
    rbuf: BytesMut,
    /// Decoded packet stream not yet walked (a transport that is not plain).
    plain_in: Vec<u8>,
    /// Commands on their way to the transport.
    plain_out: Vec<u8>,
    wbuf: Vec<u8>,
}

/// Waits for the connection's time (less [`OPEN_LEAD_NS`]) and logs in;
/// `None` when it could not (counted) or the run ended first.
async fn open_connection(shared: &ReplayLoop, slot: &ReplaySlot, spec: &OpenSpec) -> Option<Link> {
    if let Some(due) = shared.settings.schedule.due_at(spec.offset_ns) {
        sleep_until(shared, due.saturating_sub(OPEN_LEAD_NS)).await;
    }
    if shared.stopped() {
        shared.with_conn(slot, |conn| conn.abandon(&mut shared.tally.borrow_mut(), LoopSkip::RunEnded));
        return None;
    }
    let options = login_options(&shared.settings, spec)?;
    match Connection::connect(&options).await {
        Ok(conn) => {
            let (stream, leftover, login, transport) = conn.into_parts();
            let now = shared.clock().now_ns();
            slot.conn.borrow_mut().logged_in(login.capabilities, now);
            shared.tally.borrow_mut().opened += 1;
            let mut rbuf = leftover;
            rbuf.reserve(READ_CHUNK);
            let link = Link { stream, transport, rbuf, plain_in: Vec::new(), plain_out: Vec::new(), wbuf: Vec::new() };
            Some(link)
        }
        Err(error) => {
            let mut tally = shared.tally.borrow_mut();
            tally.record_refused(spec.login, || error.to_string());
            shared.with_conn(slot, |conn| conn.abandon(&mut tally, LoopSkip::NoConnection));
            None
        }
    }
}

/// The login of a captured connection: its login's user, the captured
/// database (an already open one's is not known: `--mysql-db`'s), its
/// collation and session capabilities.
fn login_options(settings: &ReplaySettings, spec: &OpenSpec) -> Option<ConnectOptions> {
    let mut options = settings.logins.get(spec.login as usize).or(settings.logins.first())?.clone();
    if spec.flags & OPEN_ALREADY == 0 {
        options.database = (!spec.database.is_empty()).then(|| String::from_utf8_lossy(&spec.database).into_owned());
    }
    if spec.charset != 0 {
        options.charset = Some(spec.charset);
    }
    options.session_capabilities = Capabilities(spec.capabilities) & SESSION_CAPABILITIES;
    Some(options)
}

/// Sleeps until `at_ns` on the run's clock, or until the run stops.
/// tokio's timer wakes on whole milliseconds, late: the last millisecond
/// is waited by giving way to the loop's other tasks until it has passed,
/// so that a command starts on its time, not up to a millisecond after.
async fn sleep_until(shared: &ReplayLoop, at_ns: u64) {
    let clock = shared.clock();
    loop {
        let now = clock.now_ns();
        if at_ns <= now || shared.stopped() {
            return;
        }
        let left = at_ns - now;
        if left <= TIMER_TICK_NS {
            tokio::task::yield_now().await;
            continue;
        }
        let wait = Duration::from_nanos(left - TIMER_TICK_NS).min(STOP_LOOK);
        tokio::time::sleep(wait).await;
    }
}

/// Sends the connection's commands and reads their answers until it is
/// done, cut off or lost.
async fn replay_commands(shared: &ReplayLoop, slot: &ReplaySlot, mut link: Link) {
    loop {
        let now = shared.clock().now_ns();
        let out = if link.transport.is_plain() { &mut link.wbuf } else { &mut link.plain_out };
        let step = shared.with_conn(slot, |conn| shared.with_turn(|turn| conn.fill(out, now, turn)));
        if let Err(why) = link.send().await {
            lose(shared, slot, why);
            return;
        }
        match step {
            ReplayStep::Answer => {
                if let Err(why) = read_replayed_answer(shared, slot, &mut link).await {
                    lose(shared, slot, why);
                    return;
                }
            }
            ReplayStep::Until(at) => sleep_until(shared, at).await,
            ReplayStep::Records if shared.stopped() || shared.feed_ended.get() => {
                shared.with_conn(slot, |conn| conn.abandon(&mut shared.tally.borrow_mut(), LoopSkip::RunEnded));
                break;
            }
            ReplayStep::Records => slot.wake.notified().await,
            ReplayStep::Quit => break,
        }
    }
    link.quit().await;
}

/// Reads until the command in flight is answered.
async fn read_replayed_answer(shared: &ReplayLoop, slot: &ReplaySlot, link: &mut Link) -> Result<(), String> {
    while slot.conn.borrow().awaits_answer() {
        if link.rbuf.capacity() - link.rbuf.len() < READ_CHUNK / 2 {
            link.rbuf.reserve(READ_CHUNK.max(link.rbuf.len()));
        }
        slot.waiting.set(Some((link.stream.as_raw_fd(), shared.clock().now_ns())));
        let read = link.stream.read_buf(&mut link.rbuf).await;
        slot.waiting.set(None);
        match read {
            Ok(0) if slot.cut.get() => return Err("cut: the run was over while it waited for an answer".into()),
            Ok(0) => return Err("the server closed the connection".into()),
            Ok(_) => {}
            Err(e) => return Err(format!("reading: {e}")),
        }
        let now = shared.clock().now_ns();
        if link.transport.is_plain() {
            let walked = shared.with_conn(slot, |conn| {
                shared.with_turn(|turn| conn.on_input(&link.rbuf, now, turn.stats, turn.tally))
            });
            link.rbuf.advance(walked.map_err(|e| e.to_string())?);
        } else {
            let decoded = link.transport.decode(&link.rbuf, &mut link.plain_in).map_err(|e| e.to_string())?;
            link.rbuf.advance(decoded);
            let plain = &link.plain_in;
            let walked = shared
                .with_conn(slot, |conn| shared.with_turn(|turn| conn.on_input(plain, now, turn.stats, turn.tally)));
            link.plain_in.drain(..walked.map_err(|e| e.to_string())?);
        }
    }
    Ok(())
}

/// The connection is lost: counted, and what it held not replayed.
fn lose(shared: &ReplayLoop, slot: &ReplaySlot, why: String) {
    let mut tally = shared.tally.borrow_mut();
    let skip = if slot.cut.get() {
        LoopSkip::RunEnded
    } else {
        tally.lost += 1;
        tally.first_loss.get_or_insert(why);
        LoopSkip::NoConnection
    };
    shared.with_conn(slot, |conn| conn.abandon(&mut tally, skip));
}

impl Link {
    /// Sends what was filled, through the transport.
    async fn send(&mut self) -> Result<(), String> {
        if !self.plain_out.is_empty() {
            self.transport.encode(&self.plain_out, &mut self.wbuf).map_err(|e| e.to_string())?;
            self.plain_out.clear();
        }
        if self.wbuf.is_empty() {
            return Ok(());
        }
        let written = self.stream.write_all(&self.wbuf).await;
        self.wbuf.clear();
        written.map_err(|e| format!("writing: {e}"))
    }

    /// COM_QUIT, through the transport; the connection closes when dropped.
    async fn quit(mut self) {
        self.wbuf.clear();
        if self.transport.is_plain() {
            command::encode_quit(&mut self.wbuf);
        } else {
            command::encode_quit(&mut self.plain_out);
            if self.transport.encode(&self.plain_out, &mut self.wbuf).is_err() {
                return;
            }
        }
        let _ = tokio::time::timeout(QUIT_WAIT, self.stream.write_all(&self.wbuf)).await;
    }
}
