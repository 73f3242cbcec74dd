//! The summary of one answer: what a recording proxy keeps of each
//! command's answer, what a capture import reads off the wire, and what a
//! replay compares with the capture.
//!
//! [`AnswerSummariser`] is told which command the answer is to
//! ([`AnswerForm::of`] its first byte) and walks the server's bytes, headers
//! included, as they come: OK (affected rows, insert id, warnings, status),
//! ERR (code, SQLSTATE, message), result sets (column count, rows, the
//! [row checksum](super::row_checksum)), a prepare's statement id and
//! counts, and the rarer forms (COM_STATISTICS's text, COM_FIELD_LIST's
//! columns, COM_CHANGE_USER's authentication, LOAD DATA LOCAL INFILE's
//! request). Rows are consumed piecewise: a text row is hashed as it
//! streams, a binary row is copied (up to [`ROW_COPY_LIMIT`]) to be turned
//! into its text form. Everything else is read whole, so the caller's buffer
//! must hold one control packet (an OK, ERR, EOF or column definition).
//! The buffers are reused from one answer to the next; what still
//! allocates is an error's message and the text form of a binary row's
//! numbers and dates ([`Value::write_text`] formats them through a String).

use crate::buf::WriteExt;
use crate::command::local_infile::LOCAL_INFILE_HEADER;
use crate::constants::{command as com, Capabilities, ColumnFlags, ColumnType, StatusFlags};
use crate::error::{CodecError, ProtocolError, Result, UsageError};
use crate::framing::{Header, HEADER_LEN, MAX_FRAGMENT};
use crate::response::binary_row::{BinaryRow, Value};
use crate::response::column::ColumnDefinition;
use crate::response::err::{ErrPacket, ServerError, ERR_HEADER};
use crate::response::ok::{expect_eof, is_result_terminator, EofPacket, OkPacket, EOF_HEADER, OK_HEADER};
use crate::response::prepare_ok::PrepareOk;
use crate::response::resultset::{read_column_count, whole_payload, ColumnCount, RowFormat};
use crate::response::row_checksum::RowChecksum;

/// The largest binary row copied to be checksummed; a larger one is counted
/// and its answer's checksum is missing ([`AnswerSummary::row_checksum`]).
pub const ROW_COPY_LIMIT: usize = 16 << 20;

/// MariaDB's progress report (MARIADB_CLIENT_PROGRESS) is an ERR packet
/// with this code, sent in the middle of an answer.
const PROGRESS_REPORT_CODE: u16 = 0xFFFF;

/// What kind of answer a command gets, by its first byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AnswerForm {
    /// No answer: COM_QUIT, COM_STMT_CLOSE, COM_STMT_SEND_LONG_DATA.
    Nothing,
    /// OK, ERR, or result sets whose rows use this format (COM_QUERY,
    /// COM_STMT_EXECUTE, COM_STMT_BULK_EXECUTE, COM_PROCESS_INFO).
    Results(RowFormat),
    /// COM_STMT_FETCH: binary rows of an open cursor and their terminator.
    Fetch,
    /// COM_STMT_PREPARE.
    Prepare,
    /// COM_FIELD_LIST: column definitions up to an EOF.
    FieldList,
    /// COM_STATISTICS: one packet of text.
    Statistics,
    /// COM_CHANGE_USER: authentication packets, then OK or ERR.
    ChangeUser,
    /// OK (or the EOF some old commands send) or ERR: every other command,
    /// an unknown one included (the server answers it with ERR 1047).
    Status,
    /// A command that turns the connection into a stream (COM_BINLOG_DUMP,
    /// COM_BINLOG_DUMP_GTID, COM_TABLE_DUMP, COM_REGISTER_SLAVE): not summarised.
    Unsupported,
}

/// COM_PROCESS_INFO: SHOW PROCESSLIST's result set.
const COM_PROCESS_INFO: u8 = 0x0A;
const COM_BINLOG_DUMP: u8 = 0x12;
const COM_TABLE_DUMP: u8 = 0x13;
const COM_REGISTER_SLAVE: u8 = 0x15;
const COM_BINLOG_DUMP_GTID: u8 = 0x1E;

