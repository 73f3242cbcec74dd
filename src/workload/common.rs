//! What the OLTP scripts share, after sysbench 1.0.20's `oltp_common.lua`:
//! the statements, the event engine that runs them in the scripts' order,
//! and the `prepare` / `prewarm` / `cleanup` SQL.
//!
//! Every detail that shows on the wire or in the random sequence follows the
//! Lua source: the SQL text byte for byte, one `rand.uniform(1, tables)` at
//! the start of each statement group (even a group of 0 statements), ids
//! from `rand.default(1, table_size)`, and the order of draws inside a
//! group, so that a fixed `--rand-seed` gives sysbench's own commands.
//!
//! Differences, on purpose:
//! - `BEGIN` goes out as COM_QUERY text. sysbench prepares it like the other
//!   statements; MySQL refuses (ER_UNSUPPORTED_PS) and libmysqlclient falls
//!   back to text, MariaDB 10.11 prepares it. The server does the same
//!   either way. `COMMIT` is a prepared statement, as in sysbench.
//! - Integer parameters are BIGINT (`ParamSlot::Int64`), as sysbench binds
//!   `sysbench.sql.type.INT` (an `int64_t` buffer, type LONGLONG on the
//!   wire); strings are sent as STRING where libmariadb says VAR_STRING,
//!   which the server treats alike.

use std::io::Write as _;
use std::iter::StepBy;
use std::ops::RangeInclusive;
use std::sync::Arc;

use wirebench_protocol::command::{ExecuteTemplate, ParamSlot};
use wirebench_protocol::UsageError;

use super::oltp_options::{OltpOptions, OptionsError};
use super::{CommandSink, Script, ScriptContext, StatementKind, StatementSpec, Step, StmtId, Workload, WorkloadError};
use crate::rand::Rng;

/// `c_value_template`: 10 groups of 11 digits, 119 characters.
pub(crate) const C_TEMPLATE: &[u8; 119] = b"###########-###########-###########-###########-###########-\
###########-###########-###########-###########-###########";
/// `pad_value_template`: 5 groups of 11 digits, 59 characters.
pub(crate) const PAD_TEMPLATE: &[u8; 59] = b"###########-###########-###########-###########-###########";

/// `BULK_PACKET_SIZE` in sysbench's `db_driver.c`: the buffer of a
/// multi-row INSERT, its terminating NUL included.
pub(crate) const BULK_PACKET_SIZE: usize = 512 * 1024;

/// One of `oltp_common.lua`'s `stmt_defs`, prepared once per table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OltpStatement {
    PointSelect,
    SimpleRange,
    SumRange,
    OrderRange,
    DistinctRange,
    IndexUpdate,
    NonIndexUpdate,
    Delete,
    Insert,
}

impl OltpStatement {
    const COUNT: usize = 9;

    /// The Lua format string; `%u` is the table number.
    pub(crate) fn template(self) -> &'static str {
        match self {
            OltpStatement::PointSelect => "SELECT c FROM sbtest%u WHERE id=?",
            OltpStatement::SimpleRange => "SELECT c FROM sbtest%u WHERE id BETWEEN ? AND ?",
            OltpStatement::SumRange => "SELECT SUM(k) FROM sbtest%u WHERE id BETWEEN ? AND ?",
            OltpStatement::OrderRange => "SELECT c FROM sbtest%u WHERE id BETWEEN ? AND ? ORDER BY c",
            OltpStatement::DistinctRange => "SELECT DISTINCT c FROM sbtest%u WHERE id BETWEEN ? AND ? ORDER BY c",
            OltpStatement::IndexUpdate => "UPDATE sbtest%u SET k=k+1 WHERE id=?",
            OltpStatement::NonIndexUpdate => "UPDATE sbtest%u SET c=? WHERE id=?",
            OltpStatement::Delete => "DELETE FROM sbtest%u WHERE id=?",
            OltpStatement::Insert => "INSERT INTO sbtest%u (id, k, c, pad) VALUES (?, ?, ?, ?)",
        }
    }

    /// The per-statement report's kind.
    pub(crate) fn kind(self) -> StatementKind {
        match self {
            OltpStatement::PointSelect => StatementKind::PointSelect,
            OltpStatement::SimpleRange => StatementKind::SimpleRange,
            OltpStatement::SumRange => StatementKind::SumRange,
            OltpStatement::OrderRange => StatementKind::OrderRange,
            OltpStatement::DistinctRange => StatementKind::DistinctRange,
            OltpStatement::IndexUpdate => StatementKind::UpdateIndex,
            OltpStatement::NonIndexUpdate => StatementKind::UpdateNonIndex,
            OltpStatement::Delete => StatementKind::Delete,
            OltpStatement::Insert => StatementKind::Insert,
        }
    }

    pub(crate) fn sql(self, table: u32) -> String {
        self.template().replace("%u", &table.to_string())
    }

    /// The parameters as sysbench binds them; strings as long as the values
    /// `set_rand_str` writes (the templates), not the CHAR(120)/CHAR(60)
    /// buffer sizes.
    pub(crate) fn slots(self) -> Vec<ParamSlot> {
        const C: ParamSlot = ParamSlot::Bytes { len: C_TEMPLATE.len() };
        const PAD: ParamSlot = ParamSlot::Bytes { len: PAD_TEMPLATE.len() };
        match self {
            OltpStatement::PointSelect | OltpStatement::IndexUpdate | OltpStatement::Delete => vec![ParamSlot::Int64],
            OltpStatement::SimpleRange
            | OltpStatement::SumRange
            | OltpStatement::OrderRange
            | OltpStatement::DistinctRange => {
                vec![ParamSlot::Int64, ParamSlot::Int64]
            }
            OltpStatement::NonIndexUpdate => vec![C, ParamSlot::Int64],
            OltpStatement::Insert => vec![ParamSlot::Int64, ParamSlot::Int64, C, PAD],
        }
    }
}

