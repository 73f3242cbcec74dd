//! Tasks: code that makes one call at a time and waits for each answer (a
//! Lua script's state: `thread_init`, `thread_run` with its events,
//! `thread_done`), run on a loop as a fiber. The task's code is ordinary
//! blocking code on a stack of its own; when it needs the server (or the
//! `--rate` schedule, or a pause) it suspends, and the loop resumes it
//! with the answer once its backend has it, running the loop's other tasks
//! and connections meanwhile. So a script's SQL call is a plain function
//! call, which LuaJIT compiles into the script's traces as it compiles
//! sysbench's FFI calls, and it costs no thread wake-up: the loop's one
//! wait serves every task on it.
//!
//! A task reaches its loop through [`with_caller`] (the [`Caller`] of the
//! task running on this thread): the loop owns the connections, the
//! budget, the statistics, the timeouts and the redial; a task names its
//! connections by [`ConnId`] and asks. Nothing is shared between the task
//! and the loop while the other runs: they take turns on one thread.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};

use crate::client::ConnectOptions;
use crate::driver::connections::call_exchange::{CallAnswer, CallError, Expect};
use crate::driver::{Budget, Clock};
use crate::stats::{Counters, LoopStats};

/// A task's connection, as its loop numbers them.
pub type ConnId = usize;

/// A task's failure, which ends the run (a script's error).
pub type TaskError = Box<dyn std::error::Error + Send + Sync>;

/// A task's code, run on its loop's thread.
pub type TaskBody = Box<dyn FnOnce() -> Result<(), TaskError>>;

/// Makes a task's code on the loop's thread (a Lua state lives and dies
/// on one thread): given the task's number among the run's tasks.
pub type TaskMaker = Box<dyn FnOnce() -> TaskBody + Send>;

/// How much stack a task's fiber has: LuaJIT keeps Lua calls on its own
/// stack, so C frames are few (a `pcall` into Rust and back); mapped, not
/// touched, so a task costs only the pages it used.
const TASK_STACK: usize = 2 << 20;

/// Events a task may start without waiting for anything before the loop's
/// other work gets its turn (an event that sends no SQL would keep the
/// loop otherwise).
pub(crate) const EVENTS_PER_TURN: u32 = 64;

/// What a task asks of its loop.
#[derive(Debug)]
pub enum Request {
    /// Log in.
    Open(Box<OpenCalls>),
    /// Send the command in [`TaskShared::command`] on the connection.
    Call { conn: ConnId, expect: Expect },
    /// Say goodbye (COM_QUIT) and close it.
    Close(ConnId),
    /// Close it and log in again with the same options.
    Reopen(ConnId),
    /// May the next event start (sysbench's `sb_more_events`)?
    Admit,
    /// Let the loop's other work run, then resume.
    Yield,
    /// Resume after this long.
    Sleep(Duration),
    /// The task is set up: resume it when the run starts (see
    /// `crate::driver::tasks::start_gate`).
    AwaitStart,
}

/// A connection a task asks for: where and how to log in, and the most
/// bytes one answer may keep (`--lua-result-limit`).
#[derive(Debug)]
pub struct OpenCalls {
    pub options: ConnectOptions,
    pub result_limit: usize,
}

/// What the loop answers.
#[derive(Debug)]
pub enum Reply {
    /// The task's first resume.
    Start,
    Opened(Result<OpenedConn, String>),
    Answered(Result<CallAnswer, CallError>),
    /// The next event may start, admitted as of this instant (ns since
    /// the run's start; under `--rate`, its intended start); `None`: no
    /// more events.
    Admitted(Option<u64>),
    /// Closed, yielded or slept.
    Done,
    /// The run started, on this clock.
    Started(Clock),
}

/// A connection a task opened.
#[derive(Debug, Clone, Copy)]
pub struct OpenedConn {
    pub id: ConnId,
    pub capabilities: wirebench_protocol::Capabilities,
    pub max_packet: usize,
}

