//! One connection's state machine for a caller that makes one call at a
//! time and wants its answer: a Lua script's `con:query()`,
//! `stmt:execute()`, `con:prepare()`. Where a built-in test's [`EventPipeline`]
//! keeps a pipeline full and only counts what comes back, a call exchange
//! holds one command until the loop sends it and keeps its answer, within
//! a bound, for the caller to read. Like [`EventPipeline`] it never sees a
//! socket: the loop's backend moves the bytes, the connection's transport
//! (TLS, compression) sits between, and the loop hands the answer to the
//! task that made the call.
//!
//! [`EventPipeline`]: crate::driver::EventPipeline

use wirebench_protocol::constants::client_error::{CR_SERVER_GONE_ERROR, CR_SERVER_LOST};
use wirebench_protocol::framing;
use wirebench_protocol::response::{
    Column, Outcome, PrepareOutcome, PrepareResponse, PreparedStatement, Response, ResponseReader, ResultSetDecoder,
    RowFormat, ServerError,
};
use wirebench_protocol::{Capabilities, CodecError, ProtocolError};

use crate::driver::Lost;

/// What the caller wants of a call's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// A query's results decoded in full, rows as text: what the walked
    /// answers are checked against in the tests.
    #[cfg(test)]
    Response,
    /// An execution's answer walked without decoding; its packets kept
    /// (for `CallExchange::decode_kept`) when `keep_rows` (a statement
    /// with columns, whose rows a script may fetch).
    Walk { keep_rows: bool },
    /// A query's answer walked without decoding, its packets kept: its
    /// rows are read in place, as text, when fetched ([`KeptTextRows`]).
    WalkText,
    /// A COM_STMT_PREPARE's answer: the statement.
    Prepared,
    /// No answer comes (COM_STMT_CLOSE): the call ends once it is sent.
    Nothing,
}

/// A call's answer.
#[derive(Debug)]
pub enum CallAnswer {
    /// A query's results, decoded in full.
    #[cfg(test)]
    Response(Response),
    /// A statement COM_STMT_PREPARE made.
    Prepared(PreparedStatement),
    /// What a walked answer amounted to.
    Walked(Outcome),
    /// The call had no answer to wait for.
    Sent,
}

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The server answered with an error; the connection goes on.
    #[error("{}", wirebench_protocol::ServerText(&.0.message))]
    Server(ServerError),
    /// The answer broke the protocol; the connection is closed.
    #[error("the server's answer broke the protocol: {0}")]
    Protocol(#[from] CodecError),
    /// The server asked for a local file (LOAD DATA LOCAL INFILE), which
    /// was refused; the connection goes on.
    #[error("the server asked for the local file {0:?}; wirebench sends no files to a script's statements")]
    LocalFileRefused(String),
    /// The answer grew past the bound; the connection is closed.
    #[error(
        "a result of more than {limit} bytes: raise --lua-result-limit (now {limit}) to keep larger results, \
         or fetch less (LIMIT)"
    )]
    ResultTooLarge { limit: usize },
    /// The connection was lost; `reopened` when it was opened again
    /// because `--mysql-ignore-errors` lists the error.
    #[error("{lost}")]
    Lost { lost: Lost, reopened: bool },
    /// A command was started before the previous one's answer came.
    #[error("a command was sent before the previous one's answer was read")]
    Busy,
    /// The connection is closed (disconnected, or lost and not reopened).
    #[error("the connection is closed (disconnect() was called, or it was lost)")]
    Closed,
    /// The run's time was up while the call waited.
    #[error("the run's time is up")]
    Cut,
    /// The loop could not take the connection.
    #[error("{0}")]
    Loop(String),
}

impl CallError {
    /// The error number a script sees (`sql_errno`): the server's, or
    /// the client error libmysqlclient would report.
    pub fn errno(&self) -> u16 {
        match self {
            CallError::Server(error) => error.code,
            CallError::Lost { lost, .. } => lost.code(),
            // A closed connection has gone away, as libmysqlclient says of one.
            CallError::Closed => CR_SERVER_GONE_ERROR,
            // libmysqlclient's word for an answer it cannot read.
            _ => CR_SERVER_LOST,
        }
    }

