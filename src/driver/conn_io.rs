//! One connection's work above its socket, the same under both backends:
//! the commands its [`Session`] writes pass through the transport into the
//! backend's send buffer, the bytes the backend received pass through it
//! into the session, and a lost connection is either fatal or opened again
//! with its [`Redial`]. A backend only moves bytes between the socket and
//! its two buffers, by its own rules (tokio streams; ring operations whose
//! buffers must stay put while in flight).
//!
//! With a plain transport, the usual case, the session writes straight
//! into the backend's send buffer and walks its receive buffer in place:
//! no second buffer, no copy.

use std::io;

use bytes::BytesMut;
use wirebench_protocol::command;
use wirebench_protocol::Capabilities;

use super::{Budget, ConnPlan, DriverError, IgnoreErrors, LoopContext, Lost, Redial, Reopened, Session, StdSocket};
use crate::client::{Endpoint, Stream};
use crate::stats::LoopStats;
use crate::transport::{Transport, TransportError};

/// A connection's session, what sits between it and the socket, and how
/// to open it again.
pub(super) struct ConnIo {
    endpoint: Endpoint,
    session: Session,
    /// When it is not plain, the backend's buffers hold wire bytes and the
    /// packet stream passes through `plain_in` and `plain_out`.
    transport: Transport,
    /// Decoded responses not yet walked.
    plain_in: Vec<u8>,
    /// Commands on their way to the transport.
    plain_out: Vec<u8>,
    redial: Redial,
}

impl ConnIo {
    /// Splits a plan into what this layer keeps and what the backend takes:
    /// the socket, and the bytes already read from it.
    pub(super) fn from_plan(plan: ConnPlan) -> (Self, StdSocket, BytesMut) {
        let ConnPlan { endpoint, socket, leftover, session, transport, redial } = plan;
        let io = ConnIo { endpoint, session, transport, plain_in: Vec::new(), plain_out: Vec::new(), redial };
        (io, socket, leftover)
    }

    pub(super) fn session(&self) -> &Session {
        &self.session
    }

    /// Lets the session append its next commands, in wire form, to `wire_out`.
    // Inlined into each backend's caller, which then calls the session
    // itself, as it did when each backend had its own copy of this.
    #[inline(always)]
    pub(super) fn fill(&mut self, wire_out: &mut Vec<u8>, now_ns: u64, budget: &mut Budget) -> Result<(), DriverError> {
        if self.transport.is_plain() {
            self.session.fill(wire_out, now_ns, budget).map_err(|e| self.session_error(e))?;
            return Ok(());
        }
        self.session.fill(&mut self.plain_out, now_ns, budget).map_err(|e| self.session_error(e))?;
        let encoded = self.transport.encode(&self.plain_out, wire_out);
        self.plain_out.clear();
        encoded.map_err(|e| self.transport_error(e))
    }

    /// Appends COM_QUIT, in wire form, to `wire_out`: a connection whose
    /// work is done says goodbye before it closes, as libmysqlclient's
    /// `mysql_close` does, so the server does not count it as aborted.
    pub(super) fn write_quit(&mut self, wire_out: &mut Vec<u8>) -> Result<(), DriverError> {
        if self.transport.is_plain() {
            command::encode_quit(wire_out);
            return Ok(());
        }
        command::encode_quit(&mut self.plain_out);
        let encoded = self.transport.encode(&self.plain_out, wire_out);
        self.plain_out.clear();
        encoded.map_err(|e| self.transport_error(e))
    }

    /// Hands the session the responses in `wire_in`, the bytes received and
    /// not yet consumed. Returns how many of them are consumed; the rest
    /// (a partial packet) must be passed again with what comes next.
    #[inline(always)]
    pub(super) fn on_input(
        &mut self,
        wire_in: &[u8],
        now_ns: u64,
        stats: &mut LoopStats,
        ignore: &IgnoreErrors,
    ) -> Result<usize, DriverError> {
        if self.transport.is_plain() {
            return self.session.on_input(wire_in, now_ns, stats, ignore).map_err(|e| self.session_error(e));
        }
        let decoded = self.transport.decode(wire_in, &mut self.plain_in).map_err(|e| self.transport_error(e))?;
        let used = self.session.on_input(&self.plain_in, now_ns, stats, ignore).map_err(|e| self.session_error(e))?;
        self.plain_in.drain(..used);
        Ok(decoded)
    }

