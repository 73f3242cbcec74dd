//! TLS against the real MariaDB of `scripts/mariadb.sh`, which serves TLS
//! with the rig's certificates (WIREBENCH_TEST_TLS_DIR): logins of every
//! account kind, the server's own view of the cipher, commands and a 20 MiB
//! row both ways, the engine on both backends, and the same counts as
//! sysbench 1.0.20 with `--mysql-ssl=on`.
//!
//! Tables live in database sbtest_tls, which the rig grants to sbtest,
//! sbtest_tls and sbtest_x509; the tests that use sbtest_tls.sbtest1 run one
//! at a time.

use crate::common::{self, number_after};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{rows, Ran, ScratchDir, TestServer};
use wirebench::client::{ConnectOptions, Connection, Endpoint};
use wirebench::transport::client_tls;
use wirebench::transport::{SslMode, TlsOptions};
use wirebench_protocol::command::Param;
use wirebench_protocol::response::QueryResult;

use crate::common::serial;

const DB: &str = "sbtest_tls";

fn rig() -> Option<(TestServer, PathBuf)> {
    let server = TestServer::find()?;
    let dir = common::tls_dir()?;
    Some((server, dir))
}

/// Options for `user` over `endpoint` with TLS as `mysql` says.
fn options(endpoint: Endpoint, user: &str, mysql: &TlsOptions, cwd: &Path) -> ConnectOptions {
    let mut options = ConnectOptions::new(endpoint, user, "sbtest").database(DB);
    options.connect_timeout = std::time::Duration::from_secs(20);
    options.tls = client_tls(mysql, cwd).unwrap_or_else(|e| panic!("{e}")).tls;
    options
}

fn verify_identity(dir: &Path, client_cert: bool) -> TlsOptions {
    TlsOptions {
        mode: SslMode::VerifyIdentity,
        ca: Some(dir.join("ca.pem")),
        cert: client_cert.then(|| dir.join("client-cert.pem")),
        key: client_cert.then(|| dir.join("client-key.pem")),
        ..TlsOptions::default()
    }
}

/// The value of a `SHOW STATUS LIKE` variable on this connection.
async fn status(conn: &mut Connection, name: &str) -> String {
    let r = conn.query(&format!("SHOW SESSION STATUS LIKE '{name}'")).await.unwrap();
    rows(&r)[0][1].clone().unwrap_or_default()
}

/// rustls names TLS 1.3 suites TLS13_*, OpenSSL (and so the server) TLS_*.
fn openssl_name(rustls: &str) -> String {
    rustls.replacen("TLS13_", "TLS_", 1)
}

#[tokio::test]
async fn every_account_logs_in_over_tls_and_the_server_sees_it() {
    let Some((server, dir)) = rig() else { return };
    // sbtest with a client certificate it does not need: sent and ignored.
    for (user, cert) in [("sbtest", false), ("sbtest", true), ("sbtest_tls", false), ("sbtest_x509", true)] {
        let mut conn = Connection::connect(&options(server.tcp(), user, &verify_identity(&dir, cert), &dir))
            .await
            .unwrap_or_else(|e| panic!("{user}: {e}"));
        let ours = conn.tls_cipher().expect("a TLS connection");
        assert_eq!(status(&mut conn, "Ssl_cipher").await, openssl_name(ours), "{user}");
        assert_eq!(status(&mut conn, "Ssl_version").await, "TLSv1.3", "{user}");
        let who = rows(&conn.query("SELECT CURRENT_USER()").await.unwrap());
        assert_eq!(who[0][0].as_deref(), Some(&*format!("{user}@%")));
    }
    // TLS over the unix socket too; the host name checked is localhost.
    let mut conn = Connection::connect(&options(server.socket(), "sbtest_tls", &verify_identity(&dir, false), &dir))
        .await
        .unwrap_or_else(|e| panic!("socket: {e}"));
    assert!(!status(&mut conn, "Ssl_cipher").await.is_empty());
    // A TLS 1.2 suite named by --mysql-ssl-cipher is the one used.
    let mut mysql = verify_identity(&dir, false);
    mysql.cipher = "ECDHE-RSA-AES128-GCM-SHA256".into();
    let mut conn = Connection::connect(&options(server.tcp(), "sbtest_tls", &mysql, &dir)).await.unwrap();
    assert_eq!(status(&mut conn, "Ssl_cipher").await, "ECDHE-RSA-AES128-GCM-SHA256");
    assert_eq!(status(&mut conn, "Ssl_version").await, "TLSv1.2");
}

