//! [`CaptureReader`]: a capture read in one streaming pass, one block in
//! memory at a time.

use std::io::{ErrorKind, Read};

use miniz_oxide::inflate::core::inflate_flags::TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF;
use miniz_oxide::inflate::core::{decompress, DecompressorOxide};
use miniz_oxide::inflate::TINFLStatus;

use super::block::{BadHeader, BlockHeader, BLOCK_HEADER_LEN, CODEC_DEFLATE, CODEC_END};
use super::record::Record;
use super::varint::Cursor;
use super::{decode_header_body, CaptureHeader, Totals, FORMAT_MAJOR, MAGIC, MAX_HEADER_BODY};

/// DEFLATE cannot expand data more than about 1032:1: a block claiming more
/// is damaged, and is refused before its plain bytes are allocated.
const MAX_INFLATE_RATIO: usize = 1100;

/// What the reader may allocate for one block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadLimits {
    /// The largest plain block accepted: a block is the writer's target
    /// size plus at most one record, and a record at most a command of 1 GiB
    /// (MySQL's largest max_allowed_packet).
    pub max_block: usize,
}

impl Default for ReadLimits {
    fn default() -> Self {
        ReadLimits { max_block: (1 << 30) + (16 << 20) }
    }
}

/// Why a capture could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    #[error("{0}")]
    NotACapture(String),
    #[error(
        "written in capture format {major}.{minor} by a newer wirebench; this one reads format {FORMAT_MAJOR}.x: \
         read it with a wirebench as new as the one that wrote it"
    )]
    NewerVersion { major: u16, minor: u16 },
    #[error(
        "damaged at byte {offset}: {what}; the records before that offset were read, nothing after it can be \
         trusted: import or record it again, or keep what was read"
    )]
    Damaged { offset: u64, what: String },
    #[error("could not read the capture: {0}")]
    Io(#[from] std::io::Error),
}

/// How the file ended, once [`CaptureReader::next_record`] returned `None`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// With its end block: the file is whole.
    Clean(Totals),
    /// Cut off (a crash, a full disk, a copy not finished): every whole
    /// block before `offset` was read.
    Truncated { offset: u64, reason: &'static str },
}

/// Reads records one at a time; see the module documentation.
pub struct CaptureReader<R: Read> {
    input: R,
    limits: ReadLimits,
    header: CaptureHeader,
    /// Bytes read from the input so far.
    offset: u64,
    /// Where the block being read starts.
    block_at: u64,
    stored: Vec<u8>,
    plain: Vec<u8>,
    inflater: Box<DecompressorOxide>,
    /// Where the next record starts in `plain`.
    pos: usize,
    records_left: u32,
    prev_ns: u64,
    block_last_ns: u64,
    ending: Option<Ending>,
}

impl<R: Read> std::fmt::Debug for CaptureReader<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CaptureReader").field("offset", &self.offset).field("ending", &self.ending).finish()
    }
}

/// What the first bytes of a file that is not a capture look like, to say
/// what to do with it.
fn not_a_capture(first: &[u8]) -> ReadError {
    let pcap = [[0xD4, 0xC3, 0xB2, 0xA1], [0xA1, 0xB2, 0xC3, 0xD4], [0x4D, 0x3C, 0xB2, 0xA1], [0xA1, 0xB2, 0x3C, 0x4D]];
    let hint = if first.get(..4) == Some(&[0x0A, 0x0D, 0x0D, 0x0A][..])
        || pcap.iter().any(|m| first.get(..4) == Some(&m[..]))
    {
        "it is a pcap file: import it first with `wirebench capture import --from=pcap FILE --out=CAPTURE`"
    } else if first.is_empty() {
        "it is empty"
    } else if first.iter().all(|b| b.is_ascii_graphic() || b.is_ascii_whitespace()) {
        "it is text: a server log is imported first with `wirebench capture import --from=general-log|slow-log FILE --out=CAPTURE`"
    } else {
        "give a file written by `wirebench capture import` or `wirebench record`"
    };
    ReadError::NotACapture(format!("not a wirebench capture (it does not start with the capture signature): {hint}"))
}

fn cut_header() -> ReadError {
    ReadError::NotACapture("a capture cut off inside its header: nothing in it can be read".into())
}

