//! Framing edits: a payload becomes wire bytes with its 4-byte header, and
//! [`FrameEdit`]s lie in that header, cut the payload, add garbage, or
//! stretch it past 16 MiB so that the server must join fragments. Under
//! the compressed protocol, [`WrapEdit`]s then break the compressed packet
//! that carries it.

use wirebench_protocol::buf::WriteExt;
use wirebench_protocol::compress::{CompressedStream, Deflater, COMPRESSED_HEADER_LEN};
use wirebench_protocol::framing::{encode_packet, HEADER_LEN, MAX_FRAGMENT};

use super::spec::{FrameEdit, WrapEdit};

/// Where the payload starts in the framed bytes.
pub const PAYLOAD_AT: usize = HEADER_LEN;

/// Appends `payload` framed with sequence id `seq` (1 for the answer to
/// the greeting, 0 for a command) and `edits` applied. Returns how many
/// payload bytes went out.
pub fn frame_payload(payload: &[u8], seq: u8, edits: &[FrameEdit], out: &mut Vec<u8>) -> usize {
    let mut body = payload.to_vec();
    if edits.contains(&FrameEdit::Huge) {
        body.resize(body.len().max(MAX_FRAGMENT + 64), b' ');
    }
    let mut seq = seq;
    let mut declared: Option<u32> = None;
    let mut sent = body.len();
    for edit in edits {
        match edit {
            FrameEdit::Seq(s) => seq = *s,
            FrameEdit::Length(n) => declared = Some(*n),
            FrameEdit::Truncate { keep, fix_length } => {
                sent = sent.min(*keep as usize);
                if *fix_length {
                    declared = Some(sent as u32);
                } else {
                    declared.get_or_insert(body.len().min(MAX_FRAGMENT) as u32);
                }
            }
            FrameEdit::Garbage(_) | FrameEdit::Huge | FrameEdit::Twice => {}
        }
    }
    let start = out.len();
    let body = body.get(..sent).unwrap_or_default();
    match declared {
        None => {
            encode_packet(out, seq, body);
        }
        Some(len) => {
            out.put_u24(len.min(MAX_FRAGMENT as u32));
            out.put_u8(seq);
            out.put_bytes(body);
        }
    }
    for edit in edits {
        if let FrameEdit::Garbage(bytes) = edit {
            out.put_bytes(bytes);
        }
    }
    if edits.contains(&FrameEdit::Twice) {
        let once = out.get(start..).unwrap_or_default().to_vec();
        out.put_bytes(&once);
    }
    sent
}

/// The compressed side of a session's sending: one stream, one deflater.
#[derive(Debug, Default)]
pub struct Wrapper {
    stream: CompressedStream,
    deflater: Deflater,
}

impl Wrapper {
    /// Appends the packet-stream bytes `plain` as compressed packets, the
    /// first of them broken by `edits`.
    pub fn wrap(&mut self, plain: &[u8], edits: &[WrapEdit], out: &mut Vec<u8>) {
        let start = out.len();
        self.stream.encode(plain, out, &mut self.deflater);
        let Some(packet) = out.get_mut(start..) else { return };
        for edit in edits {
            match edit {
                WrapEdit::Seq(s) => set(packet, 3, &[*s]),
                WrapEdit::PayloadLength(n) => set(packet, 0, &n.to_le_bytes()[..3]),
                WrapEdit::PlainLength(n) => set(packet, 4, &n.to_le_bytes()[..3]),
                WrapEdit::Corrupt(bit) => {
                    let body = packet.len().saturating_sub(COMPRESSED_HEADER_LEN);
                    if body > 0 {
                        let bit = *bit as usize % (body * 8);
                        if let Some(b) = packet.get_mut(COMPRESSED_HEADER_LEN + bit / 8) {
                            *b ^= 1 << (bit % 8);
                        }
                    }
                }
            }
        }
    }
}

fn set(packet: &mut [u8], at: usize, bytes: &[u8]) {
    if let Some(slot) = packet.get_mut(at..at + bytes.len()) {
        slot.copy_from_slice(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_edit_is_a_plain_packet() {
        let mut out = Vec::new();
        assert_eq!(frame_payload(&[0x0e], 0, &[], &mut out), 1);
        assert_eq!(out, [1, 0, 0, 0, 0x0e]);
    }

    #[test]
    fn header_lies_truncation_and_garbage() {
        let mut out = Vec::new();
        let edits = [FrameEdit::Seq(7), FrameEdit::Length(300), FrameEdit::Garbage(vec![0xAA])];
        frame_payload(b"abc", 0, &edits, &mut out);
        assert_eq!(out, [0x2c, 0x01, 0, 7, b'a', b'b', b'c', 0xAA]);
        let mut out = Vec::new();
        frame_payload(b"abcdef", 1, &[FrameEdit::Truncate { keep: 2, fix_length: false }], &mut out);
        assert_eq!(out, [6, 0, 0, 1, b'a', b'b'], "announces 6, sends 2");
        let mut out = Vec::new();
        frame_payload(b"abcdef", 0, &[FrameEdit::Truncate { keep: 2, fix_length: true }, FrameEdit::Twice], &mut out);
        assert_eq!(out, [2, 0, 0, 0, b'a', b'b', 2, 0, 0, 0, b'a', b'b']);
    }

    #[test]
    fn huge_goes_in_fragments_the_server_can_join() {
        let mut out = Vec::new();
        frame_payload(b"\x03SELECT 1", 0, &[FrameEdit::Huge], &mut out);
        let frame = wirebench_protocol::framing::decode_packet(&out, 0, usize::MAX).unwrap().unwrap();
        assert_eq!(frame.consumed, out.len());
        assert!(frame.payload.len() > MAX_FRAGMENT);
        assert!(frame.payload.starts_with(b"\x03SELECT 1  "));
    }

    #[test]
    fn wrap_edits_break_the_compressed_header() {
        let mut plain = Vec::new();
        frame_payload(&[0x0e], 0, &[], &mut plain);
        let mut good = Vec::new();
        Wrapper::default().wrap(&plain, &[], &mut good);
        assert_eq!(good, [5, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0x0e]);
        let mut bad = Vec::new();
        Wrapper::default().wrap(&plain, &[WrapEdit::Seq(9), WrapEdit::PlainLength(1000)], &mut bad);
        assert_eq!(bad[..7], [5, 0, 0, 9, 0xe8, 0x03, 0]);
    }
}
