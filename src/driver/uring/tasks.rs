//! The io_uring loop's tasks (a script's states, see `driver::fiber_task`): the
//! loop resumes a task with what it waited for and does what it asks
//! next. A task's connections are the loop's, like a built-in test's:
//! the same ring, receive buffers, timeouts and redial; only what fills
//! them differs (a [`CallSession`](crate::driver::CallSession): one call
//! at a time, its answer kept for the task).

use std::sync::Arc;

use super::{Conn, RingConnState, Tasks, UringLoop};
use crate::driver::call_session::{CallAnswer, CallError, CallSession, Expect};
use crate::driver::conn_io::{ConnIo, OpenedCalls};
use crate::driver::fiber_task::{ConnId, OpenCalls, OpenedConn, Reply, Request, Resumed, Task, TaskBody};
use crate::driver::redial::Reopened;
use crate::driver::{DriverError, Lost, Redial};
use wirebench_protocol::constants::client_error::is_lost_connection;

/// Registered-file slots a loop keeps per task, for the connections its
/// tasks open (a script usually opens one per state).
const SLOTS_PER_TASK: usize = 16;

/// Registers the loop's sockets with its ring: the built-in test's
/// connections as they are, or for tasks a table with room for the
/// connections they will open. How many slots the table has.
pub(super) fn register_sockets(ring: &io_uring::IoUring, conns: &[Conn], tasks: usize) -> std::io::Result<usize> {
    let fds: Vec<_> = conns.iter().map(Conn::raw_fd).collect();
    if tasks == 0 {
        if !fds.is_empty() {
            ring.submitter().register_files(&fds)?;
        }
        return Ok(fds.len());
    }
    let slots = (fds.len() + tasks * SLOTS_PER_TASK).clamp(64, 32 * 1024);
    ring.submitter().register_files_sparse(slots as u32)?;
    if !fds.is_empty() {
        ring.submitter().register_files_update(0, &fds)?;
    }
    Ok(slots)
}

impl Tasks {
    /// Whether some task waits for a time: a pause or a `--rate` arrival.
    pub(super) fn have_timers(&self) -> bool {
        !self.sleeping.is_empty() || !self.admitting.is_empty()
    }

    /// The earliest pause's end.
    pub(super) fn next_wake(&self) -> Option<u64> {
        self.sleeping.iter().map(|&(at, _)| at).min()
    }

    fn task_mut(&mut self, t: usize) -> Option<&mut Task> {
        self.list.get_mut(t).and_then(Option::as_mut)
    }
}