#[tokio::test]
async fn the_server_refuses_what_its_accounts_require() {
    let Some((server, dir)) = rig() else { return };
    // REQUIRE X509 without a client certificate.
    let err = Connection::connect(&options(server.tcp(), "sbtest_x509", &verify_identity(&dir, false), &dir))
        .await
        .unwrap_err();
    assert_eq!(err.server_error().map(|e| e.code), Some(1045), "{err}");
    // REQUIRE SSL without TLS.
    let plain = TlsOptions::default();
    let err = Connection::connect(&options(server.tcp(), "sbtest_tls", &plain, &dir)).await.unwrap_err();
    assert_eq!(err.server_error().map(|e| e.code), Some(1045), "{err}");
    // A CA that did not sign the server's certificate.
    let mut other = verify_identity(&dir, false);
    other.mode = SslMode::VerifyCa;
    other.ca = Some(dir.join("other-ca.pem"));
    let err = Connection::connect(&options(server.tcp(), "sbtest_tls", &other, &dir)).await.unwrap_err();
    let message = err.to_string();
    assert!(message.contains("TLS handshake failed") && message.contains("other-ca.pem"), "{message}");
}

#[tokio::test]
async fn commands_and_a_20_mib_row_both_ways_over_tls() {
    let Some((server, dir)) = rig() else { return };
    let mut conn =
        Connection::connect(&options(server.tcp(), "sbtest_tls", &verify_identity(&dir, false), &dir)).await.unwrap();
    conn.query("DROP TABLE IF EXISTS tls_commands").await.unwrap();
    conn.query("CREATE TABLE tls_commands (id INT PRIMARY KEY, k INT NOT NULL, b LONGBLOB)").await.unwrap();
    let insert = conn.prepare("INSERT INTO tls_commands (id, k, b) VALUES (?, ?, ?)").await.unwrap();
    for id in 1..=3 {
        let b = format!("row-{id}");
        let r = conn.execute(&insert, &[Param::I32(id), Param::I32(id * 10), Param::Blob(b.as_bytes())]).await.unwrap();
        assert!(matches!(r.results.as_slice(), [QueryResult::Ok(ok)] if ok.affected_rows == 1));
    }
    let select = conn.prepare("SELECT k, b FROM tls_commands WHERE id BETWEEN ? AND ? ORDER BY id").await.unwrap();
    let r = conn.execute(&select, &[Param::I32(2), Param::I32(3)]).await.unwrap();
    let s = |v: &str| Some(v.to_string());
    assert_eq!(rows(&r), vec![vec![s("20"), s("row-2")], vec![s("30"), s("row-3")]]);

    // 20 MiB up (a command split into 16 MiB packets, each encrypted in
    // turns), and down (a row split into two packets, many TLS records).
    let len = 20 * 1024 * 1024;
    let big: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
    conn.execute(&insert, &[Param::I32(4), Param::I32(40), Param::Blob(&big)]).await.unwrap();
    let r = conn.query("SELECT b FROM tls_commands WHERE id = 4").await.unwrap();
    let sets: Vec<_> = r.result_sets().collect();
    let got = sets[0].text_rows().unwrap().remove(0).remove(0).unwrap();
    assert_eq!(got.len(), len);
    assert!(got == big, "the 20 MiB row came back different");
    let r = conn.execute(&select, &[Param::I32(4), Param::I32(4)]).await.unwrap();
    assert_eq!(rows(&r)[0][1].as_ref().map(String::len), Some(len));
    conn.query("DROP TABLE tls_commands").await.unwrap();
}

/// `wirebench ARGS COMMAND` in `cwd` (where sysbench's TLS files are).
fn in_dir(cwd: &Path, args: &[String], command: &str) -> Ran {
    common::run(common::wirebench().args(args).arg(command).current_dir(cwd))
}

