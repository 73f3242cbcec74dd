//! The `run` command as steps: one run, or with a `--threads` list one
//! full run per connection count (its own connections, its own report),
//! `--sweep-pause` apart, then the sweep's table. `prepare` is not
//! repeated: the steps share the tables.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::benchmark;
use super::interrupt::Interrupts;
use super::output::Level;
use super::result_sink::ResultSink;
use super::shard_plan::ShardThreads;
use super::{RunError, RunOutcome};
use crate::cli::Bench;
use crate::results::SweepStep;
use crate::transport::tls::ClientTls;
use crate::watch::Watch;
use crate::workload::Workload;

/// Runs the test once per step; a step that does not complete (a signal,
/// a forced shutdown, an error) ends the sweep after its report, and the
/// table shows the steps that ran.
pub(super) fn run_steps(
    bench: &Bench,
    threads: ShardThreads,
    tls: Option<&ClientTls>,
    workload: Arc<dyn Workload>,
    runtime: &tokio::runtime::Runtime,
    interrupts: &Interrupts,
    watch: Option<&Arc<Watch>>,
) -> Result<RunOutcome, RunError> {
    let mut sink = ResultSink::new(bench);
    sink.watch_with(watch.cloned());
    let steps = &bench.general.sweep;
    if steps.is_empty() {
        let outcome = benchmark::run_benchmark(bench, threads, tls, workload, runtime, interrupts, &mut sink)?;
        sink.finish_run(bench)?;
        return Ok(outcome);
    }
    let mut outcome = Ok(RunOutcome::Completed);
    for (index, &threads) in steps.iter().enumerate() {
        if index > 0 {
            if let Some(signal) = pause(bench.general.sweep_pause, interrupts) {
                outcome = Ok(RunOutcome::Interrupted(signal));
                break;
            }
        }
        let step = SweepStep { index: index as u32 + 1, steps: steps.len() as u32, threads };
        Level::Notice.print(format_args!("[ sweep step {}/{} ] threads: {threads}\n\n", step.index, step.steps))?;
        sink.start_step(step);
        let (step_bench, step_threads) = (step_bench(bench, threads), ShardThreads { first: 0, total: threads });
        outcome =
            benchmark::run_benchmark(&step_bench, step_threads, tls, workload.clone(), runtime, interrupts, &mut sink);
        if !matches!(outcome, Ok(RunOutcome::Completed)) {
            break;
        }
    }
    sink.finish_sweep(bench)?;
    outcome
}

/// The command line of the step at `threads` connections.
fn step_bench(bench: &Bench, threads: u32) -> Bench {
    let mut step = bench.clone();
    step.general.threads = threads;
    step.general.sweep = Vec::new();
    step.test_options.threads = threads;
    step
}

/// Waits `seconds` between two steps; a signal cuts the wait short.
pub(super) fn pause(seconds: u32, interrupts: &Interrupts) -> Option<super::Signal> {
    let until = Instant::now() + Duration::from_secs(u64::from(seconds));
    loop {
        if let Some(signal) = interrupts.first_signal() {
            return Some(signal);
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return None;
        }
        std::thread::sleep(left.min(Duration::from_millis(50)));
    }
}
