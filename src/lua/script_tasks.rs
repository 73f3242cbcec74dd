//! A script's states as tasks of the driver's loops (`driver::tasks::fiber_task`): each
//! `run` state's `thread_init`, `thread_run` (sysbench's event loop, or
//! the script's own) and `thread_done` run in one task, and so do the main
//! state's functions (`init`, `done`, commands), on a loop of this thread:
//! wherever a script calls SQL, the driver's loop waits for the answer.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use mlua::Lua;

use super::context::enter_state;
use super::lua_state::{export_options, global_function, new_state};
use super::{ScriptEnv, ScriptError};
use crate::driver::{self, with_caller, Clock, DriverError, LoopContext, RunControl, TaskBody, TaskError, TaskMaker};
use crate::stats::StatsBoard;

/// The tasks of `run`, one per state of this instance, by state number.
pub fn run_command_tasks(env: &Arc<ScriptEnv>) -> Vec<TaskMaker> {
    (0..env.threads)
        .map(|tid| {
            let env = env.clone();
            let make: TaskMaker =
                Box::new(move || -> TaskBody { Box::new(move || run_state(&env, tid).map_err(boxed)) });
            make
        })
        .collect()
}

fn boxed(error: ScriptError) -> TaskError {
    Box::new(error)
}

/// One state of `run`: loaded, `thread_init`, `thread_run`, `thread_done`.
/// The thread functions get the whole run's thread number (with
/// `--shard`, this instance's first plus `tid`), as sysbench passes
/// `sysbench.tid`.
fn run_state(env: &Arc<ScriptEnv>, tid: u32) -> Result<(), ScriptError> {
    let lua = new_state(env, tid)?;
    export_options(&lua, env)?;
    take_init_counts(env, &lua)?;
    let number = env.first_tid.saturating_add(tid);
    if let Some(thread_init) = global_function(&lua, "thread_init")? {
        thread_init.call::<()>(number).map_err(|e| ScriptError::function("thread_init", &e))?;
    }
    // sysbench's barrier: every state is set up before the run's clock starts.
    with_caller(|caller| caller.wait_for_start());
    let Some(thread_run) = global_function(&lua, "thread_run")? else {
        return Err(ScriptError::Lua("thread_run() is not a function (the script replaced it?)".to_owned()));
    };
    let events = thread_run.call::<()>(number);
    // The run's time was up while a call waited: the thread's events stop
    // there, and its SQL fails from now on (thread_done's too).
    let cut = was_cut();
    if !cut {
        events.map_err(|e| ScriptError::function("thread_run", &e))?;
    }
    if let Some(thread_done) = global_function(&lua, "thread_done")? {
        let done = thread_done.call::<()>(number);
        if !cut {
            done.map_err(|e| ScriptError::function("thread_done", &e))?;
        }
    }
    Ok(())
}

/// The first state to start takes what the main state's `init()` counted.
fn take_init_counts(env: &ScriptEnv, lua: &Lua) -> Result<(), ScriptError> {
    let counts = std::mem::take(&mut *env.init_counts.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
    if counts != Default::default() {
        super::context::with(lua, |ctx| ctx.add_counts(&counts))?;
    }
    Ok(())
}

fn was_cut() -> bool {
    with_caller(|caller| caller.was_cut()).unwrap_or(false)
}

/// Runs `f` as a task on a loop of this thread and returns what it
/// returns: the main state's work (loading it, `init()`, a command), so
/// that its SQL goes through the driver as the threads' does.
pub fn in_task<T: 'static>(
    env: &ScriptEnv,
    f: impl FnOnce() -> Result<T, ScriptError> + 'static,
) -> Result<T, ScriptError> {
    let out = Rc::new(RefCell::new(None));
    let theirs = out.clone();
    let body: TaskBody = Box::new(move || {
        let value = f().map_err(boxed)?;
        *theirs.borrow_mut() = Some(value);
        Ok(())
    });
    run_here(env, vec![body])?;
    let value = out.borrow_mut().take();
    value.ok_or_else(|| ScriptError::Lua("the main state's task ended without its result".to_owned()))
}

/// Runs `lua`'s work `f` in a task: the state is entered there first, so
/// that its C functions find it.
pub fn with_state_in_task<T: 'static>(
    env: &ScriptEnv,
    lua: &Lua,
    f: impl FnOnce(&Lua) -> Result<T, ScriptError> + 'static,
) -> Result<T, ScriptError> {
    let lua = lua.clone();
    in_task(env, move || {
        let _outside = enter_state(&lua)?;
        f(&lua)
    })
}

/// Runs `bodies` as tasks on a loop of this thread until all have ended.
pub fn run_here(env: &ScriptEnv, bodies: Vec<TaskBody>) -> Result<(), ScriptError> {
    let context = LoopContext {
        board: StatsBoard::new(&[bodies.len().max(1)]),
        control: RunControl::new(None, 1),
        clock: Clock::start(),
        deadline_ns: None,
        ignore: env.ignore.clone(),
        finished: Default::default(),
        usage: Default::default(),
        idle: None,
    };
    match driver::run_tasks(0, bodies, env.backend, env.command_wait, &context) {
        Ok(()) => Ok(()),
        Err(DriverError::Script(error)) => Err(match error.downcast::<ScriptError>() {
            Ok(error) => *error,
            Err(other) => ScriptError::Lua(other.to_string()),
        }),
        Err(other) => Err(ScriptError::Engine(other.to_string())),
    }
}

/// The body of a parallel command's state `tid`.
pub(crate) fn command_state(
    env: &Arc<ScriptEnv>,
    tid: u32,
    command: &str,
    call: fn(&Lua, &str) -> Result<(), ScriptError>,
) -> TaskBody {
    let (env, command) = (env.clone(), command.to_owned());
    Box::new(move || {
        let lua = new_state(&env, tid).map_err(boxed)?;
        export_options(&lua, &env).map_err(boxed)?;
        call(&lua, &command).map_err(boxed)
    })
}
