//! The eleven database tests of sysbench 1.0.20: the one list of them.

use std::fmt;

use super::oltp_options::{OltpOptions, OptionsError};
use super::{
    bulk_insert, oltp_delete, oltp_insert, oltp_point_select, oltp_read_only, oltp_read_write, oltp_update_index,
    oltp_update_non_index, oltp_write_only, select_random_points, select_random_ranges, Workload,
};

/// A sysbench 1.0.20 database test (one of its bundled Lua scripts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Test {
    OltpReadOnly,
    OltpReadWrite,
    OltpWriteOnly,
    OltpPointSelect,
    OltpUpdateIndex,
    OltpUpdateNonIndex,
    OltpDelete,
    OltpInsert,
    SelectRandomPoints,
    SelectRandomRanges,
    BulkInsert,
}

impl Test {
    /// Every test, in the order `--help` lists them.
    pub const ALL: [Test; 11] = [
        Test::OltpReadOnly,
        Test::OltpReadWrite,
        Test::OltpWriteOnly,
        Test::OltpPointSelect,
        Test::OltpUpdateIndex,
        Test::OltpUpdateNonIndex,
        Test::OltpDelete,
        Test::OltpInsert,
        Test::SelectRandomPoints,
        Test::SelectRandomRanges,
        Test::BulkInsert,
    ];

    /// The script's name (`oltp_read_write`), as each test's module spells it.
    pub fn name(self) -> &'static str {
        match self {
            Test::OltpReadOnly => oltp_read_only::NAME,
            Test::OltpReadWrite => oltp_read_write::NAME,
            Test::OltpWriteOnly => oltp_write_only::NAME,
            Test::OltpPointSelect => oltp_point_select::NAME,
            Test::OltpUpdateIndex => oltp_update_index::NAME,
            Test::OltpUpdateNonIndex => oltp_update_non_index::NAME,
            Test::OltpDelete => oltp_delete::NAME,
            Test::OltpInsert => oltp_insert::NAME,
            Test::SelectRandomPoints => select_random_points::NAME,
            Test::SelectRandomRanges => select_random_ranges::NAME,
            Test::BulkInsert => bulk_insert::NAME,
        }
    }

    /// The test named exactly `name` (no path, no `.lua`).
    pub fn from_name(name: &str) -> Option<Test> {
        Test::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Whether the script is built on `oltp_common.lua` (every test but
    /// bulk_insert), which gives it the common options and `prewarm`.
    pub fn uses_oltp_common(self) -> bool {
        self != Test::BulkInsert
    }

    /// The test's workload with `options`, or why they do not make one.
    pub fn workload(self, options: &OltpOptions) -> Result<Box<dyn Workload>, OptionsError> {
        Ok(match self {
            Test::OltpReadOnly => Box::new(oltp_read_only::workload(options)?),
            Test::OltpReadWrite => Box::new(oltp_read_write::workload(options)?),
            Test::OltpWriteOnly => Box::new(oltp_write_only::workload(options)?),
            Test::OltpPointSelect => Box::new(oltp_point_select::workload(options)?),
            Test::OltpUpdateIndex => Box::new(oltp_update_index::workload(options)?),
            Test::OltpUpdateNonIndex => Box::new(oltp_update_non_index::workload(options)?),
            Test::OltpDelete => Box::new(oltp_delete::workload(options)?),
            Test::OltpInsert => Box::new(oltp_insert::workload(options)?),
            Test::SelectRandomPoints => Box::new(select_random_points::workload(options)?),
            Test::SelectRandomRanges => Box::new(select_random_ranges::workload(options)?),
            Test::BulkInsert => Box::new(bulk_insert::workload(options)?),
        })
    }
}

impl fmt::Display for Test {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_test_makes_its_own_workload() {
        let options = OltpOptions::default();
        for test in Test::ALL {
            assert_eq!(Test::from_name(test.name()), Some(test));
            assert_eq!(test.workload(&options).unwrap().name(), test.name());
        }
        assert_eq!(Test::from_name("oltp_common"), None);
        assert_eq!(Test::from_name("oltp_read_write.lua"), None, "paths and .lua are the command line's business");
    }

    #[test]
    fn the_transactional_tests() {
        let transactional = [Test::OltpReadOnly, Test::OltpReadWrite, Test::OltpWriteOnly];
        for test in Test::ALL {
            let default = test.workload(&OltpOptions::default()).unwrap();
            assert_eq!(default.events_are_transactions(), transactional.contains(&test), "{test}");
            let skip_trx = test.workload(&OltpOptions { skip_trx: true, ..OltpOptions::default() }).unwrap();
            assert!(!skip_trx.events_are_transactions(), "{test} --skip_trx=on");
        }
    }
}
