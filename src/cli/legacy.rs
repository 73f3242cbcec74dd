//! sysbench 0.4/0.5 command lines mapped onto the 1.0 tests and options.
//!
//! The test comes from the script (`--test=tests/db/update_index.lua`) or,
//! for 0.4's built-in `--test=oltp`, from `--oltp-test-mode`,
//! `--oltp-nontrx-mode`, `--oltp-read-only` and `--oltp-write-only`. The
//! other 0.4/0.5 options are renamed to their 1.0 names in place (so the
//! last one written still wins), dropped when they do nothing, or refused
//! when 1.0 has nothing like them. Every one leaves a note.
//!
//! The general aliases that 1.0.20 still accepts (`--num-threads`,
//! `--max-requests`, `--max-time`, `--tx-rate`) are resolved in `build.rs`,
//! which also applies the 0.4/0.5 defaults (10000 requests, no time limit).

use super::error::CliError;
use super::raw::RawOpt;
use super::test_name::{Script05, TestRef};
use super::value;
use super::{Command, Test};

/// The options that choose the 0.4 OLTP mode.
const MODE_KEYS: [&str; 4] = ["oltp_test_mode", "oltp_nontrx_mode", "oltp_read_only", "oltp_write_only"];

/// Picks the 1.0 test and command for a legacy test reference, and rewrites
/// the legacy options in `opts`. `named` is how the test was named
/// (`--test=oltp`).
pub(crate) fn apply(
    test_ref: TestRef,
    named: &str,
    command: Command,
    opts: &mut Vec<RawOpt>,
    notes: &mut Vec<String>,
) -> Result<(Test, Command), CliError> {
    let (test, command) = match test_ref {
        TestRef::Modern(test) => return Ok((test, command)),
        TestRef::Oltp04 => (oltp04_test(named, opts, notes)?, command),
        TestRef::Script05(script) => script05_test(script, named, command, opts, notes)?,
    };
    opts.retain(|o| !MODE_KEYS.contains(&o.key.as_str()));
    rewrite_options(opts, notes)?;
    engine_note(test_ref, test, opts, notes);
    Ok((test, command))
}

fn last<'a>(opts: &'a [RawOpt], key: &str) -> Option<&'a RawOpt> {
    opts.iter().rev().find(|o| o.key == key)
}

fn flag(opts: &[RawOpt], key: &str) -> Result<Option<(bool, String)>, CliError> {
    last(opts, key).map(|o| Ok((value::boolean(o)?, o.shown()))).transpose()
}

