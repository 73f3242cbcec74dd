//! What the tests of every group share: finding the test MariaDB (started
//! by `scripts/mariadb.sh`) and sysbench, the one rule for a missing one
//! (`unavailable`), running the binary under test, reading its output, and
//! taking turns (tests/README.md).
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use wirebench::client::{ClientError, ConnectOptions, Connection, Endpoint};
use wirebench_protocol::buf::WriteExt;
use wirebench_protocol::response::{QueryResult, Response};
use wirebench_protocol::{Capabilities, ProtocolError};

/// Whether a missing server or tool fails the test (WIREBENCH_REQUIRE_SERVER=1,
/// as scripts/test.sh and CI set it) rather than skipping it.
pub fn required() -> bool {
    std::env::var("WIREBENCH_REQUIRE_SERVER").is_ok_and(|v| v == "1")
}

/// Whether this kernel runs wirebench's io_uring loop. Without it the
/// io_uring part of a test is skipped with a note, or fails under
/// WIREBENCH_REQUIRE_URING=1 (scripts/test.sh sets it), so a suite meant to
/// test the ring cannot pass without running it.
pub fn ring_here() -> bool {
    let Err(why) = wirebench::driver::Backend::resolve(wirebench::driver::IoBackend::Uring) else { return true };
    assert!(std::env::var("WIREBENCH_REQUIRE_URING").as_deref() != Ok("1"), "WIREBENCH_REQUIRE_URING=1 but {why}");
    eprintln!("io_uring not tested: {why}");
    false
}

/// The one way a test does without something it needs (`what`, with how to
/// get it): under WIREBENCH_REQUIRE_SERVER=1 the test fails, so a suite that
/// was meant to run it cannot pass by skipping; otherwise it says so on
/// stderr and the caller returns.
#[track_caller]
pub fn unavailable(what: &str) {
    assert!(!required(), "WIREBENCH_REQUIRE_SERVER=1 but {what}");
    eprintln!("skipped: {what}");
}

/// A MariaDB of a test's own (a data directory and a free port of its own,
/// from scripts/mariadb.sh, with `args` after mariadbd's other options),
/// for a test that must not touch the shared test server: one that crashes
/// it, or one that needs settings of its own. Stopped, and its directory
/// removed, when dropped.
pub struct OwnMariaDb {
    pub dir: PathBuf,
    pub port: u16,
    args: String,
}

impl OwnMariaDb {
    /// Starts one named `name` (the directory's name), or `None`, after
    /// saying why, where mariadbd is not installed (scripts/test.sh
    /// installs it; with WIREBENCH_REQUIRE_SERVER=1 it fails instead).
    pub fn start(name: &str, args: &str) -> Option<OwnMariaDb> {
        let installed = Command::new("mariadbd").arg("--version").output().is_ok_and(|o| o.status.success());
        if !installed {
            unavailable(
                "mariadbd is not installed (the test starts a MariaDB of its own; scripts/test.sh installs it)",
            );
            return None;
        }
        let dir = std::env::temp_dir().join(format!("wb-own-mariadb-{name}-{}", std::process::id()));
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let server = OwnMariaDb { dir, port, args: args.to_owned() };
        server.start_again();
        Some(server)
    }

