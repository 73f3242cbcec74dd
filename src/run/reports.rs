//! What the report thread prints while the loops run and at the end:
//! sysbench's interim lines, checkpoint reports and final report.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::loop_load::LoopBusyMeter;
use super::output::{fatal_line, stderr_line, Console, Level, OutputError};
use super::result_sink::{IntervalHandover, IntervalKind, ResultSink};
use super::server_sampling::ServerSampling;
use crate::cli::{GeneralOptions, Personality};
use crate::driver::{Arrival, RunControl, Tardiness};
use crate::lua::ReportHooks;
use crate::results::record::Measured;
use crate::results::RunEnd;
use crate::server_stats::{EdgeCut, SamplingMode, ServerInterimLine, ServerResult};
use crate::stats::report::{ArrivalStats, CheckpointLine, FinalReport, InterimReport, QueueStats};
use crate::stats::{
    ClientLoad, Collector, Counters, ErrorCodes, HdrLog, Interval, PerStatementBlock, PercentileBlock, RateSummary,
};

/// How long the report thread waits for the loops to hand over their data.
const COLLECT_TIMEOUT: Duration = Duration::from_millis(50);

/// What the report thread keeps between reports.
pub(super) struct Reports<'a> {
    pub(super) collector: Collector,
    /// Where `--format`'s lines go.
    sink: &'a mut ResultSink,
    /// Data a checkpoint collected that the next interim line must still show.
    owed: Interval,
    /// Its ignored errors by code.
    owed_errors: ErrorCodes,
    /// The loops' busy share per interval.
    loop_load: LoopBusyMeter,
    percentile: u32,
    /// `--percentile`'s whole list.
    percentiles: Vec<f64>,
    per_statement: bool,
    threads: u32,
    last_interim_ns: u64,
    last_checkpoint_ns: u64,
    /// When the measured run began: the start, or the end of `--warmup-time`.
    measured_from_ns: u64,
    /// `--warmup-time` is running: nothing is logged.
    warming: bool,
    /// `--hdr-log`, until a write fails.
    hdr_log: Option<HdrLog>,
    /// When the last collection was (ns since the start): where the next
    /// logged interval begins.
    last_collect_ns: u64,
    /// A Lua script's `sysbench.hooks.report_*`, which replace the reports.
    hooks: Option<ReportHooks>,
    /// A Lua script's: set once it made a database driver, before which
    /// sysbench reports events only. `None`: the built-in tests, always SQL.
    sql_used: Option<Arc<AtomicBool>>,
    /// `--server-stats`: the server's sampling.
    server: Option<ServerSampling>,
    /// When the last collection ran: the run's side of an edge of the
    /// server's totals.
    last_cut: EdgeCut,
    /// The arrivals that had not started on time at the last interim line.
    last_tardiness: Tardiness,
    /// ... and where the totals begin (the end of `--warmup-time`, the
    /// last checkpoint), which the totals leave out.
    totals_tardiness: Tardiness,
    /// What `--rate` or `--rate-stages` asked for.
    asked: RateAsked,
}

/// What `--rate` or `--rate-stages` asked for, for the reports' rate block.
#[derive(Debug, Clone, Copy)]
struct RateAsked {
    /// `--rate`; `None` under stages (and with no target).
    rate: Option<u32>,
    arrival: &'static str,
    threads: u32,
    /// When the stages end (ns since the start, the warm-up included).
    stages_end_ns: Option<u64>,
}

impl RateAsked {
    fn of(general: &GeneralOptions) -> RateAsked {
        RateAsked {
            rate: general.rate,
            arrival: match general.rate_arrival {
                Arrival::Poisson => "poisson",
                Arrival::Fixed => "fixed",
            },
            threads: general.threads,
            stages_end_ns: general
                .time
                .map(|t| Duration::from_secs(u64::from(t) + u64::from(general.warmup_time)).as_nanos() as u64),
        }
    }
}

