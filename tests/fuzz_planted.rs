//! `wirebench fuzz` against servers with a planted bug (`tests/planted`):
//! from a fixed seed it must find each bug, save a reproducer that
//! `fuzz-replay` triggers again (exit status 3), and that a healthy server
//! survives (exit status 0); against a healthy server a run finds nothing.
//! The binary runs as the user runs it; the servers run in this process.

mod common;
mod planted;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::ScratchDir;
use planted::{Bug, PlantedServer};

struct Exit {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    took: Duration,
}

fn wirebench(args: &[String]) -> Exit {
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_wirebench")).args(args).output().expect("run wirebench");
    Exit {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        took: started.elapsed(),
    }
}

async fn wirebench_async(args: Vec<String>) -> Exit {
    tokio::task::spawn_blocking(move || wirebench(&args)).await.unwrap()
}

fn connection(port: u16) -> Vec<String> {
    ["--mysql-host=127.0.0.1", &format!("--mysql-port={port}"), "--mysql-user=fuzz", "--mysql-password=x"]
        .iter()
        .map(|s| s.to_string())
        .chain(["--mysql-db=planted".to_owned(), "--fuzz-deadline=0.5".to_owned()])
        .collect()
}

fn fuzz_args(port: u16, dir: &Path, seed: u32, time: u32) -> Vec<String> {
    let mut args = vec!["fuzz".to_owned()];
    args.extend(connection(port));
    args.extend([
        "--threads=4".to_owned(),
        format!("--time={time}"),
        format!("--rand-seed={seed}"),
        format!("--fuzz-dir={}", dir.display()),
        format!("--restart-cmd=touch {}", dir.join("restart").display()),
    ]);
    args
}

fn reproducer_path(stdout: &str) -> PathBuf {
    let line = stdout.lines().find_map(|l| l.strip_prefix("wirebench fuzz: reproducer written to "));
    PathBuf::from(line.unwrap_or_else(|| panic!("no reproducer path in:\n{stdout}")))
}

