//! Faults against the real MariaDB and scripted servers, through the
//! wirebench binary: a server that stops answering mid-run (the `--time`
//! promise, `--mysql-read-timeout`), a server that stops greeting
//! (reconnects that fail), a fatal SQL error, a thread count the machine
//! cannot hold.
//!
//! The MariaDB cases create and drop `sbtest1` in database `sbtest`; they
//! run one at a time. A server is frozen for them with `LOCK TABLES sbtest1
//! WRITE` from another connection: every statement of the run then waits.

mod common;

use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::TestServer;

static SERIAL: Mutex<()> = Mutex::new(());

/// What a run printed, how it ended and how long it took.
struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    took: Duration,
}

impl Ran {
    fn from(output: Output, took: Duration) -> Ran {
        Ran {
            code: output.status.code(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            took,
        }
    }
}

impl std::fmt::Display for Ran {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "exit {:?} after {:?}\n--- stdout\n{}--- stderr\n{}", self.code, self.took, self.stdout, self.stderr)
    }
}

fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(String::from).collect()
}

/// Starts wirebench with `line`; `wait` collects it.
fn spawn(line: &str) -> (std::process::Child, Instant) {
    let child = Command::new(env!("CARGO_BIN_EXE_wirebench"))
        .args(words(line))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("wirebench starts");
    (child, Instant::now())
}

fn wait(child: std::process::Child, started: Instant) -> Ran {
    let output = child.wait_with_output().expect("wirebench ends");
    Ran::from(output, started.elapsed())
}

fn wirebench(line: &str) -> Ran {
    let (child, started) = spawn(line);
    wait(child, started)
}

fn connect_args(server: &TestServer) -> String {
    format!(
        "--mysql-host={} --mysql-port={} --mysql-user=sbtest --mysql-password=sbtest --mysql-db=sbtest",
        server.host, server.port
    )
}

/// Drops and re-creates `sbtest1` with `rows` rows.
fn prepare_table(server: &TestServer, rows: u32) {
    let connect = connect_args(server);
    for command in ["cleanup", "prepare"] {
        let ran = wirebench(&format!("oltp_read_write {connect} --tables=1 --table-size={rows} {command}"));
        assert_eq!(ran.code, Some(0), "{command}: {ran}");
    }
}

fn drop_table(server: &TestServer) {
    let ran = wirebench(&format!("oltp_read_write {} --tables=1 cleanup", connect_args(server)));
    assert_eq!(ran.code, Some(0), "cleanup: {ran}");
}

fn uring_available() -> bool {
    match wirebench::driver::Backend::resolve(wirebench::driver::IoBackend::Uring) {
        Ok(_) => true,
        Err(reason) => {
            eprintln!("io_uring backend not tested: {reason}");
            false
        }
    }
}

/// The backends this machine runs.
fn backends() -> Vec<&'static str> {
    let mut backends = vec!["--io=epoll"];
    if uring_available() {
        backends.push("--io=uring");
    }
    backends
}

/// A fatal SQL error names the statement's SQL, as sysbench's
/// `mysql_stmt_execute() returned error 1146 (...) for query '...'`, and
/// the test: sent as text (no table at all), and prepared (the table
/// dropped under the run).
#[test]
fn a_fatal_sql_error_names_the_statement() {
    let Some(server) = TestServer::find() else { return };
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let connect = connect_args(&server);
    drop_table(&server);
    let ran = wirebench(&format!("oltp_point_select {connect} --tables=1 --time=5 --db-ps-mode=disable run"));
    assert_eq!(ran.code, Some(1), "{ran}");
    let expected = "FATAL: mysql_drv_query() returned error 1146 (Table 'sbtest.sbtest1' doesn't exist) for query \
                    'SELECT c FROM sbtest1 WHERE id=?', in an event of oltp_point_select on ";
    assert!(ran.stderr.lines().any(|l| l.starts_with(expected)), "{ran}");
    for backend in backends() {
        prepare_table(&server, 1000);
        let (child, started) = spawn(&format!("oltp_point_select {connect} --tables=1 --time=10 {backend} run"));
        std::thread::sleep(Duration::from_millis(500));
        drop_table(&server);
        let ran = wait(child, started);
        assert_eq!(ran.code, Some(1), "{backend}: {ran}");
        let expected = "FATAL: mysql_stmt_execute() returned error 1146 (Table 'sbtest.sbtest1' doesn't exist) for \
                        query 'SELECT c FROM sbtest1 WHERE id=?', in an event of oltp_point_select on ";
        assert!(ran.stderr.lines().any(|l| l.starts_with(expected)), "{backend}: {ran}");
    }
}
