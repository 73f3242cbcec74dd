//! `wirebench replay FILE [run|search] [options]`: the capture to replay,
//! replay's own options (`--speed`, `--user-map`, `--read-only`,
//! `--multiply`), and a run's options for the rest: the server and login,
//! the engine, `--time`, `--report-interval`, `--format`, `--chart`,
//! `--server-stats`, `--shard`, and the search's `--slo`.

use std::path::PathBuf;

use super::bench_options;
use super::cli_error::CliError;
use super::credentials::CredentialSources;
use super::defs::{self, OptDef};
use super::legacy::Chosen;
use super::opts::Opts;
use super::raw::RawOpt;
use super::{value, Command, Invocation, Test};
use crate::replay::{CaptureReplayOptions, Speed, UserMapping};
use crate::results::shard_info::fnv1a_hex;
use crate::workload::legacy::LegacyOptions;

const USAGE: &str =
    "wirebench replay FILE [run|search] [--speed=N|max] [--mysql-host=...] (see wirebench replay --help)";

/// The groups of a run's options a replay takes besides its own.
const RUN_GROUPS: [&[OptDef]; 9] = [
    defs::GENERAL,
    defs::DB,
    defs::MYSQL,
    defs::MYSQL_WIREBENCH,
    defs::ENGINE,
    defs::RESULTS,
    defs::SEARCH,
    defs::OPTION_FILES,
    defs::WATCH,
];

/// A run's options that mean nothing to a replay, and why.
const NOT_FOR_REPLAY: &[(&str, &str)] = &[
    ("threads", "a replay's connections are the capture's: --multiply=N runs N copies of each"),
    ("rate", "a replay's pace is the capture's: --speed=N runs it N times as fast"),
    ("rate_stages", "a replay's pace is the capture's: --speed=N runs it N times as fast"),
    ("rate_arrival", "a replay's commands come at their captured times"),
    ("warmup_time", "every replayed command is compared with the capture: replay a capture cut to what you want"),
    ("report_checkpoints", "a replay reports its totals once, with its per-statement table"),
    ("per_statement", "a replay always ends with its table per statement"),
    ("sweep_pause", "a replay has no --threads list"),
    ("events", "a replay runs to the capture's end, or --time's"),
    ("db_ps_mode", "a replay sends the capture's commands: prepared statements as prepared statements"),
    ("pipeline", "a replay sends one command at a time per connection, as the capture's clients did"),
    ("idle_connections", "a replay's connections are the capture's: --multiply=N runs N copies of each"),
    ("idle_ping_interval", "a replay's connections are the capture's: --multiply=N runs N copies of each"),
    ("idle_connect_rate", "a replay's connections are the capture's: --multiply=N runs N copies of each"),
    ("prepare_method", "a replay makes no tables: it runs against the data the server holds"),
    ("lua", "a replay sends the capture's commands, not a script's"),
    ("lua_thread_per_state", "a replay sends the capture's commands, not a script's"),
    ("lua_result_limit", "a replay sends the capture's commands, not a script's"),
    ("mysql_dry_run", "a replay compares each answer with the captured one, so it needs the server"),
    ("poll", "a replay's loops sleep in their backend's wait until an answer or a command's time: there is no other way to choose"),
    ("hdr_log", "a replay's latencies are in its table per statement (and in --format=json)"),
];

pub(crate) fn parse_capture_replay(
    opts: Vec<RawOpt>,
    words: &[&str],
    sources: &CredentialSources,
    notes: Vec<String>,
) -> Result<Invocation, CliError> {
    let help = opts.iter().rev().find(|o| o.key == "help").map_or(Ok(false), value::boolean)?;
    if help {
        return Ok(Invocation::ReplayHelp);
    }
    let (file, command) = file_and_command(words)?;
    let (own, run): (Vec<RawOpt>, Vec<RawOpt>) = opts.into_iter().partition(|o| defs::is_in(defs::REPLAY, &o.key));
    check_run_options(&run)?;
    let time_given = run.iter().any(|o| o.key == "time");
    let own = Opts::new(own);
    let given = own.given();
    let options = replay_options(&own, file)?;
    let chosen = Chosen { test: Test::OltpReadWrite, legacy: None, legacy_options: LegacyOptions::default(), command };
    let mut bench = bench_options::bench(chosen, Opts::new(run), sources, notes, Vec::new())?;
    if !time_given {
        // A replay runs to the capture's end.
        bench.general.time = None;
    }
    // What its shards share: the capture (by its file name, which is the
    // same on every shard's host, not its path), not a test's options.
    if let Some(identity) = bench.results.run_identity.as_mut() {
        (identity.test, identity.time) = ("replay".to_owned(), bench.general.time);
        let name = options.file.file_name().unwrap_or(options.file.as_os_str());
        identity.script = Some(fnv1a_hex(name.as_encoded_bytes()));
    }
    if command == Command::Search && options.speed != Speed::Times(1.0) {
        return Err(CliError::Conflict(
            "replay search finds the speed itself: leave --speed out (its steps run at the speeds it tries)".into(),
        ));
    }
    bench.results.options_given.extend(given);
    bench.replay = Some(options);
    Ok(Invocation::Bench(Box::new(bench)))
}

