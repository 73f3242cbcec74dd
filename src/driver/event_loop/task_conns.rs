//! The io_uring loop's tasks (a script's states, see `driver::tasks::fiber_task`):
//! the shared [`TaskQueue`] resumes them; what they ask of their
//! connections is done here. A task's connections are the loop's, like a built-in test's:
//! the same ring, receive buffers, timeouts and redial; only what fills
//! them differs (a [`CallExchange`](crate::driver::CallExchange): one call
//! at a time, its answer kept for the task).

use std::sync::Arc;

use super::conn::{Conn, ConnState};
use super::loop_io::LoopIo;
use super::EventLoop;
use crate::driver::connections::call_exchange::{CallAnswer, CallError, CallExchange, Expect};
use crate::driver::connections::conn_io::{ConnIo, OpenedCalls};
use crate::driver::connections::redial::Reopened;
use crate::driver::tasks::fiber_task::{ConnId, OpenCalls, OpenedConn, Reply};
use crate::driver::tasks::task_calls::TaskLink;
use crate::driver::tasks::task_queue::{ConnRequest, TaskQueue, TaskStep, TaskTurn};
use crate::driver::{DriverError, Lost, Redial, TaskError};
use wirebench_protocol::constants::client_error::is_lost_connection;

impl<B: LoopIo> EventLoop<'_, B> {
    /// The task queue, and what of the loop it uses as it resumes tasks.
    fn task_turn(&mut self) -> (&mut TaskQueue, TaskTurn<'_>) {
        let turn = TaskTurn {
            index: self.index,
            context: self.context,
            clock: &mut self.clock,
            deadline_ns: &mut self.deadline_ns,
            budget: &mut self.budget,
            stats: &mut self.stats,
            arrival: &mut self.arrival,
        };
        (&mut self.tasks, turn)
    }

    /// Resumes the tasks that are ready, each until it waits for something.
    pub(super) fn run_tasks(&mut self) -> Result<(), DriverError> {
        loop {
            loop {
                let (queue, mut turn) = self.task_turn();
                let Some((t, resumed)) = queue.resume_next(&mut turn) else { break };
                match resumed {
                    TaskStep::Asks(request) => self.on_request(t, request)?,
                    TaskStep::Ended(result) => self.task_ended(t, result)?,
                }
            }
            let (queue, mut turn) = self.task_turn();
            queue.start_when_set_up(&mut turn);
            if self.tasks.ready.is_empty() {
                return Ok(());
            }
            self.now_ns = self.clock.now_ns();
        }
    }

    /// Readies the tasks whose pause is over, those that gave way, and
    /// under `--rate` those whose arrival came.
    pub(super) fn wake_tasks(&mut self) {
        let (queue, mut turn) = self.task_turn();
        queue.wake(&mut turn);
    }

    fn on_request(&mut self, t: usize, request: ConnRequest) -> Result<(), DriverError> {
        match request {
            ConnRequest::Open(open) => {
                let reply = self.open_for(t, *open);
                self.tasks.ready.push_back((t, Reply::Opened(reply)));
            }
            ConnRequest::Call { conn, expect } => self.start_call(t, conn, expect)?,
            ConnRequest::Close(conn) => {
                self.close_task_conn(t, conn)?;
                self.tasks.ready.push_back((t, Reply::Done));
            }
            ConnRequest::Reopen(conn) => {
                let open = self
                    .conns
                    .get(conn)
                    .filter(|c| c.task.owner == Some(t))
                    .map(|c| OpenCalls { options: c.io.redial().options.clone(), result_limit: c.task.result_limit });
                self.close_task_conn(t, conn)?;
                let reply = match open {
                    Some(open) => self.open_for(t, open),
                    None => Err("reconnect() on a connection this thread does not hold".to_owned()),
                };
                self.tasks.ready.push_back((t, Reply::Opened(reply)));
            }
        }
        Ok(())
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
        let calls = CallExchange::new(capabilities, max_packet, result_limit);
        let opened = OpenedCalls { socket, leftover, calls, transport };
        let (io, socket, leftover) = ConnIo::for_calls(opened, redial);
        let id = self.free_conn_slot().ok_or_else(|| {
            format!(
                "this event loop holds {} connections already (every thread's open ones): close some \
                 (disconnect()) before opening more",
                self.max_conns
            )
        })?;
        let conn = Conn::with_io(io, socket, leftover, TaskLink::for_task(t, result_limit));
        self.io.adopt(&conn, id).map_err(|e| format!("cannot take the new connection into the event loop: {e}"))?;
        match self.conns.get_mut(id) {
            Some(slot) => *slot = conn,
            None => self.conns.push(conn),
        }
        self.live += 1;
        Ok(OpenedConn { id, capabilities, max_packet })
    }

    /// A slot for a new connection: a retired one's, or the next.
    fn free_conn_slot(&self) -> Option<ConnId> {
        let retired = self.conns.iter().position(|c| c.state == ConnState::Retired && c.task.owner.is_some());
        retired.or((self.conns.len() < self.max_conns).then_some(self.conns.len()))
    }

    /// Task `t` calls on `conn`: its command goes out, its answer comes
    /// back through [`answer_call`](Self::answer_call).
    fn start_call(&mut self, t: usize, id: ConnId, expect: Expect) -> Result<(), DriverError> {
        let conn = self.conns.get_mut(id).map(|c| {
            let running = c.state == ConnState::Running;
            (&mut c.task, &mut c.io, running)
        });
        if self.tasks.start_call(t, conn, expect) {
            return self.advance(id);
        }
        Ok(())
    }

    /// Hands a task its call's answer, if it is in.
    pub(super) fn answer_call(&mut self, i: usize) {
        if let Some(conn) = self.conns.get_mut(i) {
            self.tasks.answer_call(&mut conn.task, &mut conn.io);
        }
    }

    /// Ends the call under way on connection `i`, if there is one, with `done`.
    pub(super) fn end_call(&mut self, i: usize, done: Result<CallAnswer, CallError>) {
        if let Some(conn) = self.conns.get_mut(i) {
            self.tasks.end_call(&mut conn.task, &mut conn.io, done);
        }
    }

    /// A task's connection received what it cannot take: the task's call
    /// fails with it and the connection closes; the run goes on (the
    /// script decides).
    pub(super) fn fail_call(&mut self, i: usize, error: DriverError) -> Result<(), DriverError> {
        let error = match error {
            DriverError::Call { source, .. } => source,
            other => CallError::Loop(other.to_string()),
        };
        self.finish(i)?;
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
        conn.task.lost = Some(lost);
        conn.state = if reopen { ConnState::Reconnecting } else { ConnState::Finishing };
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
        if let Some(conn) = self.conns.get_mut(i) {
            self.tasks.tell_lost(&mut conn.task, &mut conn.io, reopened);
        }
    }

    /// The run ended before connection `i` could be opened again: its
    /// task's call ends as the run's cut ends calls.
    pub(super) fn cut_call(&mut self, i: usize) {
        if let Some(conn) = self.conns.get_mut(i) {
            self.tasks.cut_call(&mut conn.task, &mut conn.io);
        }
    }

    /// Task `t` is done with `conn`: COM_QUIT, then it closes.
    fn close_task_conn(&mut self, t: usize, id: ConnId) -> Result<(), DriverError> {
        let Some(conn) = self.conns.get_mut(id).filter(|c| c.task.owner == Some(t)) else { return Ok(()) };
        match conn.state {
            ConnState::Running if !conn.io.awaits_answers() => self.start_quit(id),
            ConnState::Running | ConnState::Reconnecting => self.finish(id),
            _ => Ok(()),
        }
    }

    /// Task `t` returned: its connections close; a failure (unless the
    /// run's time cut it short) ends the run.
    fn task_ended(&mut self, t: usize, result: Result<(), TaskError>) -> Result<(), DriverError> {
        self.tasks.ended(t, result, self.context);
        let owned: Vec<ConnId> = (0..self.conns.len()).filter(|&i| self.conns[i].task.owner == Some(t)).collect();
        for id in owned {
            self.close_task_conn(t, id)?;
        }
        Ok(())
    }
}
