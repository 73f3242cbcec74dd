//! Packet framing: a 3-byte little-endian payload length and a 1-byte
//! sequence id before every payload. A payload of 0xFFFFFF bytes or more is
//! split into 0xFFFFFF-byte fragments followed by a shorter one, which is
//! empty when the payload is an exact multiple of 0xFFFFFF.
//!
//! Sequence ids: every command starts at 0; each packet, in either
//! direction, takes the next id (wrapping at 255). A server's packets are
//! read with [`decode_answer_packet`], which follows the server's numbering
//! where it departs from that rule, as libmariadb does
//! ([`Deviation::SequenceRenumbered`](crate::tolerance::Deviation)); a
//! client's are read with the strict [`decode_packet`].

use std::borrow::Cow;

use crate::buf::WriteExt;
use crate::error::{ProtocolError, Result};

/// Bytes in a packet header.
pub const HEADER_LEN: usize = 4;
/// The largest payload a single fragment can carry.
pub const MAX_FRAGMENT: usize = 0xFF_FFFF;

/// A packet header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub len: usize,
    pub seq: u8,
}

impl Header {
    /// The header at the start of `buf`, or `None` if fewer than 4 bytes are there.
    pub fn parse(buf: &[u8]) -> Option<Header> {
        match buf {
            [a, b, c, seq, ..] => Some(Header { len: u32::from_le_bytes([*a, *b, *c, 0]) as usize, seq: *seq }),
            _ => None,
        }
    }
}

/// One logical packet found at the start of a buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame<'a> {
    /// The payload: borrowed when it came in one fragment, joined otherwise.
    pub payload: Cow<'a, [u8]>,
    /// Bytes of the input this packet used, headers included.
    pub consumed: usize,
    /// The sequence id the next packet must carry.
    pub next_seq: u8,
    /// Fragments whose sequence id did not follow the one expected, and
    /// whose id was adopted ([`decode_answer_packet`]; 0 from [`decode_packet`]).
    pub seq_jumps: u8,
}

/// Decodes the logical packet at the start of `buf`, joining fragments.
///
/// Returns `Ok(None)` while the packet is incomplete. The size limit is
/// checked as soon as each header is visible, before waiting for the payload,
/// so a peer cannot make the caller buffer more than `max_payload` bytes.
pub fn decode_packet(buf: &[u8], expected_seq: u8, max_payload: usize) -> Result<Option<Frame<'_>>> {
    decode(buf, expected_seq, max_payload, false)
}

/// [`decode_packet`] for a server's packets: a fragment whose sequence id
/// does not follow is accepted and its id adopted (counted in
/// [`Frame::seq_jumps`]), as libmariadb's `ma_real_read` does. The length
/// and size checks stay: they are what keeps the stream in step.
pub fn decode_answer_packet(buf: &[u8], expected_seq: u8, max_payload: usize) -> Result<Option<Frame<'_>>> {
    decode(buf, expected_seq, max_payload, true)
}

fn decode(buf: &[u8], expected_seq: u8, max_payload: usize, adopt_seq: bool) -> Result<Option<Frame<'_>>> {
    let mut pos = 0usize;
    let mut seq = expected_seq;
    let mut seq_jumps = 0u8;
    let mut total = 0usize;
    // First pass: validate headers and find where the packet ends.
    let mut fragments = 0usize;
    loop {
        let Some(rest) = buf.get(pos..) else { return Ok(None) };
        let Some(header) = Header::parse(rest) else { return Ok(None) };
        if header.seq != seq {
            if !adopt_seq {
                return Err(ProtocolError::OutOfSync { expected: seq, got: header.seq });
            }
            seq = header.seq;
            seq_jumps = seq_jumps.saturating_add(1);
        }
        total = total
            .checked_add(header.len)
            .ok_or(ProtocolError::PacketTooLarge { size: usize::MAX, max: max_payload })?;
        if total > max_payload {
            return Err(ProtocolError::PacketTooLarge { size: total, max: max_payload });
        }
        let end = pos + HEADER_LEN + header.len;
        if buf.len() < end {
            return Ok(None);
        }
        pos = end;
        seq = seq.wrapping_add(1);
        fragments += 1;
        if header.len < MAX_FRAGMENT {
            break;
        }
    }
    let payload = if fragments == 1 {
        Cow::Borrowed(buf.get(HEADER_LEN..pos).unwrap_or_default())
    } else {
        let mut joined = Vec::with_capacity(total);
        let mut at = 0usize;
        while at < pos {
            let Some(header) = buf.get(at..).and_then(Header::parse) else { break };
            let start = at + HEADER_LEN;
            joined.extend_from_slice(buf.get(start..start + header.len).unwrap_or_default());
            at = start + header.len;
        }
        Cow::Owned(joined)
    };
    Ok(Some(Frame { payload, consumed: pos, next_seq: seq, seq_jumps }))
}

