//! 0.5's `oltp.lua`: one table drawn per event, then a transaction of
//! point selects, ranges, updates and a delete/insert pair on it, every
//! statement COM_QUERY text with its values written in (0.5 prepares
//! nothing), as in 1.0.20's copy (`tests/include/oltp_legacy/oltp.lua`):
//!
//! ```text
//! BEGIN                                    LOCK TABLES sbtest1 WRITE ,sbtest2 WRITE
//! SELECT c FROM sbtest3 WHERE id=42        (with --mysql-table-engine=myisam)
//! SELECT c FROM sbtest3 WHERE id BETWEEN 17 AND 116
//! SELECT SUM(K) FROM sbtest3 WHERE id BETWEEN 17 AND 116
//! ... ORDER BY c, SELECT DISTINCT c ... ORDER BY c
//! UPDATE sbtest3 SET k=k+1 WHERE id=9
//! UPDATE sbtest3 SET c='...' WHERE id=77
//! DELETE FROM sbtest3 WHERE id=5
//! INSERT INTO sbtest3 (id, k, c, pad) VALUES (5, 31, '...', '...')
//! COMMIT                                   UNLOCK TABLES
//! ```
//!
//! Draws: the table (`sb_rand_uniform`), then each statement's id
//! (`sb_rand`, the `--rand-type` distribution); the non-index update draws
//! its string before its id; the delete/insert pair draws the id, then, after
//! the DELETE, c, pad and k. 0.5 itself wrote a range's end as
//! `BETWEEN 17 AND 17+99`; 1.0.20's copy, followed here, computes it.
//!
//! With `--mysql-table-engine=myisam` (that spelling only: the script
//! compares the string) each transaction locks every table for writing
//! instead; any other engine, MEMORY too, gets BEGIN/COMMIT.

use std::sync::Arc;

use super::super::common::{push_decimal, C_TEMPLATE, PAD_TEMPLATE};
use super::super::sbtest_insert::{query_sbtest_insert, SBTEST_INSERT_FORM_05};
use super::super::{
    CommandSink, OltpOptions, OptionsError, Script, ScriptContext, StatementSpec, Step, Workload, WorkloadError,
};
use super::common05::{cleanup05, prepare05, progress_line05};
use super::LegacyOptions;
use crate::rand::Rng;

pub const NAME: &str = "oltp.lua";

/// One kind of statement of the event, in the script's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Statement05 {
    Begin,
    PointSelect,
    SimpleRange,
    SumRange,
    OrderRange,
    DistinctRange,
    IndexUpdate,
    NonIndexUpdate,
    /// The DELETE and the INSERT of the same id: two commands.
    DeleteInsert,
    Commit,
}

#[derive(Debug, Clone)]
pub struct Oltp05 {
    options: OltpOptions,
    legacy: LegacyOptions,
    plan: Arc<[(Statement05, u32)]>,
    /// `begin_query` and `commit_query`.
    begin: Arc<[u8]>,
    commit: &'static [u8],
    /// `parallel_prepare.lua`: every thread creates its share of the tables.
    parallel_prepare: bool,
}

pub(crate) fn workload(options: &OltpOptions, legacy: &LegacyOptions) -> Result<Oltp05, OptionsError> {
    if options.tables == 0 {
        return Err(OptionsError::NoTables { test: NAME });
    }
    let plan = event_plan(options, legacy);
    if plan.iter().all(|&(_, count)| count == 0) {
        return Err(OptionsError::EmptyEvent { test: NAME });
    }
    let (begin, commit): (Arc<[u8]>, &[u8]) = if locks_tables(options) {
        let tables: Vec<String> = (1..=options.tables).map(|t| format!("sbtest{t} WRITE")).collect();
        (format!("LOCK TABLES {}", tables.join(" ,")).into_bytes().into(), b"UNLOCK TABLES")
    } else {
        (Arc::from(&b"BEGIN"[..]), b"COMMIT")
    };
    Ok(Oltp05 {
        options: options.clone(),
        legacy: legacy.clone(),
        plan: plan.into(),
        begin,
        commit,
        parallel_prepare: false,
    })
}

