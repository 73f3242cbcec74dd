//! `wirebench fuzz-replay FILE`: the reproducer's sessions sent again (the
//! sessions before the failing one too, at the same time, when it needs
//! them), then the control connection says whether the server survived.
//!
//! A replay sends the bytes the fuzzing run's confirmation sent, but for
//! the live values (the login's scramble, the statement ids): the login's
//! bytes name the run's user and database, so the replay logs in as the
//! reproducer says, and a packet the safety check would keep back stops
//! the replay before anything is sent rather than leave a gap in it.

use std::fmt::Write as _;
use std::sync::Arc;

use super::campaign::ANSWER_TIMEOUT;
use super::control::{control_options, Checker, Failure, FailureKind};
use super::emit::python_script;
use super::exec::{kept_back, sent_capabilities, Ending, Limits, Phase, Rendered, SentPacket};
use super::fuzz_error::FuzzError;
use super::fuzz_options::{Emit, ReplayOptions, Target, DEFAULT_DEADLINE, DEFAULT_RESTART_WAIT};
use super::internal_error::InternalErrors;
use super::lines::out_line;
use super::login_probe::{login_failed, run_login_session};
use super::pre_auth::LoginAnswer;
use super::process_watch::ProcessWatch;
use super::reproducer::{read_reproducer, sessions_to_replay, Reproducer};
use super::rig::Rig;
use super::safety;
use super::table_setup::Setup;
use super::vigil::Vigil;
use crate::client::Connection;
use wirebench_protocol::constants::command::COM_INIT_DB;
use wirebench_protocol::constants::Capabilities;
use wirebench_protocol::framing::HEADER_LEN;

/// What a replay found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplayVerdict {
    /// The failure happened again (exit status 3).
    Failed(Failure),
    /// The server answers as before (exit status 0).
    Survived,
    /// `--emit`: the program was written to standard output (exit status 0).
    Emitted,
}

