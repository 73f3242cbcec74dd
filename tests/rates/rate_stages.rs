//! `--rate-stages` end to end against the null server (in-process, on a
//! free port): the achieved rate follows the stages, a stage the server
//! cannot hold drops events and says so, shards merged add up to the
//! stages, a Lua script runs under them; and the command line's refusals.

use std::net::SocketAddr;
use std::process::Output;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use wirebench::null_server::{NullServer, NullServerConfig};

// One run at a time: the runs' rates are what is measured.
use crate::common::{self, serial};

fn null_server(delay: Duration) -> NullServer {
    let config = NullServerConfig {
        tcp: Some(SocketAddr::from(([127, 0, 0, 1], 0))),
        answer_delay: delay,
        ..NullServerConfig::default()
    };
    NullServer::start(config).unwrap()
}

fn wirebench(server: &NullServer, args: &[&str]) -> Output {
    common::wirebench()
        .args(["--mysql-host=127.0.0.1", "--mysql-user=x", "--mysql-db=sbtest", "--table-size=100"])
        .arg(format!("--mysql-port={}", server.local_addr().unwrap().port()))
        .args(args)
        .output()
        .expect("wirebench runs")
}

fn succeeded(out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    stdout
}

/// The JSON lines of a run, checked against docs/result.schema.json.
fn json_lines(stdout: &str) -> Vec<Value> {
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

fn intervals(lines: &[Value]) -> Vec<&Value> {
    lines.iter().filter(|l| l["type"] == "interval").collect()
}

fn final_line(lines: &[Value]) -> &Value {
    lines.iter().find(|l| l["type"] == "final").expect("a final line")
}

/// Ramp from 0 to 3000/s over 3 s, hold 2 s, ramp down to 1000/s over 1 s,
/// fixed arrivals: past the first second of the ramp, each second's
/// achieved rate is within 5 % of its target, and the run ends with the
/// stages.
#[test]
fn the_achieved_rate_follows_each_stage() {
    let _serial = serial();
    let server = null_server(Duration::ZERO);
    let out = wirebench(
        &server,
        &[
            "oltp_point_select",
            "--threads=4",
            "--rate-stages=0:0,3000:3,3000:2,1000:1",
            "--rate-arrival=fixed",
            "--report-interval=1",
            "--format=json",
            "run",
        ],
    );
    let lines = json_lines(&succeeded(&out));
    let intervals = intervals(&lines);
    // The last second's line is printed only when its tick comes before
    // the run's end.
    assert!((5..=6).contains(&intervals.len()), "one per second of the stages: {}", intervals.len());
    let targets = [500.0, 1500.0, 2500.0, 3000.0, 3000.0, 2000.0];
    for (k, (interval, want)) in intervals.iter().zip(targets).enumerate() {
        let target = interval["target_rate"].as_f64().unwrap();
        assert!((target - want).abs() < want * 0.02, "second {}: target {target}, not {want}", k + 1);
        assert_eq!(interval["dropped"], 0, "{interval}");
        if k == 0 {
            continue;
        }
        let tps = interval["rates"]["tps"].as_f64().unwrap();
        assert!((tps / target - 1.0).abs() < 0.05, "second {}: achieved {tps} against {target}", k + 1);
    }
    let last = final_line(&lines);
    let events = last["counters"]["transactions"].as_f64().unwrap();
    assert!((events / 12_500.0 - 1.0).abs() < 0.02, "{events} events, the stages' integral is 12500");
    assert_eq!(last["rate"]["stages"], true);
    assert_eq!(last["rate"]["dropped"], 0);
    assert!(last["time_s"].as_f64().unwrap() < 7.5, "{}", last["time_s"]);
}

/// A server that answers each command 2 ms late holds about 500/s on one
/// connection: a stage at 3000/s drops what could not start within a
/// second, counts it per interval and in the report, and no event waited
/// much longer than that second.
#[test]
fn a_stage_the_server_cannot_hold_drops_events() {
    let _serial = serial();
    let server = null_server(Duration::from_millis(2));
    let args = ["oltp_point_select", "--threads=1", "--rate-stages=100:1,3000:0,3000:3", "--report-interval=1"];
    let text = succeeded(&wirebench(&server, &[&args[..], &["run"]].concat()));
    let interim: Vec<&str> = text.lines().filter(|l| l.contains(" tps: ")).collect();
    assert!(interim.len() >= 3, "{text}");
    // The first line's span ends a little past the first second, into the
    // next stage: its target is 100/s and a little of 3000/s (below 200/s
    // while the report comes within 35 ms of its second).
    let target: f64 = interim[0].split(" target: ").nth(1).and_then(|t| t.split(' ').next()?.parse().ok()).unwrap();
    assert!((100.0..200.0).contains(&target) && interim[0].ends_with(" dropped: 0"), "{}", interim[0]);
    assert!(interim[2].contains(" target: 3000.00 dropped: "), "{}", interim[2]);
    assert!(text.contains("Rate: --rate-stages, mean target "), "{text}");
    let json = succeeded(&wirebench(&server, &[&args[..], &["--format=json", "run"]].concat()));
    let lines = json_lines(&json);
    let dropped: Vec<u64> = intervals(&lines).iter().map(|i| i["dropped"].as_u64().unwrap()).collect();
    assert_eq!(dropped[0], 0, "the first second is within capacity: {dropped:?}");
    let total: u64 = dropped.iter().sum();
    assert!(total > 3_000, "about 2500 a second past the first: {dropped:?}");
    let last = final_line(&lines);
    assert!(last["rate"]["dropped"].as_u64().unwrap() >= total);
    assert_eq!(last["rate"]["target_met"], false);
    let max_ms = last["latency_ms"]["max"].as_f64().unwrap();
    assert!(max_ms < 1_500.0, "an event waits a second at most before it is dropped: max {max_ms} ms");
}

/// Two shards, each with its share of every stage, merged: the targets
/// and the events add up to the stages'.
#[test]
fn shards_merged_add_up_to_the_stages() {
    let _serial = serial();
    let server = null_server(Duration::ZERO);
    let start = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs_f64() + 2.0;
    let dir = std::env::temp_dir().join(format!("wirebench-stages-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let shards: Vec<_> = (0..2)
        .map(|i| {
            let port = format!("--mysql-port={}", server.local_addr().unwrap().port());
            let child = common::wirebench()
                .args(["--mysql-host=127.0.0.1", "--mysql-user=x", "--mysql-db=sbtest", "--table-size=100", &port])
                .args(["oltp_point_select", "--threads=4", "--rate-stages=1000:1,3001:2", "--rate-arrival=fixed"])
                .args(["--report-interval=1", "--format=json", &format!("--shard={i}/2")])
                .arg(format!("--start-at={start:.3}"))
                .arg("run")
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            (i, child)
        })
        .collect();
    let mut files = Vec::new();
    for (i, child) in shards {
        let stdout = succeeded(&child.wait_with_output().unwrap());
        let lines = json_lines(&stdout);
        let stages = &final_line(&lines)["run"]["shard"]["identity"]["rate_stages"];
        assert_eq!(stages, "1000:1,3001:2", "the whole run's stages identify it");
        let path = dir.join(format!("shard-{i}.json"));
        std::fs::write(&path, stdout).unwrap();
        files.push(path);
    }
    let merged = common::wirebench().arg("merge").arg("--format=json").args(&files).output();
    let merged = succeeded(&merged.unwrap());
    let _ = std::fs::remove_dir_all(&dir);
    let lines = json_lines(&merged);
    let targets: Vec<f64> = intervals(&lines).iter().map(|i| i["target_rate"].as_f64().unwrap()).collect();
    assert!(targets.len() >= 2, "{targets:?}");
    // The ramp from 1000 to 3001 over 2 s: 1500.25 in its first second.
    for (got, want) in targets.iter().zip([1000.0, 1500.25]) {
        assert!((got - want).abs() < want * 0.02, "merged targets {targets:?}");
    }
    let last = final_line(&lines);
    let events = last["counters"]["transactions"].as_f64().unwrap();
    assert!((events / 5001.0 - 1.0).abs() < 0.03, "{events} events, the stages' integral is 5001");
    assert_eq!(last["rate"]["dropped"], 0);
}

/// A Lua script's events come on the same schedule.
#[test]
fn a_lua_script_runs_under_stages() {
    let _serial = serial();
    let Some(script) = Some("/usr/share/sysbench/oltp_point_select.lua").filter(|p| std::path::Path::new(p).exists())
    else {
        panic!("sysbench's scripts are not installed (scripts/test.sh installs sysbench)");
    };
    let server = null_server(Duration::ZERO);
    let args = [script, "--threads=2", "--rate-stages=500:1,1500:2", "--rate-arrival=fixed", "--report-interval=1"];
    let out = wirebench(&server, &[&args[..], &["--format=json", "run"]].concat());
    let lines = json_lines(&succeeded(&out));
    let intervals = intervals(&lines);
    assert!(intervals.len() >= 2);
    // The ramp's first second: from 500 to 1000.
    let second = &intervals[1];
    let (tps, target) = (second["rates"]["tps"].as_f64().unwrap(), second["target_rate"].as_f64().unwrap());
    assert!((target - 750.0).abs() < 20.0, "{target}");
    assert!((tps / target - 1.0).abs() < 0.05, "achieved {tps} against {target}");
    let events = final_line(&lines)["counters"]["transactions"].as_f64().unwrap();
    assert!((events / 2500.0 - 1.0).abs() < 0.03, "{events}");
}

/// The refusals name both options and what to do; a bad stage is named.
#[test]
fn refusals_name_the_options() {
    let refused = |args: &[&str]| {
        let out = common::wirebench().args(args).arg("run").output().unwrap();
        assert!(!out.status.success(), "{args:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let e = refused(&["oltp_point_select", "--rate-stages=10:5", "--time=5"]);
    assert!(e.contains("--time with --rate-stages") && e.contains("drop --time"), "{e}");
    let e = refused(&["oltp_point_select", "--rate-stages=10:5", "--rate=7"]);
    assert!(e.contains("--rate=7 with --rate-stages") && e.contains("--rate-stages=7:SECONDS"), "{e}");
    let e = refused(&["oltp_point_select", "--rate-stages=10:5", "--events=70"]);
    assert!(e.contains("--events=70 with --rate-stages") && e.contains("drop --events"), "{e}");
    let e = refused(&["oltp_point_select", "--rate-stages=10:5,20:x"]);
    assert!(e.contains("stage 2 is '20:x'"), "{e}");
    let e = refused(&["oltp_point_select", "--rate-stages=10:5,20"]);
    assert!(e.contains("stage 2 is '20'"), "{e}");
    let e = refused(&["oltp_point_select", "--rate-stages=10:0"]);
    assert!(e.contains("last 0 seconds"), "{e}");
    let e = refused(&["oltp_point_select", "--rate-stages=10:5", "--threads=1,2"]);
    assert!(e.contains("a --threads list with --rate-stages"), "{e}");
}
