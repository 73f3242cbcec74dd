//! The series of the two commands that work with captures: a replay's own
//! (its speed, its differences from the capture, what it did not replay)
//! beside the run's series its intervals feed, and the recording proxy's
//! (`wirebench record`: what passed through it, what it wrote).
//!
//! A replay's loops hand their tallies over when they end: its own
//! counters come with its result, at the end; its queries, errors and
//! latency come each interval, as a run's do. Names are shared with `run`
//! where the meaning is the same (`wirebench_queries_total`,
//! `wirebench_errors_total`), prefixed `wirebench_replay_` or
//! `wirebench_record_` where it is the command's own.

use std::collections::BTreeMap;

use wirebench_capture::commands::command_name;

use super::families::{float_text, Family, FamilyKind};
use super::latency_buckets::LatencyBuckets;
use crate::results::replay_record::ReplayResult;
use crate::stats::RelayCounts;

/// A replay's own figures.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct ReplayFigures {
    /// `--speed` (or a search step's); `None` for `max`.
    pub(super) target_speed: Option<f64>,
    /// Known once the replay has ended.
    pub(super) ended: Option<ReplayEnding>,
}

/// What a replay's result adds to its intervals' series.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct ReplayEnding {
    commands: u64,
    captured_commands: u64,
    achieved_speed: f64,
    reached_s: f64,
    differences: BTreeMap<String, u64>,
    not_replayed: BTreeMap<String, u64>,
    unknown_answers: u64,
    connections: [(&'static str, u64); 3],
}

impl ReplayEnding {
    pub(super) fn of(result: &ReplayResult) -> Self {
        let mut differences = BTreeMap::new();
        for statement in &result.statements {
            for (kind, n) in &statement.differences {
                *differences.entry(kind.clone()).or_default() += n;
            }
        }
        let conns = &result.connections;
        let refused = conns.refused.iter().map(|r| r.connections).sum();
        ReplayEnding {
            commands: result.commands,
            captured_commands: result.capture.commands,
            achieved_speed: result.achieved_speed,
            reached_s: result.reached_s,
            differences,
            not_replayed: result.not_replayed.clone(),
            unknown_answers: result.unknown_answers,
            connections: [("opened", conns.opened), ("lost", conns.lost), ("refused", refused)],
        }
    }
}

pub(super) fn replay_families(replay: &ReplayFigures, out: &mut Vec<Family>) {
    use FamilyKind::{Counter, Gauge};
    if let Some(speed) = replay.target_speed {
        let help = "The capture's pace the replay is asked to keep (--speed): 2 is twice as fast";
        out.push(Family::new("wirebench_replay_target_speed", Gauge, help).with(&[], speed));
    }
    let Some(end) = &replay.ended else { return };
    let help = "The pace the replay held: seconds of the capture replayed over the seconds it took";
    out.push(Family::new("wirebench_replay_achieved_speed", Gauge, help).with(&[], end.achieved_speed));
    let help = "Seconds of the capture replayed, from its first record";
    out.push(Family::new("wirebench_replay_reached_seconds", Gauge, help).in_unit("seconds").with(&[], end.reached_s));
    let help = "Commands replayed and answered, errors included (the replay report's commands)";
    out.push(Family::new("wirebench_replay_commands", Counter, help).with(&[], end.commands as f64));
    let help = "Commands read from the capture";
    out.push(Family::new("wirebench_replay_captured_commands", Counter, help).with(&[], end.captured_commands as f64));
    let mut differences =
        Family::new("wirebench_replay_differences", Counter, "Answers that differ from the captured ones, by how");
    for kind in ["fails_now", "failed_then", "other_error", "affected_rows", "rows", "checksum"] {
        let n = end.differences.get(kind).copied().unwrap_or(0);
        differences.push("_total", &[("kind", kind)], n as f64);
    }
    out.push(differences);
    let help = "Commands whose captured answer is not in the capture (a log's): not compared";
    out.push(Family::new("wirebench_replay_unknown_answers", Counter, help).with(&[], end.unknown_answers as f64));
    let help = "Commands not replayed, by why (--read-only's skips among them)";
    let mut skipped = Family::new("wirebench_replay_not_replayed", Counter, help);
    for (why, n) in &end.not_replayed {
        skipped.push("_total", &[("reason", why)], *n as f64);
    }
    out.push(skipped);
    let help = "Replayed connections: opened, lost before the capture closed them, refused at the login";
    let mut connections = Family::new("wirebench_replay_connections", Counter, help);
    for (state, n) in end.connections {
        connections.push("_total", &[("state", state)], n as f64);
    }
    out.push(connections);
}

/// The recording proxy's figures, as the recording thread last counted them.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct RecordFigures {
    pub(super) counts: RelayCounts,
    pub(super) elapsed_s: f64,
}

