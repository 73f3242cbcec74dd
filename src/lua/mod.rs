//! Lua workloads: a sysbench 1.0.20 script (`wirebench my_test.lua run`)
//! loaded in LuaJIT and run with sysbench's Lua API.
//!
//! sysbench gives each worker thread a Lua state of its own and runs the
//! script's `thread_run` (its event loop, in Lua) in it, each SQL call a
//! C call that blocks on libmysqlclient. wirebench gives each `--threads`
//! a Lua state too, run as a task of the driver's event loops
//! (`driver::tasks::fiber_task`, `script_tasks.rs`): a SQL call is the same C call (sysbench's
//! `db_query`, `db_execute`, ... exported by wirebench's binary,
//! `sql_ffi/`), which hands the command to the state's loop and waits there
//! while the loop runs its other states and connections. The loops are
//! the built-in tests' (io_uring or epoll, the same buffers, timeouts,
//! redial and statistics); nothing here opens a socket or waits on one.
//!
//! The Lua-visible API is sysbench's (`sysbench.sql`, `sysbench.rand`,
//! `sysbench.cmdline`, `sysbench.opt`, hooks, reports, histograms): C
//! functions with sysbench's names and signatures (`sql_ffi/`, `events.rs`)
//! and thin Rust functions (`api.rs`) under a Lua prelude of wirebench's
//! own (`prelude.lua`) that shapes them as sysbench's scripts expect,
//! raising errors at the script's line as sysbench does.
//!
//! Layer: below `run`, beside `driver`: it may import driver (limits and
//! ignored errors), client, stats, rand and the protocol crate; only `run`
//! imports it, and `cli` fills its [`ScriptCall`].
//!
//! Files:
//! - `lua_state.rs`: one Lua state, loaded; `context.rs`: where a state's
//!   context is found; `api.rs`: the raw functions under the prelude;
//!   `ffi/`: sysbench's C functions through LuaJIT's FFI, with `sql_ffi/`
//!   (`sysbench.sql`) and `events.rs` (the event loop's functions).
//! - `cmdline_options.rs`: a script's options; `commands.rs`: the commands
//!   other than `run`; `threads.rs`: `run`'s main state; `script_tasks.rs`:
//!   the states as tasks of the driver's loops; `report_hooks.rs`: a
//!   script's own reports.
//! - `script_error.rs`: what goes wrong with a script.

mod api;
mod cmdline_options;
mod commands;
mod context;
mod events;
mod ffi;
mod lua_state;
mod report_hooks;
mod script_error;
mod script_tasks;
mod sql_ffi;
mod threads;

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

pub(crate) use cmdline_options::OptValue;
pub(crate) use commands::{load_only, run_command, script_help, Help};
pub use ffi::EXPORTED_C_FUNCTIONS;
pub(crate) use report_hooks::ReportHooks;
pub(crate) use script_error::ScriptError;
pub(crate) use script_tasks::run_command_tasks;
pub(crate) use threads::ThreadsPlan;

use crate::client::ConnectOptions;
use crate::driver::IgnoreErrors;
use crate::rand::{RandParams, SharedUnique};
use crate::stats::Counters;

/// The name sysbench 1.0.20 gives a script read from standard input, in
/// its messages (`sb_load_lua(NULL)`).
pub const STDIN_SCRIPT_NAME: &str = "<stdin>";

