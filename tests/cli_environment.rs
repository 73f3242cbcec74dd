//! What the command line takes from the process around it: the cores it
//! may run on, its environment, option files, the terminal, and its own
//! argument list (which must not show a password to `ps`). Each test runs
//! the wirebench binary; none needs a server.

use std::process::{Command, Output, Stdio};

const WIREBENCH: &str = env!("CARGO_BIN_EXE_wirebench");

fn wirebench(args: &[&str]) -> Output {
    Command::new(WIREBENCH).args(args).stdin(Stdio::null()).output().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The cores this process may run on, from /proc (not from the code
/// under test).
fn allowed_cpus() -> Vec<usize> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let list = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:")).unwrap().trim();
    let mut cpus = Vec::new();
    for item in list.split(',') {
        let (a, b) = item.split_once('-').unwrap_or((item, item));
        cpus.extend(a.parse::<usize>().unwrap()..=b.parse::<usize>().unwrap());
    }
    cpus
}

#[test]
fn cpus_outside_the_affinity_are_refused_for_runs_and_the_null_server() {
    let outside = (allowed_cpus().iter().max().unwrap() + 1).to_string();
    let cpus = format!("--cpus={outside}");
    let run = wirebench(&["oltp_read_write", "--mysql-dry-run", "--time=1", &cpus, "run"]);
    let message = stderr(&run);
    assert_eq!(run.status.code(), Some(1), "{message}");
    assert!(
        message.contains(&format!("--cpus: this process may not run on cpu {outside}; it may run on cpus ")),
        "{message}"
    );
    assert!(!String::from_utf8_lossy(&run.stdout).contains("Threads started"), "refused before the run starts");

    let server = wirebench(&["null-server", "--listen=127.0.0.1:0", &cpus]);
    let message = stderr(&server);
    assert_eq!(server.status.code(), Some(1), "{message}");
    assert!(message.contains(&format!("cannot run on cpu {outside}: this process may run on cpus")), "{message}");
}
