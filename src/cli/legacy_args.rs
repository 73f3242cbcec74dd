//! The options of a 0.4/0.5 command line: those only the 0.4/0.5 tests
//! have, read into [`LegacyOptions`]; the others renamed in place to their
//! 1.0 names (so the last one written still wins), dropped when they do
//! nothing, or refused when nothing like them exists. Every one leaves a
//! note.

use super::cli_error::CliError;
use super::raw::RawOpt;
use super::value;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::rand::{Distribution, RandConfig};
use crate::workload::legacy::{Dist04, EngineTrx, LegacyOptions, LegacyTest, NontrxMode, Oltp04Mode, Rand04, Seed04};

/// Reads the options only 0.4's oltp test reads (`--oltp-table-name`,
/// `--mysql-engine-trx`, `--oltp-point-select-all-cols`) and
/// `--myisam-max-rows`, and takes them out of `opts`. A 0.5 script ignores
/// the first three, as 0.5 did.
pub(crate) fn read_legacy_only(
    test: LegacyTest,
    opts: &mut Vec<RawOpt>,
    legacy: &mut LegacyOptions,
    notes: &mut Vec<String>,
) -> Result<(), CliError> {
    const READ: [&str; 4] = ["oltp_table_name", "mysql_engine_trx", "oltp_point_select_all_cols", "myisam_max_rows"];
    for opt in opts.iter().filter(|o| READ.contains(&o.key.as_str())) {
        if opt.key == "myisam_max_rows" {
            legacy.myisam_max_rows = value::int(opt, 0, i64::MAX, "a number of rows >= 0")?.unsigned_abs();
            notes.push(format!(
                "legacy {}: MAX_ROWS={} in CREATE TABLE, as 0.4/0.5 wrote it",
                opt.shown(),
                legacy.myisam_max_rows
            ));
            continue;
        }
        if test != LegacyTest::Oltp04 {
            notes.push(format!("legacy {}: ignored, as 0.5's {test} ignored it", opt.shown()));
            continue;
        }
        let note = match opt.key.as_str() {
            "oltp_table_name" => {
                legacy.table_name = table_name(opt)?;
                format!("the one table is {}", legacy.table_name)
            }
            "mysql_engine_trx" => {
                legacy.engine_trx = engine_trx(opt)?;
                match legacy.engine_trx {
                    EngineTrx::Yes => "complex transactions are BEGIN/COMMIT",
                    EngineTrx::No => "complex transactions are LOCK TABLES/UNLOCK TABLES",
                    EngineTrx::Auto => "BEGIN/COMMIT or LOCK TABLES as the engine's name says",
                }
                .to_owned()
            }
            _ => {
                legacy.point_select_all_cols = value::boolean(opt)?;
                let columns = if legacy.point_select_all_cols { "id, k, c, pad" } else { "c" };
                format!("point selects read {columns}")
            }
        };
        notes.push(format!("legacy {}: {note}", opt.shown()));
    }
    opts.retain(|o| !READ.contains(&o.key.as_str()));
    if test == LegacyTest::Oltp04 {
        legacy.rand04.seed = seed04(opts)?;
    }
    Ok(())
}

/// How 0.4 seeded `lrand48()`: `--init-rng=on` from the time, `--seed-rng=N`
/// with N (0: not at all, as 0.4), 1.0's `--rand-seed=N` with N (0: the
/// time, as 1.0); without them not at all, so that every run draws the same.
fn seed04(opts: &[RawOpt]) -> Result<Seed04, CliError> {
    let last = |key: &str| opts.iter().rev().find(|o| o.key == key);
    let now = || SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()) as i64;
    if last("init_rng").map(value::boolean).transpose()? == Some(true) {
        return Ok(Seed04::Srand48(now()));
    }
    let seed = |opt: &RawOpt| value::int(opt, i64::from(i32::MIN), i64::from(i32::MAX), "a seed");
    Ok(match (last("seed_rng"), last("rand_seed")) {
        (Some(opt), _) => match seed(opt)? {
            0 => Seed04::Unseeded,
            n => Seed04::Srand48(n),
        },
        (None, Some(opt)) => match seed(opt)? {
            0 => Seed04::Srand48(now()),
            n => Seed04::Srand48(n),
        },
        (None, None) => Seed04::Unseeded,
    })
}

