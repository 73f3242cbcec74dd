//! `wirebench fuzz [options]` and `wirebench fuzz-replay FILE [options]`,
//! read into the fuzzer's own [`FuzzOptions`] and [`ReplayOptions`].

use std::path::PathBuf;
use std::time::Duration;

use super::cli_error::CliError;
use super::defs::{self, OptDef};
use super::into::mysql_options;
use super::opts::{Opts, INT_MAX};
use super::raw::RawOpt;
use super::watch_args::watch_settings;
use super::{value, Command, GeneralOptions, Invocation};
use crate::fuzz::{
    Emit, FuzzOptions, GivenOptions, InternalErrors, PidSource, ReplayOptions, Target, WatchOptions, DEFAULT_DEADLINE,
    DEFAULT_OVERTIME, DEFAULT_RESTART_WAIT, DEFAULT_RSS_GROWTH,
};

/// Whether `key` is one of the connection options fuzzing takes.
fn is_connection_option(key: &str) -> bool {
    defs::FUZZ_CONNECTION.iter().any(|name| defs::key(name) == key)
}

/// Refuses options the command does not take, naming the closest it does.
fn check_options(opts: &[RawOpt], groups: &[&[OptDef]], command: &str) -> Result<(), CliError> {
    for opt in opts {
        if is_connection_option(&opt.key) || groups.iter().any(|g| defs::is_in(g, &opt.key)) {
            continue;
        }
        let known = defs::find(&opt.key).is_some()
            || [defs::FUZZ, defs::FUZZ_REPLAY, defs::FUZZ_WATCH].iter().any(|g| defs::is_in(g, &opt.key));
        let reason = if known {
            format!("not an option of {command}: `wirebench {command} --help` lists its options")
        } else {
            let names =
                groups.iter().flat_map(|g| g.iter().map(|d| d.name)).chain(defs::FUZZ_CONNECTION.iter().copied());
            let suggestion =
                defs::closest(&opt.name, names).map_or_else(String::new, |n| format!(" (did you mean --{n}?)"));
            format!("unknown option{suggestion}; `wirebench {command} --help` lists the options")
        };
        return Err(CliError::NotHere { option: opt.label(), reason });
    }
    Ok(())
}

fn wants_help(opts: &[RawOpt]) -> Result<bool, CliError> {
    opts.iter().rev().find(|o| o.key == "help").map_or(Ok(false), value::boolean)
}

/// `wirebench fuzz ...`.
pub(crate) fn parse_fuzz(opts: &[RawOpt], words: &[&str]) -> Result<Invocation, CliError> {
    check_options(opts, &[defs::FUZZ, defs::FUZZ_WATCH, defs::WATCH], "fuzz")?;
    if wants_help(opts)? {
        return Ok(Invocation::FuzzHelp { replay: false });
    }
    if let Some(extra) = words.first() {
        return Err(CliError::UnexpectedArgument((*extra).to_owned()));
    }
    let opts = Opts::new(opts.to_vec());
    let (watch, deadline, allow_remote) = watch_options(&opts)?;
    let seed = match opts.get("rand_seed") {
        Some(opt) => value::int(opt, 0, i64::from(i32::MAX), "a seed >= 0 (0: from the clock)")? as u64,
        None => 0,
    };
    let secs = |n: u32| Duration::from_secs(u64::from(n));
    let options = FuzzOptions {
        target: target(&opts)?,
        threads: opts.int("threads", 1, 10_000, "a number of connections from 1 to 10000")?.unwrap_or(8),
        time: opts
            .int("time", 0, INT_MAX, "seconds >= 0 (0: no limit)")?
            .map_or(Some(secs(60)), |t| (t > 0).then(|| secs(t))),
        overtime: opts.int("fuzz_overtime", 0, 86_400, "seconds from 0 to 86400")?.map_or(DEFAULT_OVERTIME, secs),
        seed,
        report_interval: opts.int("report_interval", 0, INT_MAX, "seconds >= 0")?.filter(|&n| n > 0).map(secs),
        fuzz_dir: PathBuf::from(opts.text("fuzz_dir")?.unwrap_or_else(|| "wirebench-fuzz".to_owned())),
        watch,
        restart_cmd: opts.text("restart_cmd")?.filter(|c| !c.trim().is_empty()),
        keep_going: opts.flag("keep_going", false)?,
        allow_remote,
        deadline,
        restart_wait: opts
            .int("fuzz_restart_wait", 1, 86_400, "seconds from 1 to 86400")?
            .map_or(DEFAULT_RESTART_WAIT, secs),
        internal_errors: InternalErrors::new(opts.texts("internal_error_pattern")),
        pre_auth: opts.flag("pre_auth", false)?,
        seed_capture: opts.text("seed_capture")?.map(PathBuf::from),
    };
    let metrics = watch_settings(&opts, None)?;
    finish(&opts)?;
    Ok(Invocation::Fuzz(Box::new(options), metrics))
}