/// 0.4 `sb_oltp.c`: `--oltp-test-mode` (default complex) picks the request
/// generator; read-only and write-only only shape the complex one.
fn oltp04_test(named: &str, opts: &[RawOpt], notes: &mut Vec<String>) -> Result<Test, CliError> {
    let mode_opt = last(opts, "oltp_test_mode");
    let mode = match mode_opt {
        Some(o) => value::text(o, "simple|complex|nontrx")?,
        None => "complex",
    };
    let read_only = flag(opts, "oltp_read_only")?;
    let write_only = flag(opts, "oltp_write_only")?;
    let nontrx = last(opts, "oltp_nontrx_mode");
    let mut decided_by = vec![named.to_owned()];
    decided_by.extend(mode_opt.map(RawOpt::shown));
    let mut ignored = Vec::new();

    let test = match mode {
        "complex" => {
            decided_by.extend(read_only.iter().chain(&write_only).map(|(_, shown)| shown.clone()));
            ignored.extend(nontrx.map(RawOpt::shown));
            complex_test(read_only.as_ref(), write_only.as_ref())?
        }
        "simple" => {
            ignored.extend(read_only.iter().chain(&write_only).map(|(_, shown)| shown.clone()));
            ignored.extend(nontrx.map(RawOpt::shown));
            Test::OltpPointSelect
        }
        "nontrx" => {
            ignored.extend(read_only.iter().chain(&write_only).map(|(_, shown)| shown.clone()));
            let nontrx_mode = match nontrx {
                Some(o) => {
                    decided_by.push(o.shown());
                    value::text(o, "select|update_key|update_nokey|insert|delete")?
                }
                None => "select",
            };
            match nontrx_mode {
                "select" => {
                    notes.push(
                        "legacy nontrx select mode read the pad column (SELECT pad FROM sbtest WHERE id=?); \
                         oltp_point_select reads c"
                            .to_owned(),
                    );
                    Test::OltpPointSelect
                }
                "update_key" => Test::OltpUpdateIndex,
                "update_nokey" => Test::OltpUpdateNonIndex,
                "insert" => Test::OltpInsert,
                "delete" => Test::OltpDelete,
                _ => {
                    return Err(CliError::InvalidValue {
                        option: nontrx.map_or_else(|| "--oltp-nontrx-mode".to_owned(), RawOpt::label),
                        value: nontrx_mode.to_owned(),
                        expected: "select, update_key, update_nokey, insert or delete".to_owned(),
                    })
                }
            }
        }
        "sp" => {
            return Err(CliError::NoEquivalent {
                option: "--oltp-test-mode=sp".to_owned(),
                advice: "stored procedure calls are not a sysbench 1.0 test; pick a test such as oltp_read_write"
                    .to_owned(),
            })
        }
        _ => {
            return Err(CliError::InvalidValue {
                option: mode_opt.map_or_else(|| "--oltp-test-mode".to_owned(), RawOpt::label),
                value: mode.to_owned(),
                expected: "simple, complex or nontrx".to_owned(),
            })
        }
    };
    notes.push(format!(
        "legacy {}: running {test} on table sbtest1 (0.4 used one table named sbtest)",
        decided_by.join(" ")
    ));
    for shown in ignored {
        notes.push(format!("legacy {shown}: ignored in --oltp-test-mode={mode}, as 0.4 ignored it"));
    }
    Ok(test)
}

/// 0.4's complex mode and 0.5's `oltp.lua`: reads and writes in a
/// transaction, minus the writes or the reads.
fn complex_test(read_only: Option<&(bool, String)>, write_only: Option<&(bool, String)>) -> Result<Test, CliError> {
    match (read_only.is_some_and(|r| r.0), write_only.is_some_and(|w| w.0)) {
        (false, false) => Ok(Test::OltpReadWrite),
        (true, false) => Ok(Test::OltpReadOnly),
        (false, true) => Ok(Test::OltpWriteOnly),
        (true, true) => Err(CliError::Conflict(
            "--oltp-read-only and --oltp-write-only are mutually exclusive (sysbench 0.5 refuses both too): drop one"
                .to_owned(),
        )),
    }
}

fn script05_test(
    script: Script05,
    named: &str,
    command: Command,
    opts: &[RawOpt],
    notes: &mut Vec<String>,
) -> Result<(Test, Command), CliError> {
    let read_only = flag(opts, "oltp_read_only")?;
    let write_only = flag(opts, "oltp_write_only")?;
    let mut decided_by = vec![named.to_owned()];
    let ignored: Vec<String> = MODE_KEYS
        .iter()
        .filter(|k| script != Script05::Oltp || (!k.starts_with("oltp_read") && !k.starts_with("oltp_write")))
        .filter_map(|k| last(opts, k).map(RawOpt::shown))
        .collect();
    let mut command = command;
    let mut extra = "";
    let test = match script {
        Script05::Oltp => {
            decided_by.extend(read_only.iter().chain(&write_only).map(|(_, shown)| shown.clone()));
            complex_test(read_only.as_ref(), write_only.as_ref())?
        }
        Script05::OltpSimple => Test::OltpPointSelect,
        Script05::Select => {
            extra = " (0.5 select.lua read the pad column; oltp_point_select reads c)";
            Test::OltpPointSelect
        }
        Script05::Insert => Test::OltpInsert,
        Script05::Delete => Test::OltpDelete,
        Script05::UpdateIndex => Test::OltpUpdateIndex,
        Script05::UpdateNonIndex => Test::OltpUpdateNonIndex,
        Script05::SelectRandomPoints => {
            extra = " on table sbtest1 (0.5 used one table named sbtest)";
            Test::SelectRandomPoints
        }
        Script05::SelectRandomRanges => {
            extra = " on table sbtest1 (0.5 used one table named sbtest)";
            Test::SelectRandomRanges
        }
        Script05::BulkInsert => {
            extra = " into tables sbtest1..sbtestN (0.5 used sbtest0..sbtestN-1)";
            Test::BulkInsert
        }
        Script05::ParallelPrepare => {
            if command == Command::Run {
                command = Command::Prepare;
                decided_by.push("run".to_owned());
            }
            extra = " (0.5's parallel_prepare.lua created the tables, which every OLTP test shares)";
            Test::OltpReadWrite
        }
    };
    let what = if script == Script05::ParallelPrepare { format!("{test} {command}") } else { test.to_string() };
    notes.push(format!("legacy {}: running {what}{extra}", decided_by.join(" ")));
    for shown in ignored {
        notes.push(format!("legacy {shown}: ignored, as 0.5 {} ignored it", script.file_name()));
    }
    Ok((test, command))
}

