//! sysbench 0.4/0.5 command lines: which 0.4/0.5 test runs
//! ([`LegacyTest`], with its modes in [`LegacyOptions`]), and the 1.0 test
//! closest to it, whose rules the notes on the shared options follow.
//!
//! The test comes from the script (`--test=tests/db/update_index.lua`) or,
//! for `--test=oltp`, from the options: 0.4's built-in test, in the mode
//! `--oltp-test-mode`, `--oltp-nontrx-mode`, `--oltp-read-only` and
//! `--oltp-write-only` give it; or, on a line with 0.5's options
//! (`--oltp-tables-count`, ...), the `oltp.lua` that 0.5 loaded from its
//! data directory for that name. `legacy_args.rs` then reads the
//! options only the 0.4/0.5 tests have and renames the others to their
//! 1.0 names. Every decision leaves a note.
//!
//! The general aliases that 1.0.20 still accepts (`--num-threads`,
//! `--max-requests`, `--max-time`, `--tx-rate`) are resolved in `invocation.rs`,
//! which also applies the 0.4/0.5 defaults (10000 requests, no time limit).

use super::cli_error::CliError;
use super::legacy_args;
use super::raw::RawOpt;
use super::test_name::TestRef;
use super::value;
use super::{Command, Test};
use crate::workload::legacy::{LegacyOptions, LegacyTest, NontrxMode, Oltp04Mode};

pub(crate) use legacy_args::modern_hint;

/// The options that choose the 0.4 OLTP mode.
const MODE_KEYS: [&str; 4] = ["oltp_test_mode", "oltp_nontrx_mode", "oltp_read_only", "oltp_write_only"];

/// Options only sysbench 0.4 had, and only 0.5 (or 1.0.20's copy of its
/// scripts) had: they tell which `--test=oltp` a line means.
const ONLY_04: [&str; 17] = [
    "oltp_test_mode",
    "oltp_nontrx_mode",
    "oltp_reconnect_mode",
    "oltp_sp_name",
    "oltp_table_name",
    "oltp_connect_delay",
    "oltp_user_delay_min",
    "oltp_user_delay_max",
    "oltp_dist_type",
    "oltp_dist_iter",
    "oltp_dist_pct",
    "oltp_dist_res",
    "oltp_point_select_mysql_handler",
    "oltp_point_select_all_cols",
    "init_rng",
    "seed_rng",
    "mysql_create_options",
];
const ONLY_05: [&str; 5] =
    ["oltp_tables_count", "oltp_create_secondary", "oltp_reconnect", "rand_init", "mysql_table_options"];

/// Whether option `key` is one only 0.5 (or 1.0.20's copy of its
/// scripts) had.
#[cfg(test)]
pub(crate) fn only_in_05(key: &str) -> bool {
    ONLY_05.contains(&key)
}

/// What a command line runs.
#[derive(Debug)]
pub(crate) struct Chosen {
    /// The 1.0 test closest to it.
    pub(crate) test: Test,
    /// The 0.4/0.5 test that runs instead, for a 0.4/0.5 line.
    pub(crate) legacy: Option<LegacyTest>,
    pub(crate) legacy_options: LegacyOptions,
    pub(crate) command: Command,
}

/// Picks the test and command for a test reference, reads the 0.4/0.5
/// options out of `opts` and renames the rest to their 1.0 names. `named`
/// is how the test was named (`--test=oltp`).
pub(crate) fn apply(
    test_ref: TestRef,
    named: &str,
    command: Command,
    opts: &mut Vec<RawOpt>,
    notes: &mut Vec<String>,
) -> Result<Chosen, CliError> {
    let legacy = match test_ref {
        TestRef::Modern(test) => {
            return Ok(Chosen { test, legacy: None, legacy_options: LegacyOptions::default(), command })
        }
        // The script's options are its own: cli/lua_script_args.rs reads the line.
        TestRef::Lua => {
            return Ok(Chosen {
                test: Test::OltpReadWrite,
                legacy: None,
                legacy_options: LegacyOptions::default(),
                command,
            })
        }
        TestRef::Oltp => bare_oltp(named, opts, notes)?,
        TestRef::Script05(script) => script,
    };
    let mut legacy_options = LegacyOptions::default();
    let (test, command) = match legacy {
        LegacyTest::Oltp04 => (oltp04_mode(named, opts, &mut legacy_options, notes)?, command),
        script => script05_test(script, named, command, opts, &mut legacy_options, notes)?,
    };
    opts.retain(|o| !MODE_KEYS.contains(&o.key.as_str()));
    legacy_args::read_legacy_only(legacy, opts, &mut legacy_options, notes)?;
    legacy_args::rewrite(opts, notes)?;
    legacy_args::transaction_note(legacy, &legacy_options, opts, notes);
    Ok(Chosen { test, legacy: Some(legacy), legacy_options, command })
}

fn last<'a>(opts: &'a [RawOpt], key: &str) -> Option<&'a RawOpt> {
    opts.iter().rev().find(|o| o.key == key)
}

