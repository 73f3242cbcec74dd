//! A fuzz run from start to summary: check the target, start the
//! workers, let the control connection watch the server, and on a failure
//! stop, confirm, minimise, save, and (with `--keep-going`) restart and go
//! on until `--time` is up.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::time::Instant;

use super::capture_seeds::read_capture_sessions;
use super::control::{Checker, Failure};
use super::corpus::{Corpus, Coverage};
use super::exec::Limits;
use super::failure::{handle_failure, FailureReport};
use super::fuzz_error::FuzzError;
use super::fuzz_options::FuzzOptions;
use super::lines::{err_line, out_line};
use super::login_probe::{probe_logins, save_login_finding, LoginFinding, LoginVerdict};
use super::pre_auth::{mode_line, FuzzMode, LoginAnswer};
use super::process_watch::ProcessWatch;
use super::progress::{banner, interim_line, summary, Progress};
use super::rig::Rig;
use super::run_clock::{sleep_until_end, RunClock, OUT_OF_TIME};
use super::safety;
use super::seeds::{pre_auth_seeds, recorded_seeds, seeds_from_sessions, Seeds};
use super::table_setup::{capture, Setup};
use super::vigil::Vigil;
use super::worker::{fuzz_worker, lock_shared, CampaignShared, Found};

/// How long a fuzzed packet's answer may take. Servers answer malformed
/// packets at once or wait for bytes that never come; waiting longer only
/// slows the run (the control connection, not this, decides about hangs).
pub const ANSWER_TIMEOUT: Duration = Duration::from_millis(200);
/// The control connection checks the server at least this often.
const BATCH: Duration = Duration::from_secs(1);
/// How long the workers may take to stop once halted (they stop at once;
/// this only bounds a bug).
const HALT_GRACE: Duration = Duration::from_secs(2);

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct FuzzSummary {
    pub progress: Progress,
    pub reproducers: Vec<PathBuf>,
    pub failures: usize,
}

enum EpochEnd {
    Time,
    Interrupted,
    Failure(Failure),
}

/// Watches a run's progress (its metrics): called once a second (or
/// each `--report-interval`) and once at the end.
pub type ProgressObserver = Box<dyn Fn(&Progress) + Send + Sync>;

/// Runs `wirebench fuzz`.
pub fn fuzz(options: &FuzzOptions) -> Result<FuzzSummary, FuzzError> {
    fuzz_observed(options, None)
}

/// Runs `wirebench fuzz`, its progress handed to `observer`.
pub fn fuzz_observed(options: &FuzzOptions, observer: Option<ProgressObserver>) -> Result<FuzzSummary, FuzzError> {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cores.min(options.threads as usize).max(1))
        .enable_all()
        .build()
        .map_err(FuzzError::Runtime)?;
    let summary = runtime.block_on(campaign(options, observer));
    // What was abandoned at the run's end (a session or a check still
    // waiting for a hung server) must not keep the process.
    runtime.shutdown_background();
    summary
}

fn clock_seed() -> u64 {
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64);
    (nanos % 1_000_000_000).max(1)
}

