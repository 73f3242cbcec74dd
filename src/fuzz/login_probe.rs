//! Findings in the login itself, before any fuzzing: the control
//! connection logs in twice, naming `--mysql-db` (CONNECT_WITH_DB) and
//! naming no database. A server that completes one form and not the other
//! (no answer within the deadline, a close or reset, an answer that breaks
//! the protocol) has a bug in its login, and that is a finding with a
//! reproducer, not a reason to give up: a login that hangs is a hang. An
//! ERR is a server answering properly (an unknown database, no access):
//! the user's to fix, as is a server that completes neither form.
//!
//! The reproducer is the fuzzer's own login of the failing form, then
//! COM_PING: a replay judges it by the login's answer (the server as a
//! whole may be well: its other logins are answered), with the deadline
//! as the time a login may take.

use std::path::PathBuf;
use std::time::Duration;

use super::control::{control_options, failure_of, Failure, FailureKind};
use super::exec::{run_session, Ending, Limits, SessionOutcome};
use super::feedback_state::{AnswerClass, ClientMessage};
use super::fuzz_error::FuzzError;
use super::fuzz_options::{FuzzOptions, Target};
use super::internal_error::InternalErrors;
use super::lines::{err_line, out_line};
use super::pre_auth::LoginAnswer;
use super::reproducer::{Reproducer, Reproduces};
use super::rig::Rig;
use super::seeds::client_login;
use super::spec::{LoginForm, PlannedPacket, Spec};
use super::table_setup::Setup;
use super::vigil::Vigil;
use crate::client::{ClientError, ConnectOptions, Connection};
use wirebench_protocol::constants::command::COM_INIT_DB;
use wirebench_protocol::constants::Capabilities;

/// What the two logins showed.
#[derive(Debug)]
pub enum LoginVerdict {
    /// Both forms log in (or only the one with the database does, while
    /// the other gets an ERR: no bug, the control connection uses it).
    Fine,
    /// The form with the database does not log in for a reason that is
    /// the user's to fix, or neither does: the run cannot start.
    Unusable(ClientError),
    /// The login is refused (an ERR to it, or to the COM_INIT_DB after
    /// it): what comes before that answer is what can be fuzzed.
    Refused(ClientError),
    /// One form is not completed while the other logs in.
    Finding(LoginFinding),
}

/// A login form the server does not complete.
#[derive(Debug, Clone)]
pub struct LoginFinding {
    /// Whether the failing form names the database.
    pub with_database: bool,
    /// The server does not offer CONNECT_WITH_DB: the failing form's login
    /// names no database and COM_INIT_DB selects it, as a client does.
    pub select_database: bool,
    pub failure: Failure,
}

impl LoginFinding {
    /// How the run's sessions log in from now on: the way that works.
    pub fn working_form(&self) -> LoginForm {
        match (self.with_database, self.select_database) {
            (true, false) => LoginForm::ThenInitDb,
            (true, true) => LoginForm::NoDatabase,
            (false, _) => LoginForm::NamingDatabase,
        }
    }
}

/// Logs in once, within `deadline` in all; the capabilities the server offered.
async fn try_login(options: &ConnectOptions, deadline: Duration) -> Result<Capabilities, ClientError> {
    match tokio::time::timeout(deadline, Connection::connect(options)).await {
        Ok(Ok(conn)) => {
            let offered = conn.login().server_capabilities;
            let _ = conn.quit().await;
            Ok(offered)
        }
        Ok(Err(e)) => Err(e),
        Err(_) => Err(ClientError::Timeout { endpoint: options.endpoint.clone(), what: "the login", after: deadline }),
    }
}

/// Whether `error` says the server has a bug in that login (rather than
/// an answer the user must act on, or no server at all).
fn is_a_finding(error: &ClientError) -> bool {
    let refused =
        matches!(error, ClientError::Io { source, .. } if source.kind() == std::io::ErrorKind::ConnectionRefused);
    !refused && matches!(failure_of(error).kind, FailureKind::Hang | FailureKind::Down | FailureKind::Deviation)
}

