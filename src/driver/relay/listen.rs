//! Where the proxy listens: TCP addresses and unix socket paths, bound
//! before any loop starts (so a port in use is an error at once), and the
//! acceptor, which runs on loop 0 and hands each connection to the next
//! loop in turn. After that a connection never leaves its loop.

use std::cell::Cell;
use std::fmt;
use std::io;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

use tokio::net::{TcpListener, UnixListener};
use tokio::sync::mpsc::UnboundedSender;

/// Back-off after a failed accept (out of file descriptors, ...).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(10);

/// One place the proxy listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListenAddress {
    Tcp(std::net::SocketAddr),
    Unix(PathBuf),
}

impl fmt::Display for ListenAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ListenAddress::Tcp(addr) => write!(f, "{addr}"),
            ListenAddress::Unix(path) => write!(f, "{}", path.display()),
        }
    }
}

/// The bound listeners; the unix sockets' files are removed when dropped.
#[derive(Debug, Default)]
pub struct RelayListeners {
    tcp: Vec<std::net::TcpListener>,
    unix: Vec<(std::os::unix::net::UnixListener, PathBuf)>,
}

/// Why an address could not be listened on.
#[derive(Debug, thiserror::Error)]
#[error("--listen={address}: {source}{hint}")]
pub struct ListenError {
    pub address: ListenAddress,
    pub source: io::Error,
    hint: &'static str,
}

impl RelayListeners {
    /// Binds every address; a unix socket's stale file (one nobody listens
    /// on) is replaced, never another kind of file or a live socket.
    pub fn bind(addresses: &[ListenAddress]) -> Result<RelayListeners, ListenError> {
        let mut listeners = RelayListeners::default();
        for address in addresses {
            let failed = |source: io::Error| {
                let hint = match source.kind() {
                    io::ErrorKind::AddrInUse => ": something listens there already; choose another port or path",
                    io::ErrorKind::PermissionDenied => ": a port under 1024 needs root; choose another",
                    _ => "",
                };
                ListenError { address: address.clone(), source, hint }
            };
            match address {
                ListenAddress::Tcp(addr) => {
                    let listener = std::net::TcpListener::bind(addr).map_err(failed)?;
                    listener.set_nonblocking(true).map_err(failed)?;
                    listeners.tcp.push(listener);
                }
                ListenAddress::Unix(path) => {
                    let listener = bind_listen_socket(path).map_err(failed)?;
                    listeners.unix.push((listener, path.clone()));
                }
            }
        }
        Ok(listeners)
    }

    /// Where each TCP listener is bound (its port, when 0 was asked for).
    pub fn tcp_addresses(&self) -> Vec<std::net::SocketAddr> {
        self.tcp.iter().filter_map(|l| l.local_addr().ok()).collect()
    }
}

impl Drop for RelayListeners {
    fn drop(&mut self) {
        for (_, path) in self.unix.drain(..) {
            let _ = std::fs::remove_file(path);
        }
    }
}

fn bind_listen_socket(path: &Path) -> io::Result<std::os::unix::net::UnixListener> {
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if !meta.file_type().is_socket() {
            return Err(io::Error::new(io::ErrorKind::AlreadyExists, "a file that is not a socket is there"));
        }
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            return Err(io::Error::new(io::ErrorKind::AddrInUse, "a server is listening there"));
        }
        std::fs::remove_file(path)?;
    }
    let listener = std::os::unix::net::UnixListener::bind(path)?;
    listener.set_nonblocking(true)?;
    Ok(listener)
}

/// A connection handed from the acceptor to a loop, in std form (a tokio
/// socket belongs to the runtime that made it).
#[derive(Debug)]
pub(super) enum AcceptedSocket {
    Tcp(std::net::TcpStream),
    Unix(std::os::unix::net::UnixStream),
}

/// Accepts on every listener, handing connections to `loops` in turn,
/// until a loop's receiver is gone. Runs on loop 0's runtime, and ends
/// with it; the listeners close then.
pub(super) async fn accept_all(listeners: RelayListeners, loops: Vec<UnboundedSender<AcceptedSocket>>) {
    let turns = Rc::new(Turns { loops, next: Cell::new(0) });
    let mut tasks = tokio::task::JoinSet::new();
    let bound = listeners.tcp.iter().filter_map(|l| l.try_clone().and_then(TcpListener::from_std).ok()).map(Bound::Tcp);
    let unix = listeners.unix.iter().filter_map(|(l, _)| l.try_clone().and_then(UnixListener::from_std).ok());
    for listener in bound.chain(unix.map(Bound::Unix)) {
        let turns = turns.clone();
        tasks.spawn_local(async move {
            loop {
                match listener.accept().await {
                    Ok(accepted) => {
                        if !turns.hand_over(accepted) {
                            return;
                        }
                    }
                    Err(_) => tokio::time::sleep(ACCEPT_BACKOFF).await,
                }
            }
        });
    }
    while tasks.join_next().await.is_some() {}
    drop(listeners);
}

/// A listener on loop 0's runtime.
enum Bound {
    Tcp(TcpListener),
    Unix(UnixListener),
}

impl Bound {
    async fn accept(&self) -> io::Result<AcceptedSocket> {
        match self {
            Bound::Tcp(l) => l.accept().await.and_then(|(s, _)| s.into_std()).map(AcceptedSocket::Tcp),
            Bound::Unix(l) => l.accept().await.and_then(|(s, _)| s.into_std()).map(AcceptedSocket::Unix),
        }
    }
}

/// Which loop takes the next connection.
struct Turns {
    loops: Vec<UnboundedSender<AcceptedSocket>>,
    next: Cell<usize>,
}

impl Turns {
    /// False once a loop is gone: the relay is stopping.
    fn hand_over(&self, accepted: AcceptedSocket) -> bool {
        let at = self.next.get();
        self.next.set(at.wrapping_add(1));
        self.loops.get(at % self.loops.len().max(1)).is_some_and(|to| to.send(accepted).is_ok())
    }
}
