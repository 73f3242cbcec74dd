//! The `run` command: the header, the connections, the loops started and
//! supervised, the final report.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use super::idle_connections;
use super::interrupt::{Interrupts, Signal};
use super::output::{alert_line, stderr_line, Console, Level, Output, OutputError};
use super::plan::{plan_loops, ConnectionMaker, Loops};
use super::reports::{print_limit_reached, print_threads_starting, Reports};
use super::result_sink::ResultSink;
use super::server_sampling::{open_sampler, start_sampling, ServerSampling};
use super::setup::{connect_options, rand_params, seed};
use super::shard_plan::{say_started, wait_for_start, ShardThreads};
use super::supervise::{secs_to_ns, supervise, ReportSchedule};
use super::{RunError, RunOutcome};
use crate::cli::{Bench, GeneralOptions, Personality};
use crate::driver::{self, Backend, Clock, LoopContext, LoopUsage, PollMode, RunControl, Stalls};
use crate::lua::ReportHooks;
use crate::rand::shard_seed;
use crate::results::{OutputFormat, RunEnd};
use crate::server_stats::{ServerBlock, ServerResult};
use crate::stats::report::{self, RunHeader};
use crate::stats::{
    ClientCpuBlock, ClientDelay, ClientLoad, Collector, HdrLog, RateSummary, Recording, StatsBoard, ToleratedBlock,
};
use crate::transport::tls::ClientTls;
use crate::workload::{StatementKind, Workload};

pub(super) fn run_benchmark(
    bench: &Bench,
    threads: ShardThreads,
    tls: Option<&ClientTls>,
    workload: Arc<dyn Workload>,
    runtime: &tokio::runtime::Runtime,
    interrupts: &Interrupts,
    sink: &mut ResultSink,
) -> Result<RunOutcome, RunError> {
    let backend = backend(bench)?;
    if let Some(cpus) = &bench.engine.cpus {
        driver::check_loop_cpus(cpus)?;
    }
    let (params, seed) = (rand_params(bench)?, seed(bench));
    let forced_shutdown_s = forced_shutdown_s(bench);
    print_header(bench, forced_shutdown_s)?;
    let maker = ConnectionMaker::new(bench, workload, params, seed, threads)?;
    let plans = match plan_loops(bench, tls, &maker, runtime, interrupts, backend)? {
        Ok(plans) => plans,
        Err(signal) => {
            alert_line(format_args!("wirebench: run interrupted by {signal} while connecting: no event ran"));
            return Ok(RunOutcome::Interrupted(signal));
        }
    };
    let sampler = open_sampler(bench, || connect_options(bench, tls, 0))?;
    let shard_seed = shard_seed(seed, bench.general.shard.index());
    let per_loop = plans.connections_per_loop();
    let mut context = unstarted_context(bench, &per_loop, shard_seed, StatementKind::NAMES);
    let options_for = |g| connect_options(bench, tls, g);
    idle_connections::attach(bench, threads.total, per_loop.len(), options_for, &mut context, sink)?;
    if let Err(signal) = wait_for_start(bench, runtime, interrupts) {
        alert_line(format_args!("wirebench: run interrupted by {signal} while waiting for --start-at: no event ran"));
        return Ok(RunOutcome::Interrupted(signal));
    }
    let server = start_sampling(bench, sampler)?;
    let late = start_clock(bench, &mut context, bench.general.start_at);
    say_started(bench, late);
    sink.clock_started(maker.server_version(), late);
    let hdr_log = start_threads(bench, &context, (&sink.hdr_log_comment(), late))?;
    let handles = match plans {
        Loops::Net(plans) => {
            say_waits(plans.iter().map(|plan| (plan.cpu, &plan.wait)));
            driver::spawn_loops(plans, backend, &context)
        }
        Loops::Dry(plans) => driver::backends::dry::spawn_dry_loops(plans, &context),
    }
    .map_err(RunError::SpawnLoops)?;
    let threads = Threads { handles, hdr_log, hooks: None, sql_used: None, server };
    supervise_to_report(bench, &context, (threads, late), forced_shutdown_s, interrupts, sink)
}

/// The threads of a run and what their reports need besides the loops'
/// data: `--hdr-log`, and a Lua script's report hooks, which replace the
/// reports.
pub(super) struct Threads<E> {
    pub(super) handles: Vec<JoinHandle<Result<(), E>>>,
    pub(super) hdr_log: Option<HdrLog>,
    pub(super) hooks: Option<ReportHooks>,
    /// A Lua script's flag: it made a database driver (see `Reports::sql_only_after`).
    pub(super) sql_used: Option<Arc<AtomicBool>>,
    /// `--server-stats`: the server's sampling, its first sample taken.
    pub(super) server: Option<ServerSampling>,
}