impl AnswerForm {
    pub fn of(command: u8) -> Self {
        match command {
            com::COM_QUIT | com::COM_STMT_CLOSE | com::COM_STMT_SEND_LONG_DATA => AnswerForm::Nothing,
            com::COM_QUERY | COM_PROCESS_INFO => AnswerForm::Results(RowFormat::Text),
            com::COM_STMT_EXECUTE | com::COM_STMT_BULK_EXECUTE => AnswerForm::Results(RowFormat::Binary),
            com::COM_STMT_FETCH => AnswerForm::Fetch,
            com::COM_STMT_PREPARE => AnswerForm::Prepare,
            com::COM_FIELD_LIST => AnswerForm::FieldList,
            com::COM_STATISTICS => AnswerForm::Statistics,
            com::COM_CHANGE_USER => AnswerForm::ChangeUser,
            COM_BINLOG_DUMP | COM_TABLE_DUMP | COM_REGISTER_SLAVE | COM_BINLOG_DUMP_GTID => AnswerForm::Unsupported,
            _ => AnswerForm::Status,
        }
    }

    /// Whether the client sends packets of its own before the answer ends
    /// (authentication data): they are not commands.
    pub fn client_speaks_during(self) -> bool {
        self == AnswerForm::ChangeUser
    }
}

/// What a binary row's values need of a column: a column definition
/// without its names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnShape {
    pub column_type: ColumnType,
    pub flags: ColumnFlags,
    pub decimals: u8,
    pub length: u32,
}

impl ColumnShape {
    pub fn of(column: &ColumnDefinition<'_>) -> Self {
        ColumnShape {
            column_type: column.column_type,
            flags: column.flags,
            decimals: column.decimals,
            length: column.column_length,
        }
    }

    fn definition(self) -> ColumnDefinition<'static> {
        let mut column = ColumnDefinition::new(b"", self.column_type);
        column.flags = self.flags;
        column.decimals = self.decimals;
        column.column_length = self.length;
        column
    }
}

/// What an answer was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum AnswerKind {
    /// OK packets only.
    #[default]
    Ok,
    /// Ended by an ERR (result sets may have come before it).
    Error,
    /// One or more result sets (OKs may be among them).
    ResultSet,
    /// A prepared statement.
    Prepared,
    /// COM_STATISTICS's text.
    Text,
    /// COM_FIELD_LIST's column definitions.
    FieldList,
}

/// A successful prepare: the server's statement id and its counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PreparedSummary {
    pub statement_id: u32,
    pub params: u16,
    pub columns: u16,
}

/// One answer, summed up.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AnswerSummary {
    pub kind: AnswerKind,
    /// Summed over every OK (and 0xFE-headed OK) of the answer.
    pub affected_rows: u64,
    /// The last non-zero insert id an OK reported.
    pub last_insert_id: u64,
    /// Summed over every OK and EOF (and a prepare's warnings).
    pub warnings: u16,
    /// Of the last OK or EOF.
    pub status: StatusFlags,
    pub error: Option<ServerError>,
    pub result_sets: u32,
    /// The first result set's column count (COM_FIELD_LIST: the definitions).
    pub columns: u64,
    /// Rows over every result set.
    pub rows: u64,
    /// The [row checksum](super::row_checksum) over every result set; `None`
    /// without a result set, or when a row could not be read into its text
    /// form (a binary row over [`ROW_COPY_LIMIT`], or whose columns the
    /// server skipped and the caller did not know).
    pub row_checksum: Option<u64>,
    pub prepared: Option<PreparedSummary>,
    /// The server asked for a local file (LOAD DATA LOCAL INFILE).
    pub local_infile: bool,
}

/// The result of one [`AnswerSummariser::advance`] call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryProgress {
    /// Bytes of the input walked; the caller drops them from its buffer.
    pub consumed: usize,
    /// Set once the answer is complete.
    pub done: Option<AnswerSummary>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// No answer begun, or the last one complete.
    Idle,
    /// The first packet of a result: OK, ERR, LOCAL INFILE or a column count.
    Start,
    Columns {
        left: u64,
    },
    ColumnsEof,
    Rows,
    PrepareParams {
        left: u16,
    },
    PrepareParamsEof,
    PrepareColumns {
        left: u16,
    },
    PrepareColumnsEof,
    FieldList,
    Statistics,
    ChangeUser,
    /// The client sent its file; the server's OK or ERR is next.
    AfterInfile,
}