/// The 1.0 name of a 0.4/0.5 option that only changed its name.
fn renamed(key: &str) -> Option<&'static str> {
    Some(match key {
        "oltp_range_size" => "range_size",
        "oltp_point_selects" => "point_selects",
        "oltp_simple_ranges" => "simple_ranges",
        "oltp_sum_ranges" => "sum_ranges",
        "oltp_order_ranges" => "order_ranges",
        "oltp_distinct_ranges" => "distinct_ranges",
        "oltp_index_updates" => "index_updates",
        "oltp_non_index_updates" => "non_index_updates",
        "oltp_delete_inserts" => "delete_inserts",
        "oltp_table_size" => "table_size",
        "oltp_tables_count" => "tables",
        "oltp_skip_trx" => "skip_trx",
        "oltp_range_selects" => "range_selects",
        "oltp_auto_inc" => "auto_inc",
        "oltp_secondary" => "secondary",
        "oltp_create_secondary" => "create_secondary",
        "oltp_dist_type" => "rand_type",
        "oltp_dist_iter" => "rand_spec_iter",
        "oltp_dist_pct" => "rand_spec_pct",
        "oltp_dist_res" => "rand_spec_res",
        "seed_rng" => "rand_seed",
        "random_ranges_delta" => "delta",
        "mysql_table_engine" => "mysql_storage_engine",
        "mysql_create_options" | "mysql_table_options" => "create_table_options",
        _ => return None,
    })
}

/// The 1.0 option a 0.4/0.5 option corresponds to, for the message that
/// refuses a 0.4/0.5 option on a 1.0 command line.
pub(crate) fn modern_hint(key: &str) -> Option<String> {
    if let Some(name) = renamed(key) {
        return Some(format!("--{}", dashed(name)));
    }
    Some(
        match key {
            "oltp_read_only" => "the oltp_read_only test",
            "oltp_write_only" => "the oltp_write_only test",
            "oltp_test_mode" | "oltp_nontrx_mode" => "the test name (oltp_point_select, oltp_update_index, ...)",
            "init_rng" | "rand_init" => "--rand-seed=0",
            _ => return None,
        }
        .to_owned(),
    )
}

fn dashed(key: &str) -> String {
    key.replace('_', "-")
}

fn rewrite_options(opts: &mut Vec<RawOpt>, notes: &mut Vec<String>) -> Result<(), CliError> {
    refuse_seed_from_time_with_a_seed(opts)?;
    let mut kept = Vec::with_capacity(opts.len());
    for opt in opts.drain(..) {
        if let Some(opt) = rewrite_option(opt, notes)? {
            kept.push(opt);
        }
    }
    *opts = kept;
    Ok(())
}

