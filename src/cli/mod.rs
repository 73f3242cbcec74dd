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
//!   `--oltp-*`, `--num-threads`, `--max-requests`, ...) are mapped onto the
//!   1.0 test and options; [`Bench::notes`] says, one line per legacy option,
//!   how each was understood. Legacy options with no 1.0 equivalent are
//!   refused with a [`CliError`] saying so.
//! - What sysbench 1.0.20 refuses, wirebench refuses too (`tests/cli.rs`
//!   compares the two); wirebench is stricter where sysbench silently runs
//!   something else (`--threads=+`, `--table-size=abc`, ...).
//! - `wirebench null-server --listen=ADDR --socket=PATH --cpus=LIST` starts
//!   the protocol-level null server instead.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing))]

mod build;
mod defs;
mod error;
mod help;
mod legacy;
mod null_server;
mod raw;
mod test_name;
mod value;

use std::ffi::OsString;
use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::str::FromStr;

use crate::client::Endpoint;
use crate::driver::{EngineOptions, IgnoreErrors, PsMode};
use crate::rand::{Distribution, RandConfig};

pub use error::CliError;
pub use help::{general_help, null_server_help, test_help};

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Invocation {
    /// A sysbench test and command.
    Bench(Box<Bench>),
    /// `wirebench null-server ...`.
    NullServer(NullServerOptions),
    /// `--help`: print [`general_help`] (or [`null_server_help`] after
    /// `null-server`) and exit 0.
    Help { null_server: bool },
    /// `--version`.
    Version,
}

/// One sysbench test run (or prepare, prewarm, cleanup, help), with every
/// option resolved to its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Bench {
    pub test: Test,
    pub command: Command,
    /// Which sysbench's syntax the line was written in, for a workload that
    /// wants to emulate 0.4/0.5 details the 1.0 test does not have (one
    /// table named sbtest, `SELECT pad`, ...).
    pub dialect: Dialect,
    pub general: GeneralOptions,
    pub rand: RandOptions,
    pub db: DbOptions,
    pub mysql: MysqlOptions,
    pub test_options: TestOptions,
    pub engine: EngineOptions,
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
    /// `--test=.../tests/db/*.lua`: sysbench 0.5's Lua scripts.
    V0_5,
}

/// The 11 database scripts of sysbench 1.0.20.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Test {
    OltpReadOnly,
    OltpReadWrite,
    OltpWriteOnly,
    OltpPointSelect,
    OltpUpdateIndex,
    OltpUpdateNonIndex,
    OltpDelete,
    OltpInsert,
    SelectRandomPoints,
    SelectRandomRanges,
    BulkInsert,
}

impl Test {
    pub const ALL: [Test; 11] = [
        Test::OltpReadOnly,
        Test::OltpReadWrite,
        Test::OltpWriteOnly,
        Test::OltpPointSelect,
        Test::OltpUpdateIndex,
        Test::OltpUpdateNonIndex,
        Test::OltpDelete,
        Test::OltpInsert,
        Test::SelectRandomPoints,
        Test::SelectRandomRanges,
        Test::BulkInsert,
    ];