/// An event's times (ns since the run's start).
#[derive(Debug, Clone, Copy, Default)]
pub struct EventTimes {
    /// When it was admitted (under `--rate`, its intended start).
    pub admitted: u64,
    /// When it began running: its service time starts there.
    pub began: u64,
    pub ended: u64,
}

/// What a task tells its loop besides its requests, looked at each time it
/// suspends: the events it ended and the counters it moved since.
#[derive(Debug, Default)]
pub struct TaskShared {
    /// The command of a [`Request::Call`]: whole packets from sequence id 0.
    pub command: Vec<u8>,
    /// An execution's kept packets, swapped with the connection's.
    pub kept: Vec<u8>,
    /// Events ended and not yet recorded.
    pub ended: Vec<EventTimes>,
    /// sysbench's `sb_counter_inc` by a script, per counter kind, since the
    /// loop last looked.
    pub counted: [u64; CounterKind::COUNT],
    /// The run's time was up: every call from now fails with
    /// [`CallError::Cut`], and the task's error is no failure.
    pub cut: bool,
    /// The stamp of the event the task runs ([`Budget::cut`] at its
    /// admission): what it does is counted only in its loop's same cut.
    pub event_cut: u32,
}

/// The counters a script may move itself (sysbench's `sb_counter_type`,
/// in its C enum's order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CounterKind {
    Other = 0,
    Read = 1,
    Write = 2,
    /// sysbench's SB_CNT_EVENT (`SB_CNT_TRX` in Lua): an event.
    Event = 3,
    Error = 4,
    Reconnect = 5,
}

impl CounterKind {
    pub const COUNT: usize = 6;

    /// sysbench's number for it.
    pub fn from_sysbench(n: i64) -> Option<Self> {
        Some(match n {
            0 => CounterKind::Other,
            1 => CounterKind::Read,
            2 => CounterKind::Write,
            3 => CounterKind::Event,
            4 => CounterKind::Error,
            5 => CounterKind::Reconnect,
            _ => return None,
        })
    }
}

/// A task as its loop holds it: the fiber, what it shares, and what it
/// waits for.
pub(crate) struct Task {
    fiber: Coroutine<Reply, Request, Result<(), TaskError>>,
    pub(crate) shared: Rc<RefCell<TaskShared>>,
}

/// What resuming a task came to.
pub(crate) enum Resumed {
    Asks(Request),
    Ended(Result<(), TaskError>),
}

impl Task {
    /// A task whose fiber will run `body` (not yet started).
    pub(crate) fn new(body: TaskBody, clock: Clock) -> std::io::Result<Self> {
        let shared = Rc::new(RefCell::new(TaskShared::default()));
        let stack = DefaultStack::new(TASK_STACK)?;
        let theirs = shared.clone();
        let fiber = Coroutine::with_stack(stack, move |yielder: &Yielder<Reply, Request>, _start: Reply| {
            let clock = Cell::new(clock);
            let caller =
                Caller { yielder, shared: theirs, clock, admitted_in_turn: Cell::new(0), local: RefCell::new(None) };
            let _current = CurrentGuard::enter(&caller);
            body()
        });
        Ok(Task { fiber, shared })
    }

    /// Runs the task until it asks for something or ends.
    pub(crate) fn resume(&mut self, reply: Reply) -> Resumed {
        match self.fiber.resume(reply) {
            CoroutineResult::Yield(request) => Resumed::Asks(request),
            CoroutineResult::Return(result) => Resumed::Ended(result),
        }
    }

    /// The task's next event was admitted now, by `budget`.
    pub(crate) fn admitted(&self, budget: &Budget) {
        self.shared.borrow_mut().event_cut = budget.cut();
    }

