//! Running `wirebench fuzz` from the scripted fuzz tests with a bound:
//! a run that does not end by itself is the failure some of them test
//! for, so it is killed (and reported as such) rather than left to hang
//! the suite.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How a run ended: `code` is `None` when it was killed at its limit.
pub struct Ran {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Runs wirebench, killing it if it runs past `limit` (a run that does
/// not end is the failure under test, not a test that hangs).
pub async fn wirebench_within(args: Vec<String>, limit: Duration) -> (Ran, Duration) {
    tokio::task::spawn_blocking(move || {
        let started = Instant::now();
        let mut child = Command::new(env!("CARGO_BIN_EXE_wirebench"))
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run wirebench");
        let pipes = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
        let read = |mut pipe: Box<dyn std::io::Read + Send>| {
            std::thread::spawn(move || {
                let mut text = String::new();
                let _ = pipe.read_to_string(&mut text);
                text
            })
        };
        let (stdout, stderr) = (read(Box::new(pipes.0)), read(Box::new(pipes.1)));
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break Some(status);
            }
            if started.elapsed() > limit {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let exit =
            Ran { code: status.and_then(|s| s.code()), stdout: stdout.join().unwrap(), stderr: stderr.join().unwrap() };
        (exit, started.elapsed())
    })
    .await
    .unwrap()
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
    wirebench_within(args, Duration::from_secs(120)).await.0
}

/// The script `fuzz-replay FILE --emit=python` writes, run against the
/// server on `port`.
pub async fn python_replay(path: &std::path::Path, port: u16) -> Ran {
    let emit = vec!["fuzz-replay".to_owned(), path.display().to_string(), "--emit=python".to_owned()];
    let (emitted, _) = wirebench_within(emit, Duration::from_secs(60)).await;
    assert_eq!(emitted.code, Some(0), "{}", emitted.stderr);
    let script = path.with_extension("py");
    std::fs::write(&script, &emitted.stdout).unwrap();
    let args = ["--host=127.0.0.1".to_owned(), format!("--port={port}"), "--user=fuzz".into(), "--password=x".into()];
    tokio::task::spawn_blocking(move || {
        let out = Command::new("python3").arg(&script).args(args).output().expect("python3 runs");
        Ran {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    })
    .await
    .unwrap()
}

/// The reproducer the run's output names.
pub fn reproducer_path(stdout: &str) -> std::path::PathBuf {
    let line = stdout.lines().find_map(|l| l.strip_prefix("wirebench fuzz: reproducer written to "));
    std::path::PathBuf::from(line.unwrap_or_else(|| panic!("no reproducer path in:\n{stdout}")))
}
