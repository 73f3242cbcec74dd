//! Watching a command: `/metrics` to scrape (`--metrics-listen`),
//! Prometheus remote write (`--metrics-push`), the live page (`--web`)
//! and the HTML report (`--report-html`, `wirebench report`).
//!
//! The run orchestration feeds a [`Watch`] what it already makes once per
//! interval and at each step's end (an interval's result and latencies, a
//! search step, a final result, a fuzzing run's progress): the watch never
//! reaches the event loops, and its threads (the HTTP servers', the
//! pusher's) only read what the report thread has published. Any command
//! that makes result lines plugs in the same way.
//!
//! Layer: above `results`, `server_stats` and `stats`, whose types it
//! reads; below the orchestration, which feeds it. It opens sockets of its
//! own (a server, a client to the receiver), never the database's.
//!
//! Files:
//! - `settings.rs`: its configuration ([`WatchSettings`]), which `cli`
//!   fills.
//! - `series.rs`: the series' values, updated per interval;
//!   `capture_series.rs`: replay's own and the recording proxy's;
//!   `latency_buckets.rs`: the latency histogram's buckets; `families.rs`:
//!   the series as metric families; `scoreboard.rs`: the last ones
//!   published, for the scrapes.
//! - `exposition.rs`: `/metrics`' text (OpenMetrics or 0.0.4);
//!   `remote_write.rs`: the remote-write request; `push_thread.rs`: its
//!   sending.
//! - `http_server.rs` and `http_request.rs`: the small HTTP server;
//!   `live_feed.rs`: the live page's events.
//! - `page.rs`: the page (its HTML, script and style beside it in the
//!   page folder, and uPlot, vendored from npm in page/vendor/uplot).

mod capture_series;
mod exposition;
mod families;
mod http_request;
mod http_server;
mod latency_buckets;
mod live_feed;
mod page;
mod push_thread;
mod remote_write;
mod scoreboard;
mod series;
mod settings;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

pub use http_server::HttpServer;
pub use page::{page_html, PageContent, PageSource};
pub use push_thread::PushFailure;
pub use series::{FuzzFigures, IntervalTick};
pub use settings::{LabelError, PushTarget, PushUrlError, ReportOptions, SeriesLabel, WatchSettings, RESERVED_LABELS};

use families::CommonLabels;
use http_server::{LivePage, Site};
use live_feed::LiveFeed;
use push_thread::Pusher;
use scoreboard::Scoreboard;
use series::SeriesValues;

use crate::results::search_record::SearchStepResult;
use crate::results::{ResultLine, RunInfo};
use crate::stats::RelayCounts;

/// Writes one line on standard error (the orchestration's).
pub type Say = fn(&str);

