//! The live page (`--web`) and the HTML report (`--report-html`,
//! `wirebench report`) in headless Chromium with the network off: no
//! console message, the run's totals shown as text, and each chart drawn
//! with a point per interval of the run. Dry runs at a fixed rate
//! (`watch_tools::DRY`): no server needed.

use std::path::Path;
use std::time::Duration;

use crate::common::{self, number_after, ScratchDir};
use crate::watch_tools::{body_attribute, charts, chromium_dom, http_get, page_data, tool, RequestSpy, Running, DRY};

fn args(rest: &[&str]) -> Vec<String> {
    DRY.iter().chain(rest).map(|a| (*a).to_owned()).collect()
}

/// `1234567` as the page writes it: `1,234,567`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The page shows `transactions` in its totals, and draws each chart over
/// time with `intervals` points.
#[track_caller]
fn assert_page_shows(dom: &str, console: &[String], transactions: u64, intervals: usize) {
    assert!(console.is_empty(), "console messages: {console:?}");
    assert!(dom.contains("data-totals=\"run\""), "no totals: {dom}");
    let shown = format!(">{}<", grouped(transactions));
    assert!(dom.contains(&shown), "the report's {transactions} transactions not shown as {shown}");
    let over_time: Vec<(String, usize)> = charts(dom)
        .into_iter()
        .filter(|(name, _)| ["throughput", "latency", "errors", "connections"].contains(&name.as_str()))
        .collect();
    assert_eq!(over_time.len(), 4, "{:?}", charts(dom));
    for (name, points) in over_time {
        assert_eq!(points, intervals, "the {name} chart's points");
    }
    // uPlot drew into its canvas.
    assert!(dom.matches("<canvas").count() >= 4, "charts not drawn");
}

/// The live page, opened while the run goes on, has the intervals so far
/// and gets the rest as server-sent events until the run ends. The run is
/// ended (Ctrl-C) once the browser has opened the event stream, however
/// long it took to start on a loaded machine.
#[test]
fn the_live_page_follows_a_run_to_its_end() {
    let Some(chromium) = tool("chromium", "chromium") else { return };
    let dir = ScratchDir::new("live-page");
    let mut run = Running::start(&args(&["--time=300", "--report-interval=1", "--web=127.0.0.1:0", "run"]));
    let address = run.address_of("the live page");
    common::wait_until("the run's first interval", Duration::from_secs(60), || {
        http_get(address, "/metrics", None).2.contains("wirebench_transactions_total{")
    });
    let spy = RequestSpy::start(address, "/events");
    let url = format!("http://{}/", spy.address);
    let browser = {
        let (chromium, dir) = (chromium.clone(), dir.0.clone());
        std::thread::spawn(move || chromium_dom(&chromium, &url, &dir))
    };
    common::wait_until("the page to open its event stream", Duration::from_secs(170), || spy.seen());
    run.interrupt();
    let (dom, console) = browser.join().unwrap();
    let (output, stderr) = run.finish();
    let report = common::text(&output.stdout);
    assert!(report.contains("SQL statistics:"), "the report of what ran: {stderr:?}");
    let intervals = report.lines().filter(|l| l.starts_with("[ ") && l.contains(" thds: ")).count();
    let embedded: usize = body_attribute(&dom, "data-embedded").unwrap().parse().unwrap();
    let events: usize = body_attribute(&dom, "data-events").unwrap().parse().unwrap();
    assert_eq!(body_attribute(&dom, "data-ended").as_deref(), Some("true"), "the page saw the run end");
    assert!(embedded >= 1 && events > embedded, "{embedded} lines in the page as opened, {events} in the end");
    assert_eq!(events, intervals + 1, "each interval and the final result");
    assert_page_shows(&dom, &console, number_after(&report, "transactions:"), intervals);
}

/// `--report-html` without `--report-interval`: the page of the run's
/// seconds (the watch's own intervals), opened from disk with no network.
#[test]
fn the_report_opens_from_disk_with_no_network() {
    let Some(chromium) = tool("chromium", "chromium") else { return };
    let dir = ScratchDir::new("report-html");
    let page = dir.0.join("run.html");
    let run = Running::start(&args(&["--time=3", &format!("--report-html={}", page.display()), "run"]));
    let (output, stderr) = run.finish();
    assert!(output.status.success(), "{stderr:?}");
    assert!(stderr.iter().any(|l| l.contains("report written to")), "{stderr:?}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains("src=\"http") && !html.contains("href=\"http"), "nothing to fetch");
    let (dom, console) = chromium_dom(&chromium, &format!("file://{}", page.display()), &dir.0);
    let report = common::text(&output.stdout);
    let transactions: u64 = number_after(&report, "transactions:");
    // A point each second the report thread took, however many a loaded
    // machine let it take: one after the other, within the run, and none
    // counting an event twice.
    let seconds = page_data(&dom, "interval");
    assert!(!seconds.is_empty(), "no interval in the page");
    let mut until_s = 0.0;
    for interval in &seconds {
        let (end_s, length_s) = (interval["time_s"].as_f64().unwrap(), interval["interval_s"].as_f64().unwrap());
        assert!((end_s - length_s - until_s).abs() < 1e-3, "each interval from the last one's end: {interval}");
        until_s = end_s;
    }
    assert!(until_s <= number_after::<f64>(&report, "total time:") + 1e-3, "intervals past the run's end");
    let counted: u64 = seconds.iter().map(|i| i["counters"]["transactions"].as_u64().unwrap()).sum();
    assert!(counted <= transactions, "{counted} transactions in the intervals, {transactions} in the run");
    assert_page_shows(&dom, &console, transactions, seconds.len());
    assert_eq!(body_attribute(&dom, "data-ended").as_deref(), Some("true"));
}

