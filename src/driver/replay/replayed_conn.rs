//! One replayed connection's state machine, without I/O: the captured
//! commands of its connection come in (its queue of feed items), the
//! commands to send go out when each is due, the server's answers come in
//! and are summed up, counted and compared with the capture's. Like
//! [`EventPipeline`](crate::driver::EventPipeline) it never sees a socket:
//! its loop moves the bytes.
//!
//! - A command is due at its captured time divided by the speed (or, at
//!   `--speed=max`, as soon as the answer before it is in), and one is in
//!   flight at a time: the captured client waited for each answer (a
//!   log's times are too coarse to say otherwise).
//! - Its latency counts from when it was due, so a server slower than
//!   the captured one shows as latency, not as a slower schedule (as
//!   `--rate` counts from each event's arrival); a start over a second
//!   late is counted.
//! - Prepared statements are prepared again and their ids mapped: an
//!   execute, fetch, reset, long data or close of a captured id goes out
//!   with this connection's id for it; one whose prepare failed here, or
//!   that names an id the connection never prepared, is not sent, and
//!   counted.
//! - Each answer is compared with the captured one when both are known (the
//!   capture's answer may come after the replay's, at `--speed=max`).

use std::collections::{HashMap, VecDeque};
use std::ops::Range;

use wirebench_protocol::command::ExecuteParams;
use wirebench_protocol::constants::command::{
    COM_STMT_BULK_EXECUTE, COM_STMT_CLOSE, COM_STMT_EXECUTE, COM_STMT_FETCH, COM_STMT_RESET, COM_STMT_SEND_LONG_DATA,
};
use wirebench_protocol::framing::{finish_packet, start_packet};
use wirebench_protocol::response::{AnswerForm, AnswerKind, AnswerSummariser, AnswerSummary, ColumnShape};
use wirebench_protocol::{Capabilities, CodecError};

use super::feed::{CapturedAnswer, FeedItem, ReplayConnId, COMMAND_ANSWER_CAPTURED};
use super::replay_tally::ReplayedAnswer;
use super::replay_tally::{
    compare_answers, describe_captured, describe_params, describe_replayed, DifferenceExample, LoopSkip, ReplayTally,
};
use crate::driver::Budget;
use crate::stats::{LoopStats, QueryKind};

/// A command that starts this much after its time or later counts as
/// late, as `--rate` counts an event that starts a second after its arrival.
pub const LATE_NS: u64 = 1_000_000_000;

/// When captured times are due on the run's clock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReplaySchedule {
    /// `--speed`; `None` for `max`.
    pub speed: Option<f64>,
    /// When the capture's first record is due, ns since the run's start.
    pub start_ns: u64,
}

impl ReplaySchedule {
    /// When a record `offset_ns` into the capture is due; `None` at `max`.
    #[inline]
    pub fn due_at(&self, offset_ns: u64) -> Option<u64> {
        let speed = self.speed?;
        Some(self.start_ns.saturating_add((offset_ns as f64 / speed) as u64))
    }
}

/// What a replayed connection waits for after [`ReplayedConn::fill`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplayStep {
    /// A command is in flight: its answer.
    Answer,
    /// The next command is due at this time (ns since the run's start).
    Until(u64),
    /// Its next records, which the capture's reader has not handed over yet.
    Records,
    /// Nothing more: its capture closed it, or the run's time is up.
    Quit,
}

/// What a connection's loop lends it while it fills or reads.
pub struct ReplayTurn<'a> {
    pub stats: &'a mut LoopStats,
    pub tally: &'a mut ReplayTally,
    /// The run's limits: no command starts once they say so.
    pub budget: &'a mut Budget,
    pub schedule: &'a ReplaySchedule,
}