impl<'a> Reports<'a> {
    pub(super) fn new(
        collector: Collector,
        general: &GeneralOptions,
        hdr_log: Option<HdrLog>,
        hooks: Option<ReportHooks>,
        sink: &'a mut ResultSink,
    ) -> Self {
        Reports {
            owed: Interval::new(collector.board().kind_names()),
            owed_errors: ErrorCodes::default(),
            loop_load: LoopBusyMeter::start(),
            collector,
            sink,
            percentile: u32::from(general.percentile.unwrap_or(0)),
            percentiles: general.percentiles.clone(),
            per_statement: general.per_statement,
            threads: general.threads,
            last_interim_ns: 0,
            last_checkpoint_ns: 0,
            measured_from_ns: 0,
            warming: general.warmup_time > 0,
            hdr_log,
            last_collect_ns: 0,
            hooks,
            sql_used: None,
            server: None,
            last_cut: (Instant::now(), Instant::now()),
            last_tardiness: Tardiness::default(),
            totals_tardiness: Tardiness::default(),
            asked: RateAsked::of(general),
        }
    }

    /// Samples the server at each interval and at the end.
    pub(super) fn sample_server(&mut self, server: ServerSampling) {
        self.server = Some(server);
    }

    /// Reports SQL statistics only once `sql_used` is set (a Lua script's
    /// `sysbench.sql.driver()`), as sysbench's `db_report_*` do.
    pub(super) fn sql_only_after(&mut self, sql_used: Arc<AtomicBool>) {
        self.sql_used = Some(sql_used);
    }

    fn sql(&self) -> bool {
        self.sql_used.as_ref().map_or(true, |used| used.load(Ordering::Relaxed))
    }

    /// Collects what the loops did since the last collection, at `now_ns`.
    pub(super) fn collect(&mut self, now_ns: u64) {
        let start = Instant::now();
        self.collector.collect(COLLECT_TIMEOUT);
        self.last_cut = (start, Instant::now());
        self.took_interval(now_ns);
    }

    /// The last collection, once the loops have ended: whatever they
    /// handed over last.
    pub(super) fn drain(&mut self, now_ns: u64) {
        let start = Instant::now();
        self.collector.drain();
        self.last_cut = (start, Instant::now());
        self.took_interval(now_ns);
    }

    /// The collector has just taken an interval, which ended at `now_ns`:
    /// the interim lines owe it, and `--hdr-log` logs it.
    fn took_interval(&mut self, now_ns: u64) {
        let interval = self.collector.interval();
        self.owed.merge(interval);
        self.owed_errors.merge(self.collector.interval_error_codes());
        let from = self.last_collect_ns.max(self.measured_from_ns);
        self.last_collect_ns = now_ns;
        let (Some(log), false) = (&mut self.hdr_log, self.warming) else { return };
        let at = |ns: u64| Duration::from_nanos(ns.saturating_sub(self.measured_from_ns));
        if let Err(e) = log.write_interval(at(from), at(now_ns).saturating_sub(at(from)), &interval.latencies) {
            stderr_line(format_args!("wirebench: {e}"));
            self.hdr_log = None;
        }
    }

    /// One `--report-interval` line (two with `--rate`).
    pub(super) fn interim(&mut self, now_ns: u64, control: &RunControl) -> Result<(), OutputError> {
        if let Some(server) = self.server.as_mut() {
            server.ask();
        }
        self.collect(now_ns);
        self.print_interim(now_ns, control)
    }

    /// The interim line that fell due as the loops ended, printed once
    /// they have: they handed over all they did.
    pub(super) fn last_interim(&mut self, now_ns: u64, control: &RunControl) -> Result<(), OutputError> {
        if let Some(server) = self.server.as_mut() {
            server.ask();
        }
        self.drain(now_ns);
        self.print_interim(now_ns, control)
    }

