//! `sysbench.rand`'s C functions (`sb_rand.h`): draws from the calling
//! state's generator, the one sysbench keeps per thread, so that a seeded
//! run draws sysbench's numbers in sysbench's order whether a script calls
//! `sysbench.rand.uniform` or `ffi.C.sb_rand_uniform` (the former calls the
//! latter, as in sysbench). Called with no state running they log it and
//! return 0.

use std::ffi::{c_char, CStr};

use super::{alert_once, guarded, with_state};
use crate::rand::Rng;

/// A draw between `a` and `b` with one of the generator's distributions.
fn ranged(function: &'static str, a: u32, b: u32, draw: fn(&mut Rng, u32, u32) -> u32) -> u32 {
    guarded(function, 0, || with_state(function, |ctx| draw(&mut ctx.rng, a, b)).unwrap_or(0))
}

/// `uint32_t sb_rand_default(uint32_t, uint32_t)`: `--rand-type`'s distribution.
#[no_mangle]
pub extern "C" fn sb_rand_default(a: u32, b: u32) -> u32 {
    ranged("sb_rand_default", a, b, Rng::default)
}

/// `uint32_t sb_rand_uniform(uint32_t, uint32_t)`.
#[no_mangle]
pub extern "C" fn sb_rand_uniform(a: u32, b: u32) -> u32 {
    ranged("sb_rand_uniform", a, b, Rng::uniform)
}

/// `uint32_t sb_rand_gaussian(uint32_t, uint32_t)`.
#[no_mangle]
pub extern "C" fn sb_rand_gaussian(a: u32, b: u32) -> u32 {
    ranged("sb_rand_gaussian", a, b, Rng::gaussian)
}

/// `uint32_t sb_rand_special(uint32_t, uint32_t)`.
#[no_mangle]
pub extern "C" fn sb_rand_special(a: u32, b: u32) -> u32 {
    ranged("sb_rand_special", a, b, Rng::special)
}

/// `uint32_t sb_rand_pareto(uint32_t, uint32_t)`.
#[no_mangle]
pub extern "C" fn sb_rand_pareto(a: u32, b: u32) -> u32 {
    ranged("sb_rand_pareto", a, b, Rng::pareto)
}

/// `uint64_t sb_rand_uniform_uint64(void)`: the generator's next 64 bits.
#[no_mangle]
pub extern "C" fn sb_rand_uniform_uint64() -> u64 {
    guarded("sb_rand_uniform_uint64", 0, || with_state("sb_rand_uniform_uint64", |ctx| ctx.rng.next_u64()).unwrap_or(0))
}

/// `double sb_rand_uniform_double(void)`: in [0, 1).
#[no_mangle]
pub extern "C" fn sb_rand_uniform_double() -> f64 {
    guarded("sb_rand_uniform_double", 0.0, || {
        with_state("sb_rand_uniform_double", |ctx| ctx.rng.next_f64()).unwrap_or(0.0)
    })
}

/// `uint32_t sb_rand_unique(void)`: the run's unique sequence, shared by
/// every thread (sysbench's is one counter for all threads too).
#[no_mangle]
pub extern "C" fn sb_rand_unique() -> u32 {
    guarded("sb_rand_unique", 0, || with_state("sb_rand_unique", |ctx| ctx.env.unique.next_value()).unwrap_or(0))
}

/// `void sb_rand_str(const char *fmt, char *buf)`: writes into `buf` one
/// byte for each byte of the NUL-terminated `fmt` (a digit for `#`, a
/// letter for `@`, the byte itself otherwise), and no NUL, as sysbench:
/// `buf` must have room for `strlen(fmt)` bytes, the caller's promise in C.
///
/// # Safety
///
/// `fmt` is NULL or NUL-terminated; `buf` is NULL or has room for
/// `strlen(fmt)` bytes that do not overlap `fmt`.
#[no_mangle]
pub unsafe extern "C" fn sb_rand_str(fmt: *const c_char, buf: *mut c_char) {
    guarded("sb_rand_str", (), || {
        if fmt.is_null() || buf.is_null() {
            alert_once(
                "sb_rand_str",
                "null",
                format_args!("sb_rand_str(): the template and the buffer must not be NULL: nothing written"),
            );
            return;
        }
        // SAFETY: the caller's promise above.
        let template = unsafe { CStr::from_ptr(fmt) }.to_bytes();
        // SAFETY: the caller's promise above.
        let out = unsafe { std::slice::from_raw_parts_mut(buf.cast::<u8>(), template.len()) };
        with_state("sb_rand_str", |ctx| ctx.rng.rand_str(template, out));
    })
}
