//! A built-in test's connection as a pipeline of events: the hot-path
//! state machine, independent of the I/O backend. It writes the next
//! events' commands into a send buffer while the pipeline (`--pipeline`)
//! has room, and walks the responses it is given, counting each event as
//! its last answer comes in. The backends only move bytes between it and
//! the socket.

use std::sync::Arc;

use wirebench_protocol::command::ExecuteTemplate;
use wirebench_protocol::response::{ResponseReader, RowFormat, ServerError};
use wirebench_protocol::{Capabilities, CodecError};

use crate::driver::pacing::budget::Abandoned;
use crate::driver::IgnoreErrors;
use crate::driver::{Admission, Budget};
use crate::rand::Rng;
use crate::stats::{LoopStats, QueryKind};
use crate::workload::{CommandSink, CommandSql, EmulatedStatement, Script, StatementKind, Step, WorkloadError};

/// When an event started (ns since the run's start).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct EventStart {
    /// Its start as admitted: now, or under `--rate` its intended start.
    at: u64,
    /// When its first command was sent: where its service time starts.
    sent: u64,
    /// Its loop's warm-up cut when it was admitted ([`Budget::cut`]):
    /// an event of the warm-up is not counted after the cut.
    cut: u32,
}

impl EventStart {
    fn abandoned(self) -> Abandoned {
        Abandoned { at: self.at, cut: self.cut }
    }
}

/// A command sent and not yet answered.
#[derive(Debug, Clone, Copy)]
struct InFlight {
    format: RowFormat,
    /// What it was, for the error that names it.
    sql: CommandSql,
    kind: StatementKind,
    /// When it was written to the send buffer (ns).
    sent: u64,
    /// Set on an event's last command: when that event started.
    ends_event_started: Option<EventStart>,
    /// Set with `ends_event_started`: how many sysbench events it stands for.
    weight: u64,
    /// Its event's stamp ([`EventStart::cut`]): whether its answer is
    /// counted ([`LoopStats::counts`]).
    cut: u32,
}

/// Why a connection stopped.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// A server error not covered by `--mysql-ignore-errors` (boxed: a
    /// rare error keeps the hot path's `Result` small).
    #[error("{}", .0.error)]
    Server(Box<RefusedCommand>),
    /// The response could not be walked: the server broke the protocol
    /// (or, a bug, the reader was driven out of order).
    #[error("protocol error: {0}")]
    Protocol(#[from] CodecError),
    #[error(transparent)]
    Workload(#[from] WorkloadError),
    /// The peer sent a response nobody asked for.
    #[error("the server sent a response with no command outstanding")]
    Unsolicited,
}

/// A command the server answered with an error: the error, and the SQL
/// the command carried, as a prepared statement when `format` is binary.
#[derive(Debug)]
pub struct RefusedCommand {
    pub error: ServerError,
    pub sql: CommandSql,
    pub format: RowFormat,
}

/// A fixed-capacity FIFO: the pipeline depth never changes during a run,
/// so pushing never allocates.
#[derive(Debug)]
struct Ring<T> {
    slots: Vec<Option<T>>,
    head: usize,
    len: usize,
}

impl<T: Copy> Ring<T> {
    fn new(capacity: usize) -> Self {
        Ring { slots: vec![None; capacity.max(1)], head: 0, len: 0 }
    }
    fn is_full(&self) -> bool {
        self.len == self.slots.len()
    }
    fn push(&mut self, value: T) {
        debug_assert!(!self.is_full());
        let at = (self.head + self.len) % self.slots.len();
        if let Some(slot) = self.slots.get_mut(at) {
            *slot = Some(value);
            self.len += 1;
        }
    }
    /// The values from oldest to newest.
    fn iter(&self) -> impl Iterator<Item = T> + '_ {
        (0..self.len).filter_map(|i| self.slots.get((self.head + i) % self.slots.len()).copied().flatten())
    }
    fn pop(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let value = self.slots.get_mut(self.head).and_then(Option::take);
        self.head = (self.head + 1) % self.slots.len();
        self.len -= 1;
        value
    }
}