fn legacy_flag(opts: &[RawOpt], key: &str) -> Result<Option<(bool, String)>, CliError> {
    last(opts, key).map(|o| Ok((value::boolean(o)?, o.shown()))).transpose()
}

/// `--test=oltp`: 0.4's test, unless the line has 0.5's options and none
/// of 0.4's.
fn bare_oltp(named: &str, opts: &[RawOpt], notes: &mut Vec<String>) -> Result<LegacyTest, CliError> {
    let first = |keys: &[&str]| opts.iter().find(|o| keys.contains(&o.key.as_str()));
    match (first(&ONLY_04), first(&ONLY_05)) {
        (Some(of_04), Some(of_05)) => Err(CliError::Conflict(format!(
            "{named} with {} (a sysbench 0.4 option) and {} (a 0.5 option): 0.4's oltp test has one table \
             sbtest, 0.5's oltp.lua has tables sbtest1..N; drop the one that is not yours (see docs/legacy.md)",
            of_04.shown(),
            of_05.shown()
        ))),
        (None, Some(of_05)) => {
            notes.push(format!(
                "legacy {named} with {} (a 0.5 option): 0.5's oltp.lua, which 0.5 loaded from its data directory \
                 for this name",
                of_05.shown()
            ));
            Ok(LegacyTest::Oltp05)
        }
        (_, None) => Ok(LegacyTest::Oltp04),
    }
}

/// 0.4 `sb_oltp.c`: `--oltp-test-mode` (default complex) picks the request
/// generator; read-only and write-only only shape the complex one.
fn oltp04_mode(
    named: &str,
    opts: &[RawOpt],
    legacy: &mut LegacyOptions,
    notes: &mut Vec<String>,
) -> Result<Test, CliError> {
    let mode_opt = last(opts, "oltp_test_mode");
    let mode = match mode_opt {
        Some(o) => value::text(o, "simple|complex|nontrx")?,
        None => "complex",
    };
    let read_only = legacy_flag(opts, "oltp_read_only")?;
    let write_only = legacy_flag(opts, "oltp_write_only")?;
    let shown = |o: &Option<(bool, String)>| o.iter().map(|(_, shown)| shown.clone()).collect::<Vec<_>>();
    let mut decided_by = vec![named.to_owned()];
    decided_by.extend(mode_opt.map(RawOpt::shown));
    let nontrx = last(opts, "oltp_nontrx_mode");
    let mut ignored = Vec::new();
    let (test, what) = match mode {
        "complex" => {
            decided_by.extend(shown(&read_only).into_iter().chain(shown(&write_only)));
            ignored.extend(nontrx.map(RawOpt::shown));
            (legacy.oltp04_mode, legacy.read_only, legacy.write_only) = (
                Oltp04Mode::Complex,
                read_only.as_ref().is_some_and(|r| r.0),
                write_only.as_ref().is_some_and(|w| w.0),
            );
            complex_test(legacy.read_only, legacy.write_only)?
        }
        "simple" => {
            ignored.extend(shown(&read_only).into_iter().chain(shown(&write_only)));
            ignored.extend(nontrx.map(RawOpt::shown));
            legacy.oltp04_mode = Oltp04Mode::Simple;
            (Test::OltpPointSelect, "simple mode: one point select per event".to_owned())
        }
        "nontrx" => {
            ignored.extend(shown(&read_only).into_iter().chain(shown(&write_only)));
            decided_by.extend(nontrx.map(RawOpt::shown));
            let (nontrx_mode, test, what) = nontrx_mode(nontrx)?;
            legacy.oltp04_mode = Oltp04Mode::Nontrx(nontrx_mode);
            (test, what)
        }
        "sp" => return Err(refused_sp_mode()),
        _ => {
            return Err(CliError::InvalidValue {
                option: mode_opt.map_or_else(|| "--oltp-test-mode".to_owned(), RawOpt::label),
                value: mode.to_owned(),
                expected: "simple, complex or nontrx".to_owned(),
            })
        }
    };
    notes.push(format!("legacy {}: sysbench 0.4's oltp test, {what}, on its one table", decided_by.join(" ")));
    for shown in ignored {
        notes.push(format!("legacy {shown}: ignored in --oltp-test-mode={mode}, as 0.4 ignored it"));
    }
    Ok(test)
}

fn refused_sp_mode() -> CliError {
    CliError::NoEquivalent {
        option: "--oltp-test-mode=sp".to_owned(),
        advice: "wirebench does not call stored procedures; pick another mode or a test such as oltp_read_write"
            .to_owned(),
    }
}

