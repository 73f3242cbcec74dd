//! The result types, one JSON object each (`docs/result.schema.json`
//! describes them), and how they are built from the statistics.
//!
//! Every number is finite by construction: rates over no time are 0, not
//! NaN, so a JSON reader never meets `null` where the schema says number.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::latency_summary::{
    latency_spectrum, LatencyListing, LatencySummary, PercentileValue, SpectrumValue, StatementResult,
};
use super::recorded::Recorded;
use super::shard_info::ShardInfo;
use crate::server_stats::{ServerFigures, ServerResult};
use crate::stats::report::{ArrivalStats, Fairness, QueueStats};
use crate::stats::{ClientDelay, ClientLoad, ConnStats, Counters, IdleTally, Interval, Latencies, RateSummary};

/// The version of these objects' layout, in every final object: a reader
/// that finds a higher one knows fields may have changed meaning.
pub const FORMAT_VERSION: u32 = 1;

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
    /// Which shard of which run this is (a run in one instance is shard
    /// 0 of 1); none in files written before shards were recorded.
    #[serde(default)]
    pub shard: Option<ShardInfo>,
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

/// `--rate`: what was asked and what was done.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RateResult {
    pub target_tps: u32,
    /// `poisson` or `fixed` (`--rate-arrival`).
    pub arrival: String,
    /// Events completed per second of the measured time.
    pub achieved_tps: f64,
    /// Whether the target counts as met (the report says so when not).
    pub target_met: bool,
    /// Arrivals due by the end and never started.
    pub backlog: u64,
    /// How long the oldest of them had waited at the end, in seconds.
    pub oldest_wait_s: f64,
    /// `--rate-stages`: `target_tps` is then the mean target over the
    /// measured time.
    #[serde(default)]
    pub stages: bool,
    /// `--rate-stages`: arrivals dropped, not started within a second of
    /// their time; none under `--rate`, whose arrivals wait.
    #[serde(default)]
    pub dropped: Option<u64>,
    /// Events started more than a second after their arrival.
    #[serde(default)]
    pub late_starts: u64,
    /// How hard the client's event loops worked: when they were busy
    /// nearly all the time, the client was the limit, not the server.
    #[serde(default)]
    pub client: Option<ClientResult>,
}

/// The client's own load over a run (see [`ClientLoad`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ClientResult {
    /// The event loops' CPU time less spinning, plus their time ready to
    /// run without a core, over their lives: 0 to 1.
    pub busy_share: f64,
    /// Seconds the loops were ready to run while another task had their core.
    pub run_delay_s: f64,
    /// That time's share of their time, 0 to 1 (0 in results of older
    /// versions).
    #[serde(default)]
    pub core_wait_share: f64,
    /// Under `--rate`: the client's own delay of the events, from when
    /// each could have started to when its first command went to the
    /// kernel; absent without `--rate` (and in results of older versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<ClientDelayResult>,
}

/// The client's own delay's percentiles, ms (see [`ClientDelay`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ClientDelayResult {
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
}

impl ClientResult {
    pub fn of(load: &ClientLoad) -> Self {
        ClientResult {
            busy_share: finite(load.busy_share),
            run_delay_s: finite(load.run_delay_s),
            core_wait_share: finite(load.core_wait_share),
            delay_ms: load.delay.map(|d| ClientDelayResult {
                p50: finite(d.p50_ms),
                p99: finite(d.p99_ms),
                max: finite(d.max_ms),
            }),
        }
    }

    pub fn load(&self) -> ClientLoad {
        ClientLoad {
            busy_share: self.busy_share,
            run_delay_s: self.run_delay_s,
            core_wait_share: self.core_wait_share,
            delay: self.delay_ms.map(|d| ClientDelay { p50_ms: d.p50, p99_ms: d.p99, max_ms: d.max }),
        }
    }
}

impl RateResult {
    fn of(summary: &RateSummary) -> Self {
        RateResult {
            target_tps: summary.target,
            arrival: summary.arrival.to_owned(),
            achieved_tps: finite(summary.achieved),
            target_met: !summary.missed,
            backlog: summary.waiting,
            oldest_wait_s: finite(summary.oldest_wait_s),
            stages: summary.dropped.is_some(),
            dropped: summary.dropped,
            late_starts: summary.late,
            client: summary.client.as_ref().map(ClientResult::of),
        }
    }
}

