//! `wirebench replay FILE search --slo=...`: the highest `--speed` at which
//! the capture's replay holds the latency bounds. The run's search state
//! machine (`search_controller.rs`) decides each step and judges it,
//! the search's "rate" being the speed in hundredths: a probe at
//! `--speed=max` for the ceiling (the speed it held), then speeds halved
//! down or raised by a quarter, bisected, and the one found confirmed;
//! a step the client was the limit of ends the search, as a run's does.
//! Each step replays the capture from its start for `--search-time`.

use std::sync::Arc;

use super::interrupt::Interrupts;
use super::output::{Level, Output, OutputError};
use super::replay_command::replay_once;
use super::result_sink::ResultSink;
use super::search_command::{at_bounds, near_client_note, percentiles_text, quietly, search_step_bench, slo_text};
use super::search_controller::{judge, Conclusion, NextStep, SearchController, StepMeasure, StepOutcome, StepRules};
use super::steps::pause;
use super::{RunError, RunOutcome};
use crate::cli::Bench;
use crate::replay::{CaptureReplayOptions, Speed};
use crate::results::latency_summary::PercentileValue;
use crate::results::record::ClientResult;
use crate::results::replay_record::ReplayResult;
use crate::results::search_record::{
    SearchEnd, SearchOptions, SearchPhase, SearchStepResult, SearchSummary, StepVerdict,
};
use crate::results::{OutputFormat, ResultLine};
use crate::stats::ClientLoad;
use crate::transport::tls::ClientTls;
use crate::watch::Watch;

/// The controller's rates are whole numbers: a speed is counted in hundredths.
const PER_SPEED: f64 = 100.0;

fn speed_of(rate: u32) -> f64 {
    f64::from(rate) / PER_SPEED
}

/// Runs the search; like a run's, a client-bound step or no passing speed
/// is an error that says how far it got.
pub(super) fn run_replay_search(
    bench: &Bench,
    options: &CaptureReplayOptions,
    setup: (Option<&ClientTls>, &tokio::runtime::Runtime, &Interrupts),
    watch: Option<&Arc<Watch>>,
) -> Result<RunOutcome, RunError> {
    let search = bench.search.as_ref().ok_or(RunError::SearchWithoutSlo)?;
    let mut controller = SearchController::new(search.precision, search.max_steps);
    let mut steps: Vec<SearchStepResult> = Vec::new();
    let mut info = None;
    Level::Notice.print(format_args!(
        "Searching for the highest --speed at which {} holds {} (precision {}%)\n",
        options.file.display(),
        slo_text(&search.slo),
        search.precision * 100.0
    ))?;
    let mut outcome = RunOutcome::Completed;
    loop {
        let (target, phase) = match controller.next() {
            NextStep::Done(_) => break,
            NextStep::Probe => (None, SearchPhase::Probe),
            NextStep::Rate { target, phase } => (Some(target), phase),
        };
        if !steps.is_empty() {
            if let Some(signal) = pause(search.pause_s, setup.2) {
                outcome = RunOutcome::Interrupted(signal);
                break;
            }
        }
        let step_bench = search_step_bench(bench, search, phase);
        let speed = target.map_or(Speed::Max, |t| Speed::Times(speed_of(t)));
        let mut sink = ResultSink::new(&step_bench);
        sink.name_test("replay".to_owned());
        sink.watch_with(watch.cloned());
        let ran = quietly(|| replay_once(&step_bench, options, speed, setup, &mut sink))?;
        let (Some(result), RunOutcome::Completed | RunOutcome::Cut { .. }) = (ran.result, ran.outcome) else {
            outcome = ran.outcome;
            break;
        };
        info.get_or_insert_with(|| result.run.clone());
        let measured = measure_step(search, target, &result, ran.client);
        let rules = StepRules { slo: &search.slo, max_errors: search.max_errors, client_share: search.client_share };
        let judged = judge(&rules, &measured);
        let verdict = judged.verdict;
        steps.push(SearchStepResult {
            index: steps.len() as u32 + 1,
            phase,
            target_tps: None,
            achieved_tps: result.rates.tps,
            time_s: result.time_s,
            events: result.commands,
            errors: result.errors,
            latency_ms: latency(search, &measured),
            late_starts: result.late_starts,
            client: ran.client.as_ref().map(ClientResult::of),
            verdict,
            reasons: judged.reasons,
            near_client_limit: judged.near_client_limit,
            target_speed: target.map(speed_of),
            achieved_speed: Some(result.achieved_speed),
        });
        say_step(bench, steps.last(), search.max_steps, watch)?;
        controller.record(StepOutcome { verdict, achieved: measured.achieved });
    }
    let conclusion = match controller.next() {
        NextStep::Done(conclusion) => conclusion,
        _ => Conclusion { end: SearchEnd::Stopped, max_rate: None },
    };
    conclude_search(bench, search, (info, steps), conclusion, watch)?;
    Ok(outcome)
}

