//! `run`'s events on loop threads: each loop owns some of the script's
//! states (sysbench threads), and each state runs its events in one Lua
//! coroutine. A SQL call sends its command and yields the connection; the
//! loop resumes the state when epoll says the answer is in, running the
//! other states meanwhile. So a state costs no thread of its own, no
//! wake-up per query and nothing async: a query is a send, a yield, an
//! epoll wait shared by all the loop's states, a read and a resume.
//!
//! `thread_init` and `thread_done` run outside the coroutine, their SQL
//! waiting in place: they are not timed, and a loop runs them one state
//! after another.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mlua::{Lua, Thread, Value};

use super::error::lua_message;
use super::ffi::Entered;
use super::sql::{self, SocketWatch, SqlConn, SqlHandle, CUT_MARK};
use super::state::{export_options, global_function, new_state, ThreadCtx};
use super::{ScriptEnv, ScriptError};
use crate::driver::{Admission, Budget, LoopContext};

/// Where the loops run: one per entry, pinned to its core when it names one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LuaLoops {
    pub cpus: Vec<Option<usize>>,
}

/// Events a state may run in a row without waiting for the server before
/// the loop's other states get their turn (a script whose events send no
/// SQL would otherwise keep the loop).
const EVENTS_PER_TURN: u32 = 64;

/// Starts the loops; state `tid` runs on loop `tid % loops` and reports as
/// loop `tid` of `context.board`. `cut`: when a call still waiting for the
/// server gives up (the end of `--time` and a grace).
pub fn spawn_loops(
    env: &Arc<ScriptEnv>,
    loops: &LuaLoops,
    context: &LoopContext,
    cut: Option<Instant>,
) -> Result<Vec<std::thread::JoinHandle<Result<(), ScriptError>>>, ScriptError> {
    let count = loops.cpus.len().clamp(1, env.threads.max(1) as usize);
    (0..count)
        .map(|index| {
            let tids: Vec<u32> = (0..env.threads).filter(|tid| *tid as usize % count == index).collect();
            let cpu = loops.cpus.get(index).copied().flatten();
            let (env, context) = (env.clone(), context.clone());
            std::thread::Builder::new()
                .name(format!("wirebench-lua-{index}"))
                .spawn(move || {
                    let _finished = context.finished.guard();
                    if let Some(cpu) = cpu {
                        core_affinity::set_for_current(core_affinity::CoreId { id: cpu });
                    }
                    let result = run_states_loop(&env, &tids, &context, cut);
                    if result.is_err() {
                        // One state failing ends the run, as one thread does in sysbench.
                        context.control.stop();
                    }
                    result
                })
                .map_err(ScriptError::Thread)
        })
        .collect()
}

/// One loop: its states' `thread_init`, their events, their `thread_done`.
fn run_states_loop(
    env: &Arc<ScriptEnv>,
    tids: &[u32],
    context: &LoopContext,
    cut: Option<Instant>,
) -> Result<(), ScriptError> {
    let mut states = Vec::with_capacity(tids.len());
    for &tid in tids {
        states.push(LoopState::start(env, tid, context, cut)?);
    }
    let epoll = Epoll::new()?;
    let mut driven = Driven { states, epoll, context, cut, ready: VecDeque::new() };
    let events = driven.run();
    let mut done = Ok(());
    for state in &driven.states {
        let ended = state.end(events.is_ok(), context);
        done = done.and(ended);
    }
    events.and(done)
}

/// Where a state is.
#[derive(Debug, Clone, Copy, PartialEq)]
enum StatePhase {
    /// Between events: the next needs the budget's admission.
    Admitting,
    /// `--rate`: its next event arrives at this instant (ns since the start).
    Parked(u64),
    /// Its event is under way.
    Running,
    /// A SQL call waits for the server.
    Waiting,
    /// No more events: the run is over, it asked to stop, or the cut came.
    Ended,
}

