//! `--mysql-compression=on` against the real MariaDB: the client logs in
//! compressed over TCP and the unix socket and runs queries, prepared
//! statements and 16 MiB+ rows and statements with results checked; the
//! engine runs compressed on both backends, pipelined or not, and through
//! reconnects; and sysbench with the same command line counts the same.
//!
//! The null server speaks it too, to sysbench as to wirebench.
//!
//! The engine and parity tests use their own tables in database sbtest_wl,
//! one test at a time. Needs the test server (see tests/common); the parity
//! test also needs sysbench 1.0.20.

use crate::common;

use std::process::Command;

use common::{affected, expect_local_infile_refused, expect_results_past_16_mib, rows, s, Ran, TestServer};
use wirebench::client::{ConnectOptions, Connection, Endpoint};
use wirebench::null_server::{NullServer, NullServerConfig};
use wirebench_protocol::command::{ExecuteTemplate, Param, ParamSlot};

const DB: &str = "sbtest_wl";

// The tests that use sbtest_wl's sysbench tables run one at a time.
use crate::common::serial;

async fn connect(server: &TestServer, endpoint: Endpoint) -> Connection {
    let mut options = server.options(endpoint);
    options.compression = true;
    let conn = Connection::connect(&options).await.unwrap_or_else(|e| panic!("{e}"));
    assert!(conn.is_compressed(), "MariaDB offers CLIENT_COMPRESS");
    conn
}

/// The server agrees the session is compressed, over both transports.
#[tokio::test]
async fn login_over_tcp_and_socket_is_compressed() {
    let Some(server) = TestServer::find() else { return };
    for endpoint in [server.tcp(), server.socket()] {
        let mut conn = connect(&server, endpoint.clone()).await;
        let status = conn.query("SHOW SESSION STATUS LIKE 'Compression'").await.unwrap();
        assert_eq!(rows(&status), vec![vec![s("Compression"), s("ON")]], "{endpoint}");
        assert_eq!(rows(&conn.query("SELECT 1 + 1").await.unwrap()), vec![vec![s("2")]]);
        conn.ping().await.unwrap();
        conn.quit().await.unwrap();
    }
    // Without the option nothing changes.
    let mut conn = Connection::connect(&server.options(server.tcp())).await.unwrap();
    assert!(!conn.is_compressed());
    let status = conn.query("SHOW SESSION STATUS LIKE 'Compression'").await.unwrap();
    assert_eq!(rows(&status), vec![vec![s("Compression"), s("OFF")]]);
}

#[tokio::test]
async fn query_prepare_and_execute_with_results_checked() {
    let Some(server) = TestServer::find() else { return };
    let mut conn = connect(&server, server.socket()).await;
    let table = "wb_compress_dml";
    conn.query(&format!("DROP TABLE IF EXISTS {table}")).await.unwrap();
    conn.query(&format!(
        "CREATE TABLE {table} (id INT NOT NULL PRIMARY KEY, k INT NOT NULL, c VARCHAR(1000) NOT NULL)"
    ))
    .await
    .unwrap();
    let insert = conn.prepare(&format!("INSERT INTO {table} (id, k, c) VALUES (?, ?, ?)")).await.unwrap();
    // Values long enough that the commands go out deflated (150 bytes or more).
    let c = |id: i32| format!("{id}-").repeat(100);
    for id in 1..=5 {
        let value = c(id);
        let params = [Param::I32(id), Param::I64(i64::from(id) * 10), Param::Bytes(value.as_bytes())];
        assert_eq!(affected(&conn.execute(&insert, &params).await.unwrap()), 1);
    }
    let select = conn.prepare(&format!("SELECT c, k FROM {table} WHERE id BETWEEN ? AND ? ORDER BY id")).await.unwrap();
    let r = conn.execute(&select, &[Param::I32(2), Param::I32(3)]).await.unwrap();
    assert_eq!(rows(&r), vec![vec![Some(c(2)), s("20")], vec![Some(c(3)), s("30")]]);
    let update = conn.prepare(&format!("UPDATE {table} SET k=k+1 WHERE id=?")).await.unwrap();
    assert_eq!(affected(&conn.execute(&update, &[Param::I32(4)]).await.unwrap()), 1);
    let r = conn.query(&format!("SELECT id, k, LENGTH(c) FROM {table} ORDER BY id")).await.unwrap();
    assert_eq!(
        rows(&r),
        (1..=5)
            .map(|id| vec![
                s(&id.to_string()),
                s(&(id * 10 + i32::from(id == 4)).to_string()),
                s(&c(id).len().to_string())
            ])
            .collect::<Vec<_>>()
    );
    // The hot path's pre-encoded execute, walked without decoding.
    let point = conn.prepare(&format!("SELECT c FROM {table} WHERE id=?")).await.unwrap();
    let mut template = ExecuteTemplate::new(point.statement_id(), &[ParamSlot::Int32]).unwrap();
    for (id, want_rows) in [(1, 1), (3, 1), (42, 0)] {
        template.set_i32(0, id).unwrap();
        let outcome = conn.execute_template(&template).await.unwrap();
        assert_eq!((outcome.result_sets, outcome.rows), (1, want_rows), "id {id}");
    }
    // A server error is data, and the stream stays in step after it.
    let err = conn.query("SELECT * FROM wb_no_such_table").await.unwrap_err();
    assert_eq!(err.server_error().map(|e| e.code), Some(1146), "{err}");
    for statement in [insert, select, update, point] {
        conn.close_statement(statement.statement_id()).await.unwrap();
    }
    conn.query(&format!("DROP TABLE {table}")).await.unwrap();
    conn.quit().await.unwrap();
}

