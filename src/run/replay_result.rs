//! A replay summed up: the run's final numbers (the sink's), the capture's
//! reader's counts and statements, the loops' tallies, into one
//! [`ReplayResult`].

use std::collections::BTreeMap;

use wirebench_capture::commands::command_name;
use wirebench_capture::format::{CaptureHeader, Ending, ReadError};
use wirebench_protocol::constants::command::{COM_QUERY, COM_STMT_PREPARE};

use super::interrupt::Signal;
use super::result_sink::ResultSink;
use super::RunOutcome;
use crate::cli::Bench;
use crate::driver::replay::replay_tally::{Difference, DifferenceExample, LoopSkip, ReplayTally, StatementTally};
use crate::replay::{CaptureReplayOptions, DispatchOutcome, Speed, StatementEntry, Unreplayed};
use crate::results::record::ClientResult;
use crate::results::replay_record::{
    CaptureFacts, DifferenceExampleResult, LatencyBrief, RefusedLoginResult, ReplayConnections, ReplayResult,
    ReplayStatementResult,
};
use crate::stats::{ClientLoad, LatencyHistogram};

/// What one replay came to.
pub(super) struct ReplayRan {
    pub(super) outcome: RunOutcome,
    /// None when nothing was replayed (a signal before the start).
    pub(super) result: Option<ReplayResult>,
    pub(super) ending: Option<Ending>,
    /// The capture could not be read to its end.
    pub(super) read_error: Option<ReadError>,
    pub(super) client: Option<ClientLoad>,
}

impl ReplayRan {
    /// A signal came before anything was replayed.
    pub(super) fn interrupted_early(signal: Signal) -> Self {
        ReplayRan {
            outcome: RunOutcome::Interrupted(signal),
            result: None,
            ending: None,
            read_error: None,
            client: None,
        }
    }
}

/// The replay's result, from the run's final numbers (which the sink holds)
/// and what the reader and the loops counted.
pub(super) fn build_result(
    bench: &Bench,
    options: &CaptureReplayOptions,
    speed: Speed,
    (header, read): (&CaptureHeader, DispatchOutcome),
    (tally, schedule_start_ns): (ReplayTally, u64),
    outcome: RunOutcome,
    sink: &mut ResultSink,
) -> ReplayRan {
    let Some((run, client)) = sink.take_result() else {
        return ReplayRan { outcome, result: None, ending: read.ending, read_error: read.error, client: None };
    };
    let statements = replayed_statements(&read, &tally);
    let reached_s = tally.reached_ns as f64 / 1e9;
    // From when the capture's first record was due to when the last
    // command replayed was answered.
    let replaying_s = tally.reached_at_ns.saturating_sub(schedule_start_ns) as f64 / 1e9;
    let result = ReplayResult {
        capture: capture_facts(options, header, &read),
        speed: speed.factor(),
        multiply: options.multiply,
        read_only: options.read_only,
        end: run.end,
        time_s: run.time_s,
        commands: tally.commands(),
        errors: tally.errors(),
        differences: tally.differences(),
        unknown_answers: tally.statements.iter().map(|s| s.unknown).sum(),
        late_starts: tally.late,
        not_replayed: not_replayed(&read, &tally),
        connections: ReplayConnections {
            replayed: read.tally.replayed_connections,
            opened: tally.opened,
            lost: tally.lost,
            refused: refused_logins(bench, options, &tally),
        },
        reached_s,
        achieved_speed: if replaying_s > 0.0 { reached_s / replaying_s } else { 0.0 },
        counters: run.counters,
        rates: run.rates,
        latency_ms: run.latency_ms,
        service_latency_ms: run.service_latency_ms,
        client: client.as_ref().map(ClientResult::of),
        statements,
        server: run.server,
        run: run.run,
    };
    ReplayRan { outcome, result: Some(result), ending: read.ending, read_error: read.error, client }
}

fn capture_facts(options: &CaptureReplayOptions, header: &CaptureHeader, read: &DispatchOutcome) -> CaptureFacts {
    let problem = match (&read.error, &read.ending) {
        (Some(error), _) => Some(error.to_string()),
        (None, Some(Ending::Truncated { offset, reason })) => Some(format!("cut off at byte {offset} ({reason})")),
        _ => None,
    };
    CaptureFacts {
        file: options.file.display().to_string(),
        source: header.source.name().to_owned(),
        answers: header.answers.name().to_owned(),
        connections: read.tally.connections,
        commands: read.tally.commands,
        already_open: read.tally.already_open,
        read_s: read.tally.read_to_ns as f64 / 1e9,
        complete: problem.is_none() && matches!(read.ending, Some(Ending::Clean(_))),
        problem,
        gaps: read.tally.gaps,
    }
}

/// Commands not sent, by why: the reader's reasons, then the loops'.
fn not_replayed(read: &DispatchOutcome, tally: &ReplayTally) -> BTreeMap<String, u64> {
    let reader = Unreplayed::ALL.iter().zip(read.tally.unreplayed).map(|(why, n)| (why.name(), n));
    let loops = LoopSkip::ALL.iter().zip(tally.skipped).map(|(why, n)| (why.name(), n));
    reader.chain(loops).filter(|&(_, n)| n > 0).map(|(why, n)| (why.to_owned(), n)).collect()
}

