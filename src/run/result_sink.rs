//! Where a run's numbers go besides sysbench's report: `--format`'s JSON
//! lines or CSV rows on standard output, the intervals a single run's
//! `--chart` draws, each step's figures for the table that ends a
//! sweep, and the watch (`--metrics-listen`, `--web`, ...). One sink
//! lives through every step of a sweep.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::host_facts::{clock_state, host_name};
use super::output::{Output, OutputError};
use super::RunError;
use crate::cli::Bench;
use crate::results::csv::CsvColumns;
use crate::results::record::{IntervalSpan, Measured, RunShape, FORMAT_VERSION};
use crate::results::recorded::RecordedHistograms;
use crate::results::shard_info::ShardInfo;
use crate::results::{
    chart, clock, sweep, IdleResult, IntervalResult, LatencyListing, OutputFormat, ResultLine, RunEnd, RunInfo,
    RunResult, StepFigures, SweepStep, SweepSummary, Table,
};
use crate::server_stats::ServerResult;
use crate::stats::report::{ArrivalStats, QueueStats};
use crate::stats::{ClientLoad, ErrorCodes, IdleCounts, IdleTally, Interval};
use crate::watch::{IntervalTick, Watch};

/// What an interval is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum IntervalKind {
    /// A `--report-interval` line: `--format`'s output, the chart and
    /// the watch have it.
    Interim,
    /// Without `--report-interval`, the watch's own (each second).
    Watched,
    /// What no interval had shown when the run ended: the watch's
    /// counters take it, its page does not.
    Tail,
}

/// One interval as the report thread hands it over.
pub(super) struct IntervalHandover<'a> {
    /// Its end, seconds into the measured run, and its length.
    pub(super) window: (f64, f64),
    pub(super) measured: &'a Interval,
    pub(super) open_loop: (Option<QueueStats>, Option<ArrivalStats>),
    pub(super) server: Option<ServerResult>,
    /// Its ignored errors by code.
    pub(super) error_codes: &'a ErrorCodes,
    pub(super) client_busy: Option<f64>,
    pub(super) kind: IntervalKind,
}

/// The results of one command, as they come.
pub(super) struct ResultSink {
    format: OutputFormat,
    info: RunInfo,
    /// What every latency block lists.
    listing: LatencyListing,
    csv: CsvColumns,
    /// `--percentile` (95 when disabled): the single run chart's line.
    percentile: f64,
    /// `--warmup-time`, in seconds: the measured run starts after it.
    warmup_s: u32,
    csv_header_written: bool,
    /// The step running now, in a sweep.
    step: Option<SweepStep>,
    /// The connections running now.
    threads: u32,
    /// Unix time of the current step's measured start (its clock's start
    /// plus the warm-up), in seconds.
    measured_from_unix_s: f64,
    /// Kept for a single run's chart over time.
    intervals: Vec<IntervalResult>,
    /// Each finished step's (or the run's) figures.
    steps: Vec<StepFigures>,
    /// `--idle-connections`: their counts, while the run holds them.
    idle: Option<Arc<IdleCounts>>,
    /// The last final result, for a search's step.
    last_result: Option<RunResult>,
    /// The client's load over the last run, closed loop or not.
    client: Option<ClientLoad>,
    /// The final result is kept for the caller to write (a replay's,
    /// which ends with its own line), not written.
    final_held: bool,
    /// `--metrics-listen`, `--metrics-push`, `--web`, `--report-html`.
    watch: Option<Arc<Watch>>,
}

