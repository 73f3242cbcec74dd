//! Where a connection goes: a TCP host and port, or a unix socket path;
//! and how a run's connections are spread over the servers it names.

use std::fmt;
use std::io;
use std::net::ToSocketAddrs;
use std::path::PathBuf;

use socket2::SockAddr;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Endpoint {
    Tcp { host: String, port: u16 },
    Unix(PathBuf),
}

impl Endpoint {
    pub fn tcp(host: impl Into<String>, port: u16) -> Self {
        Endpoint::Tcp { host: host.into(), port }
    }

    pub fn unix(path: impl Into<PathBuf>) -> Self {
        Endpoint::Unix(path.into())
    }

    /// A unix socket never leaves the machine, so the server treats it as a
    /// secure transport (caching_sha2 full authentication may send the
    /// password in clear over it).
    pub fn is_secure_transport(&self) -> bool {
        matches!(self, Endpoint::Unix(_))
    }

    /// Whether the server is on this host, found without connecting to it:
    /// a unix socket, or a TCP host that resolves to a loopback address or
    /// to the address this host would send to it from (what a UDP socket
    /// "connected" to it picks: no packet is sent). A name that does not
    /// resolve counts as this host, the cautious guess for sharing cores.
    pub fn is_on_this_host(&self) -> bool {
        let Endpoint::Tcp { host, port } = self else { return true };
        let resolved = std::net::ToSocketAddrs::to_socket_addrs(&(host.as_str(), *port));
        // The connection goes to the first address the name resolves to.
        let Some(address) = resolved.ok().and_then(|mut addresses| addresses.next()) else { return true };
        address.ip().is_loopback() || source_address(address) == Some(address.ip())
    }

    /// The name TLS checks the server's certificate against and sends as
    /// SNI: the TCP host; `localhost` over a unix socket, as libmysqlclient
    /// does.
    /// The address to connect to: a unix socket's path, or the first
    /// address a TCP host resolves to (looked up now, blocking: for
    /// connections opened later on a loop's own readiness, which cannot
    /// wait for a lookup).
    pub fn resolve(&self) -> io::Result<SockAddr> {
        match self {
            Endpoint::Unix(path) => SockAddr::unix(path),
            Endpoint::Tcp { host, port } => {
                let first = (host.as_str(), *port).to_socket_addrs()?.next();
                let address = first.ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no address found"))?;
                Ok(SockAddr::from(address))
            }
        }
    }

    pub fn tls_server_name(&self) -> &str {
        match self {
            Endpoint::Tcp { host, .. } => host,
            Endpoint::Unix(_) => "localhost",
        }
    }
}

/// The address this host sends to `to` from.
fn source_address(to: std::net::SocketAddr) -> Option<std::net::IpAddr> {
    let unspecified: std::net::SocketAddr = match to {
        std::net::SocketAddr::V4(_) => (std::net::Ipv4Addr::UNSPECIFIED, 0).into(),
        std::net::SocketAddr::V6(_) => (std::net::Ipv6Addr::UNSPECIFIED, 0).into(),
    };
    let socket = std::net::UdpSocket::bind(unspecified).ok()?;
    socket.connect(to).ok()?;
    socket.local_addr().ok().map(|local| local.ip())
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Endpoint::Tcp { host, port } if host.contains(':') => write!(f, "[{host}]:{port}"),
            Endpoint::Tcp { host, port } => write!(f, "{host}:{port}"),
            Endpoint::Unix(path) => write!(f, "unix:{}", path.display()),
        }
    }
}

/// The servers a run's connections go to (`--mysql-host`, `--mysql-port`,
/// `--mysql-socket`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerAddresses {
    /// Never empty.
    pub hosts: Vec<String>,
    /// Never empty.
    pub ports: Vec<u16>,
    /// When not empty, every connection uses these and `hosts`/`ports` are
    /// not used.
    pub sockets: Vec<PathBuf>,
    /// The unix socket host `localhost` means (`MYSQL_UNIX_PORT`, or an
    /// option file's `socket`); `None` for libmysqlclient's default,
    /// [`DEFAULT_LOCALHOST_SOCKET`].
    pub localhost_socket: Option<PathBuf>,
}

/// The unix socket libmysqlclient (Debian's libmariadb) uses for host
/// `localhost` when nothing names another.
pub const DEFAULT_LOCALHOST_SOCKET: &str = "/run/mysqld/mysqld.sock";

impl Default for ServerAddresses {
    /// sysbench's: `localhost`, port 3306.
    fn default() -> Self {
        ServerAddresses {
            hosts: vec!["localhost".to_owned()],
            ports: vec![3306],
            sockets: Vec::new(),
            localhost_socket: None,
        }
    }
}

impl ServerAddresses {
    /// Where the `n`th connection (in connection order, from 0) goes, as
    /// sysbench's `mysql_drv_connect` assigns them: sockets round-robin when
    /// any are given, else every port of the first host, then every port of
    /// the next host, and around again. Host `localhost` stays TCP here:
    /// [`connect_to`](Self::connect_to) is where libmysqlclient's reading
    /// of it applies.
    pub fn endpoint(&self, n: usize) -> Endpoint {
        if !self.sockets.is_empty() {
            let path = self.sockets.get(n % self.sockets.len()).cloned().unwrap_or_default();
            return Endpoint::unix(path);
        }
        let ports = self.ports.len().max(1);
        let port = self.ports.get(n % ports).copied().unwrap_or(3306);
        let host_index = (n / ports) % self.hosts.len().max(1);
        let host = self.hosts.get(host_index).cloned().unwrap_or_else(|| "localhost".to_owned());
        Endpoint::tcp(host, port)
    }

    /// Where the `n`th connection connects: its [`endpoint`](Self::endpoint),
    /// except that host `localhost` means its unix socket
    /// ([`localhost_socket`](Self::localhost_socket)) when that exists, as
    /// libmysqlclient reads it (and sysbench's default `--mysql-host`
    /// relies on).
    pub fn connect_to(&self, n: usize) -> Endpoint {
        let socket = self.localhost_socket.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_LOCALHOST_SOCKET));
        match self.endpoint(n) {
            Endpoint::Tcp { host, .. } if host == "localhost" && socket.exists() => Endpoint::unix(socket),
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_is_on_this_host_over_a_socket_or_a_local_address() {
        assert!(Endpoint::unix("/run/mysqld/mysqld.sock").is_on_this_host());
        assert!(Endpoint::tcp("127.0.0.1", 3306).is_on_this_host());
        assert!(Endpoint::tcp("localhost", 3306).is_on_this_host());
        // TEST-NET-1 (RFC 5737) is never this host's.
        assert!(!Endpoint::tcp("192.0.2.1", 3306).is_on_this_host());
        // This host's own address, as it would send to another host from.
        if let Some(own) = source_address((std::net::Ipv4Addr::new(192, 0, 2, 1), 9).into()) {
            assert!(Endpoint::tcp(own.to_string(), 3306).is_on_this_host(), "{own}");
        }
    }
}
