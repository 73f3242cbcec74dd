//! Failure detection. A server that closes a bad connection is behaving,
//! not failing: servers legitimately drop connections on malformed
//! packets. So the fuzzed connections never decide; a separate control
//! connection does, logged in normally: COM_PING and `SELECT 1` must be
//! answered within the deadline. Refused, reset or unanswered, the server
//! has failed (a hang is a failure too). The watch of the process and the
//! log (`process_watch.rs`) confirms and describes.
//!
//! The verdict is about what the server did, never about what the client
//! expected: an answer the client refuses (one that breaks the protocol
//! even for a client as tolerant as libmariadb, which wirebench's client
//! is) came from a live server, so it is a protocol deviation, a finding
//! of its own, and not the server going down.

use std::fmt::Write as _;
use std::io::ErrorKind;
use std::time::Duration;

use super::feedback_state::State;
use super::fuzz_options::Target;
use super::internal_error::InternalError;
use super::pre_auth::LoginAnswer;
use super::process_watch::{ProcessWatch, Sighting};
use crate::client::{ClientError, ConnectOptions, Connection};

/// What kind of failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// Refused, reset or closed: the server is down.
    Down,
    /// No answer within the deadline.
    Hang,
    /// It answers, but refuses the control connection's login or queries.
    Refusing,
    ProcessGone,
    Memory,
    /// Its log reports a crash.
    Log,
    /// It is up, but answered the control connection with bytes that
    /// break the protocol (what a tolerant client refuses too).
    Deviation,
    /// One form of login (with a database, or without) is not completed
    /// (no answer, a close, a broken answer) while the other is: judged
    /// by the login's own answer, not by the control connection.
    Login,
    /// It is up, but answered a session with an error that betrays a
    /// fault inside it (an exception, a panic, ER_INTERNAL_ERROR): judged
    /// by the session's own answers.
    InternalError,
    /// Pre-auth: a well-formed login gets another answer than at the
    /// start (an ERR 1045 became an ERR 1040, or an OK).
    LoginChanged,
}

impl FailureKind {
    /// Its name in reproducers and their file names.
    pub fn name(self) -> &'static str {
        match self {
            FailureKind::Down => "down",
            FailureKind::Hang => "hang",
            FailureKind::Refusing => "refusing",
            FailureKind::ProcessGone => "process-gone",
            FailureKind::Memory => "memory",
            FailureKind::Log => "log",
            FailureKind::Deviation => "protocol-deviation",
            FailureKind::Login => "login",
            FailureKind::InternalError => "internal-error",
            FailureKind::LoginChanged => "login-changed",
        }
    }

    /// Whether the server may need bringing back after it: not after an
    /// internal error, which a live server answered.
    pub fn may_leave_it_down(self) -> bool {
        self != FailureKind::InternalError
    }

    pub fn from_name(name: &str) -> Option<FailureKind> {
        [
            FailureKind::Down,
            FailureKind::Hang,
            FailureKind::Refusing,
            FailureKind::ProcessGone,
            FailureKind::Memory,
            FailureKind::Log,
            FailureKind::Deviation,
            FailureKind::Login,
            FailureKind::InternalError,
            FailureKind::LoginChanged,
        ]
        .into_iter()
        .find(|kind| kind.name() == name)
    }
}

/// What a failed check saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub kind: FailureKind,
    /// One line: what was observed.
    pub summary: String,
    /// Supporting lines: log lines, memory figures.
    pub details: Vec<String>,
}

/// The control connection and the watch.
#[derive(Debug)]
pub struct Checker {
    options: ConnectOptions,
    conn: Option<Connection>,
    deadline: Duration,
    watch: ProcessWatch,
    /// Checks made.
    pub checks: u64,
    /// The server's version, from its last greeting (empty before one).
    pub server_version: String,
    /// Pre-auth: each check logs in afresh and expects this answer,
    /// instead of COM_PING and `SELECT 1` on a logged-in connection.
    expect_login: Option<LoginAnswer>,
}

