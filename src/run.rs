//! The commands of a sysbench test: `prepare`, `prewarm`, `run`, `cleanup`
//! and `help`, from a parsed command line to the report.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::BytesMut;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use wirebench_protocol::command::ExecuteTemplate;
use wirebench_protocol::Capabilities;

use crate::cli::{Bench, Command};
use crate::client::{ClientError, ConnectOptions, Connection, Endpoint};
use crate::driver::dry::{DryConn, DryLoopPlan};
use crate::driver::{
    self, Backend, Clock, PollMode, PsMode, ConnPlan, LoopContext, LoopPlan, OpenError, Redial, RunControl, Session, StdSocket,
};
use crate::rand::{srandom_seed, RandParams, Rng};
use crate::stats::report::{self, CheckpointLine, FinalReport, HistogramReport, InterimReport, QueueStats, RunHeader};
use crate::stats::{Collector, Interval, StatsBoard};
use crate::transport::tls::{self, ClientTls};
use crate::workload::{EmulatedStatement, ScriptContext, StatementSpec, Workload};

/// A failure that ends the command, printed as `FATAL: ...`.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error(transparent)]
    Driver(#[from] driver::DriverError),
    #[error("{0}")]
    Setup(String),
}

/// How many connections log in at once: enough to hide round trips, few
/// enough not to overflow the server's accept backlog.
const CONNECT_PARALLELISM: usize = 256;

/// The default unix socket libmysqlclient uses for host `localhost`.
fn default_socket() -> PathBuf {
    std::env::var_os("MYSQL_UNIX_PORT").map_or_else(|| PathBuf::from("/run/mysqld/mysqld.sock"), PathBuf::from)
}

/// Where connection `n` goes. Like libmysqlclient, host `localhost` means
/// the default unix socket (when it exists).
pub fn endpoint(bench: &Bench, n: usize) -> Endpoint {
    match bench.mysql.endpoint(n) {
        Endpoint::Tcp { host, .. } if host == "localhost" && default_socket().exists() => {
            Endpoint::unix(default_socket())
        }
        other => other,
    }
}

fn connect_options(bench: &Bench, tls: Option<&ClientTls>, n: usize) -> ConnectOptions {
    let mut options = ConnectOptions::new(endpoint(bench, n), bench.mysql.user.clone(), bench.mysql.password.clone());
    options.tls = tls.cloned();
    if !bench.mysql.db.is_empty() {
        options.database = Some(bench.mysql.db.clone());
    }
    options.connect_timeout = Duration::from_secs(u64::from(bench.general.thread_init_timeout.max(1)));
    options.compression = bench.mysql.compression;
    options
}

/// A connection error with sysbench's advice where one applies.
fn connect_error(error: ClientError) -> RunError {
    let hint = match error.server_error().map(|e| e.code) {
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
    };
    RunError::Setup(format!("unable to connect: {error}{hint}"))
}

fn rand_params(bench: &Bench) -> Result<RandParams, RunError> {
    RandParams::new(&bench.rand.config()).map_err(|e| RunError::Setup(e.to_string()))
}

fn seed(bench: &Bench) -> u32 {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    srandom_seed(bench.rand.seed, now)
}

/// `--mysql-compression=on` against a server that does not offer
/// compression: libmysqlclient runs uncompressed without a word; wirebench
/// goes on too, but says so, once.
fn warn_if_uncompressed(options: &ConnectOptions, conn: &Connection) {
    static WARNED: AtomicBool = AtomicBool::new(false);
    if options.compression && !conn.is_compressed() && !WARNED.swap(true, Ordering::Relaxed) {
        eprintln!(
            "wirebench: warning: the server at {} ({}) does not offer the compressed protocol; \
             --mysql-compression=on has no effect and this run is uncompressed",
            conn.endpoint(),
            conn.login().server_version
        );
    }
}

/// Runs `bench.command` for `workload`.
pub fn execute(bench: &Bench, workload: Arc<dyn Workload>) -> Result<(), RunError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| RunError::Setup(format!("cannot start the set-up runtime: {e}")))?;
    match bench.command {
        Command::Help => {
            print!("{}", crate::cli::test_help(bench.test));
            Ok(())
        }
        Command::Prepare => runtime.block_on(prepare(bench, tls_config(bench)?.as_ref(), workload)),
        Command::Prewarm => runtime.block_on(prewarm(bench, tls_config(bench)?.as_ref(), workload)),
        Command::Cleanup => runtime.block_on(cleanup(bench, tls_config(bench)?.as_ref(), workload)),
        Command::Run => run(bench, tls_config(bench)?.as_ref(), workload, &runtime),
    }
}

