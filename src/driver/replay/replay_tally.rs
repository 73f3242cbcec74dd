//! What a loop counts of its replayed connections beside sysbench's
//! counters: per statement (the replay's statement table's index) its
//! runs, errors by code, latency, rows and differences from the capture,
//! with the first example of each kind of difference; the commands not
//! replayed, by why; the logins the server refused, by login.
//!
//! Each loop keeps its own, merged once its loop has ended; a statement's
//! histogram is made on its first run in the loop.

use wirebench_protocol::command::ExecuteParams;
use wirebench_protocol::response::{AnswerKind, Value};

use super::feed::CapturedAnswer;
use crate::stats::LatencyHistogram;

/// How a replayed answer differs from the captured one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Difference {
    /// An error now, none in the capture.
    FailsNow,
    /// No error now, one in the capture.
    FailedThen,
    /// An error both times, with another code.
    OtherError,
    /// OK both times, with other affected rows.
    AffectedRows,
    /// Rows both times, another count of them.
    Rows,
    /// As many rows, other values (the row checksum).
    Checksum,
}

impl Difference {
    pub const ALL: [Difference; 6] = [
        Difference::FailsNow,
        Difference::FailedThen,
        Difference::OtherError,
        Difference::AffectedRows,
        Difference::Rows,
        Difference::Checksum,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Difference::FailsNow => "fails_now",
            Difference::FailedThen => "failed_then",
            Difference::OtherError => "other_error",
            Difference::AffectedRows => "affected_rows",
            Difference::Rows => "rows",
            Difference::Checksum => "checksum",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// What the replayed server answered, as much as is compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReplayedAnswer {
    pub kind: AnswerKind,
    pub error: Option<u16>,
    pub affected_rows: u64,
    pub result_sets: u32,
    pub rows: u64,
    pub row_checksum: Option<u64>,
    pub prepared: Option<u32>,
}

/// How the replayed answer differs from the captured one, the gravest way
/// first; `None` when it does not, as far as the capture says.
pub fn compare_answers(captured: &CapturedAnswer, replayed: &ReplayedAnswer) -> Option<Difference> {
    let failed_then = match (captured.error, captured.kind) {
        (Some(code), _) => Some(Some(code)),
        (None, Some(AnswerKind::Error)) => Some(Some(0)),
        (None, Some(_)) => Some(None),
        // A slow log's entry without an error number: whether it failed is
        // not known, its rows are.
        (None, None) => None,
    };
    match (failed_then, replayed.error) {
        (Some(None), Some(_)) => return Some(Difference::FailsNow),
        (Some(Some(_)), None) => return Some(Difference::FailedThen),
        (Some(Some(then)), Some(now)) if then != now && then != 0 => return Some(Difference::OtherError),
        (_, Some(_)) => return None,
        _ => {}
    }
    let rows_now = replayed.result_sets > 0;
    if !rows_now && captured.kind != Some(AnswerKind::ResultSet) {
        return match captured.affected_rows {
            Some(then) if then != replayed.affected_rows => Some(Difference::AffectedRows),
            _ => None,
        };
    }
    match captured.rows {
        Some(then) if then != replayed.rows => return Some(Difference::Rows),
        _ => {}
    }
    match (captured.row_checksum, replayed.row_checksum) {
        (Some(then), Some(now)) if then != now => Some(Difference::Checksum),
        _ => None,
    }
}

/// The first command found to differ in a way, for the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DifferenceExample {
    /// The replayed connection and the command's number on it (from 1).
    pub conn: u64,
    pub command_no: u64,
    /// The command's time in the capture, ns since its first record.
    pub offset_ns: u64,
    /// Its payload, the command byte first, cut at [`EXAMPLE_BYTES`].
    pub payload: Vec<u8>,
    /// Its payload's whole length.
    pub payload_len: usize,
    pub captured: String,
    pub replayed: String,
    /// An execute's parameter values, as [`describe_params`] shows them.
    pub params: Option<String>,
}

