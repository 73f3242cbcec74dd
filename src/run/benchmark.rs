//! The `run` command: the header, the connections, the loops started and
//! supervised, the final report.

use std::sync::Arc;
use std::thread::JoinHandle;

use super::interrupt::{Interrupts, Signal};
use super::output::{alert_line, stderr_line, Level, Output, OutputError};
use super::plan::{plan_loops, Loops, Sessions};
use super::reports::{print_limit_reached, print_threads_starting, Reports};
use super::result_sink::ResultSink;
use super::setup::{rand_params, seed};
use super::supervise::{secs_to_ns, supervise, Schedule};
use super::{Outcome, RunError};
use crate::cli::Bench;
use crate::driver::{self, Backend, Clock, DriverError, LoopContext, PollMode, RunControl};
use crate::results::RunEnd;
use crate::stats::report::{self, RunHeader};
use crate::stats::{Collector, StatsBoard};
use crate::transport::tls::ClientTls;
use crate::workload::Workload;

pub(super) fn run(
    bench: &Bench,
    tls: Option<&ClientTls>,
    workload: Arc<dyn Workload>,
    runtime: &tokio::runtime::Runtime,
    interrupts: &Interrupts,
    sink: &mut ResultSink,
) -> Result<Outcome, RunError> {
    let backend = backend(bench)?;
    if let Some(cpus) = &bench.engine.cpus {
        driver::check_loop_cpus(cpus)?;
    }
    let (params, seed) = (rand_params(bench)?, seed(bench));
    let forced_shutdown_s = forced_shutdown_s(bench);
    print_header(bench, forced_shutdown_s)?;
    let sessions = Sessions::new(bench, workload, params, seed)?;
    let plans = match plan_loops(bench, tls, &sessions, runtime, interrupts)? {
        Ok(plans) => plans,
        Err(signal) => {
            alert_line(format_args!("wirebench: run interrupted by {signal} while connecting: no event ran"));
            return Ok(Outcome::Interrupted(signal));
        }
    };
    let context = loop_context(bench, &plans.connections_per_loop(), seed);
    sink.clock_started(sessions.server_version());
    print_threads_starting(&bench.general)?;
    Level::Notice.print(report::THREADS_STARTED)?;
    let handles = match plans {
        Loops::Net(plans) => driver::spawn_loops(plans, backend, &context),
        Loops::Dry(plans) => driver::dry::spawn_loops(plans, &context),
    }
    .map_err(RunError::SpawnLoops)?;
    interrupts.attach(&context.control, &context.finished);
    let general = &bench.general;
    let mut reports = Reports::new(Collector::new(context.board.clone()), general, sink);
    let mut schedule = Schedule::new(general, context.clock, forced_shutdown_s);
    let (loops, finished, control) = (handles.len(), &context.finished, &context.control);
    let outcome = match supervise(&mut reports, &mut schedule, loops, finished, control, context.clock, interrupts) {
        Ok(outcome) => outcome,
        Err(output) => {
            // Nothing measured from here on could be reported.
            context.control.stop();
            let _ = join_loops(handles);
            return Err(output.into());
        }
    };
    let end_ns = context.clock.now_ns();
    match outcome {
        Outcome::ForcedShutdown => {
            reports.final_result(bench, end_ns, RunEnd::ForcedShutdown)?;
            return Ok(outcome);
        }
        Outcome::Interrupted(signal) if finished.count() < loops => {
            report_stalled(&mut reports, bench, &context, signal, end_ns)?;
            return Ok(outcome);
        }
        _ => {}
    }
    // The report of what ran comes first, even when a loop failed: main
    // then prints the error.
    let joined = join_loops(handles);
    if context.control.queue_full() {
        return Err(RunError::QueueFull);
    }
    reports.collector.drain();
    if joined.is_ok() && outcome == Outcome::Completed {
        print_limit_reached(general, reports.collector.totals().counters.events)?;
    }
    let end = if outcome == Outcome::Completed { RunEnd::Completed } else { RunEnd::Interrupted };
    final_report(&mut reports, bench, end_ns, end)?;
    if let Outcome::Interrupted(signal) = outcome {
        say_interrupted(signal, end_ns);
    }
    joined.map(|()| outcome)
}

