//! The wirebench command line: sysbench's syntax, wirebench's engine.

#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::ffi::OsString;
use std::process::ExitCode;

use wirebench::cli::{self, Bench, CredentialSources, Invocation, NullServerOptions};
use wirebench::null_server::{NullServer, NullServerConfig, NullServerError};
use wirebench::run::{stderr_line, Outcome, Output, OutputError, RunError};

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    cli::hide_passwords_from_ps();
    let invocation = match cli::parse_with(args, &CredentialSources::of_this_process()) {
        Ok(invocation) => invocation,
        Err(e) => {
            stderr_line(format_args!("wirebench: {e}"));
            return ExitCode::FAILURE;
        }
    };
    match invocation {
        Invocation::Version => printed(Output::Stdout.line(wirebench::stats::report::VERSION_LINE)),
        Invocation::Help { null_server: false } => printed(Output::Stdout.print(cli::general_help())),
        Invocation::Help { null_server: true } => printed(Output::Stdout.print(cli::null_server_help())),
        Invocation::NullServer(options) => match null_server(options) {
            Ok(()) => ExitCode::SUCCESS,
            Err(NullServerExit::Output(e)) => output_failed(&e),
            Err(NullServerExit::Server(e)) => {
                stderr_line(format_args!("FATAL: {e}"));
                ExitCode::FAILURE
            }
        },
        Invocation::Bench(bench) => bench_status(&bench),
    }
}

/// Runs a test command; its exit status.
fn bench_status(bench: &Bench) -> ExitCode {
    for note in &bench.notes {
        stderr_line(format_args!("wirebench: {note}"));
    }
    match wirebench::run::execute(bench) {
        Ok(Outcome::Completed) => ExitCode::SUCCESS,
        // sysbench's status when --forced-shutdown cut the run; a run cut
        // with stalled connections is that case too.
        Ok(Outcome::ForcedShutdown | Outcome::Cut { .. }) => ExitCode::from(2),
        Ok(Outcome::Interrupted(signal)) => ExitCode::from(signal.exit_status()),
        Err(RunError::Output(e)) => output_failed(&e),
        Err(e) => {
            stderr_line(format_args!("FATAL: {e}"));
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
        stderr_line(format_args!("wirebench: {e}"));
    }
    ExitCode::from(e.exit_status())
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
