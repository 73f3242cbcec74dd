//! `wirebench fuzz` against real servers: wirebench's own null server
//! (plain and compressed) and the test MariaDB, which must survive a short
//! run; and `fuzz-replay` of a hand-written reproducer against MariaDB.

mod common;

use std::path::Path;
use std::process::Command;

use common::{ScratchDir, TestServer};
use wirebench::null_server::{NullServer, NullServerConfig};

fn wirebench(args: &[String]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_wirebench")).args(args).output().expect("run wirebench");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

/// A short fuzz run that must find nothing; returns states.txt.
fn survives(mut args: Vec<String>, dir: &Path) -> String {
    args.extend([
        format!("--fuzz-dir={}", dir.display()),
        "--time=4".into(),
        "--threads=4".into(),
        "--rand-seed=5".into(),
    ]);
    let (code, stdout, stderr) = wirebench(&args);
    assert_eq!(code, Some(0), "the server must survive:\n{stdout}\n{stderr}");
    assert!(stdout.contains("    failures:            0\n"), "{stdout}");
    std::fs::read_to_string(dir.join("states.txt")).unwrap()
}

#[test]
fn the_null_server_survives_plain_and_compressed() {
    let config = NullServerConfig { tcp: Some("127.0.0.1:0".parse().unwrap()), cpus: vec![0], ..Default::default() };
    let server = NullServer::start(config).expect("null server");
    let port = server.local_addr().unwrap().port();
    for compression in ["off", "on"] {
        let dir = ScratchDir::new(&format!("fuzz-null-{compression}"));
        let args = strings(&[
            "fuzz",
            "--mysql-host=127.0.0.1",
            &format!("--mysql-port={port}"),
            &format!("--mysql-compression={compression}"),
        ]);
        let states = survives(args, &dir.0);
        for expected in ["login -> OK\n", "COM_STMT_PREPARE -> PREPARE_OK\n", "COM_QUERY -> result set\n"] {
            assert!(states.contains(expected), "{compression}: {expected:?} missing from:\n{states}");
        }
    }
}

#[test]
fn mariadb_survives_a_short_run_and_a_replay() {
    let Some(server) = TestServer::find() else { return };
    let dir = ScratchDir::new("fuzz-mariadb");
    let mut connection = strings(&[
        &format!("--mysql-host={}", server.host),
        &format!("--mysql-port={}", server.port),
        "--mysql-user=sbtest",
        "--mysql-password=sbtest",
        "--mysql-db=sbtest_fuzz",
    ]);
    if let Some(run_dir) = server.socket.as_deref().and_then(Path::parent) {
        // scripts/mariadb.sh keeps the log and pid file beside the socket.
        for (option, file) in [("--server-log", "error.log"), ("--server-pid", "mariadbd.pid")] {
            if run_dir.join(file).exists() {
                connection.push(format!("{option}={}", run_dir.join(file).display()));
            }
        }
    }
    let mut args = strings(&["fuzz"]);
    args.extend(connection.iter().cloned());
    let states = survives(args, &dir.0);
    assert!(
        states.contains("COM_STMT_EXECUTE -> result set\n") || states.contains("COM_STMT_EXECUTE -> OK\n"),
        "{states}"
    );
    assert!(states.contains("COM_QUERY -> ERR 1064\n"), "mutated SQL reaches the parser:\n{states}");

    // A reproducer written by hand: an empty login, which the server
    // refuses (ERR 1043, then it closes), and COM_PING after it.
    let login = "wirebench fuzz reproducer 1\nobserved: nothing\n\nsession failing\npacket login\n";
    let file = dir.write("ping.repro", &format!("{login}  00000001\npacket command\n  01000000 0e\nend\n"));
    let mut replay = vec!["fuzz-replay".to_owned(), file.display().to_string()];
    replay.extend(connection);
    let (code, stdout, stderr) = wirebench(&replay);
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("the server survived"), "{stdout}");
}