    /// Starts it again (after a crash): once the old mariadbd is gone.
    pub fn start_again(&self) {
        // A crashed mariadbd may still be writing its backtrace.
        let until = Instant::now() + Duration::from_secs(60);
        while self.pid().is_some_and(|pid| std::path::Path::new(&format!("/proc/{pid}")).exists())
            && Instant::now() < until
        {
            // sleep: polls for the crashed mariadbd's exit (not our child).
            std::thread::sleep(Duration::from_millis(100));
        }
        let out = self.script("start");
        assert!(
            out.status.success(),
            "scripts/mariadb.sh start:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn script(&self, command: &str) -> std::process::Output {
        Command::new(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/mariadb.sh"))
            .arg(command)
            .env("WIREBENCH_MARIADB_DIR", &self.dir)
            .env("WIREBENCH_TEST_PORT", self.port.to_string())
            .env("WIREBENCH_MARIADB_ARGS", &self.args)
            .output()
            .expect("run scripts/mariadb.sh")
    }

    pub fn pid(&self) -> Option<u32> {
        std::fs::read_to_string(self.dir.join("mariadbd.pid")).ok()?.trim().parse().ok()
    }

    /// Its error log.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("error.log")).unwrap_or_default()
    }

    /// wirebench's options for user sbtest on `database`, over TCP.
    pub fn login_args(&self, database: &str) -> Vec<String> {
        vec![
            "--mysql-host=127.0.0.1".into(),
            format!("--mysql-port={}", self.port),
            "--mysql-user=sbtest".into(),
            "--mysql-password=sbtest".into(),
            format!("--mysql-db={database}"),
        ]
    }
}

impl Drop for OwnMariaDb {
    fn drop(&mut self) {
        let _ = self.script("stop");
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Where the test server listens. Holding one found by `find` is holding the
/// server for the tests of one file (`ServerTurn`).
pub struct TestServer {
    pub host: String,
    pub port: u16,
    pub socket: Option<PathBuf>,
    _turn: Option<ServerTurn>,
}

impl TestServer {
    /// The server named by WIREBENCH_TEST_HOST/PORT/SOCKET, or `None` (the
    /// test is skipped, or fails under WIREBENCH_REQUIRE_SERVER=1) when there
    /// is none. Waits until no test of another file holds the server.
    #[track_caller]
    pub fn find() -> Option<TestServer> {
        let file = std::panic::Location::caller().file();
        Self::named().map(|server| TestServer { _turn: Some(ServerTurn::take(file)), ..server })
    }

    /// The server, as `find`, for a file whose tests use databases of their
    /// own and read no server-wide counter: it takes no turn, and the tests
    /// of other files run beside it.
    pub fn find_beside_others() -> Option<TestServer> {
        Self::named()
    }

    fn named() -> Option<TestServer> {
        let host = std::env::var("WIREBENCH_TEST_HOST").ok();
        let port = std::env::var("WIREBENCH_TEST_PORT").ok();
        let (Some(host), Some(port)) = (host, port) else {
            unavailable(
                "no test server: start one with scripts/mariadb.sh start and \
                 eval \"$(scripts/mariadb.sh env)\" (WIREBENCH_TEST_HOST, WIREBENCH_TEST_PORT)",
            );
            return None;
        };
        let port = port.parse().unwrap_or_else(|_| panic!("WIREBENCH_TEST_PORT={port:?} is not a port"));
        let socket = std::env::var_os("WIREBENCH_TEST_SOCKET").map(PathBuf::from);
        Some(TestServer { host, port, socket, _turn: None })
    }

    pub fn tcp(&self) -> Endpoint {
        Endpoint::tcp(self.host.clone(), self.port)
    }

    pub fn socket(&self) -> Endpoint {
        match &self.socket {
            Some(path) => Endpoint::unix(path.clone()),
            None => {
                assert!(!required(), "WIREBENCH_REQUIRE_SERVER=1 but WIREBENCH_TEST_SOCKET is not set");
                self.tcp()
            }
        }
    }

    /// wirebench's (and sysbench's) command-line login to this server:
    /// user `sbtest` on `database`, over TCP.
    pub fn login_args(&self, database: &str) -> Vec<String> {
        vec![
            format!("--mysql-host={}", self.host),
            format!("--mysql-port={}", self.port),
            "--mysql-user=sbtest".to_owned(),
            "--mysql-password=sbtest".to_owned(),
            format!("--mysql-db={database}"),
        ]
    }

    /// Options for user `sbtest` (mysql_native_password) on database `sbtest`.
    pub fn options(&self, endpoint: Endpoint) -> ConnectOptions {
        let mut options = ConnectOptions::new(endpoint, "sbtest", "sbtest").database("sbtest");
        options.connect_timeout = Duration::from_secs(20);
        options
    }
}

/// The sysbench 1.0.20 binary (`$WIREBENCH_SYSBENCH`, else /usr/bin/sysbench
/// or `sysbench` on PATH), or `None`, after saying why, to skip the test.
/// With WIREBENCH_REQUIRE_SERVER=1, as in CI, a missing sysbench fails it.
pub fn sysbench() -> Option<PathBuf> {
    let candidates = match std::env::var_os("WIREBENCH_SYSBENCH") {
        Some(path) => vec![PathBuf::from(path)],
        None => vec![PathBuf::from("/usr/bin/sysbench"), PathBuf::from("sysbench")],
    };
    let found = candidates.iter().find(|path| {
        Command::new(path)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success() && o.stdout.starts_with(b"sysbench 1.0.20"))
    });
    if found.is_none() {
        unavailable(&format!("no runnable sysbench 1.0.20 among {candidates:?} (apt-get install sysbench)"));
    }
    found.cloned()
}

/// The test MariaDB for the tests of one file at a time. The tests of a file
/// were written to run beside each other; those of different files share
/// databases (sbtest above all) and server-wide counters, and ran in
/// separate processes before the files were grouped into one binary.
struct ServerTurn {
    file: &'static str,
}

/// Which file holds the server, and how many of its tests.
static SERVER_HOLDER: Mutex<Option<(&'static str, usize)>> = Mutex::new(None);
static SERVER_FREED: Condvar = Condvar::new();

impl ServerTurn {
    fn take(file: &'static str) -> ServerTurn {
        let mut holder = SERVER_HOLDER.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        loop {
            match &mut *holder {
                None => *holder = Some((file, 1)),
                Some((holding, tests)) if *holding == file => *tests += 1,
                Some(_) => {
                    holder = SERVER_FREED.wait(holder).unwrap_or_else(|poisoned| poisoned.into_inner());
                    continue;
                }
            }
            return ServerTurn { file };
        }
    }
}

impl Drop for ServerTurn {
    fn drop(&mut self) {
        let mut holder = SERVER_HOLDER.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((holding, tests)) = &mut *holder {
            debug_assert_eq!(*holding, self.file);
            *tests -= 1;
            if *tests == 0 {
                *holder = None;
                SERVER_FREED.notify_all();
            }
        }
    }
}

/// One test of the calling file at a time (for tests that share a table or
/// measure a rate), while tests of other files go on. Keyed by the caller's
/// file, so the tests of one file keep the lock they had as a binary of
/// their own.
#[track_caller]
pub fn serial() -> MutexGuard<'static, ()> {
    static LOCKS: Mutex<Option<HashMap<&'static str, &'static Mutex<()>>>> = Mutex::new(None);
    let file = std::panic::Location::caller().file();
    let lock = {
        let mut locks = LOCKS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        *locks.get_or_insert_with(HashMap::new).entry(file).or_insert_with(|| Box::leak(Box::new(Mutex::new(()))))
    };
    lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The path of the wirebench binary under test, for a test that runs it
/// under another program (taskset, strace, a shell).
pub const WIREBENCH: &str = env!("CARGO_BIN_EXE_wirebench");

/// The wirebench binary under test, its stdin closed (a test that means to
/// feed it replaces that).
pub fn wirebench() -> Command {
    let mut command = Command::new(WIREBENCH);
    command.stdin(Stdio::null());
    command
}

/// `wirebench ARGS`, run to its end: see [`run`].
pub fn run_wirebench<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Ran {
    run(wirebench().args(args))
}

/// How a child ran: its exit, its output as text, how long it took, and
/// its command line, which every failure message names.
pub struct Ran {
    pub command: String,
    /// `None` when it was killed (at its time limit, or by a signal).
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub took: Duration,
}

impl Ran {
    pub fn succeeded(&self) -> bool {
        self.code == Some(0)
    }

    /// Its stdout; a run that failed fails the test, naming its command
    /// line, its exit and its output.
    #[track_caller]
    pub fn ok(self) -> String {
        assert!(self.succeeded(), "{self}");
        self.stdout
    }

    /// The run itself, which must have succeeded (as [`ok`](Self::ok)).
    #[track_caller]
    pub fn expect_success(self) -> Ran {
        assert!(self.succeeded(), "{self}");
        self
    }

    /// Its stderr, which must come with exit `code`.
    #[track_caller]
    pub fn failed_with(self, code: i32) -> String {
        assert_eq!(self.code, Some(code), "{self}");
        self.stderr
    }
}

impl std::fmt::Display for Ran {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let exit = self.code.map_or("killed".to_owned(), |code| format!("exit {code}"));
        write!(f, "{}: {exit} after {:?}\nstdout:\n{}\nstderr:\n{}", self.command, self.took, self.stdout, self.stderr)
    }
}

/// Runs `command` to its end, its stdout and stderr captured as text.
pub fn run(command: &mut Command) -> Ran {
    run_within(command, Duration::MAX)
}

/// Runs `command`, killing it once `limit` has passed (a run that does not
/// end is then the failure, not a hung suite): `code` is `None` then.
pub fn run_within(command: &mut Command, limit: Duration) -> Ran {
    use std::io::Read;
    let shown = std::iter::once(command.get_program())
        .chain(command.get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    let started = Instant::now();
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {shown}: {e}"));
    let read = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            text(&bytes)
        })
    };
    let stdout = read(child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let stderr = read(child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let status = match limit {
        Duration::MAX => Some(child.wait().expect("wait for the child")),
        limit => exit_within(&mut child, limit).map(|(status, _)| status),
    };
    let (stdout, stderr) = (stdout.join().expect("stdout"), stderr.join().expect("stderr"));
    Ran { command: shown, code: status.and_then(|s| s.code()), stdout, stderr, took: started.elapsed() }
}

/// The cores this process may run on, from /proc (not from the code
/// under test).
pub fn allowed_cpus() -> Vec<usize> {
    let status = std::fs::read_to_string("/proc/self/status").expect("read /proc/self/status");
    let list = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:")).expect("Cpus_allowed_list").trim();
    let mut cpus = Vec::new();
    for item in list.split(',') {
        let (a, b) = item.split_once('-').unwrap_or((item, item));
        cpus.extend(a.parse::<usize>().expect("a cpu")..=b.parse::<usize>().expect("a cpu"));
    }
    cpus
}

/// `--cpus=` for a run on two loops (one where the process may use one
/// core only).
pub fn two_loops() -> String {
    let cpus: Vec<String> = allowed_cpus().iter().take(2).map(usize::to_string).collect();
    format!("--cpus={}", cpus.join(","))
}

/// A child's output as text (lossy: a stray byte must not hide the rest).
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The number after `label` at the start of a line of a report (`label`
/// includes its colon; a trailing `s` of seconds is dropped), which must be
/// there.
#[track_caller]
pub fn number_after<T: std::str::FromStr>(text: &str, label: &str) -> T {
    text.lines()
        .find_map(|l| l.trim_start().strip_prefix(label))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.trim_end_matches('s').parse().ok())
        .unwrap_or_else(|| panic!("no number after {label:?} in\n{text}"))
}

/// A child's stdout, read on a thread of its own as it comes: a test waits
/// for a line (an event of the run) instead of sleeping, then takes the rest.
pub struct StdoutWatch {
    lines: std::sync::mpsc::Receiver<String>,
    reader: std::thread::JoinHandle<String>,
}

impl StdoutWatch {
    /// Takes `child`'s stdout, which must be piped.
    pub fn new(child: &mut std::process::Child) -> StdoutWatch {
        use std::io::BufRead;
        let stdout = child.stdout.take().expect("the child's stdout is piped");
        let (tx, lines) = std::sync::mpsc::channel();
        let reader = std::thread::spawn(move || {
            let mut seen = String::new();
            for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line.clone());
                seen.push_str(&line);
                seen.push('\n');
            }
            seen
        });
        StdoutWatch { lines, reader }
    }

