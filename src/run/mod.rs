//! The run orchestration: a parsed command line ([`crate::cli::Bench`])
//! carried out, from the first connection to the report.
//!
//! The only layer besides `src/main.rs` that knows the command line: it hands
//! each layer below its own configuration (the client its servers and TLS,
//! the driver its engine options, the workload its test options) and
//! imports them all; nothing below imports it.
//!
//! - `limits.rs`: whether this machine can hold `--threads` connections.
//! - `idle_connections.rs`: `--idle-connections`, this instance's part
//!   handed to the loops and counted in the report.
//! - `setup.rs`: what every command needs: connection options, TLS, the
//!   random generator's settings, connection errors with advice.
//! - `interrupt.rs`: Ctrl-C and SIGTERM, which stop any command.
//! - `tables.rs`: `prepare`, `prewarm` and `cleanup`, over the async client
//!   (`table_progress.rs`: what they had done when a signal stops them;
//!   `shared_steps.rs`: one table's load sent over several connections).
//! - `plan.rs`: the `run` command's connections, opened and spread over
//!   the event loops.
//! - `benchmark.rs`: the `run` command: start the loops, supervise them
//!   (`supervise.rs`: interim reports, checkpoints, the forced shutdown, a
//!   signal), print the final report (`reports.rs`), also when a signal or
//!   a fatal error ends the run early.
//! - `search_command.rs`: `search`, the highest `--rate` that holds the
//!   `--slo` bounds, a run per step; `search_controller.rs`: which step
//!   comes next and each step's verdict, without I/O.
//! - `steps.rs`: one run, or a `--threads` sweep of them;
//!   `result_sink.rs`: where `--format`'s lines, the sweep's table and
//!   `--chart` go.
//! - `replay_command.rs`: `wirebench replay FILE`, a capture replayed on
//!   the loops and reported; `replay_result.rs`: what it found, summed up;
//!   `replay_search.rs`: `replay FILE search`, the highest `--speed` that
//!   holds `--slo`.
//! - `compare_command.rs`: `wirebench compare`, the result files read back;
//!   `merge_command.rs`: `wirebench merge`, a run's shards put back together;
//!   `capture_command.rs`: `wirebench capture import|info`, printed;
//!   `record_command.rs`: `wirebench record`, the recording proxy.
//! - `output.rs`: every write to standard output, whose failure ends the
//!   command ([`OutputError`]) instead of panicking.
//! - `run_error.rs`: why a command failed, with what to do;
//!   `missing_table.rs`: which of the test's tables are there, when one
//!   the command uses is not.
//! - `load_method.rs`: how `prepare` sends the rows (`--prepare-method`).
//! - `server_sampling.rs`: `--server-stats` in a run.
//! - `shard_plan.rs`: `--shard=I/N` and `--start-at`; `host_facts.rs`: the
//!   host's name and clock, which a result records.
//! - `lua_script_command.rs`: a Lua script's command; `script_text.rs`: its
//!   text, read once; `script_options.rs`: sysbench's options as a script
//!   reads them.
//! - `watching.rs`: `--metrics-listen`, `--metrics-push`, `--web`,
//!   `--report-html`, started before a command and finished after it;
//!   `loop_load.rs`: the loops' busy share per interval, which it shows;
//!   `report_command.rs`: `wirebench report`, saved results as a page.

mod benchmark;
mod capture_command;
mod compare_command;
mod host_facts;
mod idle_connections;
mod interrupt;
mod limits;
mod load_method;
mod loop_load;
mod lua_script_command;
mod merge_command;
mod missing_table;
mod output;
mod plan;
mod record_command;
mod replay_command;
mod replay_result;
mod replay_search;
mod report_command;
mod reports;
mod result_sink;
mod run_error;
mod script_options;
mod script_text;
mod search_command;
mod search_controller;
mod server_sampling;
mod setup;
mod shard_plan;
mod shared_steps;
mod steps;
mod supervise;
mod table_progress;
mod tables;
mod watching;

use std::sync::Arc;

pub use capture_command::{capture_command, CaptureRunError};
pub use compare_command::compare;
pub(crate) use interrupt::Signal;
pub use merge_command::merge;
pub(crate) use output::Level;
pub use output::{fatal_line, stderr_line, Console, Output, OutputError};
pub use record_command::{record_command, RecordEnd, RecordRunError};
pub use report_command::report;
pub use run_error::{ReportError, RunError};
pub use watching::{finish_watch, start_fuzz_watch};

use crate::cli::{test_help, Bench, Command, Personality, SYSBENCH_BANNER_LINE, SYSBENCH_VERSION_LINE};
use crate::replay::CaptureReplayOptions;
use crate::stats::report;
use crate::transport::tls::ClientTls;
use crate::watch::Watch;
use crate::workload::Workload;
use interrupt::Interrupts;

/// How a command that did not fail ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub enum RunOutcome {
    /// Everything it had to do is done.
    Completed,
    /// `--forced-shutdown`: `--time` and the grace period passed with
    /// events still in flight; the report is printed, and sysbench exits
    /// with status 2.
    ForcedShutdown,
    /// SIGINT or SIGTERM stopped it: `run` printed the report of what ran,
    /// `prepare` and `cleanup` said what they had done. The process exits
    /// with [`Signal::exit_status`].
    Interrupted(Signal),
    /// `--time` was up and `stalled` connections still waited for the
    /// server's answer a second later: the run stopped waiting for them,
    /// printed its report of what completed, and ends as a forced shutdown
    /// does (status 2).
    Cut { stalled: usize },
}