    /// Whether the connection can go on after it.
    pub fn leaves_connection_open(&self) -> bool {
        matches!(self, CallError::Server(_) | CallError::LocalFileRefused(_))
    }
}

/// What the connection waits for.
#[derive(Debug)]
enum Awaiting {
    Nothing,
    #[cfg(test)]
    Response {
        decoder: ResultSetDecoder,
        seq: u8,
    },
    Prepare {
        decoder: PrepareResponse,
        seq: u8,
    },
    Walk {
        reader: ResponseReader,
        keep: bool,
    },
    /// The server asked for a local file: the empty packet that refuses it
    /// is out, its reply ends the exchange with the refusal.
    Refusal {
        file: String,
        seq: u8,
    },
}

/// A connection's call, from the command the caller wrote to its answer.
#[derive(Debug)]
pub struct CallExchange {
    caps: Capabilities,
    max_packet: usize,
    /// The most bytes of one answer kept (decoded or as packets).
    limit: usize,
    /// The command written and not yet handed to the loop, with what its
    /// answer is to become.
    pending: Vec<u8>,
    pending_expect: Option<Expect>,
    awaiting: Awaiting,
    /// Bytes of the answer under way, against `limit`.
    taken: usize,
    /// The packets of the last walked answer kept (`keep_rows`).
    kept: Vec<u8>,
    answer: Option<Result<CallAnswer, CallError>>,
}

impl CallExchange {
    pub fn new(caps: Capabilities, max_packet: usize, limit: usize) -> Self {
        CallExchange {
            caps,
            max_packet,
            limit,
            pending: Vec::new(),
            pending_expect: None,
            awaiting: Awaiting::Nothing,
            taken: 0,
            kept: Vec::new(),
            answer: None,
        }
    }

    /// Whether a call is under way: written, sent or awaiting its answer.
    pub fn in_call(&self) -> bool {
        self.pending_expect.is_some() || !matches!(self.awaiting, Awaiting::Nothing) || self.answer.is_some()
    }

    /// Whether bytes are waiting for the loop to send them.
    #[cfg(test)]
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Whether the loop still waits for the server for this call.
    pub fn awaits_answer(&self) -> bool {
        !matches!(self.awaiting, Awaiting::Nothing)
    }

    /// Starts a call: `command` is whole packets from sequence id 0 (or
    /// several, for a COM_STMT_CLOSE sent ahead of the next command).
    pub fn start(&mut self, command: &[u8], expect: Expect) -> Result<(), CallError> {
        if self.in_call() {
            return Err(CallError::Busy);
        }
        self.pending.extend_from_slice(command);
        self.pending_expect = Some(expect);
        self.taken = 0;
        if matches!(expect, Expect::Walk { .. } | Expect::WalkText) {
            self.kept.clear();
        }
        Ok(())
    }

    /// Moves what is to be sent into `out` (the transport's input), and
    /// says whether a call now starts waiting; [`sent`](Self::sent) must
    /// follow then, once the transport has encoded it.
    pub fn fill(&mut self, out: &mut Vec<u8>) -> Option<Expect> {
        if self.pending.is_empty() && self.pending_expect.is_none() {
            return None;
        }
        out.extend_from_slice(&self.pending);
        self.pending.clear();
        self.pending_expect.take()
    }

    /// The command filled is on its way: its answer is awaited, due at
    /// sequence id `answer_seq` (the transport's, with compression; else
    /// 1, after the command's single packet).
    pub fn sent(&mut self, expect: Expect, answer_seq: u8) {
        self.awaiting = match expect {
            #[cfg(test)]
            Expect::Response => {
                Awaiting::Response { decoder: ResultSetDecoder::new(self.caps, RowFormat::Text), seq: answer_seq }
            }
            Expect::Prepared => Awaiting::Prepare { decoder: PrepareResponse::new(self.caps), seq: answer_seq },
            Expect::Walk { keep_rows } => {
                Awaiting::Walk { reader: ResponseReader::new(self.caps, RowFormat::Binary), keep: keep_rows }
            }
            Expect::WalkText => Awaiting::Walk { reader: ResponseReader::new(self.caps, RowFormat::Text), keep: true },
            Expect::Nothing => {
                self.answer = Some(Ok(CallAnswer::Sent));
                Awaiting::Nothing
            }
        };
    }

