//! `--metrics-listen` and `--metrics-push` against a real Prometheus
//! (Debian's `prometheus`, which ships `promtool`): the exposition is
//! clean by promtool's checks, a scrape sees the run's counters grow to the
//! report's, and the remote-write receiver stores the pushed final total
//! equal to the report's, a search's steps included. The runs are dry runs
//! at a fixed rate (`watch_tools::DRY`), or against the null server: no
//! database needed, little CPU taken.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::{self, number_after};
use crate::watch_tools::{charts, chromium_dom, free_port, http_get, page_lines, tool, Prometheus, Running, DRY};

fn args(rest: &[&str]) -> Vec<String> {
    DRY.iter().chain(rest).map(|a| (*a).to_owned()).collect()
}

/// `promtool check metrics` finds `text` clean: no error, no lint.
#[track_caller]
pub fn promtool_check(promtool: &std::path::Path, text: &str) {
    let mut check = Command::new(promtool)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    check.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let checked = check.wait_with_output().unwrap();
    let said = format!("{}{}", common::text(&checked.stdout), common::text(&checked.stderr));
    assert!(checked.status.success() && said.trim().is_empty(), "promtool check metrics: {said}\n{text}");
}

/// `/metrics` in both formats during a run: promtool finds the 0.0.4
/// text clean; the OpenMetrics text ends with `# EOF` and types the
/// families as OpenMetrics does; the labels are there.
#[test]
fn promtool_finds_the_exposition_clean() {
    let Some(promtool) = tool("promtool", "prometheus") else { return };
    let mut run = Running::start(&args(&[
        "--time=4",
        "--report-interval=1",
        "--metrics-listen=127.0.0.1:0",
        "--metrics-label=env=ci",
        "--mysql-ignore-errors=all",
        "run",
    ]));
    let address = run.address_of("metrics");
    // The first interval's figures.
    common::wait_until("a scrape with the first interval's transactions", Duration::from_secs(60), || {
        http_get(address, "/metrics", None).2.contains("wirebench_transactions_total{")
    });
    let (status, head, text) = http_get(address, "/metrics", None);
    assert_eq!(status, 200);
    assert!(head.contains("Content-Type: text/plain; version=0.0.4; charset=utf-8"), "{head}");
    promtool_check(&promtool, &text);
    for series in [
        "wirebench_queries_total{test=\"oltp_point_select\",shard=\"0\",env=\"ci\",kind=\"read\"}",
        "wirebench_connections{test=\"oltp_point_select\",shard=\"0\",env=\"ci\",state=\"active\"} 2",
        "wirebench_target_transactions_per_second{",
        "wirebench_late_starts_total{",
        "wirebench_latency_seconds_bucket{test=\"oltp_point_select\",shard=\"0\",env=\"ci\",le=\"0.005\"}",
        "wirebench_latency_seconds_bucket{test=\"oltp_point_select\",shard=\"0\",env=\"ci\",le=\"+Inf\"}",
    ] {
        assert!(text.contains(series), "{series} in\n{text}");
    }
    let (status, head, open) = http_get(address, "/metrics", Some("application/openmetrics-text;version=1.0.0"));
    assert_eq!(status, 200);
    assert!(head.contains("application/openmetrics-text; version=1.0.0"), "{head}");
    assert!(open.ends_with("# EOF\n") && open.contains("# TYPE wirebench_queries counter\n"), "{open}");
    assert!(open.contains("# UNIT wirebench_latency_seconds seconds\n"), "{open}");
    assert_eq!(http_get(address, "/nothing", None).0, 404);
    let (output, _) = run.finish();
    assert!(output.status.success());
}

