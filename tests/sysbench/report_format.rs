//! wirebench's report text against sysbench 1.0.20's.
//!
//! 1. A published sysbench report (an `oltp_read_write` run, 20 threads,
//!    120 s, from /work/shared/seeds/003): fed the same numbers, wirebench
//!    prints the header, interim lines and final report byte for byte.
//! 2. The installed sysbench, run on a Lua script with `--mysql-dry-run`:
//!    every line of its output and of wirebench's output for similar data
//!    must match one of the printf formats from sysbench's source, in the
//!    same order; the `--histogram` block, rebuilt from sysbench's rows, must
//!    print identically and give sysbench's percentile; a run with no events
//!    must print identically except for the version line.
//!
//! Without a runnable sysbench the second group is skipped with a message,
//! unless `WIREBENCH_REQUIRE_SERVER=1`, which makes it fail.

use crate::common;

use common::{sysbench, ScratchDir};
use std::path::Path;
use std::sync::Arc;

use wirebench::stats::{bucket_value, BUCKETS};
use wirebench::stats::{
    Banner, Collector, ConnStats, Counters, FinalReport, HistogramReport, InterimReport, LatencyHistogram, LoopStats,
    QueryKind, QueueStats, RunHeader, StatsBoard, INITIALIZING_WORKERS, THREADS_STARTED, VERSION_LINE,
};

// ---------------------------------------------------------------------------
// 1. The seed report.

const SEED_HEADER: &str = "\
Running the test with following options:
Number of threads: 20
Report intermediate results every 10 second(s)
Initializing random number generator from current time


Initializing worker threads...

Threads started!

";

const SEED_FINAL: &str = "\
SQL statistics:
    queries performed:
        read:                            587860
        write:                           167960
        other:                           83980
        total:                           839800
    transactions:                        41990  (349.78 per sec.)
    queries:                             839800 (6995.60 per sec.)
    ignored errors:                      0      (0.00 per sec.)
    reconnects:                          0      (0.00 per sec.)

General statistics:
    total time:                          120.0457s
    total number of events:              41990

Latency (ms):
         min:                                   11.79
         avg:                                   57.16
         max:                                  259.33
         95th percentile:                       97.55
         sum:                              2400242.94

Threads fairness:
    events (avg/stddev):           2099.5000/19.40
    execution time (avg/stddev):   120.0121/0.01

";

/// A latency in ns that falls in bucket `index`.
fn ns_in_bucket(index: usize) -> u64 {
    (bucket_value(index) * 1e6) as u64
}

#[test]
fn seed_header() {
    let text = format!(
        "{}{}{INITIALIZING_WORKERS}{THREADS_STARTED}",
        Banner(VERSION_LINE),
        RunHeader { threads: 20, report_interval: 10, ..RunHeader::default() }
    );
    let (version, rest) = text.split_once('\n').unwrap_or_default();
    assert_eq!(version, VERSION_LINE);
    assert_eq!(rest.strip_prefix('\n'), Some(SEED_HEADER));
}

#[test]
fn seed_interim_lines() {
    // Interval lengths and counts chosen so that every rate rounds to the
    // printed value (the seed only shows rates); the percentile buckets are
    // the only ones printing as 123.28, 116.80 and 84.47.
    let cases = [
        (10.0, 10.006399, [2674, 37651, 10704, 5368], 651,
         "[ 10s ] thds: 20 tps: 267.23 qps: 5368.86 (r/w/o: 3762.69/1069.72/536.46) lat (ms,95%): 123.28 err/s: 0.00 reconn/s: 0.00\n"),
        (20.0004, 10.003357, [2890, 40378, 11552, 5780], 648,
         "[ 20s ] thds: 20 tps: 288.90 qps: 5769.06 (r/w/o: 4036.44/1154.81/577.81) lat (ms,95%): 116.80 err/s: 0.00 reconn/s: 0.00\n"),
        (119.9996, 10.001836, [3913, 54772, 15656, 7825], 630,
         "[ 120s ] thds: 20 tps: 391.23 qps: 7823.86 (r/w/o: 5476.19/1565.31/782.36) lat (ms,95%): 84.47 err/s: 0.00 reconn/s: 0.00\n"),
    ];
    for (total, interval, [events, reads, writes, others], bucket, expected) in cases {
        let counters = Counters { reads, writes, others, events, ..Counters::default() };
        let mut latency = LatencyHistogram::new();
        for _ in 0..events {
            latency.record_ns(ns_in_bucket(bucket));
        }
        let line = InterimReport {
            time_total_s: total,
            time_interval_s: interval,
            threads_running: 20,
            counters: &counters,
            latency: &latency,
            percentile: 95,
            queue: None,
            arrivals: None,
            at: None,
            sql: true,
        };
        assert_eq!(line.to_string(), expected);
    }
}