/// `FILE`, then `run` (the default) or `search`.
fn file_and_command(words: &[&str]) -> Result<(PathBuf, Command), CliError> {
    let (file, rest) = match words.split_first() {
        Some((file, rest)) => (*file, rest),
        None => return Err(CliError::Conflict(format!("replay needs the capture to replay: {USAGE}"))),
    };
    if file.is_empty() {
        return Err(CliError::Conflict(format!("replay needs the capture to replay: {USAGE}")));
    }
    let command = match rest {
        [] | ["run"] => Command::Run,
        ["search"] => Command::Search,
        [other] => {
            return Err(CliError::Conflict(format!("replay has no command {other:?}: run (the default) or search")))
        }
        [_, extra, ..] => return Err(CliError::UnexpectedArgument((*extra).to_owned())),
    };
    Ok((PathBuf::from(file), command))
}

/// Every option is a run's or replay's, and means something to a replay.
fn check_run_options(run: &[RawOpt]) -> Result<(), CliError> {
    for opt in run {
        if let Some((_, reason)) = NOT_FOR_REPLAY.iter().find(|(key, _)| *key == opt.key) {
            return Err(CliError::NotHere { option: opt.label(), reason: (*reason).to_owned() });
        }
        if RUN_GROUPS.iter().any(|group| defs::is_in(group, &opt.key)) {
            continue;
        }
        if defs::find(&opt.key).is_some() {
            return Err(CliError::NotHere {
                option: opt.label(),
                reason: "not an option of replay (a replay sends the capture's statements, not a test's)".to_owned(),
            });
        }
        let names = RUN_GROUPS.iter().chain([&defs::REPLAY]).flat_map(|g| g.iter()).map(|d| d.name);
        return Err(CliError::UnknownOption {
            option: opt.label(),
            suggestion: defs::closest(&opt.name, names).map(|name| format!("--{name}")),
            written: opt.shown(),
        });
    }
    Ok(())
}

fn replay_options(opts: &Opts, file: PathBuf) -> Result<CaptureReplayOptions, CliError> {
    let speed = match opts.get("speed") {
        Some(opt) => speed(opt)?,
        None => Speed::Times(1.0),
    };
    let users = match opts.get("user_map") {
        Some(opt) => user_map(opt)?,
        None => Vec::new(),
    };
    let read_only = opts.flag("read_only", false)?;
    let multiply = opts.whole("multiply", 1, 100_000, "a whole number of copies from 1 to 100000")?.unwrap_or(1);
    opts.get("help");
    Ok(CaptureReplayOptions { file, speed, users, read_only, multiply })
}

/// `--speed`: `max`, or a factor above 0.
fn speed(opt: &RawOpt) -> Result<Speed, CliError> {
    let expected = "max, or how many times as fast as captured (1, 2, 0.5, ...)";
    if value::text(opt, "N")?.trim().eq_ignore_ascii_case("max") {
        return Ok(Speed::Max);
    }
    let factor = value::double(opt, expected)?;
    if factor <= 0.0 || factor > 1e6 {
        return Err(CliError::InvalidValue {
            option: opt.label(),
            value: opt.value.clone().unwrap_or_default(),
            expected: expected.to_owned(),
        });
    }
    Ok(Speed::Times(factor))
}

