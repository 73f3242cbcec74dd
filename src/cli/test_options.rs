//! The test script's options (`oltp_common.lua` and the two
//! `select_random_*` scripts) into the workload's [`OltpOptions`], with a
//! note for each option the test ignores, as sysbench silently does.

use super::cli_error::CliError;
use super::defs;
use super::opts::{master_note, Opts, INT_MAX};
use super::{value, Command};
use crate::workload::{OltpOptions, Test};

/// The options of oltp_common.lua's reads and of its writes.
const READS: [&str; 7] =
    ["point_selects", "simple_ranges", "sum_ranges", "order_ranges", "distinct_ranges", "range_size", "range_selects"];
const WRITES: [&str; 3] = ["index_updates", "non_index_updates", "delete_inserts"];

/// Whether a test's `event()` reads option `key`; the others only matter
/// to `prepare` or not at all.
fn read_at_run_time(test: Test, key: &str) -> bool {
    let reads = READS.contains(&key);
    let writes = WRITES.contains(&key);
    let transactions = key == "skip_trx";
    match test {
        Test::OltpReadWrite => reads || writes || transactions,
        Test::OltpReadOnly => reads || transactions,
        Test::OltpWriteOnly => writes || transactions,
        Test::OltpPointSelect => key == "point_selects",
        Test::OltpUpdateIndex => key == "index_updates",
        Test::OltpUpdateNonIndex => key == "non_index_updates",
        Test::OltpDelete | Test::BulkInsert => false,
        Test::OltpInsert => key == "auto_inc",
        Test::SelectRandomPoints => key == "random_points",
        Test::SelectRandomRanges => key == "number_of_ranges" || key == "delta",
    }
}

/// Options that shape the tables `prepare` creates: never "ignored".
const PREPARE_OPTIONS: [&str; 7] = [
    "tables",
    "table_size",
    "auto_inc",
    "secondary",
    "create_secondary",
    "mysql_storage_engine",
    "create_table_options",
];

pub(crate) fn test_options(
    opts: &Opts,
    test: Test,
    command: Command,
    notes: &mut Vec<String>,
) -> Result<OltpOptions, CliError> {
    let mut t = OltpOptions::default();
    read_table_shape(&mut t, opts, test, command, notes)?;
    read_counts(&mut t, opts)?;
    t.range_selects = opts.flag("range_selects", t.range_selects)?;
    t.skip_trx = opts.flag("skip_trx", t.skip_trx)?;
    if let Some(opt) = opts.get("pgsql_variant") {
        notes.push(format!("{}: ignored (PostgreSQL only)", opt.shown()));
    }
    apply_test_rules(&mut t, opts, test, command, notes)?;
    if command.runs_events() {
        note_ignored(opts, test, notes);
    }
    Ok(t)
}

/// What `prepare` creates: `--tables`, `--table_size`, `--auto_inc`,
/// `--secondary`, `--create_secondary`, the engine and table options.
fn read_table_shape(
    t: &mut OltpOptions,
    opts: &Opts,
    test: Test,
    command: Command,
    notes: &mut Vec<String>,
) -> Result<(), CliError> {
    if let Some(n) = opts.whole("tables", 1, INT_MAX, "a number of tables >= 1")? {
        t.tables = n;
    }
    if let Some(opt) = opts.get("table_size") {
        // A run that reads ids needs rows to read.
        let reads_ids = !matches!(test, Test::OltpInsert | Test::BulkInsert) && command.runs_events();
        let expected =
            if reads_ids { "a number of rows from 1 to 2147483647" } else { "a number of rows from 0 to 2147483647" };
        t.table_size = value::whole(opt, u32::from(reads_ids), INT_MAX, expected)?;
    }
    t.auto_inc = opts.flag("auto_inc", t.auto_inc)?;
    t.secondary = opts.flag("secondary", t.secondary)?;
    t.create_secondary = opts.flag("create_secondary", t.create_secondary)?;
    if let Some(opt) = opts.get("mysql_storage_engine") {
        let engine = value::text(opt, "innodb")?;
        if engine.is_empty() || !engine.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(CliError::InvalidValue {
                option: opt.label(),
                value: engine.to_owned(),
                expected: "a storage engine name such as innodb".to_owned(),
            });
        }
        t.mysql_storage_engine = engine.to_owned();
    }
    if let Some(opt) = opts.get("create_table_options") {
        t.mysql_table_options = value::text(opt, "OPTIONS")?.to_owned();
        // The 0.4/0.5 spellings (--mysql-create-options, ...) have their note.
        if !opt.name.starts_with("mysql") {
            notes.push(master_note(opt));
        }
    }
    Ok(())
}

