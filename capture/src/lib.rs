//! wirebench-capture: the capture files of `wirebench record`, `capture
//! import` and `replay`.
//!
//! A capture is a time-ordered stream of records: per connection its open
//! (the login's user, database, character set and capabilities, never a
//! password), its commands (the whole packet payload), each command's
//! answer summed up ([`AnswerSummary`](wirebench_protocol::response::AnswerSummary)),
//! its close. [`format`] writes and reads it in one streaming pass with one
//! block in memory; [`import`] makes one from a pcap or a server's log;
//! [`fingerprint`] turns a statement into its normalised text, the key of
//! every per-statement table; [`info`] sums a capture up; [`tap`] reads a
//! connection a recording proxy forwards.
//!
//! Everything read from a file or a capture is untrusted: every decoder
//! returns an error for bytes it cannot read, never panics, and allocates
//! only what the bytes actually present justify.

#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

pub mod commands;
pub mod fingerprint;
pub mod format;
pub mod import;
pub mod info;
pub mod redact;
pub mod tap;
