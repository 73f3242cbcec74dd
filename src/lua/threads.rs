//! `run`: the script's `init()` in the main state, then one thread per
//! `--threads`, each with its own state running `thread_init`, events
//! while the limits allow, and `thread_done`, its statistics handed to the
//! collector as an event loop hands them.

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use mlua::{Function, Lua, Table};

use super::error::lua_message;
use super::reports::{HooksSet, ReportHooks};
use super::sql::CUT_MARK;
use super::state::{export_options, global_function, new_state, script_name, ThreadCtx};
use super::{ScriptEnv, ScriptError};
use crate::driver::{Admission, Budget, LoopContext};

/// The main state of a `run`: `init()` before the threads start, `done()`
/// after they end.
pub struct ThreadsPlan {
    lua: Lua,
    env: Arc<ScriptEnv>,
    hooks: HooksSet,
}

impl ThreadsPlan {
    /// Loads the script, exports its options and runs its `init()`;
    /// refuses a script without `event()`.
    pub fn init(env: Arc<ScriptEnv>) -> Result<ThreadsPlan, ScriptError> {
        let lua = new_state(&env, 0)?;
        let hooks = HooksSet::of(&lua)?;
        export_options(&lua, &env)?;
        if let Some(init) = global_function(&lua, "init")? {
            init.call::<()>(()).map_err(|e| ScriptError::function("init", &e))?;
        }
        if global_function(&lua, "event")?.is_none() {
            return Err(ScriptError::NoEvent { script: script_name(&env.call.path) });
        }
        Ok(ThreadsPlan { lua, env, hooks })
    }

    /// The script's report hooks, if it set any: `interval` is
    /// `--report-interval` given, `checkpoints` `--report-checkpoints`.
    pub fn report_hooks(&self, interval: bool, checkpoints: bool) -> Result<Option<ReportHooks>, ScriptError> {
        ReportHooks::new(&self.env, &self.lua, self.hooks, interval, checkpoints)
    }

    pub fn env(&self) -> &Arc<ScriptEnv> {
        &self.env
    }

    /// The script's `done()`, after every thread ended.
    pub fn done(self) -> Result<(), ScriptError> {
        if let Some(done) = global_function(&self.lua, "done")? {
            done.call::<()>(()).map_err(|e| ScriptError::function("done", &e))?;
        }
        Ok(())
    }
}

/// Starts the script's threads; thread `tid` reports as loop `tid` of
/// `context.board`. `cut_ns`: when a call still waiting for the server
/// gives up (the end of `--time` and a grace), from the run's start.
pub fn spawn_threads(
    plan: &ThreadsPlan,
    context: &LoopContext,
    cut_ns: Option<u64>,
) -> Result<Vec<JoinHandle<Result<(), ScriptError>>>, ScriptError> {
    (0..plan.env.threads)
        .map(|tid| {
            let (env, context) = (plan.env.clone(), context.clone());
            std::thread::Builder::new()
                .name(format!("wirebench-lua-{tid}"))
                .spawn(move || {
                    let _finished = context.finished.guard();
                    let result = run_thread(&env, tid, &context, cut_ns);
                    if result.is_err() {
                        // One thread failing ends the run, as in sysbench.
                        context.control.stop();
                    }
                    result
                })
                .map_err(ScriptError::Thread)
        })
        .collect()
}

fn run_thread(env: &Arc<ScriptEnv>, tid: u32, context: &LoopContext, cut_ns: Option<u64>) -> Result<(), ScriptError> {
    let lua = new_state(env, tid)?;
    export_options(&lua, env)?;
    let cut = cut_ns.map(|at| tokio::time::Instant::from_std(context.clock.started() + Duration::from_nanos(at)));
    with_ctx(&lua, |ctx| {
        ctx.cut_at = cut;
        ctx.control = Some(context.control.clone());
    })?;
    if let Some(thread_init) = global_function(&lua, "thread_init")? {
        thread_init.call::<()>(tid).map_err(|e| ScriptError::function("thread_init", &e))?;
    }
    with_ctx(&lua, |ctx| ctx.stats = Some(context.board.loop_stats(tid as usize)))?;
    let events = run_events(&lua, env, tid, context);
    let done = match global_function(&lua, "thread_done")? {
        Some(thread_done) if events.is_ok() => {
            thread_done.call::<()>(tid).map_err(|e| ScriptError::function("thread_done", &e))
        }
        _ => Ok(()),
    };
    with_ctx(&lua, |ctx| {
        if let Some(mut stats) = ctx.stats.take() {
            context.board.publish(tid as usize, &mut stats);
        }
    })?;
    events.and(done)
}

fn with_ctx<T>(lua: &Lua, f: impl FnOnce(&mut ThreadCtx) -> T) -> Result<T, ScriptError> {
    let mut ctx = lua.app_data_mut::<ThreadCtx>().ok_or_else(|| ScriptError::Lua("no thread context".to_owned()))?;
    Ok(f(&mut ctx))
}

/// Events while the budget admits them, each timed from its admission
/// (under `--rate`, from its arrival) to the end of `event()`.
fn run_events(lua: &Lua, env: &ScriptEnv, tid: u32, context: &LoopContext) -> Result<(), ScriptError> {
    let raw: Table = lua.globals().get("__wirebench")?;
    let run_event: Function = raw.get("run_event")?;
    let mut budget = Budget::for_loop(context.control.clone(), context.deadline_ns, tid as usize);
    loop {
        let now = context.clock.now_ns();
        // Latency from the intended start (under --rate), service time from now.
        let started = match budget.admit(now) {
            Admission::Start(at) => at,
            Admission::Over => return Ok(()),
            Admission::Wait => {
                let Some(wake) = budget.wake_at(now) else { return Ok(()) };
                std::thread::sleep(Duration::from_nanos(wake.saturating_sub(now).min(1_000_000)));
                budget.publish(context.clock.now_ns());
                continue;
            }
        };
        let stop = match run_event.call::<bool>(tid) {
            Ok(stop) => stop,
            Err(e) if lua_message(&e).contains(CUT_MARK) => return Ok(()),
            Err(e) => return Err(ScriptError::function("thread_run", &e)),
        };
        let end = context.clock.now_ns();
        budget.finish(1);
        budget.publish(end);
        with_ctx(lua, |ctx| {
            if env.draw_after_event {
                ctx.rng.next_u64();
            }
            if let Some(stats) = ctx.stats.as_mut() {
                stats.record_events(0, 1, end.saturating_sub(started), end.saturating_sub(now));
                context.board.publish_if_requested(tid as usize, stats);
            }
        })?;
        if stop {
            return Ok(());
        }
    }
}
