//! A loop's tasks (a script's states, see `fiber_task`) and what each
//! waits for, in the engine's loop (`driver::event_loop`, whatever its
//! backend): which are ready to resume and with what, which gave way,
//! pause, wait for a `--rate` arrival or for the run to start. The loop
//! does what a task asks of its connections (open, call, close) and hands
//! the answer back through [`ready`](TaskQueue::ready).

use std::collections::VecDeque;

use crate::driver::tasks::fiber_task::{Reply, Request, Task, TaskBody};
use crate::driver::tasks::start_gate::ArrivalGuard;
use crate::driver::{Admission, Budget, Clock, LoopContext, TaskError};
use crate::stats::LoopStats;

/// A loop's tasks and what each waits for.
#[derive(Default)]
pub(crate) struct TaskQueue {
    /// By their number in the loop; `None` once ended.
    list: Vec<Option<Task>>,
    /// Tasks to resume, and with what.
    pub(crate) ready: VecDeque<(usize, Reply)>,
    /// Tasks that gave way: resumed after the loop's next look at its
    /// connections.
    yielded: Vec<usize>,
    /// Tasks waiting for a `--rate` arrival, and since when (ns since the
    /// run's start: the client's delay counts from the later of the two).
    admitting: Vec<(usize, u64)>,
    /// Tasks pausing, until when (ns since the run's start).
    sleeping: Vec<(u64, usize)>,
    /// Tasks set up and waiting for the run to start.
    at_start: Vec<usize>,
    /// Tasks not yet ended.
    live: usize,
    /// The first task that failed, which ended the run.
    failure: Option<TaskError>,
}

/// What a task asked that only its backend can do: something with its
/// connections.
pub(crate) enum ConnRequest {
    Open(Box<crate::driver::tasks::fiber_task::OpenCalls>),
    Call { conn: crate::driver::ConnId, expect: crate::driver::Expect },
    Close(crate::driver::ConnId),
    Reopen(crate::driver::ConnId),
}

impl TaskQueue {
    /// Makes the tasks' fibers; they start at the loop's first turn.
    pub(crate) fn add(&mut self, bodies: Vec<TaskBody>, clock: Clock) -> std::io::Result<()> {
        for body in bodies {
            let index = self.list.len();
            self.list.push(Some(Task::new(body, clock)?));
            self.ready.push_back((index, Reply::Start));
            self.live += 1;
        }
        Ok(())
    }

    /// Tasks not yet ended.
    pub(crate) fn live(&self) -> usize {
        self.live
    }

    /// Whether a task gave way and waits for the loop's next turn.
    pub(crate) fn have_yielded(&self) -> bool {
        !self.yielded.is_empty()
    }

    /// Whether some task waits for a time: a pause or a `--rate` arrival.
    pub(crate) fn have_timers(&self) -> bool {
        !self.sleeping.is_empty() || !self.admitting.is_empty()
    }

    /// Whether some task waits for a `--rate` arrival.
    pub(crate) fn have_admitting(&self) -> bool {
        !self.admitting.is_empty()
    }

    /// The earliest pause's end.
    pub(crate) fn next_wake(&self) -> Option<u64> {
        self.sleeping.iter().map(|&(at, _)| at).min()
    }

    pub(crate) fn task(&self, t: usize) -> Option<&Task> {
        self.list.get(t).and_then(Option::as_ref)
    }

    /// Resumes the next ready task, records what it did since it last
    /// suspended, and says what it asks: `None` when no task is ready.
    /// What the queue can do itself (give way, pause, wait for an arrival
    /// or the start) it does; a request for the task's connections, or its
    /// end, comes back for the backend.
    pub(crate) fn resume_next(&mut self, turn: &mut TaskTurn<'_>) -> Option<(usize, TaskStep)> {
        while let Some((t, reply)) = self.ready.pop_front() {
            let Some(task) = self.list.get_mut(t).and_then(Option::as_mut) else { continue };
            let resumed = task.resume(reply);
            task.fold_into(t, turn.stats, turn.budget);
            let request = match resumed {
                crate::driver::tasks::fiber_task::Resumed::Ended(result) => return Some((t, TaskStep::Ended(result))),
                crate::driver::tasks::fiber_task::Resumed::Asks(request) => request,
            };
            let conn_request = match request {
                Request::Open(open) => ConnRequest::Open(open),
                Request::Call { conn, expect } => ConnRequest::Call { conn, expect },
                Request::Close(conn) => ConnRequest::Close(conn),
                Request::Reopen(conn) => ConnRequest::Reopen(conn),
                Request::Admit => {
                    let now = turn.clock.now_ns();
                    self.admit(t, now, turn);
                    continue;
                }
                Request::Yield => {
                    self.yielded.push(t);
                    continue;
                }
                Request::Sleep(pause) => {
                    let until = turn.clock.now_ns().saturating_add(pause.as_nanos() as u64);
                    self.sleeping.push((until, t));
                    continue;
                }
                Request::AwaitStart if turn.arrival.is_some() => {
                    self.at_start.push(t);
                    continue;
                }
                Request::AwaitStart => {
                    self.ready.push_back((t, Reply::Started(*turn.clock)));
                    continue;
                }
            };
            return Some((t, TaskStep::Asks(conn_request)));
        }
        None
    }

