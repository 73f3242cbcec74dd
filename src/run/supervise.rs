//! The report thread's work while the loops run: it sleeps until a loop
//! ends, the next interim report, checkpoint or forced shutdown is due, or
//! a signal comes.

use std::time::{Duration, Instant};

use super::interrupt::Interrupts;
use super::output::{fatal_line, OutputError};
use super::reports::Reports;
use super::RunOutcome;
use crate::cli::GeneralOptions;
use crate::driver::{Clock, Finished, RunControl};

/// When the report thread has something to do. Under `--start-at` every
/// instant counts from that common instant, not from this instance's own
/// start: a shard that started a few milliseconds late (sampling the
/// server, connecting) cuts its intervals where the other shards cut
/// theirs, and its first interval is that much shorter.
pub(super) struct ReportSchedule {
    /// When `--warmup-time` ends, until it has.
    warmup_end: Option<Instant>,
    /// `--report-interval`.
    interval: Option<Duration>,
    next_report: Option<Instant>,
    /// `--hdr-log` without `--report-interval`: a collection each second.
    next_log: Option<Instant>,
    /// A watch (`--metrics-listen`, `--web`, ...) without
    /// `--report-interval`: an interval each second, handed to it.
    next_watch: Option<Instant>,
    /// `--report-checkpoints`, sorted.
    checkpoints: std::iter::Peekable<std::vec::IntoIter<u64>>,
    /// `--time` plus `--forced-shutdown`'s grace period, in ns since the
    /// clock's start.
    forced_at_ns: Option<u64>,
    /// The end of `--time` (after the warm-up), if the run has one.
    time_end: Option<Instant>,
}

impl ReportSchedule {
    /// Report times count from the end of `--warmup-time`, which counts
    /// from the run's start: `--start-at`, which the clock started `late`
    /// after, else the clock's start. `watched`: a watch wants the figures
    /// as they come.
    pub(super) fn new(
        general: &GeneralOptions,
        clock: Clock,
        forced_shutdown_s: Option<u32>,
        late: Duration,
        watched: bool,
    ) -> Self {
        let interval = general.report_interval.filter(|i| *i > 0).map(|i| Duration::from_secs(u64::from(i)));
        let late_ns = u64::try_from(late.as_nanos()).unwrap_or(u64::MAX);
        let start = clock.started().checked_sub(late).unwrap_or_else(|| clock.started());
        let warmup_ns = secs_to_ns(general.warmup_time);
        let since_clock = |ns: u64| ns.saturating_sub(late_ns);
        let checkpoints: Vec<u64> =
            general.report_checkpoints.iter().map(|&c| since_clock(warmup_ns + secs_to_ns(c))).collect();
        let measured_from = start + Duration::from_nanos(warmup_ns);
        ReportSchedule {
            warmup_end: (warmup_ns > 0).then_some(measured_from),
            interval,
            next_report: interval.map(|i| measured_from + i),
            // The watch's intervals are collected, and logged, each second.
            next_log: (general.hdr_log.is_some() && interval.is_none() && !watched).then(|| measured_from + LOG_EVERY),
            next_watch: (watched && interval.is_none()).then(|| measured_from + WATCH_EVERY),
            checkpoints: checkpoints.into_iter().peekable(),
            forced_at_ns: forced_shutdown_s.map(|s| since_clock(secs_to_ns(s))),
            time_end: general.time.map(|t| measured_from + Duration::from_secs(u64::from(t))),
        }
    }

    /// Whether the interim report due at the end of `--time` (the last
    /// one within it) was due by `now` and not printed: the loops ended at
    /// that instant, before the report thread took the interval from them.
    /// It is printed after them, so that a run bounded by `--time` always
    /// reports its last interval.
    pub(super) fn last_report_owed(&self, now: Instant) -> bool {
        match (self.next_report, self.interval, self.time_end) {
            (Some(due), Some(every), Some(end)) => due <= end && end < due + every && due <= now,
            _ => false,
        }
    }

    /// The next instant something is due.
    fn next_wake(&mut self, clock: Clock) -> Option<Instant> {
        let at_ns = |ns: u64| clock.started() + Duration::from_nanos(ns);
        let checkpoint = self.checkpoints.peek().map(|&c| at_ns(c));
        let due = [
            self.warmup_end,
            self.next_report,
            self.next_log,
            self.next_watch,
            checkpoint,
            self.forced_at_ns.map(at_ns),
        ];
        due.into_iter().flatten().min()
    }
}