/// Reads up to `buf.len()` bytes; fewer only at the end of the input.
fn read_full<R: Read>(input: &mut R, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match input.read(buf.get_mut(filled..).unwrap_or_default()) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

impl<R: Read> CaptureReader<R> {
    pub fn open(input: R) -> Result<Self, ReadError> {
        CaptureReader::with_limits(input, ReadLimits::default())
    }

    pub fn with_limits(mut input: R, limits: ReadLimits) -> Result<Self, ReadError> {
        let mut fixed = [0u8; 16];
        let got = read_full(&mut input, &mut fixed)?;
        let seen = fixed.get(..got).unwrap_or_default();
        if seen.get(..MAGIC.len()) != Some(&MAGIC[..]) {
            return Err(not_a_capture(seen));
        }
        if got < fixed.len() {
            return Err(cut_header());
        }
        let [_, _, _, _, _, _, _, _, v0, v1, v2, v3, l0, l1, l2, l3] = fixed;
        let (major, minor) = (u16::from_le_bytes([v0, v1]), u16::from_le_bytes([v2, v3]));
        if major > FORMAT_MAJOR {
            return Err(ReadError::NewerVersion { major, minor });
        }
        let body_len = u32::from_le_bytes([l0, l1, l2, l3]) as usize;
        let damaged = |what: &str| ReadError::Damaged { offset: 0, what: format!("its header {what}") };
        if body_len > MAX_HEADER_BODY {
            return Err(damaged("claims more bytes than a header holds"));
        }
        let mut rest = vec![0u8; body_len + 4];
        if read_full(&mut input, &mut rest)? < rest.len() {
            return Err(cut_header());
        }
        let (body, crc) = rest.split_at(body_len);
        let mut whole = fixed.to_vec();
        whole.extend_from_slice(body);
        if crc32fast::hash(&whole).to_le_bytes() != crc {
            return Err(damaged("fails its checksum"));
        }
        let header = decode_header_body(body, (major, minor)).map_err(|e| damaged(&format!("has a bad {}", e.0)))?;
        let offset = (16 + rest.len()) as u64;
        Ok(CaptureReader {
            input,
            limits,
            header,
            offset,
            block_at: offset,
            stored: Vec::new(),
            plain: Vec::new(),
            inflater: Box::default(),
            pos: 0,
            records_left: 0,
            prev_ns: 0,
            block_last_ns: 0,
            ending: None,
        })
    }

    pub fn header(&self) -> &CaptureHeader {
        &self.header
    }

    /// Bytes of the file read so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// How the file ended; `None` until [`next_record`](Self::next_record) returned `None`.
    pub fn ending(&self) -> Option<&Ending> {
        self.ending.as_ref()
    }

    /// The next record in time order; `None` at the end (see [`ending`](Self::ending)).
    pub fn next_record(&mut self) -> Result<Option<Record<'_>>, ReadError> {
        loop {
            if self.records_left == 0 {
                if self.ending.is_some() || !self.next_block()? {
                    return Ok(None);
                }
                continue;
            }
            let (kind, body) = self.take_record()?;
            if !Record::is_known(kind) {
                continue;
            }
            let block_at = self.block_at;
            let damaged = |what: String| ReadError::Damaged { offset: block_at, what };
            let body = self.plain.get(body).unwrap_or_default();
            let record = match Record::decode(kind, body, self.prev_ns) {
                Ok(Some(record)) => record,
                Ok(None) => return Err(damaged("a record of a known type was not read".into())),
                Err(e) => return Err(damaged(format!("a record in the block starting there has a bad {}", e.0))),
            };
            if record.at_ns() > self.block_last_ns {
                return Err(damaged("a record's time is past its block's last".into()));
            }
            self.prev_ns = record.at_ns();
            return Ok(Some(record));
        }
    }

    /// Steps over the next record of the block: its type and where its body lies.
    fn take_record(&mut self) -> Result<(u8, std::ops::Range<usize>), ReadError> {
        let plain = self.plain.get(self.pos..).unwrap_or_default();
        let mut c = Cursor::new(plain);
        let (Ok(kind), Ok(body)) = (c.u8("record type"), c.bytes("record")) else {
            return Err(self.damaged_here("a record runs past the end of its block"));
        };
        let end = self.pos + c.position();
        let range = end - body.len()..end;
        self.pos = end;
        self.records_left -= 1;
        if self.records_left == 0 && self.pos != self.plain.len() {
            return Err(self.damaged_here("a block has bytes after its last record"));
        }
        Ok((kind, range))
    }

    /// Reads the next block into `plain`; false at the end of the file.
    fn next_block(&mut self) -> Result<bool, ReadError> {
        self.block_at = self.offset;
        let mut raw = [0u8; BLOCK_HEADER_LEN];
        let got = read_full(&mut self.input, &mut raw)?;
        self.offset += got as u64;
        if got == 0 {
            return self.truncated("it ends without its end block: the program writing it did not finish");
        }
        if got < BLOCK_HEADER_LEN {
            return self.cut_or_zeros(raw.get(..got).unwrap_or_default(), "it ends inside a block's header");
        }
        let header = match BlockHeader::parse(&raw) {
            Ok(header) => header,
            Err(BadHeader::Magic { zeros: true }) => return self.cut_or_zeros(&raw, ""),
            Err(BadHeader::Magic { zeros: false }) => return Err(self.damaged_here("no block starts there")),
            Err(BadHeader::Checksum) => return Err(self.damaged_here("a block header fails its checksum")),
            Err(BadHeader::Field(what)) => return Err(self.damaged_here(&format!("a block header is wrong: {what}"))),
        };
        if header.codec != CODEC_END && header.first_ns < self.prev_ns {
            return Err(self.damaged_here("a block starts before the previous one ended"));
        }
        if !self.read_stored(header.stored_len)? {
            return self.truncated("it ends inside a block");
        }
        self.unpack(&header)?;
        if header.codec == CODEC_END {
            let totals = Totals::decode(&self.plain)
                .map_err(|e| self.damaged_here(&format!("its end block has a bad {}", e.0)))?;
            let mut probe = [0u8; 1];
            if read_full(&mut self.input, &mut probe)? > 0 {
                return Err(ReadError::Damaged { offset: self.offset, what: "bytes follow its end block".into() });
            }
            self.ending = Some(Ending::Clean(totals));
            return Ok(false);
        }
        self.pos = 0;
        self.records_left = header.records;
        self.prev_ns = header.first_ns;
        self.block_last_ns = header.last_ns;
        Ok(true)
    }

    fn damaged_here(&self, what: &str) -> ReadError {
        ReadError::Damaged { offset: self.block_at, what: what.to_owned() }
    }

    fn truncated(&mut self, reason: &'static str) -> Result<bool, ReadError> {
        self.ending = Some(Ending::Truncated { offset: self.block_at, reason });
        Ok(false)
    }

    /// The file ends with a partial header, or with zeros where a block
    /// should start: both what a crash leaves behind. Anything else there
    /// is damage.
    fn cut_or_zeros(&mut self, seen: &[u8], cut_reason: &'static str) -> Result<bool, ReadError> {
        let mut zeros = seen.iter().all(|&b| b == 0);
        let mut chunk = [0u8; 8192];
        loop {
            let n = read_full(&mut self.input, &mut chunk)?;
            zeros &= chunk.get(..n).unwrap_or_default().iter().all(|&b| b == 0);
            self.offset += n as u64;
            if n < chunk.len() {
                break;
            }
        }
        if zeros {
            return self.truncated("it ends with zero bytes where a block should start (what a crash leaves)");
        }
        if seen.len() < BLOCK_HEADER_LEN && self.offset == self.block_at + seen.len() as u64 {
            return self.truncated(cut_reason);
        }
        Err(self.damaged_here("no block starts there"))
    }

    /// Reads a block's stored bytes; false when the file ends first. The
    /// buffer grows only as bytes arrive, so a length the file does not
    /// hold allocates nothing.
    fn read_stored(&mut self, len: usize) -> Result<bool, ReadError> {
        self.stored.clear();
        let got = (&mut self.input).take(len as u64).read_to_end(&mut self.stored)?;
        self.offset += got as u64;
        Ok(got == len)
    }

    /// The block's plain bytes, inflated if need be, checked against its CRC.
    fn unpack(&mut self, header: &BlockHeader) -> Result<(), ReadError> {
        if header.plain_len > self.limits.max_block {
            return Err(self.damaged_here(&format!(
                "a block claims {} bytes, more than the {} a block may hold",
                header.plain_len, self.limits.max_block
            )));
        }
        self.plain.clear();
        if header.codec == CODEC_DEFLATE {
            if header.plain_len > self.stored.len().saturating_mul(MAX_INFLATE_RATIO) {
                return Err(self.damaged_here("a block claims more bytes than its compressed bytes can hold"));
            }
            self.plain.resize(header.plain_len, 0);
            self.inflater.init();
            let (status, read, written) = decompress(
                &mut self.inflater,
                &self.stored,
                &mut self.plain,
                0,
                TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF,
            );
            if status != TINFLStatus::Done || read != self.stored.len() || written != header.plain_len {
                return Err(self.damaged_here("a block's compressed bytes do not inflate to its length"));
            }
        } else {
            std::mem::swap(&mut self.plain, &mut self.stored);
        }
        if crc32fast::hash(&self.plain) != header.plain_crc {
            return Err(self.damaged_here("a block's records fail their checksum"));
        }
        Ok(())
    }
}
