//! The login as a state machine without I/O: bytes from the socket in,
//! bytes for the socket out, and at the end what the login established
//! and the transport the connection goes on with. The async client
//! ([`Connection::handshake`](super::Connection::handshake)) and the
//! engine's event loops (idle connections, on each loop's own readiness)
//! drive this one machine, so a login is the same wherever it runs: the
//! protocol's handshake, TLS from the SSLRequest on, the compressed
//! protocol once logged in, and the database selected with COM_INIT_DB
//! when the server does not take it in the login (as libmariadb does).
//!
//! A caller feeds every byte the socket delivers to [`Login::advance`],
//! sends what it appends to its output, and when the socket reports the
//! end of the stream, ends the login with [`Login::closed`]: bytes the
//! server sent before it closed (an ERR such as 1040, Too many
//! connections, which a server at its `max_connections` sends instead of
//! its greeting) are read first, and are the error.

use bytes::BytesMut;
use wirebench_protocol::auth::rand_core::OsRng;
use wirebench_protocol::command;
use wirebench_protocol::framing;
use wirebench_protocol::handshake::{ClientHandshake, HandshakeStep, LoginInfo};
use wirebench_protocol::response::{ResultSetDecoder, RowFormat};
use wirebench_protocol::{Capabilities, ProtocolError};

use super::tls_login::{self, TlsStart};
use super::{tolerance, ClientError, ConnectOptions, Endpoint};
use crate::transport::tls::{ClientTls, TlsLayer};
use crate::transport::Transport;

/// A login under way: see the module's description.
pub struct Login {
    endpoint: Endpoint,
    machine: ClientHandshake,
    tls: Option<ClientTls>,
    database: Option<String>,
    max_packet: usize,
    stage: LoginState,
    transport: Transport,
    /// Packet-stream bytes received and not yet used.
    plain_in: Vec<u8>,
    /// Packet-stream bytes to send, on their way to the transport.
    plain_out: Vec<u8>,
    /// With a transport that is not plain: wire bytes not yet decoded.
    undecoded: Vec<u8>,
}

/// Where the login stands.
enum LoginState {
    /// The protocol's handshake, in clear or (after the TLS handshake)
    /// through TLS.
    Handshake,
    /// The TLS handshake the SSLRequest started.
    Tls(Box<TlsLayer>),
    /// Logged in; COM_INIT_DB is out and its answer awaited at this
    /// sequence id.
    SelectingDatabase { info: Box<LoginInfo>, seq: u8, decoder: Box<ResultSetDecoder> },
    /// Over: a [`LoggedIn`] was handed out, or the login failed.
    Over,
}

/// What a step of the login came to.
pub enum LoginStep {
    /// Send what was appended to the output, then feed what the server
    /// sends next.
    NeedMore,
    Done(Box<LoggedIn>),
}

/// A connection logged in: what the login established, and what it goes on
/// with.
pub struct LoggedIn {
    pub info: LoginInfo,
    /// Compression, TLS, both or neither.
    pub transport: Transport,
    /// Packet-stream bytes received past the login and not yet used.
    pub decoded: Vec<u8>,
    /// Wire bytes received past the login and not yet decoded (a
    /// transport that is not plain only).
    pub undecoded: BytesMut,
}

impl LoggedIn {
    /// What an event loop takes over: the transport, with the bytes already
    /// decoded carried in it, and the wire bytes read and not yet decoded,
    /// which the loop passes through it first (the same split as
    /// [`Connection::into_parts`](super::Connection::into_parts)).
    pub fn into_wire_parts(self) -> (LoginInfo, Transport, BytesMut) {
        let LoggedIn { info, mut transport, decoded, mut undecoded } = self;
        if transport.is_plain() {
            undecoded.extend_from_slice(&decoded);
            return (info, transport, undecoded);
        }
        transport.carry(&decoded);
        (info, transport, undecoded)
    }
}

impl Login {
    pub fn new(options: &ConnectOptions) -> Login {
        Login {
            endpoint: options.endpoint.clone(),
            machine: ClientHandshake::new(options.handshake_config()),
            tls: options.tls.clone(),
            database: options.database.clone(),
            max_packet: options.max_packet_size as usize,
            stage: LoginState::Handshake,
            transport: Transport::plain(),
            plain_in: Vec::new(),
            plain_out: Vec::new(),
            undecoded: Vec::new(),
        }
    }

    /// Where the login goes.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// Takes the bytes the socket delivered (all of them: what is not used
    /// yet is kept), appends what to send to `wire_out`, and says whether
    /// the login is done. Call it once with no bytes to start: the client
    /// speaks first only when it has been answered, so that call sends
    /// nothing, but it lets a caller treat every step alike.
    pub fn advance(&mut self, wire_in: &[u8], wire_out: &mut Vec<u8>) -> Result<LoginStep, ClientError> {
        let step = self.step(wire_in, wire_out);
        if step.is_err() {
            self.stage = LoginState::Over;
        }
        step
    }

