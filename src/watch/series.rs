//! What the series show now: counters since the command began, gauges of
//! the last complete interval, the latency histogram, a search's last
//! step, a fuzzing run's progress. The report thread updates them once
//! per interval ([`SeriesValues::add_interval`]); [`SeriesValues::families`]
//! turns a copy of them into the families a scrape or a push sends.
//!
//! Counters only grow: across a sweep's or a search's steps they keep
//! adding up, and a `--report-checkpoints` reset (which restarts the
//! report's totals) does not reset them, as Prometheus expects of a
//! counter. The warm-up is left out, as the report leaves it out.

use std::collections::BTreeMap;

use super::capture_series::{record_families, replay_families, RecordFigures, ReplayEnding, ReplayFigures};
use super::families::{Family, FamilyKind};
use super::latency_buckets::LatencyBuckets;
use crate::results::replay_record::ReplayResult;
use crate::results::search_record::{SearchStepResult, StepVerdict};
use crate::results::IntervalResult;
use crate::stats::{ErrorCodes, HdrLatency, RelayCounts};

/// One complete interval, as the orchestration hands it over.
#[derive(Debug, Clone, Copy)]
pub struct IntervalTick<'a> {
    /// Its figures, as `--format=json` writes them (the live page's point).
    pub record: &'a IntervalResult,
    /// Its events' latencies (the histogram's counts).
    pub events: &'a HdrLatency,
    /// Its ignored errors by the server's code.
    pub error_codes: &'a ErrorCodes,
}

/// A fuzzing run's progress (`wirebench fuzz`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FuzzFigures {
    /// Sessions run to their end ("execs").
    pub sessions: u64,
    pub packets: u64,
    /// Packets the safety check kept back.
    pub withheld: u64,
    /// Distinct (message, answer, error) states reached.
    pub states: u64,
    /// Sessions kept for reaching a state first.
    pub corpus: u64,
    /// Checks of the server by the control connection.
    pub checks: u64,
    /// Failures found: crashes, hangs, memory blow-ups.
    pub findings: u64,
}

/// The run's counters since it began.
#[derive(Debug, Clone, Default, PartialEq)]
struct RunCounters {
    reads: u64,
    writes: u64,
    others: u64,
    transactions: u64,
    reconnects: u64,
    /// By code; `unknown` for errors a script counted without one.
    errors: BTreeMap<String, u64>,
    late_starts: Option<u64>,
    dropped: Option<u64>,
    server_cpu_s: Option<f64>,
    server_questions: Option<u64>,
}

/// Gauges of the last complete interval.
#[derive(Debug, Clone, Default, PartialEq)]
struct IntervalGauges {
    active: u64,
    idle: Option<u64>,
    target_tps: Option<f64>,
    achieved_tps: f64,
    busy: Option<f64>,
    elapsed_s: f64,
    server: Option<ServerGauges>,
}

#[derive(Debug, Clone, Default, PartialEq)]
struct ServerGauges {
    cpu_per_query_s: Option<f64>,
    buffer_pool_hit: Option<f64>,
    rows_read_per_query: Option<f64>,
    disk_reads_per_query: Option<f64>,
    threads_running: Option<u64>,
}

/// A search's progress: its last step and its best passing rate so far.
#[derive(Debug, Clone, Default, PartialEq)]
struct SearchGauges {
    steps: BTreeMap<&'static str, u64>,
    target_tps: Option<u32>,
    achieved_tps: f64,
    latency_s: Vec<(String, f64)>,
    best_tps: Option<u32>,
}

/// Every series' value now.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SeriesValues {
    /// `wirebench_run_info`'s labels, once known.
    info: Vec<(&'static str, String)>,
    run: Option<RunCounters>,
    gauges: IntervalGauges,
    latency: LatencyBuckets,
    search: Option<SearchGauges>,
    fuzz: Option<FuzzFigures>,
    replay: Option<ReplayFigures>,
    record: Option<RecordFigures>,
}

