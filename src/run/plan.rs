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
use crate::driver::backends::dry::{DryConn, DryLoopPlan};
use crate::driver::{
    allowed_cpus, plan_wait, Backend, ConnPlan, EventPipeline, LoopPlan, LoopRuns, LoopSite, LoopWait, PsMode, Redial,
    ServerPlacement, ServerPlacements, StdSocket, WaitRequest,
};
use crate::rand::{RandParams, Rng};
use crate::transport::tls::ClientTls;
use crate::workload::{EmulatedStatement, ScriptContext, StatementKind, StatementSpec, Workload};

/// How many connections log in at once: enough to hide round trips, few
/// enough not to overflow the server's accept backlog.
const CONNECT_PARALLELISM: usize = 256;

/// Connections one event loop takes before another core is used, when
/// `--cpus` is not given and the server runs on this host: a second loop
/// there only takes CPU from the server and wakes more threads
/// (docs/benchmarking.md#connections-per-loop).
const CONNECTIONS_PER_LOOP: usize = 256;

/// What every connection of the run is made from: the workload's
/// statements and scripts, the generators' settings, the engine options.
pub(super) struct ConnectionMaker<'a> {
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

impl<'a> ConnectionMaker<'a> {
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
        Ok(ConnectionMaker {
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

    /// Connection `n`'s pipeline of events, the `index`th of its loop, with its
    /// statements prepared as `ids` (none when they go out as text).
    fn pipeline(&self, n: usize, index: usize, ids: &[u32], caps: Capabilities) -> Result<EventPipeline, RunError> {
        let thread = self.threads.global(n);
        let script = self.workload.script(ScriptContext { thread, threads: self.threads.total });
        let rng = Rng::for_thread(self.seed, thread, self.params);
        let pipeline = EventPipeline::new(index, script, rng, templates(&self.statements, ids)?, caps, self.pipeline)
            .draw_after_event(self.bench.general.percentile.unwrap_or(0) > 0)
            .emulating(self.emulated.clone())
            .statement_kinds(self.kinds.clone())
            .autocommit_off(self.autocommit_off)
            .running(self.workload.name());
        Ok(pipeline)
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
/// `--mysql-dry-run`, its maker without connections; or the signal that
/// came while they were being opened.
pub(super) fn plan_loops(
    bench: &Bench,
    tls: Option<&ClientTls>,
    maker: &ConnectionMaker<'_>,
    runtime: &tokio::runtime::Runtime,
    interrupts: &Interrupts,
    backend: Backend,
) -> Result<Result<Loops, Signal>, RunError> {
    let cpus = loop_cpus(bench);
    if bench.mysql.dry_run {
        // No server to leave cores to.
        let loops = loop_count(bench, &cpus, ServerPlace::Elsewhere);
        return Ok(Ok(Loops::Dry(dry_loops(bench, maker, &cpus, loops)?)));
    }
    let opened = match runtime.block_on(interrupts.or_signal(open_all(bench, tls, maker))) {
        Ok(opened) => opened?,
        Err(signal) => return Ok(Err(signal)),
    };
    // Each server looked up once, through its first open connection.
    let servers = ServerPlacements::look_up(opened.iter().map(|o| o.conn.endpoint()), |endpoint| {
        opened.iter().find(|o| o.conn.endpoint() == endpoint).map(|o| o.conn.server_process())
    });
    let server =
        if servers.all().all(ServerPlacement::on_this_host) { ServerPlace::ThisHost } else { ServerPlace::Elsewhere };
    let our_cpus = allowed_cpus();
    let request = WaitRequest {
        asked: bench.engine.poll,
        backend,
        pipeline: bench.engine.pipeline,
        our_cpus: our_cpus.as_deref(),
    };
    let loops = loop_count(bench, &cpus, server);
    let grouped = net_loops(opened, maker, &cpus, loops, runtime)?;
    let plans = grouped.into_iter().map(|(cpu, connections)| {
        let wait = loop_wait(&request, cpu, &connections, &servers);
        LoopPlan { cpu, connections, wait }
    });
    Ok(Ok(Loops::Net(plans.collect())))
}

/// How a built-in test's loop on `cpu` holding `connections` waits.
fn loop_wait(
    request: &WaitRequest<'_>,
    cpu: Option<usize>,
    connections: &[ConnPlan],
    servers: &ServerPlacements,
) -> LoopWait {
    let mut seen: Vec<&ServerPlacement> = Vec::new();
    for server in connections.iter().filter_map(|c| servers.get(&c.endpoint)) {
        if !seen.iter().any(|s| std::ptr::eq(*s, server)) {
            seen.push(server);
        }
    }
    let site = LoopSite { cpu, connections: connections.len(), runs: LoopRuns::Test, servers: seen };
    plan_wait(request, &site)
}

/// Connection n goes to loop n % loops.
fn empty_loops<C>(cpus: &[usize], loops: usize, plan: impl Fn(Option<usize>) -> C) -> Vec<C> {
    (0..loops).map(|i| plan(cpus.get(i).copied())).collect()
}

fn dry_loops(
    bench: &Bench,
    maker: &ConnectionMaker<'_>,
    cpus: &[usize],
    loops: usize,
) -> Result<Vec<DryLoopPlan>, RunError> {
    let mut plans = empty_loops(cpus, loops, |cpu| DryLoopPlan { cpu, connections: Vec::new() });
    for n in 0..bench.general.threads as usize {
        let Some(plan) = plans.get_mut(n % loops) else { continue };
        let pipeline = maker.pipeline(n, plan.connections.len(), &[], Capabilities::default())?;
        let endpoint = bench.mysql.servers.connect_to(maker.threads.global(n) as usize);
        plan.connections.push(DryConn { endpoint, pipeline });
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
async fn open_all(
    bench: &Bench,
    tls: Option<&ClientTls>,
    maker: &ConnectionMaker<'_>,
) -> Result<Vec<Opened>, RunError> {
    let before_run = maker.workload.before_run();
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
        let redial = maker.redial(tls, n);
        async move {
            let (conn, ids) = redial.open().await?;
            warn_if_uncompressed(&redial.options, &conn);
            Ok(Opened { conn, ids, redial })
        }
    })
    .await
}

/// A loop's core (if pinned) and connections, before its wait is planned.
type LoopConnections = (Option<usize>, Vec<ConnPlan>);

/// Hands each opened connection, as a plain socket and its pipeline, to
/// its loop: each loop's core and connections.
fn net_loops(
    opened: Vec<Opened>,
    maker: &ConnectionMaker<'_>,
    cpus: &[usize],
    loops: usize,
    runtime: &tokio::runtime::Runtime,
) -> Result<Vec<LoopConnections>, RunError> {
    let mut plans = empty_loops(cpus, loops, |cpu| (cpu, Vec::new()));
    for (n, Opened { conn, ids, redial }) in opened.into_iter().enumerate() {
        if n == 0 {
            say_tls(&conn, redial.options.tls.as_ref());
            let _ = maker.server_version.set(conn.login().server_version.clone());
        }
        let Some((_, connections)) = plans.get_mut(n % loops) else { continue };
        let endpoint = conn.endpoint().clone();
        let (stream, leftover, login, transport) = conn.into_parts();
        // Leaving tokio: the socket must be deregistered inside its runtime.
        let socket = runtime.block_on(async { StdSocket::from_stream(stream) }).map_err(RunError::Socket)?;
        let pipeline = maker.pipeline(n, connections.len(), &ids, login.capabilities)?;
        let leftover = BytesMut::from(&leftover[..]);
        connections.push(ConnPlan { endpoint, socket, leftover, pipeline, transport, redial });
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