impl ResultSink {
    pub(super) fn new(bench: &Bench) -> Self {
        let general = &bench.general;
        let histograms = histograms_written(bench.results.format);
        // A replay's commands are timed from when each was due, as --rate's
        // events from their arrival: their service time is listed apart.
        let open_loop = general.open_loop() || bench.replay.is_some();
        let listing = LatencyListing::new(&general.percentiles, general.percentile, open_loop, histograms);
        let csv = CsvColumns {
            percentiles: general.percentiles.clone(),
            rate: general.open_loop(),
            server: bench.server_stats.mode.samples(),
        };
        let info = RunInfo {
            format_version: FORMAT_VERSION,
            wirebench_version: env!("CARGO_PKG_VERSION").to_owned(),
            label: bench.results.label.clone(),
            test: bench.test.name().to_owned(),
            server_version: None,
            host: host_name(),
            start_time: clock::rfc3339_utc(SystemTime::now()),
            options: bench.results.options_given.clone(),
            shard: shard_info(bench),
        };
        ResultSink {
            format: bench.results.format,
            info,
            listing,
            csv,
            percentile: general.percentile.map_or(95.0, f64::from),
            warmup_s: general.warmup_time,
            csv_header_written: false,
            step: None,
            threads: bench.general.threads,
            measured_from_unix_s: clock::unix_seconds(SystemTime::now()),
            intervals: Vec::new(),
            steps: Vec::new(),
            idle: None,
            last_result: None,
            client: None,
            final_held: false,
            watch: None,
        }
    }

    /// Feeds `watch` from now on.
    pub(super) fn watch_with(&mut self, watch: Option<Arc<Watch>>) {
        self.watch = watch;
    }

    /// The watch this sink feeds, if any.
    pub(super) fn watch(&self) -> Option<&Arc<Watch>> {
        self.watch.as_ref()
    }

    /// Whether a watch takes the run's intervals (each second when there
    /// is no `--report-interval`): `--report-html`'s charts need them too.
    pub(super) fn watching(&self) -> bool {
        self.watch.is_some()
    }

    /// Keeps the final result for [`take_result`](Self::take_result)
    /// instead of writing it (a replay writes its own).
    pub(super) fn hold_final(&mut self) {
        self.final_held = true;
    }

    /// What was run, where, by what, when.
    pub(super) fn info(&self) -> &RunInfo {
        &self.info
    }

    /// The next step of a sweep starts.
    pub(super) fn start_step(&mut self, step: SweepStep) {
        self.step = Some(step);
        self.threads = step.threads;
    }

    /// The results name a Lua script's run by the script's name, not by
    /// the built-in test its command line was read as.
    pub(super) fn name_test(&mut self, name: String) {
        self.info.test = name;
    }

    /// The connections are open and the clock starts, `late` after
    /// `--start-at`: `server_version` is what the first connection's
    /// server calls itself.
    pub(super) fn clock_started(&mut self, server_version: Option<&str>, late: Duration) {
        let now = clock::unix_seconds(SystemTime::now());
        // A warm-up ends on the run's clock, from --start-at (see
        // `ReportSchedule`); without one, the measured run starts now.
        self.measured_from_unix_s = match self.warmup_s {
            0 => now,
            warmup_s => now - late.as_secs_f64() + f64::from(warmup_s),
        };
        if self.info.server_version.is_none() {
            self.info.server_version = server_version.map(str::to_owned);
        }
        if let Some(shard) = self.info.shard.as_mut().filter(|s| s.started_unix_s.is_none()) {
            shard.started_unix_s = Some(now);
            shard.late_ms = late.as_secs_f64() * 1e3;
            shard.clock = clock_state();
        }
        if let Some(watch) = &self.watch {
            watch.started(&self.info);
        }
    }

    /// In a sharded run or one with `--start-at`: the wall-clock time
    /// `measured_s` into the measured run, which interim lines end with.
    pub(super) fn wall_clock_at(&self, measured_s: f64) -> Option<String> {
        let shard = self.info.shard.as_ref()?;
        if shard.count == 1 && shard.start_at_unix_s.is_none() {
            return None;
        }
        let at = self.measured_from_unix_s + measured_s;
        Some(clock::rfc3339_utc(UNIX_EPOCH + Duration::from_secs_f64(at.max(0.0))))
    }

    /// The comment an `--hdr-log` starts with: which shard of which run.
    pub(super) fn hdr_log_comment(&self) -> String {
        self.info.shard.as_ref().map(|s| s.log_comment(&self.info.host)).unwrap_or_default()
    }