/// `wirebench fuzz-replay FILE ...`.
pub(crate) fn parse_replay(opts: &[RawOpt], words: &[&str]) -> Result<Invocation, CliError> {
    check_options(opts, &[defs::FUZZ_REPLAY, defs::FUZZ_WATCH], "fuzz-replay")?;
    if wants_help(opts)? {
        return Ok(Invocation::FuzzHelp { replay: true });
    }
    let file = match words {
        [file] => PathBuf::from(file),
        [] => return Err(CliError::Conflict(
            "fuzz-replay needs the reproducer: wirebench fuzz-replay FILE [connection options] (see docs/fuzzing.md)"
                .to_owned(),
        )),
        [_, extra, ..] => return Err(CliError::UnexpectedArgument((*extra).to_owned())),
    };
    let opts = Opts::new(opts.to_vec());
    let given = |key: &str| opts.peek(key).is_some();
    let given = GivenOptions {
        user: given("mysql_user"),
        database: given("mysql_db"),
        compression: given("mysql_compression"),
    };
    let deadline_given = opts.peek("fuzz_deadline").is_some();
    let (watch, deadline, allow_remote) = watch_options(&opts)?;
    let emit = match opts.get("emit") {
        Some(opt) => match opt.value.as_deref() {
            Some("python") => Some(Emit::Python),
            other => {
                return Err(CliError::InvalidValue {
                    option: opt.label(),
                    value: other.unwrap_or_default().to_owned(),
                    expected: "python".to_owned(),
                })
            }
        },
        None => None,
    };
    let options = ReplayOptions {
        file,
        target: target(&opts)?,
        given,
        watch,
        allow_remote,
        deadline: deadline_given.then_some(deadline),
        emit,
        internal_errors: InternalErrors::new(opts.texts("internal_error_pattern")),
    };
    finish(&opts)?;
    Ok(Invocation::FuzzReplay(Box::new(options)))
}

fn finish(opts: &Opts) -> Result<(), CliError> {
    match opts.unused() {
        // Every option check_options let through is read above.
        Some(opt) if opt.key != "help" => {
            Err(CliError::NotHere { option: opt.label(), reason: "not supported by wirebench fuzz yet".to_owned() })
        }
        _ => Ok(()),
    }
}

/// The server, the login, the database: one server only, all from the
/// command line. Unlike a benchmark, fuzzing reads no option file and no
/// MYSQL_* variable: it must never find its target, or a database to
/// wreck, anywhere the user did not just write.
fn target(opts: &Opts) -> Result<Target, CliError> {
    if let Some(opt) = opts.peek("mysql_password").filter(|opt| opt.value.is_none()) {
        return Err(CliError::MissingValue {
            option: opt.label(),
            expected: "PASSWORD (fuzzing asks nothing on the terminal)".to_owned(),
        });
    }
    // The timeouts are those of a run; fuzzing has its own deadline (--fuzz-deadline).
    let mysql = mysql_options(opts, Command::Run, GeneralOptions::default().thread_init_timeout, &mut Vec::new())?;
    let servers = &mysql.servers;
    let several = servers.hosts.len() > 1 || servers.ports.len() > 1 || servers.sockets.len() > 1;
    if several {
        return Err(CliError::Conflict(
            "wirebench fuzz takes one server: give one --mysql-host and --mysql-port, or one --mysql-socket \
             (see docs/fuzzing.md)"
                .to_owned(),
        ));
    }
    if mysql.db.is_empty() {
        return Err(CliError::Conflict(
            "--mysql-db must name the database the fuzzer may use (see docs/fuzzing.md#run-it-safely)".to_owned(),
        ));
    }
    Ok(Target {
        endpoint: servers.connect_to(0),
        user: mysql.user,
        password: mysql.password,
        database: mysql.db,
        compression: mysql.compression,
    })
}

