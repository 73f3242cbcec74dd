//! Runs the null server in-process around a client command and reports what
//! serving it cost the server:
//!
//! ```text
//! cargo run --release --example null_server -- --cpus 1 --tcp 127.0.0.1:0 -- \
//!     taskset -c 0 sysbench oltp_point_select --mysql-host=127.0.0.1 --mysql-port={port} \
//!     --mysql-user=x --mysql-password=y --threads=16 --time=10 run
//! ```
//!
//! `{port}` and `{socket}` in the command are replaced by the TCP port and
//! unix socket path the server listens on. Without a command it serves for
//! `--seconds` (default 60).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use wirebench::null_server::{NullServer, NullServerConfig};

fn main() {
    let mut args = std::env::args().skip(1);
    let mut config = NullServerConfig::default();
    let mut seconds = 60u64;
    let mut command = Vec::new();
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| usage(&format!("{arg} needs a value")));
        match arg.as_str() {
            "--tcp" => config.tcp = Some(value().parse::<SocketAddr>().unwrap_or_else(|e| usage(&e.to_string()))),
            "--unix" => config.unix = Some(PathBuf::from(value())),
            "--cpus" => {
                config.cpus = value().split(',').map(|c| c.parse().unwrap_or_else(|_| usage("bad cpu list"))).collect()
            }
            "--rows" => config.rows_per_select = value().parse().unwrap_or_else(|_| usage("bad row count")),
            "--seconds" => seconds = value().parse().unwrap_or_else(|_| usage("bad seconds")),
            "--" => {
                command = args.by_ref().collect();
                break;
            }
            other => usage(&format!("unknown argument {other}")),
        }
    }
    if config.tcp.is_none() && config.unix.is_none() {
        config.tcp = Some(SocketAddr::from(([127, 0, 0, 1], 0)));
    }
    let server = NullServer::start(config).unwrap_or_else(|e| usage(&e.to_string()));
    let port = server.local_addr().map(|a| a.port().to_string()).unwrap_or_default();
    let socket = server.unix_path().map(|p| p.display().to_string()).unwrap_or_default();
    eprintln!("null server on cpus {:?}: tcp {:?}, unix {:?}", server.cpus(), server.local_addr(), server.unix_path());

    let before = server.stats();
    let started = Instant::now();
    if command.is_empty() {
        std::thread::sleep(Duration::from_secs(seconds));
    } else {
        let command: Vec<String> =
            command.iter().map(|a| a.replace("{port}", &port).replace("{socket}", &socket)).collect();
        let status = Command::new(&command[0]).args(&command[1..]).status().unwrap_or_else(|e| usage(&e.to_string()));
        eprintln!("client exited with {status}");
    }
    let elapsed = started.elapsed();
    let after = server.stats();
    let commands = after.commands - before.commands;
    println!(
        "server: {} connections, {} commands in {:.2}s ({:.0}/s)",
        after.connections - before.connections,
        commands,
        elapsed.as_secs_f64(),
        commands as f64 / elapsed.as_secs_f64()
    );
    if let (Some(a), Some(b)) = (after.cpu_time, before.cpu_time) {
        let cpu = a.saturating_sub(b);
        println!(
            "server cpu: {:.3}s ({:.1}% of one core), {:.2} us per command",
            cpu.as_secs_f64(),
            100.0 * cpu.as_secs_f64() / elapsed.as_secs_f64(),
            cpu.as_secs_f64() * 1e6 / commands.max(1) as f64
        );
    }
    if let Err(e) = server.stop() {
        eprintln!("{e}");
        std::process::exit(1);
    }
}

fn usage(problem: &str) -> ! {
    eprintln!("{problem}\nusage: null_server [--tcp ADDR] [--unix PATH] [--cpus 1,2] [--rows N] [--seconds S] [-- COMMAND...]");
    std::process::exit(2);
}