/// Checks the target, tries both forms of login (a finding when the
/// server completes one and not the other), chooses the mode (pre-auth
/// when the login is refused, or with `--pre-auth`) and says why, and
/// logs in the control connection: what must work before anything is
/// sent (exit status 1 otherwise).
async fn prepare_rig(
    options: &FuzzOptions,
    clock: &RunClock,
) -> Result<(Rig, Option<LoginFinding>, FuzzMode), FuzzError> {
    safety::check_target(&options.target.endpoint, options.allow_remote)?;
    let watch = ProcessWatch::start(&options.watch)?;
    let mut checker = Checker::new(&options.target, options.deadline, watch);
    let logged_in = LoginAnswer::LoggedIn;
    let asked = |finding| {
        (if options.pre_auth { FuzzMode::PreAuth { baseline: logged_in } } else { FuzzMode::Commands }, finding)
    };
    let (mode, login_finding, refusal) = match probe_logins(&options.target, options.deadline).await {
        LoginVerdict::Fine => {
            let (mode, finding) = asked(None);
            (mode, finding, None)
        }
        LoginVerdict::Unusable(source) => return Err(FuzzError::Connect { source }),
        LoginVerdict::Refused(error) => {
            let baseline = LoginAnswer::of_error(&error).unwrap_or(logged_in);
            (FuzzMode::PreAuth { baseline }, None, Some(error))
        }
        LoginVerdict::Finding(finding) => {
            if finding.with_database {
                checker.without_database();
            }
            let (mode, finding) = asked(Some(finding));
            (mode, finding, None)
        }
    };
    err_line(format_args!("{}", mode_line(&mode, options.pre_auth, refusal.as_ref())));
    match mode {
        FuzzMode::PreAuth { baseline } => checker.expect_login(baseline),
        FuzzMode::Commands => checker.connect().await.map_err(|source| FuzzError::Connect { source })?,
    }
    if let Some(failure) = checker.check().await {
        return Err(FuzzError::NotWellBefore { summary: failure.summary });
    }
    std::fs::create_dir_all(&options.fuzz_dir)
        .map_err(|source| FuzzError::FuzzDir { path: options.fuzz_dir.clone(), source })?;
    let rig = Rig {
        target: options.target.clone(),
        limits: Limits { connect: options.deadline, answer: ANSWER_TIMEOUT },
        checker,
        restart_cmd: options.restart_cmd.clone(),
        restarts: 0,
        known_down: false,
        vigil: Arc::new(Vigil::new(options.deadline)),
        restart_wait: options.restart_wait,
        waited: Duration::ZERO,
        setup: Setup::default(),
        end: clock.hard_end,
        judge: Arc::new(options.internal_errors.clone()),
    };
    Ok((rig, login_finding, mode))
}

/// `--seed-capture`'s sessions, said in the banner; none in pre-auth
/// mode, whose sessions end before the commands they hold.
fn captured_seeds(options: &FuzzOptions, sessions: Vec<Vec<Vec<u8>>>, pre_auth: bool) -> Vec<Vec<Vec<u8>>> {
    let Some(path) = &options.seed_capture else { return sessions };
    if pre_auth {
        out_line(format_args!(
            "  --seed-capture={}: not used in pre-auth mode (its sessions are commands after a login)",
            path.display()
        ));
        return Vec::new();
    }
    let commands: usize = sessions.iter().map(Vec::len).sum();
    out_line(format_args!(
        "  the corpus starts from {} sessions ({commands} commands) of --seed-capture={}",
        sessions.len(),
        path.display()
    ));
    sessions
}

async fn campaign(options: &FuzzOptions, observer: Option<ProgressObserver>) -> Result<FuzzSummary, FuzzError> {
    // A capture that cannot be read is refused before anything connects.
    let captured = match &options.seed_capture {
        Some(path) => read_capture_sessions(path)?,
        None => Vec::new(),
    };
    let clock = RunClock::start(options.time, options.overtime);
    let prepared = clock.bounded(prepare_rig(options, &clock)).await;
    let (mut rig, login_finding, mode) = prepared.ok_or(FuzzError::OutOfTimeBeforeFuzzing)??;
    let pre_auth = mode != FuzzMode::Commands;
    let seed = if options.seed == 0 { clock_seed() } else { options.seed };
    out_line(format_args!("{}", banner(options, seed).trim_end()));
    let captured = captured_seeds(options, captured, pre_auth);
    let shared = Arc::new(CampaignShared {
        target: options.target.clone(),
        limits: rig.limits,
        seed,
        corpus: Mutex::new(Corpus::default()),
        seeds: if pre_auth { Seeds { plans: pre_auth_seeds(), ..recorded_seeds() } } else { recorded_seeds() },
        started: clock.started,
        stop: AtomicBool::new(false),
        sessions: AtomicU64::new(0),
        finished: AtomicU64::new(0),
        checked_through: AtomicU64::new(0),
        packets: AtomicU64::new(0),
        withheld: AtomicU64::new(0),
        checks: AtomicU64::new(0),
        failures: AtomicU64::new(0),
        coverage: Mutex::new(Coverage::default()),
        history: Mutex::new(Default::default()),
        vigil: Vigil::new(options.deadline),
        login_form: login_finding.as_ref().map(LoginFinding::working_form),
        found: Mutex::new(Found::default()),
        judge: options.internal_errors.clone(),
        internal: Mutex::default(),
        pre_auth,
    });
    let recorded = seeds_from_sessions(&captured);
    *lock_shared(&shared.corpus) = Corpus::with_seeds(&[&shared.seeds.plans[..], &recorded[..]].concat());
    let reporter = options.report_interval.map(|every| tokio::spawn(report_loop(shared.clone(), every)));
    let observer = observer.map(Arc::new);
    let every = options.report_interval.unwrap_or(Duration::from_secs(1));
    let observing = observer.clone().map(|o| tokio::spawn(observe_loop(shared.clone(), o, every)));
    // Confirming and minimising stop by themselves at the hard end and
    // save what they have; anything still waiting a moment later is
    // abandoned: what was saved is in `shared.found`, and the summary says
    // what was not.
    let finding = find_failures(&shared, &mut rig, options, login_finding.as_ref(), &clock);
    let finished = clock.abandoned_after(options.deadline + HALT_GRACE, finding).await;
    if finished.is_none() {
        lock_shared(&shared.found).unsaved.push(format!(
            "{OUT_OF_TIME}: what still waited for the server was abandoned (a failure found then was not saved)"
        ));
    }
    if let Some(reporter) = reporter {
        reporter.abort();
    }
    let end = progress(&shared);
    if let (Some(observing), Some(observer)) = (observing, observer) {
        observing.abort();
        observer(&end);
    }
    write_states(&shared, options);
    let timeline = timeline(&shared, end.elapsed, options.report_interval);
    let found = std::mem::take(&mut *lock_shared(&shared.found));
    out_line(format_args!("{}", summary(&end, &timeline, &found.reproducers, &found.unsaved).trim_end()));
    Ok(FuzzSummary { progress: end, reproducers: found.reproducers, failures: end.failures })
}

