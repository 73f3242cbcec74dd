//! A logged-in connection driven without async: its socket non-blocking,
//! one command at a time, its answer decoded as bytes come in. The caller
//! decides when to look: an event loop that owns many such connections
//! calls [`PolledConnection::progress`] when epoll says the socket is
//! ready; a thread with nothing else to do [`waits`](PolledConnection::wait)
//! on it with poll(2). No future, no runtime, nothing boxed per command:
//! the Lua path uses it so that a script's SQL call costs what the wire
//! costs.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::time::Instant;

use wirebench_protocol::command::{self, Param};
use wirebench_protocol::framing;
use wirebench_protocol::response::{
    Column, Outcome, PrepareOutcome, PrepareResponse, PreparedStatement, Response, ResponseReader, ResultSetDecoder,
    RowFormat,
};
use wirebench_protocol::{Capabilities, CodecError, ProtocolError};

use super::{ClientError, Connection, Endpoint, Result, Stream};
use crate::transport::Transport;

/// A socket taken out of tokio, non-blocking.
#[derive(Debug)]
enum PolledSocket {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl PolledSocket {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            PolledSocket::Tcp(s) => s.read(buf),
            PolledSocket::Unix(s) => s.read(buf),
        }
    }

    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            PolledSocket::Tcp(s) => s.write(buf),
            PolledSocket::Unix(s) => s.write(buf),
        }
    }

    fn fd(&self) -> RawFd {
        match self {
            PolledSocket::Tcp(s) => s.as_raw_fd(),
            PolledSocket::Unix(s) => s.as_raw_fd(),
        }
    }
}

/// Bytes received and not yet consumed: `data[start..end]`, read into
/// `data[end..]` without zeroing it again each time.
#[derive(Debug, Default)]
struct InBuf {
    data: Vec<u8>,
    start: usize,
    end: usize,
}

/// What one read asks room for.
const READ_ROOM: usize = 16 * 1024;

impl InBuf {
    fn bytes(&self) -> &[u8] {
        self.data.get(self.start..self.end).unwrap_or_default()
    }

    fn consume(&mut self, n: usize) {
        self.start = (self.start + n).min(self.end);
        if self.start == self.end {
            (self.start, self.end) = (0, 0);
        }
    }

    /// Room for one read at the end, moving what is unconsumed to the front first.
    fn room(&mut self) -> &mut [u8] {
        if self.data.len() - self.end < READ_ROOM {
            self.data.copy_within(self.start..self.end, 0);
            (self.start, self.end) = (0, self.end - self.start);
            if self.data.len() - self.end < READ_ROOM {
                self.data.resize(self.end + READ_ROOM.max(self.end), 0);
            }
        }
        &mut self.data[self.end..]
    }

    fn filled(&mut self, n: usize) {
        self.end += n;
    }

    fn append(&mut self, bytes: &[u8]) {
        self.room();
        if self.data.len() - self.end < bytes.len() {
            self.data.resize(self.end + bytes.len(), 0);
        }
        self.data[self.end..self.end + bytes.len()].copy_from_slice(bytes);
        self.end += bytes.len();
    }
}

