//! `run`'s main state: the script's `init()` before the states start on
//! the driver's loops (`script_tasks.rs`), `done()` after they end.

use std::sync::{Arc, PoisonError};

use mlua::Lua;

use super::context;
use super::lua_state::{export_options, global_function, new_state, script_name};
use super::report_hooks::{HooksSet, ReportHooks};
use super::script_tasks::{in_task, with_state_in_task};
use super::{ScriptEnv, ScriptError};

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
        let theirs = env.clone();
        let (lua, hooks) = in_task(&env, move || {
            let lua = new_state(&theirs, 0)?;
            let hooks = HooksSet::of(&lua)?;
            export_options(&lua, &theirs)?;
            if let Some(init) = global_function(&lua, "init")? {
                init.call::<()>(()).map_err(|e| ScriptError::function("init", &e))?;
            }
            Ok((lua, hooks))
        })?;
        // What init() counted goes to the run's first state to start, as
        // sysbench counts it in thread 0's counters.
        let init_counts = context::with(&lua, |ctx| std::mem::take(&mut ctx.counted))?;
        *env.init_counts.lock().unwrap_or_else(PoisonError::into_inner) = init_counts;
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
        with_state_in_task(&self.env, &self.lua, |lua| {
            if let Some(done) = global_function(lua, "done")? {
                done.call::<()>(()).map_err(|e| ScriptError::function("done", &e))?;
            }
            Ok(())
        })
    }
}