/// 0.4's distribution, from the `--rand-*` settings its `--oltp-dist-*`
/// became.
pub(crate) fn dist04(rand: &RandConfig) -> Result<Rand04, CliError> {
    let distribution = match rand.distribution {
        Distribution::Uniform => Dist04::Uniform,
        Distribution::Gaussian => Dist04::Gaussian,
        Distribution::Special => Dist04::Special,
        other => {
            return Err(CliError::InvalidValue {
                option: "--oltp-dist-type".to_owned(),
                value: other.to_string(),
                expected: "uniform, gaussian or special (sysbench 0.4's)".to_owned(),
            })
        }
    };
    Ok(Rand04 { distribution, iter: rand.spec_iter, pct: rand.spec_pct, res: rand.spec_res, ..Rand04::default() })
}

/// 0.4's `--oltp-table-name`: a plain identifier, since it goes into the
/// SQL unquoted as 0.4 wrote it.
fn table_name(opt: &RawOpt) -> Result<String, CliError> {
    let name = value::text(opt, "NAME")?;
    let plain = name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    if name.is_empty() || name.len() > 64 || !plain || name.chars().all(|c| c.is_ascii_digit()) {
        return Err(CliError::InvalidValue {
            option: opt.label(),
            value: name.to_owned(),
            expected: "a table name of letters, digits, _ and $ (at most 64), such as sbtest".to_owned(),
        });
    }
    Ok(name.to_owned())
}

/// `--mysql-engine-trx`: yes, no or auto, in any case as 0.4 compared it.
fn engine_trx(opt: &RawOpt) -> Result<EngineTrx, CliError> {
    let text = value::text(opt, "auto")?;
    let choices = [("yes", EngineTrx::Yes), ("no", EngineTrx::No), ("auto", EngineTrx::Auto)];
    choices.into_iter().find(|(name, _)| name.eq_ignore_ascii_case(text)).map(|(_, trx)| trx).ok_or_else(|| {
        CliError::InvalidValue { option: opt.label(), value: text.to_owned(), expected: "yes, no or auto".to_owned() }
    })
}

