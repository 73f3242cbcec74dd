//! A Lua script's command (`wirebench ./my_test.lua run`): the script
//! gets sysbench's options and the login, and `run` goes through the same
//! header, limits, interim and final reports as the built-in tests.

use std::sync::Arc;

use super::benchmark::{
    forced_shutdown_s, print_header, say_waits, start_clock, start_threads, supervise_to_report, unstarted_context,
    Threads,
};
use super::idle_connections;
use super::interrupt::Interrupts;
use super::output::{alert_line, stderr_line, Output};
use super::result_sink::ResultSink;
use super::script_options::general_options;
use super::script_text;
use super::server_sampling::{open_sampler, start_sampling};
use super::setup::{connect_options, rand_params, seed, tls_config};
use super::shard_plan::{check_start_at, plan_shard, say_started, wait_for_start, ShardPlan, ShardThreads};
use super::{print_banner, RunError, RunOutcome};
use crate::cli::Bench;
use crate::client::Endpoint;
use crate::driver::{
    self, plan_wait, Backend, LoopRuns, LoopSite, LoopWait, ServerPlacement, ServerPlacements, TaskLoopPlan, TaskMaker,
    WaitRequest,
};
use crate::lua::{self, Help, ScriptCall, ScriptEnv, ThreadsPlan};
use crate::rand::{shard_seed, RandUnique, SharedUnique};
use crate::watch::Watch;

/// Carries out `call` for `bench`'s command line; with `--shard`, this
/// instance's part of the script's `run`.
pub(super) fn execute_script(
    bench: &Bench,
    call: &ScriptCall,
    watch: Option<&Arc<Watch>>,
) -> Result<RunOutcome, RunError> {
    refuse_engine_options(bench, call)?;
    let backend = super::benchmark::backend(bench)?;
    let (part, threads) = match script_shard(bench, call)? {
        Some(planned) => planned,
        None => return Ok(RunOutcome::Completed),
    };
    let (runtime, interrupts) = super::runtime_with_signals(1)?;
    // sysbench prints its banner before it reads a script from stdin.
    print_banner()?;
    let text = script_text::read_script(call)?;
    let env = Arc::new(script_env(bench, &part, call, text, threads, backend)?);
    match call.command.as_deref() {
        None => lua::load_only(&env)?,
        Some("help") => {
            if let Help::Options(text) = lua::script_help(&env)? {
                Output::Stdout.print(text)?;
            }
        }
        Some("run") => {
            let run = ScriptRun { threads_total: threads.total, backend, runtime: &runtime, interrupts: &interrupts };
            return run_script(&part, env, &run, watch);
        }
        Some(command) => {
            say_waits(std::iter::once((None, &command_wait(&part, backend))));
            lua::run_command(&env, command)?
        }
    }
    Ok(RunOutcome::Completed)
}

/// This instance's part of the script's command: the whole of it in one
/// instance; with `--shard`, its threads, `--events` and `--rate` of a
/// `run` (the other commands are the script's own code, which no shard
/// can split), or `None` for a shard with nothing to do.
fn script_shard(bench: &Bench, call: &ScriptCall) -> Result<Option<(Bench, ShardThreads)>, RunError> {
    if !bench.general.shard.is_whole() && call.command.as_deref() != Some("run") {
        let command = call.command.clone().unwrap_or_else(|| "top-level".to_owned());
        return Err(RunError::ShardedScriptCommand { command });
    }
    check_start_at(bench.general.start_at)?;
    match plan_shard(bench) {
        ShardPlan::Run { bench, threads } => Ok(Some((*bench, threads))),
        ShardPlan::Idle(why) => {
            stderr_line(format_args!("{why}"));
            Ok(None)
        }
    }
}

/// Options of the event loops that would silently do nothing here, and a
/// `--cpus` core this process may not run on.
fn refuse_engine_options(bench: &Bench, call: &ScriptCall) -> Result<(), RunError> {
    if bench.mysql.dry_run {
        return Err(RunError::NotForScripts("--mysql-dry-run"));
    }
    if bench.engine.pipeline > 1 {
        return Err(RunError::NotForScripts("--pipeline"));
    }
    if bench.general.per_statement {
        return Err(RunError::PerStatementForScripts);
    }
    if let Some(cpus) = &bench.engine.cpus {
        if call.thread_per_state {
            return Err(RunError::CpusWithThreadPerState);
        }
        driver::check_loop_cpus(cpus)?;
    }
    Ok(())
}