impl Checker {
    pub fn new(target: &Target, deadline: Duration, watch: ProcessWatch) -> Checker {
        let options = control_options(target, deadline, true);
        Checker { options, conn: None, deadline, watch, checks: 0, server_version: String::new(), expect_login: None }
    }

    /// Pre-auth: from now on a check is a well-formed login that must get
    /// `baseline` again.
    pub fn expect_login(&mut self, baseline: LoginAnswer) {
        self.expect_login = Some(baseline);
        self.conn = None;
    }

    /// Whether the checks are pre-auth's (the server refuses our login).
    pub fn is_pre_auth(&self) -> bool {
        self.expect_login.is_some()
    }

    /// A well-formed login and its answer; the failure when the server
    /// gives none or another than `expected`.
    async fn login_again(&mut self, expected: LoginAnswer) -> Option<Failure> {
        let attempt = Connection::connect(&self.options).await;
        if let Ok(conn) = &attempt {
            self.server_version.clone_from(&conn.login().server_version);
        }
        match (LoginAnswer::of(&attempt), attempt) {
            (Some(answer), _) if answer == expected => None,
            (Some(answer), _) => Some(Failure {
                kind: FailureKind::LoginChanged,
                summary: format!(
                    "the server answers a well-formed login with {answer}, where it answered {expected} at the start"
                ),
                details: Vec::new(),
            }),
            (None, Err(e @ ClientError::Timeout { .. })) => {
                let summary = format!("the server hangs: a well-formed login got no answer ({e})");
                Some(Failure { kind: FailureKind::Hang, summary, details: Vec::new() })
            }
            (None, Err(e)) => Some(failure_of(&e)),
            (None, Ok(_)) => None,
        }
    }

    /// Logs in naming no database from now on: the server does not
    /// complete the login naming it (a login finding), and COM_PING and
    /// `SELECT 1` need none.
    pub fn without_database(&mut self) {
        self.options.database = None;
        self.conn = None;
    }

    /// Logs in the control connection, before fuzzing starts.
    pub async fn connect(&mut self) -> Result<(), ClientError> {
        self.conn = Some(self.log_in().await?);
        Ok(())
    }

    async fn log_in(&mut self) -> Result<Connection, ClientError> {
        let conn = Connection::connect(&self.options).await?;
        self.server_version.clone_from(&conn.login().server_version);
        Ok(conn)
    }

    /// After a restart: a new connection, a new process, the log from here.
    pub fn rebase(&mut self) {
        self.conn = None;
        self.watch.rebase();
    }

    /// Whether the server is well before anything is sent, waiting for
    /// it at least `patience`: a run's deadline may be short to find hangs
    /// fast, but a server that is merely slow to answer before the replay
    /// is not yet the failure being replayed.
    pub async fn check_before(&mut self, patience: Duration) -> Option<Failure> {
        let deadline = self.deadline;
        self.set_deadline(deadline.max(patience));
        let failure = self.check().await;
        self.set_deadline(deadline);
        failure
    }

    fn set_deadline(&mut self, deadline: Duration) {
        self.deadline = deadline;
        self.options.connect_timeout = deadline;
        self.options.read_timeout = Some(deadline);
        self.options.write_timeout = Some(deadline);
        self.conn = None;
    }

    /// Whether the server is well: `None`, or what failed.
    pub async fn check(&mut self) -> Option<Failure> {
        self.checks += 1;
        if let Some(expected) = self.expect_login {
            let failure = self.login_again(expected).await;
            return with_sightings(failure, self.watch.look());
        }
        let failure = match tokio::time::timeout(self.deadline, self.ping_and_select()).await {
            Ok(Ok(())) => None,
            // The connection's own read timeout (the deadline too) is the
            // same silence as the check's.
            Ok(Err(e)) if !matches!(e, ClientError::Timeout { .. }) => {
                self.conn = None;
                Some(failure_of(&e))
            }
            Ok(Err(_)) | Err(_) => {
                self.conn = None;
                let summary = format!(
                    "the server hangs: COM_PING and SELECT 1 on the control connection got no answer within {:.1} s",
                    self.deadline.as_secs_f64()
                );
                Some(Failure { kind: FailureKind::Hang, summary, details: Vec::new() })
            }
        };
        with_sightings(failure, self.watch.look())
    }