/// One `execute_*` function of `oltp_common.lua`: a table drawn once, then
/// its statements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StatementGroup {
    PointSelects,
    SimpleRanges,
    SumRanges,
    OrderRanges,
    DistinctRanges,
    IndexUpdates,
    NonIndexUpdates,
    /// `execute_delete_inserts`: a DELETE and an INSERT of the same id.
    DeleteInserts,
    /// `oltp_delete.lua`'s event: DELETE alone.
    Deletes,
}

impl StatementGroup {
    fn statements(self) -> &'static [OltpStatement] {
        match self {
            StatementGroup::PointSelects => &[OltpStatement::PointSelect],
            StatementGroup::SimpleRanges => &[OltpStatement::SimpleRange],
            StatementGroup::SumRanges => &[OltpStatement::SumRange],
            StatementGroup::OrderRanges => &[OltpStatement::OrderRange],
            StatementGroup::DistinctRanges => &[OltpStatement::DistinctRange],
            StatementGroup::IndexUpdates => &[OltpStatement::IndexUpdate],
            StatementGroup::NonIndexUpdates => &[OltpStatement::NonIndexUpdate],
            StatementGroup::DeleteInserts => &[OltpStatement::Delete, OltpStatement::Insert],
            StatementGroup::Deletes => &[OltpStatement::Delete],
        }
    }
}

/// A step of an event, in the order the script's `event()` runs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventStep {
    Begin,
    Commit,
    /// A group and how many times its statements run.
    Group(StatementGroup, u32),
}

impl EventStep {
    fn sends_something(self) -> bool {
        match self {
            EventStep::Begin | EventStep::Commit => true,
            EventStep::Group(_, count) => count > 0,
        }
    }
}

/// Where each statement sits in [`Workload::statements`]: COMMIT first
/// when the event commits, then for table 1, 2, … the same list of
/// statements, so an id is `base + (table - 1) * per_table + position[statement]`.
#[derive(Debug, Clone, Copy)]
struct StatementLayout {
    commit: StmtId,
    base: StmtId,
    per_table: usize,
    /// Index of each statement in a table's list; `NONE` when not prepared.
    position: [usize; OltpStatement::COUNT],
}

impl StatementLayout {
    const NONE: usize = usize::MAX / 4;

    fn new(with_commit: bool, table_statements: &[OltpStatement]) -> StatementLayout {
        let mut position = [StatementLayout::NONE; OltpStatement::COUNT];
        for (i, &statement) in table_statements.iter().enumerate() {
            position[statement as usize] = i;
        }
        let base = usize::from(with_commit);
        StatementLayout {
            commit: if with_commit { 0 } else { StatementLayout::NONE },
            base,
            per_table: table_statements.len(),
            position,
        }
    }

    /// An id past the list for a statement that is not prepared, which the sink
    /// reports as [`WorkloadError::UnknownStatement`].
    #[inline]
    fn id(&self, table: u32, statement: OltpStatement) -> StmtId {
        let table_index = table.saturating_sub(1) as usize;
        self.base + table_index * self.per_table + self.position[statement as usize]
    }
}

/// A test built from `oltp_common.lua`'s prepared statements: oltp_read_only,
/// oltp_read_write, oltp_write_only, oltp_point_select, oltp_update_index,
/// oltp_update_non_index, oltp_delete. The test files give the event plan.
#[derive(Debug, Clone)]
pub struct OltpWorkload {
    name: &'static str,
    options: OltpOptions,
    plan: Arc<[EventStep]>,
    table_statements: Vec<OltpStatement>,
    layout: StatementLayout,
    /// Index in `plan` of the last step that sends a command.
    last_sending_step: usize,
}

impl OltpWorkload {
    pub(crate) fn new(name: &'static str, options: &OltpOptions, plan: Vec<EventStep>) -> Result<Self, OptionsError> {
        if options.tables == 0 {
            return Err(OptionsError::NoTables { test: name });
        }
        let last_sending_step =
            plan.iter().rposition(|p| p.sends_something()).ok_or(OptionsError::EmptyEvent { test: name })?;
        let with_commit = plan.contains(&EventStep::Commit);
        let mut table_statements = Vec::new();
        for step in &plan {
            if let EventStep::Group(group, _) = *step {
                for &statement in group.statements() {
                    if !table_statements.contains(&statement) {
                        table_statements.push(statement);
                    }
                }
            }
        }
        let layout = StatementLayout::new(with_commit, &table_statements);
        Ok(OltpWorkload {
            name,
            options: options.clone(),
            plan: plan.into(),
            table_statements,
            layout,
            last_sending_step,
        })
    }
}

