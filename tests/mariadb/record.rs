//! `wirebench record`, the recording proxy, between real clients and the
//! test MariaDB: sysbench with prepared statements (its report unchanged,
//! the capture's counts equal to what the server counted), the `mariadb`
//! CLI, a Python application on mysql-connector-python's prepared cursor
//! (and, over unix sockets on both legs, a server-side cursor's fetches),
//! TLS served with the test server's certificate (and refused without
//! one), wirebench's own compressed connections, a connection closed mid
//! command by either side, an upstream down at the start or gone later,
//! and the files SIGINT, `--time`, `--max-size` and kill -9 leave.
//!
//! The tests count the server's statements, so they run one at a time
//! (`common::serial`), on database sbtest_record.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{self, ScratchDir, TestServer};
use wirebench::client::{Connection, Endpoint};
use wirebench_capture::format::{CaptureReader, CloseReason, Ending, Record};

const DATABASE: &str = "sbtest_record";
/// How long a recording may take to start, or to end once told to.
const PATIENCE: Duration = Duration::from_secs(30);

/// A `wirebench record` running, its stderr read line by line.
struct Proxy {
    child: Child,
    port: u16,
    stderr: Receiver<String>,
    seen: Vec<String>,
}

impl Proxy {
    /// Starts record in front of `upstream` (`HOST:PORT`, or a unix
    /// socket's path), writing `dir/name`, on a port of its choosing;
    /// waits for its start line.
    fn start(upstream: &str, dir: &ScratchDir, name: &str, extra: &[&str]) -> Proxy {
        let out = dir.0.join(name);
        let upstream = if upstream.starts_with('/') {
            format!("--upstream-socket={upstream}")
        } else {
            format!("--upstream={upstream}")
        };
        let mut child = common::wirebench()
            .args(["record", "--listen=127.0.0.1:0", &upstream])
            .arg(format!("--out={}", out.display()))
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start wirebench record");
        let stderr = child.stderr.take().expect("piped stderr");
        let (lines, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = lines.send(line);
            }
        });
        let mut proxy = Proxy { child, port: 0, stderr: receiver, seen: Vec::new() };
        let line = proxy.wait_for_stderr("wirebench record: listening on 127.0.0.1:");
        let port = line.split("127.0.0.1:").nth(1).and_then(|rest| rest.split([',', ' ']).next());
        proxy.port = port.and_then(|p| p.parse().ok()).unwrap_or_else(|| panic!("no port in {line:?}"));
        proxy
    }

    /// Waits for a stderr line containing `text`; fails when record ends
    /// or `PATIENCE` passes first.
    #[track_caller]
    fn wait_for_stderr(&mut self, text: &str) -> String {
        let started = Instant::now();
        loop {
            match self.stderr.recv_timeout(PATIENCE.saturating_sub(started.elapsed())) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if line.contains(text) {
                        return line;
                    }
                }
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {
                    panic!("no line with {text:?} from wirebench record; it said:\n{}", self.seen.join("\n"))
                }
            }
        }
    }

    fn endpoint(&self) -> Endpoint {
        Endpoint::tcp("127.0.0.1", self.port)
    }

    fn signal(&self, signal: i32) {
        // SAFETY: kill(2) on our own child's pid.
        assert_eq!(unsafe { libc::kill(self.child.id() as i32, signal) }, 0);
    }

    /// Waits for record to end by itself (after a signal, --time,
    /// --max-size); its status, stdout, and all of its stderr.
    fn wait_end(mut self) -> (ExitStatus, String, String) {
        let (status, _) = common::exit_within(&mut self.child, PATIENCE)
            .unwrap_or_else(|| panic!("record did not end within {PATIENCE:?}"));
        let mut stdout = String::new();
        if let Some(mut out) = self.child.stdout.take() {
            let _ = std::io::Read::read_to_string(&mut out, &mut stdout);
        }
        self.seen.extend(self.stderr.try_iter());
        (status, stdout, self.seen.join("\n"))
    }

    /// SIGINT, then the end: record must say what it wrote and exit 0.
    #[track_caller]
    fn stop(self) -> String {
        self.signal(libc::SIGINT);
        let (status, stdout, stderr) = self.wait_end();
        assert!(status.success(), "record after SIGINT: {status}\n{stdout}\n{stderr}");
        assert!(stdout.contains("(ended by SIGINT)"), "{stdout}");
        stdout
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn upstream_of(server: &TestServer) -> String {
    format!("{}:{}", server.host, server.port)
}

/// `wirebench capture info --format=json FILE`, which must read it.
#[track_caller]
fn info(file: &Path) -> Value {
    let out = common::wirebench().args(["capture", "info", "--format=json"]).arg(file).output().unwrap();
    assert!(out.status.success(), "capture info: {}", common::text(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("capture info's JSON")
}

fn by_command(info: &Value, name: &str) -> u64 {
    info["by_command"][name].as_u64().unwrap_or(0)
}

/// Every record of a capture, owned; and how the file ended.
fn records(file: &Path) -> (Vec<Record<'static>>, Ending) {
    let mut reader = CaptureReader::open(std::fs::File::open(file).unwrap()).unwrap();
    let mut all = Vec::new();
    while let Some(record) = reader.next_record().unwrap() {
        all.push(record.into_owned());
    }
    let ending = reader.ending().cloned().expect("the reader says how the file ended");
    (all, ending)
}

/// The server's counters of statements, global.
async fn com_counters(server: &TestServer) -> BTreeMap<String, u64> {
    let mut conn = Connection::connect(&server.options(server.tcp())).await.unwrap();
    let response = conn
        .query(
            "SELECT VARIABLE_NAME, VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME IN \
             ('COM_STMT_PREPARE', 'COM_STMT_EXECUTE', 'COM_STMT_CLOSE')",
        )
        .await
        .unwrap();
    let counters = common::rows(&response)
        .into_iter()
        .map(|row| (row[0].clone().unwrap(), row[1].clone().unwrap().parse().unwrap()))
        .collect();
    conn.quit().await.unwrap();
    counters
}

/// `wirebench oltp_point_select` on sbtest_record at `port` (the server, or
/// a proxy in front of it) with `args`; its report, once it succeeded.
#[track_caller]
fn point_select(port: u16, args: &[&str]) -> String {
    let out = common::wirebench()
        .args(["oltp_point_select", "--mysql-host=127.0.0.1", &format!("--mysql-port={port}")])
        .args(["--mysql-user=sbtest", "--mysql-password=sbtest", "--tables=1", "--table-size=100"])
        .arg(format!("--mysql-db={DATABASE}"))
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}: {}{}", common::text(&out.stdout), common::text(&out.stderr));
    common::text(&out.stdout)
}

/// sbtest1 in sbtest_record, made again.
fn fresh_table(server: &TestServer) {
    point_select(server.port, &["cleanup"]);
    point_select(server.port, &["prepare"]);
}

/// `wirebench oltp_point_select run` through `proxy` in the background,
/// for up to a minute (the test ends it sooner).
fn background_load(proxy: &Proxy) -> Child {
    common::wirebench()
        .args(["oltp_point_select", "--mysql-host=127.0.0.1", &format!("--mysql-port={}", proxy.port)])
        .args(["--mysql-user=sbtest", "--mysql-password=sbtest", "--tables=1", "--table-size=100"])
        .arg(format!("--mysql-db={DATABASE}"))
        .args(["--threads=2", "--time=60", "run"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

/// sysbench through record: its report counts what it counts directly,
/// and the capture holds every command the server counted.
#[test]
fn sysbench_with_prepared_statements_is_recorded_whole() {
    let _one_at_a_time = common::serial();
    let Some(server) = TestServer::find() else { return };
    let Some(sysbench) = common::sysbench() else { return };
    let dir = ScratchDir::new("record-sysbench");
    let args = |port: u16, command: &str| {
        let mut args = vec!["oltp_read_write".to_owned(), format!("--mysql-host={}", server.host)];
        args.push(format!("--mysql-port={port}"));
        args.extend(
            ["--mysql-user=sbtest", "--mysql-password=sbtest", "--tables=2", "--table-size=1000"].map(String::from),
        );
        args.extend([format!("--mysql-db={DATABASE}"), "--db-ps-mode=auto".into(), "--threads=4".into()]);
        args.extend(["--events=100".into(), "--time=0".into(), command.into()]);
        args
    };
    let run = |port: u16, command: &str| {
        let out = Command::new(&sysbench).args(args(port, command)).output().unwrap();
        assert!(out.status.success(), "sysbench {command}: {}{}", common::text(&out.stdout), common::text(&out.stderr));
        common::text(&out.stdout)
    };
    run(server.port, "cleanup");
    run(server.port, "prepare");
    let proxy = Proxy::start(&upstream_of(&server), &dir, "sysbench.wbc", &[]);
    let before = runtime().block_on(com_counters(&server));
    let report = run(proxy.port, "run");
    let summary = proxy.stop();
    assert_eq!(common::number_after::<u64>(&report, "transactions:"), 100, "{report}");
    // A deadlock (ignored, the transaction retried) fails a statement the
    // report leaves out of its queries.
    let sent =
        common::number_after::<u64>(&report, "queries:") + common::number_after::<u64>(&report, "ignored errors:");
    let info = info(&dir.0.join("sysbench.wbc"));
    // The last COM_STMT_CLOSEs get no answer: the server may count them
    // after sysbench and the proxy are gone.
    let closes = by_command(&info, "COM_STMT_CLOSE");
    let mut after = BTreeMap::new();
    common::wait_until("the server to count the recorded closes", Duration::from_secs(10), || {
        after = runtime().block_on(com_counters(&server));
        after["COM_STMT_CLOSE"] - before["COM_STMT_CLOSE"] >= closes
    });
    let counted = |name: &str| after[name] - before[name];
    for command in ["COM_STMT_PREPARE", "COM_STMT_EXECUTE", "COM_STMT_CLOSE"] {
        assert_eq!(by_command(&info, command), counted(command), "{command}: {info}\n{summary}");
    }
    assert_eq!(by_command(&info, "COM_STMT_EXECUTE"), sent, "{report}");
    assert_eq!(info["connections"]["total"], 4, "{info}");
    assert_eq!(info["connections"]["users"]["sbtest"], 4, "{info}");
    assert_eq!(info["connections"]["ended"]["quit"], 4, "{info}");
    assert_eq!(info["complete"], true);
    let executes_and_prepares = by_command(&info, "COM_STMT_EXECUTE") + by_command(&info, "COM_STMT_PREPARE");
    assert_eq!(info["answers"].as_u64(), Some(executes_and_prepares), "every answer recorded: {info}");
    let top = info["top_by_count"].as_array().unwrap();
    let point = top.iter().find(|s| s["statement"] == "select c from sbtest1 where id = ?");
    assert!(point.is_some_and(|s| s["rows"].as_u64() == s["count"].as_u64()), "one row per point select: {top:?}");
    run(server.port, "cleanup");
}

/// The `mariadb` command-line client: its statements, a USE, an error.
#[test]
fn the_mariadb_client_is_recorded() {
    let _one_at_a_time = common::serial();
    let Some(server) = TestServer::find() else { return };
    if Command::new("mariadb").arg("--version").output().is_err() {
        return common::unavailable("the mariadb client is not installed (Debian package mariadb-client)");
    }
    let dir = ScratchDir::new("record-cli");
    let proxy = Proxy::start(&upstream_of(&server), &dir, "cli.wbc", &[]);
    let mut client = Command::new("mariadb")
        .args(["--skip-ssl", "-h127.0.0.1", &format!("-P{}", proxy.port), "-usbtest", "-psbtest", "--force"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let script = "SELECT 1;\nUSE sbtest_record;\nSELECT * FROM no_such_table;\nSELECT 'after the error';\n";
    std::io::Write::write_all(&mut client.stdin.take().unwrap(), script.as_bytes()).unwrap();
    let out = client.wait_with_output().unwrap();
    assert!(common::text(&out.stdout).contains("after the error"), "{}", common::text(&out.stderr));
    assert!(common::text(&out.stderr).contains("ERROR 1146"), "{}", common::text(&out.stderr));
    proxy.stop();
    let info = info(&dir.0.join("cli.wbc"));
    assert_eq!(by_command(&info, "COM_INIT_DB"), 1, "{info}");
    assert_eq!(info["errors_by_code"]["1146"], 1, "{info}");
    assert_eq!(info["connections"]["ended"]["quit"], 1, "{info}");
    let statements: Vec<&str> =
        info["top_by_count"].as_array().unwrap().iter().filter_map(|s| s["statement"].as_str()).collect();
    for statement in ["select ?", "select * from no_such_table"] {
        assert!(statements.contains(&statement), "{statement:?} not in {statements:?}");
    }
}

/// The Python interpreter with mysql-connector-python, as scripts/test.sh
/// installs it (WIREBENCH_TEST_PYTHON), or `None` after saying why.
pub(crate) fn python_with_connector() -> Option<PathBuf> {
    let python = std::env::var_os("WIREBENCH_TEST_PYTHON").map(PathBuf::from);
    let works = python.as_ref().is_some_and(|p| {
        Command::new(p).args(["-c", "import mysql.connector"]).output().is_ok_and(|o| o.status.success())
    });
    if !works {
        common::unavailable(
            "no Python with mysql-connector-python: scripts/test.sh makes one (target/python-venv) and sets \
             WIREBENCH_TEST_PYTHON",
        );
        return None;
    }
    python
}

const PYTHON_APP: &str = r#"
import sys
import mysql.connector
conn = mysql.connector.connect(host="127.0.0.1", port=int(sys.argv[1]), user="sbtest", password="sbtest",
                               database="sbtest_record", ssl_disabled=True, allow_local_infile=True)
cur = conn.cursor(prepared=True)
cur.execute("DROP TABLE IF EXISTS app_items")
cur.execute("CREATE TABLE app_items (id INT PRIMARY KEY, name VARCHAR(20), price DECIMAL(8,2))")
for i in range(5):
    cur.execute("INSERT INTO app_items VALUES (?, ?, ?)", (i, "item %d" % i, i * 1.5))
conn.commit()
for i in range(3):
    cur.execute("SELECT name, price FROM app_items WHERE id >= ?", (i,))
    print(len(cur.fetchall()))
cur.close()
for result in conn.cmd_query_iter("SELECT 1; SELECT 2, 3"):
    if "columns" in result:
        conn.get_rows()
conn.cmd_change_user(username="sbtest", password="sbtest", database="sbtest_record")
conn.cmd_reset_connection()
plain = conn.cursor()
plain.execute("LOAD DATA LOCAL INFILE '%s' INTO TABLE app_items" % sys.argv[2])
conn.commit()
plain.execute("SELECT COUNT(*) FROM app_items")
print(plain.fetchall()[0][0])
conn.close()
"#;

/// A Python application's server-side prepared statements, then a
/// multi-statement query, COM_CHANGE_USER (its scramble not kept),
/// COM_RESET_CONNECTION and LOAD DATA LOCAL INFILE (the file not kept).
#[test]
fn a_python_application_with_prepared_statements_is_recorded() {
    let _one_at_a_time = common::serial();
    let Some(server) = TestServer::find() else { return };
    let Some(python) = python_with_connector() else { return };
    let dir = ScratchDir::new("record-python");
    let app = dir.write("app.py", PYTHON_APP);
    let data = dir.write("items.tsv", "10\tfile line one\t1.00\n11\tfile line two\t2.00\n");
    let proxy = Proxy::start(&upstream_of(&server), &dir, "python.wbc", &[]);
    let out = Command::new(python).arg(&app).arg(proxy.port.to_string()).arg(&data).output().unwrap();
    assert!(out.status.success(), "the app: {}", common::text(&out.stderr));
    assert_eq!(common::text(&out.stdout), "5\n4\n3\n7\n");
    proxy.stop();
    let info = info(&dir.0.join("python.wbc"));
    assert!(by_command(&info, "COM_STMT_EXECUTE") >= 10, "{info}");
    assert!(by_command(&info, "COM_STMT_PREPARE") >= 2, "{info}");
    let top = info["top_by_count"].as_array().unwrap();
    let insert = top.iter().find(|s| s["statement"] == "insert into app_items values(?+)").expect("the insert");
    assert_eq!(insert["count"], 5, "{top:?}");
    let select = top.iter().find(|s| s["statement"] == "select name, price from app_items where id >= ?");
    assert_eq!(select.map(|s| (s["count"].clone(), s["rows"].clone())), Some((3.into(), 12.into())), "{top:?}");
    assert_eq!((by_command(&info, "COM_CHANGE_USER"), by_command(&info, "COM_RESET_CONNECTION")), (1, 1), "{info}");
    let (records, _) = records(&dir.0.join("python.wbc"));
    let checksums = records.iter().filter(|r| matches!(r, Record::Answer(a) if a.row_checksum.is_some())).count();
    assert!(checksums >= 3, "the selects' rows are checksummed");
    let answer_to = |text: &[u8]| {
        let at = records.iter().position(|r| matches!(r, Record::Command(c) if c.payload.ends_with(text)));
        let at = at.unwrap_or_else(|| panic!("no command ending {:?}", String::from_utf8_lossy(text)));
        records[at..].iter().find_map(|r| if let Record::Answer(a) = r { Some(a.clone()) } else { None }).unwrap()
    };
    assert_eq!(answer_to(b"SELECT 1; SELECT 2, 3").result_sets, Some(2));
    let load = answer_to(b"INTO TABLE app_items");
    assert!(load.local_infile && load.affected_rows == Some(2), "{load:?}");
    assert!(records
        .iter()
        .all(|r| !matches!(r, Record::Command(c) if c.payload.windows(13).any(|w| w == b"file line one"))));
    let change = records.iter().find_map(|r| match r {
        Record::Command(c) if c.command_byte() == Some(0x11) => Some(c.payload.to_vec()),
        _ => None,
    });
    assert!(change.is_some_and(|p| p.starts_with(b"\x11sbtest\0\0")), "COM_CHANGE_USER kept without its scramble");
}

const PYTHON_CURSOR: &str = r#"
import sys
import mysql.connector
conn = mysql.connector.connect(unix_socket=sys.argv[1], user="sbtest", password="sbtest",
                               database="sbtest_record", ssl_disabled=True, use_pure=True)
stmt = conn.cmd_stmt_prepare(b"SELECT seq FROM seq_1_to_5")
_, columns, _ = conn.cmd_stmt_execute(stmt["statement_id"], flags=1)  # CURSOR_TYPE_READ_ONLY
got = []
while True:
    conn.cmd_stmt_fetch(stmt["statement_id"], 2)
    rows, eof = conn.get_rows(binary=True, columns=columns)
    got += [row[0] for row in rows]
    if eof["status_flag"] & 128:  # SERVER_STATUS_LAST_ROW_SENT
        break
conn.cmd_stmt_close(stmt["statement_id"])
print(got)
conn.close()
"#;

/// Unix sockets on both legs (`--listen=PATH`, `--upstream-socket`), and
/// a server-side cursor read with COM_STMT_FETCH: each fetch's rows are
/// its answer's.
#[test]
fn unix_sockets_and_a_cursor_are_recorded() {
    let _one_at_a_time = common::serial();
    let Some(server) = TestServer::find() else { return };
    let Some(python) = python_with_connector() else { return };
    let Some(server_socket) = server.socket.clone() else {
        return common::unavailable("the test MariaDB's socket is not known (WIREBENCH_TEST_SOCKET)");
    };
    let dir = ScratchDir::new("record-socket");
    let app = dir.write("cursor.py", PYTHON_CURSOR);
    let listen = dir.0.join("record.sock");
    let listen_arg = format!("--listen={}", listen.display());
    let proxy = Proxy::start(&server_socket.display().to_string(), &dir, "socket.wbc", &[&listen_arg]);
    let start_line = proxy.seen.last().expect("record's start line");
    assert!(start_line.contains(&listen.display().to_string()), "{start_line}");
    let out = Command::new(python).arg(&app).arg(&listen).output().unwrap();
    assert!(out.status.success(), "the app: {}", common::text(&out.stderr));
    assert_eq!(common::text(&out.stdout), "[1, 2, 3, 4, 5]\n");
    proxy.stop();
    let (records, _) = records(&dir.0.join("socket.wbc"));
    let open = records.iter().find_map(|r| if let Record::Open(o) = r { Some(o.clone()) } else { None });
    let open = open.expect("the connection's open record");
    assert_eq!(open.client_addr.as_deref(), Some(b"socket".as_slice()), "{open:?}");
    assert_eq!(open.user.as_deref(), Some(b"sbtest".as_slice()), "{open:?}");
    let fetched: Vec<Option<u64>> = records
        .iter()
        .enumerate()
        .filter(|(_, r)| matches!(r, Record::Command(c) if c.command_byte() == Some(0x1c)))
        .map(|(at, _)| records[at..].iter().find_map(|r| if let Record::Answer(a) = r { Some(a.rows) } else { None }))
        .map(Option::flatten)
        .collect();
    assert_eq!(fetched, [Some(2), Some(2), Some(1)], "each COM_STMT_FETCH's rows");
}

/// With a certificate, a client's TLS is served and the upstream leg uses
/// TLS too (the REQUIRE SSL user logs in); without, the client is refused
/// and the log says what to do.
#[test]
fn tls_is_served_with_a_certificate_and_refused_without() {
    let _one_at_a_time = common::serial();
    let Some(server) = TestServer::find() else { return };
    let Some(tls) = common::tls_dir() else { return };
    if Command::new("mariadb").arg("--version").output().is_err() {
        return common::unavailable("the mariadb client is not installed (Debian package mariadb-client)");
    }
    let dir = ScratchDir::new("record-tls");
    let cert = format!("--ssl-cert={}", tls.join("server-cert.pem").display());
    let key = format!("--ssl-key={}", tls.join("server-key.pem").display());
    let proxy = Proxy::start(&upstream_of(&server), &dir, "tls.wbc", &[&cert, &key]);
    let mariadb = |port: u16| {
        Command::new("mariadb")
            .args(["--ssl", "--ssl-verify-server-cert", "-h127.0.0.1", &format!("-P{port}"), "-usbtest_tls"])
            .arg(format!("--ssl-ca={}", tls.join("cacert.pem").display()))
            .args(["-psbtest", "-N", "-e", "SHOW SESSION STATUS LIKE 'Ssl_version'"])
            .output()
            .unwrap()
    };
    let out = mariadb(proxy.port);
    assert!(common::text(&out.stdout).contains("TLSv1"), "{}", common::text(&out.stderr));
    proxy.stop();
    let (records, _) = records(&dir.0.join("tls.wbc"));
    let Some(Record::Open(open)) = records.first() else { panic!("{records:?}") };
    assert!(open.tls, "the open record says TLS");
    assert_eq!(open.user.as_deref(), Some(&b"sbtest_tls"[..]));
    assert!(records.iter().any(|r| matches!(r, Record::Answer(a) if a.rows == Some(1))));

    let mut plain = Proxy::start(&upstream_of(&server), &dir, "no-tls.wbc", &[]);
    assert!(!mariadb(plain.port).status.success(), "TLS refused without a certificate");
    plain.wait_for_stderr("a client asked for TLS: wirebench record cannot serve TLS without a certificate");
    let said = plain.seen.join("\n");
    assert!(said.contains("--ssl-cert=FILE --ssl-key=FILE, or connect without TLS"), "{said}");
    plain.stop();
}

/// wirebench's own compressed connections: forwarded as they are, read
/// from the inflated copy.
#[test]
fn compressed_connections_are_recorded() {
    let _one_at_a_time = common::serial();
    let Some(server) = TestServer::find() else { return };
    let dir = ScratchDir::new("record-compressed");
    fresh_table(&server);
    let proxy = Proxy::start(&upstream_of(&server), &dir, "compressed.wbc", &[]);
    let report =
        point_select(proxy.port, &["--mysql-compression=on", "--threads=2", "--events=300", "--time=0", "run"]);
    proxy.stop();
    assert_eq!(common::number_after::<u64>(&report, "queries:"), 300, "{report}");
    let (records, ending) = records(&dir.0.join("compressed.wbc"));
    assert!(matches!(ending, Ending::Clean(_)), "{ending:?}");
    let opens: Vec<_> = records.iter().filter_map(|r| if let Record::Open(o) = r { Some(o) } else { None }).collect();
    assert!(!opens.is_empty() && opens.iter().all(|o| o.compressed), "{opens:?}");
    let info = info(&dir.0.join("compressed.wbc"));
    assert_eq!(by_command(&info, "COM_STMT_EXECUTE"), 300, "{info}");
    let point = &info["top_by_count"][0];
    assert_eq!(
        (point["statement"].as_str(), point["rows"].as_u64()),
        (Some("select c from sbtest1 where id = ?"), Some(300))
    );
}

/// A client gone mid-command and a connection the server kills: each
/// side sees what it would see without the proxy, the capture says who
/// closed, and the proxy goes on.
#[test]
fn connections_closed_mid_command() {
    let _one_at_a_time = common::serial();
    let Some(server) = TestServer::find() else { return };
    let dir = ScratchDir::new("record-mid-command");
    let proxy = Proxy::start(&upstream_of(&server), &dir, "mid.wbc", &[]);
    let through = server.options(proxy.endpoint());
    runtime().block_on(async {
        let mut leaving = Connection::connect(&through).await.unwrap();
        let sleeping = tokio::time::timeout(Duration::from_millis(300), leaving.query("SELECT SLEEP(20)")).await;
        assert!(sleeping.is_err(), "the client gives up first");
        drop(leaving);

        let mut killed = Connection::connect(&through).await.unwrap();
        let id = common::rows(&killed.query("SELECT CONNECTION_ID()").await.unwrap())[0][0].clone().unwrap();
        let mut killer = Connection::connect(&server.options(server.tcp())).await.unwrap();
        let kill = async {
            // Mid-query: the server runs the SLEEP when the kill comes.
            let running = format!(
                "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = {id} AND INFO = 'SELECT SLEEP(20)'"
            );
            while common::rows(&killer.query(&running).await.unwrap())[0][0].as_deref() != Some("1") {
                // sleep: the poll of a wait for the query to run (as in wait_until).
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            killer.query_drop(&format!("KILL {id}")).await.unwrap();
        };
        let (answer, ()) = tokio::join!(killed.query("SELECT SLEEP(20)"), kill);
        let error = answer.expect_err("the killed connection's query fails").to_string();
        assert!(error.contains("1927") || error.contains("2013") || error.contains("closed"), "{error}");

        let mut after = Connection::connect(&through).await.unwrap();
        assert_eq!(common::rows(&after.query("SELECT 7").await.unwrap())[0][0].as_deref(), Some("7"));
        after.quit().await.unwrap();
        killer.quit().await.unwrap();
    });
    proxy.stop();
    let (records, _) = records(&dir.0.join("mid.wbc"));
    let closes: Vec<CloseReason> =
        records.iter().filter_map(|r| if let Record::Close(c) = r { Some(c.reason) } else { None }).collect();
    assert_eq!(closes, [CloseReason::ClientClosed, CloseReason::ServerClosed, CloseReason::Quit], "{records:?}");
}

/// Down at the start: record says so and exits 1, writing nothing. Gone
/// later: a new application connection gets ERR 2003 naming the upstream,
/// an open one sees its connection closed, and the file keeps what was
/// recorded.
#[test]
fn an_upstream_down_at_the_start_or_gone_later() {
    let _one_at_a_time = common::serial();
    let dir = ScratchDir::new("record-upstream");
    let closed_port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let out = common::wirebench()
        .args(["record", "--listen=127.0.0.1:0", &format!("--upstream=127.0.0.1:{closed_port}")])
        .arg(format!("--out={}", dir.0.join("never.wbc").display()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let said = common::text(&out.stderr);
    assert!(said.contains(&format!("cannot reach the server at 127.0.0.1:{closed_port}")), "{said}");
    assert!(said.contains("--upstream"), "{said}");
    assert!(!dir.0.join("never.wbc").exists());

    let mut upstream = common::wirebench()
        .args(["null-server", "--listen=127.0.0.1:0", "--cpus=0"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(upstream.stderr.take().unwrap()).lines();
    let line = lines.next().unwrap().unwrap();
    let address = line.rsplit(' ').next().unwrap().to_owned();
    // Its stderr stays open: a closed one would end it.
    std::thread::spawn(move || lines.for_each(drop));
    let proxy = Proxy::start(&address, &dir, "gone.wbc", &[]);
    let through = wirebench::client::ConnectOptions::new(proxy.endpoint(), "app", "");
    runtime().block_on(async {
        let mut open = Connection::connect(&through).await.unwrap();
        open.query_drop("SELECT 1").await.unwrap();
        upstream.kill().unwrap();
        upstream.wait().unwrap();
        assert!(open.query_drop("SELECT 2").await.is_err(), "the open connection is gone with its server");
        let refused = Connection::connect(&through).await.expect_err("no server behind the proxy").to_string();
        assert!(refused.contains("2003") && refused.contains(&format!("the server at {address}")), "{refused}");
    });
    let summary = proxy.stop();
    assert!(summary.contains("connections: 1;"), "{summary}");
    assert_eq!(info(&dir.0.join("gone.wbc"))["connections"]["ended"]["closed by the server"], 1);
}

/// `--time` and `--max-size` end a recording with a whole file.
#[test]
fn time_and_max_size_end_a_recording() {
    let _one_at_a_time = common::serial();
    let Some(server) = TestServer::find() else { return };
    let dir = ScratchDir::new("record-limits");
    let timed = Proxy::start(&upstream_of(&server), &dir, "timed.wbc", &["--time=1"]);
    let (status, stdout, stderr) = timed.wait_end();
    assert!(status.success() && stdout.contains("(ended by --time)"), "{status}\n{stdout}\n{stderr}");
    assert_eq!(info(&dir.0.join("timed.wbc"))["complete"], true);

    fresh_table(&server);
    let full = Proxy::start(&upstream_of(&server), &dir, "full.wbc", &["--max-size=16K"]);
    let mut load = background_load(&full);
    let (status, stdout, stderr) = full.wait_end();
    let _ = load.kill();
    let _ = load.wait();
    assert!(status.success() && stdout.contains("(ended by --max-size)"), "{status}\n{stdout}\n{stderr}");
    assert_eq!(info(&dir.0.join("full.wbc"))["complete"], true);
}

/// SIGINT mid-traffic leaves a whole file, its connections closed as
/// "open when the capture ended"; kill -9 one that reads to its last
/// whole block.
#[test]
fn sigint_and_kill_9_leave_readable_files() {
    let _one_at_a_time = common::serial();
    let Some(server) = TestServer::find() else { return };
    let dir = ScratchDir::new("record-signals");
    fresh_table(&server);
    for (signal, name) in [(libc::SIGINT, "sigint.wbc"), (libc::SIGKILL, "killed.wbc")] {
        let proxy = Proxy::start(&upstream_of(&server), &dir, name, &[]);
        let mut load = background_load(&proxy);
        let file = dir.0.join(name);
        // Two blocks sealed (one a second): records are on disk.
        common::wait_until("two blocks in the capture", PATIENCE, || {
            std::fs::read(&file).is_ok_and(|bytes| bytes.windows(4).filter(|w| w == b"WBLK").count() >= 2)
        });
        proxy.signal(signal);
        let (status, stdout, _) = proxy.wait_end();
        let _ = load.kill();
        let _ = load.wait();
        let (records, ending) = records(&file);
        assert!(records.iter().filter(|r| matches!(r, Record::Command(_))).count() > 10, "{name}");
        if signal == libc::SIGINT {
            assert!(status.success(), "{status}: {stdout}");
            assert!(matches!(ending, Ending::Clean(_)), "{ending:?}");
            let closes: Vec<CloseReason> =
                records.iter().filter_map(|r| if let Record::Close(c) = r { Some(c.reason) } else { None }).collect();
            // The load sees one connection cut and may quit the other first.
            let opens = records.iter().filter(|r| matches!(r, Record::Open(_))).count();
            assert_eq!(closes.len(), opens, "every connection's end is recorded: {closes:?}");
            assert!(closes.contains(&CloseReason::CaptureEnded), "{closes:?}");
        } else {
            assert!(matches!(ending, Ending::Truncated { .. }), "{ending:?}");
            let out = common::wirebench().args(["capture", "info"]).arg(&file).output().unwrap();
            assert!(out.status.success() && common::text(&out.stderr).contains("cut off at byte"));
        }
    }
}

/// Packets past 16 MiB both ways (a 20 MiB row, a 17 MiB statement) and a
/// procedure's several results pass, and are recorded whole.
#[test]
fn large_packets_and_multi_results_are_recorded() {
    let _one_at_a_time = common::serial();
    let Some(server) = TestServer::find() else { return };
    let dir = ScratchDir::new("record-large");
    let proxy = Proxy::start(&upstream_of(&server), &dir, "large.wbc", &[]);
    let mut through = server.options(proxy.endpoint());
    through.database = Some(DATABASE.to_owned());
    runtime().block_on(async {
        let mut conn = Connection::connect(&through).await.unwrap();
        common::expect_results_past_16_mib(&mut conn).await;
        conn.query_drop("DROP PROCEDURE IF EXISTS two_results").await.unwrap();
        conn.query_drop("CREATE PROCEDURE two_results() BEGIN SELECT 1; SELECT 2 UNION SELECT 3; END").await.unwrap();
        let outcome = conn.query_drop("CALL two_results()").await.unwrap();
        assert_eq!((outcome.result_sets, outcome.rows), (2, 3));
        conn.quit().await.unwrap();
    });
    proxy.stop();
    let (records, _) = records(&dir.0.join("large.wbc"));
    let big = 17 * 1024 * 1024;
    let statement = records.iter().position(|r| matches!(r, Record::Command(c) if c.payload.len() > big));
    let statement = statement.expect("the 17 MiB statement, joined from its packets");
    let Some(Record::Answer(answer)) = records[statement..].iter().find(|r| matches!(r, Record::Answer(_))) else {
        panic!()
    };
    assert_eq!(answer.rows, Some(1));
    let answers: Vec<_> =
        records.iter().filter_map(|r| if let Record::Answer(a) = r { Some(a) } else { None }).collect();
    assert!(
        answers.iter().any(|a| a.rows == Some(1) && a.columns == Some(2) && a.row_checksum.is_some()),
        "the 20 MiB row"
    );
    assert!(answers.iter().any(|a| a.rows == Some(20_000)));
    assert!(answers.iter().any(|a| a.result_sets == Some(2) && a.rows == Some(3)), "CALL's two results");
}
