//! Faults against the real MariaDB and scripted servers, through the
//! wirebench binary: a server that stops answering mid-run (the `--time`
//! promise, `--mysql-read-timeout`), a server that stops greeting
//! (reconnects that fail), a fatal SQL error, a thread count the machine
//! cannot hold.
//!
//! The MariaDB cases create and drop `sbtest1` in database `sbtest`; they
//! run one at a time. A server is frozen for them with `LOCK TABLES sbtest1
//! WRITE` from another connection: every statement of the run then waits.

use crate::common;

use std::process::{Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::{Ran, TestServer};
use wirebench::client::Connection;

static SERIAL: Mutex<()> = Mutex::new(());

/// What a run printed, how it ended and how long it took.
/// A number from a run's report: `transactions:`, `reconnects:` ...
fn counter(ran: &Ran, name: &str) -> u64 {
    ran.stdout
        .lines()
        .find_map(|l| l.trim_start().strip_prefix(name))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in:\n{ran}"))
}

/// A spawned run's output as [`Ran`] says it.
fn ran(output: Output, took: Duration) -> Ran {
    let (stdout, stderr) = (common::text(&output.stdout), common::text(&output.stderr));
    Ran { command: "wirebench".to_owned(), code: output.status.code(), stdout, stderr, took }
}

fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(String::from).collect()
}

/// Starts wirebench with `line`; `wait` collects it.
fn spawn(line: &str) -> (std::process::Child, Instant) {
    let child = common::wirebench()
        .args(words(line))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("wirebench starts");
    (child, Instant::now())
}

/// Returns once the run has printed "Threads started!" (its connections
/// are open), its stdout then read on aside for [`wait`].
fn wait_for_threads_started(child: std::process::Child) -> std::process::Child {
    wait_for_line(child, "Threads started!")
}

/// Returns once the run has printed a line starting with `prefix`, its
/// stdout then read on aside for [`wait`].
fn wait_for_line(mut child: std::process::Child, prefix: &'static str) -> std::process::Child {
    use std::io::{BufRead, Read};
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut stdout = std::io::BufReader::new(stdout);
        let mut seen = Vec::new();
        let mut line = String::new();
        while stdout.read_line(&mut line).unwrap_or(0) > 0 {
            if line.starts_with(prefix) {
                let _ = tx.send(());
            }
            seen.extend_from_slice(line.as_bytes());
            line.clear();
        }
        let _ = stdout.read_to_end(&mut seen);
        seen
    });
    // Generous: a loaded machine is slow to connect; a run that never starts fails here.
    rx.recv_timeout(Duration::from_secs(60)).unwrap_or_else(|_| panic!("no {prefix:?} on stdout within 60 s"));
    READ_ASIDE.lock().unwrap().insert(child.id(), reader);
    child
}

/// The stdout readers of [`wait_for_threads_started`], by process id.
static READ_ASIDE: Mutex<std::collections::BTreeMap<u32, std::thread::JoinHandle<Vec<u8>>>> =
    Mutex::new(std::collections::BTreeMap::new());

fn wait(child: std::process::Child, started: Instant) -> Ran {
    let reader = READ_ASIDE.lock().unwrap().remove(&child.id());
    let mut output = child.wait_with_output().expect("wirebench ends");
    if let Some(reader) = reader {
        output.stdout = reader.join().unwrap();
    }
    ran(output, started.elapsed())
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
        let ran = common::run_wirebench(&words(&format!(
            "oltp_read_write {connect} --tables=1 --table-size={rows} {command}"
        )));
        assert_eq!(ran.code, Some(0), "{command}: {ran}");
    }
}

fn drop_table(server: &TestServer) {
    let ran = common::run_wirebench(&words(&format!("oltp_read_write {} --tables=1 cleanup", connect_args(server))));
    assert_eq!(ran.code, Some(0), "cleanup: {ran}");
}

/// `LOCK TABLES sbtest1 WRITE` held by a connection of its own until
/// dropped: every statement of a run on sbtest1 waits meanwhile.
struct Freeze {
    release: Option<std::sync::mpsc::Sender<()>>,
    holder: Option<std::thread::JoinHandle<()>>,
}

