//! The capacity search (`search`) end to end: against the null server with
//! `--serial` (one command at a time, each taking the delay: a capacity of
//! exactly 1/delay), fixed arrivals find that capacity and Poisson arrivals
//! a rate below it that holds the bound; a client held to one loop on a
//! busy core is reported client-bound, not as the server's capacity; a
//! search on the test MariaDB completes and its JSON keeps to the schema;
//! and the command lines a search refuses.
//!
//! The service time is 4 ms (250/s), so that the client, a few percent
//! busy, is never the limit even on a loaded 2-core machine; the bounds
//! are generous beside it (a rate past capacity sends the latency to
//! hundreds of ms within a step).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use wirebench::null_server::{NullServer, NullServerConfig};

use crate::{common, light_on_the_cores, the_cores_to_itself};
use common::Ran;

pub(crate) const CAPACITY: f64 = 250.0;

/// The null server serving one command at a time, each for 4 ms.
pub(crate) fn serial_server() -> NullServer {
    let config = NullServerConfig {
        tcp: Some(SocketAddr::from(([127, 0, 0, 1], 0))),
        answer_delay: Duration::from_micros((1e6 / CAPACITY) as u64),
        serial: true,
        ..NullServerConfig::default()
    };
    NullServer::start(config).unwrap()
}

pub(crate) fn null_args(server: &NullServer, args: &[&str]) -> Vec<String> {
    let port = server.local_addr().unwrap().port();
    let login = ["--mysql-host=127.0.0.1".to_owned(), "--mysql-user=x".to_owned(), format!("--mysql-port={port}")];
    login.into_iter().chain(args.iter().map(|a| (*a).to_owned())).collect()
}

/// Short steps: a search here takes under a minute.
const SHORT_STEPS: [&str; 5] =
    ["--search-warmup=1", "--search-time=3", "--search-pause=0", "--search-confirm-time=4", "--format=json"];

