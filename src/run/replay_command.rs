//! `wirebench replay FILE`: the capture opened, the logins checked, the
//! loops and the capture's reader started, supervised and reported as a
//! run is (interim lines, `--server-stats`, the final report), then the
//! replay's own report: the per-statement table and the differences.
//! `replay_result.rs` sums up what the loops and the reader counted;
//! `replay_search.rs` is `replay FILE search`.

use std::fs::File;
use std::io::BufReader;
use std::path::Path;
use std::sync::{Arc, Mutex};

use wirebench_capture::format::{CaptureHeader, CaptureReader, Ending};

use super::benchmark::{start_clock, start_threads, supervise_to_report, Threads};
use super::interrupt::Interrupts;
use super::output::{alert_line, stderr_line, Level, Output};
use super::replay_result::{build_result, ReplayRan};
use super::result_sink::ResultSink;
use super::server_sampling::{open_sampler, start_sampling};
use super::setup::connect_options;
use super::shard_plan::{say_started, wait_for_start};
use super::{RunError, RunOutcome};
use crate::cli::Bench;
use crate::client::{ConnectOptions, Connection};
use crate::driver::replay::feed::feed_channel;
use crate::driver::replay::replay_tally::ReplayTally;
use crate::driver::replay::replayed_conn::ReplaySchedule;
use crate::driver::replay::{ReplayLoopPlan, ReplaySettings, OPEN_LEAD_NS};
use crate::driver::{
    allowed_cpus, check_loop_cpus, spawn_replay_loops, Backend, Clock, LoopContext, RunControl, ServerPlacement,
    ServerPlacements,
};
use crate::replay::{dispatch_capture, CaptureReplayOptions, DispatchPlan, Speed};
use crate::results::{OutputFormat, ResultLine};
use crate::stats::{Recording, StatsBoard};
use crate::transport::tls::ClientTls;
use crate::watch::Watch;

/// Batches a loop's feed holds: with [`BATCH_BYTES`](crate::driver::replay::feed::BATCH_BYTES)
/// each, the most a loop has read ahead.
const FEED_DEPTH: usize = 8;

/// How the file is read: large reads, one block of the capture at a time.
const READ_BUFFER: usize = 1 << 20;

/// The capture, its header read.
pub(super) type OpenCapture = CaptureReader<BufReader<File>>;

/// Opens the capture and reads its header: a file that is not a capture,
/// or a newer one, is refused before anything connects.
pub(super) fn open_capture(path: &Path) -> Result<OpenCapture, RunError> {
    let file = File::open(path).map_err(|source| RunError::CaptureFile { path: path.to_owned(), source })?;
    CaptureReader::open(BufReader::with_capacity(READ_BUFFER, file))
        .map_err(|error| RunError::CaptureUnreadable { path: path.to_owned(), error })
}

/// The logins of a replay, by the feed's login number: `--mysql-user`'s,
/// then each `--user-map` entry's.
fn logins(bench: &Bench, tls: Option<&ClientTls>, options: &CaptureReplayOptions) -> Vec<ConnectOptions> {
    let default = connect_options(bench, tls, 0);
    let mut logins = vec![default.clone()];
    for mapping in &options.users {
        let mut login = default.clone();
        login.user.clone_from(&mapping.user);
        login.password.clone_from(&mapping.password);
        logins.push(login);
    }
    logins
}

/// Logs in once as each login, into no database, before anything starts:
/// a login the server refuses is named with the captured users it stands
/// for and what to pass. The first connection's server version, and
/// whether the server runs on this host.
async fn check_logins(
    logins: &[ConnectOptions],
    options: &CaptureReplayOptions,
) -> Result<(Option<String>, bool), RunError> {
    let mut server = (None, true);
    for (n, login) in logins.iter().enumerate() {
        let mut probe = login.clone();
        probe.database = None;
        let conn = Connection::connect(&probe).await.map_err(|error| RunError::ReplayLogin {
            user: login.user.clone(),
            stands_for: options.stands_for(n),
            hint: login_hint(options, n),
            error: Box::new(error),
        })?;
        if n == 0 {
            let placements =
                ServerPlacements::look_up(std::iter::once(conn.endpoint()), |_| Some(conn.server_process()));
            server = (Some(conn.login().server_version.clone()), placements.all().all(ServerPlacement::on_this_host));
        }
        let _ = conn.quit().await;
    }
    Ok(server)
}

