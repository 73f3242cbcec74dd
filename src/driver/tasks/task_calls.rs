//! A task's calls on its connections, in the engine's loop
//! (`driver::event_loop`): what a connection keeps of the task whose it is
//! ([`TaskLink`]), and how a call starts and ends (answered, failed,
//! lost, cut), resuming the task through its [`TaskQueue`].

use crate::driver::connections::call_exchange::{CallAnswer, CallError, Expect};
use crate::driver::connections::conn_io::ConnIo;
use crate::driver::tasks::fiber_task::Reply;
use crate::driver::tasks::task_queue::TaskQueue;
use crate::driver::Lost;

/// What a connection keeps of the task whose connection it is (a built-in
/// test's connection has none).
#[derive(Default)]
pub(crate) struct TaskLink {
    pub(crate) owner: Option<usize>,
    /// How it was lost, until the task hears of it.
    pub(crate) lost: Option<Lost>,
    /// The most bytes one answer may keep.
    pub(crate) result_limit: usize,
    /// Its task waits for a call's answer on it.
    pub(crate) call_waits: bool,
}

impl TaskLink {
    pub(crate) fn for_task(t: usize, result_limit: usize) -> TaskLink {
        TaskLink { owner: Some(t), result_limit, ..TaskLink::default() }
    }
}

impl TaskQueue {
    /// Task `t` calls on a connection: `conn` is it if it is `t`'s, with
    /// whether it still runs. Whether the call's command is to go out;
    /// else the task has been answered with why not.
    pub(crate) fn start_call(
        &mut self,
        t: usize,
        conn: Option<(&mut TaskLink, &mut ConnIo, bool)>,
        expect: Expect,
    ) -> bool {
        let Some(task) = self.task(t) else { return false };
        let shared = task.shared.clone();
        let Some((link, io, running)) = conn.filter(|(link, ..)| link.owner == Some(t)) else {
            self.ready.push_back((t, Reply::Answered(Err(CallError::Closed))));
            return false;
        };
        if !running {
            let error = match link.lost.take() {
                Some(lost) => CallError::Lost { lost, reopened: false },
                None => CallError::Closed,
            };
            self.ready.push_back((t, Reply::Answered(Err(error))));
            return false;
        }
        let started = match io.calls() {
            Some(calls) => calls.start(&shared.borrow().command, expect),
            None => Err(CallError::Closed),
        };
        if let Err(error) = started {
            self.ready.push_back((t, Reply::Answered(Err(error))));
            return false;
        }
        link.call_waits = true;
        true
    }

    /// Hands a connection's task its call's answer, if it is in.
    pub(crate) fn answer_call(&mut self, link: &mut TaskLink, io: &mut ConnIo) {
        if let Some(done) = io.take_call_answer() {
            self.reply_call(link, io, done);
        }
    }

    /// Ends the call under way on a connection, if there is one, with `done`.
    pub(crate) fn end_call(&mut self, link: &mut TaskLink, io: &mut ConnIo, done: Result<CallAnswer, CallError>) {
        if let Some(calls) = io.calls() {
            calls.abandon();
        }
        if link.call_waits {
            self.reply_call(link, io, done);
        }
    }

    /// Resumes a connection's task with its call's answer (an execution's
    /// kept packets handed over with it).
    fn reply_call(&mut self, link: &mut TaskLink, io: &mut ConnIo, done: Result<CallAnswer, CallError>) {
        let Some(t) = link.owner else { return };
        link.call_waits = false;
        let Some(task) = self.task(t) else { return };
        if let (Ok(CallAnswer::Walked(_)), Some(calls)) = (&done, io.calls()) {
            calls.swap_kept(&mut task.shared.borrow_mut().kept);
        }
        self.ready.push_back((t, Reply::Answered(done)));
    }

    /// Tells a connection's task that it was lost (kept in `link.lost`),
    /// and whether it is open again: its call in flight fails with that;
    /// between calls, the next call fails with it unless it is open again.
    pub(crate) fn tell_lost(&mut self, link: &mut TaskLink, io: &mut ConnIo, reopened: bool) {
        if link.owner.is_none() {
            return;
        }
        if !link.call_waits {
            if reopened {
                link.lost = None;
            }
            return;
        }
        let Some(lost) = link.lost.take() else { return };
        self.end_call(link, io, Err(CallError::Lost { lost, reopened }));
    }

    /// The run ended before a connection could be opened again: its
    /// task's call ends as the run's cut ends calls.
    pub(crate) fn cut_call(&mut self, link: &mut TaskLink, io: &mut ConnIo) {
        let Some(t) = link.owner else { return };
        self.mark_cut(t);
        self.end_call(link, io, Err(CallError::Cut));
    }
}