/// `--mysql-ssl*` as a TLS configuration for every connection, or none
/// (also with `--mysql-dry-run`, which connects nowhere). Says on stderr
/// what it decided for the user (a sysbench file name not found, ...).
fn tls_config(bench: &Bench) -> Result<Option<ClientTls>, RunError> {
    if bench.mysql.dry_run {
        return Ok(None);
    }
    let cwd = std::env::current_dir()
        .map_err(|e| RunError::Setup(format!("--mysql-ssl: cannot tell the current directory: {e}")))?;
    let setup = tls::client_tls(&bench.mysql, &cwd).map_err(|e| RunError::Setup(e.to_string()))?;
    for note in &setup.notes {
        eprintln!("wirebench: {note}");
    }
    Ok(setup.tls)
}

async fn prepare(bench: &Bench, tls: Option<&ClientTls>, workload: Arc<dyn Workload>) -> Result<(), RunError> {
    print!("{}", report::Banner);
    print!("{}", report::INITIALIZING_WORKERS);
    let threads = bench.general.threads;
    let table_size = bench.test_options.table_size;
    let params = rand_params(bench)?;
    let seed = seed(bench);
    let mut tasks = JoinSet::new();
    for thread in 0..threads {
        let options = connect_options(bench, tls, thread as usize);
        let dry_run = bench.mysql.dry_run;
        let workload = workload.clone();
        let rng = Rng::for_thread(seed, thread, params);
        tasks.spawn(async move {
            let mut conn = connect_unless_dry(&options, dry_run).await?;
            let context = ScriptContext { thread, threads };
            let mut loading = String::new();
            for sql in workload.prepare(context, rng) {
                if let Some(message) = progress_message(&sql, &mut loading, table_size) {
                    println!("{message}");
                }
                if let Some(conn) = conn.as_mut() {
                    conn.query_drop(&sql).await?;
                }
            }
            Ok::<(), RunError>(())
        });
    }
    join_all(tasks).await
}

/// sysbench's prepare messages, derived from the statement being run;
/// `loading` remembers which table's rows are being inserted.
fn progress_message(sql: &str, loading: &mut String, table_size: u32) -> Option<String> {
    let table_after = |prefix: &str| sql.strip_prefix(prefix).and_then(|rest| rest.split(['(', ' ', '\n']).next());
    if let Some(table) = table_after("CREATE TABLE ") {
        return Some(format!("Creating table '{table}'..."));
    }
    if let Some(table) = table_after("INSERT INTO ") {
        if loading != table {
            table.clone_into(loading);
            return Some(format!("Inserting {table_size} records into '{table}'"));
        }
        return None;
    }
    if sql.starts_with("CREATE INDEX") {
        let table = sql.split(" ON ").nth(1)?.split('(').next()?;
        return Some(format!("Creating a secondary index on '{table}'..."));
    }
    None
}

async fn prewarm(bench: &Bench, tls: Option<&ClientTls>, workload: Arc<dyn Workload>) -> Result<(), RunError> {
    print!("{}", report::Banner);
    print!("{}", report::INITIALIZING_WORKERS);
    let threads = bench.general.threads;
    let mut tasks = JoinSet::new();
    for thread in 0..threads {
        let options = connect_options(bench, tls, thread as usize);
        let dry_run = bench.mysql.dry_run;
        let workload = workload.clone();
        tasks.spawn(async move {
            let mut conn = connect_unless_dry(&options, dry_run).await?;
            for sql in workload.prewarm(ScriptContext { thread, threads }) {
                if let Some(conn) = conn.as_mut() {
                    conn.query_drop(&sql).await?;
                }
            }
            Ok::<(), RunError>(())
        });
    }
    join_all(tasks).await
}

async fn cleanup(bench: &Bench, tls: Option<&ClientTls>, workload: Arc<dyn Workload>) -> Result<(), RunError> {
    print!("{}", report::Banner);
    let mut conn = connect_unless_dry(&connect_options(bench, tls, 0), bench.mysql.dry_run).await?;
    for sql in workload.cleanup() {
        if let Some(table) = sql.strip_prefix("DROP TABLE IF EXISTS ") {
            println!("Dropping table '{table}'...");
        }
        if let Some(conn) = conn.as_mut() {
            conn.query_drop(&sql).await?;
        }
    }
    Ok(())
}