    /// The connection was lost: fatal unless `--mysql-ignore-errors` lists
    /// its code, else counted as a reconnect; the backend then opens it
    /// again with [`reopen`](Self::reopen) or
    /// [`reopen_blocking`](Self::reopen_blocking), once it no longer uses
    /// the old socket.
    pub(super) fn lost(&self, lost: Lost, ignore: &IgnoreErrors, stats: &mut LoopStats) -> Result<(), DriverError> {
        if !ignore.ignores(lost.code()) {
            return Err(DriverError::Lost { endpoint: self.endpoint.clone(), lost });
        }
        stats.record_reconnect();
        Ok(())
    }

    /// Opens the lost connection again, from within the loop's runtime,
    /// retrying until it works; the session starts its event over on it.
    /// The new stream and the bytes already read from it, or `None` when
    /// the run ended first.
    pub(super) async fn reopen(&mut self, context: &LoopContext) -> Option<(Stream, BytesMut)> {
        let (conn, statement_ids) = self.redial.reopen(|| context.run_over()).await?;
        let (stream, leftover, login, transport) = conn.into_parts();
        self.restart(login.capabilities, transport, &statement_ids);
        Some((stream, leftover))
    }

    /// [`reopen`](Self::reopen) for a loop without a runtime: blocks the
    /// loop's thread, and so its other connections, until the connection
    /// is back (see [`Redial::reopen_blocking`]).
    pub(super) fn reopen_blocking(&mut self, context: &LoopContext) -> io::Result<Option<(StdSocket, BytesMut)>> {
        let Some(reopened) = self.redial.reopen_blocking(|| context.run_over())? else { return Ok(None) };
        let Reopened { socket, leftover, capabilities, transport, statement_ids } = reopened;
        self.restart(capabilities, transport, &statement_ids);
        Ok(Some((socket, leftover)))
    }

    /// On a connection opened again: its new transport; the commands in
    /// flight are gone, and so are their bytes.
    fn restart(&mut self, capabilities: Capabilities, transport: Transport, statement_ids: &[u32]) {
        self.transport = transport;
        self.plain_in.clear();
        self.plain_out.clear();
        self.session.reconnected(capabilities, statement_ids);
    }

    pub(super) fn io_error(&self, source: io::Error) -> DriverError {
        DriverError::Io { endpoint: self.endpoint.clone(), source }
    }

    fn session_error(&self, source: super::SessionError) -> DriverError {
        DriverError::Session { endpoint: self.endpoint.clone(), source }
    }

