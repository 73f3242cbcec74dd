//! The null server end to end: started in-process on 127.0.0.1:0 and a
//! unix socket, logged into with wirebench's own client, driven with the
//! protocol crate over blocking sockets, attacked with garbage, and run
//! against the real sysbench.

#[path = "../common/mod.rs"]
mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

use std::time::Duration;

use wirebench::client::{ConnectOptions, Connection, Endpoint};
use wirebench::null_server::{NullServer, NullServerConfig};
use wirebench_protocol::auth::rand_core::OsRng;
use wirebench_protocol::command::{encode_execute, encode_ping, encode_prepare, encode_query, Param};
use wirebench_protocol::framing::decode_packet;
use wirebench_protocol::handshake::{ClientHandshake, HandshakeConfig, HandshakeStep, TlsMode};
use wirebench_protocol::response::{Outcome, PrepareOutcome, PrepareResponse, ResponseReader, RowFormat};
use wirebench_protocol::Capabilities;

const TIMEOUT: Duration = Duration::from_secs(20);

/// Counts heap allocations in the whole process, to show that answering
/// queries allocates nothing once a connection is warm.
struct CountingAllocator;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

// The tests run one at a time, so that the allocation count of one is not
// disturbed by another.
use crate::common::serial;

/// A directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("wirebench-null-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn socket(&self) -> PathBuf {
        self.0.join("null.sock")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A server on an ephemeral TCP port and a unix socket in `dir`, on the
/// first cpu this process may use.
fn start(dir: &TempDir, rows_per_select: usize) -> NullServer {
    let config = NullServerConfig {
        tcp: Some(SocketAddr::from(([127, 0, 0, 1], 0))),
        unix: Some(dir.socket()),
        cpus: Vec::new(),
        rows_per_select,
        ..NullServerConfig::default()
    };
    NullServer::start(config).unwrap()
}

trait Socket: Read + Write {}
impl Socket for TcpStream {}
impl Socket for UnixStream {}

fn connect(server: &NullServer, unix: bool) -> Box<dyn Socket> {
    if unix {
        let s = UnixStream::connect(server.unix_path().unwrap()).unwrap();
        s.set_read_timeout(Some(TIMEOUT)).unwrap();
        Box::new(s)
    } else {
        let s = TcpStream::connect(server.local_addr().unwrap()).unwrap();
        s.set_read_timeout(Some(TIMEOUT)).unwrap();
        s.set_nodelay(true).unwrap();
        Box::new(s)
    }
}

/// A blocking client over the protocol crate's codec.
struct Client {
    socket: Box<dyn Socket>,
    input: Vec<u8>,
    caps: Capabilities,
}

impl Client {
    fn login(server: &NullServer, unix: bool, deprecate_eof: bool) -> Client {
        let mut socket = connect(server, unix);
        let mut config = HandshakeConfig::new("anyone", b"any password".to_vec());
        config.database = Some("sbtest".into());
        config.tls = TlsMode::Disabled;
        config.secure_transport = unix;
        config.deprecate_eof = deprecate_eof;
        let mut machine = ClientHandshake::new(config);
        let mut input = Vec::new();
        let mut output = Vec::new();
        loop {
            let (used, step) = machine.advance(&input, &mut output, &mut OsRng).unwrap();
            input.drain(..used);
            socket.write_all(&output).unwrap();
            output.clear();
            match step {
                HandshakeStep::NeedMore => fill(&mut *socket, &mut input),
                HandshakeStep::Done(login) => {
                    assert!(input.is_empty());
                    return Client { socket, input, caps: login.capabilities };
                }
                other => panic!("login failed: {other:?}"),
            }
        }
    }

    fn send(&mut self, bytes: &[u8]) {
        self.socket.write_all(bytes).unwrap();
    }

    /// Reads one response to a command.
    fn response(&mut self, format: RowFormat) -> Outcome {
        let mut reader = ResponseReader::new(self.caps, format);
        loop {
            let progress = reader.advance(&self.input).unwrap();
            self.input.drain(..progress.consumed);
            if let Some(outcome) = progress.done {
                return outcome;
            }
            fill(&mut *self.socket, &mut self.input);
        }
    }

    fn query(&mut self, sql: &str) -> Outcome {
        let mut out = Vec::new();
        encode_query(&mut out, sql.as_bytes());
        self.send(&out);
        self.response(RowFormat::Text)
    }