#[test]
fn seed_final_report() {
    const EVENTS: u64 = 41_990;
    const MIN_NS: u64 = 11_790_000;
    const MAX_NS: u64 = 259_330_000;
    // 2400242.94 ms, divisible by the 20 threads.
    const SUM_NS: u64 = 2_400_242_940_000;

    let counters = Counters { reads: 587_860, writes: 167_960, others: 83_980, events: EVENTS, ..Counters::default() };

    // p95 of 41990 events is the 39891st: 1 + 39000 events below bucket 638
    // (97.55), 1000 in it, the rest above, with one event adjusting the sum.
    let mut latency = LatencyHistogram::new();
    latency.record_ns(MIN_NS);
    latency.record_ns(MAX_NS);
    for _ in 0..39_000 {
        latency.record_ns(50_000_000);
    }
    for _ in 0..1_000 {
        latency.record_ns(97_550_000);
    }
    let high = EVENTS - 2 - 39_000 - 1_000 - 1;
    for _ in 0..high {
        latency.record_ns(177_270_000);
    }
    let adjust = SUM_NS - latency.sum_ns();
    assert!((MIN_NS..=MAX_NS).contains(&adjust), "{adjust}");
    latency.record_ns(adjust);
    assert_eq!((latency.events(), latency.sum_ns()), (EVENTS, SUM_NS));

    // 20 connections averaging 2099.5 events: nine pairs at ±19.5 and one
    // at ±18.5 give a stddev of 19.402; busy times at ±10 ms give 0.01 s.
    let avg_busy = SUM_NS / 20;
    let mut connections = Vec::new();
    for i in 0..10 {
        let d = if i == 0 { 18 } else { 19 };
        connections.push(ConnStats { events: 2099 - d, busy_ns: avg_busy - 10_000_000 });
        connections.push(ConnStats { events: 2100 + d, busy_ns: avg_busy + 10_000_000 });
    }
    assert_eq!(connections.iter().map(|c| c.events).sum::<u64>(), EVENTS);

    let report = FinalReport {
        time_total_s: 120.0457,
        // sysbench reads the rates' clock a moment after the total time.
        time_interval_s: 120.046801,
        counters: &counters,
        latency: &latency,
        percentile: 95,
        connections: &connections,
        unfinished_on_forced_shutdown: 0,
        additions: "",
        sql: true,
    };
    assert_eq!(report.to_string(), SEED_FINAL);
}

// ---------------------------------------------------------------------------
// Rust's `{:w.p}` against glibc's `%w.pf`, which sysbench uses.

extern "C" {
    fn snprintf(buf: *mut std::ffi::c_char, size: usize, format: *const std::ffi::c_char, ...) -> std::ffi::c_int;
}

fn glibc_format(format: &std::ffi::CStr, x: f64) -> String {
    let mut buf = [0 as std::ffi::c_char; 512];
    // SAFETY: `buf` is writable for its length, `format` is NUL-terminated
    // and takes exactly one double; snprintf always NUL-terminates.
    unsafe {
        snprintf(buf.as_mut_ptr(), buf.len(), format.as_ptr(), x);
        std::ffi::CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned()
    }
}