fn refused_logins(bench: &Bench, options: &CaptureReplayOptions, tally: &ReplayTally) -> Vec<RefusedLoginResult> {
    tally
        .refused
        .iter()
        .map(|r| {
            let n = r.login as usize;
            let user = match n.checked_sub(1).and_then(|m| options.users.get(m)) {
                Some(mapping) => mapping.user.clone(),
                None => bench.mysql.user.clone(),
            };
            RefusedLoginResult {
                user,
                for_captured: options.stands_for(n),
                connections: r.connections,
                error: r.error.clone(),
            }
        })
        .collect()
}

fn replayed_statements(read: &DispatchOutcome, tally: &ReplayTally) -> Vec<ReplayStatementResult> {
    let none = StatementTally::default();
    read.table
        .entries()
        .iter()
        .enumerate()
        .map(|(index, entry)| statement_result(entry, tally.statements.get(index).unwrap_or(&none)))
        .filter(|s| s.count > 0 || s.captured_count > 0)
        .collect()
}

fn brief(latency: Option<&LatencyHistogram>) -> Option<LatencyBrief> {
    let latency = latency.filter(|l| l.events() > 0)?;
    // A percentile is its bucket's bound, which may lie above the largest
    // time recorded: it is never shown above the max.
    let max = latency.max_ns() as f64 / 1e6;
    Some(LatencyBrief { p50: latency.percentile(50.0).min(max), p99: latency.percentile(99.0).min(max), max })
}

fn statement_result(entry: &StatementEntry, replayed: &StatementTally) -> ReplayStatementResult {
    let examples = Difference::ALL
        .iter()
        .zip(&replayed.examples)
        .filter_map(|(kind, example)| Some(example_result(*kind, example.as_deref()?, &entry.text)))
        .collect();
    ReplayStatementResult {
        statement: entry.text.clone(),
        id: entry.id.clone(),
        count: replayed.count,
        captured_count: entry.captured_runs,
        errors: replayed.errors.iter().map(|(code, n)| (code.to_string(), *n)).collect(),
        latency_ms: brief(replayed.latency.as_deref()),
        captured_latency_ms: brief(entry.captured_latency.as_deref()),
        rows: replayed.rows,
        captured_rows: entry.captured_rows,
        differences: Difference::ALL
            .iter()
            .zip(replayed.differences)
            .filter(|&(_, n)| n > 0)
            .map(|(kind, n)| (kind.name().to_owned(), n))
            .collect(),
        unknown: replayed.unknown,
        examples,
    }
}

fn example_result(kind: Difference, example: &DifferenceExample, statement: &str) -> DifferenceExampleResult {
    let text = match &example.params {
        Some(params) => execute_text(&example.payload, statement, params),
        None => command_text(&example.payload, example.payload_len),
    };
    DifferenceExampleResult {
        kind: kind.name().to_owned(),
        connection: example.conn,
        command: example.command_no,
        at_s: example.offset_ns as f64 / 1e9,
        text,
        captured: example.captured.clone(),
        replayed: example.replayed.clone(),
    }
}

/// An execute as its statement's (normalised) text and its values, as
/// `EXECUTE stmt 3 (select c from sbtest1 where id = ?) params (17)`.
fn execute_text(payload: &[u8], statement: &str, params: &str) -> String {
    let id = payload.get(1..5).and_then(|id| id.try_into().ok()).map_or(0, u32::from_le_bytes);
    format!("EXECUTE stmt {id} ({statement}) params ({params})")
}

/// A command as a reader wants it shown: a statement's text, its control
/// characters escaped, or the command's name and size.
fn command_text(payload: &[u8], whole_len: usize) -> String {
    let Some((&command, rest)) = payload.split_first() else { return String::new() };
    if command != COM_QUERY && command != COM_STMT_PREPARE {
        return format!("{} ({whole_len} bytes)", command_name(command));
    }
    let mut text = String::new();
    for c in String::from_utf8_lossy(rest).chars() {
        match c {
            '\n' => text.push_str("\\n"),
            '\t' => text.push(' '),
            c if c.is_control() => text.extend(c.escape_default()),
            c => text.push(c),
        }
    }
    if payload.len() < whole_len {
        text.push_str(" ...");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_shown_as_their_text_or_their_name() {
        assert_eq!(command_text(b"\x03SELECT 'a'\n\x1b", 13), "SELECT 'a'\\n\\u{1b}");
        assert_eq!(command_text(b"\x03SELECT", 600), "SELECT ...");
        assert_eq!(command_text(b"\x17\x01\x00\x00\x00", 19), "COM_STMT_EXECUTE (19 bytes)");
        assert_eq!(
            execute_text(b"\x17\x03\x00\x00\x00", "select c from t where id = ?", "17"),
            "EXECUTE stmt 3 (select c from t where id = ?) params (17)"
        );
    }
}