/// The most of a command's payload an example keeps.
pub const EXAMPLE_BYTES: usize = 512;

impl DifferenceExample {
    pub fn new(conn: u64, command_no: u64, offset_ns: u64, payload: &[u8]) -> Self {
        DifferenceExample {
            conn,
            command_no,
            offset_ns,
            payload: payload.get(..EXAMPLE_BYTES).unwrap_or(payload).to_vec(),
            payload_len: payload.len(),
            captured: String::new(),
            replayed: String::new(),
            params: None,
        }
    }
}

/// The most of a string parameter an example shows.
const PARAM_TEXT_CHARS: usize = 64;

/// An execute's parameter values as SQL literals (`17, 'abc', NULL`), read
/// with the statement's parameter count and last bound types; `None` when
/// they cannot be read (then the command's size is shown instead).
pub fn describe_params(execute: &[u8], count: u16, types: &[u8]) -> Option<String> {
    let params = ExecuteParams::parse(execute, usize::from(count)).ok()?;
    let types = params.bound_types.unwrap_or(types);
    let mut text = String::new();
    for (n, value) in params.values(types).enumerate() {
        if n > 0 {
            text.push_str(", ");
        }
        param_literal(&value.ok()?, &mut text);
    }
    Some(text)
}

fn param_literal(value: &Value<'_>, out: &mut String) {
    use std::fmt::Write as _;
    let _ = match *value {
        Value::Null => write!(out, "NULL"),
        Value::Int(v) => write!(out, "{v}"),
        Value::UInt(v) => write!(out, "{v}"),
        Value::Float(v) => write!(out, "{v}"),
        Value::Double(v) => write!(out, "{v}"),
        Value::Bytes(bytes) => {
            let text = String::from_utf8_lossy(bytes);
            out.push('\'');
            for c in text.chars().take(PARAM_TEXT_CHARS) {
                match c {
                    '\'' => out.push_str("''"),
                    c if c.is_control() => out.extend(c.escape_default()),
                    c => out.push(c),
                }
            }
            if text.chars().nth(PARAM_TEXT_CHARS).is_some() {
                out.push_str("...");
            }
            out.push('\'');
            Ok(())
        }
        Value::Date { year, month, day } => write!(out, "'{year:04}-{month:02}-{day:02}'"),
        Value::DateTime { year, month, day, hour, minute, second, micros } => {
            write!(out, "'{year:04}-{month:02}-{day:02} {hour:02}:{minute:02}:{second:02}.{micros:06}'")
        }
        Value::Time { negative, days, hours, minutes, seconds, micros } => {
            let hours = u64::from(days) * 24 + u64::from(hours);
            let sign = if negative { "-" } else { "" };
            write!(out, "'{sign}{hours:02}:{minutes:02}:{seconds:02}.{micros:06}'")
        }
        _ => write!(out, "?"),
    };
}

/// A captured answer in words.
pub fn describe_captured(answer: &CapturedAnswer) -> String {
    let mut parts = Vec::new();
    match (answer.error, answer.kind) {
        (Some(code), _) => parts.push(format!("error {code}")),
        (None, Some(AnswerKind::Error)) => parts.push("an error".to_owned()),
        (None, Some(AnswerKind::Ok)) => parts.push("OK".to_owned()),
        _ => {}
    }
    if let Some(affected) = answer.affected_rows.filter(|_| answer.kind != Some(AnswerKind::ResultSet)) {
        parts.push(format!("{affected} affected"));
    }
    if let Some(rows) = answer.rows {
        parts.push(format!("{rows} rows"));
    }
    if let Some(checksum) = answer.row_checksum {
        parts.push(format!("checksum {checksum:016x}"));
    }
    if parts.is_empty() {
        return "(not in the capture)".to_owned();
    }
    parts.join(", ")
}