/// The row being consumed piecewise.
#[derive(Debug, Clone, Copy, Default)]
struct RowInProgress {
    /// Payload bytes of the current fragment still to come.
    left: usize,
    /// The current fragment is 0xFFFFFF bytes: another one follows.
    continues: bool,
}

/// Walks one answer after another; see the module documentation.
#[derive(Debug, Clone)]
pub struct AnswerSummariser {
    caps: Capabilities,
    strict: bool,
    form: AnswerForm,
    state: State,
    /// The sequence id the next packet must carry.
    seq: u8,
    summary: AnswerSummary,
    row: RowInProgress,
    checksum: RowChecksum,
    checksum_missing: bool,
    /// The current result set's columns, for its binary rows: `None` when
    /// the server skipped them and no cached ones were given.
    columns: Option<Vec<ColumnDefinition<'static>>>,
    /// What the caller knows of the statement's columns (a prepare's answer).
    cached: Vec<ColumnShape>,
    /// The columns of the last successful prepare.
    prepared_columns: Vec<ColumnShape>,
    /// A binary row's payload, copied; its text form.
    row_copy: Vec<u8>,
    row_text: Vec<u8>,
    value_text: Vec<u8>,
}

impl AnswerSummariser {
    /// A summariser for a connection whose negotiated capabilities are `caps`.
    pub fn new(caps: Capabilities) -> Self {
        AnswerSummariser {
            caps,
            strict: false,
            form: AnswerForm::Status,
            state: State::Idle,
            seq: 1,
            summary: AnswerSummary::default(),
            row: RowInProgress::default(),
            checksum: RowChecksum::default(),
            checksum_missing: false,
            columns: Some(Vec::new()),
            cached: Vec::new(),
            prepared_columns: Vec::new(),
            row_copy: Vec::new(),
            row_text: Vec::new(),
            value_text: Vec::new(),
        }
    }

    /// Refuses what is tolerated by default, as libmariadb tolerates it: a
    /// packet whose sequence id does not follow (adopted otherwise), bytes
    /// after a column count (ignored otherwise). A reader that is not sure
    /// of the stream (a capture joined mid-connection) uses it to tell a
    /// wrong guess from a right one.
    pub fn strict(mut self) -> Self {
        self.strict = true;
        self
    }

    pub fn capabilities(&self) -> Capabilities {
        self.caps
    }

    /// Whether an answer is being read.
    pub fn is_reading(&self) -> bool {
        self.state != State::Idle
    }

    /// Whether the client's packets come now, within the answer: its
    /// authentication data (COM_CHANGE_USER) or its file (LOAD DATA LOCAL
    /// INFILE). They are not commands.
    pub fn awaits_client(&self) -> bool {
        matches!(self.state, State::ChangeUser | State::AfterInfile)
    }

    /// The form of the answer being read (or last read).
    pub fn form(&self) -> AnswerForm {
        self.form
    }

    /// The result columns of the last successful prepare: what the caller
    /// keeps for the statement's executes and fetches.
    pub fn prepared_columns(&self) -> &[ColumnShape] {
        &self.prepared_columns
    }

