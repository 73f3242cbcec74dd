//! What a test name on the command line refers to: a sysbench 1.0.20 script
//! (bare name or path to its `.lua` file), the 0.4 built-in `oltp`, or a
//! 0.5 `tests/db/*.lua` script.

use std::path::Path;

use super::defs;
use super::error::CliError;
use super::Test;
use crate::workload::legacy::LegacyTest;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TestRef {
    Modern(Test),
    /// `--test=oltp`: sysbench 0.4's built-in test, or, for a 0.5 line,
    /// the `oltp.lua` that 0.5 found in its data directory.
    Oltp,
    /// A 0.5 `tests/db/*.lua` script (also shipped with 1.0 as
    /// `tests/include/oltp_legacy/*.lua`).
    Script05(LegacyTest),
}

/// The three script names 1.0 kept; in a 0.5 directory they are 0.5's.
const SHARED_WITH_1_0: [LegacyTest; 3] =
    [LegacyTest::SelectRandomPoints05, LegacyTest::SelectRandomRanges05, LegacyTest::BulkInsert05];

/// sysbench's built-in non-database tests.
const BUILTIN_TESTS: [&str; 5] = ["fileio", "cpu", "memory", "threads", "mutex"];

pub(crate) fn resolve(name: &str) -> Result<TestRef, CliError> {
    let is_path = name.contains('/') || name.ends_with(".lua");
    if !is_path {
        if let Some(test) = Test::from_name(name) {
            return Ok(TestRef::Modern(test));
        }
        if name == "oltp" {
            return Ok(TestRef::Oltp);
        }
        if BUILTIN_TESTS.contains(&name) {
            return Err(CliError::NotADatabaseTest(name.to_owned()));
        }
        return Err(unknown(name, name));
    }

    let file = Path::new(name).file_name().and_then(|f| f.to_str()).unwrap_or("");
    let stem = file.strip_suffix(".lua").unwrap_or(file);
    let in_05_tree = name.contains("tests/db/") || name.starts_with("db/") || name.contains("oltp_legacy/");
    let script = LegacyTest::from_script_file(&format!("{stem}.lua"));
    match (script, Test::from_name(stem)) {
        (Some(script), _) if in_05_tree || !SHARED_WITH_1_0.contains(&script) => Ok(TestRef::Script05(script)),
        (_, Some(test)) => Ok(TestRef::Modern(test)),
        _ => Err(unknown(name, stem)),
    }
}

fn unknown(name: &str, stem: &str) -> CliError {
    let names = Test::ALL.iter().map(|t| t.name()).chain(["oltp"]);
    CliError::UnknownTest { name: name.to_owned(), suggestion: defs::closest(stem, names).map(str::to_owned) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modern_names_and_paths() {
        assert_eq!(resolve("oltp_read_write").unwrap(), TestRef::Modern(Test::OltpReadWrite));
        assert_eq!(
            resolve("/usr/local/sysbench-1.0.20/src/lua/oltp_read_write.lua").unwrap(),
            TestRef::Modern(Test::OltpReadWrite)
        );
        assert_eq!(resolve("oltp_point_select.lua").unwrap(), TestRef::Modern(Test::OltpPointSelect));
        assert_eq!(resolve("/usr/share/sysbench/bulk_insert.lua").unwrap(), TestRef::Modern(Test::BulkInsert));
    }

    #[test]
    fn legacy_names_and_paths() {
        assert_eq!(resolve("oltp").unwrap(), TestRef::Oltp);
        assert_eq!(resolve("lua/oltp.lua").unwrap(), TestRef::Script05(LegacyTest::Oltp05));
        assert_eq!(resolve("tests/db/oltp.lua").unwrap(), TestRef::Script05(LegacyTest::Oltp05));
        assert_eq!(resolve("/x/tests/db/update_index.lua").unwrap(), TestRef::Script05(LegacyTest::UpdateIndex05));
        assert_eq!(
            resolve("sysbench/tests/db/select_random_points.lua").unwrap(),
            TestRef::Script05(LegacyTest::SelectRandomPoints05)
        );
        assert_eq!(
            resolve("/usr/share/sysbench/tests/include/oltp_legacy/bulk_insert.lua").unwrap(),
            TestRef::Script05(LegacyTest::BulkInsert05)
        );
    }

    #[test]
    fn refusals() {
        assert!(matches!(resolve("fileio"), Err(CliError::NotADatabaseTest(_))));
        assert!(matches!(
            resolve("oltp_read_writ"),
            Err(CliError::UnknownTest { suggestion: Some(s), .. }) if s == "oltp_read_write"
        ));
        assert!(matches!(resolve("select"), Err(CliError::UnknownTest { .. })));
        assert!(matches!(resolve("/tmp/my_script.lua"), Err(CliError::UnknownTest { .. })));
    }
}
