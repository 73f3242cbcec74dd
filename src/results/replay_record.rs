//! A replay's result (`wirebench replay FILE --format=json`'s last line,
//! `{"type":"replay",...}`) and its text report: the replay's totals, a
//! row per statement with the captured latency beside the replayed, and
//! the differences from the capture, each with an example.
//!
//! Built by the run orchestration from what the loops and the capture's
//! reader counted; read back by `wirebench compare`.

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};

use serde::{Deserialize, Serialize};

use super::latency_summary::LatencySummary;
use super::record::{ClientResult, CounterTotals, Rates, RunEnd, RunInfo};
use crate::server_stats::ServerResult;

/// What was replayed: the capture, as far as it was read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaptureFacts {
    pub file: String,
    /// `record`, `pcap`, `general-log`, `slow-log`.
    pub source: String,
    /// What the capture holds of answers: `whole`, `partial` or `none`.
    pub answers: String,
    /// Connections and commands read (all shards').
    pub connections: u64,
    pub commands: u64,
    /// Connections open before the capture began.
    pub already_open: u64,
    /// Seconds of the capture read (from its first record).
    pub read_s: f64,
    /// False for a file cut off (a crash) or damaged: what it held before
    /// was replayed.
    pub complete: bool,
    /// Why it is not complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// Places where the capture lost bytes of a connection.
    pub gaps: u64,
}

/// A latency's few figures, in ms.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LatencyBrief {
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
}

/// The first command of a statement found to differ in one way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DifferenceExampleResult {
    /// `fails_now`, `failed_then`, `other_error`, `affected_rows`, `rows`, `checksum`.
    pub kind: String,
    /// The replayed connection and the command's number on it (from 1).
    pub connection: u64,
    pub command: u64,
    /// Its time in the capture, seconds from its first record.
    pub at_s: f64,
    /// The command: its statement's text, or the command and its size.
    pub text: String,
    pub captured: String,
    pub replayed: String,
}

/// One statement (a fingerprint, or a command by name).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayStatementResult {
    pub statement: String,
    /// The fingerprint's XXH64 in hex: what `compare` matches statements by.
    pub id: String,
    /// Runs replayed (answered, errors included).
    pub count: u64,
    /// Runs in the capture (this instance's copies and shard not counted in).
    pub captured_count: u64,
    /// Errors by code.
    pub errors: BTreeMap<String, u64>,
    pub latency_ms: Option<LatencyBrief>,
    /// The capture's time from command to answer, where it has answers.
    pub captured_latency_ms: Option<LatencyBrief>,
    pub rows: u64,
    pub captured_rows: u64,
    /// Differences from the capture, by kind.
    pub differences: BTreeMap<String, u64>,
    /// Runs whose captured answer is not in the capture (a log's).
    pub unknown: u64,
    pub examples: Vec<DifferenceExampleResult>,
}

impl ReplayStatementResult {
    pub fn errors_total(&self) -> u64 {
        self.errors.values().sum()
    }

    pub fn differences_total(&self) -> u64 {
        self.differences.values().sum()
    }
}

/// A captured user whose logins the server refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefusedLoginResult {
    /// The user the replay logged in as.
    pub user: String,
    /// The captured users it stands for: `--user-map`'s, or `(others)`.
    pub for_captured: String,
    pub connections: u64,
    pub error: String,
}

/// The replayed connections.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayConnections {
    /// Connections this instance replays (copies included).
    pub replayed: u64,
    pub opened: u64,
    /// Closed by the server or broken before the capture closed them.
    pub lost: u64,
    pub refused: Vec<RefusedLoginResult>,
}

