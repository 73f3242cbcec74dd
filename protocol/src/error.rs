//! The protocol error: what went wrong while decoding bytes from the peer or
//! while following the protocol. A server's ERR packet is *not* an error of
//! this kind: it is data ([`crate::response::ErrPacket`]).

use thiserror::Error;

/// A decoding or protocol-state failure. Small and flat, so callers can match
/// on it and tests can compare it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
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
    /// The server lacks a capability this client needs.
    #[error("the server does not offer the {0} capability, which wirebench requires")]
    MissingCapability(&'static str),
    /// The server asked for an authentication plugin this client does not implement.
    #[error("the server asked for authentication plugin {0:?}, which wirebench does not implement")]
    UnsupportedAuthPlugin(String),
    /// An authentication step that would expose the password over an insecure transport.
    #[error("{0}: refusing to send the password over an unencrypted TCP connection; use TLS or a unix socket")]
    InsecureTransport(&'static str),
    /// An authentication step failed on the client side (bad key, bad nonce, ...).
    #[error("authentication failed on the client side: {0}")]
    Auth(String),
    /// The server asked to read a local file (LOAD DATA LOCAL INFILE); wirebench never sends files.
    #[error("the server requested a LOCAL INFILE transfer of {0:?}; wirebench refuses to send local files")]
    LocalInfileRefused(String),
    /// A message arrived that the current protocol state does not expect.
    #[error("unexpected {got} while {state}")]
    UnexpectedMessage { state: &'static str, got: &'static str },
    /// A prepared-statement parameter index past the statement's parameter count.
    #[error("parameter index {index} is out of range: the statement has {count} parameters")]
    ParamIndex { index: usize, count: usize },
    /// A value that does not fit the pre-encoded parameter slot it was given to.
    #[error("parameter {index} is a {slot} slot and cannot take {value}")]
    ParamMismatch { index: usize, slot: &'static str, value: &'static str },
}

pub type Result<T, E = ProtocolError> = core::result::Result<T, E>;