/// Why a replayed connection cannot go on.
#[derive(Debug, thiserror::Error)]
pub enum ReplayConnError {
    /// The answer could not be read.
    #[error("the server's answer broke the protocol: {0}")]
    Protocol(#[from] CodecError),
    #[error("the server sent an answer with no command outstanding")]
    Unsolicited,
}

/// A statement this connection prepared: its id here, its result
/// columns (for the rows of its executes when the server skips them), and
/// its parameters' count and last bound types (to show an execute's values).
#[derive(Debug, Clone)]
struct PreparedHere {
    id: u32,
    columns: Vec<ColumnShape>,
    params: u16,
    types: Vec<u8>,
}

/// What the feed said of a command beside its payload.
#[derive(Debug, Clone, Copy)]
struct Queued {
    statement: u32,
    offset_ns: u64,
    captured_expected: bool,
}

/// The command in flight.
#[derive(Debug, Clone, Copy)]
struct SentCommand {
    statement: u32,
    /// Its time in the capture, ns since the capture's first record.
    offset_ns: u64,
    due_ns: u64,
    sent_ns: u64,
}

/// A sent command whose answers, the replayed and the captured, are
/// compared once both are in.
#[derive(Debug)]
struct Check {
    statement: u32,
    command_no: u64,
    offset_ns: u64,
    /// Its payload in the connection's arena, for an example.
    payload: Range<usize>,
    /// The capture has its answer: wait for it.
    captured_expected: bool,
    captured: Option<CapturedAnswer>,
    replayed: Option<ReplayedAnswer>,
    /// The replayed error's message.
    message: Option<String>,
    /// A prepare's result columns and parameter count on replay.
    prepared_columns: Vec<ColumnShape>,
    prepared_params: u16,
    /// Not sent: only its captured answer is waited for, to be dropped.
    skipped: bool,
}

/// One replayed connection; see the module documentation.
pub struct ReplayedConn {
    pub id: ReplayConnId,
    /// Its feed items not yet used, from `head`.
    queue: Vec<u8>,
    head: usize,
    summariser: AnswerSummariser,
    in_flight: Option<SentCommand>,
    checks: VecDeque<Check>,
    /// The payloads of the commands in `checks`.
    arena: Vec<u8>,
    /// Captured statement ids to this connection's; `None` where the
    /// prepare failed here.
    prepared: HashMap<u32, Option<PreparedHere>>,
    /// When it could last start a command: logged in, or its last answer in.
    ready_since: u64,
    /// Commands sent, for an example's number.
    commands: u64,
    /// No more commands will be sent.
    finished: bool,
}

impl ReplayedConn {
    /// A connection the capture opened, known at `now_ns`; its records
    /// queue until it has logged in.
    pub fn new(id: ReplayConnId, now_ns: u64) -> Self {
        ReplayedConn {
            id,
            queue: Vec::new(),
            head: 0,
            summariser: AnswerSummariser::new(Capabilities::empty()),
            in_flight: None,
            checks: VecDeque::new(),
            arena: Vec::new(),
            prepared: HashMap::new(),
            ready_since: now_ns,
            commands: 0,
            finished: false,
        }
    }

    /// Logged in at `now_ns`, with `caps` in force: its answers are read
    /// under them, and its first command may start.
    pub fn logged_in(&mut self, caps: Capabilities, now_ns: u64) {
        self.summariser = AnswerSummariser::new(caps);
        self.ready_since = now_ns;
    }

    /// Appends a feed item of this connection (its bytes as the feed has them).
    pub fn push(&mut self, item: &[u8]) {
        // The used items go once they are half the queue or more: a
        // connection fed ahead of its schedule is never empty, and would
        // otherwise keep all its capture. Each byte is moved at most once
        // after it is used, and the queue holds at most twice what is not.
        if self.head > 0 && self.head * 2 >= self.queue.len() {
            self.queue.drain(..self.head);
            self.head = 0;
        }
        self.queue.extend_from_slice(item);
    }

    /// Bytes queued and not yet used.
    pub fn queued(&self) -> usize {
        self.queue.len() - self.head
    }

    /// Records arrived for a connection that waited for them at `now_ns`:
    /// at `--speed=max` its next command could not start before.
    pub fn fed(&mut self, now_ns: u64) {
        self.ready_since = self.ready_since.max(now_ns);
    }

    /// Whether a command is in flight.
    pub fn awaits_answer(&self) -> bool {
        self.in_flight.is_some()
    }