/// Why watching cannot start or its report cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    #[error(
        "{option}={address}: cannot listen there ({source}): another process may hold the port; choose another, \
         or :0 for any free one"
    )]
    Bind { option: &'static str, address: SocketAddr, source: std::io::Error },
    #[error("cannot start a thread for {what}: {source}")]
    Thread { what: &'static str, source: std::io::Error },
    #[error("--report-html: cannot write {}: {source}", .path.display())]
    WriteReport { path: PathBuf, source: std::io::Error },
}

/// What is watched: the labels every series carries, and the page's title.
#[derive(Debug, Clone, Default)]
pub struct WatchedCommand {
    /// The test's (or script's) name; none for `fuzz`.
    pub test: Option<String>,
    /// `--shard=I/N`'s I and N; none for a command that has no shards.
    pub shard: Option<(u32, u32)>,
    /// The page's title, until the server's version is known.
    pub title: String,
    /// This host's name, the `instance` of pushed series.
    pub host: String,
}

/// A command being watched.
pub struct Watch {
    settings: WatchSettings,
    scoreboard: Arc<Scoreboard>,
    push_labels: CommonLabels,
    series: Mutex<SeriesValues>,
    feed: Option<Arc<LiveFeed>>,
    heading: Arc<Mutex<(String, String)>>,
    /// Taken (and stopped) by [`finish`](Watch::finish).
    servers: Mutex<Vec<HttpServer>>,
    /// Taken by [`finish`](Watch::finish): a feed after it pushes nothing.
    pusher: Mutex<Option<Pusher>>,
    last_push_ms: Mutex<i64>,
    shards: u32,
    /// `finish` ran.
    finished: Mutex<bool>,
}

/// How watching ended: the pushes that landed, and where the report is.
#[derive(Debug)]
pub struct WatchEnding {
    /// The last push's outcome, with `--metrics-push`.
    pub pushed: Option<Result<u64, PushFailure>>,
    /// Where it went (without credentials).
    pub push_url: Option<String>,
    /// `--report-html`'s file, once written; none when the command ended
    /// before it had any figure to show.
    pub report: Option<PathBuf>,
}

impl Watch {
    /// Binds the servers and starts the pusher; `None` when `settings`
    /// asks for nothing.
    pub fn start(settings: &WatchSettings, command: WatchedCommand, say: Say) -> Result<Option<Watch>, WatchError> {
        if !settings.any() {
            return Ok(None);
        }
        let mut common = Vec::new();
        if let Some(test) = &command.test {
            common.push(("test".to_owned(), test.clone()));
        }
        if let Some((index, _)) = command.shard {
            common.push(("shard".to_owned(), index.to_string()));
        }
        common.extend(settings.labels.iter().map(|l| (l.name.clone(), l.value.clone())));
        let push_labels = CommonLabels(with_push_labels(&common, &command.host));
        let scoreboard = Arc::new(Scoreboard::new(CommonLabels(common)));
        let feed = (settings.web.is_some() || settings.report_html.is_some()).then(|| Arc::new(LiveFeed::default()));
        let heading = Arc::new(Mutex::new((command.title.clone(), String::new())));
        let watch = Watch {
            settings: settings.clone(),
            scoreboard,
            push_labels,
            series: Mutex::new(SeriesValues::default()),
            feed,
            heading,
            servers: Mutex::new(Vec::new()),
            pusher: Mutex::new(None),
            last_push_ms: Mutex::new(0),
            shards: command.shard.map_or(1, |(_, n)| n),
            finished: Mutex::new(false),
        };
        *lock(&watch.servers) = watch.start_servers()?;
        if let Some(target) = &settings.push {
            let pusher = Pusher::start(target.clone(), say)
                .map_err(|source| WatchError::Thread { what: "--metrics-push", source })?;
            *lock(&watch.pusher) = Some(pusher);
        }
        Ok(Some(watch))
    }

    fn start_servers(&self) -> Result<Vec<HttpServer>, WatchError> {
        let page = |feed: &Arc<LiveFeed>| LivePage { feed: Arc::clone(feed), heading: Arc::clone(&self.heading) };
        let web = self.settings.web.zip(self.feed.as_ref());
        let mut binds: Vec<(&'static str, SocketAddr, Option<LivePage>)> = Vec::new();
        if let Some((address, feed)) = web {
            binds.push(("--web", address, Some(page(feed))));
        }
        match self.settings.listen {
            Some(address) if web.map(|w| w.0) != Some(address) => binds.push(("--metrics-listen", address, None)),
            _ => {}
        }
        let mut servers = Vec::new();
        for (option, address, page) in binds {
            let site = Site { scoreboard: Arc::clone(&self.scoreboard), page };
            let server =
                HttpServer::start(address, site).map_err(|source| WatchError::Bind { option, address, source })?;
            servers.push(server);
        }
        Ok(servers)
    }

    /// Where the servers listen, with the ports the system chose, and
    /// whether each serves the live page (`--web`'s, first) or only
    /// `/metrics`.
    pub fn addresses(&self) -> Vec<(SocketAddr, bool)> {
        let web = self.settings.web.is_some();
        lock(&self.servers).iter().enumerate().map(|(i, s)| (s.address(), web && i == 0)).collect()
    }

    fn series(&self) -> MutexGuard<'_, SeriesValues> {
        self.series.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The run's clock has started: what it runs against.
    pub fn started(&self, info: &RunInfo) {
        self.series().set_info(info.server_version.as_deref(), self.shards);
        let server = info.server_version.as_deref().map(|v| format!(" on {v}")).unwrap_or_default();
        let label = info.label.as_deref().map(|l| format!(" ({l})")).unwrap_or_default();
        let subtitle = format!("{}{server}{label}, from {} at {}", info.test, info.host, info.start_time);
        self.heading.lock().unwrap_or_else(PoisonError::into_inner).1 = subtitle;
        self.publish();
    }

    /// What no interval had shown when the run ended: counted, not drawn.
    pub fn tail(&self, tick: IntervalTick<'_>) {
        self.series().add_tail(tick);
        self.publish();
    }

    /// One complete interval.
    pub fn interval(&self, tick: IntervalTick<'_>) {
        self.series().add_interval(tick);
        if let Some(feed) = &self.feed {
            let record = crate::results::IntervalResult { recorded: None, ..tick.record.clone() };
            feed.publish(line_json(&ResultLine::Interval(record)));
        }
        self.publish();
    }

    /// A result line other than an interval: a final result, a sweep's
    /// table, a search's step or summary.
    pub fn line(&self, line: &ResultLine) {
        if let ResultLine::SearchStep(step) = line {
            self.search_step(step);
        }
        if let ResultLine::Replay(result) = line {
            self.series().set_replay_result(result);
            self.publish();
        }
        if let Some(feed) = &self.feed {
            let line = match line {
                ResultLine::Final(result) => {
                    ResultLine::Final(Box::new(crate::results::RunResult { recorded: None, ..(**result).clone() }))
                }
                other => other.clone(),
            };
            feed.publish(line_json(&line));
        }
    }

    fn search_step(&self, step: &SearchStepResult) {
        self.series().add_search_step(step);
        self.publish();
    }

    /// A fuzzing run's progress, `elapsed_s` into it.
    pub fn fuzz(&self, figures: FuzzFigures, elapsed_s: f64) {
        self.series().set_fuzz(figures);
        if let Some(feed) = &self.feed {
            let line = serde_json::json!({
                "type": "fuzz",
                "unix_s": unix_now_ms() as f64 / 1e3,
                "elapsed_s": elapsed_s,
                "sessions": figures.sessions,
                "packets": figures.packets,
                "withheld": figures.withheld,
                "states": figures.states,
                "corpus": figures.corpus,
                "checks": figures.checks,
                "findings": figures.findings,
            });
            feed.publish(line.to_string());
        }
        self.publish();
    }

    /// A replay, or a replay search's step, starts at `speed` (`None`: as
    /// fast as it can).
    pub fn replay_speed(&self, speed: Option<f64>) {
        self.series().set_replay_speed(speed);
        self.publish();
    }

    /// The recording proxy's counts, `elapsed_s` into the recording.
    pub fn record(&self, counts: &RelayCounts, elapsed_s: f64) {
        self.series().set_record(counts, elapsed_s);
        if let Some(feed) = &self.feed {
            feed.publish(record_line(counts, elapsed_s));
        }
        self.publish();
    }

    /// The families to the scoreboard, and to the receiver.
    fn publish(&self) {
        let families = self.series().families();
        if let Some(pusher) = lock(&self.pusher).as_ref() {
            pusher.send(remote_write::write_request(&families, &self.push_labels, self.push_time_ms()));
        }
        self.scoreboard.publish(families);
    }

    /// Now, in ms, after the last push's time: a series' samples must
    /// have rising timestamps.
    fn push_time_ms(&self) -> i64 {
        let mut last = self.last_push_ms.lock().unwrap_or_else(PoisonError::into_inner);
        *last = unix_now_ms().max(*last + 1);
        *last
    }

    /// The command has ended: the last push (waited for), the report
    /// written, the live page told, the servers stopped. Once: a second
    /// call does nothing (a feed that still holds the watch, such as a
    /// fuzzing run's last progress, may outlive the command).
    pub fn finish(&self) -> Result<WatchEnding, WatchError> {
        let push_url = self.settings.push.as_ref().map(|p| p.shown.clone());
        if std::mem::replace(&mut *lock(&self.finished), true) {
            return Ok(WatchEnding { pushed: None, push_url, report: None });
        }
        let families = self.series().families();
        let pusher = lock(&self.pusher).take();
        let pushed = pusher.map(|pusher| {
            pusher.finish(remote_write::write_request(&families, &self.push_labels, self.push_time_ms()))
        });
        self.scoreboard.publish(families);
        if let Some(feed) = &self.feed {
            feed.end();
        }
        let report = match &self.settings.report_html {
            Some(path) => self.write_report(path)?,
            None => None,
        };
        for mut server in std::mem::take(&mut *lock(&self.servers)) {
            server.finish();
        }
        Ok(WatchEnding { pushed, push_url, report })
    }

    /// The report, unless there is nothing to show.
    fn write_report(&self, path: &PathBuf) -> Result<Option<PathBuf>, WatchError> {
        let (title, subtitle) = self.heading.lock().unwrap_or_else(PoisonError::into_inner).clone();
        let lines = self.feed.as_ref().map(|f| f.all()).unwrap_or_default();
        if lines.is_empty() {
            return Ok(None);
        }
        let content =
            PageContent { title, subtitle, live: false, sources: vec![PageSource { label: String::new(), lines }] };
        std::fs::write(path, page_html(&content))
            .map_err(|source| WatchError::WriteReport { path: path.clone(), source })?;
        Ok(Some(path.clone()))
    }

    /// `--report-html`'s file, if asked for.
    pub fn report_path(&self) -> Option<&PathBuf> {
        self.settings.report_html.as_ref()
    }
}

/// The labels of pushed series: a scrape's target adds `job` and
/// `instance`; a push has none, so it names them itself unless
/// `--metrics-label` did.
fn with_push_labels(common: &[(String, String)], host: &str) -> Vec<(String, String)> {
    let mut labels = common.to_vec();
    for (name, value) in [("job", "wirebench"), ("instance", host)] {
        if !labels.iter().any(|(n, _)| n == name) {
            labels.push((name.to_owned(), value.to_owned()));
        }
    }
    labels
}

/// A lock of the watch's: its data stays usable after a panic elsewhere.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn line_json(line: &ResultLine) -> String {
    serde_json::to_string(line).unwrap_or_else(|e| format!("{{\"type\":\"unwritable\",\"error\":\"{e}\"}}"))
}

/// The live page's point of a recording: its figures so far.
fn record_line(counts: &RelayCounts, elapsed_s: f64) -> String {
    let answered = &counts.answered;
    let time = &counts.answer_time;
    let ms = |ns: u64| ns as f64 / 1e6;
    let answer_ms = (time.count() > 0).then(|| {
        serde_json::json!({
            "p50": ms(time.percentile_ns(50.0)),
            "p99": ms(time.percentile_ns(99.0)),
            "max": ms(time.max_ns()),
            "avg": time.mean_ns() / 1e6,
        })
    });
    let line = serde_json::json!({
        "type": "record",
        "unix_s": unix_now_ms() as f64 / 1e3,
        "elapsed_s": elapsed_s,
        "commands": counts.commands_total(),
        "reads": answered.reads,
        "writes": answered.writes,
        "others": answered.others,
        "errors": answered.errors,
        "connections_open": counts.connections_open(),
        "connections_opened": counts.connections_opened,
        "upstream_failures": counts.upstream_failures,
        "bytes": counts.capture_bytes,
        "answer_ms": answer_ms,
    });
    line.to_string()
}

fn unix_now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    /// The Grafana dashboard in deploy/ asks only for series wirebench has.
    #[test]
    fn the_dashboard_names_only_series_that_exist() {
        let dashboard: serde_json::Value =
            serde_json::from_str(include_str!("../../deploy/grafana/wirebench-dashboard.json")).unwrap();
        let mut families = super::series::tests::every_series().families();
        families.extend(super::capture_series::tests::every_capture_family());
        let known: BTreeSet<String> =
            families.iter().flat_map(|f| f.samples.iter().map(move |s| format!("{}{}", f.name, s.suffix))).collect();
        let mut asked = BTreeSet::new();
        for panel in dashboard["panels"].as_array().unwrap() {
            for target in panel["targets"].as_array().into_iter().flatten() {
                let expr = target["expr"].as_str().unwrap();
                for (at, _) in expr.match_indices("wirebench_") {
                    let name: String =
                        expr[at..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                    asked.insert(name);
                }
            }
        }
        assert!(asked.len() > 20, "{asked:?}");
        let unknown: Vec<&String> = asked.difference(&known).collect();
        assert!(unknown.is_empty(), "the dashboard asks for series wirebench does not have: {unknown:?}");
    }
}