/// The statement counts of an event and the ranges' sizes.
fn read_counts(t: &mut OltpOptions, opts: &Opts) -> Result<(), CliError> {
    let count = "a whole number >= 0";
    for (key, slot) in [
        ("range_size", &mut t.range_size),
        ("point_selects", &mut t.point_selects),
        ("simple_ranges", &mut t.simple_ranges),
        ("sum_ranges", &mut t.sum_ranges),
        ("order_ranges", &mut t.order_ranges),
        ("distinct_ranges", &mut t.distinct_ranges),
        ("index_updates", &mut t.index_updates),
        ("non_index_updates", &mut t.non_index_updates),
        ("delete_inserts", &mut t.delete_inserts),
    ] {
        if let Some(n) = opts.whole(key, 0, INT_MAX, count)? {
            *slot = n;
        }
    }
    if let Some(n) = opts.whole("delta", 0, INT_MAX, count)? {
        t.delta = i64::from(n);
    }
    // A prepared statement takes at most 65535 parameters.
    if let Some(n) = opts.whole("random_points", 1, 65_535, "a number of points from 1 to 65535")? {
        t.random_points = n;
    }
    if let Some(n) = opts.whole("number_of_ranges", 1, 32_767, "a number of ranges from 1 to 32767")? {
        t.number_of_ranges = n;
    }
    Ok(())
}

/// What sysbench's scripts do with some options whatever they say.
fn apply_test_rules(
    t: &mut OltpOptions,
    opts: &Opts,
    test: Test,
    command: Command,
    notes: &mut Vec<String>,
) -> Result<(), CliError> {
    if test == Test::OltpPointSelect {
        if let Some(opt) = opts.peek("point_selects").filter(|_| t.point_selects != 1) {
            notes.push(format!(
                "{}: oltp_point_select runs 1 point select per event whatever it says, as in sysbench",
                opt.shown()
            ));
        }
        t.point_selects = 1;
    }
    if matches!(test, Test::SelectRandomPoints | Test::SelectRandomRanges) && t.tables > 1 {
        match command {
            Command::Cleanup => {
                return Err(CliError::Conflict(format!(
                    "{test} does not support --tables > 1 (sysbench's cleanup refuses it too): clean up with \
                     oltp_read_write cleanup --tables={}",
                    t.tables
                )))
            }
            Command::Run | Command::Search => {
                notes.push(format!("--tables={}: {test} reads only sbtest1, as in sysbench", t.tables))
            }
            Command::Prepare | Command::Prewarm | Command::Help => {}
        }
    }
    Ok(())
}

/// A note for each test option given that `test`'s `run` does not read.
fn note_ignored(opts: &Opts, test: Test, notes: &mut Vec<String>) {
    for def in defs::OLTP.iter().chain(defs::RANDOM_POINTS).chain(defs::RANDOM_RANGES) {
        let key = defs::key(def.name);
        let key = key.as_str();
        let explained = read_at_run_time(test, key) || PREPARE_OPTIONS.contains(&key) || key == "pgsql_variant";
        if explained || (test == Test::OltpPointSelect && key == "point_selects") {
            continue;
        }
        if let Some(opt) = opts.peek(key) {
            notes.push(format!("{}: ignored by {test}, as in sysbench", opt.shown()));
        }
    }
}