    /// The connection is taken out for the check and put back only when
    /// both answers were read to their end. A check is cancelled wherever
    /// it is when the run's time is up or the sessions it watches end; a
    /// connection left inside an answer would hand that answer's rest to
    /// the next check as its own (a column definition read as COM_PING's
    /// answer, a false protocol deviation), so it goes with the check.
    async fn ping_and_select(&mut self) -> Result<(), ClientError> {
        let mut conn = match self.conn.take() {
            Some(conn) => conn,
            None => self.log_in().await?,
        };
        conn.ping().await?;
        conn.query_drop("SELECT 1").await?;
        self.conn = Some(conn);
        Ok(())
    }
}

/// The control connection's options for `target`, naming its database
/// or none.
pub fn control_options(target: &Target, deadline: Duration, with_database: bool) -> ConnectOptions {
    let mut options = ConnectOptions::new(target.endpoint.clone(), &target.user, &target.password);
    if with_database {
        options = options.database(&target.database);
    }
    // Every wait on the server is bounded by the deadline: a login, a
    // COM_INIT_DB or a query the server never answers is a hang to
    // report, never a wait that outlasts the run.
    options.connect_timeout = deadline;
    options.read_timeout = Some(deadline);
    options.write_timeout = Some(deadline);
    options
}

/// The failure a session's internal-error answer is.
pub fn internal_failure(state: &State, error: &InternalError) -> Failure {
    Failure {
        kind: FailureKind::InternalError,
        summary: format!("the server answered {} with an error that betrays an internal fault: {error}", state.step),
        details: vec![format!("internal error: {error}")],
    }
}

/// What a failed check says about the server: only what the server did
/// (refused, closed, reset, silent, an ERR, bytes that break the
/// protocol) decides; what this client cannot do (TLS set-up, a misused
/// API) is no verdict of "down".
pub fn failure_of(error: &ClientError) -> Failure {
    let (kind, summary) = match error {
        ClientError::Io { source, .. } if source.kind() == ErrorKind::ConnectionRefused => {
            (FailureKind::Down, format!("the server is down: connection refused ({error})"))
        }
        ClientError::Io { .. } | ClientError::Closed { .. } => {
            (FailureKind::Down, format!("the server dropped the control connection: {error}"))
        }
        ClientError::Timeout { .. } => (FailureKind::Hang, format!("the server hangs: {error}")),
        ClientError::Server { .. } => {
            (FailureKind::Refusing, format!("the server refuses the control connection: {error}"))
        }
        ClientError::Protocol { .. } | ClientError::Transport { .. } => (
            FailureKind::Deviation,
            format!(
                "the server is up but broke the protocol: the control connection got an answer no client \
                 accepts ({error})"
            ),
        ),
        other => (FailureKind::Refusing, format!("the control connection cannot log in: {other}")),
    };
    Failure { kind, summary, details: Vec::new() }
}