    /// Records what the task did since it last suspended, as task `slot`
    /// of its loop: the events it ended (each taken from the budget's
    /// events in progress) and the counters it moved, unless they belong
    /// to an event of the warm-up and its loop has passed the cut
    /// ([`LoopStats::counts`]). All of it belongs to the event the task
    /// ran: a new one is admitted only while the task is suspended.
    pub(crate) fn fold_into(&self, slot: usize, stats: &mut LoopStats, budget: &mut Budget) {
        let mut shared = self.shared.borrow_mut();
        let counts = stats.counts(shared.event_cut);
        for times in shared.ended.drain(..) {
            let latency = times.ended.saturating_sub(times.admitted);
            let service = times.ended.saturating_sub(times.began);
            if counts {
                stats.record_events(slot, 1, latency, service);
            }
            budget.finish(1);
        }
        if shared.counted.iter().any(|&n| n > 0) {
            let counted = std::mem::take(&mut shared.counted);
            for (kind, n) in counted.into_iter().enumerate().filter(|_| counts) {
                record_counted(stats, kind, n);
            }
        }
    }

    /// Whether the run's time cut the task short.
    pub(crate) fn was_cut(&self) -> bool {
        self.shared.borrow().cut
    }
}

/// Counts `n` of a script's `sb_counter_inc(kind)`, where sysbench's report
/// shows them.
fn record_counted(stats: &mut LoopStats, kind: usize, n: u64) {
    let Some(kind) = CounterKind::from_sysbench(kind as i64) else { return };
    let mut counts = Counters::default();
    match kind {
        CounterKind::Other => counts.others = n,
        CounterKind::Read => counts.reads = n,
        CounterKind::Write => counts.writes = n,
        // sysbench's SB_CNT_EVENT: transactions and events, with no
        // latency and no thread's share (its fairness counts sb_event_stop's).
        CounterKind::Event => counts.events = n,
        CounterKind::Error => counts.errors = n,
        CounterKind::Reconnect => counts.reconnects = n,
    }
    stats.add_counters(&counts);
}

/// A task's side: how its code asks the loop for things, waiting for the
/// answer (the fiber suspends meanwhile).
pub struct Caller<'y> {
    yielder: &'y Yielder<Reply, Request>,
    shared: Rc<RefCell<TaskShared>>,
    /// The run's clock, once it started (the loop's set-up clock before).
    clock: Cell<Clock>,
    /// Events admitted since the task last waited for anything.
    admitted_in_turn: Cell<u32>,
    /// What the task's code keeps for its own calls into it (a script
    /// state's context, which its C functions find here).
    local: RefCell<Option<Rc<dyn Any>>>,
}

thread_local! {
    /// The caller of the task running on this thread, if one is.
    static CURRENT: Cell<*const Caller<'static>> = const { Cell::new(std::ptr::null()) };
}

/// Makes `caller` the thread's current one while the guard lives, and
/// again after each of its suspends.
struct CurrentGuard {
    previous: *const Caller<'static>,
}

impl CurrentGuard {
    fn enter(caller: &Caller<'_>) -> Self {
        let previous = CURRENT.with(|c| c.replace(erase(caller)));
        CurrentGuard { previous }
    }
}

impl Drop for CurrentGuard {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.previous));
    }
}