    fn step(&mut self, wire_in: &[u8], wire_out: &mut Vec<u8>) -> Result<LoginStep, ClientError> {
        match &mut self.stage {
            LoginState::Tls(layer) => {
                let Some(tls) = self.tls.as_ref() else {
                    let message = "TLS started without a configuration".to_owned();
                    return Err(ClientError::Usage { endpoint: self.endpoint.clone(), message });
                };
                match tls_login::step(layer, tls, &self.endpoint, wire_in, &mut self.plain_in, wire_out)? {
                    TlsStart::Going => return Ok(LoginStep::NeedMore),
                    TlsStart::Done => self.tls_established(wire_out)?,
                }
            }
            LoginState::Over => return Err(self.usage("the login is over: it takes no more bytes")),
            LoginState::Handshake | LoginState::SelectingDatabase { .. } => self.take_input(wire_in)?,
        }
        match self.stage {
            LoginState::SelectingDatabase { .. } => self.database_answer(),
            _ => self.handshake(wire_out),
        }
    }

    /// The error for a socket that reached its end before the login was
    /// done: the server closed it (after anything it sent, which
    /// [`advance`](Self::advance) has read).
    pub fn closed(&self) -> ClientError {
        match &self.stage {
            LoginState::Tls(_) => ClientError::Tls {
                endpoint: self.endpoint.clone(),
                message: "the server closed the connection during the TLS handshake (see its error log)".into(),
            },
            _ => ClientError::Closed {
                endpoint: self.endpoint.clone(),
                mid_packet: !self.plain_in.is_empty() || !self.undecoded.is_empty(),
            },
        }
    }

    /// Runs the protocol's handshake over the packets received so far.
    fn handshake(&mut self, wire_out: &mut Vec<u8>) -> Result<LoginStep, ClientError> {
        loop {
            let advanced = self.machine.advance(&self.plain_in, &mut self.plain_out, &mut OsRng);
            let (used, step) = advanced.map_err(|e| match &self.tls {
                Some(tls) => tls_login::not_offered(tls, &self.endpoint, e),
                None => ClientError::from_codec(self.endpoint.clone(), e),
            })?;
            self.plain_in.drain(..used.min(self.plain_in.len()));
            self.send(wire_out)?;
            match step {
                HandshakeStep::NeedMore if used > 0 && !self.plain_in.is_empty() => continue,
                HandshakeStep::NeedMore => return Ok(LoginStep::NeedMore),
                HandshakeStep::StartTls => return self.start_tls(wire_out),
                HandshakeStep::Done(info) => return self.logged_in(info, wire_out),
                HandshakeStep::ServerError(error) => {
                    return Err(ClientError::Server { endpoint: self.endpoint.clone(), error })
                }
                // A step the protocol crate added after this was written.
                other => {
                    return Err(self.usage(format!("the login asked for a step this client cannot take: {other:?}")))
                }
            }
        }
    }

    /// The SSLRequest is out: the TLS handshake starts with the ClientHello.
    fn start_tls(&mut self, wire_out: &mut Vec<u8>) -> Result<LoginStep, ClientError> {
        let tls = self.tls.as_ref().ok_or_else(|| self.usage("the login asked for TLS, which was not configured"))?;
        if !self.plain_in.is_empty() {
            // The server must wait for the ClientHello.
            let source = ProtocolError::UnexpectedMessage {
                state: "starting TLS",
                got: "server bytes before the TLS handshake",
            };
            return Err(ClientError::Protocol { endpoint: self.endpoint.clone(), source });
        }
        let layer = tls_login::start(tls, &self.endpoint, wire_out)?;
        self.stage = LoginState::Tls(Box::new(layer));
        Ok(LoginStep::NeedMore)
    }

    /// The TLS handshake is done: TLS goes under the packet stream, and the
    /// login's handshake response follows through it.
    fn tls_established(&mut self, wire_out: &mut Vec<u8>) -> Result<(), ClientError> {
        let LoginState::Tls(layer) = std::mem::replace(&mut self.stage, LoginState::Handshake) else { return Ok(()) };
        self.transport.start_tls(*layer);
        let established = self.machine.tls_established(&mut self.plain_out, &mut OsRng);
        established.map_err(|e| ClientError::from_codec(self.endpoint.clone(), e))?;
        self.send(wire_out)
    }

