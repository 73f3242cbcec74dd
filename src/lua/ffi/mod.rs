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
//! wirebench runs several states on one thread, each in a task of the
//! driver's loop, so the functions here reach the context of the state
//! whose code runs ([`ThreadCtx`]: its generator) through its task
//! (`super::context`); outside any task, a state is marked while Rust
//! runs its Lua code, under an [`Entered`] guard.
//!
//! None of these functions unwinds into LuaJIT (a panic is caught and
//! logged) and none crashes on a call it cannot serve (no state running,
//! a NULL pointer, a counter sysbench does not have): it logs what was
//! wrong, once per kind of mistake, and does nothing or returns 0.
//!
//! The event loop's functions (`sb_more_events`, ...) are in
//! `super::events`, the SQL driver's (`db_*`) in `super::sql_ffi`.
//!
//! Files:
//! - `exports.rs`: the list of exported names (the build script reads it).
//! - `cmdline_ffi.rs`: `sysbench.cmdline`'s; `counter_ffi.rs`: the
//!   statistics counters'; `histogram_ffi.rs`: `sysbench.histogram`'s;
//!   `rand_ffi.rs`: `sysbench.rand`'s C functions.

mod cmdline_ffi;
mod counter_ffi;
mod histogram_ffi;
mod rand_ffi;

include!("exports.rs");

use std::collections::HashSet;
use std::io::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

use mlua::Lua;

use super::context::ThreadCtx;

/// sysbench's declarations, made in every state before the prelude.
pub(crate) const CDEFS: &str = include_str!("../cdefs.lua");

/// While it lives, its state is the one whose Lua code runs on this
/// thread outside any task (in a task, the task's state always is):
/// the one the exported functions serve. Guards nest: dropping one marks
/// again the state marked before it.
#[must_use = "the state is marked only while the guard lives"]
pub(crate) struct Entered(#[allow(dead_code)] Option<super::context::OutsideGuard>);

impl Entered {
    /// Marks `lua` as the state running on this thread.
    pub(crate) fn new(lua: &Lua) -> Entered {
        Entered(super::context::enter_state(lua).ok().flatten())
    }
}

/// Runs `f` with the context of the state running on this thread; `None`
/// when there is none (or its context is in use), which is logged once
/// per `function`: the call is outside any script state's code.
fn with_state<T>(function: &'static str, f: impl FnOnce(&mut ThreadCtx) -> T) -> Option<T> {
    let served = super::context::with_current(f);
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
pub(super) fn guarded<T>(function: &'static str, fallback: T, body: impl FnOnce() -> T) -> T {
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
    /// declare them (`void sb_counter_inc(int, sb_counter_type);`), as
    /// they declare libc's `usleep`.
    #[test]
    fn every_declared_function_is_exported() {
        let mut declared = declared_functions();
        assert_eq!(declared.len(), 35, "{declared:?}");
        declared.extend(["sb_counter_inc", "sb_counter_val", "usleep"].map(str::to_owned));
        declared.sort();
        let mut ours: Vec<String> = EXPORTED_C_FUNCTIONS.iter().map(|s| (*s).to_owned()).collect();
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
            std::mem::size_of::<cmdline_ffi::SbArg>(),
            std::mem::offset_of!(cmdline_ffi::SbArg, kind),
            std::mem::offset_of!(cmdline_ffi::SbArg, validate),
        );
        assert_eq!(ours, layout);
    }

    #[test]
    fn calls_with_no_state_running_do_nothing() {
        assert_eq!(rand_ffi::sb_rand_uniform(1, 10), 0);
        assert_eq!(rand_ffi::sb_rand_uniform_double(), 0.0);
        counter_ffi::sb_counter_inc(0, 1);
        assert_eq!(counter_ffi::sb_counter_val(0, 1), 0);
        let mut buf = *b"xxxx";
        // SAFETY: a NUL-terminated template and a buffer as long.
        unsafe { rand_ffi::sb_rand_str(c"#@#@".as_ptr(), buf.as_mut_ptr().cast()) };
        assert_eq!(&buf, b"xxxx");
        // SAFETY: NULL is allowed.
        unsafe { rand_ffi::sb_rand_str(std::ptr::null(), std::ptr::null_mut()) };
        cmdline_ffi::sb_print_test_options();
        // A state without a script state's context is no state.
        let lua = Lua::new();
        let _entered = Entered::new(&lua);
        assert_eq!(rand_ffi::sb_rand_gaussian(1, 10), 0);
    }
}
