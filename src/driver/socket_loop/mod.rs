//! The socket loop: the backend of loops whose wait plan is
//! [`WaitMode::OnSocket`](crate::driver::WaitMode::OnSocket). Each
//! exchange runs on the connection's own socket, as libmysqlclient runs
//! sysbench's: the command goes out with `send`, and the answer is read
//! with `recv`, waiting in `poll(2)` when it is not there yet. No ring and
//! no runtime: one exchange at a time, each to its end (a built-in test's
//! event, or a task's call), then the next connection's.
//!
//! Why: a unix socket wakes the thread that waits on it on the waker's
//! core, so the server's thread finds the next query waiting instead of
//! sleeping for it; a ring's completion gives no such hint. `poll(2)`, not
//! a blocking `recv`, which a unix socket also wakes when the server reads
//! the query (docs/benchmarking.md#waits-on-the-socket).
//!
//! The loop's turn ([`SocketLoop::turn`]) does the chores every loop does
//! first ([`SocketLoop::chores`]: the run's clock, the collector's
//! requests, the events in progress, the timeouts and the run's cut,
//! `--rate` arrivals and the tasks' timers), then resumes the tasks that
//! are ready and runs the exchanges that are due, and sleeps when nothing
//! is. A wait in `poll` looks at the run every
//! [`PUBLISH_TICK`](crate::driver::PUBLISH_TICK) too: a connection past its
//! read or write timeout is lost, and the run's cut ends the exchange as
//! stalled.
//!
//! Files:
//! - `conn.rs`: a connection on its socket.
//! - `exchange.rs`: one connection's exchanges: send, wait in `poll`, receive.
//! - `lifecycle.rs`: how a connection's life ends (COM_QUIT, failure,
//!   loss, timeout, the run's cut) or starts again (a reconnect).
//! - `tasks.rs`: what the loop's tasks (a script's states) ask of their
//!   connections.
//! - `tests.rs`: the loop against scripted servers.

mod conn;
mod exchange;
mod lifecycle;
mod tasks;
#[cfg(test)]
mod tests;

use std::time::Duration;

use super::start_gate::ArrivalGuard;
use super::task_queue::TaskQueue;
use super::waits::WaitCheck;
use super::{Budget, Clock, ConnPlan, DriverError, LoopContext, LoopOp, TaskBody, PUBLISH_TICK};
use crate::stats::LoopStats;
use conn::SocketConn;

/// Exchanges a loop runs in one turn before it does its chores again (a
/// server that drops every connection sends the loop through
/// reconnections without end).
const EXCHANGES_PER_TURN: usize = 64;

/// One loop's connections, each exchanged with on its own socket.
struct SocketLoop<'c> {
    index: usize,
    context: &'c LoopContext,
    /// A built-in test's connections, or those the tasks opened (a
    /// retired one's place is taken by the next a task opens).
    conns: Vec<SocketConn>,
    /// Connections not yet retired.
    live: usize,
    budget: Budget,
    stats: LoopStats,
    /// Connections whose next exchange is due, in turn.
    due: Vec<usize>,
    /// `--rate`: connections with nothing in flight, waiting for an
    /// arrival.
    waiting: Vec<usize>,
    first_error: Option<DriverError>,
    /// The latest time the loop read (ns since the run's start): what
    /// waits are stamped with.
    now_ns: u64,
    wait_check: WaitCheck,
    /// The tasks this loop runs (a script's states).
    tasks: TaskQueue,
    /// The run's clock and deadline (the loop's set-up ones until a start
    /// gate opens).
    clock: Clock,
    deadline_ns: Option<u64>,
    /// Where a script run's tasks wait for its start, until they have.
    arrival: Option<ArrivalGuard>,
    /// `--idle-connections`: this loop's share, served at each turn.
    idle: Option<super::IdleSet>,
}

/// Runs a socket loop over `connections` (a built-in test's) or `tasks`
/// (a script's states) on this thread until every one is done.
pub fn run_socket_loop(
    index: usize,
    connections: Vec<ConnPlan>,
    tasks: Vec<TaskBody>,
    context: &LoopContext,
    arrival: Option<ArrivalGuard>,
) -> Result<(), DriverError> {
    let mut socket_loop = SocketLoop::new(index, connections, context);
    socket_loop.arrival = arrival;
    socket_loop.idle = context.idle_set(index)?;
    if let Err(source) = socket_loop.tasks.add(tasks, socket_loop.clock) {
        return Err(DriverError::Loop { index, op: LoopOp::StartTask, source });
    }
    let result = socket_loop.run();
    context.board.publish(index, &mut socket_loop.stats);
    result
}

