//! Results people can use: `--format=json` lines checked against
//! docs/result.schema.json, `--format=csv` rows with pgbench's columns, a
//! `--threads` sweep against the real MariaDB with its table and a chart
//! that headless Chromium renders, and `wirebench compare`'s tables.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use common::{ScratchDir, TestServer};
use serde_json::{json, Value};
use wirebench::null_server::{NullServer, NullServerConfig};

fn schema() -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/result.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    jsonschema::validator_for(&schema).unwrap()
}

/// Every line of `stdout` is a JSON object the schema accepts.
fn schema_checked_lines(stdout: &str) -> Vec<Value> {
    let validator = schema();
    let mut lines = Vec::new();
    for (n, line) in stdout.lines().enumerate() {
        let value: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("line {}: {e}: {line}", n + 1));
        let errors: Vec<String> =
            validator.iter_errors(&value).map(|e| format!("{e} at {}", e.instance_path)).collect();
        assert!(errors.is_empty(), "line {} breaks the schema: {errors:?}\n{line}", n + 1);
        lines.push(value);
    }
    lines
}

fn of_type<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["type"] == kind).collect()
}

/// The number on the report line that starts with `label` (after the
/// indentation).
fn report_number(report: &str, label: &str) -> u64 {
    let line = report.lines().find(|l| l.trim_start().starts_with(label)).unwrap_or_else(|| panic!("{label}"));
    let value = line.trim_start()[label.len()..].split_whitespace().next().unwrap();
    value.parse().unwrap_or_else(|_| panic!("{line}"))
}

/// One load at a time: a dry run keeps a core busy, and two of them beside
/// the MariaDB sweep on a 2-core machine starve its connections until the
/// run is cut.
fn one_load_at_a_time() -> MutexGuard<'static, ()> {
    static LOAD: Mutex<()> = Mutex::new(());
    LOAD.lock().unwrap_or_else(|e| e.into_inner())
}

const DRY: &[&str] = &["oltp_read_write", "--mysql-dry-run", "--time=2", "--report-interval=1"];

#[test]
fn json_lines_match_the_schema_and_the_report() {
    let _load = one_load_at_a_time();
    let out =
        common::run_wirebench(&[DRY, &["--format=json", "--label=dry", "--mysql-password=secret", "run"]].concat());
    assert!(out.succeeded(), "{}", out.stderr.clone());
    let (stdout, stderr) = (out.stdout.clone(), out.stderr.clone());
    let lines = schema_checked_lines(&stdout);
    assert!(!of_type(&lines, "interval").is_empty(), "{stdout}");
    let finals = of_type(&lines, "final");
    assert_eq!(finals.len(), 1, "{stdout}");
    assert_eq!(lines.last(), Some(finals[0]), "the final object comes last");
    // The human report went to standard error, whole, and agrees.
    assert!(stderr.contains("SQL statistics:") && stderr.contains("Threads fairness:"), "{stderr}");
    let result = finals[0];
    assert_eq!(result["counters"]["transactions"], report_number(&stderr, "transactions:"));
    assert_eq!(result["counters"]["queries"], report_number(&stderr, "queries:"));
    assert_eq!(result["counters"]["reads"], report_number(&stderr, "read:"));
    assert_eq!(result["run"]["label"], "dry");
    // Each kind's latencies, without --per-statement: JSON always has them.
    let point_selects = &result["statements"][0];
    assert!(point_selects["count"].as_u64().unwrap() > 0, "{result}");
    assert_eq!(point_selects["latency_ms"]["count"], point_selects["count"], "{result}");
    assert_eq!(result["run"]["test"], "oltp_read_write");
    assert_eq!(result["run"]["options"]["mysql-password"], "(hidden)");
    assert!(!stdout.contains("secret"));
    let intervals: u64 =
        of_type(&lines, "interval").iter().map(|i| i["counters"]["transactions"].as_u64().unwrap()).sum();
    assert!(intervals <= result["counters"]["transactions"].as_u64().unwrap());
}

