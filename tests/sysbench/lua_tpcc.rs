//! Percona-Lab/sysbench-tpcc (tests/tpcc/, its files as upstream has
//! them) end to end through wirebench's Lua engine, against the test
//! MariaDB at scale 1 with one set of tables: `prepare`, `run`, its own
//! `check` command (every check PASSED after the runs) and `cleanup`.
//! The script declares `sb_counter_inc` against sysbench's binary and
//! counts a rolled-back new order with `ffi.C.SB_CNT_ERROR`.
//!
//! With one thread, `--events` and a `--rand-seed` the transaction mix
//! comes from sysbench.rand alone and each transaction's statements from
//! the data, so sysbench 1.0.20 running the same script on a copy of the
//! same tables must count the same reads, writes, other, transactions,
//! ignored errors and reconnects. (Its `prepare` cannot be compared:
//! sysbench does not seed the generator of a command's thread.)
//!
//! Database sbtest_tpcc holds wirebench's tables, sbtest_tpcc_ref the copy
//! sysbench runs on. Skipped without the test server or sysbench, unless
//! WIREBENCH_REQUIRE_SERVER=1.

use crate::common;

use std::path::PathBuf;
use std::process::{Command, Output};

use common::{ScratchDir, TestServer};
use sha1::{Digest, Sha1};
use wirebench::client::Connection;

/// The vendored files and their git blob ids at upstream commit
/// 585e2b8af327d35866aed7e56837c2134d8835a9.
const UPSTREAM: [(&str, &str); 5] = [
    ("LICENSE", "2399231f08fad24c328ede357162e7daacc604ce"),
    ("tpcc.lua", "b3bcd81f2242c30baaab5364bab5195884422aa0"),
    ("tpcc_check.lua", "913e0ff224f37b39c4fe26523b9d163eaea6416f"),
    ("tpcc_common.lua", "9ae3798a2e829a34aaa0c2ca8ff12f94e2998c65"),
    ("tpcc_run.lua", "b19eb2300be63cc296adaee73faed6d421b0a58e"),
];

const TABLES: [&str; 9] =
    ["warehouse1", "district1", "customer1", "history1", "orders1", "new_orders1", "order_line1", "stock1", "item1"];

fn tpcc_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/tpcc")
}

/// `git hash-object`: sha1 of "blob LEN\0" and the bytes.
fn git_blob_id(bytes: &[u8]) -> String {
    let mut sha = Sha1::new();
    sha.update(format!("blob {}\0", bytes.len()));
    sha.update(bytes);
    sha.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn the_vendored_files_are_upstream_s() {
    assert_eq!(git_blob_id(b"hello\n"), "ce013625030ba8dba906f756967f9e9ca394464a");
    for (file, blob) in UPSTREAM {
        let bytes = std::fs::read(tpcc_dir().join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(git_blob_id(&bytes), blob, "tests/tpcc/{file} is not upstream's");
    }
}

/// `binary` running ./tpcc.lua in tests/tpcc with `args` on `database`,
/// `path_first` ahead of PATH.
fn tpcc(binary: &str, server: &TestServer, database: &str, args: &[&str], path_first: &ScratchDir) -> String {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![path_first.0.clone()];
    dirs.extend(std::env::split_paths(&path));
    let output: Output = Command::new(binary)
        .arg("./tpcc.lua")
        .args(server.login_args(database))
        .args(["--scale=1", "--tables=1"])
        .args(args)
        .current_dir(tpcc_dir())
        .env("PATH", std::env::join_paths(dirs).expect("PATH"))
        .output()
        .unwrap_or_else(|e| panic!("{binary}: {e}"));
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{binary} tpcc.lua {args:?}: {}\n{stdout}\n{stderr}", output.status);
    assert!(!stderr.contains("FATAL") && !stderr.contains("ALERT"), "{binary} tpcc.lua {args:?}:\n{stderr}");
    stdout
}

/// The report's read, write, other, transactions, ignored errors, reconnects.
fn counts(report: &str) -> Vec<u64> {
    ["read:", "write:", "other:", "transactions:", "ignored errors:", "reconnects:"]
        .iter()
        .map(|label| {
            let line = report
                .lines()
                .find(|l| l.trim_start().starts_with(label))
                .unwrap_or_else(|| panic!("no {label} in\n{report}"));
            line.trim_start()[label.len()..].split_whitespace().next().unwrap().parse().unwrap()
        })
        .collect()
}

/// Runs `statements` on the test server, one after another, on one
/// connection; the rows of those `returns_rows` says return some.
fn sql(server: &TestServer, statements: &[String], returns_rows: bool) -> Vec<Vec<Vec<Option<String>>>> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        let mut conn = Connection::connect(&server.options(server.tcp())).await.unwrap_or_else(|e| panic!("{e}"));
        let mut results = Vec::new();
        for statement in statements {
            if returns_rows {
                let response = conn.query(statement).await.unwrap_or_else(|e| panic!("{statement}: {e}"));
                results.push(common::rows(&response));
            } else {
                conn.query_drop(statement).await.unwrap_or_else(|e| panic!("{statement}: {e}"));
            }
        }
        results
    })
}

