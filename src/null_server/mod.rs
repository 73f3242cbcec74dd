//! The null server: a MySQL/MariaDB server that answers every statement
//! instantly with a canned result, to measure how much load a client host
//! can generate ("what can my client drive") without a database in the way.
//!
//! It accepts any login, answers SELECT with a result set shaped after the
//! select list (sysbench's `c`, `pad`, `id`, `k`, SUM, AVG, COUNT ...),
//! INSERT/UPDATE/DELETE with one affected row, everything else with OK,
//! and supports prepared statements, whose answers are encoded once at
//! prepare time. It must itself be cheap: one pinned thread per core,
//! one read and one write per batch of commands, no allocation and no lock
//! per query.
//!
//! Layer: a program of its own beside the engine; it may import transport
//! (the compressed protocol) and the protocol crate.
//!
//! Files:
//! - `event_loop.rs`: the loops, pinned, and the acceptor.
//! - `null_session.rs`: one client connection, sans-IO.
//! - `handshake.rs`: the server side of the connection phase.
//! - `sql_scan.rs`: just enough SQL to fake an answer; `answer.rs`: the
//!   answers.
//! - `server_compress.rs`: the compressed protocol on the server's side.
//! - `delay.rs`: `--delay-us`.

mod answer;
mod delay;
mod event_loop;
mod handshake;
mod null_session;
mod server_compress;
mod sql_scan;

use std::future::Future;
use std::net::SocketAddr;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{mpsc as std_mpsc, Arc};
use std::thread::JoinHandle;
use std::time::Duration;

use thiserror::Error;
use tokio::sync::{mpsc, watch};

use answer::CannedAnswers;
use event_loop::{Listeners, ServerLoop, ServerLoopStats};
use null_session::ServerProfile;

/// The version the greeting announces by default: MariaDB-like (the
/// `5.5.5-` prefix is MariaDB's compatibility shim) and plainly not a
/// real server.
pub const DEFAULT_VERSION: &str = "5.5.5-10.11.99-wirebench-null";
/// What `SELECT @@version_comment` answers.
const VERSION_COMMENT: &str = "wirebench null server";
/// The MYSQL_VERSION_ID assumed when the configured version has none.
const FALLBACK_VERSION_ID: u32 = 101199;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NullServerConfig {
    /// Where to listen for TCP; port 0 picks a free one (see [`NullServer::local_addr`]).
    pub tcp: Option<SocketAddr>,
    /// A unix socket to listen on; a stale socket file there is replaced.
    pub unix: Option<PathBuf>,
    /// Cores to run event loops on, one pinned loop each; empty: every core
    /// this process may run on.
    pub cpus: Vec<usize>,
    /// Rows in the answer to a SELECT (one without FROM, or of aggregates
    /// only, always gets one).
    pub rows_per_select: usize,
    /// The server version the greeting announces.
    pub version: String,
    /// How long each batch of commands waits before its answers go out
    /// (`--delay-us`): a slow server, for `--rate` past capacity.
    pub answer_delay: Duration,
    /// Closes a connection that sent nothing for this long (`--wait-timeout`),
    /// as MariaDB's `wait_timeout` does; `None` never.
    pub wait_timeout: Option<Duration>,
    /// `--serial`: commands served one at a time over all connections,
    /// each for `answer_delay`, so that capacity is exactly 1/delay.
    pub serial: bool,
}

impl Default for NullServerConfig {
    fn default() -> Self {
        NullServerConfig {
            tcp: None,
            unix: None,
            cpus: Vec::new(),
            rows_per_select: 1,
            version: DEFAULT_VERSION.to_string(),
            answer_delay: Duration::ZERO,
            wait_timeout: None,
            serial: false,
        }
    }
}

#[derive(Debug, Error)]
pub enum NullServerError {
    #[error("the null server needs somewhere to listen: give a TCP address, a unix socket, or both")]
    NoListener,
    #[error("cannot listen on {what}: {source}")]
    Listen { what: String, source: std::io::Error },
    #[error("cannot run on cpu {cpu}: this process may run on cpus {allowed:?}")]
    Cpu { cpu: usize, allowed: Vec<usize> },
    #[error("cannot tell which cpus this process may run on; name them explicitly")]
    NoCpus,
    #[error("cannot pin the event loop thread to cpu {cpu}")]
    Pin { cpu: usize },
    #[error("cannot start an event loop thread: {0}")]
    Thread(std::io::Error),
    #[error("the event loop on cpu {cpu} panicked")]
    LoopPanicked { cpu: usize },
    #[error("the server version must not contain a NUL byte")]
    BadVersion,
    #[error("cannot wait for Ctrl-C: {0}")]
    Signals(std::io::Error),
}

