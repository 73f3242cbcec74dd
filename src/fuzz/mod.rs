//! `wirebench fuzz`: protocol fuzzing of servers. It sends malformed client
//! traffic at a MySQL/MariaDB server (or a proxy, or anything speaking the
//! protocol) and catches what crashes it, hangs it or blows up its memory.
//!
//! - The session model: a session is the packets of one connection, from
//!   the answer to the greeting (a login, an SSLRequest, or anything) to
//!   COM_QUIT ([`spec`]); valid messages are built by the protocol crate's
//!   encoders on the live connection and split into typed fields
//!   ([`build`], [`fields`]); the exchange itself, the login's auth
//!   switches and caching_sha2 steps included, is `exec.rs` over `conn.rs`
//!   (the compressed protocol when the login asks for it) and `answer_reader.rs`.
//! - Structure-aware mutation: field edits fitting each field's kind
//!   ([`edits`], [`values`], [`text`] for statement text), framing and
//!   compressed-packet edits ([`frame`]), whole-session mutations
//!   ([`mutate`]); seeds recorded from wirebench's own sysbench workloads
//!   ([`seeds`]), fresh sessions from the grammar ([`generate`]), a
//!   dictionary of SQL and edge values ([`dictionary`]).
//! - Black-box feedback, as AFLNet: (message, answer class, error code)
//!   states ([`state`]); sessions that reach new ones join the corpus
//!   ([`corpus`]).
//! - Failure detection by a separate control connection and, optionally,
//!   the server's process and log ([`control`], [`watch`]); a session whose
//!   answer is late waits for the control connection's word, so that a
//!   failure finds the culprit of a hang still in flight ([`vigil`]); a failure's
//!   session is confirmed, minimised and saved as a readable reproducer
//!   ([`failure`], [`minimize`], [`reproducer`], [`rig`]), which
//!   `wirebench fuzz-replay` sends again ([`replay`]).
//! - Safety: targets on this host only unless allowed, no database but the
//!   one given, no command that stops or reconfigures the server ([`safety`]).
//! - The run: workers over tokio tasks, one connection each
//!   ([`worker`]), the control loop and the reports ([`campaign`], [`report`]).
//!
//! Layer: beside `run`, below the command line, which converts its options
//! into [`FuzzOptions`] and [`ReplayOptions`]. It may import client (the
//! control connection and sockets), rand (its generator), workload (the
//! seeds) and the protocol crate; not cli, run or driver: fuzzed sessions
//! need no pinned event loops, and tokio tasks give thousands of sessions
//! a second.
//!
//! Files:
//! - `fuzz_options.rs`: the fuzzer's configuration; `fuzz_error.rs`: what
//!   stops a run before it can say; `safety.rs`: what keeps it on its target.
//! - `campaign.rs`: a run from start to summary; `worker.rs`: the workers;
//!   `progress.rs` and `lines.rs`: what it prints.
//! - `spec.rs`: what a session sends; `generate.rs`: fresh sessions from the
//!   grammar; `seeds.rs`: the seed corpus of real sysbench traffic;
//!   `capture_seeds.rs`: `--seed-capture`'s sessions, from a capture file;
//!   `dictionary.rs` and `values.rs`: what mutators splice in.
//! - `mutate.rs`: mutations of a session; `fields.rs`, `encode_spec.rs`,
//!   `edits.rs`: a packet as typed fields and their edits; `frame.rs`:
//!   framing edits; `text.rs`: statement text mutations; `fuzz_rng.rs`: the
//!   seeded randomness.
//! - `exec.rs`: one session on a fresh connection; `conn.rs`: its socket;
//!   `render.rs`: a planned packet into bytes; `answer_reader.rs`: the
//!   server's answer, untrusted; `vigil.rs`: late answers.
//! - `internal_error.rs`: error answers that betray a fault inside the
//!   server (failure kind `internal-error`).
//! - `pre_auth.rs`: pre-auth mode, when the login is refused or
//!   `--pre-auth` asks: what is fuzzed and what the control check expects.
//! - `feedback_state.rs`: the states a session reached; `corpus.rs`: the
//!   sessions that reached one first.
//! - `control.rs`: failure detection; `process_watch.rs`: the server's
//!   process and log; `login_probe.rs`: the two forms of login tried
//!   before fuzzing (findings in the login); `failure.rs`: a failure
//!   confirmed and minimised; `minimize.rs`: minimising a session;
//!   `rig.rs`: running sessions again; `run_clock.rs`: when the run
//!   ends (`--time`, then `--fuzz-overtime`); `table_setup.rs`: the tables a
//!   failing session needs, recorded and made again.
//! - `reproducer.rs`: the reproducer file; `reproducer_format.rs`: its
//!   marker and line errors; `replay.rs`: `fuzz-replay`; `emit.rs`: the
//!   reproducer as a Python script.
//! - `roundtrip_tests.rs` (tests): the reproducer's round trip, end to end;
//!   `scripted_server.rs` (tests): servers that misbehave in one scripted
//!   way, for the control connection's and the login probe's verdicts.

mod answer_reader;
mod campaign;
mod capture_seeds;
mod conn;
mod control;
mod corpus;
mod dictionary;
mod edits;
mod emit;
mod encode_spec;
mod exec;
mod failure;
mod feedback_state;
mod fields;
mod frame;
mod fuzz_error;
mod fuzz_options;
mod fuzz_rng;
mod generate;
mod internal_error;
mod lines;
mod login_probe;
mod minimize;
mod mutate;
mod pre_auth;
mod process_watch;
mod progress;
mod render;
mod replay;
mod reproducer;
mod reproducer_format;
mod rig;
#[cfg(test)]
mod roundtrip_tests;
mod run_clock;
mod safety;
#[cfg(test)]
mod scripted_server;
mod seeds;
mod spec;
mod table_setup;
mod text;
mod values;
mod vigil;
mod worker;

pub use campaign::{fuzz, fuzz_observed, ProgressObserver};
pub(crate) use fuzz_options::{
    Emit, FuzzOptions, GivenOptions, PidSource, ReplayOptions, Target, WatchOptions, DEFAULT_DEADLINE,
    DEFAULT_OVERTIME, DEFAULT_RESTART_WAIT, DEFAULT_RSS_GROWTH,
};
pub(crate) use internal_error::InternalErrors;
pub use progress::Progress;
pub use replay::{replay, ReplayVerdict};
