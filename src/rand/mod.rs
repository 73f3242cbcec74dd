//! sysbench 1.0.20's random numbers, bit for bit.
//!
//! sysbench gives every thread a xoroshiro128+ generator ([`Xoroshiro128Plus`])
//! seeded from glibc's `random()` ([`GlibcRandom`]) and derives every
//! distribution from its doubles in [0, 1). [`Rng`] is that per-thread state
//! plus the `--rand-*` constants ([`RandParams`]), owned by one connection:
//! no shared state, lock or allocation on any call.
//!
//! Seeding, as sysbench 1.0.20 runs (read from its source, then checked
//! against the installed binary with an LD_PRELOAD shim on `random()`):
//! 1. `sb_rand_init()` seeds the main thread (four draws) and the unique
//!    sequence (two draws) from whatever state glibc has at that point;
//! 2. then `srandom(--rand-seed)`, or `srandom(time(NULL))` for seed 0
//!    ([`srandom_seed`]);
//! 3. then the report, rate and checkpoint threads if enabled, then worker
//!    threads 0, 1, …, each taking four draws as it starts (in creation
//!    order in practice, though nothing enforces it).
//!
//! So with `--threads=1` and no helper threads, worker 0's stream is
//! [`Rng::for_thread`]`(seed, 0, …)`, which the `rand_sysbench` integration
//! test compares with the real binary. With more threads sysbench's order is
//! racy; wirebench gives connection `i` worker `i`'s in-order stream
//! ([`Rng::for_connections`]). The unique sequence does not depend on the
//! seed at all (see [`RandUnique::sysbench_upstream`]).
//!
//! sysbench 0.4 drew from glibc's `lrand48()` instead ([`Lrand48`]), for
//! its one legacy test.
//!
//! Layer: at the bottom; it imports nothing of the crate and owns the
//! `--rand-*` settings ([`RandConfig`]).
//!
//! Files:
//! - `config.rs`: the `--rand-*` options; `rng.rs`: one connection's
//!   generator (`sb_rand_*`).
//! - `xoroshiro.rs`: xoroshiro128+ as sysbench ships it; `glibc.rs`:
//!   glibc's `random()`, for the seeds; `lrand48.rs`: glibc's `lrand48()`,
//!   for sysbench 0.4.
//! - `unique.rs`: `sysbench.rand.unique()`.
//! - `distribution_tests.rs` (tests): goodness of fit of every distribution.

mod config;
mod glibc;
mod lrand48;
mod rng;
mod unique;
mod xoroshiro;

#[cfg(test)]
mod distribution_tests;

pub(crate) use config::RandConfigError;
pub use config::{Distribution, RandConfig, RandParams};
pub use glibc::GlibcRandom;
pub(crate) use lrand48::Lrand48;
pub(crate) use rng::shard_seed;
pub use rng::{srandom_seed, Rng};
pub use unique::RandUnique;
pub(crate) use unique::{SharedUnique, UniqueCursor};
pub(crate) use xoroshiro::Xoroshiro128Plus;