    /// The handshake's OK: the compressed protocol starts, and the database
    /// is selected if the server did not take it in the login.
    fn logged_in(&mut self, info: LoginInfo, wire_out: &mut Vec<u8>) -> Result<LoginStep, ClientError> {
        tolerance::record_login(&info.deviations);
        if info.capabilities.contains(Capabilities::COMPRESS) {
            self.start_compression()?;
        }
        if !info.select_database {
            return Ok(LoginStep::Done(Box::new(self.finish(info))));
        }
        // No CLIENT_CONNECT_WITH_DB: libmariadb's mysql_real_connect selects
        // it with COM_INIT_DB.
        let database = self.database.clone().unwrap_or_default();
        let seq = command::encode_init_db(&mut self.plain_out, database.as_bytes());
        self.send(wire_out)?;
        let seq = self.transport.answer_seq().unwrap_or(seq);
        let decoder = Box::new(ResultSetDecoder::new(info.capabilities, RowFormat::Text));
        self.stage = LoginState::SelectingDatabase { info: Box::new(info), seq, decoder };
        self.database_answer()
    }

    /// Once logged in, the server's next bytes are compressed packets:
    /// those read past the login's OK are still to be decompressed, in the
    /// socket's form without TLS, or decrypted under it.
    fn start_compression(&mut self) -> Result<(), ClientError> {
        let unread = std::mem::take(&mut self.plain_in);
        if self.transport.tls().is_some() {
            self.transport.start_compression(&unread);
        } else {
            self.transport.start_compression(&[]);
            self.undecoded = unread;
        }
        self.take_input(&[])
    }

    /// COM_INIT_DB's answer, once it is in: an OK ends the login, an ERR
    /// fails it.
    fn database_answer(&mut self) -> Result<LoginStep, ClientError> {
        let LoginState::SelectingDatabase { seq, decoder, .. } = &mut self.stage else {
            return Ok(LoginStep::NeedMore);
        };
        let endpoint = &self.endpoint;
        let response = loop {
            let frame = framing::decode_answer_packet(&self.plain_in, *seq, self.max_packet)
                .map_err(|source| ClientError::Protocol { endpoint: endpoint.clone(), source })?;
            let Some(frame) = frame else { return Ok(LoginStep::NeedMore) };
            *seq = frame.next_seq;
            let fed = decoder.feed(&frame.payload).map_err(|e| ClientError::from_codec(endpoint.clone(), e))?;
            let consumed = frame.consumed;
            self.plain_in.drain(..consumed);
            if let Some(response) = fed {
                break response;
            }
        };
        let LoginState::SelectingDatabase { info, .. } = std::mem::replace(&mut self.stage, LoginState::Over) else {
            return Ok(LoginStep::NeedMore);
        };
        if let Some(error) = response.error {
            let database = self.database.clone().unwrap_or_default();
            return Err(ClientError::SelectDatabase { endpoint: self.endpoint.clone(), database, error });
        }
        Ok(LoginStep::Done(Box::new(self.finish(*info))))
    }

    fn finish(&mut self, info: LoginInfo) -> LoggedIn {
        self.stage = LoginState::Over;
        LoggedIn {
            info,
            transport: std::mem::take(&mut self.transport),
            decoded: std::mem::take(&mut self.plain_in),
            undecoded: BytesMut::from(&std::mem::take(&mut self.undecoded)[..]),
        }
    }

    /// The socket's bytes, into the packet stream (through the transport
    /// once there is one).
    fn take_input(&mut self, wire_in: &[u8]) -> Result<(), ClientError> {
        if self.transport.is_plain() {
            self.plain_in.extend_from_slice(wire_in);
            return Ok(());
        }
        self.undecoded.extend_from_slice(wire_in);
        let used = self
            .transport
            .decode(&self.undecoded, &mut self.plain_in)
            .map_err(|source| ClientError::Transport { endpoint: self.endpoint.clone(), source })?;
        self.undecoded.drain(..used.min(self.undecoded.len()));
        tolerance::record_seq_jumps(self.transport.take_seq_jumps());
        Ok(())
    }

    /// What the handshake wrote, to the socket (through the transport once
    /// there is one).
    fn send(&mut self, wire_out: &mut Vec<u8>) -> Result<(), ClientError> {
        if self.plain_out.is_empty() {
            return Ok(());
        }
        let sent = if self.transport.is_plain() {
            wire_out.extend_from_slice(&self.plain_out);
            Ok(())
        } else {
            self.transport.encode(&self.plain_out, wire_out)
        };
        self.plain_out.clear();
        sent.map_err(|source| ClientError::Transport { endpoint: self.endpoint.clone(), source })
    }

    fn usage(&self, message: impl Into<String>) -> ClientError {
        ClientError::Usage { endpoint: self.endpoint.clone(), message: message.into() }
    }
}
