//! What a test name on the command line refers to: a sysbench 1.0.20 script
//! (bare name or path to its `.lua` file), the 0.4 built-in `oltp`, or a
//! 0.5 `tests/db/*.lua` script.

use std::path::Path;

use super::cli_error::CliError;
use super::defs;
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
    /// Any other `.lua` path: a custom script, run by the Lua engine.
    Lua,
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
        // A stock script's name: the built-in test, unless the file there is
        // not the stock script (a user's edited copy), which the Lua engine runs.
        (_, Some(test)) if !edited_stock_script(Path::new(name)) => Ok(TestRef::Modern(test)),
        (_, Some(_)) => Ok(TestRef::Lua),
        // A script of the user's; a missing file is refused as sysbench refuses it.
        _ if Path::new(name).is_file() => Ok(TestRef::Lua),
        _ => Err(unknown(name, stem)),
    }
}

/// sysbench 1.0.20's scripts (src/lua/), each hashed past its `#!` line
/// (Debian's package changes it) with [`fnv1a`]: a copy of one runs as the
/// built-in test, anything else through the Lua engine.
const STOCK_SCRIPTS: [(&str, u64); 12] = [
    ("bulk_insert.lua", 0x0c0406aa10f6f28a),
    ("oltp_common.lua", 0xc728ee927d16f91c),
    ("oltp_delete.lua", 0x4acf868dfd305e37),
    ("oltp_insert.lua", 0xd368ac7fb24a91d2),
    ("oltp_point_select.lua", 0x4efa6f81f80bfd64),
    ("oltp_read_only.lua", 0xcc1ffa8779587228),
    ("oltp_read_write.lua", 0xfcfcfe78a78f2603),
    ("oltp_update_index.lua", 0xa4de12d3e0005289),
    ("oltp_update_non_index.lua", 0xccf2c4ec2942444d),
    ("oltp_write_only.lua", 0xda97eb83e255fa7b),
    ("select_random_points.lua", 0xcce2d7484840c66d),
    ("select_random_ranges.lua", 0xd86c04ae8341ad21),
];

/// A script larger than this is nobody's copy of a stock one.
const STOCK_SCRIPT_MAX_BYTES: u64 = 64 * 1024;

/// Whether `path` names a stock script's file that differs from the stock
/// script, or an `oltp_common.lua` that its `require` would find first
/// (in the current directory or beside it, as sysbench's `package.path`)
/// does. A path with no file
/// there (a command line written for another host) is not edited: it runs
/// the built-in test, as it always has.
fn edited_stock_script(path: &Path) -> bool {
    let common = path.with_file_name("oltp_common.lua");
    [path, Path::new("oltp_common.lua"), common.as_path()].iter().any(|file| differs_from_stock(file) == Some(true))
}

/// `None` when there is no such file; `Some(true)` when it is not the
/// stock script of its name, or cannot be read.
fn differs_from_stock(file: &Path) -> Option<bool> {
    let meta = std::fs::metadata(file).ok()?;
    let name = file.file_name().and_then(|f| f.to_str())?;
    let stock = STOCK_SCRIPTS.iter().find(|(n, _)| *n == name).map(|&(_, hash)| hash)?;
    if !meta.is_file() || meta.len() > STOCK_SCRIPT_MAX_BYTES {
        return Some(true);
    }
    let Ok(text) = std::fs::read(file) else { return Some(true) };
    Some(fnv1a(past_shebang(&text)) != stock)
}

fn past_shebang(text: &[u8]) -> &[u8] {
    match text.strip_prefix(b"#!") {
        Some(rest) => rest.splitn(2, |&b| b == b'\n').nth(1).unwrap_or(&[]),
        None => text,
    }
}

/// FNV-1a, 64 bits: tells a stock script from an edited copy (not an
/// adversary's collision, which would only run the built-in test).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
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
        assert!(matches!(resolve("/tmp/no/such/my_script.lua"), Err(CliError::UnknownTest { .. })));
        let custom = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/lua/api.lua");
        assert_eq!(resolve(custom).unwrap(), TestRef::Lua);
    }

    /// A copy of a stock script runs the built-in test; an edited copy, or
    /// a stock script beside an edited oltp_common.lua, the Lua engine.
    #[test]
    fn an_edited_stock_script_runs_as_lua() {
        let dir = std::env::temp_dir().join(format!("wb-stock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let script = dir.join("oltp_point_select.lua");
        let path = script.to_str().unwrap();
        let stock = std::fs::read("/usr/share/sysbench/oltp_point_select.lua");
        if let Ok(stock) = stock {
            std::fs::write(&script, &stock).unwrap();
            assert_eq!(resolve(path).unwrap(), TestRef::Modern(Test::OltpPointSelect));
            std::fs::write(dir.join("oltp_common.lua"), b"-- mine\n").unwrap();
            assert_eq!(resolve(path).unwrap(), TestRef::Lua);
            std::fs::remove_file(dir.join("oltp_common.lua")).unwrap();
        }
        std::fs::write(&script, b"#!/usr/bin/env sysbench\nfunction event() end\n").unwrap();
        assert_eq!(resolve(path).unwrap(), TestRef::Lua);
        std::fs::remove_dir_all(&dir).unwrap();
        // No file there: the built-in test, as for a line written elsewhere.
        assert_eq!(resolve("/nonexistent/oltp_point_select.lua").unwrap(), TestRef::Modern(Test::OltpPointSelect));
    }

    #[test]
    fn stock_hashes_match_the_installed_scripts() {
        for (name, hash) in STOCK_SCRIPTS {
            let Ok(text) = std::fs::read(format!("/usr/share/sysbench/{name}")) else { continue };
            assert_eq!(fnv1a(past_shebang(&text)), hash, "{name}");
        }
    }
}
