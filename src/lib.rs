//! wirebench: a MySQL/MariaDB load generator that speaks the wire protocol itself.
//!
//! The library is the binary's (src/main.rs) and the integration tests'
//! (tests/): a module is `pub` when one of them names it, and each module
//! re-exports with `pub use` only what they use; the rest is `pub(crate)`,
//! so rustc reports what nothing uses.
//!
//! Files (src/main.rs is the binary; each folder's mod.rs lists its own):
//! - `main.rs`: the command line's entry point.
//! - `cli/`: the command line, parsed once and converted; `run/`: the run
//!   orchestration.
//! - `driver/`: the event loops; `workload/`: what the tests send; `lua/`:
//!   Lua scripts on the driver's loops.
//! - `client/`: the async client; `transport/`: compression and TLS;
//!   `null_server/`: the null server.
//! - `stats/`: sysbench's statistics and report; `results/`: JSON, CSV,
//!   sweeps, comparisons, merges and charts; `server_stats/`: the server's
//!   own figures.
//! - `rand/`: sysbench's random numbers; `fuzz/`: protocol fuzzing of
//!   servers; `capture/`: `wirebench capture import|info` (the format and
//!   the imports are the `wirebench-capture` crate's); `replay/`: `wirebench
//!   replay`'s reader of a capture, feeding the driver's loops.
//! - `watch/`: `/metrics`, remote write, the live page and the HTML
//!   report.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod capture;
pub mod cli;
pub mod client;
pub mod driver;
pub mod fuzz;
pub mod lua;
pub mod null_server;
pub mod rand;
pub(crate) mod replay;
pub mod results;
pub mod run;
pub(crate) mod server_stats;
pub mod stats;
pub mod transport;
pub mod watch;
pub mod workload;
