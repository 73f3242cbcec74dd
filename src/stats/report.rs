//! sysbench 1.0.20's text output, byte for byte, so scripts that parse
//! sysbench's reports parse wirebench's unchanged.
//!
//! Each piece is a `Display` value that writes exactly what sysbench writes
//! at that point of a run, trailing newlines included; print them in
//! sysbench's order:
//! [`Banner`], [`RunHeader`], [`INITIALIZING_WORKERS`], [`THREADS_STARTED`],
//! an [`InterimReport`] per `--report-interval`, then at the end
//! [`HistogramReport`] (with `--histogram`) and [`FinalReport`]
//! ([`CheckpointLine`] + [`FinalReport`] for `--report-checkpoints`).
//!
//! Formats and arithmetic come from `sysbench.c` (`print_run_mode`,
//! `sb_report_cumulative`), `db_driver.c` (`db_report_intermediate`,
//! `db_report_cumulative`) and `sb_logger.c` (`log_timestamp`), including
//! their unit round trips (ns → s → ms), which can move a value by one ulp.
//! Rust's `{:w.p}` rounds like glibc's `%w.pf` (exactly, ties to even);
//! only NaN is spelt differently, which [`CFloat`] fixes. sysbench's logger
//! suppresses a message identical to the previous one, but no two
//! consecutive report lines are ever identical, so that never shows.

use std::fmt;

use super::counters::{ConnStats, Counters};
use super::histogram::LatencyHistogram;

/// The first line sysbench prints (`sysbench 1.0.20 (using system LuaJIT
/// 2.1.0-beta3)`), in wirebench's words.
pub const VERSION_LINE: &str = concat!("wirebench ", env!("CARGO_PKG_VERSION"), " (sysbench 1.0.20 compatible)");

/// Printed when the connections start being opened.
pub const INITIALIZING_WORKERS: &str = "Initializing worker threads...\n\n";

/// Printed when every connection is ready and the clock starts.
pub const THREADS_STARTED: &str = "Threads started!\n\n";

/// `printf("%*.*f")`: Rust's formatting, except NaN, which glibc writes as
/// `nan` or `-nan` (a 0/0 on x86 is `-nan`).
#[derive(Clone, Copy, Debug)]
pub struct CFloat {
    pub value: f64,
    pub width: usize,
    pub precision: usize,
}

impl CFloat {
    pub fn new(value: f64, width: usize, precision: usize) -> Self {
        CFloat { value, width, precision }
    }
}

impl fmt::Display for CFloat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (v, w, p) = (self.value, self.width, self.precision);
        if v.is_nan() {
            let s = if v.is_sign_negative() { "-nan" } else { "nan" };
            write!(f, "{s:>w$}")
        } else {
            write!(f, "{v:>w$.p$}")
        }
    }
}

fn cf(value: f64, width: usize, precision: usize) -> CFloat {
    CFloat::new(value, width, precision)
}

/// `NS2SEC()`.
fn ns_to_s(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// `SEC2MS(NS2SEC(ns))`, the path every latency takes to the final report.
fn ns_to_report_ms(ns: u64) -> f64 {
    ns_to_s(ns) * 1000.0
}

/// `SEC2MS(MS2SEC(ms))`: percentiles travel through seconds in `sb_stat_t`.
fn ms_round_trip(ms: f64) -> f64 {
    ms / 1000.0 * 1000.0
}

/// The first line of a command ([`VERSION_LINE`], or sysbench's when
/// wirebench runs as `sysbench`) and the blank line after it.
pub struct Banner<'a>(pub &'a str);

impl fmt::Display for Banner<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}\n\n", self.0)
    }
}

/// `print_run_mode()`: the options block before the workers start.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunHeader<'a> {
    pub threads: u32,
    /// `--warmup-time` (sysbench master's line); 0 = line omitted.
    pub warmup_s: u32,
    /// `--rate`; 0 = unlimited (line omitted).
    pub rate: u32,
    /// `--rate-stages` as (rate, seconds) pairs; empty = none (line omitted).
    pub rate_stages: &'a [(u32, u32)],
    /// `--report-interval` in seconds; 0 = off (line omitted).
    pub report_interval: u32,
    /// `--report-checkpoints`; empty = off (line omitted).
    pub checkpoints: &'a [u32],
    /// `--debug`: "Debug mode enabled.".
    pub debug: bool,
    /// `--validate`: "Validation checks: on.".
    pub validate: bool,
    /// `--rand-seed`; 0 = seeded from the current time.
    pub rand_seed: i32,
    /// `--time` + `--forced-shutdown` seconds, when forced shutdown is on.
    pub forced_shutdown_s: Option<u32>,
}