/// The whole replay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayResult {
    pub run: RunInfo,
    pub capture: CaptureFacts,
    /// `--speed`; `null` for `max`.
    pub speed: Option<f64>,
    pub multiply: u32,
    pub read_only: bool,
    pub end: RunEnd,
    pub time_s: f64,
    /// Commands replayed (answered, errors included).
    pub commands: u64,
    /// Of them, those the server answered with an error.
    pub errors: u64,
    /// Of them, those whose answer differs from the captured one.
    pub differences: u64,
    /// Of them, those whose captured answer is not in the capture.
    pub unknown_answers: u64,
    /// Commands that started over a second after their time.
    pub late_starts: u64,
    /// Commands not sent, by why (each copy counted).
    pub not_replayed: BTreeMap<String, u64>,
    pub connections: ReplayConnections,
    /// Seconds of the capture replayed, and that over the time it took
    /// (from its first record's time to the answer of the last command
    /// replayed): the speed the replay held.
    pub reached_s: f64,
    pub achieved_speed: f64,
    pub counters: CounterTotals,
    pub rates: Rates,
    /// Each command's latency from when it was due.
    pub latency_ms: LatencySummary,
    /// Each command's service time, from its send: the wait behind a
    /// slower answer before it left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_latency_ms: Option<LatencySummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientResult>,
    pub statements: Vec<ReplayStatementResult>,
    #[serde(default)]
    pub server: Option<ServerResult>,
}

/// The most statements the text report lists (JSON lists them all).
const LISTED: usize = 30;
/// The longest statement text shown in the text report.
const SHOWN_TEXT: usize = 100;

/// `text` cut at `max` characters.
pub(super) fn shortened(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{} ...", &text[..at]),
        None => text.to_owned(),
    }
}

fn ms_or_dash(brief: Option<LatencyBrief>, pick: impl Fn(LatencyBrief) -> f64) -> String {
    brief.map_or_else(|| "-".to_owned(), |b| format!("{:.3}", pick(b)))
}

impl ReplayResult {
    /// The statements the text report lists: those that differ or fail
    /// first, then by count.
    fn listed(&self) -> Vec<&ReplayStatementResult> {
        let mut all: Vec<&ReplayStatementResult> = self.statements.iter().filter(|s| s.count > 0).collect();
        all.sort_by(|a, b| {
            let trouble = |s: &ReplayStatementResult| s.differences_total() + s.errors_total();
            (trouble(b) > 0).cmp(&(trouble(a) > 0)).then(b.count.cmp(&a.count)).then(a.statement.cmp(&b.statement))
        });
        all
    }
}

impl fmt::Display for ReplayResult {
    /// The replay's block after sysbench's report.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let speed = self.speed.map_or_else(|| "max".to_owned(), |s| format!("{s}"));
        writeln!(
            f,
            "Replay of {} ({}, answers {}) at speed {speed}{}{}:",
            self.capture.file,
            self.capture.source,
            self.capture.answers,
            if self.multiply > 1 { format!(", {} copies of each connection", self.multiply) } else { String::new() },
            if self.read_only { ", read-only" } else { "" },
        )?;
        writeln!(
            f,
            "    capture read:                        {:.3} s, {} connections, {} commands{}",
            self.capture.read_s,
            self.capture.connections,
            self.capture.commands,
            if self.capture.complete { "" } else { " (not whole: see below)" }
        )?;
        writeln!(f, "    commands replayed:                   {}", self.commands)?;
        writeln!(f, "    errors:                              {}", self.errors)?;
        writeln!(f, "    differences from the capture:        {}", self.differences)?;
        if self.unknown_answers > 0 {
            writeln!(f, "    answers not in the capture:          {} (not compared)", self.unknown_answers)?;
        }
        writeln!(f, "    late starts (over 1 s):              {}", self.late_starts)?;
        writeln!(
            f,
            "    capture time replayed:               {:.3} s (speed held: {:.2})",
            self.reached_s, self.achieved_speed
        )?;
        let c = &self.connections;
        writeln!(f, "    connections:                         {} opened, {} lost", c.opened, c.lost)?;
        for (why, n) in self.not_replayed.iter().filter(|(_, &n)| n > 0) {
            writeln!(f, "    not replayed: {n} {}", not_replayed_words(why))?;
        }
        for refused in &c.refused {
            writeln!(
                f,
                "    login refused: {} connections as {} (for captured user {}): {}",
                refused.connections, refused.user, refused.for_captured, refused.error
            )?;
        }
        if let Some(problem) = &self.capture.problem {
            writeln!(f, "    capture: {problem}")?;
        }
        writeln!(f)?;
        self.statement_table(f)?;
        self.difference_list(f)
    }
}

