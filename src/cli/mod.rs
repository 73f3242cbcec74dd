//! The command line: sysbench 1.0.20's, sysbench 0.4/0.5's, and wirebench's
//! own options.
//!
//! Users paste sysbench command lines, so [`parse`] reads them as sysbench
//! does and turns them into one [`Invocation`]:
//!
//! - `[options] TESTNAME COMMAND`, options before or after the words, always
//!   `--name=value` or, for booleans, a bare `--name`; `-` and `_` are the
//!   same in names; lists are comma-separated; `--config-file=FILE` holds
//!   `name=value` lines.
//! - TESTNAME is one of the 11 database scripts of sysbench 1.0.20 ([`Test`]),
//!   bare or as a path to its `.lua` file.
//! - The 0.4/0.5 forms (`--test=oltp`, `--test=tests/db/oltp.lua`,
//!   `--oltp-*`, `--num-threads`, `--max-requests`, ...) run the 0.4/0.5
//!   test ([`Bench::legacy`]), its options renamed to the 1.0 names where
//!   only the name changed; [`Bench::notes`] says, one line per legacy
//!   option, how each was understood. Legacy options wirebench cannot
//!   honour are refused with a [`CliError`] saying so.
//! - What sysbench 1.0.20 refuses, wirebench refuses too (`tests/sysbench/cli.rs`
//!   compares the two); wirebench is stricter where sysbench silently runs
//!   something else (`--threads=+`, `--table-size=abc`, ...).
//! - `wirebench null-server --listen=ADDR --socket=PATH --cpus=LIST` starts
//!   the protocol-level null server instead.
//! - `wirebench fuzz [options]` and `wirebench fuzz-replay FILE [options]`
//!   fuzz a server's protocol handling (`fuzz.rs`).
//! - `wirebench capture import|info` make and read captures (`capture_args.rs`);
//!   `wirebench replay FILE [run|search]` replays one (`replay_args.rs`): a
//!   run's options and replay's own, into a [`Bench`] whose `replay` is set.
//! - `wirebench record` records applications' traffic through a proxy (`record_args.rs`).
//!
//! Layer: the top, with `run` and `src/main.rs`. It reads options into the
//! configuration types the layers below own (`into.rs`, `general.rs`,
//! `test_options.rs`, `fuzz.rs`) and may import client, driver, fuzz, rand,
//! transport and workload for them; nothing but `run` and `src/main.rs` imports it
//! (`tests/offline/layers.rs`).
//!
//! Files:
//! - `raw.rs`: the arguments split into options and words; `argv.rs`:
//!   passwords hidden from `ps`.
//! - `invocation.rs`: from split arguments to an [`Invocation`];
//!   `bench_options.rs`: a test's options read into each layer's
//!   configuration ([`Bench`]); `opts.rs`: the options, each read once;
//!   `value.rs`: one option's text into a value.
//! - `defs.rs`: every option wirebench knows, its kind, default and help.
//! - `test_name.rs`: what a test name refers to; `test_options.rs`: the test
//!   script's options; `general.rs`: sysbench's general options; `into.rs`:
//!   the random, client, TLS and driver options.
//! - `legacy.rs` and `legacy_args.rs`: sysbench 0.4/0.5 command lines and
//!   their options.
//! - `lua_script_args.rs`: a command line naming a Lua script.
//! - `credentials.rs`: the login from the mysql client's sources;
//!   `option_file.rs`: the mysql option files; `small_file.rs`: reading one
//!   safely; `terminal.rs`: the password asked on the terminal.
//! - `search_args.rs`: the `search` command's `--slo` and `--search-*`.
//! - `result_args.rs`: `--format`, `--chart`, `--label`; `server_stats.rs`:
//!   `--server-stats`; `shard_args.rs`: `--shard`, `--shards`, `--start-at`.
//! - `watch_args.rs`: `--metrics-listen`, `--metrics-push`, `--web`,
//!   `--report-html`, and `wirebench report`'s command line.
//! - `compare_args.rs`, `merge_args.rs`, `null_server.rs`, `fuzz.rs`,
//!   `capture_args.rs`, `record_args.rs`, `replay_args.rs`: the other
//!   subcommands' command lines.
//! - `cli_error.rs`: what the parser refuses; `sysbench_refusal.rs`: the
//!   same in sysbench's words; `warnings.rs`: sysbench's warnings about a
//!   line it accepts.
//! - `help.rs`: the help texts; `personality.rs`: wirebench or `sysbench`.
//! - `sysbench_traces.rs` (tests): the statements of the real sysbench,
//!   captured, against wirebench's.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing))]

