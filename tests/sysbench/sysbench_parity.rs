//! wirebench against the real sysbench 1.0.20 on the same MariaDB: for
//! each of the 11 tests, the same command line must count the same reads,
//! writes, others and transactions. And the run modes sysbench has beyond
//! `--events`: `--rate` (open loop), `--report-checkpoints` and
//! `--forced-shutdown`.
//!
//! Why the counts can be equal exactly: with `--rand-seed` and
//! `--threads=1` wirebench draws sysbench's values in sysbench's order (see
//! `wirebench::rand`), and `prepare` leaves every id 1..table_size present
//! whatever the seed, so even the data-dependent counts agree: oltp_delete's
//! DELETEs that hit an id already deleted affect no row and count as
//! "other", and the same ids are deleted in the same order in both runs.
//! Every run starts from a fresh `prepare`.
//!
//! Needs the test server (see tests/common) and /usr/bin/sysbench; without
//! them the tests are skipped, or fail with WIREBENCH_REQUIRE_SERVER=1.
//! The `--rate`, checkpoint and overflow tests use an in-process null
//! server; one more checks that the `--rate` schedule allocates nothing
//! per event (implementing `GlobalAlloc` needs `unsafe`, hence here).

use crate::common::{self, number_after};

use std::path::Path;
use std::process::Command;

use std::time::{Duration, Instant};

use common::{Ran, TestServer};
use wirebench::client::Connection;
use wirebench::null_server::{NullServer, NullServerConfig};

const SYSBENCH: &str = "/usr/bin/sysbench";

// The tests that use MariaDB's sbtest tables run one at a time.
use crate::common::serial;

/// The server, when there is one and sysbench too.
fn server_and_sysbench() -> Option<TestServer> {
    let server = TestServer::find()?;
    if !Path::new(SYSBENCH).exists() {
        common::unavailable(&format!("{SYSBENCH} is missing (apt-get install sysbench)"));
        return None;
    }
    Some(server)
}

fn mysql_args(host: &str, port: u16) -> Vec<String> {
    vec![
        format!("--mysql-host={host}"),
        format!("--mysql-port={port}"),
        "--mysql-user=sbtest".into(),
        "--mysql-password=sbtest".into(),
        "--mysql-db=sbtest".into(),
    ]
}

/// `program TEST ARGS COMMAND`: sysbench's command line, and ours.
fn run(program: impl AsRef<std::ffi::OsStr>, test: &str, args: &[String], command: &str) -> Ran {
    common::run(Command::new(program).arg(test).args(args).arg(command))
}

/// wirebench's run of a sysbench command line.
fn ours(test: &str, args: &[String], command: &str) -> Ran {
    run(common::WIREBENCH, test, args, command)
}

/// What the final report's "SQL statistics" say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Counts {
    read: u64,
    write: u64,
    other: u64,
    transactions: u64,
    ignored_errors: u64,
}

fn counts(report: &str) -> Counts {
    let get = |label| number_after(report, label);
    Counts {
        read: get("read:"),
        write: get("write:"),
        other: get("other:"),
        transactions: get("transactions:"),
        ignored_errors: get("ignored errors:"),
    }
}

/// `cleanup` (whatever is there) then `prepare`, with sysbench.
fn fresh_tables(test: &str, args: &[String]) {
    run(SYSBENCH, test, args, "cleanup");
    run(SYSBENCH, test, args, "prepare").expect_success();
}

/// sysbench's run, then wirebench's on freshly prepared tables.
fn both(test: &str, args: &[String]) -> (Counts, Counts) {
    fresh_tables(test, args);
    let sysbench = run(SYSBENCH, test, args, "run").expect_success();
    fresh_tables(test, args);
    let wirebench = ours(test, args, "run").expect_success();
    run(SYSBENCH, test, args, "cleanup");
    (counts(&sysbench.stdout), counts(&wirebench.stdout))
}

#[test]
fn every_test_counts_what_sysbench_counts() {
    let Some(server) = server_and_sysbench() else { return };
    let _serial = serial();
    let started = Instant::now();
    let mut common = mysql_args(&server.host, server.port);
    common.extend(["--table-size=200", "--threads=1", "--time=0", "--rand-seed=4242"].map(String::from));
    let tests = [
        "oltp_read_only",
        "oltp_read_write",
        "oltp_write_only",
        "oltp_point_select",
        "oltp_update_index",
        "oltp_update_non_index",
        "oltp_delete",
        "oltp_insert",
        "select_random_points",
        "select_random_ranges",
    ];
    for test in tests {
        let mut args = common.clone();
        // The select_random_* scripts refuse more than one table.
        let tables = if test.starts_with("select_random") { "--tables=1" } else { "--tables=2" };
        args.extend([tables.to_string(), "--events=150".to_string()]);
        let (sysbench, wirebench) = both(test, &args);
        assert_eq!(wirebench, sysbench, "{test}: wirebench counts differ from sysbench's");
        assert_eq!(sysbench.transactions, 150, "{test}");
        if test == "oltp_delete" {
            // The interesting case: 150 skewed picks among 400 ids repeat.
            assert!(sysbench.write > 0 && sysbench.other > 0, "{test}: {sysbench:?}");
        }
    }
    bulk_insert_counts_rows(&common);
    eprintln!("{} tests in {:.1?}", tests.len() + 1, started.elapsed());
}

