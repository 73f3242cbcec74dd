//! From the command line's options into each layer's own configuration:
//! the random generator's ([`RandConfig`]), the client's servers, the TLS
//! transport's, and the driver's (error handling, engine, prepared
//! statements). With `test_options.rs` (the workload's options), this is
//! where option text becomes the layers' types.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::cli_error::CliError;
use super::opts::{master_note, Opts, INT_MAX};
use super::raw::RawOpt;
use super::{value, Command, DbOptions, MysqlOptions, RUN_WAIT_TIMEOUT};
use crate::client::{ServerAddresses, ServerKey};
use crate::driver::{EngineOptions, IgnoreErrors, IoBackend, PollMode, PsMode};
use crate::rand::{Distribution, RandConfig};
use crate::transport::tls::TlsOptions;
use crate::workload::PrepareMethod;

/// The `--rand-*` options.
pub(crate) fn rand_config(opts: &Opts, notes: &mut Vec<String>) -> Result<RandConfig, CliError> {
    let mut rand = RandConfig::default();
    if let Some(opt) = opts.get("rand_type") {
        let text = value::text(opt, "special")?;
        rand.distribution = text.parse::<Distribution>().map_err(|_| CliError::InvalidValue {
            option: opt.label(),
            value: text.to_owned(),
            expected: "uniform, gaussian, special or pareto (or zipfian, from sysbench master)".to_owned(),
        })?;
        if rand.distribution == Distribution::Zipfian {
            notes.push(format!("{}: zipfian is a sysbench 1.1 (master) distribution, refused by 1.0.20", opt.shown()));
        }
    }
    if let Some(n) = opts.int("rand_spec_iter", 1, INT_MAX, "a number of iterations >= 1")? {
        rand.spec_iter = n;
    }
    if let Some(n) = opts.int("rand_spec_pct", 0, 100, "a percentage from 0 to 100")? {
        rand.spec_pct = n;
    }
    if let Some(n) = opts.int("rand_spec_res", 0, 100, "a percentage from 0 to 100")? {
        rand.spec_res = n;
    }
    if let Some(opt) = opts.get("rand_seed") {
        let seed = value::int(opt, i64::from(i32::MIN), i64::from(i32::MAX), "a seed (0 = from the time)")?;
        rand.seed = i32::try_from(seed).unwrap_or(0);
    }
    if let Some(h) =
        opts.get("rand_pareto_h").map(|opt| fraction(opt, "a number strictly between 0 and 1, such as 0.2"))
    {
        rand.pareto_h = h?;
    }
    if let Some(opt) = opts.get("rand_zipfian_exp") {
        rand.zipfian_exp = non_negative(opt, "an exponent >= 0, such as 0.8")?;
        notes.push(master_note(opt));
    }
    Ok(rand)
}

/// A double strictly between 0 and 1.
fn fraction(opt: &RawOpt, expected: &str) -> Result<f64, CliError> {
    let x = value::double(opt, expected)?;
    if x > 0.0 && x < 1.0 {
        return Ok(x);
    }
    Err(CliError::InvalidValue {
        option: opt.label(),
        value: opt.value.clone().unwrap_or_default(),
        expected: expected.to_owned(),
    })
}

/// A double >= 0.
fn non_negative(opt: &RawOpt, expected: &str) -> Result<f64, CliError> {
    let x = value::double(opt, expected)?;
    if x >= 0.0 {
        return Ok(x);
    }
    Err(CliError::InvalidValue {
        option: opt.label(),
        value: opt.value.clone().unwrap_or_default(),
        expected: expected.to_owned(),
    })
}

/// `--db-driver` (mysql only), `--db-ps-mode`, `--db-debug`.
pub(crate) fn db_options(opts: &Opts) -> Result<DbOptions, CliError> {
    if let Some(opt) = opts.get("db_driver") {
        let driver = value::text(opt, "mysql")?;
        if driver != "mysql" {
            return Err(CliError::NotHere {
                option: opt.shown(),
                reason: "wirebench speaks only the MySQL/MariaDB protocol: use --db-driver=mysql or drop the option"
                    .to_owned(),
            });
        }
    }
    let mut db = DbOptions::default();
    if let Some(opt) = opts.get("db_ps_mode") {
        db.ps_mode = value::choice(opt, &[("auto", PsMode::Auto), ("disable", PsMode::Disable)], "auto or disable")?;
    }
    db.debug = opts.flag("db_debug", db.debug)?;
    Ok(db)
}

