//! `--pipeline` > 1 on the transactional tests under contention: deadlocks
//! abort transactions whose remaining statements are already sent. The run
//! must go on (sysbench ignores 1213 and runs the event again) and the
//! table must come out whole: each DELETE of an id is followed by the
//! INSERT of the same id, and a failed event's leftover statements must not
//! commit one without the other.
//!
//! The tables live in database sbtest_pipeline, which scripts/mariadb.sh
//! grants to sbtest; the tests here run one at a time. Needs the test
//! server (see tests/common).

use crate::common;

use common::{Ran, TestServer};
use wirebench::client::Connection;

const DB: &str = "sbtest_pipeline";
const TABLE_SIZE: u64 = 50;

/// The events decide a run's end; this `--time` (not the default 10 s,
/// which a loaded machine's deadlocks can outlast) only bounds a stuck one.
const STUCK: &str = "--time=120";

// The tests share sbtest_pipeline.sbtest1.
use crate::common::serial;

fn args(server: &TestServer, more: &[&str]) -> Vec<String> {
    let mut args = vec![
        format!("--mysql-host={}", server.host),
        format!("--mysql-port={}", server.port),
        "--mysql-user=sbtest".into(),
        "--mysql-password=sbtest".into(),
        format!("--mysql-db={DB}"),
        "--tables=1".into(),
        format!("--table-size={TABLE_SIZE}"),
    ];
    args.extend(more.iter().map(|s| s.to_string()));
    args
}

/// `wirebench TEST ARGS COMMAND`, which must succeed.
fn succeeding(test: &str, args: &[String], command: &str) -> Ran {
    common::run_wirebench(&[&[test.to_owned()][..], args, &[command.to_owned()]].concat()).expect_success()
}

/// A fresh sbtest1 of `TABLE_SIZE` rows.
fn prepare(server: &TestServer) {
    succeeding("oltp_read_write", &args(server, &[]), "cleanup");
    succeeding("oltp_read_write", &args(server, &[]), "prepare");
}

/// The number after `label` in a report line such as
/// `    ignored errors:                      1032   (357.63 per sec.)`.
fn counter(out: &Ran, label: &str) -> u64 {
    let stdout = &out.stdout;
    stdout
        .lines()
        .find_map(|l| l.trim_start().strip_prefix(label))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no {label:?} in\n{stdout}"))
}

fn rows(server: &TestServer) -> u64 {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let mut conn = Connection::connect(&server.options(server.socket())).await.unwrap_or_else(|e| panic!("{e}"));
        let sql = format!("SELECT COUNT(*) FROM {DB}.sbtest1");
        let response = conn.query(&sql).await.unwrap_or_else(|e| panic!("{e}"));
        let rows = response.result_sets().next().expect("a result set").text_rows().unwrap();
        let count = rows[0][0].as_deref().expect("a count");
        String::from_utf8_lossy(count).parse().unwrap()
    })
}

fn io_backends() -> Vec<&'static str> {
    if common::ring_here() {
        vec!["uring", "epoll"]
    } else {
        vec!["epoll"]
    }
}

/// 8 connections on 50 rows deadlock all the time. With 4 commands in
/// flight each, every run completes its events and the table keeps its 50
/// rows, on both backends and with prepared statements or text.
#[test]
fn deadlocks_under_pipelining_neither_stop_the_run_nor_lose_rows() {
    let Some(server) = TestServer::find() else { return };
    let _serial = serial();
    let mut runs = Vec::new();
    for io in io_backends() {
        for ps_mode in ["auto", "disable"] {
            runs.push(("oltp_read_write", io, ps_mode));
        }
    }
    // Fewer statements per transaction: more of them are writes.
    runs.push(("oltp_write_only", "auto", "auto"));
    for (test, io, ps_mode) in runs {
        prepare(&server);
        let run = args(
            &server,
            &[
                "--threads=8",
                "--pipeline=4",
                "--events=1000",
                STUCK,
                &format!("--io={io}"),
                &format!("--db-ps-mode={ps_mode}"),
            ],
        );
        let out = succeeding(test, &run, "run");
        let at = format!("{test} --io={io} --db-ps-mode={ps_mode}");
        assert_eq!(counter(&out, "total number of events:"), 1000, "{at}");
        assert!(counter(&out, "ignored errors:") > 0, "{at}: no deadlock, nothing tested");
        assert_eq!(rows(&server), TABLE_SIZE, "{at}");
    }
    succeeding("oltp_read_write", &args(&server, &[]), "cleanup");
}

/// A test without transactions keeps autocommit on when pipelined: its
/// INSERTs are committed (with autocommit off they would be rolled back
/// when the connections close).
#[test]
fn tests_without_transactions_still_commit_when_pipelined() {
    let Some(server) = TestServer::find() else { return };
    let _serial = serial();
    prepare(&server);
    let out = succeeding("oltp_insert", &args(&server, &["--threads=2", "--pipeline=4", "--events=200", STUCK]), "run");
    assert_eq!(counter(&out, "total number of events:"), 200);
    assert_eq!(rows(&server), TABLE_SIZE + 200);
    succeeding("oltp_read_write", &args(&server, &[]), "cleanup");
}
