//! A Lua script's command (`wirebench ./my_test.lua run`): the script
//! gets sysbench's options and the login, and `run` goes through the same
//! header, limits, interim and final reports as the built-in tests.

use std::sync::Arc;

use super::benchmark::{
    forced_shutdown_s, loop_context, print_header, start_threads, supervise_to_report, Threads, ANSWER_GRACE_NS,
};
use super::interrupt::Interrupts;
use super::output::Output;
use super::result_sink::ResultSink;
use super::script_options::general_options;
use super::script_text;
use super::setup::{connect_options, rand_params, seed, tls_config};
use super::supervise::secs_to_ns;
use super::{print_banner, Outcome, RunError};
use crate::cli::Bench;
use crate::lua::{self, Help, ScriptCall, ScriptEnv, ThreadsPlan};
use crate::rand::{RandUnique, SharedUnique};

/// Carries out `call` for `bench`'s command line.
pub(super) fn execute(bench: &Bench, call: &ScriptCall) -> Result<Outcome, RunError> {
    refuse_engine_options(bench)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(RunError::Runtime)?;
    let interrupts = Interrupts::watch(&runtime).map_err(RunError::Signals)?;
    // sysbench prints its banner before it reads a script from stdin.
    print_banner()?;
    let text = script_text::read_script(call)?;
    let env = Arc::new(script_env(bench, call, text)?);
    match call.command.as_deref() {
        None => lua::load_only(&env)?,
        Some("help") => {
            if let Help::Options(text) = lua::script_help(&env)? {
                Output::Stdout.print(text)?;
            }
        }
        Some("run") => return run(bench, env, &interrupts),
        Some(command) => lua::run_command(&env, command)?,
    }
    Ok(Outcome::Completed)
}

/// Options of the event loops that would silently do nothing here.
fn refuse_engine_options(bench: &Bench) -> Result<(), RunError> {
    if bench.mysql.dry_run {
        return Err(RunError::NotForScripts("--mysql-dry-run"));
    }
    if bench.engine.pipeline > 1 {
        return Err(RunError::NotForScripts("--pipeline"));
    }
    if bench.engine.cpus.is_some() {
        return Err(RunError::NotForScripts("--cpus"));
    }
    Ok(())
}

fn script_env(bench: &Bench, call: &ScriptCall, text: Arc<[u8]>) -> Result<ScriptEnv, RunError> {
    let tls = tls_config(bench)?;
    let login = bench.clone();
    let connect = Box::new(move |n: u32| connect_options(&login, tls.as_ref(), n as usize));
    Ok(ScriptEnv {
        call: call.clone(),
        text,
        threads: bench.general.threads,
        argv: std::env::args().collect(),
        general: general_options(bench),
        connect,
        rand: rand_params(bench)?,
        seed: seed(bench),
        unique: Arc::new(SharedUnique::new(RandUnique::sysbench_upstream())),
        ignore: bench.mysql.ignore_errors.clone(),
        draw_after_event: bench.general.percentile.is_some(),
        sql_used: Default::default(),
    })
}

/// `run`: `init()`, the threads, the reports, `done()`.
fn run(bench: &Bench, env: Arc<ScriptEnv>, interrupts: &Interrupts) -> Result<Outcome, RunError> {
    let forced_shutdown_s = forced_shutdown_s(bench);
    print_header(bench, forced_shutdown_s)?;
    let plan = ThreadsPlan::init(env)?;
    let threads = vec![1; bench.general.threads as usize];
    let (context, _) = loop_context(bench, &threads, seed(bench), None);
    let general = &bench.general;
    let cut_ns = general.time.map(|time| secs_to_ns(time) + secs_to_ns(general.warmup_time) + ANSWER_GRACE_NS);
    let hooks =
        plan.report_hooks(general.report_interval.is_some_and(|i| i > 0), !general.report_checkpoints.is_empty())?;
    // A script's connections are its own: no server version to give.
    let mut sink = ResultSink::new(bench);
    sink.clock_started(None, std::time::Duration::ZERO);
    let hdr_log = start_threads(bench, &context, &sink.hdr_log_comment())?;
    let handles = lua::spawn_threads(&plan, &context, cut_ns)?;
    let sql_used = Some(plan.env().sql_used.clone());
    let threads = Threads { handles, hdr_log, hooks, sql_used };
    let outcome = supervise_to_report(bench, &context, threads, forced_shutdown_s, interrupts, &mut sink)?;
    plan.done()?;
    sink.finish_run(bench)?;
    Ok(outcome)
}