    /// The interim line of what was collected since the last one.
    fn print_interim(&mut self, now_ns: u64, control: &RunControl) -> Result<(), OutputError> {
        let queue = control.has_rate().then(|| control.queue_stats());
        let arrivals = self.arrivals(now_ns, control);
        let at = self.sink.wall_clock_at(self.measured(now_ns));
        let line = InterimReport {
            time_total_s: self.measured(now_ns),
            time_interval_s: now_ns.saturating_sub(self.last_interim_ns) as f64 / 1e9,
            threads_running: self.threads,
            counters: &self.owed.counters,
            latency: &self.owed.latencies.sysbench,
            percentile: self.percentile,
            queue,
            arrivals,
            at: at.as_deref(),
            sql: self.sql(),
        };
        if !hooked(self.hooks.as_ref().map(|h| h.intermediate(&line))) {
            Level::Notice.print(line)?;
        }
        let window = (line.time_total_s, line.time_interval_s);
        let server = self.server.as_mut().and_then(|s| s.interval(&self.owed.counters));
        if let Some(result) = server.as_ref().filter(|_| self.server_mode() == SamplingMode::Interim) {
            Level::Notice.print(ServerInterimLine { time_total_s: window.0, result, at: at.as_deref() })?;
        }
        self.hand_over(now_ns, window, (queue, arrivals), server, IntervalKind::Interim)
    }

    /// Without `--report-interval`, the watch's interval: collected and
    /// handed to it, nothing printed, the server not sampled.
    pub(super) fn watch_tick(&mut self, now_ns: u64, control: &RunControl) -> Result<(), OutputError> {
        self.collect(now_ns);
        self.unprinted_interval(now_ns, control, IntervalKind::Watched)
    }

    /// The run has ended and its last data is collected: what no
    /// interval showed goes to the watch's counters, so that they end
    /// equal to the report's.
    pub(super) fn watch_tail(&mut self, now_ns: u64, control: &RunControl) -> Result<(), OutputError> {
        let nothing = self.owed.counters == Counters::default() && self.owed.latencies.events.count() == 0;
        if !self.sink.watching() || nothing {
            return Ok(());
        }
        self.unprinted_interval(now_ns, control, IntervalKind::Tail)
    }

    fn unprinted_interval(&mut self, now_ns: u64, control: &RunControl, kind: IntervalKind) -> Result<(), OutputError> {
        let queue = control.has_rate().then(|| control.queue_stats());
        let arrivals = self.arrivals(now_ns, control);
        let window = (self.measured(now_ns), now_ns.saturating_sub(self.last_interim_ns) as f64 / 1e9);
        self.hand_over(now_ns, window, (queue, arrivals), None, kind)
    }

    /// The owed interval, which ended at `now_ns`, to the sink; the next
    /// starts afresh.
    fn hand_over(
        &mut self,
        now_ns: u64,
        window: (f64, f64),
        open_loop: (Option<QueueStats>, Option<ArrivalStats>),
        server: Option<ServerResult>,
        kind: IntervalKind,
    ) -> Result<(), OutputError> {
        let handover = IntervalHandover {
            window,
            measured: &self.owed,
            open_loop,
            server,
            error_codes: &self.owed_errors,
            client_busy: self.loop_load.busy_share(),
            kind,
        };
        self.sink.interval(handover)?;
        self.owed.reset();
        self.owed_errors.reset();
        self.last_interim_ns = now_ns;
        Ok(())
    }

    /// The interval's target and the arrivals that did not start on time
    /// in it, under `--rate` or `--rate-stages`.
    fn arrivals(&mut self, now_ns: u64, control: &RunControl) -> Option<ArrivalStats> {
        let target_rate = control.target_rate(self.last_interim_ns, now_ns)?;
        let (now, last) = (control.tardiness(), self.last_tardiness);
        self.last_tardiness = now;
        Some(ArrivalStats {
            target_rate,
            dropped: now.dropped.saturating_sub(last.dropped),
            late: now.late.saturating_sub(last.late),
            staged: control.has_stages(),
        })
    }