/// What `--version` prints, under the name the program was invoked as.
pub fn version_line(personality: Personality) -> &'static str {
    match personality {
        Personality::Wirebench => report::VERSION_LINE,
        Personality::Sysbench => SYSBENCH_VERSION_LINE,
    }
}

/// The first line of a test command, and the blank line after it, at
/// `--verbosity` 3 and above (sysbench's `print_header()`).
pub fn print_banner() -> Result<(), OutputError> {
    let line = match Console::current().personality {
        Personality::Wirebench => report::VERSION_LINE,
        Personality::Sysbench => SYSBENCH_BANNER_LINE,
    };
    Level::Notice.print(report::Banner(line))
}

/// Carries out `bench.command`, watched as `--metrics-listen` and the
/// like ask.
pub fn execute(bench: &Bench) -> Result<RunOutcome, RunError> {
    let watch = match bench.command {
        Command::Run | Command::Search => watching::start_watch(bench)?,
        _ => None,
    };
    let outcome = execute_watched(bench, watch.as_ref());
    finish_watch(watch, outcome)
}

fn execute_watched(bench: &Bench, watch: Option<&Arc<Watch>>) -> Result<RunOutcome, RunError> {
    if let Some(call) = &bench.script {
        return lua_script_command::execute_script(bench, call, watch);
    }
    if let Some(replay) = &bench.replay {
        return execute_replay(bench, replay, watch);
    }
    if bench.command == Command::Help {
        print_banner()?;
        Output::Stdout.print(test_help(bench.test, Console::current().personality))?;
        return Ok(RunOutcome::Completed);
    }
    shard_plan::check_start_at(bench.general.start_at)?;
    let (part, threads) = match shard_plan::plan_shard(bench) {
        shard_plan::ShardPlan::Run { bench, threads } => (bench, threads),
        shard_plan::ShardPlan::Idle(why) => {
            stderr_line(format_args!("{why}"));
            return Ok(RunOutcome::Completed);
        }
    };
    let bench = &*part;
    let workload: Arc<dyn Workload> = Arc::from(match bench.legacy {
        Some(legacy) => legacy.workload(&bench.test_options, &bench.legacy_options)?,
        None => bench.test.workload(&bench.test_options)?,
    });
    if bench.command != Command::Cleanup && !bench.mysql.dry_run {
        let idle = idle_connections::count_here(bench, threads.total);
        limits::check_room_for(bench.general.threads, idle)?;
    }
    let CommandSetup { runtime, interrupts, tls } = set_up_command(bench)?;
    let tls = tls.as_ref();
    let done = match bench.command {
        Command::Prepare => {
            runtime.block_on(tables::prepare(bench, threads, tls, workload, &interrupts)).map_err(RunError::of_prepare)
        }
        Command::Prewarm => runtime.block_on(tables::prewarm(bench, threads, tls, workload, &interrupts)),
        Command::Cleanup => runtime.block_on(tables::cleanup(bench, tls, workload, &interrupts)),
        Command::Run => steps::run_steps(bench, threads, tls, workload, &runtime, &interrupts, watch),
        Command::Search => search_command::run_search(bench, threads, tls, workload, &runtime, &interrupts, watch),
        Command::Help => Ok(RunOutcome::Completed),
    };
    match done {
        Err(error) if bench.command != Command::Prepare => {
            Err(runtime.block_on(tables::with_table_census(bench, tls, error)))
        }
        done => done,
    }
}

/// `wirebench replay FILE [run|search]`.
fn execute_replay(
    bench: &Bench,
    options: &CaptureReplayOptions,
    watch: Option<&Arc<Watch>>,
) -> Result<RunOutcome, RunError> {
    shard_plan::check_start_at(bench.general.start_at)?;
    let CommandSetup { runtime, interrupts, tls } = set_up_command(bench)?;
    let setup = (tls.as_ref(), &runtime, &interrupts);
    match bench.command {
        Command::Search => replay_search::run_replay_search(bench, options, setup, watch),
        _ => replay_command::execute_one(bench, options, setup, watch),
    }
}

/// What a command that talks to servers sets up before its first
/// connection, whatever it then sends.
struct CommandSetup {
    /// Where its set-up steps, the collector and the signals run.
    runtime: tokio::runtime::Runtime,
    interrupts: Interrupts,
    tls: Option<ClientTls>,
}

/// The runtime, the signals watched and the TLS set-up; then the banner.
fn set_up_command(bench: &Bench) -> Result<CommandSetup, RunError> {
    let (runtime, interrupts) = runtime_with_signals(2)?;
    let tls = setup::tls_config(bench)?;
    print_banner()?;
    Ok(CommandSetup { runtime, interrupts, tls })
}

/// A runtime of `workers` threads beside the loops, with SIGINT and
/// SIGTERM watched on it.
fn runtime_with_signals(workers: usize) -> Result<(tokio::runtime::Runtime, Interrupts), RunError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .map_err(RunError::Runtime)?;
    let interrupts = Interrupts::watch(&runtime).map_err(RunError::Signals)?;
    Ok((runtime, interrupts))
}
