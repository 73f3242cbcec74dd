//! The compressed protocol (CLIENT_COMPRESS, zlib), sans-IO. Once the
//! login's final OK is in, both directions carry the packet stream inside
//! compressed packets (MySQL `page_protocol_basic_compression_packet`):
//!
//! ```text
//! int<3> payload length | int<1> compressed sequence id | int<3> uncompressed length | payload
//! ```
//!
//! An uncompressed length of 0 means the payload is sent as it is;
//! otherwise the payload is a zlib stream (RFC 1950, what zlib's
//! `compress()` writes) that inflates to exactly that many bytes. A
//! compressed packet may carry a piece of a packet, one packet or several.
//!
//! Sequence ids, as MariaDB's `net_serv.cc` numbers them (and as captured
//! from sysbench against MariaDB 10.11, see `compress/testdata`):
//! - both sides reset to 0 at every command (`net_clear`);
//! - the client sends a command in compressed packets numbered 0, 1, ...;
//!   the server checks each id and, after reading packet `s`, sets both its
//!   counters to `s + 1` (`net->compress_pkt_nr= ++net->pkt_nr`). So its
//!   answer's compressed packets, *and the packets inside them*, are
//!   numbered from the count of compressed packets the command took: 1 for
//!   any command under 16 MiB;
//! - inside compressed packets neither side checks the inner packets'
//!   sequence ids; the server's stay consecutive except after a flush in
//!   the middle of an answer, which resyncs them to the compressed ids;
//! - a client packet within a command (LOCAL INFILE data) continues from
//!   the last compressed id received, plus one.
//!
//! A command is sent in compressed packets of its own: MariaDB reads a
//! second command left over in the buffer of the first one's compressed
//! packet without resetting the ids, and would number that answer from 0.
//! Payloads under 150 bytes go uncompressed, and so do those deflate does
//! not shrink, as MariaDB Connector/C (the libmysqlclient sysbench links
//! here) does: its MIN_COMPRESS_LENGTH is 150 (`ma_sys.h`), where MySQL's
//! libmysqlclient and the server use 50. Captured: sysbench sends a
//! 148-byte COM_STMT_EXECUTE as it is although zlib shrinks it to 105.

use miniz_oxide::deflate::core::{
    compress, create_comp_flags_from_zip_params, CompressorOxide, TDEFLFlush, TDEFLStatus,
};
use miniz_oxide::inflate::core::inflate_flags::{
    TINFL_FLAG_PARSE_ZLIB_HEADER, TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF,
};
use miniz_oxide::inflate::core::{decompress, DecompressorOxide};
use miniz_oxide::inflate::TINFLStatus;

use crate::buf::WriteExt;
use crate::error::{ProtocolError, Result};
use crate::framing::{Header, HEADER_LEN};

/// Bytes in a compressed packet's header.
pub const COMPRESSED_HEADER_LEN: usize = 7;
/// The most a compressed packet carries, before or after compression: both
/// lengths are 3 bytes.
pub const MAX_COMPRESSED_PAYLOAD: usize = 0xFF_FFFF;
/// Shorter payloads are sent uncompressed (MariaDB Connector/C's MIN_COMPRESS_LENGTH).
pub const MIN_COMPRESS_LENGTH: usize = 150;
/// zlib's compression level 6 (Z_DEFAULT_COMPRESSION), what libmysqlclient's
/// `compress()` uses.
const LEVEL: i32 = 6;
/// Deflate cannot expand data more than about 1032:1 (a 258-byte match in
/// about 2 bits); a header claiming more than this many bytes per payload
/// byte cannot be honest, and is refused before anything is allocated.
const MAX_INFLATE_RATIO: usize = 1100;
/// zlib's header and Adler-32 trailer: a compressed payload is never shorter.
const ZLIB_OVERHEAD: usize = 6;

/// A compressed packet's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompressedHeader {
    /// Bytes of payload after the header.
    pub payload_len: usize,
    /// The compressed sequence id.
    pub seq: u8,
    /// What the payload inflates to; 0 when it is not compressed.
    pub uncompressed_len: usize,
}

impl CompressedHeader {
    /// The header at the start of `buf`, or `None` if fewer than 7 bytes are there.
    pub fn parse(buf: &[u8]) -> Option<CompressedHeader> {
        match buf {
            [a, b, c, seq, d, e, f, ..] => Some(CompressedHeader {
                payload_len: u32::from_le_bytes([*a, *b, *c, 0]) as usize,
                seq: *seq,
                uncompressed_len: u32::from_le_bytes([*d, *e, *f, 0]) as usize,
            }),
            _ => None,
        }
    }

    /// The header's bytes; lengths are cut to 3 bytes (callers keep them under 16 MiB).
    pub fn to_bytes(&self) -> [u8; COMPRESSED_HEADER_LEN] {
        let [a, b, c, _] = (self.payload_len as u32).to_le_bytes();
        let [d, e, f, _] = (self.uncompressed_len as u32).to_le_bytes();
        [a, b, c, self.seq, d, e, f]
    }

