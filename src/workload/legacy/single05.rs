//! 0.5's one-statement scripts: each event draws a table
//! (`sb_rand_uniform(1, oltp_tables_count)`) and sends one COM_QUERY on
//! it, its values written in. Their `prepare` and `cleanup` are
//! `common.lua`'s. The statements, as 1.0.20's copies
//! (`tests/include/oltp_legacy/`) write them:
//!
//! | script                | statement                                             |
//! |-----------------------|-------------------------------------------------------|
//! | `oltp_simple.lua`     | `SELECT c FROM sbtestN WHERE id=ID`                   |
//! | `select.lua`          | `SELECT pad FROM sbtestN WHERE id=ID`                 |
//! | `update_index.lua`    | `UPDATE sbtestN SET k=k+1 WHERE id=ID`                |
//! | `update_non_index.lua`| `UPDATE sbtestN SET c='C' WHERE id=ID` (C drawn first)|
//! | `delete.lua`          | `DELETE FROM sbtestN WHERE id=ID`                     |
//! | `insert.lua`          | `INSERT INTO sbtestN (id, k, c, pad) VALUES (I, K, 'C', 'PAD')` |
//!
//! `insert.lua` draws k, c and pad; its id is 0 (the server numbers the
//! row) or, with `--oltp-auto-inc=off`, `sb_rand_uniq()`: the next
//! `sysbench.rand.unique()` value, the whole `u32` range (0.5 itself
//! drew it within the table size, colliding with the loaded rows; 1.0.20's
//! copy, followed here, does not). As for `oltp_insert`, each connection
//! takes its own slice of that sequence.

use super::super::common::{push_decimal, C_TEMPLATE};
use super::super::sbtest_insert::{SbtestRowInsert, UniqueIdSql, SBTEST_INSERT_FORM_05};
use super::super::{
    CommandSink, OltpOptions, OptionsError, Script, ScriptContext, StatementSpec, Step, Workload, WorkloadError,
};
use super::common05::{cleanup05, prepare05, progress_line05};
use super::LegacyOptions;
use crate::rand::{RandUnique, Rng};

/// Which one-statement script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Single05 {
    OltpSimple,
    Select,
    UpdateIndex,
    UpdateNonIndex,
    Delete,
    Insert,
}

