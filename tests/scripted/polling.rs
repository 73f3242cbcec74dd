//! `--poll=auto`: a built-in test's pinned loop sleeps, on a core of its
//! own as on the server's (over the server's unix socket); each says why at
//! `--verbosity=4`. `--poll=spin` reports the CPU it spent spinning, and
//! the retired `--poll=adaptive` sleeps. The null server runs under
//! `taskset`, so every thread of it is on its core.

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::common;

use common::WIREBENCH;

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
        common::wait_until("the null server's socket", Duration::from_secs(20), || socket.exists());
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
fn each_loop_waits_as_the_wait_plan_says_and_says_why() {
    if !two_cores() || !common::ring_here() {
        return;
    }
    let server = NullServer::on_cpu(1);
    // A core of its own: spinning there gained no more than the spread.
    let (stdout, stderr) = run_on(0, &server, &[]);
    assert!(stderr.contains("event loop 0 (cpu 0) sleeps when idle: it is pinned to a core"), "{stderr}");
    assert!(!stdout.contains("Client CPU"), "no spinning, no block: {stdout}");

    // On the server's core, over its unix socket, a built-in test keeps the
    // ring too (waits on each socket are a script's: child_rss's
    // lua_hostile.rs sees them).
    let (stdout, stderr) = run_on(1, &server, &[]);
    assert!(stderr.contains("event loop 0 (cpu 1) sleeps when idle: it is pinned to a core"), "{stderr}");
    assert!(!stderr.contains("on its connection's socket"), "{stderr}");
    assert!(!stdout.contains("Client CPU"), "no spinning, no block: {stdout}");

    // Several queries in flight are the ring's: a loop pinned there sleeps.
    let (stdout, stderr) = run_on(1, &server, &["--pipeline=2"]);
    assert!(stderr.contains("event loop 0 (cpu 1) sleeps when idle: it is pinned to a core"), "{stderr}");
    assert!(!stdout.contains("Client CPU"), "no spinning, no block: {stdout}");

    let (stdout, stderr) = run_on(0, &server, &["--poll=spin"]);
    assert!(stderr.contains("event loop 0 (cpu 0) spins when idle: as --poll says"), "{stderr}");
    assert!(stdout.contains("Client CPU (event loops):") && stdout.contains("spinning with nothing to do"), "{stdout}");

    let (stdout, stderr) = run_on(0, &server, &["--poll=adaptive"]);
    assert!(stderr.contains("event loop 0 (cpu 0) sleeps when idle: --poll=adaptive is retired"), "{stderr}");
    assert!(!stdout.contains("Client CPU"), "{stdout}");
}
