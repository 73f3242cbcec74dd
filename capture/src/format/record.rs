//! The records of a capture: a connection opened or closed, a command, its
//! answer, a gap. Each carries its time (ns since the Unix epoch) and its
//! connection's id (unique in the file); a field a source cannot know is
//! `None` and is written as absent, never as a made-up value.
//!
//! On disk (docs/capture.md, "Records"): a type byte, the body's length as
//! a varint, the body. Every body starts with the time since the previous
//! record of its block (varint ns) and the connection id (varint); the
//! fields after depend on the type. A reader skips a record type it does
//! not know, and bytes after the fields it knows: a later minor version
//! adds records and appends fields.

use std::borrow::Cow;

use wirebench_protocol::response::{AnswerKind, AnswerSummary, PreparedSummary};

use super::varint::{put_bytes, put_varint, Cursor, Short};

/// A connection's id within a capture.
pub type ConnId = u64;

const OPEN: u8 = 1;
const CLOSE: u8 = 2;
const COMMAND: u8 = 3;
const ANSWER: u8 = 4;
const GAP: u8 = 5;

/// One record, borrowed from a block (or owned: [`Record::into_owned`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record<'a> {
    Open(ConnectionOpen<'a>),
    Close(ConnectionClose),
    Command(Command<'a>),
    Answer(Answer<'a>),
    Gap(Gap),
}

/// A connection seen for the first time: its login, or, when it was open
/// before the capture began, what could be learnt of it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ConnectionOpen<'a> {
    pub at_ns: u64,
    pub conn: ConnId,
    /// Open before the capture began: its login was not seen.
    pub already_open: bool,
    /// The connection uses TLS (in a pcap, its commands cannot be read).
    pub tls: bool,
    /// The connection uses the compressed protocol.
    pub compressed: bool,
    pub user: Option<Cow<'a, [u8]>>,
    /// The database named at login.
    pub database: Option<Cow<'a, [u8]>>,
    /// The login's collation id.
    pub charset: Option<u8>,
    /// The capabilities in force (the client's and the server's, and'ed).
    pub capabilities: Option<u64>,
    /// The server's id for the connection (its thread id).
    pub server_thread_id: Option<u64>,
    /// `host:port` or a host name, as the source gives it.
    pub client_addr: Option<Cow<'a, [u8]>>,
    pub server_addr: Option<Cow<'a, [u8]>>,
    pub server_version: Option<Cow<'a, [u8]>>,
}

/// How a connection ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CloseReason {
    /// The client sent COM_QUIT.
    Quit,
    /// The client closed the connection without COM_QUIT.
    ClientClosed,
    /// The server closed it.
    ServerClosed,
    /// Still open when the capture ended.
    CaptureEnded,
    /// Given up on: its bytes could no longer be read as the protocol.
    Lost,
    /// It ended, but its source did not say how (a log that shows the
    /// thread's id reused, or no more of it).
    NotLogged,
    /// A reason a later version writes.
    Other(u8),
}

impl CloseReason {
    fn code(self) -> u8 {
        match self {
            CloseReason::Quit => 0,
            CloseReason::ClientClosed => 1,
            CloseReason::ServerClosed => 2,
            CloseReason::CaptureEnded => 3,
            CloseReason::Lost => 4,
            CloseReason::NotLogged => 5,
            CloseReason::Other(code) => code,
        }
    }

