//! What a test name on the command line refers to: a sysbench 1.0.20 script
//! (bare name or path to its `.lua` file), the 0.4 built-in `oltp`, or a
//! 0.5 `tests/db/*.lua` script.

use std::path::Path;

use super::defs;
use super::error::CliError;
use super::Test;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TestRef {
    Modern(Test),
    /// sysbench 0.4's built-in `--test=oltp`.
    Oltp04,
    Script05(Script05),
}

/// The 0.5 `tests/db/*.lua` scripts (also shipped with 1.0 as
/// `tests/include/oltp_legacy/*.lua`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Script05 {
    Oltp,
    OltpSimple,
    Select,
    Insert,
    Delete,
    UpdateIndex,
    UpdateNonIndex,
    SelectRandomPoints,
    SelectRandomRanges,
    BulkInsert,
    ParallelPrepare,
}

impl Script05 {
    pub(crate) fn file_name(self) -> &'static str {
        match self {
            Script05::Oltp => "oltp.lua",
            Script05::OltpSimple => "oltp_simple.lua",
            Script05::Select => "select.lua",
            Script05::Insert => "insert.lua",
            Script05::Delete => "delete.lua",
            Script05::UpdateIndex => "update_index.lua",
            Script05::UpdateNonIndex => "update_non_index.lua",
            Script05::SelectRandomPoints => "select_random_points.lua",
            Script05::SelectRandomRanges => "select_random_ranges.lua",
            Script05::BulkInsert => "bulk_insert.lua",
            Script05::ParallelPrepare => "parallel_prepare.lua",
        }
    }

    /// The 0.5-only script names; the three shared with 1.0 count as 0.5
    /// only inside a 0.5 directory.
    fn from_stem(stem: &str) -> Option<Script05> {
        Some(match stem {
            "oltp" => Script05::Oltp,
            "oltp_simple" => Script05::OltpSimple,
            "select" => Script05::Select,
            "insert" => Script05::Insert,
            "delete" => Script05::Delete,
            "update_index" => Script05::UpdateIndex,
            "update_non_index" => Script05::UpdateNonIndex,
            "parallel_prepare" => Script05::ParallelPrepare,
            _ => return None,
        })
    }
}

/// sysbench's built-in non-database tests.
const BUILTIN_TESTS: [&str; 5] = ["fileio", "cpu", "memory", "threads", "mutex"];

pub(crate) fn resolve(name: &str) -> Result<TestRef, CliError> {
    let is_path = name.contains('/') || name.ends_with(".lua");
    if !is_path {
        if let Some(test) = Test::from_name(name) {
            return Ok(TestRef::Modern(test));
        }
        if name == "oltp" {
            return Ok(TestRef::Oltp04);
        }
        if BUILTIN_TESTS.contains(&name) {
            return Err(CliError::NotADatabaseTest(name.to_owned()));
        }
        return Err(unknown(name, name));
    }

    let file = Path::new(name).file_name().and_then(|f| f.to_str()).unwrap_or("");
    let stem = file.strip_suffix(".lua").unwrap_or(file);
    let in_05_tree = name.contains("tests/db/") || name.starts_with("db/") || name.contains("oltp_legacy/");
    if let Some(script) = Script05::from_stem(stem) {
        return Ok(TestRef::Script05(script));
    }
    match Test::from_name(stem) {
        Some(Test::SelectRandomPoints) if in_05_tree => Ok(TestRef::Script05(Script05::SelectRandomPoints)),
        Some(Test::SelectRandomRanges) if in_05_tree => Ok(TestRef::Script05(Script05::SelectRandomRanges)),
        Some(Test::BulkInsert) if in_05_tree => Ok(TestRef::Script05(Script05::BulkInsert)),
        Some(test) => Ok(TestRef::Modern(test)),
        None => Err(unknown(name, stem)),
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
        assert_eq!(resolve("oltp").unwrap(), TestRef::Oltp04);
        assert_eq!(resolve("lua/oltp.lua").unwrap(), TestRef::Script05(Script05::Oltp));
        assert_eq!(resolve("tests/db/oltp.lua").unwrap(), TestRef::Script05(Script05::Oltp));
        assert_eq!(resolve("/x/tests/db/update_index.lua").unwrap(), TestRef::Script05(Script05::UpdateIndex));
        assert_eq!(
            resolve("sysbench/tests/db/select_random_points.lua").unwrap(),
            TestRef::Script05(Script05::SelectRandomPoints)
        );
        assert_eq!(
            resolve("/usr/share/sysbench/tests/include/oltp_legacy/bulk_insert.lua").unwrap(),
            TestRef::Script05(Script05::BulkInsert)
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
