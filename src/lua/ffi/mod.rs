//! sysbench's C side as scripts reach it through LuaJIT's FFI: the C
//! functions sysbench 1.0.20's binary exports for its internal Lua modules
//! and for scripts (`ffi.C.sb_counter_inc(sysbench.tid, ffi.C.SB_CNT_ERROR)`),
//! exported by wirebench's binary under the same names and C signatures
//! (the list is `exports.rs`, which build.rs also reads), and declared in
//! every state before the script by `cdefs.lua`.
//!
//! A C function called through the FFI gets no Lua state, and must not
//! call back into Lua. sysbench finds the calling thread's generator and
//! counters through thread-local variables (one Lua state per thread);
//! wirebench runs several states on one thread, so the state whose code
//! runs is marked while it runs: Rust enters a state's Lua code only under
//! an [`Entered`] guard, and the functions here reach that state's
//! context ([`ThreadCtx`]: its generator, its statistics) through it.
//!
//! None of these functions unwinds into LuaJIT (a panic is caught and
//! logged) and none crashes on a call it cannot serve (no state running,
//! a NULL pointer, a counter sysbench does not have): it logs what was
//! wrong, once per kind of mistake, and does nothing or returns 0.
//!
//! `sb_event_start`, `sb_event_stop`, `sb_more_events` and the `db_*`
//! functions are declared but not exported: a script that calls them gets
//! LuaJIT's "undefined symbol" error at that call.

mod cmdline;
mod counters;
mod histogram;
mod rand;

include!("exports.rs");

use std::cell::RefCell;
use std::collections::HashSet;
use std::io::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

use mlua::Lua;

use super::state::ThreadCtx;

/// sysbench's declarations, made in every state before the prelude.
pub(crate) const CDEFS: &str = include_str!("../cdefs.lua");

thread_local! {
    /// The state whose Lua code runs on this thread, if any.
    static CURRENT: RefCell<Option<Lua>> = const { RefCell::new(None) };
}

/// While it lives, its state is the one whose Lua code runs on this
/// thread: the one the exported functions serve. Guards nest (a state's
/// code may make another state run, as `run` makes the report hooks'),
/// each restoring the state before it when dropped. It holds the state
/// itself (a reference count), so the mark never outlives the state.
#[must_use = "the state is marked only while the guard lives"]
pub(crate) struct Entered {
    previous: Option<Lua>,
}

impl Entered {
    /// Marks `lua` as the state running on this thread.
    pub(crate) fn new(lua: &Lua) -> Entered {
        let previous = CURRENT.try_with(|current| current.replace(Some(lua.clone()))).ok().flatten();
        Entered { previous }
    }
}

impl Drop for Entered {
    fn drop(&mut self) {
        let previous = self.previous.take();
        // Bound here so that the state is released outside the cell: the
        // last reference closes it, and its finalizers may call in here.
        let _left = CURRENT.try_with(|current| current.replace(previous));
    }
}

/// Runs `f` with the context of the state running on this thread; `None`
/// when there is none (or its context is in use), which is logged once
/// per `function`: the call is outside any script state's code.
fn with_state<T>(function: &'static str, f: impl FnOnce(&mut ThreadCtx) -> T) -> Option<T> {
    let served = CURRENT.try_with(|current| {
        let current = current.try_borrow().ok()?;
        let mut ctx = current.as_ref()?.try_app_data_mut::<ThreadCtx>().ok()??;
        Some(f(&mut ctx))
    });
    let served = served.ok().flatten();
    if served.is_none() {
        alert_once(
            function,
            "no state",
            format_args!(
                "{function}() was called with no script state running on this thread (from a finalizer, or a \
                 thread the script started?): it did nothing"
            ),
        );
    }
    served
}

/// Runs the body of the exported `function`; a panic is caught (it must
/// not unwind into LuaJIT), logged, and answered with `fallback`.
fn guarded<T>(function: &'static str, fallback: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|_| {
        alert_once(function, "panic", format_args!("{function}() failed (a wirebench bug): it did nothing"));
        fallback
    })
}

/// Writes `ALERT: message` to stderr, as sysbench alerts to an API
/// misuse, the first time `function` meets `problem` in this process (a
/// script making the mistake in every event would flood the terminal).
fn alert_once(function: &'static str, problem: &'static str, message: std::fmt::Arguments<'_>) {
    static SEEN: Mutex<Option<HashSet<(&str, &str)>>> = Mutex::new(None);
    let first = {
        let mut seen = SEEN.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        seen.get_or_insert_with(HashSet::new).insert((function, problem))
    };
    if first {
        let _ = writeln!(std::io::stderr(), "ALERT: {message}");
    }
}