/// The numbers after `label` on the first line of `text` that starts with
/// it (after the indentation).
fn report_floats(text: &str, label: &str) -> Vec<f64> {
    let line = text.lines().find(|l| l.trim_start().starts_with(label)).unwrap_or_else(|| panic!("no {label}"));
    line.trim_start()[label.len()..].split_whitespace().filter_map(|w| w.parse().ok()).collect()
}

/// The JSON's value at `percentile` in a latency object.
fn percentile_ms(latency: &Value, percentile: f64) -> f64 {
    let listed = latency["percentiles"].as_array().unwrap();
    let found = listed.iter().find(|p| p["percentile"].as_f64() == Some(percentile));
    found.unwrap_or_else(|| panic!("p{percentile} not in {latency}"))["ms"].as_f64().unwrap()
}

fn f64_of(value: &Value) -> f64 {
    value.as_f64().unwrap_or_else(|| panic!("not a number: {value}"))
}

/// The JSON's latencies are the text report's: the `--percentile` list's
/// `pNN:` lines, sysbench's own percentile line, min/avg/max/sum, and the
/// `--per-statement` block, kind by kind; every interval lists the same
/// percentiles and its statements; the spectrum ends at the max; the
/// warm-up is said and its time is not in the intervals.
#[test]
fn json_latencies_are_the_text_reports() {
    let _load = one_load_at_a_time();
    let launched = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64();
    let asked = ["--percentile=50,95,99,99.9", "--per-statement", "--warmup-time=1", "--format=json", "run"];
    let started = Instant::now();
    let out = common::run_wirebench(&[DRY, &asked].concat());
    let elapsed = started.elapsed().as_secs_f64();
    assert!(out.succeeded(), "{}", out.stderr.clone());
    let (stdout, report) = (out.stdout.clone(), out.stderr.clone());
    let lines = schema_checked_lines(&stdout);
    let result = of_type(&lines, "final")[0];
    let latency = &result["latency_ms"];
    let block = report.split("Latency percentiles (ms):\n").nth(1).unwrap_or_else(|| panic!("{report}"));
    for p in [50.0, 95.0, 99.0, 99.9] {
        let line = report_floats(block, &format!("p{p}:"));
        assert_eq!(format!("{:.2}", percentile_ms(latency, p)), format!("{:.2}", line[0]), "p{p}");
    }
    let sysbench_line = report_floats(&report, "50th percentile:")[0];
    assert_eq!(result["sysbench_percentile"]["percentile"], 50.0);
    assert_eq!(format!("{:.2}", f64_of(&result["sysbench_percentile"]["ms"])), format!("{sysbench_line:.2}"));
    for label in ["min", "avg", "max", "sum"] {
        let text_value = report_floats(&report, &format!("{label}:"))[0];
        assert!((f64_of(&latency[label]) - text_value).abs() <= 0.0051, "{label}: {latency} vs {text_value}");
    }
    assert_eq!(latency["count"], result["counters"]["transactions"]);
    assert_eq!(result["service_latency_ms"], Value::Null, "no --rate, no service time");

    let kinds = report.split("Statements (latency in ms").nth(1).unwrap_or_else(|| panic!("{report}"));
    let statements = result["statements"].as_array().unwrap();
    assert_eq!(statements.len(), kinds.lines().skip(2).take_while(|l| !l.trim().is_empty()).count(), "{kinds}");
    for kind in statements {
        let name = kind["kind"].as_str().unwrap();
        let row: Vec<&str> =
            kinds.lines().find(|l| l.split_whitespace().next() == Some(name)).unwrap().split_whitespace().collect();
        assert_eq!(
            (row[1], row[2]),
            (kind["count"].to_string().as_str(), kind["errors"].to_string().as_str()),
            "{name}"
        );
        let p99 = format!("{:.3}", percentile_ms(&kind["latency_ms"], 99.0));
        assert_eq!(row[6], p99, "{name}: the 3rd of --percentile's 4 values");
    }
    assert_eq!(statements[0]["kind"], "point_select");
    // Ten point selects an event; an event cut by the start or the end of
    // an interval sent some in the one before or the one after.
    let point_selects = |o: &Value| o["statements"][0]["count"].as_u64().unwrap();
    let events = |o: &Value| o["counters"]["transactions"].as_u64().unwrap();
    assert!(point_selects(result).abs_diff(10 * events(result)) <= 10, "{result}");

    let spectrum = result["latency_spectrum"].as_array().unwrap();
    let last = spectrum.last().unwrap();
    assert_eq!((&last["percentile"], &last["count"], &last["ms"]), (&json!(100.0), &latency["count"], &latency["max"]));
    assert!(spectrum.windows(2).all(|w| f64_of(&w[0]["ms"]) <= f64_of(&w[1]["ms"])));

    assert_eq!(result["warmup_s"], 1);
    // The measured time, not the warm-up (a loaded machine may stretch
    // both).
    let measured = f64_of(&result["time_s"]);
    assert!(measured >= 1.9 && measured + 1.0 <= elapsed, "{measured} s of {elapsed} s: {result}");
    // None for the warm-up; then one a second of the measured time, or
    // fewer, longer ones when a loaded machine's report thread woke late,
    // or more when a stalled loop stretched the run: whole, end to end,
    // within the measured time, adding up to no more than the total.
    let intervals = of_type(&lines, "interval");
    assert!(!intervals.is_empty(), "{stdout}");
    assert!(f64_of(&intervals[0]["start_unix_s"]) >= launched + 1.0, "intervals start after the warm-up");
    let mut end_s = 0.0;
    for interval in &intervals {
        let (time_s, interval_s) = (f64_of(&interval["time_s"]), f64_of(&interval["interval_s"]));
        assert!(interval_s > 0.0 && (time_s - interval_s - end_s).abs() < 1e-3, "{end_s}: {interval}");
        end_s = time_s;
    }
    assert!(end_s <= measured + 1e-3, "{end_s} s of {measured} s: {stdout}");
    let counted: u64 = intervals.iter().map(|i| events(i)).sum();
    assert!(counted <= events(result), "{counted} of {}: {stdout}", events(result));
    for interval in &intervals {
        let listed: Vec<f64> =
            interval["latency_ms"]["percentiles"].as_array().unwrap().iter().map(f64_of_percentile).collect();
        assert_eq!(listed, [50.0, 90.0, 95.0, 99.0, 99.9, 99.99, 100.0]);
        // On a loaded machine a loop may hand over too late for an
        // interval, which is then empty and the next one holds both.
        if events(interval) > 0 {
            assert_eq!(interval["statements"][0]["kind"], "point_select", "{interval}");
            assert!(point_selects(interval).abs_diff(10 * events(interval)) <= 10, "{interval}");
        }
    }
    assert!(intervals.iter().any(|i| events(i) > 0), "{stdout}");
}