fn login_hint(options: &CaptureReplayOptions, n: usize) -> String {
    match n.checked_sub(1).and_then(|m| options.users.get(m)) {
        Some(mapping) => format!(
            "give a user and password the server accepts for the captured user {0}: --user-map={0}:USER:PASSWORD",
            mapping.captured
        ),
        None => "give a user the server accepts with --mysql-user and --mysql-password, or map the captured users \
                 with --user-map=CAPTURED:USER:PASSWORD"
            .to_owned(),
    }
}

/// The replay's loops: one per `--cpus` core, else one per core this
/// process may use, or a single one when the server shares this host's
/// cores (its connections leave the server the rest, as a run's do).
fn loop_cores(bench: &Bench, server_here: bool) -> Result<Vec<Option<usize>>, RunError> {
    if let Some(cpus) = &bench.engine.cpus {
        check_loop_cpus(cpus)?;
        return Ok(cpus.iter().map(|&c| Some(c)).collect());
    }
    let cpus = allowed_cpus().unwrap_or_default();
    if server_here || cpus.is_empty() {
        return Ok(vec![cpus.first().copied()]);
    }
    Ok(cpus.into_iter().map(Some).collect())
}

/// The replay's loops' backend: io_uring where the kernel allows it
/// (`--io=uring` fails where it does not); with `--io=epoll` or without
/// io_uring, the engine's socket loop (each socket waited on in `poll(2)`):
/// a replay's connections are the engine's loop's either way, never a
/// tokio runtime's.
fn replay_backend(bench: &Bench) -> Result<Backend, RunError> {
    Ok(Backend::resolve(bench.engine.io)?)
}

/// The loops' shared state: one slot per loop on the board (a replay's
/// connections come and go), the client's delay recorded.
fn replay_context(bench: &Bench, loops: usize) -> LoopContext {
    let per_loop = vec![1; loops];
    let recording = Recording { service_time: true, client_delay: true, statement_latency: false };
    LoopContext {
        board: StatsBoard::with_recording(&per_loop, &[], recording),
        control: RunControl::new(None, loops),
        clock: Clock::start(),
        deadline_ns: None,
        ignore: bench.mysql.ignore_errors.clone(),
        finished: Default::default(),
        usage: Default::default(),
        idle: None,
    }
}

