//! `--idle-connections` end to end (its tests take turns, `common::serial`): held and counted against the null
//! server under both backends, pinged often enough to outlive its
//! `--wait-timeout` and logged in again when they do not; against MariaDB
//! (a Lua script's run), closed by the server and logged in again; split
//! over `--shard` and merged; and the command line's refusals.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::common::{self, rows, serial, OwnMariaDb, ScratchDir, TestServer};
use serde_json::Value;
use wirebench::null_server::{NullServer, NullServerConfig};
use wirebench::transport::{client_tls, SslMode, TlsOptions};

fn null_server(wait_timeout: Option<Duration>) -> NullServer {
    let config = NullServerConfig {
        tcp: Some(SocketAddr::from(([127, 0, 0, 1], 0))),
        wait_timeout,
        ..NullServerConfig::default()
    };
    NullServer::start(config).unwrap()
}

/// wirebench, logged in to the null server `server`.
fn at_null_server(server: &NullServer) -> Command {
    let mut command = common::wirebench();
    command
        .args(["--mysql-host=127.0.0.1", "--mysql-user=x", "--mysql-db=sbtest", "--table-size=100"])
        .arg(format!("--mysql-port={}", server.local_addr().unwrap().port()));
    command
}

fn run(server: &NullServer, args: &[&str]) -> Output {
    at_null_server(server).args(args).output().expect("wirebench runs")
}

/// Standard output of a run that succeeded.
fn succeeded(out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    stdout
}