    /// One interval (`--report-interval`'s, or the watch's).
    pub(super) fn interval(&mut self, handover: IntervalHandover<'_>) -> Result<(), OutputError> {
        let IntervalHandover { window: (end_s, length_s), measured, open_loop, server, .. } = handover;
        let (queue, arrivals) = open_loop;
        let threads = self.threads;
        let span = IntervalSpan { threads, end_s, length_s, measured_from_unix_s: self.measured_from_unix_s };
        let interval = IntervalResult {
            server: server.map(Box::new),
            client_busy: handover.client_busy,
            idle_connections: self.idle_tally().map(|idle| idle.open),
            ..IntervalResult::new(span, measured, &self.listing, queue).with_arrivals(arrivals)
        };
        if let Some(watch) = &self.watch {
            let tick = IntervalTick {
                record: &interval,
                events: &measured.latencies.events,
                error_codes: handover.error_codes,
            };
            match handover.kind {
                IntervalKind::Tail => watch.tail(tick),
                IntervalKind::Interim | IntervalKind::Watched => watch.interval(tick),
            }
        }
        if handover.kind != IntervalKind::Interim {
            return Ok(());
        }
        match self.format {
            OutputFormat::Text => {}
            OutputFormat::Json => Output::Stdout.json_line(&ResultLine::Interval(interval.clone()))?,
            OutputFormat::Csv => {
                if !self.csv_header_written {
                    Output::Stdout.print(self.csv.header())?;
                    self.csv_header_written = true;
                }
                Output::Stdout.print(self.csv.row(&interval))?;
            }
        }
        if self.step.is_none() {
            self.intervals.push(interval);
        }
        Ok(())
    }

    /// The run's (or step's) final numbers, and the server's.
    pub(super) fn final_result(
        &mut self,
        measured: Measured<'_>,
        end: RunEnd,
        server: Option<ServerResult>,
    ) -> Result<(), OutputError> {
        let shape = RunShape {
            info: &self.info,
            step: self.step,
            threads: self.threads,
            end,
            warmup_s: self.warmup_s,
            listing: &self.listing,
        };
        let tolerated = crate::client::tolerance::tally().iter().map(|(kind, n)| (kind.key().to_string(), n)).collect();
        let idle_connections = self.idle_tally().as_ref().map(IdleResult::of);
        let result = RunResult { server, tolerated, idle_connections, ..RunResult::new(shape, measured) };
        self.steps.push(result.figures());
        let line = ResultLine::Final(Box::new(result));
        if self.format == OutputFormat::Json && !self.final_held {
            Output::Stdout.json_line(&line)?;
        }
        if let Some(watch) = &self.watch {
            watch.line(&line);
        }
        let ResultLine::Final(result) = line else { return Ok(()) };
        self.last_result = Some(*result);
        Ok(())
    }

    /// Counts `--idle-connections` in the results from now on.
    pub(super) fn hold_idle(&mut self, counts: Arc<IdleCounts>) {
        self.idle = Some(counts);
    }

    /// The idle connections' figures now, if the run holds any.
    pub(super) fn idle_tally(&self) -> Option<IdleTally> {
        self.idle.as_ref().map(|counts| counts.tally())
    }

    /// The client's load over the run, once its loops have ended.
    pub(super) fn client_load(&mut self, load: Option<ClientLoad>) {
        self.client = load;
    }

    /// The last run's final result and its client's load, taken.
    pub(super) fn take_result(&mut self) -> Option<(RunResult, Option<ClientLoad>)> {
        self.last_result.take().map(|result| (result, self.client.take()))
    }

    /// After a single run: its chart over time, if asked for.
    pub(super) fn finish_run(&self, bench: &Bench) -> Result<(), RunError> {
        let Some(path) = &bench.results.chart else { return Ok(()) };
        let svg = chart::over_time(&self.chart_title(bench), &self.intervals, self.percentile)?;
        chart::write_chart(path, &svg)?;
        Ok(())
    }

