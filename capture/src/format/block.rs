//! Blocks: records packed together, compressed with raw DEFLATE, checked
//! with CRC-32. [`BlockBuilder`] makes them without I/O, so a recording
//! proxy can fill one on its event loop and hand the bytes to whatever
//! writes them.
//!
//! Block header, 44 bytes, little-endian:
//!
//! ```text
//!  0  "WBLK"
//!  4  codec u8: 0 stored, 1 raw DEFLATE, 0xFF the end block
//!  5  flags u8 (0), reserved u16 (0)
//!  8  stored length u32: the payload's bytes in the file
//! 12  plain length u32: the payload's bytes once inflated
//! 16  records u32
//! 20  first record's time u64 (ns since the Unix epoch)
//! 28  last record's time u64
//! 36  CRC-32 of the plain payload
//! 40  CRC-32 of the 40 bytes above
//! ```

use miniz_oxide::deflate::core::{
    compress, create_comp_flags_from_zip_params, CompressorOxide, TDEFLFlush, TDEFLStatus,
};

use super::record::Record;
use super::Totals;

pub const BLOCK_MAGIC: [u8; 4] = *b"WBLK";
pub const BLOCK_HEADER_LEN: usize = 44;
pub(crate) const CODEC_STORED: u8 = 0;
pub(crate) const CODEC_DEFLATE: u8 = 1;
pub(crate) const CODEC_END: u8 = 0xFF;

/// How blocks are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockSettings {
    /// A block is sealed once its records reach this many bytes (before
    /// compression): the unit a reader holds in memory and a crash loses.
    pub target_bytes: usize,
    /// DEFLATE level, 0 (stored) to 9; 1 compresses a capture about 4 to 1
    /// at a few hundred MB/s.
    pub level: u8,
}

impl Default for BlockSettings {
    fn default() -> Self {
        BlockSettings { target_bytes: 256 << 10, level: 1 }
    }
}

/// A record earlier than one appended before it: the file's records are
/// in time order, which is what lets a replay read it in one pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "a record at {at_ns} ns came after one at {last_ns} ns: a capture's records are in time order; \
     the writer's caller must merge its sources by time"
)]
pub struct OutOfOrder {
    pub at_ns: u64,
    pub last_ns: u64,
}

/// Records in, sealed blocks out.
pub struct BlockBuilder {
    settings: BlockSettings,
    plain: Vec<u8>,
    scratch: Vec<u8>,
    records: u32,
    first_ns: u64,
    /// The time of the last record appended, in this block or before.
    last_ns: u64,
    deflater: Box<CompressorOxide>,
    totals: Totals,
}

impl std::fmt::Debug for BlockBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockBuilder").field("records", &self.records).field("bytes", &self.plain.len()).finish()
    }
}

impl BlockBuilder {
    pub fn new(settings: BlockSettings) -> Self {
        let flags = create_comp_flags_from_zip_params(i32::from(settings.level.min(9)), -15, 0);
        BlockBuilder {
            settings,
            plain: Vec::with_capacity(settings.target_bytes),
            scratch: Vec::new(),
            records: 0,
            first_ns: 0,
            last_ns: 0,
            deflater: Box::new(CompressorOxide::new(flags)),
            totals: Totals::default(),
        }
    }

    /// Appends a record to the open block.
    pub fn push(&mut self, record: &Record<'_>) -> Result<(), OutOfOrder> {
        let at_ns = record.at_ns();
        if at_ns < self.last_ns {
            return Err(OutOfOrder { at_ns, last_ns: self.last_ns });
        }
        if self.records == 0 {
            self.first_ns = at_ns;
        }
        let prev = if self.records == 0 { self.first_ns } else { self.last_ns };
        record.encode(prev, &mut self.scratch, &mut self.plain);
        self.records += 1;
        self.last_ns = at_ns;
        self.totals.count(record);
        Ok(())
    }

    /// The open block has reached its target size.
    pub fn is_full(&self) -> bool {
        self.plain.len() >= self.settings.target_bytes
    }

    pub fn is_empty(&self) -> bool {
        self.records == 0
    }

    /// Everything appended so far.
    pub fn totals(&self) -> Totals {
        self.totals
    }

    /// Appends the open block, sealed, to `out` and starts a new one;
    /// nothing when it is empty.
    pub fn seal(&mut self, out: &mut Vec<u8>) {
        if self.records == 0 {
            return;
        }
        let header_at = out.len();
        out.resize(header_at + BLOCK_HEADER_LEN, 0);
        let payload_at = out.len();
        let codec = if self.settings.level > 0 && self.deflate_into(out) { CODEC_DEFLATE } else { CODEC_STORED };
        if codec == CODEC_STORED {
            out.truncate(payload_at);
            out.extend_from_slice(&self.plain);
        }
        let stored = out.len() - payload_at;
        let header = block_header(codec, stored, &self.plain, self.records, self.first_ns, self.last_ns);
        if let Some(slot) = out.get_mut(header_at..payload_at) {
            slot.copy_from_slice(&header);
        }
        self.plain.clear();
        self.records = 0;
    }