/// One state of a loop.
struct LoopState {
    /// The state's number in this instance: its statistics and budget.
    tid: u32,
    /// Its number in the whole run (`sysbench.tid`), which its thread
    /// functions get.
    number: u32,
    lua: Lua,
    /// `wb.events_coroutine(tid)`: runs events, yielding at each SQL call
    /// (the connection) and after each event (whether it asked to stop).
    events: Thread,
    budget: Budget,
    phase: StatePhase,
    /// The connection of the SQL call under way: waited for while
    /// `Waiting`, and once its answer is in, what the state resumes with.
    call: Option<Rc<RefCell<SqlConn>>>,
    /// The event under way: its intended start (latency) and when it ran (service time).
    started_ns: u64,
    service_ns: u64,
}

impl LoopState {
    fn start(env: &Arc<ScriptEnv>, tid: u32, context: &LoopContext, cut: Option<Instant>) -> Result<Self, ScriptError> {
        let lua = new_state(env, tid)?;
        export_options(&lua, env)?;
        let _entered = Entered::new(&lua);
        with_ctx(&lua, |ctx| {
            ctx.cut_at = cut;
            ctx.control = Some(context.control.clone());
        })?;
        // The thread functions get the whole run's thread number (with
        // --shard, this instance's first plus `tid`), as sysbench passes
        // `sysbench.tid`.
        let number = env.first_tid.saturating_add(tid);
        // What thread_init does counts, as in sysbench (tpcc.lua's SET statements).
        with_ctx(&lua, |ctx| ctx.start_counting(context.board.loop_stats(tid as usize)))?;
        if let Some(thread_init) = global_function(&lua, "thread_init")? {
            thread_init.call::<()>(number).map_err(|e| ScriptError::function("thread_init", &e))?;
        }
        let raw: mlua::Table = lua.globals().get("__wirebench")?;
        let events: Thread = raw.get::<mlua::Function>("events_coroutine")?.call(number)?;
        let budget = Budget::for_loop(context.control.clone(), context.deadline_ns, tid as usize);
        Ok(LoopState {
            tid,
            number,
            lua,
            events,
            budget,
            phase: StatePhase::Admitting,
            call: None,
            started_ns: 0,
            service_ns: 0,
        })
    }

    /// `thread_done` (after events that ended well) and the state's last statistics.
    fn end(&self, events_ok: bool, context: &LoopContext) -> Result<(), ScriptError> {
        let _entered = Entered::new(&self.lua);
        let _ = self.lua.globals().get::<mlua::Table>("__wirebench").and_then(|raw| raw.set("events_co", Value::Nil));
        let done = match global_function(&self.lua, "thread_done")? {
            Some(thread_done) if events_ok => {
                thread_done.call::<()>(self.number).map_err(|e| ScriptError::function("thread_done", &e))
            }
            _ => Ok(()),
        };
        with_ctx(&self.lua, |ctx| {
            if let Some(mut stats) = ctx.stats.take() {
                context.board.publish(self.tid as usize, &mut stats);
            }
        })?;
        done
    }

    /// Counts the event just ended, as the engine counts one.
    fn event_ended(&mut self, context: &LoopContext) -> Result<(), ScriptError> {
        let end = context.clock.now_ns();
        self.budget.finish(1);
        self.budget.publish(end);
        let (started, service, tid) = (self.started_ns, self.service_ns, self.tid as usize);
        with_ctx(&self.lua, |ctx| {
            if ctx.env.draw_after_event {
                ctx.rng.next_u64();
            }
            if let Some(stats) = ctx.stats.as_mut() {
                stats.record_events(0, 1, end.saturating_sub(started), end.saturating_sub(service));
                context.board.publish_if_requested(tid, stats);
            }
        })
    }
}

fn with_ctx<T>(lua: &Lua, f: impl FnOnce(&mut ThreadCtx) -> T) -> Result<T, ScriptError> {
    let mut ctx = lua.app_data_mut::<ThreadCtx>().ok_or_else(|| ScriptError::Lua("no thread context".to_owned()))?;
    Ok(f(&mut ctx))
}

/// A loop's states and what drives them.
struct Driven<'a> {
    states: Vec<LoopState>,
    epoll: Epoll,
    context: &'a LoopContext,
    cut: Option<Instant>,
    /// States to step: new, answered, or whose `--rate` arrival came.
    ready: VecDeque<usize>,
}