impl<'c> SocketLoop<'c> {
    fn new(index: usize, connections: Vec<ConnPlan>, context: &'c LoopContext) -> Self {
        let conns: Vec<SocketConn> = connections.into_iter().map(SocketConn::new).collect();
        let len = conns.len();
        SocketLoop {
            index,
            context,
            live: len,
            conns,
            budget: Budget::for_loop(context.control.clone(), context.deadline_ns, index),
            stats: context.board.loop_stats(index),
            due: (0..len).collect(),
            waiting: Vec::with_capacity(len),
            first_error: None,
            now_ns: context.clock.now_ns(),
            wait_check: WaitCheck::default(),
            tasks: TaskQueue::default(),
            clock: context.clock,
            deadline_ns: context.deadline_ns,
            arrival: None,
            idle: None,
        }
    }

    fn run(&mut self) -> Result<(), DriverError> {
        while self.live > 0 || self.tasks.live() > 0 {
            self.turn()?;
        }
        if let Some(failure) = self.tasks.take_failure() {
            return Err(DriverError::Script(failure));
        }
        self.first_error.take().map_or(Ok(()), Err)
    }

    /// One turn of the loop: its chores, then the tasks that are ready and
    /// the exchanges that are due; with none of either, a sleep until the
    /// next arrival or timer, or the next look at the run.
    fn turn(&mut self) -> Result<(), DriverError> {
        self.chores()?;
        self.run_tasks()?;
        self.exchange_due()?;
        if self.due.is_empty() && self.tasks.ready.is_empty() && !self.tasks.have_yielded() {
            self.sleep_until_due();
        }
        Ok(())
    }

    /// What every loop does at its turn, whatever it then runs: reads the
    /// run's clock, hands the collector its statistics when asked,
    /// publishes the events in progress (for --forced-shutdown's report),
    /// looks at the timeouts and the run's cut, lets the connections and
    /// tasks whose `--rate` arrival came go on, wakes the tasks whose
    /// pause is over, and serves the idle connections. Another per-turn
    /// chore belongs here.
    fn chores(&mut self) -> Result<(), DriverError> {
        self.now_ns = self.clock.now_ns();
        // Events admitted without a command to send (a script's) are
        // stamped here; the others were at their send.
        self.budget.sent(self.now_ns, &mut self.stats);
        self.context.board.publish_if_requested(self.index, &mut self.stats);
        if let Some(idle) = &mut self.idle {
            idle.serve();
        }
        self.budget.publish(self.now_ns);
        if self.wait_check.due(self.now_ns) {
            self.check_waits(self.now_ns)?;
        }
        self.serve_arrivals();
        self.wake_tasks();
        Ok(())
    }

    /// `--rate`: once the next arrival is due (or no event can start any
    /// more), the waiting connections' next exchanges are due.
    fn serve_arrivals(&mut self) {
        if self.waiting.is_empty() || self.budget.wake_at(self.now_ns).is_some_and(|at| at > self.now_ns) {
            return;
        }
        for i in self.waiting.drain(..) {
            if !self.due.contains(&i) {
                self.due.push(i);
            }
        }
    }

    /// Runs the exchanges that are due, and the tasks they answer (whose
    /// next calls are due in turn), up to [`EXCHANGES_PER_TURN`]; the rest
    /// at the next turn, which does not sleep while some are due.
    fn exchange_due(&mut self) -> Result<(), DriverError> {
        let mut ran = 0;
        while ran < EXCHANGES_PER_TURN && !self.due.is_empty() {
            let i = self.due.remove(0);
            self.exchange_until_answered(i)?;
            ran += 1;
            if self.due.is_empty() {
                self.run_tasks()?;
            }
        }
        Ok(())
    }

    /// Nothing to do until the next `--rate` arrival, a task's pause ends
    /// or the collector may ask: sleeps until the first of them.
    fn sleep_until_due(&mut self) {
        let now = self.clock.now_ns();
        let mut wake = now + PUBLISH_TICK.as_nanos() as u64;
        if !self.waiting.is_empty() || self.tasks.have_admitting() {
            if let Some(at) = self.budget.wake_at(now) {
                wake = wake.min(at);
            }
        }
        if let Some(at) = self.tasks.next_wake() {
            wake = wake.min(at);
        }
        if wake > now {
            std::thread::sleep(Duration::from_nanos(wake - now));
        }
    }
}

impl Drop for SocketLoop<'_> {
    fn drop(&mut self) {
        self.tasks.forget_suspended();
    }
}