impl fmt::Display for RunHeader<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Running the test with following options:\n")?;
        writeln!(f, "Number of threads: {}", self.threads)?;
        if self.warmup_s > 0 {
            writeln!(f, "Warmup time: {}s", self.warmup_s)?;
        }
        if self.rate > 0 {
            writeln!(f, "Target transaction rate: {}/sec", self.rate)?;
        }
        if !self.rate_stages.is_empty() {
            f.write_str("Target transaction rate in stages (each moves it linearly to its rate over its seconds):")?;
            for (i, (rate, secs)) in self.rate_stages.iter().enumerate() {
                let verb = if i == 0 { "holds" } else { "to" };
                write!(f, "{} {verb} {rate}/sec over {secs}s", if i > 0 { "," } else { "" })?;
            }
            let total: u64 = self.rate_stages.iter().map(|&(_, secs)| u64::from(secs)).sum();
            writeln!(f, "; {total}s in all")?;
        }
        if self.report_interval > 0 {
            writeln!(f, "Report intermediate results every {} second(s)", self.report_interval)?;
        }
        if let Some((last, rest)) = self.checkpoints.split_last() {
            f.write_str("Report checkpoint(s) at ")?;
            for c in rest {
                write!(f, "{c}, ")?;
            }
            writeln!(f, "{last} seconds")?;
        }
        // These messages end in "\n" and the logger adds another.
        if self.debug {
            f.write_str("Debug mode enabled.\n\n")?;
        }
        if self.validate {
            f.write_str("Validation checks: on.\n\n")?;
        }
        if self.rand_seed != 0 {
            write!(f, "Initializing random number generator from seed ({}).\n\n", self.rand_seed)?;
        } else {
            f.write_str("Initializing random number generator from current time\n\n")?;
        }
        if let Some(s) = self.forced_shutdown_s {
            writeln!(f, "Forcing shutdown in {s} seconds")?;
        }
        f.write_str("\n")
    }
}

/// `--rate`'s extra interim line: events waiting in the queue and events
/// in progress.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueStats {
    pub length: u64,
    pub concurrency: u64,
}

/// An open-loop interval (`--rate`, `--rate-stages`): the target and the
/// arrivals that did not start on time.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ArrivalStats {
    /// The mean target over the interval, events per second.
    pub target_rate: f64,
    /// `--rate-stages`: arrivals dropped, not started within a second.
    pub dropped: u64,
    /// Events started more than a second after their arrival.
    pub late: u64,
    /// Whether the target follows `--rate-stages`: the interim line then
    /// shows it and the drops (sysbench's lines stay as they are).
    pub staged: bool,
}

/// ` target: 5000.00 dropped: 0` under `--rate-stages`, else nothing.
struct StagedSuffix(Option<ArrivalStats>);

impl fmt::Display for StagedSuffix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(a) if a.staged => write!(f, " target: {} dropped: {}", cf(a.target_rate, 4, 2), a.dropped),
            _ => Ok(()),
        }
    }
}

/// `db_report_intermediate()`: one `--report-interval` line (two with
/// `--rate`).
#[derive(Clone, Copy, Debug)]
pub struct InterimReport<'a> {
    /// Seconds since the threads started (printed `%.0f`).
    pub time_total_s: f64,
    /// Seconds since the previous interim report: the rates' denominator.
    pub time_interval_s: f64,
    /// Connections still running.
    pub threads_running: u32,
    /// This interval's counters.
    pub counters: &'a Counters,
    /// This interval's latencies; its `percentile` is printed.
    pub latency: &'a LatencyHistogram,
    /// `--percentile`.
    pub percentile: u32,
    /// `Some` with `--rate`.
    pub queue: Option<QueueStats>,
    /// `Some` with `--rate` or `--rate-stages`.
    pub arrivals: Option<ArrivalStats>,
    /// The interval's end by the wall clock (RFC 3339), appended to each
    /// line as ` at TIME` in a sharded run or one with `--start-at`, so
    /// the lines of shards on several hosts can be aligned; `None` keeps
    /// sysbench's lines.
    pub at: Option<&'a str>,
    /// Whether the run counts SQL: false for a Lua script that never made
    /// a database driver, which gets `sb_report_intermediate()`'s line.
    pub sql: bool,
}