mod argv;
mod bench_options;
mod capture_args;
mod cli_error;
mod compare_args;
mod credentials;
mod defs;
mod fuzz;
mod general;
mod help;
mod into;
mod invocation;
mod legacy;
mod legacy_args;
mod lua_script_args;
mod merge_args;
mod null_server;
mod option_file;
mod opts;
mod personality;
mod raw;
mod record_args;
mod replay_args;
mod result_args;
mod search_args;
mod server_stats;
mod shard_args;
mod small_file;
mod sysbench_refusal;
#[cfg(test)]
mod sysbench_traces;
mod terminal;
mod test_name;
mod test_options;
mod value;
mod warnings;
mod watch_args;

use std::ffi::OsString;
use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use crate::client::{ServerAddresses, ServerKey};
use crate::driver::{Arrival, EngineOptions, IgnoreErrors, PsMode, RateStages, Shard};
use crate::fuzz::{FuzzOptions, ReplayOptions};
use crate::lua::ScriptCall;
use crate::rand::RandConfig;
use crate::replay::CaptureReplayOptions;
use crate::results::search_record::SearchOptions;
use crate::results::{CompareOptions, MergeOptions, ResultOptions};
use crate::server_stats::ServerStatsOptions;
use crate::transport::tls::TlsOptions;
use crate::watch::{ReportOptions, WatchSettings};
use crate::workload::legacy::{LegacyOptions, LegacyTest};
use crate::workload::{OltpOptions, Test};

pub use argv::hide_passwords_from_ps;
pub use cli_error::{CliError, Refusal};
pub use credentials::CredentialSources;
pub use help::{
    capture_help, compare_help, fuzz_help, fuzz_replay_help, general_help, merge_help, null_server_help, record_help,
    replay_help, report_help, test_help,
};
pub(crate) use personality::SYSBENCH_VERSION_LINE;
pub use personality::{Personality, SYSBENCH_BANNER_LINE};
pub use terminal::TerminalError;
pub use warnings::StartupWarning;

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Invocation {
    /// A sysbench test and command.
    Bench(Box<Bench>),
    /// `wirebench null-server ...`.
    NullServer(NullServerOptions),
    /// `wirebench compare A.json B.json ...`.
    Compare(CompareOptions),
    /// `wirebench compare --help`.
    CompareHelp,
    /// `wirebench merge shard-0.json shard-1.json ...`.
    Merge(MergeOptions),
    /// `wirebench merge --help`.
    MergeHelp,
    /// `wirebench report RESULTS.json --html=FILE`.
    Report(ReportOptions),
    /// `wirebench report --help`.
    ReportHelp,
    /// `--help`: print [`general_help`] (or [`null_server_help`] after
    /// `null-server`) and exit 0.
    Help { null_server: bool },
    /// `wirebench fuzz ...`: protocol fuzzing of a server, and what
    /// watches it (`--metrics-listen`, ...).
    Fuzz(Box<FuzzOptions>, WatchSettings),
    /// `wirebench fuzz-replay FILE ...`.
    FuzzReplay(Box<ReplayOptions>),
    /// `--help` after `fuzz` ([`fuzz_help`]) or `fuzz-replay` ([`fuzz_replay_help`]).
    FuzzHelp { replay: bool },
    /// `wirebench capture import|info ...`.
    Capture(crate::capture::CaptureCommand),
    /// `wirebench capture --help`.
    CaptureHelp,
    /// `wirebench replay --help`.
    ReplayHelp,
    /// `wirebench record ...`: the recording proxy.
    /// `wirebench record`, and what watches it (`--metrics-listen`, ...).
    Record(Box<crate::driver::relay::RecordOptions>, WatchSettings),
    /// `wirebench record --help`.
    RecordHelp,
    /// `--version`.
    Version,
}

