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

use wirebench_protocol::command::ParamSlot;

use super::options::{OltpOptions, OptionsError};
use super::{CommandSink, Script, ScriptContext, StatementSpec, Step, StmtId, Workload, WorkloadError};
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
pub(crate) enum Kind {
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

impl Kind {
    const COUNT: usize = 9;

    /// The Lua format string; `%u` is the table number.
    pub(crate) fn template(self) -> &'static str {
        match self {
            Kind::PointSelect => "SELECT c FROM sbtest%u WHERE id=?",
            Kind::SimpleRange => "SELECT c FROM sbtest%u WHERE id BETWEEN ? AND ?",
            Kind::SumRange => "SELECT SUM(k) FROM sbtest%u WHERE id BETWEEN ? AND ?",
            Kind::OrderRange => "SELECT c FROM sbtest%u WHERE id BETWEEN ? AND ? ORDER BY c",
            Kind::DistinctRange => "SELECT DISTINCT c FROM sbtest%u WHERE id BETWEEN ? AND ? ORDER BY c",
            Kind::IndexUpdate => "UPDATE sbtest%u SET k=k+1 WHERE id=?",
            Kind::NonIndexUpdate => "UPDATE sbtest%u SET c=? WHERE id=?",
            Kind::Delete => "DELETE FROM sbtest%u WHERE id=?",
            Kind::Insert => "INSERT INTO sbtest%u (id, k, c, pad) VALUES (?, ?, ?, ?)",
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
            Kind::PointSelect | Kind::IndexUpdate | Kind::Delete => vec![ParamSlot::Int64],
            Kind::SimpleRange | Kind::SumRange | Kind::OrderRange | Kind::DistinctRange => {
                vec![ParamSlot::Int64, ParamSlot::Int64]
            }
            Kind::NonIndexUpdate => vec![C, ParamSlot::Int64],
            Kind::Insert => vec![ParamSlot::Int64, ParamSlot::Int64, C, PAD],
        }
    }
}

/// One `execute_*` function of `oltp_common.lua`: a table drawn once, then
/// its statements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Group {
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

impl Group {
    fn kinds(self) -> &'static [Kind] {
        match self {
            Group::PointSelects => &[Kind::PointSelect],
            Group::SimpleRanges => &[Kind::SimpleRange],
            Group::SumRanges => &[Kind::SumRange],
            Group::OrderRanges => &[Kind::OrderRange],
            Group::DistinctRanges => &[Kind::DistinctRange],
            Group::IndexUpdates => &[Kind::IndexUpdate],
            Group::NonIndexUpdates => &[Kind::NonIndexUpdate],
            Group::DeleteInserts => &[Kind::Delete, Kind::Insert],
            Group::Deletes => &[Kind::Delete],
        }
    }
}

/// A step of an event, in the order the script's `event()` runs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    Begin,
    Commit,
    /// A group and how many times its statements run.
    Group(Group, u32),
}

impl Phase {
    fn sends_something(self) -> bool {
        match self {
            Phase::Begin | Phase::Commit => true,
            Phase::Group(_, count) => count > 0,
        }
    }
}

/// Where each statement sits in [`Workload::statements`]: COMMIT first
/// when the event commits, then for table 1, 2, … the same list of kinds,
/// so an id is `base + (table - 1) * per_table + position[kind]`.
#[derive(Debug, Clone, Copy)]
struct Layout {
    commit: StmtId,
    base: StmtId,
    per_table: usize,
    /// Index of each kind in a table's list; `NONE` when not prepared.
    position: [usize; Kind::COUNT],
}

impl Layout {
    const NONE: usize = usize::MAX / 4;

    fn new(with_commit: bool, kinds: &[Kind]) -> Layout {
        let mut position = [Layout::NONE; Kind::COUNT];
        for (i, &kind) in kinds.iter().enumerate() {
            position[kind as usize] = i;
        }
        let base = usize::from(with_commit);
        Layout { commit: if with_commit { 0 } else { Layout::NONE }, base, per_table: kinds.len(), position }
    }

    /// An id past the list for a kind that is not prepared, which the sink
    /// reports as [`WorkloadError::UnknownStatement`].
    #[inline]
    fn id(&self, table: u32, kind: Kind) -> StmtId {
        let table_index = table.saturating_sub(1) as usize;
        self.base + table_index * self.per_table + self.position[kind as usize]
    }
}

/// A test built from `oltp_common.lua`'s prepared statements: oltp_read_only,
/// oltp_read_write, oltp_write_only, oltp_point_select, oltp_update_index,
/// oltp_update_non_index, oltp_delete. The test files give the event plan.
#[derive(Debug, Clone)]
pub struct OltpWorkload {
    name: &'static str,
    options: OltpOptions,
    plan: Arc<[Phase]>,
    kinds: Vec<Kind>,
    layout: Layout,
    /// Index in `plan` of the last phase that sends a command.
    last_sending_phase: usize,
}

