//! How a command ends when it does not run to its end: Ctrl-C and SIGTERM
//! (the report of what ran, connections closed with COM_QUIT, exit 130 or
//! 143; a second signal exits at once; prepare and cleanup say what they
//! had done) and a fatal error mid-run (the report first, then `FATAL:`).
//!
//! wirebench runs as a child in a process group of its own, and the signal
//! goes to that group, as a terminal's Ctrl-C goes to the foreground job.
//! Against the null server, a scripted server that never answers, and the
//! test MariaDB.

use crate::common::{self, number_after};

use std::fs::File;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{greeting, ScratchDir, TestServer};
use wirebench::client::Connection;
use wirebench::null_server::{NullServer, NullServerConfig};
use wirebench_protocol::framing::{decode_packet, encode_packet};
use wirebench_protocol::Capabilities;

// One wirebench at a time: the MariaDB tests share tables and read
// server-wide counters.
use crate::common::serial;

/// A wirebench child with stdout and stderr in files of `dir`.
struct Wirebench {
    child: Child,
    stdout: PathBuf,
    stderr: PathBuf,
}

impl Wirebench {
    fn start(dir: &Path, args: &[String]) -> Wirebench {
        let (stdout, stderr) = (dir.join("stdout"), dir.join("stderr"));
        let child = common::wirebench()
            .args(args)
            .stdin(Stdio::null())
            .stdout(File::create(&stdout).unwrap())
            .stderr(File::create(&stderr).unwrap())
            .process_group(0)
            .spawn()
            .expect("wirebench starts");
        Wirebench { child, stdout, stderr }
    }

    /// Sends `signal` to its process group, as a terminal does.
    fn signal(&self, signal: libc::c_int) {
        let group = -(self.child.id() as libc::pid_t);
        // SAFETY: kill takes plain integers and touches no memory of ours.
        assert_eq!(unsafe { libc::kill(group, signal) }, 0, "kill {signal}");
    }

    fn stdout(&self) -> String {
        std::fs::read_to_string(&self.stdout).unwrap()
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap()
    }

    /// Waits until stdout shows `text`.
    fn wait_for_stdout(&mut self, text: &str) {
        common::wait_until(&format!("{text:?} on stdout"), Duration::from_secs(20), || {
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!("wirebench ended ({status}) before {text:?}:\n{}\n{}", self.stdout(), self.stderr());
            }
            self.stdout().contains(text)
        });
    }

    /// Waits for the exit, at most `limit`; how long it took.
    fn wait(&mut self, limit: Duration) -> (ExitStatus, Duration) {
        common::exit_within(&mut self.child, limit)
            .unwrap_or_else(|| panic!("wirebench still ran after {limit:?}:\n{}\n{}", self.stdout(), self.stderr()))
    }
}

fn null_server(dir: &ScratchDir) -> NullServer {
    let config = NullServerConfig {
        tcp: Some("127.0.0.1:0".parse().unwrap()),
        unix: Some(dir.0.join("null.sock")),
        ..NullServerConfig::default()
    };
    NullServer::start(config).unwrap()
}

fn io_backends() -> Vec<&'static str> {
    let mut backends = vec!["epoll"];
    if common::ring_here() {
        backends.push("uring");
    }
    backends
}

/// Against the null server, on both backends: SIGINT and SIGTERM mid-run
/// give the report of what ran (events counted, the time short of
/// `--time`), every connection closed with COM_QUIT, and 130 or 143.
#[test]
fn a_signal_mid_run_prints_the_report_and_closes_with_com_quit() {
    let _serial = serial();
    let dir = ScratchDir::new("signal-null");
    let server = null_server(&dir);
    let port = server.local_addr().unwrap().port();
    for io in io_backends() {
        for (signal, name, status) in [(libc::SIGINT, "SIGINT", 130), (libc::SIGTERM, "SIGTERM", 143)] {
            let before = server.stats();
            let args: Vec<String> = [
                "oltp_read_write",
                "--mysql-host=127.0.0.1",
                &format!("--mysql-port={port}"),
                "--threads=6",
                "--time=60",
                "--pipeline=2",
                &format!("--io={io}"),
                "run",
            ]
            .map(str::to_owned)
            .to_vec();
            let mut wirebench = Wirebench::start(&dir.0, &args);
            wirebench.wait_for_stdout("Threads started!");
            // Mid-run: some transactions are through (18 commands each).
            let answered = || server.stats().commands - before.commands > 1_000;
            common::wait_until("1000 commands answered", Duration::from_secs(60), answered);
            wirebench.signal(signal);
            // Stopped at the signal, not at --time=60: within wait()'s
            // bound and the report's total time.
            let (exit, _) = wirebench.wait(Duration::from_secs(10));
            let (stdout, stderr) = (wirebench.stdout(), wirebench.stderr());
            let at = format!("--io={io} {name}\n{stdout}\n{stderr}");
            assert_eq!(exit.code(), Some(status), "{at}");
            assert!(number_after::<f64>(&stdout, "transactions:") > 0.0, "{at}");
            assert!(number_after::<f64>(&stdout, "total time:") < 30.0, "{at}");
            assert!(stdout.contains("Threads fairness:"), "the whole report: {at}");
            assert!(stderr.contains(&format!("run interrupted by {name} after ")), "{at}");
            let (connections, quits) = counted_quits(&server, before);
            assert_eq!((connections, quits), (6, 6), "every connection says goodbye: {at}");
        }
    }
}