/// At `--verbosity=4` or more, on stderr: how each loop (on its core, if
/// pinned) waits, and why (see `driver::plan_wait`).
pub(super) fn say_waits<'w>(loops: impl Iterator<Item = (Option<usize>, &'w driver::LoopWait)>) {
    for (index, (cpu, wait)) in loops.enumerate() {
        say_engine_choice(wait.describe(index, cpu));
    }
}

/// At `--verbosity=4` or more, on stderr, `wirebench: ` and what the
/// engine chose. Installed as sysbench, never: its output at every
/// verbosity is sysbench's.
pub(super) fn say_engine_choice(choice: impl std::fmt::Display) {
    let console = Console::current();
    if console.shows(Level::Info) && console.personality == Personality::Wirebench {
        stderr_line(format_args!("wirebench: {choice}"));
    }
}

/// Each kind of server deviation the connections tolerated so far, said
/// once per run on standard error (docs/connecting.md has the table).
pub(super) fn say_tolerated() {
    for kind in crate::client::tolerance::unsaid() {
        stderr_line(format_args!("wirebench: warning: {}", kind.warning()));
    }
}

/// Just before the threads start: `--hdr-log` opened (a path that cannot
/// be written ends the command before any load), sysbench's lines, and
/// the warm-up begun.
/// `log_comment`: the log's line naming its shard and run; `late`: how
/// long after `--start-at` the clock started.
pub(super) fn start_threads(
    bench: &Bench,
    context: &LoopContext,
    (log_comment, late): (&str, Duration),
) -> Result<Option<HdrLog>, RunError> {
    let hdr_log = open_hdr_log(&bench.general, (context.clock, late), log_comment)?;
    say_tolerated();
    print_threads_starting(&bench.general)?;
    Level::Notice.print(report::THREADS_STARTED)?;
    if general_warmup(bench) > 0 {
        context.control.start_warmup();
        Level::Notice.print(report::WarmingUp(general_warmup(bench)))?;
    }
    Ok(hdr_log)
}

/// From the threads' start to the final report: interim reports, the end
/// of the run (limits, a signal, a fatal error), and the report of what
/// ran, then `--format`'s final result. Loop threads and the Lua engine's
/// threads alike.
/// `late`: how long after `--start-at` the clock started, which the
/// report times do not add (see [`ReportSchedule`]).
pub(super) fn supervise_to_report<E>(
    bench: &Bench,
    context: &LoopContext,
    (threads, late): (Threads<E>, Duration),
    forced_shutdown_s: Option<u32>,
    interrupts: &Interrupts,
    sink: &mut ResultSink,
) -> Result<RunOutcome, RunError>
where
    RunError: From<E>,
{
    interrupts.attach(&context.control, &context.finished);
    let general = &bench.general;
    let Threads { handles, hdr_log, hooks, sql_used, server } = threads;
    let watched = sink.watching();
    let mut reports = Reports::new(Collector::new(context.board.clone()), general, hdr_log, hooks, sink);
    if let Some(sql_used) = sql_used {
        reports.sql_only_after(sql_used);
    }
    if let Some(server) = server {
        reports.sample_server(server);
    }
    let forced_at = forced_shutdown_s.or(last_resort_s(bench));
    let mut schedule = ReportSchedule::new(general, context.clock, forced_at, late, watched);
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
        RunOutcome::ForcedShutdown => {
            reports.watch_tail(end_ns, &context.control)?;
            let rate = reports.rate_summary(&context.control, end_ns);
            // The report is printed; the loops may still be sending.
            let server = server_block(&mut reports, true)?;
            reports.final_result(end_ns, rate, RunEnd::ForcedShutdown, server)?;
            return Ok(outcome);
        }
        RunOutcome::Interrupted(signal) if finished.count() < loops => {
            report_stalled(&mut reports, general, context, signal, end_ns)?;
            return Ok(outcome);
        }
        _ => {}
    }
    // The report of what ran comes first, even when a loop failed: main
    // then prints the error.
    let joined = join_loops(handles);
    if outcome == RunOutcome::Completed && schedule.last_report_owed(Instant::now()) {
        reports.last_interim(end_ns, control)?;
    }
    reports.drain(end_ns);
    reports.watch_tail(end_ns, &context.control)?;
    if joined.is_ok() && outcome == RunOutcome::Completed {
        print_limit_reached(general, reports.collector.totals().counters.events)?;
    }
    let delay = ClientDelay::of(reports.collector.totals().client_delay());
    let client = client_load(&context.usage, &context.control).map(|load| ClientLoad { delay, ..load });
    reports.client_load(client);
    let rate = reports.rate_summary(&context.control, end_ns).map(|rate| RateSummary { client, ..rate });
    let end = run_end(outcome, context.control.stalls());
    let done = RunEnding { end, usage: Some(&context.usage), loops_running: false };
    final_report(&mut reports, general, end_ns, rate, done)?;
    if let RunOutcome::Interrupted(signal) = outcome {
        say_interrupted(signal, end_ns);
    }
    joined.map(|()| match outcome {
        RunOutcome::Completed => say_if_cut(context.control.stalls(), general.time),
        other => other,
    })
}

