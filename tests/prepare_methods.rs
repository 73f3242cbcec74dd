//! `prepare`'s two ways of sending the rows against the real MariaDB:
//! LOAD DATA LOCAL INFILE from memory makes the same tables as sysbench's
//! INSERTs (schema, AUTO_INCREMENT, indexes, every row: CHECKSUM TABLE
//! EXTENDED) and prints the same lines; with the server's local_infile off,
//! `auto` falls back to INSERTs (and says so at --verbosity=4), `load-data`
//! refuses in one line.

use std::process::{Command, Output};

mod common;

use common::{rows, TestServer};
use wirebench::client::Connection;

const TABLES: u32 = 3;

/// The tests share the tables sbtest1..3: one at a time.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn wirebench(server: &TestServer, args: &[&str]) -> Output {
    let socket = server.socket.as_ref().expect("WIREBENCH_TEST_SOCKET");
    Command::new(env!("CARGO_BIN_EXE_wirebench"))
        .arg("oltp_read_write")
        .arg(format!("--mysql-socket={}", socket.display()))
        .args(["--mysql-user=sbtest", "--mysql-password=sbtest", "--mysql-db=sbtest"])
        .arg(format!("--tables={TABLES}"))
        .args(["--table-size=20000", "--threads=2", "--rand-seed=11"])
        .args(args)
        .output()
        .expect("wirebench runs")
}