/// The login finding's reproducer, then (without one, or with
/// `--keep-going`) fuzzing until the time is up or a failure stops it.
async fn find_failures(
    shared: &Arc<CampaignShared>,
    rig: &mut Rig,
    options: &FuzzOptions,
    login_finding: Option<&LoginFinding>,
    clock: &RunClock,
) {
    if let Some(finding) = login_finding {
        shared.failures.fetch_add(1, Ordering::Relaxed);
        let saved = save_login_finding(rig, options, shared.seed, finding).await;
        shared.found(saved);
        if !options.keep_going {
            return;
        }
    }
    // Pre-auth sessions name no table: there is nothing to record.
    let tables_at_start = match shared.pre_auth {
        true => Ok(Setup::default()),
        false => capture(&options.target, options.deadline).await,
    };
    let tables_at_start = tables_at_start.unwrap_or_else(|e| {
        err_line(format_args!("wirebench fuzz: cannot record the database's tables: {e}"));
        Setup::default()
    });
    fuzz_until_done(shared, rig, options, clock.fuzz_until, &tables_at_start).await;
}

/// Epochs of fuzzing, each ended by the time limit, Ctrl-C or a failure.
async fn fuzz_until_done(
    shared: &Arc<CampaignShared>,
    rig: &mut Rig,
    options: &FuzzOptions,
    end_at: Option<Instant>,
    tables_at_start: &Setup,
) {
    for epoch in 0u64.. {
        let failure = match fuzz_epoch(shared, rig, options.threads, epoch, end_at).await {
            EpochEnd::Time | EpochEnd::Interrupted => break,
            EpochEnd::Failure(failure) => failure,
        };
        rig.known_down = failure.kind.may_leave_it_down();
        shared.failures.fetch_add(1, Ordering::Relaxed);
        let history: Vec<_> = lock_shared(&shared.history).drain(..).collect();
        if history.is_empty() {
            lock_shared(&shared.found).unsaved.push(format!("{}: no session had run yet", failure.summary));
        } else {
            let server = rig.checker.server_version.clone();
            let report = FailureReport {
                options,
                seed: shared.seed,
                history: &history,
                checked_through: shared.checked_through.load(Ordering::Relaxed),
                failure: &failure,
                found_after: shared.started.elapsed(),
                server: &server,
                tables_at_start,
                pre_auth: shared.pre_auth,
            };
            shared.found(handle_failure(rig, &report).await);
        }
        let time_left = end_at.map_or(true, |at| Instant::now() < at);
        if !options.keep_going || !time_left {
            break;
        }
        if let Err(why) = rig.ensure_up().await {
            lock_shared(&shared.found).unsaved.push(format!("stopped early: {why}"));
            break;
        }
    }
}

