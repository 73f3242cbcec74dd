//! From split arguments to an [`Invocation`]: the test and command, which
//! options this command line may take, and every option's value, read into
//! each layer's configuration (`general.rs`, `into.rs`, `test_options.rs`).

use std::path::Path;

use super::bench_options;
use super::cli_error::{CliError, Refusal};
use super::credentials::CredentialSources;
use super::defs::{self, OptDef};
use super::legacy::{self, Chosen};
use super::lua_script_args;
use super::opts::Opts;
use super::raw::{self, CommandLine, Positional, RawOpt};
use super::test_name::{self, TestRef};
use super::warnings::StartupWarning;
use super::{
    capture_args, compare_args, fuzz, merge_args, null_server, record_args, replay_args, value, watch_args, Command,
    Invocation,
};
use crate::workload::Test;

pub(crate) fn read_invocation(line: CommandLine, sources: &CredentialSources) -> Result<Invocation, Refusal> {
    let CommandLine { opts, positionals } = line;
    let refused_early = refusal_at(stated_verbosity(&opts));
    refuse_separated_values(&positionals).map_err(&refused_early)?;
    let words: Vec<&str> = positionals.iter().map(|p| p.word.as_str()).collect();
    match words.split_first() {
        Some((&"null-server", rest)) => return null_server::parse_null_server(&opts, rest).map_err(refused_early),
        Some((&"compare", files)) => return compare_args::parse_compare(&opts, files).map_err(refused_early),
        Some((&"merge", files)) => return merge_args::parse_merge(&opts, files).map_err(refused_early),
        Some((&"report", files)) => return watch_args::parse_report(&opts, files).map_err(refused_early),
        Some((&"fuzz", rest)) => return fuzz::parse_fuzz(&opts, rest).map_err(refused_early),
        Some((&"fuzz-replay", rest)) => return fuzz::parse_replay(&opts, rest).map_err(refused_early),
        Some((&"capture", rest)) => return capture_args::parse_capture(&opts, rest).map_err(refused_early),
        Some((&"replay", rest)) => {
            let mut notes = Vec::new();
            let (list, test_opt) = with_config_files(opts, &mut notes).map_err(&refused_early)?;
            let refused = refusal_at(stated_verbosity(&list));
            if let Some(opt) = test_opt {
                let reason = "a replay sends the capture's statements, not a test's".to_owned();
                return Err(refused(CliError::NotHere { option: opt.label(), reason }));
            }
            return replay_args::parse_capture_replay(list, rest, sources, notes).map_err(refused);
        }
        Some((&"record", rest)) => return record_args::parse_record(&opts, rest).map_err(refused_early),
        _ => {}
    }
    // sysbench answers --help and --version before looking at anything else.
    if is_set(&opts, "help").map_err(&refused_early)? {
        return Ok(Invocation::Help { null_server: false });
    }
    if is_set(&opts, "version").map_err(&refused_early)? {
        return Ok(Invocation::Version);
    }
    let mut notes = Vec::new();
    let (list, test_opt) = with_config_files(opts, &mut notes).map_err(refused_early)?;
    let refused = refusal_at(stated_verbosity(&list));
    bench_invocation(list, test_opt.as_ref(), &words, sources, notes).map_err(refused)
}

/// A test command's invocation, from the options (config files included)
/// and the words.
fn bench_invocation(
    mut list: Vec<RawOpt>,
    test_opt: Option<&RawOpt>,
    words: &[&str],
    sources: &CredentialSources,
    mut notes: Vec<String>,
) -> Result<Invocation, CliError> {
    if let Some(script) = lua_script_args::named(test_opt, words, &list)? {
        return lua_script_args::script_invocation(list, script, sources, notes);
    }
    let named = NamedTest::from_words(test_opt, words)?;
    let mut warnings = Vec::new();
    if let (Some(opt), TestRef::Modern(_)) = (test_opt, named.test_ref) {
        warnings.push(StartupWarning::DeprecatedTestOption { shown: opt.shown() });
    }
    for opt in &list {
        check_scope(opt, named.test_ref)?;
    }
    let chosen = legacy::apply(named.test_ref, &named.shown, named.command, &mut list, &mut notes)?;
    refuse_unsupported_command(&chosen)?;
    let bench = bench_options::bench(chosen, Opts::new(list), sources, notes, warnings)?;
    Ok(Invocation::Bench(Box::new(bench)))
}

