//! wirebench against MySQL-protocol servers that no one here wrote, each
//! with the deviation libmariadb tolerates and wirebench once refused
//! (issue 33): a server on node-mysql2's server API (its answers' sequence
//! ids continue its own counter) and one on msql-srv (its greeting offers
//! neither CLIENT_SECURE_CONNECTION nor CONNECT_WITH_DB, TRANSACTIONS,
//! PLUGIN_AUTH or DEPRECATE_EOF). Both answer sysbench's point select;
//! their sources are in tests/servers/. oltp_point_select
//! --db-ps-mode=disable must run against both with sysbench 1.0.20's counts.
//!
//! scripts/test.sh installs node-mysql2 (`npm ci`) and builds the msql-srv
//! server; without them (or node, or cargo) each test says why and skips,
//! unless WIREBENCH_REQUIRE_SERVER=1, as in CI, where that fails it.

use crate::common::{self, Ran};

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// A test server's process, killed when dropped.
struct ServerProcess {
    child: Child,
    port: u16,
}

impl ServerProcess {
    /// Starts `command` (which listens on a free port of 127.0.0.1 and
    /// prints `listening PORT` first) and waits for that line.
    fn start(mut command: Command) -> ServerProcess {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {command:?}: {e}"));
        let stdout = child.stdout.take().expect("piped stdout");
        let mut stdout = BufReader::new(stdout);
        let mut line = String::new();
        stdout.read_line(&mut line).expect("the server's first line");
        let port = line.trim().strip_prefix("listening ").and_then(|p| p.parse().ok());
        let Some(port) = port else {
            let _ = child.kill();
            panic!("{command:?} did not say where it listens: {line:?}");
        };
        // The rest is read and dropped: node-mysql2 logs each unknown
        // command there, and a full pipe (or a closed one) would stall or
        // kill the server under the fuzzer.
        std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
        ServerProcess { child, port }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Skips the test (or, with WIREBENCH_REQUIRE_SERVER=1, fails it) for lack of `what`.
fn missing(what: &str) -> Option<ServerProcess> {
    common::unavailable(&format!("{what}; scripts/test.sh installs it"));
    None
}

/// The node-mysql2 server, when node and its node_modules are there.
fn node_mysql2_server() -> Option<ServerProcess> {
    let dir = Path::new(REPO).join("tests/servers/node_mysql2");
    if !dir.join("node_modules/mysql2/package.json").exists() {
        return missing(&format!("no node-mysql2 in {} (npm ci --prefix {})", dir.display(), dir.display()));
    }
    if !Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success()) {
        return missing("no node on PATH");
    }
    let mut command = Command::new("node");
    command.arg(dir.join("server.js")).arg("0");
    Some(ServerProcess::start(command))
}

/// The msql-srv server, built by cargo on its own (not a workspace member)
/// into target/interop-servers; a no-op once scripts/test.sh built it.
fn msql_srv_server() -> Option<ServerProcess> {
    let manifest = Path::new(REPO).join("tests/servers/msql_srv/Cargo.toml");
    let target = Path::new(REPO).join("target/interop-servers");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let built = Command::new(cargo)
        .args(["build", "--quiet", "--locked", "--manifest-path"])
        .arg(&manifest)
        .arg("--target-dir")
        .arg(&target)
        .env_remove("CARGO_TARGET_DIR")
        .status();
    if !built.is_ok_and(|s| s.success()) {
        return missing(&format!(
            "the msql-srv test server does not build (cargo build --manifest-path {})",
            manifest.display()
        ));
    }
    let binary: PathBuf = target.join("debug/wirebench-test-server-msql-srv");
    let mut command = Command::new(binary);
    command.arg("0");
    Some(ServerProcess::start(command))
}

fn point_select_args(port: u16, threads: u32, limit: &str) -> Vec<String> {
    [
        "oltp_point_select",
        "--mysql-host=127.0.0.1",
        &format!("--mysql-port={port}"),
        "--mysql-user=sbtest",
        "--mysql-password=sbtest",
        "--mysql-db=sbtest",
        "--db-ps-mode=disable",
        &format!("--threads={threads}"),
        limit,
        "run",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn run(program: impl AsRef<std::ffi::OsStr>, args: &[String]) -> Ran {
    common::run(Command::new(program).args(args))
}

/// The report's "queries performed" lines (read, write, other, total) and
/// the transactions' count.
fn counts(report: &str) -> Vec<String> {
    let wanted = ["read:", "write:", "other:", "total:", "transactions:"];
    report
        .lines()
        .map(str::trim)
        .filter(|line| wanted.iter().any(|w| line.starts_with(w)))
        .map(|line| line.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
        .collect()
}

/// --events=N against the server: wirebench's counts are exact, say the
/// deviations once, report them; sysbench's counts are the same.
fn exact_counts_beside_sysbench(server: &ServerProcess, warnings: &[&str], report_lines: &[&str]) {
    let args = point_select_args(server.port, 4, "--events=400");
    let ran = common::run_wirebench(&[args.clone(), vec!["--time=0".into()]].concat());
    assert_eq!(ran.code, Some(0), "{}\n{}", ran.stdout, ran.stderr);
    let ours = counts(&ran.stdout);
    assert_eq!(ours, ["read: 400", "write: 0", "other: 0", "total: 400", "transactions: 400"], "{}", ran.stdout);
    for warning in warnings {
        assert_eq!(ran.stderr.matches(warning).count(), 1, "said once: {warning:?} in:\n{}", ran.stderr);
    }
    assert!(ran.stdout.contains("Server deviations tolerated (as libmariadb tolerates them):"), "{}", ran.stdout);
    for line in report_lines {
        assert!(ran.stdout.contains(line), "{line:?} missing from:\n{}", ran.stdout);
    }
    let Some(sysbench) = common::sysbench() else { return };
    let theirs = run(sysbench, &[args, vec!["--time=0".into()]].concat());
    assert_eq!(theirs.code, Some(0), "sysbench: {}\n{}", theirs.stdout, theirs.stderr);
    assert_eq!(counts(&theirs.stdout), ours, "sysbench:\n{}", theirs.stdout);
}

/// --time=2: a timed run ends on time, every query answered, none ignored;
/// the JSON result names the deviations.
fn timed_run(server: &ServerProcess, tolerated: &[&str]) {
    let mut args = point_select_args(server.port, 2, "--time=2");
    args.insert(args.len() - 1, "--format=json".into());
    let ran = common::run_wirebench(&args);
    assert_eq!(ran.code, Some(0), "{}\n{}", ran.stdout, ran.stderr);
    let final_line = ran.stdout.lines().find(|l| l.contains("\"type\":\"final\"")).expect("a final result");
    let result: serde_json::Value = serde_json::from_str(final_line).unwrap();
    let counters = &result["counters"];
    let reads = counters["reads"].as_u64().unwrap();
    assert!(reads > 10, "{final_line}");
    assert_eq!(counters["transactions"].as_u64(), Some(reads), "{final_line}");
    assert_eq!(counters["ignored_errors"].as_u64(), Some(0), "{final_line}");
    for kind in tolerated {
        assert!(result["tolerated"][kind].as_u64().is_some_and(|n| n > 0), "{kind} in {}", result["tolerated"]);
    }
}

/// 30 s of `wirebench fuzz` (2 connections), then 5 s of `--pre-auth`:
/// the server stays up and
/// answers, so no finding (down, hang, protocol deviation) may come of it:
/// exit status 0, a summary of none, no reproducer. The control check
/// once left half an answer on its connection when cut short and took
/// the server for deviating.
fn fuzz_finds_nothing(server: &ServerProcess, name: &str) {
    fuzz_finds_nothing_with(server, name, &["--time=30"]);
    // What comes before the login's answer: their logins accept anyone,
    // so only --pre-auth fuzzes it.
    let ran = fuzz_finds_nothing_with(server, &format!("{name}-pre-auth"), &["--time=5", "--pre-auth"]);
    assert!(ran.stderr.contains("(pre-auth mode, --pre-auth)"), "{}", ran.stderr);
}

fn fuzz_finds_nothing_with(server: &ServerProcess, name: &str, extra: &[&str]) -> Ran {
    let dir = common::ScratchDir::new(&format!("interop-fuzz-{name}"));
    let mut args: Vec<String> = [
        "fuzz",
        "--mysql-host=127.0.0.1",
        &format!("--mysql-port={}", server.port),
        "--mysql-user=sbtest",
        "--mysql-password=sbtest",
        "--mysql-db=sbtest",
        "--threads=2",
        &format!("--fuzz-dir={}", dir.0.display()),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    let ran = common::run_wirebench(&args);
    let output = format!("{}\n{}", ran.stdout, ran.stderr);
    assert_eq!(ran.code, Some(0), "{output}");
    assert!(output.contains("failures:            0"), "{output}");
    assert!(!output.contains("FAILURE"), "{output}");
    let reproducers = std::fs::read_dir(&dir.0)
        .map(|entries| entries.flatten().filter(|e| e.path().extension().is_some_and(|x| x == "repro")).count());
    assert_eq!(reproducers.unwrap_or(0), 0, "{output}");
    ran
}

#[test]
fn fuzzing_node_mysql2_for_30_s_finds_nothing() {
    let Some(server) = node_mysql2_server() else { return };
    fuzz_finds_nothing(&server, "node-mysql2");
}

#[test]
fn fuzzing_msql_srv_for_30_s_finds_nothing() {
    let Some(server) = msql_srv_server() else { return };
    fuzz_finds_nothing(&server, "msql-srv");
}

#[test]
fn node_mysql2_numbering_its_answers_from_its_own_counter() {
    let Some(server) = node_mysql2_server() else { return };
    // The issue's failure was at the first answer; now every answer is
    // renumbered once (its first packet), and counted so.
    exact_counts_beside_sysbench(
        &server,
        &["the server numbers its packets from its own counter"],
        &["sequence_renumbered:", "packets"],
    );
    timed_run(&server, &["sequence_renumbered"]);
}

#[test]
fn msql_srv_greeting_without_secure_connection_or_connect_with_db() {
    let Some(server) = msql_srv_server() else { return };
    exact_counts_beside_sysbench(
        &server,
        &[
            "does not offer CLIENT_SECURE_CONNECTION but carries a 4.1 scramble",
            "the database is selected with COM_INIT_DB after the login",
        ],
        &[
            "no_secure_connection:                          4 logins",
            "no_connect_with_db:                          4 logins",
        ],
    );
    timed_run(&server, &["no_secure_connection", "no_connect_with_db", "no_plugin_auth"]);
}

/// msql-srv's greeting lacks CONNECT_WITH_DB, so the database is selected
/// with COM_INIT_DB after the login; a database the server lacks ends the
/// run at once with an error naming it and saying what to do.
#[test]
fn msql_srv_refusing_the_database_after_the_login() {
    let Some(server) = msql_srv_server() else { return };
    let mut args = point_select_args(server.port, 1, "--time=5");
    args.retain(|a| a != "--mysql-db=sbtest");
    args.insert(1, "--mysql-db=sbtest_missing".into());
    let ran = common::run_wirebench(&args);
    assert_eq!(ran.code, Some(1), "{}\n{}", ran.stdout, ran.stderr);
    for part in [
        "selected with COM_INIT_DB",
        "refused database 'sbtest_missing'",
        "ERROR 1049 (42000): Unknown database 'sbtest_missing'",
        "create that database on the server, or name one it has; check --mysql-db",
    ] {
        assert!(ran.stderr.contains(part), "{part:?} missing from:\n{}", ran.stderr);
    }
}

/// A Lua script's point selects, with and without its own final report
/// (`sysbench.hooks.report_cumulative`).
const LUA_POINT_SELECT: &str = r#"
function thread_init()
  drv = sysbench.sql.driver()
  con = drv:connect()
end
function event()
  con:query("SELECT c FROM sbtest1 WHERE id=" .. sysbench.rand.uniform(1, 1000))
end
function thread_done()
  con:disconnect()
end
"#;

const LUA_REPORT_HOOK: &str = r#"
sysbench.hooks.report_cumulative = function(stat)
  print("the script's own report: " .. stat.events .. " events")
end
"#;

/// A Lua script against the node-mysql2 server: its final report carries
/// the tolerated block as the built-in tests' does, and so does a script
/// that replaces the report with its own hook.
#[test]
fn a_lua_script_reports_what_was_tolerated() {
    let Some(server) = node_mysql2_server() else { return };
    let dir = common::ScratchDir::new("interop-lua");
    for (name, hook) in [("plain.lua", ""), ("hooked.lua", LUA_REPORT_HOOK)] {
        let script = dir.write(name, &format!("{LUA_POINT_SELECT}{hook}"));
        let mut args = point_select_args(server.port, 2, "--events=200");
        args[0] = script.display().to_string();
        args.insert(1, "--time=0".into());
        let ran = common::run_wirebench(&args);
        assert_eq!(ran.code, Some(0), "{name}: {}\n{}", ran.stdout, ran.stderr);
        assert!(ran.stdout.contains("Server deviations tolerated (as libmariadb tolerates them):"), "{}", ran.stdout);
        let renumbered = ran.stdout.lines().find_map(|l| l.trim().strip_prefix("sequence_renumbered:"));
        let packets = renumbered.and_then(|rest| rest.split_whitespace().next()?.parse::<u64>().ok());
        assert!(packets.is_some_and(|n| n >= 200), "{name}: one per answer at least:\n{}", ran.stdout);
        assert_eq!(
            ran.stderr.matches("the server numbers its packets from its own counter").count(),
            1,
            "{name}: said once:\n{}",
            ran.stderr
        );
        if !hook.is_empty() {
            assert!(ran.stdout.contains("the script's own report: 200 events"), "{}", ran.stdout);
            assert!(!ran.stdout.contains("SQL statistics:"), "the hook replaces the report:\n{}", ran.stdout);
        }
    }
}