fn f64_of_percentile(p: &Value) -> f64 {
    f64_of(&p["percentile"])
}

/// `--rate` past capacity, against a null server that answers each query
/// after 2 ms: the JSON says the target was missed, with the backlog, and
/// carries the latency from each arrival and the service time side by
/// side, as the text report's two columns; the CSV's `sum_lag` is the time
/// spent behind the schedule.
#[test]
fn rate_past_capacity_in_json_and_csv() {
    let _load = one_load_at_a_time();
    let dir = ScratchDir::new("results-rate");
    let config = NullServerConfig {
        unix: Some(dir.0.join("null.sock")),
        answer_delay: Duration::from_millis(2),
        ..NullServerConfig::default()
    };
    let server = NullServer::start(config).unwrap();
    let socket = format!("--mysql-socket={}", dir.0.join("null.sock").display());
    let args = ["oltp_point_select", &socket, "--threads=2", "--time=2", "--rate=3000", "--report-interval=1"];
    let out = common::run_wirebench(&[&args[..], &["--format=json", "run"]].concat());
    assert!(out.succeeded(), "{}", out.stderr.clone());
    let (stdout, report) = (out.stdout.clone(), out.stderr.clone());
    let lines = schema_checked_lines(&stdout);
    let result = of_type(&lines, "final")[0];
    let rate = &result["rate"];
    assert_eq!(
        (&rate["target_tps"], &rate["arrival"], &rate["target_met"]),
        (&json!(3000), &json!("poisson"), &json!(false))
    );
    assert!(rate["backlog"].as_u64().unwrap() > 100, "{rate}");
    assert!(f64_of(&rate["achieved_tps"]) < 1_100.0, "{rate}");
    let (latency, service) = (&result["latency_ms"], &result["service_latency_ms"]);
    let (from_arrival, service_p95) = (percentile_ms(latency, 95.0), percentile_ms(service, 95.0));
    assert!(from_arrival > 10.0 * service_p95 && service_p95 >= 2.0, "{from_arrival} vs {service_p95}");
    let text_p95 = report_floats(&report, "p95:");
    assert_eq!(format!("{:.2} {:.2}", from_arrival, service_p95), format!("{:.2} {:.2}", text_p95[0], text_p95[1]));
    assert!(report.contains("Target rate not met: "), "{report}");
    assert!(of_type(&lines, "interval").iter().all(|i| i["service_latency_ms"].is_object() && i["queue"].is_object()));

    let out = common::run_wirebench(&[&args[..], &["--format=csv", "run"]].concat());
    assert!(out.succeeded(), "{}", out.stderr.clone());
    let stdout = out.stdout.clone();
    let header: Vec<&str> = stdout.lines().next().unwrap().split(',').collect();
    assert_eq!(
        header[..7],
        ["interval_start", "num_transactions", "sum_latency", "min_latency", "max_latency", "sum_lag", "failures"]
    );
    let rows: Vec<Vec<u64>> =
        stdout.lines().skip(1).map(|row| row.split(',').skip(1).map(|c| c.parse().unwrap()).collect()).collect();
    // An interval a loop handed over too late for is empty.
    assert!(rows.iter().any(|cells| cells[0] > 0), "{stdout}");
    for cells in rows.iter().filter(|cells| cells[0] > 0) {
        let (events, sum_latency, sum_lag) = (cells[0], cells[1], cells[4]);
        // Each event is answered in 2 ms and some (20 on a busy machine);
        // the rest is the wait.
        assert!(sum_lag <= sum_latency && sum_lag + 20_000 * events > sum_latency, "{cells:?}");
        assert!(sum_lag > sum_latency / 2, "past capacity, most of the latency is lag: {cells:?}");
    }
    drop(server);
}

