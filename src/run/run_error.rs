//! Why a command failed, printed by `main` as `FATAL: ...`; each says what
//! to do where there is something to do.

use std::io;
use std::path::PathBuf;

use super::missing_table::TableCensus;
use super::output::OutputError;
use crate::client::ClientError;
use crate::driver::{CpuUnavailable, DriverError, OpenError, UringUnavailable};
use crate::rand::RandConfigError;
use crate::results::shard_merge::MergeError;
use crate::results::{ChartError, CompareError};
use crate::transport::tls::TlsConfigError;
use crate::workload::{MarkerMismatch, OptionsError};

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("--idle-connections needs a server, and --mysql-dry-run connects to none: drop one of them")]
    IdleDryRun,
    #[error(transparent)]
    IdleSetup(#[from] crate::driver::IdleSetupError),
    /// `--metrics-listen`, `--web`, `--report-html`.
    #[error(transparent)]
    Watch(#[from] crate::watch::WatchError),
    /// `wirebench report`, `compare --report-html`.
    #[error(transparent)]
    Report(#[from] ReportError),
    /// The test's options make no workload.
    #[error(transparent)]
    Options(#[from] OptionsError),
    #[error(transparent)]
    Rand(#[from] RandConfigError),
    #[error("{0} (see docs/tls.md)")]
    Tls(#[from] TlsConfigError),
    #[error("--mysql-ssl: cannot tell the current directory: {0}")]
    CurrentDir(io::Error),
    #[error("cannot start the set-up runtime: {0}")]
    Runtime(io::Error),
    #[error("cannot watch for SIGINT and SIGTERM: {0}")]
    Signals(io::Error),
    #[error(
        "--threads={threads}{} needs {needed} open files (a socket per connection, and some for wirebench itself), \
         and this process may open at most {limit}: raise the hard limit (ulimit -Hn, LimitNOFILE= of a systemd \
         unit, /etc/security/limits.conf) or use fewer connections",
        with_idle(*idle)
    )]
    OpenFiles { threads: u32, idle: u64, needed: u64, limit: u64 },
    #[error("cannot read or raise the open-files limit (RLIMIT_NOFILE): {0}")]
    FileLimit(io::Error),
    #[error(
        "--threads={threads} needs about {} of memory (at least 18 KiB per connection), and this machine has {} \
         available: use fewer --threads, or spread them over several client hosts",
        gib(*needed), gib(*available)
    )]
    Memory { threads: u32, needed: u64, available: u64 },
    /// A connection could not be opened; the hint says what to check.
    #[error("unable to connect: {error}{}", connect_hint(.error))]
    Connect { error: ClientError },
    /// `--prepare-method=load-data` against a server that refuses it.
    #[error(
        "--prepare-method=load-data: {reason}; run prepare with --prepare-method=insert (or auto, which falls back \
         to INSERTs), or allow it on the server"
    )]
    LoadDataRefused { reason: String },
    /// `--prepare-method=bulk-execute` against a server that has no
    /// COM_STMT_BULK_EXECUTE.
    #[error(
        "--prepare-method=bulk-execute: {reason}; run prepare with --prepare-method=auto (which takes LOAD DATA or \
         INSERTs where the server has no bulk execute) or --prepare-method=insert"
    )]
    BulkExecuteRefused { reason: String },
    /// A statement of `prepare`, `prewarm` or `cleanup` failed.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// `prepare` met one of the tables it makes (ERROR 1050).
    #[error(
        "{error}; the test's tables are there from an earlier prepare: run cleanup with the same options to drop \
         them, then prepare again (or run against them as they are)"
    )]
    TableExists { error: ClientError },
    /// A table the command uses is not there (ERROR 1146), and what the
    /// database holds of the test's tables.
    #[error("{error}; {census}")]
    MissingTable { error: Box<RunError>, census: TableCensus },
    /// The SQL run after login, or a statement's PREPARE, failed.
    #[error(transparent)]
    Open(Box<OpenError>),
    #[error(transparent)]
    Emulated(#[from] MarkerMismatch),
    #[error("cannot encode the execute of {sql:?}: {source}")]
    Encode { sql: String, source: wirebench_protocol::UsageError },
    #[error("a set-up task failed: {0}")]
    Task(#[from] tokio::task::JoinError),
    #[error("cannot hand a connection's socket to its event loop: {0}")]
    Socket(io::Error),
    #[error(transparent)]
    Backend(#[from] UringUnavailable),
    #[error(transparent)]
    Cpus(#[from] CpuUnavailable),
    #[error("cannot start the event loops: {0}")]
    SpawnLoops(io::Error),
    /// The search's client was its limit: no rate is the server's.
    #[error(
        "search stopped at step {step}: the client was the limit ({why}); the highest rate that held the bounds \
         before it was {}, which says nothing of the server's capacity. Give the client more: more --cpus for \
         its event loops, fewer other tasks on its cores, or find the rate with --rate-stages over --shard on \
         more client hosts (docs/search.md)",
        .passed.map_or("none".to_owned(), |r| format!("{r}/s"))
    )]
    SearchClientBound { step: u32, why: String, passed: Option<u32> },
    /// No rate the search tried held the bounds.
    #[error(
        "search: no rate held the bounds, down to {lowest}/s ({why}): loosen --slo, raise --search-max-errors if \
         errors are expected, or check the server with a short run --rate={lowest}"
    )]
    SearchNoRate { lowest: u32, why: String },
    /// `--search-steps` ran out before any rate held the bounds.
    #[error(
        "search: --search-steps={steps} ran out before any rate held the bounds; the lowest tried, {lowest}/s, \
         failed ({why}): raise --search-steps, loosen --slo, or check the server with a short run --rate={lowest}"
    )]
    SearchStepsRanOut { steps: u32, lowest: u32, why: String },
    /// No speed a replay's search tried held the bounds.
    #[error(
        "replay search: no speed held the bounds ({why}): loosen --slo, raise --search-max-errors if errors are \
         expected, or look at a replay at --speed=1 (its per-statement table shows what is slow)"
    )]
    ReplaySearchNoSpeed { why: String },
    /// `search` without its options (a command line made in code).
    #[error("search needs --slo: give the latency bounds, e.g. --slo=99:5")]
    SearchWithoutSlo,
    #[error(transparent)]
    Driver(#[from] DriverError),
    #[error(transparent)]
    HdrLog(#[from] crate::stats::HdrLogError),
    /// A Lua script could not be loaded, or one of its functions failed.
    #[error(transparent)]
    Script(#[from] crate::lua::ScriptError),
    #[error(transparent)]
    ScriptText(#[from] super::script_text::ScriptTextError),
    /// An engine option the Lua engine does not honour yet.
    #[error(
        "{0} does not apply to a Lua script yet (its threads send one query at a time, as sysbench's do): drop it \
         (see docs/lua.md)"
    )]
    NotForScripts(&'static str),
    #[error(
        "--per-statement does not apply to a Lua script: its statements have no kind (the built-in tests' point \
         selects, ranges, updates, ...), so the table would be empty; drop it (see docs/lua.md)"
    )]
    PerStatementForScripts,
    #[error(
        "--cpus and --lua-thread-per-state go against each other: --cpus pins the loop threads a script's states \
         share, --lua-thread-per-state gives each state an unpinned thread of its own; drop one (see docs/lua.md)"
    )]
    CpusWithThreadPerState,
    #[error(
        "--start-at is {ago_s:.0} s in the past: give an instant a little ahead of the time every shard needs to \
         connect, such as $(( $(date +%s) + 30 )) (see docs/shards.md)"
    )]
    StartAtPassed { ago_s: f64 },
    #[error(
        "--shard splits a script's run only: its '{command}' command is the script's own code, which every shard \
         would run whole; run it once, from one host, without --shard (see docs/lua.md)"
    )]
    ShardedScriptCommand { command: String },
    #[error("an event loop panicked; please report it with the command line")]
    LoopPanicked,
    /// `--server-stats` was asked for and its sampler cannot start.
    #[error(transparent)]
    ServerStats(#[from] crate::server_stats::SamplerError),
    #[error(transparent)]
    Chart(#[from] ChartError),
    #[error(transparent)]
    Compare(#[from] CompareError),
    /// `wirebench merge`'s files are not one run's shards, or unreadable.
    #[error("{0} (see docs/shards.md)")]
    Merge(#[from] MergeError),
    #[error("cannot replay {}: {source} (give a capture written by wirebench capture import or wirebench record)", .path.display())]
    CaptureFile { path: std::path::PathBuf, source: io::Error },
    #[error("cannot replay {}: {error}", .path.display())]
    CaptureUnreadable { path: std::path::PathBuf, error: wirebench_capture::format::ReadError },
    /// The capture's reading stopped at damage: the report is of what was
    /// before it.
    #[error("{}: {error}", .path.display())]
    CaptureDamaged { path: std::path::PathBuf, error: wirebench_capture::format::ReadError },
    /// The server refused a replay login before anything was replayed.
    #[error("replay: the server refused the login as {user}, which replays {stands_for}: {error}; {hint}")]
    ReplayLogin { user: String, stands_for: String, hint: String, error: Box<ClientError> },
    /// Logins refused during the replay (a captured database the login
    /// may not use, the server's max_connections): their connections were
    /// not replayed; the report names them.
    #[error(
        "replay: {connections} connection(s) could not log in, and their commands were not replayed (the report \
         names the logins and the server's errors): give the logins access (--user-map for a captured user), or \
         raise the server's max_connections"
    )]
    ReplayLoginsRefused { connections: u64 },
    /// The report could not be written; `main` exits with
    /// [`OutputError::exit_status`].
    #[error(transparent)]
    Output(#[from] OutputError),
}

impl RunError {
    /// The message of the server's error `code`, when this is one: a
    /// statement of the set-up, a statement's PREPARE, or an event's.
    pub(super) fn server_error(&self, code: u16) -> Option<&str> {
        let error = match self {
            RunError::Client(error) | RunError::TableExists { error } => error.server_error(),
            RunError::Open(open) => match &**open {
                OpenError::Init { source, .. } | OpenError::Prepare { source, .. } => source.server_error(),
                OpenError::Connect(_) | OpenError::GivenUp => None,
            },
            RunError::Driver(DriverError::Statement(failed)) => Some(&failed.error),
            _ => None,
        };
        error.filter(|e| e.code == code).map(|e| e.message.as_str())
    }

    /// An error of `prepare`, with the advice for a table that exists.
    pub(super) fn of_prepare(self) -> RunError {
        match self {
            RunError::Client(error) if error.server_error().is_some_and(|e| e.code == TABLE_EXISTS) => {
                RunError::TableExists { error }
            }
            other => other,
        }
    }
}

/// MySQL's and MariaDB's "Table 'name' already exists".
const TABLE_EXISTS: u16 = 1050;

impl From<OpenError> for RunError {
    fn from(error: OpenError) -> Self {
        match error {
            OpenError::Connect(error) => RunError::Connect { error },
            other => RunError::Open(Box::new(other)),
        }
    }
}

fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / f64::from(1u32 << 30))
}