/// The report relies on Rust rounding exactly as glibc does (the exact
/// binary value, ties to even), for every precision sysbench prints.
#[test]
fn float_formatting_matches_glibc() {
    use wirebench::stats::CFloat;
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut values = vec![0.0, -0.0, 0.5, 1.5, 2.5, 0.125, 0.375, 1.005, 2.675, 0.0049999, 99.995, 1e-9, 123456.785];
    for i in 0..30_000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        values.push(match i % 3 {
            // Decimal ties and near-ties, as counters / seconds produce.
            0 => (x % 100_000_000) as f64 / 1000.0 + 0.005,
            1 => (x >> 11) as f64 / (1u64 << 53) as f64 * 10f64.powi((x % 10) as i32),
            _ => (x % 10_000_000) as f64 / (1 + x % 977) as f64,
        });
    }
    values.extend([f64::INFINITY, f64::NEG_INFINITY, f64::NAN, -f64::NAN]);
    for v in values {
        for (format, width, precision) in [
            (c"%4.2f", 4, 2),
            (c"%.2f", 0, 2),
            (c"%.0f", 0, 0),
            (c"%.4f", 0, 4),
            (c"%3.2f", 3, 2),
            (c"%39.2f", 39, 2),
            (c"%27.2f", 27, 2),
            (c"%12.3f", 12, 3),
        ] {
            assert_eq!(CFloat::new(v, width, precision).to_string(), glibc_format(format, v), "{format:?} of {v:e}");
        }
    }
}

// ---------------------------------------------------------------------------
// 2. The real sysbench.

/// Events of 0.1 to 3 ms with one (dry-run) query each, so the histogram
/// and percentiles have something to show. `--mysql-dry-run` makes the SQL
/// driver "succeed" without a server, which selects the SQL report.
const SLEEP_SCRIPT: &str = r#"
local ffi = require("ffi")
ffi.cdef("int usleep(unsigned int)")
function thread_init()
  drv = sysbench.sql.driver()
  con = drv:connect()
end
function event()
  con:query("SELECT 1")
  ffi.C.usleep(sysbench.rand.uniform(100, 3000))
end
"#;

/// Connects, then runs no event at all for 1.2 s.
const IDLE_SCRIPT: &str = r#"
local ffi = require("ffi")
ffi.cdef("int usleep(unsigned int)")
function thread_init()
  drv = sysbench.sql.driver()
  con = drv:connect()
end
function thread_run()
  ffi.C.usleep(1200000)
end
function event()
end
"#;

/// The lines sysbench 1.0.20 prints for a run, as the printf formats in its
/// source (`%-40b` stands for the histogram bar: `*`s padded to 40).
const FORMATS: &[&str] = &[
    "",
    " ",
    "Running the test with following options:",
    "Number of threads: %d",
    "Target transaction rate: %d/sec",
    "Report intermediate results every %d second(s)",
    "Initializing random number generator from current time",
    "Initializing random number generator from seed (%d).",
    "Initializing worker threads...",
    "Threads started!",
    INTERIM_LINE,
    QUEUE_LINE,
    "Latency histogram (values are in milliseconds)",
    "       value  ------------- distribution ------------- count",
    "%12.3f |%-40b %lu",
    "SQL statistics:",
    "    queries performed:",
    "        read:                            %lu",
    "        write:                           %lu",
    "        other:                           %lu",
    "        total:                           %lu",
    "    transactions:                        %-6lu (%.2f per sec.)",
    "    queries:                             %-6lu (%.2f per sec.)",
    "    ignored errors:                      %-6lu (%.2f per sec.)",
    "    reconnects:                          %-6lu (%.2f per sec.)",
    "General statistics:",
    "    total time:                          %.4fs",
    "    total number of events:              %lu",
    "Latency (ms):",
    "         min: %39.2f",
    "         avg: %39.2f",
    "         max: %39.2f",
    "        %3dth percentile: %27.2f",
    "         percentile stats:               disabled",
    "         sum: %39.2f",
    "Threads fairness:",
    "    events (avg/stddev):           %.4f/%3.2f",
    "    execution time (avg/stddev):   %.4f/%3.2f",
];

const HISTOGRAM_ROW: &str = "%12.3f |%-40b %lu";

