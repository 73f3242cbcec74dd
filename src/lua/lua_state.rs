//! One Lua state: LuaJIT with the standard libraries, `package.path` as
//! sysbench sets it, the `sysbench` table, wirebench's prelude, then the
//! script itself.

use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;

use mlua::{Function, Lua, LuaOptions, StdLib, Table, Value};

use super::context::{self, enter, enter_state, SharedCtx, ThreadCtx};
use super::ffi;
use super::{api, cmdline_options, ScriptCall, ScriptEnv, ScriptError, ScriptOrigin};
use crate::rand::Rng;
use crate::stats::Counters;

/// sysbench's version, which scripts read as `sysbench.version`.
pub(crate) const SYSBENCH_VERSION: &str = "1.0.20";

/// The prelude: sysbench's Lua API over wirebench's raw functions and
/// the exported C functions.
const PRELUDE: &str = include_str!("prelude.lua");

/// A state for thread `tid` with the script loaded: its top level has run,
/// `sysbench.opt` is not set yet (as in sysbench, whose scripts' top
/// levels see no options).
pub(crate) fn new_state(env: &Arc<ScriptEnv>, tid: u32) -> Result<Lua, ScriptError> {
    // SAFETY: `ffi` (and `debug`) let a script reach memory Lua does not
    // check, which is why mlua keeps them behind `unsafe`. sysbench opens
    // every library (luaL_openlibs) and its scripts use `ffi` (`ffi.cdef`,
    // `ffi.C.usleep`, 64-bit integers); the script is code its user chose
    // to run, with that user's rights, as under sysbench.
    let lua = unsafe { Lua::unsafe_new_with(StdLib::ALL, LuaOptions::default()) };
    let tid = env.first_tid.saturating_add(tid);
    let rng = Rng::for_thread(env.seed, tid, env.rand);
    let ctx: SharedCtx = Rc::new(RefCell::new(ThreadCtx {
        env: env.clone(),
        tid,
        rng,
        on_close: None,
        event: Default::default(),
        counted: Counters::default(),
        test_args: Vec::new(),
    }));
    lua.set_app_data(ctx.clone());
    let _entered = enter(&ctx);
    set_paths(&lua, &env.call)?;
    lua.globals().set("sysbench", sysbench_table(&lua, env, tid)?)?;
    let raw = lua.create_table()?;
    api::install(&lua, &raw)?;
    lua.globals().set("__wirebench", raw)?;
    lua.load(ffi::CDEFS).set_name("@wirebench/cdefs.lua").exec().map_err(|e| ScriptError::load(&e))?;
    lua.load(PRELUDE).set_name("@wirebench/prelude.lua").exec().map_err(|e| ScriptError::load(&e))?;
    let chunk = lua.load(&env.text[..]).set_name(env.call.chunk_name());
    chunk.exec().map_err(|e| ScriptError::load(&e))?;
    Ok(lua)
}

/// The script's file name, as sysbench names it in messages.
pub(crate) fn script_name(path: &Path) -> String {
    path.file_name().map_or_else(|| path.display().to_string(), |name| name.to_string_lossy().into_owned())
}

/// sysbench's `package.path`: the current directory, the script's own
/// (where its `require`d files usually are), LuaRocks, the system's, and
/// sysbench's data directory, which holds `oltp_common.lua`.
fn set_paths(lua: &Lua, call: &ScriptCall) -> mlua::Result<()> {
    let mut path = String::from("./?.lua;./?/init.lua;./src/lua/?.lua;");
    let dir = (call.origin == ScriptOrigin::File).then(|| call.path.parent()).flatten();
    if let Some(dir) = dir.filter(|d| !d.as_os_str().is_empty()) {
        path.push_str(&format!("{0}/?.lua;", dir.display()));
    }
    if let Ok(home) = std::env::var("HOME") {
        path.push_str(&format!("{home}/.luarocks/share/lua/5.1/?.lua;{home}/.luarocks/share/lua/5.1/?/init.lua;"));
    }
    path.push_str("/usr/local/share/lua/5.1/?.lua;/usr/share/lua/5.1/?.lua;");
    path.push_str("/usr/local/share/sysbench/?.lua;/usr/share/sysbench/?.lua;");
    if let Ok(user) = std::env::var("LUA_PATH") {
        path = user.replace(";;", &format!(";{path};"));
    }
    let package: Table = lua.globals().get("package")?;
    package.set("path", path)
}

fn sysbench_table(lua: &Lua, env: &ScriptEnv, tid: u32) -> mlua::Result<Table> {
    let sysbench = lua.create_table()?;
    sysbench.set("tid", tid)?;
    sysbench.set("version", SYSBENCH_VERSION)?;
    sysbench.set("version_string", format!("sysbench {SYSBENCH_VERSION} (wirebench {})", env!("CARGO_PKG_VERSION")))?;
    let cmdline = lua.create_table()?;
    let argv = lua.create_table()?;
    for (i, arg) in env.argv.iter().enumerate() {
        argv.raw_set(i, arg.as_str())?;
    }
    cmdline.set("argv", argv)?;
    cmdline.set("command", env.call.command.as_deref())?;
    // nil for standard input, as sysbench's `sbtest.lname` is NULL then.
    let path = (env.call.origin == ScriptOrigin::File).then(|| env.call.path.display().to_string());
    cmdline.set("script_path", path)?;
    sysbench.set("cmdline", cmdline)?;
    let error = lua.create_table()?;
    error.set("NONE", 0)?;
    error.set("RESTART_EVENT", 1)?;
    sysbench.set("error", error)?;
    sysbench.set("hooks", lua.create_table()?)?;
    Ok(sysbench)
}

/// The options exported into `sysbench.opt` of `lua`: sysbench's and the
/// script's (checked against its definitions).
/// Its definitions are registered for `sb_print_test_options`, as sysbench
/// registers them (`sb_lua_set_test_args`).
pub(crate) fn export_options(lua: &Lua, env: &ScriptEnv) -> Result<(), ScriptError> {
    let _entered = enter_state(lua)?;
    cmdline_options::export_all(lua, &env.general, &env.call.options, &script_name(&env.call.path))?;
    let defs = cmdline_options::definitions(lua)?;
    context::with(lua, |ctx| ctx.test_args = defs)?;
    Ok(())
}

/// The global function `name`, if the script defines one.
pub(crate) fn global_function(lua: &Lua, name: &str) -> mlua::Result<Option<Function>> {
    Ok(match lua.globals().get::<Value>(name)? {
        Value::Function(f) => Some(f),
        _ => None,
    })
}
