//! A Lua script's states run on loop threads, one per `--cpus` core,
//! each serving several states side by side: `--threads=8` makes at most
//! as many OS threads as cores, and states whose queries each wait 10 ms
//! on the server still run their events concurrently. Against the real
//! MariaDB; skipped without one unless WIREBENCH_REQUIRE_SERVER=1.

use crate::common;

use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::Duration;

use common::TestServer;

fn script() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/lua/loops.lua").display().to_string()
}

fn start(server: &TestServer, cpus: &str, limit: &str, extra: &[&str]) -> Child {
    common::wirebench()
        .arg(script())
        .args(extra)
        .args(server.login_args("sbtest_lua"))
        .args(["--threads=8".to_owned(), limit.to_owned(), "run".to_owned()])
        .args((!cpus.is_empty()).then(|| format!("--cpus={cpus}")))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("wirebench starts")
}

/// The names of the process's threads that run Lua states.
fn lua_threads(pid: u32) -> Vec<String> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).expect("the process's threads are listed");
    tasks
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .map(|name| name.trim_end().to_owned())
        .filter(|name| name.starts_with("wirebench-loop"))
        .collect()
}

/// The report's `total time:`, in seconds.
fn total_time(report: &str) -> f64 {
    let line = report
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("total time:"))
        .unwrap_or_else(|| panic!("no total time in\n{report}"));
    line.trim().trim_end_matches('s').parse().expect("seconds")
}

/// Eight states on `cpus`' loops for 2 s: the Lua threads seen mid-run and
/// the report.
fn run_on(server: &TestServer, cpus: &str) -> (Vec<String>, String) {
    let mut child = start(server, cpus, "--time=2", &[]);
    let watch = common::StdoutWatch::new(&mut child);
    watch.wait_for_line("Threads started!", Duration::from_secs(60));
    let threads = lua_threads(child.id());
    let output = child.wait_with_output().expect("wirebench ends");
    let stdout = watch.rest();
    assert!(output.status.success(), "{}\n{stdout}\n{}", output.status, String::from_utf8_lossy(&output.stderr));
    (threads, stdout)
}

#[test]
fn eight_states_share_one_loop_thread() {
    let Some(server) = TestServer::find() else { return };
    let (threads, report) = run_on(&server, "0");
    // The kernel keeps 15 bytes of a name: "wirebench-loop-0" is "wirebench-loop-".
    assert_eq!(threads.len(), 1, "{threads:?}\n{report}");
    for tid in 0..8 {
        assert!(report.contains(&format!("thread_done {tid} events ")), "state {tid} did not end: {report}");
    }
}

/// 80 events whose queries each wait 50 ms on the server take at least
/// 4 s one after another, whatever the load; eight states side by side on
/// one loop thread take about 0.5 s.
#[test]
fn states_on_one_loop_wait_side_by_side() {
    let Some(server) = TestServer::find() else { return };
    let output = start(&server, "0", "--events=80", &["--wait=0.05"]).wait_with_output().expect("wirebench ends");
    let report = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{}\n{report}\n{}", output.status, String::from_utf8_lossy(&output.stderr));
    assert!(total_time(&report) < 3.0, "the states did not overlap:\n{report}");
}

#[test]
fn two_cores_make_two_loop_threads() {
    let Some(server) = TestServer::find() else { return };
    let allowed = core_affinity::get_core_ids().map_or(0, |ids| ids.len());
    if allowed < 2 {
        common::unavailable(&format!("two cores (this process may run on {allowed})"));
        return;
    }
    let cores: Vec<String> = core_affinity::get_core_ids().unwrap().iter().take(2).map(|c| c.id.to_string()).collect();
    let (threads, report) = run_on(&server, &cores.join(","));
    assert_eq!(threads.len(), 2, "{threads:?}\n{report}");
    for tid in 0..8 {
        assert!(report.contains(&format!("thread_done {tid} events ")), "state {tid} did not end: {report}");
    }
}

/// The events each state ran, from its `thread_done` line.
fn events_per_state(report: &str) -> Vec<u64> {
    (0..8)
        .map(|tid| {
            let prefix = format!("thread_done {tid} events ");
            let line = report.lines().find_map(|l| l.strip_prefix(&prefix));
            line.unwrap_or_else(|| panic!("state {tid} did not end: {report}")).parse().expect("a count")
        })
        .collect()
}