/// A connection, or none with `--mysql-dry-run`: then every statement
/// "succeeds" without being sent, as in sysbench.
async fn connect_unless_dry(options: &ConnectOptions, dry_run: bool) -> Result<Option<Connection>, RunError> {
    if dry_run {
        return Ok(None);
    }
    let conn = Connection::connect(options).await.map_err(connect_error)?;
    warn_if_uncompressed(options, &conn);
    Ok(Some(conn))
}

async fn join_all(mut tasks: JoinSet<Result<(), RunError>>) -> Result<(), RunError> {
    while let Some(joined) = tasks.join_next().await {
        let result = joined.map_err(|e| RunError::Setup(format!("a worker failed: {e}")))?;
        if let Err(e) = result {
            tasks.abort_all();
            return Err(e);
        }
    }
    Ok(())
}

/// Connects a connection and prepares the workload's statements on it
/// (unless they go out as text).
async fn open_connection(redial: &Redial) -> Result<(Connection, Vec<u32>), RunError> {
    let (conn, ids) = redial.open().await.map_err(|e| match e {
        OpenError::Connect(e) => connect_error(e),
        e @ (OpenError::Init { .. } | OpenError::Prepare { .. }) => RunError::Setup(e.to_string()),
    })?;
    warn_if_uncompressed(&redial.options, &conn);
    Ok((conn, ids))
}

/// The statements' pre-encoded packets, for the prepared ids `ids`; with
/// none (`--db-ps-mode=disable`, `--mysql-dry-run`) the id is 0: the
/// packets are only patched, never sent.
fn templates(statements: &[StatementSpec], ids: &[u32]) -> Result<Vec<ExecuteTemplate>, RunError> {
    statements
        .iter()
        .enumerate()
        .map(|(i, spec)| {
            ExecuteTemplate::new(ids.get(i).copied().unwrap_or(0), &spec.slots)
                .map_err(|e| RunError::Setup(format!("cannot encode {:?}: {e}", spec.sql)))
        })
        .collect()
}

/// The connections of each loop, with sockets or (`--mysql-dry-run`) without.
enum Loops {
    Net(Vec<LoopPlan>),
    Dry(Vec<DryLoopPlan>),
}

/// Logs in and prepares every connection (`redial(n)` says how), a bounded
/// number at a time, and spreads them evenly over the loops (`loops` says
/// how many, given where the server turned out to run): connection n to
/// loop n % loops.
fn open_loops(
    bench: &Bench,
    runtime: &tokio::runtime::Runtime,
    redial: impl Fn(usize) -> Redial,
    cpus: &[usize],
    loops: impl FnOnce(ServerPlace) -> usize,
    new_session: impl Fn(usize, usize, Vec<ExecuteTemplate>, Capabilities) -> Session,
) -> Result<Vec<LoopPlan>, RunError> {
    let threads = bench.general.threads as usize;
    let opened = runtime.block_on(async {
        let gate = Arc::new(Semaphore::new(CONNECT_PARALLELISM));
        let mut tasks = JoinSet::new();
        for n in 0..threads {
            let redial = redial(n);
            let gate = gate.clone();
            tasks.spawn(async move {
                let _permit = gate.acquire_owned().await.map_err(|e| RunError::Setup(e.to_string()))?;
                let (conn, ids) = open_connection(&redial).await?;
                Ok::<_, RunError>((n, conn, ids, redial))
            });
        }
        let mut opened = Vec::with_capacity(threads);
        while let Some(joined) = tasks.join_next().await {
            match joined.map_err(|e| RunError::Setup(format!("a connection task failed: {e}")))? {
                Ok(conn) => opened.push(conn),
                Err(e) => {
                    tasks.abort_all();
                    return Err(e);
                }
            }
        }
        opened.sort_by_key(|(n, ..)| *n);
        Ok(opened)
    })?;

    let server = if opened.iter().all(|(_, conn, ..)| conn.server_is_on_this_host()) {
        ServerPlace::ThisHost
    } else {
        ServerPlace::Elsewhere
    };
    let loops = loops(server).max(1);
    let mut plans: Vec<LoopPlan> =
        (0..loops).map(|i| LoopPlan { cpu: cpus.get(i).copied(), connections: Vec::new() }).collect();
    for (n, conn, ids, redial) in opened {
        if n == 0 {
            say_tls(&conn, redial.options.tls.as_ref());
        }
        let endpoint = conn.endpoint().clone();
        let (stream, leftover, login, transport) = conn.into_parts();
        let socket =
            runtime.block_on(async { StdSocket::from_stream(stream) }).map_err(|e| RunError::Setup(e.to_string()))?;
        let plan = plans.get_mut(n % loops).ok_or_else(|| RunError::Setup("no event loop".into()))?;
        let session = new_session(n, plan.connections.len(), templates(&redial.statements, &ids)?, login.capabilities);
        let leftover = BytesMut::from(&leftover[..]);
        plan.connections.push(ConnPlan { endpoint, socket, leftover, session, transport, redial });
    }
    Ok(plans)
}

