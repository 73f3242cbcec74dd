//! An async client connection over TCP or a unix socket, built on the
//! sans-IO codec. It is used for everything that is not the measured hot
//! path (prepare, cleanup, statement set-up) and by the tests; the engine's
//! event loops drive the same codec with their own I/O.
//!
//! Layer: below the driver and the orchestration; owns where connections go
//! ([`Endpoint`], [`ServerAddresses`]) and how they log in
//! ([`ConnectOptions`]). It may import transport and the protocol crate.
//!
//! Files:
//! - `endpoint.rs`: a TCP host and port or a unix socket, and how a run's
//!   connections are spread over the servers.
//! - `stream.rs`: one stream type over TCP and unix sockets.
//! - `login.rs`: the login as a state machine without I/O, which the async
//!   client and the engine's loops drive; `tls_login.rs`: its TLS part.
//! - `server_key.rs`: the server's RSA key for caching_sha2_password and
//!   sha256_password over unencrypted TCP.
//! - `peer.rs`: the process at the other end, when it runs on this host.
//! - `client_error.rs`: what can go wrong on a connection.
//! - `tolerance.rs`: the run's tally of the server deviations tolerated.

mod client_error;
mod endpoint;
mod login;
pub(crate) mod peer;
mod server_key;
mod stream;
mod tls_login;
pub mod tolerance;

use std::time::Duration;

use bytes::{Buf, Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use wirebench_protocol::command::{self, ExecuteTemplate, Param};
use wirebench_protocol::framing;
use wirebench_protocol::handshake::{HandshakeConfig, LoginInfo, TlsMode};
use wirebench_protocol::response::{
    err, ok, Outcome, PrepareOutcome, PrepareResponse, PreparedStatement, Response, ResponseReader, ResultSetDecoder,
    RowFormat,
};
use wirebench_protocol::{Capabilities, CodecError, ProtocolError};

use crate::transport::tls::ClientTls;
use crate::transport::{Transport, TransportError};

pub use client_error::ClientError;
pub use endpoint::Endpoint;
pub(crate) use endpoint::ServerAddresses;
pub use login::{LoggedIn, Login, LoginStep};
pub use peer::unix_peer_pid;
pub(crate) use peer::PeerProcess;
pub use server_key::ServerKey;
pub(crate) use stream::{connect_started, Stream};

pub type Result<T, E = ClientError> = std::result::Result<T, E>;

/// How to reach and log in to a server.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    pub endpoint: Endpoint,
    pub user: String,
    pub password: String,
    pub database: Option<String>,
    /// Covers the socket connect and the whole login (libmysqlclient's
    /// MYSQL_OPT_CONNECT_TIMEOUT); `Duration::MAX` for no limit.
    pub connect_timeout: Duration,
    /// Once logged in, how long each wait for the server's bytes may last
    /// (MYSQL_OPT_READ_TIMEOUT); `None` for no limit.
    pub read_timeout: Option<Duration>,
    /// Once logged in, how long each wait for room to send may last
    /// (MYSQL_OPT_WRITE_TIMEOUT); `None` for no limit.
    pub write_timeout: Option<Duration>,
    /// Ask for CLIENT_DEPRECATE_EOF when the server offers it.
    pub deprecate_eof: bool,
    /// What caching_sha2_password's full authentication and sha256_password
    /// may encrypt the password to over plain TCP: a known key, the one the
    /// server sends, or neither (the login then fails, as libmysqlclient's).
    pub server_key: ServerKey,
    /// The largest packet accepted from the server.
    pub max_packet_size: u32,
    /// Ask for the compressed protocol (CLIENT_COMPRESS); without the
    /// server's offer the connection runs uncompressed, as libmysqlclient
    /// does: see [`Connection::is_compressed`].
    pub compression: bool,
    /// TLS to the server (`--mysql-ssl`), or none.
    pub tls: Option<ClientTls>,
    /// Ask for CLIENT_LOCAL_FILES, which
    /// [`load_data_local`](Connection::load_data_local) needs: only a
    /// connection that streams rows from memory asks for it.
    pub local_infile: bool,
    /// Ask for MARIADB_CLIENT_STMT_BULK_OPERATIONS, which
    /// [`bulk_execute`](Connection::bulk_execute) needs (MariaDB offers it
    /// from 10.2; MySQL never).
    pub bulk_operations: bool,
    /// The login's collation id; `None` for the default (utf8mb4_general_ci).
    pub charset: Option<u8>,
    /// Capabilities that change what the session answers, asked for as
    /// a captured client asked (a replay: FOUND_ROWS, IGNORE_SPACE, ...).
    pub session_capabilities: Capabilities,
}

