//! `--db-ps-mode=disable`, `--mysql-dry-run` and reconnects.
//!
//! - In memory: an emulating session sends, as COM_QUERY text, exactly the
//!   values a prepared-mode session with the same seed binds; a session
//!   told it reconnected starts its event over with the new statement ids.
//! - The wirebench binary with `--mysql-dry-run`, against no server at all.
//! - Against the test MariaDB (skipped without one unless
//!   WIREBENCH_REQUIRE_SERVER=1): disable mode's counts, and the statement
//!   texts compared with what sysbench 1.0.20 sends in disable mode (both
//!   runs traced with strace, same `--rand-seed`); connections killed with
//!   `KILL` mid-run, which reconnect when 2013/2006 are ignored and end the
//!   run with a clear message when not. The killed connections are found
//!   through a TCP proxy in this file, so no other client's are touched.
//!
//! The server cases create and drop `sbtest1` in the database named by
//! WIREBENCH_PS_DB (default `sbtest`); they run one at a time.

use crate::common;

use std::collections::BTreeMap;
use std::io;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{Ran, TestServer};
use wirebench::client::Connection;
use wirebench::driver::{Budget, EventPipeline, RunControl};
use wirebench::rand::{RandConfig, RandParams, Rng};
use wirebench::workload::{self, EmulatedStatement, OltpOptions, ScriptContext, StatementSpec};
use wirebench_protocol::command::{ExecuteTemplate, ParamSlot};
use wirebench_protocol::constants::command::{COM_QUERY, COM_QUIT, COM_STMT_EXECUTE};
use wirebench_protocol::framing::{Header, HEADER_LEN};
use wirebench_protocol::Capabilities;

static SERIAL: Mutex<()> = Mutex::new(());

fn database() -> String {
    std::env::var("WIREBENCH_PS_DB").unwrap_or_else(|_| "sbtest".to_string())
}

// ---------------------------------------------------------------------------
// In memory

/// `(payload of each command packet)` in `bytes`.
fn packets(bytes: &[u8]) -> Vec<&[u8]> {
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(header) = bytes.get(at..).and_then(Header::parse) {
        found.push(&bytes[at + HEADER_LEN..at + HEADER_LEN + header.len]);
        at += HEADER_LEN + header.len;
    }
    assert_eq!(at, bytes.len(), "a partial packet");
    found
}

/// The SQL a COM_STMT_EXECUTE stands for, its values printed as sysbench's
/// `db_print_value` prints them: decoded from the binary protocol here,
/// independently of the code under test.
fn substitute(payload: &[u8], statements: &[StatementSpec], first_id: u32) -> String {
    assert_eq!(payload[0], COM_STMT_EXECUTE);
    let id = u32::from_le_bytes(payload[1..5].try_into().unwrap());
    let spec = &statements[(id - first_id) as usize];
    let n = spec.slots.len();
    // flags (1), iteration count (4), then with parameters: NULL bitmap,
    // new-params flag, types.
    let mut at = if n == 0 { 10 } else { 10 + n.div_ceil(8) + 1 + 2 * n };
    let mut values = Vec::new();
    for slot in &spec.slots {
        match *slot {
            ParamSlot::Int64 => {
                values.push(i64::from_le_bytes(payload[at..at + 8].try_into().unwrap()).to_string());
                at += 8;
            }
            ParamSlot::Bytes { len } => {
                assert!(len < 251, "one-byte length prefix");
                assert_eq!(payload[at] as usize, len);
                values.push(format!("'{}'", String::from_utf8(payload[at + 1..at + 1 + len].to_vec()).unwrap()));
                at += 1 + len;
            }
            other => panic!("the workloads bind no {other:?}"),
        }
    }
    assert_eq!(at, payload.len());
    let mut pieces = spec.sql.split('?');
    let mut sql = pieces.next().unwrap().to_string();
    for (piece, value) in pieces.zip(values) {
        sql.push_str(&value);
        sql.push_str(piece);
    }
    sql
}

const CAPS: Capabilities =
    Capabilities(Capabilities::PROTOCOL_41.0 | Capabilities::TRANSACTIONS.0 | Capabilities::DEPRECATE_EOF.0);