/// Rows and statements past 16 MiB: the server's answer spans several
/// compressed packets with packets crossing their borders; a 17 MiB
/// statement takes two compressed packets, and the server numbers its
/// answer after them.
#[tokio::test]
async fn rows_and_statements_over_16_mib() {
    let Some(server) = TestServer::find() else { return };
    let mut conn = connect(&server, server.tcp()).await;
    expect_results_past_16_mib(&mut conn).await;
    // Incompressible rows: sent as they are inside compressed packets.
    let r = conn.query("SELECT SHA2(seq, 512) FROM seq_1_to_3").await.unwrap();
    assert_eq!(rows(&r).len(), 3);
    assert_eq!(rows(&conn.query("SELECT 'in step'").await.unwrap()), vec![vec![s("in step")]]);
}

/// LOAD DATA LOCAL: refused (MariaDB refuses by itself, as wirebench does
/// not offer LOCAL_FILES; were the file asked for, wirebench's empty reply
/// would continue the compressed numbering, see the protocol crate's
/// tests), and the stream stays in step.
#[tokio::test]
async fn local_infile_refusal_keeps_the_stream_in_step() {
    let Some(server) = TestServer::find() else { return };
    let mut conn = connect(&server, server.tcp()).await;
    expect_local_infile_refused(&mut conn, "wb_compress_infile").await;
}

fn connection_args(server: &TestServer) -> Vec<String> {
    vec![
        format!("--mysql-host={}", server.host),
        format!("--mysql-port={}", server.port),
        "--mysql-user=sbtest".into(),
        "--mysql-password=sbtest".into(),
        format!("--mysql-db={DB}"),
    ]
}

/// `program TEST ARGS COMMAND` (sysbench's command line, and ours).
fn run(program: impl AsRef<std::ffi::OsStr>, test: &str, args: &[String], command: &str) -> Ran {
    common::run(Command::new(program).arg(test).args(args).arg(command))
}

/// wirebench's run of the same command line, which must succeed.
fn ours_ok(test: &str, args: &[String], command: &str) -> Ran {
    let ran = run(common::WIREBENCH, test, args, command);
    assert!(ran.succeeded(), "{ran}");
    ran
}

fn counter(stdout: &str, label: &str) -> u64 {
    stdout
        .lines()
        .find_map(|l| l.trim_start().strip_prefix(label))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no {label:?} in\n{stdout}"))
}

/// read, write, other, transactions, ignored errors.
fn counts(stdout: &str) -> [u64; 5] {
    ["read:", "write:", "other:", "transactions:", "ignored errors:"].map(|label| counter(stdout, label))
}