/// `--init-rng=on` (0.4) or `--rand-init=on` (0.5) with a nonzero `--seed-rng`.
fn refuse_seed_from_time_with_a_seed(opts: &[RawOpt]) -> Result<(), CliError> {
    let init_rng_on = ["init_rng", "rand_init"]
        .iter()
        .filter_map(|k| last(opts, k))
        .map(value::boolean)
        .collect::<Result<Vec<bool>, CliError>>()?
        .contains(&true);
    let Some(seed) = last(opts, "seed_rng").filter(|_| init_rng_on) else { return Ok(()) };
    if value::int(seed, i64::MIN, i64::MAX, "a seed")? != 0 {
        return Err(CliError::Conflict(
            "--init-rng=on and --seed-rng are exclusive (sysbench 0.4 refuses both too): drop one".to_owned(),
        ));
    }
    Ok(())
}

/// One 0.4/0.5 option: renamed to its 1.0 name and kept, dropped with a
/// note when it does nothing in 1.0, or refused when 1.0 has nothing like
/// it. Options of 1.0 are kept as they are.
fn rewrite_option(mut opt: RawOpt, notes: &mut Vec<String>) -> Result<Option<RawOpt>, CliError> {
    if let Some(modern) = renamed(&opt.key) {
        let shown_value = opt.value.clone().unwrap_or_else(|| "on".to_owned());
        notes.push(format!("legacy {}: --{}={shown_value}", opt.shown(), dashed(modern)));
        opt.key = modern.to_owned();
        return Ok(Some(opt));
    }
    const KEPT_CONNECTION: &str = "sysbench 1.0.20 keeps each connection for the whole run; drop the option";
    let note = match opt.key.as_str() {
        "init_rng" | "rand_init" => return seed_from_time(opt, notes),
        "tx_jitter" => zero_or_refuse(
            &opt,
            "drop it: --rate alone already spaces events at random (Poisson)",
            "no jitter, nothing to do",
        )?,
        "oltp_reconnect_mode" => reconnect_mode(&opt)?,
        "oltp_reconnect" => off_or_refuse(&opt, KEPT_CONNECTION, "no reconnects, as in 1.0")?,
        "oltp_sp_name" => {
            if !value::text(&opt, "NAME")?.is_empty() {
                return Err(no_equivalent(&opt, "stored procedure calls are not a sysbench 1.0 test"));
            }
            None
        }
        "oltp_table_name" => table_name(&opt)?,
        "oltp_connect_delay" => {
            value::int(&opt, 0, i64::MAX, "a number of microseconds >= 0")?;
            Some("ignored; it only delayed connecting, before the measurement")
        }
        "oltp_user_delay_min" | "oltp_user_delay_max" => zero_or_refuse(
            &opt,
            "sysbench 1.0 has no think time between queries; limit the load with --rate instead",
            "no think time, as in 1.0",
        )?,
        "oltp_point_select_mysql_handler" | "oltp_point_select_all_cols" => {
            off_or_refuse(
                &opt,
                "sysbench 1.0 point selects are SELECT c FROM sbtestN WHERE id=?; drop the option",
                "",
            )?;
            None
        }
        "mysql_engine_trx" => engine_trx(&opt)?,
        "myisam_max_rows" => {
            value::int(&opt, 0, i64::MAX, "a number of rows")?;
            Some("ignored; sysbench 1.0 creates tables without MAX_ROWS")
        }
        _ => return Ok(Some(opt)),
    };
    if let Some(note) = note {
        notes.push(format!("legacy {}: {note}", opt.shown()));
    }
    Ok(None)
}

/// `--init-rng`/`--rand-init`: on is 1.0's `--rand-seed=0`; off left 0.4/0.5's
/// generator unseeded, which 1.0 does not do.
fn seed_from_time(mut opt: RawOpt, notes: &mut Vec<String>) -> Result<Option<RawOpt>, CliError> {
    if value::boolean(&opt)? {
        notes.push(format!("legacy {}: --rand-seed=0 (seed from the time)", opt.shown()));
        opt.key = "rand_seed".to_owned();
        opt.value = Some("0".to_owned());
        return Ok(Some(opt));
    }
    notes.push(format!(
        "legacy {}: 0.4/0.5 then left the generator unseeded; seeding from --rand-seed as 1.0 does",
        opt.shown()
    ));
    Ok(None)
}