/// How a run that reached its final report ended, for the results.
fn run_end(outcome: RunOutcome, stalls: Stalls) -> RunEnd {
    match outcome {
        RunOutcome::Completed if stalls.connections > 0 => RunEnd::Cut,
        RunOutcome::Completed => RunEnd::Completed,
        RunOutcome::ForcedShutdown | RunOutcome::Cut { .. } => RunEnd::ForcedShutdown,
        RunOutcome::Interrupted(_) => RunEnd::Interrupted,
    }
}

/// `--hdr-log`, its start time that of the measured run: the clock's
/// start, or the end of the warm-up, which counts from `--start-at` (the
/// clock started `late` after it).
fn open_hdr_log(
    general: &GeneralOptions,
    (clock, late): (Clock, Duration),
    comment: &str,
) -> Result<Option<HdrLog>, RunError> {
    let Some(path) = &general.hdr_log else { return Ok(None) };
    let measured_from = match general.warmup_time {
        0 => clock.started(),
        warmup => clock.started().checked_sub(late).unwrap_or(clock.started()) + Duration::from_secs(warmup.into()),
    };
    let now = Instant::now();
    let start =
        SystemTime::now() + measured_from.saturating_duration_since(now) - now.saturating_duration_since(measured_from);
    Ok(Some(HdrLog::create(path, start, general.open_loop(), comment)?))
}

/// The loops' shared state, made before `--start-at` is waited for: its
/// allocations take milliseconds, which would make the start late.
/// `kind_names`: the statement kinds the loops count apart (none for a
/// Lua script, whose statements have no kind: each kind's histograms take
/// about a megabyte per state).
pub(super) fn unstarted_context(
    bench: &Bench,
    per_loop: &[usize],
    seed: u32,
    kind_names: &'static [&'static str],
) -> LoopContext {
    let general = &bench.general;
    let control = match (general.rate, &general.rate_stages) {
        (_, Some(stages)) => RunControl::with_stages(per_loop, stages, general.warmup_time, seed, general.rate_arrival),
        (Some(rate), None) => RunControl::with_arrival(general.events, per_loop, rate, seed, general.rate_arrival),
        (None, None) => RunControl::new(general.events, per_loop.len()),
    };
    LoopContext {
        board: StatsBoard::with_recording(per_loop, kind_names, recording(bench)),
        control,
        clock: Clock::start(),
        deadline_ns: None,
        ignore: bench.mysql.ignore_errors.clone(),
        finished: Default::default(),
        usage: Default::default(),
        idle: None,
    }
}

/// Starts the run's clock now, how long after `start_at` that is; `--time`
/// does not add that lateness, so that every shard ends at the same
/// instant.
pub(super) fn start_clock(bench: &Bench, context: &mut LoopContext, start_at: Option<SystemTime>) -> Duration {
    let general = &bench.general;
    let late = start_at.map_or(Duration::ZERO, |at| SystemTime::now().duration_since(at).unwrap_or_default());
    let late_ns = late.as_nanos() as u64;
    if let (Some(time), None) = (general.time, forced_shutdown_s(bench)) {
        let cut_ns = secs_to_ns(time) + secs_to_ns(general.warmup_time) + ANSWER_GRACE_NS;
        context.control.cut_at(cut_ns.saturating_sub(late_ns));
    }
    // --warmup-time runs before the measured --time, as in sysbench master.
    context.deadline_ns =
        general.time.map(|t| (secs_to_ns(t) + secs_to_ns(general.warmup_time)).saturating_sub(late_ns));
    context.clock = Clock::start();
    late
}