/// One sysbench test run (or prepare, prewarm, cleanup, help), with every
/// option resolved to its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Bench {
    /// The sysbench 1.0.20 test; for a 0.4/0.5 line, the one closest to it
    /// (its help, and the rules the notes on its options follow).
    pub test: Test,
    /// For a 0.4/0.5 line, the 0.4/0.5 test that runs instead of `test`.
    pub legacy: Option<LegacyTest>,
    /// The options only the 0.4/0.5 tests have.
    pub legacy_options: LegacyOptions,
    pub command: Command,
    /// Which sysbench's syntax the line was written in.
    pub dialect: Dialect,
    pub general: GeneralOptions,
    /// The `--rand-*` options.
    pub rand: RandConfig,
    pub db: DbOptions,
    pub mysql: MysqlOptions,
    /// The test script's options (`oltp_common.lua` and the two
    /// `select_random_*` scripts).
    pub test_options: OltpOptions,
    pub engine: EngineOptions,
    /// `--format`, `--chart`, `--label`.
    pub results: ResultOptions,
    /// `--server-stats`, `--server-pid`.
    pub server_stats: ServerStatsOptions,
    /// `--metrics-listen`, `--metrics-push`, `--metrics-label`, `--web`,
    /// `--report-html`.
    pub watch: WatchSettings,
    /// The `search` command's `--slo` and `--search-*`; none for the others.
    pub search: Option<SearchOptions>,
    /// A Lua script run by the Lua engine (a `.lua` path that is no
    /// built-in test, or any with `--lua`): its path, command and options.
    pub script: Option<ScriptCall>,
    /// `wirebench replay FILE`: the capture replayed instead of a test.
    pub replay: Option<CaptureReplayOptions>,
    /// What sysbench 1.0.20 warns about this command line (deprecated
    /// options, no limit), in the order it warns.
    pub warnings: Vec<StartupWarning>,
    /// One line per option that was translated (0.4/0.5 and deprecated
    /// options), ignored, or read differently from sysbench 1.0.20, for the
    /// dispatcher to print before the run.
    pub notes: Vec<String>,
}

/// The sysbench version whose command line syntax was used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// sysbench 1.0 (also the master-only options).
    V1_0,
    /// `--test=oltp`: sysbench 0.4's built-in OLTP test.
    V0_4,
    /// `--test=.../tests/db/*.lua` (or `--test=oltp` with 0.5's options):
    /// sysbench 0.5's Lua scripts.
    V0_5,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Command {
    Prepare,
    Prewarm,
    Run,
    /// Find the highest `--rate` that holds the `--slo` bounds: a run per
    /// step.
    Search,
    Cleanup,
    /// Print [`test_help`] for the test and exit 0.
    Help,
}