/// Where a script's states run, and how many share each loop: with
/// `--cpus`, a loop pinned to each core given; with
/// `--lua-thread-per-state`, a loop per state, as sysbench has a thread
/// per state. By default, where the server shares this process's cores
/// (`local`), a loop per state, each waiting for its own answers so that
/// the server gets the cores between them, as the built-in tests leave a
/// local server its cores (up to [`LOCAL_LOOPS_PER_CORE`] loops a core:
/// beyond, states share them, each loop's statistics taking about a
/// megabyte); else (a server elsewhere or on cores of its own) a loop per
/// core this process may use, its states side by side on it.
fn script_loops(bench: &Bench, env: &ScriptEnv, local: bool) -> Vec<Option<usize>> {
    let threads = bench.general.threads.max(1) as usize;
    if env.call.thread_per_state {
        return vec![None; threads];
    }
    if let Some(cpus) = &bench.engine.cpus {
        return cpus.iter().map(|&cpu| Some(cpu)).take(threads).collect();
    }
    let cores = driver::allowed_cpus().map_or(1, |cpus| cpus.len().max(1));
    if local {
        return vec![None; threads.min(cores * LOCAL_LOOPS_PER_CORE)];
    }
    vec![None; cores.min(threads)]
}

/// With a server on this host, at most this many loops a core: beyond,
/// states share them (each loop's statistics take about a megabyte;
/// docs/benchmarking.md#a-loop-per-state).
const LOCAL_LOOPS_PER_CORE: usize = 8;

/// The loops' plans: state `tid` runs on loop `tid % loops`, each loop
/// waiting as the wait plan says for its site (`driver::plan_wait`).
fn task_loop_plans(bench: &Bench, env: &Arc<ScriptEnv>, backend: Backend) -> Vec<TaskLoopPlan> {
    let endpoints: Vec<Endpoint> = state_endpoints(env).collect();
    let servers = ServerPlacements::look_up(endpoints.iter(), |_| None);
    let our_cpus = driver::allowed_cpus();
    let local = servers.all().any(|server| server.shares_cores(our_cpus.as_deref()));
    let cpus = script_loops(bench, env, local);
    let count = cpus.len().max(1);
    let mut loops: Vec<(Vec<TaskMaker>, Vec<&ServerPlacement>)> = cpus.iter().map(|_| Default::default()).collect();
    for (tid, task) in lua::run_command_tasks(env).into_iter().enumerate() {
        let Some((tasks, seen)) = loops.get_mut(tid % count) else { continue };
        tasks.push(task);
        let server = endpoints.get(tid).and_then(|endpoint| servers.get(endpoint));
        if let Some(server) = server.filter(|server| !seen.iter().any(|s| std::ptr::eq(*s, *server))) {
            seen.push(server);
        }
    }
    let request = WaitRequest {
        asked: bench.engine.poll,
        backend,
        pipeline: bench.engine.pipeline,
        our_cpus: our_cpus.as_deref(),
    };
    let runs = LoopRuns::ScriptStates { thread_per_state: env.call.thread_per_state };
    let plans = cpus.into_iter().zip(loops).map(|(cpu, (tasks, servers))| {
        let wait = plan_wait(&request, &LoopSite { cpu, connections: tasks.len(), runs, servers });
        TaskLoopPlan { cpu, tasks, wait }
    });
    plans.collect()
}

/// How the loop of a script's command other than `run` (and its `init()`)
/// waits.
fn command_wait(bench: &Bench, backend: Backend) -> LoopWait {
    let request = WaitRequest { asked: bench.engine.poll, backend, pipeline: bench.engine.pipeline, our_cpus: None };
    plan_wait(&request, &LoopSite { cpu: None, connections: 1, runs: LoopRuns::ScriptCommand, servers: Vec::new() })
}

/// The server each of the script's states connects to, by the whole
/// run's thread numbers.
fn state_endpoints(env: &ScriptEnv) -> impl Iterator<Item = Endpoint> + '_ {
    (0..env.threads).map(|tid| (env.connect)(env.first_tid.saturating_add(tid)).endpoint)
}

/// What the script's states share: `whole`'s options in `sysbench.opt`
/// (with `--shard`, the whole run's `--threads`, `--events` and `--rate`,
/// as its threads' numbers are the whole run's), `part`'s threads.
fn script_env(
    whole: &Bench,
    part: &Bench,
    call: &ScriptCall,
    text: Arc<[u8]>,
    threads: ShardThreads,
    backend: Backend,
) -> Result<ScriptEnv, RunError> {
    let tls = tls_config(part)?;
    let login = part.clone();
    let connect = Box::new(move |n: u32| connect_options(&login, tls.as_ref(), n as usize));
    let shard = part.general.shard;
    let unique = SharedUnique::for_part(RandUnique::sysbench_upstream(), shard.index(), shard.count());
    Ok(ScriptEnv {
        call: call.clone(),
        text,
        threads: part.general.threads,
        first_tid: threads.first,
        argv: std::env::args().collect(),
        general: general_options(whole),
        connect,
        rand: rand_params(part)?,
        seed: seed(part),
        unique: Arc::new(unique),
        ignore: part.mysql.ignore_errors.clone(),
        draw_after_event: part.general.percentile.is_some(),
        sql_used: Default::default(),
        result_limit: usize::try_from(call.result_limit).unwrap_or(usize::MAX),
        backend,
        command_wait: command_wait(part, backend).mode,
        init_counts: Default::default(),
    })
}