/// Whether `line` could be `printf(format, ...)`'s output, for the
/// conversions in [`FORMATS`]: `%%`, `%[-][width][.prec]` + `d`, `u`, `lu`,
/// `f` and the bar `b`.
fn matches_format(format: &str, line: &str) -> bool {
    let mut f = format;
    let mut l = line;
    while let Some(pos) = f.find('%') {
        let (literal, rest) = f.split_at(pos);
        let Some(after) = l.strip_prefix(literal) else { return false };
        l = after;
        let spec = &rest[1..];
        if let Some(rest) = spec.strip_prefix('%') {
            let Some(after) = l.strip_prefix('%') else { return false };
            l = after;
            f = rest;
            continue;
        }
        let left = spec.starts_with('-');
        let spec = spec.trim_start_matches('-');
        let width_len = spec.find(|c: char| !c.is_ascii_digit()).unwrap_or(spec.len());
        let width: usize = spec[..width_len].parse().unwrap_or(0);
        let mut spec = &spec[width_len..];
        let mut precision = None;
        if let Some(p) = spec.strip_prefix('.') {
            let n = p.find(|c: char| !c.is_ascii_digit()).unwrap_or(p.len());
            precision = Some(p[..n].parse().unwrap_or(0));
            spec = &p[n..];
        }
        let spec = spec.strip_prefix('l').unwrap_or(spec);
        let Some(kind) = spec.chars().next() else { return false };
        f = &spec[1..];

        // The field: padding and value, `width` wide at least.
        let lead = if left { 0 } else { l.len() - l.trim_start_matches(' ').len() };
        let body = &l[lead..];
        let value_len = match kind {
            'd' | 'u' => {
                let digits = body.strip_prefix('-').unwrap_or(body);
                let n = digits.find(|c: char| !c.is_ascii_digit()).unwrap_or(digits.len());
                if n == 0 {
                    return false;
                }
                n + (body.len() - digits.len())
            }
            'f' => {
                let precision = precision.unwrap_or(6);
                let n = body.find(|c: char| !c.is_ascii_digit()).unwrap_or(body.len());
                if n == 0 {
                    return false;
                }
                if precision == 0 {
                    n
                } else {
                    let frac = body[n..].strip_prefix('.').unwrap_or("");
                    let m = frac.find(|c: char| !c.is_ascii_digit()).unwrap_or(frac.len());
                    if m != precision {
                        return false;
                    }
                    n + 1 + m
                }
            }
            'b' => {
                let n = body.find(|c: char| c != '*').unwrap_or(body.len());
                if n == 0 && !left {
                    return false;
                }
                n
            }
            _ => return false,
        };
        let trail = if left { body[value_len..].len() - body[value_len..].trim_start_matches(' ').len() } else { 0 };
        let field = lead + value_len + trail;
        // Padding only up to the width; a left-aligned field also keeps
        // its trailing spaces only up to the width (the literal takes the rest).
        let field = if left { field.min(width.max(value_len)) } else { field };
        if field != width.max(value_len) {
            return false;
        }
        l = &l[field..];
    }
    l == f
}

/// Each line's index in [`FORMATS`] ("version" for the first line);
/// panics on a line no format (or more than one) matches.
fn classify(output: &str, who: &str) -> Vec<usize> {
    assert!(output.ends_with('\n'), "{who}: output does not end in a newline");
    let mut ids = Vec::new();
    for (n, line) in output.lines().enumerate() {
        if n == 0 {
            ids.push(usize::MAX);
            continue;
        }
        let hits: Vec<usize> = (0..FORMATS.len()).filter(|&i| matches_format(FORMATS[i], line)).collect();
        assert_eq!(hits.len(), 1, "{who}: line {n} {line:?} matches formats {hits:?}\n{output}");
        ids.push(hits[0]);
    }
    ids
}

const INTERIM_LINE: &str = "[ %.0fs ] thds: %u tps: %4.2f qps: %4.2f (r/w/o: %4.2f/%4.2f/%4.2f) lat (ms,%u%%): %4.2f err/s: %4.2f reconn/s: %4.2f";
const QUEUE_LINE: &str = "[ %.0fs ] queue length: %lu, concurrency: %lu";

fn format_id(format: &str) -> usize {
    FORMATS.iter().position(|&f| f == format).unwrap_or(usize::MAX)
}

/// The line-format sequence with each run of histogram rows as one row and
/// each run of interim lines (with their `--rate` queue lines) as one
/// interim line: the number of both depends on the data.
fn shape(output: &str, who: &str) -> Vec<usize> {
    let (row, interim, queue) = (format_id(HISTOGRAM_ROW), format_id(INTERIM_LINE), format_id(QUEUE_LINE));
    let mut ids: Vec<usize> =
        classify(output, who).into_iter().map(|id| if id == queue { interim } else { id }).collect();
    ids.dedup_by(|a, b| a == b && (*a == row || *a == interim));
    ids
}