    /// Feeds the plain packet stream received; returns the bytes consumed
    /// (whole packets: keep the rest). Once the answer is whole it waits in
    /// [`take_answer`](Self::take_answer); an error here is the
    /// connection's end (bytes nobody asked for, a broken answer).
    pub fn on_input(&mut self, input: &[u8]) -> Result<usize, CallError> {
        let mut used = 0;
        loop {
            let rest = input.get(used..).unwrap_or_default();
            if rest.is_empty() {
                return Ok(used);
            }
            let step = match &self.awaiting {
                Awaiting::Nothing => {
                    let unsolicited =
                        ProtocolError::UnexpectedMessage { state: "no command was outstanding", got: "a packet" };
                    return Err(CallError::Protocol(unsolicited.into()));
                }
                Awaiting::Walk { .. } => self.walk(rest)?,
                _ => self.decode_packet(rest)?,
            };
            if step == 0 {
                return Ok(used);
            }
            used += step;
            if self.answer.is_some() {
                return Ok(used);
            }
        }
    }

    /// The call's answer, once it is in.
    pub fn take_answer(&mut self) -> Option<Result<CallAnswer, CallError>> {
        self.answer.take()
    }

    /// The call ended without its answer (the connection was lost or
    /// closed): nothing is awaited any more.
    pub fn abandon(&mut self) {
        self.awaiting = Awaiting::Nothing;
        self.pending.clear();
        self.pending_expect = None;
        self.answer = None;
    }

    /// The connection was opened again: what the new login negotiated.
    pub fn reconnected(&mut self, caps: Capabilities) {
        self.caps = caps;
    }

    /// The last walked answer whose packets were kept, decoded in full,
    /// its rows described by `columns` (its prepared statement's).
    #[cfg(test)]
    pub fn decode_kept(&self, columns: Vec<Column>) -> Result<Response, CallError> {
        decode_walked(&self.kept, self.caps, self.max_packet, columns)
    }

    /// The kept packets of the last walked answer (see [`Expect::Walk`]).
    #[cfg(test)]
    pub fn kept(&self) -> &[u8] {
        &self.kept
    }

    /// Swaps the kept packets with `other` (a caller keeps a result's
    /// packets past the next call that way, with no copy).
    pub fn swap_kept(&mut self, other: &mut Vec<u8>) {
        std::mem::swap(&mut self.kept, other);
    }

    /// Counts `n` bytes of the answer against the bound.
    fn take_bytes(&mut self, n: usize) -> Result<(), CallError> {
        self.taken = self.taken.saturating_add(n);
        if self.taken > self.limit {
            self.awaiting = Awaiting::Nothing;
            return Err(CallError::ResultTooLarge { limit: self.limit });
        }
        Ok(())
    }

    /// Walks what was received of a walked answer; the bytes consumed.
    fn walk(&mut self, input: &[u8]) -> Result<usize, CallError> {
        let Awaiting::Walk { reader, keep } = &mut self.awaiting else { return Ok(0) };
        let progress = match reader.advance(input) {
            Ok(progress) => progress,
            Err(CodecError::Protocol(ProtocolError::LocalInfileRefused(file))) => {
                return Ok(self.refuse_first(input, file))
            }
            Err(error) => return Err(error.into()),
        };
        let keep = *keep;
        let consumed = progress.consumed;
        if keep {
            self.take_bytes(consumed)?;
            self.kept.extend_from_slice(input.get(..consumed).unwrap_or_default());
        }
        if let Some(outcome) = progress.done {
            crate::client::tolerance::record_answer(&outcome);
            self.awaiting = Awaiting::Nothing;
            self.answer = Some(match &outcome.error {
                Some(error) => Err(CallError::Server(error.to_server_error(input))),
                None => Ok(CallAnswer::Walked(outcome)),
            });
        }
        Ok(consumed)
    }