/// Events that never wait for the server never yield on their own: the
/// loop still gives each of its states a turn, as sysbench's threads each
/// get theirs, instead of the first state taking every event.
#[test]
fn states_that_never_wait_take_turns() {
    let Some(server) = TestServer::find() else { return };
    let output = start(&server, "0", "--events=8000", &["--wait=0"]).wait_with_output().expect("wirebench ends");
    let report = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{}\n{report}\n{}", output.status, String::from_utf8_lossy(&output.stderr));
    let events = events_per_state(&report);
    assert_eq!(events.iter().sum::<u64>(), 8000, "{report}");
    assert!(events.iter().all(|&n| n >= 500), "a state got few turns: {events:?}\n{report}");
}

/// `--lua-thread-per-state`: sysbench's thread per state, for scripts that
/// block in Lua; refused beside `--cpus` and with a built-in test.
#[test]
fn thread_per_state_gives_each_state_a_thread() {
    let Some(server) = TestServer::find() else { return };
    let child = start(&server, "0", "--time=2", &["--lua-thread-per-state"]);
    let output = child.wait_with_output().expect("wirebench ends");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "--cpus beside --lua-thread-per-state ran");
    assert!(stderr.contains("--cpus and --lua-thread-per-state go against each other"), "{stderr}");
    let mut args = vec![script(), "--lua-thread-per-state=on".to_owned(), "--threads=8".to_owned()];
    args.push("--time=2".to_owned());
    args.extend(server.login_args("sbtest_lua"));
    args.push("run".to_owned());
    let mut child = common::wirebench().args(&args).stdout(Stdio::piped()).spawn().expect("starts");
    let watch = common::StdoutWatch::new(&mut child);
    watch.wait_for_line("Threads started!", Duration::from_secs(60));
    let threads = lua_threads(child.id());
    let output = child.wait_with_output().expect("wirebench ends");
    assert!(output.status.success(), "{}", watch.rest());
    assert_eq!(threads.len(), 8, "{threads:?}");
    let built_in = common::wirebench()
        .args(["oltp_point_select", "--lua-thread-per-state", "--mysql-dry-run", "--events=1", "run"])
        .output()
        .expect("wirebench runs");
    let stderr = String::from_utf8_lossy(&built_in.stderr);
    assert!(!built_in.status.success() && stderr.contains("applies to Lua scripts only"), "{stderr}");
}

/// `--time` ends a run whose states all wait on queries far longer: the
/// events stop at the end of the time and a grace (1 s), and the report
/// comes, the events under way not counted.
#[test]
fn time_ends_a_run_of_states_stuck_in_queries() {
    let Some(server) = TestServer::find() else { return };
    let started = std::time::Instant::now();
    let output = start(&server, "0", "--time=1", &["--wait=30"]).wait_with_output().expect("wirebench ends");
    let report = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(started.elapsed() < Duration::from_secs(15), "took {:?}\n{report}", started.elapsed());
    assert!(report.contains("total number of events:              0\n"), "{report}");
    for tid in 0..8 {
        assert!(report.contains(&format!("thread_done {tid} events 1\n")), "state {tid} did not end: {report}");
    }
}

/// A query larger than the socket's buffer is written as the socket takes
/// it: the loop watches for room to write while its end is not out, and
/// the server gets it whole (8 states, 8 MiB each, one loop).
#[test]
fn queries_larger_than_the_socket_buffer_go_out_whole() {
    let Some(server) = TestServer::find() else { return };
    // The events end the run: 320 MiB through a loaded machine's server
    // can take a minute, and `--time` (10 s by default) would cut it.
    let big = ["--big=8388608", "--time=300"];
    let output = start(&server, "0", "--events=40", &big).wait_with_output().expect("wirebench ends");
    let report = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{}\n{report}\n{stderr}", output.status);
    assert_eq!(events_per_state(&report).iter().sum::<u64>(), 40, "{report}");
}

/// By default, against a server on this host (the test server), each
/// state gets a loop of its own, as sysbench gives each a thread: shared
/// loops measured slower when the server needs the same cores.
#[test]
fn a_server_on_this_host_gives_each_state_its_loop() {
    let Some(server) = TestServer::find() else { return };
    let (threads, report) = run_on(&server, "");
    assert_eq!(threads.len(), 8, "{threads:?}\n{report}");
}