#[test]
fn a_rated_sweep_writes_a_final_per_step_and_a_summary() {
    let _load = one_load_at_a_time();
    let args = ["oltp_point_select", "--mysql-dry-run", "--time=1", "--report-interval=1", "--rate=500"];
    let out = common::run_wirebench(&[&args[..], &["--threads=1,2", "--format=json", "run"]].concat());
    assert!(out.succeeded(), "{}", out.stderr.clone());
    let lines = schema_checked_lines(&out.stdout.clone());
    let finals = of_type(&lines, "final");
    assert_eq!(finals.iter().map(|f| f["threads"].as_u64().unwrap()).collect::<Vec<_>>(), [1, 2]);
    assert_eq!(finals[1]["step"], json!({"index": 2, "steps": 2, "threads": 2}));
    assert_eq!(finals[0]["rate"]["target_tps"], 500);
    assert!(of_type(&lines, "interval").iter().all(|i| i["queue"].is_object()));
    let with_histograms = |kind| of_type(&lines, kind).iter().all(|l| l["recorded"]["events"]["histogram"].is_string());
    assert!(with_histograms("interval") && with_histograms("final"), "a sweep's JSON keeps what merge reads");
    let sweep = of_type(&lines, "sweep");
    assert_eq!(sweep.len(), 1);
    assert_eq!(sweep[0]["steps"].as_array().unwrap().len(), 2);
    assert_eq!(sweep[0]["steps"][1]["qps"], finals[1]["rates"]["qps"]);
    let stderr = out.stderr.clone();
    assert!(stderr.contains("[ sweep step 2/2 ] threads: 2"), "{stderr}");
}