/// sysbench's advice for a connection error, where one applies.
fn connect_hint(error: &ClientError) -> &'static str {
    if let ClientError::SelectDatabase { .. } = error {
        // Its message already says to create the database.
        return "; check --mysql-db";
    }
    match error.server_error().map(|e| e.code) {
        Some(1040) => "; the server's max_connections is reached: raise it or use fewer --threads",
        Some(1045) => {
            "; check --mysql-user and --mysql-password (an account that REQUIREs SSL or X509 also needs --mysql-ssl, \
             and X509 a client certificate)"
        }
        Some(1044 | 1049) => "; check --mysql-db (create the database first)",
        _ => match error {
            ClientError::Io { .. } | ClientError::Timeout { .. } => {
                "; check --mysql-host/--mysql-port/--mysql-socket and that the server is running"
            }
            _ => "",
        },
    }
}

/// `--idle-connections`' part of a count of connections, if any.
pub(super) fn with_idle(idle: u64) -> String {
    if idle == 0 {
        return String::new();
    }
    format!(" with --idle-connections={idle}")
}

/// Why saved results cannot be made into a page; each names the file.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("cannot read {}: {source}", .path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error(
        "{} line {line} is not a wirebench JSON result ({source}): report reads what `wirebench ... --format=json \
         run > FILE` writes",
        .path.display()
    )]
    NotAResult { path: PathBuf, line: usize, source: serde_json::Error },
    #[error(
        "{} holds no result (a run stopped before its report?): report needs what a --format=json run writes",
        .path.display()
    )]
    Empty { path: PathBuf },
    #[error("cannot write {}: {source}", .path.display())]
    Write { path: PathBuf, source: std::io::Error },
}
