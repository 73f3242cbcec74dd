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
//! `--seconds` (default 60), or, with `--pipeline CONNECTIONS:DEPTH`, drives
//! itself for that long with a lean pipelining client of point-select
//! executes pinned to `--client-cpu` (default 0), to show the server's own
//! ceiling rather than a client's.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use wirebench::null_server::{NullServer, NullServerConfig};
use wirebench_protocol::auth::rand_core::OsRng;
use wirebench_protocol::command::{encode_execute, encode_prepare, Param};
use wirebench_protocol::handshake::{ClientHandshake, HandshakeConfig, HandshakeStep, TlsMode};
use wirebench_protocol::response::{ResponseReader, RowFormat};
use wirebench_protocol::Capabilities;

fn main() {
    let mut args = std::env::args().skip(1);
    let mut config = NullServerConfig::default();
    let mut seconds = 60u64;
    let mut command = Vec::new();
    let mut pipeline = None;
    let mut client_cpu = 0usize;
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
            "--pipeline" => {
                let v = value();
                let (c, d) = v.split_once(':').unwrap_or_else(|| usage("--pipeline CONNECTIONS:DEPTH"));
                pipeline = Some((
                    c.parse::<usize>().unwrap_or_else(|_| usage("bad connection count")),
                    d.parse::<usize>().unwrap_or_else(|_| usage("bad depth")),
                ));
            }
            "--client-cpu" => client_cpu = value().parse().unwrap_or_else(|_| usage("bad cpu")),
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
    if let Some((connections, depth)) = pipeline {
        let unix = server.unix_path().map(PathBuf::from);
        let tcp = server.local_addr();
        let answered = drive(tcp, unix, connections, depth, client_cpu, Duration::from_secs(seconds));
        println!("client: {answered} answers ({:.0}/s)", answered as f64 / started.elapsed().as_secs_f64());
    } else if command.is_empty() {
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

/// The lean client: `connections` connections (over the unix socket when
/// there is one, else TCP), each keeping `depth` point-select executes in
/// flight, on one pinned thread, for `duration`. Returns the answers read.
fn drive(
    tcp: Option<SocketAddr>,
    unix: Option<PathBuf>,
    connections: usize,
    depth: usize,
    cpu: usize,
    duration: Duration,
) -> u64 {
    std::thread::spawn(move || {
        core_affinity::set_for_current(core_affinity::CoreId { id: cpu });
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async move {
            let tasks: Vec<_> = (0..connections)
                .map(|_| {
                    let (tcp, unix) = (tcp, unix.clone());
                    tokio::spawn(async move {
                        match unix {
                            Some(path) => {
                                pipelined(tokio::net::UnixStream::connect(path).await.unwrap(), depth, duration).await
                            }
                            None => {
                                let s = tokio::net::TcpStream::connect(tcp.unwrap()).await.unwrap();
                                s.set_nodelay(true).unwrap();
                                pipelined(s, depth, duration).await
                            }
                        }
                    })
                })
                .collect();
            let mut total = 0;
            for t in tasks {
                total += t.await.unwrap();
            }
            total
        })
    })
    .join()
    .unwrap()
}

async fn pipelined<S: AsyncRead + AsyncWrite + Unpin>(mut s: S, depth: usize, duration: Duration) -> u64 {
    let mut input = Vec::with_capacity(64 * 1024);
    let mut output = Vec::new();
    let mut config = HandshakeConfig::new("x", b"y".to_vec());
    config.tls = TlsMode::Disabled;
    config.secure_transport = true;
    let mut machine = ClientHandshake::new(config);
    let caps = loop {
        let (used, step) = machine.advance(&input, &mut output, &mut OsRng).unwrap();
        input.drain(..used);
        s.write_all(&output).await.unwrap();
        output.clear();
        match step {
            HandshakeStep::NeedMore => assert!(s.read_buf(&mut input).await.unwrap() > 0),
            HandshakeStep::Done(login) => break login.capabilities,
            other => panic!("{other:?}"),
        }
    };
    encode_prepare(&mut output, b"SELECT c FROM sbtest1 WHERE id=?");
    s.write_all(&output).await.unwrap();
    output.clear();
    let mut batch = Vec::new();
    for i in 0..depth {
        // The null server numbers a connection's first statement 1.
        encode_execute(&mut batch, 1, &[Param::I32(i as i32)]);
    }
    let deadline = Instant::now() + duration;
    let mut answered = 0u64;
    let mut reader = ResponseReader::new(caps, RowFormat::Binary);
    let mut prepared = false;
    while Instant::now() < deadline {
        s.write_all(&batch).await.unwrap();
        let mut left = depth;
        while left > 0 {
            if !prepared {
                // The prepare answer: PREPARE_OK, one parameter, one column (no EOFs under DEPRECATE_EOF).
                let mut at = 0;
                let mut packets = 0;
                let want = if caps.contains(Capabilities::DEPRECATE_EOF) { 3 } else { 5 };
                loop {
                    while packets < want && input.len() >= at + 4 {
                        let len = u32::from_le_bytes([input[at], input[at + 1], input[at + 2], 0]) as usize;
                        if input.len() < at + 4 + len {
                            break;
                        }
                        at += 4 + len;
                        packets += 1;
                    }
                    if packets == want {
                        break;
                    }
                    assert!(s.read_buf(&mut input).await.unwrap() > 0);
                }
                input.drain(..at);
                prepared = true;
                continue;
            }
            let progress = reader.advance(&input).unwrap();
            input.drain(..progress.consumed);
            if progress.done.is_some() {
                reader.reset();
                left -= 1;
                answered += 1;
                continue;
            }
            if input.capacity() - input.len() < 4096 {
                input.reserve(64 * 1024);
            }
            assert!(s.read_buf(&mut input).await.unwrap() > 0);
        }
    }
    answered
}

fn usage(problem: &str) -> ! {
    eprintln!("{problem}\nusage: null_server [--tcp ADDR] [--unix PATH] [--cpus 1,2] [--rows N] [--seconds S]\n       [--pipeline CONNECTIONS:DEPTH [--client-cpu N] | -- COMMAND...]");
    std::process::exit(2);
}
