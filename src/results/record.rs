//! The result types, one JSON object each (`docs/result.schema.json`
//! describes them), and how they are built from the statistics.
//!
//! Every number is finite by construction: rates over no time are 0, not
//! NaN, so a JSON reader never meets `null` where the schema says number.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::stats::report::{Fairness, QueueStats};
use crate::stats::{ConnStats, Counters, LatencyHistogram};

/// The version of these objects' layout, in every final object: a reader
/// that finds a higher one knows fields may have changed meaning.
pub const FORMAT_VERSION: u32 = 1;

/// The percentiles every result lists, besides `--percentile`.
pub const STANDARD_PERCENTILES: [f64; 7] = [50.0, 90.0, 95.0, 99.0, 99.9, 99.99, 100.0];

/// One line of `--format=json` output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResultLine {
    /// One `--report-interval`.
    Interval(IntervalResult),
    /// The whole run, or one step of a sweep.
    Final(Box<RunResult>),
    /// After the last step of a sweep: one row per step.
    Sweep(SweepSummary),
}

/// What was run, where, by what, when: the same for every step of a sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    pub format_version: u32,
    pub wirebench_version: String,
    /// `--label`: what `wirebench compare` calls this result.
    pub label: Option<String>,
    pub test: String,
    /// As the server's handshake gives it; none with `--mysql-dry-run`.
    pub server_version: Option<String>,
    /// The host wirebench ran on.
    pub host: String,
    /// When the first step's clock started, RFC 3339, UTC.
    pub start_time: String,
    /// The options as given (command line and `--config-file`), by name;
    /// a password is shown as `(hidden)`.
    pub options: BTreeMap<String, String>,
}

/// Which step of a `--threads` sweep a result is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SweepStep {
    /// From 1.
    pub index: u32,
    pub steps: u32,
    pub threads: u32,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunEnd {
    /// `--time` or `--events` reached.
    Completed,
    /// SIGINT or SIGTERM: the numbers are of what ran until then.
    Interrupted,
    /// `--forced-shutdown` stopped it with events in flight.
    ForcedShutdown,
    /// `--time` was up while connections still waited for the server's
    /// answers: the run stopped waiting; their events are not counted.
    Cut,
}

/// sysbench's counters, summed over the connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CounterTotals {
    /// Events: what sysbench's report calls transactions.
    pub transactions: u64,
    pub queries: u64,
    pub reads: u64,
    pub writes: u64,
    pub others: u64,
    pub ignored_errors: u64,
    pub reconnects: u64,
}

impl CounterTotals {
    fn of(c: &Counters) -> Self {
        CounterTotals {
            transactions: c.events,
            queries: c.queries(),
            reads: c.reads,
            writes: c.writes,
            others: c.others,
            ignored_errors: c.errors,
            reconnects: c.reconnects,
        }
    }
}

/// The counters per second, as the text report computes them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rates {
    pub tps: f64,
    pub qps: f64,
    pub reads_per_s: f64,
    pub writes_per_s: f64,
    pub others_per_s: f64,
    pub ignored_errors_per_s: f64,
    pub reconnects_per_s: f64,
}

impl Rates {
    fn of(c: &Counters, seconds: f64) -> Self {
        let per_s = |n: u64| if seconds > 0.0 { n as f64 / seconds } else { 0.0 };
        Rates {
            tps: per_s(c.events),
            qps: per_s(c.queries()),
            reads_per_s: per_s(c.reads),
            writes_per_s: per_s(c.writes),
            others_per_s: per_s(c.others),
            ignored_errors_per_s: per_s(c.errors),
            reconnects_per_s: per_s(c.reconnects),
        }
    }
}

/// Where the percentiles come from, so a reader knows their precision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PercentileSource {
    /// sysbench's 1024 log buckets: each value is a bucket's, about 1.8 %
    /// apart, 0.001 ms to 100 s, as the text report prints them.
    SysbenchHistogram,
    /// An HdrHistogram with 3 significant digits.
    HdrHistogram,
}

