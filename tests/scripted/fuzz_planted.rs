//! `wirebench fuzz` against servers with a planted bug (`tests/planted`):
//! from a fixed seed it must find each bug, save a reproducer that
//! `fuzz-replay` triggers again (exit status 3), as does the Python script
//! `fuzz-replay --emit=python` writes of it, and that a healthy server
//! survives (exit status 0); against a healthy server a run finds nothing.
//! The replays name no user or database: the reproducer's are used. The
//! binary runs as the user runs it; the servers run in this process.

use crate::common;
use crate::planted;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::{Ran, ScratchDir};
use planted::{Bug, PlantedServer};

/// `wirebench ARGS` to its end, on a blocking thread.
async fn in_background(args: Vec<String>) -> Ran {
    tokio::task::spawn_blocking(move || common::run_wirebench(&args)).await.unwrap()
}

fn connection(port: u16) -> Vec<String> {
    ["--mysql-host=127.0.0.1", &format!("--mysql-port={port}"), "--mysql-user=fuzz", "--mysql-password=x"]
        .iter()
        .map(|s| s.to_string())
        .chain(["--mysql-db=planted".to_owned(), "--fuzz-deadline=0.5".to_owned()])
        .collect()
}

/// A replay's: the server and the password only, the deadline the reproducer's.
fn replay_args(path: &Path, port: u16) -> Vec<String> {
    let server = ["--mysql-host=127.0.0.1", &format!("--mysql-port={port}"), "--mysql-password=x"];
    ["fuzz-replay", &path.display().to_string()].iter().chain(server.iter()).map(|s| s.to_string()).collect()
}

/// Runs the script `fuzz-replay --emit=python` writes of `path` against
/// the server on `port`; its exit status and output.
async fn emitted_python(path: &Path, port: u16) -> Ran {
    let emit = in_background(vec!["fuzz-replay".into(), path.display().to_string(), "--emit=python".into()]).await;
    assert_eq!(emit.code, Some(0), "{}", emit.stderr);
    let script = path.with_extension("py");
    std::fs::write(&script, &emit.stdout).unwrap();
    tokio::task::spawn_blocking(move || {
        let args = ["--host=127.0.0.1", &format!("--port={port}"), "--user=fuzz", "--password=x"];
        common::run(Command::new("python3").arg(&script).args(args))
    })
    .await
    .unwrap()
}

fn fuzz_args(port: u16, dir: &Path, seed: u32, time: u32) -> Vec<String> {
    fuzz_args_with(connection(port), dir, seed, time)
}

fn fuzz_args_with(connection: Vec<String>, dir: &Path, seed: u32, time: u32) -> Vec<String> {
    let mut args = vec!["fuzz".to_owned()];
    args.extend(connection);
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
    let run = in_background(fuzz_args(server.port, &dir.0, seed, 120)).await;
    eprintln!("{bug:?}: fuzz took {:.1} s\n{}\n{}", run.took.as_secs_f64(), run.stdout, run.stderr);
    assert_eq!(run.code, Some(3), "the fuzzer must find the planted bug");
    assert!(!server.fired.lock().unwrap().is_empty(), "the planted bug fired");
    let path = reproducer_path(&run.stdout);
    let text = std::fs::read_to_string(&path).unwrap();
    eprintln!("{}", text.split("\nsession history").next().unwrap_or_default());
    assert!(text.contains("\nreproduces: alone\n"), "{text}");
    assert!(text.contains("\nminimised: "), "{text}");

    replays_fail_and_a_healthy_server_survives(&server, &path).await;
}

/// `fuzz-replay` of the reproducer at `path`, and its emitted Python
/// script, each against `server` restarted: both fail it again (exit
/// status 3); a healthy server survives both (exit status 0).
async fn replays_fail_and_a_healthy_server_survives(server: &PlantedServer, path: &Path) {
    server.restart().await;
    let fired = server.fired.lock().unwrap().len();
    let again = in_background(replay_args(path, server.port)).await;
    eprintln!("replay:\n{}\n{}", again.stdout, again.stderr);
    assert_eq!(again.code, Some(3), "the replay must trigger the bug again");
    assert!(server.fired.lock().unwrap().len() > fired, "the planted bug fired again");

    server.restart().await;
    let fired = server.fired.lock().unwrap().len();
    let script = emitted_python(path, server.port).await;
    eprintln!("emitted python:\n{}\n{}", script.stdout, script.stderr);
    assert_eq!(script.code, Some(3), "the emitted script must trigger the bug again");
    assert!(script.stdout.contains("as the reproducer says"), "{}", script.stdout);
    assert!(server.fired.lock().unwrap().len() > fired, "the planted bug fired again");

    let healthy = PlantedServer::start(Bug::None).await;
    let survived = in_background(replay_args(path, healthy.port)).await;
    assert_eq!(
        survived.code,
        Some(0),
        "a healthy server survives the replay:\n{}\n{}",
        survived.stdout,
        survived.stderr
    );
    let survived = emitted_python(path, healthy.port).await;
    assert_eq!(survived.code, Some(0), "and the script:\n{}\n{}", survived.stdout, survived.stderr);
    assert!(survived.stdout.contains("the server survived"), "{}", survived.stdout);
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

/// A server that stops answering commands after a COM_STMT_RESET of a
/// prepared statement that was sent long data (`Bug::ResetHang`), in a
/// session that is otherwise ordinary: the culprit is still waiting for its answer when the control
/// connection finds the hang (2 s here), while the other sessions log in
/// and hang at their first command. From each of three seeds the run must
/// confirm and minimise the culprit within two minutes (the hang judged by
/// that same deadline), and the reproducer must replay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hang_whose_culprit_is_in_flight_is_confirmed_from_three_seeds() {
    let runs = [1, 2, 3].map(|seed| tokio::spawn(find_the_reset_hang(seed)));
    for run in runs {
        run.await.unwrap();
    }
}