    /// Appends the commands due by `now_ns` to `out` (whole packets from
    /// sequence id 0); what the connection waits for then.
    pub fn fill(&mut self, out: &mut Vec<u8>, now_ns: u64, turn: &mut ReplayTurn<'_>) -> ReplayStep {
        loop {
            if self.in_flight.is_some() {
                return ReplayStep::Answer;
            }
            if self.finished {
                return ReplayStep::Quit;
            }
            let rest = self.queue.get(self.head..).unwrap_or_default();
            let Some((item, len)) = FeedItem::parse(rest) else {
                return ReplayStep::Records;
            };
            match item {
                FeedItem::Answer { answer, .. } => {
                    self.head += len;
                    self.captured_answer(answer, turn.tally);
                }
                FeedItem::Close { .. } | FeedItem::Open(_) => {
                    self.head += len;
                    self.close(turn.tally);
                    return ReplayStep::Quit;
                }
                FeedItem::Command(command) => {
                    let due = turn.schedule.due_at(command.offset_ns).unwrap_or(self.ready_since);
                    if due > now_ns {
                        return ReplayStep::Until(due);
                    }
                    if !turn.budget.take_event(now_ns) {
                        self.cut(turn.tally);
                        return ReplayStep::Quit;
                    }
                    let queued = Queued {
                        statement: command.statement,
                        offset_ns: command.offset_ns,
                        captured_expected: command.flags & COMMAND_ANSWER_CAPTURED != 0,
                    };
                    let payload = self.head + len - command.payload.len()..self.head + len;
                    self.head += len;
                    let Some(form) = self.send(out, payload, queued, turn) else { continue };
                    self.count_start(due, now_ns, turn);
                    self.commands += 1;
                    if form == AnswerForm::Nothing {
                        // No answer comes (COM_STMT_CLOSE, SEND_LONG_DATA):
                        // it is done once sent.
                        let answer = ReplayedAnswer { kind: AnswerKind::Ok, ..ReplayedAnswer::default() };
                        let sent = SentCommand {
                            statement: queued.statement,
                            offset_ns: queued.offset_ns,
                            due_ns: due,
                            sent_ns: now_ns,
                        };
                        self.count_run(sent, now_ns, &answer, turn.stats, turn.tally);
                        continue;
                    }
                    self.in_flight = Some(SentCommand {
                        statement: queued.statement,
                        offset_ns: queued.offset_ns,
                        due_ns: due,
                        sent_ns: now_ns,
                    });
                    return ReplayStep::Answer;
                }
            }
        }
    }

    /// Writes the queued command at `payload` (its statement id mapped)
    /// and starts reading its answer; the form of the answer, or `None`
    /// when it is not sent (counted).
    fn send(
        &mut self,
        out: &mut Vec<u8>,
        payload: Range<usize>,
        queued: Queued,
        turn: &mut ReplayTurn<'_>,
    ) -> Option<AnswerForm> {
        let Queued { statement, offset_ns, captured_expected } = queued;
        let bytes = self.queue.get(payload.clone()).unwrap_or_default();
        let command = bytes.first().copied().unwrap_or(0);
        let form = AnswerForm::of(command);
        let mapped = match captured_statement_id(bytes) {
            None => None,
            Some(captured) => match self.prepared.get(&captured) {
                Some(Some(here)) => Some((here.id, captured)),
                found => {
                    let why = if found.is_some() { LoopSkip::PrepareFailed } else { LoopSkip::UnknownStatement };
                    turn.tally.record_skip(why);
                    if captured_expected {
                        self.checks.push_back(Check::skipped(statement));
                    }
                    return None;
                }
            },
        };
        let start = start_packet(out);
        out.extend_from_slice(bytes);
        if let Some((id, captured)) = mapped {
            if let Some(field) = out.get_mut(start + 5..start + 9) {
                field.copy_from_slice(&id.to_le_bytes());
            }
            match command {
                COM_STMT_CLOSE => _ = self.prepared.remove(&captured),
                COM_STMT_EXECUTE => {
                    if let Some(Some(here)) = self.prepared.get_mut(&captured) {
                        here.keep_bound_types(self.queue.get(payload.clone()).unwrap_or_default());
                    }
                }
                _ => {}
            }
        }
        let first_seq = finish_packet(out, start, 0);
        if form == AnswerForm::Nothing {
            return Some(form);
        }
        let columns = mapped
            .and_then(|(_, captured)| self.prepared.get(&captured))
            .and_then(Option::as_ref)
            .map_or(&[][..], |here| &here.columns[..]);
        if let Err(error) = self.summariser.begin(form, first_seq, columns) {
            // Only a replication command, which the reader never hands over.
            debug_assert!(false, "{error}");
            return None;
        }
        let at = self.arena.len();
        self.arena.extend_from_slice(self.queue.get(payload).unwrap_or_default());
        self.checks.push_back(Check {
            statement,
            command_no: self.commands + 1,
            offset_ns,
            payload: at..self.arena.len(),
            captured_expected,
            captured: None,
            replayed: None,
            message: None,
            prepared_columns: Vec::new(),
            prepared_params: 0,
            skipped: false,
        });
        Some(form)
    }

