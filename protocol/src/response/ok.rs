//! The OK packet, and the 0xFE-headed OK that ends a result set when
//! CLIENT_DEPRECATE_EOF is in force.

use crate::buf::{Reader, WriteExt};
use crate::constants::{Capabilities, StatusFlags};
use crate::error::{ProtocolError, Result};
use crate::framing::{finish_packet, start_packet};

pub const OK_HEADER: u8 = 0x00;
/// Header of EOF packets, and of the OK that replaces them under DEPRECATE_EOF.
pub const EOF_HEADER: u8 = 0xFE;

/// A borrowed view of an OK packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OkPacket<'a> {
    pub affected_rows: u64,
    pub last_insert_id: u64,
    pub status: StatusFlags,
    pub warnings: u16,
    /// Human-readable info ("Rows matched: 1  Changed: 1  Warnings: 0").
    pub info: &'a [u8],
    /// Session state change data, present with SESSION_TRACK and SESSION_STATE_CHANGED.
    pub session_state: &'a [u8],
}

impl<'a> OkPacket<'a> {
    /// Parses an OK payload whose header is 0x00 or 0xFE, under the negotiated capabilities.
    pub fn parse(payload: &'a [u8], caps: Capabilities) -> Result<Self> {
        let mut r = Reader::new(payload);
        let header = r.u8("OK header")?;
        if header != OK_HEADER && header != EOF_HEADER {
            return Err(ProtocolError::BadHeader { context: "OK packet", byte: header });
        }
        let affected_rows = r.lenenc_int("OK affected rows")?;
        let last_insert_id = r.lenenc_int("OK last insert id")?;
        let mut ok = OkPacket { affected_rows, last_insert_id, ..OkPacket::default() };
        if caps.contains(Capabilities::PROTOCOL_41) {
            ok.status = StatusFlags(r.u16("OK status flags")?);
            ok.warnings = r.u16("OK warnings")?;
        } else if caps.contains(Capabilities::TRANSACTIONS) {
            ok.status = StatusFlags(r.u16("OK status flags")?);
        }
        if caps.contains(Capabilities::SESSION_TRACK) {
            // Servers omit the info string entirely when it is empty.
            if !r.is_empty() {
                ok.info = r.lenenc_bytes("OK info")?;
            }
            if ok.status.contains(StatusFlags::SESSION_STATE_CHANGED) {
                ok.session_state = r.lenenc_bytes("OK session state")?;
            }
        } else if !r.is_empty() {
            // The documentation says string<EOF>, but MariaDB and MySQL write
            // the info length-encoded (net_store_data) and libmysql reads it so.
            // Take the length-encoded form when it spans exactly the rest.
            let rest = r.peek_rest();
            ok.info = match r.lenenc_bytes("OK info") {
                Ok(info) if r.is_empty() => info,
                _ => rest,
            };
        }
        Ok(ok)
    }

    /// Appends the payload with `header` (0x00, or 0xFE for the OK that ends
    /// a result set under DEPRECATE_EOF), laid out as [`OkPacket::parse`] reads it.
    pub fn encode_payload(&self, header: u8, caps: Capabilities, out: &mut Vec<u8>) {
        out.put_u8(header);
        out.put_lenenc_int(self.affected_rows);
        out.put_lenenc_int(self.last_insert_id);
        if caps.contains(Capabilities::PROTOCOL_41) {
            out.put_u16(self.status.0);
            out.put_u16(self.warnings);
        } else if caps.contains(Capabilities::TRANSACTIONS) {
            out.put_u16(self.status.0);
        }
        if caps.contains(Capabilities::SESSION_TRACK) {
            let state_changed = self.status.contains(StatusFlags::SESSION_STATE_CHANGED);
            if !self.info.is_empty() || state_changed {
                out.put_lenenc_bytes(self.info);
            }
            if state_changed {
                out.put_lenenc_bytes(self.session_state);
            }
        } else if !self.info.is_empty() {
            out.put_lenenc_bytes(self.info);
        }
    }

