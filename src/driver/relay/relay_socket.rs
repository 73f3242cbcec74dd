//! A socket of a proxied pair, read by one direction and written by the
//! other from the same task: both use `&self` (readiness, then a
//! non-blocking read or write), so neither needs the socket split. And
//! the TLS handshakes the proxy runs on them: as the server to its
//! client, as a client upstream.

use std::io;

use tokio::net::{TcpStream, UnixStream};

use super::listen::AcceptedSocket;
use crate::client::{Endpoint, Stream};
use crate::transport::tls::{TlsError, TlsLayer};

/// Bytes a read may fill at least.
pub(super) const READ_CHUNK: usize = 16 * 1024;

#[derive(Debug)]
pub(super) enum RelaySocket {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl RelaySocket {
    /// An accepted connection, on this loop's runtime. TCP gets
    /// TCP_NODELAY: each packet forwarded must leave at once.
    pub(super) fn from_accepted(accepted: AcceptedSocket) -> io::Result<Self> {
        match accepted {
            AcceptedSocket::Tcp(s) => {
                s.set_nonblocking(true)?;
                let s = TcpStream::from_std(s)?;
                s.set_nodelay(true)?;
                Ok(RelaySocket::Tcp(s))
            }
            AcceptedSocket::Unix(s) => {
                s.set_nonblocking(true)?;
                Ok(RelaySocket::Unix(UnixStream::from_std(s)?))
            }
        }
    }

    /// A connection to the server.
    pub(super) async fn connect(endpoint: &Endpoint) -> io::Result<Self> {
        Ok(match Stream::open(endpoint).await? {
            Stream::Tcp(s) => RelaySocket::Tcp(s),
            Stream::Unix(s) => RelaySocket::Unix(s),
        })
    }

    /// The peer as a capture keeps it: `host:port`, or `socket` for a
    /// unix socket's client (which has no name).
    pub(super) fn peer_name(&self) -> String {
        match self {
            RelaySocket::Tcp(s) => s.peer_addr().map_or_else(|_| "?".to_owned(), |a| a.to_string()),
            RelaySocket::Unix(_) => "socket".to_owned(),
        }
    }

    /// Appends what the socket has (at least one byte, waiting for it);
    /// 0 when the peer closed its side.
    pub(super) async fn read_into(&self, buf: &mut Vec<u8>) -> io::Result<usize> {
        buf.reserve(READ_CHUNK);
        loop {
            let read = match self {
                RelaySocket::Tcp(s) => s.try_read_buf(buf),
                RelaySocket::Unix(s) => s.try_read_buf(buf),
            };
            match read {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.readable().await?,
                done => return done,
            }
        }
    }

    async fn readable(&self) -> io::Result<()> {
        match self {
            RelaySocket::Tcp(s) => s.readable().await,
            RelaySocket::Unix(s) => s.readable().await,
        }
    }

    pub(super) async fn write_all(&self, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            let written = match self {
                RelaySocket::Tcp(s) => s.try_write(bytes),
                RelaySocket::Unix(s) => s.try_write(bytes),
            };
            match written {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => bytes = bytes.get(n..).unwrap_or_default(),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.writable().await?,
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    async fn writable(&self) -> io::Result<()> {
        match self {
            RelaySocket::Tcp(s) => s.writable().await,
            RelaySocket::Unix(s) => s.writable().await,
        }
    }

    /// Tells the peer this side sends nothing more (its reads end), as the
    /// other peer of the pair told the proxy.
    pub(super) fn shut_write(&self) {
        let socket = match self {
            RelaySocket::Tcp(s) => socket2::SockRef::from(s),
            RelaySocket::Unix(s) => socket2::SockRef::from(s),
        };
        let _ = socket.shutdown(std::net::Shutdown::Write);
    }
}

/// Why a TLS handshake of the proxy failed.
#[derive(Debug, thiserror::Error)]
pub(super) enum HandshakeFailure {
    #[error("{0}")]
    Io(#[from] io::Error),
    #[error("the peer closed the connection during the TLS handshake")]
    Closed,
    #[error("{0}")]
    Tls(#[from] TlsError),
}

/// Runs `layer`'s handshake over `socket`, `early` the bytes already read
/// from it. Packet-stream bytes that came with the peer's last flight (a
/// client's login right after its Finished) are appended to `plain`.
pub(super) async fn tls_handshake(
    socket: &RelaySocket,
    layer: &mut TlsLayer,
    early: &[u8],
    plain: &mut Vec<u8>,
) -> Result<(), HandshakeFailure> {
    let mut input = early.to_vec();
    let mut out = Vec::with_capacity(2048);
    loop {
        if !input.is_empty() {
            if let Err(e) = layer.decode(&input, plain) {
                // rustls queued an alert saying why: the peer's log shows it.
                out.clear();
                if layer.write_pending(&mut out).is_ok() && !out.is_empty() {
                    let _ = socket.write_all(&out).await;
                }
                return Err(e.into());
            }
        }
        out.clear();
        layer.write_pending(&mut out)?;
        if !out.is_empty() {
            socket.write_all(&out).await?;
        }
        if !layer.is_handshaking() {
            return Ok(());
        }
        input.clear();
        if socket.read_into(&mut input).await? == 0 {
            return Err(HandshakeFailure::Closed);
        }
    }
}
