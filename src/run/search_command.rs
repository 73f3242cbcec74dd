//! The `search` command: the steps the controller (`search_controller.rs`)
//! asks for, each one run as a `run` of its own at its rate (the same
//! engine, connections opened afresh), a line per step as it ends, then
//! the summary; `--format=json` writes each step and the summary as JSON
//! lines, `--chart` draws each step's rate against its latency.

use std::sync::Arc;

use super::benchmark;
use super::interrupt::Interrupts;
use super::output::{Console, Level, Output, OutputError};
use super::result_sink::ResultSink;
use super::search_controller::{judge, Judgement, NextStep, SearchController, StepMeasure, StepOutcome, StepRules};
use super::shard_plan::ShardThreads;
use super::steps::pause;
use super::{RunError, RunOutcome};
use crate::cli::{Bench, Command};
use crate::driver::Arrival;
use crate::results::chart;
use crate::results::latency_summary::{LatencySummary, PercentileValue};
use crate::results::record::ClientResult;
use crate::results::search_record::{
    SearchEnd, SearchOptions, SearchPhase, SearchStepResult, SearchSummary, SloBound, StepVerdict,
};
use crate::results::{OutputFormat, ResultLine, RunResult};
use crate::stats::ClientLoad;
use crate::transport::tls::ClientTls;
use crate::watch::Watch;
use crate::workload::Workload;

/// Runs the search to its end; a client-bound step or no passing rate is
/// an error that says how far it got.
pub(super) fn run_search(
    bench: &Bench,
    threads: ShardThreads,
    tls: Option<&ClientTls>,
    workload: Arc<dyn Workload>,
    runtime: &tokio::runtime::Runtime,
    interrupts: &Interrupts,
    watch: Option<&Arc<Watch>>,
) -> Result<RunOutcome, RunError> {
    let options = bench.search.as_ref().ok_or(RunError::SearchWithoutSlo)?;
    let mut controller = SearchController::new(options.precision, options.max_steps);
    let mut record = SearchRecord::new(bench, options);
    record.watch = watch.cloned();
    Level::Notice.print(format_args!("{}\n", record.heading()))?;
    let mut outcome = RunOutcome::Completed;
    loop {
        let step = controller.next();
        let (target, phase) = match step {
            NextStep::Done(_) => break,
            NextStep::Probe => (None, SearchPhase::Probe),
            NextStep::Rate { target, phase } => (Some(target), phase),
        };
        if !record.steps.is_empty() {
            if let Some(signal) = pause(options.pause_s, interrupts) {
                outcome = RunOutcome::Interrupted(signal);
                break;
            }
        }
        let step_bench = rate_step_bench(bench, options, target, phase);
        let mut sink = ResultSink::new(&step_bench);
        sink.watch_with(watch.cloned());
        let ran = quietly(|| {
            benchmark::run_benchmark(&step_bench, threads, tls, workload.clone(), runtime, interrupts, &mut sink)
        })?;
        record.info.get_or_insert_with(|| sink.info().clone());
        // A step cut with answers still owed has its report; any other end
        // (a signal, a forced shutdown) stops the search.
        let stalled = match ran {
            RunOutcome::Completed => 0,
            RunOutcome::Cut { stalled } => stalled,
            other => {
                outcome = other;
                break;
            }
        };
        let Some((result, client)) = sink.take_result() else { break };
        let poisson = bench.general.rate_arrival == Arrival::Poisson;
        let measured = StepMeasure { stalled, poisson, ..measure(&options.slo, target, &result, client) };
        let rules = StepRules { slo: &options.slo, max_errors: options.max_errors, client_share: options.client_share };
        let judged = judge(&rules, &measured);
        let verdict = judged.verdict;
        record.add(phase, &measured, &result, client, judged);
        record.say_last(options.max_steps)?;
        controller.record(StepOutcome { verdict, achieved: measured.achieved });
    }
    let conclusion = match controller.next() {
        NextStep::Done(conclusion) => conclusion,
        _ => super::search_controller::Conclusion { end: SearchEnd::Stopped, max_rate: controller_best(&record) },
    };
    record.finish(bench, conclusion.end, conclusion.max_rate)?;
    match conclusion.end {
        SearchEnd::ClientBound => Err(record.client_bound_error()),
        SearchEnd::NonePassed => Err(record.no_rate_error()),
        SearchEnd::StepCap if conclusion.max_rate.is_none() => Err(record.steps_ran_out_error(options.max_steps)),
        _ => Ok(outcome),
    }
}