/// Connections and COM_QUITs the null server saw since `before`, once
/// they agree (the server counts a goodbye when it reads it).
fn counted_quits(server: &NullServer, before: wirebench::null_server::NullServerStats) -> (u64, u64) {
    common::wait_until("the server to close every connection", Duration::from_secs(20), || {
        let now = server.stats();
        now.closed - before.closed == now.connections - before.connections
    });
    let now = server.stats();
    (now.connections - before.connections, now.quits - before.quits)
}

/// A server that logs anyone in and then never answers: it counts the
/// commands it was sent.
struct SilentServer {
    port: u16,
    commands: Arc<AtomicU64>,
}

impl SilentServer {
    fn start() -> SilentServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let commands = Arc::new(AtomicU64::new(0));
        let counter = commands.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let counter = counter.clone();
                std::thread::spawn(move || Self::serve(stream, &counter));
            }
        });
        SilentServer { port, commands }
    }

    fn serve(mut stream: TcpStream, commands: &AtomicU64) {
        let caps = Capabilities::LONG_PASSWORD
            | Capabilities::PROTOCOL_41
            | Capabilities::SECURE_CONNECTION
            | Capabilities::PLUGIN_AUTH
            | Capabilities::PLUGIN_AUTH_LENENC_CLIENT_DATA
            | Capabilities::CONNECT_WITH_DB
            | Capabilities::TRANSACTIONS
            | Capabilities::DEPRECATE_EOF;
        let mut out = Vec::new();
        encode_packet(&mut out, 0, &greeting("5.5.5-10.11.6-MariaDB", caps, "mysql_native_password"));
        if stream.write_all(&out).is_err() {
            return;
        }
        let mut input = Vec::new();
        let mut chunk = [0u8; 4096];
        let mut logged_in = false;
        while let Ok(n) = stream.read(&mut chunk) {
            if n == 0 {
                return;
            }
            input.extend_from_slice(&chunk[..n]);
            if logged_in {
                commands.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            if let Ok(Some(frame)) = decode_packet(&input, 1, 1 << 20) {
                input.drain(..frame.consumed);
                let mut ok = Vec::new();
                encode_packet(&mut ok, 2, &[0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00]);
                logged_in = stream.write_all(&ok).is_ok();
            }
        }
    }

    fn args(&self, threads: u32) -> Vec<String> {
        [
            "oltp_point_select",
            "--mysql-host=127.0.0.1",
            &format!("--mysql-port={}", self.port),
            // Text statements: nothing to prepare, so the loops start and
            // their first queries get no answer.
            "--db-ps-mode=disable",
            &format!("--threads={threads}"),
            "--time=60",
            "run",
        ]
        .map(str::to_owned)
        .to_vec()
    }

    fn wait_for_commands(&self, n: u64) {
        common::wait_until("the run's queries", Duration::from_secs(20), || self.commands.load(Ordering::Relaxed) >= n);
    }
}

/// Answers that never come do not hold the report back: it comes about
/// 2 s after the signal, says what it could not count, and the status
/// still says which signal.
#[test]
fn a_signal_with_answers_outstanding_reports_after_a_bounded_wait() {
    let _serial = serial();
    let dir = ScratchDir::new("signal-silent");
    let server = SilentServer::start();
    let mut wirebench = Wirebench::start(&dir.0, &server.args(3));
    server.wait_for_commands(3);
    wirebench.signal(libc::SIGTERM);
    let (exit, took) = wirebench.wait(Duration::from_secs(10));
    let (stdout, stderr) = (wirebench.stdout(), wirebench.stderr());
    assert_eq!(exit.code(), Some(143), "{stdout}\n{stderr}");
    // It waited for the answers (a loaded machine only makes that longer;
    // wait() bounds it).
    assert!(took >= Duration::from_millis(1500), "{took:?}");
    assert_eq!(number_after::<f64>(&stdout, "transactions:"), 0.0, "{stdout}");
    assert!(stderr.contains("run interrupted by SIGTERM"), "{stderr}");
    assert!(stderr.contains("3 events still waited for the server's answers"), "{stderr}");
}