    /// A command started at `now_ns`, due at `due_ns`: late, and the
    /// client's delay (from when it could have started).
    fn count_start(&mut self, due_ns: u64, now_ns: u64, turn: &mut ReplayTurn<'_>) {
        if now_ns.saturating_sub(due_ns) > LATE_NS {
            turn.tally.late += 1;
        }
        if turn.stats.records_client_delay() {
            turn.stats.record_client_delay(now_ns.saturating_sub(due_ns.max(self.ready_since)));
        }
    }

    /// Walks the answer at the start of `input`; the bytes consumed (whole
    /// packets and rows as far as they go: keep the rest).
    pub fn on_input(
        &mut self,
        input: &[u8],
        now_ns: u64,
        stats: &mut LoopStats,
        tally: &mut ReplayTally,
    ) -> Result<usize, ReplayConnError> {
        let Some(flight) = self.in_flight else {
            return if input.is_empty() { Ok(0) } else { Err(ReplayConnError::Unsolicited) };
        };
        let progress = self.summariser.advance(input)?;
        let Some(summary) = progress.done else { return Ok(progress.consumed) };
        if progress.consumed < input.len() {
            return Err(ReplayConnError::Unsolicited);
        }
        self.in_flight = None;
        self.ready_since = now_ns;
        let answer = replayed_answer(&summary);
        self.count_run(flight, now_ns, &answer, stats, tally);
        if let Some(check) = self.checks.iter_mut().rev().find(|c| !c.skipped && c.replayed.is_none()) {
            check.replayed = Some(answer);
            check.message = summary.error.map(|e| wirebench_protocol::ServerText(&e.message).to_string());
            if answer.prepared.is_some() {
                check.prepared_columns = self.summariser.prepared_columns().to_vec();
                check.prepared_params = summary.prepared.map_or(0, |p| p.params);
            }
        }
        self.take_captured_answers(tally);
        self.settle(tally);
        Ok(progress.consumed)
    }

    /// Takes the captured answers at the front of the queue (the one to
    /// the command just answered, usually).
    fn take_captured_answers(&mut self, tally: &mut ReplayTally) {
        let mut rest = self.queue.get(self.head..).unwrap_or_default();
        while let Some((FeedItem::Answer { answer, .. }, len)) = FeedItem::parse(rest) {
            self.head += len;
            rest = rest.get(len..).unwrap_or_default();
            if let Some(check) = self.checks.iter_mut().find(|c| c.captured_expected && c.captured.is_none()) {
                check.captured = Some(answer);
            }
        }
        let _ = tally;
    }

    /// Counts the run of `sent`, answered at `now_ns`.
    fn count_run(
        &self,
        sent: SentCommand,
        now_ns: u64,
        answer: &ReplayedAnswer,
        stats: &mut LoopStats,
        tally: &mut ReplayTally,
    ) {
        let latency = now_ns.saturating_sub(sent.due_ns);
        match answer.error {
            Some(_) => stats.record_error(),
            None => stats.record_query(QueryKind::classify(answer.result_sets > 0, answer.affected_rows)),
        }
        stats.record_event(0, latency, now_ns.saturating_sub(sent.sent_ns));
        tally.record_run(sent.statement, latency, answer);
        if sent.offset_ns >= tally.reached_ns {
            (tally.reached_ns, tally.reached_at_ns) = (sent.offset_ns, now_ns);
        }
    }

    /// The capture's answer to the oldest command waiting for it.
    fn captured_answer(&mut self, answer: CapturedAnswer, tally: &mut ReplayTally) {
        if let Some(check) = self.checks.iter_mut().find(|c| c.captured_expected && c.captured.is_none()) {
            check.captured = Some(answer);
        }
        self.settle(tally);
    }

    /// Compares the checks at the front whose answers are both in.
    fn settle(&mut self, tally: &mut ReplayTally) {
        while let Some(check) = self.checks.front() {
            let captured_in = !check.captured_expected || check.captured.is_some();
            if !captured_in || (!check.skipped && check.replayed.is_none()) {
                break;
            }
            if let Some(check) = self.checks.pop_front() {
                self.conclude(check, tally);
            }
        }
        if self.checks.is_empty() {
            self.arena.clear();
        }
    }

