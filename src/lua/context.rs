//! Where a state's context is found. The Rust functions a state calls
//! through mlua find it in the state's app data; the C functions a script
//! calls through LuaJIT's FFI (`ffi.C.db_query`, `ffi.C.sb_rand_uniform`)
//! get no state, so they find the context of the state running now: the
//! one whose task is running on this thread (a task's fiber keeps it,
//! `driver::Caller::local`), else the one this thread entered outside any
//! task (the main state loading the script, a report hook).

use std::cell::{RefCell, RefMut};
use std::rc::Rc;

use mlua::Lua;

use std::sync::Arc;

use super::cmdline_options::ScriptOption;
use super::{ScriptEnv, ScriptError};
use crate::driver::{with_caller, CounterKind};
use crate::rand::Rng;
use crate::stats::Counters;

/// A state's context, shared by its app data and its task.
pub(crate) type SharedCtx = Rc<RefCell<ThreadCtx>>;

thread_local! {
    /// The state this thread runs outside any task, while one does.
    static OUTSIDE_TASKS: RefCell<Option<SharedCtx>> = const { RefCell::new(None) };
}

/// The context of the state `lua`, for a Rust function it called.
pub(crate) fn of(lua: &Lua) -> mlua::Result<SharedCtx> {
    let ctx = lua.app_data_ref::<SharedCtx>().ok_or_else(|| mlua::Error::runtime("no thread context"))?;
    Ok(ctx.clone())
}

/// Runs `f` with the context of the state `lua`.
pub(crate) fn with<T>(lua: &Lua, f: impl FnOnce(&mut ThreadCtx) -> T) -> mlua::Result<T> {
    let ctx = of(lua)?;
    let mut ctx = borrow(&ctx)?;
    Ok(f(&mut ctx))
}

fn borrow(ctx: &SharedCtx) -> mlua::Result<RefMut<'_, ThreadCtx>> {
    ctx.try_borrow_mut().map_err(|_| mlua::Error::runtime("the thread context is in use (a call re-entered it)"))
}

/// The context of the state running now on this thread, for a C function
/// a script called; `None` when no state runs here.
pub(crate) fn current() -> Option<SharedCtx> {
    if let Some(ctx) = crate::driver::with_caller(|caller| caller.local::<RefCell<ThreadCtx>>()).flatten() {
        return Some(ctx);
    }
    OUTSIDE_TASKS.with(|outside| outside.borrow().clone())
}

/// Runs `f` with the context of the state running now, if one is and it
/// is not in use.
pub(crate) fn with_current<T>(f: impl FnOnce(&mut ThreadCtx) -> T) -> Option<T> {
    let ctx = current()?;
    let mut ctx = ctx.try_borrow_mut().ok()?;
    Some(f(&mut ctx))
}

/// Makes `ctx` the task's state: its C functions find it from now on.
pub(crate) fn enter_task(ctx: &SharedCtx) {
    crate::driver::with_caller(|caller| caller.set_local(ctx.clone()));
}

/// Makes `ctx` the state this thread runs outside tasks while the guard lives.
pub(crate) struct OutsideGuard {
    previous: Option<SharedCtx>,
}

impl OutsideGuard {
    pub(crate) fn enter(ctx: &SharedCtx) -> Self {
        let previous = OUTSIDE_TASKS.with(|outside| outside.borrow_mut().replace(ctx.clone()));
        OutsideGuard { previous }
    }
}

impl Drop for OutsideGuard {
    fn drop(&mut self) {
        let previous = self.previous.take();
        OUTSIDE_TASKS.with(|outside| *outside.borrow_mut() = previous);
    }
}

/// What a state's Rust functions need, kept as the state's app data.
pub(crate) struct ThreadCtx {
    pub env: Arc<ScriptEnv>,
    /// `sysbench.tid`: the thread's number, 0 for the main state.
    pub tid: u32,
    pub rng: Rng,
    /// Written to stdout when the state closes (`report_json`'s closing bracket).
    pub on_close: Option<String>,
    /// The current event's times, from `sb_event_start` to `sb_event_stop`.
    pub event: crate::driver::EventTimes,
    /// Every count the state made so far (its queries, its events, its
    /// script's `sb_counter_inc`): sysbench's thread counters, which
    /// `sb_counter_val` reads and reports never reset.
    pub counted: Counters,
    /// The script's option definitions, for `sb_print_test_options`.
    pub test_args: Vec<ScriptOption>,
}

impl ThreadCtx {
    /// One more of `kind`, in the state's counters and, in a task, in its
    /// loop's statistics.
    pub(crate) fn count(&mut self, kind: CounterKind) {
        self.count_n(kind, 1);
    }

    /// `n` more of `kind`.
    pub(crate) fn count_n(&mut self, kind: CounterKind, n: u64) {
        let field = match kind {
            CounterKind::Other => &mut self.counted.others,
            CounterKind::Read => &mut self.counted.reads,
            CounterKind::Write => &mut self.counted.writes,
            CounterKind::Event => &mut self.counted.events,
            CounterKind::Error => &mut self.counted.errors,
            CounterKind::Reconnect => &mut self.counted.reconnects,
        };
        *field += n;
        with_caller(|caller| caller.count_n(kind, n));
    }

    /// A script's own counts (`sb_counter_inc`, or `init()`'s counts
    /// handed on), added as the state's.
    pub(crate) fn add_counts(&mut self, counts: &Counters) {
        let kinds = [
            (CounterKind::Read, counts.reads),
            (CounterKind::Write, counts.writes),
            (CounterKind::Other, counts.others),
            (CounterKind::Event, counts.events),
            (CounterKind::Error, counts.errors),
            (CounterKind::Reconnect, counts.reconnects),
        ];
        for (kind, n) in kinds.into_iter().filter(|&(_, n)| n > 0) {
            self.count_n(kind, n);
        }
    }

    /// Every count of the state so far: sysbench's thread counters.
    pub(crate) fn counts_so_far(&self) -> Counters {
        self.counted
    }
}

impl Drop for ThreadCtx {
    fn drop(&mut self) {
        if let Some(text) = self.on_close.take() {
            use std::io::Write as _;
            let _ = std::io::stdout().write_all(text.as_bytes());
        }
    }
}

/// Makes `ctx` the state whose context the script's C functions find: for
/// good in a task (a task runs one state), else while the guard lives.
pub(crate) fn enter(ctx: &SharedCtx) -> Option<OutsideGuard> {
    if crate::driver::with_caller(|_| ()).is_some() {
        enter_task(ctx);
        return None;
    }
    Some(OutsideGuard::enter(ctx))
}

/// [`enter`] for the state `lua`.
pub(crate) fn enter_state(lua: &Lua) -> Result<Option<OutsideGuard>, ScriptError> {
    Ok(enter(&of(lua)?))
}
