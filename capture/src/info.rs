//! A capture summed up, for `wirebench capture info`: its connections,
//! its span, its commands by kind, and its statements by fingerprint.
//!
//! One pass; memory grows with the connections open at once and the
//! distinct statements, not with the file.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::Read;

use wirebench_protocol::constants::command::{COM_STMT_EXECUTE, COM_STMT_PREPARE};

use crate::commands::command_name;
use crate::fingerprint::fingerprint;
use crate::format::{Answer, CaptureHeader, CaptureReader, Command, ConnId, Ending, ReadError, Record};

/// The key of executes whose prepare the capture never saw.
pub const UNKNOWN_STATEMENT: &str = "(a statement prepared before the capture began)";

/// One statement (a fingerprint, or a command that carries none, by name).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StatementInfo {
    pub statement: String,
    /// Runs: COM_QUERY, COM_STMT_EXECUTE (and every other command by its name).
    pub count: u64,
    /// COM_STMT_PREPAREs of it, which are not runs.
    pub prepares: u64,
    /// Commands whose answer is in the capture, which the times are of.
    pub answered: u64,
    /// Time from command to complete answer, summed and at most.
    pub total_ns: u64,
    pub max_ns: u64,
    pub errors: u64,
    pub rows: u64,
}

/// What `capture info` shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureInfo {
    pub header: CaptureHeader,
    pub ending: Ending,
    pub connections: u64,
    /// Connections open before the capture began.
    pub already_open: u64,
    /// Connections per login user (`(unknown)` where the login was not seen).
    pub users: BTreeMap<String, u64>,
    /// Connections per way they ended.
    pub closes: BTreeMap<&'static str, u64>,
    pub first_ns: Option<u64>,
    pub last_ns: Option<u64>,
    pub commands: u64,
    pub by_command: BTreeMap<String, u64>,
    pub answers: u64,
    pub errors_by_code: BTreeMap<u16, u64>,
    /// Commands on statements prepared before the capture began.
    pub unknown_statement: u64,
    pub gaps: u64,
    /// Every statement, in no particular order.
    pub statements: Vec<StatementInfo>,
}

impl CaptureInfo {
    pub fn duration_ns(&self) -> u64 {
        match (self.first_ns, self.last_ns) {
            (Some(first), Some(last)) => last.saturating_sub(first),
            _ => 0,
        }
    }

    pub fn errors(&self) -> u64 {
        self.errors_by_code.values().sum()
    }

    /// The `n` statements run most often.
    pub fn top_by_count(&self, n: usize) -> Vec<&StatementInfo> {
        let mut all: Vec<&StatementInfo> = self.statements.iter().filter(|s| s.count > 0).collect();
        all.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.statement.cmp(&b.statement)));
        all.truncate(n);
        all
    }

    /// The `n` statements that took the most time in all (those with answers).
    pub fn top_by_time(&self, n: usize) -> Vec<&StatementInfo> {
        let mut all: Vec<&StatementInfo> = self.statements.iter().filter(|s| s.answered > 0).collect();
        all.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then_with(|| a.statement.cmp(&b.statement)));
        all.truncate(n);
        all
    }
}

/// What is known of one open connection.
#[derive(Debug, Default)]
struct ConnState {
    /// Commands waiting for their answer: when sent, their statement.
    pending: VecDeque<(u64, usize, bool)>,
    /// Statement ids to statements, from the prepares' answers.
    prepared: HashMap<u32, usize>,
}

/// Builds a [`CaptureInfo`] record by record.
#[derive(Debug)]
struct Tally {
    info: CaptureInfo,
    conns: HashMap<ConnId, ConnState>,
    index: HashMap<String, usize>,
}

