//! The capacity search's settings and results (`wirebench ... search`):
//! the latency bounds it holds, one object per step as it goes, and the
//! summary with the highest rate found (`docs/search.md`,
//! `docs/result.schema.json`).

use serde::{Deserialize, Serialize};

use super::latency_summary::PercentileValue;
use super::record::{ClientResult, RunInfo};
use super::table::Table;

/// One `--slo` bound: the `percentile` of the latency, counted from each
/// event's intended start, at most `max_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SloBound {
    pub percentile: f64,
    pub max_ms: f64,
}

/// How the search goes: its bounds and each step's shape.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchOptions {
    /// `--slo`: every bound must hold at a passing rate.
    pub slo: Vec<SloBound>,
    /// `--search-warmup`: seconds each step runs before it is measured.
    pub warmup_s: u32,
    /// `--search-time`: seconds each step is measured.
    pub step_s: u32,
    /// `--search-pause`: seconds between steps, so that each starts from a
    /// server that has drained the last one's work.
    pub pause_s: u32,
    /// `--search-precision`: the search stops when the highest passing and
    /// lowest failing rates are within this share of each other (0.02 = 2 %).
    pub precision: f64,
    /// `--search-steps`: at most this many steps, the probe and the
    /// confirmation included.
    pub max_steps: u32,
    /// `--search-confirm-time`: seconds the confirming step is measured.
    pub confirm_s: u32,
    /// `--search-max-errors`: the share of events that may fail (ignored
    /// errors) at a passing rate (0.001 = 0.1 %).
    pub max_errors: f64,
    /// `--search-client-share`: a step is client-limited when the client's
    /// own p99 delay of its events is over this share of the tightest
    /// bound (0.1 = 10 %).
    pub client_share: f64,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            slo: Vec::new(),
            warmup_s: 2,
            step_s: 10,
            pause_s: 1,
            precision: 0.02,
            max_steps: 20,
            confirm_s: 30,
            max_errors: 0.0,
            client_share: 0.1,
        }
    }
}

/// What a step was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SearchPhase {
    /// Unthrottled (closed loop): the ceiling the connections reach.
    Probe,
    /// At a target rate, moving towards the highest that passes.
    Search,
    /// The rate found, run again for longer.
    Confirm,
}

/// How a step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepVerdict {
    /// Every bound held (the probe: it ran, and set the ceiling).
    Pass,
    /// A bound did not hold (the reasons say which).
    Fail,
    /// It failed while the client was the limit (its own delay of the
    /// events was a material share of the bound, or its loops were
    /// saturated): nothing is known of the server at this rate.
    ClientBound,
}

/// One step, as it ends (`{"type":"search_step",...}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchStepResult {
    /// From 1.
    pub index: u32,
    pub phase: SearchPhase,
    /// Events per second asked for; none for the probe.
    pub target_tps: Option<u32>,
    pub achieved_tps: f64,
    /// Seconds measured.
    pub time_s: f64,
    pub events: u64,
    /// Ignored errors.
    pub errors: u64,
    /// The `--slo` percentiles, from each event's intended start.
    pub latency_ms: Vec<PercentileValue>,
    pub late_starts: u64,
    pub client: Option<ClientResult>,
    pub verdict: StepVerdict,
    /// Why it failed or was client-bound, one phrase each.
    pub reasons: Vec<String>,
    /// A pass at which the client was near its own limit (why, when it
    /// was): the server held the rate, but a higher one may fail for the
    /// client's sake.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub near_client_limit: Option<String>,
    /// A replay's search (`replay FILE search`): the `--speed` asked for
    /// (none for the probe, at `max`) and the speed held; the rates above
    /// are then commands per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_speed: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub achieved_speed: Option<f64>,
}

/// Why the search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SearchEnd {
    /// A rate was found and confirmed.
    Found,
    /// The step cap came first: `max_rate` is the highest that passed.
    StepCap,
    /// The client was the limit; `max_rate` is none.
    ClientBound,
    /// Not even the lowest rate tried held the bounds.
    NonePassed,
    /// A signal, or a step that did not complete.
    Stopped,
}

/// The search's last line (`{"type":"search",...}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchSummary {
    pub run: RunInfo,
    pub end: SearchEnd,
    /// The highest rate that held every bound (confirmed when `end` is
    /// `found`); none when no rate did, or the client was the limit.
    pub max_rate: Option<u32>,
    pub slo: Vec<SloBound>,
    /// The precision asked for, as a share (0.02 = 2 %).
    pub precision: f64,
    pub steps: Vec<SearchStepResult>,
    /// A replay's search: the highest `--speed` that held every bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_speed: Option<f64>,
}

impl SearchSummary {
    /// The confirming step (else the last passing step) at `max_rate`.
    pub fn step_at_max(&self) -> Option<&SearchStepResult> {
        let rate = self.max_rate?;
        let at_rate = |s: &&SearchStepResult| s.target_tps == Some(rate) && s.verdict == StepVerdict::Pass;
        let confirm = self.steps.iter().rev().filter(at_rate).find(|s| s.phase == SearchPhase::Confirm);
        confirm.or_else(|| self.steps.iter().rev().find(at_rate))
    }
}

/// `wirebench compare` of searches: a row per search (its label), with
/// the maximum rate, that rate against the first search's, the bound's
/// percentiles there, how the search ended and its steps.
pub fn search_table(searches: &[(&String, &SearchSummary)]) -> Table {
    let bounds: Vec<SloBound> = searches.first().map(|(_, s)| s.slo.clone()).unwrap_or_default();
    let mut header = vec!["result".to_owned(), "max rate/s".to_owned(), "vs first".to_owned()];
    header.extend(bounds.iter().map(|b| format!("p{} ms (<= {})", b.percentile, b.max_ms)));
    header.extend(["end".to_owned(), "steps".to_owned()]);
    let base = searches.first().and_then(|(_, s)| s.max_rate);
    let rows = searches
        .iter()
        .map(|(label, search)| {
            let mut row = vec![(*label).clone(), search.max_rate.map_or("-".to_owned(), |r| r.to_string())];
            row.push(match (base, search.max_rate) {
                (Some(base), Some(rate)) if base > 0 => {
                    format!("{:+.1}%", (f64::from(rate) - f64::from(base)) / f64::from(base) * 100.0)
                }
                _ => "-".to_owned(),
            });
            let at_max = search.step_at_max();
            for bound in &bounds {
                let ms = at_max.and_then(|s| s.latency_ms.iter().find(|p| p.percentile == bound.percentile));
                row.push(ms.map_or("-".to_owned(), |p| format!("{:.2}", p.ms)));
            }
            let end = serde_json::to_value(search.end).ok().and_then(|v| v.as_str().map(str::to_owned));
            row.extend([end.unwrap_or_default(), search.steps.len().to_string()]);
            row
        })
        .collect();
    Table { title: "Capacity search: the highest rate that held the bounds".to_owned(), header, rows }
}