/// bulk_insert: sysbench's event appends one row to a client-side buffer
/// flushed as one INSERT when the next row would pass 512 KiB and at the
/// end of the run; transactions and `--events` count rows, writes count
/// statements. wirebench sends statements of the rows `--events` still
/// allows, so the counts agree for any limit: one row, a partial
/// statement, and more rows than one 512 KiB statement holds (two).
fn bulk_insert_counts_rows(common: &[String]) {
    let test = "bulk_insert";
    for events in [1u64, 150, 50_000] {
        let mut args = common.to_vec();
        args.push(format!("--events={events}"));
        let (sysbench, wirebench) = both(test, &args);
        assert_eq!(wirebench, sysbench, "{test} --events={events}: wirebench counts differ from sysbench's");
        assert_eq!(wirebench.transactions, events, "{wirebench:?}");
        assert_eq!(wirebench.write, if events > 30_000 { 2 } else { 1 }, "{wirebench:?}");
    }
}

/// A null server in this process, and the arguments that reach it.
fn null_server() -> (NullServer, Vec<String>) {
    let config = NullServerConfig { tcp: Some("127.0.0.1:0".parse().unwrap()), ..NullServerConfig::default() };
    let server = NullServer::start(config).expect("the null server starts");
    let addr = server.local_addr().expect("it listens on TCP");
    let args = mysql_args(&addr.ip().to_string(), addr.port());
    (server, args)
}

fn with(mut args: Vec<String>, more: &[&str]) -> Vec<String> {
    args.extend(more.iter().map(|s| s.to_string()));
    args
}

/// `--rate=200` for 2 s: the events are the arrivals of the run's own
/// time, and each interim line is followed by sysbench's queue line. What
/// a loaded machine's stall can change (arrivals left waiting, a queue,
/// latency from arrival) the run must say: its `Client load:` line's
/// client delay, its "Target rate not met" line.
#[test]
fn rate_paces_the_events() {
    let (_server, args) = null_server();
    let args = with(args, &["--threads=4", "--time=2", "--rate=200", "--report-interval=1"]);
    let out = ours("oltp_point_select", &args, "run").expect_success();
    let stdout = &out.stdout;
    assert!(stdout.contains("Target transaction rate: 200/sec\n"), "{stdout}");
    let events = counts(stdout).transactions;
    let (total_s, delay_max_ms): (f64, f64) = (number_after(stdout, "total time:"), client_delay_max_ms(stdout));
    // Unsaid when met: a connection's arrival each, about to start.
    let waiting = stdout
        .lines()
        .find_map(|l| l.strip_prefix("Target rate not met: "))
        .map_or(4, |rest| rest.split_whitespace().next().and_then(|n| n.parse().ok()).unwrap());
    // Poisson arrivals over the measured time: within 6 standard
    // deviations of 200/s times it, the run's events and those waiting.
    let due = 200.0 * total_s;
    let arrived = (events as f64, (events + waiting) as f64);
    let within = 6.0 * due.sqrt();
    assert!(arrived.0 <= due + within && arrived.1 >= due - within, "{events} events in {total_s} s\n{stdout}");
    let lines: Vec<&str> = stdout.lines().collect();
    let interim: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].contains("] thds: 4 tps: ")).collect();
    assert!(!interim.is_empty(), "{stdout}");
    for i in interim {
        let queue = lines.get(i + 1).copied().unwrap_or_default();
        let (stamp, rest) = queue.split_once("] ").unwrap_or_default();
        assert!(lines[i].starts_with(&format!("{stamp}] ")), "{queue:?} after {:?}", lines[i]);
        let rest = rest.strip_prefix("queue length: ").unwrap_or_else(|| panic!("no queue line: {queue:?}"));
        let (length, concurrency) = rest.split_once(", concurrency: ").unwrap();
        let (length, concurrency): (u64, u64) = (length.parse().unwrap(), concurrency.parse().unwrap());
        // 100 arrivals queue in half a second at 200/s: only behind a
        // client that held them about that long.
        assert!(length < 100 || delay_max_ms > 250.0 || waiting > 4, "{queue}\n{stdout}");
        assert!(concurrency <= 4, "{queue}");
    }
    // The latency counts from each arrival: a null server answers in well
    // under a millisecond, the timer wake-up adds about one at most, and
    // the client's own delay what it says.
    let avg: f64 = stdout.lines().find_map(|l| l.trim().strip_prefix("avg:")).unwrap().trim().parse().unwrap();
    let under_rate = stdout.split("Latency under --rate (ms):").nth(1).unwrap_or_else(|| panic!("{stdout}"));
    let max_line = under_rate.lines().find_map(|l| l.trim().strip_prefix("max:")).unwrap_or_default();
    let service_max_ms: f64 = max_line.split_whitespace().nth(1).and_then(|n| n.parse().ok()).unwrap();
    assert!(avg < 20.0 + delay_max_ms + service_max_ms, "{stdout}");
}

