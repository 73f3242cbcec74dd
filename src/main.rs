//! The wirebench command line: sysbench's syntax, wirebench's engine.

#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::ffi::OsString;
use std::process::ExitCode;

use wirebench::cli::{self, Bench, CredentialSources, Invocation, NullServerOptions, Personality, Refusal};
use wirebench::fuzz::{Progress, ProgressObserver, ReplayVerdict};
use wirebench::null_server::{NullServer, NullServerConfig, NullServerError};
use wirebench::run::{self, fatal_line, stderr_line, Console, Output, OutputError, RunError, RunOutcome};
use wirebench::watch::{FuzzFigures, WatchSettings};

/// `wirebench fuzz` found failures (or `fuzz-replay` saw one again).
const FAILURES_FOUND: u8 = 3;

fn main() -> ExitCode {
    let mut args = std::env::args_os();
    let personality = Personality::of_program(args.next().as_deref());
    let args: Vec<OsString> = args.collect();
    cli::hide_passwords_from_ps();
    let invocation = match cli::read(args, &CredentialSources::of_this_process()) {
        Ok(invocation) => invocation,
        Err(refusal) => return refused(&refusal, personality),
    };
    let console = match &invocation {
        Invocation::Bench(bench) => {
            let report = if bench.results.format.is_machine_readable() { Output::Stderr } else { Output::Stdout };
            Console { report, ..Console::new(bench.general.verbosity, personality) }
        }
        Invocation::Merge(options) if options.format.is_machine_readable() => {
            Console { report: Output::Stderr, ..Console::new(Console::current().verbosity, personality) }
        }
        _ => Console::new(Console::current().verbosity, personality),
    };
    console.install();
    match invocation {
        Invocation::Version => printed(Output::Stdout.line(run::version_line(personality))),
        Invocation::Help { null_server: false } => printed(Output::Stdout.print(cli::general_help(personality))),
        Invocation::Help { null_server: true } => printed(Output::Stdout.print(cli::null_server_help())),
        Invocation::CompareHelp => printed(Output::Stdout.print(cli::compare_help())),
        Invocation::MergeHelp => printed(Output::Stdout.print(cli::merge_help())),
        Invocation::Merge(options) => match run::merge(&options) {
            Ok(()) => ExitCode::SUCCESS,
            Err(RunError::Output(e)) => output_failed(&e),
            Err(e) => {
                error_line(format_args!("wirebench: {e}"));
                ExitCode::FAILURE
            }
        },
        Invocation::Compare(options) => match run::compare(&options) {
            Ok(()) => ExitCode::SUCCESS,
            Err(RunError::Output(e)) => output_failed(&e),
            Err(e) => {
                error_line(format_args!("wirebench: {e}"));
                ExitCode::FAILURE
            }
        },
        Invocation::CaptureHelp => printed(Output::Stdout.print(cli::capture_help())),
        Invocation::ReplayHelp => printed(Output::Stdout.print(cli::replay_help())),
        Invocation::Capture(command) => match run::capture_command(&command) {
            Ok(()) => ExitCode::SUCCESS,
            Err(run::CaptureRunError::Output(e)) => output_failed(&e),
            Err(e) => {
                error_line(format_args!("wirebench: {e}"));
                ExitCode::FAILURE
            }
        },
        Invocation::RecordHelp => printed(Output::Stdout.print(cli::record_help())),
        Invocation::Record(options, watch) => match run::record_command(&options, &watch) {
            Ok(_) => ExitCode::SUCCESS,
            Err(run::RecordRunError::Output(e)) => output_failed(&e),
            Err(e) => {
                error_line(format_args!("wirebench: {e}"));
                ExitCode::FAILURE
            }
        },
        Invocation::FuzzHelp { replay: false } => printed(Output::Stdout.print(cli::fuzz_help())),
        Invocation::FuzzHelp { replay: true } => printed(Output::Stdout.print(cli::fuzz_replay_help())),
        Invocation::Fuzz(options, watch) => fuzz_status(&watch, |observer| {
            wirebench::fuzz::fuzz_observed(&options, observer)
                .map(|summary| summary.failures)
                .map_err(|e| e.to_string())
        }),
        Invocation::ReportHelp => printed(Output::Stdout.print(cli::report_help())),
        Invocation::Report(options) => match run::report(&options) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                error_line(format_args!("wirebench: {e}"));
                ExitCode::FAILURE
            }
        },
        Invocation::FuzzReplay(options) => match wirebench::fuzz::replay(&options) {
            Ok(ReplayVerdict::Failed(_)) => ExitCode::from(FAILURES_FOUND),
            Ok(ReplayVerdict::Survived | ReplayVerdict::Emitted) => ExitCode::SUCCESS,
            Err(e) => {
                fatal_line(e);
                ExitCode::FAILURE
            }
        },
        Invocation::NullServer(options) => match null_server(options) {
            Ok(()) => ExitCode::SUCCESS,
            Err(NullServerExit::Output(e)) => output_failed(&e),
            Err(NullServerExit::Server(e)) => {
                fatal_line(e);
                ExitCode::FAILURE
            }
        },
        Invocation::Bench(bench) => bench_status(&bench, personality),
    }
}