fn session(test: &str, emulated: bool, pipeline: usize) -> (EventPipeline, Vec<StatementSpec>) {
    let options = OltpOptions { tables: 3, table_size: 10_000, ..OltpOptions::default() };
    let workload = workload::Test::from_name(test).unwrap().workload(&options).unwrap();
    let statements = workload.statements();
    let templates: Vec<_> =
        statements.iter().enumerate().map(|(i, s)| ExecuteTemplate::new(i as u32 + 1, &s.slots).unwrap()).collect();
    let params = RandParams::new(&RandConfig::default()).unwrap();
    let script = workload.script(ScriptContext { thread: 0, threads: 1 });
    let emulated = emulated.then(|| EmulatedStatement::all(&statements).unwrap().into());
    let session =
        EventPipeline::new(0, script, Rng::for_thread(42, 0, params), templates, CAPS, pipeline).emulating(emulated);
    (session, statements)
}

/// The next `n` commands a session sends (its answers never come).
fn commands(session: &mut EventPipeline, n: usize) -> Vec<u8> {
    let mut budget = Budget::new(RunControl::new(None, 1), None);
    let mut out = Vec::new();
    let sent = session.fill(&mut out, 0, &mut budget).unwrap();
    assert_eq!(sent, n);
    out
}

#[test]
fn emulated_statements_carry_the_values_prepared_ones_bind() {
    for test in ["oltp_read_write", "oltp_point_select", "select_random_ranges", "select_random_points"] {
        let events = 200;
        let per_event = if test == "oltp_read_write" { 20 } else { 1 };
        let n = events * per_event;
        let (mut prepared, statements) = session(test, false, n);
        let (mut emulated, _) = session(test, true, n);
        let (binary, text) = (commands(&mut prepared, n), commands(&mut emulated, n));
        for (i, (b, t)) in packets(&binary).into_iter().zip(packets(&text)).enumerate() {
            assert_eq!(t[0], COM_QUERY, "{test} command {i} is not COM_QUERY");
            let text = std::str::from_utf8(&t[1..]).unwrap();
            let expected = match b[0] {
                COM_QUERY => std::str::from_utf8(&b[1..]).unwrap().to_string(),
                _ => substitute(b, &statements, 1),
            };
            assert_eq!(text, expected, "{test} command {i}");
            assert!(!text.contains('?'), "{text}");
        }
    }
}

#[test]
fn a_reconnected_session_starts_its_event_over_with_the_new_ids() {
    let (mut session, statements) = session("oltp_read_write", false, 6);
    let first = commands(&mut session, 6);
    let first = packets(&first);
    assert_eq!(first[0], b"\x03BEGIN");
    assert_eq!(session.in_flight(), 6);
    let new_ids: Vec<u32> = (0..statements.len() as u32).map(|i| 1000 + i).collect();
    session.reconnected(CAPS, &new_ids);
    assert_eq!(session.in_flight(), 0);
    let again = commands(&mut session, 6);
    let again = packets(&again);
    assert_eq!(again[0], b"\x03BEGIN", "the event starts over");
    for payload in &again[1..] {
        assert_eq!(payload[0], COM_STMT_EXECUTE);
        let id = u32::from_le_bytes(payload[1..5].try_into().unwrap());
        assert!((1000..1000 + statements.len() as u32).contains(&id), "statement id {id}");
        // The values are new draws, as sysbench's re-run event() makes.
        let sql = substitute(payload, &statements, 1000);
        assert!(sql.starts_with("SELECT c FROM sbtest"), "{sql}");
    }
}

// ---------------------------------------------------------------------------
// The binary

fn args(line: &str) -> Vec<String> {
    line.split_whitespace().map(String::from).collect()
}

/// A number from the report: `read:`, `transactions:`, `reconnects:` ...
fn counter(report: &str, name: &str) -> u64 {
    report
        .lines()
        .find_map(|l| l.trim_start().strip_prefix(name))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in\n{report}"))
}