    fn transport_error(&self, source: TransportError) -> DriverError {
        DriverError::Transport { endpoint: self.endpoint.clone(), source }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use wirebench_protocol::compress::{encode_chunk, CompressedStream, Deflater, Inflater};
    use wirebench_protocol::response::OkPacket;

    use super::*;
    use crate::client::ConnectOptions;
    use crate::driver::testing::SelectOne;
    use crate::driver::RunControl;
    use crate::rand::{RandConfig, RandParams, Rng};

    const CAPS: Capabilities = Capabilities::PROTOCOL_41.union(Capabilities::DEPRECATE_EOF);
    const SELECT_1: &[u8] = b"\x09\x00\x00\x00\x03SELECT 1";

    fn conn_io(transport: Transport) -> ConnIo {
        let rng = Rng::for_thread(1, 0, RandParams::new(&RandConfig::default()).unwrap());
        let (socket, _) = std::os::unix::net::UnixStream::pair().unwrap();
        let endpoint = Endpoint::unix("fake");
        let plan = ConnPlan {
            endpoint: endpoint.clone(),
            socket: StdSocket::Unix(socket),
            leftover: BytesMut::new(),
            session: Session::new(0, Box::new(SelectOne), rng, Vec::new(), CAPS, 1),
            transport,
            redial: Redial {
                options: ConnectOptions::new(endpoint, "u", "p"),
                statements: Arc::new(Vec::new()),
                prepare: false,
                init: &[],
            },
        };
        ConnIo::from_plan(plan).0
    }

    fn ok_packet() -> Vec<u8> {
        let mut ok = Vec::new();
        OkPacket::default().encode(0x00, CAPS, 1, &mut ok);
        ok
    }

    /// A plain connection's commands and answers are the wire bytes: the
    /// session writes and walks the backend's buffers, no copy between.
    #[test]
    fn plain_bytes_pass_through_untouched() {
        let mut io = conn_io(Transport::plain());
        let mut budget = Budget::new(RunControl::new(None, 1), None);
        let mut stats = LoopStats::new(1);
        let ignore = IgnoreErrors::default();
        let mut wire = Vec::new();
        io.fill(&mut wire, 0, &mut budget).unwrap();
        assert_eq!(wire, SELECT_1);
        let ok = ok_packet();
        assert_eq!(io.on_input(&ok[..ok.len() - 1], 1, &mut stats, &ignore).unwrap(), 0, "a partial packet waits");
        assert_eq!(io.on_input(&ok, 1, &mut stats, &ignore).unwrap(), ok.len());
        assert_eq!(stats.pending().counters.events, 1);
        assert_eq!((io.plain_in.capacity(), io.plain_out.capacity()), (0, 0), "the second buffers are never used");
    }

    /// With compression, commands are encoded on their way out and answers
    /// decoded on their way in; the wire bytes consumed are reported.
    #[test]
    fn compressed_bytes_pass_through_the_transport() {
        let mut io = conn_io(Transport::compressed());
        let mut budget = Budget::new(RunControl::new(None, 1), None);
        let mut stats = LoopStats::new(1);
        let ignore = IgnoreErrors::default();
        let mut wire = Vec::new();
        io.fill(&mut wire, 0, &mut budget).unwrap();
        let mut commands = Vec::new();
        let used = CompressedStream::new().decode(&wire, &mut commands, &mut Inflater::new()).unwrap();
        assert_eq!((used, &commands[..]), (wire.len(), SELECT_1));
        let mut answer = Vec::new();
        encode_chunk(&ok_packet(), 1, &mut answer, &mut Deflater::new());
        assert_eq!(io.on_input(&answer, 1, &mut stats, &ignore).unwrap(), answer.len());
        assert_eq!(stats.pending().counters.events, 1);
        assert!(io.plain_in.is_empty() && io.plain_out.is_empty());
    }

    /// A connection opened again drops what the old one left half-decoded,
    /// and takes the new transport.
    #[test]
    fn a_restart_forgets_the_old_connections_bytes() {
        let mut io = conn_io(Transport::compressed());
        let mut budget = Budget::new(RunControl::new(None, 1), None);
        let mut stats = LoopStats::new(1);
        let ignore = IgnoreErrors::default();
        let mut wire = Vec::new();
        io.fill(&mut wire, 0, &mut budget).unwrap();
        let ok = ok_packet();
        let mut answer = Vec::new();
        encode_chunk(&ok[..ok.len() - 1], 1, &mut answer, &mut Deflater::new());
        assert_eq!(io.on_input(&answer, 1, &mut stats, &ignore).unwrap(), answer.len());
        assert_eq!((io.plain_in.len(), io.session().in_flight()), (ok.len() - 1, 1));
        io.restart(CAPS, Transport::plain(), &[]);
        assert_eq!((io.plain_in.len(), io.session().in_flight()), (0, 0));
        wire.clear();
        io.fill(&mut wire, 2, &mut budget).unwrap();
        assert_eq!(wire, SELECT_1, "the event starts over, on a plain transport");
    }

    /// COM_QUIT goes out as its five bytes, or through the transport.
    #[test]
    fn write_quit_is_com_quit_through_the_transport() {
        let mut wire = Vec::new();
        conn_io(Transport::plain()).write_quit(&mut wire).unwrap();
        assert_eq!(wire, [0x01, 0x00, 0x00, 0x00, 0x01]);
        let mut io = conn_io(Transport::compressed());
        wire.clear();
        io.write_quit(&mut wire).unwrap();
        let mut commands = Vec::new();
        CompressedStream::new().decode(&wire, &mut commands, &mut Inflater::new()).unwrap();
        assert_eq!(commands, [0x01, 0x00, 0x00, 0x00, 0x01]);
        assert!(io.plain_out.is_empty());
    }

    /// A lost connection is fatal unless its code is ignored; then it
    /// counts as a reconnect.
    #[test]
    fn a_lost_connection_is_fatal_unless_ignored() {
        let io = conn_io(Transport::plain());
        let mut stats = LoopStats::new(1);
        let error = io.lost(Lost::Closed, &IgnoreErrors::List(vec![2006]), &mut stats).unwrap_err();
        assert!(matches!(error, DriverError::Lost { lost: Lost::Closed, .. }), "{error}");
        assert!(error.to_string().contains("list 2013 in --mysql-ignore-errors"), "{error}");
        io.lost(Lost::Closed, &IgnoreErrors::List(vec![2013]), &mut stats).unwrap();
        io.lost(Lost::Write(io::ErrorKind::BrokenPipe.into()), &IgnoreErrors::All, &mut stats).unwrap();
        assert_eq!(stats.pending().counters.reconnects, 2);
    }
}