/// What the server has done so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NullServerStats {
    pub connections: u64,
    /// Packets answered: commands, logins included.
    pub commands: u64,
    /// Connections the client ended with COM_QUIT.
    pub quits: u64,
    /// Connections closed for their silence (`wait_timeout`).
    pub timed_out: u64,
    /// Connections ended, for any reason (a test waits for them).
    pub closed: u64,
    /// CPU time of the event loop threads (user + system), when the platform tells.
    pub cpu_time: Option<Duration>,
}

/// Stops a running server from anywhere; cheap to clone.
#[derive(Debug, Clone)]
pub struct Stopper(Arc<watch::Sender<bool>>);

impl Stopper {
    pub fn stop(&self) {
        self.0.send_replace(true);
    }
}

/// A running null server. Dropping it stops it.
#[derive(Debug)]
pub struct NullServer {
    local_addr: Option<SocketAddr>,
    unix_path: Option<PathBuf>,
    stopper: Stopper,
    loops: Vec<(usize, JoinHandle<()>, Arc<ServerLoopStats>)>,
}

impl NullServer {
    /// Binds the listeners, starts one pinned event loop per cpu and returns
    /// once every loop runs.
    pub fn start(config: NullServerConfig) -> Result<NullServer, NullServerError> {
        if config.tcp.is_none() && config.unix.is_none() {
            return Err(NullServerError::NoListener);
        }
        if config.version.contains('\0') {
            return Err(NullServerError::BadVersion);
        }
        let cpus = choose_cpus(&config.cpus)?;
        let tcp = config
            .tcp
            .map(|addr| {
                let listener = std::net::TcpListener::bind(addr)?;
                listener.set_nonblocking(true)?;
                Ok(listener)
            })
            .transpose()
            .map_err(|source| NullServerError::Listen { what: format!("{:?}", config.tcp), source })?;
        let local_addr = tcp.as_ref().and_then(|l| l.local_addr().ok());
        let unix = config
            .unix
            .as_deref()
            .map(bind_unix)
            .transpose()
            .map_err(|source| NullServerError::Listen { what: format!("{:?}", config.unix), source })?;

        let profile = Arc::new(server_profile(&config));
        let (stop_tx, stop_rx) = watch::channel(false);
        let stopper = Stopper(Arc::new(stop_tx));
        let next_connection_id = Arc::new(AtomicU32::new(1));
        let (senders, receivers): (Vec<_>, Vec<_>) = cpus.iter().map(|_| mpsc::unbounded_channel()).unzip();
        let mut acceptor = Some((Listeners { tcp, unix }, senders));
        let (ready_tx, ready_rx) = std_mpsc::channel();
        let mut server = NullServer { local_addr, unix_path: config.unix.clone(), stopper, loops: Vec::new() };
        for (&cpu, incoming) in cpus.iter().zip(receivers) {
            let stats = Arc::new(ServerLoopStats::default());
            let server_loop = ServerLoop {
                profile: profile.clone(),
                stats: stats.clone(),
                incoming,
                stop: stop_rx.clone(),
                acceptor: acceptor.take(),
                next_connection_id: next_connection_id.clone(),
            };
            let ready = ready_tx.clone();
            let thread = std::thread::Builder::new()
                .name(format!("wbnull-{cpu}"))
                .spawn(move || {
                    if !core_affinity::set_for_current(core_affinity::CoreId { id: cpu }) {
                        let _ = ready.send(Err(NullServerError::Pin { cpu }));
                        return;
                    }
                    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
                        Ok(runtime) => runtime,
                        Err(e) => {
                            let _ = ready.send(Err(NullServerError::Thread(e)));
                            return;
                        }
                    };
                    if !server_loop.profile.answer_delay.is_zero() {
                        delay::precise_timers();
                    }
                    server_loop.record_thread();
                    let _ = ready.send(Ok(()));
                    drop(ready);
                    server_loop.run(&runtime);
                })
                .map_err(NullServerError::Thread)?;
            server.loops.push((cpu, thread, stats));
        }
        drop(ready_tx);
        for _ in 0..server.loops.len() {
            match ready_rx.recv() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Err(e),
                Err(_) => return Err(NullServerError::LoopPanicked { cpu: cpus.first().copied().unwrap_or(0) }),
            }
        }
        Ok(server)
    }

    /// The TCP address listened on (with the port chosen for port 0).
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.local_addr
    }

    pub fn unix_path(&self) -> Option<&Path> {
        self.unix_path.as_deref()
    }

    /// The cpus the event loops run on.
    pub fn cpus(&self) -> Vec<usize> {
        self.loops.iter().map(|(cpu, _, _)| *cpu).collect()
    }

    pub fn stopper(&self) -> Stopper {
        self.stopper.clone()
    }

    pub fn stats(&self) -> NullServerStats {
        let mut stats = NullServerStats { cpu_time: Some(Duration::ZERO), ..NullServerStats::default() };
        for (_, _, loop_stats) in &self.loops {
            stats.connections += loop_stats.connections.load(Ordering::Relaxed);
            stats.commands += loop_stats.commands.load(Ordering::Relaxed);
            stats.quits += loop_stats.quits.load(Ordering::Relaxed);
            stats.timed_out += loop_stats.timed_out.load(Ordering::Relaxed);
            stats.closed += loop_stats.closed.load(Ordering::Relaxed);
            let spent = event_loop::schedstat_cpu_time(loop_stats.tid.load(Ordering::Relaxed));
            stats.cpu_time = stats.cpu_time.zip(spent).map(|(a, b)| a + b);
        }
        stats
    }

    /// Stops the loops (closing every connection), waits for them and
    /// removes the unix socket file.
    pub fn stop(mut self) -> Result<(), NullServerError> {
        self.shut_down()
    }

    /// Runs until `shutdown` completes (e.g. `tokio::signal::ctrl_c()`),
    /// then stops.
    pub fn run_until(self, shutdown: impl Future<Output = ()>) -> Result<(), NullServerError> {
        let runtime =
            tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(NullServerError::Thread)?;
        runtime.block_on(shutdown);
        self.stop()
    }

    fn shut_down(&mut self) -> Result<(), NullServerError> {
        self.stopper.stop();
        let mut result = Ok(());
        for (cpu, thread, _) in self.loops.drain(..) {
            if thread.join().is_err() && result.is_ok() {
                result = Err(NullServerError::LoopPanicked { cpu });
            }
        }
        if let Some(path) = self.unix_path.take() {
            let _ = std::fs::remove_file(path);
        }
        result
    }
}