    /// Feeds one whole packet to the decoder waiting for it; the bytes
    /// consumed (0: the packet is not whole yet).
    fn decode_packet(&mut self, input: &[u8]) -> Result<usize, CallError> {
        let Some(seq) = self.awaiting.seq() else { return Ok(0) };
        let Some(frame) = framing::decode_answer_packet(input, seq, self.max_packet).map_err(CodecError::from)? else {
            return Ok(0);
        };
        crate::client::tolerance::record_seq_jumps(u32::from(frame.seq_jumps));
        let (consumed, next_seq) = (frame.consumed, frame.next_seq);
        self.take_bytes(consumed)?;
        match self.awaiting.feed(&frame.payload, next_seq) {
            PacketFed::More => {}
            PacketFed::Answer(answer) => self.answer = Some(Ok(answer)),
            PacketFed::Failed(error) => self.answer = Some(Err(error)),
            PacketFed::Broken(error) => return Err(CallError::Protocol(error)),
            #[cfg(test)]
            PacketFed::AsksForFile(file) => self.refuse_file(file, next_seq),
        }
        Ok(consumed)
    }

    /// A walked query's first packet asks for a local file: it is consumed
    /// (its length from its header) and refused; the bytes consumed.
    fn refuse_first(&mut self, input: &[u8], file: String) -> usize {
        let len = input.get(..3).map_or(0, |h| usize::from(h[0]) | usize::from(h[1]) << 8 | usize::from(h[2]) << 16);
        let seq = input.get(3).map_or(1, |s| s.wrapping_add(1));
        self.refuse_file(file, seq);
        (4 + len).min(input.len())
    }

    /// wirebench sends no files: an empty packet ends the transfer, and
    /// the server's reply to it ends the exchange.
    fn refuse_file(&mut self, file: String, seq: u8) {
        let next = framing::encode_packet(&mut self.pending, seq, &[]);
        self.awaiting = Awaiting::Refusal { file, seq: next };
    }
}

/// The rows of a walked text answer's first result set, read in place
/// from its kept packets (from sequence id 1): no column definition is
/// decoded, a text row's values being length-prefixed strings whatever
/// their columns.
#[derive(Debug, Default, Clone, Copy)]
pub struct KeptTextRows {
    /// Where the next row's packet starts in the kept bytes.
    at: usize,
    seq: u8,
    columns: usize,
    done: bool,
}

impl KeptTextRows {
    /// Finds the first result set's rows in `kept`: `None` when it holds no
    /// result set (an OK, an error).
    pub fn new(kept: &[u8], caps: Capabilities, max_packet: usize) -> Result<Option<Self>, CallError> {
        let Some(first) = framing::decode_answer_packet(kept, 1, max_packet).map_err(CodecError::from)? else {
            return Ok(None);
        };
        if matches!(first.payload.first(), Some(0x00 | 0xFF | 0xFB) | None) {
            return Ok(None);
        }
        let mut reader = wirebench_protocol::buf::Reader::new(&first.payload);
        let count = reader.lenenc_int("column count").map_err(CodecError::from)?;
        let columns = usize::try_from(count).map_err(|_| CodecError::from(ProtocolError::Malformed("column count")))?;
        let (mut at, mut seq) = (first.consumed, first.next_seq);
        let definitions = columns.saturating_add(usize::from(!caps.contains(Capabilities::DEPRECATE_EOF)));
        for _ in 0..definitions {
            let rest = kept.get(at..).unwrap_or_default();
            let Some(frame) = framing::decode_answer_packet(rest, seq, max_packet).map_err(CodecError::from)? else {
                return Err(CallError::Protocol(ProtocolError::UnexpectedEof("a kept result").into()));
            };
            (at, seq) = (at + frame.consumed, frame.next_seq);
        }
        Ok(Some(KeptTextRows { at, seq, columns, done: false }))
    }