    pub fn is_compressed(&self) -> bool {
        self.uncompressed_len != 0
    }

    /// Bytes of packet stream the payload carries.
    pub fn plain_len(&self) -> usize {
        if self.is_compressed() {
            self.uncompressed_len
        } else {
            self.payload_len
        }
    }
}

/// Inflate state, reused for every compressed packet (each is a zlib stream
/// of its own). About 11 KB; one can serve any number of connections.
#[derive(Clone)]
pub struct Inflater {
    state: Box<DecompressorOxide>,
}

impl Inflater {
    pub fn new() -> Self {
        Inflater { state: Box::default() }
    }
}

impl Default for Inflater {
    fn default() -> Self {
        Inflater::new()
    }
}

impl std::fmt::Debug for Inflater {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Inflater")
    }
}

/// Deflate state, reused for every compressed packet. About 300 KB; one can
/// serve any number of connections.
#[derive(Clone)]
pub struct Deflater {
    state: Box<CompressorOxide>,
    /// The state holds a finished stream and must be reset before the next.
    used: bool,
}

impl Deflater {
    pub fn new() -> Self {
        // Positive window bits: a zlib header and Adler-32 trailer, as `compress()` writes.
        let flags = create_comp_flags_from_zip_params(LEVEL, 15, 0);
        Deflater { state: Box::new(CompressorOxide::new(flags)), used: false }
    }

    /// Deflates `input` into `out`, only if the result is shorter than the
    /// input; returns its length, or `None` (and `out` untouched) otherwise.
    fn deflate_shorter(&mut self, input: &[u8], out: &mut Vec<u8>) -> Option<usize> {
        if self.used {
            self.state.reset();
        }
        self.used = true;
        let start = out.len();
        // Room for one byte less than the input: output that does not fit
        // would not be worth sending.
        out.resize(start + input.len().saturating_sub(1), 0);
        let room = out.get_mut(start..).unwrap_or_default();
        let (status, read, written) = compress(&mut self.state, input, room, TDEFLFlush::Finish);
        if status == TDEFLStatus::Done && read == input.len() {
            out.truncate(start + written);
            Some(written)
        } else {
            out.truncate(start);
            None
        }
    }
}

impl Default for Deflater {
    fn default() -> Self {
        Deflater::new()
    }
}

impl std::fmt::Debug for Deflater {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Deflater")
    }
}

/// Appends the packet-stream bytes of one compressed packet's payload to
/// `plain`: as they are, or inflated to exactly the header's length.
pub fn inflate_payload(
    header: CompressedHeader,
    payload: &[u8],
    plain: &mut Vec<u8>,
    inflater: &mut Inflater,
) -> Result<()> {
    if !header.is_compressed() {
        plain.extend_from_slice(payload);
        return Ok(());
    }
    let expected = header.uncompressed_len;
    if payload.len() < ZLIB_OVERHEAD || expected > payload.len().saturating_mul(MAX_INFLATE_RATIO) {
        return Err(ProtocolError::Malformed(
            "compressed packet: its uncompressed length is out of its payload's reach",
        ));
    }
    let start = plain.len();
    plain.resize(start + expected, 0);
    let out = plain.get_mut(start..).unwrap_or_default();
    inflater.state.init();
    // The output slice is exactly the announced size: more output than that
    // stops the inflate (HasMoreOutput) instead of growing anything.
    let flags = TINFL_FLAG_PARSE_ZLIB_HEADER | TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF;
    let (status, read, written) = decompress(&mut inflater.state, payload, out, 0, flags);
    let outcome = match status {
        TINFLStatus::Done if written != expected => {
            Err(ProtocolError::Malformed("compressed packet: it inflates to fewer bytes than its header says"))
        }
        TINFLStatus::Done if read != payload.len() => {
            Err(ProtocolError::TrailingBytes("compressed packet's zlib stream", payload.len() - read))
        }
        TINFLStatus::Done => Ok(()),
        TINFLStatus::HasMoreOutput => {
            Err(ProtocolError::Malformed("compressed packet: it inflates to more bytes than its header says"))
        }
        TINFLStatus::Adler32Mismatch => Err(ProtocolError::Malformed("compressed packet: zlib checksum mismatch")),
        _ => Err(ProtocolError::Malformed("compressed packet: corrupt or truncated zlib stream")),
    };
    if outcome.is_err() {
        plain.truncate(start);
    }
    outcome
}