/// 0 for what a division by no time made infinite or NaN.
fn finite(x: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        0.0
    }
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
    /// Seconds measured: from the end of the warm-up to the end (the
    /// report's total time).
    pub time_s: f64,
    /// `--warmup-time`: seconds run before the statistics started.
    pub warmup_s: u32,
    pub counters: CounterTotals,
    pub rates: Rates,
    /// Each event's latency; under `--rate` from its intended start
    /// (corrected for coordinated omission, as wrk2).
    pub latency_ms: LatencySummary,
    /// The text report's own percentile line (sysbench's histogram: a
    /// bucket's value, about 1.8 % apart); none with `--percentile=0`.
    pub sysbench_percentile: Option<PercentileValue>,
    /// Under `--rate`: each event from its first send, without the time it
    /// waited behind the schedule.
    pub service_latency_ms: Option<LatencySummary>,
    /// `latency_ms`'s percentile spectrum, as wrk2 prints it.
    pub latency_spectrum: Vec<SpectrumValue>,
    /// Per statement kind, each kind that ran.
    pub statements: Vec<StatementResult>,
    pub rate: Option<RateResult>,
    pub fairness: FairnessResult,
    /// The histograms and per-connection figures, for `wirebench merge`.
    #[serde(default)]
    pub recorded: Option<Recorded>,
    /// `--server-stats`: what the server did from the start (or the end of
    /// the warm-up, or the last checkpoint) to the end.
    #[serde(default)]
    pub server: Option<ServerResult>,
    /// The server's deviations from the protocol that the client tolerated,
    /// as libmariadb does, by kind (`sequence_renumbered`: packets;
    /// `column_count_trailing`: result sets; the others: logins); absent when there were none (docs/connecting.md).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tolerated: BTreeMap<String, u64>,
    /// `--idle-connections`: what happened to them; absent without.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_connections: Option<IdleResult>,
}

/// `--idle-connections` at the end of the run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdleResult {
    /// Asked for (this shard's part).
    pub wanted: u64,
    /// Logged in and not lost at the end.
    pub open: u64,
    /// Closed by the server (its wait_timeout), or a ping unanswered.
    pub lost: u64,
    /// Lost ones logged in again.
    pub reconnected: u64,
    pub failed_logins: u64,
}

impl IdleResult {
    pub fn of(tally: &IdleTally) -> Self {
        let IdleTally { wanted, open, lost, reconnected, failed_logins, .. } = *tally;
        IdleResult { wanted, open, lost, reconnected, failed_logins }
    }

    /// The shards' figures added up (`wirebench merge`).
    pub fn sum<'a>(parts: impl Iterator<Item = &'a IdleResult>) -> Option<IdleResult> {
        parts.fold(None, |total, part| {
            let t = total.unwrap_or_default();
            Some(IdleResult {
                wanted: t.wanted + part.wanted,
                open: t.open + part.open,
                lost: t.lost + part.lost,
                reconnected: t.reconnected + part.reconnected,
                failed_logins: t.failed_logins + part.failed_logins,
            })
        })
    }
}

/// What the statistics hold at the end of a run (or a step).
#[derive(Debug, Clone, Copy)]
pub struct Measured<'a> {
    pub counters: &'a Counters,
    pub latencies: &'a Latencies,
    pub connections: &'a [ConnStats],
    /// The report's total time.
    pub time_s: f64,
    /// The rates' denominator: seconds since the start or last checkpoint.
    pub rate_window_s: f64,
    /// Under `--rate`, what was asked and what ran.
    pub rate: Option<RateSummary>,
}

/// How the run was set up, beside what it measured.
#[derive(Debug, Clone, Copy)]
pub struct RunShape<'a> {
    pub info: &'a RunInfo,
    pub step: Option<SweepStep>,
    pub threads: u32,
    pub end: RunEnd,
    pub warmup_s: u32,
    pub listing: &'a LatencyListing,
}

