//! Running `wirebench fuzz` from the scripted fuzz tests with a bound:
//! a run that does not end by itself is the failure some of them test
//! for, so it is killed (and reported as such) rather than left to hang
//! the suite.

use std::process::Command;
use std::time::Duration;

use crate::common;

pub use common::Ran;

/// Runs wirebench on a blocking thread, killing it if it runs past
/// `limit` (a run that does not end is the failure under test, not a test
/// that hangs): how it ran, and how long it took.
pub async fn run_within(args: Vec<String>, limit: Duration) -> (Ran, Duration) {
    let ran = tokio::task::spawn_blocking(move || common::run_within(common::wirebench().args(&args), limit));
    let ran = ran.await.unwrap();
    let took = ran.took;
    (ran, took)
}

/// `fuzz-replay FILE` against the server on `port`, as the user runs it.
pub async fn replay(path: &std::path::Path, port: u16) -> Ran {
    let args = vec![
        "fuzz-replay".to_owned(),
        path.display().to_string(),
        "--mysql-host=127.0.0.1".to_owned(),
        format!("--mysql-port={port}"),
        "--mysql-password=x".to_owned(),
    ];
    run_within(args, Duration::from_secs(120)).await.0
}

/// The script `fuzz-replay FILE --emit=python` writes, run against the
/// server on `port`.
pub async fn python_replay(path: &std::path::Path, port: u16) -> Ran {
    let emit = vec!["fuzz-replay".to_owned(), path.display().to_string(), "--emit=python".to_owned()];
    let (emitted, _) = run_within(emit, Duration::from_secs(60)).await;
    assert_eq!(emitted.code, Some(0), "{}", emitted.stderr);
    let script = path.with_extension("py");
    std::fs::write(&script, &emitted.stdout).unwrap();
    let args = ["--host=127.0.0.1".to_owned(), format!("--port={port}"), "--user=fuzz".into(), "--password=x".into()];
    tokio::task::spawn_blocking(move || common::run(Command::new("python3").arg(&script).args(args))).await.unwrap()
}

/// The reproducer the run's output names.
pub fn reproducer_path(stdout: &str) -> std::path::PathBuf {
    let line = stdout.lines().find_map(|l| l.strip_prefix("wirebench fuzz: reproducer written to "));
    std::path::PathBuf::from(line.unwrap_or_else(|| panic!("no reproducer path in:\n{stdout}")))
}