/// sbtest_tpcc's tables, copied into sbtest_tpcc_ref (foreign keys too).
fn copy_for_sysbench(server: &TestServer) {
    let shows: Vec<String> = TABLES.iter().map(|t| format!("SHOW CREATE TABLE sbtest_tpcc.{t}")).collect();
    let creates = sql(server, &shows, true);
    let mut copy = vec!["SET FOREIGN_KEY_CHECKS=0".to_owned(), "USE sbtest_tpcc_ref".to_owned()];
    for (table, create) in TABLES.iter().zip(creates) {
        let create = create[0][1].clone().expect("CREATE TABLE");
        copy.push(format!("DROP TABLE IF EXISTS {table}"));
        copy.push(create);
        copy.push(format!("INSERT INTO {table} SELECT * FROM sbtest_tpcc.{table}"));
    }
    sql(server, &copy, false);
}

fn drop_copy(server: &TestServer) {
    let mut drops = vec!["SET FOREIGN_KEY_CHECKS=0".to_owned()];
    drops.extend(TABLES.iter().map(|t| format!("DROP TABLE IF EXISTS sbtest_tpcc_ref.{t}")));
    sql(server, &drops, false);
}

/// The run's `sleep 30` (cmd_prepare waits so that parallel threads'
/// tables exist) done at once: a `sleep` ahead of PATH that returns.
fn instant_sleep() -> ScratchDir {
    let dir = ScratchDir::new("tpcc-sleep");
    let sleep = dir.write("sleep", "#!/bin/sh\nexit 0\n");
    let mut permissions = std::fs::metadata(&sleep).expect("sleep").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&sleep, permissions).expect("chmod sleep");
    dir
}

#[test]
fn sysbench_tpcc_runs_unchanged_with_sysbench_s_counts() {
    let Some(server) = TestServer::find() else { return };
    let Some(sysbench) = common::sysbench() else { return };
    let sysbench = sysbench.to_string_lossy().into_owned();
    let wirebench = common::WIREBENCH;
    let path = instant_sleep();
    tpcc(wirebench, &server, "sbtest_tpcc", &["cleanup"], &path);
    drop_copy(&server);

    let prepared = tpcc(wirebench, &server, "sbtest_tpcc", &["--threads=1", "--rand-seed=1", "prepare"], &path);
    assert!(prepared.contains("loading tables: 1 for warehouse: 1"), "{prepared}");
    copy_for_sysbench(&server);

    let seeded = ["--threads=1", "--events=200", "--rand-seed=3", "run"];
    let theirs = tpcc(&sysbench, &server, "sbtest_tpcc_ref", &seeded, &path);
    let ours = tpcc(wirebench, &server, "sbtest_tpcc", &seeded, &path);
    let (their_counts, our_counts) = (counts(&theirs), counts(&ours));
    assert_eq!(our_counts[3], 200, "{ours}");
    assert!(our_counts[0] > 1000 && our_counts[1] > 1000, "{ours}");
    assert_eq!(our_counts, their_counts, "wirebench's counts, then sysbench's\n{ours}\n{theirs}");

    // A few threads at once, with interim reports through the script's hook.
    let several =
        tpcc(wirebench, &server, "sbtest_tpcc", &["--threads=4", "--time=3", "--report-interval=1", "run"], &path);
    assert!(several.contains("[ 1s ] thds: 4 tps: "), "{several}");
    assert!(counts(&several)[3] > 0, "{several}");

    let checked = tpcc(wirebench, &server, "sbtest_tpcc", &["--threads=2", "check"], &path);
    let passed = checked.lines().filter(|l| l.ends_with(" PASSED")).count();
    assert!(passed == 10 && !checked.contains("FAILED"), "{checked}");

    tpcc(wirebench, &server, "sbtest_tpcc", &["cleanup"], &path);
    let left = sql(&server, &["SHOW TABLES FROM sbtest_tpcc".to_owned()], true);
    assert!(left[0].is_empty(), "cleanup left {:?}", left[0]);
    drop_copy(&server);
}