/// What the connection waits for.
#[derive(Debug)]
enum Awaiting {
    Nothing,
    Response {
        decoder: ResultSetDecoder,
        seq: u8,
    },
    Prepare {
        decoder: PrepareResponse,
        seq: u8,
    },
    /// Walked without decoding (allocation-free), its bytes kept when
    /// `keep` for a later [`PolledConnection::kept_response`].
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

/// The answer to one command.
#[derive(Debug)]
pub enum PolledAnswer {
    /// A query's or an execution's results, decoded in full.
    Response(Response),
    /// A statement COM_STMT_PREPARE made.
    Prepared(PreparedStatement),
    /// What a walked response amounted to.
    Walked(Outcome),
}

/// A logged-in connection whose socket the caller polls.
#[derive(Debug)]
pub struct PolledConnection {
    socket: PolledSocket,
    endpoint: Endpoint,
    capabilities: Capabilities,
    transport: Transport,
    max_packet: usize,
    /// The packet stream received (decoded, when the transport is not plain).
    plain_in: InBuf,
    /// Wire bytes received and not yet decoded (transport not plain).
    wire_in: InBuf,
    /// Commands not yet encoded for the transport (not plain).
    plain_out: Vec<u8>,
    /// Bytes to write, and how many of them are written.
    wire_out: Vec<u8>,
    written: usize,
    awaiting: Awaiting,
    scratch: Vec<u8>,
    /// The packets of the last walked response kept.
    kept: Vec<u8>,
}

impl PolledConnection {
    /// Takes over a connection the async client opened and logged in.
    pub fn from_connection(connection: Connection<Stream>, max_packet: usize) -> Result<Self> {
        let endpoint = connection.endpoint().clone();
        let (stream, leftover, login, transport) = connection.into_parts();
        let io_error = |source| ClientError::Io { endpoint: endpoint.clone(), source };
        let socket = match stream {
            Stream::Tcp(s) => PolledSocket::Tcp(s.into_std().map_err(io_error)?),
            Stream::Unix(s) => PolledSocket::Unix(s.into_std().map_err(io_error)?),
        };
        let mut connection = PolledConnection {
            socket,
            endpoint,
            capabilities: login.capabilities,
            transport,
            max_packet,
            plain_in: InBuf::default(),
            wire_in: InBuf::default(),
            plain_out: Vec::new(),
            wire_out: Vec::with_capacity(1024),
            written: 0,
            awaiting: Awaiting::Nothing,
            scratch: Vec::new(),
            kept: Vec::new(),
        };
        if connection.transport.is_plain() {
            connection.plain_in.append(&leftover);
        } else {
            connection.wire_in.append(&leftover);
        }
        Ok(connection)
    }

    /// The socket, for epoll or poll(2).
    pub fn fd(&self) -> RawFd {
        self.socket.fd()
    }

    /// Whether a command's answer is still to come.
    fn is_waiting(&self) -> bool {
        !matches!(self.awaiting, Awaiting::Nothing)
    }

    /// Whether bytes wait to be written (the socket's buffer was full).
    pub fn wants_write(&self) -> bool {
        self.written < self.wire_out.len()
    }

    /// COM_QUERY; its results come back decoded in full (text rows).
    pub fn send_query(&mut self, sql: &[u8]) -> Result<()> {
        self.check_idle()?;
        let seq = command::encode_query(self.out(), sql);
        let decoder = ResultSetDecoder::new(self.capabilities, RowFormat::Text);
        self.sent(|seq| Awaiting::Response { decoder, seq }, seq)
    }