fn stdout_of(output: &Output, what: &str) -> String {
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{what} failed\nstdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// A directory as sysbench 1.0.20 wants it for `--mysql-ssl=on`.
fn sysbench_dir(dir: &Path, name: &str) -> ScratchDir {
    let scratch = ScratchDir::new(name);
    for file in ["cacert.pem", "client-cert.pem", "client-key.pem"] {
        std::fs::copy(dir.join(file), scratch.0.join(file)).unwrap();
    }
    scratch
}

fn mysql_args(server: &TestServer) -> Vec<String> {
    vec![
        "oltp_read_write".into(),
        format!("--mysql-host={}", server.host),
        format!("--mysql-port={}", server.port),
        "--mysql-user=sbtest_x509".into(),
        "--mysql-password=sbtest".into(),
        format!("--mysql-db={DB}"),
        "--mysql-ssl=on".into(),
        "--table-size=500".into(),
    ]
}

/// Server-wide count of finished TLS handshakes.
async fn tls_accepts(server: &TestServer, dir: &Path) -> u64 {
    let mut conn =
        Connection::connect(&options(server.tcp(), "sbtest_tls", &verify_identity(dir, false), dir)).await.unwrap();
    let r = conn.query("SHOW GLOBAL STATUS LIKE 'Ssl_finished_accepts'").await.unwrap();
    rows(&r)[0][1].as_deref().unwrap().parse().unwrap()
}

#[test]
fn the_engine_runs_over_tls_on_both_backends() {
    let Some((server, dir)) = rig() else { return };
    let _serial = serial();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let cwd = sysbench_dir(&dir, "tls-engine");
    let args = mysql_args(&server);
    in_dir(&cwd.0, &args, "cleanup").ok();
    in_dir(&cwd.0, &args, "prepare").ok();
    for io in ["uring", "epoll"] {
        for pipeline in [1, 4] {
            let events = 60;
            let mut run = args.clone();
            run.extend([
                format!("--io={io}"),
                format!("--pipeline={pipeline}"),
                "--threads=3".into(),
                format!("--events={events}"),
                "--time=0".into(),
                // Events in flight together may insert an id another one
                // has not deleted yet (with or without TLS).
                "--mysql-ignore-errors=1213,1020,1205,1062".into(),
            ]);
            let before = runtime.block_on(tls_accepts(&server, &dir));
            let output = in_dir(&cwd.0, &run, "run");
            let stderr = output.stderr.clone();
            let stdout = output.ok();
            assert!(!stderr.contains("not found"), "all three files are there: {stderr}");
            assert_eq!(number_after::<u64>(&stdout, "transactions:"), events, "{io} {pipeline}\n{stdout}");
            // Three connections on 500 rows may deadlock (1213, ignored as
            // sysbench does) or collide (1062): the event restarts and its
            // statements count again. A write that finds nothing to change (another
            // connection got there first) counts as other.
            let read = number_after::<u64>(&stdout, "read:");
            let (write, other) = (number_after::<u64>(&stdout, "write:"), number_after::<u64>(&stdout, "other:"));
            let ignored = number_after::<u64>(&stdout, "ignored errors:");
            if ignored == 0 {
                assert_eq!(read, 14 * events, "{io} {pipeline}");
                assert_eq!(write + other, 6 * events, "{io} {pipeline}");
            } else {
                assert!(read >= 14 * events && write + other + ignored >= 6 * events, "{io} {pipeline}\n{stdout}");
            }
            assert!(write > 3 * events, "{io} {pipeline}: {write} writes");
            // The 3 connections of the run, and the one counting, used TLS.
            assert!(runtime.block_on(tls_accepts(&server, &dir)) >= before + 4, "{io} {pipeline}");
        }
    }
    in_dir(&cwd.0, &args, "cleanup").ok();
}

/// TLS without a CA verifies nothing: the run says so once on stderr,
/// however many connections it opens, before the first one logs in.
#[test]
fn tls_without_a_ca_says_once_that_the_server_is_not_authenticated() {
    let Some((server, _dir)) = rig() else { return };
    let cwd = ScratchDir::new("tls-unverified");
    let args: Vec<String> = vec![
        "oltp_read_write".into(),
        format!("--mysql-host={}", server.host),
        format!("--mysql-port={}", server.port),
        "--mysql-user=sbtest_tls".into(),
        // Refused at login: the note must come before any password is sent.
        "--mysql-password=wrong".into(),
        format!("--mysql-db={DB}"),
        "--mysql-ssl=REQUIRED".into(),
        "--threads=4".into(),
    ];
    let output = in_dir(&cwd.0, &args, "prewarm");
    let stderr = &output.stderr;
    assert!(!output.succeeded(), "a wrong password must fail: {stderr}");
    let note = "--mysql-ssl=REQUIRED without --mysql-ssl-ca: the server certificate is not verified: the server is \
                not authenticated";
    assert_eq!(stderr.matches(note).count(), 1, "{stderr}");
    let (said, failed) = (stderr.find(note).unwrap(), stderr.find("Access denied").unwrap());
    assert!(said < failed, "the note comes first: {stderr}");
}

#[test]
fn same_counts_as_sysbench_with_mysql_ssl_on() {
    let Some((server, dir)) = rig() else { return };
    let Some(sysbench) = common::sysbench() else { return };
    let _serial = serial();
    let cwd = sysbench_dir(&dir, "tls-parity");
    let mut args = mysql_args(&server);
    args.extend(["--threads=1", "--events=150", "--time=0", "--rand-seed=777"].map(String::from));
    let run_tool = |program: &Path, command: &str| {
        let output = Command::new(program).args(&args).arg(command).current_dir(&cwd.0).output().unwrap();
        stdout_of(&output, &format!("{} {command}", program.display()))
    };
    let wirebench = Path::new(common::WIREBENCH);
    let counts = |report: &str| {
        ["read:", "write:", "other:", "transactions:", "ignored errors:"]
            .map(|label| number_after::<u64>(report, label))
    };
    run_tool(&sysbench, "cleanup");
    run_tool(&sysbench, "prepare");
    let theirs = counts(&run_tool(&sysbench, "run"));
    run_tool(&sysbench, "cleanup");
    run_tool(&sysbench, "prepare");
    let ours = counts(&run_tool(wirebench, "run"));
    run_tool(&sysbench, "cleanup");
    assert_eq!(ours, theirs, "wirebench vs sysbench: read, write, other, transactions, ignored errors");
    assert_eq!(theirs[3], 150);
}

#[test]
fn killed_tls_connections_reconnect_over_tls() {
    let Some((server, dir)) = rig() else { return };
    let _serial = serial();
    let cwd = sysbench_dir(&dir, "tls-reconnect");
    let mut args = mysql_args(&server);
    args[0] = "oltp_point_select".into();
    in_dir(&cwd.0, &args, "cleanup").ok();
    in_dir(&cwd.0, &args, "prepare").ok();
    let mut run = args.clone();
    run.extend(["--threads=2", "--time=4", "--mysql-ignore-errors=2013,2006"].map(String::from));
    let mut child = common::wirebench()
        .args(&run)
        .arg("run")
        .current_dir(&cwd.0)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let options = options(server.tcp(), "sbtest_x509", &verify_identity(&dir, true), &dir);
    let admin = std::cell::RefCell::new(runtime.block_on(Connection::connect(&options)).unwrap());
    let run_ids = "SELECT ID FROM information_schema.PROCESSLIST WHERE USER = 'sbtest_x509' AND ID <> CONNECTION_ID()";
    // Twice, once both connections are open (after the first kill, new
    // ones: the run reconnected over TLS).
    let (killed, stdout) = common::kill_once_connected(
        &mut child,
        (2, 2),
        || {
            let ids = runtime.block_on(admin.borrow_mut().query(run_ids)).unwrap();
            rows(&ids).into_iter().filter_map(|row| row[0].clone()).collect()
        },
        // Already gone (1094) is fine.
        |id| drop(runtime.block_on(admin.borrow_mut().query(&format!("KILL {id}")))),
    );
    let output = child.wait_with_output().unwrap();
    let stdout = stdout.rest();
    assert!(output.status.success(), "run with kills: {stdout}\n{}", common::text(&output.stderr));
    assert!(!killed.is_empty(), "nothing to kill: {stdout}");
    assert!(number_after::<u64>(&stdout, "reconnects:") > 0, "{stdout}");
    assert_eq!(number_after::<u64>(&stdout, "ignored errors:"), 0, "{stdout}");
    assert!(number_after::<u64>(&stdout, "transactions:") > 0, "{stdout}");
    in_dir(&cwd.0, &args, "cleanup").ok();
}