    /// Prepares `sql`: (statement id, parameter count, column count).
    fn prepare(&mut self, sql: &str) -> (u32, usize, usize) {
        let mut out = Vec::new();
        encode_prepare(&mut out, sql.as_bytes());
        self.send(&out);
        let mut decoder = PrepareResponse::new(self.caps);
        let mut seq = 1;
        loop {
            match decode_packet(&self.input, seq, 1 << 24).unwrap() {
                Some(frame) => {
                    seq = frame.next_seq;
                    let consumed = frame.consumed;
                    let outcome = decoder.feed(&frame.payload).unwrap();
                    self.input.drain(..consumed);
                    match outcome {
                        Some(PrepareOutcome::Prepared(stmt)) => {
                            return (stmt.statement_id(), stmt.params.len(), stmt.columns.len())
                        }
                        Some(PrepareOutcome::Error(e)) => panic!("prepare failed: {e}"),
                        Some(other) => panic!("prepare ended unexpectedly: {other:?}"),
                        None => {}
                    }
                }
                None => fill(&mut *self.socket, &mut self.input),
            }
        }
    }

    /// Reads until the server closes; returns what it sent.
    fn read_to_close(&mut self) -> Vec<u8> {
        let mut rest = std::mem::take(&mut self.input);
        match self.socket.read_to_end(&mut rest) {
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::ConnectionReset => {}
            Err(e) => panic!("the server did not close the connection: {e}"),
        }
        rest
    }
}

fn fill(socket: &mut dyn Socket, input: &mut Vec<u8>) {
    let mut chunk = [0u8; 64 * 1024];
    let n = socket.read(&mut chunk).unwrap();
    assert!(n > 0, "the server closed the connection");
    input.extend_from_slice(&chunk[..n]);
}

#[test]
fn the_client_logs_in_over_tcp_and_unix_socket() {
    let _serial = serial();
    let dir = TempDir::new("login");
    let server = start(&dir, 1);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let endpoints =
        [Endpoint::tcp("127.0.0.1", server.local_addr().unwrap().port()), Endpoint::unix(server.unix_path().unwrap())];
    for endpoint in endpoints {
        for deprecate_eof in [true, false] {
            let mut options = ConnectOptions::new(endpoint.clone(), "user", "whatever").database("sbtest");
            options.deprecate_eof = deprecate_eof;
            let conn = runtime.block_on(Connection::connect(&options)).unwrap();
            let login = conn.login();
            assert_eq!(login.server_version, "10.11.99-wirebench-null");
            assert!(login.is_mariadb);
            assert_eq!(login.capabilities.contains(Capabilities::DEPRECATE_EOF), deprecate_eof);
        }
    }
    let stats = server.stats();
    assert_eq!(stats.connections, 4);
    assert_eq!(stats.commands, 4, "one login each");
    server.stop().unwrap();
    assert!(!dir.socket().exists(), "the socket file is removed on stop");
}

#[test]
fn answers_queries_and_prepared_statements_over_both_transports() {
    let _serial = serial();
    let dir = TempDir::new("queries");
    let server = start(&dir, 3);
    for unix in [false, true] {
        for deprecate_eof in [true, false] {
            let mut c = Client::login(&server, unix, deprecate_eof);
            let o = c.query("SELECT c FROM sbtest1 WHERE id=7");
            assert_eq!((o.result_sets, o.rows, o.error), (1, 3, None));
            let o = c.query("SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN 1 AND 100");
            assert_eq!((o.result_sets, o.rows), (1, 1), "an aggregate has one row");
            assert_eq!(c.query("SELECT @@version").rows, 1, "no FROM: one row");
            let o = c.query("DELETE FROM sbtest1 WHERE id=1");
            assert_eq!((o.result_sets, o.affected_rows), (0, 1));
            let o = c.query("COMMIT");
            assert_eq!((o.result_sets, o.affected_rows, o.error), (0, 0, None));
            let o = c.query("SHOW TABLES");
            assert_eq!((o.result_sets, o.rows), (1, 0));

            let (select, params, columns) = c.prepare("SELECT id, k, c, pad FROM sbtest1 WHERE k IN (?, ?, ?)");
            assert_eq!((params, columns), (3, 4));
            let (update, params, columns) = c.prepare("UPDATE sbtest1 SET c=? WHERE id=?");
            assert_eq!((params, columns), (2, 0));
            assert_ne!(select, update);

            // Pipelined: 50 executes in one write, answered in order.
            let mut batch = Vec::new();
            for i in 0..25 {
                encode_execute(&mut batch, select, &[Param::I32(i), Param::I32(i), Param::I32(i)]);
                encode_execute(&mut batch, update, &[Param::Bytes(b"x"), Param::I32(i)]);
            }
            c.send(&batch);
            for _ in 0..25 {
                let o = c.response(RowFormat::Binary);
                assert_eq!((o.rows, o.error), (3, None));
                let o = c.response(RowFormat::Binary);
                assert_eq!((o.affected_rows, o.error), (1, None));
            }
            let mut ping = Vec::new();
            encode_ping(&mut ping);
            c.send(&ping);
            assert_eq!(c.response(RowFormat::Text).error, None);
            let o = c.query("SELECT pad FROM sbtest2");
            assert!(c.input.is_empty(), "nothing extra was sent");
            assert_eq!(o.rows, 3);
        }
    }
    server.stop().unwrap();
}