/// The JSON lines of `stdout`, each checked against docs/result.schema.json.
pub(crate) fn json_lines(stdout: &str) -> Vec<Value> {
    let schema: Value = serde_json::from_str(include_str!("../../docs/result.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let lines: Vec<Value> =
        stdout.lines().filter(|l| l.starts_with('{')).map(|l| serde_json::from_str(l).unwrap()).collect();
    for line in &lines {
        let errors: Vec<String> = validator.iter_errors(line).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{errors:?} in {line}");
    }
    lines
}

/// The search's summary line, after one line per step.
fn summary(out: &Ran) -> Value {
    let stdout = &out.stdout;
    let lines = json_lines(stdout);
    let steps = lines.iter().filter(|l| l["type"] == "search_step").count();
    let summary = lines.iter().find(|l| l["type"] == "search").unwrap_or_else(|| {
        panic!("no search line in\n{stdout}\n{}", &out.stderr);
    });
    assert_eq!(summary["steps"].as_array().unwrap().len(), steps, "a line per step: {stdout}");
    summary.clone()
}

fn succeeded(out: &Ran) -> Value {
    assert!(out.succeeded(), "{}\n{}", &out.stdout, &out.stderr);
    summary(out)
}

/// The confirming step at the rate found: its p99.
fn confirmed_p99(summary: &Value) -> f64 {
    let rate = summary["max_rate"].as_u64().unwrap();
    let confirm = summary["steps"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|s| s["phase"] == "confirm" && s["target_tps"].as_u64() == Some(rate))
        .unwrap_or_else(|| panic!("no confirming step at {rate}/s: {summary}"));
    assert_eq!(confirm["verdict"], "pass");
    confirm["latency_ms"][0]["ms"].as_f64().unwrap()
}

#[test]
fn fixed_arrivals_find_the_servers_capacity() {
    let _light = light_on_the_cores();
    let server = serial_server();
    let mut args = vec!["oltp_point_select", "--threads=8", "--rate-arrival=fixed", "--slo=99:50"];
    args.extend(SHORT_STEPS);
    args.extend(["--chart=/dev/null", "search"]);
    let out = common::run_wirebench(&null_args(&server, &args));
    let summary = succeeded(&out);
    assert_eq!(summary["end"], "found", "{summary}");
    let found = summary["max_rate"].as_f64().unwrap();
    assert!((found - CAPACITY).abs() <= 0.05 * CAPACITY, "found {found}/s, capacity {CAPACITY}/s: {summary}");
    assert!(confirmed_p99(&summary) <= 50.0);
    let probe = &summary["steps"][0];
    assert_eq!(probe["phase"], "probe");
    assert!(probe["client"]["busy_share"].as_f64().unwrap() < 0.5, "the client was not the limit: {probe}");
    compared_with_itself(&out.stdout, found);
}

/// The same server with the client's loop sharing its core with a
/// spinning thread: the client works harder for each event, but the
/// server is the limit, and no step says the client was.
#[test]
fn a_loaded_client_still_finds_the_servers_capacity() {
    let _alone = the_cores_to_itself();
    let server = serial_server();
    let _busy = BusyCore::with(0, 1);
    let mut args = vec!["oltp_point_select", "--threads=8", "--cpus=0", "--rate-arrival=fixed", "--slo=99:50"];
    args.extend(SHORT_STEPS);
    args.push("search");
    let summary = succeeded(&common::run_wirebench(&null_args(&server, &args)));
    assert_eq!(summary["end"], "found", "{summary}");
    let found = summary["max_rate"].as_f64().unwrap();
    assert!((found - CAPACITY).abs() <= 0.05 * CAPACITY, "found {found}/s, capacity {CAPACITY}/s: {summary}");
    for step in summary["steps"].as_array().unwrap() {
        assert_ne!(step["verdict"], "client_bound", "{step}");
        assert!(step.get("near_client_limit").is_none(), "{step}");
    }
}

/// `wirebench compare` puts two searches side by side, and charts them.
fn compared_with_itself(stdout: &str, found: f64) {
    let dir = common::ScratchDir::new("search-compare");
    let (a, b) = (dir.write("a.json", stdout), dir.write("b.json", ""));
    std::fs::copy(&a, &b).unwrap();
    let chart = dir.write("searches.svg", "");
    let line = ["compare".to_owned(), format!("--chart={}", chart.display()), a.display().to_string()];
    let out = common::run_wirebench(&[&line[..], &[b.display().to_string()]].concat());
    let table = &out.stdout;
    assert!(out.succeeded(), "{table}{}", &out.stderr);
    assert!(table.starts_with("Capacity search: the highest rate that held the bounds"), "{table}");
    let row = table.lines().find(|l| l.contains("(b)")).unwrap_or_else(|| panic!("{table}"));
    assert!(row.contains(&format!(" {found} ")) && row.contains("+0.0%") && row.contains("found"), "{table}");
    let svg = std::fs::read_to_string(&chart).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("p99 bound, 50 ms"), "{}", &svg[..svg.len().min(300)]);
}

#[test]
fn poisson_arrivals_find_a_rate_below_capacity_that_holds_the_bound() {
    let _light = light_on_the_cores();
    let server = serial_server();
    let mut args = vec!["oltp_point_select", "--threads=8", "--rate-arrival=poisson", "--slo=99:100"];
    args.extend(SHORT_STEPS);
    args.push("search");
    let summary = succeeded(&common::run_wirebench(&null_args(&server, &args)));
    assert_eq!(summary["end"], "found", "{summary}");
    let found = summary["max_rate"].as_f64().unwrap();
    // Random arrivals queue behind each other well before the server is
    // saturated: the rate that holds p99 is below its capacity, and far
    // from nothing.
    assert!(found < CAPACITY && found > 0.4 * CAPACITY, "found {found}/s: {summary}");
    assert!(confirmed_p99(&summary) <= 100.0);
}

/// Threads that spin on the client's core: the loop gets an eighth of it
/// at most, and waits for it most of the time.
const SPINNERS: usize = 7;

/// Keeps `cpu` busy until dropped: tasks as eager for the core as the
/// client's loop.
struct BusyCore {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl BusyCore {
    fn on(cpu: usize) -> BusyCore {
        Self::with(cpu, SPINNERS)
    }

    fn with(cpu: usize, spinners: usize) -> BusyCore {
        let stop = Arc::new(AtomicBool::new(false));
        let threads = (0..spinners)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    core_affinity::set_for_current(core_affinity::CoreId { id: cpu });
                    while !stop.load(Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                })
            })
            .collect();
        BusyCore { stop, threads }
    }
}

