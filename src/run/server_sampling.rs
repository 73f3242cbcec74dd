//! `--server-stats` in a run: the sampler opened beside the run's
//! connections, its first sample taken just before the clock starts, and
//! what the report thread does with its samples.

use std::collections::BTreeSet;
use std::sync::Mutex;
use std::time::Duration;

use super::output::{stderr_line, Console};
use super::RunError;
use crate::cli::{Bench, Personality};
use crate::client::ConnectOptions;
use crate::server_stats::{
    ClientCounts, ConsistencyCheck, EdgeCut, RunStatements, Sampler, SamplerConfig, SamplerError, SamplingMode,
    ServerFigures, ServerLocation, ServerResult, ServerWatch,
};
use crate::stats::Counters;

/// How long an interval's sample may take: its line waits for it.
const INTERVAL_WAIT: Duration = Duration::from_secs(1);
/// How long the samples that move the totals' start, and the last one,
/// may take.
const EDGE_WAIT: Duration = Duration::from_secs(5);

/// The server's sampling, as the report thread keeps it.
pub(super) struct ServerSampling {
    watch: ServerWatch,
    /// Whether the run's connections all go to the sampled server: else
    /// its `Questions` cannot be checked against the run's count.
    one_server: bool,
    /// A run split over shards: only the whole run's counts divide the
    /// server's work (`wirebench merge`).
    sharded: bool,
    /// A failed sample was said: later ones are not.
    said_failure: bool,
    interval_wait: Duration,
}

/// The sampler of `bench`'s run logged in as `login` gives (the run's
/// first connection's login), before `--start-at` is waited for; none
/// when the run does not sample. Asked for, a sampler that cannot start
/// ends the command; on by default, the run goes on without.
pub(super) fn open_sampler(bench: &Bench, login: impl FnOnce() -> ConnectOptions) -> Result<Option<Sampler>, RunError> {
    let options = bench.server_stats;
    if !options.mode.samples() || bench.mysql.dry_run {
        return Ok(None);
    }
    let config = SamplerConfig { connect: login(), pid: options.pid };
    match Sampler::start(config) {
        Ok(sampler) => {
            say_where(bench, &sampler);
            Ok(Some(sampler))
        }
        Err(e) => sampler_given_up(bench, e),
    }
}

/// The first sample, just before the clock starts: the sampling of the
/// run, or none (see [`open_sampler`]).
pub(super) fn start_sampling(bench: &Bench, sampler: Option<Sampler>) -> Result<Option<ServerSampling>, RunError> {
    let Some(sampler) = sampler else { return Ok(None) };
    let general = &bench.general;
    let every_s = general.report_interval.filter(|&i| i > 0);
    let shard = (general.shard.index(), general.shard.count());
    let watch = match ServerWatch::start(sampler, bench.server_stats.mode, every_s, shard) {
        Ok(watch) => watch,
        Err(e) => return sampler_given_up(bench, e),
    };
    let interval_wait = every_s.map_or(INTERVAL_WAIT, |s| INTERVAL_WAIT.min(Duration::from_millis(500 * u64::from(s))));
    Ok(Some(ServerSampling {
        watch,
        one_server: servers(bench).len() == 1,
        sharded: !general.shard.is_whole(),
        said_failure: false,
        interval_wait,
    }))
}

/// Where the run's connections go.
fn servers(bench: &Bench) -> BTreeSet<String> {
    let threads = bench.general.threads.max(1) as usize;
    (0..threads.min(4096)).map(|n| bench.mysql.servers.connect_to(n).to_string()).collect()
}

fn sampler_given_up<T>(bench: &Bench, error: SamplerError) -> Result<Option<T>, RunError> {
    if bench.server_stats.asked {
        return Err(error.into());
    }
    say_once(format!("wirebench: {error}; the run goes on without the server's figures"));
    Ok(None)
}