/// The second Ctrl-C does not wait for anything: no report, at once.
#[test]
fn a_second_ctrl_c_exits_at_once_without_a_report() {
    let _serial = serial();
    let dir = ScratchDir::new("signal-twice");
    let server = SilentServer::start();
    let mut wirebench = Wirebench::start(&dir.0, &server.args(2));
    server.wait_for_commands(2);
    wirebench.signal(libc::SIGINT);
    // sleep: the two Ctrl-C are meant apart, as a user presses them.
    std::thread::sleep(Duration::from_millis(300));
    wirebench.signal(libc::SIGINT);
    let (exit, _) = wirebench.wait(Duration::from_secs(10));
    let (stdout, stderr) = (wirebench.stdout(), wirebench.stderr());
    assert_eq!(exit.code(), Some(130), "{stdout}\n{stderr}");
    assert!(exit.signal().is_none());
    // At once: not after the 2 s wait for answers, which ends in a report.
    assert!(!stdout.contains("SQL statistics"), "no report: {stdout}");
    assert!(stderr.contains("SIGINT again: exiting at once"), "{stderr}");
}

/// A signal before any event runs (the run still preparing its
/// statements) or during prewarm stops the command with the signal's
/// status, saying where it stood.
#[test]
fn a_signal_while_connecting_or_prewarming_stops_and_says_so() {
    let _serial = serial();
    let dir = ScratchDir::new("signal-early");
    let server = SilentServer::start();
    for (command, ps_mode, said) in [
        ("run", "auto", "wirebench: run interrupted by SIGINT while connecting: no event ran"),
        ("prewarm", "auto", "wirebench: prewarm interrupted by SIGINT: it only reads, so there is nothing to undo"),
    ] {
        let mut args = server.args(2);
        args.retain(|a| !a.starts_with("--db-ps-mode") && a != "run");
        args.extend([format!("--db-ps-mode={ps_mode}"), command.to_owned()]);
        let before = server.commands.load(Ordering::Relaxed);
        let mut wirebench = Wirebench::start(&dir.0, &args);
        // The PREPAREs (run) or the first SET (prewarm): never answered.
        server.wait_for_commands(before + 2);
        wirebench.signal(libc::SIGINT);
        // The server never answers: only the signal ends the command,
        // within wait()'s bound.
        let (exit, _) = wirebench.wait(Duration::from_secs(10));
        let stderr = wirebench.stderr();
        assert_eq!(exit.code(), Some(130), "{command}: {stderr}");
        assert!(stderr.contains(said), "{command}: {stderr}");
        assert!(!wirebench.stdout().contains("SQL statistics"), "{command}: nothing ran to report");
    }
}

fn mariadb_args(server: &TestServer, test: &str, extra: &[&str]) -> Vec<String> {
    let mut args = vec![test.to_owned()];
    args.extend(server.login_args("sbtest"));
    args.extend(extra.iter().map(|a| (*a).to_owned()));
    args
}

/// Runs wirebench to its end; a failure fails the test.
fn finished_ok(dir: &Path, args: &[String]) {
    let mut wirebench = Wirebench::start(dir, args);
    let (exit, _) = wirebench.wait(Duration::from_secs(120));
    assert!(exit.success(), "{args:?}: {}\n{}", wirebench.stdout(), wirebench.stderr());
}

fn admin(server: &TestServer, runtime: &tokio::runtime::Runtime) -> Connection {
    runtime.block_on(Connection::connect(&server.options(server.socket()))).unwrap()
}

/// Waits until the server has seen every connection but `conn`'s end
/// (a client that has left is not gone until the server has read its
/// COM_QUIT, or its EOF, and finished its statement).
fn until_the_runs_connections_end(conn: &mut Connection, runtime: &tokio::runtime::Runtime) {
    let others = "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = 'sbtest' AND ID <> CONNECTION_ID()";
    common::wait_until("the run's connections to end", Duration::from_secs(20), || status(conn, runtime, others) == 0);
}