impl Workload for OltpWorkload {
    fn name(&self) -> &'static str {
        self.name
    }

    fn statements(&self) -> Vec<StatementSpec> {
        let mut list =
            Vec::with_capacity(self.layout.base + self.table_statements.len() * self.options.tables as usize);
        if self.layout.base == 1 {
            list.push(StatementSpec { sql: "COMMIT".to_string(), slots: Vec::new() });
        }
        for table in 1..=self.options.tables {
            for statement in &self.table_statements {
                list.push(StatementSpec { sql: statement.sql(table), slots: statement.slots() });
            }
        }
        list
    }

    fn script(&self, _context: ScriptContext) -> Box<dyn Script> {
        Box::new(OltpScript {
            plan: Arc::clone(&self.plan),
            last_sending_step: self.last_sending_step,
            layout: self.layout,
            tables: self.options.tables,
            table_size: self.options.table_size,
            range_size: self.options.range_size,
            current_step: 0,
            entered: false,
            table: 1,
            done: 0,
            insert: None,
            c: *C_TEMPLATE,
            pad: *PAD_TEMPLATE,
        })
    }

    fn common_tables(&self) -> Option<(&OltpOptions, u32)> {
        Some((&self.options, self.options.table_size))
    }

    fn statement_kinds(&self) -> Vec<StatementKind> {
        let mut kinds =
            Vec::with_capacity(self.layout.base + self.table_statements.len() * self.options.tables as usize);
        if self.layout.base == 1 {
            kinds.push(StatementKind::Commit);
        }
        for _ in 1..=self.options.tables {
            kinds.extend(self.table_statements.iter().map(|s| s.kind()));
        }
        kinds
    }

    fn events_are_transactions(&self) -> bool {
        self.plan.first() == Some(&EventStep::Begin) && self.plan.last() == Some(&EventStep::Commit)
    }
}

/// One connection's walk through an [`OltpWorkload`]'s event plan.
struct OltpScript {
    plan: Arc<[EventStep]>,
    last_sending_step: usize,
    layout: StatementLayout,
    tables: u32,
    table_size: u32,
    range_size: u32,
    /// Index in `plan` of the event's current step.
    current_step: usize,
    /// Whether the current group has drawn its table yet.
    entered: bool,
    table: u32,
    /// Iterations of the current group completed.
    done: u32,
    /// The INSERT (id, k) owed after a DELETE of the same id.
    insert: Option<(u32, u32)>,
    c: [u8; C_TEMPLATE.len()],
    pad: [u8; PAD_TEMPLATE.len()],
}

impl OltpScript {
    /// Moves past the current step; `Last` if it was the event's last
    /// command. Steps after the last sending one are groups of 0 commands,
    /// whose table draws the next call makes, before the next event's.
    fn finish_step(&mut self) -> Step {
        let last = self.current_step == self.last_sending_step;
        self.current_step += 1;
        self.entered = false;
        if last {
            Step::Last
        } else {
            Step::More
        }
    }

    /// `get_id()`.
    #[inline]
    fn id(&self, rng: &mut Rng) -> u32 {
        rng.default(1, self.table_size)
    }

    /// Writes one command of `group`; true when the group is complete.
    fn emit(
        &mut self,
        group: StatementGroup,
        count: u32,
        rng: &mut Rng,
        sink: &mut CommandSink<'_>,
    ) -> Result<bool, WorkloadError> {
        let table = self.table;
        match group {
            StatementGroup::PointSelects | StatementGroup::IndexUpdates | StatementGroup::Deletes => {
                let statement = match group {
                    StatementGroup::PointSelects => OltpStatement::PointSelect,
                    StatementGroup::IndexUpdates => OltpStatement::IndexUpdate,
                    _ => OltpStatement::Delete,
                };
                let id = self.id(rng);
                sink.execute(self.layout.id(table, statement), |t| t.set_i64(0, i64::from(id)))?;
            }
            StatementGroup::SimpleRanges
            | StatementGroup::SumRanges
            | StatementGroup::OrderRanges
            | StatementGroup::DistinctRanges => {
                let statement = match group {
                    StatementGroup::SimpleRanges => OltpStatement::SimpleRange,
                    StatementGroup::SumRanges => OltpStatement::SumRange,
                    StatementGroup::OrderRanges => OltpStatement::OrderRange,
                    _ => OltpStatement::DistinctRange,
                };
                // `id + range_size - 1` in Lua numbers: not clamped to the table.
                let from = i64::from(self.id(rng));
                let to = from + i64::from(self.range_size) - 1;
                sink.execute(self.layout.id(table, statement), |t| {
                    t.set_i64(0, from)?;
                    t.set_i64(1, to)
                })?;
            }
            StatementGroup::NonIndexUpdates => {
                // The string is drawn before the id.
                rng.rand_str(C_TEMPLATE, &mut self.c);
                let id = self.id(rng);
                let c = &self.c;
                sink.execute(self.layout.id(table, OltpStatement::NonIndexUpdate), |t| {
                    t.set_bytes(0, c)?;
                    t.set_i64(1, i64::from(id))
                })?;
            }
            StatementGroup::DeleteInserts => match self.insert.take() {
                None => {
                    // All four values are drawn before the DELETE runs.
                    let id = self.id(rng);
                    let k = self.id(rng);
                    rng.rand_str(C_TEMPLATE, &mut self.c);
                    rng.rand_str(PAD_TEMPLATE, &mut self.pad);
                    sink.execute(self.layout.id(table, OltpStatement::Delete), |t| t.set_i64(0, i64::from(id)))?;
                    self.insert = Some((id, k));
                    return Ok(false);
                }
                Some((id, k)) => {
                    let (c, pad) = (&self.c, &self.pad);
                    sink.execute(self.layout.id(table, OltpStatement::Insert), |t| {
                        t.set_i64(0, i64::from(id))?;
                        t.set_i64(1, i64::from(k))?;
                        t.set_bytes(2, c)?;
                        t.set_bytes(3, pad)
                    })?;
                }
            },
        }
        self.done += 1;
        Ok(self.done >= count)
    }
}

