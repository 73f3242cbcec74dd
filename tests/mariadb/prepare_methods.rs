//! `prepare`'s ways of sending the rows against the real MariaDB:
//! COM_STMT_BULK_EXECUTE of a prepared INSERT and LOAD DATA LOCAL INFILE
//! from memory make the same tables as sysbench's INSERTs (schema,
//! AUTO_INCREMENT, indexes, every row: CHECKSUM TABLE EXTENDED) and print
//! the same lines; with the server's local_infile off, `auto` still bulk
//! executes, `load-data` refuses in one line. With more threads than
//! tables, a table's rows go over several connections, and the tables are
//! again the same.

use std::process::Command;

use crate::common;

use common::{rows, Ran, TestServer};
use wirebench::client::Connection;

const TABLES: u32 = 3;

/// The tests share the tables sbtest1..3: one at a time.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// `oltp_read_write` with `args` over the test server's socket, on
/// `TABLES` tables of 20,000 rows, two threads, a fixed seed.
fn read_write(server: &TestServer, args: &[&str]) -> Ran {
    let socket = server.socket.as_ref().expect("WIREBENCH_TEST_SOCKET");
    let mut all = vec!["oltp_read_write".to_owned(), format!("--mysql-socket={}", socket.display())];
    all.extend(["--mysql-user=sbtest", "--mysql-password=sbtest", "--mysql-db=sbtest"].map(String::from));
    all.push(format!("--tables={TABLES}"));
    all.extend(["--table-size=20000", "--threads=2", "--rand-seed=11"].map(String::from));
    all.extend(args.iter().map(|a| (*a).to_owned()));
    common::run_wirebench(&all)
}

fn prepare(server: &TestServer, args: &[&str]) -> String {
    let cleanup = read_write(server, &[args, &["cleanup"]].concat());
    assert!(cleanup.succeeded(), "{}", &cleanup.stderr);
    let out = read_write(server, &[args, &["prepare"]].concat());
    assert!(out.succeeded(), "{args:?}: {}", &out.stderr);
    out.stdout
}

/// Per table: SHOW CREATE TABLE, its indexes, and CHECKSUM TABLE EXTENDED.
async fn tables(conn: &mut Connection) -> Vec<Vec<Vec<Option<String>>>> {
    tables_up_to(conn, TABLES).await
}

/// [`tables`] of sbtest1..=`count`.
async fn tables_up_to(conn: &mut Connection, count: u32) -> Vec<Vec<Vec<Option<String>>>> {
    let mut out = Vec::new();
    for t in 1..=count {
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
        let said_by_bulk = prepare(&server, &[auto_inc, "--prepare-method=bulk-execute"]);
        assert_eq!(tables(&mut conn).await, by_inserts, "{auto_inc}: bulk execute");
        assert_eq!(sorted_lines(&said_by_bulk), sorted_lines(&said_by_inserts), "{auto_inc}: bulk execute's lines");
        let said_by_data = prepare(&server, &[auto_inc, "--prepare-method=load-data"]);
        let by_data = tables(&mut conn).await;
        assert_eq!(by_data, by_inserts, "{auto_inc}");
        // The two connections' lines interleave as they happen to.
        assert_eq!(sorted_lines(&said_by_data), sorted_lines(&said_by_inserts), "{auto_inc}: the same lines");
        assert!(said_by_data.contains("Inserting 20000 records into 'sbtest3'"), "{said_by_data}");
        let index = &by_data[1];
        assert!(index.iter().any(|row| row[0].as_deref() == Some("k_1")), "{index:?}");
        let count = rows(&conn.query("SELECT COUNT(*), MIN(id), MAX(id) FROM sbtest2").await.unwrap());
        assert_eq!(count, [[Some("20000".into()), Some("1".into()), Some("20000".into())]]);
    }
    // Columns in UCS-2: the data is read as utf8mb4 and converted, not
    // stored as it comes.
    let ucs2 = "--create_table_options=DEFAULT CHARSET=ucs2";
    prepare(&server, &[ucs2, "--prepare-method=insert"]);
    let by_inserts = tables(&mut conn).await;
    prepare(&server, &[ucs2, "--prepare-method=load-data"]);
    assert_eq!(tables(&mut conn).await, by_inserts, "{ucs2}");
    // Bulk rows' strings are read in the connection's character set and
    // converted to the columns', as sysbench's quoted strings are.
    prepare(&server, &[ucs2, "--prepare-method=bulk-execute"]);
    assert_eq!(tables(&mut conn).await, by_inserts, "{ucs2}: bulk execute");
    let c = rows(&conn.query("SELECT LENGTH(c), CHAR_LENGTH(c) FROM sbtest1 WHERE id = 7").await.unwrap());
    assert_eq!(c, [[Some("238".into()), Some("119".into())]]);
    read_write(&server, &["cleanup"]).expect_success();
}

