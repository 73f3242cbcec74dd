//! `wirebench replay`: a capture's traffic sent again, on the engine's
//! loops, at its own pace or faster, and compared with what the capture
//! holds.
//!
//! The loops do the sending ([`crate::driver::replay`]); this layer reads
//! the capture and hands them their connections' records, numbers the
//! statements, and sums up what they counted for the report.
//!
//! Layer: below `run`, which starts it; it may import the driver (the
//! feed's types, the run's clock and limits) and `stats`.
//!
//! - `replay_options.rs`: what the command line asks ([`CaptureReplayOptions`]).
//! - `dispatch.rs`: the capture's reader, one thread feeding the loops
//!   (`dispatch_tests.rs`: its tests, on captures written in memory).
//! - `statement_table.rs`: the statements, numbered by fingerprint, with
//!   what the capture says of each.
//! - `command_rules.rs`: which captured commands are sent, and how.

mod command_rules;
mod dispatch;
mod replay_options;
mod statement_table;

pub use command_rules::Unreplayed;
pub use dispatch::{dispatch_capture, DispatchOutcome, DispatchPlan};
pub use replay_options::{CaptureReplayOptions, Speed, UserMapping};
pub use statement_table::StatementEntry;