/// The first line: sysbench names itself and its LuaJIT, wirebench itself.
fn check_version_lines(sysbench: &str, wirebench: &str) {
    let first = sysbench.lines().next().unwrap_or_default();
    assert!(first.starts_with("sysbench 1.0.20 ("), "{first:?}");
    assert_eq!(wirebench.lines().next(), Some(VERSION_LINE));
}

/// How many lines start with `prefix` and contain `needle`.
fn count_lines(output: &str, prefix: &str, needle: &str) -> usize {
    output.lines().filter(|l| l.starts_with(prefix) && l.contains(needle)).count()
}

struct Options {
    threads: usize,
    rate: u32,
    percentile: u32,
    histogram: bool,
    rand_seed: i32,
    interim_reports: usize,
}

/// wirebench's whole output for a made-up run like sysbench's: `threads`
/// loops with one connection each recording 0.1–3 ms events through the
/// collector, the same number of interim reports, then the final blocks.
fn our_report(o: &Options) -> String {
    let board = StatsBoard::new(&vec![1; o.threads]);
    let mut collector = Collector::new(Arc::clone(&board));
    let mut loops: Vec<_> = (0..o.threads).map(|i| board.loop_stats(i)).collect();
    let mut out = format!(
        "{}{}{INITIALIZING_WORKERS}{THREADS_STARTED}",
        Banner(VERSION_LINE),
        RunHeader {
            threads: o.threads as u32,
            rate: o.rate,
            report_interval: 1,
            rand_seed: o.rand_seed,
            ..RunHeader::default()
        }
    );
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut record = |loops: &mut Vec<LoopStats>| {
        for (i, stats) in loops.iter_mut().enumerate() {
            for _ in 0..600 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                stats.record_query(QueryKind::Other);
                stats.record_event(0, 100_000 + x % 2_900_000, 100_000 + x % 2_900_000);
                board.publish_if_requested(i, stats);
            }
        }
    };
    for k in 1..=o.interim_reports {
        record(&mut loops);
        let epoch = board.request();
        for (i, stats) in loops.iter_mut().enumerate() {
            board.publish_if_requested(i, stats);
        }
        assert!(board.all_answered(epoch));
        let interval = collector.drain();
        let line = InterimReport {
            time_total_s: k as f64 + 0.0003,
            time_interval_s: 1.0002,
            threads_running: o.threads as u32,
            counters: &interval.counters,
            latency: &interval.latencies.sysbench,
            percentile: o.percentile,
            queue: (o.rate > 0).then_some(QueueStats { length: 0, concurrency: 1 }),
            arrivals: None,
            at: None,
            sql: true,
        };
        out += &line.to_string();
    }
    record(&mut loops);
    for (i, stats) in loops.iter_mut().enumerate() {
        board.publish(i, stats);
    }
    collector.drain();
    let totals = collector.totals();
    if o.histogram {
        out += &HistogramReport(totals.sysbench_latency()).to_string();
    }
    let report = FinalReport {
        time_total_s: o.interim_reports as f64 + 0.0021,
        time_interval_s: o.interim_reports as f64 + 0.0023,
        counters: &totals.counters,
        latency: totals.sysbench_latency(),
        percentile: o.percentile,
        connections: &totals.connections,
        unfinished_on_forced_shutdown: 0,
        additions: "",
        sql: true,
    };
    out + &report.to_string()
}

/// The histogram block of a sysbench output, rebuilt: each row's bucket is
/// the first one after the previous row's that prints the same value.
fn rebuild_histogram(output: &str) -> (String, LatencyHistogram) {
    let start = output.find("Latency histogram (values are in milliseconds)\n").unwrap_or_else(|| panic!("{output}"));
    let end = start + output[start..].find("\n \n").unwrap_or_else(|| panic!("{output}")) + 3;
    let block = &output[start..end];
    let mut h = LatencyHistogram::new();
    let mut next = 0;
    for row in block.lines().filter(|l| l.contains(" |")) {
        let (value, rest) = row.split_once(" |").unwrap_or_default();
        let count: u64 = rest.rsplit(' ').next().and_then(|c| c.parse().ok()).unwrap_or_else(|| panic!("{row:?}"));
        let index = (next..BUCKETS)
            .find(|&i| format!("{:12.3}", bucket_value(i)) == value)
            .unwrap_or_else(|| panic!("no bucket at or after {next} prints {value:?}"));
        h.add_to_bucket(index, count);
        next = index + 1;
    }
    (block.to_owned(), h)
}

