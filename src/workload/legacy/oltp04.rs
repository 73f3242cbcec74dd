//! sysbench 0.4's built-in `--test=oltp` (`sysbench/tests/oltp/sb_oltp.c`
//! on the 0.4 branch): one table (`--oltp-table-name`, `sbtest`) and
//! server-side prepared statements whose ids are bound as 32-bit `LONG`s,
//! as 0.4 bound them. `--oltp-test-mode` picks the event:
//!
//! - `complex` (the default): a transaction of `--oltp-point-selects` point
//!   selects, the four kinds of range (unless `--oltp-range-selects=off`),
//!   then index updates, non-index updates and DELETE/INSERT pairs of the
//!   same id; `--oltp-read-only` drops the writes, `--oltp-write-only` the
//!   reads. The transaction is `BEGIN`/`COMMIT`, or for an engine without
//!   transactions `LOCK TABLES sbtest WRITE` (`READ` when read-only) and
//!   `UNLOCK TABLES` ([`TrxStyle`]); `--oltp-skip-trx` sends neither.
//! - `simple`: one point select.
//! - `nontrx`: one statement, chosen by `--oltp-nontrx-mode`: `SELECT pad`,
//!   an update of `k` or of `c`, an INSERT (into the table emptied by
//!   `TRUNCATE TABLE` before the run), or a DELETE.
//!
//! 0.4's own details kept: the ids come from 0.4's generator and
//! distributions ([`Gen04`]: `lrand48()`, unseeded unless `--seed-rng` or
//! `--init-rng` says, with 0.4's integer special, gaussian and uniform),
//! all of an event's ids drawn before it runs, as 0.4 built the whole
//! request first, and `c` and `pad` drawn as each statement runs, as
//! `-`-joined numbers (10 and 5 of them, the first drawn printed last, up
//! to 119 and 59 characters); a range starts at a drawn id moved back so
//! the range ends within the table (`table_size - range_size`, in
//! unsigned arithmetic, at least 1), and the DISTINCT range is one row
//! longer (`BETWEEN x AND x+range_size`); the INSERT of a pair writes a
//! fixed row; a nontrx DELETE (and an INSERT without auto_inc) takes ids
//! from 0.4's sequence `(2147483647 * n) % size + 1`, which visits every id
//! once before repeating; a transaction that an ignored error (a deadlock)
//! stops runs again with the ids it had, as 0.4 retried the request it had
//! built. So one connection sends what a one-thread 0.4 run sends, value
//! for value (`testdata/sysbench_04`).
//!
//! What differs, and why:
//! - 0.4 shared one generator and one nontrx id sequence between its
//!   threads, under no lock and a mutex; each connection has its own
//!   generator ([`Gen04`]) and takes every n-th term of the sequence:
//!   nothing is shared, and with several connections the order of values
//!   differs from a 0.4 run's (which varies from run to run anyway);
//! - `c` and `pad` go out padded with spaces to a fixed 119 and 59 bytes,
//!   which a `CHAR` column stores and compares exactly as 0.4's shorter
//!   strings (trailing spaces are not part of a `CHAR` value): the prepared
//!   packet is patched in place, without allocating;
//! - `BEGIN`, `LOCK TABLES` and `UNLOCK TABLES` go out as COM_QUERY text
//!   (MySQL refuses to prepare the last two, and 0.4 then fell back to text
//!   as well); `COMMIT` is prepared, as in 0.4;
//! - the engine for the transaction style comes from `--mysql-table-engine`
//!   where 0.4's `run` asked the server (`SHOW TABLE STATUS`): give `run`
//!   the engine `prepare` had.

use std::sync::Arc;

use wirebench_protocol::command::{ExecuteTemplate, ParamSlot};

use super::super::{
    CommandSink, OltpOptions, OptionsError, Script, ScriptContext, StatementSpec, Step, StmtId, Workload, WorkloadError,
};
use super::rand04::Gen04;
use super::table04::{cleanup04, prepare04, progress_line04, trx_style, TrxStyle};
use super::{LegacyOptions, NontrxMode, Oltp04Mode};
use crate::rand::Rng;