/// Prometheus scraping the run each second sees `wirebench_queries_total`
/// rise over the run, to the report's total less at most what a scrape
/// and an interval can miss at the end.
#[test]
fn a_scraping_prometheus_sees_the_queries_grow_to_the_reports() {
    let port = free_port();
    let config = format!(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: wirebench\n    \
         static_configs:\n      - targets: ['127.0.0.1:{port}']\n"
    );
    let Some(prometheus) = Prometheus::start(&config, &[]) else { return };
    let listen = format!("--metrics-listen=127.0.0.1:{port}");
    let mut run = Running::start(&args(&["--time=8", "--report-interval=1", &listen, "run"]));
    run.wait_for("metrics on http://");
    // Prometheus scrapes a new target after a delay of its own choosing:
    // the run is long enough for several scrapes after the first.
    common::wait_until("prometheus's first scrape of the run", Duration::from_secs(60), || {
        prometheus.value("count(wirebench_queries_total)").is_some()
    });
    let (output, stderr) = run.finish();
    assert!(output.status.success(), "{stderr:?}");
    let report = common::text(&output.stdout);
    let (total, qps): (u64, f64) = (number_after(&report, "queries:"), qps_of(&report));
    let scraped = "sum(max_over_time(wirebench_queries_total{job=\"wirebench\"}[5m]))";
    let last = prometheus.value(scraped).expect("prometheus scraped the run");
    let samples = prometheus.value("count_over_time(wirebench_queries_total{kind=\"other\"}[5m])").unwrap_or(0.0);
    let rises = prometheus.value("changes(wirebench_queries_total{kind=\"other\"}[5m])").unwrap_or(0.0);
    assert!(samples >= 3.0 && rises >= 2.0, "{samples} samples, {rises} rises over an 8 s run");
    // The last scrape may come up to a scrape interval after the last
    // interval the endpoint published, which may be an interval before
    // the end.
    let missable = qps * 2.0;
    assert!(last <= total as f64, "scraped {last}, more than the report's {total}");
    assert!(last >= total as f64 - missable, "scraped {last}, the report's {total}, at {qps} qps");
}

fn qps_of(report: &str) -> f64 {
    let line = report.lines().find(|l| l.trim_start().starts_with("queries:")).unwrap();
    line.split('(').nth(1).unwrap().split_whitespace().next().unwrap().parse().unwrap()
}

/// A Prometheus with its remote-write receiver on stores the run's final
/// figures as pushed at the end: equal to the report's.
#[test]
fn a_remote_write_receiver_stores_the_reports_final_total() {
    let Some(prometheus) = Prometheus::start("global: {}\n", &["--web.enable-remote-write-receiver"]) else { return };
    let push = format!("--metrics-push=http://{}/api/v1/write", prometheus.address);
    let run = Running::start(&args(&["--time=3", &push, "--metrics-label=run=rw", "run"]));
    let (output, stderr) = run.finish();
    assert!(output.status.success(), "{stderr:?}");
    assert!(!stderr.iter().any(|l| l.contains("metrics-push") || l.contains("push")), "{stderr:?}");
    let report = common::text(&output.stdout);
    let (queries, transactions): (u64, u64) =
        (number_after(&report, "queries:"), number_after(&report, "transactions:"));
    let stored = prometheus.value("sum(wirebench_queries_total{run=\"rw\",job=\"wirebench\"})");
    assert_eq!(stored, Some(queries as f64), "{report}");
    let stored = prometheus.value("wirebench_transactions_total{run=\"rw\",test=\"oltp_point_select\",shard=\"0\"}");
    assert_eq!(stored, Some(transactions as f64));
    let histogram = prometheus.value("wirebench_latency_seconds_count{run=\"rw\"}");
    assert_eq!(histogram, Some(transactions as f64), "every event in the latency histogram");
}

/// A receiver that is not there: the run goes on to its report; the
/// failure is said once for the intervals and once for the last push.
#[test]
fn a_missing_receiver_is_said_and_never_stops_the_run() {
    let push = format!("--metrics-push=http://127.0.0.1:{}/api/v1/write", free_port());
    let run = Running::start(&args(&["--time=3", &push, "run"]));
    let (output, stderr) = run.finish();
    assert!(output.status.success(), "{stderr:?}");
    assert!(common::text(&output.stdout).contains("SQL statistics:"));
    let said: Vec<&String> = stderr.iter().filter(|l| l.contains("cannot connect")).collect();
    assert_eq!(said.len(), 2, "once for the intervals, once for the last push: {stderr:?}");
    assert!(said[1].contains("the last push did not land"), "{said:?}");
}