fn with(mut args: Vec<String>, more: &[&str]) -> Vec<String> {
    args.extend(more.iter().map(|s| s.to_string()));
    args
}

/// oltp_read_write compressed (range selects of 100 rows come back in
/// compressed packets of 12 KB; INSERTs go out deflated) on each backend,
/// one and four commands in flight: every query answered and counted.
#[test]
fn the_engine_runs_compressed_on_both_backends_pipelined_or_not() {
    let Some(server) = TestServer::find() else { return };
    let _serial = serial();
    let tables = with(connection_args(&server), &["--tables=2", "--table-size=2000", "--mysql-compression=on"]);
    ours_ok("oltp_read_write", &tables, "cleanup");
    ours_ok("oltp_read_write", &tables, "prepare");
    for io in ["uring", "epoll"] {
        if io == "uring" && !common::ring_here() {
            continue;
        }
        for pipeline in ["1", "4"] {
            // A seed of its own per run: sysbench's default seed repeats the
            // previous run's values, so its non-index UPDATEs would write
            // the c they find, change no row and count as other.
            let seed = format!("--rand-seed={}{pipeline}", if io == "uring" { 1 } else { 2 });
            let args = with(
                tables.clone(),
                // --time=0: the count is the test, however slow the machine.
                &[
                    "--threads=1",
                    "--events=300",
                    "--time=0",
                    &format!("--io={io}"),
                    &format!("--pipeline={pipeline}"),
                    &seed,
                ],
            );
            let out = ours_ok("oltp_read_write", &args, "run");
            let [read, write, other, events, errors] = counts(&out.stdout);
            assert_eq!((events, errors), (300, 0), "--io={io} --pipeline={pipeline}");
            assert_eq!((read, write, other), (14 * 300, 4 * 300, 2 * 300), "--io={io} --pipeline={pipeline}");
            let stderr = out.stderr.as_str();
            assert!(!stderr.contains("warning"), "{stderr}");
        }
    }
    ours_ok("oltp_read_write", &tables, "cleanup");
}

/// Kills every connection in sbtest_wl but the caller's; returns how many.
/// The run's connections: those of user sbtest in `DB` but `conn`.
async fn run_ids(conn: &mut Connection) -> Vec<String> {
    let sql = format!(
        "SELECT id FROM information_schema.processlist WHERE db = '{DB}' AND user = 'sbtest' AND id <> CONNECTION_ID()"
    );
    let ids = conn.query(&sql).await.unwrap();
    ids.result_sets()
        .flat_map(|set| set.text_rows().unwrap())
        .map(|row| String::from_utf8_lossy(row[0].as_deref().unwrap()).into_owned())
        .collect()
}

/// Connections killed mid-run reconnect (2013/2006 ignored) compressed,
/// and the run goes on.
#[test]
fn killed_compressed_connections_reconnect() {
    let Some(server) = TestServer::find() else { return };
    let _serial = serial();
    let tables = with(connection_args(&server), &["--tables=1", "--table-size=1000", "--mysql-compression=on"]);
    ours_ok("oltp_point_select", &tables, "cleanup");
    ours_ok("oltp_point_select", &tables, "prepare");
    let args = with(tables.clone(), &["--threads=2", "--time=3", "--mysql-ignore-errors=2013,2006", "--io=epoll"]);
    let mut child = common::wirebench()
        .arg("oltp_point_select")
        .args(&args)
        .arg("run")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mut options = server.options(server.tcp());
    options.database = Some(DB.into());
    let admin = std::cell::RefCell::new(runtime.block_on(Connection::connect(&options)).unwrap());
    // Twice, once both connections are open (after the first kill, new
    // ones: the run reconnected, compressed).
    let (killed, stdout) = common::kill_once_connected(
        &mut child,
        (2, 2),
        || runtime.block_on(run_ids(&mut admin.borrow_mut())),
        |id| drop(runtime.block_on(admin.borrow_mut().query(&format!("KILL {id}")))),
    );
    let out = child.wait_with_output().unwrap();
    let stdout = stdout.rest();
    assert!(out.status.success(), "{stdout}\n{}", common::text(&out.stderr));
    assert!(!killed.is_empty(), "nothing to kill: {stdout}");
    assert!(counter(&stdout, "reconnects:") > 0, "{stdout}");
    assert!(counter(&stdout, "transactions:") > 0, "{stdout}");
    assert_eq!(counter(&stdout, "ignored errors:"), 0, "{stdout}");
    ours_ok("oltp_point_select", &tables, "cleanup");
}