pub const NAME: &str = "oltp";

/// `LARGE_PRIME`, the step of 0.4's nontrx id sequence.
const LARGE_PRIME: u64 = 2_147_483_647;

/// `c` as 0.4's `snprintf(buf->c, 120, ...)` leaves it at most.
const C_LEN: usize = 119;
/// `pad`: `snprintf(buf->pad, 60, ...)`.
const PAD_LEN: usize = 59;

/// One of 0.4's prepared statements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Query04 {
    Point,
    Range,
    Sum,
    Order,
    Distinct,
    UpdateKey,
    UpdateNokey,
    Delete,
    /// complex's INSERT of a fixed row with the deleted id.
    InsertRow,
    /// nontrx's `SELECT pad`.
    SelectPad,
    /// nontrx's INSERT of drawn values.
    InsertValues,
    Commit,
}

impl Query04 {
    const COUNT: usize = 12;

    fn sql(self, table: &str, all_cols: bool) -> String {
        match self {
            Query04::Point if all_cols => format!("SELECT id, k, c, pad from {table} where id=?"),
            Query04::Point => format!("SELECT c from {table} where id=?"),
            Query04::Range => format!("SELECT c from {table} where id between ? and ?"),
            Query04::Sum => format!("SELECT SUM(K) from {table} where id between ? and ?"),
            Query04::Order => format!("SELECT c from {table} where id between ? and ? order by c"),
            Query04::Distinct => format!("SELECT DISTINCT c from {table} where id between ? and ? order by c"),
            Query04::UpdateKey => format!("UPDATE {table} set k=k+1 where id=?"),
            Query04::UpdateNokey => format!("UPDATE {table} set c=? where id=?"),
            Query04::Delete => format!("DELETE from {table} where id=?"),
            Query04::InsertRow => {
                format!("INSERT INTO {table} values(?,0,' ','aaaaaaaaaaffffffffffrrrrrrrrrreeeeeeeeeeyyyyyyyyyy')")
            }
            Query04::SelectPad => format!("SELECT pad from {table} where id=?"),
            Query04::InsertValues => format!("INSERT INTO {table} values(?,?,?,?)"),
            Query04::Commit => "COMMIT".to_owned(),
        }
    }

    fn slots(self) -> Vec<ParamSlot> {
        const ID: ParamSlot = ParamSlot::Int32;
        match self {
            Query04::Point | Query04::UpdateKey | Query04::Delete | Query04::InsertRow | Query04::SelectPad => vec![ID],
            Query04::Range | Query04::Sum | Query04::Order | Query04::Distinct => vec![ID, ID],
            Query04::UpdateNokey => vec![ParamSlot::Bytes { len: C_LEN }, ID],
            Query04::InsertValues => vec![ID, ID, ParamSlot::Bytes { len: C_LEN }, ParamSlot::Bytes { len: PAD_LEN }],
            Query04::Commit => Vec::new(),
        }
    }
}

/// A step of an event.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step04 {
    /// COM_QUERY text: BEGIN, LOCK TABLES, UNLOCK TABLES.
    Text(Arc<[u8]>),
    /// A prepared statement, run this many times.
    Run(Query04, u32),
    /// complex's DELETE and INSERT of the same id, this many pairs.
    DeleteInsert(u32),
}

