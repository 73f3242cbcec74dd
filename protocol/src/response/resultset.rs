//! The whole response to one command: OK, ERR, or one or more result sets.
//!
//! A result set is a column count, that many column definitions (skipped
//! under MARIADB_CLIENT_CACHE_METADATA when the server says so), an EOF
//! unless DEPRECATE_EOF, the rows, and a terminator: EOF, or an OK with a
//! 0xFE header under DEPRECATE_EOF, or ERR. SERVER_MORE_RESULTS_EXISTS in a
//! terminator or OK announces another result (multi-statements, CALL).
//!
//! Two readers:
//! - [`ResponseReader`], the hot path: walks raw socket bytes (headers
//!   included), counts rows without decoding them, never copies a payload
//!   and never allocates.
//! - [`ResultSetDecoder`]: fed one decoded packet payload at a time, keeps
//!   every column definition and row (for tests and everything off the hot path).

use std::ops::Range;

use crate::buf::{Reader, WriteExt};
// A column count of 0xFB asks the client to send a file (LOAD DATA LOCAL INFILE).
use crate::command::local_infile::LOCAL_INFILE_HEADER;
use crate::constants::{Capabilities, StatusFlags};
use crate::error::{CodecError, ProtocolError, Result, UsageError};
use crate::framing::{finish_packet, start_packet, Header, HEADER_LEN, MAX_FRAGMENT};
use crate::response::binary_row::{BinaryRow, Value};
use crate::response::column::{Column, ColumnDefinition};
use crate::response::err::{ErrPacket, ServerError, ERR_HEADER};
use crate::response::ok::{expect_eof, is_result_terminator, EofPacket, OkPacket, EOF_HEADER, OK_HEADER};
use crate::response::text_row::TextRow;

/// Which protocol the rows use: text for COM_QUERY, binary for COM_STMT_EXECUTE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RowFormat {
    Text,
    Binary,
}

/// Sequence id of the first packet of every response (the command took 0).
const FIRST_RESPONSE_SEQ: u8 = 1;

/// A server ERR seen by [`ResponseReader`], without copying its message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorInfo {
    pub code: u16,
    pub sql_state: Option<[u8; 5]>,
    /// Where the message lies in the `input` of the [`ResponseReader::advance`]
    /// call that reported the outcome.
    pub message: Range<usize>,
}

impl ErrorInfo {
    /// The message, given the input of the call that reported it.
    pub fn message<'a>(&self, input: &'a [u8]) -> &'a [u8] {
        input.get(self.message.clone()).unwrap_or_default()
    }

    pub fn to_server_error(&self, input: &[u8]) -> ServerError {
        ServerError {
            code: self.code,
            sql_state: self.sql_state,
            message: String::from_utf8_lossy(self.message(input)).into_owned(),
        }
    }
}

/// What a whole response amounted to.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Outcome {
    /// Result sets (responses with columns) seen.
    pub result_sets: u32,
    /// Rows over all result sets.
    pub rows: u64,
    /// Sum over every OK packet of the response (0xFE-headed ones included).
    pub affected_rows: u64,
    /// The last non-zero last-insert-id any OK packet reported.
    pub last_insert_id: u64,
    /// Sum of the warning counts of every OK and EOF terminator.
    pub warnings: u16,
    /// Status flags of the last OK or EOF packet.
    pub status: StatusFlags,
    /// The ERR that ended the response, if one did.
    pub error: Option<ErrorInfo>,
    /// Packets whose sequence id did not follow the one before (the
    /// request's, for the first): the reader took the server's numbering
    /// from there, as libmariadb does ([`Deviation::SequenceRenumbered`](crate::tolerance::Deviation)).
    pub seq_jumps: u32,
    /// Result sets whose column-count packet had bytes after the count,
    /// ignored as libmariadb ignores them ([`Deviation::ColumnCountTrailing`](crate::tolerance::Deviation)).
    pub column_count_trailing: u32,
}

