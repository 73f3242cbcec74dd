//! The 0.4/0.5 command lines against the real MariaDB:
//!
//! - the tables wirebench's `prepare` creates are the ones the real
//!   sysbench's DDL creates: `SHOW CREATE TABLE` after wirebench's prepare
//!   against `SHOW CREATE TABLE` after running the CREATE TABLE and CREATE
//!   INDEX that sysbench sent (from the traces in `src/workload/testdata`:
//!   sysbench 0.4.12 for `--test=oltp`, sysbench 1.0.20 running 0.5's
//!   scripts from its source tree);
//! - a transaction on MyISAM is `LOCK TABLES`/`UNLOCK TABLES`, on InnoDB
//!   `BEGIN`/`COMMIT`, counted by the server (`Com_lock_tables`,
//!   `Com_begin`), and the tables stay whole.
//!
//! One test function: the server's counters are global, and the tests of
//! one binary run in parallel.

use crate::common;

use std::path::Path;

use common::{rows, TestServer};
use wirebench::client::Connection;

/// The stdout of `wirebench ARGS` against the test server, which must
/// succeed.
fn against(server: &TestServer, args: &str) -> String {
    let mut all: Vec<String> = args.split_whitespace().map(str::to_owned).collect();
    all.extend(server.login_args("sbtest"));
    common::run_wirebench(&all).ok()
}

/// The CREATE statements a traced sysbench sent, unescaped.
fn traced_ddl(trace: &str) -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/workload/testdata").join(trace);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let unescape = |sql: &str| sql.replace("\\n", "\n").replace("\\\\", "\\");
    text.lines().filter_map(|l| l.strip_prefix("Q\t")).filter(|sql| sql.starts_with("CREATE")).map(unescape).collect()
}

async fn query_rows(conn: &mut Connection, sql: &str) -> Vec<Vec<Option<String>>> {
    rows(&conn.query(sql).await.unwrap_or_else(|e| panic!("{sql}: {e}")))
}

/// `SHOW CREATE TABLE`, without the AUTO_INCREMENT counter the rows moved.
async fn show_create(conn: &mut Connection, table: &str) -> String {
    let rows = query_rows(conn, &format!("SHOW CREATE TABLE {table}")).await;
    let ddl = rows[0][1].clone().unwrap();
    let counter = ddl.find(" AUTO_INCREMENT=").map(|at| {
        let digits = ddl[at + 16..].chars().take_while(char::is_ascii_digit).count();
        ddl[at..at + 16 + digits].to_owned()
    });
    counter.map_or(ddl.clone(), |counter| ddl.replace(&counter, ""))
}

async fn drop_tables(conn: &mut Connection, tables: &[&str]) {
    conn.query(&format!("DROP TABLE IF EXISTS {}", tables.join(", "))).await.unwrap();
}

/// wirebench's `prepare` of `line` against the DDL sysbench sent in `trace`.
async fn same_tables(server: &TestServer, conn: &mut Connection, line: &str, trace: &str, tables: &[&str]) {
    drop_tables(conn, tables).await;
    against(server, &format!("{line} prepare"));
    let mut ours = Vec::new();
    for table in tables {
        ours.push(show_create(conn, table).await);
    }
    drop_tables(conn, tables).await;
    for sql in traced_ddl(trace) {
        conn.query(&sql).await.unwrap_or_else(|e| panic!("{trace}: {sql}: {e}"));
    }
    for (table, ours) in tables.iter().zip(ours) {
        assert_eq!(ours, show_create(conn, table).await, "{line}: {table}");
    }
    drop_tables(conn, tables).await;
}

async fn status(conn: &mut Connection, name: &str) -> u64 {
    let rows = query_rows(conn, &format!("SHOW GLOBAL STATUS LIKE '{name}'")).await;
    rows[0][1].as_deref().unwrap().parse().unwrap()
}

/// How many LOCK TABLES, UNLOCK TABLES and BEGIN statements `line`'s run
/// made the server count.
async fn transaction_statements(server: &TestServer, conn: &mut Connection, line: &str) -> [u64; 3] {
    let names = ["Com_lock_tables", "Com_unlock_tables", "Com_begin"];
    let mut before = [0; 3];
    for (count, name) in before.iter_mut().zip(names) {
        *count = status(conn, name).await;
    }
    against(server, &format!("{line} run"));
    let mut delta = [0; 3];
    for ((count, name), before) in delta.iter_mut().zip(names).zip(before) {
        *count = status(conn, name).await - before;
    }
    delta
}