/// Runs `wirebench fuzz-replay`.
pub fn replay(options: &ReplayOptions) -> Result<ReplayVerdict, FuzzError> {
    let reproducer = read_reproducer(&options.file)?;
    if let Some(Emit::Python) = options.emit {
        out_line(python_script(&reproducer, &options.file).trim_end());
        return Ok(ReplayVerdict::Emitted);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(FuzzError::Runtime)?;
    let verdict = runtime.block_on(replay_file(options, &reproducer));
    runtime.shutdown_background();
    verdict
}

async fn replay_file(options: &ReplayOptions, reproducer: &Reproducer) -> Result<ReplayVerdict, FuzzError> {
    let target = recorded_target(reproducer, options)?;
    let sessions = sessions_to_replay(reproducer);
    check_nothing_withheld(&sessions, &target.database)?;
    if let Some(reason) = reproducer.setup.unsafe_statement() {
        return Err(FuzzError::UnsafeSetup { reason });
    }
    safety::check_target(&target.endpoint, options.allow_remote)?;
    let deadline = options.deadline.or(reproducer.deadline).unwrap_or(DEFAULT_DEADLINE);
    let watch = ProcessWatch::start(&options.watch)?;
    let mut checker = Checker::new(&target, deadline, watch);
    let login_finding = reproducer.failure_kind() == FailureKind::Login;
    if login_finding && selects_database(&reproducer.failing) {
        // The login naming the database is the one that fails: the
        // control connection's names none.
        checker.without_database();
    }
    if reproducer.pre_auth {
        // The answer a well-formed login gets now is the one it must
        // still get after the replay.
        let attempt = Connection::connect(&control_options(&target, deadline.max(DEFAULT_DEADLINE), true)).await;
        let Some(baseline) = LoginAnswer::of(&attempt) else {
            let reason = attempt.err().map_or_else(String::new, |e| e.to_string());
            return Err(FuzzError::DownBeforeReplay { reason });
        };
        out_line(format_args!(
            "wirebench fuzz-replay: pre-auth: a well-formed login gets {baseline} before the replay"
        ));
        checker.expect_login(baseline);
    }
    if let Some(failure) = checker.check_before(DEFAULT_DEADLINE).await {
        return Err(FuzzError::DownBeforeReplay { reason: failure.summary });
    }
    out_line(replay_banner(options, reproducer, &target, sessions.len()));
    if !reproducer.setup.is_empty() {
        let names: Vec<&str> = reproducer.setup.tables.iter().map(|t| t.name.as_str()).collect();
        let rows: usize = reproducer.setup.tables.iter().map(|t| t.rows.len()).sum();
        reproducer.setup.make(&target, deadline).await.map_err(|source| FuzzError::Setup { source })?;
        out_line(format_args!(
            "wirebench fuzz-replay: made the setup in {}: {} ({rows} rows)",
            target.database,
            names.join(", ")
        ));
    }
    if login_finding {
        return Ok(replay_login(&target, reproducer, deadline).await);
    }
    let mut rig = Rig {
        target,
        limits: Limits { connect: deadline, answer: ANSWER_TIMEOUT },
        checker,
        restart_cmd: None,
        restarts: 0,
        known_down: false,
        vigil: Arc::new(Vigil::new(deadline)),
        restart_wait: DEFAULT_RESTART_WAIT,
        waited: std::time::Duration::ZERO,
        setup: Setup::default(),
        end: None,
        judge: Arc::new(InternalErrors::new(
            reproducer.error_patterns.iter().chain(&options.internal_errors.extra).cloned().collect(),
        )),
    };
    let sessions: Vec<Vec<Rendered>> =
        sessions.into_iter().map(|(_, packets)| packets.iter().map(|p| p.rendered.clone()).collect()).collect();
    let (failure, outcomes) = rig.run_and_check(sessions).await;
    if let Some(failing) = outcomes.last() {
        for state in &failing.states {
            out_line(format_args!("  {state}"));
        }
        let in_flight = failing.sent.last().and_then(|p| p.answered).filter(|_| failing.ending == Ending::InFlight);
        if let Some(state) = in_flight {
            out_line(format_args!("  {state}"));
        }
    }
    Ok(match failure {
        Some(failure) => {
            out_line(format_args!("wirebench fuzz-replay: FAILURE again: {}", failure.summary));
            for detail in &failure.details {
                out_line(format_args!("  {detail}"));
            }
            ReplayVerdict::Failed(failure)
        }
        None => {
            out_line("wirebench fuzz-replay: the server survived (it answers the control connection)");
            ReplayVerdict::Survived
        }
    })
}

/// A login finding's replay: judged by the login's own answer, which may
/// take the deadline to come.
async fn replay_login(target: &Target, reproducer: &Reproducer, deadline: std::time::Duration) -> ReplayVerdict {
    let packets: Vec<Rendered> = reproducer.failing.iter().map(|p| p.rendered.clone()).collect();
    let outcome = run_login_session(target, &packets, deadline).await;
    for state in &outcome.states {
        out_line(format_args!("  {state}"));
    }
    match login_failed(&outcome) {
        Some(what) => {
            let summary = format!("the login was not completed within {:.1} s: {what}", deadline.as_secs_f64());
            out_line(format_args!("wirebench fuzz-replay: FAILURE again: {summary}"));
            ReplayVerdict::Failed(Failure { kind: FailureKind::Login, summary, details: Vec::new() })
        }
        None => {
            out_line("wirebench fuzz-replay: the server survived (the login was completed)");
            ReplayVerdict::Survived
        }
    }
}

fn replay_banner(options: &ReplayOptions, reproducer: &Reproducer, target: &Target, sessions: usize) -> String {
    let mut line = format!("wirebench fuzz-replay: {} ({} packets", options.file.display(), reproducer.failing.len());
    if sessions > 1 {
        let _ = write!(line, ", with the {} sessions before it at the same time", sessions - 1);
    }
    let _ = write!(
        line,
        ") against {} as {} on {}; it first saw: {}",
        target.endpoint, target.user, target.database, reproducer.observed
    );
    line
}

/// The command line's server and password, with the user, database and
/// compression the reproducer's packets were recorded with: theirs unless
/// the file does not say, and a different one given on the command line
/// is refused (the login's bytes cannot follow it).
fn recorded_target(reproducer: &Reproducer, options: &ReplayOptions) -> Result<Target, FuzzError> {
    let mut target = options.target.clone();
    for (option, given, recorded, value) in [
        ("--mysql-user", options.given.user, &reproducer.user, &mut target.user),
        ("--mysql-db", options.given.database, &reproducer.database, &mut target.database),
    ] {
        if recorded.is_empty() {
            continue;
        }
        if given && value != recorded {
            let (given, recorded) = (value.clone(), recorded.clone());
            return Err(FuzzError::NotAsRecorded { option, given, recorded });
        }
        value.clone_from(recorded);
    }
    let compressed = login_asks_for(&reproducer.failing, Capabilities::COMPRESS);
    if options.given.compression && target.compression != compressed {
        let on_off = |on: bool| if on { "on" } else { "off" }.to_owned();
        let (given, recorded) = (on_off(target.compression), on_off(compressed));
        return Err(FuzzError::NotAsRecorded { option: "--mysql-compression", given, recorded });
    }
    target.compression = compressed;
    Ok(target)
}

/// Whether the session's login asks for `capability` (the compressed
/// protocol, a database).
fn login_asks_for(packets: &[SentPacket], capability: Capabilities) -> bool {
    let login = packets.first().filter(|p| p.rendered.phase == Phase::Login);
    login.is_some_and(|p| {
        let payload = p.rendered.bytes.get(HEADER_LEN..).unwrap_or_default();
        sent_capabilities(payload).contains(capability)
    })
}

/// Whether the session's login selects the database: in its bytes
/// (CONNECT_WITH_DB), or by the COM_INIT_DB right after it.
fn selects_database(packets: &[SentPacket]) -> bool {
    let init_db_next = packets
        .get(1)
        .is_some_and(|p| p.rendered.phase == Phase::Command && p.rendered.bytes.get(HEADER_LEN) == Some(&COM_INIT_DB));
    init_db_next || login_asks_for(packets, Capabilities::CONNECT_WITH_DB)
}

/// Refuses a reproducer with a packet the safety check would keep back
/// (edited in by hand): the replay would not be the session that failed.
fn check_nothing_withheld(sessions: &[(String, &[SentPacket])], database: &str) -> Result<(), FuzzError> {
    for (name, packets) in sessions {
        for (n, packet) in packets.iter().enumerate() {
            if let Some(reason) = kept_back(&packet.rendered, database) {
                return Err(FuzzError::WouldWithhold { session: name.clone(), packet: n + 1, reason });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::Endpoint;
    use crate::fuzz::fuzz_options::{GivenOptions, WatchOptions};
    use crate::fuzz::reproducer::parse_reproducer;

    fn options(given: GivenOptions, user: &str, database: &str) -> ReplayOptions {
        ReplayOptions {
            file: "x.repro".into(),
            target: Target {
                endpoint: Endpoint::tcp("127.0.0.1", 3306),
                user: user.into(),
                password: "pw".into(),
                database: database.into(),
                compression: false,
            },
            given,
            watch: WatchOptions::default(),
            allow_remote: false,
            deadline: None,
            emit: None,
            internal_errors: InternalErrors::default(),
        }
    }

    /// A login to sbtest_fuzz as fuzzer (CONNECT_WITH_DB, one-byte auth
    /// length), then COM_PING.
    fn reproducer(caps: u8) -> Reproducer {
        let mut login = vec![0, 0, 0, 1, caps, 0, 0, 0];
        login.extend_from_slice(&[0; 28]);
        login.extend_from_slice(b"fuzzer\0\x00sbtest_fuzz\0");
        login[0] = (login.len() - 4) as u8;
        let hex: String = login.iter().map(|b| format!("{b:02x}")).collect();
        let text = format!(
            "wirebench fuzz reproducer 1\nuser: fuzzer\ndatabase: sbtest_fuzz\n\
             session failing\npacket login\n  {hex}\npacket command\n  010000000e\nend\n"
        );
        parse_reproducer(&text).unwrap()
    }

    #[test]
    fn the_replay_logs_in_as_the_reproducer_says() {
        let r = reproducer(0x08);
        let target = recorded_target(&r, &options(GivenOptions::default(), "sbtest", "sbtest")).unwrap();
        assert_eq!(
            (target.user.as_str(), target.database.as_str(), target.password.as_str()),
            ("fuzzer", "sbtest_fuzz", "pw")
        );
        let sessions = sessions_to_replay(&r);
        assert!(check_nothing_withheld(&sessions, &target.database).is_ok());
        let refused = check_nothing_withheld(&sessions, "sbtest").unwrap_err().to_string();
        assert!(refused.contains("packet 1 of the failing session") && refused.contains("sbtest_fuzz"), "{refused}");
    }

    #[test]
    fn options_that_contradict_the_reproducer_are_refused() {
        let r = reproducer(0x08);
        let given = GivenOptions { database: true, ..GivenOptions::default() };
        let err = recorded_target(&r, &options(given, "sbtest", "other")).unwrap_err().to_string();
        assert!(err.contains("--mysql-db=other") && err.contains("sbtest_fuzz"), "{err}");
        assert!(recorded_target(&r, &options(given, "sbtest", "sbtest_fuzz")).is_ok());
        let given = GivenOptions { compression: true, ..GivenOptions::default() };
        let mut on = options(given, "sbtest", "sbtest");
        on.target.compression = true;
        let err = recorded_target(&r, &on).unwrap_err().to_string();
        assert!(err.contains("--mysql-compression=on"), "{err}");
        assert!(recorded_target(&reproducer(0x28), &on).unwrap().compression, "COMPRESS in the login");
    }

    #[test]
    fn a_file_that_does_not_say_takes_the_command_line() {
        let mut r = reproducer(0x08);
        r.user.clear();
        r.database.clear();
        let target = recorded_target(&r, &options(GivenOptions::default(), "u", "d")).unwrap();
        assert_eq!((target.user.as_str(), target.database.as_str()), ("u", "d"));
    }
}