/// 0.4's `--oltp-nontrx-mode`: the mode, the 1.0 test closest to it, and
/// what it sends.
fn nontrx_mode(opt: Option<&RawOpt>) -> Result<(NontrxMode, Test, String), CliError> {
    let mode = match opt {
        Some(o) => value::text(o, "select|update_key|update_nokey|insert|delete")?,
        None => "select",
    };
    let (nontrx, test, statement) = match mode {
        "select" => (NontrxMode::Select, Test::OltpPointSelect, "SELECT pad"),
        "update_key" => (NontrxMode::UpdateKey, Test::OltpUpdateIndex, "UPDATE of k"),
        "update_nokey" => (NontrxMode::UpdateNokey, Test::OltpUpdateNonIndex, "UPDATE of c"),
        "insert" => (NontrxMode::Insert, Test::OltpInsert, "INSERT, into the table emptied by TRUNCATE TABLE first,"),
        "delete" => (NontrxMode::Delete, Test::OltpDelete, "DELETE of the next id of 0.4's sequence"),
        _ => {
            return Err(CliError::InvalidValue {
                option: opt.map_or_else(|| "--oltp-nontrx-mode".to_owned(), RawOpt::label),
                value: mode.to_owned(),
                expected: "select, update_key, update_nokey, insert or delete".to_owned(),
            })
        }
    };
    Ok((nontrx, test, format!("nontrx mode {mode}: one {statement} per event, no transaction")))
}

/// 0.4's complex mode and 0.5's `oltp.lua`: the 1.0 test with the same
/// reads and writes, and what runs.
fn complex_test(read_only: bool, write_only: bool) -> Result<(Test, String), CliError> {
    match (read_only, write_only) {
        (false, false) => Ok((Test::OltpReadWrite, "a transaction of reads and writes".to_owned())),
        (true, false) => Ok((Test::OltpReadOnly, "a transaction of reads only".to_owned())),
        (false, true) => Ok((Test::OltpWriteOnly, "a transaction of writes only".to_owned())),
        (true, true) => Err(CliError::Conflict(
            "--oltp-read-only and --oltp-write-only are mutually exclusive (sysbench 0.4 and 0.5 refuse both too): \
             drop one (see docs/legacy.md)"
                .to_owned(),
        )),
    }
}

/// A 0.5 script: the 1.0 test closest to it, and the command (0.5's
/// `parallel_prepare.lua` prepares in its `run`).
fn script05_test(
    script: LegacyTest,
    named: &str,
    command: Command,
    opts: &[RawOpt],
    legacy: &mut LegacyOptions,
    notes: &mut Vec<String>,
) -> Result<(Test, Command), CliError> {
    let mut decided_by = vec![named.to_owned()];
    if script == LegacyTest::Oltp05 {
        for (key, slot) in [("oltp_read_only", &mut legacy.read_only), ("oltp_write_only", &mut legacy.write_only)] {
            if let Some((on, shown)) = legacy_flag(opts, key)? {
                *slot = on;
                decided_by.push(shown);
            }
        }
    }
    let mut command = command;
    let (test, what) = match script {
        LegacyTest::Oltp05 => {
            let (test, what) = complex_test(legacy.read_only, legacy.write_only)?;
            (test, format!("{what}, each on one table drawn per event"))
        }
        LegacyTest::ParallelPrepare05 => {
            if command == Command::Run {
                command = Command::Prepare;
                decided_by.push("run".to_owned());
            }
            (Test::OltpReadWrite, "prepare: common.lua's tables, spread over the threads".to_owned())
        }
        _ => script05_statement(script),
    };
    notes.push(format!("legacy {}: sysbench 0.5's {script}, {what}", decided_by.join(" ")));
    let read_there =
        |k: &&&str| script == LegacyTest::Oltp05 && (k.starts_with("oltp_read") || k.starts_with("oltp_write"));
    for shown in MODE_KEYS.iter().filter(|k| !read_there(k)).filter_map(|k| last(opts, k).map(RawOpt::shown)) {
        notes.push(format!("legacy {shown}: ignored, as 0.5's {script} ignored it"));
    }
    Ok((test, command))
}

/// The one-statement 0.5 scripts: the 1.0 test closest, and what they send.
fn script05_statement(script: LegacyTest) -> (Test, String) {
    let (test, what) = match script {
        LegacyTest::OltpSimple05 => (Test::OltpPointSelect, "one SELECT c per event, as COM_QUERY text"),
        LegacyTest::Select05 => (Test::OltpPointSelect, "one SELECT pad per event, as COM_QUERY text"),
        LegacyTest::Insert05 => (Test::OltpInsert, "one INSERT per event"),
        LegacyTest::Delete05 => (Test::OltpDelete, "one DELETE per event, as COM_QUERY text"),
        LegacyTest::UpdateIndex05 => (Test::OltpUpdateIndex, "one UPDATE of k per event, as COM_QUERY text"),
        LegacyTest::UpdateNonIndex05 => (Test::OltpUpdateNonIndex, "one UPDATE of c per event, as COM_QUERY text"),
        LegacyTest::SelectRandomPoints05 => (Test::SelectRandomPoints, "select_random_points on its one table"),
        LegacyTest::SelectRandomRanges05 => (Test::SelectRandomRanges, "select_random_ranges on its one table"),
        _ => (Test::BulkInsert, "bulk inserts into tables sbtest0..sbtestN-1, N = threads"),
    };
    (test, what.to_owned())
}