/// A built-in test's connection: its events in flight and what comes next.
pub struct EventPipeline {
    /// This connection's index within its loop (for per-connection stats).
    pub index: usize,
    script: Box<dyn Script>,
    rng: Rng,
    templates: Vec<ExecuteTemplate>,
    /// The kind of each statement (indexed like `templates`).
    kinds: Arc<[StatementKind]>,
    /// `--db-ps-mode=disable`: the statements, sent as text.
    emulated: Option<Arc<[EmulatedStatement]>>,
    reader: ResponseReader,
    in_flight: Ring<InFlight>,
    /// How many commands at the front of `in_flight` are a failed event's
    /// tail: sent behind the statement that failed, before its answer came.
    tail: usize,
    /// The connection runs with autocommit off (`SET autocommit=0` at
    /// login): a tail that stops short of its event's COMMIT is closed with
    /// a ROLLBACK, or the event's BEGIN, sent again, would commit it.
    autocommit_off: bool,
    /// A ROLLBACK is owed before the failed event is sent again.
    rollback_owed: bool,
    /// The event being emitted: when it started, if it has begun.
    event_started: Option<EventStart>,
    /// When the pipeline last got room for a command (an answer came in
    /// while it was full), ns since the run's start: an event admitted
    /// later could have started no sooner (the client's delay).
    room_since: u64,
    /// No more events will start on this connection.
    finished: bool,
    /// Events completed since the budget last heard of it.
    completed: u64,
    /// The sysbench events the event being emitted took from the budget
    /// (bulk_insert's rows), until it ends.
    weight_limit: Option<u64>,
    /// Start times of admitted events abandoned since the budget last heard
    /// of it, to be run again ([`Budget::refund`]); room for a full
    /// pipeline is reserved up front.
    refunds: Vec<Abandoned>,
    /// sysbench draws one number from the thread's generator after every
    /// event when `--percentile` is on (to pick a histogram slot); doing the
    /// same keeps a seeded run's values equal to sysbench's.
    draw_after_event: bool,
    /// The sysbench test whose events this runs, for error messages.
    test: &'static str,
}

impl EventPipeline {
    pub fn new(
        index: usize,
        script: Box<dyn Script>,
        rng: Rng,
        templates: Vec<ExecuteTemplate>,
        caps: Capabilities,
        pipeline: usize,
    ) -> Self {
        EventPipeline {
            index,
            script,
            rng,
            templates,
            kinds: Arc::new([]),
            emulated: None,
            reader: ResponseReader::new(caps, RowFormat::Binary),
            in_flight: Ring::new(pipeline),
            tail: 0,
            autocommit_off: false,
            rollback_owed: false,
            event_started: None,
            room_since: 0,
            finished: false,
            completed: 0,
            weight_limit: None,
            refunds: Vec::with_capacity(pipeline + 1),
            draw_after_event: true,
            test: "the test",
        }
    }

    /// Names the sysbench test whose events the script runs (`oltp_read_write`),
    /// for error messages.
    pub fn running(mut self, test: &'static str) -> Self {
        self.test = test;
        self
    }

