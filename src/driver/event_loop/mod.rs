//! The engine's loop: one model of connections and tasks for every backend
//! that runs a loop on its own thread without a runtime (io_uring, and
//! each connection's own socket). A backend only submits and waits
//! ([`LoopIo`]); what a completion leads to, the per-turn chores, how a
//! connection's life ends or starts again, what a task asks of its
//! connections and the idle connections' logins and pings are written
//! here, once.
//!
//! A loop's turn: it waits (its backend hands the kernel what is queued
//! and sleeps, spins or polls as the loop's wait plan says), handles what
//! finished (each connection's answers go to its work, which fills its
//! next commands), then does its chores: reads the clock, hands the
//! collector its statistics, publishes the events in progress, looks at
//! the timeouts and the run's cut, lets `--rate` arrivals in, wakes and
//! resumes its tasks, and serves its idle connections. A lost connection
//! is opened again from within the turn (`lifecycle.rs`).
//!
//! It may import the driver's connections, tasks and pacing; a backend
//! imports it, never the other way round.
//!
//! Files:
//! - `loop_io.rs`: what a backend does for the loop ([`LoopIo`]).
//! - `conn.rs`: a connection, whatever its work.
//! - `chores.rs`: the per-turn chores, which the tokio backend's ticker
//!   does too.
//! - `lifecycle.rs`: how a connection's life ends (COM_QUIT, failure,
//!   loss, timeout, the run's cut) or starts again.
//! - `task_conns.rs`: what the loop's tasks (a script's states) ask of
//!   their connections.
//! - `idle_conns.rs`: `--idle-connections`: their logins, pings and
//!   losses, on the loop's own readiness.
//! - `replay_conns.rs`: `wirebench replay`: the loop's feed, its replayed
//!   connections' timers, opens and ends.

mod chores;
pub(crate) mod conn;
mod idle_conns;
mod lifecycle;
pub(crate) mod loop_io;
pub(crate) mod replay_conns;
mod task_conns;

use std::io;

pub(crate) use chores::{Chores, WaitsDue};
use conn::{Conn, ConnState};
use loop_io::{Completion, LoopIo, Op, Submitted, WaitFor};
use replay_conns::ReplayConns;

use crate::driver::connections::conn_io::{AfterSend, ConnIo};
use crate::driver::connections::idle::{IdleDue, IdleSchedule};
use crate::driver::tasks::start_gate::ArrivalGuard;
use crate::driver::tasks::task_queue::TaskQueue;
use crate::driver::{Budget, Clock, ConnPlan, DriverError, LoopContext, LoopOp, Lost, TaskBody};
use crate::stats::LoopStats;

/// One loop's connections, tasks, budget and statistics, driven through
/// its backend `B`.
pub(crate) struct EventLoop<'c, B: LoopIo> {
    pub(crate) io: B,
    index: usize,
    context: &'c LoopContext,
    /// A built-in test's connections, then the loop's idle ones, then
    /// those its tasks open (a retired one's place is taken by the next a
    /// task opens).
    pub(crate) conns: Vec<Conn>,
    /// Connections not yet retired, idle ones aside: the loop ends when
    /// none is left and its tasks have ended.
    live: usize,
    /// The most connections the loop holds (its backend's table).
    max_conns: usize,
    budget: Budget,
    pub(crate) stats: LoopStats,
    /// What finished, reused on every turn.
    completions: Vec<Completion>,
    /// `--rate`: connections with nothing in flight, waiting for an
    /// arrival; `spare` is the list being served, swapped with it.
    waiting: Vec<usize>,
    spare: Vec<usize>,
    first_error: Option<DriverError>,
    /// The latest time the loop read (ns since the run's start): what
    /// waits are stamped with, so that stamping reads no clock.
    now_ns: u64,
    chores: Chores,
    /// The tasks this loop runs (a script's states).
    tasks: TaskQueue,
    /// The run's clock and deadline (the loop's set-up ones until a start
    /// gate opens).
    clock: Clock,
    deadline_ns: Option<u64>,
    /// Where a script run's tasks wait for its start, until they have.
    arrival: Option<ArrivalGuard>,
    /// `--idle-connections`: this loop's share, and where its slots start.
    idle: Option<IdleConns>,
    /// `wirebench replay`: the loop's feed and its replayed connections'
    /// timers (`replay_conns.rs`).
    replay: Option<ReplayConns>,
}

