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

/// The functions `cdefs.lua` declares that wirebench does not export:
/// the event loop's and the SQL driver's, which belong to the engine
/// that runs the states. A script that calls one gets LuaJIT's
/// "undefined symbol" error at that call.
pub const ENGINE_C_FUNCTIONS: &[&str] = &[
    "sb_event_start",
    "sb_event_stop",
    "sb_more_events",
    "db_create",
    "db_destroy",
    "db_connection_create",
    "db_connection_close",
    "db_connection_reconnect",
    "db_connection_free",
    "db_bulk_insert_init",
    "db_bulk_insert_next",
    "db_bulk_insert_done",
    "db_query",
    "db_fetch_row",
    "db_prepare",
    "db_bind_param",
    "db_bind_result",
    "db_execute",
    "db_close",
    "db_free_results",
];

thread_local! {
    /// The state whose Lua code runs on this thread, if any.
    static CURRENT: RefCell<Option<Lua>> = const { RefCell::new(None) };
}

/// While it lives, its state is the one whose Lua code runs on this
/// thread: the one the exported functions serve. Guards nest: dropping
/// one marks again the state marked before it. It holds the state itself
/// (a reference count), so the mark never outlives the state.
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

#[cfg(test)]
mod tests {
    use mlua::{LuaOptions, StdLib};

    use super::*;

    /// A bare LuaJIT state with the FFI and sysbench's declarations.
    fn declared() -> Lua {
        // SAFETY: the FFI is what is tested; the code run is this test's.
        let lua = unsafe { Lua::unsafe_new_with(StdLib::ALL, LuaOptions::default()) };
        lua.load(CDEFS).exec().unwrap();
        lua
    }

    /// The functions `cdefs.lua` declares: each declaration that is not
    /// a typedef, named by the identifier before its first `(`.
    fn declared_functions() -> Vec<String> {
        let blocks = CDEFS.split("ffi.cdef[[").skip(1).map(|b| b.split("]]").next().unwrap_or(""));
        let declarations: Vec<String> =
            blocks.flat_map(|b| b.split(';').map(str::to_owned).collect::<Vec<_>>()).collect();
        declarations
            .iter()
            .map(|d| d.trim())
            .filter(|d| !d.is_empty() && !d.starts_with("typedef") && d.contains('('))
            .map(|d| {
                let head = d.split('(').next().unwrap_or("");
                head.rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).next().unwrap_or("").to_owned()
            })
            .collect()
    }

    /// sysbench's modules do not declare its counters' functions: scripts
    /// declare them (`void sb_counter_inc(int, sb_counter_type);`).
    #[test]
    fn every_declared_function_is_exported_or_left_to_the_engine() {
        let mut declared = declared_functions();
        assert_eq!(declared.len(), 35, "{declared:?}");
        declared.extend(["sb_counter_inc".to_owned(), "sb_counter_val".to_owned()]);
        declared.sort();
        let mut ours: Vec<String> =
            EXPORTED_C_FUNCTIONS.iter().chain(ENGINE_C_FUNCTIONS).map(|s| (*s).to_owned()).collect();
        ours.sort();
        assert_eq!(ours, declared);
    }

    #[test]
    fn sb_arg_t_is_laid_out_as_luajit_lays_it_out() {
        let lua = declared();
        let layout: (usize, usize, usize) = lua
            .load(r#"return ffi.sizeof("sb_arg_t"), ffi.offsetof("sb_arg_t", "type"), ffi.offsetof("sb_arg_t", "validate")"#)
            .eval()
            .unwrap();
        let ours = (
            std::mem::size_of::<cmdline::SbArg>(),
            std::mem::offset_of!(cmdline::SbArg, kind),
            std::mem::offset_of!(cmdline::SbArg, validate),
        );
        assert_eq!(ours, layout);
    }

    /// The name (global `name`) of the state marked on this thread.
    fn current_name() -> Option<String> {
        CURRENT.with(|current| current.borrow().as_ref().map(|lua| lua.globals().get::<String>("name").unwrap()))
    }

    #[test]
    fn guards_mark_the_running_state_and_restore_the_one_before() {
        let (a, b) = (Lua::new(), Lua::new());
        a.globals().set("name", "a").unwrap();
        b.globals().set("name", "b").unwrap();
        assert_eq!(current_name(), None);
        {
            let _a = Entered::new(&a);
            assert_eq!(current_name().as_deref(), Some("a"));
            {
                let _b = Entered::new(&b);
                assert_eq!(current_name().as_deref(), Some("b"));
            }
            assert_eq!(current_name().as_deref(), Some("a"));
        }
        assert_eq!(current_name(), None);
        // A guard keeps its state alive: the state closes with the guard.
        let guard = Entered::new(&Lua::new());
        drop(guard);
        assert_eq!(current_name(), None);
    }

    #[test]
    fn calls_with_no_state_running_do_nothing() {
        assert_eq!(rand::sb_rand_uniform(1, 10), 0);
        assert_eq!(rand::sb_rand_uniform_double(), 0.0);
        counters::sb_counter_inc(0, 1);
        assert_eq!(counters::sb_counter_val(0, 1), 0);
        let mut buf = *b"xxxx";
        // SAFETY: a NUL-terminated template and a buffer as long.
        unsafe { rand::sb_rand_str(c"#@#@".as_ptr(), buf.as_mut_ptr().cast()) };
        assert_eq!(&buf, b"xxxx");
        // SAFETY: NULL is allowed.
        unsafe { rand::sb_rand_str(std::ptr::null(), std::ptr::null_mut()) };
        cmdline::sb_print_test_options();
        // A state whose app data is not a script state's is no state.
        let lua = Lua::new();
        let _entered = Entered::new(&lua);
        assert_eq!(rand::sb_rand_gaussian(1, 10), 0);
    }
}