    /// Starts on the answer to a command of `form` whose answer starts at
    /// sequence id `first_seq` (1 after a one-packet command). `cached` are
    /// the statement's result columns (from its prepare) for COM_STMT_EXECUTE
    /// and COM_STMT_FETCH, empty otherwise. Returns whether an answer comes:
    /// for [`AnswerForm::Nothing`] none does, and the summariser stays idle.
    pub fn begin(&mut self, form: AnswerForm, first_seq: u8, cached: &[ColumnShape]) -> Result<bool, CodecError> {
        if self.state != State::Idle {
            return Err(UsageError::OutOfOrder {
                call: "AnswerSummariser::begin",
                state: "an answer was being read",
                remedy: "read the answer to its end (advance until done) before the next command",
            }
            .into());
        }
        self.form = form;
        self.seq = first_seq;
        self.summary = AnswerSummary::default();
        self.row = RowInProgress::default();
        self.checksum = RowChecksum::default();
        self.checksum_missing = false;
        self.cached.clear();
        self.cached.extend_from_slice(cached);
        self.state = match form {
            AnswerForm::Nothing => return Ok(false),
            AnswerForm::Unsupported => {
                return Err(ProtocolError::UnexpectedMessage {
                    state: "summarising answers",
                    got: "a replication command (its answer is a stream, not an answer)",
                }
                .into())
            }
            AnswerForm::Results(_) | AnswerForm::Prepare => State::Start,
            AnswerForm::Fetch => {
                self.use_cached_columns(cached.len() as u64);
                self.summary.kind = AnswerKind::ResultSet;
                State::Rows
            }
            AnswerForm::FieldList => {
                self.summary.kind = AnswerKind::FieldList;
                State::FieldList
            }
            AnswerForm::Statistics => State::Statistics,
            AnswerForm::ChangeUser => State::ChangeUser,
            AnswerForm::Status => State::Start,
        };
        Ok(true)
    }

    /// [`begin`](Self::begin) with the command's payload (its first byte
    /// decides the form).
    pub fn begin_command(&mut self, command: &[u8], first_seq: u8, cached: &[ColumnShape]) -> Result<bool, CodecError> {
        let form = AnswerForm::of(command.first().copied().unwrap_or(com::COM_SLEEP));
        self.begin(form, first_seq, cached)
    }

    /// Walks as much of `input` as forms packets of this answer (a row's
    /// bytes as far as they go). Stops right after the answer's last packet.
    pub fn advance(&mut self, input: &[u8]) -> Result<SummaryProgress, CodecError> {
        if self.state == State::Idle {
            return Err(UsageError::OutOfOrder {
                call: "AnswerSummariser::advance",
                state: "no answer was begun",
                remedy: "call begin with the command before reading its answer",
            }
            .into());
        }
        let result = self.walk(input);
        if result.is_err() {
            self.state = State::Idle;
        }
        Ok(result?)
    }

    fn walk(&mut self, input: &[u8]) -> Result<SummaryProgress> {
        let mut pos = 0usize;
        loop {
            let rest = input.get(pos..).unwrap_or_default();
            if self.row.left > 0 {
                let n = self.row.left.min(rest.len());
                self.row_bytes(rest.get(..n).unwrap_or_default());
                pos += n;
                self.row.left -= n;
                if self.row.left > 0 {
                    return Ok(SummaryProgress { consumed: pos, done: None });
                }
                if !self.row.continues {
                    self.end_row()?;
                }
                continue;
            }
            let Some(header) = Header::parse(rest) else {
                return Ok(SummaryProgress { consumed: pos, done: None });
            };
            if self.row.continues {
                self.follow_sequence(header.seq)?;
                pos += HEADER_LEN;
                self.start_fragment(header.len)?;
                continue;
            }
            if self.state == State::Rows {
                if header.len == 0 {
                    return Err(ProtocolError::Malformed("empty row packet"));
                }
                match rest.get(HEADER_LEN) {
                    None => return Ok(SummaryProgress { consumed: pos, done: None }),
                    Some(&first) if !ends_rows(first, header.len) => {
                        self.follow_sequence(header.seq)?;
                        self.start_row(first)?;
                        pos += HEADER_LEN;
                        self.start_fragment(header.len)?;
                        continue;
                    }
                    Some(_) => {}
                }
            }
            let Some(payload) = whole_payload(header, rest)? else {
                return Ok(SummaryProgress { consumed: pos, done: None });
            };
            self.follow_sequence(header.seq)?;
            pos += HEADER_LEN + payload.len();
            if self.on_packet(payload)? {
                self.state = State::Idle;
                return Ok(SummaryProgress { consumed: pos, done: Some(self.finished()) });
            }
        }
    }