    pub fn columns(&self) -> usize {
        self.columns
    }

    /// The next row's values (`None` for SQL NULL), borrowed from `kept`
    /// where the packet is one fragment, else copied into `joined`; `None`
    /// past the last row.
    pub fn next<'k>(
        &mut self,
        kept: &'k [u8],
        max_packet: usize,
        joined: &'k mut Vec<u8>,
    ) -> Result<Option<wirebench_protocol::response::TextRow<'k>>, CallError> {
        if self.done {
            return Ok(None);
        }
        let rest = kept.get(self.at..).unwrap_or_default();
        let Some(frame) = framing::decode_answer_packet(rest, self.seq, max_packet).map_err(CodecError::from)? else {
            self.done = true;
            return Ok(None);
        };
        (self.at, self.seq) = (self.at + frame.consumed, frame.next_seq);
        let payload: &'k [u8] = match frame.payload {
            std::borrow::Cow::Borrowed(bytes) => bytes,
            std::borrow::Cow::Owned(bytes) => {
                *joined = bytes;
                joined
            }
        };
        // The result set's end: EOF, or OK with 0xFE (DEPRECATE_EOF), or an error.
        if matches!(payload.first(), Some(0xFE) if payload.len() < 0xFF_FFFF) || payload.first() == Some(&0xFF) {
            self.done = true;
            return Ok(None);
        }
        Ok(Some(wirebench_protocol::response::TextRow::parse(payload, self.columns).map_err(CodecError::from)?))
    }
}

/// A walked answer's kept packets (from sequence id 1), decoded in full.
/// Their sequence ids were followed (and counted) by the walk; they are
/// read here as the walk read them.
pub fn decode_walked(
    kept: &[u8],
    caps: Capabilities,
    max_packet: usize,
    columns: Vec<Column>,
) -> Result<Response, CallError> {
    let mut decoder = ResultSetDecoder::with_cached_columns(caps, RowFormat::Binary, columns);
    let (mut at, mut seq) = (0, 1);
    loop {
        let rest = kept.get(at..).unwrap_or_default();
        let Some(frame) = framing::decode_answer_packet(rest, seq, max_packet).map_err(CodecError::from)? else {
            return Err(CallError::Protocol(ProtocolError::UnexpectedEof("a kept result").into()));
        };
        (at, seq) = (at + frame.consumed, frame.next_seq);
        if let Some(response) = decoder.feed(&frame.payload)? {
            return Ok(response);
        }
    }
}

impl Awaiting {
    fn seq(&self) -> Option<u8> {
        match self {
            Awaiting::Nothing | Awaiting::Walk { .. } => None,
            #[cfg(test)]
            Awaiting::Response { seq, .. } => Some(*seq),
            Awaiting::Prepare { seq, .. } | Awaiting::Refusal { seq, .. } => Some(*seq),
        }
    }

    /// One whole packet, `next_seq` the sequence id the one after it carries.
    fn feed(&mut self, payload: &[u8], next_seq: u8) -> PacketFed {
        let fed = match self {
            Awaiting::Nothing | Awaiting::Walk { .. } => return PacketFed::More,
            #[cfg(test)]
            Awaiting::Response { decoder, seq } => {
                *seq = next_seq;
                match decoder.feed(payload) {
                    Ok(None) => return PacketFed::More,
                    Ok(Some(Response { error: Some(error), .. })) => PacketFed::Failed(CallError::Server(error)),
                    Ok(Some(response)) => PacketFed::Answer(CallAnswer::Response(response)),
                    Err(CodecError::Protocol(ProtocolError::LocalInfileRefused(file))) => PacketFed::AsksForFile(file),
                    Err(error) => PacketFed::Broken(error),
                }
            }
            Awaiting::Prepare { decoder, seq } => {
                *seq = next_seq;
                match decoder.feed(payload) {
                    Ok(None) => return PacketFed::More,
                    Ok(Some(PrepareOutcome::Prepared(statement))) => PacketFed::Answer(CallAnswer::Prepared(statement)),
                    Ok(Some(PrepareOutcome::Error(error))) => PacketFed::Failed(CallError::Server(error)),
                    Ok(Some(_)) => PacketFed::Broken(
                        ProtocolError::UnexpectedMessage { state: "reading a prepare answer", got: "another outcome" }
                            .into(),
                    ),
                    Err(error) => PacketFed::Broken(error),
                }
            }
            Awaiting::Refusal { file, .. } => PacketFed::Failed(CallError::LocalFileRefused(std::mem::take(file))),
        };
        *self = Awaiting::Nothing;
        fed
    }
}