impl Freeze {
    fn start(server: &TestServer) -> Freeze {
        let options = server.options(server.tcp());
        let (locked_tx, locked) = std::sync::mpsc::channel();
        let (release, released) = std::sync::mpsc::channel::<()>();
        let holder = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            runtime.block_on(async {
                let mut conn = Connection::connect(&options).await.expect("the freezing connection");
                conn.query_drop("LOCK TABLES sbtest1 WRITE").await.expect("LOCK TABLES");
                locked_tx.send(()).unwrap();
                let _ = released.recv();
                conn.query_drop("UNLOCK TABLES").await.expect("UNLOCK TABLES");
            });
        });
        locked.recv_timeout(Duration::from_secs(10)).expect("the table locked");
        Freeze { release: Some(release), holder: Some(holder) }
    }
}

impl Drop for Freeze {
    fn drop(&mut self) {
        drop(self.release.take());
        if let Some(holder) = self.holder.take() {
            let _ = holder.join();
        }
    }
}

/// The backends this machine runs.
fn backends() -> Vec<&'static str> {
    let mut backends = vec!["--io=epoll"];
    if common::ring_here() {
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
    let ran = common::run_wirebench(&words(&format!(
        "oltp_point_select {connect} --tables=1 --time=5 --db-ps-mode=disable run"
    )));
    assert_eq!(ran.code, Some(1), "{ran}");
    let expected = "FATAL: mysql_drv_query() returned error 1146 (Table 'sbtest.sbtest1' doesn't exist) for query \
                    'SELECT c FROM sbtest1 WHERE id=?', in an event of oltp_point_select on ";
    assert!(ran.stderr.lines().any(|l| l.starts_with(expected)), "{ran}");
    for backend in backends() {
        prepare_table(&server, 1000);
        let (child, started) = spawn(&format!("oltp_point_select {connect} --tables=1 --time=10 {backend} run"));
        let child = wait_for_threads_started(child);
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
    let (stdout, stderr) = (common::text(&stdout), common::text(&stderr));
    let ran = Ran { command: "wirebench".to_owned(), code, stdout, stderr, took };
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

/// `--time` is a promise: a server that stops answering mid-run (sysbench
/// hangs until killed) ends the run a second after its time, with the
/// report of what completed, the stalled connections named on stderr, and
/// status 2.
#[test]
fn a_frozen_server_cuts_the_run_at_its_time() {
    let Some(server) = TestServer::find() else { return };
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    prepare_table(&server, 1000);
    for backend in backends() {
        let line = format!(
            "oltp_point_select {} --tables=1 --threads=4 --time=2 --report-interval=1 {backend} run",
            connect_args(&server)
        );
        let (child, started) = spawn(&line);
        // Mid-run: the first interim report is out, transactions with it.
        let child = wait_for_line(child, "[ 1s ] ");
        let freeze = Freeze::start(&server);
        let ran = wait(child, started);
        drop(freeze);
        assert_eq!(ran.code, Some(2), "{backend}: {ran}");
        assert!(ran.took < Duration::from_millis(4_500), "{backend}: 2 s + 1 s to answer + set-up: {ran}");
        assert!(counter(&ran, "transactions:") > 0, "{backend}: {ran}");
        let cut =
            "wirebench: the run was cut 1.0 s after --time=2: 4 connection(s) still waited for the server's answer";
        assert!(ran.stderr.lines().any(|l| l.starts_with(cut)), "{backend}: {ran}");
    }
    drop_table(&server);
}

/// `--mysql-read-timeout`: a connection whose answer does not come in time
/// is lost with libmysqlclient's client error 2013 (fatal unless ignored),
/// on both backends, without `--time`.
#[test]
fn a_read_timeout_loses_the_connection() {
    let Some(server) = TestServer::find() else { return };
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    prepare_table(&server, 1000);
    for backend in backends() {
        let line = format!(
            "oltp_point_select {} --tables=1 --threads=2 --time=0 --events=1000000000 --mysql-read-timeout=1 \
             {backend} run",
            connect_args(&server)
        );
        let (child, started) = spawn(&line);
        let child = wait_for_threads_started(child);
        let freeze = Freeze::start(&server);
        let ran = wait(child, started);
        drop(freeze);
        assert_eq!(ran.code, Some(1), "{backend}: {ran}");
        assert!(ran.took < Duration::from_secs(4), "{backend}: {ran}");
        let fatal = ran.stderr.lines().find(|l| l.starts_with("FATAL: ")).unwrap_or_else(|| panic!("{ran}"));
        assert!(fatal.contains("client error 2013: no answer for 1s, --mysql-read-timeout"), "{backend}: {fatal}");
        assert!(fatal.contains("list 2013 in --mysql-ignore-errors"), "{backend}: {fatal}");
    }
    drop_table(&server);
}

/// With 2013 ignored, connections that timed out reconnect (the attempts
/// made while the table is still locked fail within the read timeout too)
/// and the run goes on once the server answers again.
#[test]
fn timed_out_connections_reconnect_when_2013_is_ignored() {
    let Some(server) = TestServer::find() else { return };
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    prepare_table(&server, 1000);
    for backend in backends() {
        let line = format!(
            "oltp_point_select {} --tables=1 --threads=2 --time=5 --mysql-read-timeout=1 \
             --mysql-ignore-errors=2013 {backend} run",
            connect_args(&server)
        );
        let (child, started) = spawn(&line);
        let child = wait_for_threads_started(child);
        let freeze = Freeze::start(&server);
        // sleep: the server stays frozen past --mysql-read-timeout=1, the fault under test.
        std::thread::sleep(Duration::from_millis(2_500));
        drop(freeze);
        let ran = wait(child, started);
        assert_eq!(ran.code, Some(0), "{backend}: {ran}");
        assert!(counter(&ran, "reconnects:") >= 2, "{backend}: {ran}");
        assert!(counter(&ran, "transactions:") > 0, "{backend}: {ran}");
        assert!(ran.took < Duration::from_secs(7), "{backend}: {ran}");
    }
    drop_table(&server);
}

/// A TCP proxy to `upstream` that, once muted, closes every connection it
/// carries and accepts new ones without ever sending a byte: a server that
/// accepts connections and never greets.
struct MuteProxy {
    addr: std::net::SocketAddr,
    muted: std::sync::Arc<std::sync::atomic::AtomicBool>,
    carried: std::sync::Arc<Mutex<Vec<std::net::TcpStream>>>,
}

impl MuteProxy {
    fn start(upstream: std::net::SocketAddr) -> MuteProxy {
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let muted = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let carried = std::sync::Arc::new(Mutex::new(Vec::new()));
        let (muted_in, carried_in) = (muted.clone(), carried.clone());
        std::thread::spawn(move || {
            let mut silent = Vec::new();
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                if muted_in.load(Ordering::SeqCst) {
                    silent.push(client);
                    continue;
                }
                let server = std::net::TcpStream::connect(upstream).unwrap();
                carried_in.lock().unwrap().extend([client.try_clone().unwrap(), server.try_clone().unwrap()]);
                pipe(client.try_clone().unwrap(), server.try_clone().unwrap());
                pipe(server, client);
            }
        });
        MuteProxy { addr, muted, carried }
    }

    fn mute(&self) {
        self.muted.store(true, std::sync::atomic::Ordering::SeqCst);
        for socket in self.carried.lock().unwrap().drain(..) {
            let _ = socket.shutdown(std::net::Shutdown::Both);
        }
    }
}

fn pipe(mut from: std::net::TcpStream, mut to: std::net::TcpStream) {
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut from, &mut to);
        let _ = to.shutdown(std::net::Shutdown::Both);
    });
}