    /// The end of `--warmup-time`: the first interim line counts the
    /// drops and late starts from here.
    pub(super) fn forget_tardiness(&mut self, control: &RunControl) {
        self.last_tardiness = control.tardiness();
        self.totals_tardiness = self.last_tardiness;
    }

    /// The arrivals dropped and started late over the totals' span (since
    /// the end of the warm-up or the last checkpoint).
    fn totals_tardiness(&self, control: &RunControl) -> Tardiness {
        let (now, base) = (control.tardiness(), self.totals_tardiness);
        Tardiness { dropped: now.dropped.saturating_sub(base.dropped), late: now.late.saturating_sub(base.late) }
    }

    /// Under `--rate`, what was asked and what ran over the totals' span.
    /// The target counts as not met when more arrivals were waiting at
    /// `end_ns` than the connections could have been about to start, and
    /// more than 1 % of all arrivals: a backlog that grew, not one caught
    /// at a busy moment. Under `--rate-stages`, the target is the stages'
    /// mean over the span, and missed when any arrival was dropped.
    pub(super) fn rate_summary(&self, control: &RunControl, end_ns: u64) -> Option<RateSummary> {
        let backlog = control.backlog();
        let measured_s = self.measured_s(end_ns);
        let tardiness = self.totals_tardiness(control);
        let dropped = control.has_stages().then_some(tardiness.dropped);
        let target = match self.asked.rate {
            Some(rate) => rate,
            None => {
                // Over the stages only: the run ends a moment after them.
                let to_ns = end_ns.min(self.asked.stages_end_ns.unwrap_or(end_ns));
                let from_ns = self.last_checkpoint_ns.min(to_ns);
                control.target_rate(from_ns, to_ns)?.round().max(1.0) as u32
            }
        };
        let waiting_allowed = u64::from(self.asked.threads).max(backlog.arrived / 100);
        Some(RateSummary {
            target,
            arrival: self.asked.arrival,
            achieved: self.collector.totals().events_per_second(measured_s),
            waiting: backlog.waiting,
            oldest_wait_s: backlog.oldest_ns.map_or(0.0, |t| end_ns.saturating_sub(t) as f64 / 1e9),
            missed: backlog.waiting > waiting_allowed || dropped.is_some_and(|d| d > 0),
            dropped,
            late: tardiness.late,
            client: None,
        })
    }

    /// A `--report-checkpoints` report: everything since the start or the
    /// last checkpoint, which then starts afresh (sysbench's
    /// `report_cumulative()` resets its cumulative counters, histogram and
    /// per-thread timers); interim lines are not affected.
    /// Its rate block (target, achieved, dropped and late arrivals) is
    /// the checkpoint's own too: those counts start afresh with the rest.
    pub(super) fn checkpoint(&mut self, now_ns: u64, control: &RunControl) -> Result<(), OutputError> {
        if let Some(server) = self.server.as_mut() {
            server.ask();
        }
        self.collect(now_ns);
        let line = CheckpointLine { time_total_s: self.measured(now_ns) };
        let additions = self.additions(self.rate_summary(control, now_ns));
        let report = FinalReport { additions: &additions, ..self.cumulative(now_ns, 0) };
        match &self.hooks {
            Some(hooks) => {
                Level::Notice.print(line)?;
                if !hooked(Some(hooks.checkpoint(&report, self.threads))) {
                    Level::Notice.print(report)?;
                } else {
                    Level::Notice.print(&additions)?;
                }
            }
            None => Level::Notice.print(format_args!("{line}{report}"))?,
        }
        self.collector.reset_totals();
        self.totals_tardiness = control.tardiness();
        self.last_checkpoint_ns = now_ns;
        if let Some(server) = self.server.as_mut() {
            server.checkpoint(self.last_cut);
        }
        Ok(())
    }