/// Appends one compressed packet carrying `chunk` (at most
/// [`MAX_COMPRESSED_PAYLOAD`] bytes): deflated when that is allowed and
/// makes it shorter, as it is otherwise.
pub fn encode_chunk(chunk: &[u8], seq: u8, out: &mut Vec<u8>, deflater: &mut Deflater) {
    debug_assert!(chunk.len() <= MAX_COMPRESSED_PAYLOAD);
    let header_at = out.len();
    out.put_zeros(COMPRESSED_HEADER_LEN);
    let deflated = if chunk.len() >= MIN_COMPRESS_LENGTH { deflater.deflate_shorter(chunk, out) } else { None };
    let header = match deflated {
        Some(len) => CompressedHeader { payload_len: len, seq, uncompressed_len: chunk.len() },
        None => {
            out.extend_from_slice(chunk);
            CompressedHeader { payload_len: chunk.len(), seq, uncompressed_len: 0 }
        }
    };
    if let Some(slot) = out.get_mut(header_at..header_at + COMPRESSED_HEADER_LEN) {
        slot.copy_from_slice(&header.to_bytes());
    }
}

/// One connection's compressed stream: the sequence ids of both directions.
/// The (de)compressor state is passed in, so that one can serve many
/// connections.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompressedStream {
    /// The next compressed id, sent or received (MariaDB's `compress_pkt_nr`).
    seq: u8,
    /// Where the server's answer to the last command sent starts.
    answer_seq: u8,
    /// Compressed packets whose id followed neither, not yet taken by
    /// [`take_seq_jumps`](Self::take_seq_jumps).
    seq_jumps: u32,
}

impl Default for CompressedStream {
    fn default() -> Self {
        CompressedStream::new()
    }
}

impl CompressedStream {
    pub fn new() -> Self {
        CompressedStream { seq: 0, answer_seq: 0, seq_jumps: 0 }
    }

    /// The sequence id the server's answer to the last command sent starts
    /// at, compressed packets and the packets inside them alike.
    pub fn answer_seq(&self) -> u8 {
        self.answer_seq
    }

    /// Decodes the complete compressed packets at the start of `wire`,
    /// appending the packet stream they carry to `plain`. Returns the bytes
    /// of `wire` used; a partial packet is left for the next call.
    ///
    /// A packet's id should continue the previous one, or be where an answer
    /// starts: with commands pipelined, each answer starts its numbering
    /// anew, and which one comes next is not known here. Another id is
    /// adopted and counted ([`take_seq_jumps`](Self::take_seq_jumps)), as
    /// libmariadb takes the server's `compress_pkt_nr` without checking it.
    /// The packets inside are checked by whoever reads the stream.
    pub fn decode(&mut self, wire: &[u8], plain: &mut Vec<u8>, inflater: &mut Inflater) -> Result<usize> {
        let mut used = 0usize;
        loop {
            let rest = wire.get(used..).unwrap_or_default();
            let Some(header) = CompressedHeader::parse(rest) else { return Ok(used) };
            if header.seq != self.seq && header.seq != self.answer_seq {
                self.seq_jumps = self.seq_jumps.saturating_add(1);
            }
            let end = COMPRESSED_HEADER_LEN + header.payload_len;
            let Some(payload) = rest.get(COMPRESSED_HEADER_LEN..end) else { return Ok(used) };
            inflate_payload(header, payload, plain, inflater)?;
            self.seq = header.seq.wrapping_add(1);
            used += end;
        }
    }

    /// The compressed packets whose sequence id was adopted since the last
    /// call ([`Deviation::SequenceRenumbered`](crate::tolerance::Deviation)).
    pub fn take_seq_jumps(&mut self) -> u32 {
        std::mem::take(&mut self.seq_jumps)
    }

    /// Appends `plain`, whole packets of one or more commands (or the
    /// client's packets within a command), as compressed packets to `out`.
    /// Each command (a packet with sequence id 0) starts compressed packets
    /// of its own, numbered from 0.
    pub fn encode(&mut self, plain: &[u8], out: &mut Vec<u8>, deflater: &mut Deflater) {
        let mut from = 0usize;
        while from < plain.len() {
            let run = plain.get(from..).unwrap_or_default();
            let len = command_len(run);
            if run.get(3) == Some(&0) {
                self.seq = 0;
            }
            for chunk in run.get(..len).unwrap_or_default().chunks(MAX_COMPRESSED_PAYLOAD) {
                encode_chunk(chunk, self.seq, out, deflater);
                self.seq = self.seq.wrapping_add(1);
            }
            self.answer_seq = self.seq;
            from += len;
        }
    }
}

/// Bytes of `stream` up to the next packet that starts a command (sequence
/// id 0) after the first packet, or all of it.
fn command_len(stream: &[u8]) -> usize {
    let mut at = 0usize;
    while let Some(header) = stream.get(at..).and_then(Header::parse) {
        if at > 0 && header.seq == 0 {
            return at;
        }
        at = at.saturating_add(HEADER_LEN + header.len);
    }
    stream.len()
}

#[cfg(test)]
mod compress_tests;