/// A server that drops its connections and then accepts new ones without
/// ever greeting, with 2013 and 2006 ignored: the reconnects give up at the
/// end of `--time` (it lasted 30 s, the connect timeout, before), none is
/// counted in `reconnects` (it said 1), and the failed attempts are said
/// on a line of wirebench's own after the report.
#[test]
fn reconnects_to_a_server_that_never_greets_end_with_the_run() {
    use wirebench::null_server::{NullServer, NullServerConfig};
    let config = NullServerConfig { tcp: Some("127.0.0.1:0".parse().unwrap()), cpus: vec![0], ..Default::default() };
    let null = NullServer::start(config).expect("the null server starts");
    let proxy = MuteProxy::start(null.local_addr().unwrap());
    for backend in backends() {
        let line = format!(
            "oltp_point_select --mysql-host=127.0.0.1 --mysql-port={} --tables=1 --threads=2 --time=2 \
             --report-interval=1 --mysql-ignore-errors=2013,2006 {backend} run",
            proxy.addr.port()
        );
        proxy.muted.store(false, std::sync::atomic::Ordering::SeqCst);
        let (child, started) = spawn(&line);
        // Mid-run: the first interim report is out, transactions with it.
        let child = wait_for_line(child, "[ 1s ] ");
        proxy.mute();
        let ran = wait(child, started);
        assert_eq!(ran.code, Some(0), "{backend}: {ran}");
        assert!(ran.took < Duration::from_millis(3_500), "{backend}: {ran}");
        assert_eq!(counter(&ran, "reconnects:"), 0, "{backend}: {ran}");
        assert!(counter(&ran, "transactions:") > 0, "{backend}: {ran}");
        let failed = ran
            .stdout
            .lines()
            .find_map(|l| l.strip_prefix("wirebench: failed reconnect attempts: "))
            .and_then(|rest| rest.split_whitespace().next()?.parse::<u64>().ok())
            .unwrap_or_else(|| panic!("{backend}: no failed attempts line: {ran}"));
        // io_uring reconnects blocking: its other connection's turn comes
        // only after the run is over.
        assert!(failed >= 1, "{backend}: the attempt cut off at the end at least: {ran}");
        let report_end = ran.stdout.find("Threads fairness:").unwrap_or_else(|| panic!("{ran}"));
        let line_at = ran.stdout.find("wirebench: failed reconnect attempts").unwrap();
        assert!(line_at > report_end, "after sysbench's report: {ran}");
    }
    drop(null);
}

