//! `oltp_insert.lua`: one INSERT per event, sent as COM_QUERY text as the
//! script does (it prepares nothing):
//! `INSERT INTO sbtestN (id, k, c, pad) VALUES (%d, %d, '%s', '%s')`.
//!
//! With `--auto_inc` (the default) id is 0 and the server numbers the row;
//! without it id is `sysbench.rand.unique() - 2^31` and `prepare` creates
//! empty tables, since loaded ids could collide with the unique ones.
//!
//! sysbench shares one unique counter between threads; wirebench gives each
//! connection its own slice of the same sequence ([`RandUnique::split`]),
//! so values stay unique without shared state, and one connection gets
//! sysbench's order.

use super::oltp_options::{OltpOptions, OptionsError};
use super::sbtest_insert::{SbtestRowInsert, UniqueIdSql};
use super::{CommandSink, Script, ScriptContext, StatementKind, StatementSpec, Step, Workload, WorkloadError};
use crate::rand::{RandUnique, Rng};

pub const NAME: &str = "oltp_insert";

#[derive(Debug, Clone)]
pub struct OltpInsert {
    options: OltpOptions,
    unique: RandUnique,
}

pub fn workload(options: &OltpOptions) -> Result<OltpInsert, OptionsError> {
    if options.tables == 0 {
        return Err(OptionsError::NoTables { test: NAME });
    }
    Ok(OltpInsert { options: options.clone(), unique: RandUnique::sysbench_upstream() })
}

#[cfg(test)]
impl OltpInsert {
    /// Uses another `sysbench.rand.unique()` sequence for the ids (only
    /// with `auto_inc` off). The default is upstream sysbench's.
    pub fn with_unique(mut self, unique: RandUnique) -> Self {
        self.unique = unique;
        self
    }
}

impl Workload for OltpInsert {
    fn name(&self) -> &'static str {
        NAME
    }

    fn statements(&self) -> Vec<StatementSpec> {
        Vec::new()
    }

    fn script(&self, context: ScriptContext) -> Box<dyn Script> {
        Box::new(InsertScript {
            tables: self.options.tables,
            row: SbtestRowInsert::new(
                self.options.table_size,
                self.options.auto_inc,
                UniqueIdSql::SignedInt,
                self.unique,
                context,
            ),
        })
    }

    /// With `--auto_inc=off` the tables start empty: sysbench's ids
    /// would collide with the run's.
    fn common_tables(&self) -> Option<(&OltpOptions, u32)> {
        let rows = if self.options.auto_inc { self.options.table_size } else { 0 };
        Some((&self.options, rows))
    }
}

struct InsertScript {
    tables: u32,
    row: SbtestRowInsert,
}

impl Script for InsertScript {
    fn next(&mut self, rng: &mut Rng, sink: &mut CommandSink<'_>) -> Result<Step, WorkloadError> {
        let table = rng.uniform(1, self.tables);
        self.row.send(table, rng, sink);
        sink.set_query_kind(StatementKind::Insert);
        Ok(Step::Last)
    }

    fn restart_event(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::common::{C_TEMPLATE, PAD_TEMPLATE};
    use crate::workload::testkit::{context, rng, split_table, DecodedCommand, Harness};

    /// `(table, id, k, c, pad)` of an INSERT.
    fn parse(command: &DecodedCommand) -> (u32, i64, u32, String, String) {
        let DecodedCommand::Query(sql) = command else { panic!("COM_QUERY expected, got {command:?}") };
        let (shape, table) = split_table(sql);
        let values =
            shape.strip_prefix("INSERT INTO sbtestN (id, k, c, pad) VALUES (").unwrap().strip_suffix("')").unwrap();
        let fields: Vec<&str> = values.split(", ").collect();
        assert_eq!(fields.len(), 4, "{sql}");
        let text = |s: &str| s.trim_matches('\'').to_string();
        (table.unwrap(), fields[0].parse().unwrap(), fields[1].parse().unwrap(), text(fields[2]), text(fields[3]))
    }

    #[test]
    fn auto_inc_inserts_id_0() {
        let options = OltpOptions { tables: 3, table_size: 100, ..OltpOptions::default() };
        let w = workload(&options).unwrap();
        assert!(w.statements().is_empty());
        let mut harness = Harness::new(&w, context(0, 1), rng(18));
        for _ in 0..200 {
            let event = harness.event();
            assert_eq!(event.len(), 1);
            let (table, id, k, c, pad) = parse(&event[0]);
            assert!((1..=3).contains(&table));
            assert_eq!(id, 0);
            assert!((1..=100).contains(&k));
            assert!(crate::workload::testkit::fits_template(c.as_bytes(), C_TEMPLATE));
            assert!(crate::workload::testkit::fits_template(pad.as_bytes(), PAD_TEMPLATE));
        }
    }

    #[test]
    fn without_auto_inc_ids_are_unique_across_connections() {
        let options = OltpOptions { auto_inc: false, ..OltpOptions::default() };
        let unique = RandUnique::new(1, 2);
        let w = workload(&options).unwrap().with_unique(unique);
        let mut ids = std::collections::HashSet::new();
        for thread in 0..3 {
            let mut harness = Harness::new(&w, context(thread, 3), rng(19));
            let slice_start = ((u64::from(thread) << 32) / 3) as u32;
            for n in 0..500 {
                let (_, id, ..) = parse(&harness.event()[0]);
                assert_eq!(id, i64::from(unique.nth(slice_start + n)) - (1 << 31));
                assert!(ids.insert(id), "id {id} twice");
            }
        }
        // One connection gets the sequence in sysbench's order.
        let mut harness = Harness::new(&w, context(0, 1), rng(19));
        for n in 0..10 {
            assert_eq!(parse(&harness.event()[0]).1, i64::from(unique.nth(n)) - (1 << 31));
        }
    }

    #[test]
    fn without_auto_inc_prepare_creates_empty_tables() {
        let options = OltpOptions { auto_inc: false, tables: 2, ..OltpOptions::default() };
        let sql: Vec<String> = workload(&options).unwrap().prepare(context(0, 1), rng(1)).collect();
        assert_eq!(sql.len(), 4);
        assert!(sql[0].starts_with("CREATE TABLE sbtest1(\n  id INTEGER NOT NULL,\n"));
        assert_eq!(sql[1], "CREATE INDEX k_1 ON sbtest1(k)");
        let options = OltpOptions { table_size: 5, ..OltpOptions::default() };
        let sql: Vec<String> = workload(&options).unwrap().prepare(context(0, 1), rng(1)).collect();
        assert_eq!(sql.len(), 3);
        assert_eq!(sql[1].matches("),(").count(), 4);
    }

    #[test]
    fn text_is_oltp_insert_lua() {
        let Some(lua) = crate::workload::testkit::lua_script("oltp_insert.lua") else { return };
        let unquote = lua.replace("\" ..\n                                 \"", "");
        assert!(unquote.contains(r#""INSERT INTO %s (id, k, c, pad) VALUES (%d, %d, '%s', '%s')""#));
        assert!(lua.contains(r#"local table_name = "sbtest" .. sysbench.rand.uniform(1, sysbench.opt.tables)"#));
    }
}
