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

/// Waits for `child` with wait4, for its peak memory (ru_maxrss, KiB).
fn wait_measured(child: std::process::Child, started: Instant) -> (Ran, u64) {
    use std::io::Read;
    let mut child = child;
    let (mut stdout, mut stderr) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let readers = std::thread::spawn(move || {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        stderr.read_to_end(&mut err).unwrap();
        stdout.read_to_end(&mut out).unwrap();
        (out, err)
    });
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to overwrite.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: status and usage outlive the call; the pid is our child's.
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as libc::pid_t, "wait4: {}", std::io::Error::last_os_error());
    let took = started.elapsed();
    let (stdout, stderr) = readers.join().unwrap();
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    let ran = Ran {
        code,
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        took,
    };
    (ran, usage.ru_maxrss as u64)
}

/// A million connections against a closed port: one line says what the
/// machine lacks (open files, or memory), or the first refused connection
/// ends the set-up; within a second, in a few MiB, where it used to
/// allocate every connection's state first (2.6 GB, no output after 15 s).
#[test]
fn a_thread_count_beyond_the_machine_fails_fast() {
    for (threads, command) in [(1_000_000, "run"), (1_000_000, "prepare"), (10_000, "prepare"), (10_000, "run")] {
        let line = format!("oltp_read_write --mysql-host=127.0.0.1 --mysql-port=1 --threads={threads} {command}");
        let (child, started) = spawn(&line);
        let (ran, max_rss_kib) = wait_measured(child, started);
        assert_eq!(ran.code, Some(1), "{line}: {ran}");
        let fatal: Vec<&str> = ran.stderr.lines().filter(|l| l.starts_with("FATAL: ")).collect();
        assert_eq!(fatal.len(), 1, "{line}: {ran}");
        let fatal = fatal[0];
        let expected =
            [format!("--threads={threads} needs"), "unable to connect: 127.0.0.1:1: Connection refused".to_owned()];
        assert!(expected.iter().any(|e| fatal.contains(e)), "{line}: {ran}");
        assert!(ran.took < Duration::from_secs(3), "{line}: {ran}");
        assert!(max_rss_kib < 64 * 1024, "{line}: peak RSS {max_rss_kib} KiB\n{ran}");
    }
}

/// `--mysql-connect-timeout`, `--mysql-read-timeout` and
/// `--mysql-write-timeout` in seconds, 0 for none; by default 30 s (or
/// `--thread-init-timeout`) to log in, and 600 s per wait for `run` only.
#[test]
fn timeout_options_and_their_defaults() {
    use wirebench::cli::{parse, Invocation};
    let mysql = |line: &str| match parse(words(line).into_iter().map(Into::into)) {
        Ok(Invocation::Bench(bench)) => bench.mysql,
        other => panic!("{line}: {other:?}"),
    };
    let secs = |n| Some(Duration::from_secs(n));
    let run = mysql("oltp_read_write run");
    assert_eq!((run.connect_timeout, run.read_timeout, run.write_timeout), (secs(30), secs(600), secs(600)));
    let prepare = mysql("oltp_read_write prepare");
    assert_eq!((prepare.connect_timeout, prepare.read_timeout, prepare.write_timeout), (secs(30), None, None));
    let given =
        mysql("oltp_read_write prepare --mysql-connect-timeout=0 --mysql-read-timeout=5 --mysql-write-timeout=7");
    assert_eq!((given.connect_timeout, given.read_timeout, given.write_timeout), (None, secs(5), secs(7)));
    let zero = mysql("oltp_read_write run --mysql-read-timeout=0 --mysql-write-timeout=0 --thread-init-timeout=9");
    assert_eq!((zero.connect_timeout, zero.read_timeout, zero.write_timeout), (secs(9), None, None));
    for bad in ["--mysql-read-timeout=-1", "--mysql-write-timeout=soon", "--mysql-connect-timeout=1.5"] {
        let error = parse(words(&format!("oltp_read_write run {bad}")).into_iter().map(Into::into)).unwrap_err();
        let text = error.to_string();
        assert!(text.contains(bad.split('=').next().unwrap()) && text.contains("seconds >= 0"), "{bad}: {text}");
    }
}