/// `parallel_prepare.lua`: `common.lua`'s tables, spread over the threads.
pub(crate) fn parallel_prepare(options: &OltpOptions, legacy: &LegacyOptions) -> Result<Oltp05, OptionsError> {
    Ok(Oltp05 { parallel_prepare: true, ..workload(options, legacy)? })
}

/// `thread_init()`: `mysql_table_engine == "myisam"`, compared as is.
fn locks_tables(options: &OltpOptions) -> bool {
    options.mysql_storage_engine == "myisam"
}

/// `event()`'s statements and how many of each.
fn event_plan(options: &OltpOptions, legacy: &LegacyOptions) -> Vec<(Statement05, u32)> {
    let trx = u32::from(!options.skip_trx);
    let reads = u32::from(!legacy.write_only);
    let ranges = reads * u32::from(options.range_selects);
    let writes = u32::from(!legacy.read_only);
    vec![
        (Statement05::Begin, trx),
        (Statement05::PointSelect, reads * options.point_selects),
        (Statement05::SimpleRange, ranges * options.simple_ranges),
        (Statement05::SumRange, ranges * options.sum_ranges),
        (Statement05::OrderRange, ranges * options.order_ranges),
        (Statement05::DistinctRange, ranges * options.distinct_ranges),
        (Statement05::IndexUpdate, writes * options.index_updates),
        (Statement05::NonIndexUpdate, writes * options.non_index_updates),
        (Statement05::DeleteInsert, writes * options.delete_inserts),
        (Statement05::Commit, trx),
    ]
}

impl Workload for Oltp05 {
    fn name(&self) -> &'static str {
        NAME
    }

    fn statements(&self) -> Vec<StatementSpec> {
        Vec::new()
    }

    fn script(&self, _context: ScriptContext) -> Box<dyn Script> {
        Box::new(Oltp05Script {
            plan: Arc::clone(&self.plan),
            begin: Arc::clone(&self.begin),
            commit: self.commit,
            tables: self.options.tables,
            table_size: self.options.table_size,
            range_size: self.options.range_size,
            step: 0,
            done: 0,
            table: 0,
            deleted: None,
            c: *C_TEMPLATE,
            pad: *PAD_TEMPLATE,
        })
    }

    fn prepare(&self, context: ScriptContext, rng: Rng) -> Box<dyn Iterator<Item = String> + Send> {
        prepare05(&self.options, &self.legacy, context, rng, self.parallel_prepare)
    }

    fn prewarm(&self, _context: ScriptContext) -> Vec<String> {
        Vec::new()
    }

    fn cleanup(&self) -> Vec<String> {
        cleanup05(self.options.tables)
    }

    fn progress_line(&self, sql: &str, loading: &mut String) -> Option<String> {
        progress_line05(sql, loading, self.options.table_size)
    }

    fn events_are_transactions(&self) -> bool {
        !self.options.skip_trx && !locks_tables(&self.options)
    }
}

struct Oltp05Script {
    plan: Arc<[(Statement05, u32)]>,
    begin: Arc<[u8]>,
    commit: &'static [u8],
    tables: u32,
    table_size: u32,
    range_size: u32,
    /// Index in `plan` of the current statement kind; 0 starts an event.
    step: usize,
    /// Statements of that kind sent in this event.
    done: u32,
    /// The event's table.
    table: u32,
    /// The id of the DELETE whose INSERT is owed.
    deleted: Option<u32>,
    c: [u8; C_TEMPLATE.len()],
    pad: [u8; PAD_TEMPLATE.len()],
}

impl Oltp05Script {
    /// `sb_rand(1, oltp_table_size)`.
    fn draw_id(&self, rng: &mut Rng) -> u32 {
        rng.default(1, self.table_size)
    }