impl RunResult {
    pub fn new(shape: RunShape<'_>, measured: Measured<'_>) -> Self {
        let (listing, latencies) = (shape.listing, measured.latencies);
        RunResult {
            run: shape.info.clone(),
            step: shape.step,
            threads: shape.threads,
            end: shape.end,
            time_s: measured.time_s,
            warmup_s: shape.warmup_s,
            counters: CounterTotals::of(measured.counters),
            rates: Rates::of(measured.counters, measured.rate_window_s),
            latency_ms: listing.event_summary(latencies),
            sysbench_percentile: listing.sysbench_line(&latencies.sysbench),
            service_latency_ms: listing.service_summary(latencies),
            latency_spectrum: latency_spectrum(&latencies.events),
            statements: listing.kind_results(latencies),
            rate: measured.rate.as_ref().map(RateResult::of),
            fairness: FairnessResult::of(measured.connections, latencies.sysbench.sum_ns()),
            recorded: listing.recorded(latencies, measured.connections),
            server: None,
            tolerated: BTreeMap::new(),
            idle_connections: None,
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
            server: self.server.as_ref().map(|s| ServerHeadline::of(&s.figures)),
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

/// A shard that did not run through a whole interval of `wirebench
/// merge`'s output (it started late, ended early, or has no interval
/// there): the interval's figures lack the rest of its work.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartialShard {
    /// `I/N`.
    pub shard: String,
    /// Seconds of the interval it ran.
    pub ran_s: f64,
    /// The interval's length.
    pub of_s: f64,
}

impl std::fmt::Display for PartialShard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "shard {} ran {:.2} s of {:.2} s", self.shard, self.ran_s, self.of_s)
    }
}

/// One `--report-interval`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IntervalResult {
    /// The sweep step's thread count, or the run's.
    pub threads: u32,
    /// Seconds measured (from the end of the warm-up), at the interval's
    /// end.
    pub time_s: f64,
    pub interval_s: f64,
    /// The interval's start as Unix time, in seconds.
    pub start_unix_s: f64,
    pub counters: CounterTotals,
    pub rates: Rates,
    /// As in the final object, over this interval.
    pub latency_ms: LatencySummary,
    pub sysbench_percentile: Option<PercentileValue>,
    pub service_latency_ms: Option<LatencySummary>,
    pub statements: Vec<StatementResult>,
    /// With `--rate`.
    pub queue: Option<QueueResult>,
    /// Under `--rate` or `--rate-stages`, the mean target over the
    /// interval in events per second (beside `rates.tps`, what was done);
    /// none for a closed-loop run.
    #[serde(default)]
    pub target_rate: Option<f64>,
    /// Under `--rate-stages`, arrivals dropped in the interval: not
    /// started within a second of their time, never run. None under
    /// `--rate`, which keeps them waiting instead.
    #[serde(default)]
    pub dropped: Option<u64>,
    /// Under `--rate` or `--rate-stages`, events of the interval that
    /// started more than a second after their arrival.
    #[serde(default)]
    pub late_starts: Option<u64>,
    /// The interval's histograms, for `wirebench merge`.
    #[serde(default)]
    pub recorded: Option<Recorded>,
    /// `--server-stats`: what the server did over the interval (between
    /// the samples at its edges); none when its sample failed. Boxed: an
    /// interval without it stays small.
    #[serde(default)]
    pub server: Option<Box<ServerResult>>,
    /// The share of the interval the client's event loops were running
    /// or ready to run without a core, 0 to 1: near 1, the client is the
    /// limit. Absent when it could not be read (no /proc).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_busy: Option<f64>,
    /// `--idle-connections`: those logged in at the interval's end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_connections: Option<u64>,
    /// In `wirebench merge`'s output: the shards that did not run through
    /// this whole interval; absent when every shard did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partial_shards: Vec<PartialShard>,
}

/// What one interval held, where it sits in time.
#[derive(Debug, Clone, Copy)]
pub struct IntervalSpan {
    pub threads: u32,
    pub end_s: f64,
    pub length_s: f64,
    /// Unix time of the measured run's start (the end of the warm-up), in
    /// seconds.
    pub measured_from_unix_s: f64,
}

impl IntervalResult {
    pub fn new(span: IntervalSpan, interval: &Interval, listing: &LatencyListing, queue: Option<QueueStats>) -> Self {
        let (counters, latencies) = (&interval.counters, &interval.latencies);
        IntervalResult {
            threads: span.threads,
            time_s: span.end_s,
            interval_s: span.length_s,
            start_unix_s: span.measured_from_unix_s + span.end_s - span.length_s,
            counters: CounterTotals::of(counters),
            rates: Rates::of(counters, span.length_s),
            latency_ms: listing.event_summary(latencies),
            sysbench_percentile: listing.sysbench_line(&latencies.sysbench),
            service_latency_ms: listing.service_summary(latencies),
            statements: listing.kind_results(latencies),
            queue: queue.map(QueueResult::from),
            target_rate: None,
            dropped: None,
            late_starts: None,
            recorded: listing.recorded(latencies, &[]),
            server: None,
            client_busy: None,
            idle_connections: None,
            partial_shards: Vec::new(),
        }
    }