pub(super) fn record_families(record: &RecordFigures, out: &mut Vec<Family>) {
    use FamilyKind::{Counter, Gauge, Histogram};
    let counts = &record.counts;
    let mut commands = Family::new("wirebench_record_commands", Counter, "Commands recorded, by command");
    for (&byte, &n) in &counts.commands {
        commands.push("_total", &[("command", &command_name(byte))], n as f64);
    }
    out.push(commands);
    let answered = &counts.answered;
    let help = "Statements answered, by sysbench's kind: read (rows), write (rows changed), other";
    let mut queries = Family::new("wirebench_queries", Counter, help);
    for (kind, n) in [("read", answered.reads), ("write", answered.writes), ("other", answered.others)] {
        queries.push("_total", &[("kind", kind)], n as f64);
    }
    out.push(queries);
    let mut errors = Family::new("wirebench_errors", Counter, "Commands the server answered with an error, by code");
    for &(code, n) in counts.error_codes.codes() {
        errors.push("_total", &[("code", &code.to_string())], n as f64);
    }
    if counts.error_codes.overflow() > 0 {
        errors.push("_total", &[("code", "other")], counts.error_codes.overflow() as f64);
    }
    out.push(errors);
    let help = "Applications connected, their login recorded, not yet closed";
    out.push(Family::new("wirebench_record_connections", Gauge, help).with(&[], counts.connections_open() as f64));
    let help = "Applications' connections recorded since the start";
    let opened = counts.connections_opened as f64;
    out.push(Family::new("wirebench_record_connections_opened", Counter, help).with(&[], opened));
    let help = "Applications answered ERR 2003: the server could not be reached";
    let failures = counts.upstream_failures as f64;
    out.push(Family::new("wirebench_record_upstream_failures", Counter, help).with(&[], failures));
    let help = "Bytes written to the capture file";
    let bytes = counts.capture_bytes as f64;
    out.push(Family::new("wirebench_record_written_bytes", Counter, help).in_unit("bytes").with(&[], bytes));
    let help = "Seconds since the recording began";
    out.push(Family::new("wirebench_elapsed_seconds", Gauge, help).in_unit("seconds").with(&[], record.elapsed_s));
    let mut buckets = LatencyBuckets::default();
    buckets.add(&counts.answer_time);
    let help = "The server's time to answer each command, from the command's last byte to the answer's, at the proxy";
    let mut answer = Family::new("wirebench_record_answer_seconds", Histogram, help).in_unit("seconds");
    for (bound, count) in buckets.cumulative() {
        answer.push("_bucket", &[("le", &float_text(bound))], count as f64);
    }
    answer.push("_count", &[], buckets.count() as f64);
    answer.push("_sum", &[], buckets.sum_seconds());
    out.push(answer);
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// Every family of a replay and of a recording, filled.
    pub(in crate::watch) fn every_capture_family() -> Vec<Family> {
        let mut families = Vec::new();
        let ending = ReplayEnding {
            commands: 10,
            captured_commands: 10,
            achieved_speed: 1.0,
            reached_s: 2.0,
            differences: BTreeMap::from([("rows".to_owned(), 1)]),
            not_replayed: BTreeMap::from([("read_only".to_owned(), 1)]),
            unknown_answers: 1,
            connections: [("opened", 2), ("lost", 0), ("refused", 0)],
        };
        replay_families(&ReplayFigures { target_speed: Some(2.0), ended: Some(ending) }, &mut families);
        let mut counts = RelayCounts { commands: BTreeMap::from([(3, 5)]), ..RelayCounts::default() };
        counts.answer_time.record_ns(1_000_000);
        record_families(&RecordFigures { counts, elapsed_s: 1.0 }, &mut families);
        families
    }
}