    /// Appends the whole packet with sequence id `seq`; returns the next id.
    pub fn encode(&self, header: u8, caps: Capabilities, seq: u8, out: &mut Vec<u8>) -> u8 {
        let start = start_packet(out);
        self.encode_payload(header, caps, out);
        finish_packet(out, start, seq)
    }
}

/// The legacy EOF packet (0xFE, payload shorter than 9 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EofPacket {
    pub warnings: u16,
    pub status: StatusFlags,
}

impl EofPacket {
    pub fn parse(payload: &[u8], caps: Capabilities) -> Result<Self> {
        let mut r = Reader::new(payload);
        let header = r.u8("EOF header")?;
        if header != EOF_HEADER {
            return Err(ProtocolError::BadHeader { context: "EOF packet", byte: header });
        }
        if !caps.contains(Capabilities::PROTOCOL_41) {
            return Ok(EofPacket::default());
        }
        Ok(EofPacket { warnings: r.u16("EOF warnings")?, status: StatusFlags(r.u16("EOF status flags")?) })
    }

    /// Appends the whole packet with sequence id `seq`; returns the next id.
    pub fn encode(&self, caps: Capabilities, seq: u8, out: &mut Vec<u8>) -> u8 {
        let start = start_packet(out);
        out.put_u8(EOF_HEADER);
        if caps.contains(Capabilities::PROTOCOL_41) {
            out.put_u16(self.warnings);
            out.put_u16(self.status.0);
        }
        finish_packet(out, start, seq)
    }
}

/// Whether a packet that starts with 0xFE ends a result set (EOF, or OK under
/// DEPRECATE_EOF) rather than being a text row whose first value has an
/// 8-byte length prefix. Such a row is at least 2^24 + 9 bytes, so its first
/// fragment is always 0xFFFFFF bytes long; a terminator is shorter.
pub fn is_result_terminator(payload: &[u8]) -> bool {
    payload.first() == Some(&EOF_HEADER) && payload.len() < crate::framing::MAX_FRAGMENT
}