async fn fuzz_epoch(
    shared: &Arc<CampaignShared>,
    rig: &mut Rig,
    threads: u32,
    epoch: u64,
    end_at: Option<Instant>,
) -> EpochEnd {
    shared.stop.store(false, Ordering::Relaxed);
    shared.vigil.resume();
    let workers: Vec<_> =
        (0..threads).map(|i| tokio::spawn(fuzz_worker(shared.clone(), epoch << 32 | u64::from(i)))).collect();
    let end = tokio::select! {
        failure = control_loop(shared, &mut rig.checker) => EpochEnd::Failure(failure),
        () = sleep_until_end(end_at) => EpochEnd::Time,
        () = interrupted() => EpochEnd::Interrupted,
    };
    shared.stop.store(true, Ordering::Relaxed);
    // The sessions stop where they are; those in flight join the history
    // with what they sent and received (for a hang, the likeliest culprits).
    shared.vigil.halt();
    let grace = Instant::now() + HALT_GRACE;
    for mut worker in workers {
        if tokio::time::timeout_at(grace, &mut worker).await.is_err() {
            worker.abort();
        }
    }
    if let EpochEnd::Failure(_) = end {
        return end;
    }
    // The last sessions ran after the last check: one more look.
    shared.checks.fetch_add(1, Ordering::Relaxed);
    match rig.checker.check().await {
        Some(failure) => EpochEnd::Failure(failure),
        None => end,
    }
}

/// Ctrl-C, or a SIGTERM (as `timeout` sends): the run ends with its summary.
async fn interrupted() {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = terminate => {}
    }
}

/// Checks the server after each batch (every second) and whenever a
/// session asks (its answer is late, or it ended as a dead server would
/// end it); returns the first failure.
async fn control_loop(shared: &CampaignShared, checker: &mut Checker) -> Failure {
    loop {
        tokio::select! {
            () = tokio::time::sleep(BATCH) => {}
            () = shared.vigil.asked() => {}
        }
        if let Some(failure) = lock_shared(&shared.internal).next.take() {
            return failure;
        }
        shared.checks.fetch_add(1, Ordering::Relaxed);
        let mark = shared.finished.load(Ordering::Relaxed);
        let began = Instant::now();
        match checker.check().await {
            Some(failure) => return failure,
            None => {
                shared.checked_through.store(mark, Ordering::Relaxed);
                shared.vigil.check_passed(began);
            }
        }
    }
}

fn progress(shared: &CampaignShared) -> Progress {
    Progress {
        elapsed: shared.started.elapsed(),
        sessions: shared.finished.load(Ordering::Relaxed),
        packets: shared.packets.load(Ordering::Relaxed),
        withheld: shared.withheld.load(Ordering::Relaxed),
        states: lock_shared(&shared.coverage).len(),
        corpus: lock_shared(&shared.corpus).len(),
        checks: shared.checks.load(Ordering::Relaxed),
        failures: shared.failures.load(Ordering::Relaxed) as usize,
    }
}

async fn report_loop(shared: Arc<CampaignShared>, every: Duration) {
    let mut previous = progress(&shared);
    let mut next = Instant::now() + every;
    loop {
        tokio::time::sleep_until(next).await;
        next += every;
        let now = progress(&shared);
        out_line(interim_line(&now, &previous));
        previous = now;
    }
}

async fn observe_loop(shared: Arc<CampaignShared>, observer: Arc<ProgressObserver>, every: Duration) {
    let mut next = Instant::now() + every;
    loop {
        tokio::time::sleep_until(next).await;
        next += every;
        observer(&progress(&shared));
    }
}

/// Distinct states at each report interval (or at ten points of the run).
fn timeline(shared: &CampaignShared, elapsed: Duration, interval: Option<Duration>) -> Vec<(u64, usize)> {
    let step = interval.unwrap_or(elapsed / 10).max(Duration::from_secs(1));
    let coverage = lock_shared(&shared.coverage);
    let mut points = Vec::new();
    let mut at = step;
    while at <= elapsed {
        points.push((at.as_secs(), coverage.count_at(at)));
        at += step;
    }
    points
}

/// The distinct states, one per line, in `--fuzz-dir`/states.txt.
fn write_states(shared: &CampaignShared, options: &FuzzOptions) {
    let text: String = lock_shared(&shared.coverage).states().iter().map(|s| format!("{s}\n")).collect();
    let path = options.fuzz_dir.join("states.txt");
    if let Err(e) = std::fs::write(&path, text) {
        err_line(format_args!("wirebench fuzz: cannot write {}: {e}", path.display()));
    }
}
