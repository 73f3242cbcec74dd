//! `wirebench fuzz` against wirebench's own null server (plain and
//! compressed), which must survive a short run; `fuzz-replay` of a
//! reproducer written by hand against the test MariaDB.

use crate::common;

use std::path::Path;

use common::{Ran, ScratchDir, TestServer};
use wirebench::null_server::{NullServer, NullServerConfig};
use wirebench_protocol::command::{encode_ping, encode_query};
use wirebench_protocol::handshake::HandshakeResponse41;
use wirebench_protocol::Capabilities;

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
    let Ran { code, stdout, stderr, .. } = common::run_wirebench(&args);
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

/// The test MariaDB is not fuzzed here: MariaDB 10.11.19 crashes on a
/// sequence the fuzzer finds within seconds to minutes (a string parameter
/// given empty COM_STMT_SEND_LONG_DATA, compared in BETWEEN or GROUP BY),
/// and a crash would take the server away from the other tests. A replay
/// of a well-formed session shows the replay logs in with the scramble
/// recomputed for the new nonce, and that a surviving server exits 0.
#[test]
fn a_replayed_session_logs_in_to_mariadb_and_the_server_survives() {
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
    let file = dir.write("select.repro", &well_formed_reproducer());
    let mut replay = vec!["fuzz-replay".to_owned(), file.display().to_string()];
    replay.extend(connection);
    let Ran { code, stdout, stderr, .. } = common::run_wirebench(&replay);
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    for line in ["  login -> OK", "  COM_PING -> OK", "  COM_QUERY -> result set", "the server survived"] {
        assert!(stdout.contains(line), "{line:?} missing:\n{stdout}");
    }
}

/// Pre-auth fuzzing of the test MariaDB with a wrong password: the login
/// is refused with ERR 1045, which is the expected answer and no finding;
/// the run fuzzes what comes before it (5 s) and finds nothing. No
/// command runs, so MariaDB 10.11.19's crash (above) is out of reach.
#[test]
fn a_wrong_password_fuzzes_mariadb_before_the_login_and_finds_nothing() {
    let Some(server) = TestServer::find() else { return };
    let dir = ScratchDir::new("fuzz-mariadb-pre-auth");
    let args = strings(&[
        "fuzz",
        &format!("--mysql-host={}", server.host),
        &format!("--mysql-port={}", server.port),
        "--mysql-user=sbtest",
        "--mysql-password=not-the-password",
        "--mysql-db=sbtest_fuzz",
        "--rand-seed=3",
        "--threads=4",
        "--time=5",
        &format!("--fuzz-dir={}", dir.0.display()),
    ]);
    let Ran { code, stdout, stderr, .. } = common::run_wirebench(&args);
    assert_eq!(code, Some(0), "ERR 1045 is no finding:\n{stdout}\n{stderr}");
    assert!(stderr.contains("(pre-auth mode): the server refuses the login ("), "{stderr}");
    assert!(stderr.contains("keep getting ERR 1045"), "{stderr}");
    assert!(stdout.contains("    failures:            0\n"), "{stdout}");
    let states = std::fs::read_to_string(dir.0.join("states.txt")).unwrap();
    for state in ["login -> ERR 1045\n", "login -> AuthSwitchRequest\n", "auth reply -> ERR 1045\n"] {
        assert!(states.contains(state), "{state:?} missing:\n{states}");
    }
}

/// A reproducer written with the protocol crate: a login whose scramble
/// (20 zero bytes here) the replay recomputes, COM_PING, SELECT 1.
fn well_formed_reproducer() -> String {
    let caps = Capabilities::PROTOCOL_41
        | Capabilities::SECURE_CONNECTION
        | Capabilities::PLUGIN_AUTH
        | Capabilities::PLUGIN_AUTH_LENENC_CLIENT_DATA
        | Capabilities::CONNECT_WITH_DB
        | Capabilities::TRANSACTIONS;
    let login = HandshakeResponse41 {
        capabilities: caps,
        max_packet_size: 1 << 24,
        charset: 45,
        user: b"sbtest",
        auth_response: &[0; 20],
        database: Some(b"sbtest_fuzz"),
        auth_plugin_name: b"mysql_native_password",
        connect_attrs: &[],
    };
    let mut packet = Vec::new();
    login.encode(&mut packet, 1).unwrap();
    // Header, 32 bytes of capabilities to filler, "sbtest\0", the length.
    let scramble_at = 4 + 32 + 7 + 1;
    assert_eq!(packet[scramble_at - 1], 20);
    let mut ping = Vec::new();
    encode_ping(&mut ping);
    let mut select = Vec::new();
    encode_query(&mut select, b"SELECT 1");
    let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
    format!(
        "wirebench fuzz reproducer 1\nobserved: nothing\n\nsession failing\n\
         packet login live=scramble:mysql_native_password@{scramble_at}+20\n  {}\n\
         packet command\n  {}\npacket command\n  {}\nend\n",
        hex(&packet),
        hex(&ping),
        hex(&select)
    )
}