    /// Checks (or adopts) a packet's sequence id and moves past it.
    fn follow_sequence(&mut self, seq: u8) -> Result<()> {
        // Client packets interleave with these: the ids jump by design.
        let interleaved = matches!(self.state, State::ChangeUser | State::AfterInfile);
        if seq != self.seq && self.strict && !interleaved {
            return Err(ProtocolError::OutOfSync { expected: self.seq, got: seq });
        }
        self.seq = seq.wrapping_add(1);
        Ok(())
    }

    fn start_row(&mut self, first: u8) -> Result<()> {
        if self.row_format() == RowFormat::Binary && first != 0x00 {
            return Err(ProtocolError::BadHeader { context: "binary row", byte: first });
        }
        self.summary.rows = self.summary.rows.saturating_add(1);
        self.row_copy.clear();
        Ok(())
    }

    fn start_fragment(&mut self, len: usize) -> Result<()> {
        self.row = RowInProgress { left: len, continues: len == MAX_FRAGMENT };
        if len == 0 {
            // The empty fragment after a payload of an exact multiple of 0xFFFFFF.
            self.end_row()?;
        }
        Ok(())
    }

    fn row_format(&self) -> RowFormat {
        match self.form {
            AnswerForm::Results(format) => format,
            _ => RowFormat::Binary,
        }
    }

    fn row_bytes(&mut self, bytes: &[u8]) {
        if self.row_format() == RowFormat::Text {
            self.checksum.write(bytes);
        } else if self.row_copy.len() + bytes.len() <= ROW_COPY_LIMIT {
            self.row_copy.extend_from_slice(bytes);
        } else {
            self.checksum_missing = true;
        }
    }

    fn end_row(&mut self) -> Result<()> {
        self.row = RowInProgress::default();
        if self.row_format() == RowFormat::Text {
            self.checksum.end_row();
            return Ok(());
        }
        let Some(columns) = self.columns.as_deref() else {
            self.checksum_missing = true;
            return Ok(());
        };
        if self.checksum_missing {
            return Ok(());
        }
        let row = BinaryRow::new(&self.row_copy, columns.len())?;
        self.row_text.clear();
        for (value, column) in row.values(columns).zip(columns) {
            match value? {
                Value::Null => self.row_text.push(0xFB),
                value => {
                    self.value_text.clear();
                    value.write_text(column, &mut self.value_text);
                    self.row_text.put_lenenc_bytes(&self.value_text);
                }
            }
        }
        self.checksum.add_row(&self.row_text);
        Ok(())
    }

    /// Handles one whole packet; returns whether the answer is complete.
    fn on_packet(&mut self, payload: &[u8]) -> Result<bool> {
        let first = payload.first().copied();
        if first == Some(ERR_HEADER) {
            let err = ErrPacket::parse(payload)?;
            if err.code == PROGRESS_REPORT_CODE && self.caps.contains(Capabilities::MARIADB_CLIENT_PROGRESS) {
                return Ok(false);
            }
            self.summary.kind = AnswerKind::Error;
            self.summary.error = Some(err.to_owned());
            return Ok(true);
        }
        match self.state {
            State::Start if self.form == AnswerForm::Prepare => self.on_prepare_ok(payload),
            State::Start => self.on_result_start(payload),
            State::Columns { left } => {
                self.on_column(payload)?;
                self.state = if left > 1 { State::Columns { left: left - 1 } } else { self.after_columns() };
                Ok(false)
            }
            State::ColumnsEof => {
                expect_eof(payload, self.caps, "EOF after column definitions")?;
                let eof = EofPacket::parse(payload, self.caps)?;
                // A cursor was opened (COM_STMT_EXECUTE with a cursor flag):
                // the rows come with COM_STMT_FETCH.
                if eof.status.contains(StatusFlags::CURSOR_EXISTS) {
                    self.summary.status = eof.status;
                    return Ok(true);
                }
                self.state = State::Rows;
                Ok(false)
            }
            State::Rows => self.on_rows_end(payload),
            State::PrepareParams { .. }
            | State::PrepareParamsEof
            | State::PrepareColumns { .. }
            | State::PrepareColumnsEof => self.on_prepare_definitions(payload),
            State::FieldList => {
                if is_result_terminator(payload) {
                    return Ok(true);
                }
                ColumnDefinition::parse(payload, self.caps)?;
                self.summary.columns = self.summary.columns.saturating_add(1);
                Ok(false)
            }
            State::Statistics => {
                self.summary.kind = AnswerKind::Text;
                Ok(true)
            }
            // AuthSwitchRequest (0xFE) and AuthMoreData (0x01) go on until OK.
            State::ChangeUser => match first {
                Some(OK_HEADER) => self.on_ok(payload),
                _ => Ok(false),
            },
            State::AfterInfile => self.on_ok(payload),
            State::Idle => {
                Err(ProtocolError::UnexpectedMessage { state: "summarising an answer", got: "a packet after its end" })
            }
        }
    }