    /// The test [`running`](Self::running) named.
    pub fn test(&self) -> &'static str {
        self.test
    }

    /// The kind of each prepared statement, in template order, for the
    /// per-statement counts (other when not given).
    pub fn statement_kinds(mut self, kinds: Arc<[StatementKind]>) -> Self {
        self.kinds = kinds;
        self
    }

    /// Whether to mirror sysbench's extra draw after each event (it makes
    /// it unless `--percentile=0`).
    pub fn draw_after_event(mut self, draw: bool) -> Self {
        self.draw_after_event = draw;
        self
    }

    /// Says that the connection runs with autocommit off (see
    /// [`Redial::init`](crate::driver::Redial::init)), so that a failed event's
    /// tail is rolled back when it does not end with the event's COMMIT.
    pub fn autocommit_off(mut self, off: bool) -> Self {
        self.autocommit_off = off;
        self
    }

    /// Sends every execute as COM_QUERY text (`--db-ps-mode=disable`) when
    /// `emulated` is given: one per statement, in template order.
    pub fn emulating(mut self, emulated: Option<Arc<[EmulatedStatement]>>) -> Self {
        self.emulated = emulated;
        self
    }

    /// Commands sent and not yet answered.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len
    }

    /// True once the budget is spent and every answer is in.
    pub fn is_done(&self) -> bool {
        self.finished && self.in_flight.len == 0
    }

    /// True when nothing is in flight and no event may start yet: under
    /// `--rate`, the connection waits for the next arrival
    /// ([`Budget::wake_at`]) before calling [`fill`](Self::fill) again.
    pub fn is_waiting(&self) -> bool {
        !self.finished && self.in_flight.len == 0
    }

    /// Appends commands to `out` while the pipeline has room and the budget
    /// allows new events. Returns how many were appended.
    pub fn fill(&mut self, out: &mut Vec<u8>, now_ns: u64, budget: &mut Budget) -> Result<usize, PipelineError> {
        budget.finish(std::mem::take(&mut self.completed));
        if !self.refunds.is_empty() {
            budget.refund(&self.refunds);
            self.refunds.clear();
            // The budget may have said it was over before these came back:
            // this connection runs them.
            self.finished = false;
        }
        let mut sent = 0;
        while !self.in_flight.is_full() {
            if self.rollback_owed {
                // Only the tail is in flight now, so the ROLLBACK joins it.
                self.rollback_owed = false;
                CommandSink::new(&mut self.templates, out).query(b"ROLLBACK");
                let rollback = InFlight {
                    format: RowFormat::Text,
                    sql: CommandSql::Text(b"ROLLBACK"),
                    kind: StatementKind::Other,
                    sent: now_ns,
                    ends_event_started: None,
                    weight: 0,
                    cut: budget.cut(),
                };
                self.in_flight.push(rollback);
                self.tail += 1;
                sent += 1;
                continue;
            }
            if self.event_started.is_none() {
                if self.finished {
                    break;
                }
                match budget.admit(now_ns, self.room_since) {
                    Admission::Start(at) => {
                        self.event_started = Some(EventStart { at, sent: now_ns, cut: budget.cut() })
                    }
                    Admission::Wait => break,
                    Admission::Over => {
                        self.finished = true;
                        break;
                    }
                }
                let extra = self.script.max_extra_weight();
                if extra > 0 {
                    let limit = 1 + budget.extra_events().take(extra);
                    self.script.limit_event_weight(limit);
                    self.weight_limit = Some(limit);
                }
            }
            let mut sink = CommandSink::new(&mut self.templates, out).emulating(self.emulated.as_deref());
            let step = self.script.next(&mut self.rng, &mut sink)?;
            let format = sink.take_format().unwrap_or(RowFormat::Text);
            let sql = sink.command_sql();
            let query_kind = sink.take_query_kind();
            let kind = match sql {
                CommandSql::Statement(id) => self.kinds.get(id).copied().unwrap_or(StatementKind::Other),
                CommandSql::Text(_) => query_kind,
            };
            let cut = self.event_started.map_or(budget.cut(), |started| started.cut);
            let (ends_event_started, weight) = match step {
                Step::More => (None, 0),
                Step::Last => {
                    if self.draw_after_event {
                        self.rng.next_u64();
                    }
                    // sysbench's `--events` counts bulk_insert's rows: the
                    // statement holds no more than were taken for it, and
                    // gives back what it did not use. A restarted event
                    // (an ignored error) takes its rows again.
                    let weight = self.script.last_event_weight().max(1);
                    match self.weight_limit.take() {
                        Some(limit) => budget.extra_events().give_back(limit.saturating_sub(weight)),
                        None => budget.extra_events().consume(weight - 1),
                    }
                    (self.event_started.take(), weight)
                }
            };
            self.in_flight.push(InFlight { format, sql, kind, sent: now_ns, ends_event_started, weight, cut });
            sent += 1;
        }
        Ok(sent)
    }

    /// Walks the responses at the start of `input`, recording what they
    /// were. Returns the bytes consumed (whole packets only; keep the rest).
    pub fn on_input(
        &mut self,
        input: &[u8],
        now_ns: u64,
        stats: &mut LoopStats,
        ignore: &IgnoreErrors,
    ) -> Result<usize, PipelineError> {
        let mut used = 0;
        loop {
            let Some(current) = self.in_flight_front() else {
                return if used < input.len() { Err(PipelineError::Unsolicited) } else { Ok(used) };
            };
            let rest = input.get(used..).unwrap_or_default();
            if rest.is_empty() {
                return Ok(used);
            }
            if self.reader.format() != current.format {
                self.reader.reset_with(current.format);
            }
            let progress = self.reader.advance(rest)?;
            let Some(outcome) = progress.done else {
                return Ok(used + progress.consumed);
            };
            crate::client::tolerance::record_answer(&outcome);
            let in_tail = self.tail > 0;
            used += progress.consumed;
            if self.in_flight.is_full() {
                self.room_since = now_ns;
            }
            self.in_flight.pop();
            self.reader.reset();
            if let Some(error) = &outcome.error {
                // sysbench would never have sent a tail: its errors are
                // counted, never fatal.
                if !in_tail && !ignore.ignores(error.code) {
                    let error = error.to_server_error(rest);
                    let refused = RefusedCommand { error, sql: current.sql, format: current.format };
                    return Err(PipelineError::Server(Box::new(refused)));
                }
                if stats.counts(current.cut) {
                    stats.record_error_code(error.code);
                    stats.record_statement_error(current.kind.index());
                }
            } else if stats.counts(current.cut) {
                stats.record_query(QueryKind::classify(outcome.result_sets > 0, outcome.affected_rows));
                stats.record_statement(current.kind.index(), now_ns.saturating_sub(current.sent));
            }
            if in_tail {
                self.tail -= 1;
                // The failed event ends here and runs again as a new one.
                if let Some(started) = current.ends_event_started {
                    self.refunds.push(started.abandoned());
                }
            } else if outcome.error.is_some() {
                self.ignored_error(current);
            } else if let Some(started) = current.ends_event_started {
                // One latency sample however many sysbench events it was
                // (bulk_insert: one statement, its rows as events).
                record_event_end(stats, self.index, current.weight, started, now_ns);
                self.completed += 1;
            }
        }
    }

    /// `--mysql-dry-run`: every command sent "succeeds" at once with nothing
    /// to say. Each counts as `other`, as in sysbench's dry run, whose
    /// driver returns before setting the result's counter (which stays
    /// SB_CNT_OTHER); an event ends with its last command, and counts as
    /// many sysbench events as it weighs (bulk_insert: its rows).
    pub fn answer_dry(&mut self, now_ns: u64, stats: &mut LoopStats) {
        if self.in_flight.is_full() {
            self.room_since = now_ns;
        }
        while let Some(done) = self.in_flight.pop() {
            if stats.counts(done.cut) {
                stats.record_query(QueryKind::Other);
                stats.record_statement(done.kind.index(), now_ns.saturating_sub(done.sent));
            }
            if let Some(started) = done.ends_event_started {
                record_event_end(stats, self.index, done.weight, started, now_ns);
            }
        }
    }

    /// The connection was lost and is open again, its statements prepared
    /// anew under `statement_ids` (empty when nothing is prepared,
    /// `--db-ps-mode=disable`). The commands in flight are gone; the oldest
    /// unfinished event starts over, as sysbench re-runs `event()` after a
    /// reconnect, its latency counted from the first attempt. With
    /// `--pipeline` > 1, the later events that were in flight go back to
    /// the budget and run again as new events.
    pub fn reconnected(&mut self, caps: Capabilities, statement_ids: &[u32]) {
        for (template, &id) in self.templates.iter_mut().zip(statement_ids) {
            template.set_statement_id(id);
        }
        // Oldest first: the events whose last command was in flight, then
        // the one being emitted.
        let mut oldest = None;
        let lost = std::iter::from_fn(|| self.in_flight.pop()).filter_map(|c| c.ends_event_started);
        for started in lost.chain(self.event_started) {
            if oldest.is_none() {
                oldest = Some(started);
            } else {
                self.refunds.push(started.abandoned());
            }
        }
        self.event_started = oldest;
        // A new connection has no transaction open to roll back.
        self.tail = 0;
        self.rollback_owed = false;
        self.reader = ResponseReader::new(caps, RowFormat::Binary);
        self.script.restart_event();
    }

    fn in_flight_front(&self) -> Option<InFlight> {
        if self.in_flight.len == 0 {
            return None;
        }
        self.in_flight.slots.get(self.in_flight.head).copied().flatten()
    }

    /// An ignored error, as sysbench stops the event and runs `event()`
    /// again from the start. With nothing in flight behind it (sysbench's
    /// closed loop) the event simply restarts, its latency timer still
    /// running from the first attempt's start. With `--pipeline` > 1 the
    /// rest of the event may already be in flight: that tail runs anyway
    /// (answers counted as they come, errors never fatal). If the event's
    /// last command is among it (or was the one that failed), the event
    /// goes back to the budget when the tail is done and runs again as a
    /// new one; if the event is still being emitted, it is emitted again
    /// from its start behind the tail (after a ROLLBACK of the tail when
    /// autocommit is off).
    fn ignored_error(&mut self, failed: InFlight) {
        let behind = self.in_flight.len;
        if let Some(started) = failed.ends_event_started {
            if behind > 0 {
                self.refunds.push(started.abandoned());
            } else {
                self.event_started = Some(started);
                self.script.restart_event();
            }
            return;
        }
        match self.in_flight.iter().position(|c| c.ends_event_started.is_some()) {
            Some(last) => self.tail = last + 1,
            None => {
                self.tail = behind;
                self.rollback_owed = self.autocommit_off && behind > 0;
                self.script.restart_event();
            }
        }
    }
}

