//! The capture's reader: one thread reads the capture once, in time order,
//! and hands each loop its connections' records (`driver::replay::feed`).
//! It numbers the statements, follows each connection's prepared
//! statements and the answers it waits for, decides what is not sent
//! (`command_rules.rs`), makes `--multiply`'s copies and keeps `--shard`'s
//! part, and spreads new connections over the loops, each to the one
//! holding fewest.
//!
//! Memory stays bounded whatever the file's size: the reader holds one
//! block of the file, each loop's queue a few batches, and at a finite
//! `--speed` the reader reads no further ahead than [`LOOKAHEAD`] of the
//! schedule. A loop that falls behind holds the reader back.

use std::collections::{HashMap, VecDeque};
use std::io::Read;
use std::sync::Arc;
use std::time::{Duration, Instant};

use wirebench_capture::format::{
    Answer, CaptureReader, Command, ConnId, ConnectionOpen, Ending, ReadError, Record, Source,
};
use wirebench_protocol::constants::command::{
    COM_STMT_BULK_EXECUTE, COM_STMT_CLOSE, COM_STMT_EXECUTE, COM_STMT_FETCH, COM_STMT_PREPARE, COM_STMT_RESET,
    COM_STMT_SEND_LONG_DATA,
};

use super::command_rules::{rule_for, Rule, Unreplayed};
use super::replay_options::CaptureReplayOptions;
use super::statement_table::StatementTable;
use crate::driver::replay::feed::{
    CapturedAnswer, CommandItem, FeedItem, FeedSender, OpenItem, ReplayConnId, SendRefused, BATCH_BYTES,
    COMMAND_ANSWER_CAPTURED, OPEN_ALREADY, SEND_PATIENCE,
};
use crate::driver::replay::replayed_conn::ReplaySchedule;
use crate::driver::{Clock, RunControl, Shard};

/// How far ahead of the schedule the reader hands records over: a loop
/// has them before they are due, however its turns fall.
pub const LOOKAHEAD_NS: u64 = 500_000_000;

/// The longest the reader sleeps before it looks at the run again.
const NAP: Duration = Duration::from_millis(50);

/// What the reader needs.
pub struct DispatchPlan<R: Read> {
    pub reader: CaptureReader<R>,
    /// One per loop.
    pub feeds: Vec<FeedSender>,
    pub options: CaptureReplayOptions,
    pub shard: Shard,
    pub clock: Clock,
    pub schedule: ReplaySchedule,
    pub control: Arc<RunControl>,
    /// `--time`'s end, ns since the run's start: nothing due later is read.
    pub deadline_ns: Option<u64>,
}

/// What the reader counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DispatchTally {
    /// Captured connections and commands read (every one, in every shard).
    pub connections: u64,
    pub commands: u64,
    /// Connections this instance replays (copies included).
    pub replayed_connections: u64,
    /// Commands not sent, by why (each copy counted).
    pub unreplayed: [u64; Unreplayed::ALL.len()],
    /// Places where the capture lost bytes of a connection.
    pub gaps: u64,
    /// Connections open before the capture began.
    pub already_open: u64,
    /// The capture's time read, ns since its first record.
    pub read_to_ns: u64,
}

/// How the reading ended.
#[derive(Debug)]
pub struct DispatchOutcome {
    pub table: StatementTable,
    pub tally: DispatchTally,
    /// How the file ended, when it was read to its end.
    pub ending: Option<Ending>,
    /// The file could not be read on: what was before was replayed.
    pub error: Option<ReadError>,
}

/// A command the capture waits for the answer to.
#[derive(Debug, Clone, Copy)]
struct Awaited {
    at_ns: u64,
    statement: u32,
    /// A prepare: its statement, which the answer's id will stand for.
    prepares: Option<u32>,
    /// Sent to the copies: its captured answer goes to them too.
    forwarded: bool,
}

/// What the reader keeps of an open captured connection.
#[derive(Debug, Default)]
struct CapturedConn {
    /// Its copies this instance replays, and their loops.
    copies: Vec<(ReplayConnId, usize)>,
    awaited: VecDeque<Awaited>,
    /// Captured statement ids to statements.
    prepared: HashMap<u32, u32>,
}

