use proptest::prelude::*;

use super::*;
use crate::framing::{decode_packet, encode_packet};
use crate::response::{ResponseReader, RowFormat};
use crate::Capabilities;

fn hex(s: &str) -> Vec<u8> {
    let digits: Vec<u8> = s.bytes().filter(u8::is_ascii_hexdigit).collect();
    digits.chunks(2).map(|pair| u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).unwrap()).collect()
}

/// Captured from sysbench 1.0.20 and MariaDB 10.11.19 (see testdata/extract.py):
/// the wire bytes and, inflated by Python's zlib, the packet stream they carry.
macro_rules! capture {
    ($name:literal) => {
        (
            include_bytes!(concat!("testdata/", $name, ".bin")).as_slice(),
            include_bytes!(concat!("testdata/", $name, ".plain.bin")).as_slice(),
        )
    };
}

const PREPARE_CMD: (&[u8], &[u8]) = capture!("prepare_cmd");
const PREPARE_RESP: (&[u8], &[u8]) = capture!("prepare_resp");
const EXECUTE_CMD: (&[u8], &[u8]) = capture!("execute_cmd");
const EXECUTE_RESP: (&[u8], &[u8]) = capture!("execute_resp");
const EXECUTE_STORED_CMD: (&[u8], &[u8]) = capture!("execute_stored_cmd");
const INSERT_CMD: (&[u8], &[u8]) = capture!("insert_cmd");
const RANGE_RESP: (&[u8], &[u8]) = capture!("range_resp");

/// The capabilities sysbench's connection negotiated in the captures: no
/// DEPRECATE_EOF, MariaDB's metadata caching.
const SYSBENCH_CAPS: Capabilities = Capabilities(
    Capabilities::PROTOCOL_41.0
        | Capabilities::SECURE_CONNECTION.0
        | Capabilities::TRANSACTIONS.0
        | Capabilities::MULTI_RESULTS.0
        | Capabilities::PS_MULTI_RESULTS.0
        | Capabilities::MARIADB_CLIENT_EXTENDED_TYPE_INFO.0
        | Capabilities::MARIADB_CLIENT_CACHE_METADATA.0,
);

/// The compressed ids of the packets in `wire`, and whether each is deflated.
fn headers(wire: &[u8]) -> Vec<CompressedHeader> {
    let mut at = 0;
    let mut out = Vec::new();
    while let Some(h) = CompressedHeader::parse(&wire[at..]) {
        out.push(h);
        at += COMPRESSED_HEADER_LEN + h.payload_len;
    }
    assert_eq!(at, wire.len(), "whole packets");
    out
}

/// Decodes `wire` fed in pieces of `step` bytes.
fn decode_in_steps(stream: &mut CompressedStream, wire: &[u8], step: usize) -> Result<Vec<u8>> {
    let (mut pending, mut plain, mut inflater) = (Vec::new(), Vec::new(), Inflater::new());
    for piece in wire.chunks(step.max(1)) {
        pending.extend_from_slice(piece);
        let used = stream.decode(&pending, &mut plain, &mut inflater)?;
        pending.drain(..used);
    }
    assert!(pending.is_empty(), "{} bytes left undecoded", pending.len());
    Ok(plain)
}

/// A stream that has just sent a command in one compressed packet: the
/// answer starts at 1.
fn after_command() -> CompressedStream {
    let mut stream = CompressedStream::new();
    stream.encode(&hex("01 00 00 00 0e"), &mut Vec::new(), &mut Deflater::new());
    assert_eq!(stream.answer_seq(), 1);
    stream
}

fn encode(plain: &[u8]) -> (Vec<u8>, CompressedStream) {
    let mut stream = CompressedStream::new();
    let mut out = Vec::new();
    stream.encode(plain, &mut out, &mut Deflater::new());
    (out, stream)
}