/// Reads the EOF that ends a block of definitions when DEPRECATE_EOF is
/// off; any other packet there is a [`ProtocolError::BadHeader`] in `context`.
pub(crate) fn expect_eof(payload: &[u8], caps: Capabilities, context: &'static str) -> Result<()> {
    if !is_result_terminator(payload) {
        return Err(ProtocolError::BadHeader { context, byte: payload.first().copied().unwrap_or(0) });
    }
    EofPacket::parse(payload, caps).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAPS: Capabilities = Capabilities::PROTOCOL_41.union(Capabilities::TRANSACTIONS);

    #[test]
    fn documented_example() {
        // From the protocol documentation's OK_Packet page:
        // 07 00 00 02 00 00 00 02 00 00 00
        let ok = OkPacket::parse(&[0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00], CAPS).unwrap();
        assert_eq!(ok.affected_rows, 0);
        assert_eq!(ok.status, StatusFlags::AUTOCOMMIT);
        assert_eq!(ok.warnings, 0);
        assert!(ok.info.is_empty());
    }

    #[test]
    fn update_with_info() {
        let mut p = vec![0x00, 0x01, 0xFC, 0x10, 0x27, 0x03, 0x00, 0x02, 0x00];
        p.extend_from_slice(b"Rows matched: 1  Changed: 1  Warnings: 0");
        let ok = OkPacket::parse(&p, CAPS).unwrap();
        assert_eq!((ok.affected_rows, ok.last_insert_id, ok.warnings), (1, 10000, 2));
        assert_eq!(ok.status, StatusFlags(3));
        assert_eq!(ok.info, b"Rows matched: 1  Changed: 1  Warnings: 0");
    }

    #[test]
    fn mariadb_update_info_is_length_encoded() {
        // Captured from MariaDB 10.11 without SESSION_TRACK: UPDATE ... matching one row.
        let mut p = vec![0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x28];
        p.extend_from_slice(b"Rows matched: 1  Changed: 0  Warnings: 0");
        let ok = OkPacket::parse(&p, CAPS).unwrap();
        assert_eq!(ok.info, b"Rows matched: 1  Changed: 0  Warnings: 0");
        let mut out = Vec::new();
        ok.encode_payload(OK_HEADER, CAPS, &mut out);
        assert_eq!(out, p);
    }

    #[test]
    fn session_track_form() {
        let caps = CAPS | Capabilities::SESSION_TRACK;
        // status 0x4002: AUTOCOMMIT | SESSION_STATE_CHANGED, info "", state 3 bytes.
        let p = [0x00, 0x00, 0x00, 0x02, 0x40, 0x00, 0x00, 0x00, 0x03, 0x01, 0x01, b'x'];
        let ok = OkPacket::parse(&p, caps).unwrap();
        assert_eq!(ok.session_state, &[0x01, 0x01, b'x']);
        // Without info at all.
        let ok = OkPacket::parse(&[0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00], caps).unwrap();
        assert!(ok.info.is_empty());
    }

    #[test]
    fn deprecate_eof_terminator() {
        // 0xFE-headed OK as MariaDB sends it after a result set under DEPRECATE_EOF.
        let p = [0xFE, 0x00, 0x00, 0x22, 0x00, 0x00, 0x00];
        assert!(is_result_terminator(&p));
        let ok = OkPacket::parse(&p, CAPS).unwrap();
        assert_eq!(ok.status, StatusFlags(0x22));
    }

    #[test]
    fn legacy_eof() {
        let eof = EofPacket::parse(&[0xFE, 0x00, 0x00, 0x02, 0x00], CAPS).unwrap();
        assert_eq!(eof, EofPacket { warnings: 0, status: StatusFlags::AUTOCOMMIT });
        assert_eq!(EofPacket::parse(&[0xFE, 0x00], CAPS), Err(ProtocolError::UnexpectedEof("EOF warnings")));
    }

    #[test]
    fn encoders_write_what_the_parsers_read() {
        let mut out = Vec::new();
        let ok = OkPacket { status: StatusFlags::AUTOCOMMIT, ..OkPacket::default() };
        assert_eq!(ok.encode(OK_HEADER, CAPS, 2, &mut out), 3);
        // The documentation's OK_Packet example.
        assert_eq!(out, [0x07, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00]);
        out.clear();
        let eof = EofPacket { warnings: 0, status: StatusFlags::AUTOCOMMIT };
        assert_eq!(eof.encode(CAPS, 5, &mut out), 6);
        // The documentation's EOF_Packet example.
        assert_eq!(out, [0x05, 0x00, 0x00, 0x05, 0xFE, 0x00, 0x00, 0x02, 0x00]);
        let track = CAPS | Capabilities::SESSION_TRACK;
        for (ok, caps) in [
            (OkPacket { affected_rows: 300, last_insert_id: 1 << 40, warnings: 7, ..OkPacket::default() }, CAPS),
            (OkPacket { affected_rows: 300, last_insert_id: 1 << 40, warnings: 7, ..OkPacket::default() }, track),
            (OkPacket { info: b"Rows matched: 1", ..OkPacket::default() }, CAPS),
            (OkPacket { info: b"Rows matched: 1", ..OkPacket::default() }, track),
            (OkPacket { status: StatusFlags(0x4002), session_state: b"\x01\x01x", ..OkPacket::default() }, track),
        ] {
            let mut p = Vec::new();
            ok.encode_payload(EOF_HEADER, caps, &mut p);
            assert_eq!(OkPacket::parse(&p, caps), Ok(ok));
        }
    }

    #[test]
    fn short_and_wrong_packets() {
        assert!(matches!(OkPacket::parse(&[0x01], CAPS), Err(ProtocolError::BadHeader { .. })));
        assert_eq!(OkPacket::parse(&[0x00], CAPS), Err(ProtocolError::UnexpectedEof("OK affected rows")));
        assert_eq!(
            OkPacket::parse(&[0x00, 0x00, 0x00, 0x02], CAPS),
            Err(ProtocolError::UnexpectedEof("OK status flags"))
        );
    }
}