/// What one packet did to the answer awaited.
enum PacketFed {
    More,
    Answer(CallAnswer),
    /// The answer is an error the connection survives.
    Failed(CallError),
    /// The answer broke the protocol.
    Broken(CodecError),
    #[cfg(test)]
    AsksForFile(String),
}

/// Transcripts: the server's bytes as MariaDB sends them, fed whole and a
/// byte at a time, and what the caller gets.
#[cfg(test)]
mod tests {
    use wirebench_protocol::command;
    use wirebench_protocol::response::binary_row::{encode_binary_row, Value};
    use wirebench_protocol::response::{resultset, text_row, ColumnDefinition, ErrPacket, OkPacket, PrepareOk};
    use wirebench_protocol::{ColumnType, StatusFlags};

    use super::*;

    const CAPS: Capabilities = Capabilities::PROTOCOL_41.union(Capabilities::DEPRECATE_EOF);

    fn exchange(limit: usize) -> CallExchange {
        CallExchange::new(CAPS, 16 << 20, limit)
    }

    /// Starts a call with `command`, as the loop sends it (answer at 1).
    fn call(calls: &mut CallExchange, command: &[u8], expect: Expect) -> Vec<u8> {
        calls.start(command, expect).unwrap();
        let mut out = Vec::new();
        let filled = calls.fill(&mut out).expect("a call to send");
        calls.sent(filled, 1);
        out
    }

    /// Feeds `answer` whole, then (on a fresh session) a byte at a time;
    /// both must give the same answer.
    fn feed(expect: Expect, answer: &[u8]) -> Result<CallAnswer, CallError> {
        let mut bytewise = exchange(1 << 20);
        call(&mut bytewise, b"\x01\x00\x00\x00\x0e", expect);
        let mut pending = Vec::new();
        for &byte in answer {
            pending.push(byte);
            let used = bytewise.on_input(&pending)?;
            pending.drain(..used);
        }
        let slow = bytewise.take_answer().expect("an answer after the last byte");
        let mut whole = exchange(1 << 20);
        call(&mut whole, b"\x01\x00\x00\x00\x0e", expect);
        assert_eq!(whole.on_input(answer)?, answer.len());
        let fast = whole.take_answer().expect("an answer");
        assert_eq!(format!("{fast:?}"), format!("{slow:?}"));
        fast
    }

    fn text_result(rows: &[&[Option<&[u8]>]]) -> Vec<u8> {
        let mut out = Vec::new();
        let cols = [ColumnDefinition::new(b"a", ColumnType::VarString), ColumnDefinition::new(b"b", ColumnType::Long)];
        let mut seq = resultset::encode_metadata(&cols, true, StatusFlags::AUTOCOMMIT, CAPS, 1, &mut out);
        for row in rows {
            seq = text_row::encode_text_row(row.iter().copied(), seq, &mut out);
        }
        resultset::encode_result_end(StatusFlags::AUTOCOMMIT, 0, CAPS, seq, &mut out);
        out
    }

    #[test]
    fn a_query_gives_its_rows_as_text() {
        let answer = text_result(&[&[Some(b"x"), Some(b"1")], &[None, Some(b"2")]]);
        let Ok(CallAnswer::Response(response)) = feed(Expect::Response, &answer) else { panic!() };
        let set = response.result_sets().next().expect("a result set");
        let rows = set.text_rows().unwrap();
        assert_eq!(rows, vec![vec![Some(b"x".to_vec()), Some(b"1".to_vec())], vec![None, Some(b"2".to_vec())]]);
    }