/// A number of microseconds that 1.0 can only honour when it is 0.
fn zero_or_refuse(opt: &RawOpt, advice: &str, note: &'static str) -> Result<Option<&'static str>, CliError> {
    if value::int(opt, 0, i64::MAX, "a number of microseconds >= 0")? != 0 {
        return Err(no_equivalent(opt, advice));
    }
    Ok(Some(note))
}

/// A switch that 1.0 can only honour when it is off.
fn off_or_refuse(opt: &RawOpt, advice: &str, note: &'static str) -> Result<Option<&'static str>, CliError> {
    if value::boolean(opt)? {
        return Err(no_equivalent(opt, advice));
    }
    Ok(Some(note))
}

/// 0.4's `--oltp-reconnect-mode`: only `session` is what 1.0 does.
fn reconnect_mode(opt: &RawOpt) -> Result<Option<&'static str>, CliError> {
    match value::text(opt, "session")? {
        "session" => Ok(Some("one connection per thread, as in 1.0")),
        "transaction" | "query" | "random" => {
            Err(no_equivalent(opt, "sysbench 1.0.20 keeps each connection for the whole run; drop the option"))
        }
        other => Err(CliError::InvalidValue {
            option: opt.label(),
            value: other.to_owned(),
            expected: "session (transaction, query and random have no 1.0 equivalent)".to_owned(),
        }),
    }
}

/// 0.4's `--oltp-table-name`: only `sbtest`, which is 1.0's `sbtest1`.
fn table_name(opt: &RawOpt) -> Result<Option<&'static str>, CliError> {
    if value::text(opt, "sbtest")? != "sbtest" {
        return Err(no_equivalent(
            opt,
            "the tables are sbtest1..sbtestN as in sysbench 1.0: rename the table (RENAME TABLE t TO sbtest1) and \
             drop the option",
        ));
    }
    Ok(Some("the table is sbtest1, as in 1.0"))
}

/// `--mysql-engine-trx`: 1.0 always sends BEGIN/COMMIT.
fn engine_trx(opt: &RawOpt) -> Result<Option<&'static str>, CliError> {
    match value::text(opt, "auto")? {
        "auto" | "yes" => Ok(Some("transactions are BEGIN/COMMIT, as in 1.0")),
        "no" => Err(no_equivalent(
            opt,
            "0.4 then used LOCK TABLES; sysbench 1.0 always sends BEGIN/COMMIT: use --skip-trx=on for autocommit, \
             or drop the option",
        )),
        other => Err(CliError::InvalidValue {
            option: opt.label(),
            value: other.to_owned(),
            expected: "yes, no or auto".to_owned(),
        }),
    }
}

fn no_equivalent(opt: &RawOpt, advice: &str) -> CliError {
    CliError::NoEquivalent { option: opt.shown(), advice: advice.to_owned() }
}

/// 0.4 and 0.5's oltp.lua locked the tables instead of BEGIN on MyISAM.
fn engine_note(test_ref: TestRef, test: Test, opts: &[RawOpt], notes: &mut Vec<String>) {
    let transactional_test = matches!(test, Test::OltpReadWrite | Test::OltpReadOnly | Test::OltpWriteOnly);
    let oltp_script = matches!(test_ref, TestRef::Oltp04 | TestRef::Script05(Script05::Oltp));
    let engine = last(opts, "mysql_storage_engine").and_then(|o| o.value.as_deref()).unwrap_or("innodb");
    if transactional_test && oltp_script && ["myisam", "memory", "heap"].contains(&engine.to_ascii_lowercase().as_str())
    {
        notes.push(format!(
            "legacy sysbench wrapped each {engine} transaction in LOCK TABLES/UNLOCK TABLES; 1.0 and wirebench send \
             BEGIN/COMMIT"
        ));
    }
}
