//! The wirebench command line: sysbench's syntax, wirebench's engine.

#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::ExitCode;

use wirebench::cli::{self, Invocation, NullServerOptions};
use wirebench::fuzz::ReplayVerdict;
use wirebench::null_server::{NullServer, NullServerConfig, NullServerError};
use wirebench::run::Outcome;

/// `wirebench fuzz` found failures (or `fuzz-replay` saw one again).
const FAILURES_FOUND: u8 = 3;

fn main() -> ExitCode {
    let invocation = match cli::parse(std::env::args_os().skip(1)) {
        Ok(invocation) => invocation,
        Err(e) => {
            eprintln!("wirebench: {e}");
            return ExitCode::FAILURE;
        }
    };
    match invocation {
        Invocation::Version => {
            println!("{}", wirebench::stats::report::VERSION_LINE);
            ExitCode::SUCCESS
        }
        Invocation::Help { null_server: false } => {
            print!("{}", cli::general_help());
            ExitCode::SUCCESS
        }
        Invocation::Help { null_server: true } => {
            print!("{}", cli::null_server_help());
            ExitCode::SUCCESS
        }
        Invocation::FuzzHelp { replay } => {
            print!("{}", if replay { cli::fuzz_replay_help() } else { cli::fuzz_help() });
            ExitCode::SUCCESS
        }
        Invocation::Fuzz(options) => match wirebench::fuzz::fuzz(&options) {
            Ok(summary) if summary.failures > 0 => ExitCode::from(FAILURES_FOUND),
            Ok(_) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("FATAL: {e}");
                ExitCode::FAILURE
            }
        },
        Invocation::FuzzReplay(options) => match wirebench::fuzz::replay(&options) {
            Ok(ReplayVerdict::Failed(_)) => ExitCode::from(FAILURES_FOUND),
            Ok(ReplayVerdict::Survived) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("FATAL: {e}");
                ExitCode::FAILURE
            }
        },
        Invocation::NullServer(options) => match null_server(options) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("FATAL: {e}");
                ExitCode::FAILURE
            }
        },
        Invocation::Bench(bench) => {
            for note in &bench.notes {
                eprintln!("wirebench: {note}");
            }
            match wirebench::run::execute(&bench) {
                Ok(Outcome::Completed) => ExitCode::SUCCESS,
                // sysbench's status when --forced-shutdown cut the run.
                Ok(Outcome::ForcedShutdown) => ExitCode::from(2),
                Err(e) => {
                    eprintln!("FATAL: {e}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}

/// `wirebench null-server`: serves until Ctrl-C.
fn null_server(options: NullServerOptions) -> Result<(), NullServerError> {
    let config = NullServerConfig {
        tcp: options.listen,
        unix: options.socket,
        cpus: options.cpus.unwrap_or_default(),
        ..Default::default()
    };
    let server = NullServer::start(config)?;
    if let Some(addr) = server.local_addr() {
        eprintln!("null server listening on {addr}");
    }
    if let Some(path) = server.unix_path() {
        eprintln!("null server listening on unix:{}", path.display());
    }
    eprintln!("null server loops on cpus {:?}; Ctrl-C stops it", server.cpus());
    let stopper = server.stopper();
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(NullServerError::Signals)?;
    runtime.block_on(async {
        let _ = tokio::signal::ctrl_c().await;
    });
    stopper.stop();
    let stats = server.stats();
    drop(server);
    eprintln!("null server stopped after {} commands on {} connections", stats.commands, stats.connections);
    Ok(())
}