/// A TCP port nothing listens on.
fn closed_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[test]
fn dry_run_needs_no_server() {
    let nowhere = format!("--mysql-host=127.0.0.1 --mysql-port={}", closed_port());
    let out = common::run_wirebench(&args(&format!("oltp_read_only {nowhere} --mysql-dry-run --time=1 run")));
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    for line in ["Threads started!", "SQL statistics:", "General statistics:", "Latency (ms):", "Threads fairness:"] {
        assert!(out.stdout.contains(line), "no {line:?} in\n{}", out.stdout);
    }
    // sysbench's dry run counts every query as "other".
    let queries = counter(&out.stdout, "queries:");
    assert!(queries > 0, "{}", out.stdout);
    assert_eq!((counter(&out.stdout, "read:"), counter(&out.stdout, "write:")), (0, 0));
    assert_eq!(counter(&out.stdout, "other:"), queries);
    assert_eq!(counter(&out.stdout, "transactions:") * 16, queries);

    // An exact budget over several threads.
    let out = common::run_wirebench(&args(&format!(
        "oltp_read_write {nowhere} --mysql-dry-run --events=100 --threads=3 run"
    )));
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    assert_eq!(counter(&out.stdout, "transactions:"), 100);
    assert_eq!(counter(&out.stdout, "other:"), 2000);

    for (command, says) in [("prepare", "Creating table 'sbtest1'..."), ("cleanup", "Dropping table 'sbtest1'...")] {
        let out = common::run_wirebench(&args(&format!(
            "oltp_read_only {nowhere} --mysql-dry-run --table-size=10 {command}"
        )));
        assert_eq!(out.code, Some(0), "{command}: {}\n{}", out.stdout, out.stderr);
        assert!(out.stdout.contains(says), "{command}: {}", out.stdout);
    }

    // Without the dry run, the same command line needs the server.
    let out = common::run_wirebench(&args(&format!("oltp_read_only {nowhere} --time=1 run")));
    assert_eq!(out.code, Some(1), "{}", out.stdout);
}

// ---------------------------------------------------------------------------
// Against the server

fn connection_args(host: &str, port: u16) -> String {
    format!(
        "--mysql-host={host} --mysql-port={port} --mysql-user=sbtest --mysql-password=sbtest --mysql-db={}",
        database()
    )
}

/// Drops and re-creates `sbtest1` with `rows` rows.
fn prepare_table(server: &TestServer, rows: u32) {
    let connect = connection_args(&server.host, server.port);
    for command in ["cleanup", "prepare"] {
        let out = common::run_wirebench(&args(&format!(
            "oltp_read_write {connect} --tables=1 --table-size={rows} {command}"
        )));
        assert_eq!(out.code, Some(0), "{command}: {}\n{}", out.stdout, out.stderr);
    }
}

fn cleanup_table(server: &TestServer) {
    let connect = connection_args(&server.host, server.port);
    common::run_wirebench(&args(&format!("oltp_read_write {connect} --tables=1 cleanup")));
}

#[test]
fn disable_mode_counts_as_sysbench() {
    let Some(server) = TestServer::find() else { return };
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // Large enough that the two threads' transactions seldom meet on a row.
    prepare_table(&server, 10_000);
    let connect = connection_args(&server.host, server.port);
    for (test, reads, writes, others) in [("oltp_read_write", 14, 4, 2), ("oltp_point_select", 1, 0, 0)] {
        let line =
            format!("{test} {connect} --tables=1 --table-size=10000 --db-ps-mode=disable --events=50 --threads=2 run");
        let r = &run_without_deadlocks(&args(&line));
        assert_eq!(counter(r, "transactions:"), 50, "{r}");
        assert_eq!(
            (counter(r, "read:"), counter(r, "write:"), counter(r, "other:")),
            (50 * reads, 50 * writes, 50 * others),
            "{test}: {r}"
        );
    }
    cleanup_table(&server);
}

/// The report of a run of `args` in which no deadlock restarted an event.
/// When the threads do meet, InnoDB rolls one transaction back, the event
/// starts over (an ignored error, as in sysbench) and its queries count
/// twice; that is right but not the count under test, so the run is
/// repeated. Three deadlocks in a row are not chance: the test fails.
fn run_without_deadlocks(args: &[String]) -> String {
    common::in_one_of_three_runs(|| {
        let out = common::run_wirebench(args);
        assert_eq!(out.code, Some(0), "{args:?}: {}\n{}", out.stdout, out.stderr);
        match counter(&out.stdout, "ignored errors:") {
            0 => Ok(out.stdout),
            _ => Err(format!("a deadlock restarted an event:\n{}", out.stdout)),
        }
    })
}

/// `program`, or `None` (with a message) to skip; with
/// WIREBENCH_REQUIRE_SERVER=1 a missing one fails the test.
fn tool(program: &str, env: &str) -> Option<PathBuf> {
    let path = PathBuf::from(std::env::var_os(env).unwrap_or_else(|| program.into()));
    let runs = Command::new(&path).arg("--version").output().is_ok_and(|o| o.status.success());
    if runs {
        return Some(path);
    }
    common::unavailable(&format!("no runnable {program} (install it, or set {env})"));
    None
}