    /// A check with both answers (or all it will have): its statement id
    /// mapped if it was a prepare, its difference counted.
    fn conclude(&mut self, check: Check, tally: &mut ReplayTally) {
        let Some(replayed) = check.replayed.filter(|_| !check.skipped) else { return };
        let Some(captured) = check.captured else {
            tally.statement(check.statement).unknown += 1;
            return;
        };
        if let Some(captured_id) = captured.prepared {
            let (columns, params) = (check.prepared_columns, check.prepared_params);
            let here = replayed.prepared.map(|id| PreparedHere { id, columns, params, types: Vec::new() });
            self.prepared.insert(captured_id, here);
        }
        let Some(difference) = compare_answers(&captured, &replayed) else { return };
        let payload = self.arena.get(check.payload).unwrap_or_default();
        let prepared = captured_statement_id(payload).and_then(|id| self.prepared.get(&id)).and_then(Option::as_ref);
        tally.record_difference(check.statement, difference, || DifferenceExample {
            captured: describe_captured(&captured),
            replayed: describe_replayed(&replayed, check.message.as_deref()),
            params: prepared.and_then(|here| describe_params(payload, here.params, &here.types)),
            ..DifferenceExample::new(self.id, check.command_no, check.offset_ns, payload)
        });
    }

    /// The capture closed the connection: what it still owes of answers
    /// is not in it (the capture ended first).
    fn close(&mut self, tally: &mut ReplayTally) {
        self.finished = true;
        for check in &mut self.checks {
            check.captured_expected = false;
        }
        self.settle(tally);
    }

    /// The run's time is up: nothing more is sent (what the connection
    /// holds is counted as not replayed), and the answers the capture still
    /// holds for what was sent are not waited for.
    fn cut(&mut self, tally: &mut ReplayTally) {
        self.finished = true;
        self.checks.clear();
        self.arena.clear();
        self.skip_held(tally, LoopSkip::RunEnded);
    }

    /// Counts the commands not yet taken from the queue as not replayed.
    fn skip_held(&mut self, tally: &mut ReplayTally, why: LoopSkip) {
        let mut rest = self.queue.get(self.head..).unwrap_or_default();
        while let Some((item, len)) = FeedItem::parse(rest) {
            if let FeedItem::Command(_) = item {
                tally.record_skip(why);
            }
            rest = rest.get(len..).unwrap_or_default();
        }
        self.head = self.queue.len();
    }

    /// The connection is gone (lost, or the run ended with its command in
    /// flight): the commands it still holds are not replayed, for `why`.
    pub fn abandon(&mut self, tally: &mut ReplayTally, why: LoopSkip) {
        self.in_flight = None;
        for check in self.checks.iter_mut().filter(|c| c.replayed.is_none()) {
            check.skipped = true;
        }
        self.close(tally);
        self.skip_held(tally, why);
    }
}

impl PreparedHere {
    /// An execute that binds its parameters' types: they are kept (in
    /// place: nothing is allocated once the first are kept) for the
    /// executes after it, which bind none.
    fn keep_bound_types(&mut self, execute: &[u8]) {
        let Ok(params) = ExecuteParams::parse(execute, usize::from(self.params)) else { return };
        if let Some(types) = params.bound_types.filter(|&types| types != self.types) {
            self.types.clear();
            self.types.extend_from_slice(types);
        }
    }
}

impl Check {
    fn skipped(statement: u32) -> Self {
        Check {
            statement,
            command_no: 0,
            offset_ns: 0,
            payload: 0..0,
            captured_expected: true,
            captured: None,
            replayed: None,
            message: None,
            prepared_columns: Vec::new(),
            prepared_params: 0,
            skipped: true,
        }
    }
}

/// The captured statement id a command names: the four bytes after the
/// command byte of the commands on a prepared statement.
fn captured_statement_id(payload: &[u8]) -> Option<u32> {
    let (&command, rest) = payload.split_first()?;
    let on_statement = matches!(
        command,
        COM_STMT_EXECUTE
            | COM_STMT_SEND_LONG_DATA
            | COM_STMT_CLOSE
            | COM_STMT_RESET
            | COM_STMT_FETCH
            | COM_STMT_BULK_EXECUTE
    );
    let id: [u8; 4] = rest.get(..4)?.try_into().ok()?;
    on_statement.then(|| u32::from_le_bytes(id))
}

fn replayed_answer(summary: &AnswerSummary) -> ReplayedAnswer {
    ReplayedAnswer {
        kind: summary.kind,
        error: summary.error.as_ref().map(|e| e.code),
        affected_rows: summary.affected_rows,
        result_sets: summary.result_sets,
        rows: summary.rows,
        row_checksum: summary.row_checksum,
        prepared: summary.prepared.map(|p| p.statement_id),
    }
}

#[cfg(test)]
#[path = "replayed_conn_tests.rs"]
mod tests;