impl UringLoop<'_> {
    /// Makes the tasks' fibers; they start at the loop's first turn.
    pub(super) fn add_tasks(&mut self, bodies: Vec<TaskBody>) -> std::io::Result<()> {
        for body in bodies {
            let index = self.tasks.list.len();
            self.tasks.list.push(Some(Task::new(body, self.clock)?));
            self.tasks.ready.push_back((index, Reply::Start));
            self.tasks.live += 1;
        }
        Ok(())
    }

    /// Resumes the tasks that are ready, each until it waits for something.
    pub(super) fn run_tasks(&mut self) -> Result<(), DriverError> {
        loop {
            while let Some((t, reply)) = self.tasks.ready.pop_front() {
                let Some(task) = self.tasks.task_mut(t) else { continue };
                let resumed = task.resume(reply);
                self.fold_task(t);
                match resumed {
                    Resumed::Asks(request) => self.on_request(t, request)?,
                    Resumed::Ended(result) => self.task_ended(t, result)?,
                }
            }
            self.start_when_set_up();
            if self.tasks.ready.is_empty() {
                return Ok(());
            }
        }
    }

    /// Records what task `t` did since it last suspended.
    fn fold_task(&mut self, t: usize) {
        if let Some(task) = self.tasks.list.get(t).and_then(Option::as_ref) {
            task.fold_into(t, &mut self.stats, &mut self.budget);
        }
    }

    fn on_request(&mut self, t: usize, request: Request) -> Result<(), DriverError> {
        match request {
            Request::Open(open) => {
                let reply = self.open_for(t, *open);
                self.tasks.ready.push_back((t, Reply::Opened(reply)));
            }
            Request::Call { conn, expect } => self.start_call(t, conn, expect)?,
            Request::Close(conn) => {
                self.close_task_conn(t, conn)?;
                self.tasks.ready.push_back((t, Reply::Done));
            }
            Request::Reopen(conn) => {
                let open = self
                    .conns
                    .get(conn)
                    .filter(|c| c.owner == Some(t))
                    .map(|c| OpenCalls { options: c.io.redial().options.clone(), result_limit: c.result_limit });
                self.close_task_conn(t, conn)?;
                let reply = match open {
                    Some(open) => self.open_for(t, open),
                    None => Err("reconnect() on a connection this thread does not hold".to_owned()),
                };
                self.tasks.ready.push_back((t, Reply::Opened(reply)));
            }
            Request::Admit => self.admit_task(t),
            Request::Yield => self.tasks.yielded.push(t),
            Request::Sleep(pause) => {
                let until = self.clock.now_ns().saturating_add(pause.as_nanos() as u64);
                self.tasks.sleeping.push((until, t));
            }
            Request::AwaitStart if self.arrival.is_some() => self.tasks.at_start.push(t),
            Request::AwaitStart => self.tasks.ready.push_back((t, Reply::Started(self.clock))),
        }
        Ok(())
    }

    /// Once every task of a script's run is set up (or has ended), the
    /// loop arrives at the start gate and waits there for the run to
    /// start; then its tasks go on, on the run's clock and budget.
    pub(super) fn start_when_set_up(&mut self) {
        let Some(arrival) = self.arrival.as_mut() else { return };
        if arrival.has_arrived() || self.tasks.at_start.len() < self.tasks.live {
            return;
        }
        let started = arrival.arrive();
        (self.clock, self.deadline_ns) = (started.clock, started.deadline_ns);
        self.now_ns = self.clock.now_ns();
        self.budget = crate::driver::Budget::for_loop(self.context.control.clone(), started.deadline_ns, self.index);
        for t in self.tasks.at_start.drain(..) {
            self.tasks.ready.push_back((t, Reply::Started(started.clock)));
        }
    }

    /// Logs in for task `t` (the loop waits meanwhile, as for a redial:
    /// usually in `thread_init`, before any event) and takes the
    /// connection into the ring.
    fn open_for(&mut self, t: usize, open: OpenCalls) -> Result<OpenedConn, String> {
        let OpenCalls { options, result_limit } = open;
        let max_packet = options.max_packet_size as usize;
        let redial = Redial { options, statements: Arc::new(Vec::new()), prepare: false, init: &[] };
        let context = self.context;
        let opened = redial.open_once_blocking(|| context.control.is_stopped()).map_err(|e| e.to_string())?;
        let Reopened { socket, leftover, capabilities, transport, .. } = opened;
        let calls = CallSession::new(capabilities, max_packet, result_limit);
        let endpoint = redial.options.endpoint.clone();
        let opened = OpenedCalls { endpoint, socket, leftover, calls, transport };
        let (io, socket, leftover) = ConnIo::for_calls(opened, redial);
        let id = self.free_conn_slot().ok_or_else(|| {
            format!(
                "this event loop holds {} connections already (every thread's open ones): close some \
                 (disconnect()) before opening more",
                self.tasks.slots
            )
        })?;
        let mut conn = Conn::with_io(io, socket, leftover, id as u32, Some(t)).map_err(|e| e.to_string())?;
        conn.result_limit = result_limit;
        self.ring
            .submitter()
            .register_files_update(id as u32, &[conn.raw_fd()])
            .map_err(|e| format!("cannot register the new connection with the loop's io_uring: {e}"))?;
        match self.conns.get_mut(id) {
            Some(slot) => *slot = conn,
            None => self.conns.push(conn),
        }
        self.live += 1;
        Ok(OpenedConn { id, capabilities, max_packet })
    }

    /// A slot for a new connection: a retired one's, or the next.
    fn free_conn_slot(&self) -> Option<ConnId> {
        let retired = self.conns.iter().position(|c| c.state == RingConnState::Retired && c.owner.is_some());
        retired.or((self.conns.len() < self.tasks.slots).then_some(self.conns.len()))
    }

    /// Task `t` calls on `conn`: its command goes out, its answer comes
    /// back through [`answer_call`](Self::answer_call).
    fn start_call(&mut self, t: usize, id: ConnId, expect: Expect) -> Result<(), DriverError> {
        let Some(task) = self.tasks.task_mut(t) else { return Ok(()) };
        let shared = task.shared.clone();
        let Some(conn) = self.conns.get_mut(id).filter(|c| c.owner == Some(t)) else {
            self.tasks.ready.push_back((t, Reply::Answered(Err(CallError::Closed))));
            return Ok(());
        };
        if conn.state != RingConnState::Running {
            let error = match conn.lost.take() {
                Some(lost) => CallError::Lost { lost, reopened: false },
                None => CallError::Closed,
            };
            self.tasks.ready.push_back((t, Reply::Answered(Err(error))));
            return Ok(());
        }
        let started = match conn.io.calls() {
            Some(calls) => calls.start(&shared.borrow().command, expect),
            None => Err(CallError::Closed),
        };
        if let Err(error) = started {
            self.tasks.ready.push_back((t, Reply::Answered(Err(error))));
            return Ok(());
        }
        conn.task_waits = true;
        self.advance(id)
    }

    /// Hands a task its call's answer, if it is in.
    pub(super) fn answer_call(&mut self, i: usize) {
        let Some(conn) = self.conns.get_mut(i) else { return };
        let Some(done) = conn.io.take_call_answer() else { return };
        self.reply_call(i, done);
    }

    /// Ends the call under way on connection `i`, if there is one, with `done`.
    pub(super) fn end_call(&mut self, i: usize, done: Result<CallAnswer, CallError>) {
        let Some(conn) = self.conns.get_mut(i) else { return };
        if let Some(calls) = conn.io.calls() {
            calls.abandon();
        }
        if conn.task_waits {
            self.reply_call(i, done);
        }
    }

    /// Resumes connection `i`'s task with its call's answer (an
    /// execution's kept packets handed over with it).
    fn reply_call(&mut self, i: usize, done: Result<CallAnswer, CallError>) {
        let Some(conn) = self.conns.get_mut(i) else { return };
        let Some(t) = conn.owner else { return };
        conn.task_waits = false;
        let Some(task) = self.tasks.list.get(t).and_then(Option::as_ref) else { return };
        if let (Ok(CallAnswer::Walked(_)), Some(calls)) = (&done, conn.io.calls()) {
            calls.swap_kept(&mut task.shared.borrow_mut().kept);
        }
        self.tasks.ready.push_back((t, Reply::Answered(done)));
    }

    /// A task's connection received what it cannot take: the task's call
    /// fails with it and the connection closes; the run goes on (the
    /// script decides).
    pub(super) fn fail_call(&mut self, i: usize, error: DriverError) -> Result<(), DriverError> {
        let error = match error {
            DriverError::Call { source, .. } => source,
            other => CallError::Loop(other.to_string()),
        };
        let Some(conn) = self.conns.get_mut(i) else { return Ok(()) };
        conn.state = RingConnState::Finishing;
        self.cancel_ops(i)?;
        self.retire_if_idle(i);
        self.end_call(i, Err(error));
        Ok(())
    }

    /// A task's connection was lost: opened again if `--mysql-ignore-errors`
    /// lists the error (sysbench reconnects then), closed otherwise; its
    /// task hears of it once that is done ([`tell_lost`](Self::tell_lost)).
    pub(super) fn lose_call(&mut self, i: usize, lost: Lost) -> Result<(), DriverError> {
        let code = lost.code();
        let reopen = self.context.ignore.ignores(code) && is_lost_connection(code);
        let Some(conn) = self.conns.get_mut(i) else { return Ok(()) };
        conn.lost = Some(lost);
        conn.state = if reopen { RingConnState::Reconnecting } else { RingConnState::Finishing };
        self.cancel_ops(i)?;
        if !reopen {
            self.retire_if_idle(i);
            self.tell_lost(i, false);
            return Ok(());
        }
        self.settle(i)
    }

    /// Tells the task of connection `i` that it was lost, and whether it
    /// is open again: its call in flight fails with that.
    pub(super) fn tell_lost(&mut self, i: usize, reopened: bool) {
        let Some(conn) = self.conns.get_mut(i) else { return };
        if conn.owner.is_none() {
            return;
        }
        if !conn.task_waits && !reopened {
            // Kept for the next call, which fails with it.
            return;
        }
        if !conn.task_waits {
            // Opened again between calls: the next call goes on as usual.
            conn.lost = None;
            return;
        }
        let Some(lost) = conn.lost.take() else { return };
        self.end_call(i, Err(CallError::Lost { lost, reopened }));
    }

    /// The run ended before connection `i` could be opened again: its
    /// task's call ends as the run's cut ends calls.
    pub(super) fn cut_call(&mut self, i: usize) {
        let Some(t) = self.conns.get(i).and_then(|c| c.owner) else { return };
        if let Some(task) = self.tasks.list.get(t).and_then(Option::as_ref) {
            task.shared.borrow_mut().cut = true;
        }
        self.end_call(i, Err(CallError::Cut));
    }

    /// Task `t` is done with `conn`: COM_QUIT, then it closes.
    fn close_task_conn(&mut self, t: usize, id: ConnId) -> Result<(), DriverError> {
        let Some(conn) = self.conns.get_mut(id).filter(|c| c.owner == Some(t)) else { return Ok(()) };
        match conn.state {
            RingConnState::Running if !conn.io.awaits_answers() => self.start_quit(id),
            RingConnState::Running | RingConnState::Reconnecting => {
                conn.state = RingConnState::Finishing;
                self.cancel_ops(id)?;
                self.retire_if_idle(id);
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// sysbench's `sb_more_events` for task `t`, as a built-in connection
    /// takes its events: now, when its `--rate` arrival comes, or never.
    fn admit_task(&mut self, t: usize) {
        // A task whose events never wait keeps the loop from its own
        // rounds: the collector hears from it here too.
        self.context.board.publish_if_requested(self.index, &mut self.stats);
        let now = self.clock.now_ns();
        match self.budget.admit(now) {
            crate::driver::Admission::Start(at) => self.tasks.ready.push_back((t, Reply::Admitted(Some(at)))),
            crate::driver::Admission::Over => self.tasks.ready.push_back((t, Reply::Admitted(None))),
            crate::driver::Admission::Wait => match self.budget.wake_at(now) {
                Some(_) => self.tasks.admitting.push(t),
                None => self.tasks.ready.push_back((t, Reply::Admitted(None))),
            },
        }
    }

    /// Readies the tasks whose pause is over, those that gave way, and
    /// under `--rate` those whose arrival came.
    pub(super) fn wake_tasks(&mut self) {
        let now = self.clock.now_ns();
        let tasks = &mut self.tasks;
        for t in tasks.yielded.drain(..) {
            tasks.ready.push_back((t, Reply::Done));
        }
        let mut i = 0;
        while let Some(&(at, t)) = tasks.sleeping.get(i) {
            if at <= now || self.context.control.is_stopped() {
                tasks.sleeping.swap_remove(i);
                tasks.ready.push_back((t, Reply::Done));
            } else {
                i += 1;
            }
        }
        if !self.tasks.admitting.is_empty() && self.budget.wake_at(now).map_or(true, |at| at <= now) {
            let admitting = std::mem::take(&mut self.tasks.admitting);
            for t in admitting {
                self.admit_task(t);
            }
        }
    }

    /// The run's time is up: tasks hear it at their next call, and a
    /// pause or an arrival they wait for ends now.
    pub(super) fn cut_tasks(&mut self) {
        for task in self.tasks.list.iter().flatten() {
            task.shared.borrow_mut().cut = true;
        }
        for (_, t) in self.tasks.sleeping.drain(..) {
            self.tasks.ready.push_back((t, Reply::Done));
        }
        for t in self.tasks.admitting.drain(..) {
            self.tasks.ready.push_back((t, Reply::Admitted(None)));
        }
    }

    /// Task `t` returned: its connections close; a failure (unless the
    /// run's time cut it short) ends the run.
    fn task_ended(&mut self, t: usize, result: Result<(), crate::driver::TaskError>) -> Result<(), DriverError> {
        let cut = self.tasks.list.get(t).and_then(Option::as_ref).is_some_and(Task::was_cut);
        if let Some(slot) = self.tasks.list.get_mut(t) {
            *slot = None;
        }
        self.tasks.live -= 1;
        if let Err(error) = result {
            if !cut {
                self.context.control.stop();
                self.tasks.failure.get_or_insert(error);
            }
        }
        let owned: Vec<ConnId> = (0..self.conns.len()).filter(|&i| self.conns[i].owner == Some(t)).collect();
        for id in owned {
            self.close_task_conn(t, id)?;
        }
        Ok(())
    }
}
