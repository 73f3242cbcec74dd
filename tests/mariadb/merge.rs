//! `wirebench merge` against the test MariaDB: three shards run as
//! separate processes with `--start-at` a few seconds ahead, each writing
//! its JSON result and its `--hdr-log`; merged, their counts add up, and
//! the merged percentiles are those of one histogram built here, apart
//! from merge's code, from every shard's interval log. A shard missing is
//! named; files of another run, or with another `--threads`, are refused,
//! and so are files without the histograms merge adds.

use crate::common::{self, text};

use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use common::{ScratchDir, TestServer};
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use serde_json::Value;

fn login(server: &TestServer) -> Vec<String> {
    server.login_args("sbtest")
}

fn succeeded(output: Output, what: &str) -> Output {
    assert!(output.status.success(), "{what}: {}\n{}\n{}", output.status, text(&output.stdout), text(&output.stderr));
    output
}

/// A shard's run, its JSON on `json`, its log in `hlog`.
fn spawn_shard(args: &[String], shard: &str, json: &Path, hlog: &Path) -> Child {
    common::wirebench()
        .args(args)
        .arg(format!("--shard={shard}"))
        .arg(format!("--hdr-log={}", hlog.display()))
        .arg("run")
        .stdout(std::fs::File::create(json).unwrap())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The final line of a JSON result file.
fn final_line(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    let last = text.lines().last().unwrap_or_else(|| panic!("{} is empty", path.display()));
    serde_json::from_str(last).unwrap()
}

/// The interval lines of a shard's JSON.
fn interval_lines(path: &Path) -> usize {
    std::fs::read_to_string(path).unwrap().lines().filter(|l| l.contains(r#""type":"interval""#)).count()
}

/// Every untagged (events') histogram of every log, added: one histogram of
/// all the shards' events, as the HdrHistogram tools would build it.
fn histogram_of_logs(logs: &[PathBuf]) -> Histogram<u64> {
    let mut all: Histogram<u64> = Histogram::new_with_bounds(1, u64::MAX / 2, 3).unwrap();
    for log in logs {
        let bytes = std::fs::read(log).unwrap();
        for entry in IntervalLogIterator::new(&bytes) {
            let LogEntry::Interval(interval) = entry.unwrap() else { continue };
            if interval.tag().is_some() {
                continue;
            }
            let decoded = base64::engine::general_purpose::STANDARD.decode(interval.encoded_histogram()).unwrap();
            let histogram: Histogram<u64> = Deserializer::new().deserialize(&mut decoded.as_slice()).unwrap();
            all.add(&histogram).unwrap();
        }
    }
    all
}

/// The merged result's percentile `p`, in ms.
fn merged_percentile(result: &Value, p: f64) -> f64 {
    let list = result["latency_ms"]["percentiles"].as_array().unwrap();
    let found = list.iter().find(|v| v["percentile"].as_f64() == Some(p)).unwrap_or_else(|| panic!("p{p}: {list:?}"));
    found["ms"].as_f64().unwrap()
}

fn counter(result: &Value, name: &str) -> u64 {
    result["counters"][name].as_u64().unwrap_or_else(|| panic!("{name}: {result}"))
}

fn merge(args: &[&Path], extra: &[&str]) -> Output {
    let mut command = common::wirebench();
    command.arg("merge").args(extra).args(args);
    command.output().unwrap()
}

fn unix_now() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs_f64()
}

#[test]
fn three_shards_merge_into_one_run() {
    let Some(server) = TestServer::find() else { return };
    let dir = ScratchDir::new("merge");
    let mut args = login(&server);
    args.extend(["oltp_point_select", "--tables=1", "--table-size=1000"].map(String::from));
    succeeded(
        common::wirebench().args([args.clone(), vec!["cleanup".to_owned()]].concat()).output().unwrap(),
        "cleanup",
    );
    succeeded(
        common::wirebench().args([args.clone(), vec!["prepare".to_owned()]].concat()).output().unwrap(),
        "prepare",
    );
    args.extend(["--time=3", "--report-interval=1", "--format=json", "--percentile=50,95,99,99.9"].map(String::from));
    // Whole milliseconds, as --start-at is written below: the shards start
    // at the instant they were given, not at a finer one.
    let start_at = ((unix_now() + 4.0) * 1e3).ceil() / 1e3;
    let run = [args.clone(), vec![format!("--start-at={start_at:.3}"), "--threads=6".to_owned()]].concat();
    let file = |name: &str| dir.0.join(name);
    let mut children: Vec<Child> = (0..3)
        .map(|i| spawn_shard(&run, &format!("{i}/3"), &file(&format!("s{i}.json")), &file(&format!("s{i}.hlog"))))
        .collect();
    // The same run but for --threads; and a run starting a second later.
    let other_threads = [args.clone(), vec![format!("--start-at={start_at:.3}"), "--threads=9".to_owned()]].concat();
    children.push(spawn_shard(&other_threads, "1/3", &file("threads9.json"), &file("threads9.hlog")));
    let other_start =
        [args.clone(), vec![format!("--start-at={:.3}", start_at + 1.0), "--threads=6".to_owned()]].concat();
    children.push(spawn_shard(&other_start, "1/3", &file("later.json"), &file("later.hlog")));
    let outputs: Vec<Output> = children
        .into_iter()
        .enumerate()
        .map(|(i, child)| succeeded(child.wait_with_output().unwrap(), &format!("process {i}")))
        .collect();
    // A shard's interim lines (its report is on stderr with --format=json)
    // end with the interval's end by the wall clock.
    let report = text(&outputs[0].stderr);
    let first = report.lines().find(|l| l.starts_with("[ 1s ] thds: 2 tps: ")).unwrap_or_else(|| panic!("{report}"));
    let at = first.rsplit_once(" at ").map(|(_, at)| at).unwrap_or_else(|| panic!("{first}"));
    assert!(at.len() == 24 && at.starts_with("20") && at.ends_with('Z'), "{first}");
    let shards: Vec<PathBuf> = (0..3).map(|i| file(&format!("s{i}.json"))).collect();
    let finals: Vec<Value> = shards.iter().map(|p| final_line(p)).collect();
    for (i, result) in finals.iter().enumerate() {
        let shard = &result["run"]["shard"];
        assert_eq!((shard["index"].as_u64(), shard["count"].as_u64()), (Some(i as u64), Some(3)), "{shard}");
        assert!(shard["late_ms"].as_f64().unwrap() >= 0.0, "{shard}");
        assert_eq!(shard["run_id"], finals[0]["run"]["shard"]["run_id"]);
        assert!(shard["started_unix_s"].as_f64().unwrap() >= start_at);
    }
    let paths: Vec<&Path> = shards.iter().map(PathBuf::as_path).collect();
    let merged = succeeded(merge(&paths, &["--format=json", "--percentile=50,95,99,99.9"]), "merge --format=json");
    let lines: Vec<Value> = text(&merged.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let result = lines.last().unwrap();
    assert_eq!(result["type"], "final");
    assert_eq!(result["run"]["shard"]["merged_from"].as_u64(), Some(3));
    for name in ["transactions", "queries", "reads", "writes", "others", "ignored_errors", "reconnects"] {
        let sum: u64 = finals.iter().map(|f| counter(f, name)).sum();
        assert_eq!(counter(result, name), sum, "{name}");
    }
    assert!(counter(result, "transactions") > 100, "{result}");
    let intervals: Vec<&Value> = lines.iter().filter(|l| l["type"] == "interval").collect();
    // 3 s in 1 s intervals on one grid: as many slots as the shard with the
    // most (a loop a loaded machine stalls stretches its shard's run), one
    // more where a late shard straddles a slot's edge.
    let most = shards.iter().map(|p| interval_lines(p)).max().unwrap_or(0);
    assert!(intervals.len() >= 2 && intervals.len() <= most + 1, "{} slots, shards {most}", intervals.len());
    let threads: Vec<u64> = intervals.iter().map(|i| i["threads"].as_u64().unwrap()).collect();
    assert_eq!(threads[..2], [6, 6], "the first slots hold all three shards: {threads:?}");

    let logs: Vec<PathBuf> = (0..3).map(|i| file(&format!("s{i}.hlog"))).collect();
    let all = histogram_of_logs(&logs);
    assert_eq!(all.len(), counter(result, "transactions"), "the logs hold every event");
    let max_ns = (result["latency_ms"]["max"].as_f64().unwrap() * 1e6).round() as u64;
    for p in [50.0, 95.0, 99.0, 99.9] {
        let expected = all.value_at_quantile(p / 100.0).min(max_ns) as f64 / 1e6;
        assert_eq!(merged_percentile(result, p), expected, "p{p}");
    }

    let log_paths: Vec<&Path> = logs.iter().map(PathBuf::as_path).collect();
    let from_logs = succeeded(merge(&log_paths, &["--percentile=50,99"]), "merge of the logs");
    let stdout = text(&from_logs.stdout);
    assert!(stdout.starts_with("Merged 3 of 3 shards' --hdr-log files of run "), "{stdout}");
    assert!(stdout.contains(&format!("\n    events: {}\n", all.len())), "{stdout}");
    let p99 = format!("{:.2}", all.value_at_quantile(0.99) as f64 / 1e6);
    assert!(stdout.lines().any(|l| l.trim_start().starts_with("p99:") && l.ends_with(&format!(" {p99}"))), "{stdout}");
    let mixed = merge(&[paths[0], &logs[1]], &[]);
    assert!(!mixed.status.success() && text(&mixed.stderr).contains("not both"), "{}", text(&mixed.stderr));

    let report = succeeded(merge(&paths, &[]), "merge");
    let (stdout, stderr) = (text(&report.stdout), text(&report.stderr));
    assert!(stdout.contains("Merged 3 of 3 shards of run "), "{stdout}");
    let events = counter(result, "transactions");
    assert!(stdout.contains(&format!("    total number of events:              {events}\n")), "{stdout}");
    assert!(stdout.lines().any(|l| l.starts_with("[ 1s ] thds: 6 tps: ") && l.contains(" at 20")), "{stdout}");
    // A shard that started more than 50 ms after --start-at (a loaded
    // machine) is named, and nothing else is said.
    let late: Vec<usize> = (0..3).filter(|&i| finals[i]["run"]["shard"]["late_ms"].as_f64() >= Some(50.0)).collect();
    for i in &late {
        assert!(stderr.contains(&format!("shard {i}/3 started ")), "shard {i} was late: {stderr}");
    }
    let said = stderr.lines().filter(|l| !l.trim().is_empty()).count();
    assert!(said <= late.len() * 2, "only the late shards are named: {stderr}");

    let missing = succeeded(merge(&[paths[0], paths[2]], &[]), "merge without shard 1");
    let stderr = text(&missing.stderr);
    assert!(stderr.contains("wirebench: merge: shard 1/3 is absent"), "{stderr}");
    assert!(text(&missing.stdout).contains("Merged 2 of 3 shards"));

    let threads9 = file("threads9.json");
    let refused = merge(&[paths[0], &threads9, paths[2]], &[]);
    let stderr = text(&refused.stderr);
    assert!(!refused.status.success() && stderr.contains("--threads 6 against 9"), "{stderr}");
    let later = file("later.json");
    let refused = merge(&[paths[0], &later, paths[2]], &[]);
    let stderr = text(&refused.stderr);
    assert!(!refused.status.success() && stderr.contains("are not shards of the same run: --start-at"), "{stderr}");
    succeeded(
        common::wirebench()
            .args([login(&server), vec!["oltp_point_select".to_owned(), "cleanup".to_owned()]].concat())
            .output()
            .unwrap(),
        "cleanup",
    );
}

/// A JSON result whose final line or one of whose intervals lacks the
/// histograms (`recorded`: a file of an older wirebench, or edited) is
/// refused in one line naming the file, never merged into counters without
/// their latencies. No server: a dry run's JSON is a shard's file too.
#[test]
fn files_without_histograms_are_refused_naming_them() {
    let dir = ScratchDir::new("merge-histograms");
    let args = ["oltp_point_select", "--mysql-dry-run", "--threads=1", "--time=3", "--report-interval=1"];
    let args: Vec<String> = args.iter().chain(&["--format=json", "run"]).map(|a| (*a).to_owned()).collect();
    let out = succeeded(common::wirebench().args(&args).output().unwrap(), "dry run");
    let lines: Vec<Value> = text(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(lines.len() >= 2 && lines.iter().all(|l| l["recorded"].is_object()), "{lines:?}");
    let write = |name: &str, lines: &[Value]| {
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        dir.write(name, &text)
    };
    succeeded(merge(&[&write("as-written.json", &lines)], &[]), "merge of the file as written");

    let mut no_final = lines.clone();
    no_final.last_mut().unwrap()["recorded"] = Value::Null;
    let mut no_interval = lines.clone();
    no_interval[0].as_object_mut().unwrap().remove("recorded");
    for (name, edited, says) in [
        ("no-final.json", no_final, "has no shard or histogram fields"),
        ("no-interval.json", no_interval, "into the run has no histograms"),
    ] {
        let path = write(name, &edited);
        let refused = merge(&[&path], &[]);
        let stderr = text(&refused.stderr);
        assert!(!refused.status.success(), "{name} merged: {}", text(&refused.stdout));
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(&path.display().to_string()) && stderr.contains(says), "{stderr}");
    }
}