/// `--server-pid`, `--server-rss-growth`, `--server-log`, `--fuzz-deadline`, `--fuzz-allow-remote`.
fn watch_options(opts: &Opts) -> Result<(WatchOptions, Duration, bool), CliError> {
    let pid = opts.text("server_pid")?.map(|text| match text.trim().parse::<u32>() {
        Ok(pid) => PidSource::Pid(pid),
        Err(_) => PidSource::File(PathBuf::from(text)),
    });
    let rss_growth = match opts.get("server_rss_growth") {
        Some(opt) => value::size(opt)?,
        None => DEFAULT_RSS_GROWTH,
    };
    let log = opts.text("server_log")?.map(PathBuf::from);
    let deadline = match opts.get("fuzz_deadline") {
        Some(opt) => {
            let expected = "seconds, more than 0 and at most 3600, such as 5 or 0.5";
            let secs = value::double(opt, expected)?;
            if !(secs > 0.0 && secs <= 3600.0) {
                return Err(CliError::InvalidValue {
                    option: opt.label(),
                    value: opt.value.clone().unwrap_or_default(),
                    expected: expected.to_owned(),
                });
            }
            Duration::from_secs_f64(secs)
        }
        None => DEFAULT_DEADLINE,
    };
    let allow_remote = opts.flag("fuzz_allow_remote", false)?;
    Ok((WatchOptions { pid, rss_growth, log }, deadline, allow_remote))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::raw::split;
    use crate::client::Endpoint;

    fn parse(line: &str) -> Result<Invocation, CliError> {
        let sources = crate::cli::credentials::CredentialSources::none();
        crate::cli::invocation::read_invocation(split(line.split_whitespace().map(str::to_owned).collect()), &sources)
            .map_err(|refusal| refusal.error)
    }

    fn fuzz(line: &str) -> FuzzOptions {
        match parse(line) {
            Ok(Invocation::Fuzz(options, _)) => *options,
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn defaults_and_every_option() {
        let d = fuzz("fuzz --mysql-host=127.0.0.1");
        assert_eq!((d.threads, d.time, d.seed, d.report_interval), (8, Some(Duration::from_secs(60)), 0, None));
        assert_eq!(d.target.endpoint, Endpoint::tcp("127.0.0.1", 3306));
        assert_eq!((d.target.user.as_str(), d.target.database.as_str()), ("sbtest", "sbtest"));
        assert_eq!((d.deadline, d.watch.rss_growth, d.keep_going), (DEFAULT_DEADLINE, DEFAULT_RSS_GROWTH, false));
        assert_eq!(d.overtime, DEFAULT_OVERTIME);
        assert_eq!(fuzz("fuzz --fuzz-overtime=5").overtime, Duration::from_secs(5));
        let o = fuzz(
            "fuzz --mysql-socket=/tmp/s.sock --mysql-user=u --mysql-password=p --mysql-db=d --mysql-compression=on \
             --threads=3 --time=0 --rand-seed=9 --report-interval=2 --fuzz-dir=/tmp/f --restart-cmd=true \
             --keep-going --fuzz-deadline=0.5 --server-pid=42 --server-rss-growth=64M --server-log=/tmp/e.log \
             --fuzz-allow-remote",
        );
        assert_eq!(o.target.endpoint, Endpoint::unix("/tmp/s.sock"));
        assert!(o.target.compression && o.keep_going && o.allow_remote);
        assert_eq!((o.threads, o.time, o.seed), (3, None, 9));
        assert_eq!(o.report_interval, Some(Duration::from_secs(2)));
        assert_eq!(o.restart_cmd.as_deref(), Some("true"));
        assert_eq!(o.deadline, Duration::from_millis(500));
        assert_eq!(o.watch.pid, Some(PidSource::Pid(42)));
        assert_eq!(o.watch.rss_growth, 64 << 20);
        assert_eq!(o.watch.log, Some(PathBuf::from("/tmp/e.log")));
        assert_eq!(fuzz("fuzz --server-pid=/run/m.pid").watch.pid, Some(PidSource::File("/run/m.pid".into())));
        let patterns = fuzz("fuzz --internal-error-pattern=oops --internal-error-pattern=Wedged");
        assert_eq!(patterns.internal_errors.extra, ["oops", "Wedged"]);
    }

    #[test]
    fn replay_takes_a_file_and_the_watch_options() {
        match parse("fuzz-replay /tmp/x.repro --mysql-port=3411 --fuzz-deadline=2 --mysql-db=d --emit=python") {
            Ok(Invocation::FuzzReplay(r)) => {
                assert_eq!(r.file, PathBuf::from("/tmp/x.repro"));
                assert_eq!(r.deadline, Some(Duration::from_secs(2)));
                assert_eq!(r.target.endpoint, Endpoint::tcp("localhost", 3411));
                assert_eq!(r.given, GivenOptions { user: false, database: true, compression: false });
                assert_eq!(r.emit, Some(Emit::Python));
            }
            other => panic!("{other:?}"),
        }
        match parse("fuzz-replay /tmp/x.repro") {
            Ok(Invocation::FuzzReplay(r)) => {
                assert_eq!((r.deadline, r.emit, r.given), (None, None, GivenOptions::default()));
                assert_eq!((r.target.user.as_str(), r.target.database.as_str()), ("sbtest", "sbtest"));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(parse("fuzz --help"), Ok(Invocation::FuzzHelp { replay: false }));
        assert_eq!(parse("fuzz-replay --help"), Ok(Invocation::FuzzHelp { replay: true }));
    }

    #[test]
    fn bad_values_and_misplaced_options_are_refused_in_one_line() {
        for (line, needle) in [
            ("fuzz --threads=0", "--threads"),
            ("fuzz --fuzz-deadline=0", "--fuzz-deadline"),
            ("fuzz --fuzz-deadline=soon", "--fuzz-deadline"),
            ("fuzz --server-rss-growth=lots", "--server-rss-growth"),
            ("fuzz --time=-1", "--time"),
            ("fuzz --keep-goin", "--keep-going"),
            ("fuzz --mysql-ssl=on", "not an option of fuzz"),
            ("fuzz --tables=4", "not an option of fuzz"),
            ("fuzz --mysql-host=a,b", "one server"),
            ("fuzz --mysql-db=", "--mysql-db"),
            ("fuzz extra", "extra"),
            ("fuzz-replay", "needs the reproducer"),
            ("fuzz-replay a b", "'b'"),
            ("fuzz-replay a --keep-going", "not an option of fuzz-replay"),
            ("fuzz-replay a --emit=cobol", "--emit"),
            ("fuzz --emit=python", "not an option of fuzz"),
            ("fuzz --mysql-password", "--mysql-password=PASSWORD"),
        ] {
            let err = parse(line).expect_err(line).to_string();
            assert!(err.contains(needle), "{line}: {err}");
            assert!(!err.contains('\n'), "{line}: {err}");
        }
    }

    #[test]
    fn every_fuzz_option_is_read() {
        for def in defs::FUZZ.iter().chain(defs::FUZZ_WATCH).chain(defs::FUZZ_REPLAY) {
            let value = match def.kind {
                defs::Kind::Bool => None,
                defs::Kind::Int | defs::Kind::Double => Some("1"),
                defs::Kind::Size => Some("1M"),
                _ => Some("x"),
            };
            let option = value.map_or_else(|| format!("--{}", def.name), |v| format!("--{}={v}", def.name));
            for command in ["fuzz", "fuzz-replay f"] {
                if let Err(err) = parse(&format!("{command} {option}")) {
                    assert!(!err.to_string().contains("yet"), "{command} {option}: {err}");
                }
            }
        }
    }
}