/// `--hdr-log`'s interval when there is no `--report-interval`.
const LOG_EVERY: Duration = Duration::from_secs(1);
/// The watch's interval when there is no `--report-interval`.
const WATCH_EVERY: Duration = Duration::from_secs(1);

pub(super) fn secs_to_ns(secs: u32) -> u64 {
    u64::from(secs) * 1_000_000_000
}

/// How long, after a signal, the answers in flight may take to come back
/// before the report is printed without them.
const IN_FLIGHT_AFTER_SIGNAL: Duration = Duration::from_secs(2);

/// Prints the interim reports and checkpoints until all `loops` have
/// ended, or the forced shutdown comes first, or a report cannot be
/// written. After a signal (which has stopped the loops) it waits for them
/// [`IN_FLIGHT_AFTER_SIGNAL`] at most.
pub(super) fn supervise(
    reports: &mut Reports,
    schedule: &mut ReportSchedule,
    loops: usize,
    finished: &Finished,
    control: &RunControl,
    clock: Clock,
    interrupts: &Interrupts,
) -> Result<RunOutcome, OutputError> {
    let mut ended = 0;
    let mut given_up_at = None;
    while ended < loops {
        let wake = [schedule.next_wake(clock), given_up_at].into_iter().flatten().min();
        if finished.wait(ended + 1, wake) {
            ended = finished.count().max(ended + 1);
            continue;
        }
        if let Some(signal) = interrupts.first_signal() {
            let at = *given_up_at.get_or_insert_with(|| Instant::now() + IN_FLIGHT_AFTER_SIGNAL);
            if Instant::now() >= at {
                return Ok(RunOutcome::Interrupted(signal));
            }
            continue;
        }
        end_warmup_if_due(reports, schedule, control, clock);
        // Loops that have finished no longer answer: the run is over.
        if ended == 0 {
            interim_if_due(reports, schedule, control, clock)?;
            watch_if_due(reports, schedule, control, clock)?;
            log_if_due(reports, schedule, clock);
        }
        checkpoint_if_due(reports, schedule, control, clock)?;
        if schedule.forced_at_ns.is_some_and(|at| clock.now_ns() >= at) {
            shut_down_forcibly(reports, control, clock)?;
            return Ok(RunOutcome::ForcedShutdown);
        }
    }
    Ok(interrupts.first_signal().map_or(RunOutcome::Completed, RunOutcome::Interrupted))
}

/// `--warmup-time` is over: what ran until now is dropped, as sysbench
/// master checkpoints away its warm-up. Each loop's answer to this
/// collection is its cut: the events it admits from then on take
/// `--events` permits and are counted, those it admitted before belong to
/// the warm-up however late they end, so the run counts exactly
/// `--events`.
fn end_warmup_if_due(reports: &mut Reports, schedule: &mut ReportSchedule, control: &RunControl, clock: Clock) {
    if schedule.warmup_end.is_some_and(|at| Instant::now() >= at) {
        schedule.warmup_end = None;
        reports.end_warmup(clock.now_ns());
        reports.forget_tardiness(control);
    }
}

fn log_if_due(reports: &mut Reports, schedule: &mut ReportSchedule, clock: Clock) {
    let Some(at) = schedule.next_log else { return };
    if Instant::now() >= at {
        reports.collect(clock.now_ns());
        schedule.next_log = Some(at + LOG_EVERY);
    }
}

fn watch_if_due(
    reports: &mut Reports,
    schedule: &mut ReportSchedule,
    control: &RunControl,
    clock: Clock,
) -> Result<(), OutputError> {
    let Some(at) = schedule.next_watch else { return Ok(()) };
    if Instant::now() >= at {
        reports.watch_tick(clock.now_ns(), control)?;
        schedule.next_watch = Some(at + WATCH_EVERY);
    }
    Ok(())
}

fn interim_if_due(
    reports: &mut Reports,
    schedule: &mut ReportSchedule,
    control: &RunControl,
    clock: Clock,
) -> Result<(), OutputError> {
    let (Some(at), Some(every)) = (schedule.next_report, schedule.interval) else { return Ok(()) };
    if Instant::now() >= at {
        reports.interim(clock.now_ns(), control)?;
        schedule.next_report = Some(at + every);
    }
    Ok(())
}