/// An event's end: its latency from its start as admitted (under
/// `--rate`, its intended start) and its service time from its first send.
#[inline]
fn record_event_end(stats: &mut LoopStats, connection: usize, weight: u64, started: EventStart, now_ns: u64) {
    if !stats.counts(started.cut) {
        return;
    }
    let latency = now_ns.saturating_sub(started.at);
    let service = now_ns.saturating_sub(started.sent);
    stats.record_events(connection, weight, latency, service);
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use wirebench_protocol::response::{ErrPacket, OkPacket};

    use super::*;
    use crate::driver::RunControl;
    use crate::rand::{RandConfig, RandParams};
    use crate::stats::Counters;

    const CAPS: Capabilities = Capabilities::PROTOCOL_41.union(Capabilities::DEPRECATE_EOF);
    const DEADLOCK: u16 = 1213;
    const DUPLICATE: u16 = 1062;

    /// Events of fixed SQL, one command per string.
    struct Fixed {
        event: &'static [&'static str],
        at: usize,
    }

    impl Script for Fixed {
        fn next(&mut self, _: &mut Rng, sink: &mut CommandSink<'_>) -> Result<Step, WorkloadError> {
            sink.query(self.event[self.at].as_bytes());
            self.at += 1;
            if self.at == self.event.len() {
                self.at = 0;
                return Ok(Step::Last);
            }
            Ok(Step::More)
        }
        fn restart_event(&mut self) {
            self.at = 0;
        }
    }

    /// What a run against [`serve`] sent and counted.
    struct Run {
        sent: Vec<String>,
        counters: Counters,
        max_latency_ns: u64,
        result: Result<(), PipelineError>,
    }

    /// Runs `events` events of `event` against an in-memory server that
    /// answers one command at a time, the pipeline filled again between
    /// answers, with the error `fail(n, sql)` returns for the n-th command
    /// (from 0), or OK. The clock moves 1 µs per answer.
    fn serve(
        pipeline: usize,
        autocommit_off: bool,
        events: u64,
        event: &'static [&'static str],
        mut fail: impl FnMut(usize, &str) -> Option<u16>,
    ) -> Run {
        let rng = Rng::for_thread(1, 0, RandParams::new(&RandConfig::default()).unwrap());
        let mut session = EventPipeline::new(0, Box::new(Fixed { event, at: 0 }), rng, Vec::new(), CAPS, pipeline)
            .autocommit_off(autocommit_off);
        let mut budget = Budget::new(RunControl::new(Some(events), 1), None);
        let mut stats = LoopStats::new(1);
        let ignore = IgnoreErrors::List(vec![DEADLOCK]);
        let (mut sent, mut waiting, mut out, mut reply) = (Vec::new(), VecDeque::new(), Vec::new(), Vec::new());
        let mut now = 0;
        let result = loop {
            out.clear();
            if let Err(e) = session.fill(&mut out, now, &mut budget) {
                break Err(e);
            }
            let mut rest = &out[..];
            while let Some((&[lo, mid, hi, _seq, command], after)) = rest.split_first_chunk::<5>() {
                assert_eq!(command, 0x03, "COM_QUERY");
                let len = usize::from(lo) | usize::from(mid) << 8 | usize::from(hi) << 16;
                let sql = String::from_utf8(after[..len - 1].to_vec()).unwrap();
                rest = &after[len - 1..];
                waiting.push_back(sent.len());
                sent.push(sql);
            }
            if session.is_done() {
                break Ok(());
            }
            let n = waiting.pop_front().expect("a command in flight");
            reply.clear();
            match fail(n, &sent[n]) {
                Some(code) => {
                    ErrPacket { code, sql_state: Some(*b"HY000"), message: b"scripted" }.encode(1, &mut reply)
                }
                None => OkPacket::default().encode(0x00, CAPS, 1, &mut reply),
            };
            now += 1_000;
            match session.on_input(&reply, now, &mut stats, &ignore) {
                Ok(used) => assert_eq!(used, reply.len()),
                Err(e) => break Err(e),
            }
        };
        let block = stats.pending();
        Run { sent, counters: block.counters, max_latency_ns: block.latencies.sysbench.max_ns(), result }
    }

    fn answered(c: &Counters) -> u64 {
        c.reads + c.writes + c.others + c.errors
    }

    /// The failed event's COMMIT is in flight: the tail runs to it, its
    /// error of a code not ignored is only counted, and the event runs
    /// again as a new one.
    #[test]
    fn a_tail_ending_with_its_commit_runs_and_the_event_runs_again() {
        const EVENT: &[&str] = &["BEGIN", "A", "B", "COMMIT"];
        let mut tail_b = None;
        let run = serve(4, true, 10, EVENT, |n, sql| match (n, sql) {
            (1, _) => Some(DEADLOCK),
            (_, "B") if tail_b.is_none() => {
                tail_b = Some(n);
                Some(DUPLICATE)
            }
            _ => None,
        });
        run.result.unwrap();
        assert_eq!(tail_b, Some(2), "the B behind the failed A");
        assert_eq!(run.counters.events, 10);
        assert_eq!(run.counters.errors, 2);
        assert_eq!(run.sent.len(), 11 * EVENT.len(), "one event twice");
        assert_eq!(answered(&run.counters), run.sent.len() as u64);
        assert!(!run.sent.iter().any(|s| s == "ROLLBACK"), "{:?}", run.sent);
    }

    /// The failed event was still being emitted: its tail runs, a ROLLBACK
    /// undoes it, and the event is sent again from BEGIN, its latency
    /// counted from the first attempt.
    #[test]
    fn an_event_still_being_emitted_restarts_behind_its_rolled_back_tail() {
        const EVENT: &[&str] = &["BEGIN", "A", "B", "C", "D", "COMMIT"];
        for autocommit_off in [true, false] {
            let run = serve(3, autocommit_off, 5, EVENT, |n, _| (n == 1).then_some(DEADLOCK));
            run.result.unwrap();
            let mut expected = vec!["BEGIN", "A", "B", "C"];
            if autocommit_off {
                expected.push("ROLLBACK");
            }
            expected.extend(EVENT);
            assert_eq!(run.sent[..expected.len()], expected, "autocommit off: {autocommit_off}");
            assert_eq!(run.sent.len(), 5 * EVENT.len() + expected.len() - EVENT.len());
            assert_eq!((run.counters.events, run.counters.errors), (5, 1));
            assert_eq!(answered(&run.counters), run.sent.len() as u64);
            // Admitted at 0, done with the answer to command `expected.len()`.
            assert_eq!(run.max_latency_ns, expected.len() as u64 * 1_000);
        }
    }

    /// Nothing in flight behind the error: sysbench's closed loop, the
    /// event restarts at once and nothing is rolled back.
    #[test]
    fn with_nothing_behind_the_event_just_restarts() {
        const EVENT: &[&str] = &["BEGIN", "A", "COMMIT"];
        let run = serve(1, true, 3, EVENT, |n, _| (n == 1).then_some(DEADLOCK));
        run.result.unwrap();
        assert_eq!(run.sent[..5], ["BEGIN", "A", "BEGIN", "A", "COMMIT"]);
        assert_eq!(run.sent.len(), 3 * EVENT.len() + 2);
        assert_eq!((run.counters.events, run.counters.errors), (3, 1));
        assert_eq!(run.max_latency_ns, 5_000);
    }

    /// Outside a tail, an error not ignored still ends the run.
    #[test]
    fn an_error_outside_a_tail_is_fatal() {
        const EVENT: &[&str] = &["BEGIN", "A", "B", "COMMIT"];
        let run = serve(4, true, 10, EVENT, |n, _| match n {
            1 => Some(DEADLOCK),
            6 => Some(DUPLICATE),
            _ => None,
        });
        let Err(PipelineError::Server(refused)) = run.result else { panic!("not fatal: {:?}", run.sent) };
        assert_eq!(refused.error.code, DUPLICATE);
        assert_eq!(run.counters.errors, 1);
    }

    /// A connection opened again has no tail: its answers count as usual.
    #[test]
    fn a_reconnect_ends_the_tail() {
        let rng = Rng::for_thread(1, 0, RandParams::new(&RandConfig::default()).unwrap());
        let script = Box::new(Fixed { event: &["BEGIN", "A", "B", "COMMIT"], at: 0 });
        let mut session = EventPipeline::new(0, script, rng, Vec::new(), CAPS, 4).autocommit_off(true);
        let mut budget = Budget::new(RunControl::new(Some(5), 1), None);
        let mut stats = LoopStats::new(1);
        let ignore = IgnoreErrors::List(vec![DEADLOCK]);
        let mut out = Vec::new();
        assert_eq!(session.fill(&mut out, 0, &mut budget).unwrap(), 4);
        let mut reply = Vec::new();
        OkPacket::default().encode(0x00, CAPS, 1, &mut reply);
        ErrPacket { code: DEADLOCK, sql_state: Some(*b"40001"), message: b"deadlock" }.encode(1, &mut reply);
        session.on_input(&reply, 1, &mut stats, &ignore).unwrap();
        assert_eq!((session.in_flight(), session.tail), (2, 2));
        session.reconnected(CAPS, &[]);
        assert_eq!((session.in_flight(), session.tail, session.rollback_owed), (0, 0, false));
        out.clear();
        assert_eq!(session.fill(&mut out, 2, &mut budget).unwrap(), 4);
        reply.clear();
        ErrPacket { code: DUPLICATE, sql_state: Some(*b"23000"), message: b"dup" }.encode(1, &mut reply);
        assert!(matches!(session.on_input(&reply, 3, &mut stats, &ignore), Err(PipelineError::Server(_))));
    }
}