impl Script for OltpScript {
    fn next(&mut self, rng: &mut Rng, sink: &mut CommandSink<'_>) -> Result<Step, WorkloadError> {
        // Ends: the plan has a sending step (checked by OltpWorkload::new),
        // so at most one pass over it sends nothing.
        loop {
            let Some(&step) = self.plan.get(self.current_step) else {
                self.current_step = 0;
                self.entered = false;
                continue;
            };
            match step {
                EventStep::Begin => {
                    sink.query_as(StatementKind::Begin, b"BEGIN");
                    return Ok(self.finish_step());
                }
                EventStep::Commit => {
                    sink.execute(self.layout.commit, |_| Ok(()))?;
                    return Ok(self.finish_step());
                }
                EventStep::Group(group, count) => {
                    if !self.entered {
                        // `get_table_num()`, drawn even when the group runs 0 times.
                        self.table = rng.uniform(1, self.tables);
                        self.done = 0;
                        self.entered = true;
                    }
                    if self.done >= count {
                        self.finish_step();
                        continue;
                    }
                    if self.emit(group, count, rng, sink)? {
                        return Ok(self.finish_step());
                    }
                    return Ok(Step::More);
                }
            }
        }
    }

    fn restart_event(&mut self) {
        self.current_step = 0;
        self.entered = false;
        self.insert = None;
    }
}

/// The tables `prepare` and `prewarm` thread `context.thread` handles:
/// `tid % threads + 1`, then every `threads`-th, as `cmd_prepare` loops.
pub(crate) fn tables_of(context: ScriptContext, tables: u32) -> StepBy<RangeInclusive<u32>> {
    let threads = context.threads.max(1);
    (context.thread % threads + 1..=tables).step_by(threads as usize)
}

/// `create_table()`'s CREATE TABLE for the MySQL driver, byte for byte
/// (including the space before the empty table options).
pub(crate) fn create_table_sql(options: &OltpOptions, table: u32) -> String {
    let id_def = if options.auto_inc { "INTEGER NOT NULL AUTO_INCREMENT" } else { "INTEGER NOT NULL" };
    let id_index_def = if options.secondary { "KEY xid" } else { "PRIMARY KEY" };
    format!(
        "CREATE TABLE sbtest{table}(\n  id {id_def},\n  k INTEGER DEFAULT '0' NOT NULL,\n  \
         c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  {id_index_def} (id)\n) \
         /*! ENGINE = {engine} */ {extra}",
        engine = options.mysql_storage_engine,
        extra = options.mysql_table_options,
    )
}

/// `create_table()`'s index on `k`, created after the rows, if
/// `--create_secondary`.
pub(crate) fn create_index_sql(options: &OltpOptions, table: u32) -> Option<String> {
    options.create_secondary.then(|| format!("CREATE INDEX k_{table} ON sbtest{table}(k)"))
}

/// `cmd_prewarm()` for one thread.
pub(crate) fn prewarm_sql(options: &OltpOptions, context: ScriptContext) -> Vec<String> {
    let mut sql =
        vec!["SET tmp_table_size=2*1024*1024*1024".to_string(), "SET max_heap_table_size=2*1024*1024*1024".to_string()];
    for table in tables_of(context, options.tables) {
        let size = options.table_size;
        sql.push(format!("ANALYZE TABLE sbtest{table}"));
        sql.push(format!("SELECT AVG(id) FROM (SELECT * FROM sbtest{table} FORCE KEY (PRIMARY) LIMIT {size}) t"));
        sql.push(format!("SELECT COUNT(*) FROM (SELECT * FROM sbtest{table} WHERE k LIKE '%0%' LIMIT {size}) t"));
    }
    sql
}

/// `cleanup()`: tables 1..=`tables`.
pub(crate) fn cleanup_sql(tables: u32) -> Vec<String> {
    (1..=tables).map(|table| format!("DROP TABLE IF EXISTS sbtest{table}")).collect()
}

/// How a script writes its tables, for [`TableLoad`]: the CREATE TABLE,
/// one row of the data load, the index on `k`.
pub(crate) trait TableSql: Send {
    fn create_table(&self, table: u32) -> String;

    /// Appends one row to `row`; `id` is given when the script numbers the
    /// rows itself (no auto_inc).
    fn push_row(&self, row: &mut String, id: Option<u32>, k: u32, c: &[u8], pad: &[u8]);

    /// The index on `k` created after the rows, if the script creates one.
    fn create_index(&self, table: u32) -> Option<String>;
}

/// `oltp_common.lua`'s `create_table()`.
struct OltpCommonSql {
    options: OltpOptions,
}

impl TableSql for OltpCommonSql {
    fn create_table(&self, table: u32) -> String {
        create_table_sql(&self.options, table)
    }

    /// `(%d, '%s', '%s')`, or `(%d, %d, '%s', '%s')` with the id.
    fn push_row(&self, row: &mut String, id: Option<u32>, k: u32, c: &[u8], pad: &[u8]) {
        row.push('(');
        if let Some(id) = id {
            row.push_str(&id.to_string());
            row.push_str(", ");
        }
        row.push_str(&k.to_string());
        row.push_str(", '");
        row.extend(c.iter().map(|&b| char::from(b)));
        row.push_str("', '");
        row.extend(pad.iter().map(|&b| char::from(b)));
        row.push_str("')");
    }

    fn create_index(&self, table: u32) -> Option<String> {
        create_index_sql(&self.options, table)
    }
}

