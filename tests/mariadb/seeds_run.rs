//! Every sysbench command line from the benchmark reports in
//! ../shared/seeds runs with wirebench in sysbench's place: prepare, run and
//! cleanup against the test server, with host, port, user, password and
//! database pointed at it and sizes, threads and times scaled down. The
//! tables prepare creates are the ones of the sysbench the line was
//! written for: 0.4's one table `sbtest`, 0.5's `sbtest1` with unsigned
//! columns and MAX_ROWS, 1.0's `sbtest1`.

use crate::common;

use common::{rows, TestServer};
use wirebench::client::Connection;

/// The reports' command lines, after the program name (seed 002's thread
/// count is a placeholder in the report; seed 004 has no command: `run`).
const SEEDS: &[(&str, &str)] = &[
    ("000", "--test=oltp --mysql-table-engine=innodb --oltp-table-size=10000000 --max-requests=0 --max-time=900 --num-threads=512 --mysql-host=10.8.8.100 --mysql-port=3308 --mysql-user=admin --mysql-password=123456 --mysql-db=test run"),
    ("001 writes", "--test=oltp --mysql-table-engine=innodb --oltp-table-size=2000000 --oltp-distinct-ranges=0 --mysql-db=test --mysql-user=root --mysql-password=123456 --oltp-order-ranges=0 --oltp-range-size=100 --oltp-point-selects=0 --oltp-simple-ranges=0 --oltp-sum-ranges=0 --oltp-test-mode=complex --max-requests=2000000 --num-threads=20 --max-time=40 run"),
    ("001 reads", "--test=oltp --mysql-table-engine=innodb --oltp-table-size=2000000 --oltp-distinct-ranges=0 --mysql-db=test --mysql-user=root --mysql-password=123456 --oltp-read-only=on --oltp-test-mode=complex --max-requests=2000000 --num-threads=20 --max-time=40 run"),
    ("001 update_key", "--test=oltp --mysql-table-engine=innodb --oltp-table-size=2000000 --oltp-distinct-ranges=0 --mysql-db=test --mysql-user=root --mysql-password=123456 --oltp-nontrx-mode=update_key --oltp-test-mode=nontrx --max-requests=2000000 --num-threads=30 --max-time=40 run"),
    ("002", "--test=lua/oltp.lua --oltp-table-size=1000000 --oltp-read-only=on --oltp_point_selects=1000 --oltp_sum_ranges=0 --oltp_simple_ranges=0 --oltp_order_ranges=0 --oltp_distinct_ranges=0 --max-requests=0 --max-time=100 --num-threads=16 run"),
    ("003", "/usr/local/sysbench-1.0.20/src/lua/oltp_read_write.lua --mysql-host=127.0.0.1 --mysql-port=13306 --mysql-db=dbtest --mysql-user=wxroot --mysql-password=Renwole.com#Node --table_size=1000000 --tables=10 --threads=20 --events=0 --report-interval=10 --time=120 --range_size=500 run"),
    ("004", "--test=oltp --mysql-table-engine=innodb --oltp-table-size=40000000 --oltp-test-mode=complex --max-requests=0 --max-time=600 --num-threads=128 run"),
];

/// The events of each run: two a connection.
const EVENTS: u32 = 24;
/// The `--max-time`/`--time` of each run: only a stuck run reaches it.
const STUCK_S: u32 = 120;

/// Points the line at the test server and scales it down.
fn scaled(line: &str, server: &TestServer, command: &str) -> Vec<String> {
    let mut args: Vec<String> = Vec::new();
    for arg in line.split_whitespace() {
        let (name, value) = arg.split_once('=').unwrap_or((arg, ""));
        let keep = match name {
            "--mysql-host" | "--mysql-port" | "--mysql-user" | "--mysql-password" | "--mysql-db" => None,
            "--oltp-table-size" | "--table_size" => Some(format!("{name}=300")),
            "--tables" => Some(format!("{name}=2")),
            // A fixed, small amount of work ends each run (seed 002's 1,000
            // point selects a transaction can finish none in a second of a
            // loaded machine); the time only bounds a stuck one.
            "--max-time" | "--time" => Some(format!("{name}={STUCK_S}")),
            "--report-interval" => Some(format!("{name}=1")),
            "--max-requests" | "--events" => Some(format!("{name}={EVENTS}")),
            "--num-threads" | "--threads" => Some(format!("{name}={}", value.parse::<u32>().unwrap().min(12))),
            "run" => Some(command.to_string()),
            _ => Some(arg.to_string()),
        };
        args.extend(keep);
    }
    args.extend([
        format!("--mysql-host={}", server.host),
        format!("--mysql-port={}", server.port),
        "--mysql-user=sbtest".into(),
        "--mysql-password=sbtest".into(),
        "--mysql-db=sbtest".into(),
    ]);
    args
}

/// The table a seed's prepare creates, and what its `SHOW CREATE TABLE`
/// holds.
fn expected_table(seed: &str) -> (&'static str, &'static [&'static str]) {
    match &seed[..3] {
        "000" | "001" | "004" => ("sbtest", &["`id` int(10) unsigned NOT NULL AUTO_INCREMENT", "KEY `k` (`k`)"]),
        "002" => ("sbtest1", &["`k` int(10) unsigned NOT NULL", "KEY `k_1` (`k`)", "MAX_ROWS=1000000"]),
        _ => ("sbtest1", &["`id` int(11) NOT NULL AUTO_INCREMENT", "KEY `k_1` (`k`)"]),
    }
}

async fn check_prepared_table(conn: &mut Connection, seed: &str) {
    let (table, pieces) = expected_table(seed);
    let sql = format!("SHOW CREATE TABLE {table}");
    let ddl = rows(&conn.query(&sql).await.unwrap_or_else(|e| panic!("seed {seed}: {sql}: {e}")))[0][1].clone();
    let ddl = ddl.unwrap();
    for piece in pieces {
        assert!(ddl.contains(piece), "seed {seed}: no {piece:?} in\n{ddl}");
    }
    assert_eq!(ddl.contains("MAX_ROWS"), pieces.iter().any(|p| p.contains("MAX_ROWS")), "seed {seed}:\n{ddl}");
}

#[tokio::test]
async fn every_seed_command_line_runs() {
    let Some(server) = TestServer::find() else { return };
    let mut conn = Connection::connect(&server.options(server.tcp())).await.unwrap();
    // One after another: they share the tables sbtest, sbtest1, sbtest2.
    for (seed, line) in SEEDS {
        for command in ["cleanup", "prepare", "run", "cleanup"] {
            let args = scaled(line, &server, command);
            let ran = common::run_wirebench(&args);
            let (ok, stdout, stderr) = (ran.succeeded(), ran.stdout, ran.stderr);
            assert!(ok, "seed {seed} {command} failed\nargs: {args:?}\nstdout:\n{stdout}\nstderr:\n{stderr}");
            if command == "prepare" {
                check_prepared_table(&mut conn, seed).await;
            }
            if command == "run" {
                check_report(seed, &stdout);
            }
        }
    }
}

fn check_report(seed: &str, stdout: &str) {
    for line in ["SQL statistics:", "    transactions:", "General statistics:", "Latency (ms):", "Threads fairness:"] {
        assert!(stdout.contains(line), "seed {seed}: no {line:?} in\n{stdout}");
    }
    let transactions: u64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("    transactions:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert_eq!(transactions, u64::from(EVENTS), "seed {seed}: the events asked\n{stdout}");
}