    /// The final numbers at `end_ns`, to `--format`'s output (the text
    /// report is [`cumulative`](Self::cumulative)'s).
    /// `--idle-connections`' figures now, if the run holds any.
    pub(super) fn idle_tally(&self) -> Option<crate::stats::IdleTally> {
        self.sink.idle_tally()
    }

    pub(super) fn final_result(
        &mut self,
        end_ns: u64,
        rate: Option<RateSummary>,
        end: RunEnd,
        server: Option<ServerResult>,
    ) -> Result<(), OutputError> {
        let totals = self.collector.totals();
        let measured = Measured {
            counters: &totals.counters,
            latencies: &totals.latencies,
            connections: &totals.connections,
            time_s: self.measured(end_ns),
            rate_window_s: self.measured_s(end_ns),
            rate,
        };
        self.sink.final_result(measured, end, server)
    }

    /// The client's load over the run, once its loops have ended.
    pub(super) fn client_load(&mut self, load: Option<ClientLoad>) {
        self.sink.client_load(load);
    }

    fn server_mode(&self) -> SamplingMode {
        self.server.as_ref().map_or(SamplingMode::Off, ServerSampling::mode)
    }

    /// The server's totals over the span of the run's totals, sampled
    /// now; `busy_end` when the connections may still be sending.
    pub(super) fn server_totals(&mut self, busy_end: bool) -> Option<ServerResult> {
        let totals = self.collector.totals();
        let connections = totals.connections.len() as u64;
        let idle_quits = self.sink.idle_tally().map_or(0, |idle| idle.questions_at_end());
        let cut = busy_end.then_some(self.last_cut);
        self.server.as_mut()?.totals(&totals.counters, (connections, idle_quits), cut)
    }

    /// `--warmup-time` ended at `now_ns`: everything collected until now
    /// is dropped, each loop counts from its answer to this collection (an
    /// event it admitted before belongs to the warm-up, however late it
    /// ends), and report times count from here.
    pub(super) fn end_warmup(&mut self, now_ns: u64) {
        if let Some(server) = self.server.as_mut() {
            server.ask();
        }
        let start = Instant::now();
        self.collector.cut_warmup(COLLECT_TIMEOUT);
        self.last_cut = (start, Instant::now());
        self.took_interval(now_ns);
        self.warming = false;
        if let Some(server) = self.server.as_mut() {
            server.end_warmup(self.last_cut);
        }
        self.owed.reset();
        self.owed_errors.reset();
        self.last_interim_ns = now_ns;
        self.last_checkpoint_ns = now_ns;
        self.measured_from_ns = now_ns;
    }

    /// Seconds of the measured run at `now_ns` (after the warm-up).
    fn measured(&self, now_ns: u64) -> f64 {
        now_ns.saturating_sub(self.measured_from_ns) as f64 / 1e9
    }

    /// Seconds the totals cover at `now_ns`: since the start, the end of
    /// the warm-up or the last checkpoint.
    pub(super) fn measured_s(&self, now_ns: u64) -> f64 {
        now_ns.saturating_sub(self.last_checkpoint_ns) as f64 / 1e9
    }