    fn from_code(code: u8) -> Self {
        match code {
            0 => CloseReason::Quit,
            1 => CloseReason::ClientClosed,
            2 => CloseReason::ServerClosed,
            3 => CloseReason::CaptureEnded,
            4 => CloseReason::Lost,
            5 => CloseReason::NotLogged,
            other => CloseReason::Other(other),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            CloseReason::Quit => "quit",
            CloseReason::ClientClosed => "closed by the client",
            CloseReason::ServerClosed => "closed by the server",
            CloseReason::CaptureEnded => "open when the capture ended",
            CloseReason::Lost => "lost",
            CloseReason::NotLogged => "end not logged",
            CloseReason::Other(_) => "other",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionClose {
    pub at_ns: u64,
    pub conn: ConnId,
    pub reason: CloseReason,
}

/// A command as the client sent it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Command<'a> {
    /// When it was sent (for a log: when the server logged it).
    pub at_ns: u64,
    pub conn: ConnId,
    /// An [`Answer`] record for this command follows later in the file
    /// (when the source has answers and the capture did not end first).
    pub answer_follows: bool,
    /// The payload after the command byte is the statement's text, not the
    /// wire form: a log's `Execute` line (the statement with its values in
    /// place), or its `Close stmt` (empty).
    pub text_form: bool,
    /// COM_STMT_EXECUTE, FETCH, CLOSE, RESET or SEND_LONG_DATA of a
    /// statement whose prepare the capture never saw.
    pub unknown_statement: bool,
    /// The whole command packet payload, the command byte first, a payload
    /// split over several packets joined.
    pub payload: Cow<'a, [u8]>,
}

impl Command<'_> {
    pub fn command_byte(&self) -> Option<u8> {
        self.payload.first().copied()
    }

    /// The statement's text: COM_QUERY's and COM_STMT_PREPARE's, and a
    /// text-form execute's.
    pub fn statement_text(&self) -> Option<&[u8]> {
        use wirebench_protocol::constants::command::{COM_QUERY, COM_STMT_EXECUTE, COM_STMT_PREPARE};
        let (&command, rest) = self.payload.split_first()?;
        match command {
            COM_QUERY | COM_STMT_PREPARE => Some(rest),
            COM_STMT_EXECUTE if self.text_form => Some(rest),
            _ => None,
        }
    }

    /// The statement id of a COM_STMT_* command in wire form (its first
    /// four bytes after the command byte).
    pub fn statement_id(&self) -> Option<u32> {
        if self.text_form {
            return None;
        }
        let id = self.payload.get(1..5)?;
        Some(u32::from_le_bytes([*id.first()?, *id.get(1)?, *id.get(2)?, *id.get(3)?]))
    }
}

/// A server error in an answer; a slow log gives the code alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnswerError<'a> {
    pub code: u16,
    pub sql_state: Option<[u8; 5]>,
    pub message: Option<Cow<'a, [u8]>>,
}

/// The answer to the connection's oldest command still waiting for one.
/// Its time is when the answer was complete: the server took
/// `answer.at_ns - command.at_ns`, as seen where the capture was taken.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Answer<'a> {
    pub at_ns: u64,
    pub conn: ConnId,
    /// `None` when the source does not say (a slow log's entry).
    pub kind: Option<AnswerKind>,
    pub affected_rows: Option<u64>,
    pub last_insert_id: Option<u64>,
    pub warnings: Option<u16>,
    pub status: Option<u16>,
    pub error: Option<AnswerError<'a>>,
    pub result_sets: Option<u32>,
    pub columns: Option<u64>,
    pub rows: Option<u64>,
    /// The [row checksum](wirebench_protocol::response::row_checksum).
    pub row_checksum: Option<u64>,
    pub prepared: Option<PreparedSummary>,
    pub local_infile: bool,
    /// Rows the server examined (a slow log's `Rows_examined`).
    pub rows_examined: Option<u64>,
}

impl<'a> Answer<'a> {
    /// The answer a summariser read off the wire: every field it knows.
    pub fn from_summary(at_ns: u64, conn: ConnId, summary: &'a AnswerSummary) -> Self {
        let has_results = summary.result_sets > 0;
        Answer {
            at_ns,
            conn,
            kind: Some(summary.kind),
            affected_rows: Some(summary.affected_rows),
            last_insert_id: Some(summary.last_insert_id),
            warnings: Some(summary.warnings),
            status: Some(summary.status.0),
            error: summary.error.as_ref().map(|e| AnswerError {
                code: e.code,
                sql_state: e.sql_state,
                message: Some(Cow::Borrowed(e.message.as_bytes())),
            }),
            result_sets: Some(summary.result_sets),
            columns: Some(summary.columns),
            rows: (has_results || summary.rows > 0).then_some(summary.rows),
            row_checksum: summary.row_checksum,
            prepared: summary.prepared,
            local_infile: summary.local_infile,
            rows_examined: None,
        }
    }
}