/// The highest rate that passed a step, for a search a signal stopped.
fn controller_best(record: &SearchRecord) -> Option<u32> {
    record.passed().max()
}

/// The command line of one step: a `run` at `target` (unthrottled for the
/// probe), its warm-up the search's, as [`search_step_bench`] makes it.
fn rate_step_bench(bench: &Bench, options: &SearchOptions, target: Option<u32>, phase: SearchPhase) -> Bench {
    let mut step = search_step_bench(bench, options, phase);
    let general = &mut step.general;
    general.rate = target;
    general.rate_stages = None;
    general.events = None;
    general.warmup_time = options.warmup_s;
    step
}

/// A step's command line, for a search over rates or over a replay's
/// speeds: a `run`, its measured time the search's, the `--slo`
/// percentiles listed, nothing written but the search's own output.
pub(super) fn search_step_bench(bench: &Bench, options: &SearchOptions, phase: SearchPhase) -> Bench {
    let mut step = bench.clone();
    step.command = Command::Run;
    step.search = None;
    let general = &mut step.general;
    general.time = Some(if phase == SearchPhase::Confirm { options.confirm_s } else { options.step_s });
    general.report_interval = None;
    general.hdr_log = None;
    general.percentiles.extend(options.slo.iter().map(|b| b.percentile));
    step.results.format = OutputFormat::Text;
    step.results.chart = None;
    step
}

/// Runs `step` with the console showing only warnings and worse, so that a
/// step's sysbench report does not bury the search's lines; at
/// `--verbosity=4` and up each step's report shows in full.
pub(super) fn quietly<T>(step: impl FnOnce() -> T) -> T {
    let console = Console::current();
    if console.verbosity >= 4 {
        return step();
    }
    Console { verbosity: console.verbosity.min(2), ..console }.install();
    let out = step();
    console.install();
    out
}

/// A step's measurements: under a target, the rate achieved is the rate
/// summary's (events over the measured time).
fn measure(slo: &[SloBound], target: Option<u32>, result: &RunResult, client: Option<ClientLoad>) -> StepMeasure {
    let achieved = result.rate.as_ref().map_or(result.rates.tps, |r| r.achieved_tps);
    StepMeasure {
        target,
        achieved,
        events: result.counters.transactions,
        errors: result.counters.ignored_errors,
        latency_ms: at_bounds(slo, Some(&result.latency_ms)),
        service_ms: at_bounds(slo, result.service_latency_ms.as_ref()),
        client_busy: client.map(|c| c.busy_share),
        client_core_wait: client.map(|c| c.core_wait_share),
        client_delay_p99_ms: client.and_then(|c| c.delay).map(|d| d.p99_ms),
        stalled: 0,
        time_s: result.time_s,
        poisson: false,
        backlog: result.rate.as_ref().filter(|r| !r.target_met).map_or(0, |r| r.backlog.max(1)),
    }
}

/// Each bound's percentile of `summary` (infinite where it has none), as
/// the verdict reads a step's latencies; none without a summary.
pub(super) fn at_bounds(slo: &[SloBound], summary: Option<&LatencySummary>) -> Vec<f64> {
    let Some(summary) = summary else { return Vec::new() };
    slo.iter().map(|b| summary.at(b.percentile).unwrap_or(f64::INFINITY)).collect()
}

/// The steps so far and where the search's output goes.
struct SearchRecord {
    format: OutputFormat,
    slo: Vec<SloBound>,
    precision: f64,
    info: Option<crate::results::RunInfo>,
    steps: Vec<SearchStepResult>,
    /// Fed each step and the summary.
    watch: Option<Arc<Watch>>,
}

impl SearchRecord {
    fn new(bench: &Bench, options: &SearchOptions) -> Self {
        SearchRecord {
            format: bench.results.format,
            slo: options.slo.clone(),
            precision: options.precision,
            info: None,
            steps: Vec::new(),
            watch: None,
        }
    }