/// Reads the whole capture and sums it up.
pub fn summarize<R: Read>(mut reader: CaptureReader<R>) -> Result<CaptureInfo, ReadError> {
    let info = CaptureInfo {
        header: reader.header().clone(),
        ending: Ending::Truncated { offset: 0, reason: "" },
        connections: 0,
        already_open: 0,
        users: BTreeMap::new(),
        closes: BTreeMap::new(),
        first_ns: None,
        last_ns: None,
        commands: 0,
        by_command: BTreeMap::new(),
        answers: 0,
        errors_by_code: BTreeMap::new(),
        unknown_statement: 0,
        gaps: 0,
        statements: Vec::new(),
    };
    let mut tally = Tally { info, conns: HashMap::new(), index: HashMap::new() };
    while let Some(record) = reader.next_record()? {
        tally.record(&record);
    }
    let mut info = tally.info;
    info.ending = reader.ending().cloned().unwrap_or(Ending::Truncated { offset: reader.offset(), reason: "" });
    Ok(info)
}

impl Tally {
    fn record(&mut self, record: &Record<'_>) {
        let at = record.at_ns();
        self.info.first_ns.get_or_insert(at);
        self.info.last_ns = Some(at);
        match record {
            Record::Open(open) => {
                self.info.connections += 1;
                self.info.already_open += u64::from(open.already_open);
                let user = open
                    .user
                    .as_deref()
                    .map_or_else(|| "(unknown)".to_owned(), |u| String::from_utf8_lossy(u).into_owned());
                *self.info.users.entry(user).or_default() += 1;
                self.conns.insert(open.conn, ConnState::default());
            }
            Record::Close(close) => {
                *self.info.closes.entry(close.reason.name()).or_default() += 1;
                self.conns.remove(&close.conn);
            }
            Record::Command(command) => self.command(command),
            Record::Answer(answer) => self.answer(answer),
            Record::Gap(_) => self.info.gaps += 1,
        }
    }

    fn command(&mut self, command: &Command<'_>) {
        self.info.commands += 1;
        let Some(byte) = command.command_byte() else { return };
        *self.info.by_command.entry(command_name(byte).into_owned()).or_default() += 1;
        self.info.unknown_statement += u64::from(command.unknown_statement);
        let known = self
            .conns
            .get(&command.conn)
            .and_then(|c| command.statement_id().and_then(|id| c.prepared.get(&id).copied()));
        let statement = match (byte, command.statement_text(), known) {
            (COM_STMT_EXECUTE, None, Some(index)) => index,
            (COM_STMT_EXECUTE, None, None) => self.statement(UNKNOWN_STATEMENT),
            (_, Some(text), _) => self.statement(&fingerprint(text)),
            _ => self.statement(&command_name(byte)),
        };
        let prepare = byte == COM_STMT_PREPARE;
        if let Some(entry) = self.info.statements.get_mut(statement) {
            if prepare {
                entry.prepares += 1;
            } else {
                entry.count += 1;
            }
        }
        if command.answer_follows {
            self.conns.entry(command.conn).or_default().pending.push_back((command.at_ns, statement, prepare));
        }
    }

    fn answer(&mut self, answer: &Answer<'_>) {
        self.info.answers += 1;
        if let Some(error) = &answer.error {
            *self.info.errors_by_code.entry(error.code).or_default() += 1;
        }
        let Some(conn) = self.conns.get_mut(&answer.conn) else { return };
        let Some((sent, statement, prepare)) = conn.pending.pop_front() else { return };
        if prepare {
            // A prepare maps the statement's id; its time is not a run's.
            if let Some(prepared) = answer.prepared {
                conn.prepared.insert(prepared.statement_id, statement);
            }
            return;
        }
        let Some(entry) = self.info.statements.get_mut(statement) else { return };
        let took = answer.at_ns.saturating_sub(sent);
        entry.answered += 1;
        entry.total_ns = entry.total_ns.saturating_add(took);
        entry.max_ns = entry.max_ns.max(took);
        entry.errors += u64::from(answer.error.is_some());
        entry.rows = entry.rows.saturating_add(answer.rows.unwrap_or(0));
    }

    /// The index of a statement, added on first sight.
    fn statement(&mut self, key: &str) -> usize {
        if let Some(&index) = self.index.get(key) {
            return index;
        }
        let index = self.info.statements.len();
        self.info.statements.push(StatementInfo { statement: key.to_owned(), ..StatementInfo::default() });
        self.index.insert(key.to_owned(), index);
        index
    }
}