/// The result of one [`ResponseReader::advance`] call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    /// Bytes of the input walked; the caller drops them from its buffer.
    pub consumed: usize,
    /// Set once the response is complete.
    pub done: Option<Outcome>,
}

/// Where the walk through a response stands; [`ResponseReader`] and
/// [`ResultSetDecoder`] share it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ResponseState {
    /// Expecting OK, ERR, LOCAL INFILE or a column count.
    Start,
    Columns {
        left: u64,
    },
    /// Expecting the EOF after the column definitions (no DEPRECATE_EOF).
    ColumnsEof,
    Rows,
    Done,
}

impl ResponseState {
    /// Where the last column definition (or the column count, when the
    /// server skipped them) leads: the rows, or first their EOF.
    fn after_columns(caps: Capabilities) -> Self {
        if caps.contains(Capabilities::DEPRECATE_EOF) {
            ResponseState::Rows
        } else {
            ResponseState::ColumnsEof
        }
    }
}

/// What [`ResponseReader`] does with a packet whose header is at hand.
enum PacketAction {
    /// Skip it without reading it (a row or a column definition).
    Skip,
    /// Wait for more input: its first byte, which decides, is not in yet.
    Wait,
    /// Read it once it is whole.
    Read,
}

/// The hot-path response walker. See the module documentation.
///
/// Feed it the bytes read from the socket, starting at the first byte of the
/// response; it consumes whole packets, except rows and column definitions,
/// which it may consume piecewise (so a 16 MiB row never needs buffering).
/// OK, ERR, EOF and column-count packets are read only once complete, so the
/// caller's buffer must be able to hold one of them whole (they are small:
/// an ERR message is at most 512 bytes). It stops right after the packet that
/// ends the response: bytes of a pipelined next response stay unconsumed.
#[derive(Debug, Clone)]
pub struct ResponseReader {
    caps: Capabilities,
    format: RowFormat,
    state: ResponseState,
    /// Sequence id the next header must carry.
    seq: u8,
    /// Payload bytes of the packet being skipped that are still to come.
    skip_left: usize,
    /// The fragment being skipped is 0xFFFFFF bytes, so another one follows.
    skip_continues: bool,
    outcome: Outcome,
}

impl ResponseReader {
    pub fn new(caps: Capabilities, format: RowFormat) -> Self {
        ResponseReader {
            caps,
            format,
            state: ResponseState::Start,
            seq: FIRST_RESPONSE_SEQ,
            skip_left: 0,
            skip_continues: false,
            outcome: Outcome::default(),
        }
    }

    /// Readies the reader for the next response (same capabilities and format).
    pub fn reset(&mut self) {
        *self = ResponseReader::new(self.caps, self.format);
    }

    /// Readies the reader for a next response whose rows use `format`.
    pub fn reset_with(&mut self, format: RowFormat) {
        *self = ResponseReader::new(self.caps, format);
    }

    pub fn format(&self) -> RowFormat {
        self.format
    }

    pub fn is_done(&self) -> bool {
        self.state == ResponseState::Done
    }

    /// Walks as much of `input` as forms complete packets of this response.
    /// Once the response is complete, call [`reset`](Self::reset) before
    /// the next one.
    pub fn advance(&mut self, input: &[u8]) -> Result<Progress, CodecError> {
        if self.state == ResponseState::Done {
            return Err(UsageError::OutOfOrder {
                call: "ResponseReader::advance",
                state: "the response was complete",
                remedy: "call reset or reset_with before reading the next response",
            }
            .into());
        }
        self.walk(input)
    }