/// Logs in both ways and says what that showed.
pub async fn probe_logins(target: &Target, deadline: Duration) -> LoginVerdict {
    let (named, unnamed) = (control_options(target, deadline, true), control_options(target, deadline, false));
    let (with, without) = tokio::join!(try_login(&named, deadline), try_login(&unnamed, deadline));
    let described = |with_database: bool, select_database: bool, error: &ClientError| {
        let form = if select_database {
            format!(
                "the login selecting database {} (with COM_INIT_DB: the server lacks CONNECT_WITH_DB)",
                target.database
            )
        } else if with_database {
            format!("the login naming database {} (CONNECT_WITH_DB)", target.database)
        } else {
            "the login naming no database".to_owned()
        };
        let other = if with_database { "a login naming no database" } else { "a login naming the database" };
        let seen = failure_of(error);
        let what = match seen.kind {
            FailureKind::Hang => format!("got no answer within {:.1} s", deadline.as_secs_f64()),
            FailureKind::Deviation => format!("got an answer that breaks the protocol ({error})"),
            _ => format!("was dropped ({error})"),
        };
        let kind = FailureKind::Login;
        Failure { kind, summary: format!("{form} {what}, while {other} logs in"), details: vec![seen.summary] }
    };
    match (with, without) {
        (Ok(_), Ok(_)) => LoginVerdict::Fine,
        (Err(e), Ok(offered)) if is_a_finding(&e) => {
            let select_database = !offered.contains(Capabilities::CONNECT_WITH_DB);
            let failure = described(true, select_database, &e);
            LoginVerdict::Finding(LoginFinding { with_database: true, select_database, failure })
        }
        (Err(e), _) if LoginAnswer::of_error(&e).is_some() => LoginVerdict::Refused(e),
        (Err(e), _) => LoginVerdict::Unusable(e),
        (Ok(_), Err(e)) if is_a_finding(&e) => LoginVerdict::Finding(LoginFinding {
            with_database: false,
            select_database: false,
            failure: described(false, false, &e),
        }),
        (Ok(_), Err(_)) => LoginVerdict::Fine,
    }
}

/// Runs a login session (a login, then COM_PING) as the fuzzer sends it;
/// the login may take `deadline` to be answered.
pub async fn run_login_session<T>(target: &Target, packets: &[T], deadline: Duration) -> SessionOutcome
where
    T: super::exec::Outgoing,
{
    let limits = Limits { connect: deadline, answer: deadline };
    // No control connection watches this one: a late answer waits a
    // second more, then counts as none.
    run_session(target, packets, &limits, &InternalErrors::default(), &Vigil::new(Duration::ZERO)).await
}

/// The fuzzer's own login of the failing form (with COM_INIT_DB after it
/// when the server takes the database that way), then COM_PING.
pub fn login_plan(finding: &LoginFinding) -> Vec<PlannedPacket> {
    let mut login = client_login();
    login.with_database = finding.with_database;
    let mut plan = vec![PlannedPacket::new(Spec::Login(login))];
    if finding.with_database && finding.select_database {
        plan.push(PlannedPacket::new(Spec::InitDb));
    }
    plan.push(PlannedPacket::new(Spec::Ping));
    plan
}

/// Whether a login session's login was completed (its COM_INIT_DB, when
/// it has one, answered); `None` if it was, else what it got.
pub fn login_failed(outcome: &SessionOutcome) -> Option<String> {
    let login = outcome.sent.first()?;
    let state = login.answered?;
    let logged_in = state.class == AnswerClass::Ok
        || outcome.states.iter().any(|s| s.step == state.step && s.class == AnswerClass::Ok);
    let unanswered_init_db = outcome.sent.iter().skip(1).find_map(|p| {
        let answer = p.answered?;
        let init_db = answer.step == ClientMessage::Command(COM_INIT_DB);
        (init_db && !matches!(answer.class, AnswerClass::Ok | AnswerClass::Err)).then_some(answer)
    });
    let failed = match (logged_in, unanswered_init_db) {
        (false, _) => state,
        (true, Some(init_db)) => init_db,
        (true, None) => return None,
    };
    let ending = match &outcome.ending {
        Ending::NoReply | Ending::InFlight => "no answer".to_owned(),
        other => format!("{other:?}").to_lowercase(),
    };
    Some(format!("{failed} ({ending})"))
}