/// On stderr, once: what the sampler can read of this server, and which
/// server it is when the run has several. Invoked as sysbench, only when
/// `--server-stats` was asked for.
fn say_where(bench: &Bench, sampler: &Sampler) {
    if Console::current().personality == Personality::Sysbench && !bench.server_stats.asked {
        return;
    }
    let endpoint = &sampler.endpoint;
    match sampler.location {
        ServerLocation::Elsewhere => say_once(format!(
            "wirebench: --server-stats: {endpoint} is on another host: only its status counters are sampled (no CPU \
             time, memory or context switches); --server-pid=PID names this host's own server behind a port forward"
        )),
        ServerLocation::ThisHostUnfound => say_once(format!(
            "wirebench: --server-stats: {endpoint} is on this host, but its process could not be found through the \
             socket (another user's?): only its status counters are sampled; --server-pid=PID names it"
        )),
        ServerLocation::ThisHost | ServerLocation::GivenPid => {}
    }
    let servers = servers(bench);
    if servers.len() > 1 {
        let others: Vec<&String> = servers.iter().filter(|s| *s != endpoint).collect();
        let others: Vec<&str> = others.iter().map(|s| s.as_str()).collect();
        say_once(format!(
            "wirebench: --server-stats samples {endpoint} only; the run's connections also go to {}: the check of its \
             Questions against the run's statements is left out",
            others.join(", ")
        ));
    }
}

/// `line` on stderr unless this process said it already: a search's
/// steps and a sweep's runs each start sampling, and what the sampler found
/// at the start of the first is news only once.
fn say_once(line: String) {
    static SAID: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let mut said = SAID.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if !said.contains(&line) {
        stderr_line(&line);
        said.push(line);
    }
}

impl ServerSampling {
    pub(super) fn mode(&self) -> SamplingMode {
        self.watch.mode()
    }

    /// An interval begins to end: its sample is asked for now, and read
    /// by [`interval`](Self::interval) once the loops' data is collected.
    pub(super) fn ask(&mut self) {
        self.watch.ask();
    }

    /// The interval's figures, with the run's counts of it.
    pub(super) fn interval(&mut self, counters: &Counters) -> Option<ServerResult> {
        let counts = ClientCounts { queries: counters.queries(), transactions: counters.events };
        match self.watch.interval(self.interval_wait) {
            Ok(delta) => Some(ServerResult::interval(delta, (!self.sharded).then_some(counts))),
            Err(e) => {
                self.say_failure(&format!("{e}: this interval has no server figures"));
                None
            }
        }
    }

    /// `--warmup-time` is over, the loops' counts cut at `cut`.
    pub(super) fn end_warmup(&mut self, cut: EdgeCut) {
        if let Err(e) = self.watch.end_warmup(EDGE_WAIT, cut) {
            self.say_failure(&format!("{e} at the end of the warm-up: the run has no server totals"));
        }
    }

    /// A checkpoint, the loops' counts cut at `cut`: the totals start
    /// again.
    pub(super) fn checkpoint(&mut self, cut: EdgeCut) {
        if let Err(e) = self.watch.checkpoint(EDGE_WAIT, cut) {
            self.say_failure(&format!("{e} at a checkpoint: the run has no server totals"));
        }
    }

    /// The totals, from the last sample that started them to one taken
    /// now; `busy_end` is the cut of the run's counts when the connections
    /// may still be sending. `counters` and `connections` are the run's
    /// over the same span, `idle_quits` its idle connections' COM_QUITs.
    pub(super) fn totals(
        &mut self,
        counters: &Counters,
        (connections, idle_quits): (u64, u64),
        busy_end: Option<EdgeCut>,
    ) -> Option<ServerResult> {
        let (delta, source) = match self.watch.totals(EDGE_WAIT, busy_end) {
            Ok(totals) => totals,
            Err(e) => {
                self.said_failure = false;
                self.say_failure(&format!("{e}: the run has no server totals"));
                return None;
            }
        };
        let counts = ClientCounts { queries: counters.queries(), transactions: counters.events };
        let figures = ServerFigures::of(&delta, (!self.sharded).then_some(counts));
        let statements = counters.queries().saturating_add(counters.errors);
        let rate = if delta.seconds > 0.0 { statements as f64 / delta.seconds } else { 0.0 };
        let run = RunStatements {
            statements,
            events: counters.events,
            connections,
            reconnects: counters.reconnects,
            busy_edges: source.busy_edges,
            edge_statements: (rate * source.edge_blur_s).ceil() as u64,
            idle_quits,
        };
        let checked = self.one_server && !self.sharded;
        let consistency = if checked { ConsistencyCheck::of(&delta, run) } else { None };
        Some(ServerResult { delta, figures, source: Some(source), consistency })
    }

    fn say_failure(&mut self, what: &str) {
        if !self.said_failure {
            self.said_failure = true;
            stderr_line(format_args!("wirebench: --server-stats: {what}"));
        }
    }
}
