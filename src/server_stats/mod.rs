//! `--server-stats`: what the server did during the run, in the same
//! report, intervals and JSON as what the client saw.
//!
//! A connection of its own, on a thread of its own (`sampler.rs`, the
//! async client), reads `SHOW GLOBAL STATUS` when the run starts, at every
//! `--report-interval` and at the end; never from an event loop. When the
//! server runs on this host, the same thread reads its process in `/proc`
//! (`process.rs`): CPU time, resident memory, context switches. Two
//! samples make a [`ServerDelta`] (`delta.rs`); with the run's own counts
//! it gives the figures per query, per transaction and per second
//! (`figures.rs`), and the check that nobody else used the server
//! (`consistency.rs`). `server_watch.rs` is what the report thread keeps between
//! samples; `server_report.rs` the text it prints; `status.rs` which
//! status variables are read.
//!
//! Layer: beside the driver, below the run orchestration; it imports the
//! client and nothing else of the crate, and owns its options
//! ([`ServerStatsOptions`]), which the command line converts into.

mod consistency;
mod delta;
mod figures;
mod process;
mod sampler;
mod server_report;
mod server_watch;
mod status;

pub use consistency::{ConsistencyCheck, RunStatements};
pub use delta::ServerDelta;
pub use figures::{ClientCounts, ServerFigures, ServerLocation, ServerResult};
#[cfg(test)]
pub use process::ProcessDelta;
pub use sampler::{Sampler, SamplerConfig, SamplerError};
pub use server_report::{ServerBlock, ServerInterimLine};
pub use server_watch::{EdgeCut, ServerWatch};
pub use status::STATUS_COUNTERS;

/// `--server-stats`: whether the server is sampled, and what shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SamplingMode {
    #[default]
    Off,
    /// Sampled: the results' fields, and (invoked as wirebench) a block
    /// after the report.
    On,
    /// As `On`, and a line after each interim report line.
    Interim,
}

impl SamplingMode {
    pub fn samples(self) -> bool {
        self != SamplingMode::Off
    }
}

/// The options of the server's sampling, as the command line gives them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ServerStatsOptions {
    pub mode: SamplingMode,
    /// Whether `--server-stats` was given (else `mode` is the default of
    /// the output format): asked for, a sampler that cannot start ends the
    /// command; by default the run goes on without it.
    pub asked: bool,
    /// `--server-pid`: the server's process on this host, for a server
    /// reached through a port forward, whose socket does not lead to it.
    pub pid: Option<u32>,
}