impl SeriesValues {
    /// The version of the server and of wirebench, and how many shards
    /// the run has: `wirebench_run_info`'s labels.
    pub fn set_info(&mut self, server_version: Option<&str>, shards: u32) {
        self.info = vec![
            ("wirebench_version", env!("CARGO_PKG_VERSION").to_owned()),
            ("server_version", server_version.unwrap_or_default().to_owned()),
            ("shards", shards.to_string()),
        ];
    }

    /// An interval: its counts added, the gauges its own.
    pub fn add_interval(&mut self, tick: IntervalTick<'_>) {
        self.add_counts(tick);
        let record = tick.record;
        let server = record.server.as_deref();
        self.gauges = IntervalGauges {
            active: u64::from(record.threads),
            idle: record.idle_connections,
            target_tps: record.target_rate,
            achieved_tps: record.rates.tps,
            busy: record.client_busy,
            elapsed_s: record.time_s,
            server: server.map(|s| ServerGauges {
                cpu_per_query_s: s.figures.cpu_us_per_query.map(|us| us / 1e6),
                buffer_pool_hit: s.figures.buffer_pool_hit_ratio,
                rows_read_per_query: s.figures.rows_read_per_query,
                disk_reads_per_query: s.figures.disk_reads_per_query,
                threads_running: s.delta.threads_running,
            }),
        };
    }

    /// The run's last, partial interval: its counts added; the gauges
    /// stay the last complete interval's.
    pub fn add_tail(&mut self, tick: IntervalTick<'_>) {
        self.add_counts(tick);
        self.gauges.elapsed_s = tick.record.time_s;
    }

    fn add_counts(&mut self, tick: IntervalTick<'_>) {
        let record = tick.record;
        let run = self.run.get_or_insert_with(RunCounters::default);
        let c = &record.counters;
        run.reads += c.reads;
        run.writes += c.writes;
        run.others += c.others;
        run.transactions += c.transactions;
        run.reconnects += c.reconnects;
        for &(code, n) in tick.error_codes.codes() {
            *run.errors.entry(code.to_string()).or_default() += n;
        }
        let by_code = tick.error_codes.total();
        add_errors(&mut run.errors, "other", tick.error_codes.overflow());
        add_errors(&mut run.errors, "unknown", c.ignored_errors.saturating_sub(by_code));
        if let Some(late) = record.late_starts {
            *run.late_starts.get_or_insert(0) += late;
        }
        if let Some(dropped) = record.dropped {
            *run.dropped.get_or_insert(0) += dropped;
        }
        let server = record.server.as_deref();
        if let Some(cores) = server.and_then(|s| s.figures.cpu_cores) {
            *run.server_cpu_s.get_or_insert(0.0) += cores * record.interval_s;
        }
        if let Some(&questions) = server.and_then(|s| s.delta.status.get("Questions")) {
            *run.server_questions.get_or_insert(0) += questions;
        }
        self.latency.add(tick.events);
    }

    /// A search's step, as it ends.
    pub fn add_search_step(&mut self, step: &SearchStepResult) {
        let search = self.search.get_or_insert_with(SearchGauges::default);
        let verdict = match step.verdict {
            StepVerdict::Pass => "pass",
            StepVerdict::Fail => "fail",
            StepVerdict::ClientBound => "client_bound",
        };
        *search.steps.entry(verdict).or_default() += 1;
        search.target_tps = step.target_tps;
        search.achieved_tps = step.achieved_tps;
        search.latency_s = step.latency_ms.iter().map(|p| (p.percentile.to_string(), p.ms / 1e3)).collect();
        if step.verdict == StepVerdict::Pass {
            search.best_tps = search.best_tps.max(step.target_tps);
        }
    }

    pub fn set_fuzz(&mut self, figures: FuzzFigures) {
        self.fuzz = Some(figures);
    }

    /// A replay (or a replay search's step) starts at `speed` (`None`:
    /// as fast as it can).
    pub fn set_replay_speed(&mut self, speed: Option<f64>) {
        self.replay.get_or_insert_with(ReplayFigures::default).target_speed = speed;
    }

