//! Latency reporting end to end, through the wirebench binary: `--rate`
//! past capacity against a null server with a planted delay (latency from
//! each arrival far above the service time, the run completes and says the
//! target was not met), `--hdr-log` read back with the hdrhistogram crate
//! (its totals equal the report's), `--warmup-time`, and against the test
//! MariaDB the `--percentile` list and the per-statement counts, which
//! equal the statements the workload sends.

use crate::common;

use std::path::Path;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use base64::Engine as _;
use common::{ScratchDir, TestServer};
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use wirebench::null_server::{NullServer, NullServerConfig};

/// One MariaDB test at a time: they share the table.
fn mariadb_lock() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

fn null_server(dir: &ScratchDir, delay: Duration) -> NullServer {
    let config =
        NullServerConfig { unix: Some(dir.0.join("null.sock")), answer_delay: delay, ..NullServerConfig::default() };
    NullServer::start(config).unwrap()
}

/// The stdout of `wirebench ARGS`, which must succeed.
fn ok(args: &[&str]) -> String {
    common::run_wirebench(args).ok()
}

/// The numbers after `label` on the first line that starts with it.
fn numbers(report: &str, label: &str) -> Vec<f64> {
    let line = report
        .lines()
        .find(|l| l.trim_start().starts_with(label))
        .unwrap_or_else(|| panic!("no {label:?} in\n{report}"));
    line.trim_start()[label.len()..]
        .split(|c: char| c.is_whitespace() || c == '(' || c == 's' || c == '/' || c == '%')
        .filter_map(|w| w.parse().ok())
        .collect()
}

fn first(report: &str, label: &str) -> f64 {
    numbers(report, label)[0]
}

/// `--rate` at three times what the server can answer: each of the 2
/// connections waits 2 ms per answer, so 1,000 events/s at most. The run
/// completes (no "event queue is full"), says the target was not met, and
/// the latency from each arrival is far above the service time.
#[test]
fn rate_past_capacity_reports_latency_from_arrival_far_above_service_time() {
    let dir = ScratchDir::new("latency-rate");
    let server = null_server(&dir, Duration::from_millis(2));
    let socket = format!("--mysql-socket={}", dir.0.join("null.sock").display());
    let start = Instant::now();
    let report =
        ok(&["oltp_point_select", &socket, "--threads=2", "--time=2", "--rate=3000", "--percentile=95,50", "run"]);
    assert!(start.elapsed() < Duration::from_secs(8), "--time ends the run: {:?}", start.elapsed());
    let p95 = numbers(&report, "p95:");
    let (from_arrival, service) = (p95[0], p95[1]);
    assert!((2.0..20.0).contains(&service), "service time is the planted delay: {report}");
    assert!(from_arrival > 10.0 * service, "corrected latency {from_arrival} vs service {service}: {report}");
    assert!(first(&report, "95th percentile:") > 10.0 * service, "sysbench's line counts from the arrival too");
    assert!(report.contains("Latency under --rate (ms):"), "{report}");
    let achieved = numbers(&report, "Rate: target 3000/s (poisson arrivals), achieved");
    assert!(achieved[0] < 1_100.0, "{report}");
    assert!(report.contains("Target rate not met: "), "{report}");
    drop(server);
}

