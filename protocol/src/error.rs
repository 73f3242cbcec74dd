//! The crate's errors, by whose fault they are:
//!
//! - [`ProtocolError`]: the peer's bytes are wrong, or the peer asks for
//!   something wirebench refuses. Decoders return it.
//! - [`UsageError`]: the caller asked for something the API cannot do: a
//!   parameter that does not exist, a value an encoder cannot encode, a
//!   state machine driven out of order. Encoders and setters return it.
//! - [`CodecError`]: either, from the state machines ([`ClientHandshake`],
//!   [`ResponseReader`], [`ResultSetDecoder`], [`PrepareResponse`]), which
//!   the peer can derail and the caller can drive out of order.
//!
//! A server's ERR packet is none of these: it is data
//! ([`crate::response::ErrPacket`]).
//!
//! [`ClientHandshake`]: crate::handshake::ClientHandshake
//! [`ResponseReader`]: crate::response::ResponseReader
//! [`ResultSetDecoder`]: crate::response::ResultSetDecoder
//! [`PrepareResponse`]: crate::response::PrepareResponse

use thiserror::Error;

use crate::constants::ColumnType;
use crate::server_text::ServerText;

/// The peer broke the protocol: a decoding or protocol-state failure. Small
/// and flat, so callers can match on it and tests can compare it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ProtocolError {
    /// A field ran past the end of its packet.
    #[error("packet ended early while reading {0}")]
    UnexpectedEof(&'static str),
    /// The peer announced a packet (or a joined multi-part payload) larger than allowed.
    #[error("packet of {size} bytes exceeds the limit of {max} bytes")]
    PacketTooLarge { size: usize, max: usize },
    /// A packet arrived with the wrong sequence id.
    #[error("packets out of order: expected sequence id {expected}, got {got}")]
    OutOfSync { expected: u8, got: u8 },
    /// The first byte of a packet is not one this message can start with.
    #[error("unexpected packet header 0x{byte:02x} in {context}")]
    BadHeader { context: &'static str, byte: u8 },
    /// A field holds a value the protocol does not allow.
    #[error("malformed {0}")]
    Malformed(&'static str),
    /// Bytes were left over after a message that should have used them all.
    #[error("{0} has {1} unexpected trailing bytes")]
    TrailingBytes(&'static str, usize),
    /// The server speaks a handshake protocol version other than 10.
    #[error("unsupported handshake protocol version {0} (only version 10 is spoken)")]
    UnsupportedProtocolVersion(u8),
    /// The greeting carries only the 8-byte scramble of MySQL before 4.1
    /// (mysql_old_password): libmariadb would fall back to that broken hash
    /// unless told `MYSQL_SECURE_AUTH`; wirebench always refuses it.
    #[error(
        "the server's greeting carries only the 8-byte pre-4.1 scramble (mysql_old_password, MySQL 4.0 and \
         older): wirebench speaks 4.1 authentication only, as libmariadb does under MYSQL_SECURE_AUTH"
    )]
    Pre41Scramble,
    /// The server lacks a capability this client needs.
    #[error("the server does not offer the {0} capability, which wirebench requires")]
    MissingCapability(&'static str),
    /// The server asked for an authentication plugin this client does not implement.
    #[error("the server asked for authentication plugin \"{}\", which wirebench does not implement", ServerText(.0))]
    UnsupportedAuthPlugin(String),
    /// An authentication step that would expose the password over an insecure transport.
    #[error("{0}: refusing to send the password over an unencrypted TCP connection; use TLS or a unix socket")]
    InsecureTransport(&'static str),
    /// Full authentication (caching_sha2_password, sha256_password) over
    /// unencrypted TCP with no known server key, and asking the server for
    /// it is not allowed ([`HandshakeConfig::get_server_public_key`]): the
    /// answer could come from anyone. libmysqlclient's error 2061.
    ///
    /// [`HandshakeConfig::get_server_public_key`]: crate::handshake::HandshakeConfig::get_server_public_key
    #[error(
        "authentication plugin '{0}' reported error: Authentication requires secure connection (error 2061): over \
         unencrypted TCP its password goes RSA-encrypted, and the server's public key is neither given nor allowed \
         to be fetched from whoever answers; give the key, allow fetching it, or use TLS or a unix socket"
    )]
    PublicKeyRequired(&'static str),
    /// An authentication step failed on the client side (bad key, bad nonce, ...).
    #[error("authentication failed on the client side: {0}")]
    Auth(String),
    /// The server asked to read a local file (LOAD DATA LOCAL INFILE); wirebench never sends files.
    #[error("the server requested a LOCAL INFILE transfer of \"{}\"; wirebench refuses to send local files", ServerText(.0))]
    LocalInfileRefused(String),
    /// A message arrived that the current protocol state does not expect.
    #[error("unexpected {got} while {state}")]
    UnexpectedMessage { state: &'static str, got: &'static str },
}

/// The caller misused the API. The peer has nothing to do with it: the same
/// call fails the same way against any server.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum UsageError {
    /// A prepared-statement parameter index past the statement's parameter count.
    #[error("parameter index {index} is out of range: the statement has {count} parameters")]
    ParamIndex { index: usize, count: usize },
    /// A value that does not fit the pre-encoded parameter slot it was given to.
    #[error("parameter {index} is a {slot} slot and cannot take {value}")]
    ParamMismatch { index: usize, slot: &'static str, value: &'static str },
    /// An `ExecuteTemplate` whose packet would need more than one frame.
    #[error(
        "an execute template of {size} bytes exceeds the limit of {max} bytes (one packet); \
         encode a statement this large with encode_execute"
    )]
    TemplateTooLarge { size: usize, max: usize },
    /// A field sent NUL-terminated that contains a NUL byte.
    #[error("the {0} contains a NUL byte, which the protocol cannot send in it; remove the NUL")]
    NulInField(&'static str),
    /// An auth response longer than its 1-byte length prefix can say, and
    /// no PLUGIN_AUTH_LENENC_CLIENT_DATA to send it length-encoded.
    #[error(
        "an auth response of {len} bytes needs the PLUGIN_AUTH_LENENC_CLIENT_DATA capability \
         (without it, 255 bytes at most)"
    )]
    AuthResponseTooLong { len: usize },
    /// A row to encode with a value count other than its column count.
    #[error("a row of {values} values cannot go under {columns} columns: give one value per column")]
    RowLength { values: usize, columns: usize },
    /// A row value to encode that its column's type cannot carry.
    #[error("row value {index} does not fit its {column_type:?} column: give a value of the column's type and width")]
    RowValue { index: usize, column_type: ColumnType },
    /// A state machine called in a state that does not take the call.
    #[error("{call} called while {state}: {remedy}")]
    OutOfOrder { call: &'static str, state: &'static str, remedy: &'static str },
}

/// The error of a call that can fail both ways: the peer broke the
/// protocol, or the caller drove the state machine out of order.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum CodecError {
    #[error(transparent)]
    Protocol(#[from] ProtocolError),
    #[error(transparent)]
    Usage(#[from] UsageError),
}

pub type Result<T, E = ProtocolError> = core::result::Result<T, E>;