fn status(conn: &mut Connection, runtime: &tokio::runtime::Runtime, sql: &str) -> u64 {
    let response = runtime.block_on(conn.query(sql)).unwrap();
    let rows = common::rows(&response);
    let value = rows[0].last().cloned().flatten().unwrap_or_default();
    value.parse().unwrap_or_else(|_| panic!("{sql}: {value:?}"))
}

/// Against MariaDB: Ctrl-C mid-run reports, and no connection is left for
/// the server to count as aborted (each sent COM_QUIT).
#[test]
fn ctrl_c_mid_run_against_mariadb_reports_and_quits_cleanly() {
    let Some(server) = TestServer::find() else { return };
    let _serial = serial();
    let dir = ScratchDir::new("signal-mariadb");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let tables = ["--tables=2", "--table-size=2000"];
    finished_ok(&dir.0, &mariadb_args(&server, "oltp_read_write", &[&tables[..], &["cleanup"]].concat()));
    finished_ok(&dir.0, &mariadb_args(&server, "oltp_read_write", &[&tables[..], &["prepare"]].concat()));
    let mut conn = admin(&server, &runtime);
    let aborted = |conn: &mut Connection| status(conn, &runtime, "SHOW GLOBAL STATUS LIKE 'Aborted_clients'");
    let before = aborted(&mut conn);
    let run = mariadb_args(
        &server,
        "oltp_read_write",
        &[&tables[..], &["--threads=4", "--time=60", "--report-interval=1", "run"]].concat(),
    );
    let mut wirebench = Wirebench::start(&dir.0, &run);
    // Mid-run: the first interim report is out, transactions with it.
    wirebench.wait_for_stdout("[ 1s ] ");
    wirebench.signal(libc::SIGINT);
    // Stopped at the signal, not at --time=60: within wait()'s bound.
    let (exit, _) = wirebench.wait(Duration::from_secs(10));
    let (stdout, stderr) = (wirebench.stdout(), wirebench.stderr());
    assert_eq!(exit.code(), Some(130), "{stdout}\n{stderr}");
    assert!(number_after::<f64>(&stdout, "transactions:") > 0.0, "{stdout}");
    assert!(number_after::<f64>(&stdout, "total time:") < 30.0, "{stdout}");
    assert!(stderr.contains("run interrupted by SIGINT"), "{stderr}");
    until_the_runs_connections_end(&mut conn, &runtime);
    assert_eq!(aborted(&mut conn), before, "a connection closed without COM_QUIT\n{stderr}");
    runtime.block_on(conn.quit()).unwrap();
    finished_ok(&dir.0, &mariadb_args(&server, "oltp_read_write", &[&tables[..], &["cleanup"]].concat()));
}

/// A table dropped mid-run makes the next statement on it fail (1146, not
/// ignored): the report of what ran comes first, then the FATAL line, and
/// the status says it failed.
#[test]
fn a_fatal_error_mid_run_prints_the_report_then_the_error() {
    let Some(server) = TestServer::find() else { return };
    let _serial = serial();
    let dir = ScratchDir::new("fatal-mariadb");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let tables = ["--tables=2", "--table-size=1000"];
    finished_ok(&dir.0, &mariadb_args(&server, "oltp_point_select", &[&tables[..], &["cleanup"]].concat()));
    finished_ok(&dir.0, &mariadb_args(&server, "oltp_point_select", &[&tables[..], &["prepare"]].concat()));
    let both = dir.0.join("both");
    let file = File::create(&both).unwrap();
    let run = mariadb_args(
        &server,
        "oltp_point_select",
        &[&tables[..], &["--threads=3", "--time=60", "--report-interval=1", "run"]].concat(),
    );
    let mut child = common::wirebench().args(&run).stdout(file.try_clone().unwrap()).stderr(file).spawn().unwrap();
    // Mid-run: the first interim report is out.
    common::wait_until("the first interim report", Duration::from_secs(20), || {
        assert!(child.try_wait().unwrap().is_none(), "the run ended before its first report");
        std::fs::read_to_string(&both).unwrap().contains("[ 1s ] ")
    });
    let mut conn = admin(&server, &runtime);
    runtime.block_on(conn.query("DROP TABLE sbtest2")).unwrap();
    let (exit, _) = common::exit_within(&mut child, Duration::from_secs(10))
        .unwrap_or_else(|| panic!("the run went on after the table was dropped"));
    let output = std::fs::read_to_string(&both).unwrap();
    assert_eq!(exit.code(), Some(1), "{output}");
    let report = output.find("SQL statistics:").unwrap_or_else(|| panic!("no report:\n{output}"));
    let fatal = output.find("FATAL: ").unwrap_or_else(|| panic!("no FATAL line:\n{output}"));
    assert!(report < fatal, "the report comes first:\n{output}");
    assert!(output[fatal..].contains("1146"), "{output}");
    assert!(number_after::<f64>(&output, "transactions:") > 0.0, "{output}");
    assert!(output.contains("Threads fairness:"), "{output}");
    runtime.block_on(conn.quit()).unwrap();
    finished_ok(&dir.0, &mariadb_args(&server, "oltp_point_select", &[&tables[..], &["cleanup"]].concat()));
}