/// The lines `oltp_common.lua` prints as `prepare` and `cleanup` send
/// `sql`; `loading` is the table whose rows are being inserted, announced
/// once, `table_size` the rows it announces.
pub(crate) fn oltp_common_progress_line(sql: &str, loading: &mut String, table_size: u32) -> Option<String> {
    let table_after = |prefix: &str| sql.strip_prefix(prefix).and_then(|rest| rest.split(['(', ' ', '\n']).next());
    if let Some(table) = table_after("CREATE TABLE ") {
        return Some(format!("Creating table '{table}'..."));
    }
    let loaded = sql.strip_prefix("LOAD DATA LOCAL INFILE ").and_then(|rest| rest.split(" INTO TABLE ").nth(1));
    if let Some(table) = table_after("INSERT INTO ").or_else(|| loaded?.split(' ').next()) {
        if loading != table {
            table.clone_into(loading);
            return Some(format!("Inserting {table_size} records into '{table}'"));
        }
        return None;
    }
    if sql.starts_with("CREATE INDEX") {
        let table = sql.split(" ON ").nth(1)?.split('(').next()?;
        return Some(format!("Creating a secondary index on '{table}'..."));
    }
    table_after("DROP TABLE IF EXISTS ").map(|table| format!("Dropping table '{table}'..."))
}

/// Draws one row's values as the loop in `create_table()` does: c, pad,
/// then k, which it returns.
pub(crate) fn draw_row(
    rng: &mut Rng,
    table_size: u32,
    c: &mut [u8; C_TEMPLATE.len()],
    pad: &mut [u8; PAD_TEMPLATE.len()],
) -> u32 {
    rng.rand_str(C_TEMPLATE, c);
    rng.rand_str(PAD_TEMPLATE, pad);
    rng.default(1, table_size)
}

/// `cmd_prepare()` for one thread, produced lazily: for each of its tables
/// the CREATE TABLE, the rows as multi-row INSERTs cut where sysbench's
/// bulk-insert buffer cuts them, then the index on `k`.
pub(crate) struct TableLoad {
    sql: Box<dyn TableSql>,
    auto_inc: bool,
    /// Rows per table (0 for oltp_insert without auto_inc).
    table_size: u32,
    tables: StepBy<RangeInclusive<u32>>,
    rng: Rng,
    stage: LoadStage,
    /// The next row's text, generated (and its random values drawn) before
    /// sysbench finds that it does not fit the current statement.
    row: String,
    row_pending: bool,
    c: [u8; C_TEMPLATE.len()],
    pad: [u8; PAD_TEMPLATE.len()],
}

#[derive(Debug, Clone, Copy)]
enum LoadStage {
    NextTable,
    Rows { table: u32, next_row: u32 },
    Index { table: u32 },
}

impl TableLoad {
    pub(crate) fn new(options: &OltpOptions, table_size: u32, context: ScriptContext, rng: Rng) -> Self {
        TableLoad::with_sql(Box::new(OltpCommonSql { options: options.clone() }), options, table_size, context, rng)
    }

    /// The load of another script's tables (0.5's `common.lua`).
    pub(crate) fn with_sql(
        sql: Box<dyn TableSql>,
        options: &OltpOptions,
        table_size: u32,
        context: ScriptContext,
        rng: Rng,
    ) -> Self {
        TableLoad {
            sql,
            auto_inc: options.auto_inc,
            table_size,
            tables: tables_of(context, options.tables),
            rng,
            stage: LoadStage::NextTable,
            row: String::with_capacity(256),
            row_pending: false,
            c: *C_TEMPLATE,
            pad: *PAD_TEMPLATE,
        }
    }

    /// Every row's id in the INSERTs, also with `auto_inc` (the ids the
    /// server gives sysbench's, 1, 2, 3...), so that the statements may
    /// reach the server in any order. Only the SQL text changes: the rows'
    /// values are drawn as without.
    pub(crate) fn with_row_ids(mut self) -> Self {
        self.auto_inc = false;
        self
    }

    /// Draws row `i` as the loop in `create_table()` does: c, pad, then k.
    fn generate_row(&mut self, i: u32) {
        let k = draw_row(&mut self.rng, self.table_size, &mut self.c, &mut self.pad);
        self.row.clear();
        let id = (!self.auto_inc).then_some(i);
        self.sql.push_row(&mut self.row, id, k, &self.c, &self.pad);
    }

    /// The next INSERT of `table`, or `None` when its rows are all sent.
    /// A row joins the statement while `db_bulk_insert_next` would keep it
    /// in the buffer: statement, comma, row and NUL within
    /// [`BULK_PACKET_SIZE`].
    fn insert_statement(&mut self, table: u32, next_row: &mut u32) -> Option<String> {
        let mut sql = String::with_capacity(BULK_PACKET_SIZE);
        let columns = if self.auto_inc { "(k, c, pad)" } else { "(id, k, c, pad)" };
        sql.push_str("INSERT INTO sbtest");
        sql.push_str(&table.to_string());
        sql.push_str(columns);
        sql.push_str(" VALUES");
        let mut rows = 0u32;
        loop {
            if !self.row_pending {
                if *next_row > self.table_size || *next_row == 0 {
                    break;
                }
                self.generate_row(*next_row);
                // Wraps to 0 after u32::MAX, which ends the table.
                *next_row = next_row.wrapping_add(1);
                self.row_pending = true;
            }
            let comma = usize::from(rows > 0);
            if rows > 0 && sql.len() + comma + self.row.len() + 1 > BULK_PACKET_SIZE {
                break;
            }
            if rows > 0 {
                sql.push(',');
            }
            sql.push_str(&self.row);
            self.row_pending = false;
            rows += 1;
        }
        (rows > 0).then_some(sql)
    }
}

impl Iterator for TableLoad {
    type Item = String;