/// A script and what the command line asks of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptCall {
    /// The script's path as given (`./my_test.lua`); [`STDIN_SCRIPT_NAME`]
    /// for a script read from standard input.
    pub path: PathBuf,
    pub origin: ScriptOrigin,
    /// `prepare`, `run`, `cleanup`, `help`, or one of the script's own
    /// `sysbench.cmdline.commands`; `None` (standard input only, as in
    /// sysbench) runs the script's top level and nothing else.
    pub command: Option<String>,
    /// The options the command line gave that are not sysbench's own: the
    /// script's, checked against `sysbench.cmdline.options` when it is
    /// loaded. Names with `_` for `-`, values as written (`None`: a bare
    /// `--name`).
    pub options: Vec<(String, Option<String>)>,
    /// `--lua-thread-per-state`: `run` gives each state a loop thread of
    /// its own, unpinned, as sysbench gives each a thread, instead of
    /// sharing one loop per core: for a script that blocks in Lua
    /// (`ffi.C.usleep`), which on a shared loop would hold up the loop's
    /// other states.
    pub thread_per_state: bool,
    /// `--lua-result-limit`: the most bytes one answer may hold.
    pub result_limit: u64,
}

/// Where a script's text comes from; `run` reads it, once, into
/// [`ScriptEnv::text`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScriptOrigin {
    File,
    /// `wirebench [options]` with no test name, or `-` for it, as sysbench
    /// 1.0.20 reads one.
    Stdin,
}

impl ScriptCall {
    /// The script's name in messages, as sysbench's: the file name
    /// (`my_test.lua`), or [`STDIN_SCRIPT_NAME`].
    pub fn name(&self) -> String {
        lua_state::script_name(&self.path)
    }

    /// The name Lua gives the chunk, which its messages start with:
    /// `./t.lua:3: boom`, and for standard input `stdin:3: boom`, as
    /// `luaL_loadfile(L, NULL)` names it in sysbench.
    pub fn chunk_name(&self) -> String {
        match self.origin {
            ScriptOrigin::File => format!("@{}", self.path.display()),
            ScriptOrigin::Stdin => "=stdin".to_owned(),
        }
    }
}

/// Makes connection options for thread n.
pub type ConnectFor = dyn Fn(u32) -> ConnectOptions + Send + Sync;

/// What every Lua state of a command shares.
pub struct ScriptEnv {
    pub call: ScriptCall,
    /// The script's text, read once for every state of the command (a
    /// script on standard input can be read only once).
    pub text: Arc<[u8]>,
    /// `--threads`: the states `run` and parallel commands make (this
    /// shard's, with `--shard`).
    pub threads: u32,
    /// With `--shard`, the whole run's number of this instance's first
    /// thread: every state's `sysbench.tid`, generator and connection
    /// numbers count from it, so that the shards' threads are numbered as
    /// one instance's would be; 0 in one instance.
    pub first_tid: u32,
    /// The command line as given, for `sysbench.cmdline.argv`.
    pub argv: Vec<String>,
    /// sysbench's own options, exported into `sysbench.opt` beside the
    /// script's (`threads`, `time`, `mysql_host`, ...).
    pub general: Vec<(String, OptValue)>,
    pub connect: Box<ConnectFor>,
    pub rand: RandParams,
    /// The value passed to `srandom` (see `rand::srandom_seed`).
    pub seed: u32,
    /// `sysbench.rand.unique()`: one counter for all threads, as sysbench.
    pub unique: Arc<SharedUnique>,
    /// `--mysql-ignore-errors`: what restarts an event instead of ending the run.
    pub ignore: IgnoreErrors,
    /// `--percentile` is not 0: sysbench draws once from the thread's
    /// generator after every event.
    pub draw_after_event: bool,
    /// Set by `sysbench.sql.driver()`: from then on the reports are
    /// sysbench's `db_report_*` (SQL statistics), before it events only.
    pub sql_used: Arc<AtomicBool>,
    /// The most bytes one answer to a script's call may keep
    /// (`--lua-result-limit`).
    pub result_limit: usize,
    /// The event loops' backend (`--io`), and how the loop of a command
    /// other than `run` (and `init()`) waits (`driver::plan_wait`).
    pub backend: crate::driver::Backend,
    pub command_wait: crate::driver::WaitMode,
    /// The counts `init()` made (its queries, its `sb_counter_inc`), which
    /// the first state to run takes: sysbench counts them in thread 0's
    /// counters, so its reports show them.
    pub init_counts: Mutex<Counters>,
}