fn erase(caller: &Caller<'_>) -> *const Caller<'static> {
    (caller as *const Caller<'_>).cast()
}

/// Runs `f` with the caller of the task running on this thread; `None`
/// when no task runs here (the main thread between commands).
pub fn with_caller<T>(f: impl FnOnce(&Caller<'_>) -> T) -> Option<T> {
    let current = CURRENT.with(Cell::get);
    // SAFETY: CURRENT is set only by a `CurrentGuard` living on the fiber
    // of the caller it points to, for the guard's lifetime (restored on
    // drop), and a fiber runs only on its loop's thread, where CURRENT is
    // thread-local: while any code of this thread runs inside that fiber,
    // the caller is alive. Code outside the fiber (the loop) sees the
    // pointer only between the fiber's suspend and resume... which is why
    // `suspend` restores it itself rather than leaving it set.
    let caller = unsafe { current.as_ref() }?;
    Some(f(caller))
}

impl Caller<'_> {
    /// Suspends the task with `request` until the loop answers.
    fn ask(&self, request: Request) -> Reply {
        let previous = CURRENT.with(|c| c.replace(std::ptr::null()));
        let reply = self.yielder.suspend(request);
        CURRENT.with(|c| c.set(previous));
        reply
    }

    /// Keeps `value` for the task's own code to find with
    /// [`local`](Self::local), replacing what was kept.
    pub fn set_local(&self, value: Rc<dyn Any>) {
        *self.local.borrow_mut() = Some(value);
    }

    /// What [`set_local`](Self::set_local) kept, if it is a `T`.
    pub fn local<T: 'static>(&self) -> Option<Rc<T>> {
        let local = self.local.borrow().clone()?;
        local.downcast::<T>().ok()
    }

    pub fn now_ns(&self) -> u64 {
        self.clock.get().now_ns()
    }

    /// The task is set up (sysbench's `thread_init` is done): waits until
    /// the run starts, whose clock its events are timed on from then.
    pub fn wait_for_start(&self) {
        if let Reply::Started(clock) = self.ask(Request::AwaitStart) {
            self.clock.set(clock);
        }
    }

    /// Logs in; the connection is the loop's, named by its id.
    pub fn open(&self, options: ConnectOptions, result_limit: usize) -> Result<OpenedConn, String> {
        self.admitted_in_turn.set(0);
        match self.ask(Request::Open(Box::new(OpenCalls { options, result_limit }))) {
            Reply::Opened(opened) => opened,
            other => Err(unexpected(&other)),
        }
    }

    /// Sends the command `write` appends (whole packets from sequence id
    /// 0) on `conn` and waits for its answer. `kept` is swapped with the
    /// answer's kept packets (see [`Expect::Walk`]).
    pub fn call(
        &self,
        conn: ConnId,
        expect: Expect,
        kept: &mut Vec<u8>,
        write: impl FnOnce(&mut Vec<u8>),
    ) -> Result<CallAnswer, CallError> {
        {
            let mut shared = self.shared.borrow_mut();
            if shared.cut {
                return Err(CallError::Cut);
            }
            shared.command.clear();
            write(&mut shared.command);
            std::mem::swap(&mut shared.kept, kept);
        }
        self.admitted_in_turn.set(0);
        let reply = self.ask(Request::Call { conn, expect });
        std::mem::swap(&mut self.shared.borrow_mut().kept, kept);
        match reply {
            Reply::Answered(answer) => answer,
            other => Err(CallError::Loop(unexpected(&other))),
        }
    }

    /// COM_QUIT, and the connection closes.
    pub fn close(&self, conn: ConnId) {
        self.ask(Request::Close(conn));
    }

    /// Closes the connection and logs in again with its options.
    pub fn reopen(&self, conn: ConnId) -> Result<OpenedConn, String> {
        match self.ask(Request::Reopen(conn)) {
            Reply::Opened(opened) => opened,
            other => Err(unexpected(&other)),
        }
    }

    /// sysbench's `sb_more_events`: whether the next event may start,
    /// waiting under `--rate` for its arrival; the instant it was admitted
    /// as (for its latency).
    pub fn admit_event(&self) -> Option<u64> {
        let turn = self.admitted_in_turn.get() + 1;
        self.admitted_in_turn.set(turn);
        if turn >= EVENTS_PER_TURN {
            self.admitted_in_turn.set(0);
            self.ask(Request::Yield);
        }
        match self.ask(Request::Admit) {
            Reply::Admitted(at) => at,
            _ => None,
        }
    }

    /// An event ended at `times.ended`: recorded by the loop when the task
    /// next suspends.
    pub fn event_ended(&self, times: EventTimes) {
        let mut shared = self.shared.borrow_mut();
        shared.ended.push(times);
    }

    /// `n` counts of `kind`.
    pub fn count_n(&self, kind: CounterKind, n: u64) {
        self.shared.borrow_mut().counted[kind as usize] += n;
    }

    /// Pauses the task (not the loop) for `pause`.
    pub fn sleep(&self, pause: Duration) {
        self.admitted_in_turn.set(0);
        self.ask(Request::Sleep(pause));
    }

    /// Whether the run's time was up (the task's error then is the cut's).
    pub fn was_cut(&self) -> bool {
        self.shared.borrow().cut
    }
}

fn unexpected(reply: &Reply) -> String {
    format!("the loop answered a task's request with {reply:?}, which does not answer it (a bug)")
}