    /// A replay's result: its own counters, and the commands that started
    /// late, which its intervals do not count.
    pub fn set_replay_result(&mut self, result: &ReplayResult) {
        self.replay.get_or_insert_with(ReplayFigures::default).ended = Some(ReplayEnding::of(result));
        let run = self.run.get_or_insert_with(RunCounters::default);
        run.late_starts = Some(run.late_starts.unwrap_or(0).max(result.late_starts));
    }

    /// The recording proxy's counts, `elapsed_s` into the recording.
    pub fn set_record(&mut self, counts: &RelayCounts, elapsed_s: f64) {
        self.record = Some(RecordFigures { counts: counts.clone(), elapsed_s });
    }

    /// The families of every series that has a value.
    pub fn families(&self) -> Vec<Family> {
        let mut out = Vec::new();
        if !self.info.is_empty() {
            let labels: Vec<(&'static str, &str)> = self.info.iter().map(|(k, v)| (*k, v.as_str())).collect();
            out.push(
                Family::new("wirebench_run", FamilyKind::Info, "The run: wirebench's and the server's versions")
                    .with(&labels, 1.0),
            );
        }
        if let Some(run) = &self.run {
            self.run_families(run, &mut out);
        }
        if let Some(search) = &self.search {
            search_families(search, &mut out);
        }
        if let Some(fuzz) = &self.fuzz {
            fuzz_families(fuzz, &mut out);
        }
        if let Some(replay) = &self.replay {
            replay_families(replay, &mut out);
        }
        if let Some(record) = &self.record {
            record_families(record, &mut out);
        }
        out
    }

    fn run_families(&self, run: &RunCounters, out: &mut Vec<Family>) {
        use FamilyKind::{Counter, Gauge};
        let mut queries = Family::new("wirebench_queries", Counter, "Queries answered, by sysbench's kind");
        for (kind, n) in [("read", run.reads), ("write", run.writes), ("other", run.others)] {
            queries.push("_total", &[("kind", kind)], n as f64);
        }
        out.push(queries);
        out.push(
            Family::new("wirebench_transactions", Counter, "Events (sysbench's transactions) completed")
                .with(&[], run.transactions as f64),
        );
        let mut errors = Family::new("wirebench_errors", Counter, "Errors ignored (--mysql-ignore-errors), by code");
        for (code, n) in &run.errors {
            errors.push("_total", &[("code", code)], *n as f64);
        }
        out.push(errors);
        out.push(
            Family::new("wirebench_reconnects", Counter, "Lost connections opened again")
                .with(&[], run.reconnects as f64),
        );
        if let Some(late) = run.late_starts {
            let help = "Events started more than a second after their arrival (--rate)";
            out.push(Family::new("wirebench_late_starts", Counter, help).with(&[], late as f64));
        }
        if let Some(dropped) = run.dropped {
            let help = "Arrivals dropped, not started within a second (--rate-stages)";
            out.push(Family::new("wirebench_dropped_arrivals", Counter, help).with(&[], dropped as f64));
        }
        let g = &self.gauges;
        // A replay's connections come and go with the capture's: its own
        // series count them.
        if self.replay.is_none() {
            let mut connections =
                Family::new("wirebench_connections", Gauge, "Connections held: active (--threads), idle");
            connections.push("", &[("state", "active")], g.active as f64);
            if let Some(idle) = g.idle {
                connections.push("", &[("state", "idle")], idle as f64);
            }
            out.push(connections);
        }
        if let Some(target) = g.target_tps {
            let help = "The target rate over the last interval (--rate, --rate-stages)";
            out.push(Family::new("wirebench_target_transactions_per_second", Gauge, help).with(&[], target));
        }
        let help = "Events completed per second over the last interval";
        out.push(Family::new("wirebench_achieved_transactions_per_second", Gauge, help).with(&[], g.achieved_tps));
        if let Some(busy) = g.busy {
            let help = "Share of the last interval the client's event loops were running or waiting for a core";
            out.push(Family::new("wirebench_client_busy_ratio", Gauge, help).in_unit("ratio").with(&[], busy));
        }
        let help = "Seconds measured so far (after --warmup-time)";
        out.push(Family::new("wirebench_elapsed_seconds", Gauge, help).in_unit("seconds").with(&[], g.elapsed_s));
        out.push(self.latency_family());
        server_families(run, g.server.as_ref(), out);
    }

    fn latency_family(&self) -> Family {
        let help = "Each event's latency (under --rate, from its intended start)";
        let mut family = Family::new("wirebench_latency_seconds", FamilyKind::Histogram, help).in_unit("seconds");
        for (bound, count) in self.latency.cumulative() {
            family.push("_bucket", &[("le", &super::families::float_text(bound))], count as f64);
        }
        family.push("_count", &[], self.latency.count() as f64);
        family.push("_sum", &[], self.latency.sum_seconds());
        family
    }
}

fn add_errors(errors: &mut BTreeMap<String, u64>, code: &str, n: u64) {
    if n > 0 {
        *errors.entry(code.to_owned()).or_default() += n;
    }
}

/// `--server-stats` over `--report-interval`s.
fn server_families(run: &RunCounters, gauges: Option<&ServerGauges>, out: &mut Vec<Family>) {
    use FamilyKind::{Counter, Gauge};
    if let Some(cpu) = run.server_cpu_s {
        let help = "The server process's CPU time (user and system) while the run measured";
        out.push(Family::new("wirebench_server_cpu_seconds", Counter, help).in_unit("seconds").with(&[], cpu));
    }
    if let Some(questions) = run.server_questions {
        let help = "The server's Questions while the run measured";
        out.push(Family::new("wirebench_server_questions", Counter, help).with(&[], questions as f64));
    }
    let Some(g) = gauges else { return };
    let gauges = [
        (
            "wirebench_server_cpu_per_query_seconds",
            "The server's CPU time per query over the last interval",
            g.cpu_per_query_s,
        ),
        ("wirebench_server_buffer_pool_hit_ratio", "InnoDB buffer pool hits over the last interval", g.buffer_pool_hit),
        ("wirebench_server_rows_read_per_query", "Rows read per query over the last interval", g.rows_read_per_query),
        (
            "wirebench_server_disk_reads_per_query",
            "InnoDB pages read from disk per query over the last interval",
            g.disk_reads_per_query,
        ),
        (
            "wirebench_server_threads_running",
            "The server's Threads_running at the last interval's end",
            g.threads_running.map(|n| n as f64),
        ),
    ];
    for (name, help, value) in gauges {
        if let Some(value) = value {
            let family = Family::new(name, Gauge, help);
            let family = match name.rsplit('_').next() {
                Some(unit @ ("seconds" | "ratio")) => family.in_unit(unit),
                _ => family,
            };
            out.push(family.with(&[], value));
        }
    }
}

fn search_families(search: &SearchGauges, out: &mut Vec<Family>) {
    use FamilyKind::{Counter, Gauge};
    let mut steps = Family::new("wirebench_search_steps", Counter, "The search's steps that ended, by verdict");
    for verdict in ["pass", "fail", "client_bound"] {
        let n = search.steps.get(verdict).copied().unwrap_or(0);
        steps.push("_total", &[("verdict", verdict)], n as f64);
    }
    out.push(steps);
    if let Some(target) = search.target_tps {
        let help = "The last step's target rate";
        out.push(
            Family::new("wirebench_search_step_target_transactions_per_second", Gauge, help)
                .with(&[], f64::from(target)),
        );
    }
    let help = "The last step's achieved rate";
    out.push(
        Family::new("wirebench_search_step_achieved_transactions_per_second", Gauge, help)
            .with(&[], search.achieved_tps),
    );
    let help = "The last step's latency at each --slo percentile";
    let mut latency = Family::new("wirebench_search_step_latency_seconds", Gauge, help).in_unit("seconds");
    for (percentile, s) in &search.latency_s {
        latency.push("", &[("percentile", percentile)], *s);
    }
    out.push(latency);
    if let Some(best) = search.best_tps {
        let help = "The highest target rate that held the bounds so far";
        out.push(Family::new("wirebench_search_best_transactions_per_second", Gauge, help).with(&[], f64::from(best)));
    }
}

fn fuzz_families(fuzz: &FuzzFigures, out: &mut Vec<Family>) {
    use FamilyKind::{Counter, Gauge};
    let counters = [
        ("wirebench_fuzz_sessions", "Fuzzed sessions run to their end (execs)", fuzz.sessions),
        ("wirebench_fuzz_packets", "Packets sent to the server", fuzz.packets),
        ("wirebench_fuzz_withheld_packets", "Packets the safety check kept back", fuzz.withheld),
        ("wirebench_fuzz_checks", "Checks of the server by the control connection", fuzz.checks),
        ("wirebench_fuzz_findings", "Failures found: crashes, hangs, memory blow-ups", fuzz.findings),
    ];
    for (name, help, n) in counters {
        out.push(Family::new(name, Counter, help).with(&[], n as f64));
    }
    out.push(Family::new("wirebench_fuzz_states", Gauge, "Distinct states reached").with(&[], fuzz.states as f64));
    let help = "Sessions kept in the corpus for reaching a state first";
    out.push(Family::new("wirebench_fuzz_corpus_sessions", Gauge, help).with(&[], fuzz.corpus as f64));
}

#[cfg(test)]
pub(super) mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::results::latency_summary::PercentileValue;
    use crate::results::search_record::SearchPhase;
    use crate::server_stats::{ServerDelta, ServerFigures, ServerResult};

