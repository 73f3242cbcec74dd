//! `wirebench record` and `wirebench replay` watched as a run is, against
//! the null server: promtool finds each command's `/metrics` clean, a
//! Prometheus remote-write receiver stores the final figures equal to the
//! command's own (the capture's commands, the replay report's), and
//! Chromium opens a replay's live page and its HTML report (from disk,
//! network off) with the totals shown and the charts drawn. Each command
//! is ended by Ctrl-C once the test has seen what it waits for, however
//! slow the machine.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use wirebench::null_server::{NullServer, NullServerConfig};
use wirebench_capture::format::{
    Answer, BlockSettings, CaptureHeader, CaptureWriter, Command, ConnectionOpen, Record, Source,
};
use wirebench_protocol::response::AnswerKind;

use crate::common::{self, ScratchDir};
use crate::metrics_prometheus::promtool_check;
use crate::watch_tools::{body_attribute, charts, chromium_dom, http_get, tool, Prometheus, RequestSpy, Running};

fn null_server() -> NullServer {
    let config = NullServerConfig { tcp: Some("127.0.0.1:0".parse().unwrap()), ..NullServerConfig::default() };
    NullServer::start(config).expect("the null server starts")
}

/// The receiver's value of `expression`, none when it holds no sample.
fn stored(prometheus: &Prometheus, expression: &str) -> f64 {
    prometheus.value(expression).unwrap_or_else(|| panic!("the receiver holds no {expression}"))
}

/// `/metrics` once it has `series`, checked clean by promtool.
#[track_caller]
fn scrape_when(address: std::net::SocketAddr, series: &str, promtool: &Path) -> String {
    let mut text = String::new();
    common::wait_until(series, Duration::from_secs(120), || {
        text = http_get(address, "/metrics", None).2;
        text.contains(series)
    });
    promtool_check(promtool, &text);
    text
}

/// The proxy's series while an application's traffic goes through it,
/// and its last push equal to what it wrote: the capture's commands and
/// bytes as its summary gives them.
#[test]
fn record_is_watched_and_lands_the_captures_figures() {
    let Some(promtool) = tool("promtool", "prometheus") else { return };
    let Some(prometheus) = Prometheus::start("global: {}\n", &["--web.enable-remote-write-receiver"]) else { return };
    let server = null_server();
    let dir = ScratchDir::new("record-watch");
    let out = dir.0.join("app.wbc");
    let mut record = Running::start(&[
        "record".to_owned(),
        "--listen=127.0.0.1:0".to_owned(),
        format!("--upstream={}", server.local_addr().unwrap()),
        format!("--out={}", out.display()),
        "--metrics-listen=127.0.0.1:0".to_owned(),
        format!("--metrics-push=http://{}/api/v1/write", prometheus.address),
        "--metrics-label=run=record".to_owned(),
    ]);
    let metrics = record.address_of("metrics");
    let listening = record.wait_for("wirebench record: listening on ");
    let port = listening.split("127.0.0.1:").nth(1).unwrap().split(|c: char| !c.is_ascii_digit()).next().unwrap();
    let client = common::run_wirebench(&[
        "oltp_point_select",
        "--mysql-host=127.0.0.1",
        &format!("--mysql-port={port}"),
        "--mysql-user=app",
        "--server-stats=off",
        "--threads=2",
        "--rate=200",
        "--time=2",
        "run",
    ]);
    client.ok();
    // The recording thread hands its counts over at each block it seals.
    let text = scrape_when(metrics, "command=\"COM_STMT_EXECUTE\"} ", &promtool);
    for series in [
        "wirebench_queries_total{run=\"record\",kind=\"read\"}",
        "wirebench_record_answer_seconds_bucket{run=\"record\",le=\"0.005\"}",
    ] {
        assert!(text.contains(series), "{series} in\n{text}");
    }
    record.interrupt();
    let (output, stderr) = record.finish();
    assert!(output.status.success(), "{stderr:?}");
    let summary = common::text(&output.stdout);
    let commands: u64 = summary.split("commands: ").nth(1).and_then(|r| r.split(';').next()?.parse().ok()).unwrap();
    let bytes: u64 = summary.split(" bytes (").next().and_then(|r| r.rsplit(' ').next()?.parse().ok()).unwrap();
    assert!(commands > 100, "{summary}");
    assert_eq!(stored(&prometheus, "sum(wirebench_record_commands_total{run=\"record\"})"), commands as f64);
    assert_eq!(stored(&prometheus, "wirebench_record_written_bytes_total{run=\"record\"}"), bytes as f64);
    assert_eq!(bytes, std::fs::metadata(&out).unwrap().len(), "{summary}");
    let answered = stored(&prometheus, "wirebench_record_answer_seconds_count{run=\"record\"}");
    assert!(answered > 100.0 && answered <= commands as f64, "{answered} answers timed of {commands} commands");
    assert_eq!(stored(&prometheus, "wirebench_record_connections{run=\"record\"}"), 0.0, "every one closed");
}