/// The client's largest delay of an event, from the report's
/// `Client load:` line (`..., client delay p50 X ms, p99 Y ms, max Z ms, ...`).
#[track_caller]
fn client_delay_max_ms(report: &str) -> f64 {
    let line = report.lines().find(|l| l.starts_with("Client load: ")).unwrap_or_else(|| panic!("{report}"));
    let max = line.split(", max ").nth(1).and_then(|rest| rest.split(' ').next()?.parse().ok());
    max.unwrap_or_else(|| panic!("no client delay max in {line:?}"))
}

/// An overloaded `--rate`: sysbench aborts with "The event queue is full"
/// once 131,072 arrivals wait (#483); wirebench runs to `--time`, the
/// backlog counted past that, and the report says the target was not met.
#[test]
fn rate_past_capacity_runs_to_its_end_and_says_so() {
    let (_server, args) = null_server();
    // A million events a second on one connection: far more arrivals wait
    // than sysbench's queue holds.
    let args = with(args, &["--threads=1", "--time=2", "--rate=1000000", "--report-interval=1"]);
    let started = Instant::now();
    let out = ours("oltp_point_select", &args, "run").expect_success();
    // 2 s and the end: working through the backlog would take minutes;
    // the rest is room for a loaded machine.
    assert!(started.elapsed() < Duration::from_secs(12), "--time ends the run: {:?}", started.elapsed());
    assert!(!out.stderr.contains("event queue is full"), "{}", out.stderr);
    let queue = out.stdout.lines().find(|l| l.contains("] queue length: ")).unwrap_or_else(|| panic!("{}", out.stdout));
    let length: u64 = queue.split("queue length: ").nth(1).unwrap().split(',').next().unwrap().parse().unwrap();
    assert!(length > 131_072, "{queue}");
    assert!(out.stdout.contains("SQL statistics:"), "{}", out.stdout);
    assert!(out.stdout.contains("\nTarget rate not met: "), "{}", out.stdout);
}

