//! The socket loop's tasks (a script's states, see `driver::tasks::fiber_task`):
//! the shared [`TaskQueue`](crate::driver::tasks::task_queue::TaskQueue) resumes
//! them; what they ask of their connections is done here. A task's
//! connections are the loop's, like a built-in test's: the same exchanges,
//! timeouts and redial; only what fills them differs (a
//! [`CallExchange`](crate::driver::connections::call_exchange::CallExchange): one call at
//! a time, its answer kept for the task).

use std::sync::Arc;

use super::conn::SocketConn;
use super::SocketLoop;
use crate::driver::connections::call_exchange::{CallAnswer, CallError, CallExchange, Expect};
use crate::driver::connections::conn_io::{ConnIo, OpenedCalls};
use crate::driver::connections::redial::Reopened;
use crate::driver::tasks::fiber_task::{ConnId, OpenCalls, OpenedConn, Reply};
use crate::driver::tasks::task_calls::TaskLink;
use crate::driver::tasks::task_queue::{ConnRequest, TaskQueue, TaskStep, TaskTurn};
use crate::driver::{DriverError, Lost, Redial, TaskError};
use wirebench_protocol::constants::client_error::is_lost_connection;

/// The most connections a socket loop's tasks hold at once.
const MAX_TASK_CONNS: usize = 32 * 1024;

impl SocketLoop<'_> {
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

    /// Resumes the tasks that are ready, each until it waits for something;
    /// a call's exchange is due at once.
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
            ConnRequest::Call { conn, expect } => self.start_call(t, conn, expect),
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
    /// usually in `thread_init`, before any event).
    fn open_for(&mut self, t: usize, open: OpenCalls) -> Result<OpenedConn, String> {
        let OpenCalls { options, result_limit } = open;
        let max_packet = options.max_packet_size as usize;
        let redial = Redial { options, statements: Arc::new(Vec::new()), prepare: false, init: &[] };
        let context = self.context;
        let opened = redial.open_once_blocking(|| context.control.is_stopped()).map_err(|e| e.to_string())?;
        let Reopened { socket, leftover, capabilities, transport, .. } = opened;
        let calls = CallExchange::new(capabilities, max_packet, result_limit);
        let endpoint = redial.options.endpoint.clone();
        let opened = OpenedCalls { endpoint, socket, leftover, calls, transport };
        let (io, socket, leftover) = ConnIo::for_calls(opened, redial);
        let retired = self.conns.iter().position(|c| !c.running && c.task.owner.is_some());
        let id = retired.or((self.conns.len() < MAX_TASK_CONNS).then_some(self.conns.len())).ok_or_else(|| {
            format!(
                "this event loop holds {MAX_TASK_CONNS} connections already (every thread's open ones): close \
                 some (disconnect()) before opening more"
            )
        })?;
        let conn = SocketConn::with_io(io, socket, leftover, TaskLink::for_task(t, result_limit));
        match self.conns.get_mut(id) {
            Some(slot) => *slot = conn,
            None => self.conns.push(conn),
        }
        self.live += 1;
        Ok(OpenedConn { id, capabilities, max_packet })
    }

    /// Task `t` calls on `conn`: its exchange is due, and its answer comes
    /// back through [`answer_call`](Self::answer_call).
    fn start_call(&mut self, t: usize, id: ConnId, expect: Expect) {
        let conn = self.conns.get_mut(id).map(|c| (&mut c.task, &mut c.io, c.running));
        if self.tasks.start_call(t, conn, expect) && !self.due.contains(&id) {
            self.due.push(id);
        }
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
    pub(super) fn fail_call(&mut self, i: usize, error: DriverError) {
        let error = match error {
            DriverError::Call { source, .. } => source,
            other => CallError::Loop(other.to_string()),
        };
        self.retire(i);
        self.end_call(i, Err(error));
    }

    /// A task's connection was lost: opened again if `--mysql-ignore-errors`
    /// lists the error (sysbench reconnects then), closed otherwise; its
    /// task hears of it once that is done ([`tell_lost`](Self::tell_lost)).
    pub(super) fn lose_call(&mut self, i: usize, lost: Lost) -> Result<(), DriverError> {
        let code = lost.code();
        let reopen = self.context.ignore.ignores(code) && is_lost_connection(code);
        let Some(conn) = self.conns.get_mut(i) else { return Ok(()) };
        conn.task.lost = Some(lost);
        if reopen {
            return self.reopen(i);
        }
        self.retire(i);
        self.tell_lost(i, false);
        Ok(())
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

    /// Task `t` is done with `conn`: COM_QUIT unless an answer is still
    /// due, then it closes.
    fn close_task_conn(&mut self, t: usize, id: ConnId) -> Result<(), DriverError> {
        let Some(conn) = self.conns.get(id).filter(|c| c.task.owner == Some(t) && c.running) else { return Ok(()) };
        if conn.io.awaits_answers() {
            self.retire(id);
            return Ok(());
        }
        self.quit(id)
    }

    /// Task `t` returned: its connections close; a failure (unless the
    /// run's time cut it short) ends the run.
    fn task_ended(&mut self, t: usize, result: Result<(), TaskError>) -> Result<(), DriverError> {
        self.tasks.ended(t, result, self.context);
        for id in 0..self.conns.len() {
            if self.conns.get(id).is_some_and(|c| c.task.owner == Some(t)) {
                self.close_task_conn(t, id)?;
            }
        }
        Ok(())
    }
}