    /// The script name (`oltp_read_write`).
    pub fn name(self) -> &'static str {
        match self {
            Test::OltpReadOnly => "oltp_read_only",
            Test::OltpReadWrite => "oltp_read_write",
            Test::OltpWriteOnly => "oltp_write_only",
            Test::OltpPointSelect => "oltp_point_select",
            Test::OltpUpdateIndex => "oltp_update_index",
            Test::OltpUpdateNonIndex => "oltp_update_non_index",
            Test::OltpDelete => "oltp_delete",
            Test::OltpInsert => "oltp_insert",
            Test::SelectRandomPoints => "select_random_points",
            Test::SelectRandomRanges => "select_random_ranges",
            Test::BulkInsert => "bulk_insert",
        }
    }

    pub fn from_name(name: &str) -> Option<Test> {
        Test::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Whether the script is built on `oltp_common.lua` (every test but
    /// bulk_insert), which gives it the common options and `prewarm`.
    pub fn uses_oltp_common(self) -> bool {
        self != Test::BulkInsert
    }
}

impl fmt::Display for Test {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Test {
    type Err = CliError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Test::from_name(s).ok_or_else(|| CliError::UnknownTest {
            name: s.to_owned(),
            suggestion: defs::closest(s, Test::ALL.iter().map(|t| t.name())).map(str::to_owned),
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Command {
    Prepare,
    Prewarm,
    Run,
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
            Command::Cleanup => "cleanup",
            Command::Help => "help",
        }
    }

    pub fn from_name(name: &str) -> Option<Command> {
        [Command::Prepare, Command::Prewarm, Command::Run, Command::Cleanup, Command::Help]
            .into_iter()
            .find(|c| c.name() == name)
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
    pub threads: u32,
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
    /// `--percentile` (1-100); `None` for 0, which disables it.
    pub percentile: Option<u8>,
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
}

impl Default for GeneralOptions {
    fn default() -> Self {
        GeneralOptions {
            threads: 1,
            time: Some(10),
            events: None,
            rate: None,
            report_interval: None,
            report_checkpoints: Vec::new(),
            percentile: Some(95),
            histogram: false,
            forced_shutdown: ForcedShutdown::Off,
            verbosity: 3,
            debug: false,
            validate: false,
            thread_stack_size: 64 * 1024,
            warmup_time: 0,
            thread_init_timeout: 30,
        }
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

/// The `--rand-*` options.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RandOptions {
    /// `--rand-type`.
    pub rand_type: Distribution,
    pub spec_iter: u32,
    pub spec_pct: u32,
    pub spec_res: u32,
    pub pareto_h: f64,
    /// `--rand-zipfian-exp` (sysbench master).
    pub zipfian_exp: f64,
    /// `--rand-seed`; 0 seeds from the time.
    pub seed: i32,
}

impl RandOptions {
    pub fn config(&self) -> RandConfig {
        RandConfig {
            distribution: self.rand_type,
            spec_iter: self.spec_iter,
            spec_pct: self.spec_pct,
            spec_res: self.spec_res,
            pareto_h: self.pareto_h,
            zipfian_exp: self.zipfian_exp,
        }
    }
}

impl Default for RandOptions {
    fn default() -> Self {
        let config = RandConfig::default();
        RandOptions {
            rand_type: config.distribution,
            spec_iter: config.spec_iter,
            spec_pct: config.spec_pct,
            spec_res: config.spec_res,
            pareto_h: config.pareto_h,
            zipfian_exp: config.zipfian_exp,
            seed: 0,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DbOptions {
    pub ps_mode: PsMode,
    /// `--db-debug`.
    pub debug: bool,
}

/// The `--mysql-*` options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MysqlOptions {
    /// Never empty.
    pub hosts: Vec<String>,
    /// Never empty.
    pub ports: Vec<u16>,
    /// When not empty, every connection uses these and `hosts`/`ports` are
    /// not used.
    pub sockets: Vec<PathBuf>,
    pub user: String,
    pub password: String,
    pub db: String,
    /// `--mysql-ssl`.
    pub ssl: SslMode,
    /// `--mysql-ssl-cipher`: OpenSSL cipher names separated by `:`; empty
    /// for the defaults.
    pub ssl_cipher: String,
    /// `--mysql-ssl-key/-cert/-ca` (sysbench master). sysbench 1.0.20 uses
    /// `client-key.pem`, `client-cert.pem` and `cacert.pem` in the current
    /// directory when `--mysql-ssl=on`.
    pub ssl_key: Option<PathBuf>,
    pub ssl_cert: Option<PathBuf>,
    pub ssl_ca: Option<PathBuf>,
    pub compression: bool,
    pub debug: bool,
    pub ignore_errors: IgnoreErrors,
    pub dry_run: bool,
}

impl Default for MysqlOptions {
    fn default() -> Self {
        MysqlOptions {
            hosts: vec!["localhost".to_owned()],
            ports: vec![3306],
            sockets: Vec::new(),
            user: "sbtest".to_owned(),
            password: String::new(),
            db: "sbtest".to_owned(),
            ssl: SslMode::Disabled,
            ssl_cipher: String::new(),
            ssl_key: None,
            ssl_cert: None,
            ssl_ca: None,
            compression: false,
            debug: false,
            ignore_errors: IgnoreErrors::default(),
            dry_run: false,
        }
    }
}

impl MysqlOptions {
    /// Where the `n`th connection (in connection order, from 0) goes, as
    /// sysbench's `mysql_drv_connect` assigns them: sockets round-robin when
    /// any are given, else every port of the first host, then every port of
    /// the next host, and around again.
    ///
    /// Caveat for the caller: libmysqlclient reads host `localhost` as "the
    /// default unix socket", which sysbench's default `--mysql-host` relies
    /// on; this returns it as TCP `localhost:port`.
    pub fn endpoint(&self, n: usize) -> Endpoint {
        if !self.sockets.is_empty() {
            let path = self.sockets.get(n % self.sockets.len()).cloned().unwrap_or_default();
            return Endpoint::unix(path);
        }
        let ports = self.ports.len().max(1);
        let port = self.ports.get(n % ports).copied().unwrap_or(3306);
        let host_index = (n / ports) % self.hosts.len().max(1);
        let host = self.hosts.get(host_index).cloned().unwrap_or_else(|| "localhost".to_owned());
        Endpoint::tcp(host, port)
    }
}

/// `--mysql-ssl`: sysbench 1.0.20's on/off, or one of sysbench master's
/// modes (the MySQL client's `--ssl-mode` values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SslMode {
    /// `off`, `DISABLED`: no TLS.
    #[default]
    Disabled,
    /// `on`, as sysbench 1.0.20: TLS with `client-key.pem`, `client-cert.pem`
    /// and `cacert.pem` from the current directory, each used when present.
    On,
    /// TLS when the server offers it, else plain text.
    Preferred,
    /// TLS; the server's certificate is checked only against a CA given.
    Required,
    /// TLS; the server's certificate must be signed by `--mysql-ssl-ca`.
    VerifyCa,
    /// As `VerifyCa`, and the certificate must name the host connected to.
    VerifyIdentity,
}

impl SslMode {
    /// The spellings `--mysql-ssl` takes besides sysbench's booleans.
    pub const NAMES: [(&'static str, SslMode); 5] = [
        ("DISABLED", SslMode::Disabled),
        ("PREFERRED", SslMode::Preferred),
        ("REQUIRED", SslMode::Required),
        ("VERIFY_CA", SslMode::VerifyCa),
        ("VERIFY_IDENTITY", SslMode::VerifyIdentity),
    ];

    pub fn enabled(self) -> bool {
        self != SslMode::Disabled
    }
}

impl std::fmt::Display for SslMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = match self {
            SslMode::On => "on",
            mode => SslMode::NAMES.iter().find(|(_, m)| m == mode).map_or("?", |(name, _)| name),
        };
        f.write_str(name)
    }
}

/// The test scripts' options (`oltp_common.lua` and the two
/// `select_random_*` scripts), with their sysbench defaults: the workloads'
/// own option set, filled from the command line.
pub type TestOptions = crate::workload::OltpOptions;

/// `wirebench null-server`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NullServerOptions {
    /// `--listen=ADDR[,ADDR...]`: TCP addresses (`127.0.0.1:3307`,
    /// `[::1]:3307`, or a bare port for 127.0.0.1).
    pub listen: Vec<SocketAddr>,
    /// `--socket=PATH`.
    pub socket: Option<PathBuf>,
    pub cpus: Option<Vec<usize>>,
}

/// Parses the arguments that follow the program name (`std::env::args_os()
/// .skip(1)`).
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Invocation, CliError> {
    let args = args
        .into_iter()
        .map(|arg| arg.into_string().map_err(|bad| CliError::NotUnicode(bad.to_string_lossy().into_owned())))
        .collect::<Result<Vec<String>, CliError>>()?;
    build::invocation(raw::split(args))
}