    /// With an open loop's target and the arrivals that did not start on
    /// time.
    pub fn with_arrivals(self, arrivals: Option<ArrivalStats>) -> Self {
        let Some(a) = arrivals else { return self };
        IntervalResult {
            target_rate: Some(finite(a.target_rate)),
            dropped: a.staged.then_some(a.dropped),
            late_starts: Some(a.late),
            ..self
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
    /// `--server-stats`' headline figures.
    #[serde(default)]
    pub server: Option<ServerHeadline>,
}

/// The server's figures a sweep table, a comparison and a chart show.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerHeadline {
    pub cpu_us_per_query: Option<f64>,
    pub cpu_us_per_transaction: Option<f64>,
    pub cpu_cores: Option<f64>,
    pub buffer_pool_hit_ratio: Option<f64>,
    pub rows_read_per_query: Option<f64>,
    pub disk_reads_per_query: Option<f64>,
}

impl ServerHeadline {
    pub fn of(figures: &ServerFigures) -> Self {
        ServerHeadline {
            cpu_us_per_query: figures.cpu_us_per_query,
            cpu_us_per_transaction: figures.cpu_us_per_transaction,
            cpu_cores: figures.cpu_cores,
            buffer_pool_hit_ratio: figures.buffer_pool_hit_ratio,
            rows_read_per_query: figures.rows_read_per_query,
            disk_reads_per_query: figures.disk_reads_per_query,
        }
    }
}

/// The line after a sweep's last step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepSummary {
    pub run: RunInfo,
    pub steps: Vec<StepFigures>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::recorded::RecordedHistograms;
    use crate::results::result_line::ResultLine;

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
            shard: None,
        }
    }

    const KINDS: &[&str] = &["point_select", "commit"];

    /// Events of 1..=100 ms, each with a 1 ms service time and a
    /// point select of half its latency.
    fn latencies() -> Latencies {
        let mut l = Latencies::new(KINDS);
        for ms in 1..=100u64 {
            l.sysbench.record_ns(ms * 1_000_000);
            l.events.record_ns(ms * 1_000_000);
            l.service.record_ns(1_000_000);
            l.kinds.record(0, ms * 500_000);
        }
        l
    }

    fn shape<'a>(info: &'a RunInfo, listing: &'a LatencyListing) -> RunShape<'a> {
        RunShape { info, step: None, threads: 4, end: RunEnd::Completed, warmup_s: 0, listing }
    }

    #[test]
    fn a_run_of_no_time_has_zero_rates_not_nan() {
        let counters = Counters { events: 3, ..Counters::default() };
        let latencies = Latencies::new(KINDS);
        let rate = RateSummary {
            target: 10,
            arrival: "poisson",
            achieved: f64::INFINITY,
            waiting: 0,
            oldest_wait_s: 0.0,
            missed: false,
            dropped: None,
            late: 0,
            client: None,
        };
        let measured = Measured {
            counters: &counters,
            latencies: &latencies,
            connections: &[],
            time_s: 0.0,
            rate_window_s: 0.0,
            rate: Some(rate),
        };
        let (info, listing) = (info(), LatencyListing::new(&[95.0], Some(95), true, RecordedHistograms::Kept));
        let result = RunResult::new(shape(&info, &listing), measured);
        assert_eq!(result.rates.tps, 0.0);
        assert_eq!(result.fairness.events_avg, 0.0);
        assert_eq!(result.rate.as_ref().map(|r| r.achieved_tps), Some(0.0));
        let json = serde_json::to_string(&ResultLine::Final(Box::new(result))).unwrap();
        assert!(json.contains("\"tps\":0.0"), "{json}");
        assert!(json.contains("\"events_avg\":0.0"), "{json}");
    }

    #[test]
    fn a_final_result_carries_the_hdr_figures() {
        let counters = Counters { events: 100, reads: 1000, ..Counters::default() };
        let latencies = latencies();
        let connections = [ConnStats { events: 100, busy_ns: latencies.sysbench.sum_ns() }];
        let rate = RateSummary {
            target: 80,
            arrival: "fixed",
            achieved: 50.0,
            waiting: 7,
            oldest_wait_s: 0.5,
            missed: true,
            dropped: None,
            late: 0,
            client: None,
        };
        let measured = Measured {
            counters: &counters,
            latencies: &latencies,
            connections: &connections,
            time_s: 2.0,
            rate_window_s: 2.0,
            rate: Some(rate),
        };
        let (info, listing) = (info(), LatencyListing::new(&[99.9], Some(95), true, RecordedHistograms::Kept));
        let result = RunResult::new(shape(&info, &listing), measured);
        assert_eq!(result.latency_ms.at(99.9), Some(latencies.events.percentile_ms(99.9)));
        let p95 = latencies.events.percentile_ms(95.0);
        assert!((p95 - 95.0).abs() < 0.1 && p95 != latencies.sysbench.percentile(95.0), "{p95}");
        assert_eq!(result.latency_ms.at(95.0), Some(p95));
        assert_eq!(result.sysbench_percentile.map(|p| p.ms), Some(latencies.sysbench.percentile(95.0)));
        assert_eq!(result.service_latency_ms.as_ref().and_then(|s| s.at(99.0)), Some(1.0));
        assert_eq!(result.statements.len(), 1, "commit never ran");
        assert_eq!((result.statements[0].count, result.statements[0].latency_ms.max), (100, 50.0));
        assert_eq!(result.latency_spectrum.last().map(|s| (s.percentile, s.count)), Some((100.0, 100)));
        let rate = result.rate.clone().unwrap();
        assert_eq!((rate.arrival.as_str(), rate.target_met, rate.backlog), ("fixed", false, 7));
        let figures = result.figures();
        assert_eq!((figures.tps, figures.qps), (50.0, 500.0));
        assert_eq!((figures.p95_ms, figures.p99_ms), (Some(p95), Some(latencies.events.percentile_ms(99.0))));
    }

    #[test]
    fn without_rate_no_service_time() {
        let latencies = latencies();
        let listing = LatencyListing::new(&[], None, false, RecordedHistograms::Kept);
        let measured = Measured {
            counters: &Counters::default(),
            latencies: &latencies,
            connections: &[],
            time_s: 1.0,
            rate_window_s: 1.0,
            rate: None,
        };
        let result = RunResult::new(shape(&info(), &listing), measured);
        assert_eq!((result.service_latency_ms, result.rate, result.sysbench_percentile), (None, None, None));
    }

    /// Omitted, the histograms are not made (`None`), and nothing else
    /// of the interval or the final result changes.
    #[test]
    fn histograms_are_kept_only_when_asked() {
        let mut interval = Interval::new(KINDS);
        interval.latencies = latencies();
        let span = IntervalSpan { threads: 2, end_s: 2.0, length_s: 1.0, measured_from_unix_s: 1000.0 };
        let listing = |histograms| LatencyListing::new(&[95.0], Some(95), false, histograms);
        let (kept, omitted) = (listing(RecordedHistograms::Kept), listing(RecordedHistograms::Omitted));
        let interval_kept = IntervalResult::new(span, &interval, &kept, None);
        let interval_omitted = IntervalResult::new(span, &interval, &omitted, None);
        assert!(interval_kept.recorded.is_some());
        assert_eq!(interval_omitted, IntervalResult { recorded: None, ..interval_kept });
        let connections = [ConnStats { events: 100, busy_ns: 7 }];
        let measured = Measured {
            counters: &interval.counters,
            latencies: &interval.latencies,
            connections: &connections,
            time_s: 2.0,
            rate_window_s: 2.0,
            rate: None,
        };
        let info = info();
        let final_kept = RunResult::new(shape(&info, &kept), measured);
        let final_omitted = RunResult::new(shape(&info, &omitted), measured);
        assert_eq!(final_kept.recorded.as_ref().map(|r| r.connections.clone()), Some(vec![(100, 7)]));
        assert_eq!(final_omitted, RunResult { recorded: None, ..final_kept });
    }

    #[test]
    fn lines_read_back_as_written() {
        let mut interval = Interval::new(KINDS);
        interval.latencies = latencies();
        let span = IntervalSpan { threads: 2, end_s: 2.0, length_s: 1.0, measured_from_unix_s: 1000.0 };
        let listing = LatencyListing::new(&[95.0], Some(95), true, RecordedHistograms::Kept);
        let result = IntervalResult::new(span, &interval, &listing, Some(QueueStats::default()));
        assert_eq!(result.start_unix_s, 1001.0);
        assert_eq!(result.statements.len(), 1);
        assert!(result.service_latency_ms.is_some());
        let line = ResultLine::Interval(result);
        let text = serde_json::to_string(&line).unwrap();
        assert!(text.starts_with("{\"type\":\"interval\""), "{text}");
        assert_eq!(serde_json::from_str::<ResultLine>(&text).unwrap(), line);
    }
}