fn line_starting<'a>(output: &'a str, prefix: &str) -> &'a str {
    output.lines().find(|l| l.starts_with(prefix)).unwrap_or_else(|| panic!("no {prefix:?} line in\n{output}"))
}

#[test]
fn formats_recognise_what_they_should() {
    assert!(matches_format("         min: %39.2f", &format!("         min: {:39.2}", 11.79)));
    assert!(!matches_format("         min: %39.2f", &format!("         min: {:38.2}", 11.79)));
    assert!(!matches_format("         min: %39.2f", &format!("         min: {:39.3}", 11.79)));
    assert!(matches_format(
        "    transactions:                        %-6lu (%.2f per sec.)",
        "    transactions:                        41990  (349.78 per sec.)"
    ));
    assert!(matches_format(
        "    transactions:                        %-6lu (%.2f per sec.)",
        "    transactions:                        33830504 (16900649.04 per sec.)"
    ));
    assert!(!matches_format(
        "    transactions:                        %-6lu (%.2f per sec.)",
        "    transactions:                        41990 (349.78 per sec.)"
    ));
    assert!(matches_format(HISTOGRAM_ROW, "       0.169 |*                                        1"));
    assert!(matches_format(HISTOGRAM_ROW, "       0.001 |**************************************** 33829100"));
    assert!(matches_format(HISTOGRAM_ROW, "       0.001 |                                         4"));
    assert!(!matches_format(HISTOGRAM_ROW, "       0.001 |                                        4"));
    assert!(matches_format(
        "        %3dth percentile: %27.2f",
        "         95th percentile:                       97.55"
    ));
    assert!(matches_format(
        "        %3dth percentile: %27.2f",
        "        100th percentile:                       97.55"
    ));
    assert!(matches_format("[ %.0fs ] queue length: %lu, concurrency: %lu", "[ 10s ] queue length: 0, concurrency: 3"));
    assert!(!matches_format(
        "[ %.0fs ] queue length: %lu, concurrency: %lu",
        "[ 10.0s ] queue length: 0, concurrency: 3"
    ));
}