fn checkpoint_if_due(
    reports: &mut Reports,
    schedule: &mut ReportSchedule,
    control: &RunControl,
    clock: Clock,
) -> Result<(), OutputError> {
    if schedule.checkpoints.peek().is_some_and(|&at| clock.now_ns() >= at) {
        let now_ns = clock.now_ns();
        reports.checkpoint(now_ns, control)?;
        // Like sysbench, skip checkpoints already past (0, duplicates).
        while schedule.checkpoints.next_if(|&at| at <= now_ns).is_some() {}
    }
    Ok(())
}

/// `--forced-shutdown`: `--time` plus the grace period has passed and
/// events are still in flight. As sysbench's alarm handler does: stop, say
/// so, and print the cumulative report with the number of unfinished
/// events, without waiting for the loops (their events may never finish).
fn shut_down_forcibly(reports: &mut Reports, control: &RunControl, clock: Clock) -> Result<(), OutputError> {
    let now_ns = clock.now_ns();
    control.stop();
    reports.collect(now_ns);
    let unfinished = u32::try_from(control.queue_stats().concurrency).unwrap_or(u32::MAX);
    fatal_line("The --max-time limit has expired, forcing shutdown...");
    reports.print_final(now_ns, unfinished, "")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn general(args: &[&str]) -> GeneralOptions {
        let args = ["oltp_point_select"].iter().chain(args).chain(&["run"]).map(std::ffi::OsString::from);
        let Ok(crate::cli::Invocation::Bench(bench)) = crate::cli::parse(args) else { panic!("parsed") };
        bench.general
    }

    const TWO_S: Duration = Duration::from_secs(2);

    /// A shard whose clock started 20 ms after `--start-at` cuts its
    /// intervals at `--start-at` plus 2, 4 and 6 s, as the shards that
    /// started on time do, and its checkpoints and forced shutdown count
    /// from that instant too.
    #[test]
    fn a_late_start_keeps_the_common_clock() {
        let late = Duration::from_millis(20);
        let (clock, options) = (Clock::start(), ["--time=6", "--report-interval=2", "--report-checkpoints=3"]);
        let schedule = ReportSchedule::new(&general(&options), clock, Some(8), late, false);
        let start_at = clock.started() - late;
        assert_eq!(schedule.next_report, Some(start_at + TWO_S));
        assert_eq!(schedule.time_end, Some(start_at + 3 * TWO_S));
        assert_eq!(schedule.checkpoints.clone().collect::<Vec<_>>(), [2_980_000_000]);
        assert_eq!(schedule.forced_at_ns, Some(7_980_000_000));
        let on_time = ReportSchedule::new(&general(&options[..2]), clock, None, Duration::ZERO, false);
        assert_eq!(on_time.next_report, Some(clock.started() + TWO_S));
    }

    /// The report due at the end of `--time`, not taken because the loops
    /// ended first, is owed once it is due; an earlier one, or one after
    /// the end, is not; nor any without `--time`.
    #[test]
    fn the_report_due_at_the_end_of_time_is_owed() {
        let clock = Clock::start();
        let mut schedule =
            ReportSchedule::new(&general(&["--time=6", "--report-interval=2"]), clock, None, Duration::ZERO, false);
        let at = |s: u64| clock.started() + Duration::from_secs(s);
        schedule.next_report = Some(at(6));
        assert!(schedule.last_report_owed(at(6)));
        assert!(!schedule.last_report_owed(at(5)), "not due yet: a run that --events ended first");
        schedule.next_report = Some(at(4));
        assert!(!schedule.last_report_owed(at(7)), "not the last one within --time");
        schedule.next_report = Some(at(8));
        assert!(!schedule.last_report_owed(at(9)), "after --time");
        let untimed = ReportSchedule::new(&general(&["--report-interval=2"]), clock, None, Duration::ZERO, false);
        assert!(!untimed.last_report_owed(at(9)));
        let uneven =
            ReportSchedule::new(&general(&["--time=5", "--report-interval=2"]), clock, None, Duration::ZERO, false);
        assert!(uneven.next_report == Some(at(2)) && !uneven.last_report_owed(at(5)));
    }
}