impl Step04 {
    fn commands(&self) -> u32 {
        match *self {
            Step04::Text(_) => 1,
            Step04::Run(_, count) | Step04::DeleteInsert(count) => count,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Oltp04 {
    options: OltpOptions,
    legacy: LegacyOptions,
    plan: Arc<[Step04]>,
    /// The prepared statements, in [`StmtId`] order.
    queries: Vec<Query04>,
}

pub(crate) fn workload(options: &OltpOptions, legacy: &LegacyOptions) -> Result<Oltp04, OptionsError> {
    if options.auto_inc && options.secondary {
        return Err(OptionsError::AutoIncWithSecondary);
    }
    let plan = match legacy.oltp04_mode {
        Oltp04Mode::Simple => vec![Step04::Run(Query04::Point, 1)],
        Oltp04Mode::Complex => complex_plan(options, legacy)?,
        Oltp04Mode::Nontrx(mode) => vec![Step04::Run(nontrx_query(mode), 1)],
    };
    if plan.iter().all(|step| step.commands() == 0) {
        return Err(OptionsError::EmptyEvent { test: NAME });
    }
    let mut queries = Vec::new();
    for step in &plan {
        let prepared: &[Query04] = match step {
            Step04::Text(_) => &[],
            Step04::Run(query, _) => std::slice::from_ref(query),
            Step04::DeleteInsert(_) => &[Query04::Delete, Query04::InsertRow],
        };
        queries.extend_from_slice(prepared);
    }
    Ok(Oltp04 { options: options.clone(), legacy: legacy.clone(), plan: plan.into(), queries })
}

fn nontrx_query(mode: NontrxMode) -> Query04 {
    match mode {
        NontrxMode::Select => Query04::SelectPad,
        NontrxMode::UpdateKey => Query04::UpdateKey,
        NontrxMode::UpdateNokey => Query04::UpdateNokey,
        NontrxMode::Insert => Query04::InsertValues,
        NontrxMode::Delete => Query04::Delete,
    }
}

/// `get_request_complex()`'s statements.
fn complex_plan(options: &OltpOptions, legacy: &LegacyOptions) -> Result<Vec<Step04>, OptionsError> {
    let reads = u32::from(!legacy.write_only);
    let ranges = reads * u32::from(options.range_selects);
    let writes = u32::from(!legacy.read_only);
    let mut plan = Vec::new();
    let trx = if options.skip_trx { None } else { Some(trx_style(options, legacy)?) };
    let table = &legacy.table_name;
    let mode = if legacy.read_only { "READ" } else { "WRITE" };
    match trx {
        Some(TrxStyle::BeginCommit) => plan.push(Step04::Text(Arc::from(&b"BEGIN"[..]))),
        Some(TrxStyle::LockTables) => {
            plan.push(Step04::Text(format!("LOCK TABLES {table} {mode}").into_bytes().into()))
        }
        None => {}
    }
    plan.extend([
        Step04::Run(Query04::Point, reads * options.point_selects),
        Step04::Run(Query04::Range, ranges * options.simple_ranges),
        Step04::Run(Query04::Sum, ranges * options.sum_ranges),
        Step04::Run(Query04::Order, ranges * options.order_ranges),
        Step04::Run(Query04::Distinct, ranges * options.distinct_ranges),
        Step04::Run(Query04::UpdateKey, writes * options.index_updates),
        Step04::Run(Query04::UpdateNokey, writes * options.non_index_updates),
        Step04::DeleteInsert(writes * options.delete_inserts),
    ]);
    match trx {
        Some(TrxStyle::BeginCommit) => plan.push(Step04::Run(Query04::Commit, 1)),
        Some(TrxStyle::LockTables) => plan.push(Step04::Text(Arc::from(&b"UNLOCK TABLES"[..]))),
        None => {}
    }
    Ok(plan)
}

impl Workload for Oltp04 {
    fn name(&self) -> &'static str {
        NAME
    }

    fn statements(&self) -> Vec<StatementSpec> {
        let (table, all_cols) = (&self.legacy.table_name, self.legacy.point_select_all_cols);
        self.queries.iter().map(|q| StatementSpec { sql: q.sql(table, all_cols), slots: q.slots() }).collect()
    }

    fn script(&self, context: ScriptContext) -> Box<dyn Script> {
        let mut stmt_ids = [usize::MAX / 4; Query04::COUNT];
        for (id, &query) in self.queries.iter().enumerate() {
            stmt_ids[query as usize] = id;
        }
        let threads = context.threads.max(1);
        let draws: u32 = self.plan.iter().map(Step04::draws).sum();
        Box::new(Oltp04Script {
            plan: Arc::clone(&self.plan),
            stmt_ids,
            table_size: self.options.table_size,
            range_size: self.options.range_size,
            auto_inc: self.options.auto_inc,
            gen: Gen04::for_connection(self.legacy.rand04, context.thread % threads),
            drawn: Vec::with_capacity(draws as usize),
            next_drawn: 0,
            retrying: false,
            step: 0,
            done: 0,
            deleted: None,
            sequence: u64::from(context.thread % threads),
            sequence_step: u64::from(threads),
            c: [b' '; C_LEN],
            pad: [b' '; PAD_LEN],
        })
    }

    fn prepare(&self, context: ScriptContext, _rng: Rng) -> Box<dyn Iterator<Item = String> + Send> {
        if context.thread != 0 {
            return Box::new(std::iter::empty());
        }
        Box::new(prepare04(&self.options, &self.legacy))
    }

    fn prewarm(&self, _context: ScriptContext) -> Vec<String> {
        Vec::new()
    }

    fn cleanup(&self) -> Vec<String> {
        cleanup04(&self.legacy)
    }

    fn progress_line(&self, sql: &str, loading: &mut String) -> Option<String> {
        progress_line04(sql, loading, self.options.table_size)
    }

    fn before_run(&self) -> Vec<String> {
        match self.legacy.oltp04_mode {
            Oltp04Mode::Nontrx(NontrxMode::Insert) => vec![format!("TRUNCATE TABLE {}", self.legacy.table_name)],
            _ => Vec::new(),
        }
    }

    fn events_are_transactions(&self) -> bool {
        self.plan.first().is_some_and(|s| matches!(s, Step04::Text(t) if &t[..] == b"BEGIN"))
    }
}

struct Oltp04Script {
    plan: Arc<[Step04]>,
    /// The [`StmtId`] of each [`Query04`] this workload prepares.
    stmt_ids: [StmtId; Query04::COUNT],
    table_size: u32,
    range_size: u32,
    auto_inc: bool,
    gen: Gen04,
    /// The event's ids, drawn before it runs, as `get_request_*()` builds
    /// the whole request first; the strings are drawn as it runs, as
    /// `get_sql_statement_*()` binds them.
    drawn: Vec<u32>,
    next_drawn: usize,
    /// After an ignored error (a deadlock) the event runs again with the
    /// same ids, as 0.4 retried the request it had built.
    retrying: bool,
    /// Index in `plan` of the current step.
    step: usize,
    /// Commands of that step sent in this event.
    done: u32,
    /// The id of the DELETE whose INSERT is owed.
    deleted: Option<u32>,
    /// This connection's next term of the nontrx id sequence, and its step.
    sequence: u64,
    sequence_step: u64,
    c: [u8; C_LEN],
    pad: [u8; PAD_LEN],
}

impl Step04 {
    /// How many `GET_RANDOM_ID()` the step takes when the request is built.
    fn draws(&self) -> u32 {
        match *self {
            Step04::Text(_) | Step04::Run(Query04::Commit | Query04::Delete | Query04::InsertRow, _) => 0,
            Step04::Run(_, count) | Step04::DeleteInsert(count) => count,
        }
    }
}

impl Oltp04Script {
    /// Draws the event's ids, in the order of its statements.
    fn draw_event(&mut self) {
        self.drawn.clear();
        self.next_drawn = 0;
        for step in self.plan.iter() {
            for _ in 0..step.draws() {
                self.drawn.push(self.gen.random_id(self.table_size));
            }
        }
    }

    /// The next of the event's drawn ids.
    fn next_drawn_id(&mut self) -> u32 {
        let id = self.drawn.get(self.next_drawn).copied().unwrap_or(0);
        self.next_drawn += 1;
        id
    }

    /// `get_unique_random_id()`: term `n` of the sequence is
    /// `(LARGE_PRIME * (n + 1)) % table_size + 1`.
    fn unique_id(&mut self) -> u32 {
        let n = self.sequence;
        self.sequence += self.sequence_step;
        let term = LARGE_PRIME.wrapping_mul(n + 1);
        term.checked_rem(u64::from(self.table_size)).map_or(1, |r| r as u32 + 1)
    }

    /// A range of `query`: the start moved back into the table as 0.4 does
    /// in unsigned arithmetic, DISTINCT one row longer.
    fn clamped_range(&mut self, query: Query04) -> (u32, u32) {
        let mut from = self.next_drawn_id();
        if from.wrapping_add(self.range_size) > self.table_size {
            from = self.table_size.wrapping_sub(self.range_size);
        }
        from = from.max(1);
        let extra = if query == Query04::Distinct { 0 } else { 1 };
        (from, from.wrapping_add(self.range_size).wrapping_sub(extra))
    }

    /// Writes one execute of `query`.
    fn execute_query04(&mut self, query: Query04, sink: &mut CommandSink<'_>) -> Result<(), WorkloadError> {
        let stmt = self.stmt_ids[query as usize];
        // 0.4 binds its unsigned ids as signed 32-bit LONGs.
        let long = |v: u32| v as i32;
        match query {
            Query04::Range | Query04::Sum | Query04::Order | Query04::Distinct => {
                let (from, to) = self.clamped_range(query);
                sink.execute(stmt, |t| {
                    t.set_i32(0, long(from))?;
                    t.set_i32(1, long(to))
                })
            }
            Query04::UpdateNokey => {
                let id = self.next_drawn_id();
                random_numbers(&mut self.gen, &mut self.c);
                let c = &self.c;
                sink.execute(stmt, |t| {
                    t.set_bytes(0, c)?;
                    t.set_i32(1, long(id))
                })
            }
            Query04::InsertValues => self.insert_values(stmt, sink),
            Query04::Commit => sink.execute(stmt, |_| Ok(())),
            // A nontrx DELETE: the pairs' go through `pair`.
            Query04::Delete => {
                let id = self.unique_id();
                sink.execute(stmt, |t| t.set_i32(0, long(id)))
            }
            Query04::InsertRow => {
                let id = self.deleted.take().unwrap_or(0);
                sink.execute(stmt, |t| t.set_i32(0, long(id)))
            }
            Query04::Point | Query04::UpdateKey | Query04::SelectPad => {
                let id = self.next_drawn_id();
                sink.execute(stmt, |t| t.set_i32(0, long(id)))
            }
        }
    }

    /// The DELETE of a pair, or the INSERT of the same id that follows it
    /// (true).
    fn pair(&mut self, sink: &mut CommandSink<'_>) -> Result<bool, WorkloadError> {
        if self.deleted.is_some() {
            self.execute_query04(Query04::InsertRow, sink)?;
            return Ok(true);
        }
        let id = self.next_drawn_id();
        self.deleted = Some(id);
        sink.execute(self.stmt_ids[Query04::Delete as usize], |t| t.set_i32(0, id as i32))?;
        Ok(false)
    }

    /// The nontrx INSERT: NULL (auto_inc) or the next sequence id, the
    /// drawn k, then c and pad.
    fn insert_values(&mut self, stmt: StmtId, sink: &mut CommandSink<'_>) -> Result<(), WorkloadError> {
        let k = self.next_drawn_id();
        random_numbers(&mut self.gen, &mut self.c);
        random_numbers(&mut self.gen, &mut self.pad);
        let id = (!self.auto_inc).then(|| self.unique_id());
        let (c, pad) = (&self.c, &self.pad);
        sink.execute(stmt, |t: &mut ExecuteTemplate| {
            t.set_null(0, id.is_none())?;
            if let Some(id) = id {
                t.set_i32(0, id as i32)?;
            }
            t.set_i32(1, k as i32)?;
            t.set_bytes(2, c)?;
            t.set_bytes(3, pad)
        })
    }

    /// Whether a command follows the current one in this event.
    fn more_to_send(&self) -> bool {
        let rest = self.plan.get(self.step + 1..).unwrap_or_default();
        self.plan.get(self.step).is_some_and(|s| self.done < s.commands()) || rest.iter().any(|s| s.commands() > 0)
    }
}

/// `%lu-%lu-...` of `sb_rnd()` values, as many as 0.4 wrote into a buffer
/// of this size (10 into `c`, 5 into `pad`), cut at its end and padded with
/// spaces. gcc evaluates `snprintf`'s arguments right to left: the first
/// value drawn is printed last.
fn random_numbers(gen: &mut Gen04, out: &mut [u8]) {
    let count = if out.len() == C_LEN { 10 } else { 5 };
    let mut values = [0u32; 10];
    for value in values.iter_mut().take(count).rev() {
        *value = gen.sb_rnd();
    }
    out.fill(b' ');
    let mut at = 0;
    for (i, &value) in values.iter().take(count).enumerate() {
        let mut digits = [0u8; 10];
        let (mut n, mut len) = (value, 0);
        loop {
            digits[len] = b'0' + (n % 10) as u8;
            len += 1;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        let separator = if i > 0 { Some(b'-') } else { None };
        for byte in separator.into_iter().chain(digits[..len].iter().rev().copied()) {
            let Some(slot) = out.get_mut(at) else { return };
            *slot = byte;
            at += 1;
        }
    }
}

impl Script for Oltp04Script {
    fn next(&mut self, _rng: &mut Rng, sink: &mut CommandSink<'_>) -> Result<Step, WorkloadError> {
        if self.step == 0 && self.done == 0 && self.deleted.is_none() {
            if !self.retrying {
                self.draw_event();
            }
            self.retrying = false;
            self.next_drawn = 0;
        }
        // Ends: the workload refuses a plan whose counts are all 0.
        loop {
            let Some(step) = self.plan.get(self.step) else {
                self.step = 0;
                self.done = 0;
                continue;
            };
            if self.done >= step.commands() {
                self.step += 1;
                self.done = 0;
                continue;
            }
            let finished = match *step {
                Step04::Text(ref sql) => {
                    // BEGIN, LOCK TABLES sbtest WRITE|READ or UNLOCK TABLES.
                    let form: &'static [u8] = match sql.first() {
                        Some(b'B') => b"BEGIN",
                        Some(b'L') => b"LOCK TABLES sbtest %s",
                        _ => b"UNLOCK TABLES",
                    };
                    sink.query_with(form, |out| out.extend_from_slice(sql));
                    true
                }
                Step04::Run(query, _) => {
                    self.execute_query04(query, sink)?;
                    true
                }
                Step04::DeleteInsert(_) => self.pair(sink)?,
            };
            self.done += u32::from(finished);
            if self.more_to_send() {
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
        self.retrying = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::testkit::{context, rng, DecodedCommand, DecodedParam, Harness};

    fn options(table_size: u32) -> OltpOptions {
        OltpOptions { table_size, ..OltpOptions::default() }
    }

    fn with_mode(mode: Oltp04Mode) -> LegacyOptions {
        LegacyOptions { oltp04_mode: mode, ..LegacyOptions::default() }
    }

    fn events(w: &Oltp04, thread: u32, threads: u32, count: usize) -> Vec<Vec<DecodedCommand>> {
        let mut harness = Harness::new(w, context(thread, threads), rng(6));
        (0..count).map(|_| harness.event()).collect()
    }

    fn ints(command: &DecodedCommand) -> Vec<i64> {
        command.params().iter().filter(|p| matches!(p, DecodedParam::Int(_))).map(DecodedParam::int).collect()
    }

    #[test]
    fn complex_is_get_request_complex() {
        let w = workload(&options(1000), &LegacyOptions::default()).unwrap();
        assert!(w.events_are_transactions());
        for event in events(&w, 0, 1, 30) {
            let sql: Vec<&str> = event.iter().map(DecodedCommand::sql).collect();
            assert_eq!(sql.len(), 20);
            assert_eq!(event[0], DecodedCommand::Query("BEGIN".into()));
            assert!(sql[1..11].iter().all(|s| *s == "SELECT c from sbtest where id=?"));
            assert_eq!(
                sql[11..],
                [
                    "SELECT c from sbtest where id between ? and ?",
                    "SELECT SUM(K) from sbtest where id between ? and ?",
                    "SELECT c from sbtest where id between ? and ? order by c",
                    "SELECT DISTINCT c from sbtest where id between ? and ? order by c",
                    "UPDATE sbtest set k=k+1 where id=?",
                    "UPDATE sbtest set c=? where id=?",
                    "DELETE from sbtest where id=?",
                    "INSERT INTO sbtest values(?,0,' ','aaaaaaaaaaffffffffffrrrrrrrrrreeeeeeeeeeyyyyyyyyyy')",
                    "COMMIT",
                ]
            );
            for (i, range) in event[11..15].iter().enumerate() {
                let [from, to] = ints(range)[..] else { panic!("{range:?}") };
                // Moved back to end within the table; DISTINCT is one longer.
                assert!((1..=900).contains(&from), "{range:?}");
                assert_eq!(to - from, if i == 3 { 100 } else { 99 }, "{range:?}");
            }
            assert_eq!(ints(&event[17]), ints(&event[18]), "the INSERT puts back the deleted id");
            let c = event[16].params()[0].bytes();
            assert_eq!(c.len(), 119);
            let numbers: Vec<&str> = std::str::from_utf8(c).unwrap().trim_end().split('-').collect();
            assert_eq!(numbers.len(), 10, "{c:?}");
            assert!(numbers.iter().all(|n| n.parse::<u32>().is_ok_and(|n| n < 0x3fff_ffff)));
        }
    }

    #[test]
    fn complex_options_and_lock_tables() {
        let read_only = LegacyOptions { read_only: true, ..LegacyOptions::default() };
        let myisam = OltpOptions { mysql_storage_engine: "MyISAM".into(), ..options(100) };
        let w = workload(&myisam, &read_only).unwrap();
        assert!(!w.events_are_transactions());
        let event = &events(&w, 0, 1, 1)[0];
        assert_eq!(event.len(), 16);
        assert_eq!(event[0], DecodedCommand::Query("LOCK TABLES sbtest READ".into()));
        assert_eq!(event[15], DecodedCommand::Query("UNLOCK TABLES".into()));
        let write_only = LegacyOptions { write_only: true, table_name: "t4".into(), ..LegacyOptions::default() };
        let event = &events(&workload(&myisam, &write_only).unwrap(), 0, 1, 1)[0];
        assert_eq!(event.len(), 6);
        assert_eq!(event[0], DecodedCommand::Query("LOCK TABLES t4 WRITE".into()));
        assert_eq!(event[1].sql(), "UPDATE t4 set k=k+1 where id=?");
        let skip = OltpOptions {
            skip_trx: true,
            range_selects: false,
            mysql_storage_engine: "rocksdb".into(),
            ..options(100)
        };
        let event = &events(&workload(&skip, &LegacyOptions::default()).unwrap(), 0, 1, 1)[0];
        assert_eq!(event.len(), 14, "no transaction, no ranges: {event:?}");
        let unknown = OltpOptions { skip_trx: false, ..skip };
        assert!(matches!(workload(&unknown, &LegacyOptions::default()), Err(OptionsError::UnknownEngineTrx { .. })));
        let secondary = OltpOptions { secondary: true, ..options(100) };
        assert_eq!(workload(&secondary, &LegacyOptions::default()).unwrap_err(), OptionsError::AutoIncWithSecondary);
        let all_cols = LegacyOptions { point_select_all_cols: true, ..with_mode(Oltp04Mode::Simple) };
        let w = workload(&options(100), &all_cols).unwrap();
        assert_eq!(w.statements().len(), 1);
        assert_eq!(events(&w, 0, 1, 1)[0][0].sql(), "SELECT id, k, c, pad from sbtest where id=?");
    }

    /// 0.4's unsigned arithmetic: a range longer than the table starts
    /// far past it, as 0.4 sent it (as a signed LONG).
    #[test]
    fn ranges_longer_than_the_table_wrap_as_in_0_4() {
        let w = workload(&OltpOptions { range_size: 150, ..options(100) }, &LegacyOptions::default()).unwrap();
        let event = &events(&w, 0, 1, 1)[0];
        let from = 100u32.wrapping_sub(150);
        assert_eq!(ints(&event[11]), [i64::from(from as i32), i64::from(from.wrapping_add(149) as i32)]);
    }

    #[test]
    fn nontrx_modes() {
        for (mode, sql) in [
            (NontrxMode::Select, "SELECT pad from sbtest where id=?"),
            (NontrxMode::UpdateKey, "UPDATE sbtest set k=k+1 where id=?"),
            (NontrxMode::UpdateNokey, "UPDATE sbtest set c=? where id=?"),
            (NontrxMode::Insert, "INSERT INTO sbtest values(?,?,?,?)"),
            (NontrxMode::Delete, "DELETE from sbtest where id=?"),
        ] {
            let w = workload(&options(50), &with_mode(Oltp04Mode::Nontrx(mode))).unwrap();
            assert!(!w.events_are_transactions());
            assert_eq!(w.before_run().len(), usize::from(mode == NontrxMode::Insert), "{mode:?}");
            for event in events(&w, 0, 1, 5) {
                assert_eq!((event.len(), event[0].sql()), (1, sql), "{mode:?}");
            }
        }
        let insert = with_mode(Oltp04Mode::Nontrx(NontrxMode::Insert));
        let w = workload(&options(50), &insert).unwrap();
        assert_eq!(w.before_run(), ["TRUNCATE TABLE sbtest"]);
        let event = &events(&w, 0, 1, 1)[0][0];
        assert_eq!(event.params()[0], DecodedParam::Null, "auto_inc: NULL id");
        assert_eq!((event.params()[2].bytes().len(), event.params()[3].bytes().len()), (119, 59));
        let pad = std::str::from_utf8(event.params()[3].bytes()).unwrap();
        assert_eq!(pad.trim_end().split('-').count(), 5, "{pad}");
        let w = workload(&OltpOptions { auto_inc: false, ..options(50) }, &insert).unwrap();
        assert!(matches!(events(&w, 0, 1, 1)[0][0].params()[0], DecodedParam::Int(_)));
    }

    /// A deadlocked transaction runs again with the ids it had, as 0.4
    /// retried its request; the next one draws new ones.
    #[test]
    fn a_retried_event_keeps_its_ids() {
        let w = workload(&options(1000), &LegacyOptions::default()).unwrap();
        let mut harness = Harness::new(&w, context(0, 1), rng(6));
        let mut first = Vec::new();
        for _ in 0..17 {
            first.push(ints(&harness.step().0));
        }
        harness.script_mut().restart_event();
        let retried: Vec<Vec<i64>> = harness.event().iter().map(ints).collect();
        assert_eq!(retried[..17], first[..]);
        let next: Vec<Vec<i64>> = harness.event().iter().map(ints).collect();
        assert_ne!(next[1..11], retried[1..11]);
    }

    /// Two connections together take 0.4's one sequence: every id once in
    /// the first `table_size` deletes.
    #[test]
    fn nontrx_delete_ids_are_0_4s_sequence_split_between_connections() {
        let w = workload(&options(50), &with_mode(Oltp04Mode::Nontrx(NontrxMode::Delete))).unwrap();
        let mut ids: Vec<i64> =
            [0, 1].into_iter().flat_map(|thread| events(&w, thread, 2, 25)).map(|e| ints(&e[0])[0]).collect();
        let first = ints(&events(&w, 0, 2, 1)[0][0])[0];
        assert_eq!(first, (2_147_483_647 % 50 + 1) as i64);
        ids.sort_unstable();
        assert_eq!(ids, (1..=50).collect::<Vec<i64>>());
    }
}