    #[test]
    fn an_ok_gives_its_affected_rows() {
        let mut answer = Vec::new();
        OkPacket { affected_rows: 3, ..OkPacket::default() }.encode(0x00, CAPS, 1, &mut answer);
        let Ok(CallAnswer::Response(response)) = feed(Expect::Response, &answer) else { panic!() };
        let affected: u64 = response
            .results
            .iter()
            .map(|r| match r {
                wirebench_protocol::response::QueryResult::Ok(ok) => ok.affected_rows,
                _ => 0,
            })
            .sum();
        assert_eq!(affected, 3);
    }

    /// A server error leaves the connection usable: the next call works.
    #[test]
    fn an_error_is_the_answer_and_the_connection_goes_on() {
        let mut err = Vec::new();
        ErrPacket { code: 1146, sql_state: Some(*b"42S02"), message: b"no such table" }.encode(1, &mut err);
        let Err(CallError::Server(error)) = feed(Expect::Response, &err) else { panic!() };
        assert_eq!((error.code, error.sql_state_str()), (1146, Some("42S02")));
        let mut calls = exchange(1 << 20);
        call(&mut calls, b"\x01\x00\x00\x00\x0e", Expect::Response);
        calls.on_input(&err).unwrap();
        assert!(calls.take_answer().unwrap().is_err());
        assert!(!calls.in_call());
        let mut ok = Vec::new();
        OkPacket::default().encode(0x00, CAPS, 1, &mut ok);
        call(&mut calls, b"\x01\x00\x00\x00\x0e", Expect::Response);
        calls.on_input(&ok).unwrap();
        assert!(calls.take_answer().unwrap().is_ok());
    }

    #[test]
    fn a_prepare_gives_the_statement() {
        let statement = PreparedStatement {
            ok: PrepareOk { statement_id: 7, num_columns: 1, num_params: 2, warnings: 0 },
            params: vec![ColumnDefinition::new(b"?", ColumnType::LongLong).into_owned(); 2],
            columns: vec![ColumnDefinition::new(b"c", ColumnType::VarString).into_owned()],
        };
        let mut answer = Vec::new();
        statement.encode_response(CAPS, &mut answer);
        let Ok(CallAnswer::Prepared(prepared)) = feed(Expect::Prepared, &answer) else { panic!() };
        assert_eq!((prepared.statement_id(), prepared.params.len(), prepared.columns.len()), (7, 2, 1));
    }

    /// An execution is walked without decoding; with `keep_rows` its
    /// packets are kept and decode to its rows later.
    #[test]
    fn an_execution_is_walked_and_its_rows_kept_when_asked() {
        let cols = [ColumnDefinition::new(b"c", ColumnType::VarString)];
        let mut answer = Vec::new();
        let mut seq = resultset::encode_metadata(&cols, true, StatusFlags::AUTOCOMMIT, CAPS, 1, &mut answer);
        for value in [&b"first"[..], b"second"] {
            seq = encode_binary_row(&[Value::Bytes(value)], &cols, seq, &mut answer).unwrap();
        }
        resultset::encode_result_end(StatusFlags::AUTOCOMMIT, 0, CAPS, seq, &mut answer);
        for keep_rows in [false, true] {
            let Ok(CallAnswer::Walked(outcome)) = feed(Expect::Walk { keep_rows }, &answer) else { panic!() };
            assert_eq!((outcome.result_sets, outcome.rows), (1, 2));
            let mut calls = exchange(1 << 20);
            call(&mut calls, b"\x01\x00\x00\x00\x0e", Expect::Walk { keep_rows });
            calls.on_input(&answer).unwrap();
            assert_eq!(calls.kept().is_empty(), !keep_rows);
            if keep_rows {
                let columns = cols.iter().map(|c| c.clone().into_owned()).collect();
                let response = calls.decode_kept(columns).unwrap();
                let rows = response.result_sets().next().unwrap().text_rows().unwrap();
                assert_eq!(rows, vec![vec![Some(b"first".to_vec())], vec![Some(b"second".to_vec())]]);
            }
        }
    }