/// MySQL's documentation (page_protocol_basic_compression_packet): COM_QUERY
/// `select "012345678901234567890123456789012345"`, 46 bytes, compressed.
#[test]
fn documented_example() {
    let wire = hex("22 00 00 00 32 00 00 78 9c d3 63 60 60 60 2e 4e cd 49 4d 2e 51 50 32 30 34 32 36 31 35 33
                    b7 b0 c4 cd 52 02 00 0c d1 0a 6c");
    let mut plain = Vec::new();
    encode_packet(&mut plain, 0, b"\x03select \"012345678901234567890123456789012345\"");
    assert_eq!(plain.len(), 50);
    let decoded = decode_in_steps(&mut CompressedStream::new(), &wire, wire.len()).unwrap();
    assert_eq!(decoded, plain);
    // Under 150 bytes we send it as Connector/C would: uncompressed.
    let (ours, _) = encode(&plain);
    assert_eq!(&ours[..7], &[50, 0, 0, 0, 0, 0, 0]);
    assert_eq!(&ours[7..], &plain[..]);
}

/// The same documentation page: a short payload (`SELECT 1`) goes
/// uncompressed, its uncompressed length 0.
#[test]
fn documented_short_payload_is_not_compressed() {
    let mut plain = Vec::new();
    encode_packet(&mut plain, 0, b"\x03SELECT 1");
    let (wire, _) = encode(&plain);
    assert_eq!(wire, hex("0d 00 00 00 00 00 00 09 00 00 00 03 53 45 4c 45 43 54 20 31"));
}

#[test]
fn captured_answers_decode_to_what_zlib_inflates() {
    for (name, (wire, plain), seqs) in
        [("prepare", PREPARE_RESP, vec![1]), ("execute", EXECUTE_RESP, vec![1]), ("range", RANGE_RESP, vec![1, 2, 3])]
    {
        assert_eq!(headers(wire).iter().map(|h| h.seq).collect::<Vec<_>>(), seqs, "{name}");
        for step in [1, 7, 100, wire.len()] {
            assert_eq!(decode_in_steps(&mut after_command(), wire, step).unwrap(), plain, "{name}, steps of {step}");
        }
    }
}

/// The answer of 300 binary rows in three compressed packets: rows cross
/// the packets' borders, and the packets inside keep their own numbering.
#[test]
fn captured_range_walks_as_300_rows() {
    let (wire, _) = RANGE_RESP;
    let sizes: Vec<_> = headers(wire).iter().map(|h| h.uncompressed_len).collect();
    assert_eq!(sizes, [16384, 16384, 5056]);
    let plain = decode_in_steps(&mut after_command(), wire, 4096).unwrap();
    let mut reader = ResponseReader::new(SYSBENCH_CAPS, RowFormat::Binary);
    let progress = reader.advance(&plain).unwrap();
    assert_eq!(progress.consumed, plain.len());
    assert_eq!(progress.done.unwrap().rows, 300);
}

/// The client side: what libmysqlclient sent, we send, where the bytes can
/// be the same (uncompressed payloads); where zlib deflated, our packet has
/// the same header fields and carries the same stream.
#[test]
fn captured_commands_encode_as_libmysqlclient_did() {
    for (name, (wire, plain)) in [("prepare", PREPARE_CMD), ("execute", EXECUTE_CMD), ("stored", EXECUTE_STORED_CMD)] {
        let (ours, stream) = encode(plain);
        assert_eq!(ours, wire, "{name}");
        assert_eq!(stream.answer_seq(), 1);
    }
    let (wire, plain) = INSERT_CMD;
    let theirs = headers(wire);
    assert_eq!(theirs[0].payload_len, 142);
    assert_eq!((theirs[0].seq, theirs[0].uncompressed_len), (0, 220));
    let (ours, _) = encode(plain);
    let ours_headers = headers(&ours);
    assert_eq!(ours_headers.len(), 1);
    assert_eq!((ours_headers[0].seq, ours_headers[0].uncompressed_len), (0, 220));
    assert!(ours_headers[0].payload_len < 220, "{ours_headers:?}");
    assert_eq!(decode_in_steps(&mut CompressedStream::new(), &ours, ours.len()).unwrap(), plain);
    // And the capture decodes to the same stream.
    assert_eq!(decode_in_steps(&mut CompressedStream::new(), wire, 3).unwrap(), plain);
}

#[test]
fn each_command_gets_compressed_packets_of_its_own_from_zero() {
    let mut plain = Vec::new();
    encode_packet(&mut plain, 0, &[0x17; 30]);
    encode_packet(&mut plain, 0, &[0x17; 300]);
    encode_packet(&mut plain, 0, b"\x0e");
    let (wire, stream) = encode(&plain);
    let seqs: Vec<_> = headers(&wire).iter().map(|h| (h.seq, h.is_compressed())).collect();
    assert_eq!(seqs, [(0, false), (0, true), (0, false)]);
    assert_eq!(stream.answer_seq(), 1);
    // A server answering all three, each answer numbered from 1, decodes.
    let mut answers = Vec::new();
    for _ in 0..3 {
        let mut ok = Vec::new();
        encode_packet(&mut ok, 1, &[0, 0, 0, 2, 0, 0, 0]);
        encode_chunk(&ok, 1, &mut answers, &mut Deflater::new());
    }
    let mut client = stream;
    let decoded = decode_in_steps(&mut client, &answers, 5).unwrap();
    assert_eq!(decoded.len(), 3 * 11);
}

#[test]
fn a_command_over_16_mib_takes_several_compressed_packets_and_shifts_the_answer() {
    let mut plain = Vec::new();
    encode_packet(&mut plain, 0, &vec![b'a'; MAX_COMPRESSED_PAYLOAD + 100]);
    let (wire, stream) = encode(&plain);
    let hs = headers(&wire);
    assert_eq!(hs.iter().map(|h| h.seq).collect::<Vec<_>>(), [0, 1]);
    assert_eq!(hs.iter().map(CompressedHeader::plain_len).sum::<usize>(), plain.len());
    assert_eq!(hs[0].plain_len(), MAX_COMPRESSED_PAYLOAD);
    // The server numbers its answer after the two compressed packets it read.
    assert_eq!(stream.answer_seq(), 2);
    let decoded = decode_in_steps(&mut CompressedStream::new(), &wire, 1 << 20).unwrap();
    assert!(decoded == plain);
}

/// LOCAL INFILE: the client's reply within a command continues from the
/// last compressed id the server sent.
#[test]
fn a_packet_within_a_command_continues_the_numbering() {
    let mut stream = CompressedStream::new();
    let (mut inflater, mut deflater) = (Inflater::new(), Deflater::new());
    let mut wire = Vec::new();
    stream.encode(&hex("05 00 00 00 03 4c 4f 41 44"), &mut wire, &mut deflater);
    let mut request = Vec::new();
    encode_packet(&mut request, 1, b"\xfb/tmp/x");
    let mut answer = Vec::new();
    encode_chunk(&request, 1, &mut answer, &mut deflater);
    let mut plain = Vec::new();
    assert_eq!(stream.decode(&answer, &mut plain, &mut inflater), Ok(answer.len()));
    let mut reply = Vec::new();
    stream.encode(&hex("00 00 00 02"), &mut reply, &mut deflater);
    assert_eq!(reply, hex("04 00 00 02 00 00 00 00 00 00 02"));
    assert_eq!(stream.answer_seq(), 3);
}

fn one_packet(seq: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    encode_chunk(payload, seq, &mut out, &mut Deflater::new());
    out
}

#[test]
fn out_of_order_ids_are_adopted_and_counted() {
    let mut stream = CompressedStream::new();
    let packet = one_packet(5, b"\x01\x00\x00\x01\x00");
    let mut plain = Vec::new();
    assert_eq!(stream.decode(&packet, &mut plain, &mut Inflater::new()), Ok(packet.len()));
    assert_eq!(plain, b"\x01\x00\x00\x01\x00");
    // The next one follows the server's numbering: no further jump.
    let next = one_packet(6, b"\x01\x00\x00\x02\x00");
    assert_eq!(stream.decode(&next, &mut plain, &mut Inflater::new()), Ok(next.len()));
    assert_eq!(stream.take_seq_jumps(), 1);
    assert_eq!(stream.take_seq_jumps(), 0);
}

#[test]
fn bad_zlib_payloads_are_errors() {
    let text = [b'x'; 200];
    let good = one_packet(0, &text);
    let header = CompressedHeader::parse(&good).unwrap();
    assert!(header.is_compressed());
    let mut plain = vec![1, 2, 3];
    assert_eq!(CompressedStream::new().decode(&good, &mut plain, &mut Inflater::new()), Ok(good.len()));
    assert_eq!(&plain[3..], &text[..]);
    let decode = |wire: &[u8]| {
        let mut plain = vec![1, 2, 3];
        let result = CompressedStream::new().decode(wire, &mut plain, &mut Inflater::new());
        assert_eq!(plain, [1, 2, 3], "nothing appended on error");
        result
    };

    let with_len = |len: usize| {
        let mut w = good.clone();
        w[4..7].copy_from_slice(&(len as u32).to_le_bytes()[..3]);
        w
    };
    assert!(matches!(decode(&with_len(199)), Err(ProtocolError::Malformed(m)) if m.contains("more bytes")));
    assert!(matches!(decode(&with_len(201)), Err(ProtocolError::Malformed(m)) if m.contains("fewer bytes")));
    // A 6-byte payload cannot inflate to 16 MiB: refused before allocating.
    let mut bomb =
        CompressedHeader { payload_len: 6, seq: 0, uncompressed_len: MAX_COMPRESSED_PAYLOAD }.to_bytes().to_vec();
    bomb.extend_from_slice(&[0x78, 0x9c, 0, 0, 0, 0]);
    assert!(matches!(decode(&bomb), Err(ProtocolError::Malformed(m)) if m.contains("out of its payload's reach")));

    let mut bad_sum = good.clone();
    *bad_sum.last_mut().unwrap() ^= 1;
    assert!(matches!(decode(&bad_sum), Err(ProtocolError::Malformed(m)) if m.contains("checksum")));
    let mut corrupt = good.clone();
    corrupt[7] = 0x00; // not a zlib header
    assert!(matches!(decode(&corrupt), Err(ProtocolError::Malformed(m)) if m.contains("corrupt")));
    let mut trailing = good.clone();
    trailing.push(0);
    let len = header.payload_len + 1;
    trailing[0..3].copy_from_slice(&(len as u32).to_le_bytes()[..3]);
    assert_eq!(decode(&trailing), Err(ProtocolError::TrailingBytes("compressed packet's zlib stream", 1)));
}

#[test]
fn incomplete_packets_wait() {
    let good = one_packet(0, &[b'y'; 120]);
    for cut in 0..good.len() {
        let mut plain = Vec::new();
        assert_eq!(CompressedStream::new().decode(&good[..cut], &mut plain, &mut Inflater::new()), Ok(0), "{cut}");
        assert!(plain.is_empty());
    }
}

/// A packet stream of commands: each a payload split into packets as
/// framing does, some compressible, some not.
fn command_stream() -> impl Strategy<Value = Vec<u8>> {
    let payload = prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..200),
        (any::<u8>(), 0usize..3000).prop_map(|(b, n)| vec![b; n]),
        (0usize..2000).prop_map(|n| b"SELECT c FROM sbtest1 WHERE id=".iter().copied().cycle().take(n).collect()),
    ];
    proptest::collection::vec(payload, 1..8).prop_map(|payloads| {
        let mut out = Vec::new();
        for p in payloads {
            encode_packet(&mut out, 0, &p);
        }
        out
    })
}