    /// [`advance`](Self::advance) on a response that is not complete yet.
    /// Returns the caller-facing error type itself, so that the `Ok` value
    /// is never moved from one `Result` into another (that copy showed in
    /// the per-query instruction count).
    #[inline]
    fn walk(&mut self, input: &[u8]) -> Result<Progress, CodecError> {
        let mut pos = 0usize;
        loop {
            let rest = input.get(pos..).unwrap_or_default();
            if self.skip_left > 0 {
                let n = self.skip_left.min(rest.len());
                pos += n;
                self.skip_left -= n;
                if self.skip_left > 0 {
                    return Ok(Progress { consumed: pos, done: None });
                }
                continue;
            }
            let Some(header) = Header::parse(rest) else {
                return Ok(Progress { consumed: pos, done: None });
            };
            if header.seq != self.seq {
                // libmariadb never checks them; what keeps the walk in step
                // is each packet's length and whether it fits the state.
                self.seq = header.seq;
                self.outcome.seq_jumps = self.outcome.seq_jumps.saturating_add(1);
            }
            match self.action(header, rest)? {
                PacketAction::Skip => {
                    pos += self.start_skip(header);
                    continue;
                }
                PacketAction::Wait => return Ok(Progress { consumed: pos, done: None }),
                PacketAction::Read => {}
            }
            let Some(payload) = whole_payload(header, rest)? else {
                return Ok(Progress { consumed: pos, done: None });
            };
            let payload_at = pos + HEADER_LEN;
            pos = payload_at + payload.len();
            self.seq = self.seq.wrapping_add(1);
            if self.on_packet(payload, payload_at)? {
                self.state = ResponseState::Done;
                return Ok(Progress { consumed: pos, done: Some(std::mem::take(&mut self.outcome)) });
            }
        }
    }

    /// Decides what to do with the packet whose header starts `rest`:
    /// counts a row or a column definition it skips, and checks the first
    /// byte of a row.
    fn action(&mut self, header: Header, rest: &[u8]) -> Result<PacketAction> {
        if self.skip_continues {
            // The next fragment of a packet being skipped: raw payload, whatever its first byte.
            return Ok(PacketAction::Skip);
        }
        match self.state {
            ResponseState::Columns { left } => {
                self.state = if left > 1 {
                    ResponseState::Columns { left: left - 1 }
                } else {
                    ResponseState::after_columns(self.caps)
                };
                Ok(PacketAction::Skip)
            }
            ResponseState::Rows => {
                let Some(&first) = rest.get(HEADER_LEN).filter(|_| header.len > 0) else {
                    if header.len == 0 {
                        return Err(ProtocolError::Malformed("empty row packet"));
                    }
                    return Ok(PacketAction::Wait);
                };
                let terminator = first == ERR_HEADER || (first == EOF_HEADER && header.len < MAX_FRAGMENT);
                if terminator {
                    return Ok(PacketAction::Read);
                }
                // A binary row always starts with 0x00 (a text row with a
                // length prefix or 0xFB), so anything else is out of step.
                if self.format == RowFormat::Binary && first != 0x00 {
                    return Err(ProtocolError::BadHeader { context: "binary row", byte: first });
                }
                self.outcome.rows += 1;
                Ok(PacketAction::Skip)
            }
            ResponseState::Start | ResponseState::ColumnsEof | ResponseState::Done => Ok(PacketAction::Read),
        }
    }

    /// Starts skipping a packet (or fragment) whose header is at hand;
    /// returns the header length to consume.
    fn start_skip(&mut self, header: Header) -> usize {
        self.seq = self.seq.wrapping_add(1);
        self.skip_left = header.len;
        self.skip_continues = header.len == MAX_FRAGMENT;
        HEADER_LEN
    }

