//! The `run` command's connections: every one logged in and its statements
//! prepared, then spread over the event loops, one per chosen core.

use std::sync::{Arc, OnceLock};

use bytes::BytesMut;
use wirebench_protocol::command::ExecuteTemplate;
use wirebench_protocol::Capabilities;

use super::interrupt::{Interrupts, Signal};
use super::setup::{connect_options, for_each_connection, say_tls, warn_if_uncompressed};
use super::shard_plan::ShardThreads;
use super::RunError;
use crate::cli::Bench;
use crate::client::Connection;
use crate::driver::dry::{DryConn, DryLoopPlan};
use crate::driver::{
    allowed_cpus, socket_waits_by_server, AnswerWait, Backend, ConnPlan, LoopPlan, PollMode, PsMode, Redial, Session,
    StdSocket,
};
use crate::rand::{RandParams, Rng};
use crate::transport::tls::ClientTls;
use crate::workload::{EmulatedStatement, ScriptContext, StatementKind, StatementSpec, Workload};

/// How many connections log in at once: enough to hide round trips, few
/// enough not to overflow the server's accept backlog.
const CONNECT_PARALLELISM: usize = 256;

/// Connections one event loop takes before another core is used, when
/// `--cpus` is not given and the server runs on this host. A loop drives
/// 150-200k queries per second at `--pipeline=1`; a second loop on a host
/// that also runs the server only takes CPU from it and wakes more
/// threads. Measured here with MariaDB on the same 2-core VM: 16
/// connections 53k qps on one loop vs 45k on two, 256 connections 53k vs
/// 48k.
const CONNECTIONS_PER_LOOP: usize = 256;

/// With answers awaited on each socket (see [`socket_waits_fit`]), at
/// most this many loops a core (one per connection): beyond, connections
/// share loops on the ring, each loop's statistics taking about a
/// megabyte.
const SOCKET_WAIT_LOOPS_PER_CORE: usize = 8;

/// What every connection of the run is made from: the workload's
/// statements and scripts, the generators' settings, the engine options.
pub(super) struct Sessions<'a> {
    bench: &'a Bench,
    workload: Arc<dyn Workload>,
    statements: Arc<Vec<StatementSpec>>,
    /// Each statement's kind, for the per-statement counts.
    kinds: Arc<[StatementKind]>,
    /// `--db-ps-mode=disable`: the statements as COM_QUERY text.
    emulated: Option<Arc<[EmulatedStatement]>>,
    params: RandParams,
    seed: u32,
    /// This shard's connections among the run's.
    threads: ShardThreads,
    pipeline: usize,
    /// Pipelined, a failed event's tail is already sent and runs anyway:
    /// with autocommit off it runs in a transaction its own COMMIT ends (or
    /// a ROLLBACK), not statement by statement. At `--pipeline=1` there is
    /// no tail, and a test without transactions would never commit.
    autocommit_off: bool,
    /// What the first connection's server calls itself, for the results.
    server_version: OnceLock<String>,
}

impl<'a> Sessions<'a> {
    pub(super) fn new(
        bench: &'a Bench,
        workload: Arc<dyn Workload>,
        params: RandParams,
        seed: u32,
        threads: ShardThreads,
    ) -> Result<Self, RunError> {
        let statements = Arc::new(workload.statements());
        let kinds = workload.statement_kinds().into();
        let emulated = match bench.db.ps_mode {
            PsMode::Disable => Some(EmulatedStatement::all(&statements)?.into()),
            PsMode::Auto => None,
        };
        let pipeline = bench.engine.pipeline.max(1) as usize;
        let autocommit_off = pipeline > 1 && workload.events_are_transactions();
        let server_version = OnceLock::new();
        Ok(Sessions {
            bench,
            workload,
            statements,
            kinds,
            emulated,
            params,
            seed,
            threads,
            pipeline,
            autocommit_off,
            server_version,
        })
    }

    /// The server's version as its handshake gave it; none until a
    /// connection is open (never with `--mysql-dry-run`).
    pub(super) fn server_version(&self) -> Option<&str> {
        self.server_version.get().map(String::as_str)
    }