    /// Deflates the plain bytes after `out`'s end; false when that does
    /// not make them shorter.
    fn deflate_into(&mut self, out: &mut Vec<u8>) -> bool {
        self.deflater.reset();
        let start = out.len();
        out.resize(start + self.plain.len().saturating_sub(1), 0);
        let room = out.get_mut(start..).unwrap_or_default();
        let (status, read, written) = compress(&mut self.deflater, &self.plain, room, TDEFLFlush::Finish);
        let fits = status == TDEFLStatus::Done && read == self.plain.len();
        out.truncate(if fits { start + written } else { start });
        fits
    }

    /// Appends the end block: the file's totals, which say it ended cleanly.
    pub fn seal_end(&mut self, out: &mut Vec<u8>) {
        self.seal(out);
        let mut payload = Vec::new();
        self.totals.encode(&mut payload);
        let header = block_header(CODEC_END, payload.len(), &payload, 0, self.totals.first_ns, self.totals.last_ns);
        out.extend_from_slice(&header);
        out.extend_from_slice(&payload);
    }
}

fn block_header(
    codec: u8,
    stored: usize,
    plain: &[u8],
    records: u32,
    first_ns: u64,
    last_ns: u64,
) -> [u8; BLOCK_HEADER_LEN] {
    let mut h = [0u8; BLOCK_HEADER_LEN];
    let mut at = 0;
    let mut put = |bytes: &[u8]| {
        if let Some(slot) = h.get_mut(at..at + bytes.len()) {
            slot.copy_from_slice(bytes);
        }
        at += bytes.len();
    };
    put(&BLOCK_MAGIC);
    put(&[codec, 0, 0, 0]);
    put(&(stored as u32).to_le_bytes());
    put(&(plain.len() as u32).to_le_bytes());
    put(&records.to_le_bytes());
    put(&first_ns.to_le_bytes());
    put(&last_ns.to_le_bytes());
    put(&crc32fast::hash(plain).to_le_bytes());
    let crc = crc32fast::hash(h.get(..40).unwrap_or_default());
    if let Some(slot) = h.get_mut(40..) {
        slot.copy_from_slice(&crc.to_le_bytes());
    }
    h
}

/// A block header, read and checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BlockHeader {
    pub codec: u8,
    pub stored_len: usize,
    pub plain_len: usize,
    pub records: u32,
    pub first_ns: u64,
    pub last_ns: u64,
    pub plain_crc: u32,
}

/// Why a block header is not one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BadHeader {
    /// Not the block magic: all zeros (what a crash can leave) or anything else.
    Magic {
        zeros: bool,
    },
    Checksum,
    Field(&'static str),
}

impl BlockHeader {
    pub(crate) fn parse(h: &[u8; BLOCK_HEADER_LEN]) -> Result<Self, BadHeader> {
        let word = |at: usize| -> u32 {
            let mut w = [0u8; 4];
            w.copy_from_slice(h.get(at..at + 4).unwrap_or(&[0; 4]));
            u32::from_le_bytes(w)
        };
        let long = |at: usize| -> u64 { u64::from(word(at)) | u64::from(word(at + 4)) << 32 };
        if h.get(..4) != Some(&BLOCK_MAGIC[..]) {
            return Err(BadHeader::Magic { zeros: h.get(..4) == Some(&[0, 0, 0, 0][..]) });
        }
        if crc32fast::hash(h.get(..40).unwrap_or_default()) != word(40) {
            return Err(BadHeader::Checksum);
        }
        let codec = h.get(4).copied().unwrap_or(CODEC_STORED);
        if !matches!(codec, CODEC_STORED | CODEC_DEFLATE | CODEC_END) {
            return Err(BadHeader::Field("unknown codec"));
        }
        let header = BlockHeader {
            codec,
            stored_len: word(8) as usize,
            plain_len: word(12) as usize,
            records: word(16),
            first_ns: long(20),
            last_ns: long(28),
            plain_crc: word(36),
        };
        if header.codec != CODEC_DEFLATE && header.stored_len != header.plain_len {
            return Err(BadHeader::Field("a stored block's two lengths differ"));
        }
        if header.first_ns > header.last_ns {
            return Err(BadHeader::Field("its first time is after its last"));
        }
        Ok(header)
    }
}