/// Under capacity, nothing is said to be missed, and the latency from
/// each arrival stays near the service time: both within what the run's
/// own `Client load:` line says its client held back (a loaded machine
/// can stall a loop; the run must then say so, not hide it).
#[test]
fn rate_under_capacity_is_met() {
    let dir = ScratchDir::new("latency-rate-met");
    let server = null_server(&dir, Duration::from_micros(500));
    let socket = format!("--mysql-socket={}", dir.0.join("null.sock").display());
    let report =
        ok(&["oltp_point_select", &socket, "--threads=4", "--time=2", "--rate=200", "--rate-arrival=fixed", "run"]);
    // The client says how hard it worked and how long it held each event
    // back: its percentiles in order.
    let line = report.lines().find(|l| l.starts_with("Client load:")).unwrap_or_default();
    let after = line.split_once("client delay p50").map_or("", |(_, rest)| rest);
    let delay: Vec<f64> = after.split([' ', ',']).filter_map(|w| w.parse().ok()).collect();
    assert!(delay.len() >= 3 && delay[0] <= delay[1] && delay[1] <= delay[2], "{report}");
    let (delay_max_ms, load) = (delay[2], numbers(&report, "Client load: event loops busy"));
    let (busy, core_wait_s) = (load[0], load[1]);
    let late = line.rsplit_once(", ").and_then(|(_, late)| late.strip_suffix(" late starts"));
    let late_starts: f64 = late.and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("{report}"));
    let under_rate = report.split("Latency under --rate (ms):").nth(1).unwrap_or_else(|| panic!("{report}"));
    let service_max_ms = numbers(under_rate, "max:")[1];
    // An event starts over a second late only when the client held it that
    // long, or answers slower than 4 connections x 5 ms kept the
    // connections busy.
    if late_starts > 0.0 {
        assert!(delay_max_ms > 1000.0 || service_max_ms > 20.0, "late starts no one caused: {report}");
    }
    let total_s = first(&report, "total time:");
    // At 200/s the loops are far from their limit: under half their time
    // on a core (busy counts their time waiting for one too).
    assert!(busy - 100.0 * core_wait_s / total_s < 50.0, "{report}");
    // Met: nothing left waiting beyond what the connections were about to
    // start, unless the client says it was held (a stall of a loaded
    // machine at the end of the time leaves arrivals waiting).
    let held = delay_max_ms > 20.0 || core_wait_s > 0.02 || late_starts > 0.0;
    assert!(!report.contains("not met") || held, "{report}");
    // So 400 events were due: all ran but those the end found waiting
    // (4 at most when met) or in flight (one a connection).
    let events = first(&report, "total number of events:");
    if !report.contains("not met") {
        assert!((391.0..=401.0).contains(&events), "{events} of 400 events: {report}");
    }
    let achieved = numbers(&report, "Rate: target 200/s (fixed arrivals), achieved")[0];
    assert!((achieved * total_s - events).abs() < 1.0, "achieved is events over the time: {report}");
    // From arrival is the wait to start plus the service: the wait is the
    // client's delay or a connection busy with an earlier answer.
    let p95 = numbers(&report, "p95:");
    assert!(p95[0] <= p95[1] + delay_max_ms + service_max_ms + 1.0, "{report}");
    if !held {
        assert!(p95[0] < p95[1] + 20.0, "{report}");
    }
    drop(server);
}

/// Every histogram of the log, read back as the log's readers do: per
/// tag (`None` for the events' latency), the total count.
fn logged_counts(path: &Path) -> Vec<(Option<String>, u64)> {
    let bytes = std::fs::read(path).unwrap();
    let mut totals: Vec<(Option<String>, u64)> = Vec::new();
    for entry in IntervalLogIterator::new(&bytes) {
        let LogEntry::Interval(interval) = entry.unwrap() else { continue };
        let raw = base64::engine::general_purpose::STANDARD.decode(interval.encoded_histogram()).unwrap();
        let h: Histogram<u64> = Deserializer::new().deserialize(&mut raw.as_slice()).unwrap();
        let tag = interval.tag().map(|t| t.as_str().to_owned());
        match totals.iter_mut().find(|(t, _)| *t == tag) {
            Some((_, n)) => *n += h.len(),
            None => totals.push((tag, h.len())),
        }
    }
    totals
}

fn logged(totals: &[(Option<String>, u64)], tag: Option<&str>) -> u64 {
    totals.iter().find(|(t, _)| t.as_deref() == tag).map_or(0, |(_, n)| *n)
}

/// `--hdr-log`: one interval a second, read back with the hdrhistogram
/// crate; the events logged are the report's transactions, each statement
/// kind's the report's per-statement count.
#[test]
fn hdr_log_reads_back_to_the_report() {
    let dir = ScratchDir::new("latency-hdr-log");
    let server = null_server(&dir, Duration::ZERO);
    let socket = format!("--mysql-socket={}", dir.0.join("null.sock").display());
    let log = dir.0.join("run.hlog");
    let log_arg = format!("--hdr-log={}", log.display());
    let before = SystemTime::now();
    let started = Instant::now();
    let report = ok(&["oltp_read_write", &socket, "--threads=2", "--time=2", &log_arg, "--per-statement=on", "run"]);
    let elapsed_s = started.elapsed().as_secs_f64();
    let totals = logged_counts(&log);
    let transactions = first(&report, "transactions:") as u64;
    assert!(transactions > 100, "{report}");
    assert_eq!(logged(&totals, None), transactions, "{totals:?}");
    for kind in ["point_select", "simple_range", "update_index", "delete", "insert", "begin", "commit"] {
        let reported = numbers(&report, kind)[0] as u64;
        assert_eq!(logged(&totals, Some(kind)), reported, "{kind}: {totals:?}\n{report}");
    }
    assert_eq!(logged(&totals, Some("commit")), transactions);
    let text = std::fs::read_to_string(&log).unwrap();
    let intervals =
        text.lines().filter(|l| !l.starts_with('#') && !l.starts_with('"') && !l.starts_with("Tag=")).count();
    // One a second while the loops run (a loop a loaded machine stalls
    // stretches the run: the wall clock bounds them), and the last.
    assert!(intervals >= 2 && intervals as f64 <= elapsed_s + 1.0, "one interval a second: {elapsed_s} s: {text}");
    let start: f64 = numbers(&text, "#[StartTime:")[0];
    let since_epoch = before.duration_since(SystemTime::UNIX_EPOCH).unwrap().as_secs_f64();
    assert!((start - since_epoch).abs() < 5.0, "{start} vs {since_epoch}");
    drop(server);
}