/// Reads the greeting from a fresh connection.
fn greeted(server: &NullServer, unix: bool) -> Box<dyn Socket> {
    let mut socket = connect(server, unix);
    let mut input = Vec::new();
    while decode_packet(&input, 0, 1 << 16).unwrap().is_none() {
        fill(&mut *socket, &mut input);
    }
    socket
}

fn assert_err_then_close(sent_back: &[u8], code: u16) {
    assert!(sent_back.len() > 7, "an ERR packet before the close, got {sent_back:?}");
    assert_eq!(sent_back[4], 0xFF, "an ERR packet, got {sent_back:?}");
    assert_eq!(u16::from_le_bytes([sent_back[5], sent_back[6]]), code);
}

#[test]
fn garbage_gets_an_error_and_a_close_and_the_listener_survives() {
    let _serial = serial();
    let dir = TempDir::new("garbage");
    let server = start(&dir, 1);
    for unix in [false, true] {
        // Before login: an HTTP request is no handshake response.
        let mut socket = greeted(&server, unix);
        socket.write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
        let mut back = Vec::new();
        let _ = socket.read_to_end(&mut back);
        assert_eq!(back[4], 0xFF);

        // After login: random bytes.
        let mut c = Client::login(&server, unix, true);
        let garbage: Vec<u8> = (0..200u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
        c.send(&garbage);
        assert_err_then_close(&c.read_to_close(), 1156);

        // A command packet with a bad sequence id.
        let mut c = Client::login(&server, unix, true);
        c.send(&[1, 0, 0, 5, 0x0e]);
        assert_err_then_close(&c.read_to_close(), 1156);

        // An execute too short to name its statement.
        let mut c = Client::login(&server, unix, true);
        c.send(&[2, 0, 0, 0, 0x17, 1]);
        assert_err_then_close(&c.read_to_close(), 1835);

        // An unknown command is answered and the connection stays.
        let mut c = Client::login(&server, unix, true);
        c.send(&[1, 0, 0, 0, 0x63]);
        assert_eq!(c.response(RowFormat::Text).error.map(|e| e.code), Some(1047));
        assert_eq!(c.query("SELECT 1").rows, 1);
    }
    // Still serving.
    let mut c = Client::login(&server, false, true);
    assert_eq!(c.query("SELECT c FROM sbtest1").rows, 1);
    server.stop().unwrap();
}

#[test]
fn a_client_leaving_mid_packet_is_dropped_quietly() {
    let _serial = serial();
    let dir = TempDir::new("midpacket");
    let server = start(&dir, 1);
    for unix in [false, true] {
        // Mid handshake response.
        let mut socket = greeted(&server, unix);
        socket.write_all(&[80, 0, 0, 1, 0x0d, 0xa6]).unwrap();
        drop(socket);
        // Mid command.
        let mut c = Client::login(&server, unix, true);
        let mut query = Vec::new();
        encode_query(&mut query, b"SELECT c FROM sbtest1 WHERE id=1");
        c.send(&query[..query.len() / 2]);
        drop(c);
        // Mid answer: a batch whose answers the client never reads.
        let mut c = Client::login(&server, unix, true);
        let batch: Vec<u8> = std::iter::repeat_n(query.clone(), 2000).flatten().collect();
        c.send(&batch);
        drop(c);
    }
    // The server has handled every byte of the six clients that left.
    common::wait_until("the six connections closed", Duration::from_secs(20), || server.stats().closed == 6);
    for unix in [false, true] {
        let mut c = Client::login(&server, unix, true);
        assert_eq!(c.query("SELECT c FROM sbtest1 WHERE id=1").rows, 1);
    }
    let stats = server.stats();
    assert_eq!(stats.connections, 8);
    server.stop().unwrap();
}

#[test]
fn refuses_a_stray_config() {
    let _serial = serial();
    assert!(NullServer::start(NullServerConfig::default()).is_err(), "no listener");
    let config = NullServerConfig {
        tcp: Some(SocketAddr::from(([127, 0, 0, 1], 0))),
        cpus: vec![100_000],
        ..NullServerConfig::default()
    };
    assert!(NullServer::start(config).is_err(), "no such cpu");
    let dir = TempDir::new("stray");
    std::fs::write(dir.socket(), b"not a socket").unwrap();
    let config = NullServerConfig { unix: Some(dir.socket()), ..NullServerConfig::default() };
    assert!(NullServer::start(config).is_err(), "a regular file is never replaced");
    assert_eq!(std::fs::read(dir.socket()).unwrap(), b"not a socket");
}

/// sysbench, or `None` (the test is skipped) when it is not installed,
/// unless WIREBENCH_REQUIRE_SERVER=1 demands it.
fn sysbench() -> Option<&'static str> {
    let found = Command::new("sysbench").arg("--version").output().is_ok_and(|o| o.status.success());
    if found {
        return Some("sysbench");
    }
    common::unavailable("sysbench is not installed (apt-get install sysbench)");
    None
}