#[test]
fn same_shape_as_sysbench_with_histogram() {
    let Some(binary) = sysbench() else { return };
    let dir = ScratchDir::new("histogram");
    let script = dir.write("sleep.lua", SLEEP_SCRIPT);
    let theirs = run_sysbench(
        &binary,
        &script,
        &["--threads=2", "--time=2", "--report-interval=1", "--histogram=on", "--percentile=99"],
    );
    let interim_reports = count_lines(&theirs, "[ ", "thds:");
    assert!(interim_reports >= 1, "{theirs}");
    let ours =
        our_report(&Options { threads: 2, rate: 0, percentile: 99, histogram: true, rand_seed: 0, interim_reports });
    check_version_lines(&theirs, &ours);
    assert_eq!(shape(&ours, "wirebench"), shape(&theirs, "sysbench"), "\nsysbench:\n{theirs}\nwirebench:\n{ours}");

    // sysbench's histogram, rebuilt from its rows, prints the same block and
    // gives the same 99th percentile; its rows count every event.
    let (block, rebuilt) = rebuild_histogram(&theirs);
    assert_eq!(HistogramReport(&rebuilt).to_string(), block);
    let events: u64 = line_starting(&theirs, "    total number of events:")
        .rsplit(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{theirs}"));
    assert_eq!(rebuilt.counted(), events);
    let report = FinalReport {
        time_total_s: 2.0,
        time_interval_s: 2.0,
        counters: &Counters::default(),
        latency: &rebuilt,
        percentile: 99,
        connections: &[ConnStats::default(); 2],
        unfinished_on_forced_shutdown: 0,
        additions: "",
        sql: true,
    }
    .to_string();
    assert_eq!(
        line_starting(&report, "         99th percentile:"),
        line_starting(&theirs, "         99th percentile:")
    );
}

#[test]
fn same_shape_as_sysbench_with_rate_and_seed() {
    let Some(binary) = sysbench() else { return };
    let dir = ScratchDir::new("rate");
    let script = dir.write("sleep.lua", SLEEP_SCRIPT);
    let theirs = run_sysbench(
        &binary,
        &script,
        &["--threads=2", "--time=2", "--report-interval=1", "--rate=200", "--percentile=0", "--rand-seed=42"],
    );
    let interim_reports = count_lines(&theirs, "[ ", "thds:");
    assert!(interim_reports >= 1, "{theirs}");
    // sysbench cancels its report thread at the end of the run, sometimes
    // between an interim line and its queue line.
    let queue_lines = count_lines(&theirs, "[ ", "queue length:");
    assert!(queue_lines == interim_reports || queue_lines + 1 == interim_reports, "{theirs}");
    let ours =
        our_report(&Options { threads: 2, rate: 200, percentile: 0, histogram: false, rand_seed: 42, interim_reports });
    // Every interim line of ours comes with its queue line.
    let timestamped: Vec<&str> = ours.lines().filter(|l| l.starts_with("[ ")).collect();
    assert_eq!(timestamped.len(), 2 * interim_reports, "{ours}");
    for pair in timestamped.chunks(2) {
        assert!(matches_format(INTERIM_LINE, pair[0]) && matches_format(QUEUE_LINE, pair[1]), "{pair:?}");
        assert_eq!(pair[0].split(']').next(), pair[1].split(']').next(), "{pair:?}");
    }
    check_version_lines(&theirs, &ours);
    assert_eq!(shape(&ours, "wirebench"), shape(&theirs, "sysbench"), "\nsysbench:\n{theirs}\nwirebench:\n{ours}");
}

/// With no events every number but the total time is known, so the whole
/// output must be sysbench's after the version line.
#[test]
fn identical_to_sysbench_without_events() {
    let Some(binary) = sysbench() else { return };
    let dir = ScratchDir::new("idle");
    let script = dir.write("idle.lua", IDLE_SCRIPT);
    let theirs = run_sysbench(&binary, &script, &["--threads=3", "--time=1", "--report-interval=1", "--histogram=on"]);
    let interim_reports = count_lines(&theirs, "[ ", "thds:");
    let total_time: f64 = line_starting(&theirs, "    total time:")
        .trim_start_matches("    total time:")
        .trim()
        .trim_end_matches('s')
        .parse()
        .unwrap_or_else(|e| panic!("{e}: {theirs}"));

    let counters = Counters::default();
    let latency = LatencyHistogram::new();
    let connections = [ConnStats::default(); 3];
    let mut ours = format!(
        "{}{}{INITIALIZING_WORKERS}{THREADS_STARTED}",
        Banner(VERSION_LINE),
        RunHeader { threads: 3, report_interval: 1, ..RunHeader::default() }
    );
    for k in 1..=interim_reports {
        ours += &InterimReport {
            time_total_s: k as f64,
            time_interval_s: 1.0,
            threads_running: 3,
            counters: &counters,
            latency: &latency,
            percentile: 95,
            queue: None,
            arrivals: None,
            at: None,
            sql: true,
        }
        .to_string();
    }
    ours += &HistogramReport(&latency).to_string();
    ours += &FinalReport {
        time_total_s: total_time,
        time_interval_s: total_time,
        counters: &counters,
        latency: &latency,
        percentile: 95,
        connections: &connections,
        unfinished_on_forced_shutdown: 0,
        additions: "",
        sql: true,
    }
    .to_string();

    check_version_lines(&theirs, &ours);
    let (_, theirs_rest) = theirs.split_once('\n').unwrap_or_default();
    let (_, ours_rest) = ours.split_once('\n').unwrap_or_default();
    assert_eq!(ours_rest, theirs_rest);
}

/// Runs `script` under `--mysql-dry-run`; returns sysbench's stdout.
fn run_sysbench(binary: &Path, script: &Path, args: &[&str]) -> String {
    let args: Vec<&str> = std::iter::once("--mysql-dry-run").chain(args.iter().copied()).collect();
    common::run_sysbench_script(binary, script, &args)
}