/// Why a gap is in a connection's record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum GapReason {
    /// The capture missed bytes of the connection (the capture tool dropped
    /// packets): commands may be missing here.
    BytesLost,
    /// Bytes that are not the protocol as expected; reading resumed at the
    /// next command found whole.
    Undecodable,
    Other(u8),
}

impl GapReason {
    fn code(self) -> u8 {
        match self {
            GapReason::BytesLost => 0,
            GapReason::Undecodable => 1,
            GapReason::Other(code) => code,
        }
    }

    fn from_code(code: u8) -> Self {
        match code {
            0 => GapReason::BytesLost,
            1 => GapReason::Undecodable,
            other => GapReason::Other(other),
        }
    }
}

/// Commands of a connection may be missing here: the replay of such a
/// connection may differ from the original past this point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gap {
    pub at_ns: u64,
    pub conn: ConnId,
    pub reason: GapReason,
}

impl<'a> Record<'a> {
    pub fn at_ns(&self) -> u64 {
        match self {
            Record::Open(r) => r.at_ns,
            Record::Close(r) => r.at_ns,
            Record::Command(r) => r.at_ns,
            Record::Answer(r) => r.at_ns,
            Record::Gap(r) => r.at_ns,
        }
    }

    /// Moves the record to another time (an importer putting records in order).
    pub fn set_at_ns(&mut self, at_ns: u64) {
        match self {
            Record::Open(r) => r.at_ns = at_ns,
            Record::Close(r) => r.at_ns = at_ns,
            Record::Command(r) => r.at_ns = at_ns,
            Record::Answer(r) => r.at_ns = at_ns,
            Record::Gap(r) => r.at_ns = at_ns,
        }
    }

    pub fn conn(&self) -> ConnId {
        match self {
            Record::Open(r) => r.conn,
            Record::Close(r) => r.conn,
            Record::Command(r) => r.conn,
            Record::Answer(r) => r.conn,
            Record::Gap(r) => r.conn,
        }
    }

    /// The record with its bytes copied, to keep past the block it came from.
    pub fn into_owned(self) -> Record<'static> {
        fn own(bytes: Option<Cow<'_, [u8]>>) -> Option<Cow<'static, [u8]>> {
            bytes.map(|b| Cow::Owned(b.into_owned()))
        }
        match self {
            Record::Open(r) => Record::Open(ConnectionOpen {
                at_ns: r.at_ns,
                conn: r.conn,
                already_open: r.already_open,
                tls: r.tls,
                compressed: r.compressed,
                user: own(r.user),
                database: own(r.database),
                charset: r.charset,
                capabilities: r.capabilities,
                server_thread_id: r.server_thread_id,
                client_addr: own(r.client_addr),
                server_addr: own(r.server_addr),
                server_version: own(r.server_version),
            }),
            Record::Close(r) => Record::Close(r),
            Record::Command(r) => Record::Command(Command { payload: Cow::Owned(r.payload.into_owned()), ..r }),
            Record::Answer(r) => {
                Record::Answer(Answer { error: r.error.map(|e| AnswerError { message: own(e.message), ..e }), ..r })
            }
            Record::Gap(r) => Record::Gap(r),
        }
    }

    /// Appends the record, its time given relative to `prev_ns` (which it
    /// must not precede); `body` is scratch space.
    pub(crate) fn encode(&self, prev_ns: u64, body: &mut Vec<u8>, out: &mut Vec<u8>) {
        body.clear();
        put_varint(body, self.at_ns().saturating_sub(prev_ns));
        put_varint(body, self.conn());
        let kind = match self {
            Record::Open(r) => {
                r.encode_fields(body);
                OPEN
            }
            Record::Close(r) => {
                body.push(r.reason.code());
                CLOSE
            }
            Record::Command(r) => {
                let flags =
                    u64::from(r.answer_follows) | u64::from(r.text_form) << 1 | u64::from(r.unknown_statement) << 2;
                put_varint(body, flags);
                put_bytes(body, &r.payload);
                COMMAND
            }
            Record::Answer(r) => {
                r.encode_fields(body);
                ANSWER
            }
            Record::Gap(r) => {
                body.push(r.reason.code());
                GAP
            }
        };
        out.push(kind);
        put_varint(out, body.len() as u64);
        out.extend_from_slice(body);
    }