    /// Waits for a line starting with `prefix`; fails the test if the child
    /// ends, or `deadline` passes, without one.
    #[track_caller]
    pub fn wait_for_line(&self, prefix: &str, deadline: Duration) {
        let started = Instant::now();
        loop {
            let left = deadline.saturating_sub(started.elapsed());
            match self.lines.recv_timeout(left) {
                Ok(line) if line.starts_with(prefix) => return,
                Ok(_) => {}
                Err(e) => panic!("no line {prefix:?} on stdout within {deadline:?}: {e}"),
            }
        }
    }

    /// All of stdout, once the child has closed it.
    pub fn rest(self) -> String {
        self.reader.join().expect("the stdout reader")
    }
}

/// Waits until `ready` holds, polling every few milliseconds, for at most
/// `deadline` (generous: a loaded machine is slow, a hung one fails here
/// rather than hanging the suite). Panics naming `what` when it never does.
#[track_caller]
pub fn wait_until(what: &str, deadline: Duration, mut ready: impl FnMut() -> bool) {
    let started = Instant::now();
    while !ready() {
        assert!(started.elapsed() < deadline, "waited {deadline:?} for {what}");
        // sleep: the poll of the one wait for an event.
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Waits for `child` to exit, for at most `limit`: its status and how long
/// it took, or `None` (the child killed and reaped) when it ran on.
pub fn exit_within(child: &mut std::process::Child, limit: Duration) -> Option<(std::process::ExitStatus, Duration)> {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait for the child") {
            return Some((status, started.elapsed()));
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        // sleep: polls for the child's exit (std has no wait with a timeout).
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Kills the connections of `run` (a child, its stdout piped) on the
/// server `rounds` times once it runs: after its "Threads started!" (a
/// connection lost while it sets up is fatal, as in sysbench), each time
/// once `connections` of them are open that were not killed before (after
/// a kill: the run has reconnected). `open_ids` lists the run's
/// connections on the server, `kill` kills one. Stops early if the run
/// ends (its output then says why). Returns the ids killed, and the run's
/// stdout as it comes ([`StdoutWatch::rest`] once it has ended).
pub fn kill_once_connected(
    run: &mut std::process::Child,
    (rounds, connections): (usize, usize),
    mut open_ids: impl FnMut() -> Vec<String>,
    mut kill: impl FnMut(&str),
) -> (Vec<String>, StdoutWatch) {
    let stdout = StdoutWatch::new(run);
    stdout.wait_for_line("Threads started!", Duration::from_secs(60));
    let mut killed: Vec<String> = Vec::new();
    for round in 1..=rounds {
        let mut ids = Vec::new();
        let started = Instant::now();
        while ids.len() < connections || ids.iter().any(|id| killed.contains(id)) {
            if run.try_wait().expect("wait for the run").is_some() {
                return (killed, stdout);
            }
            ids = open_ids();
            let waited = started.elapsed();
            assert!(
                waited < Duration::from_secs(20),
                "round {round}: after {waited:?}, {ids:?} open, {killed:?} killed"
            );
            // sleep: the poll of a wait for an event (as in wait_until).
            std::thread::sleep(Duration::from_millis(5));
        }
        ids.iter().for_each(|id| kill(id));
        killed.extend(ids);
    }
    (killed, stdout)
}

/// What `attempt` gives in the first of three runs that succeeds, for a
/// check that chance can fail once (a second in which a shared machine
/// starved the client, two threads meeting on a row) but not three times
/// in a row, as a fault would. Panics with the three failures.
#[track_caller]
pub fn in_one_of_three_runs<T>(mut attempt: impl FnMut() -> Result<T, String>) -> T {
    let mut failures = Vec::new();
    for run in 1..=3 {
        match attempt() {
            Ok(value) => return value,
            Err(failure) => failures.push(format!("run {run}: {failure}")),
        }
    }
    panic!("failed three runs in a row:\n{}", failures.join("\n"));
}

/// A private scratch directory, removed on drop.
pub struct ScratchDir(pub PathBuf);

impl ScratchDir {
    /// Unique within the process too: files with tests of the same name now
    /// share one binary.
    pub fn new(name: &str) -> Self {
        static MADE: AtomicU64 = AtomicU64::new(0);
        let n = MADE.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("wirebench-test-{}-{n}-{name}", std::process::id()));
        if let Err(e) = std::fs::create_dir_all(&dir) {
            panic!("create {}: {e}", dir.display());
        }
        ScratchDir(dir)
    }

    pub fn write(&self, file: &str, contents: &str) -> PathBuf {
        let path = self.0.join(file);
        if let Err(e) = std::fs::write(&path, contents) {
            panic!("write {}: {e}", path.display());
        }
        path
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs a Lua `script` with sysbench (`binary args... script run`, in the
/// script's directory) and returns its stdout; a failure fails the test.
pub fn run_sysbench_script<S: AsRef<std::ffi::OsStr>>(
    binary: &std::path::Path,
    script: &std::path::Path,
    args: &[S],
) -> String {
    let output = Command::new(binary)
        .args(args)
        .arg(script)
        .arg("run")
        .current_dir(script.parent().unwrap_or(std::path::Path::new(".")))
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", binary.display()));
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let shown: Vec<_> = args.iter().map(|a| a.as_ref().to_string_lossy().into_owned()).collect();
    assert!(
        output.status.success(),
        "sysbench {shown:?} failed: {}\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// The rig's TLS files (`scripts/mariadb.sh env` exports
/// WIREBENCH_TEST_TLS_DIR): ca.pem = cacert.pem, client-cert.pem,
/// client-key.pem, other-ca.pem. `None` (the test is skipped) without it;
/// with WIREBENCH_REQUIRE_SERVER=1 a missing directory fails the test.
pub fn tls_dir() -> Option<PathBuf> {
    let required = std::env::var("WIREBENCH_REQUIRE_SERVER").is_ok_and(|v| v == "1");
    match std::env::var_os("WIREBENCH_TEST_TLS_DIR").map(PathBuf::from) {
        Some(dir) if dir.join("cacert.pem").exists() => Some(dir),
        Some(dir) if required => panic!("WIREBENCH_TEST_TLS_DIR={} holds no cacert.pem", dir.display()),
        None if required => panic!(
            "WIREBENCH_REQUIRE_SERVER=1 but WIREBENCH_TEST_TLS_DIR is not set: eval \"$(scripts/mariadb.sh env)\""
        ),
        _ => {
            eprintln!("skipped: no TLS files (set WIREBENCH_TEST_TLS_DIR, see scripts/mariadb.sh)");
            None
        }
    }
}

/// The one result set of a text-protocol response, raw.
pub fn raw_rows(response: &Response) -> Vec<Vec<Option<Vec<u8>>>> {
    let sets: Vec<_> = response.result_sets().collect();
    assert_eq!(sets.len(), 1, "expected one result set in {response:?}");
    sets[0].text_rows().unwrap()
}

/// The one result set of a text-protocol response, as strings.
pub fn rows(response: &Response) -> Vec<Vec<Option<String>>> {
    raw_rows(response)
        .into_iter()
        .map(|row| row.into_iter().map(|v| v.map(|b| String::from_utf8_lossy(&b).into_owned())).collect())
        .collect()
}

/// A non-NULL value, as [`rows`] gives it.
pub fn s(v: &str) -> Option<String> {
    Some(v.to_string())
}

/// The affected rows of a response that is one OK.
pub fn affected(response: &Response) -> u64 {
    match response.results.as_slice() {
        [QueryResult::Ok(ok)] => ok.affected_rows,
        other => panic!("expected one OK, got {other:?}"),
    }
}

/// The scripted servers' scramble: 20 bytes, split 8 + 12 in the greeting.
pub const NONCE: [u8; 20] = *b"0123456789abcdefghij";

/// A scripted server's HandshakeV10 payload, written out field by field
/// from the protocol documentation (not with the code under test): server
/// `version`, capabilities (MariaDB's extended ones in the last 4 of the
/// 10 reserved bytes), [`NONCE`], and the default auth `plugin`.
pub fn greeting(version: &str, caps: Capabilities, plugin: &str) -> Vec<u8> {
    let mut p = vec![10];
    p.put_null_terminated(version.as_bytes());
    p.put_u32(42);
    p.put_bytes(&NONCE[..8]);
    p.put_u8(0);
    p.put_u16(caps.low() as u16);
    p.put_u8(45);
    p.put_u16(0x0002);
    p.put_u16((caps.low() >> 16) as u16);
    p.put_u8(21);
    p.put_zeros(6);
    p.put_u32(caps.mariadb_ext());
    p.put_bytes(&NONCE[8..]);
    p.put_u8(0);
    p.put_null_terminated(plugin.as_bytes());
    p
}

/// Rows and statements past 16 MiB go through and the connection stays in
/// step: a 20 MiB row (its packet split in 16 MiB fragments and joined),
/// 20,000 rows of 1000 bytes walked without decoding, and a 17 MiB
/// statement (the command itself split).
pub async fn expect_results_past_16_mib(conn: &mut Connection) {
    let len = 20 * 1024 * 1024;
    let r = conn.query(&format!("SELECT REPEAT('x', {len}) AS big, 7 AS tail")).await.unwrap();
    let row = &rows(&r)[0];
    assert_eq!(row[0].as_deref().map(str::len), Some(len));
    assert!(row[0].as_deref().unwrap().bytes().all(|b| b == b'x'));
    assert_eq!(row[1], s("7"));
    let outcome = conn.query_drop("SELECT REPEAT('y', 1000) FROM seq_1_to_20000").await.unwrap();
    assert_eq!((outcome.result_sets, outcome.rows), (1, 20000));
    let n = 17 * 1024 * 1024;
    let sql = format!("SELECT LENGTH('{}')", "z".repeat(n));
    assert_eq!(rows(&conn.query(&sql).await.unwrap()), vec![vec![s(&n.to_string())]]);
    assert_eq!(rows(&conn.query("SELECT 'in step'").await.unwrap()), vec![vec![s("in step")]]);
}

/// `LOAD DATA LOCAL INFILE` into a new `table` is refused, by the server
/// (local_infile off) or by wirebench when the server asks for the file,
/// nothing is loaded, and the connection goes on; the table is dropped.
pub async fn expect_local_infile_refused(conn: &mut Connection, table: &str) {
    conn.query(&format!("CREATE TABLE IF NOT EXISTS {table} (a INT)")).await.unwrap();
    match conn.query(&format!("LOAD DATA LOCAL INFILE '/etc/passwd' INTO TABLE {table}")).await {
        Err(ClientError::Protocol { source: ProtocolError::LocalInfileRefused(file), .. }) => {
            assert_eq!(file, "/etc/passwd")
        }
        Err(ClientError::Server { error, .. }) => assert!(matches!(error.code, 1148 | 3948 | 4166), "{error}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert_eq!(rows(&conn.query(&format!("SELECT COUNT(*) FROM {table}")).await.unwrap()), vec![vec![s("0")]]);
    conn.query(&format!("DROP TABLE {table}")).await.unwrap();
}
