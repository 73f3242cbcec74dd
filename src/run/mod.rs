//! The run orchestration: a parsed command line ([`crate::cli::Bench`])
//! carried out, from the first connection to the report.
//!
//! The only layer besides `main.rs` that knows the command line: it hands
//! each layer below its own configuration (the client its servers and TLS,
//! the driver its engine options, the workload its test options) and
//! imports them all; nothing below imports it.
//!
//! - `setup.rs`: what every command needs: connection options, TLS, the
//!   random generator's settings, connection errors with advice.
//! - `tables.rs`: `prepare`, `prewarm` and `cleanup`, over the async client.
//! - `plan.rs`: the `run` command's connections, opened and spread over
//!   the event loops.
//! - `benchmark.rs`: the `run` command: start the loops, supervise them
//!   (`supervise.rs`: interim reports, checkpoints, the forced shutdown),
//!   print the final report (`reports.rs`).
//! - `output.rs`: every write to standard output, whose failure ends the
//!   command ([`OutputError`]) instead of panicking.

mod benchmark;
mod error;
mod output;
mod plan;
mod reports;
mod setup;
mod supervise;
mod tables;

use std::sync::Arc;

pub use error::RunError;
pub use output::{stderr_line, Output, OutputError, EXIT_CLOSED_PIPE, EXIT_OUTPUT_FAILED};

use crate::cli::{test_help, Bench, Command};
use crate::stats::report;

/// How a command that did not fail ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub enum Outcome {
    /// Everything it had to do is done.
    Completed,
    /// `--forced-shutdown`: `--time` and the grace period passed with
    /// events still in flight; the report is printed, and sysbench exits
    /// with status 2.
    ForcedShutdown,
}

/// Carries out `bench.command`.
pub fn execute(bench: &Bench) -> Result<Outcome, RunError> {
    if bench.command == Command::Help {
        Output::Stdout.print(test_help(bench.test))?;
        return Ok(Outcome::Completed);
    }
    let workload = Arc::from(bench.test.workload(&bench.test_options)?);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(RunError::Runtime)?;
    let tls = setup::tls_config(bench)?;
    let tls = tls.as_ref();
    Output::Stdout.print(report::Banner)?;
    match bench.command {
        Command::Prepare => runtime.block_on(tables::prepare(bench, tls, workload)).map(|()| Outcome::Completed),
        Command::Prewarm => runtime.block_on(tables::prewarm(bench, tls, workload)).map(|()| Outcome::Completed),
        Command::Cleanup => runtime.block_on(tables::cleanup(bench, tls, workload)).map(|()| Outcome::Completed),
        Command::Run => benchmark::run(bench, tls, workload, &runtime),
        Command::Help => Ok(Outcome::Completed),
    }
}