async fn find_the_reset_hang(seed: u32) {
    let server = PlantedServer::start(Bug::ResetHang).await;
    let dir = ScratchDir::new(&format!("fuzz-reset-hang-{seed}"));
    server.restart_on(dir.0.join("restart"));
    let mut connection = connection(server.port);
    connection.retain(|o| !o.starts_with("--fuzz-deadline="));
    connection.push("--fuzz-deadline=2".to_owned());
    let run = in_background(fuzz_args_with(connection, &dir.0, seed, 120)).await;
    eprintln!("seed {seed}: fuzz took {:.1} s\n{}\n{}", run.took.as_secs_f64(), run.stdout, run.stderr);
    assert_eq!(run.code, Some(3), "seed {seed}: the fuzzer must find the planted hang");
    let path = reproducer_path(&run.stdout);
    let text = std::fs::read_to_string(&path).unwrap();
    eprintln!("{}", text.split("\nsession history").next().unwrap_or_default());
    for line in ["\nfailure: hang\n", "\nreproduces: alone\n", "\nfuzz-deadline: 2 s\n"] {
        assert!(text.contains(line), "seed {seed}: {line:?} missing:\n{text}");
    }
    let minimised = text.lines().find(|l| l.starts_with("minimised: ")).unwrap_or_default();
    assert!(minimised.contains(" packets -> "), "seed {seed}: {minimised}");
    let failing = text.split("\nsession failing\n").nth(1).unwrap().split("\nend\n").next().unwrap();
    assert!(failing.contains("# answer: COM_STMT_RESET -> "), "seed {seed}: the culprit resets:\n{failing}");
    assert!(run.took < Duration::from_secs(120), "seed {seed}: {:.1} s", run.took.as_secs_f64());
    replays_fail_and_a_healthy_server_survives(&server, &path).await;
}

/// A healthy server closes bad connections; that is no failure.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_healthy_server_survives_and_the_run_says_so() {
    let server = PlantedServer::start(Bug::None).await;
    let dir = ScratchDir::new("fuzz-healthy");
    let mut args = fuzz_args(server.port, &dir.0, 7, 3);
    args.push("--report-interval=1".to_owned());
    let run = in_background(args).await;
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
    let remote =
        common::run_wirebench(&["fuzz".to_owned(), "--mysql-host=192.0.2.1".to_owned(), "--time=1".to_owned()]);
    assert_eq!(remote.code, Some(1));
    assert!(
        remote.stderr.contains("is not on this host") && remote.stderr.contains("--fuzz-allow-remote"),
        "{}",
        remote.stderr
    );
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let refused = common::run_wirebench(&[
        "fuzz".to_owned(),
        "--mysql-host=127.0.0.1".to_owned(),
        format!("--mysql-port={port}"),
        "--time=1".to_owned(),
    ]);
    assert_eq!(refused.code, Some(1));
    assert!(refused.stderr.contains("cannot log in to the server under test before fuzzing"), "{}", refused.stderr);
    let typo = common::run_wirebench(&["fuzz".to_owned(), "--keep-goin".to_owned()]);
    assert_eq!(typo.code, Some(1));
    assert!(typo.stderr.contains("--keep-going"), "{}", typo.stderr);
    let no_file = common::run_wirebench(&["fuzz-replay".to_owned()]);
    assert_eq!(no_file.code, Some(1));
    let bad_file = common::run_wirebench(&[
        "fuzz-replay".to_owned(),
        "/etc/hostname".to_owned(),
        "--mysql-host=127.0.0.1".to_owned(),
    ]);
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
            let run = in_background(fuzz_args(server.port, &dir.0, seed, 120)).await;
            assert_eq!(run.code, Some(3), "{bug:?} seed {seed} not found within 120 s:\n{}", run.stdout);
            let text = std::fs::read_to_string(reproducer_path(&run.stdout)).unwrap();
            let found = text.lines().find(|l| l.starts_with("found-after: ")).unwrap_or_default().to_owned();
            println!("{bug:?} seed {seed}: {found}, whole run {:.1} s", run.took.as_secs_f64());
        }
    }
}

