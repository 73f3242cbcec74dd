//! `run`'s main state: the script's `init()` before the states start on
//! their loops (`loops.rs`), `done()` after they end.

use std::sync::{Arc, PoisonError};

use mlua::Lua;

use super::ffi::Entered;
use super::reports::{HooksSet, ReportHooks};
use super::state::{export_options, global_function, new_state, script_name, ThreadCtx};
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
        let lua = new_state(&env, 0)?;
        let hooks = HooksSet::of(&lua)?;
        export_options(&lua, &env)?;
        if let Some(init) = global_function(&lua, "init")? {
            let _entered = Entered::new(&lua);
            init.call::<()>(()).map_err(|e| ScriptError::function("init", &e))?;
        }
        if let Some(mut ctx) = lua.app_data_mut::<ThreadCtx>() {
            *env.init_counts.lock().unwrap_or_else(PoisonError::into_inner) = std::mem::take(&mut ctx.uncounted);
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
            let _entered = Entered::new(&self.lua);
            done.call::<()>(()).map_err(|e| ScriptError::function("done", &e))?;
        }
        Ok(())
    }
}
