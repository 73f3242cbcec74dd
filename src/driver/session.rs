//! One connection's hot-path state machine, independent of the I/O backend:
//! it writes commands into a send buffer when the pipeline has room, and
//! walks the responses it is given. The io_uring and epoll loops only move
//! bytes between it and the socket.

use std::sync::Arc;

use wirebench_protocol::command::ExecuteTemplate;
use wirebench_protocol::response::{ResponseReader, RowFormat, ServerError};
use wirebench_protocol::{Capabilities, ProtocolError};

use super::budget::{Admission, Budget};
use crate::cli::IgnoreErrors;
use crate::rand::Rng;
use crate::stats::{LoopStats, QueryKind};
use crate::workload::{CommandSink, EmulatedStatement, Script, Step, StmtId, WorkloadError};

/// A command sent and not yet answered.
#[derive(Debug, Clone, Copy)]
struct InFlight {
    format: RowFormat,
    stmt: Option<StmtId>,
    /// Set on an event's last command: when that event started (ns).
    ends_event_started: Option<u64>,
    /// Set with `ends_event_started`: how many sysbench events it stands for.
    weight: u64,
}

/// Why a connection stopped.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// A server error not covered by `--mysql-ignore-errors`.
    #[error("{error}{}", stmt_note(*stmt))]
    Server { error: ServerError, stmt: Option<StmtId> },
    #[error("protocol error: {0}")]
    Protocol(#[from] ProtocolError),
    #[error(transparent)]
    Workload(#[from] WorkloadError),
    /// The peer sent a response nobody asked for.
    #[error("the server sent a response with no command outstanding")]
    Unsolicited,
}

fn stmt_note(stmt: Option<StmtId>) -> String {
    stmt.map(|s| format!(" (statement #{s})")).unwrap_or_default()
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

/// A connection's run state.
pub struct Session {
    /// This connection's index within its loop (for per-connection stats).
    pub index: usize,
    script: Box<dyn Script>,
    rng: Rng,
    templates: Vec<ExecuteTemplate>,
    /// `--db-ps-mode=disable`: the statements, sent as text.
    emulated: Option<Arc<[EmulatedStatement]>>,
    reader: ResponseReader,
    in_flight: Ring<InFlight>,
    /// The event being emitted: when it started, if it has begun.
    event_started: Option<u64>,
    /// No more events will start on this connection.
    finished: bool,
    /// Events completed since the budget last heard of it.
    completed: u64,
    /// Start times of admitted events abandoned since the budget last heard
    /// of it, to be run again ([`Budget::refund`]); room for a full
    /// pipeline is reserved up front.
    refunds: Vec<u64>,
    /// sysbench draws one number from the thread's generator after every
    /// event when `--percentile` is on (to pick a histogram slot); doing the
    /// same keeps a seeded run's values equal to sysbench's.
    draw_after_event: bool,
}

impl Session {
    pub fn new(
        index: usize,
        script: Box<dyn Script>,
        rng: Rng,
        templates: Vec<ExecuteTemplate>,
        caps: Capabilities,
        pipeline: usize,
    ) -> Self {
        Session {
            index,
            script,
            rng,
            templates,
            emulated: None,
            reader: ResponseReader::new(caps, RowFormat::Binary),
            in_flight: Ring::new(pipeline),
            event_started: None,
            finished: false,
            completed: 0,
            refunds: Vec::with_capacity(pipeline + 1),
            draw_after_event: true,
        }
    }

    /// Whether to mirror sysbench's extra draw after each event (it makes
    /// it unless `--percentile=0`).
    pub fn draw_after_event(mut self, draw: bool) -> Self {
        self.draw_after_event = draw;
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
    pub fn fill(&mut self, out: &mut Vec<u8>, now_ns: u64, budget: &mut Budget) -> Result<usize, SessionError> {
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
            if self.event_started.is_none() {
                if self.finished {
                    break;
                }
                match budget.admit(now_ns) {
                    Admission::Start(at) => self.event_started = Some(at),
                    Admission::Wait => break,
                    Admission::Over => {
                        self.finished = true;
                        break;
                    }
                }
            }
            let mut sink = CommandSink::new(&mut self.templates, out).emulating(self.emulated.as_deref());
            let step = self.script.next(&mut self.rng, &mut sink)?;
            let format = sink.take_format().unwrap_or(RowFormat::Text);
            let stmt = sink.take_stmt();
            let (ends_event_started, weight) = match step {
                Step::More => (None, 0),
                Step::Last => {
                    if self.draw_after_event {
                        self.rng.next_u64();
                    }
                    // sysbench's `--events` counts bulk_insert's rows, so a
                    // statement's rows all count against it; the run stops
                    // after the statement that reaches the limit (there are
                    // no partial statements), so it may overshoot.
                    let weight = self.script.last_event_weight().max(1);
                    budget.consume(weight - 1);
                    (self.event_started.take(), weight)
                }
            };
            self.in_flight.push(InFlight { format, stmt, ends_event_started, weight });
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
    ) -> Result<usize, SessionError> {
        let mut used = 0;
        loop {
            let Some(current) = self.in_flight_front() else {
                return if used < input.len() { Err(SessionError::Unsolicited) } else { Ok(used) };
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
            if let Some(error) = &outcome.error {
                if !ignore.ignores(error.code) {
                    let error = error.to_server_error(rest);
                    return Err(SessionError::Server { error, stmt: current.stmt });
                }
                stats.record_error();
                self.in_flight.pop();
                self.reader.reset();
                used += progress.consumed;
                self.restart_event(current);
                continue;
            }
            used += progress.consumed;
            self.in_flight.pop();
            self.reader.reset();
            let kind = QueryKind::classify(outcome.result_sets > 0, outcome.affected_rows);
            stats.record_query(kind);
            if let Some(started) = current.ends_event_started {
                // One latency sample however many sysbench events it was
                // (bulk_insert: one statement, its rows as events).
                stats.record_events(self.index, current.weight, now_ns.saturating_sub(started));
                self.completed += 1;
            }
        }
    }

    /// `--mysql-dry-run`: every command sent "succeeds" at once with nothing
    /// to say. Each counts as `other`, as in sysbench's dry run, whose
    /// driver returns before setting the result's counter (which stays
    /// SB_CNT_OTHER); an event ends with its last command.
    pub fn answer_dry(&mut self, now_ns: u64, stats: &mut LoopStats) {
        while let Some(done) = self.in_flight.pop() {
            stats.record_query(QueryKind::Other);
            if let Some(started) = done.ends_event_started {
                stats.record_event(self.index, now_ns.saturating_sub(started));
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
                self.refunds.push(started);
            }
        }
        self.event_started = oldest;
        self.reader = ResponseReader::new(caps, RowFormat::Binary);
        self.script.restart_event();
    }

    fn in_flight_front(&self) -> Option<InFlight> {
        if self.in_flight.len == 0 {
            return None;
        }
        self.in_flight.slots.get(self.in_flight.head).copied().flatten()
    }

    /// An ignored error. With one command in flight (sysbench's closed
    /// loop) the whole event is re-run, as sysbench re-runs `event()`, and
    /// its latency timer keeps running from the first attempt's start. With
    /// later commands already pipelined behind it, the error is only
    /// counted: those commands belong to the same or later events; if it
    /// was its event's last command, that event goes back to the budget and
    /// runs again as a new one.
    fn restart_event(&mut self, failed: InFlight) {
        if self.in_flight.len > 0 {
            if let Some(started) = failed.ends_event_started {
                self.refunds.push(started);
            }
            return;
        }
        if let Some(started) = failed.ends_event_started {
            self.event_started = Some(started);
        }
        self.script.restart_event();
    }
}