/// The `--mysql-*` options; the timeouts' defaults depend on the command
/// and on `--thread-init-timeout`.
pub(crate) fn mysql_options(
    opts: &Opts,
    command: Command,
    thread_init_timeout: u32,
    notes: &mut Vec<String>,
) -> Result<MysqlOptions, CliError> {
    let mut mysql = MysqlOptions { servers: server_addresses(opts)?, ..MysqlOptions::default() };
    if let Some(user) = opts.text("mysql_user")? {
        mysql.user = user;
    }
    // A bare --mysql-password asks on the terminal (credentials.rs).
    if let Some(password) = opts.get("mysql_password").and_then(|opt| opt.value.clone()) {
        mysql.password = password;
    }
    if let Some(db) = opts.text("mysql_db")? {
        mysql.db = db;
    }
    mysql.tls = tls_options(opts, notes)?;
    mysql.server_key = server_key(opts)?;
    mysql.compression = opts.flag("mysql_compression", mysql.compression)?;
    mysql.debug = opts.flag("mysql_debug", mysql.debug)?;
    if let Some(opt) = opts.get("mysql_ignore_errors") {
        mysql.ignore_errors = ignore_errors(opt)?;
    }
    mysql.dry_run = opts.flag("mysql_dry_run", mysql.dry_run)?;
    read_timeouts(&mut mysql, opts, command, thread_init_timeout)?;
    Ok(mysql)
}

/// `--mysql-connect-timeout`, `--mysql-read-timeout`,
/// `--mysql-write-timeout`, in seconds; 0 is no limit, as in
/// libmysqlclient.
fn read_timeouts(mysql: &mut MysqlOptions, opts: &Opts, command: Command, thread_init: u32) -> Result<(), CliError> {
    let expected = "a number of seconds >= 0 (0 = no limit)";
    let seconds = |n: u32| (n > 0).then(|| Duration::from_secs(u64::from(n)));
    let connect = opts.int("mysql_connect_timeout", 0, INT_MAX, expected)?;
    mysql.connect_timeout = seconds(connect.unwrap_or(thread_init));
    let wait_default = command.runs_events().then_some(RUN_WAIT_TIMEOUT);
    let read = opts.int("mysql_read_timeout", 0, INT_MAX, expected)?;
    mysql.read_timeout = read.map_or(wait_default, seconds);
    let write = opts.int("mysql_write_timeout", 0, INT_MAX, expected)?;
    mysql.write_timeout = write.map_or(wait_default, seconds);
    Ok(())
}

/// `--mysql-host`, `--mysql-port`, `--mysql-socket`.
fn server_addresses(opts: &Opts) -> Result<ServerAddresses, CliError> {
    let mut servers = ServerAddresses::default();
    if let Some(opt) = opts.get("mysql_host") {
        servers.hosts = value::list(opt)?;
        if servers.hosts.is_empty() {
            return Err(CliError::InvalidValue {
                option: opt.label(),
                value: String::new(),
                expected: "one or more hosts, such as 127.0.0.1 or db1,db2".to_owned(),
            });
        }
    }
    if let Some(opt) = opts.get("mysql_port") {
        let ports = value::list(opt)?
            .iter()
            .map(|port| port.trim().parse::<u16>().ok().filter(|&p| p > 0))
            .collect::<Option<Vec<u16>>>()
            .filter(|ports| !ports.is_empty());
        servers.ports = ports.ok_or_else(|| CliError::InvalidValue {
            option: opt.label(),
            value: opt.value.clone().unwrap_or_default(),
            expected: "one or more ports from 1 to 65535, such as 3306 or 3306,3307".to_owned(),
        })?;
    }
    if let Some(opt) = opts.get("mysql_socket") {
        servers.sockets = value::list(opt)?.into_iter().map(PathBuf::from).collect();
    }
    Ok(servers)
}