/// Turns an error into a [`Refusal`] at `verbosity`.
fn refusal_at(verbosity: u8) -> impl Fn(CliError) -> Refusal {
    move |error| Refusal { error, verbosity }
}

/// `--verbosity` as the options give it, before anything is checked: the
/// last valid value, 5 with `--debug` or `--mysql-debug`, 3 otherwise. An
/// invalid value is refused later; until then it is 3.
fn stated_verbosity(opts: &[RawOpt]) -> u8 {
    let debug = ["debug", "mysql_debug"].iter().any(|key| is_set(opts, key).unwrap_or(false));
    if debug {
        return 5;
    }
    let stated = opts.iter().rev().find(|o| o.key == "verbosity").and_then(|o| o.value.as_deref());
    stated.and_then(|v| v.trim().parse::<u8>().ok()).filter(|&v| v <= 5).unwrap_or(3)
}

/// `--threads 4`: sysbench options take their value after `=`. The word
/// after a password option is not repeated: it is likely the password;
/// unless it is the test or the command, since a bare `--mysql-password`
/// asks for the password.
fn refuse_separated_values(positionals: &[Positional]) -> Result<(), CliError> {
    for positional in positionals {
        let Some(bare) = &positional.after_bare else { continue };
        let word = positional.word.as_str();
        if defs::is_secret(&bare.key) {
            if Command::from_name(word).is_some() || test_name::resolve(word).is_ok() || word == "null-server" {
                continue;
            }
            return Err(CliError::NotHere {
                option: bare.label(),
                reason: format!(
                    "write {}=PASSWORD, the password after '=' (not as the next word), or a bare {} to be asked for \
                     it on the terminal",
                    bare.label(),
                    bare.label()
                ),
            });
        }
        if defs::find(&bare.key).is_some_and(|d| d.kind != defs::Kind::Bool) {
            return Err(CliError::NotHere {
                option: bare.label(),
                reason: format!(
                    "write {}={} (sysbench options take their value after '=', not as the next word)",
                    bare.label(),
                    positional.word
                ),
            });
        }
    }
    Ok(())
}

/// The options of the config files, then the command line's (so that it
/// wins), without `--config-file` and `--test`; and `--test`, which only
/// the command line may give.
fn with_config_files(opts: Vec<RawOpt>, notes: &mut Vec<String>) -> Result<(Vec<RawOpt>, Option<RawOpt>), CliError> {
    let mut list = Vec::new();
    for opt in opts.iter().filter(|o| o.key == "config_file") {
        let path = value::text(opt, "FILENAME")?;
        list.extend(raw::read_config_file(Path::new(path), notes)?);
    }
    if let Some(opt) = list.iter().find(|o| o.key == "test") {
        return Err(CliError::NotHere { option: opt.label(), reason: "name the test on the command line".to_owned() });
    }
    let test_opt = opts.iter().rev().find(|o| o.key == "test").cloned();
    list.extend(opts.into_iter().filter(|o| o.key != "config_file" && o.key != "test"));
    Ok((list, test_opt))
}

/// The test and command as the command line names them.
struct NamedTest {
    test_ref: TestRef,
    /// How the test was named (`--test=oltp`), for notes.
    shown: String,
    command: Command,
}