    /// Whether this version reads records of type `kind`.
    pub(crate) fn is_known(kind: u8) -> bool {
        matches!(kind, OPEN | CLOSE | COMMAND | ANSWER | GAP)
    }

    /// Decodes a record's body; `None` for a type this version does not know.
    pub(crate) fn decode(kind: u8, body: &'a [u8], prev_ns: u64) -> Result<Option<Record<'a>>, Short> {
        let mut c = Cursor::new(body);
        let at_ns = prev_ns.checked_add(c.varint("record time")?).ok_or(Short("record time"))?;
        let conn = c.varint("connection id")?;
        Ok(Some(match kind {
            OPEN => Record::Open(ConnectionOpen::decode_fields(at_ns, conn, &mut c)?),
            CLOSE => {
                Record::Close(ConnectionClose { at_ns, conn, reason: CloseReason::from_code(c.u8("close reason")?) })
            }
            COMMAND => {
                let flags = c.varint("command flags")?;
                Record::Command(Command {
                    at_ns,
                    conn,
                    answer_follows: flags & 1 != 0,
                    text_form: flags & 2 != 0,
                    unknown_statement: flags & 4 != 0,
                    payload: Cow::Borrowed(c.bytes("command payload")?),
                })
            }
            ANSWER => Record::Answer(Answer::decode_fields(at_ns, conn, &mut c)?),
            GAP => Record::Gap(Gap { at_ns, conn, reason: GapReason::from_code(c.u8("gap reason")?) }),
            _ => return Ok(None),
        }))
    }
}

// The optional fields of an open and an answer are written in bit order
// after a varint saying which are present.
const USER: u64 = 1;
const DATABASE: u64 = 1 << 1;
const CHARSET: u64 = 1 << 2;
const CAPABILITIES: u64 = 1 << 3;
const THREAD_ID: u64 = 1 << 4;
const CLIENT_ADDR: u64 = 1 << 5;
const SERVER_ADDR: u64 = 1 << 6;
const SERVER_VERSION: u64 = 1 << 7;

fn bit(present: bool, flag: u64) -> u64 {
    if present {
        flag
    } else {
        0
    }
}

impl<'a> ConnectionOpen<'a> {
    fn encode_fields(&self, body: &mut Vec<u8>) {
        put_varint(body, u64::from(self.already_open) | u64::from(self.tls) << 1 | u64::from(self.compressed) << 2);
        let present = bit(self.user.is_some(), USER)
            | bit(self.database.is_some(), DATABASE)
            | bit(self.charset.is_some(), CHARSET)
            | bit(self.capabilities.is_some(), CAPABILITIES)
            | bit(self.server_thread_id.is_some(), THREAD_ID)
            | bit(self.client_addr.is_some(), CLIENT_ADDR)
            | bit(self.server_addr.is_some(), SERVER_ADDR)
            | bit(self.server_version.is_some(), SERVER_VERSION);
        put_varint(body, present);
        for bytes in [&self.user, &self.database].into_iter().flatten() {
            put_bytes(body, bytes);
        }
        for value in [self.charset.map(u64::from), self.capabilities, self.server_thread_id].into_iter().flatten() {
            put_varint(body, value);
        }
        for bytes in [&self.client_addr, &self.server_addr, &self.server_version].into_iter().flatten() {
            put_bytes(body, bytes);
        }
    }