    /// An answer larger than the bound fails, naming the bound and the
    /// option that raises it; rows that never end are cut off there.
    #[test]
    fn an_answer_past_the_bound_fails_and_says_what_raises_it() {
        let row: &[Option<&[u8]>] = &[Some(&[b'x'; 1000]), Some(b"1")];
        let answer = text_result(&vec![row; 100]);
        let mut calls = exchange(10_000);
        call(&mut calls, b"\x01\x00\x00\x00\x0e", Expect::Response);
        let error = calls.on_input(&answer).unwrap_err();
        assert!(matches!(error, CallError::ResultTooLarge { limit: 10_000 }), "{error}");
        assert!(error.to_string().contains("--lua-result-limit"), "{error}");
        assert!(!error.leaves_connection_open());
    }

    /// A request for a local file is refused with an empty packet, and the
    /// server's answer to that ends the call with the refusal.
    #[test]
    fn a_local_file_request_is_refused() {
        let mut calls = exchange(1 << 20);
        call(&mut calls, b"\x01\x00\x00\x00\x0e", Expect::Response);
        let mut packet = Vec::new();
        framing::encode_packet(&mut packet, 1, b"\xfb/etc/passwd");
        assert_eq!(calls.on_input(&packet[..packet.len() - 1]).unwrap(), 0, "not whole yet");
        assert_eq!(calls.on_input(&packet).unwrap(), packet.len());
        assert!(calls.take_answer().is_none());
        let mut out = Vec::new();
        assert!(calls.has_pending());
        calls.fill(&mut out);
        assert_eq!(out, [0x00, 0x00, 0x00, 0x02], "an empty packet ends the transfer");
        let mut err = Vec::new();
        ErrPacket { code: 1148, sql_state: Some(*b"42000"), message: b"refused" }.encode(3, &mut err);
        calls.on_input(&err).unwrap();
        let Some(Err(CallError::LocalFileRefused(file))) = calls.take_answer() else { panic!() };
        assert_eq!(file, "/etc/passwd");
    }

    #[test]
    fn bytes_nobody_asked_for_break_the_connection() {
        let mut calls = exchange(1 << 20);
        let mut ok = Vec::new();
        OkPacket::default().encode(0x00, CAPS, 1, &mut ok);
        assert!(matches!(calls.on_input(&ok), Err(CallError::Protocol(_))));
    }

    #[test]
    fn an_answer_out_of_sequence_is_followed_and_counted() {
        use wirebench_protocol::tolerance::Deviation;
        let before = crate::client::tolerance::tally().get(Deviation::SequenceRenumbered);
        let mut calls = exchange(1 << 20);
        call(&mut calls, b"\x01\x00\x00\x00\x0e", Expect::Response);
        let mut ok = Vec::new();
        OkPacket::default().encode(0x00, CAPS, 5, &mut ok);
        assert_eq!(calls.on_input(&ok).unwrap(), ok.len());
        assert!(matches!(calls.take_answer(), Some(Ok(_))));
        assert!(crate::client::tolerance::tally().get(Deviation::SequenceRenumbered) > before);
    }

    /// A call with no answer (COM_STMT_CLOSE) ends once sent; a second
    /// call before the first's answer is refused.
    #[test]
    fn a_close_ends_at_once_and_calls_do_not_overlap() {
        let mut calls = exchange(1 << 20);
        let mut close = Vec::new();
        command::encode_stmt_close(&mut close, 7);
        let out = call(&mut calls, &close, Expect::Nothing);
        assert_eq!(out, close);
        assert!(matches!(calls.take_answer(), Some(Ok(CallAnswer::Sent))));
        call(&mut calls, b"\x01\x00\x00\x00\x0e", Expect::Response);
        assert!(matches!(calls.start(b"\x01\x00\x00\x00\x0e", Expect::Response), Err(CallError::Busy)));
    }
}
