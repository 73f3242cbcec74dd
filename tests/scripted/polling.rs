//! `--poll=auto`: a loop spins on a core the server does not use, sleeps on
//! one it shares (waiting on its connection's socket when it holds one
//! over a unix socket), says why at `--verbosity=4`, and reports the CPU it spent
//! spinning. The null server runs under `taskset`, so every thread of it
//! is on its core.

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;

const WIREBENCH: &str = env!("CARGO_BIN_EXE_wirebench");

struct NullServer {
    child: Child,
    socket: std::path::PathBuf,
}

impl NullServer {
    fn on_cpu(cpu: usize) -> NullServer {
        let socket = std::env::temp_dir().join(format!("wb-polling-{}-{cpu}.sock", std::process::id()));
        let _ = std::fs::remove_file(&socket);
        let child = Command::new("taskset")
            .args(["-c", &cpu.to_string(), WIREBENCH, "null-server", "--listen=127.0.0.1:0"])
            .arg(format!("--socket={}", socket.display()))
            .arg(format!("--cpus={cpu}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while !socket.exists() {
            assert!(Instant::now() < deadline, "the null server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        NullServer { child, socket }
    }
}

impl Drop for NullServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.socket);
    }
}

/// The run on `cpu`, its stdout and stderr.
fn run_on(cpu: usize, server: &NullServer, extra: &[&str]) -> (String, String) {
    let out = Command::new("taskset")
        .args(["-c", &cpu.to_string(), WIREBENCH, "oltp_point_select", "--tables=1", "--table-size=1000"])
        .arg(format!("--mysql-socket={}", server.socket.display()))
        .args(["--threads=2", "--events=3000", "--verbosity=4"])
        .args(extra)
        .arg("run")
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    (stdout.into_owned(), stderr.into_owned())
}

fn two_cores() -> bool {
    let ok = std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2)
        && Command::new("taskset").arg("-c").arg("1").arg("true").status().is_ok_and(|s| s.success());
    if !ok {
        common::unavailable("cores 0 and 1 and taskset (util-linux)");
    }
    ok
}

#[test]
fn a_loop_spins_on_a_core_of_its_own_and_sleeps_on_the_servers() {
    if !two_cores() || !common::ring_here() {
        return;
    }
    let server = NullServer::on_cpu(1);
    let (stdout, stderr) = run_on(0, &server, &[]);
    assert!(
        stderr.contains("event loop 0 (cpu 0) spins briefly, then sleeps, when idle: its core is its own"),
        "{stderr}"
    );
    assert!(stderr.contains(&format!("the server (pid {}) runs on other cores", server.child.id())), "{stderr}");
    assert!(stdout.contains("Client CPU (event loops):") && stdout.contains("spinning with nothing to do"), "{stdout}");

    // On the server's core, over its unix socket, each connection has a
    // loop that waits on its socket, as sysbench's threads do.
    let (stdout, stderr) = run_on(1, &server, &[]);
    for index in 0..2 {
        let own =
            format!("event loop {index} waits for each answer on its connection's socket, as sysbench's threads do");
        assert!(stderr.contains(&own), "{stderr}");
    }
    assert!(!stdout.contains("Client CPU"), "no spinning, no block: {stdout}");

    // Several queries in flight are the ring's: a loop pinned there sleeps.
    let (stdout, stderr) = run_on(1, &server, &["--pipeline=2"]);
    let shared =
        format!("event loop 0 (cpu 1) sleeps when idle: the server (pid {}) may run on its core", server.child.id());
    assert!(stderr.contains(&shared), "{stderr}");
    assert!(!stdout.contains("Client CPU"), "no spinning, no block: {stdout}");

    let (stdout, stderr) = run_on(0, &server, &["--poll=sleep"]);
    assert!(stderr.contains("event loop 0 (cpu 0) sleeps when idle: as --poll says"), "{stderr}");
    assert!(!stdout.contains("Client CPU"), "{stdout}");
}