/// With more threads than tables, each table's rows go over several
/// connections, as many as the server (on this host) has cores (the
/// server's general log shows the sessions loading the table), and the
/// table is that of one connection, by bulk execute, LOAD DATA or by
/// sysbench's INSERTs: the same rows, AUTO_INCREMENT, indexes, and the same
/// lines printed.
#[tokio::test]
async fn a_table_split_over_connections_is_the_same_table() {
    let Some(server) = TestServer::find() else { return };
    let _serial = SERIAL.lock().await;
    let mut conn = connect(&server).await;
    // 100,000 rows: 5 LOAD DATA batches, 37 INSERTs.
    let size = ["--tables=1", "--table-size=100000"];
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    for auto_inc in ["--auto_inc=on", "--auto_inc=off"] {
        let said_alone = prepare(&server, &[&size[..], &[auto_inc, "--prepare-method=insert"]].concat());
        let alone = tables_up_to(&mut conn, 1).await;
        for method in ["--prepare-method=bulk-execute", "--prepare-method=load-data", "--prepare-method=insert"] {
            for threads in [2, 7] {
                let threads_arg = format!("--threads={threads}");
                let args = [&size[..], &[auto_inc, method, &threads_arg]].concat();
                let log = (threads == 7).then(|| GeneralLog::on(&server));
                let said = prepare(&server, &args);
                assert_eq!(tables_up_to(&mut conn, 1).await, alone, "{args:?}");
                assert_eq!(sorted_lines(&said), sorted_lines(&said_alone), "{args:?}: the same lines");
                if let Some(log) = log {
                    if method == "--prepare-method=load-data" {
                        // The database is utf8mb4: the data is stored unconverted.
                        let binary = log.count(&server, "LOAD DATA LOCAL INFILE %CHARACTER SET binary (id, k, c, pad)");
                        assert!(binary >= 5, "{args:?}: {binary} LOAD DATA ... CHARACTER SET binary");
                    }
                    // One connection a core of the server's, at most one a thread.
                    let sessions = log.sessions_loading(&server, "sbtest1");
                    assert_eq!(sessions, threads.min(cores.max(1)), "{args:?}: sbtest1 loaded by {sessions} sessions");
                }
            }
        }
    }
    read_write(&server, &["cleanup"]).expect_success();
}

/// As many tables as the server has cores (this host's: it runs here),
/// four times as many threads: one connection a table (more would only
/// contend), as sysbench loads them.
#[tokio::test]
async fn connections_beyond_the_server_s_cores_do_not_load() {
    let Some(server) = TestServer::find() else { return };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()).max(2) as u32;
    let _serial = SERIAL.lock().await;
    let log = GeneralLog::on(&server);
    let (tables, threads) = (format!("--tables={cores}"), format!("--threads={}", 4 * cores));
    prepare(&server, &[&tables, "--table-size=30000", &threads]);
    for table in (1..=cores).map(|n| format!("sbtest{n}")) {
        assert_eq!(log.sessions_loading(&server, &table), 1, "{table}");
    }
    drop(log);
    read_write(&server, &[&tables, "cleanup"]).expect_success();
}

fn sorted_lines(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    lines.sort();
    lines
}

