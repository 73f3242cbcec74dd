//! The fuzzer's configuration, which it owns: `cli` reads the command line
//! into it (`cli/fuzz.rs`).

use std::path::PathBuf;
use std::time::Duration;

use super::internal_error::InternalErrors;
use crate::client::Endpoint;

/// The server under test and how to log in to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub endpoint: Endpoint,
    pub user: String,
    pub password: String,
    /// The only database any packet names.
    pub database: String,
    /// `--mysql-compression=on`: logins ask for the compressed protocol.
    pub compression: bool,
}

/// Where the server's process is, for `--server-pid`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PidSource {
    Pid(u32),
    /// A pid file, read again after each restart.
    File(PathBuf),
}

/// What besides the control connection watches the server.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WatchOptions {
    /// `--server-pid`: the process must stay alive and its RSS must not
    /// grow by more than `rss_growth`.
    pub pid: Option<PidSource>,
    /// `--server-rss-growth`, in bytes.
    pub rss_growth: u64,
    /// `--server-log`: new lines with "got signal", "Assertion" or
    /// "AddressSanitizer" are a failure.
    pub log: Option<PathBuf>,
}

/// `wirebench fuzz`.
#[derive(Debug, Clone, PartialEq)]
pub struct FuzzOptions {
    pub target: Target,
    /// `--threads`: fuzzed connections at once.
    pub threads: u32,
    /// `--time`; `None` for no limit.
    pub time: Option<Duration>,
    /// `--fuzz-overtime`: how long past `--time` a failure found before
    /// it may take to be confirmed, minimised and saved.
    pub overtime: Duration,
    /// `--rand-seed`; 0 picks one from the clock (and prints it).
    pub seed: u64,
    /// `--report-interval`; `None` for no interim lines.
    pub report_interval: Option<Duration>,
    /// `--fuzz-dir`: where reproducers go.
    pub fuzz_dir: PathBuf,
    pub watch: WatchOptions,
    /// `--restart-cmd`: run through `sh -c` to bring a failed server back.
    pub restart_cmd: Option<String>,
    /// `--keep-going`: go on after a failure.
    pub keep_going: bool,
    /// `--fuzz-allow-remote`.
    pub allow_remote: bool,
    /// `--fuzz-deadline`: how long the control connection waits for an
    /// answer before the server counts as hung.
    pub deadline: Duration,
    /// `--fuzz-restart-wait`: how long a restarted server may take to
    /// answer again.
    pub restart_wait: Duration,
    /// The built-in patterns of internal errors and `--internal-error-pattern`'s.
    pub internal_errors: InternalErrors,
    /// `--pre-auth`: fuzz only what comes before the login's answer, even
    /// when the login works.
    pub pre_auth: bool,
    /// `--seed-capture`: a capture file whose sessions the corpus starts
    /// from, besides the seeds ([`read_capture_sessions`](super::capture_seeds::read_capture_sessions)).
    pub seed_capture: Option<PathBuf>,
}

/// `wirebench fuzz-replay FILE`.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayOptions {
    pub file: PathBuf,
    /// The server and the account's password. Its user, database and
    /// compression are the command line's or their defaults: the
    /// reproducer's packets name their own, which win unless `given` says
    /// the command line named them too (then the two must agree).
    pub target: Target,
    pub given: GivenOptions,
    pub watch: WatchOptions,
    pub allow_remote: bool,
    /// `--fuzz-deadline`; `None`: the deadline that detected the failure,
    /// as the reproducer records it (else [`DEFAULT_DEADLINE`]).
    pub deadline: Option<Duration>,
    /// `--emit=...`: write a stand-alone program instead of replaying.
    pub emit: Option<Emit>,
    /// `--internal-error-pattern`s, besides the reproducer's own.
    pub internal_errors: InternalErrors,
}

/// Which of the options a reproducer also records the command line gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GivenOptions {
    pub user: bool,
    pub database: bool,
    pub compression: bool,
}

/// What `fuzz-replay --emit` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Emit {
    /// A Python 3 script using the standard library only.
    Python,
}

/// The default `--fuzz-overtime`.
pub const DEFAULT_OVERTIME: Duration = Duration::from_secs(120);
/// The default `--fuzz-restart-wait`.
pub const DEFAULT_RESTART_WAIT: Duration = Duration::from_secs(60);
/// The default `--fuzz-deadline`.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(5);
/// The default `--server-rss-growth`: 1 GiB.
pub const DEFAULT_RSS_GROWTH: u64 = 1 << 30;
