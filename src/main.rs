//! The wirebench command line: sysbench's syntax, wirebench's engine.

use std::process::ExitCode;

use wirebench::cli::{self, Invocation};

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
        Invocation::NullServer(options) => match wirebench::null_server_cli::run(options) {
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
            let workload = match wirebench::workload::for_bench(&bench) {
                Ok(workload) => workload,
                Err(e) => {
                    eprintln!("FATAL: {e}");
                    return ExitCode::FAILURE;
                }
            };
            match wirebench::run::execute(&bench, workload) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("FATAL: {e}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}