impl Command {
    pub fn name(self) -> &'static str {
        match self {
            Command::Prepare => "prepare",
            Command::Prewarm => "prewarm",
            Command::Run => "run",
            Command::Search => "search",
            Command::Cleanup => "cleanup",
            Command::Help => "help",
        }
    }

    pub fn from_name(name: &str) -> Option<Command> {
        [Command::Prepare, Command::Prewarm, Command::Run, Command::Search, Command::Cleanup, Command::Help]
            .into_iter()
            .find(|c| c.name() == name)
    }

    /// Whether the command runs the test's events (`run`, and `search`,
    /// which runs them once per step), as against the table commands.
    pub fn runs_events(self) -> bool {
        matches!(self, Command::Run | Command::Search)
    }
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// sysbench's general options, after the deprecated aliases are folded in.
#[derive(Debug, Clone, PartialEq)]
pub struct GeneralOptions {
    /// `--threads`: connections (sysbench: one thread per connection). > 0.
    /// With a list, the largest: what `prepare` and `cleanup` use, and
    /// what the machine must hold.
    pub threads: u32,
    /// `--threads=1,2,4`: a sweep, one `run` step per value, in the order
    /// given; empty for a single value.
    pub sweep: Vec<u32>,
    /// `--sweep-pause`: seconds between the steps of a sweep.
    pub sweep_pause: u32,
    /// `--time` in seconds; `None` for `--time=0` (no limit).
    pub time: Option<u32>,
    /// `--events`; `None` for `--events=0` (no limit).
    pub events: Option<u64>,
    /// `--rate` in events per second; `None` for 0 (as fast as possible).
    pub rate: Option<u32>,
    /// `--report-interval` in seconds; `None` for 0 (no interim reports).
    pub report_interval: Option<u32>,
    /// `--report-checkpoints`, in seconds from the start, sorted.
    pub report_checkpoints: Vec<u32>,
    /// The percentile of sysbench's own lines (1-100): `--percentile`'s
    /// first value when it is whole, else 95; `None` for 0, which disables
    /// percentiles.
    pub percentile: Option<u8>,
    /// Every value of `--percentile` (`50,95,99,99.9`), in order; empty
    /// for 0.
    pub percentiles: Vec<f64>,
    /// `--per-statement`: counts and percentiles per statement kind in the
    /// final report.
    pub per_statement: bool,
    /// `--hdr-log=FILE`: the HdrHistogram interval log.
    pub hdr_log: Option<PathBuf>,
    /// `--rate-arrival`: how `--rate` spaces the events.
    pub rate_arrival: Arrival,
    /// `--rate-stages`: a target that changes over the run, which then
    /// lasts the stages' total (`time` is set to it); `rate` is then `None`.
    pub rate_stages: Option<RateStages>,
    pub histogram: bool,
    pub forced_shutdown: ForcedShutdown,
    /// 0 (critical only) to 5 (debug); `--debug` makes it 5.
    pub verbosity: u8,
    pub debug: bool,
    pub validate: bool,
    /// `--thread-stack-size` in bytes; has no use in wirebench.
    pub thread_stack_size: u64,
    /// `--warmup-time` (sysbench master): seconds run before statistics
    /// start; 0 for none.
    pub warmup_time: u32,
    /// `--thread-init-timeout` (sysbench master; fixed at 30 in 1.0.20).
    pub thread_init_timeout: u32,
    /// `--shard=I/N`: this instance's part of a run over several hosts;
    /// `threads`, `events` and `rate` above are the whole run's.
    pub shard: Shard,
    /// `--start-at`: when the run's events start, on every shard.
    pub start_at: Option<SystemTime>,
}

impl Default for GeneralOptions {
    fn default() -> Self {
        GeneralOptions {
            threads: 1,
            sweep: Vec::new(),
            sweep_pause: 0,
            time: Some(10),
            events: None,
            rate: None,
            report_interval: None,
            report_checkpoints: Vec::new(),
            percentile: Some(95),
            percentiles: vec![95.0],
            per_statement: false,
            hdr_log: None,
            rate_arrival: Arrival::Poisson,
            rate_stages: None,
            histogram: false,
            forced_shutdown: ForcedShutdown::Off,
            verbosity: 3,
            debug: false,
            validate: false,
            thread_stack_size: 64 * 1024,
            warmup_time: 0,
            shard: Shard::WHOLE,
            start_at: None,
            thread_init_timeout: 30,
        }
    }
}

impl GeneralOptions {
    /// Whether events come on a schedule (`--rate`, `--rate-stages`)
    /// rather than as fast as the connections go.
    pub fn open_loop(&self) -> bool {
        self.rate.is_some() || self.rate_stages.is_some()
    }
}

/// `--forced-shutdown`: how long after `--time` to stop a run that does
/// not end by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForcedShutdown {
    Off,
    Seconds(u32),
    /// `N%` of `--time`.
    PercentOfTime(u32),
}