    /// An interval line of `transactions` events, `errors` of them ignored.
    pub(in crate::watch) fn interval(transactions: u64, errors: u64) -> IntervalResult {
        let text = format!(
            r#"{{"threads":4,"time_s":2.0,"interval_s":1.0,"start_unix_s":1.0,"target_rate":100.0,"late_starts":2,
            "dropped":1,"client_busy":0.25,"idle_connections":7,
            "counters":{{"transactions":{transactions},"queries":0,"reads":{},"writes":1,"others":2,
                         "ignored_errors":{errors},"reconnects":1}},
            "rates":{{"tps":{transactions}.0,"qps":0.0,"reads_per_s":0.0,"writes_per_s":0.0,"others_per_s":0.0,
                      "ignored_errors_per_s":0.0,"reconnects_per_s":0.0}},
            "latency_ms":{{"count":0,"min":0.0,"avg":0.0,"max":0.0,"sum":0.0,"percentiles":[]}},"statements":[]}}"#,
            transactions * 10
        );
        let mut record: IntervalResult = serde_json::from_str(&text).unwrap();
        let delta = ServerDelta {
            seconds: 1.0,
            status: BTreeMap::from([("Questions".to_owned(), 50)]),
            threads_running: Some(3),
            process: None,
            sampler_statements: 0,
        };
        let figures = ServerFigures {
            cpu_cores: Some(0.5),
            cpu_us_per_query: Some(20.0),
            buffer_pool_hit_ratio: Some(0.99),
            rows_read_per_query: Some(1.0),
            disk_reads_per_query: Some(0.0),
            ..ServerFigures::default()
        };
        record.server = Some(Box::new(ServerResult { delta, figures, source: None, consistency: None }));
        record
    }

    /// Every series filled: a run's intervals, a search step, a fuzzing run.
    pub(in crate::watch) fn every_series() -> SeriesValues {
        let mut values = SeriesValues::default();
        values.set_info(Some("10.11.6-MariaDB"), 2);
        let mut latency = HdrLatency::new();
        latency.record_ns(3_000_000);
        let mut codes = ErrorCodes::default();
        codes.record(1213);
        let record = interval(10, 3);
        values.add_interval(IntervalTick { record: &record, events: &latency, error_codes: &codes });
        values.add_search_step(&SearchStepResult {
            index: 1,
            phase: SearchPhase::Search,
            target_tps: Some(1000),
            achieved_tps: 990.0,
            time_s: 10.0,
            events: 9900,
            errors: 0,
            latency_ms: vec![PercentileValue { percentile: 99.0, ms: 4.0 }],
            late_starts: 0,
            client: None,
            verdict: StepVerdict::Pass,
            reasons: Vec::new(),
            near_client_limit: None,
            target_speed: None,
            achieved_speed: None,
        });
        values.set_fuzz(FuzzFigures { sessions: 5, ..FuzzFigures::default() });
        values
    }

    fn sample(families: &[Family], name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        families.iter().flat_map(|f| f.samples.iter().map(move |s| (format!("{}{}", f.name, s.suffix), s))).find_map(
            |(sample_name, s)| {
                let matches = labels.iter().all(|(k, v)| s.labels.iter().any(|(lk, lv)| lk == k && lv == v));
                (sample_name == name && matches).then_some(s.value)
            },
        )
    }

    /// Counters add up over intervals; errors are by code, those a script
    /// counted without one `unknown`; the gauges are the last interval's,
    /// which the run's last, partial interval does not replace.
    #[test]
    fn counters_add_up_and_gauges_are_the_last_intervals() {
        let mut values = SeriesValues::default();
        let mut latency = HdrLatency::new();
        latency.record_ns(1_000_000);
        let mut codes = ErrorCodes::default();
        codes.record(1213);
        codes.record(1213);
        let first = interval(10, 3);
        values.add_interval(IntervalTick { record: &first, events: &latency, error_codes: &codes });
        let mut tail = interval(4, 0);
        tail.rates.tps = 1234.0;
        tail.time_s = 2.5;
        values.add_tail(IntervalTick { record: &tail, events: &latency, error_codes: &ErrorCodes::default() });
        let families = values.families();
        assert_eq!(sample(&families, "wirebench_transactions_total", &[]), Some(14.0));
        assert_eq!(sample(&families, "wirebench_queries_total", &[("kind", "read")]), Some(140.0));
        assert_eq!(sample(&families, "wirebench_errors_total", &[("code", "1213")]), Some(2.0));
        assert_eq!(sample(&families, "wirebench_errors_total", &[("code", "unknown")]), Some(1.0));
        assert_eq!(sample(&families, "wirebench_late_starts_total", &[]), Some(4.0));
        assert_eq!(sample(&families, "wirebench_server_questions_total", &[]), Some(100.0));
        assert_eq!(sample(&families, "wirebench_achieved_transactions_per_second", &[]), Some(10.0), "not the tail's");
        assert_eq!(sample(&families, "wirebench_elapsed_seconds", &[]), Some(2.5), "the tail's");
        assert_eq!(sample(&families, "wirebench_connections", &[("state", "idle")]), Some(7.0));
        assert_eq!(sample(&families, "wirebench_latency_seconds_count", &[]), Some(2.0));
        assert_eq!(sample(&families, "wirebench_latency_seconds_bucket", &[("le", "+Inf")]), Some(2.0));
    }

    #[test]
    fn a_search_counts_its_steps_by_verdict_and_keeps_its_best() {
        let families = every_series().families();
        assert_eq!(sample(&families, "wirebench_search_steps_total", &[("verdict", "pass")]), Some(1.0));
        assert_eq!(sample(&families, "wirebench_search_steps_total", &[("verdict", "fail")]), Some(0.0));
        assert_eq!(sample(&families, "wirebench_search_best_transactions_per_second", &[]), Some(1000.0));
        assert_eq!(sample(&families, "wirebench_search_step_latency_seconds", &[("percentile", "99")]), Some(0.004));
        assert_eq!(sample(&families, "wirebench_fuzz_sessions_total", &[]), Some(5.0));
        assert_eq!(sample(&families, "wirebench_run_info", &[("shards", "2")]), Some(1.0));
    }
}