    /// The cumulative report at `now_ns`: its rates are over the time since
    /// the last checkpoint.
    pub(super) fn cumulative(&self, now_ns: u64, unfinished_on_forced_shutdown: u32) -> FinalReport<'_> {
        let totals = self.collector.totals();
        FinalReport {
            time_total_s: self.measured(now_ns),
            time_interval_s: now_ns.saturating_sub(self.last_checkpoint_ns) as f64 / 1e9,
            counters: &totals.counters,
            latency: &totals.latencies.sysbench,
            percentile: self.percentile,
            connections: &totals.connections,
            unfinished_on_forced_shutdown,
            additions: "",
            sql: self.sql(),
        }
    }

    /// The final report at `now_ns`, with wirebench's `additions`, or the
    /// script's `report_cumulative` and the additions after it. The
    /// script's interim and checkpoint states close first, as sysbench's
    /// report threads end before its final report.
    pub(super) fn print_final(
        &mut self,
        now_ns: u64,
        unfinished_on_forced_shutdown: u32,
        additions: &str,
    ) -> Result<(), OutputError> {
        if let Some(hooks) = self.hooks.as_mut() {
            hooks.threads_ended();
        }
        let report = self.cumulative(now_ns, unfinished_on_forced_shutdown);
        if hooked(self.hooks.as_ref().map(|h| h.last(&report))) {
            return Level::Notice.print(additions);
        }
        Level::Notice.print(FinalReport { additions, ..report })
    }

    /// wirebench's additions to the final report: the `--percentile` list
    /// when it is more than sysbench's one whole percentile, the `--rate`
    /// latency and rate lines (invoked as `sysbench`, only when the target
    /// was not met, where sysbench would have aborted), `--per-statement`.
    pub(super) fn additions(&self, rate: Option<RateSummary>) -> String {
        let totals = self.collector.totals();
        let listed = self.percentiles.len() > 1 || self.percentiles.iter().any(|p| p.fract() != 0.0);
        let wirebench = Console::current().personality == Personality::Wirebench;
        let rate = rate.filter(|r| wirebench || r.missed);
        let mut out = String::new();
        if listed || rate.is_some() {
            let service = rate.map(|_| totals.service());
            let block = PercentileBlock { percentiles: &self.percentiles, latency: totals.latency(), service };
            out += &block.to_string();
        }
        if let Some(rate) = rate {
            out += &rate.to_string();
        }
        if self.per_statement {
            out += &PerStatementBlock { kinds: &totals.latencies.kinds, percentiles: &self.percentiles }.to_string();
        }
        out
    }
}

/// Whether a script's hook made the report; a hook that failed is
/// reported as sysbench reports it (FATAL, and the run goes on).
fn hooked(called: Option<Result<bool, crate::lua::ScriptError>>) -> bool {
    match called {
        Some(Ok(made)) => made,
        Some(Err(error)) => {
            fatal_line(error);
            true
        }
        None => false,
    }
}

/// sysbench's DEBUG lines as its threads start (`--verbosity=5`): the
/// report, event generator and checkpoint threads', then each worker's
/// (a connection, to wirebench), once every connection is open.
pub(super) fn print_threads_starting(general: &GeneralOptions) -> Result<(), OutputError> {
    if !Console::current().shows(Level::Debug) {
        return Ok(());
    }
    if general.report_interval.is_some() {
        Level::Debug.line("Reporting thread started")?;
    }
    if general.open_loop() {
        Level::Debug.line("Event generating thread started")?;
    }
    if !general.report_checkpoints.is_empty() {
        Level::Debug.line("Checkpoints report thread started")?;
    }
    for thread in 0..general.threads {
        Level::Debug.line(format_args!("Worker thread (#{thread}) started"))?;
        Level::Debug.line(format_args!("Worker thread (#{thread}) initialized"))?;
    }
    Ok(())
}

/// sysbench's INFO lines at the end of a run that reached its limit
/// (`--verbosity=4`): each worker thread says which limit stopped it, the
/// logger folds the repeats into one line, then "Done.".
pub(super) fn print_limit_reached(general: &GeneralOptions, events: u64) -> Result<(), OutputError> {
    let limit = match general.events {
        Some(max) if events >= max => "Event",
        _ if general.time.is_some() => "Time",
        _ => return Ok(()),
    };
    Level::Info.print(format_args!("{limit} limit exceeded, exiting...\n"))?;
    if general.threads > 1 {
        Level::Info.print(format_args!("(last message repeated {} times)\n", general.threads - 1))?;
    }
    Level::Info.print("Done.\n\n")
}