    fn decode_fields(at_ns: u64, conn: ConnId, c: &mut Cursor<'a>) -> Result<Self, Short> {
        let flags = c.varint("open flags")?;
        let present = c.varint("open fields")?;
        let mut bytes = |flag: u64, what| -> Result<_, Short> {
            Ok(if present & flag != 0 { Some(Cow::Borrowed(c.bytes(what)?)) } else { None })
        };
        let user = bytes(USER, "user")?;
        let database = bytes(DATABASE, "database")?;
        let charset = if present & CHARSET != 0 { Some(c.varint_as::<u8>("charset")?) } else { None };
        let capabilities = if present & CAPABILITIES != 0 { Some(c.varint("capabilities")?) } else { None };
        let server_thread_id = if present & THREAD_ID != 0 { Some(c.varint("thread id")?) } else { None };
        let mut bytes = |flag: u64, what| -> Result<_, Short> {
            Ok(if present & flag != 0 { Some(Cow::Borrowed(c.bytes(what)?)) } else { None })
        };
        Ok(ConnectionOpen {
            at_ns,
            conn,
            already_open: flags & 1 != 0,
            tls: flags & 2 != 0,
            compressed: flags & 4 != 0,
            user,
            database,
            charset,
            capabilities,
            server_thread_id,
            client_addr: bytes(CLIENT_ADDR, "client address")?,
            server_addr: bytes(SERVER_ADDR, "server address")?,
            server_version: bytes(SERVER_VERSION, "server version")?,
        })
    }
}

const AFFECTED: u64 = 1;
const INSERT_ID: u64 = 1 << 1;
const WARNINGS: u64 = 1 << 2;
const STATUS: u64 = 1 << 3;
const ERROR: u64 = 1 << 4;
const RESULT_SETS: u64 = 1 << 5;
const COLUMNS: u64 = 1 << 6;
const ROWS: u64 = 1 << 7;
const CHECKSUM: u64 = 1 << 8;
const PREPARED: u64 = 1 << 9;
const LOCAL_INFILE: u64 = 1 << 10;
const ROWS_EXAMINED: u64 = 1 << 11;
/// The kind byte of an answer whose kind the source does not say.
const KIND_UNKNOWN: u8 = 0xFF;

/// An answer's kind as the format writes it (one byte; unknown: 0xFF).
/// The replay's feed writes it so too.
pub fn answer_kind_code(kind: Option<AnswerKind>) -> u8 {
    match kind {
        Some(AnswerKind::Ok) => 0,
        Some(AnswerKind::Error) => 1,
        Some(AnswerKind::ResultSet) => 2,
        Some(AnswerKind::Prepared) => 3,
        Some(AnswerKind::Text) => 4,
        Some(AnswerKind::FieldList) => 5,
        _ => KIND_UNKNOWN,
    }
}

/// The answer kind of [`answer_kind_code`]'s byte; `None` for unknown.
pub fn answer_kind_of(code: u8) -> Option<AnswerKind> {
    Some(match code {
        0 => AnswerKind::Ok,
        1 => AnswerKind::Error,
        2 => AnswerKind::ResultSet,
        3 => AnswerKind::Prepared,
        4 => AnswerKind::Text,
        5 => AnswerKind::FieldList,
        _ => return None,
    })
}

impl<'a> Answer<'a> {
    fn encode_fields(&self, body: &mut Vec<u8>) {
        body.push(answer_kind_code(self.kind));
        let present = bit(self.affected_rows.is_some(), AFFECTED)
            | bit(self.last_insert_id.is_some(), INSERT_ID)
            | bit(self.warnings.is_some(), WARNINGS)
            | bit(self.status.is_some(), STATUS)
            | bit(self.error.is_some(), ERROR)
            | bit(self.result_sets.is_some(), RESULT_SETS)
            | bit(self.columns.is_some(), COLUMNS)
            | bit(self.rows.is_some(), ROWS)
            | bit(self.row_checksum.is_some(), CHECKSUM)
            | bit(self.prepared.is_some(), PREPARED)
            | bit(self.local_infile, LOCAL_INFILE)
            | bit(self.rows_examined.is_some(), ROWS_EXAMINED);
        put_varint(body, present);
        let counts =
            [self.affected_rows, self.last_insert_id, self.warnings.map(u64::from), self.status.map(u64::from)];
        for value in counts.into_iter().flatten() {
            put_varint(body, value);
        }
        if let Some(error) = &self.error {
            put_varint(body, u64::from(error.code));
            put_bytes(body, error.sql_state.as_ref().map_or(&[][..], |s| &s[..]));
            match &error.message {
                Some(message) => {
                    body.push(1);
                    put_bytes(body, message);
                }
                None => body.push(0),
            }
        }
        for value in [self.result_sets.map(u64::from), self.columns, self.rows].into_iter().flatten() {
            put_varint(body, value);
        }
        if let Some(checksum) = self.row_checksum {
            body.extend_from_slice(&checksum.to_le_bytes());
        }
        if let Some(p) = self.prepared {
            put_varint(body, u64::from(p.statement_id));
            put_varint(body, u64::from(p.params));
            put_varint(body, u64::from(p.columns));
        }
        if let Some(examined) = self.rows_examined {
            put_varint(body, examined);
        }
    }