/// The latencies an output of this run will show (each costs the loops an
/// update per query): `--format=json` lists every statement kind's.
fn recording(bench: &Bench) -> Recording {
    let general = &bench.general;
    let json = bench.results.format == OutputFormat::Json;
    Recording {
        service_time: general.open_loop(),
        client_delay: general.open_loop(),
        statement_latency: general.per_statement || general.hdr_log.is_some() || json,
    }
}

/// How a run that reaches its final report ended.
struct RunEnding<'a> {
    end: RunEnd,
    /// The loops' CPU time, once they have all ended.
    usage: Option<&'a LoopUsage>,
    /// Whether the loops may still be sending (a signal's report that did
    /// not wait for them).
    loops_running: bool,
}

/// sysbench's final report (with `--histogram`, the histogram first),
/// with wirebench's additions after its latency block (the loops' CPU time
/// when they spun, invoked as wirebench), the server's block after it
/// (`--server-stats`, invoked as wirebench), the line on failed reconnects,
/// and the final result of `--format`.
fn final_report(
    reports: &mut Reports,
    general: &GeneralOptions,
    end_ns: u64,
    rate: Option<RateSummary>,
    done: RunEnding<'_>,
) -> Result<(), OutputError> {
    let RunEnding { end, usage, loops_running } = done;
    if general.histogram {
        // sysbench logs the title and the end, but sb_histogram_print()
        // writes the rows with printf, at every verbosity.
        Level::Notice.print(report::HISTOGRAM_TITLE)?;
        Output::report().print(reports.collector.totals().sysbench_latency().rows())?;
        Level::Notice.print(report::HISTOGRAM_END)?;
    }
    say_tolerated();
    let mut additions = reports.additions(rate);
    let wirebench = Console::current().personality == Personality::Wirebench;
    let tolerated = crate::client::tolerance::tally();
    if wirebench && !tolerated.is_empty() {
        additions += &ToleratedBlock { deviations: &tolerated }.to_string();
    }
    if let Some(idle) = reports.idle_tally().filter(|_| wirebench) {
        additions += &idle.to_string();
    }
    if let Some(usage) = usage.filter(|u| u.spun() && wirebench) {
        additions += &ClientCpuBlock { cpu: usage.cpu(), polling: usage.spinning() }.to_string();
    }
    reports.print_final(end_ns, 0, &additions)?;
    let server = server_block(reports, loops_running)?;
    say_failed_reconnects(reports.collector.totals().counters.failed_reconnects)?;
    reports.final_result(end_ns, rate, end, server)
}

/// The server's totals (`--server-stats`), sampled now, and invoked as
/// wirebench their block after the report.
fn server_block(reports: &mut Reports, loops_running: bool) -> Result<Option<ServerResult>, OutputError> {
    let server = reports.server_totals(loops_running);
    if let Some(result) = server.as_ref().filter(|_| Console::current().personality == Personality::Wirebench) {
        Level::Notice.print(ServerBlock { result })?;
    }
    Ok(server)
}

/// How hard the loops worked, once they have all ended.
fn client_load(usage: &LoopUsage, control: &RunControl) -> Option<ClientLoad> {
    let load = usage.load(control.span_work())?;
    Some(ClientLoad {
        busy_share: load.busy_share,
        run_delay_s: load.run_delay.as_secs_f64(),
        core_wait_share: load.core_wait_share,
        delay: None,
    })
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
    reports: &mut Reports,
    general: &GeneralOptions,
    context: &LoopContext,
    signal: Signal,
    end_ns: u64,
) -> Result<(), OutputError> {
    reports.collect(end_ns);
    reports.watch_tail(end_ns, &context.control)?;
    let rate = reports.rate_summary(&context.control, end_ns);
    // The loops have not ended: their CPU time is not known.
    let done = RunEnding { end: RunEnd::Interrupted, usage: None, loops_running: true };
    final_report(reports, general, end_ns, rate, done)?;
    say_interrupted(signal, end_ns);
    let waiting = context.control.queue_stats().concurrency;
    alert_line(format_args!(
        "wirebench: {waiting} events still waited for the server's answers: they are not counted, and their \
         connections close with wirebench, without COM_QUIT"
    ));
    Ok(())
}