    /// How connection `n` is opened, and opened again after a loss.
    fn redial(&self, tls: Option<&ClientTls>, n: usize) -> Redial {
        Redial {
            options: connect_options(self.bench, tls, self.threads.global(n) as usize),
            statements: self.statements.clone(),
            prepare: self.emulated.is_none(),
            init: if self.autocommit_off { &["SET autocommit=0"] } else { &[] },
        }
    }

    /// Connection `n`'s session, the `index`th of its loop, with its
    /// statements prepared as `ids` (none when they go out as text).
    fn session(&self, n: usize, index: usize, ids: &[u32], caps: Capabilities) -> Result<Session, RunError> {
        let thread = self.threads.global(n);
        let script = self.workload.script(ScriptContext { thread, threads: self.threads.total });
        let rng = Rng::for_thread(self.seed, thread, self.params);
        let session = Session::new(index, script, rng, templates(&self.statements, ids)?, caps, self.pipeline)
            .draw_after_event(self.bench.general.percentile.unwrap_or(0) > 0)
            .emulating(self.emulated.clone())
            .statement_kinds(self.kinds.clone())
            .autocommit_off(self.autocommit_off)
            .running(self.workload.name());
        Ok(session)
    }
}

/// The statements' pre-encoded packets, for the prepared ids `ids`; with
/// none (`--db-ps-mode=disable`, `--mysql-dry-run`) the id is 0: the
/// packets are only patched, never sent.
fn templates(statements: &[StatementSpec], ids: &[u32]) -> Result<Vec<ExecuteTemplate>, RunError> {
    let template = |(i, spec): (usize, &StatementSpec)| {
        ExecuteTemplate::new(ids.get(i).copied().unwrap_or(0), &spec.slots)
            .map_err(|source| RunError::Encode { sql: spec.sql.clone(), source })
    };
    statements.iter().enumerate().map(template).collect()
}

/// The connections of each loop, with sockets or (`--mysql-dry-run`) without.
pub(super) enum Loops {
    Net(Vec<LoopPlan>),
    Dry(Vec<DryLoopPlan>),
}

impl Loops {
    /// How many connections each loop drives.
    pub(super) fn connections_per_loop(&self) -> Vec<usize> {
        match self {
            Loops::Net(plans) => plans.iter().map(|p| p.connections.len()).collect(),
            Loops::Dry(plans) => plans.iter().map(|p| p.connections.len()).collect(),
        }
    }
}

/// Where the server runs, as the connections show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ServerPlace {
    /// Every connection is a unix socket or a TCP connection to one of
    /// this host's own addresses: the server competes for our cores.
    ThisHost,
    /// At least one connection goes to another host (or there is none,
    /// with `--mysql-dry-run`).
    Elsewhere,
}

/// The cores the loops run on: `--cpus`, or every core this process may use.
fn loop_cpus(bench: &Bench) -> Vec<usize> {
    match &bench.engine.cpus {
        Some(cpus) => cpus.clone(),
        None => allowed_cpus().unwrap_or_default(),
    }
}

/// How many loops, once it is known where the server runs.
fn loop_count(bench: &Bench, cpus: &[usize], server: ServerPlace) -> usize {
    let threads = bench.general.threads as usize;
    let loops = match &bench.engine.cpus {
        Some(_) => cpus.len().clamp(1, threads.max(1)),
        None => default_loops(cpus.len(), threads, server),
    };
    loops.max(1)
}

/// Loops for `threads` connections on `cores` cores when `--cpus` is not
/// given: against a server elsewhere, one per core (at most one per
/// connection), so that the client host's cores all work and the client is
/// never what limits the run; against a server on this host, one per
/// [`CONNECTIONS_PER_LOOP`] connections, leaving the server its cores.
fn default_loops(cores: usize, threads: usize, server: ServerPlace) -> usize {
    let cores = cores.max(1);
    match server {
        ServerPlace::Elsewhere => cores.min(threads.max(1)),
        ServerPlace::ThisHost => threads.div_ceil(CONNECTIONS_PER_LOOP).clamp(1, cores),
    }
}