/// One loop's feed: its sender, the batch being filled, its connections.
struct LoopFeed {
    sender: FeedSender,
    batch: Vec<u8>,
    open: usize,
}

/// Reads the capture to its end (or the run's) and hands the records over.
pub fn dispatch_capture<R: Read>(plan: DispatchPlan<R>) -> DispatchOutcome {
    let DispatchPlan { mut reader, feeds, options, shard, clock, schedule, control, deadline_ns } = plan;
    let source = reader.header().source;
    let feeds = feeds.into_iter().map(|sender| LoopFeed { sender, batch: Vec::with_capacity(BATCH_BYTES), open: 0 });
    let mut dispatcher = Dispatcher {
        feeds: feeds.collect(),
        conns: HashMap::new(),
        table: StatementTable::default(),
        tally: DispatchTally::default(),
        options,
        shard,
        source,
        clock,
        schedule,
        control,
        deadline_ns,
        first_ns: None,
        scratch: Vec::new(),
    };
    let mut error = None;
    loop {
        match reader.next_record() {
            Ok(Some(record)) => {
                if !dispatcher.take(&record) {
                    break;
                }
            }
            Ok(None) => break,
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }
    dispatcher.close_all();
    dispatcher.flush_all();
    for feed in &dispatcher.feeds {
        feed.sender.end();
    }
    DispatchOutcome { table: dispatcher.table, tally: dispatcher.tally, ending: reader.ending().cloned(), error }
}

struct Dispatcher {
    feeds: Vec<LoopFeed>,
    conns: HashMap<ConnId, CapturedConn>,
    table: StatementTable,
    tally: DispatchTally,
    options: CaptureReplayOptions,
    shard: Shard,
    source: Source,
    clock: Clock,
    schedule: ReplaySchedule,
    control: Arc<RunControl>,
    deadline_ns: Option<u64>,
    first_ns: Option<u64>,
    /// A payload rewritten for sending (a log's text as a query).
    scratch: Vec<u8>,
}

impl Dispatcher {
    /// Hands one record over; false once the replay needs no more.
    fn take(&mut self, record: &Record<'_>) -> bool {
        let at = record.at_ns();
        let first = *self.first_ns.get_or_insert(at);
        let offset = at.saturating_sub(first);
        self.tally.read_to_ns = offset;
        if !self.wait_until_near(offset) {
            return false;
        }
        match record {
            Record::Open(open) => self.open(open, offset),
            Record::Command(command) => self.command(command, offset),
            Record::Answer(answer) => self.answer(answer),
            Record::Close(close) => self.close(close.conn, offset),
            Record::Gap(_) => self.tally.gaps += 1,
        }
        !self.feeds.iter().all(|f| f.sender.is_closed())
    }

    /// At a finite speed, waits until the record at `offset` is due within
    /// [`LOOKAHEAD_NS`]; false when the run is over, or the record is due
    /// after it.
    fn wait_until_near(&mut self, offset: u64) -> bool {
        let Some(due) = self.schedule.due_at(offset) else { return !self.control.is_stopped() };
        if self.deadline_ns.is_some_and(|end| due > end) {
            return false;
        }
        let mut flushed = false;
        loop {
            if self.control.is_stopped() {
                return false;
            }
            let now = self.clock.now_ns();
            if due <= now.saturating_add(LOOKAHEAD_NS) {
                return true;
            }
            if !flushed {
                self.flush_all();
                flushed = true;
            }
            let nap = Duration::from_nanos(due - LOOKAHEAD_NS - now).min(NAP);
            std::thread::sleep(nap);
        }
    }

    fn open(&mut self, open: &ConnectionOpen<'_>, offset: u64) {
        self.tally.connections += 1;
        self.tally.already_open += u64::from(open.already_open);
        let mut conn = CapturedConn::default();
        let multiply = u64::from(self.options.multiply.max(1));
        let login = self.options.login_for(open.user.as_deref());
        let mut flags = 0;
        if open.already_open || open.user.is_none() {
            flags |= OPEN_ALREADY;
        }
        for copy in 0..multiply {
            let id = open.conn.saturating_mul(multiply).saturating_add(copy);
            if id % u64::from(self.shard.count()) != u64::from(self.shard.index()) {
                continue;
            }
            let target = self.least_loaded();
            let item = FeedItem::Open(OpenItem {
                conn: id,
                offset_ns: offset,
                login,
                flags,
                charset: open.charset.unwrap_or(0),
                capabilities: open.capabilities.unwrap_or(0),
                database: open.database.as_deref().unwrap_or_default(),
            });
            self.emit(target, &item);
            if let Some(feed) = self.feeds.get_mut(target) {
                feed.open += 1;
            }
            conn.copies.push((id, target));
            self.tally.replayed_connections += 1;
        }
        if let Some(old) = self.conns.insert(open.conn, conn) {
            // The id came back (a log's thread id reused): the old one ended.
            self.close_copies(&old, offset);
        }
    }

    fn least_loaded(&self) -> usize {
        self.feeds.iter().enumerate().min_by_key(|(_, f)| f.open).map_or(0, |(i, _)| i)
    }

    fn command(&mut self, command: &Command<'_>, offset: u64) {
        self.tally.commands += 1;
        if !self.conns.contains_key(&command.conn) {
            // A connection whose open the capture does not have.
            let open = ConnectionOpen { conn: command.conn, already_open: true, ..ConnectionOpen::default() };
            self.open(&open, offset);
        }
        let Some(byte) = command.command_byte() else { return };
        let mut rule = rule_for(command, self.source);
        // COM_QUIT is no statement: the replayed connection's close sends it.
        if matches!(rule, Rule::Quit) {
            return;
        }
        let (statement, prepares) = self.statement_of(command, byte);
        if matches!(rule, Rule::Send(_)) && (command.unknown_statement || statement.is_none()) {
            rule = Rule::Skip(Unreplayed::PreparedBeforeCapture);
        }
        let statement = statement.unwrap_or_else(|| self.table.of_command(byte));
        self.table.captured_run(statement);
        let writes = self.table.get(statement).is_some_and(|s| s.writes);
        if self.options.read_only && writes && matches!(rule, Rule::Send(_)) && byte != COM_STMT_PREPARE {
            rule = Rule::Skip(Unreplayed::Writes);
        }
        let forwarded = matches!(rule, Rule::Send(_));
        if command.answer_follows {
            if let Some(conn) = self.conns.get_mut(&command.conn) {
                conn.awaited.push_back(Awaited { at_ns: command.at_ns, statement, prepares, forwarded });
            }
        }
        match rule {
            Rule::Send(payload) => self.send_command(command, offset, statement, &payload),
            Rule::Skip(why) => self.count_unreplayed(command.conn, why),
            Rule::Quit => {}
        }
        if byte == COM_STMT_CLOSE {
            if let (Some(conn), Some(id)) = (self.conns.get_mut(&command.conn), command.statement_id()) {
                conn.prepared.remove(&id);
            }
        }
    }

    /// The command's statement (a query's, an execute's, a prepare's own
    /// row), and for a prepare the statement it prepares; `None` when an
    /// execute names an id the connection never prepared in the capture.
    fn statement_of(&mut self, command: &Command<'_>, byte: u8) -> (Option<u32>, Option<u32>) {
        if byte == COM_STMT_PREPARE {
            let prepares = command.statement_text().map(|text| self.table.of_text(text));
            return (Some(self.table.of_command(byte)), prepares);
        }
        if let Some(text) = command.statement_text() {
            return (Some(self.table.of_text(text)), None);
        }
        if !names_statement(byte) {
            return (Some(self.table.of_command(byte)), None);
        }
        let known = command
            .statement_id()
            .and_then(|id| self.conns.get(&command.conn).and_then(|c| c.prepared.get(&id).copied()));
        match (known, byte) {
            (Some(statement), COM_STMT_EXECUTE | COM_STMT_BULK_EXECUTE) => (Some(statement), None),
            (Some(_), _) => (Some(self.table.of_command(byte)), None),
            (None, _) => (None, None),
        }
    }

    fn send_command(&mut self, command: &Command<'_>, offset: u64, statement: u32, payload: &[u8]) {
        let Some(conn) = self.conns.get(&command.conn) else { return };
        let flags = if command.answer_follows { COMMAND_ANSWER_CAPTURED } else { 0 };
        self.scratch.clear();
        self.scratch.extend_from_slice(payload);
        let copies = conn.copies.clone();
        let payload = std::mem::take(&mut self.scratch);
        for (id, target) in copies {
            let item =
                FeedItem::Command(CommandItem { conn: id, offset_ns: offset, statement, flags, payload: &payload });
            self.emit(target, &item);
        }
        self.scratch = payload;
    }

    fn count_unreplayed(&mut self, conn: ConnId, why: Unreplayed) {
        let copies = self.conns.get(&conn).map_or(0, |c| c.copies.len() as u64);
        if let Some(count) =
            Unreplayed::ALL.iter().position(|&w| w == why).and_then(|i| self.tally.unreplayed.get_mut(i))
        {
            *count += copies;
        }
    }

    fn answer(&mut self, answer: &Answer<'_>) {
        let Some(conn) = self.conns.get_mut(&answer.conn) else { return };
        let Some(awaited) = conn.awaited.pop_front() else { return };
        if let (Some(statement), Some(prepared)) = (awaited.prepares, answer.prepared) {
            conn.prepared.insert(prepared.statement_id, statement);
        }
        let took = answer.at_ns.saturating_sub(awaited.at_ns);
        let failed = answer.error.is_some();
        self.table.captured_answer(awaited.statement, took, failed, answer.rows.unwrap_or(0));
        if !awaited.forwarded {
            return;
        }
        let captured = CapturedAnswer {
            kind: answer.kind,
            error: answer.error.as_ref().map(|e| e.code),
            affected_rows: answer.affected_rows,
            rows: answer.rows,
            row_checksum: answer.row_checksum,
            prepared: answer.prepared.map(|p| p.statement_id),
        };
        let copies = conn.copies.clone();
        for (id, target) in copies {
            self.emit(target, &FeedItem::Answer { conn: id, answer: captured });
        }
    }

    fn close(&mut self, conn: ConnId, offset: u64) {
        if let Some(closed) = self.conns.remove(&conn) {
            self.close_copies(&closed, offset);
        }
    }

    fn close_copies(&mut self, conn: &CapturedConn, offset: u64) {
        for &(id, target) in &conn.copies {
            self.emit(target, &FeedItem::Close { conn: id, offset_ns: offset });
            if let Some(feed) = self.feeds.get_mut(target) {
                feed.open = feed.open.saturating_sub(1);
            }
        }
    }

    /// The capture ended with connections open: they close at its end.
    fn close_all(&mut self) {
        let offset = self.tally.read_to_ns;
        let open: Vec<ConnId> = self.conns.keys().copied().collect();
        for conn in open {
            self.close(conn, offset);
        }
    }

    /// Adds an item to loop `target`'s batch, handing the batch over when full.
    fn emit(&mut self, target: usize, item: &FeedItem<'_>) {
        let Some(feed) = self.feeds.get_mut(target) else { return };
        item.encode(&mut feed.batch);
        if feed.batch.len() >= BATCH_BYTES {
            self.hand_over(target);
        }
    }

    fn flush_all(&mut self) {
        for target in 0..self.feeds.len() {
            if self.feeds.get(target).is_some_and(|f| !f.batch.is_empty()) {
                self.hand_over(target);
            }
        }
    }

    /// Hands loop `target` its batch, waiting while its queue is full
    /// (its loop is behind) unless the run is over or the loop gone.
    fn hand_over(&mut self, target: usize) {
        let Some(feed) = self.feeds.get_mut(target) else { return };
        let mut batch = std::mem::take(&mut feed.batch);
        loop {
            match feed.sender.send(batch, Instant::now() + SEND_PATIENCE) {
                Ok(empty) => {
                    feed.batch = empty;
                    return;
                }
                Err((back, SendRefused::Full)) if !self.control.is_stopped() => batch = back,
                Err((mut back, _)) => {
                    back.clear();
                    feed.batch = back;
                    return;
                }
            }
        }
    }
}

/// Whether the command names a prepared statement by its id.
fn names_statement(byte: u8) -> bool {
    matches!(
        byte,
        COM_STMT_EXECUTE
            | COM_STMT_BULK_EXECUTE
            | COM_STMT_FETCH
            | COM_STMT_RESET
            | COM_STMT_CLOSE
            | COM_STMT_SEND_LONG_DATA
    )
}

#[cfg(test)]
#[path = "dispatch_tests.rs"]
mod tests;
