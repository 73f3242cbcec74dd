//! One stream type over TCP and unix sockets.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use socket2::{Domain, SockAddr, Socket, Type};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpStream, UnixStream};

use super::peer::{self, PeerProcess};
use super::Endpoint;

#[derive(Debug)]
pub enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Stream {
    /// Opens the socket; TCP gets TCP_NODELAY, since every command is one
    /// small write that must leave at once.
    pub async fn open(endpoint: &Endpoint) -> io::Result<Stream> {
        match endpoint {
            Endpoint::Tcp { host, port } => {
                let stream = TcpStream::connect((host.as_str(), *port)).await?;
                stream.set_nodelay(true)?;
                Ok(Stream::Tcp(stream))
            }
            Endpoint::Unix(path) => Ok(Stream::Unix(UnixStream::connect(path).await?)),
        }
    }

    /// Opens the socket to an address already resolved
    /// ([`Endpoint::resolve`](super::Endpoint::resolve)), as [`open`](Self::open) does.
    pub async fn open_at(address: &SockAddr) -> io::Result<Stream> {
        if let Some(ip) = address.as_socket() {
            let stream = TcpStream::connect(ip).await?;
            stream.set_nodelay(true)?;
            return Ok(Stream::Tcp(stream));
        }
        let path = address.as_pathname().ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
        Ok(Stream::Unix(UnixStream::connect(path).await?))
    }

    /// Writes what the socket takes now, without waiting.
    pub fn try_write(&self, bytes: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.try_write(bytes),
            Stream::Unix(s) => s.try_write(bytes),
        }
    }

    /// Whether the server is on this host: a unix socket, or TCP to a
    /// loopback address or to one of this host's own (the kernel then
    /// picks that same address as ours). When the addresses cannot be
    /// read, on this host, the more cautious guess for sharing cores.
    pub fn peer_is_on_this_host(&self) -> bool {
        match self {
            Stream::Unix(_) => true,
            Stream::Tcp(s) => match (s.local_addr(), s.peer_addr()) {
                (Ok(ours), Ok(theirs)) => theirs.ip().is_loopback() || ours.ip() == theirs.ip(),
                _ => true,
            },
        }
    }
}

/// A non-blocking stream socket whose connect to `address` is under way
/// (or done): the first bytes it receives, or the error it ends with, say
/// how the connect went. TCP gets TCP_NODELAY, as [`Stream::open`]'s.
pub fn connect_started(address: &SockAddr) -> io::Result<Socket> {
    let domain = match address.as_socket() {
        Some(ip) => Domain::for_address(ip),
        None => Domain::UNIX,
    };
    let socket = Socket::new(domain, Type::STREAM, None)?;
    socket.set_nonblocking(true)?;
    if domain != Domain::UNIX {
        socket.set_tcp_nodelay(true)?;
    }
    match socket.connect(address) {
        Ok(()) => Ok(socket),
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => Ok(socket),
        Err(e) => Err(e),
    }
}

impl Stream {
    /// The server's process, when it is this host's (see [`super::peer`]);
    /// addresses that cannot be read leave it on this host, unfound.
    pub fn peer_process(&self) -> PeerProcess {
        match self {
            Stream::Unix(s) => PeerProcess::ThisHost(peer::unix_peer_pid(s)),
            Stream::Tcp(s) => match (s.local_addr(), s.peer_addr()) {
                (Ok(ours), Ok(theirs)) => PeerProcess::of_tcp(ours, theirs),
                _ => PeerProcess::ThisHost(None),
            },
        }
    }
}

impl std::os::fd::AsRawFd for Stream {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
        }
    }
}

impl AsyncRead for Stream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Unix(s) => Pin::new(s).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Unix(s) => Pin::new(s).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_flush(cx),
            Stream::Unix(s) => Pin::new(s).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Unix(s) => Pin::new(s).poll_shutdown(cx),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Endpoint, Stream};

    /// A connection to a listener bound at `listen` (when this host has
    /// that address) and whether it counts as one to this host.
    async fn tcp_to(listen: &str) -> Option<bool> {
        let listener = tokio::net::TcpListener::bind(listen).await.ok()?;
        let addr = listener.local_addr().ok()?;
        let stream = Stream::open(&Endpoint::tcp(addr.ip().to_string(), addr.port())).await.ok()?;
        Some(stream.peer_is_on_this_host())
    }

    #[tokio::test]
    async fn servers_on_this_host_are_seen_as_such() {
        assert_eq!(tcp_to("127.0.0.1:0").await, Some(true));
        // ::1 may be missing in a container: only a result that comes back is checked.
        assert_ne!(tcp_to("[::1]:0").await, Some(false));
        let (a, _b) = tokio::net::UnixStream::pair().expect("socketpair");
        assert!(Stream::Unix(a).peer_is_on_this_host());
        // One of this host's own non-loopback addresses, if it has one: the
        // kernel routes to it locally and picks it as our address too.
        let own = std::net::UdpSocket::bind("0.0.0.0:0")
            .and_then(|s| s.connect("192.0.2.1:9").map(|()| s))
            .and_then(|s| s.local_addr())
            .ok()
            .filter(|a| !a.ip().is_unspecified() && !a.ip().is_loopback());
        if let Some(own) = own {
            assert_eq!(tcp_to(&format!("{}:0", own.ip())).await, Some(true), "{own}");
        }
    }
}