/// How long after `--time` the loops still wait for the answers to the
/// events in flight before the run is cut (without `--forced-shutdown`,
/// which sets its own grace). A healthy server answers them within
/// milliseconds; sysbench waits for them without limit, so a server that
/// stopped answering hangs it.
pub(super) const ANSWER_GRACE_NS: u64 = 1_000_000_000;

/// When the report thread stops waiting for loops that did not end after
/// the cut (they always do; this keeps `--time`'s promise if one did not),
/// as `--forced-shutdown` would, in seconds from the start.
fn last_resort_s(bench: &Bench) -> Option<u32> {
    let general = &bench.general;
    general.time.map(|time| time.saturating_add(general.warmup_time).saturating_add(LAST_RESORT_AFTER_S))
}

const LAST_RESORT_AFTER_S: u32 = 10;

/// After sysbench's report lines, so that its parsers read them unchanged:
/// attempts to reconnect that failed, which sysbench's `reconnects` does
/// not count (it retries until one works).
fn say_failed_reconnects(failed: u64) -> Result<(), OutputError> {
    if failed == 0 {
        return Ok(());
    }
    Level::Notice.line(format_args!(
        "wirebench: failed reconnect attempts: {failed} (refused, timed out, or cut off at the end of the run; \
         reconnects counts the connections opened again)"
    ))
}

/// A run whose time was up while connections still waited for answers was
/// cut: says so, with how many and for how long, on stderr.
fn say_if_cut(stalls: Stalls, time: Option<u32>) -> RunOutcome {
    if stalls.connections == 0 {
        return RunOutcome::Completed;
    }
    stderr_line(format_args!(
        "wirebench: the run was cut {:.1} s after --time={}: {} connection(s) still waited for the server's answer, \
         the longest for {:.1} s; their events in flight are not counted",
        ANSWER_GRACE_NS as f64 / 1e9,
        time.unwrap_or(0),
        stalls.connections,
        stalls.longest_wait_ns as f64 / 1e9,
    ));
    RunOutcome::Cut { stalled: stalls.connections }
}

/// `--io`, resolved; `--poll` asked of the epoll backend is named as not
/// applying, and the retired `--poll=adaptive` as sleeping.
pub(super) fn backend(bench: &Bench) -> Result<Backend, RunError> {
    let backend = Backend::resolve(bench.engine.io)?;
    if bench.mysql.dry_run {
        return Ok(backend);
    }
    if bench.engine.poll == PollMode::AdaptiveRetired {
        stderr_line(format_args!(
            "wirebench: --poll=adaptive is retired and waits as --poll=sleep: spinning adaptively gained no \
             more than the rounds' spread; --poll=spin spins (docs/benchmarking.md#adaptive-spinning-against-sleeping)"
        ));
    }
    if backend == Backend::Tokio && bench.engine.poll == PollMode::Spin {
        stderr_line(format_args!(
            "wirebench: --poll=spin applies to the io_uring backend; the epoll backend waits in epoll_wait"
        ));
    }
    Ok(backend)
}

/// When `--forced-shutdown` stops the run, in seconds from its start
/// (after `--warmup-time` and `--time`).
pub(super) fn forced_shutdown_s(bench: &Bench) -> Option<u32> {
    let time = bench.general.time?;
    let grace = bench.general.forced_shutdown.grace_secs(Some(time))?;
    Some(general_warmup(bench).saturating_add(time).saturating_add(grace))
}

fn general_warmup(bench: &Bench) -> u32 {
    bench.general.warmup_time
}

/// sysbench's run header, before the connections open.
pub(super) fn print_header(bench: &Bench, forced_shutdown_s: Option<u32>) -> Result<(), OutputError> {
    let general = &bench.general;
    let stages: Vec<(u32, u32)> =
        general.rate_stages.iter().flat_map(|s| s.stages()).map(|stage| (stage.rate, stage.secs)).collect();
    let header = RunHeader {
        threads: general.threads,
        warmup_s: general.warmup_time,
        rate: general.rate.unwrap_or(0),
        rate_stages: &stages,
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
fn join_loops<E>(handles: Vec<JoinHandle<Result<(), E>>>) -> Result<(), RunError>
where
    RunError: From<E>,
{
    let mut first_error = None;
    for handle in handles {
        let error = match handle.join() {
            Ok(Ok(())) => continue,
            Ok(Err(e)) => RunError::from(e),
            Err(_) => RunError::LoopPanicked,
        };
        first_error.get_or_insert(error);
    }
    first_error.map_or(Ok(()), Err)
}
