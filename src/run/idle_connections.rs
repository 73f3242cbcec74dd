//! `--idle-connections`: this instance's part of them handed to the loops
//! (the driver holds them, `driver::IdlePlan`), and their counts to the
//! report and the result. With `--shard`, the shards that have connections
//! split them and their login rate as they split `--threads` and `--rate`;
//! idle connection g of the whole run goes to the server connection g
//! would.

use std::sync::Arc;

use crate::cli::Bench;
use crate::client::ConnectOptions;
use crate::driver::{IdlePlan, IdleSettings, LoopContext, Shard};

use super::result_sink::ResultSink;
use super::RunError;

/// This instance's part of the idle connections: their numbers in the
/// whole run, and its logins per second.
fn this_part(bench: &Bench, threads_total: u32) -> (std::ops::Range<u64>, u32) {
    let settings: &IdleSettings = &bench.engine.idle;
    // Shards without an active connection do nothing at all.
    let shard = bench.general.shard.among_first(threads_total).unwrap_or(Shard::WHOLE);
    settings.for_shard(shard)
}

/// How many idle connections this instance opens, for the open-files check.
pub(super) fn count_here(bench: &Bench, threads_total: u32) -> u64 {
    let range = this_part(bench, threads_total).0;
    range.end - range.start
}

/// Gives `context`'s loops (`loops` of them) this instance's idle
/// connections, each logging in as `options_for` its number in the whole
/// run says, and `sink` their counts; nothing without `--idle-connections`.
pub(super) fn attach(
    bench: &Bench,
    threads_total: u32,
    loops: usize,
    options_for: impl Fn(usize) -> ConnectOptions,
    context: &mut LoopContext,
    sink: &mut ResultSink,
) -> Result<(), RunError> {
    let settings = &bench.engine.idle;
    if settings.count == 0 {
        return Ok(());
    }
    if bench.mysql.dry_run {
        return Err(RunError::IdleDryRun);
    }
    let (range, rate) = this_part(bench, threads_total);
    // They log in as the active connections do: TLS, compression, the
    // database and all.
    let options = range.map(|g| options_for(g as usize));
    let plan = IdlePlan::new(options, settings.ping_interval, rate, loops)?;
    sink.hold_idle(plan.counts.clone());
    context.idle = Some(Arc::new(plan));
    Ok(())
}