/// Forwards a unix socket to `to`: the server's bytes as they come, the
/// client's first packet (its login) too, and at its second (its first
/// command) drops both connections: a server that resets every
/// connection once logged in.
fn resetting_proxy(listen: std::path::PathBuf, to: std::path::PathBuf) {
    use std::io::{Read, Write};
    use std::os::unix::net::{UnixListener, UnixStream};
    let listener = UnixListener::bind(listen).unwrap();
    std::thread::spawn(move || {
        for mut client in listener.incoming().flatten() {
            let Ok(mut server) = UnixStream::connect(&to) else { continue };
            let (mut from_server, mut to_client) = (server.try_clone().unwrap(), client.try_clone().unwrap());
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut from_server, &mut to_client);
            });
            std::thread::spawn(move || {
                let mut header = [0u8; 4];
                if client.read_exact(&mut header).is_err() {
                    return;
                }
                let mut login = vec![0u8; u32::from_le_bytes([header[0], header[1], header[2], 0]) as usize];
                if client.read_exact(&mut login).is_err() {
                    return;
                }
                let _ = server.write_all(&header).and_then(|()| server.write_all(&login));
                let _ = client.read_exact(&mut header);
                let _ = client.shutdown(std::net::Shutdown::Both);
                let _ = server.shutdown(std::net::Shutdown::Both);
            });
        }
    });
}