    fn next(&mut self) -> Option<String> {
        loop {
            match self.stage {
                LoadStage::NextTable => {
                    let table = self.tables.next()?;
                    self.stage = LoadStage::Rows { table, next_row: 1 };
                    return Some(self.sql.create_table(table));
                }
                LoadStage::Rows { table, mut next_row } => {
                    let statement = self.insert_statement(table, &mut next_row);
                    self.stage = match statement {
                        Some(_) => LoadStage::Rows { table, next_row },
                        None => LoadStage::Index { table },
                    };
                    if statement.is_some() {
                        return statement;
                    }
                }
                LoadStage::Index { table } => {
                    self.stage = LoadStage::NextTable;
                    if let Some(index) = self.sql.create_index(table) {
                        return Some(index);
                    }
                }
            }
        }
    }
}

/// Sets integer parameter `index` as sysbench binds it: BIGINT for the 1.0
/// scripts, INT (`int32`) for the 0.5 scripts' `db_bind_param`, which
/// truncates as C converts.
pub(crate) fn set_int(t: &mut ExecuteTemplate, index: usize, v: i64, int32: bool) -> Result<(), UsageError> {
    if int32 {
        t.set_i32(index, v as i32)
    } else {
        t.set_i64(index, v)
    }
}

/// Appends `v` in decimal, as `%d` prints it.
pub(crate) fn push_decimal(out: &mut Vec<u8>, v: impl std::fmt::Display) {
    // Writing to a Vec cannot fail.
    let _ = write!(out, "{v}");
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::workload::testkit::{self, context, rng, split_table, DecodedCommand, Harness};
    use crate::workload::{oltp_read_write, oltp_write_only};
    use wirebench_protocol::command::count_placeholders;

    /// An installed sysbench script, or `None` (with a message) when
    /// sysbench is not installed; with WIREBENCH_REQUIRE_SERVER=1 a missing
    /// script fails the test instead.
    pub(crate) fn lua_script(name: &str) -> Option<String> {
        let dir = std::env::var("WIREBENCH_SYSBENCH_SCRIPTS").unwrap_or_else(|_| "/usr/share/sysbench".to_string());
        let path = Path::new(&dir).join(name);
        match std::fs::read_to_string(&path) {
            Ok(text) => Some(text),
            Err(e) if std::env::var("WIREBENCH_REQUIRE_SERVER").is_ok_and(|v| v == "1") => {
                panic!("{}: {e} (WIREBENCH_REQUIRE_SERVER=1)", path.display())
            }
            Err(e) => {
                eprintln!(
                    "skipped: {}: {e} (set WIREBENCH_SYSBENCH_SCRIPTS to sysbench's script directory)",
                    path.display()
                );
                None
            }
        }
    }

    use std::path::Path;

    /// The Lua long strings (`[[...]]`) of a script, the newline right
    /// after `[[` dropped as Lua does.
    pub(crate) fn long_strings(lua: &str) -> Vec<String> {
        let mut found = Vec::new();
        let mut rest = lua;
        while let Some(start) = rest.find("[[") {
            let body = &rest[start + 2..];
            let end = body.find("]]").expect("unterminated long string");
            let text = &body[..end];
            found.push(text.strip_prefix('\n').unwrap_or(text).to_string());
            rest = &body[end + 2..];
        }
        found
    }

    /// Lua's `string.format` for `%d`, `%u`, `%s` and `%%`, enough for the scripts.
    pub(crate) fn lua_format(format: &str, args: &[&str]) -> String {
        let mut out = String::new();
        let mut args = args.iter();
        let mut chars = format.chars();
        while let Some(c) = chars.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('%') => out.push('%'),
                Some('d' | 'u' | 's') => out.push_str(args.next().expect("too few arguments")),
                other => panic!("format {other:?}"),
            }
        }
        assert!(args.next().is_none(), "too many arguments");
        out
    }

    fn options() -> OltpOptions {
        OltpOptions { tables: 3, table_size: 1000, ..OltpOptions::default() }
    }

    #[test]
    fn statement_ids_are_commit_then_tables_times_statements() {
        let w = oltp_read_write::workload(&options()).unwrap();
        let list = w.statements();
        assert_eq!(list.len(), 1 + 3 * 9);
        assert_eq!(list[0], StatementSpec { sql: "COMMIT".into(), slots: vec![] });
        for table in 1..=3 {
            for (i, &statement) in w.table_statements.iter().enumerate() {
                let id = w.layout.id(table, statement);
                assert_eq!(id, 1 + (table as usize - 1) * 9 + i);
                assert_eq!(list[id].sql, statement.sql(table));
                assert_eq!(split_table(&list[id].sql).1, Some(table));
                assert_eq!(
                    count_placeholders(list[id].sql.as_bytes(), 101_100),
                    list[id].slots.len(),
                    "{}",
                    list[id].sql
                );
            }
        }
        // Without a transaction there is no COMMIT and table 1 starts at 0.
        let w = oltp_write_only::workload(&OltpOptions { skip_trx: true, ..options() }).unwrap();
        let list = w.statements();
        assert_eq!(list.len(), 3 * 4);
        assert_eq!(list[0].sql, "UPDATE sbtest1 SET k=k+1 WHERE id=?");
        assert_eq!(list[w.layout.id(3, OltpStatement::Insert)].sql, OltpStatement::Insert.sql(3));
    }

    #[test]
    fn statement_text_is_oltp_common_lua() {
        let Some(lua) = lua_script("oltp_common.lua") else { return };
        for statement in [
            OltpStatement::PointSelect,
            OltpStatement::SimpleRange,
            OltpStatement::SumRange,
            OltpStatement::OrderRange,
            OltpStatement::DistinctRange,
            OltpStatement::IndexUpdate,
            OltpStatement::NonIndexUpdate,
            OltpStatement::Delete,
            OltpStatement::Insert,
        ] {
            assert!(lua.contains(&format!("\"{}\"", statement.template())), "{statement:?} not in oltp_common.lua");
            assert_eq!(statement.sql(12), statement.template().replace("%u", "12"));
        }
        assert!(lua.contains(r#"con:prepare("COMMIT")"#));
        assert!(lua.contains(r#"con:prepare("BEGIN")"#));
        let c: String = C_TEMPLATE.iter().map(|&b| char::from(b)).collect();
        let pad: String = PAD_TEMPLATE.iter().map(|&b| char::from(b)).collect();
        let unquote = |s: &str| s.replace("\" ..\n   \"", "");
        assert!(unquote(&lua).contains(&format!("local c_value_template = \"{c}\"")));
        assert!(unquote(&lua).contains(&format!("local pad_value_template = \"{pad}\"")));
    }

    #[test]
    fn create_table_is_oltp_common_lua() {
        let Some(lua) = lua_script("oltp_common.lua") else { return };
        let strings = long_strings(&lua);
        assert_eq!(strings.len(), 1, "oltp_common.lua has one long string, the CREATE TABLE");
        for (auto_inc, secondary, engine, extra) in
            [(true, false, "innodb", ""), (false, true, "MyISAM", ""), (true, true, "innodb", "ROW_FORMAT=COMPRESSED")]
        {
            let options = OltpOptions {
                auto_inc,
                secondary,
                mysql_storage_engine: engine.into(),
                mysql_table_options: extra.into(),
                ..OltpOptions::default()
            };
            let id_def = if auto_inc { "INTEGER NOT NULL AUTO_INCREMENT" } else { "INTEGER NOT NULL" };
            let index = if secondary { "KEY xid" } else { "PRIMARY KEY" };
            let engine_def = format!("/*! ENGINE = {engine} */");
            let expected = lua_format(&strings[0], &["7", id_def, index, &engine_def, extra]);
            assert_eq!(create_table_sql(&options, 7), expected);
        }
        assert!(lua.contains(r#""CREATE INDEX k_%d ON sbtest%d(k)""#));
        assert!(lua.contains(r#""DROP TABLE IF EXISTS sbtest" .. i"#));
        assert!(lua.contains(r#""INSERT INTO sbtest" .. table_num .. "(k, c, pad) VALUES""#));
        assert!(lua.contains(r#""INSERT INTO sbtest" .. table_num .. "(id, k, c, pad) VALUES""#));
        assert!(lua.contains(r#""(%d, '%s', '%s')""#));
        assert!(lua.contains(r#""(%d, %d, '%s', '%s')""#));
    }

    #[test]
    fn prewarm_is_oltp_common_lua() {
        let Some(lua) = lua_script("oltp_common.lua") else { return };
        // The format strings, as the pieces the script concatenates.
        let avg = ["SELECT AVG(id) FROM ", "(SELECT * FROM %s FORCE KEY (PRIMARY) ", "LIMIT %u) t"];
        let count = ["SELECT COUNT(*) FROM ", "(SELECT * FROM %s WHERE k LIKE '%%0%%' LIMIT %u) t"];
        for piece in avg.iter().chain(&count) {
            assert!(lua.contains(&format!("\"{piece}\"")), "{piece} not in oltp_common.lua");
        }
        for set in ["SET tmp_table_size=2*1024*1024*1024", "SET max_heap_table_size=2*1024*1024*1024"] {
            assert!(lua.contains(&format!("con:query(\"{set}\")")));
        }
        assert!(lua.contains(r#"con:query("ANALYZE TABLE sbtest" .. i)"#));
        let options = OltpOptions { tables: 5, table_size: 1234, ..OltpOptions::default() };
        let sql = prewarm_sql(&options, context(1, 2));
        let mut expected = vec![
            "SET tmp_table_size=2*1024*1024*1024".to_string(),
            "SET max_heap_table_size=2*1024*1024*1024".to_string(),
        ];
        for t in ["2", "4"] {
            expected.push(format!("ANALYZE TABLE sbtest{t}"));
            expected.push(lua_format(&avg.concat(), &[&format!("sbtest{t}"), "1234"]));
            expected.push(lua_format(&count.concat(), &[&format!("sbtest{t}"), "1234"]));
        }
        assert_eq!(sql, expected);
    }

    #[test]
    fn prepare_spreads_tables_over_threads() {
        let options = OltpOptions { tables: 7, table_size: 3, ..OltpOptions::default() };
        let w = oltp_read_write::workload(&options).unwrap();
        let created = |thread| -> Vec<u32> {
            w.prepare(context(thread, 3), rng(1))
                .filter(|sql| sql.starts_with("CREATE TABLE"))
                .map(|sql| split_table(&sql).1.unwrap())
                .collect()
        };
        assert_eq!(created(0), [1, 4, 7]);
        assert_eq!(created(1), [2, 5]);
        assert_eq!(created(2), [3, 6]);
        let sql: Vec<String> = w.prepare(context(1, 3), rng(1)).collect();
        assert_eq!(sql.len(), 6);
        assert!(sql[1].starts_with("INSERT INTO sbtest2(k, c, pad) VALUES("));
        assert_eq!(sql[2], "CREATE INDEX k_2 ON sbtest2(k)");
        assert_eq!(w.cleanup(), (1..=7).map(|t| format!("DROP TABLE IF EXISTS sbtest{t}")).collect::<Vec<_>>());
    }

    /// The rows of a load INSERT: `(id, k, 'c', 'pad')` split apart.
    fn rows(sql: &str) -> Vec<&str> {
        let values = &sql[sql.find(" VALUES(").unwrap() + " VALUES".len()..];
        values.split("),(").collect()
    }

    #[test]
    fn load_statements_are_cut_where_sysbench_cuts_them() {
        let options = OltpOptions {
            tables: 2,
            table_size: 7000,
            auto_inc: false,
            create_secondary: false,
            ..OltpOptions::default()
        };
        let w = oltp_read_write::workload(&options).unwrap();
        let sql: Vec<String> = w.prepare(context(0, 1), rng(5)).collect();
        let shape: Vec<&str> = sql.iter().map(|s| if s.starts_with("CREATE") { "C" } else { "I" }).collect();
        assert_eq!(shape, ["C", "I", "I", "I", "C", "I", "I", "I"]);
        for table in [&sql[1..4], &sql[5..8]] {
            let mut next_id = 1;
            for (i, statement) in table.iter().enumerate() {
                assert!(statement.len() < BULK_PACKET_SIZE, "{} bytes", statement.len());
                for row in rows(statement) {
                    let row = row.trim_start_matches('(').trim_end_matches(')');
                    let fields: Vec<&str> = row.split(", ").collect();
                    assert_eq!(fields[0], next_id.to_string());
                    assert!((1..=7000).contains(&fields[1].parse::<u32>().unwrap()));
                    assert!(testkit::fits_template(fields[2].trim_matches('\'').as_bytes(), C_TEMPLATE));
                    assert!(testkit::fits_template(fields[3].trim_matches('\'').as_bytes(), PAD_TEMPLATE));
                    next_id += 1;
                }
                if let Some(next) = table.get(i + 1) {
                    // The next statement's first row did not fit: with its
                    // comma and the buffer's NUL it would pass 512 KiB.
                    let first_row = rows(next)[0].len() + usize::from(rows(next).len() > 1);
                    assert!(statement.len() + 1 + first_row + 1 > BULK_PACKET_SIZE);
                }
            }
            assert_eq!(next_id, 7001);
        }
    }

    #[test]
    fn load_is_lazy() {
        let options = OltpOptions { table_size: 100_000_000, ..OltpOptions::default() };
        let w = oltp_read_write::workload(&options).unwrap();
        let start = std::time::Instant::now();
        let first: Vec<String> = w.prepare(context(0, 1), rng(1)).take(3).collect();
        assert!(first[0].starts_with("CREATE TABLE sbtest1("));
        assert!(first[2].starts_with("INSERT INTO sbtest1(k, c, pad) VALUES("));
        assert!(start.elapsed() < std::time::Duration::from_secs(20), "took {:?}", start.elapsed());
    }

    #[test]
    fn an_event_that_sends_nothing_is_refused() {
        let options = OltpOptions { skip_trx: true, point_selects: 0, range_selects: false, ..OltpOptions::default() };
        assert_eq!(
            crate::workload::oltp_read_only::workload(&options).unwrap_err(),
            OptionsError::EmptyEvent { test: "oltp_read_only" }
        );
        let options = OltpOptions { tables: 0, ..OltpOptions::default() };
        assert!(matches!(oltp_read_write::workload(&options), Err(OptionsError::NoTables { .. })));
    }

    #[test]
    fn groups_of_zero_statements_still_draw_their_table() {
        // write_only without a transaction and without DELETE/INSERT: the
        // empty last group draws its table after the event's last command,
        // before the next event's draws.
        let options = OltpOptions { tables: 4, skip_trx: true, delete_inserts: 0, ..options() };
        let w = oltp_write_only::workload(&options).unwrap();
        let mut harness = Harness::new(&w, context(0, 1), rng(9));
        let mut model = rng(9);
        let mut c = *C_TEMPLATE;
        for _ in 0..20 {
            let event = harness.event();
            let table = model.uniform(1, 4);
            let id = model.default(1, 1000);
            assert_eq!(
                event[0],
                expected_execute(
                    &w,
                    OltpStatement::IndexUpdate.sql(table),
                    vec![testkit::DecodedParam::Int(id.into())]
                )
            );
            let table = model.uniform(1, 4);
            model.rand_str(C_TEMPLATE, &mut c);
            let id = model.default(1, 1000);
            let params = vec![testkit::DecodedParam::Bytes(c.to_vec()), testkit::DecodedParam::Int(id.into())];
            assert_eq!(event[1], expected_execute(&w, OltpStatement::NonIndexUpdate.sql(table), params));
            assert_eq!(event.len(), 2);
            model.uniform(1, 4); // the DELETE/INSERT group's table
            model.next_u64(); // the histogram slot, as the harness draws
        }
    }

    fn expected_execute(w: &OltpWorkload, sql: String, params: Vec<testkit::DecodedParam>) -> DecodedCommand {
        let stmt = w.statements().iter().position(|s| s.sql == sql).unwrap();
        DecodedCommand::Execute { stmt, sql, params }
    }

    #[test]
    fn restart_begins_a_new_event() {
        let w = oltp_read_write::workload(&options()).unwrap();
        let mut harness = Harness::new(&w, context(0, 1), rng(3));
        for _ in 0..3 {
            harness.step();
        }
        harness.script_mut().restart_event();
        let event = harness.event();
        assert_eq!(event.len(), 20);
        assert_eq!(event[0], DecodedCommand::Query("BEGIN".into()));
        // Half-way through a DELETE/INSERT pair.
        let mut event: Vec<DecodedCommand> = Vec::new();
        while !matches!(event.last(), Some(c) if c.sql().starts_with("DELETE")) {
            event.push(harness.step().0);
        }
        harness.script_mut().restart_event();
        assert_eq!(harness.step().0, DecodedCommand::Query("BEGIN".into()));
    }
}
