//! Failure detection. A server that closes a bad connection is behaving,
//! not failing: servers legitimately drop connections on malformed
//! packets. So the fuzzed connections never decide; a separate control
//! connection does, logged in normally: COM_PING and `SELECT 1` must be
//! answered within the deadline. Refused, reset or unanswered, the server
//! has failed (a hang is a failure too). The watch of the process and the
//! log (`process_watch.rs`) confirms and describes.

use std::fmt::Write as _;
use std::io::ErrorKind;
use std::time::Duration;

use super::fuzz_options::Target;
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
        }
    }

    pub fn from_name(name: &str) -> Option<FailureKind> {
        [
            FailureKind::Down,
            FailureKind::Hang,
            FailureKind::Refusing,
            FailureKind::ProcessGone,
            FailureKind::Memory,
            FailureKind::Log,
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
}

impl Checker {
    pub fn new(target: &Target, deadline: Duration, watch: ProcessWatch) -> Checker {
        let mut options =
            ConnectOptions::new(target.endpoint.clone(), &target.user, &target.password).database(&target.database);
        options.connect_timeout = deadline;
        Checker { options, conn: None, deadline, watch, checks: 0, server_version: String::new() }
    }

    /// Logs in the control connection, before fuzzing starts.
    pub async fn connect(&mut self) -> Result<(), ClientError> {
        let conn = Connection::connect(&self.options).await?;
        self.server_version.clone_from(&conn.login().server_version);
        self.conn = Some(conn);
        Ok(())
    }

    /// After a restart: a new connection, a new process, the log from here.
    pub fn rebase(&mut self) {
        self.conn = None;
        self.watch.rebase();
    }

    /// Whether the server is well: `None`, or what failed.
    pub async fn check(&mut self) -> Option<Failure> {
        self.checks += 1;
        let failure = match tokio::time::timeout(self.deadline, self.ping_and_select()).await {
            Ok(Ok(())) => None,
            Ok(Err(e)) => {
                self.conn = None;
                Some(failure_of(&e))
            }
            Err(_) => {
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

    async fn ping_and_select(&mut self) -> Result<(), ClientError> {
        if self.conn.is_none() {
            self.connect().await?;
        }
        let Some(conn) = &mut self.conn else { return Ok(()) };
        conn.ping().await?;
        conn.query_drop("SELECT 1").await?;
        Ok(())
    }
}

fn failure_of(error: &ClientError) -> Failure {
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
        other => (FailureKind::Down, format!("the control connection failed: {other}")),
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