proptest! {
    #[test]
    fn round_trip_with_any_split(plain in command_stream(), step in 1usize..300) {
        let (wire, _) = encode(&plain);
        let decoded = decode_in_steps(&mut CompressedStream::new(), &wire, step).unwrap();
        prop_assert_eq!(&decoded, &plain);
        // Every packet inside comes out whole and in order.
        let mut at = 0;
        while at < decoded.len() {
            let frame = decode_packet(&decoded[at..], 0, usize::MAX).unwrap().unwrap();
            at += frame.consumed;
        }
    }

    #[test]
    fn never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..512), step in 1usize..64) {
        let mut stream = CompressedStream::new();
        let (mut pending, mut plain, mut inflater) = (Vec::new(), Vec::new(), Inflater::new());
        for piece in bytes.chunks(step) {
            pending.extend_from_slice(piece);
            match stream.decode(&pending, &mut plain, &mut inflater) {
                Ok(used) => { pending.drain(..used); }
                Err(_) => break,
            }
        }
    }

    #[test]
    fn never_panics_behind_a_plausible_header(
        payload in proptest::collection::vec(any::<u8>(), 0..300),
        uncompressed in 0usize..5000,
        zlib_start in any::<bool>(),
    ) {
        let mut payload = payload;
        if zlib_start && payload.len() >= 2 {
            payload[0] = 0x78;
            payload[1] = 0x9c;
        }
        let mut wire = CompressedHeader { payload_len: payload.len(), seq: 0, uncompressed_len: uncompressed }
            .to_bytes()
            .to_vec();
        wire.extend_from_slice(&payload);
        let mut plain = Vec::new();
        let result = CompressedStream::new().decode(&wire, &mut plain, &mut Inflater::new());
        if let Ok(used) = result {
            prop_assert_eq!(used, wire.len());
            prop_assert_eq!(plain.len(), if uncompressed == 0 { payload.len() } else { uncompressed });
        } else {
            prop_assert!(plain.is_empty());
        }
    }
}