fn prepare(server: &TestServer, args: &[&str]) -> String {
    let cleanup = wirebench(server, &["cleanup"]);
    assert!(cleanup.status.success(), "{}", String::from_utf8_lossy(&cleanup.stderr));
    let out = wirebench(server, &[args, &["prepare"]].concat());
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Per table: SHOW CREATE TABLE, its indexes, and CHECKSUM TABLE EXTENDED.
async fn tables(conn: &mut Connection) -> Vec<Vec<Vec<Option<String>>>> {
    let mut out = Vec::new();
    for t in 1..=TABLES {
        out.push(rows(&conn.query(&format!("SHOW CREATE TABLE sbtest{t}")).await.unwrap()));
        let indexes = format!("SELECT index_name, column_name FROM information_schema.statistics WHERE table_schema = 'sbtest' AND table_name = 'sbtest{t}' ORDER BY 1, 2");
        out.push(rows(&conn.query(&indexes).await.unwrap()));
        out.push(rows(&conn.query(&format!("CHECKSUM TABLE sbtest{t} EXTENDED")).await.unwrap()));
    }
    out
}

async fn connect(server: &TestServer) -> Connection {
    Connection::connect(&server.options(server.socket())).await.unwrap_or_else(|e| panic!("{e}"))
}

#[tokio::test]
async fn load_data_makes_the_tables_inserts_make() {
    let Some(server) = TestServer::find() else { return };
    let _serial = SERIAL.lock().await;
    let mut conn = connect(&server).await;
    for auto_inc in ["--auto_inc=on", "--auto_inc=off"] {
        let said_by_inserts = prepare(&server, &[auto_inc, "--prepare-method=insert"]);
        let by_inserts = tables(&mut conn).await;
        let said_by_data = prepare(&server, &[auto_inc, "--prepare-method=load-data"]);
        let by_data = tables(&mut conn).await;
        assert_eq!(by_data, by_inserts, "{auto_inc}");
        // The two connections' lines interleave as they happen to.
        let sorted = |text: &str| {
            let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
            lines.sort();
            lines
        };
        assert_eq!(sorted(&said_by_data), sorted(&said_by_inserts), "{auto_inc}: the same lines");
        assert!(said_by_data.contains("Inserting 20000 records into 'sbtest3'"), "{said_by_data}");
        let index = &by_data[1];
        assert!(index.iter().any(|row| row[0].as_deref() == Some("k_1")), "{index:?}");
        let count = rows(&conn.query("SELECT COUNT(*), MIN(id), MAX(id) FROM sbtest2").await.unwrap());
        assert_eq!(count, [[Some("20000".into()), Some("1".into()), Some("20000".into())]]);
    }
    assert!(wirebench(&server, &["cleanup"]).status.success());
}

/// Sets the server's local_infile as its administrator (the OS user over
/// the socket), or says why it cannot.
fn set_local_infile(server: &TestServer, on: bool) -> Result<(), String> {
    let socket = server.socket.as_ref().ok_or("no socket")?;
    let out = Command::new("mariadb")
        .args(["--no-defaults", "--protocol=socket"])
        .arg(format!("--socket={}", socket.display()))
        .arg(format!("--execute=SET GLOBAL local_infile={}", u8::from(on)))
        .output()
        .map_err(|e| format!("cannot run mariadb: {e}"))?;
    out.status.success().then_some(()).ok_or_else(|| String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Turns local_infile back on however the test ends.
struct LocalInfileOff<'a>(&'a TestServer);

impl Drop for LocalInfileOff<'_> {
    fn drop(&mut self) {
        if let Err(e) = set_local_infile(self.0, true) {
            eprintln!("could not turn local_infile back on: {e}");
        }
    }
}

#[tokio::test]
async fn local_infile_off_falls_back_to_inserts_or_refuses() {
    let Some(server) = TestServer::find() else { return };
    let _serial = SERIAL.lock().await;
    if let Err(e) = set_local_infile(&server, false) {
        assert!(std::env::var("WIREBENCH_REQUIRE_SERVER").is_err(), "cannot turn local_infile off: {e}");
        eprintln!("skipped: cannot turn local_infile off: {e}");
        return;
    }
    let _restore = LocalInfileOff(&server);
    let mut conn = connect(&server).await;
    let said = prepare(&server, &[]);
    assert!(said.contains("Creating a secondary index on 'sbtest1'..."), "{said}");
    let by_fallback = tables(&mut conn).await;
    assert_eq!(rows(&conn.query("SELECT COUNT(*) FROM sbtest3").await.unwrap()), [[Some("20000".into())]]);

    assert!(wirebench(&server, &["cleanup"]).status.success());
    let debug = wirebench(&server, &["--verbosity=4", "prepare"]);
    let stderr = String::from_utf8_lossy(&debug.stderr);
    assert!(debug.status.success(), "{stderr}");
    assert!(stderr.contains("wirebench: prepare sends INSERTs: the server has local_infile=0"), "{stderr}");
    assert_eq!(tables(&mut conn).await, by_fallback);
    let quiet = wirebench(&server, &["cleanup"]);
    assert!(quiet.status.success());
    let quiet = wirebench(&server, &["prepare"]);
    assert!(String::from_utf8_lossy(&quiet.stderr).is_empty(), "nothing said at the default verbosity");

    assert!(wirebench(&server, &["cleanup"]).status.success());
    let refused = wirebench(&server, &["--prepare-method=load-data", "prepare"]);
    assert_eq!(refused.status.code(), Some(1));
    let text = [refused.stdout, refused.stderr].concat();
    let text = String::from_utf8_lossy(&text);
    assert!(
        text.contains("--prepare-method=load-data: the server has local_infile=0")
            && text.contains("--prepare-method=insert"),
        "{text}"
    );
    assert!(!text.contains("Creating table"), "nothing created: {text}");
    assert!(wirebench(&server, &["cleanup"]).status.success());
}

/// `--report-interval` during a long prepare: rows and rows/s per table on
/// stderr, stdout the same as without it.
#[tokio::test]
async fn report_interval_shows_rows_per_second_per_table() {
    let Some(server) = TestServer::find() else { return };
    let _serial = SERIAL.lock().await;
    let _ = wirebench(&server, &["cleanup"]);
    // INSERTs of 300,000 rows take seconds here: at least one report.
    let args = ["--prepare-method=insert", "--tables=1", "--table-size=300000", "--threads=1", "--report-interval=1"];
    let out = wirebench(&server, &[&args[..], &["prepare"]].concat());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let report = stderr
        .lines()
        .find(|l| l.starts_with("wirebench: [ 1s ] prepare: sbtest1 "))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(report.ends_with(" rows/s)"), "{report}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("rows/s"), "{stdout}");
    assert!(wirebench(&server, &["cleanup"]).status.success());
}