    /// The first packet of a result: OK, LOCAL INFILE, or a column count.
    fn on_result_start(&mut self, payload: &[u8]) -> Result<bool> {
        match payload.first().copied() {
            Some(OK_HEADER) => self.on_ok(payload),
            // COM_SET_OPTION and COM_DEBUG answer with an EOF on old servers.
            Some(EOF_HEADER) if self.form == AnswerForm::Status && is_result_terminator(payload) => {
                let eof = EofPacket::parse(payload, self.caps)?;
                self.summary.warnings = self.summary.warnings.saturating_add(eof.warnings);
                self.summary.status = eof.status;
                Ok(true)
            }
            Some(LOCAL_INFILE_HEADER) if matches!(self.form, AnswerForm::Results(_)) => {
                self.summary.local_infile = true;
                self.state = State::AfterInfile;
                Ok(false)
            }
            _ if matches!(self.form, AnswerForm::Results(_)) => {
                let ColumnCount { count, metadata_follows, trailing } = read_column_count(payload, self.caps)?;
                if trailing && self.strict {
                    return Err(ProtocolError::TrailingBytes("column count", payload.len()));
                }
                self.summary.kind = AnswerKind::ResultSet;
                if self.summary.result_sets == 0 {
                    self.summary.columns = count;
                }
                self.summary.result_sets = self.summary.result_sets.saturating_add(1);
                if metadata_follows {
                    if let Some(columns) = self.columns.as_mut() {
                        columns.clear();
                    } else {
                        self.columns = Some(Vec::new());
                    }
                    self.state = State::Columns { left: count };
                } else {
                    self.use_cached_columns(count);
                    self.state = self.after_columns();
                }
                Ok(false)
            }
            other => Err(ProtocolError::BadHeader { context: "the answer to a command", byte: other.unwrap_or(0) }),
        }
    }

    /// The server skipped the column definitions: the cached ones stand in,
    /// when there are as many as the count says.
    fn use_cached_columns(&mut self, count: u64) {
        if self.cached.len() as u64 == count {
            let mut columns = self.columns.take().unwrap_or_default();
            columns.clear();
            columns.extend(self.cached.iter().map(|shape| shape.definition()));
            self.columns = Some(columns);
        } else {
            self.columns = None;
        }
    }

    fn on_column(&mut self, payload: &[u8]) -> Result<()> {
        // Text rows are hashed as they come: their columns need not be read.
        if self.row_format() == RowFormat::Text {
            return Ok(());
        }
        let shape = ColumnShape::of(&ColumnDefinition::parse(payload, self.caps)?);
        if let Some(columns) = self.columns.as_mut() {
            columns.push(shape.definition());
        }
        Ok(())
    }

    fn after_columns(&self) -> State {
        if self.caps.contains(Capabilities::DEPRECATE_EOF) {
            State::Rows
        } else {
            State::ColumnsEof
        }
    }

    /// The packet that ends a result set's rows: an EOF, or an OK with a
    /// 0xFE header under DEPRECATE_EOF.
    fn on_rows_end(&mut self, payload: &[u8]) -> Result<bool> {
        if self.caps.contains(Capabilities::DEPRECATE_EOF) {
            let kind = self.summary.kind;
            let done = self.on_ok(payload)?;
            self.summary.kind = kind;
            return Ok(done);
        }
        let eof = EofPacket::parse(payload, self.caps)?;
        self.summary.warnings = self.summary.warnings.saturating_add(eof.warnings);
        self.summary.status = eof.status;
        Ok(self.next_result(eof.status))
    }

