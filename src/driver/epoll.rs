//! The epoll backend: a tokio current-thread runtime per loop, one task per
//! connection. Portable and simple; io_uring amortises wake-ups better.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use bytes::{Buf, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Notify;

use super::{Budget, Clock, ConnPlan, DriverError, LoopContext, LoopOp, Lost, Redial, Session, StdSocket};
use crate::client::{Endpoint, Stream};
use crate::stats::LoopStats;
use crate::transport::Transport;

/// Bytes a read may fill at least.
const READ_CHUNK: usize = 4096;

/// How often an idle loop still answers the collector.
const PUBLISH_TICK: Duration = Duration::from_millis(5);

/// How long connections waiting for a `--rate` arrival may miss a stop.
const STOP_POLL_NS: u64 = 10_000_000;

/// A `--rate` wait shorter than this, on a loop whose connections all
/// wait, sleeps the loop's thread precisely (nothing else can happen on it
/// meanwhile) instead of through tokio's timer, whose 1 ms ticks would
/// show in every such event's latency.
const PRECISE_WAIT_NS: u64 = 2_000_000;

pub fn run_loop(index: usize, connections: Vec<ConnPlan>, context: &LoopContext) -> Result<(), DriverError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|source| DriverError::Loop { index, op: LoopOp::StartRuntime, source })?;
    let stats = Rc::new(RefCell::new(context.board.loop_stats(index)));
    let budget = Rc::new(RefCell::new(Budget::for_loop(context.control.clone(), context.deadline_ns, index)));
    let waiters = Rc::new(Waiters::new(connections.len()));
    let local = tokio::task::LocalSet::new();
    let result = local.block_on(&runtime, async {
        let mut tasks = Vec::with_capacity(connections.len());
        for conn in connections {
            let (stats, budget, waiters, context) = (stats.clone(), budget.clone(), waiters.clone(), context.clone());
            tasks.push(tokio::task::spawn_local(drive(index, conn, stats, budget, waiters, context)));
        }
        let dispatcher = budget.borrow().has_rate().then(|| {
            let (budget, waiters) = (budget.clone(), waiters.clone());
            tokio::task::spawn_local(dispatch(budget, waiters, context.clock))
        });
        let ticker = {
            let (stats, budget, board, clock) = (stats.clone(), budget.clone(), context.board.clone(), context.clock);
            tokio::task::spawn_local(async move {
                let mut tick = tokio::time::interval(PUBLISH_TICK);
                loop {
                    tick.tick().await;
                    budget.borrow_mut().publish(clock.now_ns());
                    board.publish_if_requested(index, &mut stats.borrow_mut());
                }
            })
        };
        let mut first_error = None;
        for task in tasks {
            let outcome = task.await.unwrap_or_else(|source| Err(DriverError::Task { index, source }));
            if let Err(e) = outcome {
                context.control.stop();
                first_error.get_or_insert(e);
            }
        }
        ticker.abort();
        if let Some(dispatcher) = dispatcher {
            dispatcher.abort();
        }
        first_error.map_or(Ok(()), Err)
    });
    context.board.publish(index, &mut stats.borrow_mut());
    result
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
async fn dispatch(budget: Rc<RefCell<Budget>>, waiters: Rc<Waiters>, clock: Clock) {
    loop {
        let now = clock.now_ns();
        let (queued, wake_at) = {
            let mut budget = budget.borrow_mut();
            budget.publish(now);
            (budget.queued(), budget.wake_at(now))
        };
        let Some(at) = wake_at else {
            // No event can start any more: the waiting connections finish.
            waiters.arrival.notify_waiters();
            return;
        };
        let woken = queued.min(waiters.count.get());
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

/// Drives one connection; a fatal error stops the whole run at once, so
/// the other connections finish their events instead of running on.
async fn drive(
    index: usize,
    conn: ConnPlan,
    stats: Rc<RefCell<LoopStats>>,
    budget: Rc<RefCell<Budget>>,
    waiters: Rc<Waiters>,
    context: LoopContext,
) -> Result<(), DriverError> {
    let control = context.control.clone();
    let result = drive_connection(index, conn, stats, budget, waiters, context).await;
    if result.is_err() {
        control.stop();
    }
    result
}

async fn drive_connection(
    index: usize,
    conn: ConnPlan,
    stats: Rc<RefCell<LoopStats>>,
    budget: Rc<RefCell<Budget>>,
    waiters: Rc<Waiters>,
    context: LoopContext,
) -> Result<(), DriverError> {
    let ConnPlan { endpoint, socket, leftover, mut session, mut transport, redial } = conn;
    let io_error = |source| DriverError::Io { endpoint: endpoint.clone(), source };
    let mut stream = match socket {
        StdSocket::Tcp(s) => Stream::Tcp(tokio::net::TcpStream::from_std(s).map_err(io_error)?),
        StdSocket::Unix(s) => Stream::Unix(tokio::net::UnixStream::from_std(s).map_err(io_error)?),
    };
    // Small to start with: 10,000 connections must fit in a few hundred
    // MiB. The buffer grows when responses are bigger.
    let mut rbuf = leftover;
    rbuf.reserve(READ_CHUNK);
    let mut wbuf = Vec::with_capacity(1024);
    // With a transport that is not plain: the packet stream on both sides
    // of it (`rbuf` and `wbuf` then hold wire bytes).
    let mut plain_in = Vec::new();
    let mut plain_out = Vec::new();
    let session_error = |source| DriverError::Session { endpoint: endpoint.clone(), source };
    let transport_error = |source| DriverError::Transport { endpoint: endpoint.clone(), source };
    loop {
        let now = context.clock.now_ns();
        if transport.is_plain() {
            session.fill(&mut wbuf, now, &mut budget.borrow_mut()).map_err(session_error)?;
        } else {
            session.fill(&mut plain_out, now, &mut budget.borrow_mut()).map_err(session_error)?;
            let encoded = transport.encode(&plain_out, &mut wbuf);
            plain_out.clear();
            encoded.map_err(transport_error)?;
        }
        if !wbuf.is_empty() {
            let written = stream.write_all(&wbuf).await;
            wbuf.clear();
            if let Err(e) = written {
                let lost = Lost::Write(e);
                let Some(again) = reconnect(lost, &endpoint, &redial, &mut session, &stats, &context).await? else {
                    return Ok(());
                };
                (stream, rbuf, transport) = again;
                plain_in.clear();
                continue;
            }
        }
        if session.is_done() {
            return Ok(());
        }
        if session.is_waiting() {
            waiters.wait().await;
            continue;
        }
        // Not done, so at least one command is in flight: wait for its answer.
        if rbuf.capacity() - rbuf.len() < READ_CHUNK / 2 {
            rbuf.reserve(READ_CHUNK.max(rbuf.len()));
        }
        let lost = match stream.read_buf(&mut rbuf).await {
            Ok(0) => Some(Lost::Closed),
            Ok(_) => None,
            Err(e) => Some(Lost::Read(e)),
        };
        if let Some(lost) = lost {
            let Some(again) = reconnect(lost, &endpoint, &redial, &mut session, &stats, &context).await? else {
                return Ok(());
            };
            (stream, rbuf, transport) = again;
            plain_in.clear();
            continue;
        }
        let now = context.clock.now_ns();
        {
            let mut stats = stats.borrow_mut();
            if transport.is_plain() {
                let used = session.on_input(&rbuf, now, &mut stats, &context.ignore).map_err(session_error)?;
                rbuf.advance(used);
            } else {
                let decoded = transport.decode(&rbuf, &mut plain_in).map_err(transport_error)?;
                rbuf.advance(decoded);
                let used = session.on_input(&plain_in, now, &mut stats, &context.ignore).map_err(session_error)?;
                plain_in.drain(..used);
            }
            context.board.publish_if_requested(index, &mut stats);
        }
    }
}

/// A lost connection: fatal unless `--mysql-ignore-errors` lists its code;
/// then it is opened again (retrying until it works), counted as a
/// reconnect, and the session starts its event over on it. `None` when the
/// run ended before the connection was back.
async fn reconnect(
    lost: Lost,
    endpoint: &Endpoint,
    redial: &Redial,
    session: &mut Session,
    stats: &RefCell<LoopStats>,
    context: &LoopContext,
) -> Result<Option<(Stream, BytesMut, Transport)>, DriverError> {
    if !context.ignore.ignores(lost.code()) {
        return Err(DriverError::Lost { endpoint: endpoint.clone(), lost });
    }
    stats.borrow_mut().record_reconnect();
    let run_over = || context.control.is_stopped() || context.deadline_ns.is_some_and(|d| context.clock.now_ns() >= d);
    let Some((conn, statement_ids)) = redial.reopen(run_over).await else { return Ok(None) };
    let (stream, mut rbuf, login, transport) = conn.into_parts();
    session.reconnected(login.capabilities, &statement_ids);
    rbuf.reserve(READ_CHUNK);
    Ok(Some((stream, rbuf, transport)))
}