impl Driven<'_> {
    /// Until every state has ended, or the cut.
    fn run(&mut self) -> Result<(), ScriptError> {
        self.ready.extend(0..self.states.len());
        let mut ready_fds = Vec::with_capacity(self.states.len().max(1));
        loop {
            while let Some(index) = self.ready.pop_front() {
                self.step_state(index)?;
            }
            if self.states.iter().all(|s| s.phase == StatePhase::Ended) {
                return Ok(());
            }
            let now = Instant::now();
            if self.cut.is_some_and(|cut| now >= cut) {
                self.cut_waiting();
                return Ok(());
            }
            self.epoll.wait(&mut ready_fds, self.timeout(now))?;
            self.wake(&ready_fds);
        }
    }

    /// How long the loop may sleep: until the next `--rate` arrival or the cut.
    fn timeout(&self, now: Instant) -> Option<Duration> {
        let started = self.context.clock.started();
        let parked = self.states.iter().filter_map(|s| match s.phase {
            StatePhase::Parked(at) => Some(started + Duration::from_nanos(at)),
            _ => None,
        });
        parked.chain(self.cut).min().map(|at| at.saturating_duration_since(now))
    }

    /// Readies the states whose answer is in, and those whose arrival came.
    fn wake(&mut self, ready_fds: &[u64]) {
        for &index in ready_fds {
            let Some(state) = self.states.get(index as usize) else { continue };
            if state.phase == StatePhase::Waiting && state.call.as_ref().is_some_and(|c| c.borrow_mut().progress()) {
                self.ready.push_back(index as usize);
            }
        }
        let now = self.context.clock.now_ns();
        for (index, state) in self.states.iter_mut().enumerate() {
            if let StatePhase::Parked(at) = state.phase {
                if now >= at {
                    state.budget.publish(now);
                    state.phase = StatePhase::Admitting;
                    self.ready.push_back(index);
                }
            }
        }
    }

    /// The run's time is up: the calls still waiting are dropped with their connections.
    fn cut_waiting(&mut self) {
        for state in &mut self.states {
            if let Some(conn) = state.call.take() {
                conn.borrow_mut().cut();
            }
            state.phase = StatePhase::Ended;
        }
    }

    /// Runs state `index` until it waits for the server, parks, ends, or
    /// has had its turn.
    fn step_state(&mut self, index: usize) -> Result<(), ScriptError> {
        let state = &mut self.states[index];
        match state.phase {
            StatePhase::Ended | StatePhase::Parked(_) => return Ok(()),
            StatePhase::Waiting if !state.call.as_ref().is_some_and(|c| c.borrow_mut().progress()) => return Ok(()),
            StatePhase::Waiting | StatePhase::Admitting | StatePhase::Running => {}
        }
        let mut events = 0;
        loop {
            let state = &mut self.states[index];
            if state.phase == StatePhase::Admitting {
                if events == EVENTS_PER_TURN {
                    self.ready.push_back(index);
                    return Ok(());
                }
                if !self.admit_event(index) {
                    return Ok(());
                }
                events += 1;
            }
            let state = &mut self.states[index];
            match resume(state)? {
                Resumed::Waits(conn) => {
                    if !conn.borrow_mut().progress() {
                        self.wait_for(index, conn)?;
                        return Ok(());
                    }
                    state.call = Some(conn);
                }
                Resumed::EventEnded { stop } => {
                    state.event_ended(self.context)?;
                    if stop {
                        state.phase = StatePhase::Ended;
                        return Ok(());
                    }
                    state.phase = StatePhase::Admitting;
                }
                Resumed::Cut => {
                    state.phase = StatePhase::Ended;
                    return Ok(());
                }
            }
        }
    }

    /// Asks the budget for state `index`'s next event; true when it may run now.
    fn admit_event(&mut self, index: usize) -> bool {
        let state = &mut self.states[index];
        let now = self.context.clock.now_ns();
        match state.budget.admit(now) {
            Admission::Start(at) => {
                (state.started_ns, state.service_ns) = (at, now);
                state.phase = StatePhase::Running;
                true
            }
            Admission::Over => {
                state.phase = StatePhase::Ended;
                false
            }
            Admission::Wait => {
                state.phase = match state.budget.wake_at(now) {
                    Some(at) => StatePhase::Parked(at),
                    None => StatePhase::Ended,
                };
                false
            }
        }
    }

    /// State `index` waits for `conn`'s answer: epoll watches its socket.
    fn wait_for(&mut self, index: usize, conn: Rc<RefCell<SqlConn>>) -> Result<(), ScriptError> {
        let rewatch = conn.borrow_mut().rewatch();
        if let Some((fd, watch, known)) = rewatch {
            self.epoll.watch(fd, index as u64, watch, known)?;
        }
        let state = &mut self.states[index];
        state.call = Some(conn);
        state.phase = StatePhase::Waiting;
        Ok(())
    }
}