impl fmt::Display for InterimReport<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.sql {
            return self.fmt_events_only(f);
        }
        let s = self.time_interval_s;
        let c = self.counters;
        let per_s = |n: u64| cf(n as f64 / s, 4, 2);
        let at = AtSuffix(self.at);
        writeln!(
            f,
            "[ {:.0}s ] thds: {} tps: {} qps: {} (r/w/o: {}/{}/{}) lat (ms,{}%): {} err/s: {} reconn/s: {}{}{at}",
            self.time_total_s,
            self.threads_running,
            per_s(c.events),
            per_s(c.queries()),
            per_s(c.reads),
            per_s(c.writes),
            per_s(c.others),
            self.percentile,
            cf(ms_round_trip(self.latency.percentile(f64::from(self.percentile))), 4, 2),
            per_s(c.errors),
            per_s(c.reconnects),
            StagedSuffix(self.arrivals),
        )?;
        if let Some(q) = self.queue {
            writeln!(
                f,
                "[ {:.0}s ] queue length: {}, concurrency: {}{at}",
                self.time_total_s, q.length, q.concurrency
            )?;
        }
        Ok(())
    }
}

impl InterimReport<'_> {
    /// `sb_report_intermediate()`: events per second and latency only.
    fn fmt_events_only(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = AtSuffix(self.at);
        writeln!(
            f,
            "[ {:.0}s ] thds: {} eps: {} lat (ms,{}%): {}{}{at}",
            self.time_total_s,
            self.threads_running,
            cf(self.counters.events as f64 / self.time_interval_s, 4, 2),
            self.percentile,
            cf(ms_round_trip(self.latency.percentile(f64::from(self.percentile))), 4, 2),
            StagedSuffix(self.arrivals),
        )?;
        if let Some(q) = self.queue {
            writeln!(f, "[ {:.0}s ] queue length: {} concurrency: {}{at}", self.time_total_s, q.length, q.concurrency)?;
        }
        Ok(())
    }
}

/// ` at TIME`, or nothing.
struct AtSuffix<'a>(Option<&'a str>);

impl fmt::Display for AtSuffix<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(at) => write!(f, " at {at}"),
            None => Ok(()),
        }
    }
}

/// sysbench master's notice when `--warmup-time` begins, after
/// [`THREADS_STARTED`].
pub struct WarmingUp(pub u32);

impl fmt::Display for WarmingUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Warming up for {} seconds...\n\n", self.0)
    }
}

/// The line before each `--report-checkpoints` report.
#[derive(Clone, Copy, Debug)]
pub struct CheckpointLine {
    pub time_total_s: f64,
}

impl fmt::Display for CheckpointLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "[ {:.0}s ] Checkpoint report:", self.time_total_s)
    }
}

/// The line before `--histogram`'s rows.
pub const HISTOGRAM_TITLE: &str = "Latency histogram (values are in milliseconds)\n";

/// The line holding a single space that sysbench logs after the rows.
pub const HISTOGRAM_END: &str = " \n";

/// `--histogram`'s block: [`HISTOGRAM_TITLE`], `sb_histogram_print()`'s
/// rows, and [`HISTOGRAM_END`].
pub struct HistogramReport<'a>(pub &'a LatencyHistogram);

impl fmt::Display for HistogramReport<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(HISTOGRAM_TITLE)?;
        write!(f, "{}", self.0.rows())?;
        f.write_str(HISTOGRAM_END)
    }
}