/// What every loop shares: the statistics board, the limits, the clock.
fn loop_context(bench: &Bench, per_loop: &[usize], seed: u32) -> LoopContext {
    let general = &bench.general;
    let control = match general.rate {
        Some(rate) => RunControl::with_rate(general.events, per_loop, rate, seed),
        None => RunControl::new(general.events, per_loop.len()),
    };
    LoopContext {
        board: StatsBoard::new(per_loop),
        control,
        clock: Clock::start(),
        deadline_ns: general.time.map(secs_to_ns),
        ignore: bench.mysql.ignore_errors.clone(),
        poll: bench.engine.poll,
        finished: Default::default(),
    }
}

/// sysbench's final report (with `--histogram`, the histogram first), and
/// the final result of `--format`.
fn final_report(reports: &mut Reports<'_>, bench: &Bench, end_ns: u64, end: RunEnd) -> Result<(), OutputError> {
    if bench.general.histogram {
        // sysbench logs the title and the end, but sb_histogram_print()
        // writes the rows with printf, at every verbosity.
        Level::Notice.print(report::HISTOGRAM_TITLE)?;
        Output::report().print(reports.collector.totals().latency.rows())?;
        Level::Notice.print(report::HISTOGRAM_END)?;
    }
    Level::Notice.print(reports.cumulative(end_ns, 0))?;
    reports.final_result(bench, end_ns, end)
}

fn say_interrupted(signal: Signal, end_ns: u64) {
    alert_line(format_args!(
        "wirebench: run interrupted by {signal} after {:.2}s: the report is of what ran until then",
        end_ns as f64 / 1e9
    ));
}

/// A signal stopped the run and some answers in flight did not come back
/// in time: the report is of what had answered, without waiting for the
/// loops, whose connections close with the process.
fn report_stalled(
    reports: &mut Reports<'_>,
    bench: &Bench,
    context: &LoopContext,
    signal: Signal,
    end_ns: u64,
) -> Result<(), OutputError> {
    reports.collect();
    final_report(reports, bench, end_ns, RunEnd::Interrupted)?;
    say_interrupted(signal, end_ns);
    let waiting = context.control.queue_stats().concurrency;
    alert_line(format_args!(
        "wirebench: {waiting} events still waited for the server's answers: they are not counted, and their \
         connections close with wirebench, without COM_QUIT"
    ));
    Ok(())
}

/// `--io`, resolved; `--poll` asked of the epoll backend is named as not
/// applying.
fn backend(bench: &Bench) -> Result<Backend, RunError> {
    let backend = Backend::resolve(bench.engine.io)?;
    if backend == Backend::Epoll && bench.engine.poll != PollMode::Sleep && !bench.mysql.dry_run {
        stderr_line(format_args!(
            "wirebench: --poll={} applies to the io_uring backend; the epoll backend waits in epoll_wait",
            if bench.engine.poll == PollMode::Spin { "spin" } else { "adaptive" }
        ));
    }
    Ok(backend)
}

/// When `--forced-shutdown` stops the run, in seconds from its start.
fn forced_shutdown_s(bench: &Bench) -> Option<u32> {
    let time = bench.general.time?;
    bench.general.forced_shutdown.grace_secs(Some(time)).map(|grace| time + grace)
}

/// sysbench's run header, before the connections open.
fn print_header(bench: &Bench, forced_shutdown_s: Option<u32>) -> Result<(), OutputError> {
    let general = &bench.general;
    let header = RunHeader {
        threads: general.threads,
        rate: general.rate.unwrap_or(0),
        report_interval: general.report_interval.unwrap_or(0),
        checkpoints: &general.report_checkpoints,
        debug: general.debug,
        validate: general.validate,
        rand_seed: bench.rand.seed,
        forced_shutdown_s,
    };
    Level::Notice.print(format_args!("{header}{}", report::INITIALIZING_WORKERS))
}

/// Waits for every loop; the first failure is the run's.
fn join_loops(handles: Vec<JoinHandle<Result<(), DriverError>>>) -> Result<(), RunError> {
    let mut first_error = None;
    for handle in handles {
        let error = match handle.join() {
            Ok(Ok(())) => continue,
            Ok(Err(e)) => RunError::Driver(e),
            Err(_) => RunError::LoopPanicked,
        };
        first_error.get_or_insert(error);
    }
    first_error.map_or(Ok(()), Err)
}