    /// COM_STMT_EXECUTE of statement `statement_id` with `params`, its
    /// answer walked without decoding; with `keep_rows`, its packets are
    /// kept for [`kept_response`](Self::kept_response).
    pub fn send_execute_walked(&mut self, statement_id: u32, params: &[Param<'_>], keep_rows: bool) -> Result<()> {
        self.check_idle()?;
        let start = self.out().len();
        let seq = command::encode_execute(self.out(), statement_id, params);
        self.walk_answer(start, seq, keep_rows)
    }

    /// A COM_STMT_EXECUTE encoded beforehand (an `ExecuteTemplate`'s
    /// packet, sequence id 0), its answer walked as by
    /// [`send_execute_walked`](Self::send_execute_walked).
    pub fn send_encoded_execute(&mut self, packet: &[u8], keep_rows: bool) -> Result<()> {
        self.check_idle()?;
        let start = self.out().len();
        self.out().extend_from_slice(packet);
        self.walk_answer(start, 1, keep_rows)
    }

    /// The execution just encoded (from `start` in the buffer) goes out
    /// and its answer, due at `seq`, is to be walked.
    fn walk_answer(&mut self, start: usize, seq: u8, keep_rows: bool) -> Result<()> {
        if seq != 1 {
            self.out().truncate(start);
            // The walker expects the answer at sequence id 1; a command of
            // 16 MiB or more shifts it.
            let message = "a statement execution of 16 MiB or more cannot be walked";
            return Err(ClientError::Usage { endpoint: self.endpoint.clone(), message: message.to_owned() });
        }
        self.kept.clear();
        let reader = ResponseReader::new(self.capabilities, RowFormat::Binary);
        self.sent(|_| Awaiting::Walk { reader, keep: keep_rows }, seq)
    }

    /// The last walked response whose packets were kept, decoded in full,
    /// its rows described by `columns` (a prepared statement's).
    pub fn kept_response(&self, columns: Vec<Column>) -> Result<Response> {
        let mut decoder = ResultSetDecoder::with_cached_columns(self.capabilities, RowFormat::Binary, columns);
        let (mut at, mut seq) = (0, 1);
        loop {
            let rest = self.kept.get(at..).unwrap_or_default();
            let frame = framing::decode_packet(rest, seq, self.max_packet);
            let frame = frame.map_err(|source| ClientError::Protocol { endpoint: self.endpoint.clone(), source })?;
            let Some(frame) = frame else {
                let message = "the kept response ends before its last packet";
                return Err(ClientError::Usage { endpoint: self.endpoint.clone(), message: message.to_owned() });
            };
            (at, seq) = (at + frame.consumed, frame.next_seq);
            let fed = decoder.feed(&frame.payload).map_err(|e| ClientError::from_codec(self.endpoint.clone(), e))?;
            if let Some(response) = fed {
                return Ok(response);
            }
        }
    }

    /// COM_STMT_PREPARE.
    pub fn send_prepare(&mut self, sql: &[u8]) -> Result<()> {
        self.check_idle()?;
        let seq = command::encode_prepare(self.out(), sql);
        let decoder = PrepareResponse::new(self.capabilities);
        self.sent(|seq| Awaiting::Prepare { decoder, seq }, seq)
    }

    /// COM_STMT_CLOSE, which has no answer: it goes out with the next
    /// command, or with [`quit`](Self::quit).
    pub fn send_close_statement(&mut self, statement_id: u32) -> Result<()> {
        self.check_idle()?;
        command::encode_stmt_close(self.out(), statement_id);
        self.encode_out()
    }

    /// Where a command is encoded: straight into the bytes to write when
    /// the transport is plain.
    fn out(&mut self) -> &mut Vec<u8> {
        if self.transport.is_plain() {
            &mut self.wire_out
        } else {
            &mut self.plain_out
        }
    }

    fn check_idle(&self) -> Result<()> {
        if self.is_waiting() {
            let message = "a command was sent before the previous one's answer was read";
            return Err(ClientError::Usage { endpoint: self.endpoint.clone(), message: message.to_owned() });
        }
        Ok(())
    }

    /// The command is encoded: through the transport, then written as far
    /// as the socket takes it. The answer's sequence id is known only once
    /// the transport has encoded it (compression numbers the answer after
    /// its own packets).
    fn sent(&mut self, awaiting: impl FnOnce(u8) -> Awaiting, seq: u8) -> Result<()> {
        self.encode_out()?;
        let seq = self.transport.answer_seq().unwrap_or(seq);
        self.awaiting = awaiting(seq);
        self.write_out()
    }

    fn encode_out(&mut self) -> Result<()> {
        if self.transport.is_plain() {
            return Ok(());
        }
        let encoded = self.transport.encode(&self.plain_out, &mut self.wire_out);
        self.plain_out.clear();
        encoded.map_err(|source| ClientError::Transport { endpoint: self.endpoint.clone(), source })
    }

    /// Writes until everything is out or the socket's buffer is full.
    fn write_out(&mut self) -> Result<()> {
        while self.written < self.wire_out.len() {
            match self.socket.write(&self.wire_out[self.written..]) {
                Ok(0) => return Err(self.closed()),
                Ok(n) => self.written += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(source) => return Err(ClientError::Io { endpoint: self.endpoint.clone(), source }),
            }
        }
        self.wire_out.clear();
        self.written = 0;
        Ok(())
    }

    /// Writes what is pending, reads what has come, and decodes: the
    /// answer once it is whole, `None` while it is not.
    pub fn progress(&mut self) -> Result<Option<PolledAnswer>> {
        self.write_out()?;
        loop {
            if let Some(answer) = self.decode()? {
                return Ok(Some(answer));
            }
            if !self.read_some()? {
                return Ok(None);
            }
        }
    }

    /// One read from the socket; false when it has nothing now.
    fn read_some(&mut self) -> Result<bool> {
        let plain = self.transport.is_plain();
        let buf = if plain { &mut self.plain_in } else { &mut self.wire_in };
        let read = loop {
            match self.socket.read(buf.room()) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                other => break other,
            }
        };
        match read {
            Ok(0) => Err(self.closed()),
            Ok(n) => {
                buf.filled(n);
                if !plain {
                    self.decode_transport()?;
                }
                Ok(true)
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(false),
            Err(source) => Err(ClientError::Io { endpoint: self.endpoint.clone(), source }),
        }
    }

    fn decode_transport(&mut self) -> Result<()> {
        self.scratch.clear();
        let used = self.transport.decode(self.wire_in.bytes(), &mut self.scratch);
        let used = used.map_err(|source| ClientError::Transport { endpoint: self.endpoint.clone(), source })?;
        self.wire_in.consume(used);
        self.plain_in.append(&self.scratch);
        // A TLS session may have something to say back (a key update).
        self.write_out()
    }

    fn closed(&self) -> ClientError {
        ClientError::Closed { endpoint: self.endpoint.clone(), mid_packet: !self.plain_in.bytes().is_empty() }
    }

    /// Walks what was received of a walked response.
    fn walk(&mut self) -> Result<Option<PolledAnswer>> {
        let Awaiting::Walk { reader, keep } = &mut self.awaiting else { return Ok(None) };
        let input = self.plain_in.bytes();
        let progress = reader.advance(input).map_err(|e| ClientError::from_codec(self.endpoint.clone(), e))?;
        if *keep {
            self.kept.extend_from_slice(input.get(..progress.consumed).unwrap_or_default());
        }
        let Some(outcome) = progress.done else {
            self.plain_in.consume(progress.consumed);
            return Ok(None);
        };
        let error = outcome.error.as_ref().map(|e| e.to_server_error(input));
        self.plain_in.consume(progress.consumed);
        self.awaiting = Awaiting::Nothing;
        match error {
            Some(error) => Err(ClientError::Server { endpoint: self.endpoint.clone(), error }),
            None => Ok(Some(PolledAnswer::Walked(outcome))),
        }
    }

    /// Feeds the whole packets received to what waits for them.
    fn decode(&mut self) -> Result<Option<PolledAnswer>> {
        if matches!(self.awaiting, Awaiting::Walk { .. }) {
            return self.walk();
        }
        loop {
            let Some(seq) = self.awaiting.seq() else { return Ok(None) };
            let frame = framing::decode_packet(self.plain_in.bytes(), seq, self.max_packet);
            let frame = frame.map_err(|source| ClientError::Protocol { endpoint: self.endpoint.clone(), source })?;
            let Some(frame) = frame else { return Ok(None) };
            let (consumed, next_seq) = (frame.consumed, frame.next_seq);
            let fed = self.awaiting.feed(&frame.payload, next_seq);
            self.plain_in.consume(consumed);
            match fed {
                PacketFed::More => {}
                PacketFed::Answer(answer) => return Ok(Some(answer)),
                PacketFed::Failed(error) => return Err(self.failed(error)),
                PacketFed::AsksForFile(file) => self.refuse_file(file, next_seq)?,
            }
        }
    }

    /// wirebench never sends files: an empty packet ends the transfer, and
    /// the server's reply to it ends the exchange.
    fn refuse_file(&mut self, file: String, seq: u8) -> Result<()> {
        let seq = framing::encode_packet(self.out(), seq, &[]);
        self.sent(|seq| Awaiting::Refusal { file, seq }, seq)
    }

    fn failed(&self, error: Failed) -> ClientError {
        let endpoint = self.endpoint.clone();
        match error {
            Failed::Server(error) => ClientError::Server { endpoint, error },
            Failed::Codec(error) => ClientError::from_codec(endpoint, error),
            Failed::Refused(file) => {
                ClientError::Protocol { endpoint, source: ProtocolError::LocalInfileRefused(file) }
            }
            Failed::Outcome(outcome) => ClientError::Usage {
                endpoint,
                message: format!("a prepare ended in a way this client cannot handle: {outcome}"),
            },
        }
    }

    /// Waits for the answer, with poll(2) on the socket, until `until`
    /// (never gives up without one).
    pub fn wait(&mut self, until: Option<Instant>) -> Result<Option<PolledAnswer>> {
        loop {
            if let Some(answer) = self.progress()? {
                return Ok(Some(answer));
            }
            let timeout_ms = match until {
                None => -1,
                Some(at) => match at.checked_duration_since(Instant::now()) {
                    None => return Ok(None),
                    Some(left) => left.as_millis().min(i32::MAX as u128) as i32 + 1,
                },
            };
            self.poll_socket(timeout_ms)?;
        }
    }

    fn poll_socket(&self, timeout_ms: i32) -> Result<()> {
        let events = if self.wants_write() { libc::POLLIN | libc::POLLOUT } else { libc::POLLIN };
        let mut fd = libc::pollfd { fd: self.fd(), events, revents: 0 };
        // SAFETY: one valid pollfd for the call.
        let rc = unsafe { libc::poll(&mut fd, 1, timeout_ms) };
        if rc < 0 {
            let source = io::Error::last_os_error();
            if source.kind() != io::ErrorKind::Interrupted {
                return Err(ClientError::Io { endpoint: self.endpoint.clone(), source });
            }
        }
        Ok(())
    }

    /// COM_QUIT, written if the socket takes it now; the socket closes.
    pub fn quit(mut self) {
        if self.is_waiting() {
            return;
        }
        command::encode_quit(self.out());
        if self.encode_out().is_ok() {
            let _ = self.write_out();
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
                    Ok(Some(Response { error: Some(error), .. })) => PacketFed::Failed(Failed::Server(error)),
                    Ok(Some(response)) => PacketFed::Answer(PolledAnswer::Response(response)),
                    Err(CodecError::Protocol(ProtocolError::LocalInfileRefused(file))) => PacketFed::AsksForFile(file),
                    Err(error) => PacketFed::Failed(Failed::Codec(error)),
                }
            }
            Awaiting::Prepare { decoder, seq } => {
                *seq = next_seq;
                match decoder.feed(payload) {
                    Ok(None) => return PacketFed::More,
                    Ok(Some(PrepareOutcome::Prepared(statement))) => {
                        PacketFed::Answer(PolledAnswer::Prepared(statement))
                    }
                    Ok(Some(PrepareOutcome::Error(error))) => PacketFed::Failed(Failed::Server(error)),
                    Ok(Some(other)) => PacketFed::Failed(Failed::Outcome(format!("{other:?}"))),
                    Err(error) => PacketFed::Failed(Failed::Codec(error)),
                }
            }
            Awaiting::Refusal { file, .. } => PacketFed::Failed(Failed::Refused(std::mem::take(file))),
        };
        *self = Awaiting::Nothing;
        fed
    }
}

/// What one packet did to the answer awaited.
enum PacketFed {
    More,
    Answer(PolledAnswer),
    Failed(Failed),
    AsksForFile(String),
}

enum Failed {
    Server(wirebench_protocol::response::ServerError),
    Codec(CodecError),
    Refused(String),
    Outcome(String),
}