/// A loop's idle connections: their schedule, and their places in the
/// loop's connections.
struct IdleConns {
    schedule: IdleSchedule,
    first: usize,
    /// What the last look found due, reused.
    due: IdleDue,
}

/// A loop's connections before its backend takes them: a built-in test's,
/// then its share of the idle ones; and how many of those.
pub(crate) fn loop_conns(index: usize, plans: Vec<ConnPlan>, context: &LoopContext) -> (Vec<Conn>, usize) {
    let mut conns: Vec<Conn> = plans.into_iter().map(Conn::new).collect();
    let Some(plan) = &context.idle else { return (conns, 0) };
    let idle = plan.count_for(index);
    conns.extend(
        (0..idle).filter_map(|n| plan.target_for(index, n)).map(|t| Conn::idle(ConnIo::for_idle(t.redial.clone()))),
    );
    (conns, idle)
}

impl<'c, B: LoopIo> EventLoop<'c, B> {
    /// A loop over `conns` ([`loop_conns`]: `idle` of them idle) through
    /// backend `io`, which holds at most `max_conns`.
    pub(crate) fn new(
        io: B,
        index: usize,
        conns: Vec<Conn>,
        idle: usize,
        max_conns: usize,
        context: &'c LoopContext,
    ) -> Self {
        let now_ns = context.clock.now_ns();
        let first = conns.len() - idle;
        let idle = context.idle.as_ref().and_then(|plan| IdleSchedule::for_loop(plan, index, now_ns));
        let idle = idle.map(|schedule| IdleConns { schedule, first, due: IdleDue::default() });
        EventLoop {
            io,
            index,
            context,
            live: first,
            max_conns,
            budget: Budget::for_loop(context.control.clone(), context.deadline_ns, index),
            stats: context.board.loop_stats(index),
            completions: Vec::with_capacity(first.max(64)),
            waiting: Vec::with_capacity(first),
            spare: Vec::with_capacity(first),
            conns,
            first_error: None,
            now_ns,
            chores: Chores::default(),
            tasks: TaskQueue::default(),
            clock: context.clock,
            deadline_ns: context.deadline_ns,
            arrival: None,
            idle,
            replay: None,
        }
    }

    /// Runs the loop's connections and `tasks` until every one is done;
    /// its statistics go to the collector.
    pub(crate) fn run(&mut self, tasks: Vec<TaskBody>, arrival: Option<ArrivalGuard>) -> Result<(), DriverError> {
        self.arrival = arrival;
        if let Err(source) = self.tasks.add(tasks, self.clock) {
            return Err(DriverError::Loop { index: self.index, op: LoopOp::StartTask, source });
        }
        let result = self.turns();
        self.context.board.publish(self.index, &mut self.stats);
        result
    }

    fn turns(&mut self) -> Result<(), DriverError> {
        for i in 0..self.conns.len() {
            self.advance(i)?;
        }
        self.run_tasks()?;
        while self.live > 0 || self.tasks.live() > 0 || self.replay.as_ref().is_some_and(ReplayConns::going) {
            self.wait()?;
            self.handle_completions()?;
            self.chores()?;
        }
        if let Some(failure) = self.tasks.take_failure() {
            return Err(DriverError::Script(failure));
        }
        self.first_error.take().map_or(Ok(()), Err)
    }

    /// Waits as the backend does, for as long as the loop's timers allow;
    /// what was written this turn goes to the kernel now, which is where
    /// the events admitted since count their client's delay.
    fn wait(&mut self) -> Result<(), DriverError> {
        let now = self.clock.now_ns();
        if self.budget.has_unsent() {
            self.budget.sent(now, &mut self.stats);
        }
        let replay_at = self.replay.as_ref().and_then(ReplayConns::wake_at);
        let timers = !self.waiting.is_empty() || self.tasks.have_timers() || replay_at.is_some();
        let arrival =
            if self.waiting.is_empty() && !self.tasks.have_admitting() { None } else { self.budget.wake_at(now) };
        let wake_at =
            if timers { arrival.into_iter().chain(self.tasks.next_wake()).chain(replay_at).min() } else { None };
        let wait = WaitFor {
            look_only: self.tasks.have_yielded() || (timers && wake_at.map_or(true, |at| at <= now)),
            arrivals_waiting: !self.waiting.is_empty(),
            wake_at,
            now_ns: now,
        };
        self.io.wait(&mut self.conns, &wait, &mut self.completions)
    }

