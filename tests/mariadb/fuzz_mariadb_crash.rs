//! The reproducer `wirebench fuzz` saved of a MariaDB 10.11.19 crash
//! (tests/fuzz/mariadb-10.11.19-signal11.repro: a prepared `BETWEEN ? AND
//! ?` executed with integers, COM_STMT_SEND_LONG_DATA, executed again with
//! strings: signal 11) must crash a fresh MariaDB again, replayed as
//! docs/fuzzing.md says (server and password only), and so must the Python script
//! `fuzz-replay --emit=python` writes of it. Each starts from an empty
//! `sbtest_fuzz` (its tables dropped first): the table the session reads
//! comes from the reproducer's own setup section, not from this test.
//!
//! It crashes the server, so it never touches the shared test server: it
//! starts a MariaDB of its own (`common::OwnMariaDb`), and stops it at the
//! end. Skipped, in one
//! line, where mariadbd is not installed (scripts/test.sh installs it;
//! with WIREBENCH_REQUIRE_SERVER=1, as in CI, a missing one fails).

use std::path::PathBuf;
use std::process::Command;

use wirebench::client::{ConnectOptions, Connection, Endpoint};

use crate::common::{self, OwnMariaDb};

const REPRODUCER: &str = "tests/fuzz/mariadb-10.11.19-signal11.repro";
/// The version the reproducer crashes; others may have the bug fixed.
const CRASHES: &str = "10.11.19-MariaDB";

/// The options of the replay: the test's own server (user sbtest), where
/// its logs are.
fn server_args(server: &OwnMariaDb) -> Vec<String> {
    vec![
        "--mysql-host=127.0.0.1".into(),
        format!("--mysql-port={}", server.port),
        "--mysql-password=sbtest".into(),
        format!("--server-log={}", server.dir.join("error.log").display()),
        format!("--server-pid={}", server.dir.join("mariadbd.pid").display()),
    ]
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Whether `program --version` runs; otherwise skipped (or, as in CI, failed).
fn installed(program: &str, what: &str) -> bool {
    if Command::new(program).arg("--version").output().is_ok_and(|o| o.status.success()) {
        return true;
    }
    common::unavailable(&format!("{program} is not installed ({what})"));
    false
}

/// Drops every table of `sbtest_fuzz`: the replay must bring what it needs.
async fn empty_the_database(port: u16) {
    let options = ConnectOptions::new(Endpoint::tcp("127.0.0.1", port), "sbtest", "sbtest").database("sbtest_fuzz");
    let mut conn = Connection::connect(&options).await.expect("log in to the test's own MariaDB");
    let tables = |r: &wirebench_protocol::response::Response| -> Vec<String> {
        r.result_sets()
            .flat_map(|set| set.text_rows().unwrap())
            .map(|row| String::from_utf8(row[0].clone().unwrap()).unwrap())
            .collect()
    };
    for table in tables(&conn.query("SHOW TABLES").await.unwrap()) {
        conn.query_drop(&format!("DROP TABLE `{table}`")).await.unwrap();
    }
    assert!(tables(&conn.query("SHOW TABLES").await.unwrap()).is_empty());
}

fn run(program: &str, args: &[String]) -> (Option<i32>, String) {
    let out = Command::new(program).args(args).current_dir(repo()).output().expect(program);
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.code(), text)
}

fn signals(log: &str) -> usize {
    log.matches("got signal 11").count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_saved_mariadb_crash_replays_and_its_python_script_crashes_it_too() {
    if !installed("python3", "it runs the emitted script; scripts/test.sh installs it") {
        return;
    }
    let version = Command::new("mariadbd").arg("--version").output().unwrap();
    let version = String::from_utf8_lossy(&version.stdout).into_owned();
    if !version.contains(CRASHES) {
        common::unavailable(&format!(
            "the reproducer crashes MariaDB {CRASHES}, and this is {}: record a reproducer that crashes this version \
             (docs/fuzzing.md) or drop the test",
            version.trim()
        ));
        return;
    }
    // A small server: it only has to crash.
    let args = "--innodb-buffer-pool-size=64M --innodb-log-file-size=48M";
    let Some(server) = tokio::task::spawn_blocking(move || OwnMariaDb::start("crash", args)).await.unwrap() else {
        return;
    };
    empty_the_database(server.port).await;

    let mut replay = vec!["fuzz-replay".to_owned(), REPRODUCER.to_owned()];
    replay.extend(server_args(&server));
    let (code, out) = run(common::WIREBENCH, &replay);
    eprintln!("{out}");
    assert_eq!(code, Some(3), "the replay must crash MariaDB again:\n{out}");
    assert!(out.contains("  login -> OK\n"), "the login is sent: {out}");
    assert!(out.contains("made the setup in sbtest_fuzz: sbtest1 (0 rows)"), "{out}");
    assert_eq!(signals(&server.log()), 1, "{}", server.log());

    let server = tokio::task::spawn_blocking(move || {
        server.start_again();
        server
    })
    .await
    .unwrap();
    empty_the_database(server.port).await;
    let (code, script) = run(common::WIREBENCH, &[replay[0].clone(), replay[1].clone(), "--emit=python".into()]);
    assert_eq!(code, Some(0), "{script}");
    let path = server.dir.join("repro.py");
    std::fs::write(&path, script).unwrap();
    let args = [
        path.display().to_string(),
        "--host=127.0.0.1".into(),
        format!("--port={}", server.port),
        "--user=sbtest".into(),
        "--password=sbtest".into(),
    ];
    let (code, out) = run("python3", &args);
    eprintln!("{out}");
    assert_eq!(code, Some(3), "the emitted script must crash MariaDB too:\n{out}");
    assert!(out.contains("as the reproducer says"), "{out}");
    assert!(out.contains("made the setup in sbtest_fuzz: sbtest1 (0 rows)"), "{out}");
    assert_eq!(signals(&server.log()), 2, "{}", server.log());
    tokio::task::spawn_blocking(move || drop(server)).await.unwrap();
}
