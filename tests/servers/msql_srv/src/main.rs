//! A MySQL-protocol server on msql-srv 0.11, built as its `serve_one` example
//! is (one thread per connection, a `MysqlShim` answering with a result set),
//! for wirebench's interop tests. It answers what a login and sysbench's
//! oltp_point_select --db-ps-mode=disable need: `SELECT c FROM sbtest<N> WHERE
//! id=<id>` gets one row, any other SELECT one row, anything else OK. Its
//! Its one database is `sbtest`. Its
//! greeting does not offer CLIENT_SECURE_CONNECTION although it sends a 20-byte
//! scramble and takes 4.1 auth: the deviation the tests exist for.
//!
//! Usage: wirebench-test-server-msql-srv PORT (0: any), prints "listening PORT".

use std::io::{self, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;

use msql_srv::{
    Column, ColumnFlags, ColumnType, ErrorKind, InitWriter, MysqlIntermediary, MysqlShim,
    ParamParser, QueryResultWriter, StatementMetaWriter,
};

static QUERIES: AtomicU64 = AtomicU64::new(0);

struct Backend;

/// sysbench's `c` is 119 characters of digit groups; any such text will do.
fn c_value(id: u64) -> String {
    let group = format!("{id:011}-");
    group.repeat(10)[..119].to_string()
}

/// The id of `SELECT c FROM sbtest<N> WHERE id=<id>`, the point select.
fn point_select_id(sql: &str) -> Option<u64> {
    let words: Vec<&str> = sql.split_whitespace().collect();
    match words.as_slice() {
        [select, "c", from, table, whr, cond]
            if select.eq_ignore_ascii_case("select")
                && from.eq_ignore_ascii_case("from")
                && table.starts_with("sbtest")
                && whr.eq_ignore_ascii_case("where") =>
        {
            cond.strip_prefix("id=")?.parse().ok()
        }
        _ => None,
    }
}

impl<W: io::Read + io::Write> MysqlShim<W> for Backend {
    type Error = io::Error;

    fn on_prepare(&mut self, _: &str, info: StatementMetaWriter<W>) -> io::Result<()> {
        info.error(ErrorKind::ER_UNKNOWN_ERROR, b"prepared statements are not served")
    }

    fn on_execute(&mut self, _: u32, _: ParamParser, results: QueryResultWriter<W>) -> io::Result<()> {
        results.error(ErrorKind::ER_UNKNOWN_ERROR, b"prepared statements are not served")
    }

    fn on_close(&mut self, _: u32) {}

    /// It has one database, `sbtest`; COM_INIT_DB (how a client without
    /// CONNECT_WITH_DB selects one) of another is refused as MySQL does.
    fn on_init(&mut self, database: &str, writer: InitWriter<W>) -> io::Result<()> {
        if database == "sbtest" {
            return writer.ok();
        }
        writer.error(ErrorKind::ER_BAD_DB_ERROR, format!("Unknown database '{database}'").as_bytes())
    }

    fn on_query(&mut self, sql: &str, results: QueryResultWriter<W>) -> io::Result<()> {
        QUERIES.fetch_add(1, Ordering::Relaxed);
        let column = |name: &str, table: &str, coltype| Column {
            table: table.to_string(),
            column: name.to_string(),
            coltype,
            colflags: ColumnFlags::empty(),
        };
        if let Some(id) = point_select_id(sql) {
            let cols = [column("c", "sbtest1", ColumnType::MYSQL_TYPE_STRING)];
            let mut rw = results.start(&cols)?;
            rw.write_col(c_value(id))?;
            rw.finish()
        } else if sql.trim_start().get(..6).is_some_and(|w| w.eq_ignore_ascii_case("select")) {
            let cols = [column("v", "", ColumnType::MYSQL_TYPE_LONGLONG)];
            let mut rw = results.start(&cols)?;
            rw.write_col(1i64)?;
            rw.finish()
        } else {
            results.completed(0, 0)
        }
    }
}

fn main() -> io::Result<()> {
    let port: u16 = std::env::args().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0);
    let listener = TcpListener::bind(("127.0.0.1", port))?;
    println!("listening {}", listener.local_addr()?.port());
    io::stdout().flush()?;
    for stream in listener.incoming() {
        let stream = stream?;
        thread::spawn(move || {
            let _ = MysqlIntermediary::run_on_tcp(Backend, stream);
        });
    }
    Ok(())
}