/// The commands a program sends after logging in, from an strace of it:
/// the bytes written to each descriptor that starts with a login (sequence
/// id 1), walked as packets. A COM_QUERY is its SQL text; any other command
/// (a COM_STMT_PREPARE would be a bug in disable mode) is `#<command byte>`
/// and its payload; the COM_QUIT at the end is left out.
fn traced_queries(strace: &Path, program: &Path, args: &[String], name: &str) -> Vec<String> {
    let trace = std::env::temp_dir().join(format!("wirebench-ps-mode-{}-{name}.trace", std::process::id()));
    let out = Command::new(strace)
        .args(["-f", "-xx", "-s", "100000", "-e", "trace=sendto,write", "-o"])
        .arg(&trace)
        .arg(program)
        .args(args)
        .output()
        .expect("strace runs");
    assert!(
        out.status.success(),
        "{name}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&trace).unwrap();
    let _ = std::fs::remove_file(&trace);
    // One process, so descriptors name sockets (strace -f prefixes the
    // thread id, which does not matter).
    let mut streams: BTreeMap<u32, Vec<u8>> = BTreeMap::new();
    for line in text.lines() {
        let call = line.trim_start_matches(|c: char| c.is_ascii_digit()).trim_start();
        let Some(rest) = call.strip_prefix("sendto(").or_else(|| call.strip_prefix("write(")) else { continue };
        let Some((fd, rest)) = rest.split_once(", \"") else { continue };
        let hex = rest.split('"').next().unwrap();
        let bytes: Vec<u8> = hex.split("\\x").skip(1).map(|h| u8::from_str_radix(h, 16).unwrap()).collect();
        streams.entry(fd.parse().unwrap()).or_default().extend(bytes);
    }
    let mut queries = Vec::new();
    for stream in streams.values().filter(|s| s.get(3) == Some(&1)) {
        let mut at = 0;
        while let Some(header) = stream.get(at..).and_then(Header::parse) {
            let Some(payload) = stream.get(at + HEADER_LEN..at + HEADER_LEN + header.len) else { break };
            match payload.split_first() {
                Some((&COM_QUERY, sql)) if header.seq == 0 => queries.push(String::from_utf8_lossy(sql).into_owned()),
                Some((&COM_QUIT, _)) => {}
                Some((command, rest)) if header.seq == 0 => {
                    queries.push(format!("#{command:#04x} {}", String::from_utf8_lossy(rest)));
                }
                _ => {}
            }
            at += HEADER_LEN + header.len;
        }
    }
    queries
}

#[test]
fn disable_mode_sends_what_sysbench_sends() {
    let Some(server) = TestServer::find() else { return };
    let Some(sysbench) = tool("sysbench", "WIREBENCH_SYSBENCH") else { return };
    let Some(strace) = tool("strace", "WIREBENCH_STRACE") else { return };
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    prepare_table(&server, 1000);
    let connect = connection_args(&server.host, server.port);
    for (test, per_event) in [("oltp_read_write", 20), ("oltp_point_select", 1)] {
        let line = format!(
            "{test} {connect} --tables=1 --table-size=1000 --db-ps-mode=disable --events=3 --threads=1 --rand-seed=1 run"
        );
        let theirs = traced_queries(&strace, &sysbench, &args(&line), &format!("{test}-sysbench"));
        // The epoll backend: io_uring's sends are not system calls strace sees.
        let ours = traced_queries(
            &strace,
            Path::new(common::WIREBENCH),
            &args(&format!("{line} --io=epoll")),
            &format!("{test}-wirebench"),
        );
        assert_eq!(theirs.len(), 3 * per_event, "{test}: sysbench sent {theirs:#?}");
        assert_eq!(ours, theirs, "{test}");
        assert!(ours.iter().any(|q| q.starts_with("SELECT c FROM sbtest1 WHERE id=")), "{ours:#?}");
    }
    cleanup_table(&server);
}

/// A TCP proxy to the server that remembers the local port of each of its
/// server-side connections: the server's processlist shows them as
/// `127.0.0.1:port`, so the test kills its own connections only. A side
/// that closes is passed on as a close of the other.
struct Proxy {
    addr: SocketAddr,
    upstream_ports: Arc<Mutex<Vec<u16>>>,
}

impl Proxy {
    fn start(upstream: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let upstream_ports = Arc::new(Mutex::new(Vec::new()));
        let ports = upstream_ports.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let (Ok(client), Ok(server)) = (client, TcpStream::connect(upstream)) else { continue };
                ports.lock().unwrap().push(server.local_addr().unwrap().port());
                pipe(client.try_clone().unwrap(), server.try_clone().unwrap());
                pipe(server, client);
            }
        });
        Proxy { addr, upstream_ports }
    }
}

