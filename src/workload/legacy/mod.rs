//! The sysbench 0.4 and 0.5 database tests, for the command lines written
//! for them (`--test=oltp`, `--test=tests/db/oltp.lua`, ...): the tables
//! they created and the statements they sent, where these differ from
//! 1.0.20's tests. [`LegacyTest`] is their one list, as
//! [`Test`](super::Test) is 1.0.20's; the command line maps a name onto one
//! of the two, and neither list holds the other's tests.
//!
//! - 0.4's built-in `oltp` ([`oltp04`]): one table `sbtest`, prepared
//!   statements, `--oltp-test-mode=complex|simple|nontrx`.
//! - 0.5's Lua scripts, as sysbench 1.0.20 still ships them in its source
//!   tree (`tests/include/oltp_legacy/`) and runs them given that path.
//!   All but `bulk_insert.lua` create their tables with `common.lua`
//!   ([`common05`]: `INTEGER UNSIGNED` columns, `MAX_ROWS`, one connection),
//!   which is not 1.0's `oltp_common.lua`. Their events differ from 1.0's
//!   as well:
//!   - `oltp.lua` ([`oltp05`]): one table per event, every statement
//!     COM_QUERY text, `SUM(K)`, LOCK TABLES on MyISAM;
//!   - `oltp_simple.lua`, `select.lua` (`SELECT pad`), `insert.lua`,
//!     `delete.lua`, `update_index.lua`, `update_non_index.lua`
//!     ([`single05`]): COM_QUERY text where 1.0 prepares, `select.lua`
//!     reads another column;
//!   - `select_random_points.lua`, `select_random_ranges.lua`: 1.0's
//!     statements (the second with other trailing spaces) with their values
//!     bound as INT, on 0.5's one table `sbtest1`;
//!   - `bulk_insert.lua`: as 1.0's, on tables `sbtest0..` of 0.5's shape;
//!   - `parallel_prepare.lua`: `common.lua`'s tables, created by every
//!     thread in parallel (its `run` is a `prepare`), without its "thread
//!     prepareN" lines.
//!
//! Files:
//! - `legacy_options.rs`: the options only the 0.4/0.5 tests have.
//! - `oltp04.rs`: 0.4's `--test=oltp`, with `table04.rs` (its table) and
//!   `rand04.rs` (its random ids).
//! - `oltp05.rs`: 0.5's `oltp.lua`; `single05.rs`: its one-statement
//!   scripts; `common05.rs`: 0.5's `common.lua`.

mod common05;
mod legacy_options;
mod oltp04;
mod oltp05;
mod rand04;
mod single05;
mod table04;

use std::fmt;

pub use legacy_options::{EngineTrx, LegacyOptions, NontrxMode, Oltp04Mode};
pub use rand04::{Dist04, Rand04, Seed04};

use super::{
    bulk_insert, select_random_points, select_random_ranges, OltpOptions, OptionsError, Script, ScriptContext,
    StatementSpec, Workload,
};
use crate::rand::Rng;
use single05::Single05;

/// A sysbench 0.4 or 0.5 database test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LegacyTest {
    /// 0.4's built-in `oltp`, in the mode [`LegacyOptions::oltp04_mode`] says.
    Oltp04,
    Oltp05,
    OltpSimple05,
    Select05,
    Insert05,
    Delete05,
    UpdateIndex05,
    UpdateNonIndex05,
    SelectRandomPoints05,
    SelectRandomRanges05,
    BulkInsert05,
    ParallelPrepare05,
}

impl LegacyTest {
    /// Every test.
    pub const ALL: [LegacyTest; 12] = [
        LegacyTest::Oltp04,
        LegacyTest::Oltp05,
        LegacyTest::OltpSimple05,
        LegacyTest::Select05,
        LegacyTest::Insert05,
        LegacyTest::Delete05,
        LegacyTest::UpdateIndex05,
        LegacyTest::UpdateNonIndex05,
        LegacyTest::SelectRandomPoints05,
        LegacyTest::SelectRandomRanges05,
        LegacyTest::BulkInsert05,
        LegacyTest::ParallelPrepare05,
    ];