/// `wirebench report` from saved JSON results: a run's, and the shards of
/// a run merged first.
#[test]
fn the_report_command_makes_the_page_from_saved_results() {
    let Some(chromium) = tool("chromium", "chromium") else { return };
    let dir = ScratchDir::new("report-command");
    let mut transactions = 0;
    let mut shards = Vec::new();
    // Side by side, as shards run.
    let runs: Vec<Running> = (0..2)
        .map(|shard| {
            let shard = format!("--shard={shard}/2");
            Running::start(&args(&["--time=3", "--report-interval=1", &shard, "--format=json", "run"]))
        })
        .collect();
    for (shard, run) in runs.into_iter().enumerate() {
        let (output, stderr) = run.finish();
        assert!(output.status.success(), "{stderr:?}");
        let file = dir.0.join(format!("shard-{shard}.json"));
        std::fs::write(&file, &output.stdout).unwrap();
        let lines: Vec<serde_json::Value> =
            common::text(&output.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        transactions += lines.last().unwrap()["counters"]["transactions"].as_u64().unwrap();
        shards.push((file, lines.iter().filter(|l| l["type"] == "interval").count()));
    }
    let (first, its_intervals) = &shards[0];
    let one = page_of(&dir.0, &[first], "one.html");
    let (dom, console) = chromium_dom(&chromium, &format!("file://{}", one.display()), &dir.0);
    assert!(console.is_empty(), "{console:?}");
    let points = format!("data-chart=\"throughput\" data-points=\"{its_intervals}\"");
    assert!(dom.contains(&points), "{points}: {:?}", charts(&dom));
    let merged = page_of(&dir.0, &[&shards[0].0, &shards[1].0], "merged.html");
    let (dom, console) = chromium_dom(&chromium, &format!("file://{}", merged.display()), &dir.0);
    // The shards' intervals on one grid: the slots `wirebench merge` puts
    // them in, however many seconds a loaded machine gave each shard.
    let merge = common::run_wirebench(&[
        "merge".as_ref(),
        "--format=json".as_ref(),
        shards[0].0.as_os_str(),
        shards[1].0.as_os_str(),
    ])
    .ok();
    let lines = merge.lines().filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok());
    let intervals = lines.filter(|l| l["type"] == "interval").count();
    let (a, b) = (shards[0].1, shards[1].1);
    // A slot has an interval of some shard (two of one shard whose report
    // thread woke late share one).
    assert!(1 <= intervals && intervals <= a + b, "{a} and {b} intervals in {intervals} slots: {merge}");
    assert_page_shows(&dom, &console, transactions, intervals);
    // Side by side: a line per file by connections, and the table.
    let compared = dir.0.join("compared.html");
    let out = common::wirebench()
        .arg("compare")
        .args([&shards[0].0, &shards[1].0])
        .arg(format!("--report-html={}", compared.display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", common::text(&out.stderr));
    let (dom, console) = chromium_dom(&chromium, &format!("file://{}", compared.display()), &dir.0);
    assert!(console.is_empty(), "{console:?}");
    assert_eq!(charts(&dom), [("by-connections-qps".to_owned(), 1), ("by-connections-p95".to_owned(), 1)]);
    assert!(dom.contains(">shard-0<") && dom.contains(">shard-1<"), "each file named: {dom}");
    let refused = common::wirebench().args(["report", "--html=x.html"]).output().unwrap();
    assert!(common::text(&refused.stderr).contains("report needs result files"), "{}", common::text(&refused.stderr));
}

fn page_of(dir: &Path, files: &[&Path], name: &str) -> std::path::PathBuf {
    let page = dir.join(name);
    let out = common::wirebench().arg("report").args(files).arg(format!("--html={}", page.display())).output().unwrap();
    assert!(out.status.success(), "{}", common::text(&out.stderr));
    page
}