/// A replayed answer in words, as [`describe_captured`] says a captured one.
pub fn describe_replayed(answer: &ReplayedAnswer, message: Option<&str>) -> String {
    if let Some(code) = answer.error {
        return match message {
            Some(message) => format!("error {code}: {message}"),
            None => format!("error {code}"),
        };
    }
    if answer.result_sets == 0 {
        return format!("OK, {} affected", answer.affected_rows);
    }
    match answer.row_checksum {
        Some(checksum) => format!("{} rows, checksum {checksum:016x}", answer.rows),
        None => format!("{} rows", answer.rows),
    }
}

/// One statement's figures on one loop.
#[derive(Debug, Clone, Default)]
pub struct StatementTally {
    /// Runs answered (errors included).
    pub count: u64,
    /// Errors by code, in the order first seen.
    pub errors: Vec<(u16, u64)>,
    /// Each run's latency from its scheduled start.
    pub latency: Option<Box<LatencyHistogram>>,
    /// Rows over every result set.
    pub rows: u64,
    pub affected_rows: u64,
    pub differences: [u64; Difference::ALL.len()],
    /// The first example of each kind of difference.
    pub examples: [Option<Box<DifferenceExample>>; Difference::ALL.len()],
    /// Runs whose captured answer is not in the capture (a general log).
    pub unknown: u64,
}

impl StatementTally {
    pub fn errors(&self) -> u64 {
        self.errors.iter().map(|&(_, n)| n).sum()
    }

    pub fn differences(&self) -> u64 {
        self.differences.iter().sum()
    }

    fn merge(&mut self, other: &StatementTally) {
        self.count += other.count;
        for &(code, n) in &other.errors {
            add_error(&mut self.errors, code, n);
        }
        match (&mut self.latency, &other.latency) {
            (Some(mine), Some(theirs)) => mine.merge(theirs),
            (None, Some(theirs)) => self.latency = Some(theirs.clone()),
            _ => {}
        }
        self.rows += other.rows;
        self.affected_rows += other.affected_rows;
        for (mine, theirs) in self.differences.iter_mut().zip(other.differences) {
            *mine += theirs;
        }
        for (mine, theirs) in self.examples.iter_mut().zip(&other.examples) {
            let earlier = match (&mine, theirs) {
                (Some(a), Some(b)) => b.offset_ns < a.offset_ns,
                (None, Some(_)) => true,
                _ => false,
            };
            if earlier {
                mine.clone_from(theirs);
            }
        }
        self.unknown += other.unknown;
    }
}

fn add_error(errors: &mut Vec<(u16, u64)>, code: u16, n: u64) {
    match errors.iter_mut().find(|(c, _)| *c == code) {
        Some((_, count)) => *count += n,
        None => errors.push((code, n)),
    }
}

/// Why a loop did not send a captured command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoopSkip {
    /// Its statement's prepare failed on replay: there is no statement to run.
    PrepareFailed,
    /// Its statement id is none this connection prepared in the capture.
    UnknownStatement,
    /// Its connection could not log in, or was lost.
    NoConnection,
    /// The run ended (`--time`, a signal) before it was sent.
    RunEnded,
}

impl LoopSkip {
    pub const ALL: [LoopSkip; 4] =
        [LoopSkip::PrepareFailed, LoopSkip::UnknownStatement, LoopSkip::NoConnection, LoopSkip::RunEnded];

    /// Its name in the JSON result.
    pub fn name(self) -> &'static str {
        match self {
            LoopSkip::PrepareFailed => "prepare_failed",
            LoopSkip::UnknownStatement => "unknown_statement",
            LoopSkip::NoConnection => "no_connection",
            LoopSkip::RunEnded => "run_ended",
        }
    }
}

/// A login the server refused: which login, how often, its first error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusedLogin {
    pub login: u32,
    pub connections: u64,
    pub error: String,
}

