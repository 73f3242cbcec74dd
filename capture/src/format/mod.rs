//! The capture file format, version 1 (docs/capture.md, "The file format"):
//! a header, then blocks of records, then an end block.
//!
//! - `record.rs`: the records and their encoding;
//! - `block.rs`: a block (records compressed together, checksummed) and
//!   [`BlockBuilder`], which makes them without doing any I/O;
//! - `writer.rs`: [`CaptureWriter`], the header, blocks and end block onto a `Write`;
//! - `merge.rs`: [`RecordMerge`], several sources' records in one time order;
//! - `reader.rs`: [`CaptureReader`], one streaming pass with one block in memory;
//! - `varint.rs`: LEB128 and a bounds-checked cursor.
//!
//! Records are in time order through the whole file, so one pass reads
//! every connection in order with one block in memory, however many
//! connections the capture has.

mod block;
mod merge;
mod reader;
mod record;
mod varint;
mod writer;

pub use block::{BlockBuilder, BlockSettings, OutOfOrder, BLOCK_HEADER_LEN};
pub use merge::RecordMerge;
pub use reader::{CaptureReader, Ending, ReadError, ReadLimits};
pub use record::{
    answer_kind_code, answer_kind_of, Answer, AnswerError, CloseReason, Command, ConnId, ConnectionClose,
    ConnectionOpen, Gap, GapReason, Record,
};
pub use writer::{CaptureWriter, WriteError};

use varint::{put_bytes, put_varint, Cursor, Short};

/// The first bytes of every capture. The high first byte and the CR LF
/// catch a file mangled by a text-mode transfer, as PNG's signature does.
pub const MAGIC: [u8; 8] = *b"\x89WBCAP\r\n";
/// The major version this code writes and reads: a reader refuses a file of
/// a greater major version.
pub const FORMAT_MAJOR: u16 = 1;
/// The minor version this code writes: a greater one adds record types and
/// fields, which this code skips.
pub const FORMAT_MINOR: u16 = 0;
/// The header body's size limit: its fields are a few names.
const MAX_HEADER_BODY: usize = 64 << 10;

/// Where the records came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Source {
    /// `wirebench record`, a proxy that saw every byte.
    Record,
    Pcap,
    GeneralLog,
    SlowLog,
    Other(u8),
}

impl Source {
    fn code(self) -> u8 {
        match self {
            Source::Record => 1,
            Source::Pcap => 2,
            Source::GeneralLog => 3,
            Source::SlowLog => 4,
            Source::Other(code) => code,
        }
    }

    fn from_code(code: u8) -> Self {
        match code {
            1 => Source::Record,
            2 => Source::Pcap,
            3 => Source::GeneralLog,
            4 => Source::SlowLog,
            other => Source::Other(other),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Source::Record => "record",
            Source::Pcap => "pcap",
            Source::GeneralLog => "general-log",
            Source::SlowLog => "slow-log",
            Source::Other(_) => "other",
        }
    }
}

/// What the source knows of answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AnswerCoverage {
    /// None: a general log.
    None,
    /// Some fields of some answers: a slow log (rows sent and examined, the
    /// time taken).
    Partial,
    /// Every answer read off the wire.
    Whole,
}

impl AnswerCoverage {
    fn code(self) -> u8 {
        match self {
            AnswerCoverage::None => 0,
            AnswerCoverage::Partial => 1,
            AnswerCoverage::Whole => 2,
        }
    }

    fn from_code(code: u8) -> Self {
        match code {
            0 => AnswerCoverage::None,
            2 => AnswerCoverage::Whole,
            _ => AnswerCoverage::Partial,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            AnswerCoverage::None => "none",
            AnswerCoverage::Partial => "partial",
            AnswerCoverage::Whole => "whole",
        }
    }
}

/// The file's header: what the records came from and how exact they are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureHeader {
    pub source: Source,
    /// The input file, or the proxy's endpoints.
    pub source_name: String,
    /// When the file was written, ns since the Unix epoch.
    pub created_ns: u64,
    /// The resolution of the records' times: 1 for a proxy's clock, 1000
    /// for a microsecond pcap or log, 1e9 for a log that prints seconds.
    pub time_resolution_ns: u64,
    pub answers: AnswerCoverage,
    /// The program that wrote the file, e.g. `wirebench 0.1.0`.
    pub writer: String,
    /// The file's format version (what [`CaptureReader`] read; what a writer writes).
    pub version: (u16, u16),
}