fn run_sysbench(sysbench: &str, script: &str, command: &str, target: &[String]) {
    let output = Command::new(sysbench)
        .arg(script)
        .args(target)
        .args([
            "--mysql-user=x",
            "--mysql-password=y",
            "--mysql-db=sbtest",
            "--tables=2",
            "--table-size=100",
            "--threads=4",
            // A count of events, not a time: the same work on a fast
            // machine or a slow one; --time stays the bound of a stuck run.
            "--events=400",
            "--time=30",
            command,
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let context = format!("sysbench {script} {command} {target:?}:\n{stdout}\n{stderr}");
    assert!(output.status.success(), "{context}");
    assert!(!stdout.contains("FATAL") && !stderr.contains("FATAL"), "{context}");
    if command == "run" {
        assert!(stdout.contains("ignored errors:                      0 "), "{context}");
        let queries = stdout
            .lines()
            .find_map(|l| l.trim().strip_prefix("total:"))
            .and_then(|n| n.trim().parse::<u64>().ok())
            .unwrap_or(0);
        assert!(queries > 0, "{context}");
    }
}

#[test]
fn sysbench_runs_against_it_over_tcp_and_unix_socket() {
    let _serial = serial();
    let Some(sysbench) = sysbench() else { return };
    let dir = TempDir::new("sysbench");
    let server = start(&dir, 1);
    let port = server.local_addr().unwrap().port();
    let targets = [
        vec!["--mysql-host=127.0.0.1".to_string(), format!("--mysql-port={port}")],
        vec![format!("--mysql-socket={}", server.unix_path().unwrap().display())],
    ];
    let scripts = [
        "oltp_read_write",
        "oltp_point_select",
        "oltp_read_only",
        "oltp_insert",
        "select_random_points",
        "bulk_insert",
    ];
    for target in &targets {
        for script in scripts {
            run_sysbench(sysbench, script, "prepare", target);
            run_sysbench(sysbench, script, "run", target);
        }
    }
    assert!(server.stats().commands > 1000);
    server.stop().unwrap();
    assert!(!Path::new(&dir.socket()).exists());
}

#[test]
fn warm_connections_answer_without_allocating() {
    let _serial = serial();
    let dir = TempDir::new("alloc");
    let server = start(&dir, 1);
    for unix in [false, true] {
        let mut c = Client::login(&server, unix, true);
        let (select, _, _) = c.prepare("SELECT c FROM sbtest1 WHERE id=?");
        let (update, _, _) = c.prepare("UPDATE sbtest1 SET k=k+1 WHERE id=?");
        let mut batch = Vec::new();
        for i in 0..16 {
            encode_execute(&mut batch, select, &[Param::I32(i)]);
            encode_execute(&mut batch, update, &[Param::I32(i)]);
        }
        encode_query(&mut batch, b"SELECT id, k, c, pad FROM sbtest1 WHERE id BETWEEN 1 AND 10");
        encode_query(&mut batch, b"SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN 1 AND 10");
        encode_query(&mut batch, b"INSERT INTO sbtest1 (id, k, c, pad) VALUES (1, 2, 'c', 'pad')");
        let round = |c: &mut Client| {
            c.send(&batch);
            for _ in 0..16 {
                assert_eq!(c.response(RowFormat::Binary).rows, 1);
                assert_eq!(c.response(RowFormat::Binary).affected_rows, 1);
            }
            for _ in 0..3 {
                assert_eq!(c.response(RowFormat::Text).error, None);
            }
        };
        for _ in 0..100 {
            round(&mut c);
        }
        let before = ALLOCATIONS.load(Ordering::Relaxed);
        let rounds = 500;
        for _ in 0..rounds {
            round(&mut c);
        }
        let allocations = ALLOCATIONS.load(Ordering::Relaxed) - before;
        let queries = rounds * 35;
        assert!(allocations < 20, "{allocations} allocations for {queries} queries (unix: {unix})");
    }
    server.stop().unwrap();
}

#[test]
fn run_serves_until_its_shutdown_future_completes() {
    let _serial = serial();
    let dir = TempDir::new("run");
    let path = dir.socket();
    let config = NullServerConfig { unix: Some(path.clone()), ..NullServerConfig::default() };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = std::thread::spawn(move || {
        wirebench::null_server::run(config, async {
            let _ = stopped.await;
        })
    });
    common::wait_until("the server to come up", Duration::from_secs(20), || UnixStream::connect(&path).is_ok());
    stop.send(()).unwrap();
    server.join().unwrap().unwrap();
    assert!(!path.exists(), "the socket file is removed on shutdown");
}

/// A run's connections end with COM_QUIT, on both backends, as
/// libmysqlclient's `mysql_close` ends sysbench's: the server does not
/// count them as aborted.
#[test]
fn a_finished_run_closes_every_connection_with_com_quit() {
    let _serial = serial();
    let dir = TempDir::new("quit");
    let server = start(&dir, 1);
    let mut backends = vec!["epoll"];
    if common::ring_here() {
        backends.push("uring");
    }
    for io in backends {
        for pipeline in ["1", "4"] {
            let before = server.stats();
            let out = common::wirebench()
                .args(["oltp_read_only", "--mysql-host=127.0.0.1", "--mysql-user=x", "--mysql-db=sbtest"])
                .arg(format!("--mysql-port={}", server.local_addr().unwrap().port()))
                .args(["--threads=5", "--events=300", "--time=0", "--table-size=100"])
                .args([format!("--io={io}"), format!("--pipeline={pipeline}"), "run".to_string()])
                .output()
                .expect("wirebench runs");
            assert!(out.status.success(), "--io={io}: {}", String::from_utf8_lossy(&out.stderr));
            // A connection's quit is counted when the server has read it.
            common::wait_until("the run's connections closed", Duration::from_secs(20), || {
                server.stats().closed >= before.closed + 5
            });
            let now = server.stats();
            let (connections, quits) = (now.connections - before.connections, now.quits - before.quits);
            assert_eq!(connections, 5, "--io={io} --pipeline={pipeline}");
            assert_eq!(quits, connections, "--io={io} --pipeline={pipeline}: every connection says goodbye");
        }
    }
}

/// `--poll` shapes only the io_uring loop's waits: asked of the epoll
/// backend, it is named as not applying rather than silently dropped; the
/// retired `adaptive` is named as sleeping.
#[test]
fn poll_modes_that_do_not_apply_are_named() {
    let _serial = serial();
    let dir = TempDir::new("poll");
    let server = start(&dir, 1);
    let run = |io: &str, poll: &str| {
        let out = common::wirebench()
            .args(["oltp_point_select", "--mysql-host=127.0.0.1", "--mysql-user=x", "--mysql-db=sbtest"])
            .arg(format!("--mysql-port={}", server.local_addr().unwrap().port()))
            .args(["--threads=2", "--events=200", "--time=0", "--table-size=100"])
            .args([format!("--io={io}"), format!("--poll={poll}"), "run".to_string()])
            .output()
            .expect("wirebench runs");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "--io={io} --poll={poll}: {stderr}");
        assert!(String::from_utf8_lossy(&out.stdout).contains("queries:"));
        stderr
    };
    let ignored = |stderr: String| stderr.contains("applies to the io_uring backend");
    assert!(ignored(run("epoll", "spin")));
    assert!(!ignored(run("epoll", "sleep")));
    assert!(!ignored(run("epoll", "auto")), "the default is not named");
    if common::ring_here() {
        assert!(!ignored(run("uring", "spin")));
    }
    // The retired mode still runs, and says that it sleeps.
    for io in ["epoll", "auto"] {
        let stderr = run(io, "adaptive");
        assert!(stderr.contains("--poll=adaptive is retired and waits as --poll=sleep"), "--io={io}: {stderr}");
        assert!(!ignored(stderr), "--io={io}");
    }
}