impl OltpWorkload {
    pub(crate) fn new(name: &'static str, options: &OltpOptions, plan: Vec<Phase>) -> Result<Self, OptionsError> {
        if options.tables == 0 {
            return Err(OptionsError::NoTables { test: name });
        }
        let last_sending_phase =
            plan.iter().rposition(|p| p.sends_something()).ok_or(OptionsError::EmptyEvent { test: name })?;
        let with_commit = plan.contains(&Phase::Commit);
        let mut kinds = Vec::new();
        for phase in &plan {
            if let Phase::Group(group, _) = *phase {
                for &kind in group.kinds() {
                    if !kinds.contains(&kind) {
                        kinds.push(kind);
                    }
                }
            }
        }
        let layout = Layout::new(with_commit, &kinds);
        Ok(OltpWorkload { name, options: options.clone(), plan: plan.into(), kinds, layout, last_sending_phase })
    }
}

impl Workload for OltpWorkload {
    fn name(&self) -> &'static str {
        self.name
    }

    fn statements(&self) -> Vec<StatementSpec> {
        let mut list = Vec::with_capacity(self.layout.base + self.kinds.len() * self.options.tables as usize);
        if self.layout.base == 1 {
            list.push(StatementSpec { sql: "COMMIT".to_string(), slots: Vec::new() });
        }
        for table in 1..=self.options.tables {
            for kind in &self.kinds {
                list.push(StatementSpec { sql: kind.sql(table), slots: kind.slots() });
            }
        }
        list
    }

    fn script(&self, _context: ScriptContext) -> Box<dyn Script> {
        Box::new(OltpScript {
            plan: Arc::clone(&self.plan),
            last_sending_phase: self.last_sending_phase,
            layout: self.layout,
            tables: self.options.tables,
            table_size: self.options.table_size,
            range_size: self.options.range_size,
            phase: 0,
            entered: false,
            table: 1,
            done: 0,
            insert: None,
            c: *C_TEMPLATE,
            pad: *PAD_TEMPLATE,
        })
    }

    fn prepare(&self, context: ScriptContext, rng: Rng) -> Box<dyn Iterator<Item = String> + Send> {
        Box::new(TableLoad::new(&self.options, self.options.table_size, context, rng))
    }

    fn prewarm(&self, context: ScriptContext) -> Vec<String> {
        prewarm_sql(&self.options, context)
    }

    fn cleanup(&self) -> Vec<String> {
        cleanup_sql(self.options.tables)
    }
}