    /// The name 0.4 knew it by (`oltp`), or 0.5's script file name.
    pub fn name(self) -> &'static str {
        match self {
            LegacyTest::Oltp04 => oltp04::NAME,
            LegacyTest::Oltp05 => oltp05::NAME,
            LegacyTest::OltpSimple05 => "oltp_simple.lua",
            LegacyTest::Select05 => "select.lua",
            LegacyTest::Insert05 => "insert.lua",
            LegacyTest::Delete05 => "delete.lua",
            LegacyTest::UpdateIndex05 => "update_index.lua",
            LegacyTest::UpdateNonIndex05 => "update_non_index.lua",
            LegacyTest::SelectRandomPoints05 => "select_random_points.lua",
            LegacyTest::SelectRandomRanges05 => "select_random_ranges.lua",
            LegacyTest::BulkInsert05 => "bulk_insert.lua",
            LegacyTest::ParallelPrepare05 => "parallel_prepare.lua",
        }
    }

    /// The 0.5 script whose file is named `file_name` (`oltp.lua`).
    pub fn from_script_file(file_name: &str) -> Option<LegacyTest> {
        LegacyTest::ALL.into_iter().find(|t| *t != LegacyTest::Oltp04 && t.name() == file_name)
    }

    /// The test's workload with `options` and `legacy`, or why they do not
    /// make one.
    pub fn workload(self, options: &OltpOptions, legacy: &LegacyOptions) -> Result<Box<dyn Workload>, OptionsError> {
        let single = |script| -> Result<Box<dyn Workload>, OptionsError> {
            Ok(Box::new(single05::workload(script, options, legacy)?))
        };
        let one_table = OltpOptions { tables: 1, ..options.clone() };
        Ok(match self {
            LegacyTest::Oltp04 => Box::new(oltp04::workload(options, legacy)?),
            LegacyTest::Oltp05 => Box::new(oltp05::workload(options, legacy)?),
            LegacyTest::ParallelPrepare05 => Box::new(oltp05::parallel_prepare(options, legacy)?),
            LegacyTest::OltpSimple05 => single(Single05::OltpSimple)?,
            LegacyTest::Select05 => single(Single05::Select)?,
            LegacyTest::Insert05 => single(Single05::Insert)?,
            LegacyTest::Delete05 => single(Single05::Delete)?,
            LegacyTest::UpdateIndex05 => single(Single05::UpdateIndex)?,
            LegacyTest::UpdateNonIndex05 => single(Single05::UpdateNonIndex)?,
            LegacyTest::SelectRandomPoints05 => {
                let events = select_random_points::select_random_points05(&one_table)?;
                Box::new(On05Tables {
                    name: self.name(),
                    events: Box::new(events),
                    options: one_table,
                    legacy: legacy.clone(),
                })
            }
            LegacyTest::SelectRandomRanges05 => {
                let events = select_random_ranges::select_random_ranges05(&one_table)?;
                Box::new(On05Tables {
                    name: self.name(),
                    events: Box::new(events),
                    options: one_table,
                    legacy: legacy.clone(),
                })
            }
            LegacyTest::BulkInsert05 => Box::new(bulk_insert::bulk_insert05(options)?),
        })
    }
}

impl fmt::Display for LegacyTest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A 1.0 test's events on `common.lua`'s tables: the 0.5
/// `select_random_*.lua` scripts, which send 1.0's statements on the one
/// table 0.5 prepares.
struct On05Tables {
    name: &'static str,
    events: Box<dyn Workload>,
    options: OltpOptions,
    legacy: LegacyOptions,
}

impl Workload for On05Tables {
    fn name(&self) -> &'static str {
        self.name
    }

    fn statements(&self) -> Vec<StatementSpec> {
        self.events.statements()
    }

    fn script(&self, context: ScriptContext) -> Box<dyn Script> {
        self.events.script(context)
    }

    fn prepare(&self, context: ScriptContext, rng: Rng) -> Box<dyn Iterator<Item = String> + Send> {
        common05::prepare05(&self.options, &self.legacy, context, rng, false)
    }

    fn prewarm(&self, _context: ScriptContext) -> Vec<String> {
        Vec::new()
    }

    fn cleanup(&self) -> Vec<String> {
        common05::cleanup05(self.options.tables)
    }

    fn progress_line(&self, sql: &str, loading: &mut String) -> Option<String> {
        common05::progress_line05(sql, loading, self.options.table_size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_test_makes_its_workload() {
        let (options, legacy) = (OltpOptions::default(), LegacyOptions::default());
        for test in LegacyTest::ALL {
            let workload = test.workload(&options, &legacy).unwrap();
            let expected = match test {
                LegacyTest::SelectRandomPoints05 | LegacyTest::SelectRandomRanges05 => test.name(),
                LegacyTest::BulkInsert05 => "bulk_insert",
                LegacyTest::ParallelPrepare05 => "oltp.lua",
                _ => test.name(),
            };
            assert_eq!(workload.name(), expected);
            if test != LegacyTest::Oltp04 {
                assert_eq!(LegacyTest::from_script_file(test.name()), Some(test));
            }
        }
        assert_eq!(LegacyTest::from_script_file("oltp"), None, "0.4's test is no script");
        assert_eq!(LegacyTest::from_script_file("oltp_read_write.lua"), None);
    }

    #[test]
    fn select_random_scripts_use_one_05_table() {
        let options = OltpOptions { tables: 4, table_size: 20, ..OltpOptions::default() };
        let w = LegacyTest::SelectRandomPoints05.workload(&options, &LegacyOptions::default()).unwrap();
        let sql: Vec<String> =
            w.prepare(crate::workload::testkit::context(0, 1), crate::workload::testkit::rng(1)).collect();
        assert!(sql[0].starts_with("CREATE TABLE sbtest1 (\nid INTEGER UNSIGNED"), "{}", sql[0]);
        assert_eq!(sql.len(), 3);
        assert_eq!(w.cleanup(), ["DROP TABLE IF EXISTS sbtest1"]);
        assert!(w.statements()[0].sql.contains("FROM sbtest1"));
    }
}
