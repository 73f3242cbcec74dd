//! decode_packet with a fuzzed expected sequence id and size limit.
//!
//! Input: seq u8, limit u16 (scaled), then the bytes. Checks that a decoded
//! packet re-encodes to exactly the bytes it used, that every shorter prefix
//! is "need more", and that the limit holds.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wirebench_protocol::framing::{decode_packet, encode_packet};
use wirebench_protocol_fuzz::Input;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let seq = input.u8();
    let limit_bits = input.u16();
    // Scale the limit so both tiny limits and "no limit" are reachable.
    let limit = if limit_bits == u16::MAX { usize::MAX } else { usize::from(limit_bits) };
    let bytes = input.rest();
    let Ok(Some(frame)) = decode_packet(bytes, seq, limit) else { return };
    assert!(frame.consumed <= bytes.len());
    assert!(frame.payload.len() <= limit, "payload over the limit");
    let used = &bytes[..frame.consumed];
    let mut again = Vec::new();
    let next = encode_packet(&mut again, seq, &frame.payload);
    assert_eq!(next, frame.next_seq, "sequence ids after re-encoding");
    assert_eq!(again, used, "re-encoded packet differs from the bytes it came from");
    // Any strict prefix of a packet is incomplete, not an error.
    for cut in [0, used.len() / 2, used.len().saturating_sub(1)] {
        if cut < used.len() {
            assert_eq!(decode_packet(&used[..cut], seq, limit), Ok(None), "prefix of {cut} bytes");
        }
    }
});