    fn on_ok(&mut self, payload: &[u8]) -> Result<bool> {
        let ok = OkPacket::parse(payload, self.caps)?;
        let summary = &mut self.summary;
        summary.affected_rows = summary.affected_rows.saturating_add(ok.affected_rows);
        if ok.last_insert_id != 0 {
            summary.last_insert_id = ok.last_insert_id;
        }
        summary.warnings = summary.warnings.saturating_add(ok.warnings);
        summary.status = ok.status;
        Ok(self.state == State::ChangeUser || self.state == State::AfterInfile || self.next_result(ok.status))
    }

    /// After an OK or a result set's end: another result follows, or the answer is complete.
    fn next_result(&mut self, status: StatusFlags) -> bool {
        let more = status.contains(StatusFlags::MORE_RESULTS_EXISTS) && matches!(self.form, AnswerForm::Results(_));
        if more {
            self.state = State::Start;
        }
        !more
    }

    fn on_prepare_ok(&mut self, payload: &[u8]) -> Result<bool> {
        let ok = PrepareOk::parse(payload)?;
        self.summary.kind = AnswerKind::Prepared;
        self.summary.warnings = ok.warnings;
        self.summary.prepared =
            Some(PreparedSummary { statement_id: ok.statement_id, params: ok.num_params, columns: ok.num_columns });
        self.prepared_columns.clear();
        Ok(match ok.num_params {
            0 => self.enter_prepare_columns(),
            left => {
                self.state = State::PrepareParams { left };
                false
            }
        })
    }

    /// Starts on a prepare's column definitions; returns whether there are none.
    fn enter_prepare_columns(&mut self) -> bool {
        match self.summary.prepared.map_or(0, |p| p.columns) {
            0 => true,
            left => {
                self.state = State::PrepareColumns { left };
                false
            }
        }
    }

    fn on_prepare_definitions(&mut self, payload: &[u8]) -> Result<bool> {
        let deprecate_eof = self.caps.contains(Capabilities::DEPRECATE_EOF);
        match self.state {
            State::PrepareParams { left } => {
                ColumnDefinition::parse(payload, self.caps)?;
                if left > 1 {
                    self.state = State::PrepareParams { left: left - 1 };
                    Ok(false)
                } else if deprecate_eof {
                    Ok(self.enter_prepare_columns())
                } else {
                    self.state = State::PrepareParamsEof;
                    Ok(false)
                }
            }
            State::PrepareParamsEof => {
                expect_eof(payload, self.caps, "EOF after parameter definitions")?;
                Ok(self.enter_prepare_columns())
            }
            State::PrepareColumns { left } => {
                let shape = ColumnShape::of(&ColumnDefinition::parse(payload, self.caps)?);
                self.prepared_columns.push(shape);
                if left > 1 {
                    self.state = State::PrepareColumns { left: left - 1 };
                    Ok(false)
                } else if deprecate_eof {
                    Ok(true)
                } else {
                    self.state = State::PrepareColumnsEof;
                    Ok(false)
                }
            }
            _ => {
                expect_eof(payload, self.caps, "EOF after column definitions")?;
                Ok(true)
            }
        }
    }

    fn finished(&mut self) -> AnswerSummary {
        let mut summary = std::mem::take(&mut self.summary);
        if summary.result_sets > 0 || self.form == AnswerForm::Fetch {
            summary.row_checksum = (!self.checksum_missing).then(|| self.checksum.value());
        }
        summary
    }
}

/// Whether a packet in the rows' place ends them (ERR, or an EOF/OK whose
/// first fragment is short) rather than being a row.
fn ends_rows(first: u8, len: usize) -> bool {
    first == ERR_HEADER || (first == EOF_HEADER && len < MAX_FRAGMENT)
}

#[cfg(test)]
mod answer_summary_tests;