/// `--report-checkpoints=1,2` on a 3 s run: a full report at 1 s and at
/// 2 s, each covering the time since the previous one (the statistics
/// restart), then the final report for the last second. At `--rate=300`
/// the periods hold the arrivals of their time: a period a loaded machine
/// stretched holds more, and the rates are over each period's own time.
#[test]
fn checkpoints_report_and_restart() {
    let (_server, args) = null_server();
    let args = with(
        args,
        &["--threads=2", "--time=3", "--rate=300", "--report-checkpoints=1,2", "--report-interval=1", "--histogram"],
    );
    let out = ours("oltp_point_select", &args, "run").expect_success();
    let stdout = &out.stdout;
    assert!(stdout.contains("Report checkpoint(s) at 1, 2 seconds\n"), "{stdout}");
    let reports: Vec<&str> = stdout.split("SQL statistics:").skip(1).collect();
    assert_eq!(reports.len(), 3, "{stdout}");
    let before: Vec<&str> = stdout.split("SQL statistics:").collect();
    let (mut since, mut events, mut waiting) = (0.0, 0, 0);
    for (n, expected_total) in [(0, 1.0), (1, 2.0), (2, 3.0)] {
        let report = reports[n];
        if n < 2 {
            assert!(before[n].ends_with(&format!("[ {}s ] Checkpoint report:\n", n + 1)), "{stdout}");
        } else {
            // Only the final report has the histogram before it.
            assert!(before[n].contains("Latency histogram (values are in milliseconds)"), "{stdout}");
        }
        let total: f64 = report
            .lines()
            .find_map(|l| l.trim().strip_prefix("total time:"))
            .and_then(|t| t.trim().strip_suffix('s'))
            .unwrap()
            .parse()
            .unwrap();
        // Not before its time; late as a loaded machine makes it.
        assert!(total > expected_total - 0.05 && total > since, "report {n}: total time {total}\n{stdout}");
        let c = counts(report);
        assert!(c.transactions > 0, "report {n}: {c:?}\n{stdout}");
        assert_eq!(c.read, c.transactions);
        events += c.transactions;
        waiting = report
            .lines()
            .find_map(|l| l.strip_prefix("Target rate not met: "))
            .map_or(2, |rest| rest.split_whitespace().next().and_then(|n| n.parse().ok()).unwrap());
        // Per second over the period since the last checkpoint, not since the start.
        let per_sec: f64 = report
            .lines()
            .find_map(|l| l.trim().strip_prefix("transactions:"))
            .and_then(|rest| rest.split('(').nth(1))
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap()
            .parse()
            .unwrap();
        let period = total - since;
        let expected = c.transactions as f64 / period;
        assert!((per_sec - expected).abs() <= expected * 0.01 + 0.01, "report {n}: {per_sec}/s\n{stdout}");
        assert_eq!(number_after::<u64>(report, "total number of events:"), c.transactions);
        since = total;
    }
    // Poisson arrivals over the whole time: within 6 standard deviations
    // of 300/s times it, the periods' events and those left waiting (a
    // connection's each, unsaid when met).
    let due = 300.0 * since;
    let within = 6.0 * due.sqrt();
    assert!((events as f64) <= due + within && (events + waiting) as f64 >= due - within, "{events}\n{stdout}");
    // The interim lines are not reset by the checkpoints: about 300/s each,
    // where the client kept up (nothing waited at the line before or at
    // its own: a stall across a second's end moves its events).
    let lines: Vec<&str> = stdout.lines().collect();
    let queued = |i: usize| {
        let line = lines.get(i).copied().unwrap_or_default();
        line.split("queue length: ").nth(1).and_then(|r| r.split(',').next()?.parse::<u64>().ok()).unwrap_or(0)
    };
    let mut before = 0;
    for (i, line) in lines.iter().enumerate().filter(|(_, l)| l.contains("] thds: ")) {
        let tps: f64 = line.split("tps: ").nth(1).unwrap().split_whitespace().next().unwrap().parse().unwrap();
        let kept_up = before <= 2 && queued(i + 1) <= 2;
        assert!(tps > 0.0 && (!kept_up || (150.0..=450.0).contains(&tps)), "{line}\n{stdout}");
        before = queued(i + 1);
    }
}

/// `--forced-shutdown`: events blocked on row locks never finish; at
/// `--time` + 1 s wirebench reports them as unfinished and exits with
/// status 2, as sysbench does.
#[test]
fn forced_shutdown_stops_a_stuck_run() {
    let Some(server) = TestServer::find() else { return };
    let _serial = serial();
    let mut args = mysql_args(&server.host, server.port);
    args.extend(["--tables=2", "--table-size=50", "--threads=2"].map(String::from));
    let _ = ours("oltp_update_index", &args, "cleanup");
    ours("oltp_update_index", &args, "prepare").expect_success();

    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mut holder = runtime.block_on(async {
        let mut conn = Connection::connect(&server.options(server.tcp())).await.unwrap();
        for sql in ["BEGIN", "SELECT id FROM sbtest1 FOR UPDATE", "SELECT id FROM sbtest2 FOR UPDATE"] {
            conn.query_drop(sql).await.unwrap();
        }
        conn
    });
    let started = Instant::now();
    let out = ours("oltp_update_index", &with(args.clone(), &["--time=1", "--forced-shutdown=1"]), "run");
    let elapsed = started.elapsed();
    runtime.block_on(holder.query_drop("ROLLBACK")).unwrap();
    drop(holder);

    let stdout = &out.stdout;
    assert_eq!(out.code, Some(2), "{stdout}\n{}", out.stderr);
    assert!(stdout.contains("Forcing shutdown in 2 seconds\n"), "{stdout}");
    assert!(out.stderr.contains("FATAL: The --max-time limit has expired, forcing shutdown..."), "{}", out.stderr);
    assert!(
        stdout.contains(
            "    reconnects:                          0      (0.00 per sec.)\n\n\
             Number of unfinished transactions on forced shutdown: 2\n\n\
             General statistics:\n"
        ),
        "{stdout}"
    );
    assert_eq!(counts(stdout).transactions, 0, "{stdout}");
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");

    // Without stuck events the run ends by itself, before the shutdown.
    let out =
        ours("oltp_update_index", &with(args.clone(), &["--time=2", "--forced-shutdown=50%", "--events=20"]), "run")
            .expect_success();
    assert!(out.stdout.contains("Forcing shutdown in 3 seconds\n"), "{}", out.stdout);
    assert!(!out.stdout.contains("unfinished"), "{}", out.stdout);
    assert_eq!(counts(&out.stdout).transactions, 20);
    let _ = ours("oltp_update_index", &args, "cleanup");
}