async fn row_count(conn: &mut Connection, table: &str) -> String {
    query_rows(conn, &format!("SELECT COUNT(*) FROM {table}")).await[0][0].clone().unwrap()
}

#[tokio::test]
async fn legacy_tables_and_transactions() {
    let Some(server) = TestServer::find() else { return };
    let mut conn = Connection::connect(&server.options(server.tcp())).await.unwrap();
    let script05 = "--test=tests/include/oltp_legacy/oltp.lua";
    let options05 = "--oltp-auto-inc=off --oltp-secondary=on --oltp-create-secondary=off --mysql-table-engine=myisam";
    let options04 = "--oltp-auto-inc=off --oltp-secondary --mysql-table-engine=myisam --myisam-max-rows=500 \
                     --mysql-create-options=CHECKSUM=1";
    for (line, trace, tables) in [
        (
            format!("{script05} --oltp-tables-count=2 --oltp-table-size=5"),
            "sysbench_legacy/oltp05_prepare.txt",
            &["sbtest1", "sbtest2"][..],
        ),
        (
            format!("{script05} --oltp-table-size=5 {options05}"),
            "sysbench_legacy/oltp05_prepare_options.txt",
            &["sbtest1"],
        ),
        ("--test=tests/db/bulk_insert.lua".to_owned(), "sysbench_legacy/bulk_insert05_prepare.txt", &["sbtest0"]),
        ("--test=oltp --oltp-table-size=3".to_owned(), "sysbench_04/oltp04_prepare.txt", &["sbtest"]),
        (
            format!("--test=oltp --oltp-table-size=12 {options04}"),
            "sysbench_04/oltp04_prepare_options.txt",
            &["sbtest"],
        ),
    ] {
        same_tables(&server, &mut conn, &line, trace, tables).await;
    }

    // 0.5's oltp.lua on MyISAM: every table locked for each transaction.
    let myisam05 = format!("{script05} --oltp-tables-count=2 --oltp-table-size=100 --mysql-table-engine=myisam");
    against(&server, &format!("{myisam05} cleanup"));
    against(&server, &format!("{myisam05} prepare"));
    let run = format!("{myisam05} --num-threads=3 --max-requests=60");
    assert_eq!(transaction_statements(&server, &mut conn, &run).await, [60, 60, 0]);
    for table in ["sbtest1", "sbtest2"] {
        assert_eq!(row_count(&mut conn, table).await, "100", "each DELETE's INSERT ran under the same lock");
    }
    against(&server, &format!("{myisam05} cleanup"));
    let innodb = format!("{script05} --oltp-tables-count=2 --oltp-table-size=100");
    against(&server, &format!("{innodb} prepare"));
    // One connection: with more, a deadlock restarts an event with another BEGIN.
    let run = format!("{innodb} --num-threads=1 --max-requests=60");
    assert_eq!(transaction_statements(&server, &mut conn, &run).await, [0, 0, 60], "BEGIN on any other engine");
    against(&server, &format!("{innodb} cleanup"));

    // 0.4 decides from the engine: MyISAM locks its one table.
    let myisam04 = "--test=oltp --oltp-table-size=100 --mysql-table-engine=MyISAM";
    against(&server, &format!("{myisam04} cleanup"));
    against(&server, &format!("{myisam04} prepare"));
    let run = format!("{myisam04} --num-threads=3 --max-requests=60");
    assert_eq!(transaction_statements(&server, &mut conn, &run).await, [60, 60, 0]);
    assert_eq!(row_count(&mut conn, "sbtest").await, "100");
    let read_only = format!("{myisam04} --oltp-read-only --num-threads=2 --max-requests=20");
    assert_eq!(transaction_statements(&server, &mut conn, &read_only).await, [20, 20, 0]);
    // One connection: without the lock two could DELETE/INSERT the same id
    // together, and the second INSERT fails (ERROR 1062), as in 0.4.
    let forced = format!("{myisam04} --mysql-engine-trx=yes --num-threads=1 --max-requests=20");
    assert_eq!(transaction_statements(&server, &mut conn, &forced).await, [0, 0, 20]);
    against(&server, &format!("{myisam04} cleanup"));
}
