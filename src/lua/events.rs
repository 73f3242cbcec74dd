//! sysbench's event loop functions, exported as its binary exports them
//! (`sysbench.lua` declares them; `thread_run` calls them, and scripts
//! that write their own `thread_run` call them too): whether another event
//! may start, and its start and end, which the state's loop counts.

use std::ffi::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::context;
use crate::driver::with_caller;

/// `bool sb_more_events(int thread_id)`: whether the next event may start
/// (the run's `--events`, `--time`, a stop); under `--rate`, waits for
/// its arrival, from which its latency counts.
#[no_mangle]
pub extern "C" fn sb_more_events(_thread_id: c_int) -> bool {
    catch_unwind(AssertUnwindSafe(|| {
        let Some(admitted) = with_caller(|caller| caller.admit_event()).flatten() else { return false };
        context::with_current(|ctx| ctx.event.admitted = admitted);
        true
    }))
    .unwrap_or(false)
}

/// `void sb_event_start(int thread_id)`: the event's service time starts.
#[no_mangle]
pub extern "C" fn sb_event_start(_thread_id: c_int) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let Some(now) = with_caller(|caller| caller.now_ns()) else { return };
        context::with_current(|ctx| ctx.event.began = now);
    }));
}

/// `void sb_event_stop(int thread_id)`: the event ended; its latency is
/// recorded. sysbench then draws once from the thread's generator (to
/// pick a histogram slot) unless `--percentile=0`: so do we, so that a
/// seeded run draws sysbench's values.
#[no_mangle]
pub extern "C" fn sb_event_stop(_thread_id: c_int) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let Some(now) = with_caller(|caller| caller.now_ns()) else { return };
        let times = context::with_current(|ctx| {
            ctx.event.ended = now;
            ctx.counted.events += 1;
            if ctx.env.draw_after_event {
                ctx.rng.next_u64();
            }
            ctx.event
        });
        if let Some(times) = times {
            with_caller(|caller| caller.event_ended(times));
        }
    }));
}

/// libc's `usleep`, as a script calls it through the FFI
/// (`ffi.C.usleep(1000)`): under sysbench it pauses the script's thread;
/// here it pauses the script's state, and the loop's other states go on
/// (the binary exports it, so LuaJIT's `ffi.C` finds it before libc's).
/// Outside a state's task, it pauses the calling thread as libc's does.
#[no_mangle]
pub extern "C" fn usleep(usec: std::ffi::c_uint) -> c_int {
    let pause = std::time::Duration::from_micros(u64::from(usec));
    let paused = catch_unwind(AssertUnwindSafe(|| with_caller(|caller| caller.sleep(pause)).is_some()));
    if !matches!(paused, Ok(true)) {
        std::thread::sleep(pause);
    }
    0
}