/// `wirebench fuzz` has series of its own (sessions, packets, states,
/// findings), clean by promtool too; here against the null server.
#[test]
fn fuzzing_has_its_own_series() {
    use wirebench::null_server::{NullServer, NullServerConfig};
    let Some(promtool) = tool("promtool", "prometheus") else { return };
    let config = NullServerConfig { tcp: Some("127.0.0.1:0".parse().unwrap()), ..NullServerConfig::default() };
    let server = NullServer::start(config).expect("the null server starts");
    let dir = common::ScratchDir::new("fuzz-metrics");
    let target = server.local_addr().unwrap();
    let mut run = Running::start(
        &[
            "fuzz",
            "--mysql-host=127.0.0.1",
            &format!("--mysql-port={}", target.port()),
            "--mysql-user=u",
            "--mysql-password=p",
            "--threads=2",
            "--time=3",
            &format!("--fuzz-dir={}", dir.0.display()),
            "--metrics-listen=127.0.0.1:0",
        ]
        .map(str::to_owned),
    );
    let address = run.address_of("metrics");
    let mut text = String::new();
    common::wait_until("the fuzzing run's first figures", Duration::from_secs(60), || {
        text = http_get(address, "/metrics", None).2;
        text.contains("wirebench_fuzz_sessions_total ")
    });
    for series in ["wirebench_fuzz_packets_total ", "wirebench_fuzz_states ", "wirebench_fuzz_findings_total 0"] {
        assert!(text.contains(series), "{series} in\n{text}");
    }
    promtool_check(&promtool, &text);
    let (output, stderr) = run.finish();
    assert!(output.status.success(), "{stderr:?}");
}

/// `search` lands each step as it ends: the receiver stores the steps by
/// verdict as the JSON lines give them, and `--report-html`'s page draws a
/// point per step. Against the null server serving one command at a time
/// for 4 ms, under a bound no rate holds, so the step cap ends it in 3
/// short steps.
#[test]
fn a_search_pushes_its_steps_and_pages_them() {
    use wirebench::null_server::{NullServer, NullServerConfig};
    let Some(prometheus) = Prometheus::start("global: {}\n", &["--web.enable-remote-write-receiver"]) else { return };
    let Some(chromium) = tool("chromium", "chromium") else { return };
    let config = NullServerConfig {
        tcp: Some("127.0.0.1:0".parse().unwrap()),
        answer_delay: Duration::from_millis(4),
        serial: true,
        ..NullServerConfig::default()
    };
    let server = NullServer::start(config).expect("the null server starts");
    let dir = common::ScratchDir::new("search-watch");
    let page = dir.0.join("search.html");
    let run = Running::start(
        &[
            "oltp_point_select",
            "--mysql-host=127.0.0.1",
            &format!("--mysql-port={}", server.local_addr().unwrap().port()),
            "--mysql-user=x",
            "--server-stats=off",
            "--threads=2",
            "--slo=99:1",
            "--search-steps=3",
            "--search-warmup=1",
            "--search-time=2",
            "--search-pause=0",
            "--format=json",
            &format!("--metrics-push=http://{}/api/v1/write", prometheus.address),
            "--metrics-label=run=search",
            &format!("--report-html={}", page.display()),
            "search",
        ]
        .map(str::to_owned),
    );
    let (output, stderr) = run.finish();
    let lines: Vec<serde_json::Value> =
        common::text(&output.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let steps: Vec<&str> =
        lines.iter().filter(|l| l["type"] == "search_step").map(|l| l["verdict"].as_str().unwrap()).collect();
    assert!(lines.iter().any(|l| l["type"] == "search") && !steps.is_empty(), "{lines:?} {stderr:?}");
    for verdict in ["pass", "fail", "client_bound"] {
        let ran = steps.iter().filter(|v| **v == verdict).count();
        let stored = prometheus.value(&format!("wirebench_search_steps_total{{run=\"search\",verdict=\"{verdict}\"}}"));
        assert_eq!(stored.unwrap_or(0.0), ran as f64, "{verdict} steps of {steps:?}");
    }
    let (dom, console) = chromium_dom(&chromium, &format!("file://{}", page.display()), &dir.0);
    assert!(console.is_empty(), "console messages: {console:?}");
    assert_eq!(page_lines(&dom, "search_step"), steps.len());
    let drawn = charts(&dom).into_iter().find(|(name, _)| name == "search");
    assert_eq!(drawn, Some(("search".to_owned(), steps.len())), "a point per step");
    assert!(dom.contains("data-totals=\"search\""), "the search's outcome as text");
}