impl ForcedShutdown {
    /// The grace period in seconds, as sysbench computes it; `None` when
    /// there is no forced shutdown (off, or no time limit).
    pub fn grace_secs(self, time: Option<u32>) -> Option<u32> {
        let time = time?;
        match self {
            ForcedShutdown::Off => None,
            ForcedShutdown::Seconds(secs) => Some(secs),
            ForcedShutdown::PercentOfTime(pct) => Some((u64::from(pct) * u64::from(time) / 100) as u32),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DbOptions {
    pub ps_mode: PsMode,
    /// `--db-debug`.
    pub debug: bool,
}

/// `run`'s default `--mysql-read-timeout` and `--mysql-write-timeout`:
/// far longer than any statement a benchmark runs takes (milliseconds;
/// a lock wait ends in error 1205 after innodb_lock_wait_timeout, 50 s),
/// short enough that a server that stopped answering ends a run without
/// `--time` within minutes instead of never (libmysqlclient waits without
/// limit, and so does sysbench). `prepare`, `prewarm` and `cleanup` wait
/// without limit unless told otherwise: a CREATE INDEX or a full scan of a
/// large table takes longer.
pub const RUN_WAIT_TIMEOUT: Duration = Duration::from_secs(600);

/// The `--mysql-*` options, each in the type of the layer that uses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MysqlOptions {
    /// `--mysql-host`, `--mysql-port`, `--mysql-socket`.
    pub servers: ServerAddresses,
    pub user: String,
    pub password: String,
    pub db: String,
    /// `--mysql-ssl*`.
    pub tls: TlsOptions,
    /// `--mysql-server-public-key-path`, `--mysql-get-server-public-key`.
    pub server_key: ServerKey,
    pub compression: bool,
    pub debug: bool,
    pub ignore_errors: IgnoreErrors,
    pub dry_run: bool,
    /// `--mysql-connect-timeout`: `None` for no limit.
    pub connect_timeout: Option<Duration>,
    /// `--mysql-read-timeout`: `None` for no limit.
    pub read_timeout: Option<Duration>,
    /// `--mysql-write-timeout`: `None` for no limit.
    pub write_timeout: Option<Duration>,
}

impl Default for MysqlOptions {
    /// sysbench's: user and database `sbtest`, no password.
    fn default() -> Self {
        MysqlOptions {
            servers: ServerAddresses::default(),
            user: "sbtest".to_owned(),
            password: String::new(),
            db: "sbtest".to_owned(),
            tls: TlsOptions::default(),
            server_key: ServerKey::default(),
            compression: false,
            debug: false,
            ignore_errors: IgnoreErrors::default(),
            dry_run: false,
            connect_timeout: Some(Duration::from_secs(30)),
            read_timeout: Some(RUN_WAIT_TIMEOUT),
            write_timeout: Some(RUN_WAIT_TIMEOUT),
        }
    }
}

/// `wirebench null-server`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NullServerOptions {
    /// `--listen=ADDR`: the TCP address (`127.0.0.1:3307`,
    /// `[::1]:3307`, or a bare port for 127.0.0.1).
    pub listen: Option<SocketAddr>,
    /// `--socket=PATH`.
    pub socket: Option<PathBuf>,
    pub cpus: Option<Vec<usize>>,
    /// `--delay-us`: every answer waits this many microseconds.
    pub delay_us: u64,
    /// `--wait-timeout`: seconds of silence that close a connection; 0 never.
    pub wait_timeout_s: u64,
    /// `--serial`: one command at a time over all connections, each taking
    /// `--delay-us`, so that the server holds exactly 1/delay per second.
    pub serial: bool,
}

/// Parses the arguments that follow the program name (`std::env::args_os()
/// .skip(1)`), by themselves: no environment, no `~/.my.cnf`, no terminal.
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Invocation, CliError> {
    parse_with(args, &CredentialSources::none())
}

/// Parses the arguments, completing the login from `sources` (the mysql
/// client's option files and environment, the terminal) as `credentials.rs`
/// describes.
pub fn parse_with(
    args: impl IntoIterator<Item = OsString>,
    sources: &CredentialSources,
) -> Result<Invocation, CliError> {
    read(args, sources).map_err(|refusal| refusal.error)
}

/// [`parse_with`], a refusal coming with the `--verbosity` the command line
/// gave, for `main` to show it as sysbench would.
pub fn read(args: impl IntoIterator<Item = OsString>, sources: &CredentialSources) -> Result<Invocation, Refusal> {
    let args = args
        .into_iter()
        .map(unicode_arg)
        .collect::<Result<Vec<String>, CliError>>()
        .map_err(|error| Refusal { error, verbosity: 3 })?;
    invocation::read_invocation(raw::split(args), sources)
}

/// An argument as text, or the refusal naming it (a password's value not
/// shown).
fn unicode_arg(arg: OsString) -> Result<String, CliError> {
    arg.into_string().map_err(|bad| {
        let shown = bad.to_string_lossy();
        let secret = shown.strip_prefix("--").and_then(|option| option.split_once('=')).map(|(name, _)| name);
        match secret.filter(|name| defs::is_secret(&defs::key(name))) {
            Some(name) => CliError::NotUnicode(format!("--{name}=(hidden)")),
            None => CliError::NotUnicode(shown.into_owned()),
        }
    })
}
