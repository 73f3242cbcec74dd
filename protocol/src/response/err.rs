//! The ERR packet: `0xFF`, error code, `#` + SQLSTATE (protocol 4.1), message.
//!
//! An ERR sent before the greeting (e.g. "Too many connections", "Host is
//! blocked") has no SQLSTATE marker; neither does one from a pre-4.1 server.

use std::fmt;

use crate::buf::{Reader, WriteExt};
use crate::error::{ProtocolError, Result};
use crate::framing::{finish_packet, start_packet};
use crate::server_text::ServerText;

pub const ERR_HEADER: u8 = 0xFF;

/// A borrowed view of an ERR packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrPacket<'a> {
    pub code: u16,
    /// The 5-character SQLSTATE, when the packet carries one.
    pub sql_state: Option<[u8; 5]>,
    pub message: &'a [u8],
}

impl<'a> ErrPacket<'a> {
    /// Parses an ERR payload (header byte included). The SQLSTATE is read
    /// whenever the `#` marker is there, so the same function handles the
    /// pre-handshake form.
    pub fn parse(payload: &'a [u8]) -> Result<Self> {
        let mut r = Reader::new(payload);
        let header = r.u8("ERR header")?;
        if header != ERR_HEADER {
            return Err(ProtocolError::BadHeader { context: "ERR packet", byte: header });
        }
        let code = r.u16("ERR code")?;
        let sql_state = if r.peek_u8() == Some(b'#') && r.remaining() >= 6 {
            r.skip(1, "SQLSTATE marker")?;
            Some(r.array::<5>("SQLSTATE")?)
        } else {
            None
        };
        Ok(ErrPacket { code, sql_state, message: r.rest() })
    }

    /// Appends the whole packet with sequence id `seq`; returns the next id.
    pub fn encode(&self, seq: u8, out: &mut Vec<u8>) -> u8 {
        let start = start_packet(out);
        out.put_u8(ERR_HEADER);
        out.put_u16(self.code);
        if let Some(state) = &self.sql_state {
            out.put_u8(b'#');
            out.put_bytes(state);
        }
        out.put_bytes(self.message);
        finish_packet(out, start, seq)
    }

    pub fn to_owned(&self) -> ServerError {
        ServerError {
            code: self.code,
            sql_state: self.sql_state,
            message: String::from_utf8_lossy(self.message).into_owned(),
        }
    }
}

/// A server error as data: the server's own code, SQLSTATE and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerError {
    pub code: u16,
    pub sql_state: Option<[u8; 5]>,
    pub message: String,
}

impl ServerError {
    pub fn sql_state_str(&self) -> Option<&str> {
        self.sql_state.as_ref().and_then(|s| std::str::from_utf8(s).ok())
    }
}

impl fmt::Display for ServerError {
    /// The mysql client's form: `ERROR 1045 (28000): Access denied ...`,
    /// the message made safe to print ([`ServerText`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let message = ServerText(&self.message);
        match self.sql_state_str().map(ServerText) {
            Some(state) => write!(f, "ERROR {} ({state}): {message}", self.code),
            None => write!(f, "ERROR {}: {message}", self.code),
        }
    }
}

impl std::error::Error for ServerError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documented_example() {
        // From the protocol documentation's ERR_Packet page:
        // ff 48 04 23 48 59 30 30 30 4e 6f 20 74 61 62 6c 65 73 20 75 73 65 64
        let payload = b"\xff\x48\x04#HY000No tables used";
        let err = ErrPacket::parse(payload).unwrap();
        assert_eq!(err.code, 1096);
        assert_eq!(err.sql_state, Some(*b"HY000"));
        assert_eq!(err.message, b"No tables used");
        assert_eq!(err.to_owned().to_string(), "ERROR 1096 (HY000): No tables used");
        let mut out = Vec::new();
        assert_eq!(err.encode(1, &mut out), 2);
        assert_eq!(&out[..4], [0x17, 0x00, 0x00, 0x01]);
        assert_eq!(&out[4..], payload);
    }

    #[test]
    fn pre_handshake_error_has_no_sqlstate() {
        // What a server sends instead of a greeting when it is full: 1040, no '#'.
        let payload = b"\xff\x10\x04Too many connections";
        let err = ErrPacket::parse(payload).unwrap();
        assert_eq!(err.code, 1040);
        assert_eq!(err.sql_state, None);
        assert_eq!(err.message, b"Too many connections");
        assert_eq!(err.to_owned().to_string(), "ERROR 1040: Too many connections");
    }

    #[test]
    fn short_and_wrong_packets() {
        assert_eq!(ErrPacket::parse(b""), Err(ProtocolError::UnexpectedEof("ERR header")));
        assert_eq!(ErrPacket::parse(b"\xff\x10"), Err(ProtocolError::UnexpectedEof("ERR code")));
        assert!(matches!(ErrPacket::parse(b"\x00\x00\x00"), Err(ProtocolError::BadHeader { .. })));
        // A '#' without 5 state bytes is message text.
        let err = ErrPacket::parse(b"\xff\x01\x00#abc").unwrap();
        assert_eq!((err.sql_state, err.message), (None, &b"#abc"[..]));
    }
}