/// `db_report_cumulative()` + `sb_report_cumulative()`: the final (or
/// checkpoint) report, from "SQL statistics:" to the blank line after
/// "Threads fairness".
#[derive(Clone, Copy, Debug)]
pub struct FinalReport<'a> {
    /// "total time": seconds since the threads started.
    pub time_total_s: f64,
    /// The per-second rates' denominator: seconds since the start (or the
    /// last checkpoint), read by sysbench a moment after `time_total_s`.
    pub time_interval_s: f64,
    pub counters: &'a Counters,
    /// All events' latencies: min/avg/max/sum and the percentile.
    pub latency: &'a LatencyHistogram,
    /// `--percentile`; 0 prints "percentile stats: disabled".
    pub percentile: u32,
    /// Per connection, for "Threads fairness"; its length is the thread
    /// count sysbench divides by.
    pub connections: &'a [ConnStats],
    /// Events still running when `--forced-shutdown` fired; 0 = line omitted.
    pub unfinished_on_forced_shutdown: u32,
    /// wirebench's additions ([`super::extra_report`]), printed after the
    /// latency block; empty for none, which leaves sysbench's report.
    pub additions: &'a str,
    /// Whether "SQL statistics" come first: false for a Lua script that
    /// never made a database driver (sysbench's `sb_report_cumulative()`).
    pub sql: bool,
}

impl FinalReport<'_> {
    /// `db_report_cumulative()`'s own part, before sysbench's general one.
    fn fmt_sql_statistics(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = self.counters;
        let queries = c.queries();
        let rate = |n: u64| cf(n as f64 / self.time_interval_s, 0, 2);
        f.write_str("SQL statistics:\n")?;
        f.write_str("    queries performed:\n")?;
        writeln!(f, "        read:                            {}", c.reads)?;
        writeln!(f, "        write:                           {}", c.writes)?;
        writeln!(f, "        other:                           {}", c.others)?;
        writeln!(f, "        total:                           {queries}")?;
        writeln!(f, "    transactions:                        {:<6} ({} per sec.)", c.events, rate(c.events))?;
        writeln!(f, "    queries:                             {:<6} ({} per sec.)", queries, rate(queries))?;
        writeln!(f, "    ignored errors:                      {:<6} ({} per sec.)", c.errors, rate(c.errors))?;
        writeln!(f, "    reconnects:                          {:<6} ({} per sec.)", c.reconnects, rate(c.reconnects))
    }
}

impl fmt::Display for FinalReport<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = self.counters;
        if self.sql {
            self.fmt_sql_statistics(f)?;
        }

        if self.unfinished_on_forced_shutdown > 0 {
            f.write_str("\n")?;
            writeln!(
                f,
                "Number of unfinished transactions on forced shutdown: {}",
                self.unfinished_on_forced_shutdown
            )?;
        }

        f.write_str("\nGeneral statistics:\n")?;
        writeln!(f, "    total time:                          {}s", cf(self.time_total_s, 0, 4))?;
        writeln!(f, "    total number of events:              {}", c.events)?;

        let l = self.latency;
        f.write_str("\nLatency (ms):\n")?;
        writeln!(f, "         min: {}", cf(ns_to_report_ms(l.min_ns()), 39, 2))?;
        writeln!(f, "         avg: {}", cf(ns_to_report_ms(l.avg_ns()), 39, 2))?;
        writeln!(f, "         max: {}", cf(ns_to_report_ms(l.max_ns()), 39, 2))?;
        if self.percentile > 0 {
            let pct = ms_round_trip(l.percentile(f64::from(self.percentile)));
            writeln!(f, "        {:>3}th percentile: {}", self.percentile, cf(pct, 27, 2))?;
        } else {
            f.write_str("         percentile stats:               disabled\n")?;
        }
        writeln!(f, "         sum: {}", cf(ns_to_report_ms(l.sum_ns()), 39, 2))?;
        f.write_str(self.additions)?;

        let fair = Fairness::of(self.connections, l.sum_ns());
        f.write_str("\nThreads fairness:\n")?;
        writeln!(
            f,
            "    events (avg/stddev):           {}/{}",
            cf(fair.events_avg, 0, 4),
            cf(fair.events_stddev, 3, 2)
        )?;
        writeln!(f, "    execution time (avg/stddev):   {}/{}", cf(fair.time_avg, 0, 4), cf(fair.time_stddev, 3, 2))?;
        f.write_str("\n")
    }
}