/// The schema is not a formality: what breaks the format breaks it.
#[test]
fn the_schema_refuses_what_breaks_the_format() {
    let _load = one_load_at_a_time();
    let out = common::run_wirebench(&[DRY, &["--format=json", "run"]].concat());
    let stdout = out.stdout.clone();
    let last: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    let validator = schema();
    assert!(validator.is_valid(&last));
    let shard = &last["run"]["shard"];
    assert_eq!(
        (shard["index"].as_u64(), shard["count"].as_u64(), &shard["merged_from"]),
        (Some(0), Some(1), &Value::Null)
    );
    assert!(last["recorded"]["events"]["histogram"].as_str().is_some_and(|h| !h.is_empty()), "{last}");
    let mut broken = Vec::new();
    for (path, value) in [
        ("/rates/tps", Value::Null),
        ("/counters/transactions", json!(-1)),
        ("/type", json!("summary")),
        ("/run/start_time", json!("yesterday")),
        ("/end", json!("finished")),
        ("/latency_ms/percentiles/0/ms", json!(-1.0)),
        ("/statements/0/kind", json!("select")),
        ("/latency_spectrum/0/count", json!(0.5)),
        ("/run/shard/run_id", json!("not a hash")),
        ("/run/shard/count", json!(0)),
        ("/recorded/events/histogram", json!(5)),
        ("/recorded/sysbench/buckets/0", json!([3])),
    ] {
        let mut bad = last.clone();
        *bad.pointer_mut(path).unwrap() = value;
        broken.push(bad);
    }
    let mut extra = last.clone();
    extra.as_object_mut().unwrap().insert("qps".to_owned(), json!(1));
    broken.push(extra);
    for bad in broken {
        assert!(!validator.is_valid(&bad), "accepted: {bad}");
    }
}