    /// Handles one whole packet; returns whether the response is complete.
    fn on_packet(&mut self, payload: &[u8], payload_at: usize) -> Result<bool> {
        let first = payload.first().copied();
        if first == Some(ERR_HEADER) && self.state != ResponseState::ColumnsEof {
            let err = ErrPacket::parse(payload)?;
            let message_at = payload_at + (payload.len() - err.message.len());
            self.outcome.error = Some(ErrorInfo {
                code: err.code,
                sql_state: err.sql_state,
                message: message_at..payload_at + payload.len(),
            });
            return Ok(true);
        }
        match self.state {
            ResponseState::Start => match first {
                Some(OK_HEADER) => {
                    let ok = OkPacket::parse(payload, self.caps)?;
                    Ok(self.on_ok(&ok))
                }
                Some(LOCAL_INFILE_HEADER) => Err(local_infile_refused(payload)),
                _ => {
                    let ColumnCount { count, metadata_follows, trailing } = read_column_count(payload, self.caps)?;
                    self.outcome.result_sets = self.outcome.result_sets.saturating_add(1);
                    self.outcome.column_count_trailing =
                        self.outcome.column_count_trailing.saturating_add(u32::from(trailing));
                    self.state = if metadata_follows {
                        ResponseState::Columns { left: count }
                    } else {
                        ResponseState::after_columns(self.caps)
                    };
                    Ok(false)
                }
            },
            ResponseState::ColumnsEof => {
                expect_eof(payload, self.caps, "EOF after column definitions")?;
                self.state = ResponseState::Rows;
                Ok(false)
            }
            ResponseState::Rows => {
                if self.caps.contains(Capabilities::DEPRECATE_EOF) {
                    let ok = OkPacket::parse(payload, self.caps)?;
                    Ok(self.on_ok(&ok))
                } else {
                    let eof = EofPacket::parse(payload, self.caps)?;
                    self.outcome.warnings = self.outcome.warnings.saturating_add(eof.warnings);
                    self.outcome.status = eof.status;
                    Ok(self.next_result(eof.status))
                }
            }
            ResponseState::Columns { .. } | ResponseState::Done => {
                Err(ProtocolError::UnexpectedMessage { state: "walking a response", got: "a packet out of place" })
            }
        }
    }

    fn on_ok(&mut self, ok: &OkPacket<'_>) -> bool {
        self.outcome.affected_rows = self.outcome.affected_rows.saturating_add(ok.affected_rows);
        if ok.last_insert_id != 0 {
            self.outcome.last_insert_id = ok.last_insert_id;
        }
        self.outcome.warnings = self.outcome.warnings.saturating_add(ok.warnings);
        self.outcome.status = ok.status;
        self.next_result(ok.status)
    }

    /// After an OK or a result set's terminator: another result follows, or the response is complete.
    fn next_result(&mut self, status: StatusFlags) -> bool {
        if status.contains(StatusFlags::MORE_RESULTS_EXISTS) {
            self.state = ResponseState::Start;
            false
        } else {
            true
        }
    }
}

/// A packet whose payload is to be read whole, once it is all in `rest`
/// (`None` until then). Only small packets are read whole: one that needs
/// another fragment cannot be one of them.
pub(crate) fn whole_payload(header: Header, rest: &[u8]) -> Result<Option<&[u8]>> {
    if header.len >= MAX_FRAGMENT {
        return Err(ProtocolError::PacketTooLarge { size: header.len, max: MAX_FRAGMENT - 1 });
    }
    Ok(rest.get(HEADER_LEN..HEADER_LEN + header.len))
}

/// The refusal of a LOCAL INFILE request, naming the file the server asked for.
pub(crate) fn local_infile_refused(payload: &[u8]) -> ProtocolError {
    let name = payload.get(1..).unwrap_or_default();
    ProtocolError::LocalInfileRefused(String::from_utf8_lossy(name).into_owned())
}

/// A column-count packet, read.
pub(crate) struct ColumnCount {
    pub(crate) count: u64,
    /// Whether column definitions follow (always, unless
    /// MARIADB_CLIENT_CACHE_METADATA is negotiated and its flag byte is 0).
    pub(crate) metadata_follows: bool,
    /// Bytes came after the count (and the flag): ignored, as libmariadb's
    /// `mthd_my_read_query_result` reads the count and nothing after it
    /// ([`Deviation::ColumnCountTrailing`](crate::tolerance::Deviation)).
    pub(crate) trailing: bool,
}

pub(crate) fn read_column_count(payload: &[u8], caps: Capabilities) -> Result<ColumnCount> {
    let mut r = Reader::new(payload);
    let count = r.lenenc_int("column count")?;
    if count == 0 {
        return Err(ProtocolError::Malformed("column count"));
    }
    let metadata_follows = if caps.contains(Capabilities::MARIADB_CLIENT_CACHE_METADATA) {
        match r.u8("metadata follows flag")? {
            0 => false,
            1 => true,
            _ => return Err(ProtocolError::Malformed("metadata follows flag")),
        }
    } else {
        true
    };
    Ok(ColumnCount { count, metadata_follows, trailing: !r.is_empty() })
}