/// Adds what the watch saw to a failure, or makes one of it.
fn with_sightings(failure: Option<Failure>, sightings: Vec<Sighting>) -> Option<Failure> {
    if sightings.is_empty() {
        return failure;
    }
    let mut details = Vec::new();
    let mut kind = None;
    for sighting in &sightings {
        let mut line = String::new();
        let k = match sighting {
            Sighting::ProcessGone { pid } => {
                let _ = write!(line, "server process {pid} is gone");
                FailureKind::ProcessGone
            }
            Sighting::RssGrowth { pid, from_kib, to_kib } => {
                let _ = write!(line, "server process {pid} grew from {} MiB to {} MiB", from_kib / 1024, to_kib / 1024);
                FailureKind::Memory
            }
            Sighting::LogLines(lines) => {
                details.extend(lines.iter().map(|l| format!("server log: {l}")));
                FailureKind::Log
            }
        };
        if !line.is_empty() {
            details.push(line);
        }
        kind.get_or_insert(k);
    }
    match failure {
        Some(mut failure) => {
            failure.details.extend(details);
            Some(failure)
        }
        None => {
            let summary = details.first().cloned().unwrap_or_default();
            Some(Failure { kind: kind.unwrap_or(FailureKind::Log), summary, details })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz::fuzz_options::WatchOptions;
    use crate::fuzz::scripted_server::{ScriptedServer, ServerScript, ANSWER_PAUSE};

    /// The control connection's verdict on a server that does `script`.
    async fn verdict(script: ServerScript) -> Option<Failure> {
        let server = ScriptedServer::start(script).await;
        let watch = ProcessWatch::start(&WatchOptions::default()).unwrap();
        let mut checker = Checker::new(&server.target(), Duration::from_millis(300), watch);
        let failure = checker.check().await;
        let acted = server.acted.load(std::sync::atomic::Ordering::SeqCst);
        assert!(acted || script == ServerScript::Healthy, "{script:?} was not exercised");
        failure
    }

    #[tokio::test]
    async fn the_server_is_judged_by_what_it_did() {
        assert_eq!(verdict(ServerScript::Healthy).await, None);
        let reset = verdict(ServerScript::ResetOnCommand).await.unwrap();
        assert_eq!(reset.kind, FailureKind::Down, "{reset:?}");
        let silent = verdict(ServerScript::SilentOnCommand).await.unwrap();
        assert_eq!(silent.kind, FailureKind::Hang, "{silent:?}");
        let garbled = verdict(ServerScript::GarbledAnswer).await.unwrap();
        assert_eq!(garbled.kind, FailureKind::Deviation, "{garbled:?}");
        assert!(garbled.summary.starts_with("the server is up but broke the protocol"), "{garbled:?}");
    }

    /// node-mysql2's numbering: the server is up and answering. A client
    /// as tolerant as libmariadb accepts it (no failure); a stricter one
    /// may refuse it, but never as the server going down or hanging.
    #[tokio::test]
    async fn live_but_odd_is_not_down() {
        let failure = verdict(ServerScript::ContinuingSequence).await;
        assert!(
            failure.as_ref().is_none_or(|f| f.kind == FailureKind::Deviation),
            "a live server reported as failed: {failure:?}"
        );
    }

    /// A check cancelled mid-answer (the run's time ran out, or the
    /// sessions it watched ended) leaves the rest of the answer on the
    /// connection; the next check must not read it as its own answer (it
    /// once read the column definition of `SELECT 1` as COM_PING's answer:
    /// "column count packet has 22 unexpected trailing bytes").
    #[tokio::test]
    async fn a_cancelled_check_leaves_nothing_behind() {
        let server = ScriptedServer::start(ServerScript::PausedResultSet).await;
        let watch = ProcessWatch::start(&WatchOptions::default()).unwrap();
        let mut checker = Checker::new(&server.target(), Duration::from_secs(30), watch);
        checker.connect().await.unwrap();
        let cancelled = tokio::time::timeout(ANSWER_PAUSE / 2, checker.check()).await;
        assert!(cancelled.is_err(), "the check was to be cancelled inside SELECT 1's answer");
        assert!(server.acted.load(std::sync::atomic::Ordering::SeqCst));
        assert_eq!(checker.check().await, None);
        assert_eq!(checker.check().await, None);
    }

    #[test]
    fn sightings_describe_or_make_a_failure() {
        assert_eq!(with_sightings(None, Vec::new()), None);
        let lines = vec![Sighting::LogLines(vec!["mariadbd got signal 11".into()])];
        let made = with_sightings(None, lines.clone()).unwrap();
        assert_eq!(made.kind, FailureKind::Log);
        assert_eq!(made.summary, "server log: mariadbd got signal 11");
        let down = Failure { kind: FailureKind::Down, summary: "down".into(), details: Vec::new() };
        let described = with_sightings(Some(down), lines).unwrap();
        assert_eq!((described.kind, described.details.len()), (FailureKind::Down, 1));
    }
}
