//! The compressed protocol's stream decoder over arbitrary bytes.
//!
//! Input: a parameter byte (bit 0: a command was sent first, so answers
//! start at compressed id 1), two split points, then the wire bytes.
//!
//! 1. Whole vs chunked: decoding everything at once and in three chunks
//!    through a buffer (unconsumed bytes kept, as a driver does) must use the
//!    same bytes and give the same packet stream, or fail alike.
//! 2. What was decoded is exactly what the headers announced, and it survives
//!    a round trip through the encoder.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wirebench_protocol::compress::{
    encode_chunk, CompressedHeader, CompressedStream, Deflater, Inflater, COMPRESSED_HEADER_LEN, MAX_COMPRESSED_PAYLOAD,
};
use wirebench_protocol::ProtocolError;
use wirebench_protocol_fuzz::Input;

fn stream(command_sent: bool) -> CompressedStream {
    let mut stream = CompressedStream::new();
    if command_sent {
        stream.encode(&[1, 0, 0, 0, 0x0e], &mut Vec::new(), &mut Deflater::new());
    }
    stream
}

/// Decodes `bytes` in pieces ending at `ends`; the bytes used and the stream, or the error.
fn decode(command_sent: bool, bytes: &[u8], ends: &[usize]) -> Result<(usize, Vec<u8>), ProtocolError> {
    let mut stream = stream(command_sent);
    let (mut inflater, mut plain, mut pending) = (Inflater::new(), Vec::new(), Vec::new());
    let mut used = 0usize;
    let mut given = 0usize;
    for &end in ends.iter().chain([&bytes.len()]) {
        let end = end.clamp(given, bytes.len());
        pending.extend_from_slice(&bytes[given..end]);
        given = end;
        let n = stream.decode(&pending, &mut plain, &mut inflater)?;
        assert!(n <= pending.len());
        pending.drain(..n);
        used += n;
    }
    Ok((used, plain))
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let command_sent = input.u8() & 1 == 1;
    let cuts = [usize::from(input.u16()), usize::from(input.u16())];
    let bytes = input.rest();
    let mut ends = cuts.map(|c| c.min(bytes.len()));
    ends.sort_unstable();

    let whole = decode(command_sent, bytes, &[]);
    let chunked = decode(command_sent, bytes, &ends);
    match (&whole, &chunked) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "whole and chunked decoding differ"),
        (Err(a), Err(b)) => assert_eq!(a, b, "whole and chunked decoding fail differently"),
        _ => panic!("whole {whole:?} vs chunked {chunked:?}"),
    }
    let Ok((used, plain)) = whole else { return };

    // The headers of the packets used announce exactly what came out.
    let mut at = 0usize;
    let mut announced = 0usize;
    while at < used {
        let header = CompressedHeader::parse(&bytes[at..]).expect("a used packet has a header");
        announced += header.plain_len();
        at += COMPRESSED_HEADER_LEN + header.payload_len;
    }
    assert_eq!(at, used, "used bytes end on a packet border");
    assert_eq!(announced, plain.len());

    // Whatever came out goes back in and out again unchanged.
    let mut wire = Vec::new();
    let mut deflater = Deflater::new();
    for (seq, chunk) in plain.chunks(MAX_COMPRESSED_PAYLOAD).enumerate() {
        encode_chunk(chunk, seq as u8, &mut wire, &mut deflater);
    }
    let mut again = Vec::new();
    let n = CompressedStream::new().decode(&wire, &mut again, &mut Inflater::new()).expect("our own packets decode");
    assert_eq!(n, wire.len());
    assert_eq!(again, plain, "round trip through the encoder changed the stream");
});
