//! A command line naming a Lua script of the user's (`wirebench
//! ./my_test.lua --tables=4 run`), or a stock script with `--lua`: the
//! script's options and command go to the Lua engine as they are, since
//! only the script knows them; sysbench's own options are read as for any
//! test.

use std::path::PathBuf;

use super::bench_options::{self, DEFAULT_RESULT_LIMIT};
use super::cli_error::CliError;
use super::credentials::CredentialSources;
use super::defs;
use super::legacy::Chosen;
use super::opts::Opts;
use super::raw::RawOpt;
use super::test_name::{self, TestRef};
use super::warnings::StartupWarning;
use super::{value, Command, Invocation, Test};
use crate::lua::{ScriptCall, ScriptOrigin, STDIN_SCRIPT_NAME};
use crate::workload::legacy::LegacyOptions;

/// The groups of sysbench's and wirebench's own options; any other option
/// on a script's line is the script's. `RESULTS` (`--format`, `--label`,
/// `--chart`) too: a sharded script's run is merged from its JSON results.
const OWN_GROUPS: [&[defs::OptDef]; 11] = [
    defs::GENERAL,
    defs::RAND,
    defs::LOG,
    defs::DB,
    defs::MYSQL,
    defs::MYSQL_WIREBENCH,
    defs::PGSQL,
    defs::MASTER,
    defs::ENGINE,
    defs::OPTION_FILES,
    defs::RESULTS,
];

/// A Lua script the command line names, and how.
pub(crate) struct NamedScript {
    script: String,
    origin: ScriptOrigin,
    command: Option<String>,
    /// `--test=SCRIPT` as written: sysbench 1.0.20 runs a script named so
    /// (the 0.5 way) and warns that `--test` is deprecated.
    test_opt: Option<String>,
}

/// The script and command word when the line names a Lua script to run
/// with the Lua engine: a `.lua` path that is no sysbench script wirebench
/// has built in, or any script path with `--lua`; as the first word or as
/// `--test=PATH`. No test name, or `-` for it, is a script on standard
/// input, as in sysbench 1.0.20 (`sysbench [options] [- [command]]`).
pub(crate) fn named(
    test_opt: Option<&RawOpt>,
    words: &[&str],
    list: &[RawOpt],
) -> Result<Option<NamedScript>, CliError> {
    let (first, rest) = match test_opt {
        Some(opt) => (value::text(opt, "NAME")?, words),
        None => match words.split_first() {
            Some((&first, rest)) => (first, rest),
            None => ("-", words),
        },
    };
    if first == "-" {
        return from_stdin(test_opt, rest).map(Some);
    }
    let forced = match list.iter().rev().find(|o| o.key == "lua") {
        Some(opt) => value::boolean(opt)?,
        None => false,
    };
    let is_path = first.contains('/') || first.ends_with(".lua");
    let lua = match test_name::resolve(first) {
        Ok(TestRef::Lua) => true,
        Ok(TestRef::Modern(_)) => forced && is_path,
        _ => false,
    };
    if !lua {
        return Ok(None);
    }
    if let Some(extra) = rest.get(1) {
        return Err(CliError::UnexpectedArgument((*extra).to_owned()));
    }
    let Some(&command) = rest.first() else { return Err(CliError::MissingCommand { test: first.to_owned() }) };
    let test_opt = test_opt.map(RawOpt::shown);
    let (script, command) = (first.to_owned(), Some(command.to_owned()));
    Ok(Some(NamedScript { script, origin: ScriptOrigin::File, command, test_opt }))
}

/// A script on standard input: with a command after `-`, the command runs
/// as a file's would (sysbench 1.0.20 only loads the script and exits,
/// whatever the command); without one only the script's top level runs,
/// as in sysbench.
fn from_stdin(test_opt: Option<&RawOpt>, rest: &[&str]) -> Result<NamedScript, CliError> {
    if let Some(extra) = rest.get(1) {
        return Err(CliError::UnexpectedArgument((*extra).to_owned()));
    }
    Ok(NamedScript {
        script: STDIN_SCRIPT_NAME.to_owned(),
        origin: ScriptOrigin::Stdin,
        command: rest.first().map(|&c| c.to_owned()),
        test_opt: test_opt.map(RawOpt::shown),
    })
}

/// The invocation of `script`'s `command` with the options in `list`.
pub(crate) fn script_invocation(
    list: Vec<RawOpt>,
    named: NamedScript,
    sources: &CredentialSources,
    notes: Vec<String>,
) -> Result<Invocation, CliError> {
    let NamedScript { script, origin, command, test_opt } = named;
    let (own, theirs): (Vec<RawOpt>, Vec<RawOpt>) =
        list.into_iter().partition(|o| OWN_GROUPS.iter().any(|group| defs::is_in(group, &o.key)));
    let (per_state, own): (Vec<RawOpt>, Vec<RawOpt>) = own.into_iter().partition(|o| o.key == "lua_thread_per_state");
    let thread_per_state = match per_state.last() {
        Some(opt) => value::boolean(opt)?,
        None => false,
    };
    let (limit, own): (Vec<RawOpt>, Vec<RawOpt>) = own.into_iter().partition(|o| o.key == "lua_result_limit");
    let result_limit = match limit.last() {
        Some(opt) => value::size(opt)?.max(1),
        None => DEFAULT_RESULT_LIMIT,
    };
    if command.as_deref() == Some("search") {
        return Err(CliError::UnsupportedCommand {
            test: script.to_owned(),
            command: "search".to_owned(),
            advice: "search runs the built-in tests only (a script's events are run by its own event function, \
                     whose steps the search cannot restart yet); find the rate by hand with run --rate=N, one \
                     command per rate (docs/search.md)",
        });
    }
    // For reading sysbench's options: what kind of command this is.
    let kind = match command.as_deref() {
        Some("run") => Command::Run,
        Some("help") => Command::Help,
        Some("cleanup") => Command::Cleanup,
        _ => Command::Prepare,
    };
    let chosen =
        Chosen { test: Test::OltpReadWrite, legacy: None, legacy_options: LegacyOptions::default(), command: kind };
    let warnings: Vec<StartupWarning> =
        test_opt.into_iter().map(|shown| StartupWarning::DeprecatedTestOption { shown }).collect();
    let mut bench = bench_options::bench(chosen, Opts::new(own), sources, notes, warnings)?;
    let options = theirs.into_iter().map(|o| (o.key, o.value)).collect();
    bench.script =
        Some(ScriptCall { path: PathBuf::from(script), origin, command, options, thread_per_state, result_limit });
    Ok(Invocation::Bench(Box::new(bench)))
}
