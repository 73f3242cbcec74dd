//! Confirming and minimising a failure against a server that is down for
//! longer than the control connection's deadline after each restart: each
//! re-run waits for it (up to `--fuzz-restart-wait`) instead of giving the
//! minimisation up, and a wait shorter than the restart says what to give.

use crate::common;
use crate::fuzz_run;
use crate::planted;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::ScratchDir;
use planted::{Bug, PlantedServer};

/// Down this long after each restart: four times the deadline below.
const DOWN: Duration = Duration::from_secs(2);

async fn fuzz(port: u16, dir: &Path, restart_wait: u32) -> (Option<i32>, String, String, Duration) {
    let args: Vec<String> = vec![
        "fuzz".into(),
        "--mysql-host=127.0.0.1".into(),
        format!("--mysql-port={port}"),
        "--mysql-user=fuzz".into(),
        "--mysql-password=x".into(),
        "--mysql-db=planted".into(),
        "--fuzz-deadline=0.5".into(),
        format!("--fuzz-restart-wait={restart_wait}"),
        "--threads=4".into(),
        "--time=120".into(),
        "--rand-seed=1".into(),
        format!("--fuzz-dir={}", dir.display()),
        format!("--restart-cmd=touch {}", dir.join("restart").display()),
    ];
    tokio::task::spawn_blocking(move || {
        let started = Instant::now();
        let out = common::wirebench().args(&args).output().expect("run wirebench");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
            started.elapsed(),
        )
    })
    .await
    .unwrap()
}

fn reproducer(stdout: &str) -> String {
    let line = stdout.lines().find_map(|l| l.strip_prefix("wirebench fuzz: reproducer written to "));
    let path = PathBuf::from(line.unwrap_or_else(|| panic!("no reproducer path in:\n{stdout}")));
    std::fs::read_to_string(path).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn minimising_waits_for_a_server_slower_to_restart_than_the_deadline() {
    let server = PlantedServer::start(Bug::UnknownStatement).await;
    let dir = ScratchDir::new("fuzz-slow-restart");
    server.slow_restart_on(dir.0.join("restart"), DOWN);
    let (code, stdout, stderr, took) = fuzz(server.port, &dir.0, 10).await;
    eprintln!("fuzz took {:.1} s\n{stdout}\n{stderr}", took.as_secs_f64());
    assert_eq!(code, Some(3), "the planted bug must be found");
    let text = reproducer(&stdout);
    assert!(text.contains("\nreproduces: alone\n"), "{text}");
    let minimised = text.lines().find_map(|l| l.strip_prefix("minimised: ")).unwrap_or_default();
    let (_, runs) = minimised.split_once(" in ").unwrap_or_else(|| panic!("not minimised: {minimised}"));
    assert!(runs.ends_with(" re-runs") && !runs.contains('('), "minimising was cut short: {minimised}");
    let restarts = stderr.matches("wirebench fuzz: restarting the server").count();
    assert!(restarts >= 2, "each failing re-run restarts the server ({restarts}):\n{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_longer_than_the_wait_says_which_option_to_give() {
    let server = PlantedServer::start(Bug::UnknownStatement).await;
    let dir = ScratchDir::new("fuzz-slow-restart-short-wait");
    server.slow_restart_on(dir.0.join("restart"), DOWN);
    let (code, stdout, stderr, _) = fuzz(server.port, &dir.0, 1).await;
    assert_eq!(code, Some(3), "saved as found:\n{stdout}\n{stderr}");
    let text = reproducer(&stdout);
    assert!(
        text.contains("reproduces: not confirmed: the server did not answer again within 1 s; give it longer with --fuzz-restart-wait"),
        "{text}"
    );
}

/// A server that never comes back (the restart command does nothing, the
/// wait is ten minutes): the run still ends at `--time` plus
/// `--fuzz-overtime`, with the failure saved as found and the reproducer
/// saying why it was not confirmed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_comes_back_does_not_outlast_the_overtime() {
    let server = PlantedServer::start(Bug::UnknownStatement).await;
    let dir = ScratchDir::new("fuzz-never-back");
    let args: Vec<String> = [
        "fuzz",
        "--mysql-host=127.0.0.1",
        &format!("--mysql-port={}", server.port),
        "--mysql-user=fuzz",
        "--mysql-password=x",
        "--mysql-db=planted",
        "--fuzz-deadline=0.5",
        "--fuzz-restart-wait=600",
        "--restart-cmd=true",
        "--threads=4",
        "--time=5",
        "--fuzz-overtime=3",
        "--rand-seed=1",
        &format!("--fuzz-dir={}", dir.0.display()),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let (run, took) = fuzz_run::run_within(args, Duration::from_secs(90)).await;
    eprintln!("took {:.1} s\n{}\n{}", took.as_secs_f64(), run.stdout, run.stderr);
    assert_eq!(run.code, Some(3), "ended by itself with the failure (killed: None)");
    let text = reproducer(&run.stdout);
    assert!(
        text.contains("reproduces: not confirmed: the run's time (--time, then --fuzz-overtime) ran out"),
        "{text}"
    );
}