    /// `Searching for the highest rate with p99 <= 5 ms ...`.
    fn heading(&self) -> String {
        format!(
            "Searching for the highest rate that holds {} (precision {}%)",
            slo_text(&self.slo),
            self.precision * 100.0
        )
    }

    fn add(
        &mut self,
        phase: SearchPhase,
        measured: &StepMeasure,
        result: &RunResult,
        client: Option<ClientLoad>,
        judged: Judgement,
    ) {
        let latency_ms = self
            .slo
            .iter()
            .zip(&measured.latency_ms)
            .map(|(b, &ms)| PercentileValue { percentile: b.percentile, ms: if ms.is_finite() { ms } else { 0.0 } })
            .collect();
        self.steps.push(SearchStepResult {
            index: self.steps.len() as u32 + 1,
            phase,
            target_tps: measured.target,
            achieved_tps: measured.achieved,
            time_s: result.time_s,
            events: measured.events,
            errors: measured.errors,
            latency_ms,
            late_starts: result.rate.as_ref().map_or(0, |r| r.late_starts),
            client: client.as_ref().map(ClientResult::of),
            verdict: judged.verdict,
            reasons: judged.reasons,
            near_client_limit: judged.near_client_limit,
            target_speed: None,
            achieved_speed: None,
        });
    }

    /// The last step's line, and its JSON object.
    fn say_last(&self, max_steps: u32) -> Result<(), OutputError> {
        let Some(step) = self.steps.last() else { return Ok(()) };
        Level::Notice.print(format_args!("{}\n", step_line(step, max_steps)))?;
        let line = ResultLine::SearchStep(step.clone());
        if self.format == OutputFormat::Json {
            Output::Stdout.json_line(&line)?;
        }
        if let Some(watch) = &self.watch {
            watch.line(&line);
        }
        Ok(())
    }

    fn passed(&self) -> impl Iterator<Item = u32> + '_ {
        self.steps.iter().filter(|s| s.verdict == StepVerdict::Pass).filter_map(|s| s.target_tps)
    }

    /// The summary, its JSON line and chart.
    fn finish(&self, bench: &Bench, end: SearchEnd, max_rate: Option<u32>) -> Result<(), RunError> {
        Level::Notice.print(format_args!("\n{}\n", self.summary_text(end, max_rate)))?;
        if let (Some(info), true) = (&self.info, self.format == OutputFormat::Json || self.watch.is_some()) {
            let summary = ResultLine::Search(SearchSummary {
                run: info.clone(),
                end,
                max_rate,
                slo: self.slo.clone(),
                precision: self.precision,
                steps: self.steps.clone(),
                max_speed: None,
            });
            if self.format == OutputFormat::Json {
                Output::Stdout.json_line(&summary)?;
            }
            if let Some(watch) = &self.watch {
                watch.line(&summary);
            }
        }
        if let Some(path) = &bench.results.chart {
            let title = format!("{}: capacity search, {}", bench.test.name(), slo_text(&self.slo));
            let svg = chart::search_chart(&title, &self.steps, &self.slo)?;
            chart::write_chart(path, &svg)?;
        }
        Ok(())
    }

    fn summary_text(&self, end: SearchEnd, max_rate: Option<u32>) -> String {
        let at_rate = max_rate.and_then(|r| self.steps.iter().rev().find(|s| s.target_tps == Some(r)));
        let figures = at_rate.map(|s| percentiles_text(&s.latency_ms)).unwrap_or_default();
        let steps = self.steps.len();
        match (end, max_rate) {
            (SearchEnd::Found, Some(rate)) => format!(
                "Search result: maximum rate {rate}/s holds {} ({figures}, confirmed), after {steps} steps{}",
                slo_text(&self.slo),
                near_client_note(at_rate)
            ),
            (SearchEnd::StepCap, Some(rate)) => format!(
                "Search result: {rate}/s held {} ({figures}) when --search-steps ran out after {steps} steps; the \
                 highest rate may be higher, and is not confirmed{}",
                slo_text(&self.slo),
                near_client_note(at_rate)
            ),
            (SearchEnd::Stopped, rate) => format!(
                "Search stopped after {steps} steps; the highest rate that held the bounds: {}",
                rate.map_or("none".to_owned(), |r| format!("{r}/s"))
            ),
            (SearchEnd::ClientBound, _) => {
                format!("Search result: none; the client was the limit at step {steps} (see the error below)")
            }
            _ => format!("Search result: no rate held {} in {steps} steps", slo_text(&self.slo)),
        }
    }

    fn client_bound_error(&self) -> RunError {
        let last = self.steps.last();
        RunError::SearchClientBound {
            step: last.map_or(0, |s| s.index),
            why: last.and_then(|s| s.reasons.first().cloned()).unwrap_or_default(),
            passed: self.passed().max(),
        }
    }

    fn no_rate_error(&self) -> RunError {
        let (lowest, why) = self.lowest_failed();
        RunError::SearchNoRate { lowest, why }
    }

    fn steps_ran_out_error(&self, steps: u32) -> RunError {
        let (lowest, why) = self.lowest_failed();
        RunError::SearchStepsRanOut { steps, lowest, why }
    }

    /// The lowest target a step tried, and why it failed.
    fn lowest_failed(&self) -> (u32, String) {
        let lowest = self.steps.iter().filter_map(|s| s.target_tps.map(|t| (t, s))).min_by_key(|(t, _)| *t);
        (
            lowest.map_or(0, |(t, _)| t),
            lowest.map(|(_, s)| s.reasons.join(", ")).unwrap_or_else(|| "the probe completed no event".into()),
        )
    }
}

