//! `bulk_insert.lua`: each thread appends rows `(n,n)`, n = 1, 2, …, to a
//! multi-row `INSERT INTO sbtest{tid+1} VALUES` through sysbench's
//! client-side bulk-insert buffer, which sends the statement when the next
//! row would not fit in 512 KiB (`db_bulk_insert_next`) and at the end of
//! the run (`thread_done`).
//!
//! In sysbench one event appends one row, and most events send nothing.
//! A wirebench script sends one command per call, so here one event is one
//! flush: the statement sysbench would send, holding every row that fits.
//! [`Script::last_event_weight`] reports its rows, which are sysbench's
//! events; the counters see one write per statement, as sysbench counts.
//! Under `--events` a statement holds no more rows than the budget grants
//! ([`Script::limit_event_weight`]), so the run inserts exactly the rows
//! asked for, as sysbench's final partial flush does. In a timed run the
//! partial statement sysbench flushes at the end has no counterpart.
//!
//! `prepare` creates `sbtest1..threads` (`CREATE TABLE IF NOT EXISTS`, run
//! once, not per thread); `cleanup` drops them; there is no `prewarm`.
//!
//! 0.5's `bulk_insert.lua` (also in 1.0.20's tree as
//! `tests/include/oltp_legacy/`) is the same but for its tables: thread t
//! inserts into `sbtest{t}`, from `sbtest0`, created with `INTEGER
//! UNSIGNED` columns and `ENGINE = InnoDB`, without a message
//! ([`bulk_insert05`]).

use super::common::{push_decimal, BULK_PACKET_SIZE};
use super::oltp_options::{OltpOptions, OptionsError};
use super::{CommandSink, Script, ScriptContext, StatementKind, StatementSpec, Step, Workload, WorkloadError};
use crate::rand::Rng;

pub const NAME: &str = "bulk_insert";

#[derive(Debug, Clone)]
pub struct BulkInsert {
    /// `--threads` as given to `cleanup`.
    threads: u32,
    /// Which script's tables: 1.0's or 0.5's.
    tables: BulkTables,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BulkTables {
    /// `sbtest1..threads`, 1.0's CREATE TABLE.
    V1_0,
    /// `sbtest0..threads-1`, 0.5's.
    V0_5,
}

pub fn workload(options: &OltpOptions) -> Result<BulkInsert, OptionsError> {
    if options.threads == 0 {
        return Err(OptionsError::NoThreads { test: NAME });
    }
    Ok(BulkInsert { threads: options.threads, tables: BulkTables::V1_0 })
}

/// 0.5's `bulk_insert.lua`.
pub(crate) fn bulk_insert05(options: &OltpOptions) -> Result<BulkInsert, OptionsError> {
    Ok(BulkInsert { tables: BulkTables::V0_5, ..workload(options)? })
}

/// The script's CREATE TABLE, indentation of its Lua long string included.
fn bulk_table_sql(table: u32) -> String {
    format!(
        "        CREATE TABLE IF NOT EXISTS sbtest{table} (\n          id INTEGER NOT NULL,\n          \
         k INTEGER DEFAULT '0' NOT NULL,\n          PRIMARY KEY (id))"
    )
}

/// 0.5's CREATE TABLE for the MySQL driver.
fn create_table_sql05(table: u32) -> String {
    format!(
        "CREATE TABLE IF NOT EXISTS sbtest{table} (\nid INTEGER UNSIGNED NOT NULL,\nk INTEGER UNSIGNED DEFAULT '0' \
         NOT NULL,\nPRIMARY KEY (id)\n) ENGINE = InnoDB\n"
    )
}

impl BulkInsert {
    /// The tables, in order: thread t's is the t-th.
    fn table_numbers(&self, threads: u32) -> std::ops::Range<u32> {
        match self.tables {
            BulkTables::V1_0 => 1..threads + 1,
            BulkTables::V0_5 => 0..threads,
        }
    }
}

impl Workload for BulkInsert {
    fn name(&self) -> &'static str {
        NAME
    }

    fn statements(&self) -> Vec<StatementSpec> {
        Vec::new()
    }

    fn script(&self, context: ScriptContext) -> Box<dyn Script> {
        let table = self.table_numbers(context.thread + 1).end - 1;
        Box::new(BulkInsertScript { table, rows_sent: 0, last_rows: 0, row_limit: u64::MAX })
    }

    fn prepare(&self, context: ScriptContext, _rng: Rng) -> Box<dyn Iterator<Item = String> + Send> {
        let threads = if context.thread == 0 { context.threads.max(1) } else { 0 };
        let create = match self.tables {
            BulkTables::V1_0 => bulk_table_sql,
            BulkTables::V0_5 => create_table_sql05,
        };
        Box::new(self.table_numbers(threads).map(create))
    }

    fn prewarm(&self, _context: ScriptContext) -> Vec<String> {
        Vec::new()
    }

    fn cleanup(&self) -> Vec<String> {
        self.table_numbers(self.threads).map(|table| format!("DROP TABLE IF EXISTS sbtest{table}")).collect()
    }

    /// 1.0 announces each table it creates; 0.5 only the ones it drops.
    fn progress_line(&self, sql: &str, _loading: &mut String) -> Option<String> {
        let table = |prefix: &str| sql.trim_start().strip_prefix(prefix)?.split([' ', '(']).next();
        if let Some(table) = table("DROP TABLE IF EXISTS ") {
            return Some(format!("Dropping table '{table}'..."));
        }
        let created = table("CREATE TABLE IF NOT EXISTS ").filter(|_| self.tables == BulkTables::V1_0)?;
        Some(format!("Creating table '{created}'..."))
    }
}