    fn decode_fields(at_ns: u64, conn: ConnId, c: &mut Cursor<'a>) -> Result<Self, Short> {
        let kind = answer_kind_of(c.u8("answer kind")?);
        let present = c.varint("answer fields")?;
        let mut varint = |flag: u64, what| -> Result<_, Short> {
            Ok(if present & flag != 0 { Some(c.varint(what)?) } else { None })
        };
        let affected_rows = varint(AFFECTED, "affected rows")?;
        let last_insert_id = varint(INSERT_ID, "insert id")?;
        let warnings = varint(WARNINGS, "warnings")?.map(|w| u16::try_from(w).unwrap_or(u16::MAX));
        let status = varint(STATUS, "status")?.map(|s| u16::try_from(s).unwrap_or(u16::MAX));
        let error = if present & ERROR != 0 { Some(decode_error(c)?) } else { None };
        let mut varint = |flag: u64, what| -> Result<_, Short> {
            Ok(if present & flag != 0 { Some(c.varint(what)?) } else { None })
        };
        let result_sets = varint(RESULT_SETS, "result sets")?.map(|n| u32::try_from(n).unwrap_or(u32::MAX));
        let columns = varint(COLUMNS, "columns")?;
        let rows = varint(ROWS, "rows")?;
        let row_checksum = if present & CHECKSUM != 0 { Some(c.u64_le("row checksum")?) } else { None };
        let prepared = if present & PREPARED != 0 {
            Some(PreparedSummary {
                statement_id: c.varint_as("statement id")?,
                params: c.varint_as("parameter count")?,
                columns: c.varint_as("column count")?,
            })
        } else {
            None
        };
        let rows_examined = if present & ROWS_EXAMINED != 0 { Some(c.varint("rows examined")?) } else { None };
        Ok(Answer {
            at_ns,
            conn,
            kind,
            affected_rows,
            last_insert_id,
            warnings,
            status,
            error,
            result_sets,
            columns,
            rows,
            row_checksum,
            prepared,
            local_infile: present & LOCAL_INFILE != 0,
            rows_examined,
        })
    }
}

fn decode_error<'a>(c: &mut Cursor<'a>) -> Result<AnswerError<'a>, Short> {
    let code = c.varint_as::<u16>("error code")?;
    let state = c.bytes("SQLSTATE")?;
    let sql_state = match state.len() {
        0 => None,
        5 => {
            let mut s = [0u8; 5];
            s.copy_from_slice(state);
            Some(s)
        }
        _ => return Err(Short("SQLSTATE")),
    };
    let message = match c.u8("error message flag")? {
        0 => None,
        _ => Some(Cow::Borrowed(c.bytes("error message")?)),
    };
    Ok(AnswerError { code, sql_state, message })
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn samples() -> Vec<Record<'static>> {
        vec![
            Record::Open(ConnectionOpen {
                at_ns: 1_000,
                conn: 7,
                user: Some(Cow::Borrowed(b"sbtest")),
                database: Some(Cow::Borrowed(b"sbtest")),
                charset: Some(45),
                capabilities: Some(0x1_81ff_f7fe),
                server_thread_id: Some(42),
                client_addr: Some(Cow::Borrowed(b"127.0.0.1:50000")),
                ..ConnectionOpen::default()
            }),
            Record::Open(ConnectionOpen { at_ns: 1_000, conn: 8, already_open: true, ..ConnectionOpen::default() }),
            Record::Command(Command {
                at_ns: 2_000,
                conn: 7,
                answer_follows: true,
                payload: Cow::Borrowed(b"\x03SELECT 1"),
                ..Command::default()
            }),
            Record::Answer(Answer {
                at_ns: 2_500,
                conn: 7,
                kind: Some(AnswerKind::ResultSet),
                result_sets: Some(1),
                columns: Some(1),
                rows: Some(1),
                row_checksum: Some(0xDEAD_BEEF_0000_0001),
                warnings: Some(0),
                status: Some(2),
                ..Answer::default()
            }),
            Record::Answer(Answer {
                at_ns: 3_000,
                conn: 8,
                kind: Some(AnswerKind::Error),
                error: Some(AnswerError {
                    code: 1146,
                    sql_state: Some(*b"42S02"),
                    message: Some(Cow::Borrowed(b"Table 'x' doesn't exist")),
                }),
                ..Answer::default()
            }),
            Record::Answer(Answer {
                at_ns: 3_000,
                conn: 8,
                kind: None,
                rows: Some(3),
                rows_examined: Some(10),
                error: Some(AnswerError { code: 1062, sql_state: None, message: None }),
                prepared: Some(PreparedSummary { statement_id: 1, params: 2, columns: 3 }),
                local_infile: true,
                ..Answer::default()
            }),
            Record::Gap(Gap { at_ns: 3_100, conn: 8, reason: GapReason::BytesLost }),
            Record::Close(ConnectionClose { at_ns: 4_000, conn: 7, reason: CloseReason::Quit }),
            Record::Close(ConnectionClose { at_ns: 4_000, conn: 8, reason: CloseReason::Other(77) }),
        ]
    }

    fn decode_one(bytes: &[u8], prev: u64) -> Record<'_> {
        let mut c = Cursor::new(bytes);
        let kind = c.u8("kind").unwrap();
        let body = c.bytes("body").unwrap();
        assert!(c.is_empty());
        Record::decode(kind, body, prev).unwrap().unwrap()
    }

    #[test]
    fn every_record_round_trips() {
        let mut prev = 0;
        let (mut body, mut out) = (Vec::new(), Vec::new());
        for record in samples() {
            out.clear();
            record.encode(prev, &mut body, &mut out);
            assert_eq!(decode_one(&out, prev), record);
            assert_eq!(decode_one(&out, prev).into_owned(), record);
            prev = record.at_ns();
        }
    }

    #[test]
    fn unknown_types_are_skipped_and_appended_fields_ignored() {
        assert_eq!(Record::decode(200, &[0, 1, 2, 3], 0), Ok(None));
        let mut out = Vec::new();
        Record::Gap(Gap { at_ns: 5, conn: 1, reason: GapReason::Undecodable }).encode(0, &mut Vec::new(), &mut out);
        // A later version appended a field to the body.
        let mut body = out[2..].to_vec();
        body.extend_from_slice(&[9, 9, 9]);
        assert_eq!(
            Record::decode(GAP, &body, 0),
            Ok(Some(Record::Gap(Gap { at_ns: 5, conn: 1, reason: GapReason::Undecodable })))
        );
    }

    #[test]
    fn cut_bodies_are_refused() {
        let mut out = Vec::new();
        samples()[0].encode(0, &mut Vec::new(), &mut out);
        let body = &out[2..];
        for cut in 0..body.len() {
            assert!(Record::decode(OPEN, &body[..cut], 0).is_err(), "cut at {cut}");
        }
    }
}
