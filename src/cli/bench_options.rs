//! Every option of a test's command line read into the run's
//! configuration ([`Bench`]): each layer's options by its reader
//! (`general.rs`, `into.rs`, `test_options.rs`, ...), the login last. A
//! built-in test's line (`invocation.rs`) and a Lua script's
//! (`lua_script_args.rs`) both end here.

use super::cli_error::CliError;
use super::credentials::{complete_login, CredentialSources};
use super::defs;
use super::general::{general, Said};
use super::into::{db_options, engine_options, mysql_options, prepare_method, rand_config};
use super::legacy::Chosen;
use super::legacy_args;
use super::opts::Opts;
use super::raw::RawOpt;
use super::result_args::{result_options, run_identity};
use super::search_args::search_options;
use super::server_stats::server_stats_options;
use super::test_options::test_options;
use super::warnings::StartupWarning;
use super::watch_args::watch_settings;
use super::{value, Bench, Command, Dialect};
use crate::workload::legacy::{LegacyTest, Rand04};

/// `--lua-result-limit`'s default: 256 MiB.
pub(crate) const DEFAULT_RESULT_LIMIT: u64 = 256 << 20;

/// Every option read into the run's configuration; the login completed
/// from `sources` last, so that a password is asked for only once the
/// rest of the command line is known to be good.
pub(crate) fn bench(
    chosen: Chosen,
    opts: Opts,
    sources: &CredentialSources,
    mut notes: Vec<String>,
    mut warnings: Vec<StartupWarning>,
) -> Result<Bench, CliError> {
    let Chosen { test, legacy, mut legacy_options, command } = chosen;
    let dialect = dialect_of(legacy);
    let said = Said { notes: &mut notes, warnings: &mut warnings };
    let mut general = general(&opts, dialect != Dialect::V1_0, command, said)?;
    let rand = rand_config(&opts, &mut notes)?;
    if legacy == Some(LegacyTest::Oltp04) {
        legacy_options.rand04 = Rand04 { seed: legacy_options.rand04.seed, ..legacy_args::dist04(&rand)? };
    }
    let db = db_options(&opts)?;
    let mut mysql = mysql_options(&opts, command, general.thread_init_timeout, &mut notes)?;
    let mut test_options = test_options(&opts, test, command, &mut notes)?;
    // bulk_insert's prepare and cleanup handle one table per thread.
    test_options.threads = general.threads;
    test_options.prepare_method = prepare_method(&opts)?;
    let engine = engine_options(&opts)?;
    let mut results = result_options(&opts, &general, command)?;
    results.run_identity = Some(run_identity(test.name(), &general, &test_options));
    let server_stats = server_stats_options(&opts, &general, &mysql, &results, &mut notes)?;
    let search = search_options(&opts, command, &general)?;
    let watch = watch_settings(&opts, Some(command))?;
    // Read where the test is named (`lua_script_args.rs`).
    opts.get("lua");
    refuse_script_options(&opts)?;
    note_pgsql_options(&opts, &mut notes);
    if mysql.debug {
        general.verbosity = 5;
    }
    let needs_login = command != Command::Help && !mysql.dry_run;
    complete_login(&mut mysql, &opts, sources, needs_login, &mut notes)?;
    if let Some(opt) = opts.unused() {
        // Every option that passed check_scope is read above; this is a
        // safety net against a table entry without a reader.
        return Err(CliError::NotHere { option: opt.label(), reason: "not supported by wirebench yet".to_owned() });
    }
    Ok(Bench {
        test,
        legacy,
        legacy_options,
        command,
        dialect,
        general,
        rand,
        db,
        mysql,
        test_options,
        engine,
        results,
        server_stats,
        watch,
        search,
        script: None,
        replay: None,
        warnings,
        notes,
    })
}

/// The sysbench whose scripts the test follows: 1.0, or 0.4 and 0.5 for
/// the legacy tests.
fn dialect_of(legacy: Option<LegacyTest>) -> Dialect {
    match legacy {
        None => Dialect::V1_0,
        Some(LegacyTest::Oltp04) => Dialect::V0_4,
        Some(_) => Dialect::V0_5,
    }
}

/// The Lua scripts' own options, refused on a built-in test's line (a
/// script's line takes them out before it gets here).
fn refuse_script_options(opts: &Opts) -> Result<(), CliError> {
    if let Some(opt) = opts.get("lua_thread_per_state").filter(|o| value::boolean(o).unwrap_or(true)) {
        return Err(CliError::NotHere {
            option: opt.label(),
            reason:
                "applies to Lua scripts only (a built-in test runs its connections on the event loops; see docs/lua.md)"
                    .to_owned(),
        });
    }
    let not_default = |o: &&RawOpt| !value::size(o).is_ok_and(|n| n == DEFAULT_RESULT_LIMIT);
    if let Some(opt) = opts.get("lua_result_limit").filter(not_default) {
        return Err(CliError::NotHere {
            option: opt.label(),
            reason:
                "applies to Lua scripts only (a built-in test walks its answers without keeping them; see docs/lua.md)"
                    .to_owned(),
        });
    }
    Ok(())
}

/// sysbench's PostgreSQL driver options: accepted, said to be ignored.
fn note_pgsql_options(opts: &Opts, notes: &mut Vec<String>) {
    for def in defs::PGSQL {
        if let Some(opt) = opts.get(&defs::key(def.name)) {
            notes.push(format!("{}: ignored (a PostgreSQL driver option; wirebench speaks MySQL only)", opt.shown()));
        }
    }
}