impl NamedTest {
    /// With `--test` (0.4/0.5 style, deprecated in 1.0) the only word is the
    /// command; otherwise the words are TESTNAME COMMAND.
    fn from_words(test_opt: Option<&RawOpt>, words: &[&str]) -> Result<NamedTest, CliError> {
        let (test_word, shown, rest) = match test_opt {
            Some(opt) => (value::text(opt, "NAME")?, opt.shown(), words),
            // No words is a script on standard input (`lua_script_args::named`).
            None => match words.split_first() {
                Some((&first, rest)) => (first, first.to_owned(), rest),
                None => ("-", "-".to_owned(), words),
            },
        };
        if test_word.starts_with('-') {
            return Err(CliError::UnexpectedArgument(test_word.to_owned()));
        }
        if let Some(extra) = rest.get(1) {
            return Err(CliError::UnexpectedArgument((*extra).to_owned()));
        }
        let test_ref = test_name::resolve(test_word).map_err(|error| match error {
            // `wirebench run < my.lua`: sysbench looks for a test named run.
            CliError::UnknownTest { .. } if test_opt.is_none() && Command::from_name(test_word).is_some() => {
                CliError::CommandWithoutTest { command: test_word.to_owned() }
            }
            other => other,
        })?;
        let command = match rest.first() {
            None => return Err(CliError::MissingCommand { test: test_word.to_owned() }),
            Some(&word) => Command::from_name(word)
                .ok_or_else(|| CliError::UnknownCommand { command: word.to_owned(), test: test_word.to_owned() })?,
        };
        Ok(NamedTest { test_ref, shown, command })
    }
}

/// bulk_insert has neither `help` nor `prewarm`, and the 0.4/0.5 tests no
/// `prewarm`, as in sysbench.
fn refuse_unsupported_command(chosen: &Chosen) -> Result<(), CliError> {
    if let Some(legacy) = chosen.legacy.filter(|_| chosen.command == Command::Prewarm) {
        return Err(CliError::UnsupportedCommand {
            test: legacy.name().to_owned(),
            command: "prewarm".to_owned(),
            advice: "sysbench 0.4 and 0.5 had no prewarm (1.0.20 refuses it for a 0.5 script too); warm the tables \
                     with a short run",
        });
    }
    if chosen.test != Test::BulkInsert || !matches!(chosen.command, Command::Help | Command::Prewarm) {
        return Ok(());
    }
    Err(CliError::UnsupportedCommand {
        test: chosen.test.name().to_owned(),
        command: chosen.command.name().to_owned(),
        advice: if chosen.command == Command::Help {
            "it has no options of its own; it inserts into tables sbtest1..sbtestN, N = --threads"
        } else {
            "use prepare, run or cleanup"
        },
    })
}

fn is_set(opts: &[RawOpt], key: &str) -> Result<bool, CliError> {
    opts.iter().rev().find(|o| o.key == key).map_or(Ok(false), value::boolean)
}