impl ConnectOptions {
    pub fn new(endpoint: Endpoint, user: impl Into<String>, password: impl Into<String>) -> Self {
        ConnectOptions {
            endpoint,
            user: user.into(),
            password: password.into(),
            database: None,
            connect_timeout: Duration::from_secs(10),
            read_timeout: None,
            write_timeout: None,
            deprecate_eof: true,
            server_key: ServerKey::default(),
            max_packet_size: wirebench_protocol::constants::DEFAULT_MAX_PACKET_SIZE,
            compression: false,
            tls: None,
            local_infile: false,
            bulk_operations: false,
            charset: None,
            session_capabilities: Capabilities::empty(),
        }
    }

    pub fn database(mut self, database: impl Into<String>) -> Self {
        self.database = Some(database.into());
        self
    }

    pub(crate) fn handshake_config(&self) -> HandshakeConfig {
        let mut config = HandshakeConfig::new(self.user.clone(), self.password.clone().into_bytes());
        config.database = self.database.clone();
        config.secure_transport = self.endpoint.is_secure_transport();
        config.tls = match &self.tls {
            None => TlsMode::Disabled,
            Some(tls) if !tls.required() => TlsMode::Preferred,
            Some(_) => TlsMode::Required,
        };
        config.server_public_key = self.server_key.pem.as_deref().map(<[u8]>::to_vec);
        config.get_server_public_key = self.server_key.fetch;
        config.deprecate_eof = self.deprecate_eof;
        config.max_packet_size = self.max_packet_size;
        if self.compression {
            // Granted only if the server offers it (negotiation keeps the
            // capabilities both sides have).
            config.extra_capabilities |= Capabilities::COMPRESS;
        }
        if self.local_infile {
            config.extra_capabilities |= Capabilities::LOCAL_FILES;
        }
        if self.bulk_operations {
            config.extra_capabilities |= Capabilities::MARIADB_CLIENT_STMT_BULK_OPERATIONS;
        }
        config.extra_capabilities |= self.session_capabilities;
        if let Some(charset) = self.charset {
            config.charset = charset;
        }
        config.connect_attrs = vec![
            ("_client_name".into(), "wirebench".into()),
            ("_client_version".into(), env!("CARGO_PKG_VERSION").into()),
            ("program_name".into(), "wirebench".into()),
        ];
        config
    }
}

/// A logged-in connection.
#[derive(Debug)]
pub struct Connection<S = Stream> {
    io: Io<S>,
    login: LoginInfo,
}

/// The socket and its buffers.
#[derive(Debug)]
struct Io<S> {
    stream: S,
    endpoint: Endpoint,
    /// The packet stream read and not yet consumed.
    rbuf: BytesMut,
    /// The packet stream to send.
    wbuf: Vec<u8>,
    max_packet: usize,
    /// [`ConnectOptions::read_timeout`] and `write_timeout`, applied once
    /// logged in (the connect timeout covers the login).
    read_timeout: Option<Duration>,
    write_timeout: Option<Duration>,
    /// Applied once logged in; plain until then.
    transport: Transport,
    /// With a transport that is not plain: bytes read from the socket and
    /// not yet decoded into `rbuf`.
    wire: BytesMut,
    /// With a transport that is not plain: decoded bytes on their way to
    /// `rbuf`, or encoded ones on their way to the socket.
    scratch: Vec<u8>,
}

impl Connection<Stream> {
    /// Opens the socket and logs in, all within `options.connect_timeout`.
    pub async fn connect(options: &ConnectOptions) -> Result<Self> {
        let endpoint = &options.endpoint;
        let attempt = async {
            let stream = Stream::open(endpoint)
                .await
                .map_err(|source| ClientError::Io { endpoint: endpoint.clone(), source })?;
            Connection::handshake(stream, options).await
        };
        tokio::time::timeout(options.connect_timeout, attempt).await.map_err(|_| ClientError::Timeout {
            endpoint: endpoint.clone(),
            what: "connecting and logging in",
            after: options.connect_timeout,
        })?
    }