/// The run's loops: its connections opened and spread over them, or, with
/// `--mysql-dry-run`, its sessions without connections; or the signal that
/// came while they were being opened.
pub(super) fn plan_loops(
    bench: &Bench,
    tls: Option<&ClientTls>,
    sessions: &Sessions<'_>,
    runtime: &tokio::runtime::Runtime,
    interrupts: &Interrupts,
    backend: Backend,
) -> Result<Result<Loops, Signal>, RunError> {
    let cpus = loop_cpus(bench);
    if bench.mysql.dry_run {
        // No server to leave cores to.
        let loops = loop_count(bench, &cpus, ServerPlace::Elsewhere);
        return Ok(Ok(Loops::Dry(dry_loops(bench, sessions, &cpus, loops)?)));
    }
    let opened = match runtime.block_on(interrupts.or_signal(open_all(bench, tls, sessions))) {
        Ok(opened) => opened?,
        Err(signal) => return Ok(Err(signal)),
    };
    let server = if opened.iter().all(|c| c.conn.server_is_on_this_host()) {
        ServerPlace::ThisHost
    } else {
        ServerPlace::Elsewhere
    };
    if socket_waits_fit(bench, backend, &opened, cpus.len()) {
        // Unpinned: a connection's thread goes where the server's wakes it.
        let loops = (opened.len().max(1), AnswerWait::Socket);
        return Ok(Ok(Loops::Net(net_loops(opened, sessions, &[], loops, runtime)?)));
    }
    let loops = (loop_count(bench, &cpus, server), AnswerWait::Ring);
    Ok(Ok(Loops::Net(net_loops(opened, sessions, &cpus, loops, runtime)?)))
}

/// Whether each connection gets a loop of its own that awaits its answers
/// on the socket (`driver::AnswerWait::Socket`), as sysbench's threads do:
/// when every connection is a unix socket to a server that shares our
/// cores and runs a thread per connection (`driver::socket_waits_by_server`),
/// one query at a time (`--pipeline=1`), on io_uring with the default
/// `--poll` and no `--cpus`, and at most
/// [`SOCKET_WAIT_LOOPS_PER_CORE`] connections a core. The server's thread
/// and the connection's then take turns on a core without sleeping between
/// queries. Measured with MariaDB on this 2-core VM, 16 connections, three
/// alternating rounds beside sysbench: oltp_read_only 1.11-1.21x
/// sysbench's rate where one loop on the ring drove 0.87-1.05x (the
/// server's CPU per query 35-45 µs instead of 40-50); oltp_point_select
/// 1.03x, 1.42x and 0.88x where the ring drove 1.02x, 1.16x and 0.89x. The
/// client's CPU per query rises from 0.5-0.7x sysbench's to 0.7-1.1x: each
/// query starts on caches the server has just used.
fn socket_waits_fit(bench: &Bench, backend: Backend, opened: &[Opened], cores: usize) -> bool {
    let engine = &bench.engine;
    let fits = backend == Backend::Uring
        && engine.poll == PollMode::Auto
        && engine.cpus.is_none()
        && engine.pipeline <= 1
        && opened.len() <= cores.max(1) * SOCKET_WAIT_LOOPS_PER_CORE;
    if !fits {
        return false;
    }
    socket_waits_by_server(opened.iter().map(|o| o.conn.endpoint().clone())).values().all(|&suits| suits)
}

/// Connection n goes to loop n % loops.
fn empty_loops<C>(cpus: &[usize], loops: usize, plan: impl Fn(Option<usize>) -> C) -> Vec<C> {
    (0..loops).map(|i| plan(cpus.get(i).copied())).collect()
}