impl ReplayResult {
    fn statement_table(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let listed = self.listed();
        if listed.is_empty() {
            return Ok(());
        }
        writeln!(f, "Per statement (latency in ms from each command's time; captured: the capture's own):")?;
        writeln!(
            f,
            "{:>9} {:>7} {:>9} {:>9} {:>9} {:>12} {:>9} {:>7}  statement",
            "count", "errors", "p50", "p99", "max", "captured p99", "rows", "diffs"
        )?;
        for s in listed.iter().take(LISTED) {
            writeln!(
                f,
                "{:>9} {:>7} {:>9} {:>9} {:>9} {:>12} {:>9} {:>7}  {}",
                s.count,
                s.errors_total(),
                ms_or_dash(s.latency_ms, |b| b.p50),
                ms_or_dash(s.latency_ms, |b| b.p99),
                ms_or_dash(s.latency_ms, |b| b.max),
                ms_or_dash(s.captured_latency_ms, |b| b.p99),
                s.rows,
                s.differences_total(),
                shortened(&s.statement, SHOWN_TEXT)
            )?;
        }
        if listed.len() > LISTED {
            writeln!(f, "  ... {} more statements (--format=json lists every one)", listed.len() - LISTED)?;
        }
        writeln!(f)
    }

    fn difference_list(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let differing: Vec<&ReplayStatementResult> =
            self.listed().into_iter().filter(|s| s.differences_total() > 0 || s.errors_total() > 0).collect();
        if differing.is_empty() {
            return writeln!(f, "No differences from the capture.");
        }
        writeln!(f, "Differences from the capture and errors, by statement:")?;
        for s in differing {
            let mut kinds = String::new();
            for (kind, n) in &s.differences {
                let _ = write!(kinds, "{}{n} {}", if kinds.is_empty() { "" } else { ", " }, describe_kind(kind));
            }
            for (code, n) in &s.errors {
                let _ = write!(kinds, "{}{n} error {code}", if kinds.is_empty() { "" } else { ", " });
            }
            writeln!(f, "  {}: {kinds}", shortened(&s.statement, SHOWN_TEXT))?;
            for e in &s.examples {
                writeln!(
                    f,
                    "    {}: connection {}, command {} (at {:.3} s): {}",
                    describe_kind(&e.kind),
                    e.connection,
                    e.command,
                    e.at_s,
                    shortened(&e.text, SHOWN_TEXT)
                )?;
                writeln!(f, "      captured: {}; replayed: {}", e.captured, e.replayed)?;
            }
        }
        Ok(())
    }
}

/// Why commands were not replayed, in words, by the result's names.
fn not_replayed_words(name: &str) -> &str {
    match name {
        "prepared_before_capture" => "on statements prepared before the capture began (their text is not in it)",
        "writes" => "that write (--read-only)",
        "log_prepare" => "prepares from a log (the log's executes run as text)",
        "log_statement_command" => "closes and resets from a log (they name no statement id)",
        "change_user" => "COM_CHANGE_USER (the replay logs in as its own users)",
        "replication" => "replication streams",
        "kill" => "KILL (its thread ids are the capture's)",
        "shutdown" => "COM_SHUTDOWN",
        "local_infile" => "LOAD DATA LOCAL INFILE (the file is not in the capture)",
        "not_a_client_command" => "commands a client does not send (COM_SLEEP, COM_CONNECT, ...)",
        "prepare_failed" => "on statements whose prepare failed on replay",
        "unknown_statement" => "on statement ids their connection never prepared",
        "no_connection" => "on connections that could not log in or were lost",
        "run_ended" => "held when the run ended (--time, a signal)",
        other => other,
    }
}

/// A difference's kind in words.
fn describe_kind(kind: &str) -> &str {
    match kind {
        "fails_now" => "fail now, did not then",
        "failed_then" => "failed then, do not now",
        "other_error" => "fail with another error",
        "affected_rows" => "other affected rows",
        "rows" => "another row count",
        "checksum" => "other row values",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_statements_are_cut_on_a_character() {
        assert_eq!(shortened("select é", 7), "select  ...");
        assert_eq!(shortened("select", 7), "select");
    }
}