/// A note saying how a transaction starts and ends, when it is not
/// BEGIN/COMMIT, and that 0.4's nontrx insert empties the table first.
pub(crate) fn transaction_note(test: LegacyTest, legacy: &LegacyOptions, opts: &[RawOpt], notes: &mut Vec<String>) {
    let engine = opts.iter().rev().find(|o| o.key == "mysql_storage_engine").and_then(|o| o.value.as_deref());
    let engine = engine.unwrap_or("innodb");
    let skip_trx = opts.iter().rev().find(|o| o.key == "skip_trx").is_some_and(|o| value::boolean(o).unwrap_or(false));
    let locks = match (test, legacy.oltp04_mode) {
        (LegacyTest::Oltp05, _) => engine == "myisam",
        (LegacyTest::Oltp04, Oltp04Mode::Complex) => match legacy.engine_trx {
            EngineTrx::Yes => false,
            EngineTrx::No => true,
            EngineTrx::Auto => {
                ["myisam", "heap", "memory", "maria", "aria"].contains(&engine.to_ascii_lowercase().as_str())
            }
        },
        (LegacyTest::Oltp04, Oltp04Mode::Nontrx(NontrxMode::Insert)) => {
            notes.push(format!(
                "legacy: TRUNCATE TABLE {} before the run, as 0.4's nontrx insert mode did",
                legacy.table_name
            ));
            false
        }
        _ => false,
    };
    if locks && !skip_trx {
        notes.push(format!(
            "legacy --mysql-table-engine={engine}: each transaction is LOCK TABLES ... / UNLOCK TABLES instead of \
             BEGIN/COMMIT, as {} did",
            if test == LegacyTest::Oltp04 { "0.4" } else { "0.5's oltp.lua" }
        ));
    }
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

/// Renames, drops or refuses each remaining 0.4/0.5 option.
pub(crate) fn rewrite(opts: &mut Vec<RawOpt>, notes: &mut Vec<String>) -> Result<(), CliError> {
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
    let last = |key: &str| opts.iter().rev().find(|o| o.key == key);
    let init_rng_on = ["init_rng", "rand_init"]
        .iter()
        .filter_map(|k| last(k))
        .map(value::boolean)
        .collect::<Result<Vec<bool>, CliError>>()?
        .contains(&true);
    let Some(seed) = last("seed_rng").filter(|_| init_rng_on) else { return Ok(()) };
    if value::int(seed, i64::MIN, i64::MAX, "a seed")? != 0 {
        return Err(CliError::Conflict(
            "--init-rng=on and --seed-rng are exclusive (sysbench 0.4 refuses both too): drop one (see docs/legacy.md)"
                .to_owned(),
        ));
    }
    Ok(())
}

/// One 0.4/0.5 option: renamed to its 1.0 name and kept, dropped with a
/// note when it changes nothing, or refused when nothing like it exists.
/// Options of 1.0 are kept as they are.
fn rewrite_option(mut opt: RawOpt, notes: &mut Vec<String>) -> Result<Option<RawOpt>, CliError> {
    if let Some(modern) = renamed(&opt.key) {
        let shown_value = opt.value.clone().unwrap_or_else(|| "on".to_owned());
        notes.push(format!("legacy {}: --{}={shown_value}", opt.shown(), dashed(modern)));
        opt.key = modern.to_owned();
        return Ok(Some(opt));
    }
    const KEPT_CONNECTION: &str = "wirebench keeps each connection for the whole run; drop the option";
    let note = match opt.key.as_str() {
        "init_rng" | "rand_init" => return seed_from_time(opt, notes),
        "tx_jitter" => zero_or_refuse(
            &opt,
            "drop it: --rate alone already spaces events at random (Poisson)",
            "no jitter, nothing to do",
        )?,
        "oltp_reconnect_mode" => reconnect_mode(&opt)?,
        "oltp_reconnect" => off_or_refuse(&opt, KEPT_CONNECTION, "no reconnects")?,
        "oltp_sp_name" => {
            if !value::text(&opt, "NAME")?.is_empty() {
                return Err(no_equivalent(&opt, "wirebench does not call stored procedures"));
            }
            None
        }
        "oltp_connect_delay" => {
            value::int(&opt, 0, i64::MAX, "a number of microseconds >= 0")?;
            Some("ignored; it only delayed connecting, before the measurement")
        }
        "oltp_user_delay_min" | "oltp_user_delay_max" => zero_or_refuse(
            &opt,
            "wirebench has no think time between queries; limit the load with --rate instead",
            "no think time",
        )?,
        "oltp_point_select_mysql_handler" => {
            off_or_refuse(&opt, "wirebench does not read through HANDLER; drop the option for 0.4's SELECT", "")?;
            None
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

/// A number of microseconds that can only be honoured when it is 0.
fn zero_or_refuse(opt: &RawOpt, advice: &str, note: &'static str) -> Result<Option<&'static str>, CliError> {
    if value::int(opt, 0, i64::MAX, "a number of microseconds >= 0")? != 0 {
        return Err(no_equivalent(opt, advice));
    }
    Ok(Some(note))
}

/// A switch that can only be honoured when it is off.
fn off_or_refuse(opt: &RawOpt, advice: &str, note: &'static str) -> Result<Option<&'static str>, CliError> {
    if value::boolean(opt)? {
        return Err(no_equivalent(opt, advice));
    }
    Ok(Some(note))
}

/// 0.4's `--oltp-reconnect-mode`: only `session` is what wirebench does.
fn reconnect_mode(opt: &RawOpt) -> Result<Option<&'static str>, CliError> {
    match value::text(opt, "session")? {
        "session" => Ok(Some("one connection per thread for the whole run")),
        "transaction" | "query" | "random" => {
            Err(no_equivalent(opt, "wirebench keeps each connection for the whole run; drop the option"))
        }
        other => Err(CliError::InvalidValue {
            option: opt.label(),
            value: other.to_owned(),
            expected: "session (transaction, query and random are not supported)".to_owned(),
        }),
    }
}

fn no_equivalent(opt: &RawOpt, advice: &str) -> CliError {
    CliError::NoEquivalent { option: opt.shown(), advice: advice.to_owned() }
}