/// Fuzzes a server with `bug` from `seed` until it fails, then replays the
/// reproducer against it (again failing) and against a healthy server.
async fn find_and_replay(bug: Bug, seed: u32) {
    let server = PlantedServer::start(bug).await;
    let dir = ScratchDir::new(&format!("fuzz-{bug:?}"));
    server.restart_on(dir.0.join("restart"));
    let run = wirebench_async(fuzz_args(server.port, &dir.0, seed, 120)).await;
    eprintln!("{bug:?}: fuzz took {:.1} s\n{}\n{}", run.took.as_secs_f64(), run.stdout, run.stderr);
    assert_eq!(run.code, Some(3), "the fuzzer must find the planted bug");
    assert!(!server.fired.lock().unwrap().is_empty(), "the planted bug fired");
    let path = reproducer_path(&run.stdout);
    let text = std::fs::read_to_string(&path).unwrap();
    eprintln!("{}", text.split("\nsession history").next().unwrap_or_default());
    assert!(text.contains("\nreproduces: alone\n"), "{text}");
    assert!(text.contains("\nminimised: "), "{text}");

    server.restart().await;
    let mut replay = vec!["fuzz-replay".to_owned(), path.display().to_string()];
    replay.extend(connection(server.port));
    let again = wirebench_async(replay).await;
    eprintln!("replay:\n{}\n{}", again.stdout, again.stderr);
    assert_eq!(again.code, Some(3), "the replay must trigger the bug again");

    let healthy = PlantedServer::start(Bug::None).await;
    let mut replay = vec!["fuzz-replay".to_owned(), path.display().to_string()];
    replay.extend(connection(healthy.port));
    let survived = wirebench_async(replay).await;
    assert_eq!(
        survived.code,
        Some(0),
        "a healthy server survives the replay:\n{}\n{}",
        survived.stdout,
        survived.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn execute_of_an_unknown_statement_id_is_found_and_replays() {
    find_and_replay(Bug::UnknownStatement, 1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncated_parameter_value_is_found_and_replays() {
    find_and_replay(Bug::TruncatedValue, 1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_connection_attributes_are_found_and_replay() {
    find_and_replay(Bug::ConnectAttrs, 1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hang_after_a_bad_send_long_data_is_found_and_replays() {
    find_and_replay(Bug::LongDataHang, 1).await;
}

/// A healthy server closes bad connections; that is no failure.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_healthy_server_survives_and_the_run_says_so() {
    let server = PlantedServer::start(Bug::None).await;
    let dir = ScratchDir::new("fuzz-healthy");
    let mut args = fuzz_args(server.port, &dir.0, 7, 3);
    args.push("--report-interval=1".to_owned());
    let run = wirebench_async(args).await;
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("wirebench fuzz: sending malformed MySQL protocol traffic to 127.0.0.1:"));
    assert!(run.stdout.contains("s ] execs/s: "), "{}", run.stdout);
    assert!(run.stdout.contains("    failures:            0\n"), "{}", run.stdout);
    let states = std::fs::read_to_string(dir.0.join("states.txt")).unwrap();
    assert!(states.contains("COM_STMT_PREPARE -> PREPARE_OK\n"), "{states}");
    assert!(states.contains("COM_STMT_EXECUTE -> ERR 1243\n"), "{states}");
}

#[test]
fn usage_and_connection_errors_exit_1() {
    let remote = wirebench(&["fuzz".into(), "--mysql-host=192.0.2.1".into(), "--time=1".into()]);
    assert_eq!(remote.code, Some(1));
    assert!(
        remote.stderr.contains("is not on this host") && remote.stderr.contains("--fuzz-allow-remote"),
        "{}",
        remote.stderr
    );
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let refused =
        wirebench(&["fuzz".into(), "--mysql-host=127.0.0.1".into(), format!("--mysql-port={port}"), "--time=1".into()]);
    assert_eq!(refused.code, Some(1));
    assert!(refused.stderr.contains("cannot log in to the server under test before fuzzing"), "{}", refused.stderr);
    let typo = wirebench(&["fuzz".into(), "--keep-goin".into()]);
    assert_eq!(typo.code, Some(1));
    assert!(typo.stderr.contains("--keep-going"), "{}", typo.stderr);
    let no_file = wirebench(&["fuzz-replay".into()]);
    assert_eq!(no_file.code, Some(1));
    let bad_file = wirebench(&["fuzz-replay".into(), "/etc/hostname".into(), "--mysql-host=127.0.0.1".into()]);
    assert_eq!(bad_file.code, Some(1));
    assert!(bad_file.stderr.contains("line 1"), "{}", bad_file.stderr);
}

/// How long finding each planted bug takes from other seeds: the
/// two-minute bound checked by hand (`cargo test --release --test
/// fuzz_planted -- --ignored --nocapture`), too slow for every CI run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore]
async fn time_to_find_from_other_seeds() {
    for bug in [Bug::UnknownStatement, Bug::TruncatedValue, Bug::ConnectAttrs, Bug::LongDataHang] {
        for seed in 2..=6 {
            let server = PlantedServer::start(bug).await;
            let dir = ScratchDir::new(&format!("fuzz-seeds-{bug:?}-{seed}"));
            server.restart_on(dir.0.join("restart"));
            let run = wirebench_async(fuzz_args(server.port, &dir.0, seed, 120)).await;
            assert_eq!(run.code, Some(3), "{bug:?} seed {seed} not found within 120 s:\n{}", run.stdout);
            let text = std::fs::read_to_string(reproducer_path(&run.stdout)).unwrap();
            let found = text.lines().find(|l| l.starts_with("found-after: ")).unwrap_or_default().to_owned();
            println!("{bug:?} seed {seed}: {found}, whole run {:.1} s", run.took.as_secs_f64());
        }
    }
}