/// Appends `payload` as one logical packet starting at sequence id `seq`,
/// split into fragments as needed. Returns the next sequence id.
pub fn encode_packet(out: &mut Vec<u8>, seq: u8, payload: &[u8]) -> u8 {
    let mut seq = seq;
    let mut chunks = payload.chunks(MAX_FRAGMENT);
    loop {
        let chunk = chunks.next().unwrap_or_default();
        out.put_u24(chunk.len() as u32);
        out.put_u8(seq);
        out.put_bytes(chunk);
        seq = seq.wrapping_add(1);
        if chunk.len() < MAX_FRAGMENT {
            return seq;
        }
    }
}

/// Reserves a header at the end of `out` and returns the packet's start.
/// Write the payload after it, then call [`finish_packet`].
pub fn start_packet(out: &mut Vec<u8>) -> usize {
    let start = out.len();
    out.put_zeros(HEADER_LEN);
    start
}

/// Back-patches the header of the packet begun at `start`, splitting it into
/// fragments if the payload reached 16 MiB. Returns the next sequence id.
pub fn finish_packet(out: &mut Vec<u8>, start: usize, seq: u8) -> u8 {
    let payload_len = out.len().saturating_sub(start + HEADER_LEN);
    if payload_len < MAX_FRAGMENT {
        let len = (payload_len as u32).to_le_bytes();
        if let Some(header) = out.get_mut(start..start + HEADER_LEN) {
            header.copy_from_slice(&[len[0], len[1], len[2], seq]);
        }
        return seq.wrapping_add(1);
    }
    // Rare: a payload of 16 MiB or more. Re-encode it in fragments.
    let payload = out.split_off(start + HEADER_LEN);
    out.truncate(start);
    encode_packet(out, seq, &payload)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn com_ping_golden() {
        // COM_PING as documented: 01 00 00 00 0e.
        let mut out = Vec::new();
        assert_eq!(encode_packet(&mut out, 0, &[0x0e]), 1);
        assert_eq!(out, [0x01, 0x00, 0x00, 0x00, 0x0e]);
        let frame = decode_packet(&out, 0, 1024).unwrap().unwrap();
        assert_eq!(&*frame.payload, &[0x0e]);
        assert_eq!(frame.consumed, 5);
        assert_eq!(frame.next_seq, 1);
    }

    #[test]
    fn incomplete_is_none() {
        let mut out = Vec::new();
        encode_packet(&mut out, 3, b"hello");
        for cut in 0..out.len() {
            assert_eq!(decode_packet(&out[..cut], 3, 1024), Ok(None), "cut at {cut}");
        }
    }

    #[test]
    fn wrong_sequence_is_an_error() {
        let out = [0x01, 0x00, 0x00, 0x05, 0x00];
        assert_eq!(decode_packet(&out, 1, 1024), Err(ProtocolError::OutOfSync { expected: 1, got: 5 }));
    }

    #[test]
    fn an_answer_out_of_sequence_is_followed() {
        // node-mysql2's OK after a COM_QUERY (seq 0) when its counter stood at 4.
        let out = [0x07, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00];
        let frame = decode_answer_packet(&out, 1, 1024).unwrap().unwrap();
        assert_eq!((frame.consumed, frame.next_seq, frame.seq_jumps), (11, 5, 1));
        let frame = decode_answer_packet(&out, 4, 1024).unwrap().unwrap();
        assert_eq!((frame.next_seq, frame.seq_jumps), (5, 0));
        // A fragment that jumps is followed too; the joined payload is whole.
        let payload = vec![0u8; MAX_FRAGMENT + 1];
        let mut out = Vec::new();
        encode_packet(&mut out, 1, &payload);
        out[MAX_FRAGMENT + HEADER_LEN + 3] = 9;
        let frame = decode_answer_packet(&out, 1, usize::MAX).unwrap().unwrap();
        assert_eq!((frame.payload.len(), frame.next_seq, frame.seq_jumps), (MAX_FRAGMENT + 1, 10, 1));
        // What keeps the stream in step still holds: a size over the limit.
        assert!(decode_answer_packet(&[0, 0, 0x10, 7], 1, 1024).is_err());
    }

    #[test]
    fn too_large_is_refused_before_the_payload_arrives() {
        // Only the header of a 1 MiB packet: refused without waiting for 1 MiB.
        let header = [0x00, 0x00, 0x10, 0x00];
        assert_eq!(
            decode_packet(&header, 0, 64 * 1024),
            Err(ProtocolError::PacketTooLarge { size: 1 << 20, max: 64 * 1024 })
        );
    }

    #[test]
    fn exact_multiple_of_max_fragment_ends_with_an_empty_packet() {
        let payload = vec![0xAB; MAX_FRAGMENT];
        let mut out = Vec::new();
        assert_eq!(encode_packet(&mut out, 0, &payload), 2);
        assert_eq!(out.len(), MAX_FRAGMENT + 2 * HEADER_LEN);
        assert_eq!(&out[MAX_FRAGMENT + HEADER_LEN..], &[0, 0, 0, 1]);
        // Without the trailing empty packet, the payload is not complete yet.
        assert_eq!(decode_packet(&out[..MAX_FRAGMENT + HEADER_LEN], 0, usize::MAX), Ok(None));
        let frame = decode_packet(&out, 0, usize::MAX).unwrap().unwrap();
        assert_eq!(frame.payload.len(), MAX_FRAGMENT);
        assert_eq!(frame.next_seq, 2);
        assert_eq!(frame.consumed, out.len());
    }

    #[test]
    fn large_payload_splits_and_joins() {
        let payload: Vec<u8> = (0..(2 * MAX_FRAGMENT + 10)).map(|i| i as u8).collect();
        let mut out = Vec::new();
        let start = start_packet(&mut out);
        out.extend_from_slice(&payload);
        assert_eq!(finish_packet(&mut out, start, 254), 1, "seq wraps 254, 255, 0 -> next 1");
        assert_eq!(out.len(), payload.len() + 3 * HEADER_LEN);
        let frame = decode_packet(&out, 254, usize::MAX).unwrap().unwrap();
        assert_eq!(&*frame.payload, &payload[..]);
        // The joined size counts against the limit too.
        assert!(matches!(decode_packet(&out, 254, 2 * MAX_FRAGMENT), Err(ProtocolError::PacketTooLarge { .. })));
    }

    #[test]
    fn split_fragment_with_wrong_sequence_is_an_error() {
        let payload = vec![0u8; MAX_FRAGMENT + 1];
        let mut out = Vec::new();
        encode_packet(&mut out, 0, &payload);
        out[MAX_FRAGMENT + HEADER_LEN + 3] = 7;
        assert_eq!(decode_packet(&out, 0, usize::MAX), Err(ProtocolError::OutOfSync { expected: 1, got: 7 }));
    }

    proptest! {
        #[test]
        fn round_trip(payload in proptest::collection::vec(any::<u8>(), 0..4096), seq in any::<u8>()) {
            let mut out = Vec::new();
            let start = start_packet(&mut out);
            out.extend_from_slice(&payload);
            let next = finish_packet(&mut out, start, seq);
            prop_assert_eq!(next, seq.wrapping_add(1));
            let frame = decode_packet(&out, seq, 4096).unwrap().unwrap();
            prop_assert_eq!(&*frame.payload, &payload[..]);
            prop_assert_eq!(frame.consumed, out.len());
        }

        #[test]
        fn never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64), seq in any::<u8>(), max in 0usize..100) {
            let _ = decode_packet(&bytes, seq, max);
            let _ = decode_answer_packet(&bytes, seq, max);
        }
    }
}