impl CaptureHeader {
    pub fn new(source: Source, source_name: impl Into<String>) -> Self {
        CaptureHeader {
            source,
            source_name: source_name.into(),
            created_ns: 0,
            time_resolution_ns: 1,
            answers: AnswerCoverage::Whole,
            writer: String::new(),
            version: (FORMAT_MAJOR, FORMAT_MINOR),
        }
    }
}

const FIELD_SOURCE: u64 = 1;
const FIELD_SOURCE_NAME: u64 = 2;
const FIELD_CREATED: u64 = 3;
const FIELD_RESOLUTION: u64 = 4;
const FIELD_ANSWERS: u64 = 5;
const FIELD_WRITER: u64 = 6;

/// The header's bytes: magic, version, body length, body, CRC-32.
fn encode_header(header: &CaptureHeader) -> Vec<u8> {
    let mut body = Vec::new();
    let mut field = |tag: u64, value: &[u8]| {
        put_varint(&mut body, tag);
        put_bytes(&mut body, value);
    };
    field(FIELD_SOURCE, &[header.source.code()]);
    field(FIELD_SOURCE_NAME, header.source_name.as_bytes());
    let mut number = Vec::new();
    put_varint(&mut number, header.created_ns);
    field(FIELD_CREATED, &number);
    number.clear();
    put_varint(&mut number, header.time_resolution_ns);
    field(FIELD_RESOLUTION, &number);
    field(FIELD_ANSWERS, &[header.answers.code()]);
    field(FIELD_WRITER, header.writer.as_bytes());
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&FORMAT_MAJOR.to_le_bytes());
    out.extend_from_slice(&FORMAT_MINOR.to_le_bytes());
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(&body);
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// Reads a header body's fields; unknown ones are skipped.
fn decode_header_body(body: &[u8], version: (u16, u16)) -> Result<CaptureHeader, Short> {
    let mut header = CaptureHeader::new(Source::Other(0), "");
    header.version = version;
    let mut c = Cursor::new(body);
    while !c.is_empty() {
        let tag = c.varint("header field tag")?;
        let value = c.bytes("header field")?;
        let mut v = Cursor::new(value);
        match tag {
            FIELD_SOURCE => header.source = Source::from_code(v.u8("source")?),
            FIELD_SOURCE_NAME => header.source_name = String::from_utf8_lossy(value).into_owned(),
            FIELD_CREATED => header.created_ns = v.varint("creation time")?,
            FIELD_RESOLUTION => header.time_resolution_ns = v.varint("time resolution")?,
            FIELD_ANSWERS => header.answers = AnswerCoverage::from_code(v.u8("answers")?),
            FIELD_WRITER => header.writer = String::from_utf8_lossy(value).into_owned(),
            _ => {}
        }
    }
    Ok(header)
}

/// What a clean file's end block says of the whole file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Totals {
    pub records: u64,
    pub connections: u64,
    pub commands: u64,
    pub answers: u64,
    pub first_ns: u64,
    pub last_ns: u64,
}

impl Totals {
    pub(crate) fn count(&mut self, record: &Record<'_>) {
        if self.records == 0 {
            self.first_ns = record.at_ns();
        }
        self.records += 1;
        self.last_ns = record.at_ns();
        match record {
            Record::Open(_) => self.connections += 1,
            Record::Command(_) => self.commands += 1,
            Record::Answer(_) => self.answers += 1,
            Record::Close(_) | Record::Gap(_) => {}
        }
    }

    fn encode(&self, out: &mut Vec<u8>) {
        for v in [self.records, self.connections, self.commands, self.answers, self.first_ns, self.last_ns] {
            put_varint(out, v);
        }
    }

    fn decode(bytes: &[u8]) -> Result<Self, Short> {
        let mut c = Cursor::new(bytes);
        Ok(Totals {
            records: c.varint("total records")?,
            connections: c.varint("total connections")?,
            commands: c.varint("total commands")?,
            answers: c.varint("total answers")?,
            first_ns: c.varint("first time")?,
            last_ns: c.varint("last time")?,
        })
    }
}

#[cfg(test)]
mod format_tests;