/// A log that cannot be created ends the command before any load.
#[test]
fn an_hdr_log_that_cannot_be_created_is_refused() {
    let dir = ScratchDir::new("latency-hdr-bad");
    let server = null_server(&dir, Duration::ZERO);
    let socket = format!("--mysql-socket={}", dir.0.join("null.sock").display());
    let out =
        common::run_wirebench(&["oltp_point_select", &socket, "--time=1", "--hdr-log=/nonexistent-dir/x.hlog", "run"]);
    assert_eq!(out.code, Some(1));
    let stderr = &out.stderr;
    assert!(stderr.contains("--hdr-log=/nonexistent-dir/x.hlog: cannot create the file: "), "{stderr}");
    assert!(!&out.stdout.contains("SQL statistics"));
    drop(server);
}

/// `--warmup-time`: the load runs first, the report covers only `--time`
/// after it, and `--events` counts from its end.
#[test]
fn warmup_runs_before_the_measured_time() {
    let dir = ScratchDir::new("latency-warmup");
    let server = null_server(&dir, Duration::from_micros(200));
    let socket = format!("--mysql-socket={}", dir.0.join("null.sock").display());
    let start = Instant::now();
    // --time=2: the loops still run when the first interim report is due.
    // (An interval ending with the run is reported only when the report
    // thread wakes before the loops end, which a loaded machine can miss.)
    let report =
        ok(&["oltp_point_select", &socket, "--threads=2", "--time=2", "--warmup-time=1", "--report-interval=1", "run"]);
    let elapsed = start.elapsed();
    assert!(elapsed >= Duration::from_secs(3), "warm-up plus --time: {elapsed:?}");
    assert!(report.contains("Warmup time: 1s\n"), "{report}");
    let first_interim = "Threads started!\n\nWarming up for 1 seconds...\n\n[ 1s ] thds: 2";
    assert!(report.contains(first_interim), "no interim line during the warm-up: {report}");
    // One line a second of the measured time, numbered from its start; a
    // loop a loaded machine stalls past the end stretches the run, and the
    // lines go on while it runs (the wall clock bounds them).
    let interims: Vec<&str> = report.lines().filter(|l| l.contains("] thds: ")).map(|l| &l[..6]).collect();
    let numbered: Vec<String> = (1..=interims.len()).map(|n| format!("[ {n}s ]")).collect();
    assert!(!interims.is_empty() && interims == numbered, "{report}");
    assert!(interims.len() as f64 <= elapsed.as_secs_f64() - 1.0, "{elapsed:?}: {report}");
    let total = first(&report, "total time:");
    assert!(total >= 1.9 && total + 1.0 <= elapsed.as_secs_f64(), "total time is the measured time: {report}");
    // At most 2 connections x 0.2 ms answers in the measured time.
    let transactions = first(&report, "transactions:");
    assert!(transactions <= 2.0 * total / 0.0002 * 1.05, "the warm-up's events are not counted: {report}");

    let report =
        ok(&["oltp_point_select", &socket, "--threads=2", "--time=0", "--events=300", "--warmup-time=1", "run"]);
    assert_eq!(first(&report, "transactions:") as u64, 300, "{report}");
    drop(server);
}

/// `--warmup-time` with `--events=N` runs exactly N events after the
/// warm-up, on two loops and many connections, pipelined or not, built in
/// or scripted: each loop counts from its own cut, and an event in flight
/// at the cut belongs to the warm-up, so the queries are N times the
/// event's too (oltp_read_only: 16).
#[test]
fn warmup_then_exactly_the_events_asked_against_the_null_server() {
    let dir = ScratchDir::new("latency-warmup-events");
    let server = null_server(&dir, Duration::ZERO);
    let socket = format!("--mysql-socket={}", dir.0.join("null.sock").display());
    let stock = Path::new("/usr/share/sysbench/oltp_read_only.lua");
    let mut tests = vec!["oltp_read_only"];
    match stock.exists() {
        true => tests.push("/usr/share/sysbench/oltp_read_only.lua"),
        false => common::unavailable("no /usr/share/sysbench/oltp_read_only.lua (apt-get install sysbench)"),
    }
    for test in tests {
        for (run, pipeline) in ["--pipeline=1", "--pipeline=3", "--pipeline=1"].into_iter().enumerate() {
            let pipeline = if test.ends_with(".lua") { "--pipeline=1" } else { pipeline };
            let events = [1_000, 1_500, 2_000][run];
            let asked = format!("--events={events}");
            let server_args = [test, &socket, "--mysql-db=sbtest", "--table-size=100", "--threads=9"];
            let report = ok(&[
                &server_args[..],
                &[&common::two_loops(), pipeline, "--time=0", &asked, "--warmup-time=1", "run"],
            ]
            .concat());
            let counted = (first(&report, "transactions:") as u64, first(&report, "queries:") as u64);
            assert_eq!(counted, (events, events * 16), "{test} {pipeline}: {report}");
        }
    }
    drop(server);
}

