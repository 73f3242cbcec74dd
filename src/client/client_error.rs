//! What can go wrong on a connection, always with the address it concerns.

use std::io;
use std::time::Duration;

use thiserror::Error;
use wirebench_protocol::response::ServerError;
use wirebench_protocol::{CodecError, ProtocolError};

use super::Endpoint;
use crate::transport::tls::TlsStartError;
use crate::transport::TransportError;

#[derive(Debug, Error)]
pub enum ClientError {
    /// The server answered with an ERR packet: its own code, SQLSTATE and message.
    #[error("{endpoint}: {error}")]
    Server { endpoint: Endpoint, error: ServerError },
    /// The socket failed (refused, reset, ...).
    #[error("{endpoint}: {source}")]
    Io { endpoint: Endpoint, source: io::Error },
    /// A step did not complete in time.
    #[error("{endpoint}: {what} timed out after {after:?}")]
    Timeout { endpoint: Endpoint, what: &'static str, after: Duration },
    /// The server closed the connection; `mid_packet` when it did so inside a packet.
    #[error("{endpoint}: the server closed the connection{}", if *mid_packet { " in the middle of a packet" } else { "" })]
    Closed { endpoint: Endpoint, mid_packet: bool },
    /// The server's bytes broke the protocol.
    #[error("{endpoint}: protocol error: {source}")]
    Protocol { endpoint: Endpoint, source: ProtocolError },
    /// The layer between the socket and the packet stream (compression,
    /// TLS) failed.
    #[error("{endpoint}: {source}")]
    Transport { endpoint: Endpoint, source: TransportError },
    /// TLS could not be set up: not offered, the handshake failed, a
    /// certificate was refused. The message says why and what to do.
    #[error("{endpoint}: {message}")]
    Tls { endpoint: Endpoint, message: String },
    /// The connection's TLS session could not start (a host name
    /// VERIFY_IDENTITY cannot check, ...).
    #[error("{endpoint}: {source}")]
    TlsStart { endpoint: Endpoint, source: TlsStartError },
    /// Full authentication over plain TCP with no server key to encrypt the
    /// password to, and none to be fetched (libmysqlclient's error 2061).
    #[error(
        "{endpoint}: error 2061: authentication plugin '{plugin}' reported error: Authentication requires secure \
         connection. Over unencrypted TCP it would encrypt the password to the RSA key of whoever answers; give \
         --mysql-server-public-key-path=FILE (the server's public key, PEM), or --mysql-get-server-public-key to \
         trust the key the server sends, or connect with --mysql-ssl or over --mysql-socket (see docs/tls.md)"
    )]
    InsecureAuth { endpoint: Endpoint, plugin: &'static str },
    /// The server does not offer CLIENT_CONNECT_WITH_DB, so the database
    /// was selected with COM_INIT_DB after the login (as libmariadb does),
    /// and the server refused that with an ERR.
    #[error(
        "{endpoint}: the server does not take the database in the login (no CLIENT_CONNECT_WITH_DB), so it was \
         selected with COM_INIT_DB after it, and the server refused database '{database}': {error}; create that \
         database on the server, or name one it has"
    )]
    SelectDatabase { endpoint: Endpoint, database: String, error: ServerError },
    /// The caller misused the API (wrong parameter count, ...).
    #[error("{endpoint}: {message}")]
    Usage { endpoint: Endpoint, message: String },
}

impl ClientError {
    /// The codec's error: the server broke the protocol
    /// ([`ClientError::Protocol`]), or this client misused the codec
    /// ([`ClientError::Usage`]).
    pub(crate) fn from_codec(endpoint: Endpoint, error: CodecError) -> Self {
        match error {
            CodecError::Protocol(ProtocolError::PublicKeyRequired(plugin)) => {
                ClientError::InsecureAuth { endpoint, plugin }
            }
            CodecError::Protocol(source) => ClientError::Protocol { endpoint, source },
            // Misuse, or a kind of failure this client does not know yet:
            // either way not the server's doing.
            other => ClientError::Usage { endpoint, message: other.to_string() },
        }
    }

    /// The server's error, when this is one.
    pub fn server_error(&self) -> Option<&ServerError> {
        match self {
            ClientError::Server { error, .. } | ClientError::SelectDatabase { error, .. } => Some(error),
            _ => None,
        }
    }
}