/// One connection's walk through an [`OltpWorkload`]'s event plan.
struct OltpScript {
    plan: Arc<[Phase]>,
    last_sending_phase: usize,
    layout: Layout,
    tables: u32,
    table_size: u32,
    range_size: u32,
    /// The current phase of the event.
    phase: usize,
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
    /// Moves past the current phase; `Last` if it was the event's last
    /// command. Phases after the last sending one are groups of 0 commands,
    /// whose table draws the next call makes, before the next event's.
    fn finish_phase(&mut self) -> Step {
        let last = self.phase == self.last_sending_phase;
        self.phase += 1;
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
        group: Group,
        count: u32,
        rng: &mut Rng,
        sink: &mut CommandSink<'_>,
    ) -> Result<bool, WorkloadError> {
        let table = self.table;
        match group {
            Group::PointSelects | Group::IndexUpdates | Group::Deletes => {
                let kind = match group {
                    Group::PointSelects => Kind::PointSelect,
                    Group::IndexUpdates => Kind::IndexUpdate,
                    _ => Kind::Delete,
                };
                let id = self.id(rng);
                sink.execute(self.layout.id(table, kind), |t| t.set_i64(0, i64::from(id)))?;
            }
            Group::SimpleRanges | Group::SumRanges | Group::OrderRanges | Group::DistinctRanges => {
                let kind = match group {
                    Group::SimpleRanges => Kind::SimpleRange,
                    Group::SumRanges => Kind::SumRange,
                    Group::OrderRanges => Kind::OrderRange,
                    _ => Kind::DistinctRange,
                };
                // `id + range_size - 1` in Lua numbers: not clamped to the table.
                let from = i64::from(self.id(rng));
                let to = from + i64::from(self.range_size) - 1;
                sink.execute(self.layout.id(table, kind), |t| {
                    t.set_i64(0, from)?;
                    t.set_i64(1, to)
                })?;
            }
            Group::NonIndexUpdates => {
                // The string is drawn before the id.
                rng.rand_str(C_TEMPLATE, &mut self.c);
                let id = self.id(rng);
                let c = &self.c;
                sink.execute(self.layout.id(table, Kind::NonIndexUpdate), |t| {
                    t.set_bytes(0, c)?;
                    t.set_i64(1, i64::from(id))
                })?;
            }
            Group::DeleteInserts => match self.insert.take() {
                None => {
                    // All four values are drawn before the DELETE runs.
                    let id = self.id(rng);
                    let k = self.id(rng);
                    rng.rand_str(C_TEMPLATE, &mut self.c);
                    rng.rand_str(PAD_TEMPLATE, &mut self.pad);
                    sink.execute(self.layout.id(table, Kind::Delete), |t| t.set_i64(0, i64::from(id)))?;
                    self.insert = Some((id, k));
                    return Ok(false);
                }
                Some((id, k)) => {
                    let (c, pad) = (&self.c, &self.pad);
                    sink.execute(self.layout.id(table, Kind::Insert), |t| {
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
        // Ends: the plan has a sending phase (checked by OltpWorkload::new),
        // so at most one pass over it sends nothing.
        loop {
            let Some(&phase) = self.plan.get(self.phase) else {
                self.phase = 0;
                self.entered = false;
                continue;
            };
            match phase {
                Phase::Begin => {
                    sink.query(b"BEGIN");
                    return Ok(self.finish_phase());
                }
                Phase::Commit => {
                    sink.execute(self.layout.commit, |_| Ok(()))?;
                    return Ok(self.finish_phase());
                }
                Phase::Group(group, count) => {
                    if !self.entered {
                        // `get_table_num()`, drawn even when the group runs 0 times.
                        self.table = rng.uniform(1, self.tables);
                        self.done = 0;
                        self.entered = true;
                    }
                    if self.done >= count {
                        self.finish_phase();
                        continue;
                    }
                    if self.emit(group, count, rng, sink)? {
                        return Ok(self.finish_phase());
                    }
                    return Ok(Step::More);
                }
            }
        }
    }

    fn restart_event(&mut self) {
        self.phase = 0;
        self.entered = false;
        self.insert = None;
    }
}

/// The tables `prepare` and `prewarm` thread `context.thread` handles:
/// `tid % threads + 1`, then every `threads`-th, as `cmd_prepare` loops.
fn tables_of(context: ScriptContext, tables: u32) -> StepBy<RangeInclusive<u32>> {
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

/// `cmd_prepare()` for one thread, produced lazily: for each of its tables
/// the CREATE TABLE, the rows as multi-row INSERTs cut where sysbench's
/// bulk-insert buffer cuts them, then the index on `k`.
pub(crate) struct TableLoad {
    options: OltpOptions,
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
        TableLoad {
            options: options.clone(),
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

    /// Draws row `i` as the loop in `create_table()` does: c, pad, then k.
    fn generate_row(&mut self, i: u32) {
        self.rng.rand_str(C_TEMPLATE, &mut self.c);
        self.rng.rand_str(PAD_TEMPLATE, &mut self.pad);
        let k = self.rng.default(1, self.table_size);
        self.row.clear();
        self.row.push('(');
        if !self.options.auto_inc {
            self.row.push_str(&i.to_string());
            self.row.push_str(", ");
        }
        self.row.push_str(&k.to_string());
        self.row.push_str(", '");
        self.row.extend(self.c.iter().map(|&b| char::from(b)));
        self.row.push_str("', '");
        self.row.extend(self.pad.iter().map(|&b| char::from(b)));
        self.row.push_str("')");
    }

    /// The next INSERT of `table`, or `None` when its rows are all sent.
    /// A row joins the statement while `db_bulk_insert_next` would keep it
    /// in the buffer: statement, comma, row and NUL within
    /// [`BULK_PACKET_SIZE`].
    fn insert_statement(&mut self, table: u32, next_row: &mut u32) -> Option<String> {
        let mut sql = String::with_capacity(BULK_PACKET_SIZE);
        let columns = if self.options.auto_inc { "(k, c, pad)" } else { "(id, k, c, pad)" };
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
                    return Some(create_table_sql(&self.options, table));
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
                    if self.options.create_secondary {
                        return Some(format!("CREATE INDEX k_{table} ON sbtest{table}(k)"));
                    }
                }
            }
        }
    }
}

/// Appends `v` in decimal, as `%d` prints it.
pub(crate) fn push_decimal(out: &mut Vec<u8>, v: impl std::fmt::Display) {
    // Writing to a Vec cannot fail.
    let _ = write!(out, "{v}");
}