impl Single05 {
    fn script_name(self) -> &'static str {
        match self {
            Single05::OltpSimple => "oltp_simple.lua",
            Single05::Select => "select.lua",
            Single05::UpdateIndex => "update_index.lua",
            Single05::UpdateNonIndex => "update_non_index.lua",
            Single05::Delete => "delete.lua",
            Single05::Insert => "insert.lua",
        }
    }

    /// The statement's SQL with its values left out, for error messages.
    fn form(self) -> &'static [u8] {
        match self {
            Single05::OltpSimple => b"SELECT c FROM sbtest%u WHERE id=%u",
            Single05::Select => b"SELECT pad FROM sbtest%u WHERE id=%u",
            Single05::UpdateIndex => b"UPDATE sbtest%u SET k=k+1 WHERE id=%u",
            Single05::Delete => b"DELETE FROM sbtest%u WHERE id=%u",
            Single05::UpdateNonIndex => b"UPDATE sbtest%u SET c='%s' WHERE id=%u",
            Single05::Insert => SBTEST_INSERT_FORM_05,
        }
    }

    /// The statement's text before the table number and between it and the id.
    fn text(self) -> (&'static [u8], &'static [u8]) {
        match self {
            Single05::OltpSimple => (b"SELECT c FROM sbtest", b" WHERE id="),
            Single05::Select => (b"SELECT pad FROM sbtest", b" WHERE id="),
            Single05::UpdateIndex => (b"UPDATE sbtest", b" SET k=k+1 WHERE id="),
            Single05::Delete => (b"DELETE FROM sbtest", b" WHERE id="),
            Single05::UpdateNonIndex | Single05::Insert => (b"", b""),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Single05Workload {
    script: Single05,
    options: OltpOptions,
    legacy: LegacyOptions,
    unique: RandUnique,
}

pub(crate) fn workload(
    script: Single05,
    options: &OltpOptions,
    legacy: &LegacyOptions,
) -> Result<Single05Workload, OptionsError> {
    if options.tables == 0 {
        return Err(OptionsError::NoTables { test: script.script_name() });
    }
    Ok(Single05Workload {
        script,
        options: options.clone(),
        legacy: legacy.clone(),
        unique: RandUnique::sysbench_upstream(),
    })
}

impl Workload for Single05Workload {
    fn name(&self) -> &'static str {
        self.script.script_name()
    }

    fn statements(&self) -> Vec<StatementSpec> {
        Vec::new()
    }

    fn script(&self, context: ScriptContext) -> Box<dyn Script> {
        Box::new(Single05Script {
            script: self.script,
            tables: self.options.tables,
            table_size: self.options.table_size,
            c: *C_TEMPLATE,
            insert: SbtestRowInsert::new(
                self.options.table_size,
                self.options.auto_inc,
                UniqueIdSql::Unsigned,
                self.unique,
                context,
            ),
        })
    }

    fn prepare(&self, context: ScriptContext, rng: Rng) -> Box<dyn Iterator<Item = String> + Send> {
        prepare05(&self.options, &self.legacy, context, rng, false)
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
}

struct Single05Script {
    script: Single05,
    tables: u32,
    table_size: u32,
    /// update_non_index.lua's string.
    c: [u8; C_TEMPLATE.len()],
    /// insert.lua's row.
    insert: SbtestRowInsert,
}

impl Script for Single05Script {
    fn next(&mut self, rng: &mut Rng, sink: &mut CommandSink<'_>) -> Result<Step, WorkloadError> {
        let table = rng.uniform(1, self.tables);
        match self.script {
            Single05::Insert => self.insert.send(table, rng, sink),
            Single05::UpdateNonIndex => {
                rng.rand_str(C_TEMPLATE, &mut self.c);
                let (id, c) = (rng.default(1, self.table_size), &self.c);
                sink.query_with(Single05::UpdateNonIndex.form(), |out| {
                    out.extend_from_slice(b"UPDATE sbtest");
                    push_decimal(out, table);
                    out.extend_from_slice(b" SET c='");
                    out.extend_from_slice(c);
                    out.extend_from_slice(b"' WHERE id=");
                    push_decimal(out, id);
                });
            }
            script => {
                let (head, tail) = script.text();
                let id = rng.default(1, self.table_size);
                sink.query_with(script.form(), |out| {
                    out.extend_from_slice(head);
                    push_decimal(out, table);
                    out.extend_from_slice(tail);
                    push_decimal(out, id);
                });
            }
        }
        Ok(Step::Last)
    }

    fn restart_event(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::testkit::{context, rng, DecodedCommand, Harness};

    fn events(script: Single05, options: &OltpOptions, thread: u32) -> Vec<String> {
        let w = workload(script, options, &LegacyOptions::default()).unwrap();
        let mut harness = Harness::new(&w, context(thread, 2), rng(8));
        (0..30)
            .map(|_| match harness.event().as_slice() {
                [DecodedCommand::Query(sql)] => sql.clone(),
                other => panic!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn each_script_sends_its_one_statement() {
        let options = OltpOptions { tables: 4, table_size: 50, ..OltpOptions::default() };
        for (script, head, tail) in [
            (Single05::OltpSimple, "SELECT c FROM sbtest", " WHERE id="),
            (Single05::Select, "SELECT pad FROM sbtest", " WHERE id="),
            (Single05::UpdateIndex, "UPDATE sbtest", " SET k=k+1 WHERE id="),
            (Single05::Delete, "DELETE FROM sbtest", " WHERE id="),
        ] {
            let mut tables = std::collections::BTreeSet::new();
            for sql in events(script, &options, 0) {
                let rest = sql.strip_prefix(head).unwrap_or_else(|| panic!("{script:?}: {sql}"));
                let (table, id) = rest.split_once(tail).unwrap();
                tables.insert(table.parse::<u32>().unwrap());
                assert!((1..=50).contains(&id.parse::<u32>().unwrap()), "{sql}");
            }
            assert_eq!(tables.into_iter().collect::<Vec<_>>(), [1, 2, 3, 4], "{script:?}");
        }
        for sql in events(Single05::UpdateNonIndex, &options, 0) {
            let c = sql.split('\'').nth(1).unwrap();
            assert!(crate::workload::testkit::fits_template(c.as_bytes(), C_TEMPLATE), "{sql}");
            assert!(sql.starts_with("UPDATE sbtest") && sql.contains(" SET c='"), "{sql}");
        }
    }

    #[test]
    fn insert_ids_are_zero_or_unique() {
        let options = OltpOptions { tables: 2, table_size: 50, ..OltpOptions::default() };
        for sql in events(Single05::Insert, &options, 0) {
            assert!(sql.contains(" (id, k, c, pad) VALUES (0, "), "{sql}");
        }
        let no_auto_inc = OltpOptions { auto_inc: false, ..options };
        let mut ids: Vec<u32> = [0, 1]
            .into_iter()
            .flat_map(|thread| events(Single05::Insert, &no_auto_inc, thread))
            .map(|sql| {
                let values = &sql[sql.find("VALUES (").unwrap() + 8..];
                values.split(", ").next().unwrap().parse().unwrap()
            })
            .collect();
        let count = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), count, "two connections never send the same id");
        assert!(ids.iter().any(|&id| id > i32::MAX as u32), "the whole u32 range: {ids:?}");
    }
}