    /// Whether the server runs on this host (see [`Stream::peer_is_on_this_host`]).
    pub fn server_is_on_this_host(&self) -> bool {
        self.io.stream.peer_is_on_this_host()
    }

    /// Where the server runs, and its process when it is this host's and
    /// can be found (see [`peer`]).
    pub fn server_process(&self) -> PeerProcess {
        self.io.stream.peer_process()
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> Connection<S> {
    /// Logs in over an already open stream (a socket, or an in-memory pipe
    /// in tests): the [`Login`] machine, driven over the stream.
    pub async fn handshake(mut stream: S, options: &ConnectOptions) -> Result<Self> {
        let mut login = Login::new(options);
        let endpoint = options.endpoint.clone();
        let io_error = |source| ClientError::Io { endpoint: endpoint.clone(), source };
        let mut input = BytesMut::with_capacity(4096);
        let mut output = Vec::with_capacity(1024);
        let logged_in = loop {
            let step = login.advance(&input, &mut output)?;
            input.clear();
            if !output.is_empty() {
                stream.write_all(&output).await.map_err(io_error)?;
                output.clear();
            }
            match step {
                LoginStep::Done(logged_in) => break logged_in,
                LoginStep::NeedMore => match read_more(&mut stream, &mut input).await {
                    Ok(()) => {}
                    Err(None) => return Err(login.closed()),
                    Err(Some(source)) => return Err(io_error(source)),
                },
            }
        };
        let LoggedIn { info, transport, decoded, undecoded } = *logged_in;
        let io = Io {
            stream,
            endpoint: options.endpoint.clone(),
            rbuf: BytesMut::from(&decoded[..]),
            wbuf: Vec::with_capacity(1024),
            max_packet: options.max_packet_size as usize,
            read_timeout: options.read_timeout,
            write_timeout: options.write_timeout,
            transport,
            wire: undecoded,
            scratch: Vec::new(),
        };
        Ok(Connection { io, login: info })
    }

    /// What the login negotiated: capabilities, server version, connection id.
    pub fn login(&self) -> &LoginInfo {
        &self.login
    }

    pub fn endpoint(&self) -> &Endpoint {
        &self.io.endpoint
    }

    /// Whether the connection speaks the compressed protocol.
    pub fn is_compressed(&self) -> bool {
        self.login.capabilities.contains(Capabilities::COMPRESS)
    }

    /// The TLS cipher suite in use (IANA name), or `None` without TLS.
    pub fn tls_cipher(&self) -> Option<&'static str> {
        self.io.transport.tls().and_then(|tls| tls.cipher_name())
    }

    /// "TLSv1.3, TLS13_AES_256_GCM_SHA384", or `None` without TLS.
    pub fn tls_description(&self) -> Option<String> {
        let tls = self.io.transport.tls()?;
        let version = tls.protocol_version().unwrap_or("TLS").replace('_', ".");
        Some(format!("{version}, {}", tls.cipher_name().unwrap_or("unknown cipher")))
    }

    /// Takes the connection apart for an event loop that drives the socket
    /// itself: the stream, any bytes already read from it (wire bytes, still
    /// to go through the transport), what the login established, and the
    /// transport.
    pub fn into_parts(self) -> (S, BytesMut, LoginInfo, Transport) {
        let Io { stream, rbuf, mut transport, wire, .. } = self.io;
        if transport.is_plain() {
            return (stream, rbuf, self.login, transport);
        }
        transport.carry(&rbuf);
        (stream, wire, self.login, transport)
    }

    /// COM_QUERY, decoded in full (text protocol). A server error, even one
    /// after earlier results of a multi-statement query, is returned as
    /// [`ClientError::Server`].
    pub async fn query(&mut self, sql: &str) -> Result<Response> {
        let seq = command::encode_query(&mut self.io.wbuf, sql.as_bytes());
        self.io.flush().await?;
        let decoder = ResultSetDecoder::new(self.login.capabilities, RowFormat::Text);
        self.read_response(decoder, self.io.answer_seq(seq)).await
    }

    /// COM_QUERY whose results are walked and counted, not kept.
    pub async fn query_drop(&mut self, sql: &str) -> Result<Outcome> {
        let seq = command::encode_query(&mut self.io.wbuf, sql.as_bytes());
        self.io.flush().await?;
        self.walk_response(RowFormat::Text, self.io.answer_seq(seq)).await
    }

    /// `LOAD DATA LOCAL INFILE 'file' ...` (`sql`, naming `file`) with the
    /// file's content `data` from memory, in packets of at most
    /// `max_payload` bytes (the server's `max_allowed_packet`). The server
    /// may ask for `file` and nothing else: another name is refused as any
    /// LOCAL INFILE request is. Needs [`ConnectOptions::local_infile`].
    pub async fn load_data_local(
        &mut self,
        sql: &str,
        file: &str,
        data: &[u8],
        max_payload: usize,
    ) -> Result<Response> {
        if !self.login.capabilities.contains(Capabilities::LOCAL_FILES) {
            return Err(self.io.usage_error("LOAD DATA LOCAL INFILE needs a connection with CLIENT_LOCAL_FILES"));
        }
        let seq = command::encode_query(&mut self.io.wbuf, sql.as_bytes());
        self.io.flush().await?;
        let mut seq = self.io.answer_seq(seq);
        let first = self.io.read_packet(&mut seq).await?;
        let decoder = ResultSetDecoder::new(self.login.capabilities, RowFormat::Text);
        if command::local_infile_request(&first).is_none() {
            // An ERR (local_infile off, no such table) or, from an odd
            // server, an OK without asking for the data.
            return self.finish_response(decoder, first, seq).await;
        }
        if let Err(refused) = command::accept_local_infile(&first, file.as_bytes()) {
            let ProtocolError::LocalInfileRefused(name) = refused else { return Err(self.io.protocol_error(refused)) };
            return Err(self.refuse_local_infile(name, seq).await);
        }
        let seq = command::encode_local_infile_data(&mut self.io.wbuf, seq, data, max_payload);
        self.io.flush().await?;
        let seq = self.io.answer_seq(seq);
        self.read_response(decoder, seq).await
    }

    /// Feeds `first`, a response's packet already read, to `decoder`, then
    /// reads the rest from sequence id `seq`.
    async fn finish_response(&mut self, mut decoder: ResultSetDecoder, first: Bytes, seq: u8) -> Result<Response> {
        match decoder.feed(&first) {
            Ok(Some(response)) => match response.error {
                Some(error) => Err(ClientError::Server { endpoint: self.io.endpoint.clone(), error }),
                None => Ok(response),
            },
            Ok(None) => self.read_response(decoder, seq).await,
            Err(e) => Err(self.io.codec_error(e)),
        }
    }

    /// COM_STMT_PREPARE: the statement with its parameter and column definitions.
    pub async fn prepare(&mut self, sql: &str) -> Result<PreparedStatement> {
        let seq = command::encode_prepare(&mut self.io.wbuf, sql.as_bytes());
        self.io.flush().await?;
        let mut seq = self.io.answer_seq(seq);
        let mut response = PrepareResponse::new(self.login.capabilities);
        loop {
            let packet = self.io.read_packet(&mut seq).await?;
            match response.feed(&packet).map_err(|e| self.io.codec_error(e))? {
                None => continue,
                Some(PrepareOutcome::Prepared(statement)) => return Ok(statement),
                Some(PrepareOutcome::Error(error)) => {
                    return Err(ClientError::Server { endpoint: self.io.endpoint.clone(), error })
                }
                // An outcome the protocol crate added after this loop was written.
                Some(other) => {
                    let message = format!("a prepare ended in a way this client cannot handle: {other:?}");
                    return Err(self.io.usage_error(message));
                }
            }
        }
    }

    /// COM_STMT_EXECUTE with the given parameters, decoded in full (binary protocol).
    pub async fn execute(&mut self, statement: &PreparedStatement, params: &[Param<'_>]) -> Result<Response> {
        let expected = statement.params.len();
        if params.len() != expected {
            return Err(self.io.usage_error(format!(
                "statement {} takes {expected} parameters, {} were given",
                statement.statement_id(),
                params.len()
            )));
        }
        let seq = command::encode_execute(&mut self.io.wbuf, statement.statement_id(), params);
        self.io.flush().await?;
        let seq = self.io.answer_seq(seq);
        let decoder = ResultSetDecoder::with_cached_columns(
            self.login.capabilities,
            RowFormat::Binary,
            statement.columns.clone(),
        );
        self.read_response(decoder, seq).await
    }

    /// COM_STMT_BULK_EXECUTE: `statement` run once for each of `rows`
    /// (parameter rows from [`command::push_bulk_row`], their types
    /// `types`, one per parameter), answered by one OK or ERR. Needs
    /// [`ConnectOptions::bulk_operations`] and a server that granted it.
    pub async fn bulk_execute(
        &mut self,
        statement: &PreparedStatement,
        types: &[[u8; 2]],
        rows: &[u8],
    ) -> Result<Response> {
        if !self.login.capabilities.contains(Capabilities::MARIADB_CLIENT_STMT_BULK_OPERATIONS) {
            return Err(self.io.usage_error(
                "COM_STMT_BULK_EXECUTE needs a connection with MARIADB_CLIENT_STMT_BULK_OPERATIONS (a MariaDB server)",
            ));
        }
        if types.len() != statement.params.len() {
            let (id, expected) = (statement.statement_id(), statement.params.len());
            return Err(self
                .io
                .usage_error(format!("statement {id} takes {expected} parameters, {} types were given", types.len())));
        }
        let seq = command::encode_bulk_execute(&mut self.io.wbuf, statement.statement_id(), types, rows);
        self.io.flush().await?;
        let decoder = ResultSetDecoder::new(self.login.capabilities, RowFormat::Binary);
        self.read_response(decoder, self.io.answer_seq(seq)).await
    }

    /// Sends a pre-encoded COM_STMT_EXECUTE as it is and walks the response
    /// without materialising it: the path the load engine's loops take.
    pub async fn execute_template(&mut self, template: &ExecuteTemplate) -> Result<Outcome> {
        self.send_command(template.packet(), RowFormat::Binary).await
    }

    /// Sends one already encoded command packet (sequence id 0, under 16 MiB)
    /// and walks its response, whose rows come in `format`.
    pub async fn send_command(&mut self, packet: &[u8], format: RowFormat) -> Result<Outcome> {
        self.io.wbuf.extend_from_slice(packet);
        self.io.flush().await?;
        self.walk_response(format, self.io.answer_seq(1)).await
    }

    /// COM_STMT_CLOSE; the server sends no reply.
    pub async fn close_statement(&mut self, statement_id: u32) -> Result<()> {
        command::encode_stmt_close(&mut self.io.wbuf, statement_id);
        self.io.flush().await
    }

    /// COM_PING.
    pub async fn ping(&mut self) -> Result<()> {
        command::encode_ping(&mut self.io.wbuf);
        self.io.flush().await?;
        self.expect_ok().await
    }

    /// COM_INIT_DB: makes `database` the default schema.
    pub async fn init_db(&mut self, database: &str) -> Result<()> {
        let seq = command::encode_init_db(&mut self.io.wbuf, database.as_bytes());
        self.io.flush().await?;
        let decoder = ResultSetDecoder::new(self.login.capabilities, RowFormat::Text);
        self.read_response(decoder, self.io.answer_seq(seq)).await.map(drop)
    }

    /// COM_QUIT, then closes the socket.
    pub async fn quit(mut self) -> Result<()> {
        command::encode_quit(&mut self.io.wbuf);
        self.io.flush().await?;
        self.io.stream.shutdown().await.map_err(|e| self.io.io_error(e))
    }

    /// The answer to a command that only succeeds or fails (COM_PING): an
    /// OK or an ERR, nothing else. libmariadb's `mysql_ping` takes any
    /// packet that is not an ERR; read here as a result set's start (a
    /// column count, whose trailing bytes are tolerated) it would wait for
    /// column definitions that never come, a hang where the server
    /// answered, so it is refused as the packet that does not fit it is.
    async fn expect_ok(&mut self) -> Result<()> {
        let mut seq = self.io.answer_seq(1);
        let first = self.io.read_packet(&mut seq).await?;
        if !matches!(first.first(), Some(&(ok::OK_HEADER | err::ERR_HEADER))) {
            let state = "reading the answer to COM_PING (OK or ERR)";
            return Err(self
                .io
                .protocol_error(ProtocolError::UnexpectedMessage { state, got: "packet neither OK nor ERR" }));
        }
        let decoder = ResultSetDecoder::new(self.login.capabilities, RowFormat::Text);
        self.finish_response(decoder, first, seq).await.map(drop)
    }

    /// Reads packets into `decoder` until the response is complete.
    async fn read_response(&mut self, mut decoder: ResultSetDecoder, mut seq: u8) -> Result<Response> {
        loop {
            let packet = self.io.read_packet(&mut seq).await?;
            match decoder.feed(&packet) {
                Ok(None) => continue,
                Ok(Some(response)) => {
                    tolerance::record_column_count_trailing(response.column_count_trailing);
                    return match response.error {
                        Some(error) => Err(ClientError::Server { endpoint: self.io.endpoint.clone(), error }),
                        None => Ok(response),
                    };
                }
                Err(CodecError::Protocol(ProtocolError::LocalInfileRefused(file))) => {
                    return Err(self.refuse_local_infile(file, seq).await)
                }
                Err(e) => return Err(self.io.codec_error(e)),
            }
        }
    }

    /// Walks a response with the allocation-free reader.
    async fn walk_response(&mut self, format: RowFormat, first_seq: u8) -> Result<Outcome> {
        let mut reader = ResponseReader::new(self.login.capabilities, format);
        if first_seq != 1 {
            // The reader expects replies at sequence 1; a command of 16 MiB
            // or more shifts them. Such commands are never on the hot path.
            return Err(self.io.usage_error("a command of 16 MiB or more cannot use the allocation-free reader"));
        }
        loop {
            match reader.advance(&self.io.rbuf) {
                Ok(progress) => {
                    if let Some(outcome) = progress.done {
                        tolerance::record_answer(&outcome);
                        let error = outcome.error.as_ref().map(|e| e.to_server_error(&self.io.rbuf));
                        self.io.rbuf.advance(progress.consumed);
                        return match error {
                            Some(error) => Err(ClientError::Server { endpoint: self.io.endpoint.clone(), error }),
                            None => Ok(outcome),
                        };
                    }
                    self.io.rbuf.advance(progress.consumed);
                    self.io.fill().await?;
                }
                Err(CodecError::Protocol(ProtocolError::LocalInfileRefused(file))) => {
                    let header = framing::Header::parse(&self.io.rbuf);
                    let (len, seq) = header.map_or((0, 1), |h| (h.len, h.seq));
                    self.io.rbuf.advance((framing::HEADER_LEN + len).min(self.io.rbuf.len()));
                    return Err(self.refuse_local_infile(file, seq.wrapping_add(1)).await);
                }
                Err(e) => return Err(self.io.codec_error(e)),
            }
        }
    }

    /// The server asked for a local file (LOAD DATA LOCAL INFILE). wirebench
    /// never sends files: it answers with an empty packet, which ends the
    /// transfer, reads the server's reply, and reports the refusal.
    async fn refuse_local_infile(&mut self, file: String, mut seq: u8) -> ClientError {
        let refusal = self.io.protocol_error(ProtocolError::LocalInfileRefused(file));
        seq = framing::encode_packet(&mut self.io.wbuf, seq, &[]);
        if let Err(e) = self.io.flush().await {
            return e;
        }
        seq = self.io.answer_seq(seq);
        match self.io.read_packet(&mut seq).await {
            Ok(_) => refusal,
            Err(e) => e,
        }
    }
}

/// Reads at least one byte into `buf`; `Err(None)` when the peer closed the stream.
async fn read_more<S: AsyncRead + Unpin>(stream: &mut S, buf: &mut BytesMut) -> Result<(), Option<std::io::Error>> {
    if buf.capacity() - buf.len() < 1024 {
        buf.reserve(buf.len().max(16 * 1024));
    }
    match stream.read_buf(buf).await {
        Ok(0) => Err(None),
        Ok(_) => Ok(()),
        Err(e) => Err(Some(e)),
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> Io<S> {
    /// Writes out everything queued in the write buffer, within the write
    /// timeout.
    async fn flush(&mut self) -> Result<()> {
        let Some(limit) = self.write_timeout else { return self.flush_now().await };
        let flushed = tokio::time::timeout(limit, self.flush_now()).await;
        flushed.unwrap_or_else(|_| Err(self.timeout("sending to the server (--mysql-write-timeout)", limit)))
    }

    async fn flush_now(&mut self) -> Result<()> {
        if self.wbuf.is_empty() {
            return Ok(());
        }
        let result = if self.transport.is_plain() {
            self.stream.write_all(&self.wbuf).await
        } else {
            self.scratch.clear();
            let encoded = self.transport.encode(&self.wbuf, &mut self.scratch);
            if let Err(e) = encoded {
                self.wbuf.clear();
                return Err(self.transport_error(e));
            }
            self.stream.write_all(&self.scratch).await
        };
        self.wbuf.clear();
        result.map_err(|source| self.io_error(source))
    }

    /// Reads at least one more byte into the read buffer, within the read
    /// timeout.
    async fn fill(&mut self) -> Result<()> {
        let Some(limit) = self.read_timeout else { return self.fill_now().await };
        let filled = tokio::time::timeout(limit, self.fill_now()).await;
        filled.unwrap_or_else(|_| Err(self.timeout("waiting for the server's answer (--mysql-read-timeout)", limit)))
    }

    async fn fill_now(&mut self) -> Result<()> {
        if self.transport.is_plain() {
            return read_more(&mut self.stream, &mut self.rbuf).await.map_err(|e| self.read_error(e));
        }
        loop {
            read_more(&mut self.stream, &mut self.wire).await.map_err(|e| self.read_error(e))?;
            self.scratch.clear();
            let used = self.transport.decode(&self.wire, &mut self.scratch).map_err(|e| self.transport_error(e))?;
            self.wire.advance(used);
            tolerance::record_seq_jumps(self.transport.take_seq_jumps());
            if !self.scratch.is_empty() {
                self.rbuf.extend_from_slice(&self.scratch);
                return Ok(());
            }
        }
    }

    fn answer_seq(&self, seq: u8) -> u8 {
        self.transport.answer_seq().unwrap_or(seq)
    }

    fn read_error(&self, error: Option<std::io::Error>) -> ClientError {
        match error {
            Some(source) => self.io_error(source),
            None => ClientError::Closed {
                endpoint: self.endpoint.clone(),
                mid_packet: !self.rbuf.is_empty() || !self.wire.is_empty(),
            },
        }
    }

    fn timeout(&self, what: &'static str, after: Duration) -> ClientError {
        ClientError::Timeout { endpoint: self.endpoint.clone(), what, after }
    }

    fn transport_error(&self, source: TransportError) -> ClientError {
        ClientError::Transport { endpoint: self.endpoint.clone(), source }
    }

    /// Reads one logical packet (fragments joined) with sequence id `*seq`,
    /// and advances `*seq` past it.
    async fn read_packet(&mut self, seq: &mut u8) -> Result<Bytes> {
        loop {
            match framing::decode_answer_packet(&self.rbuf, *seq, self.max_packet) {
                Ok(Some(frame)) => {
                    *seq = frame.next_seq;
                    tolerance::record_seq_jumps(u32::from(frame.seq_jumps));
                    let consumed = frame.consumed;
                    return Ok(match frame.payload {
                        std::borrow::Cow::Borrowed(_) => {
                            let mut packet = self.rbuf.split_to(consumed);
                            packet.advance(framing::HEADER_LEN);
                            packet.freeze()
                        }
                        std::borrow::Cow::Owned(joined) => {
                            self.rbuf.advance(consumed);
                            Bytes::from(joined)
                        }
                    });
                }
                Ok(None) => self.fill().await?,
                Err(e) => return Err(self.protocol_error(e)),
            }
        }
    }

    fn io_error(&self, source: std::io::Error) -> ClientError {
        ClientError::Io { endpoint: self.endpoint.clone(), source }
    }

    fn protocol_error(&self, source: ProtocolError) -> ClientError {
        ClientError::Protocol { endpoint: self.endpoint.clone(), source }
    }

    fn codec_error(&self, error: CodecError) -> ClientError {
        ClientError::from_codec(self.endpoint.clone(), error)
    }

    fn usage_error(&self, message: impl Into<String>) -> ClientError {
        ClientError::Usage { endpoint: self.endpoint.clone(), message: message.into() }
    }
}
