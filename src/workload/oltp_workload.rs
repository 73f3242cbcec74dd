//! The OLTP tests' event engine, after sysbench 1.0.20's `oltp_common.lua`:
//! an [`OltpWorkload`] prepares the statements of its event plan for every
//! table and runs them in the scripts' order (the statements are in
//! `oltp_statements.rs`, the tables' `prepare` in `table_load.rs`).
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

use std::sync::Arc;

use super::common::{C_TEMPLATE, PAD_TEMPLATE};
use super::oltp_options::{OltpOptions, OptionsError};
use super::oltp_statements::{EventStep, OltpStatement, StatementGroup};
use super::{CommandSink, Script, ScriptContext, StatementKind, StatementSpec, Step, StmtId, Workload, WorkloadError};
use crate::rand::Rng;

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
            StatementGroup::DeleteInserts => {
                if !self.emit_delete_or_insert(rng, sink)? {
                    return Ok(false);
                }
            }
        }
        self.done += 1;
        Ok(self.done >= count)
    }

    /// Writes the DELETE of a DELETE/INSERT pair, or the INSERT it owes;
    /// true when that completed the pair.
    fn emit_delete_or_insert(&mut self, rng: &mut Rng, sink: &mut CommandSink<'_>) -> Result<bool, WorkloadError> {
        let table = self.table;
        match self.insert.take() {
            None => {
                // All four values are drawn before the DELETE runs.
                let id = self.id(rng);
                let k = self.id(rng);
                rng.rand_str(C_TEMPLATE, &mut self.c);
                rng.rand_str(PAD_TEMPLATE, &mut self.pad);
                sink.execute(self.layout.id(table, OltpStatement::Delete), |t| t.set_i64(0, i64::from(id)))?;
                self.insert = Some((id, k));
                Ok(false)
            }
            Some((id, k)) => {
                let (c, pad) = (&self.c, &self.pad);
                sink.execute(self.layout.id(table, OltpStatement::Insert), |t| {
                    t.set_i64(0, i64::from(id))?;
                    t.set_i64(1, i64::from(k))?;
                    t.set_bytes(2, c)?;
                    t.set_bytes(3, pad)
                })?;
                Ok(true)
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::testkit::{self, context, rng, split_table, DecodedCommand, Harness};
    use crate::workload::{oltp_read_write, oltp_write_only};
    use wirebench_protocol::command::count_placeholders;

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