/// A capture of one connection sending `SELECT n` every 20 ms for ten
/// minutes, each answered with a row 1 ms later.
fn steady_capture(dir: &Path) -> PathBuf {
    const MS: u64 = 1_000_000;
    let t0 = 1_790_000_000_000 * MS;
    let mut records = vec![Record::Open(ConnectionOpen {
        at_ns: t0,
        conn: 1,
        user: Some(Cow::Borrowed(b"app")),
        ..ConnectionOpen::default()
    })];
    for n in 0..30_000u64 {
        let at_ns = t0 + n * 20 * MS;
        let payload = Cow::Owned(format!("\x03SELECT {n}").into_bytes());
        records.push(Record::Command(Command { at_ns, conn: 1, answer_follows: true, payload, ..Command::default() }));
        records.push(Record::Answer(Answer {
            at_ns: at_ns + MS,
            conn: 1,
            kind: Some(AnswerKind::ResultSet),
            result_sets: Some(1),
            columns: Some(1),
            rows: Some(1),
            ..Answer::default()
        }));
    }
    let header = CaptureHeader::new(Source::Record, "watch_capture.rs");
    let mut writer = CaptureWriter::create(Vec::new(), &header, BlockSettings::default()).unwrap();
    for record in &records {
        writer.append(record).unwrap();
    }
    let path = dir.join("steady.wbc");
    std::fs::write(&path, writer.finish().unwrap()).unwrap();
    path
}

/// A replay with every watch at once: promtool finds its `/metrics` clean,
/// the live page follows it in Chromium to its end, the receiver stores
/// the replay report's commands and differences, and the HTML report
/// (from disk, and from its JSON by `wirebench report`) shows its totals
/// and draws its charts.
#[test]
fn a_replay_is_watched_paged_and_reported() {
    let Some(promtool) = tool("promtool", "prometheus") else { return };
    let Some(chromium) = tool("chromium", "chromium") else { return };
    let Some(prometheus) = Prometheus::start("global: {}\n", &["--web.enable-remote-write-receiver"]) else { return };
    let server = null_server();
    let dir = ScratchDir::new("replay-watch");
    let capture = steady_capture(&dir.0);
    let page = dir.0.join("replay.html");
    let mut replay = Running::start(&[
        "replay".to_owned(),
        capture.display().to_string(),
        "--mysql-host=127.0.0.1".to_owned(),
        format!("--mysql-port={}", server.local_addr().unwrap().port()),
        "--mysql-user=app".to_owned(),
        "--server-stats=off".to_owned(),
        "--format=json".to_owned(),
        "--report-interval=1".to_owned(),
        "--web=127.0.0.1:0".to_owned(),
        format!("--metrics-push=http://{}/api/v1/write", prometheus.address),
        "--metrics-label=run=replay".to_owned(),
        format!("--report-html={}", page.display()),
    ]);
    let web = replay.address_of("the live page");
    let text = scrape_when(web, "wirebench_transactions_total{", &promtool);
    assert!(text.contains("wirebench_replay_target_speed{test=\"replay\",shard=\"0\",run=\"replay\"} 1"), "{text}");
    let spy = RequestSpy::start(web, "/events");
    let url = format!("http://{}/", spy.address);
    let browser = {
        let (chromium, dir) = (chromium.clone(), dir.0.clone());
        std::thread::spawn(move || chromium_dom(&chromium, &url, &dir))
    };
    common::wait_until("the page to open its event stream", Duration::from_secs(170), || spy.seen());
    replay.interrupt();
    let (live, console) = browser.join().unwrap();
    let (output, stderr) = replay.finish();
    let stdout = common::text(&output.stdout);
    let lines: Vec<Value> = stdout.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let result = lines.iter().find(|l| l["type"] == "replay").unwrap_or_else(|| panic!("{stdout}\n{stderr:?}"));
    let commands = result["commands"].as_u64().unwrap();
    assert!(commands > 0, "{result}");
    assert!(console.is_empty(), "console messages: {console:?}");
    assert_eq!(body_attribute(&live, "data-ended").as_deref(), Some("true"), "the page saw the replay end");
    assert_replay_shown(&live, commands);

    let at = |name: &str| format!("{name}{{run=\"replay\",test=\"replay\"}}");
    assert_eq!(stored(&prometheus, &at("wirebench_replay_commands_total")), commands as f64);
    assert_eq!(stored(&prometheus, "sum(wirebench_queries_total{run=\"replay\"})"), commands as f64);
    let differences = result["differences"].as_u64().unwrap() as f64;
    assert_eq!(stored(&prometheus, "sum(wirebench_replay_differences_total{run=\"replay\"})"), differences);
    assert_eq!(stored(&prometheus, &at("wirebench_latency_seconds_count")), commands as f64);

    let intervals = lines.iter().filter(|l| l["type"] == "interval").count();
    let (report, console) = chromium_dom(&chromium, &format!("file://{}", page.display()), &dir.0);
    assert!(console.is_empty(), "console messages: {console:?}");
    assert_replay_shown(&report, commands);
    let throughput = charts(&report).into_iter().find(|(name, _)| name == "throughput");
    assert_eq!(throughput, Some(("throughput".to_owned(), intervals)), "a point per interval");

    let saved = dir.0.join("replay.json");
    std::fs::write(&saved, &output.stdout).unwrap();
    let again = dir.0.join("again.html");
    let made = common::run_wirebench(&[
        "report".to_owned(),
        saved.display().to_string(),
        format!("--html={}", again.display()),
    ]);
    made.ok();
    let (dom, console) = chromium_dom(&chromium, &format!("file://{}", again.display()), &dir.0);
    assert!(console.is_empty(), "console messages: {console:?}");
    assert_replay_shown(&dom, commands);
}