#[test]
fn csv_rows_carry_pgbench_columns() {
    let _load = one_load_at_a_time();
    let out = common::run_wirebench(&[
        "oltp_point_select",
        "--mysql-dry-run",
        "--time=3",
        "--report-interval=1",
        "--format=csv",
        "run",
    ]);
    assert!(out.succeeded(), "{}", out.stderr.clone());
    let stdout = out.stdout.clone();
    let mut lines = stdout.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(
        header,
        [
            "interval_start",
            "num_transactions",
            "sum_latency",
            "min_latency",
            "max_latency",
            "failures",
            "threads",
            "num_queries",
            "reconnects",
            "p95_latency"
        ]
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert!(rows.len() >= 2, "{stdout}");
    let mut previous_start = 0.0;
    for row in &rows {
        assert_eq!(row.len(), header.len(), "{row:?}");
        let start: f64 = row[0].parse().unwrap();
        assert!(start > 1.6e9 && start > previous_start, "{row:?}");
        previous_start = start;
        let numbers: Vec<u64> = row[1..].iter().map(|c| c.parse().unwrap_or_else(|_| panic!("{row:?}"))).collect();
        let (transactions, sum, min, max) = (numbers[0], numbers[1], numbers[2], numbers[3]);
        assert!(min <= max && sum >= max, "{row:?}");
        assert_eq!(numbers[5], 1, "threads");
        assert_eq!(numbers[6], transactions, "a point select event is one query");
    }
    let total: u64 = rows.iter().map(|r| r[1].parse::<u64>().unwrap()).sum();
    assert!(total > 0, "{stdout}");
    assert!(out.stderr.clone().contains("SQL statistics:"));
}

#[test]
fn outputs_that_would_be_empty_are_refused_in_one_line() {
    for (args, needle) in [
        (&["--format=csv"][..], "--format=csv writes one row per --report-interval"),
        (&["--chart=/tmp/x.svg"][..], "--chart on a single run draws qps and latency over time"),
        (&["--chart=/no/such/dir/x.svg"][..], "in a directory that exists"),
        (&["--format=xml"][..], "expected text, json or csv"),
        (&["--threads=1,2,2"][..], "each count once"),
        (&["--threads=1,0"][..], "a number of threads >= 1"),
    ] {
        let out = common::run_wirebench(&[&["oltp_point_select", "--mysql-dry-run"][..], args, &["run"]].concat());
        let stderr = out.stderr.clone();
        assert_eq!(out.code, Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(needle) && stderr.lines().count() == 1, "{args:?}: {stderr}");
        assert!(out.stdout.is_empty());
    }
}

/// A final result line as `wirebench ... --format=json run` writes it, for
/// a sweep step at `threads` with `qps`.
fn final_line(label: &str, threads: u32, qps: f64) -> String {
    let latency = json!({"count": 1, "min": 1.0, "avg": 1.0, "max": 2.0, "sum": 1.0,
        "percentiles": [{"percentile": 95.0, "ms": threads as f64 / 10.0}, {"percentile": 99.0, "ms": 2.0}]});
    let counters = json!({"transactions": 1, "queries": 1, "reads": 1, "writes": 0, "others": 0,
        "ignored_errors": 0, "reconnects": 0});
    let rates = json!({"tps": qps, "qps": qps, "reads_per_s": qps, "writes_per_s": 0.0, "others_per_s": 0.0,
        "ignored_errors_per_s": 0.0, "reconnects_per_s": 0.0});
    let line = json!({"type": "final",
        "run": {"format_version": 1, "wirebench_version": "0.1.0", "label": label, "test": "oltp_read_only",
            "server_version": "10.11.6-MariaDB", "host": "db", "start_time": "2015-10-27T10:00:00.000Z",
            "options": {}, "shard": null},
        "step": {"index": 1, "steps": 9, "threads": threads}, "threads": threads, "end": "completed",
        "time_s": 100.0, "warmup_s": 0, "counters": counters, "rates": rates, "latency_ms": latency,
        "sysbench_percentile": {"percentile": 95.0, "ms": 1.0}, "service_latency_ms": null,
        "latency_spectrum": [], "statements": [], "rate": null,
        "fairness": {"events_avg": 1.0, "events_stddev": 0.0, "execution_time_avg_s": 1.0,
            "execution_time_stddev_s": 0.0}, "recorded": null});
    assert!(schema().is_valid(&line), "the fixture follows the schema");
    line.to_string()
}

/// Seed 002's figures for two servers, and the tables compare makes of them.
#[test]
fn compare_gives_seed_002s_tables() {
    let dir = ScratchDir::new("compare");
    let seed = [(1, 22166.0, 22748.0), (2, 41220.0, 42155.0), (4, 70850.0, 72865.0), (8, 112328.0, 118933.0)];
    let file = |name: &str, label: &str, pick: fn(&(u32, f64, f64)) -> f64| {
        let lines: Vec<String> = seed.iter().map(|s| final_line(label, s.0, pick(s))).collect();
        dir.write(name, &(lines.join("\n") + "\n"))
    };
    let a = file("a.json", "MariaDB 10.0.21", |s| s.1);
    let b = file("b.json", "MariaDB 10.1.8", |s| s.2);
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let out = common::run_wirebench(&["compare", "--format=markdown", a, b]);
    assert!(out.succeeded(), "{}", out.stderr.clone());
    assert_eq!(
        out.stdout.clone(),
        "**Queries per second**\n\n\
         | threads | MariaDB 10.0.21 | MariaDB 10.1.8 |\n\
         | --- | ---: | ---: |\n\
         | 1 | 22166.00 | 22748.00 |\n\
         | 2 | 41220.00 | 42155.00 |\n\
         | 4 | 70850.00 | 72865.00 |\n\
         | 8 | 112328.00 | 118933.00 |\n\
         \n\
         **Relative queries per second (%)**\n\n\
         | threads | MariaDB 10.1.8 vs MariaDB 10.0.21 |\n\
         | --- | ---: |\n\
         | 1 | +2.6% |\n\
         | 2 | +2.3% |\n\
         | 4 | +2.8% |\n\
         | 8 | +5.9% |\n"
    );
    let csv = common::run_wirebench(&["compare", "--format=csv", "--metric=p95", a, b]);
    assert_eq!(
        csv.stdout.clone().lines().take(2).collect::<Vec<_>>(),
        [
            "threads,MariaDB 10.0.21 p95_ms,MariaDB 10.1.8 p95_ms,MariaDB 10.1.8 vs MariaDB 10.0.21 %",
            "1,0.10,0.10,+0.0%"
        ]
    );
    let chart = dir.0.join("compare.svg");
    let out = common::run_wirebench(&["compare", &format!("--chart={}", chart.display()), a, b]);
    assert!(out.succeeded(), "{}", out.stderr.clone());
    let svg = std::fs::read_to_string(&chart).unwrap();
    assert!(svg.contains("MariaDB 10.1.8") && svg.contains("<polyline"));
    assert!(!out.stderr.clone().contains("warning"), "one test in both: {}", out.stderr.clone());
    let point =
        dir.write("point.json", &final_line("point selects", 1, 1.0).replace("oltp_read_only", "oltp_point_select"));
    let out = common::run_wirebench(&["compare", a, point.to_str().unwrap()]);
    assert!(out.succeeded(), "{}", out.stderr.clone());
    assert!(
        out.stderr.clone().starts_with(
            "wirebench: compare: warning: the results are of different tests (MariaDB 10.0.21: oltp_read_only, \
             point selects: oltp_point_select)"
        ),
        "{}",
        out.stderr.clone()
    );
    let missing = common::run_wirebench(&["compare", a, "/no/such.json"]);
    assert_eq!(missing.code, Some(1));
    assert!(missing.stderr.clone().starts_with("wirebench: cannot read /no/such.json: "), "{}", missing.stderr.clone());
}

/// `chromium`, or `None` to skip; scripts/test.sh installs it, so with
/// WIREBENCH_REQUIRE_SERVER=1 (the full suite) a missing one fails.
fn chromium() -> Option<PathBuf> {
    let found = Command::new("chromium").arg("--version").output().is_ok_and(|o| o.status.success());
    if found {
        return Some(PathBuf::from("chromium"));
    }
    common::unavailable("chromium is not installed: apt-get install chromium (scripts/test.sh does)");
    None
}

/// Headless Chromium's screenshot of `svg`, as RGB pixels.
fn screenshot(chromium: &Path, svg: &Path, dir: &Path) -> (u32, u32, Vec<[u8; 3]>) {
    let png = dir.join("chart.png");
    let mut child = Command::new(chromium)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=960,810"])
        .arg(format!("--user-data-dir={}", dir.join("chromium").display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", svg.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    common::exit_within(&mut child, Duration::from_secs(120))
        .unwrap_or_else(|| panic!("chromium took more than 120 s"));
    let decoder = png::Decoder::new(std::fs::File::open(&png).expect("chromium wrote the screenshot"));
    let mut reader = decoder.read_info().unwrap();
    let mut buffer = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buffer).unwrap();
    let channels = info.color_type.samples();
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    let pixels = buffer[..info.buffer_size()].chunks(channels).map(|p| [p[0], p[1], p[2]]).collect();
    (info.width, info.height, pixels)
}

fn mariadb_args(server: &TestServer, rest: &[&str]) -> Vec<String> {
    let mut args = vec![
        "oltp_point_select".to_owned(),
        format!("--mysql-host={}", server.host),
        format!("--mysql-port={}", server.port),
    ];
    let login = ["--mysql-user=sbtest", "--mysql-password=sbtest", "--tables=1", "--table-size=1000"];
    args.extend(login.iter().chain(rest).map(|a| (*a).to_owned()));
    args
}

#[test]
fn a_sweep_against_mariadb_gives_its_table_and_a_chart_a_browser_renders() {
    let _load = one_load_at_a_time();
    let Some(server) = TestServer::find() else { return };
    let dir = ScratchDir::new("sweep");
    let prepared = common::run_wirebench(&mariadb_args(&server, &["cleanup"]));
    assert!(prepared.succeeded(), "{}", prepared.stderr.clone());
    let prepared = common::run_wirebench(&mariadb_args(&server, &["prepare"]));
    assert!(prepared.succeeded(), "{}", prepared.stderr.clone());
    let chart = dir.0.join("sweep.svg");
    let chart_option = format!("--chart={}", chart.display());
    let run = ["--threads=1,2,4", "--time=1", "--format=json", "--sweep-pause=1", &chart_option, "run"];
    let started = Instant::now();
    let out = common::run_wirebench(&mariadb_args(&server, &run));
    assert!(out.succeeded(), "{}", out.stderr.clone());
    assert!(started.elapsed() >= Duration::from_secs(5), "three 1 s steps and two 1 s pauses");
    let (stdout, stderr) = (out.stdout.clone(), out.stderr.clone());
    let lines = schema_checked_lines(&stdout);
    let finals = of_type(&lines, "final");
    assert_eq!(finals.len(), 3, "{stdout}");
    assert!(finals.iter().all(|f| f["run"]["server_version"].as_str().is_some_and(|v| v.contains("MariaDB"))));
    // The table at the end of the report: a row per step, their qps.
    let table: Vec<&str> = stderr.lines().skip_while(|l| !l.starts_with("oltp_point_select: sweep of 3")).collect();
    assert_eq!(
        table.get(1).map(|h| h.split_whitespace().collect::<Vec<_>>()),
        Some(vec!["threads", "tps", "qps", "p95", "ms", "p99", "ms", "errors"])
    );
    for (row, result) in table[2..5].iter().zip(&finals) {
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cells[0], result["threads"].to_string());
        assert_eq!(cells[2], format!("{:.2}", result["rates"]["qps"].as_f64().unwrap()));
        let (p95, p99) = (percentile_ms(&result["latency_ms"], 95.0), percentile_ms(&result["latency_ms"], 99.0));
        assert_eq!(cells[3..5], [format!("{p95:.2}"), format!("{p99:.2}")], "the HdrHistogram's p95/p99: {row}");
        assert!(result["rates"]["qps"].as_f64().unwrap() > 100.0, "{row}");
    }
    let saved = dir.write("sweep.json", &stdout);
    let compared = common::run_wirebench(&["compare", saved.to_str().unwrap()]);
    assert_eq!(compared.stdout.clone().lines().count(), 2 + 3, "{}", compared.stdout.clone());
    let _ = common::run_wirebench(&mariadb_args(&server, &["cleanup"]));

    let Some(chromium) = chromium() else { return };
    let (width, height, pixels) = screenshot(&chromium, &chart, &dir.0);
    assert_eq!((width, height), (960, 810));
    let white = pixels.iter().filter(|p| **p == [255, 255, 255]).count();
    let line_colour =
        pixels.iter().filter(|p| p[0] < 20 && (100..130).contains(&p[1]) && (160..195).contains(&p[2])).count();
    assert!(white < pixels.len() * 98 / 100, "the page is blank: {white} of {} pixels white", pixels.len());
    assert!(line_colour > 500, "the result's line is not drawn: {line_colour} pixels of its colour");
}

/// A single run's chart: qps and latency over time, from its intervals.
#[test]
fn a_single_runs_chart_follows_its_intervals() {
    let _load = one_load_at_a_time();
    let dir = ScratchDir::new("run-chart");
    let chart = dir.0.join("run.svg");
    let out = common::run_wirebench(&[DRY, &[&format!("--chart={}", chart.display()), "--label=dry", "run"]].concat());
    assert!(out.succeeded(), "{}", out.stderr.clone());
    assert!(out.stdout.clone().contains("SQL statistics:"), "the text report stays on standard output");
    let svg = std::fs::read_to_string(&chart).unwrap();
    for label in ["oltp_read_write: dry", "Queries per second", "seconds", "Latency, 95th percentile of each interval"]
    {
        assert!(svg.contains(&format!("\n{label}\n</text>")), "{label}");
    }
    // One point per interval on each panel.
    let intervals = out.stdout.clone().lines().filter(|l| l.starts_with("[ ")).count();
    assert_eq!(svg.matches("<circle").count(), 2 * intervals, "{intervals} intervals");
}