struct BulkInsertScript {
    table: u32,
    /// `cursize`: the last row number appended.
    rows_sent: u64,
    /// Rows in the last statement.
    last_rows: u64,
    /// The most rows the next statement may hold (`--events`).
    row_limit: u64,
}

/// Length of `(n,n)`.
fn row_len(n: u64) -> usize {
    2 * (n.checked_ilog10().unwrap_or(0) as usize + 1) + 3
}

impl Script for BulkInsertScript {
    fn next(&mut self, _rng: &mut Rng, sink: &mut CommandSink<'_>) -> Result<Step, WorkloadError> {
        let (table, mut n, mut rows, row_limit) = (self.table, self.rows_sent, 0u64, self.row_limit);
        sink.query_with(b"INSERT INTO sbtest%d VALUES(%d,%d),(%d,%d),...", |out| {
            let start = out.len();
            out.extend_from_slice(b"INSERT INTO sbtest");
            push_decimal(out, table);
            out.extend_from_slice(b" VALUES");
            loop {
                let next = n + 1;
                let comma = usize::from(rows > 0);
                // The buffer keeps a NUL after the statement.
                if rows > 0 && out.len() - start + comma + row_len(next) + 1 > BULK_PACKET_SIZE {
                    break;
                }
                if rows > 0 && rows >= row_limit {
                    break;
                }
                if rows > 0 {
                    out.push(b',');
                }
                out.push(b'(');
                push_decimal(out, next);
                out.push(b',');
                push_decimal(out, next);
                out.push(b')');
                n = next;
                rows += 1;
            }
        });
        sink.set_query_kind(StatementKind::Insert);
        self.rows_sent = n;
        self.last_rows = rows;
        Ok(Step::Last)
    }

    fn restart_event(&mut self) {}

    fn last_event_weight(&self) -> u64 {
        self.last_rows
    }

    fn max_extra_weight(&self) -> u64 {
        // Rows of at least "(1,1)," in 512 KiB: more than ever fit.
        (BULK_PACKET_SIZE / 6) as u64
    }

    fn limit_event_weight(&mut self, limit: u64) {
        self.row_limit = limit.max(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::testkit::{context, rng, DecodedCommand, Harness};
    use crate::workload::testkit::{long_strings, lua_format, lua_script};

    #[test]
    fn each_event_is_one_full_statement_continuing_the_rows() {
        let w = workload(&OltpOptions::default()).unwrap();
        let mut harness = Harness::new(&w, context(1, 2), rng(1));
        let mut next = 1u64;
        for _ in 0..4 {
            let event = harness.event();
            let [DecodedCommand::Query(sql)] = event.as_slice() else { panic!("{event:?}") };
            let values = sql.strip_prefix("INSERT INTO sbtest2 VALUES").unwrap();
            let rows = values.matches("),(").count() as u64 + 1;
            assert_eq!(harness.script().last_event_weight(), rows);
            for pair in values.trim_start_matches('(').trim_end_matches(')').split("),(") {
                assert_eq!(pair, format!("{next},{next}"));
                next += 1;
            }
            assert!(sql.len() < BULK_PACKET_SIZE);
            assert!(sql.len() + 1 + row_len(next) + 1 > BULK_PACKET_SIZE, "room left for row {next}");
        }
        assert_eq!(row_len(9), 5);
        assert_eq!(row_len(10), 7);
        assert_eq!(row_len(39034), 13);
    }

    /// Under `--events` a statement holds the rows granted, and the next
    /// one goes on from the row after.
    #[test]
    fn a_statement_holds_no_more_rows_than_granted() {
        let w = workload(&OltpOptions::default()).unwrap();
        let mut harness = Harness::new(&w, context(0, 1), rng(1));
        for (limit, expected) in [(3, "(1,1),(2,2),(3,3)"), (1, "(4,4)"), (0, "(5,5)")] {
            harness.script_mut().limit_event_weight(limit);
            let event = harness.event();
            assert_eq!(event, [DecodedCommand::Query(format!("INSERT INTO sbtest1 VALUES{expected}"))]);
            assert_eq!(harness.script().last_event_weight(), expected.matches('(').count() as u64);
        }
    }

    #[test]
    fn prepare_and_cleanup() {
        let w = workload(&OltpOptions { threads: 3, ..OltpOptions::default() }).unwrap();
        let sql: Vec<String> = w.prepare(context(0, 3), rng(1)).collect();
        assert_eq!(sql, (1..=3).map(bulk_table_sql).collect::<Vec<_>>());
        assert_eq!(w.prepare(context(1, 3), rng(1)).count(), 0);
        assert_eq!(w.cleanup().len(), 3);
        assert!(w.prewarm(context(0, 3)).is_empty());
        let Some(lua) = lua_script("bulk_insert.lua") else { return };
        let strings = long_strings(&lua);
        assert_eq!(strings.len(), 1);
        assert_eq!(bulk_table_sql(2), lua_format(&strings[0], &["2"]));
        assert!(lua.contains(r#"con:bulk_insert_init("INSERT INTO sbtest" .. thread_id+1 .. " VALUES")"#));
        assert!(lua.contains(r#"con:bulk_insert_next("(" .. cursize .. "," .. cursize .. ")")"#));
    }
}