/// Runs SQL as the server's administrator (the OS user over the socket).
fn as_admin(server: &TestServer, sql: &str) -> Result<String, String> {
    let socket = server.socket.as_ref().ok_or("no socket")?;
    let out = Command::new("mariadb")
        .args(["--no-defaults", "--protocol=socket", "--batch", "--skip-column-names"])
        .arg(format!("--socket={}", socket.display()))
        .arg(format!("--execute={sql}"))
        .output()
        .map_err(|e| format!("cannot run mariadb: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    out.status.success().then_some(stdout).ok_or_else(|| String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The server's general log, into mysql.general_log, while it lives.
struct GeneralLog<'a>(&'a TestServer);

impl<'a> GeneralLog<'a> {
    fn on(server: &'a TestServer) -> Self {
        as_admin(server, "SET GLOBAL log_output='TABLE'; TRUNCATE mysql.general_log; SET GLOBAL general_log=1")
            .unwrap_or_else(|e| panic!("cannot turn the general log on: {e}"));
        GeneralLog(server)
    }

    /// How many sessions sent rows of `table`.
    fn sessions_loading(&self, server: &TestServer, table: &str) -> u32 {
        number(server, &format!(
            "SELECT COUNT(DISTINCT thread_id) FROM mysql.general_log WHERE argument LIKE 'LOAD DATA LOCAL INFILE ''memory:{table}''%' OR argument LIKE 'INSERT INTO {table}(%'"
        ))
    }

    /// How many statements were `LIKE pattern`.
    fn count(&self, server: &TestServer, pattern: &str) -> u32 {
        number(server, &format!("SELECT COUNT(*) FROM mysql.general_log WHERE argument LIKE '{pattern}'"))
    }
}

fn number(server: &TestServer, sql: &str) -> u32 {
    let count = as_admin(server, sql).unwrap_or_else(|e| panic!("cannot read the general log: {e}"));
    count.trim().parse().unwrap_or_else(|e| panic!("{count:?}: {e}"))
}

impl Drop for GeneralLog<'_> {
    fn drop(&mut self) {
        if let Err(e) = as_admin(self.0, "SET GLOBAL general_log=0; TRUNCATE mysql.general_log") {
            eprintln!("could not turn the general log off: {e}");
        }
    }
}

/// Sets the server's local_infile as its administrator (the OS user over
/// the socket), or says why it cannot.
fn set_local_infile(server: &TestServer, on: bool) -> Result<(), String> {
    as_admin(server, &format!("SET GLOBAL local_infile={}", u8::from(on))).map(drop)
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
async fn local_infile_off_leaves_bulk_execute_and_refuses_load_data() {
    let Some(server) = TestServer::find() else { return };
    let _serial = SERIAL.lock().await;
    if let Err(e) = set_local_infile(&server, false) {
        common::unavailable(&format!("cannot turn local_infile off: {e}"));
        return;
    }
    let _restore = LocalInfileOff(&server);
    let mut conn = connect(&server).await;
    let said = prepare(&server, &["--prepare-method=insert"]);
    assert!(said.contains("Creating a secondary index on 'sbtest1'..."), "{said}");
    let by_inserts = tables(&mut conn).await;
    assert_eq!(rows(&conn.query("SELECT COUNT(*) FROM sbtest3").await.unwrap()), [[Some("20000".into())]]);

    // auto needs no local_infile where the server bulk executes (MariaDB).
    read_write(&server, &["cleanup"]).expect_success();
    let debug = read_write(&server, &["--verbosity=4", "prepare"]);
    let stderr = &debug.stderr;
    assert!(debug.succeeded(), "{stderr}");
    assert!(!stderr.contains("prepare sends INSERTs"), "{stderr}");
    assert_eq!(tables(&mut conn).await, by_inserts);

    read_write(&server, &["cleanup"]).expect_success();
    let refused = read_write(&server, &["--prepare-method=load-data", "prepare"]);
    assert_eq!(refused.code, Some(1));
    let text = refused.stdout + &refused.stderr;
    assert!(
        text.contains("--prepare-method=load-data: the server has local_infile=0")
            && text.contains("--prepare-method=insert"),
        "{text}"
    );
    assert!(!text.contains("Creating table"), "nothing created: {text}");
    read_write(&server, &["cleanup"]).expect_success();
}

/// `--report-interval` during a long prepare: rows and rows/s per table on
/// stderr, stdout the same as without it.
#[tokio::test]
async fn report_interval_shows_rows_per_second_per_table() {
    let Some(server) = TestServer::find() else { return };
    let _serial = SERIAL.lock().await;
    let _ = read_write(&server, &["cleanup"]);
    // INSERTs of 300,000 rows take seconds here: at least one report.
    let args = ["--prepare-method=insert", "--tables=1", "--table-size=300000", "--threads=1", "--report-interval=1"];
    let out = read_write(&server, &[&args[..], &["prepare"]].concat());
    let stderr = &out.stderr;
    assert!(out.succeeded(), "{stderr}");
    let report = stderr
        .lines()
        .find(|l| l.starts_with("wirebench: [ 1s ] prepare: sbtest1 "))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(report.ends_with(" rows/s)"), "{report}");
    let stdout = &out.stdout;
    assert!(!stdout.contains("rows/s"), "{stdout}");
    read_write(&server, &["cleanup"]).expect_success();
}