/// Appends a column-count packet; `metadata_follows` is sent only under
/// MARIADB_CLIENT_CACHE_METADATA. Returns the next sequence id.
pub fn encode_column_count(count: u64, metadata_follows: bool, caps: Capabilities, seq: u8, out: &mut Vec<u8>) -> u8 {
    let start = start_packet(out);
    out.put_lenenc_int(count);
    if caps.contains(Capabilities::MARIADB_CLIENT_CACHE_METADATA) {
        out.put_u8(u8::from(metadata_follows));
    }
    finish_packet(out, start, seq)
}

/// Appends a result set's metadata: column count, the definitions (unless
/// the cache flag says they are skipped) and, without DEPRECATE_EOF, the EOF,
/// which carries the server's current `status` (MORE_RESULTS_EXISTS included
/// inside a multi-result response). Returns the next sequence id.
pub fn encode_metadata(
    columns: &[ColumnDefinition<'_>],
    metadata_follows: bool,
    status: StatusFlags,
    caps: Capabilities,
    seq: u8,
    out: &mut Vec<u8>,
) -> u8 {
    let metadata_follows = metadata_follows || !caps.contains(Capabilities::MARIADB_CLIENT_CACHE_METADATA);
    let mut seq = encode_column_count(columns.len() as u64, metadata_follows, caps, seq, out);
    if metadata_follows {
        for col in columns {
            seq = col.encode(caps, seq, out);
        }
    }
    if !caps.contains(Capabilities::DEPRECATE_EOF) {
        seq = EofPacket { warnings: 0, status }.encode(caps, seq, out);
    }
    seq
}

/// Appends the packet that ends a result set's rows: an EOF, or under
/// DEPRECATE_EOF an OK with a 0xFE header. Returns the next sequence id.
pub fn encode_result_end(status: StatusFlags, warnings: u16, caps: Capabilities, seq: u8, out: &mut Vec<u8>) -> u8 {
    if caps.contains(Capabilities::DEPRECATE_EOF) {
        OkPacket { status, warnings, ..OkPacket::default() }.encode(EOF_HEADER, caps, seq, out)
    } else {
        EofPacket { warnings, status }.encode(caps, seq, out)
    }
}

/// An OK packet (or the OK/EOF that ended a result set), owned.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OkSummary {
    pub affected_rows: u64,
    pub last_insert_id: u64,
    pub status: StatusFlags,
    pub warnings: u16,
    pub info: Vec<u8>,
}

impl From<&OkPacket<'_>> for OkSummary {
    fn from(ok: &OkPacket<'_>) -> Self {
        OkSummary {
            affected_rows: ok.affected_rows,
            last_insert_id: ok.last_insert_id,
            status: ok.status,
            warnings: ok.warnings,
            info: ok.info.to_vec(),
        }
    }
}

/// One row, kept as its payload (validated against the columns when decoded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    format: RowFormat,
    payload: Vec<u8>,
}

impl Row {
    pub fn format(&self) -> RowFormat {
        self.format
    }

    pub fn payload(&self) -> &[u8] {
        &self.payload
    }