impl Drop for BusyCore {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

/// One loop on a core seven spinning threads also want, against a server
/// that answers at once: the client is the limit, and the search says so
/// instead of reporting the client's rate as the server's capacity.
#[test]
fn a_client_on_a_busy_core_is_reported_client_bound() {
    let _alone = the_cores_to_itself();
    let config = NullServerConfig {
        tcp: Some(SocketAddr::from(([127, 0, 0, 1], 0))),
        cpus: vec![1],
        ..NullServerConfig::default()
    };
    let server = NullServer::start(config).unwrap();
    let _busy = BusyCore::on(0);
    let mut args = vec!["oltp_point_select", "--threads=64", "--cpus=0", "--io=epoll", "--slo=99:1000"];
    args.extend(SHORT_STEPS);
    args.push("search");
    let out = common::run_wirebench(&null_args(&server, &args));
    let stderr = &out.stderr;
    assert!(!out.succeeded(), "a client-bound search is an error: {stderr}");
    assert!(stderr.contains("the client was the limit"), "{stderr}");
    assert!(stderr.contains("--cpus"), "it says what to do: {stderr}");
    let summary = summary(&out);
    assert_eq!(summary["end"], "client_bound", "{summary}");
    assert_eq!(summary["max_rate"], Value::Null, "no rate is reported as the server's: {summary}");
    let last = summary["steps"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["verdict"], "client_bound", "{last}");
    let why = last["reasons"][0].as_str().unwrap_or_default();
    assert!(why.starts_with("client-bound: its "), "the reason names the client's own figure: {last}");
    for step in summary["steps"].as_array().unwrap() {
        eprintln!("{step}");
    }
}

/// A bound no rate can hold (the service time alone is over it) and a
/// step cap too small to reach the bottom: the search ends with an error
/// that says the steps ran out, and reports no rate.
#[test]
fn steps_that_run_out_before_any_rate_holds_are_an_error() {
    let _light = light_on_the_cores();
    let server = serial_server();
    let mut args = vec!["oltp_point_select", "--threads=2", "--slo=99:1", "--search-steps=3"];
    args.extend(SHORT_STEPS);
    args.push("search");
    let out = common::run_wirebench(&null_args(&server, &args));
    let stderr = &out.stderr;
    assert_eq!(out.code, Some(1), "{stderr}");
    assert!(stderr.contains("--search-steps=3 ran out before any rate held the bounds"), "{stderr}");
    assert!(stderr.contains("raise --search-steps"), "it says what to do: {stderr}");
    // --format=json samples the server by default; the null server has no
    // counters to sample, which is said once, not once a step.
    assert_eq!(stderr.matches("has none of the variables sampled").count(), 1, "{stderr}");
    let summary = summary(&out);
    assert_eq!(summary["end"], "step_cap", "{summary}");
    assert_eq!(summary["max_rate"], Value::Null, "{summary}");
    assert_eq!(summary["steps"].as_array().unwrap().len(), 3, "{summary}");
}

/// oltp_point_select on the test MariaDB, 2 tables of 10,000 rows: the
/// search ends (found, or the step cap) and every line keeps to the
/// schema. Whether a rate is found on a shared 2-core machine is not the
/// test; that the search completes and says what it found is.
#[test]
fn a_search_on_mariadb_completes_and_its_json_keeps_to_the_schema() {
    let Some(server) = common::TestServer::find() else { return };
    let _alone = the_cores_to_itself();
    let login = server.login_args("sbtest_search");
    let with = |args: &[&str]| -> Vec<String> {
        let table = ["oltp_point_select", "--tables=2", "--table-size=10000"];
        login.iter().cloned().chain(table.iter().chain(args).map(|a| (*a).to_owned())).collect()
    };
    let cleanup = common::run_wirebench(&with(&["cleanup"]));
    assert!(cleanup.succeeded(), "{}", &cleanup.stderr);
    let prepare = common::run_wirebench(&with(&["prepare"]));
    assert!(prepare.succeeded(), "{}", &prepare.stderr);
    let mut args = vec!["--threads=4", "--slo=99:50", "--search-steps=8", "--chart=/dev/null"];
    args.extend(SHORT_STEPS);
    args.push("search");
    let out = common::run_wirebench(&with(&args));
    let stderr = out.stderr.clone();
    let summary = summary(&out);
    // One latency stall of a VM longer than the bound holds more than 1 %
    // of a 3 s step's events late at any rate, so on a loaded machine every
    // step may fail: that end is an error that says so, never a rate.
    match (summary["end"].as_str().unwrap(), summary["max_rate"].as_u64()) {
        ("found" | "step_cap", Some(rate)) => {
            assert!(out.succeeded(), "{stderr}");
            assert!(rate > 0, "{summary}");
            assert!(stderr.contains("Search result: "), "the summary goes with the report: {stderr}");
        }
        ("step_cap", None) => {
            assert_eq!(out.code, Some(1), "no rate found is an error: {stderr}");
            assert!(stderr.contains("--search-steps=8 ran out before any rate held the bounds"), "{stderr}");
        }
        ("none_passed", None) => {
            assert_eq!(out.code, Some(1), "no rate found is an error: {stderr}");
            assert!(stderr.contains("no rate held the bounds"), "{stderr}");
        }
        ("client_bound", None) => assert!(stderr.contains("the client was the limit"), "{stderr}"),
        other => panic!("the search ended {other:?}: {summary}\n{stderr}"),
    }
    assert_eq!(summary["steps"][0]["phase"], "probe");
    assert_eq!(summary["slo"], serde_json::json!([{ "percentile": 99.0, "max_ms": 50.0 }]));
}

/// What a search cannot be run with is refused before anything connects,
/// with the reason and what to do.
#[test]
fn a_search_refuses_what_it_cannot_honour() {
    let refused = |args: &[&str], says: &[&str]| {
        let line: Vec<String> = ["--mysql-host=127.0.0.1", "--mysql-port=1", "--mysql-user=x", "oltp_point_select"]
            .iter()
            .chain(args)
            .map(|a| (*a).to_owned())
            .collect();
        let out = common::run_wirebench(&line);
        let stderr = &out.stderr;
        assert_eq!(out.code, Some(1), "{args:?}: {stderr}");
        for said in says {
            assert!(stderr.contains(said), "{args:?}: {said:?} not in {stderr}");
        }
    };
    refused(&["search"], &["search without --slo", "--slo=99:5"]);
    refused(&["--slo=99:5", "--time=30", "search"], &["--time", "--search-time"]);
    refused(&["--slo=99:5", "--rate=100", "search"], &["--rate", "sets each step's rate"]);
    refused(&["--slo=99:5", "--rate-stages=100:10", "search"], &["--rate-stages"]);
    refused(&["--slo=99:5", "--threads=1,2", "search"], &["--threads list", "one connection count"]);
    refused(&["--slo=99:5", "--shard=1/2", "search"], &["--shard", "one view of the latency", "--rate-stages"]);
    refused(&["--slo=99", "search"], &["PERCENTILE:MS", "pair 1 is '99'"]);
    refused(&["--slo=100:5", "search"], &["below 100"]);
    refused(&["--slo=99:5", "run"], &["--slo", "search command only"]);
    refused(&["--search-time=5", "run"], &["--search-time", "search command only"]);
    refused(&["--slo=99:5", "--search-precision=0", "search"], &["--search-precision", "percentage"]);
    refused(&["--slo=99:5", "--format=csv", "search"], &["--format=csv", "--format=json"]);
}

#[test]
fn a_lua_script_is_refused_with_the_reason() {
    let dir = common::ScratchDir::new("search-lua");
    let script = dir.write("mine.lua", "function event() end\n");
    let out = common::run_wirebench(&[script.display().to_string(), "--slo=99:5".to_owned(), "search".to_owned()]);
    let stderr = &out.stderr;
    assert_eq!(out.code, Some(1), "{stderr}");
    assert!(stderr.contains("search runs the built-in tests only"), "{stderr}");
    assert!(stderr.contains("run --rate=N"), "{stderr}");
}