/// A server that resets every connection at its first command, with 2013
/// ignored, over a unix socket (where a loop waits on its connection's
/// socket): thousands of reconnects one after the other, and the run
/// still ends at its time, counting them, without the loop's stack
/// growing with each (it did once: a reconnect went on inside the
/// exchange that lost the connection).
#[test]
fn a_server_resetting_every_connection_over_a_unix_socket_ends_with_the_run() {
    use wirebench::null_server::{NullServer, NullServerConfig};
    let dir = std::env::temp_dir().join(format!("wb-faults-reset-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (behind, front) = (dir.join("null.sock"), dir.join("reset.sock"));
    let config = NullServerConfig { unix: Some(behind.clone()), cpus: vec![0], ..Default::default() };
    let null = NullServer::start(config).expect("the null server starts");
    resetting_proxy(front.clone(), behind);
    for backend in backends() {
        let line = format!(
            "oltp_point_select --mysql-socket={} --tables=1 --threads=1 --time=2 --db-ps-mode=disable \
             --mysql-ignore-errors=2013,2006 {backend} run",
            front.display()
        );
        let (child, started) = spawn(&line);
        let ran = wait(child, started);
        assert_eq!(ran.code, Some(0), "{backend}: {ran}");
        assert!(ran.took < Duration::from_millis(4_500), "{backend}: {ran}");
        assert!(counter(&ran, "reconnects:") > 100, "{backend}: {ran}");
    }
    drop(null);
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------------
// The event loops in memory: a fake server on the other end of a socket
// pair that stops reading, or stops answering.

mod in_memory {
    use std::io::{Read, Write};
    use std::os::unix::net::UnixStream;
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use wirebench::client::{ConnectOptions, Endpoint};
    use wirebench::driver::{
        spawn_loops, Backend, Clock, ConnPlan, DriverError, EventPipeline, IgnoreErrors, LoopContext, LoopPlan,
        LoopWait, Lost, Redial, RunControl, StdSocket, WaitMode,
    };
    use wirebench::rand::{RandConfig, RandParams, Rng};
    use wirebench::stats::StatsBoard;
    use wirebench::transport::Transport;
    use wirebench::workload::{CommandSink, Script, Step, WorkloadError};
    use wirebench_protocol::Capabilities;

    const CAPS: Capabilities = Capabilities::PROTOCOL_41.union(Capabilities::DEPRECATE_EOF);

    /// One COM_QUERY of `sql` per event.
    struct Query(&'static [u8]);

    impl Script for Query {
        fn next(&mut self, _: &mut Rng, sink: &mut CommandSink<'_>) -> Result<Step, WorkloadError> {
            sink.query(self.0);
            Ok(Step::Last)
        }
        fn restart_event(&mut self) {}
    }

    /// What the fake server does with the connection.
    #[derive(Clone, Copy)]
    enum Fake {
        /// Reads nothing, answers nothing.
        Deaf,
        /// Reads everything, answers nothing.
        Mute,
        /// Answers one command at once, before reading it, then reads
        /// nothing.
        AnswersOnceDeaf,
    }

    fn serve(mut stream: UnixStream, fake: Fake, until: Instant) {
        stream.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
        if let Fake::AnswersOnceDeaf = fake {
            let mut ok = Vec::new();
            wirebench_protocol::response::OkPacket::default().encode(0, CAPS, 1, &mut ok);
            stream.write_all(&ok).unwrap();
        }
        let mut sink = [0u8; 64 * 1024];
        while Instant::now() < until {
            match fake {
                // sleep: a deaf server reads nothing, the fault under test.
                Fake::Deaf | Fake::AnswersOnceDeaf => std::thread::sleep(Duration::from_millis(50)),
                Fake::Mute => match stream.read(&mut sink) {
                    Ok(0) => return,
                    _ => continue,
                },
            }
        }
        let _ = stream.flush();
    }

    /// epoll; io_uring waiting on its ring (sleeping), and waiting on each
    /// socket (a loop per connection: the socket loop).
    fn backends() -> Vec<(Backend, WaitMode)> {
        let mut backends = vec![(Backend::Tokio, WaitMode::Sleep)];
        if crate::common::ring_here() {
            backends.push((Backend::Uring, WaitMode::Sleep));
            backends.push((Backend::Uring, WaitMode::OnSocket));
        }
        backends
    }

    /// Runs `connections` connections sending `sql`, each to a fake
    /// server, with `limits` as read and write timeouts, `--time` as
    /// `deadline_ms` and a cut at `cut_ms`; the loops' result, the run's
    /// control and how long the loops took.
    fn run(
        (backend, wait): (Backend, WaitMode),
        fake: Fake,
        sql: &'static [u8],
        limits: (Option<Duration>, Option<Duration>),
        deadline_cut_ms: Option<(u64, u64)>,
        events: Option<u64>,
    ) -> (Result<(), DriverError>, Arc<RunControl>, Duration) {
        let connections = 2;
        // On the ring, one loop drives both; waiting on each socket, a
        // loop each.
        let per_loop = if wait == WaitMode::OnSocket { 1 } else { connections };
        let loops = connections / per_loop;
        let context = LoopContext {
            board: StatsBoard::new(&vec![per_loop; loops]),
            control: RunControl::new(events, loops),
            clock: Clock::start(),
            deadline_ns: deadline_cut_ms.map(|(deadline, _)| deadline * 1_000_000),
            ignore: IgnoreErrors::List(vec![]),
            finished: Default::default(),
            usage: Default::default(),
            idle: None,
        };
        if let Some((_, cut)) = deadline_cut_ms {
            context.control.cut_at(cut * 1_000_000);
        }
        let until = Instant::now() + Duration::from_secs(10);
        let mut plans = Vec::new();
        let mut servers = Vec::new();
        for i in 0..connections {
            let (client, server) = UnixStream::pair().unwrap();
            servers.push(std::thread::spawn(move || serve(server, fake, until)));
            let rng = Rng::for_thread(1, i as u32, RandParams::new(&RandConfig::default()).unwrap());
            let mut options = ConnectOptions::new(Endpoint::unix("fake"), "u", "p");
            (options.read_timeout, options.write_timeout) = limits;
            if plans.len() < loops && i % per_loop == 0 {
                plans.push(LoopPlan { cpu: None, connections: Vec::new(), wait: LoopWait::asked(wait) });
            }
            let plan = plans.last_mut().expect("a loop for the connection");
            plan.connections.push(ConnPlan {
                endpoint: Endpoint::unix("fake"),
                socket: StdSocket::Unix(client),
                leftover: bytes::BytesMut::new(),
                pipeline: EventPipeline::new(i, Box::new(Query(sql)), rng, Vec::new(), CAPS, 1),
                transport: Transport::plain(),
                redial: Redial { options, statements: Arc::new(Vec::new()), prepare: false, init: &[] },
            });
        }
        let started = Instant::now();
        let handles = spawn_loops(plans, backend, &context).unwrap();
        let mut result = Ok(());
        for handle in handles {
            if let Err(e) = handle.join().unwrap() {
                result = Err(e);
            }
        }
        let took = started.elapsed();
        drop(servers);
        (result, context.control.clone(), took)
    }

    /// `--mysql-write-timeout`: a server that takes no more bytes loses
    /// the connection as libmysqlclient reports it (client error 2006).
    #[test]
    fn a_server_that_stops_reading_is_a_write_timeout() {
        let big: &'static [u8] = Box::leak(vec![b'x'; 4 << 20].into_boxed_slice());
        for backend in backends() {
            let limits = (None, Some(Duration::from_millis(300)));
            let (result, _, took) = run(backend, Fake::Deaf, big, limits, None, None);
            let Err(DriverError::Lost { lost, .. }) = result else { panic!("{backend:?}: {result:?}") };
            assert!(matches!(lost, Lost::WriteTimeout(_)) && lost.code() == 2006, "{backend:?}: {lost}");
            assert!(took < Duration::from_secs(2), "{backend:?}: {took:?}");
        }
    }

    /// `--mysql-read-timeout`: a server that reads and never answers loses
    /// the connection with client error 2013.
    #[test]
    fn a_server_that_stops_answering_is_a_read_timeout() {
        for backend in backends() {
            let limits = (Some(Duration::from_millis(300)), Some(Duration::from_millis(300)));
            let (result, _, took) = run(backend, Fake::Mute, b"SELECT 1", limits, None, None);
            let Err(DriverError::Lost { lost, .. }) = result else { panic!("{backend:?}: {result:?}") };
            assert!(matches!(lost, Lost::ReadTimeout(_)) && lost.code() == 2013, "{backend:?}: {lost}");
            assert!(took < Duration::from_secs(2), "{backend:?}: {took:?}");
        }
    }

    /// Once the run is cut, the loops stop waiting: every connection still
    /// waiting for an answer is counted as stalled, and the loops end.
    #[test]
    fn the_cut_ends_the_loops_and_counts_the_stalled() {
        for backend in backends() {
            let (result, control, took) = run(backend, Fake::Mute, b"SELECT 1", (None, None), Some((200, 500)), None);
            result.unwrap_or_else(|e| panic!("{backend:?}: {e}"));
            let stalls = control.stalls();
            assert_eq!(stalls.connections, 2, "{backend:?}");
            assert!(stalls.longest_wait_ns >= 400_000_000, "{backend:?}: {stalls:?}");
            assert!(took < Duration::from_millis(1_500), "{backend:?}: {took:?}");
        }
    }

    /// A connection done with its work whose COM_QUIT the server never
    /// takes (it answered a command it had not read) ends at the write
    /// timeout instead of holding its loop: io_uring gives the goodbye up;
    /// epoll, still sending the command, loses the connection (2006).
    #[test]
    fn a_goodbye_the_server_never_takes_does_not_hold_the_loop() {
        let big: &'static [u8] = Box::leak(vec![b'x'; 4 << 20].into_boxed_slice());
        for backend in backends() {
            let limits = (None, Some(Duration::from_millis(300)));
            let (result, _, took) = run(backend, Fake::AnswersOnceDeaf, big, limits, None, Some(2));
            match result {
                Ok(()) => {}
                Err(DriverError::Lost { lost: Lost::WriteTimeout(_), .. }) => {}
                Err(other) => panic!("{backend:?}: {other}"),
            }
            assert!(took < Duration::from_secs(2), "{backend:?}: {took:?}");
        }
    }
}