/// Records the failing login as the fuzzer sends it and saves the
/// reproducer; its path.
pub async fn save_login_finding(
    rig: &Rig,
    options: &FuzzOptions,
    seed: u64,
    finding: &LoginFinding,
) -> Result<PathBuf, FuzzError> {
    let failure = &finding.failure;
    err_line(format_args!("wirebench fuzz: FAILURE: {}", failure.summary));
    let outcome = run_login_session(&options.target, &login_plan(finding), options.deadline).await;
    let reproduces = match login_failed(&outcome) {
        Some(_) => Reproduces::Alone,
        None => Reproduces::NotConfirmed("the fuzzer's own login of that form was completed".to_owned()),
    };
    let t = &options.target;
    let reproducer = Reproducer {
        observed: failure.summary.clone(),
        details: failure.details.clone(),
        kind: Some(FailureKind::Login),
        server: rig.checker.server_version.clone(),
        deadline: Some(options.deadline),
        seed,
        session: 0,
        found_after: Duration::ZERO,
        target: t.endpoint.to_string(),
        user: t.user.clone(),
        database: t.database.clone(),
        compression: t.compression,
        minimised: "no (a login and COM_PING, before fuzzing)".to_owned(),
        error_patterns: options.internal_errors.extra.clone(),
        pre_auth: rig.checker.is_pre_auth(),
        reproduces,
        setup: Setup::default(),
        failing: outcome.sent,
        history: Vec::new(),
    };
    if reproducer.failing.is_empty() {
        return Err(FuzzError::NoCulprit(failure.summary.clone()));
    }
    let path = reproducer.save(&options.fuzz_dir, FailureKind::Login.name())?;
    out_line(format_args!("wirebench fuzz: FAILURE: {}", failure.summary));
    out_line(format_args!("wirebench fuzz: reproducer written to {}", path.display()));
    if options.keep_going {
        let form = match finding.working_form() {
            LoginForm::NamingDatabase => "naming the database",
            LoginForm::ThenInitDb => "naming no database, then COM_INIT_DB",
            LoginForm::NoDatabase => "selecting no database",
        };
        err_line(format_args!("wirebench fuzz: going on (--keep-going) with every login {form}"));
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz::scripted_server::{ScriptedServer, ServerScript};

    #[tokio::test]
    async fn a_login_that_hangs_with_a_database_is_a_finding() {
        let server = ScriptedServer::start(ServerScript::LoginHangsWithDatabase).await;
        let deadline = Duration::from_millis(300);
        let LoginVerdict::Finding(finding) = probe_logins(&server.target(), deadline).await else {
            panic!("not a finding")
        };
        assert!(finding.with_database);
        assert_eq!(finding.failure.kind, FailureKind::Login);
        assert_eq!(
            finding.failure.summary,
            "the login naming database db (CONNECT_WITH_DB) got no answer within 0.3 s, while a login naming no \
             database logs in"
        );
        assert!(!finding.select_database);
        let outcome = run_login_session(&server.target(), &login_plan(&finding), deadline).await;
        assert!(login_failed(&outcome).is_some_and(|s| s.starts_with("login -> ")), "{:?}", outcome.states);
        let other_form = LoginFinding { with_database: false, ..finding };
        let fine = run_login_session(&server.target(), &login_plan(&other_form), deadline).await;
        assert_eq!(login_failed(&fine), None, "{:?}", fine.states);
    }

    #[tokio::test]
    async fn healthy_logins_and_a_server_that_is_not_there() {
        let server = ScriptedServer::start(ServerScript::Healthy).await;
        assert!(matches!(probe_logins(&server.target(), Duration::from_secs(2)).await, LoginVerdict::Fine));
        let mut gone = server.target();
        drop(server);
        gone.endpoint = crate::client::Endpoint::tcp("127.0.0.1", free_port());
        assert!(matches!(probe_logins(&gone, Duration::from_secs(2)).await, LoginVerdict::Unusable(_)));
    }

    fn free_port() -> u16 {
        std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
    }
}