/// What the verdict needs of a step: its speed held (in the controller's
/// hundredths), its errors, and each bound's percentile from the
/// commands' times (the service time apart, from their sends).
fn measure_step(
    search: &SearchOptions,
    target: Option<u32>,
    result: &ReplayResult,
    client: Option<ClientLoad>,
) -> StepMeasure {
    StepMeasure {
        target,
        achieved: result.achieved_speed * PER_SPEED,
        events: result.commands,
        errors: result.errors,
        latency_ms: at_bounds(&search.slo, Some(&result.latency_ms)),
        service_ms: at_bounds(&search.slo, result.service_latency_ms.as_ref()),
        client_busy: client.map(|c| c.busy_share),
        client_core_wait: client.map(|c| c.core_wait_share),
        client_delay_p99_ms: client.and_then(|c| c.delay).map(|d| d.p99_ms),
        stalled: 0,
        time_s: result.time_s,
        poisson: false,
        backlog: 0,
    }
}

fn latency(search: &SearchOptions, measured: &StepMeasure) -> Vec<PercentileValue> {
    let bounds = search.slo.iter().zip(&measured.latency_ms);
    bounds
        .map(|(b, &ms)| PercentileValue { percentile: b.percentile, ms: if ms.is_finite() { ms } else { 0.0 } })
        .collect()
}

/// `[ search step 2/20 ] speed 2.00: held 1.99, commands 8012/s, p99 3.10 ms, errors 0, late starts 0: pass`.
fn say_step(
    bench: &Bench,
    step: Option<&SearchStepResult>,
    max_steps: u32,
    watch: Option<&Arc<Watch>>,
) -> Result<(), OutputError> {
    let Some(step) = step else { return Ok(()) };
    let speed = step.target_speed.map_or("probe (max)".to_owned(), |s| format!("speed {s:.2}"));
    let verdict = match (step.verdict, &step.near_client_limit) {
        (StepVerdict::Pass, Some(why)) => format!("pass (near the client's limit: {why})"),
        (StepVerdict::Pass, None) => "pass".to_owned(),
        (StepVerdict::Fail, _) => format!("fail: {}", step.reasons.join(", ")),
        (StepVerdict::ClientBound, _) => step.reasons.join(", "),
    };
    Level::Notice.print(format_args!(
        "[ search step {}/{max_steps} ] {speed}: held {:.2}, {:.1} commands/s, {}, errors {}, late starts {}: {verdict}\n",
        step.index,
        step.achieved_speed.unwrap_or(0.0),
        step.achieved_tps,
        percentiles_text(&step.latency_ms),
        step.errors,
        step.late_starts
    ))?;
    let line = ResultLine::SearchStep(step.clone());
    if bench.results.format == OutputFormat::Json {
        Output::Stdout.json_line(&line)?;
    }
    if let Some(watch) = watch {
        watch.line(&line);
    }
    Ok(())
}

/// The search's conclusion, its JSON summary; an error when it found no speed.
fn conclude_search(
    bench: &Bench,
    search: &SearchOptions,
    (info, steps): (Option<crate::results::RunInfo>, Vec<SearchStepResult>),
    conclusion: Conclusion,
    watch: Option<&Arc<Watch>>,
) -> Result<(), RunError> {
    let max_speed = conclusion.max_rate.map(speed_of);
    let at = max_speed.and_then(|s| steps.iter().rev().find(|step| step.target_speed == Some(s)));
    let figures = at.map(|s| percentiles_text(&s.latency_ms)).unwrap_or_default();
    let text = match (conclusion.end, max_speed) {
        (SearchEnd::Found, Some(speed)) => format!(
            "Search result: the replay holds {} up to --speed={speed:.2} ({figures}, confirmed), after {} steps{}",
            slo_text(&search.slo),
            steps.len(),
            near_client_note(at)
        ),
        (SearchEnd::StepCap, Some(speed)) => format!(
            "Search result: --speed={speed:.2} held {} ({figures}) when --search-steps ran out; not confirmed",
            slo_text(&search.slo)
        ),
        _ => format!("Search result: no speed held {} ({:?})", slo_text(&search.slo), conclusion.end),
    };
    Level::Notice.print(format_args!("\n{text}\n"))?;
    if let (true, Some(run)) = (bench.results.format == OutputFormat::Json || watch.is_some(), info) {
        let summary = ResultLine::Search(SearchSummary {
            run,
            end: conclusion.end,
            max_rate: None,
            slo: search.slo.clone(),
            precision: search.precision,
            steps: steps.clone(),
            max_speed,
        });
        if bench.results.format == OutputFormat::Json {
            Output::Stdout.json_line(&summary)?;
        }
        if let Some(watch) = watch {
            watch.line(&summary);
        }
    }
    let last = steps.last();
    match conclusion.end {
        SearchEnd::ClientBound => Err(RunError::SearchClientBound {
            step: last.map_or(0, |s| s.index),
            why: last.and_then(|s| s.reasons.first().cloned()).unwrap_or_default(),
            passed: None,
        }),
        SearchEnd::NonePassed => {
            Err(RunError::ReplaySearchNoSpeed { why: last.map(|s| s.reasons.join(", ")).unwrap_or_default() })
        }
        _ => Ok(()),
    }
}