    fn handle_completions(&mut self) -> Result<(), DriverError> {
        let mut completions = std::mem::take(&mut self.completions);
        let mut handled = Ok(());
        for &Completion { conn, op, result, more } in &completions {
            handled = match op {
                Op::Recv => self.on_recv(conn, result, more),
                Op::Send => self.on_send(conn, result),
                Op::Cancel => Ok(()),
            };
            if handled.is_err() {
                break;
            }
        }
        completions.clear();
        self.completions = completions;
        handled
    }

    /// What every loop does at its turn, whatever it then runs: the
    /// [`Chores`], then the `--rate` arrivals, the tasks, and the idle
    /// connections.
    fn chores(&mut self) -> Result<(), DriverError> {
        self.now_ns = self.clock.now_ns();
        match self.chores.turn(self.now_ns, self.context, &mut self.budget, &mut self.stats) {
            WaitsDue::Nothing => {}
            WaitsDue::Timeouts => self.check_timeouts(self.now_ns)?,
            WaitsDue::Cut => self.cut_stalled(self.now_ns)?,
        }
        self.serve_arrivals()?;
        if self.tasks.live() > 0 {
            self.wake_tasks();
            self.run_tasks()?;
        }
        self.serve_idle()?;
        self.serve_replay()
    }

    /// Hands the connection's work what it can send and keeps a receive
    /// armed while it waits for answers.
    pub(crate) fn advance(&mut self, i: usize) -> Result<(), DriverError> {
        let Some(conn) = self.conns.get_mut(i) else { return Ok(()) };
        if conn.state != ConnState::Running {
            return Ok(());
        }
        let now = self.clock.now_ns();
        self.now_ns = now;
        if let Err(error) = conn.fill(now, &mut self.budget, &mut self.stats) {
            return self.fail(i, error);
        }
        if !conn.send_pending && !conn.filling.is_empty() {
            std::mem::swap(&mut conn.filling, &mut conn.sending);
            conn.sent = 0;
            self.push_send(i)?;
        }
        // A send done at once may have lost the connection.
        let Some(conn) = self.conns.get_mut(i).filter(|c| c.state == ConnState::Running) else { return Ok(()) };
        match conn.io.after_send() {
            AfterSend::Quit => return self.start_quit(i),
            AfterSend::Arrival => self.waiting.push(i),
            AfterSend::CallAnswered => self.answer_call(i),
            AfterSend::Answers if !conn.recv_pending => self.push_recv(i, true)?,
            // A receive that stays armed: answers are awaited from now.
            AfterSend::Answers => conn.waits.start_read_unless_reading(self.now_ns),
            AfterSend::Idle if !conn.recv_pending => self.push_recv(i, false)?,
            AfterSend::Idle => {}
            AfterSend::Later => self.replay_later(i),
        }
        Ok(())
    }

    /// Sends `sending[sent..]`; when the backend sends at once, the events
    /// admitted since count their client's delay now, and the send's
    /// completion is taken at once.
    pub(crate) fn push_send(&mut self, i: usize) -> Result<(), DriverError> {
        let Some(conn) = self.conns.get_mut(i) else { return Ok(()) };
        conn.send_pending = true;
        conn.waits.start_write(self.now_ns);
        let Submitted::Done(result) = self.io.push_send(conn, i)? else { return Ok(()) };
        if result > 0 && self.budget.has_unsent() {
            self.budget.sent(self.clock.now_ns(), &mut self.stats);
        }
        self.on_send(i, result)
    }