/// One replay at `speed`, reported; what it found, for the result line or
/// a search step.
pub(super) fn replay_once(
    bench: &Bench,
    options: &CaptureReplayOptions,
    speed: Speed,
    (tls, runtime, interrupts): (Option<&ClientTls>, &tokio::runtime::Runtime, &Interrupts),
    sink: &mut ResultSink,
) -> Result<ReplayRan, RunError> {
    let reader = open_capture(&options.file)?;
    let header = reader.header().clone();
    let logins = logins(bench, tls, options);
    let (server_version, server_here) = match runtime.block_on(interrupts.or_signal(check_logins(&logins, options))) {
        Ok(checked) => checked?,
        Err(signal) => return Ok(ReplayRan::interrupted_early(signal)),
    };
    let cores = loop_cores(bench, server_here)?;
    let mut context = replay_context(bench, cores.len());
    let sampler = open_sampler(bench, || connect_options(bench, tls, 0))?;
    print_replay_header(options, &header, speed, cores.len())?;
    if let Err(signal) = wait_for_start(bench, runtime, interrupts) {
        return Ok(ReplayRan::interrupted_early(signal));
    }
    let server = start_sampling(bench, sampler)?;
    let late = start_clock(bench, &mut context, bench.general.start_at);
    say_started(bench, late);
    sink.clock_started(server_version.as_deref(), late);
    if let Some(watch) = sink.watch() {
        watch.replay_speed(speed.factor());
    }
    let schedule = ReplaySchedule { speed: speed.factor(), start_ns: context.clock.now_ns() + OPEN_LEAD_NS };
    let tally = Mutex::new(ReplayTally::default());
    let settings = Arc::new(ReplaySettings { logins, schedule, tally, backend: replay_backend(bench)? });
    let (senders, plans): (Vec<_>, Vec<_>) = cores
        .iter()
        .map(|&cpu| {
            let (sender, feed) = feed_channel(FEED_DEPTH);
            (sender, ReplayLoopPlan { cpu, feed })
        })
        .unzip();
    let handles = spawn_replay_loops(plans, &context, &settings).map_err(RunError::SpawnLoops)?;
    let plan = DispatchPlan {
        reader,
        feeds: senders,
        options: CaptureReplayOptions { speed, ..options.clone() },
        shard: bench.general.shard,
        clock: context.clock,
        schedule,
        control: context.control.clone(),
        deadline_ns: context.deadline_ns,
    };
    let reading = std::thread::Builder::new()
        .name("wirebench-capture".into())
        .spawn(move || dispatch_capture(plan))
        .map_err(RunError::SpawnLoops)?;
    let hdr_log = start_threads(bench, &context, (&sink.hdr_log_comment(), late))?;
    sink.hold_final();
    let threads = Threads { handles, hdr_log, hooks: None, sql_used: None, server };
    let outcome = supervise_to_report(bench, &context, (threads, late), None, interrupts, sink);
    // The loops are done (or the report was printed without them): the
    // reader is told to stop, and ends once it sees it.
    context.control.stop();
    let read = reading.join().map_err(|_| RunError::LoopPanicked)?;
    let outcome = outcome?;
    let tally = std::mem::take(&mut *settings.tally.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
    Ok(build_result(bench, options, speed, (&header, read), (tally, schedule.start_ns), outcome, sink))
}

/// The replay's header, in place of a run's: what is replayed, how fast,
/// on how many loops.
fn print_replay_header(
    options: &CaptureReplayOptions,
    header: &CaptureHeader,
    speed: Speed,
    loops: usize,
) -> Result<(), RunError> {
    let copies =
        if options.multiply > 1 { format!(", {} copies of each connection", options.multiply) } else { String::new() };
    let read_only = if options.read_only { ", read-only" } else { "" };
    Level::Notice.print(format_args!(
        "Replaying {} ({}: {}; answers {}) at speed {speed}{copies}{read_only} on {loops} event loop(s)\n\n",
        options.file.display(),
        header.source.name(),
        header.source_name,
        header.answers.name(),
    ))?;
    Ok(())
}

/// `wirebench replay FILE [run]`: one replay, its report, its result line,
/// its chart; then what went wrong that the report did not end on.
pub(super) fn execute_one(
    bench: &Bench,
    options: &CaptureReplayOptions,
    setup: (Option<&ClientTls>, &tokio::runtime::Runtime, &Interrupts),
    watch: Option<&Arc<Watch>>,
) -> Result<RunOutcome, RunError> {
    let mut sink = ResultSink::new(bench);
    sink.name_test("replay".to_owned());
    sink.watch_with(watch.cloned());
    let ran = replay_once(bench, options, options.speed, setup, &mut sink)?;
    let Some(result) = ran.result else { return Ok(ran.outcome) };
    Level::Notice.print(format_args!("{result}\n"))?;
    let line = ResultLine::Replay(Box::new(result));
    if bench.results.format == OutputFormat::Json {
        Output::Stdout.json_line(&line)?;
    }
    if let Some(watch) = watch {
        watch.line(&line);
    }
    let ResultLine::Replay(result) = line else { return Ok(ran.outcome) };
    sink.finish_run(bench)?;
    if let Some(Ending::Truncated { offset, reason }) = &ran.ending {
        stderr_line(format_args!(
            "wirebench: {} is cut off at byte {offset} ({reason}); what it held before that was replayed",
            options.file.display()
        ));
    }
    if let Some(error) = ran.read_error {
        return Err(RunError::CaptureDamaged { path: options.file.clone(), error });
    }
    if !result.connections.refused.is_empty() {
        let refused = &result.connections.refused;
        let each: Vec<String> = refused
            .iter()
            .map(|r| format!("{} as {} ({}): {}", r.connections, r.user, r.for_captured, r.error))
            .collect();
        alert_line(format_args!("wirebench: replay: logins refused: {}", each.join("; ")));
        return Err(RunError::ReplayLoginsRefused { connections: refused.iter().map(|r| r.connections).sum() });
    }
    Ok(ran.outcome)
}