    /// After a sweep's last step (or the step a signal or an error
    /// stopped): the table, the JSON summary, the chart.
    pub(super) fn finish_sweep(&self, bench: &Bench) -> Result<(), RunError> {
        Output::report().print(format_args!("{}\n", self.sweep_table().text()))?;
        let summary = ResultLine::Sweep(SweepSummary { run: self.info.clone(), steps: self.steps.clone() });
        if self.format == OutputFormat::Json {
            Output::Stdout.json_line(&summary)?;
        }
        if let Some(watch) = &self.watch {
            watch.line(&summary);
        }
        if let Some(path) = &bench.results.chart {
            let label = self.info.label.clone().or_else(|| self.info.server_version.clone());
            let label = label.unwrap_or_else(|| self.info.test.clone());
            let svg = chart::by_connections(&self.chart_title(bench), &[(label, self.steps.clone())])?;
            chart::write_chart(path, &svg)?;
        }
        Ok(())
    }

    pub(super) fn sweep_table(&self) -> Table {
        sweep::sweep_table(&self.info.test, &self.steps)
    }

    /// `oltp_read_only on MariaDB 10.11.6 (host)`.
    fn chart_title(&self, bench: &Bench) -> String {
        let server = self.info.server_version.as_deref().map(|v| format!(" on {v}")).unwrap_or_default();
        let label = bench.results.label.as_deref().map(|l| format!(": {l}")).unwrap_or_default();
        format!("{}{server}{label}", self.info.test)
    }
}

/// Whether `format`'s output writes the results' histograms. Every result
/// of a run, a sweep's steps, a shard's or a Lua script's goes through
/// this sink, and JSON lines on standard output are the only results it
/// writes as JSON: `wirebench merge` reads them back.
fn histograms_written(format: OutputFormat) -> RecordedHistograms {
    match format {
        OutputFormat::Json => RecordedHistograms::Kept,
        OutputFormat::Text | OutputFormat::Csv => RecordedHistograms::Omitted,
    }
}

/// Which shard of which run `bench` is (its identity the command line's,
/// for the whole run).
fn shard_info(bench: &Bench) -> Option<ShardInfo> {
    let identity = bench.results.run_identity.clone()?;
    let start_at = bench.general.start_at.map(clock::unix_seconds);
    Some(ShardInfo::new(bench.general.shard.index(), identity, start_at))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Counters;

    fn sink(args: &[&str]) -> ResultSink {
        let args = args.iter().chain(&["run"]).map(std::ffi::OsString::from);
        let Ok(crate::cli::Invocation::Bench(bench)) = crate::cli::parse(args) else { panic!("parsed") };
        ResultSink::new(&bench)
    }

    /// JSON output, of a run, a sweep or a shard, keeps the histograms
    /// `wirebench merge` reads; text and CSV, which never show them, do
    /// not make them.
    #[test]
    fn histograms_only_for_json_output() {
        let kept = |args: &[&str]| sink(args).listing.histograms == RecordedHistograms::Kept;
        assert!(kept(&["oltp_point_select", "--format=json"]));
        assert!(kept(&["oltp_point_select", "--format=json", "--threads=1,2"]));
        assert!(kept(&["oltp_point_select", "--format=json", "--shard=1/2"]));
        assert!(!kept(&["oltp_point_select"]));
        assert!(!kept(&["oltp_point_select", "--format=csv", "--report-interval=1"]));
        assert!(!kept(&["oltp_point_select", "--format=text", "--threads=1,2"]));
        assert!(!kept(&["oltp_point_select", "--format=csv", "--report-interval=1", "--shard=1/2"]));
    }

    #[test]
    fn a_text_runs_intervals_carry_no_histograms() {
        let mut sink = sink(&["oltp_point_select", "--report-interval=1"]);
        let mut interval = Interval::new(&["point_select"]);
        interval.counters = Counters { events: 2, reads: 2, ..Counters::default() };
        interval.latencies.events.record_ns(1_000_000);
        interval.latencies.sysbench.record_ns(1_000_000);
        let codes = ErrorCodes::default();
        let handover = IntervalHandover {
            window: (1.0, 1.0),
            measured: &interval,
            open_loop: (None, None),
            server: None,
            error_codes: &codes,
            client_busy: None,
            kind: IntervalKind::Interim,
        };
        sink.interval(handover).unwrap();
        assert_eq!(
            sink.intervals.iter().map(|i| (i.counters.transactions, i.recorded.is_some())).collect::<Vec<_>>(),
            [(2, false)]
        );
    }
}