/// A refused command line, at every verbosity: as `sysbench`, in
/// sysbench's words and streams where it has words for it (after its
/// banner where it prints one first), otherwise in wirebench's.
fn refused(refusal: &Refusal, personality: Personality) -> ExitCode {
    Console::new(refusal.verbosity, personality).install();
    let as_sysbench = match personality {
        Personality::Sysbench => refusal.error.as_sysbench(),
        Personality::Wirebench => None,
    };
    let Some(sysbench) = as_sysbench else {
        error_line(format_args!("wirebench: {}", refusal.error));
        return ExitCode::FAILURE;
    };
    if sysbench.after_banner {
        if let Err(e) = run::print_banner() {
            return output_failed(&e);
        }
    }
    if let Some(text) = &sysbench.text {
        let stream = if sysbench.on_stdout { Output::Stdout } else { Output::Stderr };
        let _ = stream.line(text);
    }
    ExitCode::from(sysbench.status)
}

/// Runs a test command; its exit status.
fn bench_status(bench: &Bench, personality: Personality) -> ExitCode {
    for warning in &bench.warnings {
        match personality {
            // Before sysbench's logger is set up: at every verbosity.
            Personality::Sysbench => {
                let stream = if warning.sysbench_on_stdout() { Output::report() } else { Output::Stderr };
                if let Err(e) = stream.line(warning.sysbench_text()) {
                    return output_failed(&e);
                }
            }
            Personality::Wirebench => stderr_line(format_args!("wirebench: {}", warning.note())),
        }
    }
    for note in &bench.notes {
        stderr_line(format_args!("wirebench: {note}"));
    }
    match run::execute(bench) {
        Ok(RunOutcome::Completed) => ExitCode::SUCCESS,
        // sysbench's status when --forced-shutdown cut the run; a run cut
        // with stalled connections is that case too.
        Ok(RunOutcome::ForcedShutdown | RunOutcome::Cut { .. }) => ExitCode::from(2),
        Ok(RunOutcome::Interrupted(signal)) => ExitCode::from(signal.exit_status()),
        Err(RunError::Output(e)) => output_failed(&e),
        Err(e) => {
            fatal_line(e);
            ExitCode::FAILURE
        }
    }
}

/// Runs `wirebench fuzz` (`fuzz`, which returns the failures found), its
/// progress fed to the watch (`--metrics-listen` and the like) if one is
/// asked for; its exit status.
fn fuzz_status(
    settings: &WatchSettings,
    fuzz: impl FnOnce(Option<ProgressObserver>) -> Result<usize, String>,
) -> ExitCode {
    let watch = match run::start_fuzz_watch(settings) {
        Ok(watch) => watch,
        Err(e) => {
            fatal_line(e);
            return ExitCode::FAILURE;
        }
    };
    let observer = watch.clone().map(|watch| -> ProgressObserver {
        Box::new(move |p: &Progress| {
            let figures = FuzzFigures {
                sessions: p.sessions,
                packets: p.packets,
                withheld: p.withheld,
                states: p.states as u64,
                corpus: p.corpus as u64,
                checks: p.checks,
                findings: p.failures as u64,
            };
            watch.fuzz(figures, p.elapsed.as_secs_f64());
        })
    });
    let fuzzed = fuzz(observer);
    match run::finish_watch(watch, Ok::<(), run::RunError>(())) {
        Ok(()) => {}
        Err(e) => fatal_line(e),
    }
    match fuzzed {
        Ok(failures) if failures > 0 => ExitCode::from(FAILURES_FOUND),
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            fatal_line(e);
            ExitCode::FAILURE
        }
    }
}

/// The status of a command whose only work is printing.
fn printed(result: Result<(), OutputError>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => output_failed(&e),
    }
}

/// A closed pipe ends the command quietly; any other output failure is
/// named on stderr.
fn output_failed(e: &OutputError) -> ExitCode {
    if !e.is_closed_pipe() {
        error_line(format_args!("wirebench: {e}"));
    }
    ExitCode::from(e.exit_status())
}

/// A line on stderr at every verbosity, best effort: why the command ends.
fn error_line(text: std::fmt::Arguments<'_>) {
    let _ = Output::Stderr.line(text);
}

/// Why `wirebench null-server` stopped.
#[derive(Debug, thiserror::Error)]
enum NullServerExit {
    #[error(transparent)]
    Server(#[from] NullServerError),
    /// Its lines could not be written: nobody is watching it any more.
    #[error(transparent)]
    Output(#[from] OutputError),
}

/// `wirebench null-server`: serves until Ctrl-C.
fn null_server(options: NullServerOptions) -> Result<(), NullServerExit> {
    let config = NullServerConfig {
        tcp: options.listen,
        unix: options.socket,
        cpus: options.cpus.unwrap_or_default(),
        answer_delay: std::time::Duration::from_micros(options.delay_us),
        wait_timeout: (options.wait_timeout_s > 0).then(|| std::time::Duration::from_secs(options.wait_timeout_s)),
        serial: options.serial,
        ..Default::default()
    };
    let server = NullServer::start(config)?;
    if let Some(addr) = server.local_addr() {
        Output::Stderr.line(format_args!("null server listening on {addr}"))?;
    }
    if let Some(path) = server.unix_path() {
        Output::Stderr.line(format_args!("null server listening on unix:{}", path.display()))?;
    }
    Output::Stderr.line(format_args!("null server loops on cpus {:?}; Ctrl-C stops it", server.cpus()))?;
    let stopper = server.stopper();
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(NullServerError::Signals)?;
    runtime.block_on(async {
        let _ = tokio::signal::ctrl_c().await;
    });
    stopper.stop();
    let stats = server.stats();
    drop(server);
    Output::Stderr.line(format_args!(
        "null server stopped after {} commands on {} connections ({} closed with COM_QUIT)",
        stats.commands, stats.connections, stats.quits
    ))?;
    Ok(())
}
