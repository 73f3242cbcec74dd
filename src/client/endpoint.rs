//! Where a connection goes: a TCP host and port, or a unix socket path.

use std::fmt;
use std::path::PathBuf;

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