/// `--user-map=CAPTURED:USER:PASSWORD,...`; the password may hold `:`.
fn user_map(opt: &RawOpt) -> Result<Vec<UserMapping>, CliError> {
    let mut users: Vec<UserMapping> = Vec::new();
    for (n, item) in value::list(opt)?.into_iter().enumerate() {
        let mut parts = item.splitn(3, ':');
        let (Some(captured), Some(user)) = (parts.next(), parts.next()) else {
            return Err(CliError::InvalidValue {
                option: opt.label(),
                value: format!("(item {}, hidden)", n + 1),
                expected: "CAPTURED:USER:PASSWORD items, separated by commas (PASSWORD may be empty)".to_owned(),
            });
        };
        if captured.is_empty() || user.is_empty() {
            return Err(CliError::InvalidValue {
                option: opt.label(),
                value: format!("(item {}, hidden)", n + 1),
                expected: "a captured user and a user to log in as, both named".to_owned(),
            });
        }
        if users.iter().any(|u| u.captured == captured) {
            return Err(CliError::Conflict(format!("--user-map maps the captured user {captured:?} twice")));
        }
        let password = parts.next().unwrap_or_default().to_owned();
        users.push(UserMapping { captured: captured.to_owned(), user: user.to_owned(), password });
    }
    Ok(users)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::raw::split;
    use crate::cli::{parse, Bench};

    fn replay(args: &[&str]) -> Result<Box<Bench>, CliError> {
        let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        match super::super::invocation::read_invocation(split(args), &CredentialSources::none()) {
            Ok(Invocation::Bench(bench)) => Ok(bench),
            Ok(other) => panic!("{other:?}"),
            Err(refusal) => Err(refusal.error),
        }
    }

    #[test]
    fn a_replay_takes_the_capture_its_options_and_a_runs() {
        let bench = replay(&[
            "replay",
            "app.wbc",
            "--speed=2.5",
            "--user-map=app:appuser:s3:cret,report:ro:",
            "--read-only",
            "--multiply=3",
            "--mysql-host=db1",
            "--report-interval=1",
            "--format=json",
        ])
        .unwrap();
        let options = bench.replay.as_ref().unwrap();
        assert_eq!(options.file, PathBuf::from("app.wbc"));
        assert_eq!(options.speed, Speed::Times(2.5));
        assert_eq!((options.read_only, options.multiply), (true, 3));
        assert_eq!(options.users[0].password, "s3:cret");
        assert_eq!((options.users[1].user.as_str(), options.users[1].password.as_str()), ("ro", ""));
        assert_eq!(bench.command, Command::Run);
        assert_eq!(bench.general.time, None, "to the capture's end");
        assert_eq!(bench.general.report_interval, Some(1));
        assert_eq!(bench.results.options_given.get("user-map").map(String::as_str), Some("(hidden)"));
        let bench = replay(&["replay", "app.wbc", "run", "--speed=max", "--time=5"]).unwrap();
        assert_eq!((bench.replay.unwrap().speed, bench.general.time), (Speed::Max, Some(5)));
        let bench = replay(&["replay", "app.wbc", "search", "--slo=99:10"]).unwrap();
        assert_eq!(bench.command, Command::Search);
    }

    #[test]
    fn what_a_replay_cannot_take_is_refused_with_why() {
        for (args, says) in [
            (&["replay"][..], "replay needs the capture"),
            (&["replay", "a.wbc", "prepare"], "no command \"prepare\""),
            (&["replay", "a.wbc", "--threads=4"], "--multiply=N"),
            (&["replay", "a.wbc", "--rate=10"], "--speed=N"),
            (&["replay", "a.wbc", "--tables=4"], "not an option of replay"),
            (&["replay", "a.wbc", "--idle-connections=10"], "--multiply=N"),
            (&["replay", "a.wbc", "--mysql-dry-run"], "needs the server"),
            (&["replay", "a.wbc", "--sped=2"], "--speed"),
            (&["replay", "a.wbc", "--speed=0"], "max, or how many times"),
            (&["replay", "a.wbc", "--speed=fast"], "max, or how many times"),
            (&["replay", "a.wbc", "--user-map=app"], "CAPTURED:USER:PASSWORD"),
            (&["replay", "a.wbc", "--user-map=a:b:c,a:d:e"], "twice"),
            (&["replay", "a.wbc", "search", "--speed=2", "--slo=99:1"], "finds the speed itself"),
        ] {
            let error = replay(args).unwrap_err().to_string();
            assert!(error.contains(says), "{args:?}: {error}");
        }
        let error = replay(&["replay", "a.wbc", "--user-map=app:u:secret,bad"]).unwrap_err().to_string();
        assert!(!error.contains("secret"), "{error}");
        assert!(matches!(parse(["replay", "--help"].map(Into::into)), Ok(Invocation::ReplayHelp)));
    }
}
