//! An async client connection over TCP or a unix socket, built on the
//! sans-IO codec. It is used for everything that is not the measured hot
//! path (prepare, cleanup, statement set-up) and by the tests; the engine's
//! event loops drive the same codec with their own I/O.

mod endpoint;
mod error;
mod stream;

use std::time::Duration;

use bytes::{Buf, Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use wirebench_protocol::auth::rand_core::OsRng;
use wirebench_protocol::conn::{ClientHandshake, HandshakeConfig, HandshakeStep, Session, TlsMode};
use wirebench_protocol::framing;
use wirebench_protocol::ProtocolError;

pub use endpoint::Endpoint;
pub use error::ClientError;
pub use stream::Stream;

pub type Result<T, E = ClientError> = std::result::Result<T, E>;

/// How to reach and log in to a server.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    pub endpoint: Endpoint,
    pub user: String,
    pub password: String,
    pub database: Option<String>,
    /// Covers the socket connect and the whole login.
    pub connect_timeout: Duration,
    /// Ask for CLIENT_DEPRECATE_EOF when the server offers it.
    pub deprecate_eof: bool,
    /// The server's RSA public key (PEM) for caching_sha2_password full
    /// authentication over plain TCP; fetched from the server when absent.
    pub server_public_key: Option<Vec<u8>>,
    /// The largest packet accepted from the server.
    pub max_packet_size: u32,
}

impl ConnectOptions {
    pub fn new(endpoint: Endpoint, user: impl Into<String>, password: impl Into<String>) -> Self {
        ConnectOptions {
            endpoint,
            user: user.into(),
            password: password.into(),
            database: None,
            connect_timeout: Duration::from_secs(10),
            deprecate_eof: true,
            server_public_key: None,
            max_packet_size: wirebench_protocol::constants::DEFAULT_MAX_PACKET_SIZE,
        }
    }

    pub fn database(mut self, database: impl Into<String>) -> Self {
        self.database = Some(database.into());
        self
    }

    fn handshake_config(&self) -> HandshakeConfig {
        let mut config = HandshakeConfig::new(self.user.clone(), self.password.clone().into_bytes());
        config.database = self.database.clone();
        config.secure_transport = self.endpoint.is_secure_transport();
        config.tls = TlsMode::Disabled;
        config.server_public_key = self.server_public_key.clone();
        config.deprecate_eof = self.deprecate_eof;
        config.max_packet_size = self.max_packet_size;
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
    session: Session,
}

/// The socket and its buffers.
#[derive(Debug)]
struct Io<S> {
    stream: S,
    endpoint: Endpoint,
    rbuf: BytesMut,
    wbuf: Vec<u8>,
    max_packet: usize,
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
}

impl<S: AsyncRead + AsyncWrite + Unpin> Connection<S> {
    /// Logs in over an already open stream (a socket, or an in-memory pipe in tests).
    pub async fn handshake(stream: S, options: &ConnectOptions) -> Result<Self> {
        let mut io = Io {
            stream,
            endpoint: options.endpoint.clone(),
            rbuf: BytesMut::with_capacity(16 * 1024),
            wbuf: Vec::with_capacity(1024),
            max_packet: options.max_packet_size as usize,
        };
        let mut machine = ClientHandshake::new(options.handshake_config());
        loop {
            let (used, step) = machine.advance(&io.rbuf, &mut io.wbuf, &mut OsRng).map_err(|e| io.protocol_error(e))?;
            io.rbuf.advance(used);
            io.flush().await?;
            match step {
                HandshakeStep::NeedMore => io.fill().await?,
                HandshakeStep::Done(session) => return Ok(Connection { io, session }),
                HandshakeStep::ServerError(error) => return Err(ClientError::Server { endpoint: io.endpoint, error }),
                HandshakeStep::StartTls => {
                    return Err(io.usage_error("the server requires TLS, which this connection does not speak yet"))
                }
            }
        }
    }

    /// What the login negotiated: capabilities, server version, connection id.
    pub fn session(&self) -> &Session {
        &self.session
    }

    pub fn endpoint(&self) -> &Endpoint {
        &self.io.endpoint
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> Io<S> {
    /// Writes out everything queued in the write buffer.
    async fn flush(&mut self) -> Result<()> {
        if self.wbuf.is_empty() {
            return Ok(());
        }
        let result = self.stream.write_all(&self.wbuf).await;
        self.wbuf.clear();
        result.map_err(|source| self.io_error(source))
    }

    /// Reads at least one more byte into the read buffer.
    async fn fill(&mut self) -> Result<()> {
        if self.rbuf.capacity() - self.rbuf.len() < 4096 {
            self.rbuf.reserve(64 * 1024);
        }
        match self.stream.read_buf(&mut self.rbuf).await {
            Ok(0) => Err(ClientError::Closed { endpoint: self.endpoint.clone(), mid_packet: !self.rbuf.is_empty() }),
            Ok(_) => Ok(()),
            Err(source) => Err(self.io_error(source)),
        }
    }

    /// Reads one logical packet (fragments joined) with sequence id `*seq`,
    /// and advances `*seq` past it.
    async fn read_packet(&mut self, seq: &mut u8) -> Result<Bytes> {
        loop {
            match framing::decode_packet(&self.rbuf, *seq, self.max_packet) {
                Ok(Some(frame)) => {
                    *seq = frame.next_seq;
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

    fn usage_error(&self, message: impl Into<String>) -> ClientError {
        ClientError::Usage { endpoint: self.endpoint.clone(), message: message.into() }
    }
}
