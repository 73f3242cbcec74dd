//! One connection's state machine for a caller that makes one call at a
//! time and wants its answer: a Lua script's `con:query()`,
//! `stmt:execute()`, `con:prepare()`. Where a built-in test's [`Session`]
//! keeps a pipeline full and only counts what comes back, a call session
//! holds one command until the loop sends it and keeps its answer, within
//! a bound, for the caller to read. Like [`Session`] it never sees a
//! socket: the loop's backend moves the bytes, the connection's transport
//! (TLS, compression) sits between, and the loop hands the answer to the
//! task that made the call.
//!
//! [`Session`]: super::Session

use wirebench_protocol::framing;
use wirebench_protocol::response::{
    Column, Outcome, PrepareOutcome, PrepareResponse, PreparedStatement, Response, ResponseReader, ResultSetDecoder,
    RowFormat, ServerError,
};
use wirebench_protocol::{Capabilities, CodecError, ProtocolError};

use super::Lost;

/// What the caller wants of a call's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// A query's results decoded in full, rows as text.
    Response,
    /// An execution's answer walked without decoding; its packets kept
    /// for [`CallSession::decode_kept`] when `keep_rows` (a statement
    /// with columns, whose rows a script may fetch).
    Walk { keep_rows: bool },
    /// A COM_STMT_PREPARE's answer: the statement.
    Prepared,
    /// No answer comes (COM_STMT_CLOSE): the call ends once it is sent.
    Nothing,
}

/// A call's answer.
#[derive(Debug)]
pub enum CallAnswer {
    /// A query's results, decoded in full.
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
            // CR_SERVER_LOST: libmysqlclient's word for an answer it cannot read.
            _ => super::CR_SERVER_LOST,
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
    Response { decoder: ResultSetDecoder, seq: u8 },
    Prepare { decoder: PrepareResponse, seq: u8 },
    Walk { reader: ResponseReader, keep: bool },
    /// The server asked for a local file: the empty packet that refuses it
    /// is out, its reply ends the exchange with the refusal.
    Refusal { file: String, seq: u8 },
}

/// A connection's call, from the command the caller wrote to its answer.
#[derive(Debug)]
pub struct CallSession {
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

impl CallSession {
    pub fn new(caps: Capabilities, max_packet: usize, limit: usize) -> Self {
        CallSession {
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

    /// What was negotiated at login.
    pub fn capabilities(&self) -> Capabilities {
        self.caps
    }

    /// Whether a call is under way: written, sent or awaiting its answer.
    pub fn in_call(&self) -> bool {
        self.pending_expect.is_some() || !matches!(self.awaiting, Awaiting::Nothing) || self.answer.is_some()
    }

    /// Whether bytes are waiting for the loop to send them.
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
        if matches!(expect, Expect::Walk { .. }) {
            self.kept.clear();
        }
        Ok(())
    }

    /// Queues packets that have no answer (COM_STMT_CLOSE): they go out
    /// with the next command.
    pub fn queue_unanswered(&mut self, packets: &[u8]) {
        self.pending.extend_from_slice(packets);
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
            Expect::Response => {
                Awaiting::Response { decoder: ResultSetDecoder::new(self.caps, RowFormat::Text), seq: answer_seq }
            }
            Expect::Prepared => Awaiting::Prepare { decoder: PrepareResponse::new(self.caps), seq: answer_seq },
            Expect::Walk { keep_rows } => {
                Awaiting::Walk { reader: ResponseReader::new(self.caps, RowFormat::Binary), keep: keep_rows }
            }
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
                    let unsolicited = ProtocolError::UnexpectedMessage { state: "no command was outstanding", got: "a packet" };
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
    pub fn decode_kept(&self, columns: Vec<Column>) -> Result<Response, CallError> {
        decode_walked(&self.kept, self.caps, self.max_packet, columns)
    }

    /// The kept packets of the last walked answer (see [`Expect::Walk`]).
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
        let progress = reader.advance(input)?;
        let keep = *keep;
        let consumed = progress.consumed;
        if keep {
            self.take_bytes(consumed)?;
            self.kept.extend_from_slice(input.get(..consumed).unwrap_or_default());
        }
        if let Some(outcome) = progress.done {
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
        let Some(frame) = framing::decode_packet(input, seq, self.max_packet).map_err(CodecError::from)? else {
            return Ok(0);
        };
        let (consumed, next_seq) = (frame.consumed, frame.next_seq);
        self.take_bytes(consumed)?;
        match self.awaiting.feed(&frame.payload, next_seq) {
            PacketFed::More => {}
            PacketFed::Answer(answer) => self.answer = Some(Ok(answer)),
            PacketFed::Failed(error) => self.answer = Some(Err(error)),
            PacketFed::Broken(error) => return Err(CallError::Protocol(error)),
            PacketFed::AsksForFile(file) => self.refuse_file(file, next_seq),
        }
        Ok(consumed)
    }

    /// wirebench sends no files: an empty packet ends the transfer, and
    /// the server's reply to it ends the exchange.
    fn refuse_file(&mut self, file: String, seq: u8) {
        let next = framing::encode_packet(&mut self.pending, seq, &[]);
        self.awaiting = Awaiting::Refusal { file, seq: next };
    }
}

/// A walked answer's kept packets (from sequence id 1), decoded in full.
pub fn decode_walked(kept: &[u8], caps: Capabilities, max_packet: usize, columns: Vec<Column>) -> Result<Response, CallError> {
    let mut decoder = ResultSetDecoder::with_cached_columns(caps, RowFormat::Binary, columns);
    let (mut at, mut seq) = (0, 1);
    loop {
        let rest = kept.get(at..).unwrap_or_default();
        let Some(frame) = framing::decode_packet(rest, seq, max_packet).map_err(CodecError::from)? else {
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
            Awaiting::Response { seq, .. } | Awaiting::Prepare { seq, .. } | Awaiting::Refusal { seq, .. } => {
                Some(*seq)
            }
        }
    }

    /// One whole packet, `next_seq` the sequence id the one after it carries.
    fn feed(&mut self, payload: &[u8], next_seq: u8) -> PacketFed {
        let fed = match self {
            Awaiting::Nothing | Awaiting::Walk { .. } => return PacketFed::More,
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
    AsksForFile(String),
}