/// sysbench 1.0.20 and wirebench, same compressed oltp_read_write command
/// line with a fixed seed: the same reads, writes, others and transactions.
#[test]
fn oltp_read_write_compressed_counts_what_sysbench_counts() {
    let Some(server) = TestServer::find() else { return };
    let Some(sysbench) = common::sysbench() else { return };
    let sysbench = sysbench.to_string_lossy().into_owned();
    let _serial = serial();
    let args = with(
        connection_args(&server),
        &[
            "--tables=2",
            "--table-size=200",
            "--threads=1",
            "--time=0",
            "--events=150",
            "--rand-seed=777",
            "--mysql-compression=on",
        ],
    );
    let fresh = || {
        run(&sysbench, "oltp_read_write", &args, "cleanup");
        let out = run(&sysbench, "oltp_read_write", &args, "prepare");
        assert!(out.succeeded(), "sysbench prepare: {}", out.stderr.as_str());
    };
    fresh();
    let theirs = run(&sysbench, "oltp_read_write", &args, "run");
    assert!(theirs.succeeded(), "sysbench run: {}", theirs.stderr.as_str());
    fresh();
    let ours = ours_ok("oltp_read_write", &args, "run");
    run(&sysbench, "oltp_read_write", &args, "cleanup");
    assert_eq!(counts(&ours.stdout), counts(&theirs.stdout));
    assert_eq!(counts(&theirs.stdout)[3], 150);
}

fn null_server(rows_per_select: usize) -> (NullServer, Endpoint) {
    let config = NullServerConfig { tcp: Some("127.0.0.1:0".parse().unwrap()), rows_per_select, ..Default::default() };
    let server = NullServer::start(config).expect("the null server starts");
    let addr = server.local_addr().expect("it listens on TCP");
    (server, Endpoint::tcp(addr.ip().to_string(), addr.port()))
}

/// The null server offers compression: the client's queries, prepared
/// statements (answers deflated once, then reused) and a 90 KB answer go
/// through it.
#[tokio::test]
async fn the_null_server_speaks_compression() {
    let (_server, endpoint) = null_server(500);
    let mut options = ConnectOptions::new(endpoint, "anyone", "anything").database("sbtest");
    options.compression = true;
    let mut conn = Connection::connect(&options).await.unwrap();
    assert!(conn.is_compressed());
    let r = conn.query("SELECT c FROM sbtest1 WHERE id BETWEEN 1 AND 500").await.unwrap();
    let rows = rows(&r);
    assert_eq!(rows.len(), 500);
    assert!(rows.iter().all(|row| row[0].as_deref().is_some_and(|c| c.len() == 119)), "{:?}", rows[0]);
    let r = conn.query("SELECT c, pad FROM sbtest1 WHERE id BETWEEN 1 AND 500").await.unwrap();
    assert_eq!(r.result_sets().map(|set| set.rows.len()).sum::<usize>(), 500);
    let point = conn.prepare("SELECT c FROM sbtest1 WHERE id=?").await.unwrap();
    let template = ExecuteTemplate::new(point.statement_id(), &[ParamSlot::Int32]).unwrap();
    for _ in 0..3 {
        assert_eq!(conn.execute_template(&template).await.unwrap().rows, 500);
    }
    let update = conn.prepare("UPDATE sbtest1 SET c=? WHERE id=?").await.unwrap();
    let long = "u".repeat(400);
    let r = conn.execute(&update, &[Param::Bytes(long.as_bytes()), Param::I32(1)]).await.unwrap();
    assert_eq!(affected(&r), 1);
    conn.ping().await.unwrap();
    conn.quit().await.unwrap();
}