fn dry_loops(
    bench: &Bench,
    sessions: &Sessions<'_>,
    cpus: &[usize],
    loops: usize,
) -> Result<Vec<DryLoopPlan>, RunError> {
    let mut plans = empty_loops(cpus, loops, |cpu| DryLoopPlan { cpu, connections: Vec::new() });
    for n in 0..bench.general.threads as usize {
        let Some(plan) = plans.get_mut(n % loops) else { continue };
        let session = sessions.session(n, plan.connections.len(), &[], Capabilities::default())?;
        let endpoint = bench.mysql.servers.connect_to(sessions.threads.global(n) as usize);
        plan.connections.push(DryConn { endpoint, session });
    }
    Ok(plans)
}

/// A connection logged in, its statements prepared.
struct Opened {
    conn: Connection,
    ids: Vec<u32>,
    redial: Redial,
}

/// Logs in and prepares every connection, a bounded number at a time,
/// after the workload's SQL for before the run, on a connection of its own.
async fn open_all(bench: &Bench, tls: Option<&ClientTls>, sessions: &Sessions<'_>) -> Result<Vec<Opened>, RunError> {
    let before_run = sessions.workload.before_run();
    if !before_run.is_empty() {
        let mut conn =
            Connection::connect(&connect_options(bench, tls, 0)).await.map_err(|error| RunError::Connect { error })?;
        for sql in &before_run {
            conn.query_drop(sql).await?;
        }
        conn.quit().await?;
    }
    let threads = bench.general.threads as usize;
    for_each_connection(threads, CONNECT_PARALLELISM, |n| {
        let redial = sessions.redial(tls, n);
        async move {
            let (conn, ids) = redial.open().await?;
            warn_if_uncompressed(&redial.options, &conn);
            Ok(Opened { conn, ids, redial })
        }
    })
    .await
}

/// Hands each opened connection, as a plain socket and its session, to
/// its loop.
fn net_loops(
    opened: Vec<Opened>,
    sessions: &Sessions<'_>,
    cpus: &[usize],
    (loops, answers): (usize, AnswerWait),
    runtime: &tokio::runtime::Runtime,
) -> Result<Vec<LoopPlan>, RunError> {
    let poll = sessions.bench.engine.poll;
    let mut plans = empty_loops(cpus, loops, |cpu| LoopPlan { cpu, connections: Vec::new(), poll, answers });
    for (n, Opened { conn, ids, redial }) in opened.into_iter().enumerate() {
        if n == 0 {
            say_tls(&conn, redial.options.tls.as_ref());
            let _ = sessions.server_version.set(conn.login().server_version.clone());
        }
        let Some(plan) = plans.get_mut(n % loops) else { continue };
        let endpoint = conn.endpoint().clone();
        let (stream, leftover, login, transport) = conn.into_parts();
        // Leaving tokio: the socket must be deregistered inside its runtime.
        let socket = runtime.block_on(async { StdSocket::from_stream(stream) }).map_err(RunError::Socket)?;
        let session = sessions.session(n, plan.connections.len(), &ids, login.capabilities)?;
        let leftover = BytesMut::from(&leftover[..]);
        plan.connections.push(ConnPlan { endpoint, socket, leftover, session, transport, redial });
    }
    Ok(plans)
}

#[cfg(test)]
mod tests {
    use super::{default_loops, ServerPlace};

    #[test]
    fn default_loops_leave_a_server_on_this_host_its_cores() {
        use ServerPlace::{Elsewhere, ThisHost};
        // (cores, connections, where the server is, loops)
        let cases = [
            (2, 1, ThisHost, 1),
            (2, 16, ThisHost, 1),
            (2, 256, ThisHost, 1),
            (2, 257, ThisHost, 2),
            (2, 900, ThisHost, 2),
            (32, 900, ThisHost, 4),
            (0, 16, ThisHost, 1),
            (2, 1, Elsewhere, 1),
            (2, 16, Elsewhere, 2),
            (32, 16, Elsewhere, 16),
            (32, 900, Elsewhere, 32),
            (0, 16, Elsewhere, 1),
            (4, 0, Elsewhere, 1),
        ];
        for (cores, threads, server, loops) in cases {
            assert_eq!(
                default_loops(cores, threads, server),
                loops,
                "{cores} cores, {threads} connections, {server:?}"
            );
        }
    }
}
