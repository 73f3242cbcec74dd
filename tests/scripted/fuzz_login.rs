//! Findings in the login: a server whose login hangs when it names a
//! database (CONNECT_WITH_DB) while logins without one are answered
//! (`Bug::DatabaseLoginHang`) is a finding with a reproducer, not a reason
//! to exit 1; `fuzz-replay` and the emitted Python script judge it by the
//! login's own answer (exit status 3), a healthy server survives both, and
//! with `--keep-going` the run goes on fuzzing with the form of login that
//! works (COM_INIT_DB selecting the database). A server that takes the
//! database by COM_INIT_DB and never answers it (`Bug::InitDbHang`, as
//! msql-srv without `on_init`) is the same finding, and the run still ends
//! within `--time` plus `--fuzz-overtime`: it once waited for that answer
//! until it was killed.

use crate::common;
use crate::fuzz_run;
use crate::planted;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::{Ran, ScratchDir};
use fuzz_run::run_within;
use planted::{Bug, PlantedServer};

/// `program ARGS` to its end, on a blocking thread.
async fn run_program(program: &'static str, args: Vec<String>) -> Ran {
    tokio::task::spawn_blocking(move || common::run(Command::new(program).args(&args))).await.unwrap()
}

fn fuzz_args(port: u16, dir: &Path, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "fuzz",
        "--mysql-host=127.0.0.1",
        &format!("--mysql-port={port}"),
        "--mysql-user=fuzz",
        "--mysql-password=x",
        "--mysql-db=planted",
        "--fuzz-deadline=0.5",
        "--threads=4",
        "--rand-seed=3",
        &format!("--fuzz-dir={}", dir.display()),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

fn reproducer_path(stdout: &str) -> PathBuf {
    let line = stdout.lines().find_map(|l| l.strip_prefix("wirebench fuzz: reproducer written to "));
    PathBuf::from(line.unwrap_or_else(|| panic!("no reproducer path in:\n{stdout}")))
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

async fn python(path: &Path, port: u16) -> Ran {
    let emit =
        run_program(common::WIREBENCH, vec!["fuzz-replay".into(), path.display().to_string(), "--emit=python".into()])
            .await;
    assert_eq!(emit.code, Some(0), "{}", emit.stderr);
    let script = path.with_extension("py");
    std::fs::write(&script, &emit.stdout).unwrap();
    let args = vec![
        script.display().to_string(),
        "--host=127.0.0.1".into(),
        format!("--port={port}"),
        "--user=fuzz".into(),
        "--password=x".into(),
    ];
    run_program("python3", args).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_login_that_hangs_with_a_database_is_a_finding_that_replays() {
    let server = PlantedServer::start(Bug::DatabaseLoginHang).await;
    let dir = ScratchDir::new("fuzz-login-hang");
    let run = run_program(common::WIREBENCH, fuzz_args(server.port, &dir.0, &["--time=30"])).await;
    eprintln!("{}\n{}", run.stdout, run.stderr);
    assert_eq!(run.code, Some(3), "a finding, not exit status 1");
    assert!(!run.stderr.contains("cannot log in"), "{}", run.stderr);
    let path = reproducer_path(&run.stdout);
    assert!(path.file_name().unwrap().to_string_lossy().starts_with("failure-login-"), "{}", path.display());
    let text = std::fs::read_to_string(&path).unwrap();
    for line in [
        "\nobserved: the login naming database planted (CONNECT_WITH_DB) got no answer within 0.5 s, while a login \
         naming no database logs in\n",
        "\nfailure: login\n",
        "\nreproduces: alone\n",
        "\nfuzz-deadline: 0.5 s\n",
    ] {
        assert!(text.contains(line), "{line:?} missing:\n{text}");
    }
    assert!(text.contains("  # answer: login -> "), "{text}");
    assert!(run.stdout.contains("    failures:            1\n"), "{}", run.stdout);

    let again = run_program(common::WIREBENCH, replay_args(&path, server.port)).await;
    assert_eq!(again.code, Some(3), "{}\n{}", again.stdout, again.stderr);
    assert!(again.stdout.contains("FAILURE again: the login was not completed within 0.5 s"), "{}", again.stdout);
    let script = python(&path, server.port).await;
    assert_eq!(script.code, Some(3), "{}\n{}", script.stdout, script.stderr);
    assert!(script.stdout.contains("as the reproducer says"), "{}", script.stdout);

    let healthy = PlantedServer::start(Bug::None).await;
    let survived = run_program(common::WIREBENCH, replay_args(&path, healthy.port)).await;
    assert_eq!(survived.code, Some(0), "{}\n{}", survived.stdout, survived.stderr);
    assert!(survived.stdout.contains("the login was completed"), "{}", survived.stdout);
    let survived = python(&path, healthy.port).await;
    assert_eq!(survived.code, Some(0), "{}\n{}", survived.stdout, survived.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_keep_going_it_fuzzes_on_with_the_login_that_works() {
    let server = PlantedServer::start(Bug::DatabaseLoginHang).await;
    let dir = ScratchDir::new("fuzz-login-hang-keep-going");
    let run = run_program(common::WIREBENCH, fuzz_args(server.port, &dir.0, &["--time=3", "--keep-going"])).await;
    assert_eq!(run.code, Some(3), "{}\n{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("going on (--keep-going) with every login naming no database"), "{}", run.stderr);
    let states = std::fs::read_to_string(dir.0.join("states.txt")).unwrap();
    // Commands answered after logins naming no database show that it went
    // on; how deep it gets in --time depends on the machine's speed.
    for state in ["login -> OK\n", "COM_INIT_DB -> OK\n", "COM_QUERY -> OK\n"] {
        assert!(states.contains(state), "{state:?} missing:\n{states}");
    }
    assert!(run.stdout.contains("    failures:            1\n"), "only the login finding:\n{}", run.stdout);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_never_selected_is_a_finding_and_the_run_ends_on_time() {
    let server = PlantedServer::start(Bug::InitDbHang).await;
    for keep_going in [false, true] {
        let dir = ScratchDir::new(&format!("fuzz-init-db-hang-{keep_going}"));
        let mut extra = vec!["--time=5", "--fuzz-overtime=5"];
        if keep_going {
            extra.push("--keep-going");
        }
        // Killed well past its time plus overtime: it must end by itself.
        let (ran, took) = run_within(fuzz_args(server.port, &dir.0, &extra), Duration::from_secs(60)).await;
        let run = ran;
        eprintln!("keep-going {keep_going}: took {:.1} s\n{}\n{}", took.as_secs_f64(), run.stdout, run.stderr);
        assert_eq!(run.code, Some(3), "ended by itself, with the finding (killed: None)");
        assert!(run.stdout.contains("wirebench fuzz summary:"), "{}", run.stdout);
        let path = reproducer_path(&run.stdout);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("\nfailure: login\n") && text.contains("\nreproduces: alone\n"), "{text}");
        assert!(text.contains("# answer: COM_INIT_DB -> "), "the login selects the database after it:\n{text}");
        assert!(text.contains("\nobserved: the login selecting database planted (with COM_INIT_DB"), "{text}");
        if keep_going {
            assert!(run.stderr.contains("going on (--keep-going) with every login selecting no database"));
            continue;
        }
        let again = run_program(common::WIREBENCH, replay_args(&path, server.port)).await;
        assert_eq!(again.code, Some(3), "{}\n{}", again.stdout, again.stderr);
        let script = python(&path, server.port).await;
        assert_eq!(script.code, Some(3), "{}\n{}", script.stdout, script.stderr);
        let healthy = PlantedServer::start(Bug::None).await;
        let survived = run_program(common::WIREBENCH, replay_args(&path, healthy.port)).await;
        assert_eq!(survived.code, Some(0), "{}\n{}", survived.stdout, survived.stderr);
        let survived = python(&path, healthy.port).await;
        assert_eq!(survived.code, Some(0), "{}\n{}", survived.stdout, survived.stderr);
    }
}