    /// The values: for text rows `Bytes` or `Null`, for binary rows by column type.
    pub fn values<'r>(&'r self, columns: &[ColumnDefinition<'_>]) -> Result<Vec<Value<'r>>> {
        match self.format {
            RowFormat::Binary => BinaryRow::decode(&self.payload, columns),
            RowFormat::Text => Ok(TextRow::parse(&self.payload, columns.len())?
                .values()
                .map(|v| v.map_or(Value::Null, Value::Bytes))
                .collect()),
        }
    }

    /// The values as the text protocol sends them (binary values formatted
    /// by [`Value::to_text`]), `None` for NULL.
    pub fn text_values(&self, columns: &[ColumnDefinition<'_>]) -> Result<Vec<Option<Vec<u8>>>> {
        Ok(self.values(columns)?.iter().zip(columns).map(|(v, c)| v.to_text(c)).collect())
    }
}

/// One result set, owned.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResultSet {
    pub columns: Vec<Column>,
    /// The server skipped the column definitions (MARIADB_CLIENT_CACHE_METADATA):
    /// `columns` holds the cached definitions given to the decoder.
    pub metadata_skipped: bool,
    pub rows: Vec<Row>,
    /// The EOF or 0xFE-headed OK that ended the rows.
    pub end: OkSummary,
}

impl ResultSet {
    /// Every row as the text protocol would send it.
    pub fn text_rows(&self) -> Result<Vec<Vec<Option<Vec<u8>>>>> {
        self.rows.iter().map(|r| r.text_values(&self.columns)).collect()
    }
}

/// One result of a response.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum QueryResult {
    Ok(OkSummary),
    ResultSet(ResultSet),
}

/// A whole decoded response.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Response {
    /// The results before the end (or before the ERR).
    pub results: Vec<QueryResult>,
    pub error: Option<ServerError>,
    /// See [`Outcome::column_count_trailing`].
    pub column_count_trailing: u32,
}

impl Response {
    pub fn result_sets(&self) -> impl Iterator<Item = &ResultSet> {
        self.results.iter().filter_map(|r| match r {
            QueryResult::ResultSet(rs) => Some(rs),
            QueryResult::Ok(_) => None,
        })
    }
}

/// Column definitions kept before the vector grows from real packets: a
/// column count is a 64-bit number from the peer.
const PREALLOCATE_COLUMNS: usize = 64;

/// The allocating, packet-level decoder. Feed it each logical packet payload
/// of a response (framing, fragment joining and sequence ids are the
/// caller's, e.g. [`crate::framing::decode_packet`]).
#[derive(Debug, Clone)]
pub struct ResultSetDecoder {
    caps: Capabilities,
    format: RowFormat,
    cached: Option<Vec<Column>>,
    state: ResponseState,
    current: ResultSet,
    response: Response,
}

impl ResultSetDecoder {
    pub fn new(caps: Capabilities, format: RowFormat) -> Self {
        ResultSetDecoder {
            caps,
            format,
            cached: None,
            state: ResponseState::Start,
            current: ResultSet::default(),
            response: Response::default(),
        }
    }

    /// A decoder that can stand in `columns` when the server skips the metadata
    /// (MARIADB_CLIENT_CACHE_METADATA after a prepare).
    pub fn with_cached_columns(caps: Capabilities, format: RowFormat, columns: Vec<Column>) -> Self {
        ResultSetDecoder { cached: Some(columns), ..ResultSetDecoder::new(caps, format) }
    }

    /// Takes the next packet payload; returns the response once complete.
    /// A decoder reads one response: use a new one for the next.
    pub fn feed(&mut self, payload: &[u8]) -> Result<Option<Response>, CodecError> {
        let response = match self.state {
            ResponseState::Done => {
                return Err(UsageError::OutOfOrder {
                    call: "ResultSetDecoder::feed",
                    state: "the response was complete",
                    remedy: "decode the next response with a new ResultSetDecoder",
                }
                .into())
            }
            ResponseState::Start => self.on_result_start(payload)?,
            ResponseState::Columns { left } => self.on_column(payload, left)?,
            ResponseState::ColumnsEof => {
                expect_eof(payload, self.caps, "EOF after column definitions")?;
                self.state = ResponseState::Rows;
                None
            }
            ResponseState::Rows => self.on_row_or_end(payload)?,
        };
        Ok(response)
    }