/// The engine on both backends, pipelined, and sysbench, compressed
/// against the null server: every event answered.
#[test]
fn the_engine_and_sysbench_run_compressed_against_the_null_server() {
    let (_server, endpoint) = null_server(1);
    let Endpoint::Tcp { host, port } = endpoint else { unreachable!() };
    let args = vec![
        format!("--mysql-host={host}"),
        format!("--mysql-port={port}"),
        "--mysql-user=x".into(),
        "--mysql-password=y".into(),
        "--tables=1".into(),
        "--table-size=1000".into(),
        "--threads=2".into(),
        "--events=500".into(),
        "--mysql-compression=on".into(),
    ];
    for io in ["uring", "epoll"] {
        if io == "uring" && !common::ring_here() {
            continue;
        }
        for pipeline in ["1", "4"] {
            let args = with(args.clone(), &[&format!("--io={io}"), &format!("--pipeline={pipeline}")]);
            let out = ours_ok("oltp_read_write", &args, "run");
            assert_eq!(counts(&out.stdout), [14 * 500, 4 * 500, 2 * 500, 500, 0], "--io={io} --pipeline={pipeline}");
            assert!(!out.stderr.as_str().contains("warning"));
        }
    }
    let Some(sysbench) = common::sysbench() else { return };
    let out = run(&sysbench, "oltp_read_write", &args, "run");
    assert!(out.succeeded(), "{}", out.stderr.as_str());
    assert_eq!(counts(&out.stdout), [14 * 500, 4 * 500, 2 * 500, 500, 0]);
}

/// A server that offers everything MariaDB 10.11 offers but compression:
/// MariaDB's own greeting with CLIENT_COMPRESS cleared; any login is OK,
/// any command gets an OK.
fn server_without_compression() -> std::net::SocketAddr {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            std::thread::spawn(move || {
                let caps_low: u16 = 0xf7fe & !0x20;
                let mut payload = vec![10];
                payload.extend_from_slice(b"5.5.5-10.11.19-MariaDB-0+deb12u1\0");
                payload.extend_from_slice(&[4, 0, 0, 0]);
                payload.extend_from_slice(b"abcdefgh\0");
                payload.extend_from_slice(&caps_low.to_le_bytes());
                payload.extend_from_slice(&[45, 2, 0, 0xff, 0x81, 21, 0, 0, 0, 0, 0, 0, 0x1d, 0, 0, 0]);
                payload.extend_from_slice(b"ijklmnopqrst\0mysql_native_password\0");
                let mut greeting = vec![payload.len() as u8, 0, 0, 0];
                greeting.extend_from_slice(&payload);
                let ok = |seq: u8| [7, 0, 0, seq, 0, 0, 0, 2, 0, 0, 0];
                if stream.write_all(&greeting).is_err() {
                    return;
                }
                let mut answered_login = false;
                loop {
                    let mut header = [0u8; 4];
                    if stream.read_exact(&mut header).is_err() {
                        return;
                    }
                    let len = usize::from(header[0]) | usize::from(header[1]) << 8 | usize::from(header[2]) << 16;
                    let mut body = vec![0; len];
                    if stream.read_exact(&mut body).is_err() || (answered_login && body.first() == Some(&1)) {
                        return;
                    }
                    let reply = ok(if answered_login { 1 } else { 2 });
                    answered_login = true;
                    if stream.write_all(&reply).is_err() {
                        return;
                    }
                }
            });
        }
    });
    addr
}

/// Against a server that does not offer compression the run goes on
/// uncompressed, as with libmysqlclient, but says so once.
#[test]
fn a_server_without_compression_gets_one_warning_and_an_uncompressed_run() {
    let addr = server_without_compression();
    let args = vec![
        "--mysql-host=127.0.0.1".to_string(),
        format!("--mysql-port={}", addr.port()),
        "--mysql-user=x".into(),
        "--mysql-password=y".into(),
        "--tables=1".into(),
        "--threads=3".into(),
        "--mysql-compression=on".into(),
    ];
    let out = ours_ok("oltp_point_select", &args, "prewarm");
    let stderr = out.stderr.as_str();
    let warnings: Vec<_> = stderr.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(warnings[0].contains(&format!("127.0.0.1:{}", addr.port())), "{stderr}");
    assert!(warnings[0].contains("10.11.19-MariaDB") && warnings[0].contains("uncompressed"), "{stderr}");
}