/// One percentile of the latency.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PercentileValue {
    pub percentile: f64,
    pub ms: f64,
}

/// Event latencies in milliseconds: min, avg, max and sum exact (as the
/// text report), the percentiles from [`PercentileSource`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    pub events: u64,
    pub min: f64,
    pub avg: f64,
    pub max: f64,
    pub sum: f64,
    pub percentile_source: PercentileSource,
    pub percentiles: Vec<PercentileValue>,
}

impl LatencySummary {
    /// From sysbench's histogram, at each of `percentiles`.
    pub fn of(latency: &LatencyHistogram, percentiles: &[f64]) -> Self {
        let ms = |ns: u64| ns as f64 / 1e6;
        LatencySummary {
            events: latency.events(),
            min: ms(latency.min_ns()),
            avg: ms(latency.avg_ns()),
            max: ms(latency.max_ns()),
            sum: ms(latency.sum_ns()),
            percentile_source: PercentileSource::SysbenchHistogram,
            percentiles: percentiles
                .iter()
                .map(|&percentile| PercentileValue { percentile, ms: latency.percentile(percentile) })
                .collect(),
        }
    }

    /// The value at `percentile`, if it is listed.
    pub fn at(&self, percentile: f64) -> Option<f64> {
        self.percentiles.iter().find(|p| p.percentile == percentile).map(|p| p.ms)
    }
}

/// One statement kind's share (point select, range, update index, ...).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatementResult {
    pub kind: String,
    pub count: u64,
    pub latency_ms: LatencySummary,
}

/// `--rate`: what was asked and what was done.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RateResult {
    pub target_tps: u32,
    pub achieved_tps: f64,
    /// Latency from the send of each event's first statement, without the
    /// time it waited behind the schedule; `latency_ms` counts from the
    /// intended start. None until the statistics measure it.
    pub service_latency_ms: Option<LatencySummary>,
}

/// sysbench's "Threads fairness".
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FairnessResult {
    pub events_avg: f64,
    pub events_stddev: f64,
    pub execution_time_avg_s: f64,
    pub execution_time_stddev_s: f64,
}

impl FairnessResult {
    fn of(connections: &[ConnStats], latency_sum_ns: u64) -> Self {
        let finite = |x: f64| if x.is_finite() { x } else { 0.0 };
        let f = Fairness::of(connections, latency_sum_ns);
        FairnessResult {
            events_avg: finite(f.events_avg),
            events_stddev: finite(f.events_stddev),
            execution_time_avg_s: finite(f.time_avg),
            execution_time_stddev_s: finite(f.time_stddev),
        }
    }
}

/// The whole run, or one step of a sweep: the final report's numbers and
/// more.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    pub run: RunInfo,
    pub step: Option<SweepStep>,
    pub threads: u32,
    pub end: RunEnd,
    /// Seconds from the first event to the end (the report's total time).
    pub time_s: f64,
    /// `--warmup-time`: seconds run before the statistics started.
    pub warmup_s: u32,
    pub counters: CounterTotals,
    pub rates: Rates,
    /// Under `--rate`, from each event's intended start.
    pub latency_ms: LatencySummary,
    /// Per statement kind; empty until the statistics count them.
    pub statements: Vec<StatementResult>,
    pub rate: Option<RateResult>,
    pub fairness: FairnessResult,
}

/// What the statistics hold at the end of a run (or a step).
#[derive(Debug, Clone, Copy)]
pub struct Measured<'a> {
    pub counters: &'a Counters,
    pub latency: &'a LatencyHistogram,
    pub connections: &'a [ConnStats],
    /// The report's total time.
    pub time_s: f64,
    /// The rates' denominator: seconds since the start or last checkpoint.
    pub rate_window_s: f64,
}