    /// Writes the next command of `kind`; true when it was the kind's last
    /// of the event.
    fn write_statement(&mut self, kind: Statement05, rng: &mut Rng, sink: &mut CommandSink<'_>) -> bool {
        let table = self.table;
        match kind {
            Statement05::Begin => {
                let form: &'static [u8] = if self.begin.starts_with(b"LOCK") { b"LOCK TABLES ..." } else { b"BEGIN" };
                sink.query_with(form, |out| out.extend_from_slice(&self.begin));
            }
            Statement05::Commit => sink.query(self.commit),
            Statement05::PointSelect | Statement05::IndexUpdate => {
                let id = self.draw_id(rng);
                let (head, tail, form): (&[u8], &[u8], &'static [u8]) = match kind {
                    Statement05::PointSelect => {
                        (b"SELECT c FROM sbtest", b" WHERE id=", b"SELECT c FROM sbtest%u WHERE id=%u")
                    }
                    _ => (b"UPDATE sbtest", b" SET k=k+1 WHERE id=", b"UPDATE sbtest%u SET k=k+1 WHERE id=%u"),
                };
                sink.query_with(form, |out| {
                    out.extend_from_slice(head);
                    push_decimal(out, table);
                    out.extend_from_slice(tail);
                    push_decimal(out, id);
                });
            }
            Statement05::SimpleRange | Statement05::SumRange | Statement05::OrderRange | Statement05::DistinctRange => {
                self.range_select(kind, rng, sink)
            }
            Statement05::NonIndexUpdate => {
                rng.rand_str(C_TEMPLATE, &mut self.c);
                let (id, c) = (self.draw_id(rng), &self.c);
                sink.query_with(b"UPDATE sbtest%u SET c='%s' WHERE id=%u", |out| {
                    out.extend_from_slice(b"UPDATE sbtest");
                    push_decimal(out, table);
                    out.extend_from_slice(b" SET c='");
                    out.extend_from_slice(c);
                    out.extend_from_slice(b"' WHERE id=");
                    push_decimal(out, id);
                });
            }
            Statement05::DeleteInsert => return self.delete_insert(rng, sink),
        }
        true
    }

    /// `get_range_str()`: ` WHERE id BETWEEN %u AND %u`, start and
    /// start + range_size - 1, in the query of `kind`.
    fn range_select(&mut self, kind: Statement05, rng: &mut Rng, sink: &mut CommandSink<'_>) {
        let (head, tail, form): (&[u8], &[u8], &'static [u8]) = match kind {
            Statement05::SimpleRange => {
                (b"SELECT c FROM sbtest", b"", b"SELECT c FROM sbtest%u WHERE id BETWEEN %u AND %u")
            }
            Statement05::SumRange => {
                (b"SELECT SUM(K) FROM sbtest", b"", b"SELECT SUM(K) FROM sbtest%u WHERE id BETWEEN %u AND %u")
            }
            Statement05::OrderRange => (
                b"SELECT c FROM sbtest",
                b" ORDER BY c",
                b"SELECT c FROM sbtest%u WHERE id BETWEEN %u AND %u ORDER BY c",
            ),
            _ => (
                b"SELECT DISTINCT c FROM sbtest",
                b" ORDER BY c",
                b"SELECT DISTINCT c FROM sbtest%u WHERE id BETWEEN %u AND %u ORDER BY c",
            ),
        };
        let start = u64::from(self.draw_id(rng));
        let end = start + u64::from(self.range_size);
        let table = self.table;
        sink.query_with(form, |out| {
            out.extend_from_slice(head);
            push_decimal(out, table);
            out.extend_from_slice(b" WHERE id BETWEEN ");
            push_decimal(out, start);
            out.extend_from_slice(b" AND ");
            // Lua numbers: `start + oltp_range_size - 1`, never below 0 here.
            push_decimal(out, end.saturating_sub(1));
            out.extend_from_slice(tail);
        });
    }

    /// The DELETE, or the INSERT that follows it (true).
    fn delete_insert(&mut self, rng: &mut Rng, sink: &mut CommandSink<'_>) -> bool {
        let table = self.table;
        let Some(id) = self.deleted.take() else {
            let id = self.draw_id(rng);
            sink.query_with(b"DELETE FROM sbtest%u WHERE id=%u", |out| {
                out.extend_from_slice(b"DELETE FROM sbtest");
                push_decimal(out, table);
                out.extend_from_slice(b" WHERE id=");
                push_decimal(out, id);
            });
            self.deleted = Some(id);
            return false;
        };
        rng.rand_str(C_TEMPLATE, &mut self.c);
        rng.rand_str(PAD_TEMPLATE, &mut self.pad);
        let k = self.draw_id(rng);
        query_sbtest_insert(sink, SBTEST_INSERT_FORM_05, table, i64::from(id), k, &self.c, &self.pad);
        true
    }