    /// Arms a receive; `awaited` when an answer is due (a wait the read
    /// timeout concerns), not for an idle connection's.
    fn push_recv(&mut self, i: usize, awaited: bool) -> Result<(), DriverError> {
        let Some(conn) = self.conns.get_mut(i) else { return Ok(()) };
        conn.recv_pending = true;
        if awaited {
            conn.waits.start_read(self.now_ns);
        }
        self.io.push_recv(conn, i)
    }

    pub(crate) fn push_cancel(&mut self, i: usize, op: Op) -> Result<(), DriverError> {
        self.io.push_cancel(i, op)
    }

    /// `--rate`: once the next arrival is due (or no event can start any
    /// more), lets the waiting connections look again. Busy connections
    /// take due arrivals themselves when they finish an event.
    fn serve_arrivals(&mut self) -> Result<(), DriverError> {
        if self.waiting.is_empty() {
            return Ok(());
        }
        let now = self.clock.now_ns();
        if self.budget.wake_at(now).is_some_and(|at| at > now) {
            return Ok(());
        }
        std::mem::swap(&mut self.waiting, &mut self.spare);
        let mut serving = std::mem::take(&mut self.spare);
        for &i in &serving {
            self.advance(i)?;
        }
        serving.clear();
        self.spare = serving;
        Ok(())
    }

    fn on_recv(&mut self, i: usize, result: i32, more: bool) -> Result<(), DriverError> {
        let Some(conn) = self.conns.get_mut(i) else { return Ok(()) };
        if !more {
            conn.recv_pending = false;
        }
        conn.waits.end_read();
        if conn.state != ConnState::Running {
            return self.settle(i);
        }
        if result < 0 {
            let error = io::Error::from_raw_os_error(-result);
            // ENOBUFS: a multishot receive's buffers ran dry and ended it;
            // they are back by the time it is armed again.
            if is_transient(&error) || error.raw_os_error() == Some(libc::ENOBUFS) {
                let awaited = conn.io.awaits_answers();
                return if conn.recv_pending { Ok(()) } else { self.push_recv(i, awaited) };
            }
            return self.lose(i, Lost::Read(error));
        }
        if result == 0 {
            return self.lose(i, Lost::Closed);
        }
        let now = self.clock.now_ns();
        self.now_ns = now;
        if let Err(error) = conn.on_input(now, &mut self.stats, &self.context.ignore) {
            return self.fail(i, error);
        }
        if conn.is_idle() {
            self.idle_input(i);
        }
        self.advance(i)
    }

    fn on_send(&mut self, i: usize, result: i32) -> Result<(), DriverError> {
        let Some(conn) = self.conns.get_mut(i) else { return Ok(()) };
        conn.send_pending = false;
        conn.waits.end_write();
        let quitting = conn.state == ConnState::Quitting;
        if conn.state != ConnState::Running && !quitting {
            return self.settle(i);
        }
        if result < 0 {
            let error = io::Error::from_raw_os_error(-result);
            if is_transient(&error) {
                return self.push_send(i);
            }
            return if quitting { self.end_after_quit(i) } else { self.lose(i, Lost::Write(error)) };
        }
        if result == 0 {
            return if quitting {
                self.end_after_quit(i)
            } else {
                self.lose(i, Lost::Write(io::ErrorKind::WriteZero.into()))
            };
        }
        conn.sent += result as usize;
        if conn.sent < conn.sending.len() {
            return self.push_send(i);
        }
        conn.sending.clear();
        conn.sent = 0;
        if !conn.filling.is_empty() {
            std::mem::swap(&mut conn.filling, &mut conn.sending);
            return self.push_send(i);
        }
        if quitting {
            return self.end_after_quit(i);
        }
        Ok(())
    }
}

impl<B: LoopIo> Drop for EventLoop<'_, B> {
    fn drop(&mut self) {
        self.tasks.forget_suspended();
        self.say_goodbye_to_idle();
        self.io.quiesce(&mut self.conns);
        if self.io.in_flight() {
            // The kernel still holds pointers into these buffers: leaking
            // them is the only safe thing left.
            std::mem::forget(std::mem::take(&mut self.conns));
        }
    }
}

/// An error that only means "try again".
pub(crate) fn is_transient(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EAGAIN | libc::EINTR | libc::EBUSY))
}