/// The final JSON object of a run's output, every line checked against
/// docs/result.schema.json.
fn final_result(stdout: &str) -> Value {
    let schema: Value = serde_json::from_str(include_str!("../../docs/result.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let mut last = None;
    for line in stdout.lines().filter(|l| l.starts_with('{')) {
        let value: Value = serde_json::from_str(line).unwrap();
        let errors: Vec<String> = validator.iter_errors(&value).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{errors:?} in {line}");
        if value["type"] == "final" {
            last = Some(value);
        }
    }
    last.unwrap_or_else(|| panic!("no final result in {stdout}"))
}

fn count(result: &Value, field: &str) -> u64 {
    result["idle_connections"][field].as_u64().unwrap_or_else(|| panic!("no idle_connections.{field} in {result}"))
}

/// The number after `label` on the report's line that starts with it.
fn report_number(report: &str, label: &str) -> u64 {
    let line = report.lines().find(|l| l.trim_start().starts_with(label)).unwrap_or_else(|| panic!("{label}"));
    let value = line.trim_start()[label.len()..].split_whitespace().next().unwrap();
    value.parse().unwrap_or_else(|_| panic!("{line}"))
}

/// Held for the whole run beside the active connections, under each
/// backend: all open at the end, none lost, in the report and the JSON
/// alike; the server saw each log in.
#[test]
fn idle_connections_are_held_and_counted() {
    let _serial = serial();
    for io in ["--io=auto", "--io=epoll"] {
        let server = null_server(None);
        let args = ["oltp_point_select", "--threads=2", "--time=4", "--idle-connections=200", io];
        let out = run(&server, &[&args[..], &["--idle-connect-rate=2000", "--format=json", "run"]].concat());
        let result = final_result(&succeeded(&out));
        assert_eq!(
            [count(&result, "wanted"), count(&result, "open"), count(&result, "lost")],
            [200, 200, 0],
            "{io}: {result}"
        );
        assert_eq!(count(&result, "failed_logins"), 0, "{io}: {result}");
        let report = String::from_utf8_lossy(&out.stderr);
        assert!(report.contains("Idle connections:"), "{report}");
        assert_eq!(report_number(&report, "open:"), 200, "{report}");
        assert!(server.stats().connections >= 202, "{io}: {:?}", server.stats());
        assert!(result["counters"]["transactions"].as_u64().unwrap() > 0, "the active ones ran");
    }
}

/// Pings keep idle connections alive through a server's wait_timeout, and
/// when they are too rare the server closes them: each is counted lost and
/// logged in again.
#[test]
fn a_server_that_closes_idle_connections_gets_them_back() {
    let _serial = serial();
    let server = null_server(Some(Duration::from_secs(3)));
    let args = ["oltp_point_select", "--threads=1", "--time=5", "--idle-connections=40", "--idle-ping-interval=1"];
    let result = final_result(&succeeded(&run(&server, &[&args[..], &["--format=json", "run"]].concat())));
    assert_eq!([count(&result, "open"), count(&result, "lost")], [40, 0], "pinged every second: {result}");
    assert_eq!(server.stats().timed_out, 0, "{:?}", server.stats());

    let server = null_server(Some(Duration::from_secs(1)));
    let args = ["oltp_point_select", "--threads=1", "--time=5", "--idle-connections=40", "--idle-ping-interval=30"];
    let result = final_result(&succeeded(&run(&server, &[&args[..], &["--format=json", "run"]].concat())));
    let (lost, reconnected) = (count(&result, "lost"), count(&result, "reconnected"));
    assert!(lost >= 40, "every one outlived the 1 s wait_timeout at least once: {result}");
    assert!(reconnected >= 40 && reconnected <= lost, "{result}");
    assert_eq!(count(&result, "open"), count(&result, "wanted") - (lost - reconnected), "{result}");
    assert!(server.stats().timed_out >= 40, "{:?}", server.stats());
}

/// Logins are paced: at 20 a second, a 2-second run has logged in about
/// 40 of 100, never all of them.
#[test]
fn logins_are_paced() {
    let _serial = serial();
    let server = null_server(None);
    let args = ["oltp_point_select", "--threads=1", "--time=2", "--idle-connections=100", "--idle-connect-rate=20"];
    let result = final_result(&succeeded(&run(&server, &[&args[..], &["--format=json", "run"]].concat())));
    let open = count(&result, "open");
    assert!((10..=70).contains(&open), "{open} logged in at 20/s in about 2 s: {result}");
    assert_eq!(count(&result, "failed_logins"), 0, "{result}");
}

/// Two shards split the idle connections as they split `--threads`, and
/// merge adds them up.
#[test]
fn shards_split_idle_connections_and_merge_adds_them_up() {
    let _serial = serial();
    let server = null_server(None);
    let start = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs_f64() + 2.0;
    let dir = ScratchDir::new("idle-shards");
    let shards: Vec<(usize, Child)> = (0..2)
        .map(|i| {
            let child = at_null_server(&server)
                .args(["oltp_point_select", "--threads=4", "--time=3", "--idle-connections=101", "--format=json"])
                .arg(format!("--shard={i}/2"))
                .arg(format!("--start-at={start:.3}"))
                .arg("run")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            (i, child)
        })
        .collect();
    let mut files = Vec::new();
    for (i, child) in shards {
        let stdout = succeeded(&child.wait_with_output().unwrap());
        let result = final_result(&stdout);
        let wanted = [51, 50][i];
        assert_eq!([count(&result, "wanted"), count(&result, "open")], [wanted, wanted], "shard {i}: {result}");
        files.push(dir.write(&format!("shard-{i}.json"), &stdout));
    }
    let merged = common::wirebench().arg("merge").arg("--format=json").args(&files).output();
    let merged = final_result(&succeeded(&merged.unwrap()));
    assert_eq!([count(&merged, "wanted"), count(&merged, "open"), count(&merged, "lost")], [101, 101, 0]);
}

/// Bad values are refused with what is expected, before anything connects.
#[test]
fn bad_values_are_refused() {
    let cases = [
        ("--idle-connections=-1", "--idle-connections"),
        ("--idle-connections=many", "--idle-connections"),
        ("--idle-connections=1000001", "from 0 to 1000000"),
        ("--idle-ping-interval=0", "from 1 to 86400"),
        ("--idle-connect-rate=0", "from 1 to 1000000"),
    ];
    for (option, expected) in cases {
        let out = common::wirebench()
            .args(["oltp_point_select", "--mysql-host=127.0.0.1", "--mysql-port=9", option, "run"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{option} accepted");
        assert!(stderr.contains(expected), "{option}: {stderr}");
        assert!(!stderr.contains("Can't connect"), "{option} refused only once connecting: {stderr}");
    }
    let out = common::wirebench()
        .args(["oltp_point_select", "--mysql-dry-run", "--time=1", "--idle-connections=5", "run"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains("--mysql-dry-run connects to none"), "{stderr}");
}

/// A script whose events need no table: `SELECT 1` on its connection.
const SELECT_ONE: &str = r#"
function thread_init()
  drv = sysbench.sql.driver()
  con = drv:connect()
end
function event()
  con:query("SELECT 1")
end
function thread_done()
  con:disconnect()
end
"#;

/// Against MariaDB, a Lua script's run: the idle connections log in, and
/// when the server closes them (a KILL here, as its wait_timeout would,
/// without touching the shared server's settings) they are logged in
/// again and counted.
#[test]
fn mariadb_idle_connections_killed_are_logged_in_again() {
    let Some(server) = TestServer::find() else { return };
    let _serial = serial();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mut admin = runtime.block_on(wirebench::client::Connection::connect(&server.options(server.tcp()))).unwrap();
    // The sessions of `pid`'s sockets: the server names each by its
    // client's address, whose port only that socket has. Idle ones have
    // slept since their login (they select the run's database, as the
    // active ones do, which never sleep a second; the run samples no
    // server stats, whose connection would sleep too).
    let sleeping = "SELECT id, host FROM information_schema.processlist WHERE user = 'sbtest' AND db = 'sbtest' \
                    AND command = 'Sleep' AND time >= 1";
    let ids_of = |admin: &mut wirebench::client::Connection, pid: u32| -> HashSet<String> {
        let ports = local_ports(pid);
        let response = runtime.block_on(admin.query(sleeping)).unwrap();
        let port = |host: &str| host.rsplit(':').next().and_then(|p| p.parse::<u16>().ok());
        rows(&response)
            .into_iter()
            .filter_map(|row| match &row[..] {
                [Some(id), Some(host)] if port(host).is_some_and(|p| ports.contains(&p)) => Some(id.clone()),
                _ => None,
            })
            .collect()
    };
    let dir = ScratchDir::new("idle-mariadb");
    let script = dir.write("select_one.lua", SELECT_ONE);
    let child = common::wirebench()
        .arg(&script)
        .args(server.login_args("sbtest"))
        .args(["--threads=2", "--time=10", "--idle-connections=20", "--idle-ping-interval=60", "--format=json"])
        .args(["--server-stats=off", "run"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Ours: the child's sessions asleep, once all 20 are in.
    let mut ours: Vec<String> = Vec::new();
    common::wait_until("the 20 idle sessions on the server", Duration::from_secs(20), || {
        ours = ids_of(&mut admin, child.id()).into_iter().collect();
        ours.len() >= 20
    });
    for id in ours.iter().take(20) {
        runtime.block_on(admin.query_drop(&format!("KILL CONNECTION {id}"))).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let result = final_result(&succeeded(&out));
    assert_eq!(count(&result, "wanted"), 20, "{result}");
    assert!(count(&result, "lost") >= 20 && count(&result, "reconnected") >= 20, "{result}");
    assert_eq!(count(&result, "open"), 20, "all back by the end: {result}");
    assert_eq!(count(&result, "failed_logins"), 0, "{result}");
}

/// The local TCP ports of process `pid`'s sockets: its descriptors'
/// socket inodes, looked up in the kernel's TCP tables.
fn local_ports(pid: u32) -> HashSet<u16> {
    let inodes: HashSet<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|fds| fds.flatten().filter_map(|fd| std::fs::read_link(fd.path()).ok()).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .filter_map(|link| {
            let link = link.to_string_lossy().into_owned();
            Some(link.strip_prefix("socket:[")?.strip_suffix(']')?.to_owned())
        })
        .collect();
    let mut ports = HashSet::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let text = std::fs::read_to_string(table).unwrap_or_default();
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (Some(local), Some(inode)) = (fields.get(1), fields.get(9)) else { continue };
            let port = local.rsplit(':').next().and_then(|hex| u16::from_str_radix(hex, 16).ok());
            if let (Some(port), true) = (port, inodes.contains(*inode)) {
                ports.insert(port);
            }
        }
    }
    ports
}

/// Over TLS and into a database, as the active connections log in: the
/// user REQUIREs SSL (a login in clear would be refused), and each idle
/// session sits in the run's database; pings go through TLS.
#[test]
fn mariadb_idle_connections_log_in_over_tls_into_the_database() {
    let Some(server) = TestServer::find() else { return };
    let Some(tls_dir) = crate::common::tls_dir() else { return };
    let _serial = serial();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    // The user's own sessions are what it may see of the process list.
    let mut watcher = server.options(server.tcp());
    watcher.user = "sbtest_tls".into();
    let required = TlsOptions { mode: SslMode::Required, ..TlsOptions::default() };
    watcher.tls = client_tls(&required, &tls_dir).unwrap().tls;
    let mut admin = runtime.block_on(wirebench::client::Connection::connect(&watcher)).unwrap();
    let dir = ScratchDir::new("idle-tls");
    let script = dir.write("select_one.lua", SELECT_ONE);
    let child = common::wirebench()
        .arg(&script)
        .args([&format!("--mysql-host={}", server.host), &format!("--mysql-port={}", server.port)])
        .args(["--mysql-user=sbtest_tls", "--mysql-password=sbtest", "--mysql-db=sbtest_tls", "--mysql-ssl=REQUIRED"])
        .args(["--threads=1", "--time=4", "--idle-connections=10", "--idle-ping-interval=1", "--format=json"])
        .args(["--server-stats=off", "run"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Ten idle sessions and the script's own, all of sbtest_tls in its
    // database, seen while the run holds them.
    let in_database =
        "SELECT COUNT(*) FROM information_schema.processlist WHERE user = 'sbtest_tls' AND db = 'sbtest_tls' \
                       AND id <> CONNECTION_ID()";
    let mut seen = 0;
    common::wait_until("11 sessions of sbtest_tls in its database", Duration::from_secs(20), || {
        let response = runtime.block_on(admin.query(in_database)).unwrap();
        seen = rows(&response)[0][0].as_deref().and_then(|n| n.parse().ok()).unwrap_or(0);
        seen >= 11
    });
    let out = child.wait_with_output().unwrap();
    let result = final_result(&succeeded(&out));
    assert_eq!([count(&result, "wanted"), count(&result, "open")], [10, 10], "{result}");
    assert_eq!([count(&result, "lost"), count(&result, "failed_logins")], [0, 0], "pinged over TLS: {result}");
    assert!(seen >= 11, "{seen} sessions of sbtest_tls in its database");
}

/// A server at its max_connections refuses the logins beyond it with ERR
/// 1040 before its greeting, then closes: the report shows the server's
/// error, not the close, and what to do. Against a MariaDB of the test's
/// own, started with max_connections=10 (the fewest MariaDB takes).
#[test]
fn idle_logins_refused_at_max_connections_show_the_servers_error() {
    let Some(server) = OwnMariaDb::start("max-connections", "--max-connections=10") else { return };
    let dir = ScratchDir::new("idle-max-connections");
    let script = dir.write("select_one.lua", SELECT_ONE);
    let out = common::wirebench()
        .arg(&script)
        .args(server.login_args("sbtest"))
        .args(["--threads=1", "--time=3", "--idle-connections=20", "--server-stats=off", "run"])
        .output()
        .unwrap();
    let report = succeeded(&out);
    let open = report_number(&report, "open:");
    assert!((1..=9).contains(&open), "the script's connection and at most 9 idle ones fit: {report}");
    assert!(report_number(&report, "failed logins:") >= 11, "{report}");
    let why = report.lines().find(|l| l.contains("last failed login:")).unwrap_or_else(|| panic!("{report}"));
    assert!(why.contains("ERROR 1040") && why.contains("Too many connections"), "{why}");
    assert!(why.contains("max_connections is reached"), "what to do: {why}");
    assert!(!why.contains("closed the connection"), "{why}");
}