/// A signal during prepare stops it and says what it had made, truly:
/// the rows it says each table has are there (and at most the INSERT it
/// says was in flight more); cleanup then says what it dropped.
#[test]
fn interrupted_prepare_and_cleanup_say_what_they_had_done() {
    let Some(server) = TestServer::find() else { return };
    let _serial = serial();
    let dir = ScratchDir::new("signal-prepare");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let tables = ["--tables=4", "--table-size=400000", "--threads=2"];
    finished_ok(&dir.0, &mariadb_args(&server, "oltp_read_write", &[&tables[..], &["cleanup"]].concat()));
    let mut wirebench =
        Wirebench::start(&dir.0, &mariadb_args(&server, "oltp_read_write", &[&tables[..], &["prepare"]].concat()));
    wirebench.wait_for_stdout("Inserting 400000 records into 'sbtest1'");
    wirebench.wait_for_stdout("Inserting 400000 records into 'sbtest2'");
    // Mid-insert: both tables have rows.
    let mut conn = admin(&server, &runtime);
    let both_have_rows = "SELECT EXISTS(SELECT 1 FROM sbtest1) AND EXISTS(SELECT 1 FROM sbtest2)";
    common::wait_until("rows in sbtest1 and sbtest2", Duration::from_secs(20), || {
        status(&mut conn, &runtime, both_have_rows) == 1
    });
    wirebench.signal(libc::SIGINT);
    // Stopped at the signal (a prepare left alone runs on for many
    // seconds), within a bound a loaded machine keeps.
    let (exit, _) = wirebench.wait(Duration::from_secs(10));
    let stderr = wirebench.stderr();
    assert_eq!(exit.code(), Some(130), "{stderr}");
    let line = stderr
        .lines()
        .find(|l| l.starts_with("wirebench: prepare interrupted by SIGINT: "))
        .unwrap_or_else(|| panic!("no summary:\n{stderr}"));
    assert!(line.contains("complete: none; incomplete: sbtest1 (created, "), "{line}");
    assert!(line.contains("not created: 2; run cleanup before prepare again"), "{line}");
    // An INSERT still in flight finishes before the count.
    until_the_runs_connections_end(&mut conn, &runtime);
    for table in ["sbtest1", "sbtest2"] {
        let said = line.split(&format!("{table} (created, ")).nth(1).unwrap().split(' ').next().unwrap();
        let said: u64 = said.parse().unwrap();
        let there = status(&mut conn, &runtime, &format!("SELECT COUNT(*) FROM {table}"));
        // One INSERT holds at most 512 KiB of rows: under 3,000 of these;
        // one LOAD DATA or bulk INSERT at most 4 MiB, of rows of 180 bytes or more.
        let part = line.split(&format!("{table} (created, ")).nth(1).unwrap().split(')').next().unwrap();
        let batch = ["a LOAD DATA was in flight", "a bulk INSERT was in flight"].iter().any(|s| part.contains(s));
        let in_flight = if batch { 4 * 1024 * 1024 / 180 } else { 3_000 };
        assert!(there >= said && there <= said + in_flight, "{table}: said {said}, there are {there}: {line}");
    }
    runtime.block_on(conn.quit()).unwrap();
    let mut cleanup =
        Wirebench::start(&dir.0, &mariadb_args(&server, "oltp_read_write", &[&tables[..], &["cleanup"]].concat()));
    cleanup.wait_for_stdout("Dropping table 'sbtest1'...");
    cleanup.signal(libc::SIGTERM);
    let (exit, _) = cleanup.wait(Duration::from_secs(10));
    let stderr = cleanup.stderr();
    if exit.code() == Some(143) {
        assert!(stderr.contains("wirebench: cleanup interrupted by SIGTERM: dropped: "), "{stderr}");
        assert!(stderr.contains("not dropped: "), "{stderr}");
    } else {
        // The four DROPs can all be done before the signal lands.
        assert!(exit.success(), "{stderr}");
    }
    finished_ok(&dir.0, &mariadb_args(&server, "oltp_read_write", &[&tables[..], &["cleanup"]].concat()));
}