    /// sysbench's `sb_more_events` for task `t`, which asked at `asked_ns`,
    /// as a built-in connection takes its events: now, when its `--rate`
    /// arrival comes, or never.
    fn admit(&mut self, t: usize, asked_ns: u64, turn: &mut TaskTurn<'_>) {
        // A task whose events never wait keeps the loop from its own
        // turns: the collector hears from it here too.
        turn.budget.hand_over(&turn.context.board, turn.stats);
        let now = turn.clock.now_ns();
        match turn.budget.admit(now, asked_ns) {
            Admission::Start(at) => {
                if let Some(task) = self.task(t) {
                    task.admitted(turn.budget);
                }
                self.ready.push_back((t, Reply::Admitted(Some(at))))
            }
            Admission::Over => self.ready.push_back((t, Reply::Admitted(None))),
            Admission::Wait => match turn.budget.wake_at(now) {
                Some(_) => self.admitting.push((t, asked_ns)),
                None => self.ready.push_back((t, Reply::Admitted(None))),
            },
        }
    }

    /// Once every task of a script's run is set up (or has ended), the
    /// loop arrives at the start gate and waits there for the run to
    /// start; then its tasks go on, on the run's clock and budget, which
    /// this sets in `turn`.
    pub(crate) fn start_when_set_up(&mut self, turn: &mut TaskTurn<'_>) {
        let Some(arrival) = turn.arrival.as_mut() else { return };
        if arrival.has_arrived() || self.at_start.len() < self.live {
            return;
        }
        let started = arrival.arrive();
        *turn.clock = started.clock;
        *turn.deadline_ns = started.deadline_ns;
        *turn.budget = Budget::for_loop(turn.context.control.clone(), started.deadline_ns, turn.index);
        for t in self.at_start.drain(..) {
            self.ready.push_back((t, Reply::Started(started.clock)));
        }
    }

    /// Readies the tasks whose pause is over, those that gave way, and
    /// under `--rate` those whose arrival came.
    pub(crate) fn wake(&mut self, turn: &mut TaskTurn<'_>) {
        let now = turn.clock.now_ns();
        for t in self.yielded.drain(..) {
            self.ready.push_back((t, Reply::Done));
        }
        let stopped = turn.context.control.is_stopped();
        let mut i = 0;
        while let Some(&(at, t)) = self.sleeping.get(i) {
            if at <= now || stopped {
                self.sleeping.swap_remove(i);
                self.ready.push_back((t, Reply::Done));
            } else {
                i += 1;
            }
        }
        if !self.admitting.is_empty() && turn.budget.wake_at(now).map_or(true, |at| at <= now) {
            for (t, asked_ns) in std::mem::take(&mut self.admitting) {
                self.admit(t, asked_ns, turn);
            }
        }
    }

    /// The run's time is up: tasks hear it at their next call, and a
    /// pause or an arrival they wait for ends now.
    pub(crate) fn cut(&mut self) {
        for task in self.list.iter().flatten() {
            task.shared.borrow_mut().cut = true;
        }
        for (_, t) in self.sleeping.drain(..) {
            self.ready.push_back((t, Reply::Done));
        }
        for (t, _) in self.admitting.drain(..) {
            self.ready.push_back((t, Reply::Admitted(None)));
        }
    }

    /// Marks task `t`'s run as cut: its call ends as the run's cut ends calls.
    pub(crate) fn mark_cut(&self, t: usize) {
        if let Some(task) = self.task(t) {
            task.shared.borrow_mut().cut = true;
        }
    }

    /// Task `t` returned: a failure (unless the run's time cut it short)
    /// stops the run and is kept as the loop's result. The backend closes
    /// its connections.
    pub(crate) fn ended(&mut self, t: usize, result: Result<(), TaskError>, context: &LoopContext) {
        let cut = self.task(t).is_some_and(Task::was_cut);
        if let Some(slot) = self.list.get_mut(t) {
            *slot = None;
        }
        self.live -= 1;
        if let Err(error) = result {
            if !cut {
                context.control.stop();
                self.failure.get_or_insert(error);
            }
        }
    }

    /// The first task's failure, which ended the run.
    pub(crate) fn take_failure(&mut self) -> Option<TaskError> {
        self.failure.take()
    }

    /// Leaves the tasks still suspended (the loop failed) as they are:
    /// unwinding a task's stack would run through LuaJIT's frames.
    pub(crate) fn forget_suspended(&mut self) {
        for task in self.list.drain(..).flatten() {
            std::mem::forget(task);
        }
    }
}

/// What a resumed task did: asked something of its connections, or ended.
pub(crate) enum TaskStep {
    Asks(ConnRequest),
    Ended(Result<(), TaskError>),
}

/// What of its loop the queue uses while it resumes tasks: the run's
/// clock, deadline and budget (set anew when the run starts), the loop's
/// statistics and where it waits for the start.
pub(crate) struct TaskTurn<'a> {
    pub(crate) index: usize,
    pub(crate) context: &'a LoopContext,
    pub(crate) clock: &'a mut Clock,
    pub(crate) deadline_ns: &'a mut Option<u64>,
    pub(crate) budget: &'a mut Budget,
    pub(crate) stats: &'a mut LoopStats,
    pub(crate) arrival: &'a mut Option<ArrivalGuard>,
}
