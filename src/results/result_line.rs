//! One line of `--format=json` output, whichever kind it is: the type
//! tag that `docs/result.schema.json` switches on.

use serde::{Deserialize, Serialize};

use super::record::{IntervalResult, RunResult, SweepSummary};
use super::replay_record::ReplayResult;
use super::search_record::{SearchStepResult, SearchSummary};

/// One line of `--format=json` output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResultLine {
    /// One `--report-interval`.
    Interval(IntervalResult),
    /// The whole run, or one step of a sweep.
    Final(Box<RunResult>),
    /// After the last step of a sweep: one row per step.
    Sweep(SweepSummary),
    /// One step of a capacity search, as it ends.
    SearchStep(SearchStepResult),
    /// After a capacity search's last step.
    Search(SearchSummary),
    /// The end of `wirebench replay`.
    Replay(Box<ReplayResult>),
}