/// Everything one loop counted of its replayed connections.
#[derive(Debug, Clone, Default)]
pub struct ReplayTally {
    pub statements: Vec<StatementTally>,
    pub skipped: [u64; LoopSkip::ALL.len()],
    /// Commands that started over a second after their time.
    pub late: u64,
    /// Connections opened (logged in) and lost (closed by the server, or
    /// broken, before their capture closed them).
    pub opened: u64,
    pub lost: u64,
    pub refused: Vec<RefusedLogin>,
    /// The first lost connection's error, for the report.
    pub first_loss: Option<String>,
    /// The latest captured time of a command answered, ns since the
    /// capture's first record: how far into the capture the replay got;
    /// and when that command was answered, ns since the run's start.
    pub reached_ns: u64,
    pub reached_at_ns: u64,
}

impl ReplayTally {
    /// The statement's figures, made on first use.
    pub fn statement(&mut self, index: u32) -> &mut StatementTally {
        let index = index as usize;
        if self.statements.len() <= index {
            self.statements.resize_with(index + 1, StatementTally::default);
        }
        &mut self.statements[index]
    }

    /// A run of statement `index` answered `answer` `latency_ns` after its
    /// scheduled start.
    #[inline]
    pub fn record_run(&mut self, index: u32, latency_ns: u64, answer: &ReplayedAnswer) {
        let statement = self.statement(index);
        statement.count += 1;
        statement.latency.get_or_insert_with(|| Box::new(LatencyHistogram::new())).record_ns(latency_ns);
        statement.rows += answer.rows;
        statement.affected_rows += answer.affected_rows;
        if let Some(code) = answer.error {
            add_error(&mut statement.errors, code, 1);
        }
    }

    /// A difference found on a run of statement `index`; `example` is made
    /// only when it is the first of its kind there.
    pub fn record_difference(
        &mut self,
        index: u32,
        difference: Difference,
        example: impl FnOnce() -> DifferenceExample,
    ) {
        let statement = self.statement(index);
        statement.differences[difference.index()] += 1;
        let slot = &mut statement.examples[difference.index()];
        if slot.is_none() {
            *slot = Some(Box::new(example()));
        }
    }

    pub fn record_skip(&mut self, why: LoopSkip) {
        self.skipped[why as usize] += 1;
    }

    pub fn record_refused(&mut self, login: u32, error: impl FnOnce() -> String) {
        match self.refused.iter_mut().find(|r| r.login == login) {
            Some(refused) => refused.connections += 1,
            None => self.refused.push(RefusedLogin { login, connections: 1, error: error() }),
        }
    }

    /// Adds another loop's tally in.
    pub fn merge(&mut self, other: &ReplayTally) {
        if self.statements.len() < other.statements.len() {
            self.statements.resize_with(other.statements.len(), StatementTally::default);
        }
        for (mine, theirs) in self.statements.iter_mut().zip(&other.statements) {
            mine.merge(theirs);
        }
        for (mine, theirs) in self.skipped.iter_mut().zip(other.skipped) {
            *mine += theirs;
        }
        self.late += other.late;
        self.opened += other.opened;
        self.lost += other.lost;
        for refused in &other.refused {
            match self.refused.iter_mut().find(|r| r.login == refused.login) {
                Some(mine) => mine.connections += refused.connections,
                None => self.refused.push(refused.clone()),
            }
        }
        if self.first_loss.is_none() {
            self.first_loss.clone_from(&other.first_loss);
        }
        if other.reached_ns > self.reached_ns {
            (self.reached_ns, self.reached_at_ns) = (other.reached_ns, other.reached_at_ns);
        }
    }

    pub fn commands(&self) -> u64 {
        self.statements.iter().map(|s| s.count).sum()
    }

    pub fn errors(&self) -> u64 {
        self.statements.iter().map(StatementTally::errors).sum()
    }