/// How the run was set up, beside what it measured.
#[derive(Debug, Clone, Copy)]
pub struct RunShape<'a> {
    pub info: &'a RunInfo,
    pub step: Option<SweepStep>,
    pub threads: u32,
    pub end: RunEnd,
    pub warmup_s: u32,
    pub target_tps: Option<u32>,
    pub percentiles: &'a [f64],
}

impl RunResult {
    pub fn new(shape: RunShape<'_>, measured: Measured<'_>) -> Self {
        let rates = Rates::of(measured.counters, measured.rate_window_s);
        RunResult {
            run: shape.info.clone(),
            step: shape.step,
            threads: shape.threads,
            end: shape.end,
            time_s: measured.time_s,
            warmup_s: shape.warmup_s,
            counters: CounterTotals::of(measured.counters),
            rates,
            latency_ms: LatencySummary::of(measured.latency, shape.percentiles),
            statements: Vec::new(),
            rate: shape.target_tps.map(|target_tps| RateResult {
                target_tps,
                achieved_tps: rates.tps,
                service_latency_ms: None,
            }),
            fairness: FairnessResult::of(measured.connections, measured.latency.sum_ns()),
        }
    }

    /// The figures a sweep table, a comparison and a chart show.
    pub fn figures(&self) -> StepFigures {
        StepFigures {
            threads: self.threads,
            tps: self.rates.tps,
            qps: self.rates.qps,
            p95_ms: self.latency_ms.at(95.0),
            p99_ms: self.latency_ms.at(99.0),
            ignored_errors: self.counters.ignored_errors,
            end: self.end,
        }
    }
}

/// `--rate`'s event queue at the end of an interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueResult {
    pub length: u64,
    pub concurrency: u64,
}

impl From<QueueStats> for QueueResult {
    fn from(q: QueueStats) -> Self {
        QueueResult { length: q.length, concurrency: q.concurrency }
    }
}

/// One `--report-interval`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IntervalResult {
    /// The sweep step's thread count, or the run's.
    pub threads: u32,
    /// Seconds since the run's clock started, at the interval's end.
    pub time_s: f64,
    pub interval_s: f64,
    /// The interval's start as Unix time, in seconds.
    pub start_unix_s: f64,
    pub counters: CounterTotals,
    pub rates: Rates,
    pub latency_ms: LatencySummary,
    /// With `--rate`.
    pub queue: Option<QueueResult>,
}

/// What one interval held, where it sits in time.
#[derive(Debug, Clone, Copy)]
pub struct IntervalSpan {
    pub threads: u32,
    pub end_s: f64,
    pub length_s: f64,
    /// Unix time of the run's clock start, in seconds.
    pub clock_start_unix_s: f64,
}

impl IntervalResult {
    pub fn new(
        span: IntervalSpan,
        counters: &Counters,
        latency: &LatencyHistogram,
        percentiles: &[f64],
        queue: Option<QueueStats>,
    ) -> Self {
        IntervalResult {
            threads: span.threads,
            time_s: span.end_s,
            interval_s: span.length_s,
            start_unix_s: span.clock_start_unix_s + span.end_s - span.length_s,
            counters: CounterTotals::of(counters),
            rates: Rates::of(counters, span.length_s),
            latency_ms: LatencySummary::of(latency, percentiles),
            queue: queue.map(QueueResult::from),
        }
    }
}

/// A step's headline numbers: a row of the sweep table, a point of a
/// comparison or chart.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StepFigures {
    pub threads: u32,
    pub tps: f64,
    pub qps: f64,
    pub p95_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub ignored_errors: u64,
    pub end: RunEnd,
}

/// The line after a sweep's last step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepSummary {
    pub run: RunInfo,
    pub steps: Vec<StepFigures>,
}