impl Drop for NullServer {
    fn drop(&mut self) {
        let _ = self.shut_down();
    }
}

/// Starts the null server and serves until `shutdown` completes.
///
/// `shutdown` is polled on a runtime of its own with I/O, time and signals
/// enabled, so `async { let _ = tokio::signal::ctrl_c().await; }` works
/// (with tokio's `signal` feature).
pub fn run(config: NullServerConfig, shutdown: impl Future<Output = ()>) -> Result<(), NullServerError> {
    NullServer::start(config)?.run_until(shutdown)
}

fn server_profile(config: &NullServerConfig) -> ServerProfile {
    let display = config.version.strip_prefix("5.5.5-").unwrap_or(&config.version);
    ServerProfile {
        greeting_version: config.version.as_bytes().to_vec(),
        version_id: handshake::version_id(&config.version).unwrap_or(FALLBACK_VERSION_ID),
        canned: CannedAnswers {
            version: display.as_bytes().to_vec(),
            version_comment: VERSION_COMMENT.as_bytes().to_vec(),
            rows_per_select: config.rows_per_select,
        },
        answer_delay: config.answer_delay,
        wait_timeout: config.wait_timeout,
        serial: config.serial.then(|| Arc::new(std::sync::Mutex::new(std::time::Instant::now()))),
    }
}

/// The cpus asked for, checked against those this process may use; all of
/// them when none are asked for.
fn choose_cpus(wanted: &[usize]) -> Result<Vec<usize>, NullServerError> {
    let allowed: Vec<usize> = core_affinity::get_core_ids().unwrap_or_default().iter().map(|c| c.id).collect();
    if wanted.is_empty() {
        return if allowed.is_empty() { Err(NullServerError::NoCpus) } else { Ok(allowed) };
    }
    match wanted.iter().find(|cpu| !allowed.contains(cpu)) {
        Some(&cpu) => Err(NullServerError::Cpu { cpu, allowed }),
        None => Ok(wanted.to_vec()),
    }
}

/// Binds a unix socket, replacing a stale socket file (one nobody listens
/// on) but never another kind of file or a live server's socket.
fn bind_unix(path: &Path) -> std::io::Result<std::os::unix::net::UnixListener> {
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if !meta.file_type().is_socket() {
            return Err(std::io::Error::new(std::io::ErrorKind::AlreadyExists, "a file that is not a socket is there"));
        }
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            return Err(std::io::Error::new(std::io::ErrorKind::AddrInUse, "a server is listening there"));
        }
        std::fs::remove_file(path)?;
    }
    let listener = std::os::unix::net::UnixListener::bind(path)?;
    listener.set_nonblocking(true)?;
    Ok(listener)
}