    pub fn differences(&self) -> u64 {
        self.statements.iter().map(StatementTally::differences).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(affected: u64) -> CapturedAnswer {
        CapturedAnswer { kind: Some(AnswerKind::Ok), affected_rows: Some(affected), ..CapturedAnswer::default() }
    }

    fn rows(rows: u64, checksum: u64) -> CapturedAnswer {
        CapturedAnswer {
            kind: Some(AnswerKind::ResultSet),
            rows: Some(rows),
            row_checksum: Some(checksum),
            ..CapturedAnswer::default()
        }
    }

    fn replayed_rows(rows: u64, checksum: u64) -> ReplayedAnswer {
        ReplayedAnswer {
            kind: AnswerKind::ResultSet,
            result_sets: 1,
            rows,
            row_checksum: Some(checksum),
            ..ReplayedAnswer::default()
        }
    }

    fn replayed_error(code: u16) -> ReplayedAnswer {
        ReplayedAnswer { kind: AnswerKind::Error, error: Some(code), ..ReplayedAnswer::default() }
    }

    /// Each way an answer can differ, and the same answer, as a table.
    #[test]
    fn answers_compare_the_gravest_way_first() {
        let failed = CapturedAnswer { kind: Some(AnswerKind::Error), error: Some(1062), ..Default::default() };
        let cases: &[(CapturedAnswer, ReplayedAnswer, Option<Difference>)] = &[
            (ok(1), ReplayedAnswer { affected_rows: 1, ..Default::default() }, None),
            (ok(1), ReplayedAnswer { affected_rows: 0, ..Default::default() }, Some(Difference::AffectedRows)),
            (ok(1), replayed_error(1213), Some(Difference::FailsNow)),
            (failed, ReplayedAnswer::default(), Some(Difference::FailedThen)),
            (failed, replayed_error(1062), None),
            (failed, replayed_error(1213), Some(Difference::OtherError)),
            (rows(3, 7), replayed_rows(3, 7), None),
            (rows(3, 7), replayed_rows(2, 7), Some(Difference::Rows)),
            (rows(3, 7), replayed_rows(3, 8), Some(Difference::Checksum)),
            (rows(3, 7), ReplayedAnswer::default(), Some(Difference::Rows)),
            // A slow log: rows, no checksum, nothing said of errors.
            (CapturedAnswer { rows: Some(4), ..Default::default() }, replayed_rows(4, 1), None),
            (CapturedAnswer { rows: Some(4), ..Default::default() }, replayed_rows(5, 1), Some(Difference::Rows)),
            (CapturedAnswer::default(), replayed_error(1146), None),
        ];
        for (captured, replayed, expected) in cases {
            assert_eq!(compare_answers(captured, replayed), *expected, "{captured:?} / {replayed:?}");
        }
    }

    #[test]
    fn tallies_merge_with_the_earliest_example() {
        let mut a = ReplayTally::default();
        let mut b = ReplayTally::default();
        a.record_run(2, 1_000_000, &ReplayedAnswer { rows: 3, result_sets: 1, ..Default::default() });
        b.record_run(2, 3_000_000, &replayed_error(1213));
        b.record_run(0, 1_000, &ReplayedAnswer::default());
        a.record_difference(2, Difference::Rows, || DifferenceExample::new(1, 5, 900, b"\x03SELECT 1"));
        b.record_difference(2, Difference::Rows, || DifferenceExample::new(2, 1, 100, b"\x03SELECT\n'2'"));
        b.record_difference(2, Difference::Rows, || panic!("only the first of a kind is made"));
        a.merge(&b);
        let statement = &a.statements[2];
        assert_eq!((statement.count, statement.errors(), statement.rows), (2, 1, 3));
        assert_eq!(statement.latency.as_ref().unwrap().events(), 2);
        assert_eq!(statement.differences[Difference::Rows.index()], 3);
        let example = statement.examples[Difference::Rows.index()].as_ref().unwrap();
        assert_eq!((example.conn, &example.payload[..]), (2, &b"\x03SELECT\n'2'"[..]));
        assert_eq!((a.commands(), a.errors(), a.differences()), (3, 1, 3));
    }
}
