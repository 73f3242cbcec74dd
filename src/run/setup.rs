//! What every command needs before it sends anything: how to log in, TLS,
//! the random generator's settings and seed.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::task::JoinSet;

use super::output::stderr_line;
use super::RunError;
use crate::cli::Bench;
use crate::client::{ConnectOptions, Connection};
use crate::rand::{srandom_seed, RandParams};
use crate::transport::tls::{self, ClientTls};

/// How connection `n` logs in: where (libmysqlclient's reading of
/// `localhost` included), as whom, with what TLS and compression.
pub(super) fn connect_options(bench: &Bench, tls: Option<&ClientTls>, n: usize) -> ConnectOptions {
    let mysql = &bench.mysql;
    let mut options = ConnectOptions::new(mysql.servers.connect_to(n), mysql.user.clone(), mysql.password.clone());
    options.tls = tls.cloned();
    options.server_key = mysql.server_key.clone();
    if !mysql.db.is_empty() {
        options.database = Some(mysql.db.clone());
    }
    options.connect_timeout = mysql.connect_timeout.unwrap_or(Duration::MAX);
    options.read_timeout = mysql.read_timeout;
    options.write_timeout = mysql.write_timeout;
    options.compression = mysql.compression;
    options
}

/// `--mysql-ssl*` as a TLS configuration for every connection, or none
/// (also with `--mysql-dry-run`, which connects nowhere). Says on stderr
/// what it decided for the user (a sysbench file name not found, ...).
pub(super) fn tls_config(bench: &Bench) -> Result<Option<ClientTls>, RunError> {
    if bench.mysql.dry_run {
        return Ok(None);
    }
    let cwd = std::env::current_dir().map_err(RunError::CurrentDir)?;
    let setup = tls::client_tls(&bench.mysql.tls, &cwd)?;
    for note in &setup.notes {
        stderr_line(format_args!("wirebench: {note}"));
    }
    Ok(setup.tls)
}

/// One line on stderr about what TLS the run measures (from its first
/// connection), or that PREFERRED found none.
pub(super) fn say_tls(conn: &Connection, tls: Option<&ClientTls>) {
    let Some(tls) = tls else { return };
    match conn.tls_description() {
        Some(description) => stderr_line(format_args!("wirebench: TLS to {}: {description}", conn.endpoint())),
        None => stderr_line(format_args!(
            "wirebench: --mysql-ssl={}: {} offers no TLS; the connections are plain text",
            tls.mode,
            conn.endpoint()
        )),
    }
}

/// `--mysql-compression=on` against a server that does not offer
/// compression: libmysqlclient runs uncompressed without a word; wirebench
/// goes on too, but says so, once.
pub(super) fn warn_if_uncompressed(options: &ConnectOptions, conn: &Connection) {
    static WARNED: AtomicBool = AtomicBool::new(false);
    if options.compression && !conn.is_compressed() && !WARNED.swap(true, Ordering::Relaxed) {
        stderr_line(format_args!(
            "wirebench: warning: the server at {} ({}) does not offer the compressed protocol; \
             --mysql-compression=on has no effect and this run is uncompressed",
            conn.endpoint(),
            conn.login().server_version
        ));
    }
}

/// The `--rand-*` settings as the generators use them.
pub(super) fn rand_params(bench: &Bench) -> Result<RandParams, RunError> {
    Ok(RandParams::new(&bench.rand)?)
}

/// The run's seed: `--rand-seed`, or the time when it is 0, as sysbench.
pub(super) fn seed(bench: &Bench) -> u32 {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    srandom_seed(bench.rand.seed, now)
}

/// Runs `task(n)` for each connection `n` in `0..count`, at most
/// `parallel` at a time; their results in connection order, or the first
/// failure, as soon as it happens: no further task is created, and the
/// tasks still running are aborted.
pub(super) async fn for_each_connection<T, F, Fut>(
    count: usize,
    parallel: usize,
    mut task: F,
) -> Result<Vec<T>, RunError>
where
    T: Send + 'static,
    F: FnMut(usize) -> Fut,
    Fut: Future<Output = Result<T, RunError>> + Send + 'static,
{
    let mut tasks = JoinSet::new();
    let mut done = Vec::new();
    for n in 0..count {
        while let Some(joined) = tasks.try_join_next() {
            done.push(joined??);
        }
        if tasks.len() >= parallel.max(1) {
            collect_one(&mut tasks, &mut done).await?;
        }
        let work = task(n);
        tasks.spawn(async move { work.await.map(|result| (n, result)) });
    }
    while !tasks.is_empty() {
        collect_one(&mut tasks, &mut done).await?;
    }
    done.sort_by_key(|(n, _)| *n);
    Ok(done.into_iter().map(|(_, result)| result).collect())
}

async fn collect_one<T: 'static>(
    tasks: &mut JoinSet<Result<(usize, T), RunError>>,
    done: &mut Vec<(usize, T)>,
) -> Result<(), RunError> {
    if let Some(joined) = tasks.join_next().await {
        done.push(joined??);
    }
    Ok(())
}

/// A connection, or none with `--mysql-dry-run`: then every statement
/// "succeeds" without being sent, as in sysbench.
pub(super) async fn connect_unless_dry(
    options: &ConnectOptions,
    dry_run: bool,
) -> Result<Option<Connection>, RunError> {
    if dry_run {
        return Ok(None);
    }
    let conn = Connection::connect(options).await.map_err(|error| RunError::Connect { error })?;
    warn_if_uncompressed(options, &conn);
    Ok(Some(conn))
}