/// Refuses an option this command line cannot take, as sysbench 1.0.20
/// refuses options its script does not define.
fn check_scope(opt: &RawOpt, test_ref: TestRef) -> Result<(), CliError> {
    let key = opt.key.as_str();
    if defs::find(key).is_none() {
        let names = defs::ALL_GROUPS.iter().flat_map(|g| g.iter()).map(|d: &OptDef| d.name);
        return Err(CliError::UnknownOption {
            option: opt.label(),
            suggestion: defs::closest(&opt.name, names).map(|name| format!("--{name}")),
            written: opt.shown(),
        });
    }
    let TestRef::Modern(test) = test_ref else { return Ok(()) };
    if defs::is_in(defs::LEGACY, key) {
        let hint = match (legacy::modern_hint(key), &opt.value) {
            (Some(hint), Some(value)) if hint.starts_with("--") => format!("use {hint}={value}"),
            (Some(hint), _) => format!("use {hint}"),
            (None, _) => "drop it".to_owned(),
        };
        return Err(CliError::NotHere {
            option: opt.label(),
            reason: format!(
                "a sysbench 0.4/0.5 option, which sysbench 1.0.20 refuses with {test}: {hint}, or name the test \
                 the 0.4/0.5 way (--test=oltp) for a whole 0.4/0.5 command line (see docs/legacy.md)"
            ),
        });
    }
    let owner = if defs::is_in(defs::RANDOM_POINTS, key) {
        Some(Test::SelectRandomPoints)
    } else if defs::is_in(defs::RANDOM_RANGES, key) {
        Some(Test::SelectRandomRanges)
    } else {
        None
    };
    match owner {
        Some(owner) if owner != test && test != Test::BulkInsert => Err(CliError::NotHere {
            option: opt.label(),
            reason: format!("an option of {owner}, not of {test} (sysbench refuses it too)"),
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::raw::split;
    use crate::cli::Bench;
    use crate::results::ResultOptions;

    /// Every option in the tables has a reader: none falls through to the
    /// "not supported" safety net.
    #[test]
    fn every_defined_option_is_read() {
        for group in defs::ALL_GROUPS {
            for def in *group {
                let value = match def.kind {
                    defs::Kind::Bool => None,
                    defs::Kind::File => continue,
                    defs::Kind::Int | defs::Kind::Double | defs::Kind::Size => Some("1"),
                    defs::Kind::String | defs::Kind::List => Some("x"),
                };
                let option = match value {
                    Some(value) => format!("--{}={value}", def.name),
                    None => format!("--{}", def.name),
                };
                let test = if defs::is_in(defs::LEGACY, &defs::key(def.name)) {
                    "--test=oltp"
                } else if defs::is_in(defs::RANDOM_RANGES, &defs::key(def.name)) {
                    "select_random_ranges"
                } else {
                    "select_random_points"
                };
                let args = [test, "run", option.as_str()].map(str::to_owned).to_vec();
                if let Err(refusal) = read_invocation(split(args), &CredentialSources::none()) {
                    let err = refusal.error;
                    assert!(!err.to_string().contains("not supported by wirebench yet"), "{option}: {err}");
                }
            }
        }
    }

    /// The defaults `--help` shows are the ones a run uses: giving an option
    /// its documented default changes nothing.
    #[test]
    fn documented_defaults_are_the_defaults() {
        let groups: [(&[OptDef], &str); 16] = [
            (defs::GENERAL, "oltp_read_write"),
            (defs::RAND, "oltp_read_write"),
            (defs::LOG, "oltp_read_write"),
            (defs::DB, "oltp_read_write"),
            (defs::MYSQL, "oltp_read_write"),
            (defs::MYSQL_WIREBENCH, "oltp_read_write"),
            (defs::PGSQL, "oltp_read_write"),
            (defs::MASTER, "oltp_read_write"),
            (defs::ENGINE, "oltp_read_write"),
            (defs::RESULTS, "oltp_read_write"),
            (defs::SEARCH, "oltp_read_write"),
            (defs::OPTION_FILES, "oltp_read_write"),
            (defs::OLTP, "oltp_read_write"),
            (defs::RANDOM_POINTS, "select_random_points"),
            (defs::RANDOM_RANGES, "select_random_ranges"),
            (defs::LEGACY, "--test=oltp"),
        ];
        let parse = |words: &[&str]| match read_invocation(
            split(words.iter().map(|w| (*w).to_owned()).collect()),
            &CredentialSources::none(),
        ) {
            Ok(Invocation::Bench(bench)) => {
                // The options given are recorded as given, defaults or not.
                let results = ResultOptions { options_given: Default::default(), ..bench.results.clone() };
                Bench { notes: Vec::new(), warnings: Vec::new(), results, ..*bench }
            }
            other => panic!("{words:?}: {other:?}"),
        };
        let mut checked = 0;
        for (group, test) in groups {
            for def in group {
                let Some(default) = def.default else { continue };
                // A 0.5 option makes --test=oltp 0.5's oltp.lua.
                let test = if legacy::only_in_05(&defs::key(def.name)) { "--test=tests/db/oltp.lua" } else { test };
                let option = format!("--{}={default}", def.name);
                assert_eq!(parse(&[test, "run", &option]), parse(&[test, "run"]), "{option} is not the default");
                checked += 1;
            }
        }
        assert!(checked > 100, "only {checked} defaults checked");
    }
}