/// `[ search step 3/20 ] target 1000/s: achieved 998.2/s, p99 3.12 ms, errors 0, late starts 0, client busy
/// 12%, delay p99 0.05 ms: pass`.
fn step_line(step: &SearchStepResult, max_steps: u32) -> String {
    let phase = match step.phase {
        SearchPhase::Probe => "probe (unthrottled)".to_owned(),
        SearchPhase::Search => format!("target {}/s", step.target_tps.unwrap_or(0)),
        SearchPhase::Confirm => format!("confirm {}/s", step.target_tps.unwrap_or(0)),
    };
    let client = match step.client {
        None => "?".to_owned(),
        Some(c) => {
            let busy =
                format!("busy {:.0}% ({:.0}% waiting for a core)", c.busy_share * 100.0, c.core_wait_share * 100.0);
            match c.delay_ms {
                Some(delay) => format!("{busy}, delay p99 {:.2} ms", delay.p99),
                None => busy,
            }
        }
    };
    let verdict = match (step.verdict, &step.near_client_limit) {
        (StepVerdict::Pass, Some(why)) => format!("pass (near the client's limit: {why})"),
        (StepVerdict::Pass, None) => "pass".to_owned(),
        (StepVerdict::Fail, _) => format!("fail: {}", step.reasons.join(", ")),
        (StepVerdict::ClientBound, _) => step.reasons.join(", "),
    };
    format!(
        "[ search step {}/{max_steps} ] {phase}: achieved {:.1}/s, {}, errors {}, late starts {}, client {client}: \
         {verdict}",
        step.index,
        step.achieved_tps,
        percentiles_text(&step.latency_ms),
        step.errors,
        step.late_starts
    )
}

/// A rate found while the client was near its own limit says so: the
/// server held it, and a faster client might find more.
pub(super) fn near_client_note(step: Option<&SearchStepResult>) -> String {
    match step.and_then(|s| s.near_client_limit.as_deref()) {
        Some(why) => format!(
            "; the client was near its own limit there ({why}): the server may hold more, measured with more \
             --cpus or fewer other tasks on the client's cores"
        ),
        None => String::new(),
    }
}

pub(super) fn percentiles_text(values: &[PercentileValue]) -> String {
    let text: Vec<String> = values.iter().map(|p| format!("p{} {:.2} ms", p.percentile, p.ms)).collect();
    text.join(", ")
}

/// `p99 <= 5 ms, p99.9 <= 20 ms`.
pub(super) fn slo_text(slo: &[SloBound]) -> String {
    let text: Vec<String> = slo.iter().map(|b| format!("p{} <= {} ms", b.percentile, b.max_ms)).collect();
    text.join(", ")
}