/// What a state did when resumed.
enum Resumed {
    /// A SQL call waits for this connection's answer.
    Waits(Rc<RefCell<SqlConn>>),
    EventEnded {
        stop: bool,
    },
    /// The run's time was up while a call waited.
    Cut,
}

/// Resumes the state's events: with the answer of the call it waited for,
/// or (between events) with nothing.
fn resume(state: &mut LoopState) -> Result<Resumed, ScriptError> {
    state.phase = StatePhase::Running;
    let _entered = Entered::new(&state.lua);
    let resumed = match state.call.take() {
        Some(conn) => match sql::call_answer(&state.lua, &conn) {
            Ok(answer) => state.events.resume::<Value>(answer),
            Err(e) => Err(e),
        },
        None => state.events.resume::<Value>(()),
    };
    match resumed {
        Ok(Value::UserData(handle)) => Ok(Resumed::Waits(handle.borrow::<SqlHandle>()?.0.clone())),
        Ok(Value::Boolean(stop)) => Ok(Resumed::EventEnded { stop }),
        Ok(other) => Err(ScriptError::Lua(format!(
            "a script's event yielded a {} (coroutine.yield in event() outside a coroutine of its own?)",
            other.type_name()
        ))),
        Err(e) if lua_message(&e).contains(CUT_MARK) => Ok(Resumed::Cut),
        Err(e) => Err(ScriptError::function("thread_run", &e)),
    }
}

/// An epoll instance watching the loop's connections, edge-triggered:
/// each connection is added once and its state read until it would block.
struct Epoll {
    fd: OwnedFd,
    events: Vec<libc::epoll_event>,
}

impl Epoll {
    fn new() -> Result<Self, ScriptError> {
        // SAFETY: no pointers; the result is checked.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(ScriptError::Thread(std::io::Error::last_os_error()));
        }
        // SAFETY: `fd` is a new descriptor this struct now owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Epoll { fd, events: vec![libc::epoll_event { events: 0, u64: 0 }; 64] })
    }

    /// Watches `fd` for `watch`, edge-triggered: adds it, or changes
    /// what it is watched for when `known`.
    fn watch(&self, fd: RawFd, token: u64, watch: SocketWatch, known: bool) -> Result<(), ScriptError> {
        let mut flags = libc::EPOLLIN | libc::EPOLLRDHUP | libc::EPOLLET;
        if watch == SocketWatch::ReadWrite {
            flags |= libc::EPOLLOUT;
        }
        let mut event = libc::epoll_event { events: flags as u32, u64: token };
        let op = if known { libc::EPOLL_CTL_MOD } else { libc::EPOLL_CTL_ADD };
        // SAFETY: `event` is valid for the call.
        let rc = unsafe { libc::epoll_ctl(self.fd.as_raw_fd(), op, fd, &mut event) };
        if rc < 0 {
            return Err(ScriptError::Thread(std::io::Error::last_os_error()));
        }
        Ok(())
    }

    /// Waits up to `timeout` (`None`: until something is ready); the
    /// tokens ready go to `ready`.
    fn wait(&mut self, ready: &mut Vec<u64>, timeout: Option<Duration>) -> Result<(), ScriptError> {
        ready.clear();
        let ms = timeout.map_or(-1, |t| t.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32);
        let capacity = self.events.len() as i32;
        // SAFETY: `events` has room for `capacity` entries.
        let n = unsafe { libc::epoll_wait(self.fd.as_raw_fd(), self.events.as_mut_ptr(), capacity, ms) };
        if n < 0 {
            let error = std::io::Error::last_os_error();
            if error.kind() == std::io::ErrorKind::Interrupted {
                return Ok(());
            }
            return Err(ScriptError::Thread(error));
        }
        ready.extend(self.events.iter().take(n as usize).map(|e| e.u64));
        Ok(())
    }
}