/// A proxy to `server` that adds 5 to the sequence id of every compressed
/// packet the server sends (the outer, 7-byte header's; the login before
/// compression starts passes as it is): a server that numbers its
/// compressed packets from a counter of its own, as node-mysql2 numbers
/// plain ones.
fn renumbering_proxy(server: std::net::SocketAddr) -> std::net::SocketAddr {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(mut client) = client else { return };
            let Ok(mut upstream) = std::net::TcpStream::connect(server) else { return };
            let (Ok(mut to_server), Ok(mut from_server)) = (client.try_clone(), upstream.try_clone()) else { return };
            std::thread::spawn(move || std::io::copy(&mut client, &mut upstream));
            std::thread::spawn(move || {
                // Plain packets up to the login's OK, then compressed ones.
                let mut header = [0u8; 4];
                let mut greeted = false;
                loop {
                    if from_server.read_exact(&mut header).is_err() {
                        return;
                    }
                    let len = usize::from(header[0]) | usize::from(header[1]) << 8 | usize::from(header[2]) << 16;
                    let mut body = vec![0; len];
                    if from_server.read_exact(&mut body).is_err()
                        || to_server.write_all(&header).is_err()
                        || to_server.write_all(&body).is_err()
                    {
                        return;
                    }
                    if greeted && body.first() == Some(&0x00) {
                        break;
                    }
                    greeted = true;
                }
                let mut header = [0u8; 7];
                while from_server.read_exact(&mut header).is_ok() {
                    let len = usize::from(header[0]) | usize::from(header[1]) << 8 | usize::from(header[2]) << 16;
                    let mut body = vec![0; len];
                    header[3] = header[3].wrapping_add(5);
                    if from_server.read_exact(&mut body).is_err()
                        || to_server.write_all(&header).is_err()
                        || to_server.write_all(&body).is_err()
                    {
                        return;
                    }
                }
            });
        }
    });
    addr
}

/// The real MariaDB, compressed, behind a proxy that renumbers its
/// compressed packets: tolerated as libmariadb tolerates it (sysbench runs
/// the same through it), counted once per answer, and every query answered.
#[test]
fn compressed_packets_numbered_by_the_server_are_followed_and_counted() {
    let Some(server) = TestServer::find() else { return };
    let _serial = serial();
    let upstream =
        std::net::ToSocketAddrs::to_socket_addrs(&(server.host.as_str(), server.port)).unwrap().next().unwrap();
    let tables = with(connection_args(&server), &["--tables=1", "--table-size=1000"]);
    ours_ok("oltp_point_select", &tables, "cleanup");
    ours_ok("oltp_point_select", &tables, "prepare");
    let proxy = renumbering_proxy(upstream);
    let mut args = with(
        tables.clone(),
        &["--threads=2", "--time=0", "--events=300", "--db-ps-mode=disable", "--mysql-compression=on"],
    );
    args.retain(|a| !a.starts_with("--mysql-host=") && !a.starts_with("--mysql-port="));
    args.extend(["--mysql-host=127.0.0.1".to_string(), format!("--mysql-port={}", proxy.port())]);
    let ours = ours_ok("oltp_point_select", &args, "run");
    let [read, write, other, events, errors] = counts(&ours.stdout);
    assert_eq!((read, write, other, events, errors), (300, 0, 0, 300, 0));
    let stdout = ours.stdout.as_str();
    let renumbered = counter(&ours.stdout, "sequence_renumbered:");
    assert!(renumbered >= 300, "one per answer at least:\n{stdout}");
    let stderr = ours.stderr.as_str();
    assert_eq!(stderr.matches("numbers its packets from its own counter").count(), 1, "{stderr}");
    if let Some(sysbench) = common::sysbench() {
        let theirs = run(&sysbench, "oltp_point_select", &args, "run");
        assert!(theirs.succeeded(), "sysbench through the proxy: {}", theirs.stderr.as_str());
        assert_eq!(counts(&theirs.stdout), [300, 0, 0, 300, 0]);
    }
    ours_ok("oltp_point_select", &tables, "cleanup");
}