/// The replay's totals as text (its commands, as the page groups digits),
/// its statement table, and charts drawn into their canvases.
#[track_caller]
fn assert_replay_shown(dom: &str, commands: u64) {
    assert!(dom.contains("data-totals=\"replay\""), "no replay totals: {dom}");
    let grouped = commands
        .to_string()
        .as_bytes()
        .rchunks(3)
        .rev()
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect::<Vec<_>>()
        .join(",");
    assert!(dom.contains(&format!(">{grouped}<")), "the replay's {commands} commands not shown as {grouped}");
    assert!(dom.contains("data-table=\"replay-statements\"") && dom.contains(">select ?<"), "the statement table");
    assert!(dom.matches("<canvas").count() >= 3, "charts not drawn");
}

/// `replay FILE search` lands each step as `search` does: the receiver
/// stores the steps by verdict as the JSON lines give them.
#[test]
fn a_replay_search_pushes_its_steps() {
    let Some(prometheus) = Prometheus::start("global: {}\n", &["--web.enable-remote-write-receiver"]) else { return };
    let server = null_server();
    let dir = ScratchDir::new("replay-search-watch");
    let capture = steady_capture(&dir.0);
    let run = Running::start(&[
        "replay".to_owned(),
        capture.display().to_string(),
        "search".to_owned(),
        "--mysql-host=127.0.0.1".to_owned(),
        format!("--mysql-port={}", server.local_addr().unwrap().port()),
        "--mysql-user=app".to_owned(),
        "--server-stats=off".to_owned(),
        "--slo=99:1000".to_owned(),
        "--search-steps=3".to_owned(),
        "--search-time=1".to_owned(),
        "--search-warmup=0".to_owned(),
        "--search-pause=0".to_owned(),
        "--format=json".to_owned(),
        format!("--metrics-push=http://{}/api/v1/write", prometheus.address),
        "--metrics-label=run=replay-search".to_owned(),
    ]);
    let (output, stderr) = run.finish();
    let lines: Vec<Value> = common::text(&output.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let steps: Vec<&str> =
        lines.iter().filter(|l| l["type"] == "search_step").map(|l| l["verdict"].as_str().unwrap()).collect();
    assert!(lines.iter().any(|l| l["type"] == "search") && !steps.is_empty(), "{lines:?} {stderr:?}");
    for verdict in ["pass", "fail", "client_bound"] {
        let ran = steps.iter().filter(|v| **v == verdict).count();
        let query = format!("wirebench_search_steps_total{{run=\"replay-search\",verdict=\"{verdict}\"}}");
        assert_eq!(stored(&prometheus, &query), ran as f64, "{verdict} steps of {steps:?}");
    }
}