/// One line on stderr about what TLS the run measures (from its first
/// connection), or that PREFERRED found none.
fn say_tls(conn: &Connection, tls: Option<&ClientTls>) {
    let Some(tls) = tls else { return };
    match conn.tls_description() {
        Some(description) => eprintln!("wirebench: TLS to {}: {description}", conn.endpoint()),
        None => eprintln!(
            "wirebench: --mysql-ssl={}: {} offers no TLS; the connections are plain text",
            tls.mode,
            conn.endpoint()
        ),
    }
}

fn run(
    bench: &Bench,
    tls: Option<&ClientTls>,
    workload: Arc<dyn Workload>,
    runtime: &tokio::runtime::Runtime,
) -> Result<(), RunError> {
    let general = &bench.general;
    let threads = general.threads as usize;
    let params = rand_params(bench)?;
    let seed = seed(bench);
    let backend = Backend::resolve(bench.engine.io).map_err(RunError::Setup)?;
    if backend == Backend::Epoll && bench.engine.poll != PollMode::Sleep && !bench.mysql.dry_run {
        eprintln!(
            "wirebench: --poll={} applies to the io_uring backend; the epoll backend waits in epoll_wait",
            if bench.engine.poll == PollMode::Spin { "spin" } else { "adaptive" }
        );
    }
    let cpus = match &bench.engine.cpus {
        Some(cpus) => cpus.clone(),
        None => core_affinity::get_core_ids().map(|ids| ids.into_iter().map(|c| c.id).collect()).unwrap_or_default(),
    };
    // How many loops, once it is known where the server runs.
    let loops = |server: ServerPlace| match &bench.engine.cpus {
        Some(_) => cpus.len().clamp(1, threads.max(1)),
        None => default_loops(cpus.len(), threads, server),
    };
    let time_s = general.time.filter(|t| *t > 0);
    let forced_shutdown_s = general.forced_shutdown.grace_secs(time_s).zip(time_s).map(|(grace, time)| time + grace);

    let mut out = std::io::stdout().lock();
    let _ = write!(out, "{}", report::Banner);
    let _ = write!(
        out,
        "{}",
        RunHeader {
            threads: general.threads,
            rate: general.rate.unwrap_or(0),
            report_interval: general.report_interval.unwrap_or(0),
            checkpoints: &general.report_checkpoints,
            rand_seed: bench.rand.seed,
            forced_shutdown_s,
        }
    );
    let _ = write!(out, "{}", report::INITIALIZING_WORKERS);
    let _ = out.flush();
    drop(out);

    let statements = Arc::new(workload.statements());
    let text_mode = bench.db.ps_mode == PsMode::Disable;
    let emulated: Option<Arc<[EmulatedStatement]>> = if text_mode {
        Some(EmulatedStatement::all(&statements).map_err(|e| RunError::Setup(e.to_string()))?.into())
    } else {
        None
    };
    let pipeline = bench.engine.pipeline.max(1) as usize;
    // Pipelined, a failed event's tail is already sent and runs anyway:
    // with autocommit off it runs in a transaction its own COMMIT ends (or
    // a ROLLBACK), not statement by statement. At --pipeline=1 there is no
    // tail, and a test without transactions would never commit.
    let autocommit_off = pipeline > 1 && workload.events_are_transactions();
    let redial = |n: usize| Redial {
        options: connect_options(bench, tls, n),
        statements: statements.clone(),
        prepare: !text_mode,
        init: if autocommit_off { &["SET autocommit=0"] } else { &[] },
    };
    let new_session = |n: usize, index: usize, templates: Vec<ExecuteTemplate>, caps: Capabilities| {
        let script = workload.script(ScriptContext { thread: n as u32, threads: threads as u32 });
        let rng = Rng::for_thread(seed, n as u32, params);
        Session::new(index, script, rng, templates, caps, pipeline)
            .draw_after_event(general.percentile.unwrap_or(0) > 0)
            .emulating(emulated.clone())
            .autocommit_off(autocommit_off)
    };
    let plans = if bench.mysql.dry_run {
        // Spread as below, with no connection at all, and no server to leave cores to.
        let loops = loops(ServerPlace::Elsewhere);
        let mut plans: Vec<DryLoopPlan> =
            (0..loops).map(|i| DryLoopPlan { cpu: cpus.get(i).copied(), connections: Vec::new() }).collect();
        for n in 0..threads {
            let plan = plans.get_mut(n % loops).ok_or_else(|| RunError::Setup("no event loop".into()))?;
            let session = new_session(n, plan.connections.len(), templates(&statements, &[])?, Capabilities::default());
            plan.connections.push(DryConn { endpoint: endpoint(bench, n), session });
        }
        Loops::Dry(plans)
    } else {
        Loops::Net(open_loops(bench, runtime, redial, &cpus, loops, new_session)?)
    };
    let per_loop: Vec<usize> = match &plans {
        Loops::Net(plans) => plans.iter().map(|p| p.connections.len()).collect(),
        Loops::Dry(plans) => plans.iter().map(|p| p.connections.len()).collect(),
    };
    let board = StatsBoard::new(&per_loop);
    let control = match general.rate.filter(|r| *r > 0) {
        Some(rate) => RunControl::with_rate(general.events, &per_loop, rate, seed),
        None => RunControl::new(general.events, per_loop.len()),
    };
    let clock = Clock::start();
    let deadline_ns = time_s.map(secs_to_ns);
    let context = LoopContext {
        board: board.clone(),
        control: control.clone(),
        clock,
        deadline_ns,
        ignore: bench.mysql.ignore_errors.clone(),
        poll: bench.engine.poll,
        finished: Default::default(),
    };
    print!("{}", report::THREADS_STARTED);
    let _ = std::io::stdout().flush();
    let handles = match plans {
        Loops::Net(plans) => driver::spawn_loops(plans, backend, &context),
        Loops::Dry(plans) => driver::dry::spawn_loops(plans, &context),
    }
    .map_err(|e| RunError::Setup(e.to_string()))?;

    // The report thread's work: interim lines and checkpoint reports until
    // the loops are done, or the forced shutdown.
    let mut reports = Reports::new(Collector::new(board), general);
    let interval = general.report_interval.filter(|i| *i > 0).map(|i| Duration::from_secs(u64::from(i)));
    let mut next_report = interval.map(|i| clock.started() + i);
    let mut checkpoints = general.report_checkpoints.iter().map(|&c| secs_to_ns(c)).peekable();
    let forced_at_ns = forced_shutdown_s.map(secs_to_ns);
    let at_ns = |ns: u64| clock.started() + Duration::from_nanos(ns);
    let mut ended = 0;
    while ended < handles.len() {
        // Sleep until a loop ends or the next report, checkpoint or forced
        // shutdown is due.
        let wake =
            [next_report, checkpoints.peek().map(|&c| at_ns(c)), forced_at_ns.map(at_ns)].into_iter().flatten().min();
        if context.finished.wait(ended + 1, wake) {
            ended = handles.iter().filter(|h| h.is_finished()).count().max(ended + 1);
            continue;
        }
        if let (Some(at), Some(every)) = (next_report, interval) {
            // Loops that have finished no longer answer: the run is over.
            if std::time::Instant::now() >= at && ended == 0 {
                let queue = control.has_rate().then(|| control.queue_stats());
                reports.interim(clock.now_ns(), queue);
                next_report = Some(at + every);
            }
        }
        if checkpoints.peek().is_some_and(|&at| clock.now_ns() >= at) {
            let now_ns = clock.now_ns();
            reports.checkpoint(now_ns);
            // Like sysbench, skip checkpoints already past (0, duplicates).
            while checkpoints.next_if(|&at| at <= now_ns).is_some() {}
        }
        if forced_at_ns.is_some_and(|at| clock.now_ns() >= at) {
            forced_shutdown(reports, &control, clock);
        }
    }
    let end_ns = clock.now_ns();
    let mut first_error = None;
    for handle in handles {
        match handle.join() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                first_error.get_or_insert(RunError::Driver(e));
            }
            Err(_) => {
                first_error.get_or_insert(RunError::Setup("an event loop panicked".into()));
            }
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    if control.queue_full() {
        return Err(RunError::Setup(QUEUE_FULL.into()));
    }
    reports.collector.drain();
    if general.histogram {
        print!("{}", HistogramReport(&reports.collector.totals().latency));
    }
    print!("{}", reports.cumulative(end_ns, 0));
    Ok(())
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

/// Connections one event loop takes before another core is used, when
/// `--cpus` is not given and the server runs on this host. A loop drives
/// 150-200k queries per second at `--pipeline=1`; a second loop on a host
/// that also runs the server only takes CPU from it and wakes more
/// threads. Measured here with MariaDB on the same 2-core VM: 16
/// connections 53k qps on one loop vs 45k on two, 256 connections 53k vs
/// 48k.
const CONNECTIONS_PER_LOOP: usize = 256;

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

fn secs_to_ns(secs: u32) -> u64 {
    u64::from(secs) * 1_000_000_000
}

/// sysbench's message when the `--rate` queue overflows.
const QUEUE_FULL: &str = "The event queue is full. This means the worker threads are unable to keep up with the \
                          specified event generation rate";

/// How long the report thread waits for the loops to hand over their data.
const COLLECT_TIMEOUT: Duration = Duration::from_millis(50);

/// What the report thread keeps between reports.
struct Reports {
    collector: Collector,
    /// Data a checkpoint collected that the next interim line must still show.
    owed: Interval,
    percentile: u32,
    threads: u32,
    last_interim_ns: u64,
    last_checkpoint_ns: u64,
}

impl Reports {
    fn new(collector: Collector, general: &crate::cli::GeneralOptions) -> Self {
        Reports {
            collector,
            owed: Interval::default(),
            percentile: u32::from(general.percentile.unwrap_or(0)),
            threads: general.threads,
            last_interim_ns: 0,
            last_checkpoint_ns: 0,
        }
    }

    /// Collects what the loops did since the last collection.
    fn collect(&mut self) {
        let interval = self.collector.collect(COLLECT_TIMEOUT);
        self.owed.counters.merge(&interval.counters);
        self.owed.latency.merge(&interval.latency);
    }

    /// One `--report-interval` line (two with `--rate`).
    fn interim(&mut self, now_ns: u64, queue: Option<QueueStats>) {
        self.collect();
        let line = InterimReport {
            time_total_s: now_ns as f64 / 1e9,
            time_interval_s: (now_ns - self.last_interim_ns) as f64 / 1e9,
            threads_running: self.threads,
            counters: &self.owed.counters,
            latency: &self.owed.latency,
            percentile: self.percentile,
            queue,
        };
        print!("{line}");
        let _ = std::io::stdout().flush();
        self.owed.counters = Default::default();
        self.owed.latency.reset();
        self.last_interim_ns = now_ns;
    }

    /// A `--report-checkpoints` report: everything since the start or the
    /// last checkpoint, which then starts afresh (sysbench's
    /// `report_cumulative()` resets its cumulative counters, histogram and
    /// per-thread timers); interim lines are not affected.
    fn checkpoint(&mut self, now_ns: u64) {
        self.collect();
        print!("{}{}", CheckpointLine { time_total_s: now_ns as f64 / 1e9 }, self.cumulative(now_ns, 0));
        let _ = std::io::stdout().flush();
        self.collector.reset_totals();
        self.last_checkpoint_ns = now_ns;
    }

    /// The cumulative report at `now_ns`: its rates are over the time since
    /// the last checkpoint.
    fn cumulative(&self, now_ns: u64, unfinished_on_forced_shutdown: u32) -> FinalReport<'_> {
        let totals = self.collector.totals();
        FinalReport {
            time_total_s: now_ns as f64 / 1e9,
            time_interval_s: now_ns.saturating_sub(self.last_checkpoint_ns) as f64 / 1e9,
            counters: &totals.counters,
            latency: &totals.latency,
            percentile: self.percentile,
            connections: &totals.connections,
            unfinished_on_forced_shutdown,
        }
    }
}

/// `--forced-shutdown`: `--time` plus the grace period has passed and
/// events are still in flight. As sysbench's alarm handler does: stop, say
/// so, print the cumulative report with the number of unfinished events,
/// and exit with status 2 without waiting for the loops (their events may
/// never finish).
fn forced_shutdown(mut reports: Reports, control: &RunControl, clock: Clock) -> ! {
    let now_ns = clock.now_ns();
    control.stop();
    reports.collect();
    let unfinished = u32::try_from(control.queue_stats().concurrency).unwrap_or(u32::MAX);
    eprintln!("FATAL: The --max-time limit has expired, forcing shutdown...");
    print!("{}", reports.cumulative(now_ns, unfinished));
    let _ = std::io::stdout().flush();
    std::process::exit(2)
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