/// `--mysql-ssl`, `--mysql-ssl-cipher` and sysbench master's
/// `--mysql-ssl-key/-cert/-ca`.
pub(super) fn tls_options(opts: &Opts, notes: &mut Vec<String>) -> Result<TlsOptions, CliError> {
    let mut tls = TlsOptions::default();
    if let Some(opt) = opts.get("mysql_ssl") {
        tls.mode = value::ssl_mode(opt)?;
        if value::boolean(opt).is_err() {
            notes.push(format!("{}: a sysbench 1.1 (master) value, which sysbench 1.0.20 refuses", opt.shown()));
        }
    }
    if let Some(cipher) = opts.text("mysql_ssl_cipher")? {
        tls.cipher = cipher;
    }
    for (key, slot) in
        [("mysql_ssl_key", &mut tls.key), ("mysql_ssl_cert", &mut tls.cert), ("mysql_ssl_ca", &mut tls.ca)]
    {
        if let Some(opt) = opts.get(key) {
            *slot = Some(PathBuf::from(value::text(opt, "FILE")?));
            notes.push(master_note(opt));
        }
    }
    Ok(tls)
}

/// `--mysql-server-public-key-path` (read and checked here, once for all
/// connections) and `--mysql-get-server-public-key`.
fn server_key(opts: &Opts) -> Result<ServerKey, CliError> {
    let mut key = ServerKey { fetch: opts.flag("mysql_get_server_public_key", false)?, pem: None };
    if let Some(opt) = opts.get("mysql_server_public_key_path") {
        let path = value::text(opt, "FILE")?;
        let pem = ServerKey::read_pem(Path::new(path))
            .map_err(|e| CliError::NotHere { option: opt.label(), reason: e.to_string() })?;
        key.pem = Some(pem);
    }
    Ok(key)
}

/// `--mysql-ignore-errors=1213,1205` or `all`.
fn ignore_errors(opt: &RawOpt) -> Result<IgnoreErrors, CliError> {
    let items = value::list(opt)?;
    if items.iter().any(|item| item == "all") {
        return Ok(IgnoreErrors::All);
    }
    let codes = items.iter().map(|item| item.trim().parse::<u16>().ok()).collect::<Option<Vec<u16>>>();
    codes.map(IgnoreErrors::List).ok_or_else(|| CliError::InvalidValue {
        option: opt.label(),
        value: opt.value.clone().unwrap_or_default(),
        expected: "error numbers such as 1213,1020,1205, or all".to_owned(),
    })
}

/// `--prepare-method`.
pub(crate) fn prepare_method(opts: &Opts) -> Result<PrepareMethod, CliError> {
    let Some(opt) = opts.get("prepare_method") else { return Ok(PrepareMethod::Auto) };
    let methods = [
        ("auto", PrepareMethod::Auto),
        ("bulk-execute", PrepareMethod::BulkExecute),
        ("load-data", PrepareMethod::LoadData),
        ("insert", PrepareMethod::Insert),
    ];
    value::choice(opt, &methods, "auto, bulk-execute, load-data or insert")
}

/// wirebench's own `--cpus`, `--io`, `--poll`, `--pipeline`, `--idle-*`.
pub(crate) fn engine_options(opts: &Opts) -> Result<EngineOptions, CliError> {
    let mut engine = EngineOptions::default();
    if let Some(opt) = opts.get("cpus") {
        engine.cpus = Some(value::cpu_list(opt)?);
    }
    if let Some(opt) = opts.get("io") {
        let backends = [
            ("auto", IoBackend::Auto),
            ("uring", IoBackend::Uring),
            ("epoll", IoBackend::Epoll),
            ("io_uring", IoBackend::Uring),
        ];
        engine.io = value::choice(opt, &backends, "auto, uring or epoll")?;
    }
    if let Some(opt) = opts.get("poll") {
        let modes = [
            ("auto", PollMode::Auto),
            ("sleep", PollMode::Sleep),
            ("adaptive", PollMode::AdaptiveRetired),
            ("spin", PollMode::Spin),
        ];
        engine.poll = value::choice(opt, &modes, "auto, sleep or spin")?;
    }
    if let Some(n) = opts.int("pipeline", 1, 65_536, "a number of events in flight per connection >= 1")? {
        engine.pipeline = n;
    }
    if let Some(n) = opts.int("idle_connections", 0, 1_000_000, "a number of idle connections from 0 to 1000000")? {
        engine.idle.count = u64::from(n);
    }
    if let Some(s) = opts.int("idle_ping_interval", 1, 86_400, "a number of seconds from 1 to 86400")? {
        engine.idle.ping_interval = Duration::from_secs(u64::from(s));
    }
    if let Some(n) = opts.int("idle_connect_rate", 1, 1_000_000, "a number of logins per second from 1 to 1000000")? {
        engine.idle.connect_rate = n;
    }
    Ok(engine)
}