    /// Whether a command follows in this event after the current one.
    fn more_in_event(&self, step: usize, done: u32) -> bool {
        let rest = self.plan.get(step + 1..).unwrap_or_default();
        self.plan.get(step).is_some_and(|&(_, count)| done < count) || rest.iter().any(|&(_, count)| count > 0)
    }
}

impl Script for Oltp05Script {
    fn next(&mut self, rng: &mut Rng, sink: &mut CommandSink<'_>) -> Result<Step, WorkloadError> {
        if self.step == 0 && self.done == 0 {
            self.table = rng.uniform(1, self.tables);
        }
        // Ends: the workload refuses a plan whose counts are all 0.
        loop {
            let Some(&(kind, count)) = self.plan.get(self.step) else {
                self.step = 0;
                self.done = 0;
                continue;
            };
            if self.done >= count {
                self.step += 1;
                self.done = 0;
                continue;
            }
            if self.write_statement(kind, rng, sink) {
                self.done += 1;
            }
            if self.more_in_event(self.step, self.done) {
                return Ok(Step::More);
            }
            self.step = 0;
            self.done = 0;
            return Ok(Step::Last);
        }
    }

    fn restart_event(&mut self) {
        self.step = 0;
        self.done = 0;
        self.deleted = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::testkit::{context, rng, DecodedCommand, Harness};

    fn sql(event: &[DecodedCommand]) -> Vec<String> {
        event.iter().map(|c| c.sql().to_owned()).collect()
    }

    /// Digits replaced by `N`, the string values by `S`.
    fn shape(sql: &str) -> String {
        let mut out = String::new();
        let mut in_string = false;
        for ch in sql.chars() {
            match ch {
                '\'' => {
                    in_string = !in_string;
                    if in_string {
                        out.push('S');
                    }
                }
                _ if in_string => {}
                '0'..='9' if out.ends_with('N') => {}
                '0'..='9' => out.push('N'),
                _ => out.push(ch),
            }
        }
        out
    }

    #[test]
    fn default_event_is_oltp_lua() {
        let options = OltpOptions { tables: 3, table_size: 500, ..OltpOptions::default() };
        let w = workload(&options, &LegacyOptions::default()).unwrap();
        assert!(w.statements().is_empty(), "0.5 prepares nothing");
        let mut harness = Harness::new(&w, context(0, 1), rng(4));
        for _ in 0..50 {
            let event = sql(&harness.event());
            let shapes: Vec<String> = event.iter().map(|s| shape(s)).collect();
            assert_eq!(shapes.len(), 20);
            assert_eq!(shapes[0], "BEGIN");
            assert!(shapes[1..11].iter().all(|s| s == "SELECT c FROM sbtestN WHERE id=N"));
            assert_eq!(
                shapes[11..],
                [
                    "SELECT c FROM sbtestN WHERE id BETWEEN N AND N",
                    "SELECT SUM(K) FROM sbtestN WHERE id BETWEEN N AND N",
                    "SELECT c FROM sbtestN WHERE id BETWEEN N AND N ORDER BY c",
                    "SELECT DISTINCT c FROM sbtestN WHERE id BETWEEN N AND N ORDER BY c",
                    "UPDATE sbtestN SET k=k+N WHERE id=N",
                    "UPDATE sbtestN SET c=S WHERE id=N",
                    "DELETE FROM sbtestN WHERE id=N",
                    "INSERT INTO sbtestN (id, k, c, pad) VALUES (N, N, S, S)",
                    "COMMIT",
                ]
            );
            // One table for the whole event.
            let table = &event[1][event[1].find("sbtest").unwrap()..event[1].find(" WHERE").unwrap()];
            assert!(event[1..19].iter().all(|s| s.contains(&format!("{table} "))), "{event:?}");
            let range = |s: &str| -> (u64, u64) {
                let rest = &s[s.find("BETWEEN ").unwrap() + 8..];
                let mut n = rest.split(|c: char| !c.is_ascii_digit()).filter(|p| !p.is_empty());
                (n.next().unwrap().parse().unwrap(), n.next().unwrap().parse().unwrap())
            };
            for s in &event[11..15] {
                let (from, to) = range(s);
                assert_eq!(to, from + 99, "{s}");
            }
            let deleted = event[17].rsplit('=').next().unwrap();
            assert!(event[18].contains(&format!("VALUES ({deleted}, ")), "{event:?}");
        }
    }

    #[test]
    fn read_only_write_only_skip_trx_and_counts() {
        let base = OltpOptions { tables: 2, table_size: 100, ..OltpOptions::default() };
        let shapes = |options: &OltpOptions, legacy: &LegacyOptions| -> Vec<String> {
            let w = workload(options, legacy).unwrap();
            sql(&Harness::new(&w, context(0, 1), rng(1)).event()).iter().map(|s| shape(s)).collect()
        };
        let read_only = LegacyOptions { read_only: true, ..LegacyOptions::default() };
        let write_only = LegacyOptions { write_only: true, ..LegacyOptions::default() };
        let event = shapes(&base, &read_only);
        assert_eq!((event.len(), event[15].as_str()), (16, "COMMIT"));
        let event = shapes(&base, &write_only);
        assert_eq!(event.len(), 6);
        assert_eq!(event[1], "UPDATE sbtestN SET k=k+N WHERE id=N");
        // Seed 002: reads only, 1000 point selects and no ranges.
        let seed_002 = OltpOptions {
            point_selects: 1000,
            simple_ranges: 0,
            sum_ranges: 0,
            order_ranges: 0,
            distinct_ranges: 0,
            ..base.clone()
        };
        let event = shapes(&seed_002, &read_only);
        assert_eq!(event.len(), 1002);
        let no_trx = OltpOptions { skip_trx: true, range_selects: false, ..base.clone() };
        let event = shapes(&no_trx, &LegacyOptions::default());
        assert_eq!(event.len(), 14);
        assert!(event.iter().all(|s| s != "BEGIN" && s != "COMMIT"));
        let nothing = OltpOptions { point_selects: 0, range_selects: false, skip_trx: true, ..base };
        assert_eq!(workload(&nothing, &read_only).unwrap_err(), OptionsError::EmptyEvent { test: NAME });
    }

    #[test]
    fn myisam_locks_every_table_instead_of_a_transaction() {
        let myisam = OltpOptions { tables: 3, mysql_storage_engine: "myisam".into(), ..OltpOptions::default() };
        let w = workload(&myisam, &LegacyOptions::default()).unwrap();
        let event = sql(&Harness::new(&w, context(0, 1), rng(1)).event());
        assert_eq!(event[0], "LOCK TABLES sbtest1 WRITE ,sbtest2 WRITE ,sbtest3 WRITE");
        assert_eq!(event[19], "UNLOCK TABLES");
        assert!(!w.events_are_transactions());
        for engine in ["MyISAM", "memory", "heap", "innodb"] {
            let options = OltpOptions { mysql_storage_engine: engine.into(), ..myisam.clone() };
            let w = workload(&options, &LegacyOptions::default()).unwrap();
            let event = sql(&Harness::new(&w, context(0, 1), rng(1)).event());
            assert_eq!((event[0].as_str(), event[19].as_str()), ("BEGIN", "COMMIT"), "{engine}");
            assert!(w.events_are_transactions());
        }
    }

    #[test]
    fn restart_drops_the_owed_insert() {
        let w = workload(&OltpOptions::default(), &LegacyOptions::default()).unwrap();
        let mut harness = Harness::new(&w, context(0, 1), rng(3));
        while !harness.step().0.sql().starts_with("DELETE") {}
        harness.script_mut().restart_event();
        assert_eq!(harness.step().0.sql(), "BEGIN");
    }
}
