//! Reproducers carry their preconditions: against a server that crashes
//! when a prepared statement naming `sbtest1` is executed while that table
//! has a row (`Bug::RowsCrash`, whose database also holds `sbtest2`), the
//! reproducer's setup must hold `sbtest1` alone, with one row (the
//! minimiser drops the rest), and replay on a server whose database is
//! empty: `fuzz-replay` and the emitted Python script make the table
//! first (exit status 3), while the same file without its setup leaves
//! the empty server alive (exit status 0).

use crate::common;
use crate::planted;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::ScratchDir;
use planted::{Bug, PlantedServer};

struct Exit {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

async fn run(program: &'static str, args: Vec<String>) -> Exit {
    tokio::task::spawn_blocking(move || {
        let out = Command::new(program).args(&args).output().expect(program);
        Exit {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    })
    .await
    .unwrap()
}

fn replay_args(path: &Path, port: u16) -> Vec<String> {
    vec![
        "fuzz-replay".into(),
        path.display().to_string(),
        "--mysql-host=127.0.0.1".into(),
        format!("--mysql-port={port}"),
        "--mysql-password=x".into(),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reproducer_makes_the_one_row_its_failure_needs() {
    let server = PlantedServer::start(Bug::RowsCrash).await;
    let dir = ScratchDir::new("fuzz-setup");
    server.restart_on(dir.0.join("restart"));
    let args = vec![
        "fuzz".into(),
        "--mysql-host=127.0.0.1".into(),
        format!("--mysql-port={}", server.port),
        "--mysql-user=fuzz".into(),
        "--mysql-password=x".into(),
        "--mysql-db=planted".into(),
        "--fuzz-deadline=0.5".into(),
        "--threads=4".into(),
        "--time=120".into(),
        "--rand-seed=1".into(),
        format!("--fuzz-dir={}", dir.0.display()),
        format!("--restart-cmd=touch {}", dir.0.join("restart").display()),
    ];
    let found = run(common::WIREBENCH, args).await;
    eprintln!("{}\n{}", found.stdout, found.stderr);
    assert_eq!(found.code, Some(3), "the planted bug must be found");
    let line = found.stdout.lines().find_map(|l| l.strip_prefix("wirebench fuzz: reproducer written to "));
    let path = PathBuf::from(line.expect("a reproducer"));
    let text = std::fs::read_to_string(&path).unwrap();
    eprintln!("{}", text.split("\nsession history").next().unwrap_or_default());
    assert!(text.starts_with("wirebench fuzz reproducer 2\n"), "{text}");
    assert!(text.contains("\nreproduces: alone\n"), "{text}");
    let setup = text.split("\nsetup\n").nth(1).and_then(|s| s.split("\nend\n").next()).expect("a setup section");
    assert!(setup.starts_with("table sbtest1\n  create CREATE TABLE `sbtest1` (\n"), "{setup}");
    assert!(!setup.contains("sbtest2"), "a table the session does not name: {setup}");
    assert_eq!(setup.matches("\n  row ").count(), 1, "one row is all the failure needs: {setup}");

    let empty = PlantedServer::start_empty(Bug::RowsCrash).await;
    let replay = run(common::WIREBENCH, replay_args(&path, empty.port)).await;
    assert_eq!(replay.code, Some(3), "{}\n{}", replay.stdout, replay.stderr);
    assert!(replay.stdout.contains("made the setup in planted: sbtest1 (1 rows)"), "{}", replay.stdout);
    assert!(!empty.fired.lock().unwrap().is_empty());

    let bare = dir.write("bare.repro", &without_setup(&text));
    let empty = PlantedServer::start_empty(Bug::RowsCrash).await;
    let survived = run(common::WIREBENCH, replay_args(&bare, empty.port)).await;
    assert_eq!(survived.code, Some(0), "without its setup it needs the table:\n{}", survived.stdout);

    let empty = PlantedServer::start_empty(Bug::RowsCrash).await;
    let emit =
        run(common::WIREBENCH, vec!["fuzz-replay".into(), path.display().to_string(), "--emit=python".into()]).await;
    assert_eq!(emit.code, Some(0), "{}", emit.stderr);
    let script = dir.write("repro.py", &emit.stdout);
    let args = vec![
        script.display().to_string(),
        "--host=127.0.0.1".into(),
        format!("--port={}", empty.port),
        "--user=fuzz".into(),
        "--password=x".into(),
    ];
    let python = run("python3", args).await;
    assert_eq!(python.code, Some(3), "{}\n{}", python.stdout, python.stderr);
    assert!(python.stdout.contains("made the setup in planted: sbtest1 (1 rows)"), "{}", python.stdout);
    assert!(!empty.fired.lock().unwrap().is_empty());
}

/// The reproducer as version 1 wrote it: no setup section.
fn without_setup(text: &str) -> String {
    let start = text.find("\n# What the sessions need").expect("the setup's comment");
    let end = text.find("\nsession failing\n").unwrap();
    format!("{}{}", &text[..start], &text[end..]).replacen("reproducer 2", "reproducer 1", 1)
}