/// "Threads fairness" as `sb_report_cumulative()` computes it: population
/// standard deviations over all threads (connections); the time average is
/// the total latency sum over the thread count.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fairness {
    pub events_avg: f64,
    pub events_stddev: f64,
    /// Seconds.
    pub time_avg: f64,
    /// Seconds.
    pub time_stddev: f64,
}

impl Fairness {
    pub fn of(connections: &[ConnStats], latency_sum_ns: u64) -> Fairness {
        let n = connections.len() as f64;
        let events: u64 = connections.iter().map(|c| c.events).sum();
        let events_avg = events as f64 / n;
        let time_avg = ns_to_s(latency_sum_ns) / n;
        let mut events_var = 0.0;
        let mut time_var = 0.0;
        for c in connections {
            let d = (events_avg - c.events as f64).abs();
            events_var += d * d;
            let d = (time_avg - ns_to_s(c.busy_ns)).abs();
            time_var += d * d;
        }
        Fairness { events_avg, events_stddev: (events_var / n).sqrt(), time_avg, time_stddev: (time_var / n).sqrt() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cfloat() {
        assert_eq!(cf(f64::NAN, 4, 2).to_string(), " nan");
        assert_eq!(cf(-f64::NAN, 4, 2).to_string(), "-nan");
        assert_eq!(cf(f64::INFINITY, 4, 2).to_string(), " inf");
        assert_eq!(cf(0.125, 4, 2).to_string(), "0.12");
        assert_eq!(cf(0.375, 0, 2).to_string(), "0.38");
        assert_eq!(cf(2.5, 0, 0).to_string(), "2");
        assert_eq!(cf(97.55450100468757, 27, 2).to_string(), format!("{}97.55", " ".repeat(22)));
    }

    #[test]
    fn run_header_variants() {
        let plain = RunHeader { threads: 20, report_interval: 10, ..RunHeader::default() };
        assert_eq!(
            plain.to_string(),
            "Running the test with following options:\n\
             Number of threads: 20\n\
             Report intermediate results every 10 second(s)\n\
             Initializing random number generator from current time\n\n\n"
        );
        let all = RunHeader {
            threads: 2,
            warmup_s: 5,
            rate: 100,
            rate_stages: &[],
            report_interval: 1,
            checkpoints: &[10, 20],
            debug: true,
            validate: true,
            rand_seed: 42,
            forced_shutdown_s: Some(15),
        };
        let stages = RunHeader { threads: 4, rate_stages: &[(0, 0), (5000, 30), (5000, 60)], ..RunHeader::default() };
        assert_eq!(
            stages.to_string(),
            "Running the test with following options:\n\
             Number of threads: 4\n\
             Target transaction rate in stages (each moves it linearly to its rate over its seconds): holds 0/sec \
             over 0s, to 5000/sec over 30s, to 5000/sec over 60s; 90s in all\n\
             Initializing random number generator from current time\n\n\n"
        );
        assert_eq!(
            all.to_string(),
            "Running the test with following options:\n\
             Number of threads: 2\n\
             Warmup time: 5s\n\
             Target transaction rate: 100/sec\n\
             Report intermediate results every 1 second(s)\n\
             Report checkpoint(s) at 10, 20 seconds\n\
             Debug mode enabled.\n\n\
             Validation checks: on.\n\n\
             Initializing random number generator from seed (42).\n\n\
             Forcing shutdown in 15 seconds\n\n"
        );
    }

    #[test]
    fn interim_with_queue() {
        let counters = Counters { others: 95, events: 95, ..Counters::default() };
        let latency = LatencyHistogram::new();
        let line = InterimReport {
            time_total_s: 1.0002,
            time_interval_s: 1.0012,
            threads_running: 2,
            counters: &counters,
            latency: &latency,
            percentile: 0,
            queue: Some(QueueStats { length: 3, concurrency: 1 }),
            arrivals: Some(ArrivalStats { target_rate: 100.0, dropped: 0, late: 2, staged: false }),
            at: None,
            sql: true,
        };
        assert_eq!(
            line.to_string(),
            "[ 1s ] thds: 2 tps: 94.89 qps: 94.89 (r/w/o: 0.00/0.00/94.89) lat (ms,0%): 0.00 err/s: 0.00 reconn/s: 0.00\n\
             [ 1s ] queue length: 3, concurrency: 1\n"
        );
        let sharded = InterimReport { at: Some("2026-01-01T00:00:01.000Z"), ..line }.to_string();
        assert_eq!(
            sharded,
            "[ 1s ] thds: 2 tps: 94.89 qps: 94.89 (r/w/o: 0.00/0.00/94.89) lat (ms,0%): 0.00 err/s: 0.00 reconn/s: 0.00 \
             at 2026-01-01T00:00:01.000Z\n\
             [ 1s ] queue length: 3, concurrency: 1 at 2026-01-01T00:00:01.000Z\n"
        );
        // sb_report_intermediate(), for a script that made no driver.
        let events_only = InterimReport { sql: false, ..line }.to_string();
        assert_eq!(events_only, "[ 1s ] thds: 2 eps: 94.89 lat (ms,0%): 0.00\n[ 1s ] queue length: 3 concurrency: 1\n");
        // --rate-stages: the target and the drops after sysbench's figures.
        let arrivals = Some(ArrivalStats { target_rate: 5000.0, dropped: 7, late: 1, staged: true });
        let staged = InterimReport { arrivals, at: Some("2026-01-01T00:00:01.000Z"), ..line }.to_string();
        assert_eq!(
            staged,
            "[ 1s ] thds: 2 tps: 94.89 qps: 94.89 (r/w/o: 0.00/0.00/94.89) lat (ms,0%): 0.00 err/s: 0.00 reconn/s: 0.00 \
             target: 5000.00 dropped: 7 at 2026-01-01T00:00:01.000Z\n\
             [ 1s ] queue length: 3, concurrency: 1 at 2026-01-01T00:00:01.000Z\n"
        );
        let events_only = InterimReport { arrivals, sql: false, ..line }.to_string();
        assert!(events_only.starts_with("[ 1s ] thds: 2 eps: 94.89 lat (ms,0%): 0.00 target: 5000.00 dropped: 7\n"));
    }

    /// sb_report_cumulative() alone starts at "General statistics".
    #[test]
    fn without_sql_the_report_starts_at_general_statistics() {
        let latency = LatencyHistogram::new();
        let counters = Counters { events: 7, ..Counters::default() };
        let report = FinalReport {
            time_total_s: 1.0,
            time_interval_s: 1.0,
            counters: &counters,
            latency: &latency,
            percentile: 95,
            connections: &[ConnStats::default()],
            unfinished_on_forced_shutdown: 0,
            additions: "",
            sql: false,
        };
        let text = report.to_string();
        assert!(text.starts_with("\nGeneral statistics:\n    total time:"), "{text}");
        assert!(!text.contains("SQL statistics"), "{text}");
        let with_sql = FinalReport { sql: true, ..report }.to_string();
        assert!(with_sql.starts_with("SQL statistics:\n") && with_sql.ends_with(&text), "{with_sql}");
    }

    /// `%3dth`: sysbench accepts only whole percentiles, 1 to 100.
    #[test]
    fn percentile_label() {
        let latency = LatencyHistogram::new();
        for (p, label) in
            [(5, "          5th percentile: "), (95, "         95th percentile: "), (100, "        100th percentile: ")]
        {
            let report = FinalReport {
                time_total_s: 1.0,
                time_interval_s: 1.0,
                counters: &Counters::default(),
                latency: &latency,
                percentile: p,
                connections: &[ConnStats::default()],
                unfinished_on_forced_shutdown: 0,
                additions: "",
                sql: true,
            }
            .to_string();
            let line = format!("{label}{:>27}", "0.00");
            assert!(report.lines().any(|l| l == line), "{report}");
        }
    }

    #[test]
    fn fairness_zero_events() {
        let f = Fairness::of(&[ConnStats::default(); 3], 0);
        assert_eq!(f, Fairness { events_avg: 0.0, events_stddev: 0.0, time_avg: 0.0, time_stddev: 0.0 });
    }
}