fn pipe(mut from: TcpStream, mut to: TcpStream) {
    std::thread::spawn(move || {
        let _ = io::copy(&mut from, &mut to);
        let _ = to.shutdown(Shutdown::Write);
    });
}

/// Kills (`KILL <id>`) every server connection the proxy opened so far;
/// returns how many.
/// The server's ids of the proxy's connections still open.
fn proxied_ids(runtime: &tokio::runtime::Runtime, conn: &mut Connection, proxy: &Proxy) -> Vec<String> {
    let ports: Vec<String> = proxy.upstream_ports.lock().unwrap().iter().map(u16::to_string).collect();
    if ports.is_empty() {
        return Vec::new();
    }
    let sql = format!(
        "SELECT id FROM information_schema.processlist WHERE SUBSTRING_INDEX(host, ':', -1) IN ({})",
        ports.join(",")
    );
    let response = runtime.block_on(conn.query(&sql)).unwrap();
    response
        .result_sets()
        .flat_map(|set| set.text_rows().unwrap())
        .map(|row| String::from_utf8(row[0].clone().unwrap().to_vec()).unwrap())
        .collect()
}

/// Runs oltp_point_select on two connections through a proxy for 4
/// seconds; `kills` times, once both connections are open (new ones after
/// a kill: the run reconnected), kills them on the server.
fn run_with_kills(server: &TestServer, extra: &str, kills: usize) -> (Ran, String) {
    let upstream = (server.host.as_str(), server.port).to_socket_addrs().unwrap().next().unwrap();
    let proxy = Proxy::start(upstream);
    let endpoint = proxy.addr.to_string();
    let connect = connection_args("127.0.0.1", proxy.addr.port());
    let line = format!("oltp_point_select {connect} --tables=1 --table-size=1000 --threads=2 --time=4 {extra} run");
    let mut child =
        common::wirebench().args(args(&line)).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let admin = std::cell::RefCell::new(runtime.block_on(Connection::connect(&server.options(server.tcp()))).unwrap());
    let (killed, stdout) = common::kill_once_connected(
        &mut child,
        (kills, 2),
        || proxied_ids(&runtime, &mut admin.borrow_mut(), &proxy),
        // It may be gone already.
        |id| drop(runtime.block_on(admin.borrow_mut().query(&format!("KILL {id}")))),
    );
    let out = child.wait_with_output().unwrap();
    let output = Ran {
        command: line,
        code: out.status.code(),
        stdout: stdout.rest(),
        stderr: common::text(&out.stderr),
        took: Duration::ZERO,
    };
    assert!(!killed.is_empty(), "nothing to kill: {}\n{}", output.stdout, output.stderr);
    (output, endpoint)
}

#[test]
fn killed_connections_reconnect_when_2013_and_2006_are_ignored() {
    let Some(server) = TestServer::find() else { return };
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    prepare_table(&server, 1000);
    let modes = ["--io=epoll", "--io=uring", "--io=epoll --db-ps-mode=disable", "--io=uring --db-ps-mode=disable"];
    let modes = modes.iter().chain(["--io=uring --pipeline=4", "--io=epoll --pipeline=4"].iter());
    for mode in modes.filter(|m| !m.contains("uring") || common::ring_here()) {
        let (out, _) = run_with_kills(&server, &format!("--mysql-ignore-errors=2013,2006 {mode}"), 2);
        assert_eq!(out.code, Some(0), "{mode}: {}\n{}", out.stdout, out.stderr);
        assert!(counter(&out.stdout, "reconnects:") > 0, "{mode}: {}", out.stdout);
        assert_eq!(counter(&out.stdout, "ignored errors:"), 0, "{mode}: {}", out.stdout);
        assert!(counter(&out.stdout, "transactions:") > 0, "{mode}: {}", out.stdout);
    }
    cleanup_table(&server);
}

#[test]
fn a_killed_connection_is_fatal_unless_ignored() {
    let Some(server) = TestServer::find() else { return };
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    prepare_table(&server, 1000);
    let (out, endpoint) = run_with_kills(&server, "", 1);
    assert_eq!(out.code, Some(1), "{}\n{}", out.stdout, out.stderr);
    let fatal = out.stderr.lines().find(|l| l.starts_with("FATAL: ")).unwrap_or_else(|| panic!("{}", out.stderr));
    assert!(fatal.contains(&endpoint), "{fatal}");
    assert!(fatal.contains("2013") || fatal.contains("2006"), "{fatal}");
    assert!(fatal.contains("--mysql-ignore-errors"), "{fatal}");
    cleanup_table(&server);
}