/// A server that stays up but answers statements with `DISTINCT` with a
/// Python exception's message (`Bug::InternalError`), and those with
/// `ORDER BY` with a syntax error whose text says "internal error": the
/// first is a finding of kind `internal-error` (exit status 3), found,
/// minimised and replayed without restarting anything; the second never
/// is (ERR 1064 is a bad statement's).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_internal_error_answer_is_found_and_replays() {
    let server = PlantedServer::start(Bug::InternalError).await;
    let dir = ScratchDir::new("fuzz-internal-error");
    let run = in_background(fuzz_args(server.port, &dir.0, 1, 60)).await;
    eprintln!("fuzz took {:.1} s\n{}\n{}", run.took.as_secs_f64(), run.stdout, run.stderr);
    assert_eq!(run.code, Some(3), "the internal error must be found");
    assert!(!run.stderr.contains("restarting the server"), "it stayed up: {}", run.stderr);
    let path = reproducer_path(&run.stdout);
    assert!(path.file_name().unwrap().to_string_lossy().starts_with("failure-internal-error-"));
    let text = std::fs::read_to_string(&path).unwrap();
    eprintln!("{}", text.split("\nsession history").next().unwrap_or_default());
    for line in [
        "\nfailure: internal-error\n",
        "\nreproduces: alone\n",
        "detail: internal error: ERR 1105: TypeError: 'NoneType' object is not subscriptable",
    ] {
        assert!(text.contains(line), "{line:?} missing:\n{text}");
    }
    assert!(!text.contains("ERR 1064: "), "a syntax error is no internal error:\n{text}");
    let failing = text.split("\nsession failing\n").nth(1).unwrap().split("\nend\n").next().unwrap();
    assert!(failing.contains(" -> ERR 1105\n"), "the culprit got the internal error:\n{failing}");

    let again = in_background(replay_args(&path, server.port)).await;
    assert_eq!(again.code, Some(3), "{}\n{}", again.stdout, again.stderr);
    assert!(again.stdout.contains("FAILURE again: the server answered"), "{}", again.stdout);
    let script = emitted_python(&path, server.port).await;
    assert_eq!(script.code, Some(3), "{}\n{}", script.stdout, script.stderr);
    assert!(script.stdout.contains("as the reproducer says"), "{}", script.stdout);
    let healthy = PlantedServer::start(Bug::None).await;
    assert_eq!(in_background(replay_args(&path, healthy.port)).await.code, Some(0));
    assert_eq!(emitted_python(&path, healthy.port).await.code, Some(0));
}

/// A capture file of two sessions (commands in wire form).
fn seed_capture(path: &Path) {
    use std::borrow::Cow;
    use wirebench_capture::format::{
        BlockSettings, CaptureHeader, CaptureWriter, Command, ConnectionOpen, Record, Source,
    };
    let file = std::fs::File::create(path).unwrap();
    let header = CaptureHeader::new(Source::Record, "fuzz_planted.rs");
    let mut writer = CaptureWriter::create(file, &header, BlockSettings::default()).unwrap();
    for conn in [1, 2] {
        writer.append(&Record::Open(ConnectionOpen { at_ns: conn, conn, ..Default::default() })).unwrap();
    }
    let commands: [(u64, &[u8]); 3] = [(1, b"\x03SELECT id FROM t1"), (2, b"\x0e"), (1, b"\x16SELECT ?")];
    for (n, (conn, payload)) in commands.into_iter().enumerate() {
        let command = Command { at_ns: 10 + n as u64, conn, payload: Cow::Borrowed(payload), ..Default::default() };
        writer.append(&Record::Command(command)).unwrap();
    }
    writer.finish().unwrap();
}

/// `--seed-capture`: the corpus starts from a capture's sessions (the
/// banner says how many), and a healthy server stays healthy; a file that
/// is no capture is refused before anything connects.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_capture_seeds_the_corpus() {
    let server = PlantedServer::start(Bug::None).await;
    let dir = ScratchDir::new("fuzz-seed-capture");
    let capture = dir.0.join("traffic.wbcap");
    seed_capture(&capture);
    let mut args = fuzz_args(server.port, &dir.0, 11, 2);
    args.push(format!("--seed-capture={}", capture.display()));
    let run = in_background(args).await;
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    let said = format!("  the corpus starts from 2 sessions (3 commands) of --seed-capture={}\n", capture.display());
    assert!(run.stdout.contains(&said), "{}", run.stdout);
    assert!(run.stdout.contains("    failures:            0\n"), "{}", run.stdout);

    let junk = dir.write("junk.wbcap", "not a capture");
    let mut args = fuzz_args(1, &dir.0, 11, 2);
    args.push(format!("--seed-capture={}", junk.display()));
    let refused = in_background(args).await;
    assert_eq!(refused.code, Some(1), "{}", refused.stderr);
    assert!(refused.stderr.contains(&format!("--seed-capture={}: ", junk.display())), "{}", refused.stderr);
    assert!(refused.stderr.contains("give a capture file"), "{}", refused.stderr);
}