/// `run`: `init()`, the threads, the reports, `done()`.
/// How a script's `run` runs: its connections, loops and runtime.
struct ScriptRun<'a> {
    threads_total: u32,
    backend: Backend,
    runtime: &'a tokio::runtime::Runtime,
    interrupts: &'a Interrupts,
}

fn run_script(
    bench: &Bench,
    env: Arc<ScriptEnv>,
    run: &ScriptRun<'_>,
    watch: Option<&Arc<Watch>>,
) -> Result<RunOutcome, RunError> {
    let ScriptRun { threads_total, backend, runtime, interrupts } = *run;
    let forced_shutdown_s = forced_shutdown_s(bench);
    let mut identified = bench.clone();
    if let Some(identity) = identified.results.run_identity.as_mut() {
        identity.test = env.call.name();
        identity.script = Some(script_digest(&env));
    }
    let bench = &identified;
    // As sysbench: the script's top level and init() run before the header.
    let plan = ThreadsPlan::init(env)?;
    print_header(bench, forced_shutdown_s)?;
    let loops = task_loop_plans(bench, plan.env(), backend);
    say_waits(loops.iter().map(|plan| (plan.cpu, &plan.wait)));
    let per_loop: Vec<usize> = loops.iter().map(|l| l.tasks.len().max(1)).collect();
    let shard_seed = shard_seed(seed(bench), bench.general.shard.index());
    let mut context = unstarted_context(bench, &per_loop, shard_seed, &[]);
    let general = &bench.general;
    let hooks =
        plan.report_hooks(general.report_interval.is_some_and(|i| i > 0), !general.report_checkpoints.is_empty())?;
    let mut sink = ResultSink::new(bench);
    sink.name_test(plan.env().call.name());
    sink.watch_with(watch.cloned());
    let connect = &plan.env().connect;
    let options_for = |g: usize| connect(u32::try_from(g).unwrap_or(u32::MAX));
    idle_connections::attach(bench, threads_total, per_loop.len(), options_for, &mut context, &mut sink)?;
    let sampler = open_sampler(bench, || (plan.env().connect)(plan.env().first_tid))?;
    if let Err(signal) = wait_for_start(bench, runtime, interrupts) {
        alert_line(format_args!("wirebench: run interrupted by {signal} while waiting for --start-at: no event ran"));
        return Ok(RunOutcome::Interrupted(signal));
    }
    // The states load and run thread_init on their loops, then wait at the
    // gate: the run's clock starts once all have (sysbench's barrier).
    let gate = driver::StartGate::new();
    let loop_count = loops.len();
    let handles = driver::spawn_task_loops(loops, backend, &context, &gate).map_err(RunError::SpawnLoops)?;
    gate.wait_for_loops(loop_count);
    let server = start_sampling(bench, sampler)?;
    let late = start_clock(bench, &mut context, general.start_at);
    say_started(bench, late);
    // A script's connections are its own: no server version to give.
    sink.clock_started(None, late);
    let hdr_log = start_threads(bench, &context, (&sink.hdr_log_comment(), late))?;
    gate.open(driver::Started { clock: context.clock, deadline_ns: context.deadline_ns });
    let sql_used = Some(plan.env().sql_used.clone());
    let threads = Threads { handles, hdr_log, hooks, sql_used, server };
    let outcome = supervise_to_report(bench, &context, (threads, late), forced_shutdown_s, interrupts, &mut sink)?;
    plan.done()?;
    sink.finish_run(bench)?;
    Ok(outcome)
}

/// What tells one script's run from another's in its `run_id`: a hash
/// (FNV-1a, as the run_id's) of the script's text and of the options
/// given to it, so that `wirebench merge` refuses shards that ran
/// different scripts, versions of one, or its options set otherwise.
fn script_digest(env: &ScriptEnv) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let options = env.call.options.iter().flat_map(|(name, value)| {
        [name.as_bytes(), b"=", value.as_deref().unwrap_or("").as_bytes(), b"\n"].into_iter()
    });
    for part in std::iter::once(&env.text[..]).chain([&b"\0"[..]]).chain(options) {
        for &byte in part {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{hash:016x}")
}
