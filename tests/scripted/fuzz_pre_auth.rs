//! Pre-auth fuzzing: against a server that refuses every login
//! (`Bug::RefuseLogins`), the run fuzzes what comes before the login's
//! answer instead of exiting 1, says so and why, and finds nothing
//! (exit status 0) while the server keeps answering ERR 1045; a planted
//! crash in the auth switch (`Bug::PreAuthCrash`) is found, and its
//! reproducer replays (`fuzz-replay` and the Python script, exit 3) while
//! the refusing server survives it (exit 0). `--pre-auth` fuzzes the same
//! way a server whose login works.

use crate::common;
use crate::fuzz_run;
use crate::planted;

use std::path::Path;
use std::time::Duration;

use common::ScratchDir;
use fuzz_run::{python_replay, replay, reproducer_path, run_within};
use planted::{Bug, PlantedServer};

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
        "--rand-seed=2",
        &format!("--fuzz-dir={}", dir.display()),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_refusing_every_login_is_fuzzed_before_the_answer() {
    let server = PlantedServer::start(Bug::RefuseLogins).await;
    let dir = ScratchDir::new("fuzz-pre-auth-refused");
    let (run, took) = run_within(fuzz_args(server.port, &dir.0, &["--time=3"]), Duration::from_secs(60)).await;
    eprintln!("took {:.1} s\n{}\n{}", took.as_secs_f64(), run.stdout, run.stderr);
    assert_eq!(run.code, Some(0), "no finding, and no 'cannot log in'");
    assert!(run.stderr.contains("(pre-auth mode): the server refuses the login ("), "{}", run.stderr);
    assert!(run.stderr.contains("ERROR 1045"), "{}", run.stderr);
    assert!(run.stderr.contains("expects a well-formed login to keep getting ERR 1045"), "{}", run.stderr);
    assert!(run.stdout.contains("    failures:            0\n"), "{}", run.stdout);
    let states = std::fs::read_to_string(dir.0.join("states.txt")).unwrap();
    for state in ["login -> ERR 1045\n", "login -> AuthSwitchRequest\n", "auth reply -> ERR 1045\n"] {
        assert!(states.contains(state), "{state:?} missing:\n{states}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_in_the_auth_switch_is_found_and_replays() {
    let server = PlantedServer::start(Bug::PreAuthCrash).await;
    let dir = ScratchDir::new("fuzz-pre-auth-crash");
    server.restart_on(dir.0.join("restart"));
    let restart = format!("--restart-cmd=touch {}", dir.0.join("restart").display());
    let args = fuzz_args(server.port, &dir.0, &["--time=60", &restart]);
    let (run, took) = run_within(args, Duration::from_secs(240)).await;
    eprintln!("took {:.1} s\n{}\n{}", took.as_secs_f64(), run.stdout, run.stderr);
    assert_eq!(run.code, Some(3), "the planted crash must be found");
    let path = reproducer_path(&run.stdout);
    let text = std::fs::read_to_string(&path).unwrap();
    eprintln!("{}", text.split("\nsession history").next().unwrap_or_default());
    for line in ["\nmode: pre-auth\n", "\nreproduces: alone\n", "\npacket auth-reply"] {
        assert!(text.contains(line), "{line:?} missing:\n{text}");
    }

    server.restart().await;
    let again = replay(&path, server.port).await;
    assert_eq!(again.code, Some(3), "{}\n{}", again.stdout, again.stderr);
    assert!(again.stdout.contains("pre-auth: a well-formed login gets ERR 1045"), "{}", again.stdout);
    server.restart().await;
    let script = python_replay(&path, server.port).await;
    assert_eq!(script.code, Some(3), "{}\n{}", script.stdout, script.stderr);
    assert!(script.stdout.contains("as the reproducer says"), "{}", script.stdout);

    let refusing = PlantedServer::start(Bug::RefuseLogins).await;
    let survived = replay(&path, refusing.port).await;
    assert_eq!(survived.code, Some(0), "{}\n{}", survived.stdout, survived.stderr);
    let survived = python_replay(&path, refusing.port).await;
    assert_eq!(survived.code, Some(0), "{}\n{}", survived.stdout, survived.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pre_auth_is_chosen_by_option_when_the_login_works() {
    let server = PlantedServer::start(Bug::None).await;
    let dir = ScratchDir::new("fuzz-pre-auth-asked");
    let args = fuzz_args(server.port, &dir.0, &["--time=2", "--pre-auth"]);
    let (run, _) = run_within(args, Duration::from_secs(60)).await;
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("(pre-auth mode, --pre-auth)"), "{}", run.stderr);
    assert!(run.stderr.contains("keep getting OK (logged in)"), "{}", run.stderr);
    let states = std::fs::read_to_string(dir.0.join("states.txt")).unwrap();
    assert!(states.contains("login -> OK\n"), "{states}");
    assert!(states.contains("login -> ERR 1043\n"), "malformed logins, refused:\n{states}");
}