/// The arguments that reach the test MariaDB over TCP, with one small table.
fn mariadb_args<'a>(host: &'a str, port: &'a str) -> Vec<&'a str> {
    vec![
        host,
        port,
        "--mysql-user=sbtest",
        "--mysql-password=sbtest",
        "--mysql-db=sbtest",
        "--tables=1",
        "--table-size=1000",
    ]
}

fn with_table(test: &str, run: impl FnOnce(&[&str])) {
    let Some(server) = TestServer::find() else { return };
    let _lock = mariadb_lock();
    let (host, port) = (format!("--mysql-host={}", server.host), format!("--mysql-port={}", server.port));
    let mut args = vec![test];
    args.extend(mariadb_args(&host, &port));
    let with = |command: &'static str| [&args[..], &[command]].concat();
    let _ = common::run_wirebench(&with("cleanup"));
    ok(&with("prepare"));
    run(&args);
    ok(&with("cleanup"));
}

/// `--warmup-time` with `--events=N` against MariaDB, on two loops and
/// several connections: exactly N events, and 16 queries each, every time.
#[test]
fn warmup_then_exactly_the_events_asked_against_mariadb() {
    with_table("oltp_read_only", |args| {
        for (events, pipeline) in [(600, "--pipeline=1"), (700, "--pipeline=2"), (800, "--pipeline=1")] {
            let asked = format!("--events={events}");
            let run = [&common::two_loops(), "--threads=6", pipeline, "--time=0", &asked, "--warmup-time=1", "run"];
            let report = ok(&[args, &run[..]].concat());
            let counted = (first(&report, "transactions:") as u64, first(&report, "queries:") as u64);
            assert_eq!(counted, (events, events * 16), "{pipeline}: {report}");
        }
    });
}

/// `--percentile=50,95,99,99.9` against the real server: sysbench's line
/// keeps the first value, the list follows sysbench's block, each value
/// at most the max and in order.
#[test]
fn percentile_list_against_mariadb() {
    with_table("oltp_point_select", |args| {
        let run = [args, &["--threads=2", "--events=3000", "--time=0", "--percentile=50,95,99,99.9", "run"]].concat();
        let report = ok(&run);
        assert!(report.contains("         50th percentile: "), "{report}");
        let block = report.split("Latency percentiles (ms):\n").nth(1).unwrap_or_else(|| panic!("{report}"));
        let values: Vec<f64> = ["p50:", "p95:", "p99:", "p99.9:"].iter().map(|l| first(block, l)).collect();
        let max = first(&report, "max:");
        assert!(values.windows(2).all(|w| w[0] <= w[1]), "{values:?}");
        assert!(values.iter().all(|&v| v > 0.0 && v <= max), "{values:?} max {max}\n{report}");
        let sysbench_line = report.find("50th percentile:").unwrap();
        let sum_line = report.find("         sum:").unwrap();
        let block_at = report.find("Latency percentiles (ms):").unwrap();
        let fairness = report.find("Threads fairness:").unwrap();
        assert!(sysbench_line < sum_line && sum_line < block_at && block_at < fairness, "{report}");
    });
}

/// `--per-statement=on` against the real server: each kind's count is
/// what oltp_read_write sends per event (10 point selects, one of each
/// range, update, delete, insert, BEGIN and COMMIT) times the events.
/// One connection: two could deadlock, and a retried event sends its
/// statements again (they count, as sent).
#[test]
fn per_statement_counts_equal_the_workloads_statements() {
    with_table("oltp_read_write", |args| {
        let run = [args, &["--threads=1", "--events=200", "--time=0", "--per-statement=on", "run"]].concat();
        let report = ok(&run);
        let expected = [
            ("point_select", 2000),
            ("simple_range", 200),
            ("sum_range", 200),
            ("order_range", 200),
            ("distinct_range", 200),
            ("update_index", 200),
            ("update_non_index", 200),
            ("delete", 200),
            ("insert", 200),
            ("begin", 200),
            ("commit", 200),
        ];
        let block = report.split("Statements (latency in ms").nth(1).unwrap_or_else(|| panic!("{report}"));
        for (kind, count) in expected {
            let row = numbers(block, kind);
            assert_eq!((row[0] as u64, row[1] as u64), (count, 0), "{kind}: {report}");
        }
        assert!(!block.contains("other"), "{report}");
        assert_eq!(first(&report, "total:") as u64, 200 * 20, "{report}");
    });
}
