//! The commands other than `run`: `prepare`, `cleanup`, `help` and the
//! script's own (`sysbench.cmdline.commands`), as sysbench dispatches
//! them: a command the script defines first, then its global function.

use std::sync::Arc;

use mlua::{Function, Lua, Table};

use super::ffi::Entered;
use super::lua_state::{export_options, global_function, new_state, script_name};
use super::script_tasks::{command_state, in_task, run_here};
use super::{cmdline_options, ScriptEnv, ScriptError};

/// What `script_help` found to print.
pub enum Help {
    /// The script's own `help()` ran (and printed what it had to).
    Printed,
    /// sysbench's list of the script's options.
    Options(String),
}

/// `SCRIPT help`: the script's `help()`, else the list of its options.
pub fn script_help(env: &Arc<ScriptEnv>) -> Result<Help, ScriptError> {
    let env = env.clone();
    in_task(&env.clone(), move || help_in_state(&env))
}

fn help_in_state(env: &Arc<ScriptEnv>) -> Result<Help, ScriptError> {
    let lua = new_state(env, 0)?;
    export_options(&lua, env)?;
    let _entered = Entered::new(&lua);
    if command_defined(&lua, "help")? {
        call_command(&lua, "help")?;
        return Ok(Help::Printed);
    }
    if let Some(help) = global_function(&lua, "help")? {
        help.call::<()>(()).map_err(|e| ScriptError::function("help", &e))?;
        return Ok(Help::Printed);
    }
    let defs = cmdline_options::definitions(&lua)?;
    let name = script_name(&env.call.path);
    if defs.is_empty() {
        return Err(ScriptError::NoCommand { command: "help".to_owned(), script: name });
    }
    Ok(Help::Options(cmdline_options::help_text(&name, &defs)))
}

/// No command (a script on standard input, as sysbench reads one): the
/// script's top level runs, in the main state, and nothing else.
pub fn load_only(env: &Arc<ScriptEnv>) -> Result<(), ScriptError> {
    let theirs = env.clone();
    in_task(env, move || new_state(&theirs, 0).map(drop))
}

/// Runs `command` (not `run` or `help`): `env.call.command`'s.
pub fn run_command(env: &Arc<ScriptEnv>, command: &str) -> Result<(), ScriptError> {
    let (theirs, name) = (env.clone(), command.to_owned());
    let parallel = in_task(env, move || command_in_main_state(&theirs, &name))?;
    if parallel {
        parallel_command(env, command)?;
    }
    Ok(())
}

/// Runs `command` in the main state, unless it is a parallel command of
/// several threads: then true, and nothing ran.
fn command_in_main_state(env: &Arc<ScriptEnv>, command: &str) -> Result<bool, ScriptError> {
    let lua = new_state(env, 0)?;
    export_options(&lua, env)?;
    let _entered = Entered::new(&lua);
    if command_defined(&lua, command)? {
        if command_parallel(&lua, command)? && env.threads > 1 {
            return Ok(true);
        }
        call_command(&lua, command)?;
        return Ok(false);
    }
    if !matches!(command, "prepare" | "cleanup") {
        return Err(unknown_command(&lua, env, command));
    }
    let Some(function) = global_function(&lua, command)? else {
        return Err(ScriptError::NoCommand { command: command.to_owned(), script: script_name(&env.call.path) });
    };
    function.call::<()>(()).map_err(|e| ScriptError::function(command, &e))?;
    Ok(false)
}

fn cmdline(lua: &Lua) -> mlua::Result<Table> {
    lua.globals().get::<Table>("sysbench")?.get("cmdline")
}

fn command_defined(lua: &Lua, name: &str) -> Result<bool, ScriptError> {
    let defined: Function = cmdline(lua)?.get("command_defined")?;
    defined.call(name).map_err(|e| ScriptError::function("sysbench.cmdline.command_defined", &e))
}

fn command_parallel(lua: &Lua, name: &str) -> Result<bool, ScriptError> {
    let parallel: Function = cmdline(lua)?.get("command_parallel")?;
    parallel.call(name).map_err(|e| ScriptError::function("sysbench.cmdline.command_parallel", &e))
}

/// `sysbench.cmdline.call_command(name)`; a command that returns false failed.
fn call_command(lua: &Lua, name: &str) -> Result<(), ScriptError> {
    let call: Function = cmdline(lua)?.get("call_command")?;
    let ok: bool = call.call(name).map_err(|e| ScriptError::function("sysbench.cmdline.call_command", &e))?;
    if ok {
        Ok(())
    } else {
        Err(ScriptError::CommandFailed { command: name.to_owned() })
    }
}

/// A parallel command: one state per `--threads`, each calling it with
/// its own `sysbench.tid`, as sysbench's command worker threads do; here
/// tasks of one loop, which keep their connections busy side by side.
fn parallel_command(env: &Arc<ScriptEnv>, command: &str) -> Result<(), ScriptError> {
    let bodies = (0..env.threads).map(|tid| command_state(env, tid, command, call_command));
    run_here(env, bodies.collect())
}

fn unknown_command(lua: &Lua, env: &ScriptEnv, command: &str) -> ScriptError {
    let mut custom = String::new();
    if let Ok(Some(commands)) = cmdline(lua).and_then(|c| c.get::<Option<Table>>("commands")) {
        let mut names: Vec<String> =
            commands.pairs::<String, mlua::Value>().filter_map(|p| p.ok().map(|(k, _)| k)).collect();
        names.sort();
        for name in names {
            custom.push_str(", ");
            custom.push_str(&name);
        }
    }
    ScriptError::UnknownCommand { command: command.to_owned(), script: script_name(&env.call.path), custom }
}