/// [`STANDARD_PERCENTILES`] and `--percentile`'s, in order, each once.
pub fn percentile_list(asked: Option<u8>) -> Vec<f64> {
    let mut list = STANDARD_PERCENTILES.to_vec();
    if let Some(p) = asked.map(f64::from) {
        if !list.contains(&p) {
            list.push(p);
            list.sort_by(f64::total_cmp);
        }
    }
    list
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info() -> RunInfo {
        RunInfo {
            format_version: FORMAT_VERSION,
            wirebench_version: "0.1.0".to_owned(),
            label: Some("a".to_owned()),
            test: "oltp_point_select".to_owned(),
            server_version: None,
            host: "h".to_owned(),
            start_time: "2024-01-01T00:00:00Z".to_owned(),
            options: BTreeMap::new(),
        }
    }

    #[test]
    fn a_run_of_no_time_has_zero_rates_not_nan() {
        let counters = Counters { events: 3, ..Counters::default() };
        let latency = LatencyHistogram::new();
        let measured =
            Measured { counters: &counters, latency: &latency, connections: &[], time_s: 0.0, rate_window_s: 0.0 };
        let shape = RunShape {
            info: &info(),
            step: None,
            threads: 0,
            end: RunEnd::Completed,
            warmup_s: 0,
            target_tps: Some(10),
            percentiles: &[95.0],
        };
        let result = RunResult::new(shape, measured);
        assert_eq!(result.rates.tps, 0.0);
        assert_eq!(result.fairness.events_avg, 0.0);
        let json = serde_json::to_string(&ResultLine::Final(Box::new(result))).unwrap();
        assert!(json.contains("\"tps\":0.0"), "{json}");
        assert!(json.contains("\"events_avg\":0.0"), "{json}");
    }

    #[test]
    fn figures_take_p95_and_p99_from_the_list() {
        let counters = Counters { events: 100, reads: 1000, ..Counters::default() };
        let mut latency = LatencyHistogram::new();
        for ms in 1..=100u64 {
            latency.record_ns(ms * 1_000_000);
        }
        let connections = [ConnStats { events: 100, busy_ns: latency.sum_ns() }];
        let measured = Measured {
            counters: &counters,
            latency: &latency,
            connections: &connections,
            time_s: 2.0,
            rate_window_s: 2.0,
        };
        let list = percentile_list(Some(95));
        let shape = RunShape {
            info: &info(),
            step: None,
            threads: 4,
            end: RunEnd::Completed,
            warmup_s: 0,
            target_tps: None,
            percentiles: &list,
        };
        let figures = RunResult::new(shape, measured).figures();
        assert_eq!(figures.tps, 50.0);
        assert_eq!(figures.qps, 500.0);
        assert_eq!(figures.p95_ms, Some(latency.percentile(95.0)));
        assert_eq!(figures.p99_ms, Some(latency.percentile(99.0)));
    }

    #[test]
    fn the_asked_percentile_joins_the_list_once() {
        assert_eq!(percentile_list(Some(95)), STANDARD_PERCENTILES.to_vec());
        assert_eq!(percentile_list(Some(97)), vec![50.0, 90.0, 95.0, 97.0, 99.0, 99.9, 99.99, 100.0]);
        assert_eq!(percentile_list(None), STANDARD_PERCENTILES.to_vec());
    }

    #[test]
    fn lines_read_back_as_written() {
        let counters = Counters::default();
        let latency = LatencyHistogram::new();
        let span = IntervalSpan { threads: 2, end_s: 2.0, length_s: 1.0, clock_start_unix_s: 1000.0 };
        let interval = IntervalResult::new(span, &counters, &latency, &[95.0], Some(QueueStats::default()));
        assert_eq!(interval.start_unix_s, 1001.0);
        let line = ResultLine::Interval(interval);
        let text = serde_json::to_string(&line).unwrap();
        assert!(text.starts_with("{\"type\":\"interval\""), "{text}");
        assert_eq!(serde_json::from_str::<ResultLine>(&text).unwrap(), line);
    }
}