    /// The first packet of a result: OK, ERR, a LOCAL INFILE request or a column count.
    fn on_result_start(&mut self, payload: &[u8]) -> Result<Option<Response>> {
        match payload.first().copied() {
            Some(ERR_HEADER) => self.finish_with_error(payload),
            Some(OK_HEADER) => {
                let ok = OkPacket::parse(payload, self.caps)?;
                self.response.results.push(QueryResult::Ok(OkSummary::from(&ok)));
                Ok(self.next_result(ok.status))
            }
            Some(LOCAL_INFILE_HEADER) => Err(local_infile_refused(payload)),
            _ => {
                self.start_result_set(payload)?;
                Ok(None)
            }
        }
    }

    /// A column count: that many definitions follow, or the server skipped
    /// them and the cached ones stand in.
    fn start_result_set(&mut self, payload: &[u8]) -> Result<()> {
        let ColumnCount { count, metadata_follows, trailing } = read_column_count(payload, self.caps)?;
        self.response.column_count_trailing = self.response.column_count_trailing.saturating_add(u32::from(trailing));
        self.current = ResultSet::default();
        if metadata_follows {
            let capacity = usize::try_from(count).unwrap_or(usize::MAX).min(PREALLOCATE_COLUMNS);
            self.current.columns = Vec::with_capacity(capacity);
            self.state = ResponseState::Columns { left: count };
            return Ok(());
        }
        let cached = self.cached.as_ref().ok_or(ProtocolError::UnexpectedMessage {
            state: "decoding a result set without cached column definitions",
            got: "a column count saying the metadata was skipped",
        })?;
        if cached.len() as u64 != count {
            return Err(ProtocolError::Malformed("column count differs from the cached definitions"));
        }
        self.current.columns = cached.clone();
        self.current.metadata_skipped = true;
        self.state = ResponseState::after_columns(self.caps);
        Ok(())
    }

    fn on_column(&mut self, payload: &[u8], left: u64) -> Result<Option<Response>> {
        self.current.columns.push(ColumnDefinition::parse(payload, self.caps)?.into_owned());
        self.state =
            if left > 1 { ResponseState::Columns { left: left - 1 } } else { ResponseState::after_columns(self.caps) };
        Ok(None)
    }

    /// A row, checked against the columns and kept, or the packet that ends
    /// the rows: ERR, or the EOF (OK under DEPRECATE_EOF).
    fn on_row_or_end(&mut self, payload: &[u8]) -> Result<Option<Response>> {
        if payload.first() == Some(&ERR_HEADER) {
            return self.finish_with_error(payload);
        }
        if is_result_terminator(payload) {
            return self.end_result_set(payload);
        }
        match self.format {
            RowFormat::Text => {
                TextRow::parse(payload, self.current.columns.len())?;
            }
            RowFormat::Binary => {
                BinaryRow::decode(payload, &self.current.columns)?;
            }
        }
        self.current.rows.push(Row { format: self.format, payload: payload.to_vec() });
        Ok(None)
    }

    /// Files the result set its terminator ends; another result may follow.
    fn end_result_set(&mut self, payload: &[u8]) -> Result<Option<Response>> {
        self.current.end = if self.caps.contains(Capabilities::DEPRECATE_EOF) {
            OkSummary::from(&OkPacket::parse(payload, self.caps)?)
        } else {
            let eof = EofPacket::parse(payload, self.caps)?;
            OkSummary { status: eof.status, warnings: eof.warnings, ..OkSummary::default() }
        };
        let status = self.current.end.status;
        self.response.results.push(QueryResult::ResultSet(std::mem::take(&mut self.current)));
        Ok(self.next_result(status))
    }

    fn finish_with_error(&mut self, payload: &[u8]) -> Result<Option<Response>> {
        self.response.error = Some(ErrPacket::parse(payload)?.to_owned());
        self.state = ResponseState::Done;
        Ok(Some(std::mem::take(&mut self.response)))
    }

    fn next_result(&mut self, status: StatusFlags) -> Option<Response> {
        if status.contains(StatusFlags::MORE_RESULTS_EXISTS) {
            self.state = ResponseState::Start;
            None
        } else {
            self.state = ResponseState::Done;
            Some(std::mem::take(&mut self.response))
        }
    }
}

#[cfg(test)]
mod resultset_tests;
