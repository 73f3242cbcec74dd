//! The packets of a pcap or pcapng file, one at a time, with their time
//! and link type: the container only (frames are decoded in `frame.rs`).
//!
//! pcap: a 24-byte header (its magic says the byte order and whether times
//! are in µs or ns, its last field the link type), then per packet a
//! 16-byte header and the bytes. pcapng: blocks (type, length, body,
//! length again) in sections; a section header block sets the byte order,
//! interface description blocks the link type and time resolution
//! (`if_tsresol`, `if_tsoffset`) of each interface, enhanced and simple
//! packet blocks carry the packets; every other block is skipped.
//!
//! A file cut inside its last packet (tcpdump killed) ends the packets
//! there and says so ([`PcapReader::cut_at`]); anything that cannot be a
//! packet is refused with its offset.

use std::io::{ErrorKind, Read};

/// The largest block or packet accepted: far above any snap length
/// (tcpdump's default is 262144), and what bounds an allocation.
const MAX_PACKET: usize = 16 << 20;

const PCAP_MICROS: u32 = 0xA1B2_C3D4;
const PCAP_NANOS: u32 = 0xA1B2_3C4D;
const PCAPNG_SECTION: u32 = 0x0A0D_0D0A;
const PCAPNG_BYTE_ORDER: u32 = 0x1A2B_3C4D;
const BLOCK_INTERFACE: u32 = 1;
const BLOCK_PACKET_OBSOLETE: u32 = 2;
const BLOCK_SIMPLE_PACKET: u32 = 3;
const BLOCK_ENHANCED_PACKET: u32 = 6;
const OPTION_END: u16 = 0;
const OPTION_TSRESOL: u16 = 9;
const OPTION_TSOFFSET: u16 = 14;

/// Why a file cannot be read as a capture of packets.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PcapError {
    #[error("not a pcap or pcapng file (it starts with {0}): give a file written by tcpdump -w, tshark -w or dumpcap")]
    NotPcap(String),
    #[error("the pcap file is damaged at byte {offset}: {what}")]
    Damaged { offset: u64, what: &'static str },
    #[error("could not read the pcap file: {0}")]
    Io(#[from] std::io::Error),
}

/// One captured frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame<'a> {
    /// When it was captured, ns since the Unix epoch.
    pub at_ns: u64,
    /// Its link type (LINKTYPE_* numbers, as in the file).
    pub link_type: u32,
    pub data: &'a [u8],
    /// Bytes of the packet the capture did not keep (snap length).
    pub cut: usize,
    /// The resolution of its time, in ns.
    pub resolution_ns: u64,
}

/// How times of one interface are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Interface {
    link_type: u32,
    /// Units per second: 10^6 unless `if_tsresol` says otherwise.
    units_per_second: u64,
    offset_s: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Pcap { big_endian: bool, nanos: bool, link_type: u32 },
    Pcapng { big_endian: bool },
}

/// Reads frames; see the module documentation.
pub struct PcapReader<R: Read> {
    input: R,
    kind: Kind,
    interfaces: Vec<Interface>,
    buf: Vec<u8>,
    offset: u64,
    cut_at: Option<u64>,
    /// The pcapng section header's own block was read with the file's start.
    pending_section: Option<Vec<u8>>,
}

impl<R: Read> std::fmt::Debug for PcapReader<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PcapReader").field("kind", &self.kind).field("offset", &self.offset).finish()
    }
}

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

fn u16_at(bytes: &[u8], at: usize, big_endian: bool) -> u16 {
    let b = [bytes.get(at).copied().unwrap_or(0), bytes.get(at + 1).copied().unwrap_or(0)];
    if big_endian {
        u16::from_be_bytes(b)
    } else {
        u16::from_le_bytes(b)
    }
}

fn u32_at(bytes: &[u8], at: usize, big_endian: bool) -> u32 {
    let mut b = [0u8; 4];
    for (i, slot) in b.iter_mut().enumerate() {
        *slot = bytes.get(at + i).copied().unwrap_or(0);
    }
    if big_endian {
        u32::from_be_bytes(b)
    } else {
        u32::from_le_bytes(b)
    }
}

fn describe_start(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "nothing: it is empty".into();
    }
    let hex: Vec<String> = bytes.iter().take(4).map(|b| format!("{b:02x}")).collect();
    format!("bytes {}", hex.join(" "))
}

impl<R: Read> PcapReader<R> {
    pub fn open(mut input: R) -> Result<Self, PcapError> {
        let mut start = [0u8; 24];
        let got = read_full(&mut input, &mut start)?;
        let seen = start.get(..got).unwrap_or_default();
        let magic_le = u32_at(seen, 0, false);
        let magic_be = u32_at(seen, 0, true);
        let kind = if got >= 4 && [PCAP_MICROS, PCAP_NANOS].contains(&magic_le) {
            Kind::Pcap { big_endian: false, nanos: magic_le == PCAP_NANOS, link_type: 0 }
        } else if got >= 4 && [PCAP_MICROS, PCAP_NANOS].contains(&magic_be) {
            Kind::Pcap { big_endian: true, nanos: magic_be == PCAP_NANOS, link_type: 0 }
        } else if got >= 4 && magic_le == PCAPNG_SECTION {
            Kind::Pcapng { big_endian: false }
        } else {
            return Err(PcapError::NotPcap(describe_start(seen)));
        };
        let mut reader = PcapReader {
            input,
            kind,
            interfaces: Vec::new(),
            buf: Vec::new(),
            offset: got as u64,
            cut_at: None,
            pending_section: None,
        };
        match kind {
            Kind::Pcap { big_endian, nanos, .. } => {
                if got < 24 {
                    return Err(PcapError::Damaged { offset: 0, what: "the file ends inside its 24-byte header" });
                }
                let link_type = u32_at(&start, 20, big_endian) & 0x0FFF_FFFF;
                reader.kind = Kind::Pcap { big_endian, nanos, link_type };
            }
            Kind::Pcapng { .. } => reader.pending_section = Some(seen.to_vec()),
        }
        Ok(reader)
    }

    /// Where the file was cut inside a packet, once [`next_frame`](Self::next_frame) returned `None`.
    pub fn cut_at(&self) -> Option<u64> {
        self.cut_at
    }

    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The next frame; `None` at the end of the file.
    pub fn next_frame(&mut self) -> Result<Option<Frame<'_>>, PcapError> {
        match self.kind {
            Kind::Pcap { big_endian, nanos, link_type } => self.next_pcap(big_endian, nanos, link_type),
            Kind::Pcapng { .. } => self.next_pcapng(),
        }
    }

    /// Reads `len` bytes into `buf`; false (and the cut noted) when the file ends first.
    fn fill(&mut self, len: usize, at: u64) -> Result<bool, PcapError> {
        self.buf.clear();
        let got = (&mut self.input).take(len as u64).read_to_end(&mut self.buf)?;
        self.offset += got as u64;
        if got < len {
            self.cut_at = Some(at);
            return Ok(false);
        }
        Ok(true)
    }

    fn next_pcap(&mut self, big_endian: bool, nanos: bool, link_type: u32) -> Result<Option<Frame<'_>>, PcapError> {
        let at = self.offset;
        let mut header = [0u8; 16];
        let got = read_full(&mut self.input, &mut header)?;
        self.offset += got as u64;
        if got < 16 {
            if got > 0 {
                self.cut_at = Some(at);
            }
            return Ok(None);
        }
        let seconds = u64::from(u32_at(&header, 0, big_endian));
        let fraction = u64::from(u32_at(&header, 4, big_endian));
        let captured = u32_at(&header, 8, big_endian) as usize;
        let original = u32_at(&header, 12, big_endian) as usize;
        if captured > MAX_PACKET {
            return Err(PcapError::Damaged { offset: at, what: "a packet header claims more than 16 MiB" });
        }
        if !self.fill(captured, at)? {
            return Ok(None);
        }
        let at_ns = seconds.saturating_mul(1_000_000_000).saturating_add(if nanos {
            fraction
        } else {
            fraction.saturating_mul(1000)
        });
        let resolution_ns = if nanos { 1 } else { 1000 };
        Ok(Some(Frame { at_ns, link_type, data: &self.buf, cut: original.saturating_sub(captured), resolution_ns }))
    }

    fn next_pcapng(&mut self) -> Result<Option<Frame<'_>>, PcapError> {
        loop {
            let at = self.offset;
            let (block_type, big_endian) = match self.read_block(at)? {
                Some(found) => found,
                None => return Ok(None),
            };
            let body = self.buf.get(8..self.buf.len().saturating_sub(4)).unwrap_or_default();
            match block_type {
                PCAPNG_SECTION => self.interfaces.clear(),
                BLOCK_INTERFACE => {
                    let interface = interface(body, big_endian)
                        .ok_or(PcapError::Damaged { offset: at, what: "a bad interface description block" })?;
                    self.interfaces.push(interface);
                }
                BLOCK_ENHANCED_PACKET | BLOCK_PACKET_OBSOLETE => {
                    let enhanced = block_type == BLOCK_ENHANCED_PACKET;
                    let (id, fields) = if enhanced {
                        (u32_at(body, 0, big_endian) as usize, 4)
                    } else {
                        (usize::from(u16_at(body, 0, big_endian)), 4)
                    };
                    let high = u64::from(u32_at(body, fields, big_endian));
                    let low = u64::from(u32_at(body, fields + 4, big_endian));
                    let captured = u32_at(body, fields + 8, big_endian) as usize;
                    let original = u32_at(body, fields + 12, big_endian) as usize;
                    let data_at = fields + 16;
                    let interface = *self
                        .interfaces
                        .get(id)
                        .ok_or(PcapError::Damaged { offset: at, what: "a packet of an interface never described" })?;
                    let data_end = data_at
                        .checked_add(captured)
                        .filter(|&end| end <= body.len())
                        .ok_or(PcapError::Damaged { offset: at, what: "a packet block shorter than its packet" })?;
                    let at_ns = timestamp(high << 32 | low, interface);
                    let cut = original.saturating_sub(captured);
                    let data = self.buf.get(8 + data_at..8 + data_end).unwrap_or_default();
                    return Ok(Some(Frame {
                        at_ns,
                        link_type: interface.link_type,
                        data,
                        cut,
                        resolution_ns: interface.resolution_ns(),
                    }));
                }
                BLOCK_SIMPLE_PACKET => {
                    let interface = *self.interfaces.first().ok_or(PcapError::Damaged {
                        offset: at,
                        what: "a packet before any interface was described",
                    })?;
                    let original = u32_at(body, 0, big_endian) as usize;
                    let data = body.get(4..).unwrap_or_default();
                    let captured = original.min(data.len());
                    let data = self.buf.get(12..12 + captured).unwrap_or_default();
                    // A simple packet block has no time: the packet gets none rather than a made-up one.
                    let cut = original.saturating_sub(captured);
                    return Ok(Some(Frame {
                        at_ns: 0,
                        link_type: interface.link_type,
                        data,
                        cut,
                        resolution_ns: interface.resolution_ns(),
                    }));
                }
                _ => {}
            }
        }
    }

    /// Reads the next pcapng block whole into `buf`; its type and byte order.
    fn read_block(&mut self, at: u64) -> Result<Option<(u32, bool)>, PcapError> {
        let mut head = self.pending_section.take().unwrap_or_default();
        if head.len() < 12 {
            let have = head.len();
            head.resize(12, 0);
            let got = read_full(&mut self.input, head.get_mut(have..).unwrap_or_default())?;
            self.offset += got as u64;
            head.truncate(have + got);
            if head.len() < 12 {
                if !head.is_empty() {
                    self.cut_at = Some(at);
                }
                return Ok(None);
            }
        }
        let mut big_endian = match self.kind {
            Kind::Pcapng { big_endian } => big_endian,
            Kind::Pcap { .. } => false,
        };
        // The section header's type reads the same in both byte orders;
        // its byte-order magic says which one the section uses.
        let block_type = u32_at(&head, 0, big_endian);
        if block_type == PCAPNG_SECTION {
            big_endian = match (u32_at(&head, 8, false), u32_at(&head, 8, true)) {
                (PCAPNG_BYTE_ORDER, _) => false,
                (_, PCAPNG_BYTE_ORDER) => true,
                _ => return Err(PcapError::Damaged { offset: at, what: "a section header with no byte-order magic" }),
            };
            self.kind = Kind::Pcapng { big_endian };
        }
        let total = u32_at(&head, 4, big_endian) as usize;
        if total < 12 || total < head.len() || total % 4 != 0 || total > MAX_PACKET {
            return Err(PcapError::Damaged { offset: at, what: "a block length that no block has" });
        }
        let want = total - head.len();
        self.buf = head;
        let got = (&mut self.input).take(want as u64).read_to_end(&mut self.buf)?;
        self.offset += got as u64;
        if got < want {
            self.cut_at = Some(at);
            return Ok(None);
        }
        if u32_at(&self.buf, total - 4, big_endian) as usize != total {
            return Err(PcapError::Damaged { offset: at, what: "a block whose two lengths differ" });
        }
        Ok(Some((block_type, big_endian)))
    }
}

impl Interface {
    fn resolution_ns(&self) -> u64 {
        (1_000_000_000 / self.units_per_second.max(1)).max(1)
    }
}

/// An interface description block's link type and time options.
fn interface(body: &[u8], big_endian: bool) -> Option<Interface> {
    if body.len() < 8 {
        return None;
    }
    let mut interface =
        Interface { link_type: u32::from(u16_at(body, 0, big_endian)), units_per_second: 1_000_000, offset_s: 0 };
    let mut at = 8;
    while at + 4 <= body.len() {
        let code = u16_at(body, at, big_endian);
        let len = usize::from(u16_at(body, at + 2, big_endian));
        let value = body.get(at + 4..at + 4 + len)?;
        match code {
            OPTION_END => break,
            OPTION_TSRESOL => {
                let r = *value.first()?;
                let exponent = u32::from(r & 0x7F);
                interface.units_per_second =
                    if r & 0x80 == 0 { 10u64.checked_pow(exponent)? } else { 1u64.checked_shl(exponent)? };
            }
            OPTION_TSOFFSET if len == 8 => {
                let mut b = [0u8; 8];
                b.copy_from_slice(value);
                interface.offset_s = if big_endian { i64::from_be_bytes(b) } else { i64::from_le_bytes(b) };
            }
            _ => {}
        }
        at += 4 + len.div_ceil(4) * 4;
    }
    Some(interface)
}

/// A pcapng timestamp in ns since the Unix epoch.
fn timestamp(units: u64, interface: Interface) -> u64 {
    let per_second = interface.units_per_second.max(1);
    let seconds = units / per_second;
    let fraction = units % per_second;
    let nanos = (u128::from(fraction) * 1_000_000_000 / u128::from(per_second)) as u64;
    let seconds = seconds.saturating_add_signed(interface.offset_s);
    seconds.saturating_mul(1_000_000_000).saturating_add(nanos)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A pcap file (µs, little-endian) of the given frames.
    pub(crate) fn pcap(link_type: u32, frames: &[(u64, &[u8])]) -> Vec<u8> {
        let mut out = Vec::new();
        for v in [PCAP_MICROS, 0x0004_0002, 0, 0, 262_144, link_type] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for (at_ns, data) in frames {
            let (s, us) = ((at_ns / 1_000_000_000) as u32, ((at_ns % 1_000_000_000) / 1000) as u32);
            for v in [s, us, data.len() as u32, data.len() as u32] {
                out.extend_from_slice(&v.to_le_bytes());
            }
            out.extend_from_slice(data);
        }
        out
    }

    fn block(block_type: u32, body: &[u8], big_endian: bool) -> Vec<u8> {
        let put = |v: u32| if big_endian { v.to_be_bytes() } else { v.to_le_bytes() };
        let padded = body.len().div_ceil(4) * 4;
        let total = (12 + padded) as u32;
        let mut out = Vec::new();
        out.extend_from_slice(&put(block_type));
        out.extend_from_slice(&put(total));
        out.extend_from_slice(body);
        out.resize(8 + padded, 0);
        out.extend_from_slice(&put(total));
        out
    }

    /// A pcapng file: one section, one interface with nanosecond times, the frames as enhanced packet blocks.
    pub(crate) fn pcapng(link_type: u16, frames: &[(u64, &[u8])], big_endian: bool) -> Vec<u8> {
        let put32 = |v: u32| if big_endian { v.to_be_bytes() } else { v.to_le_bytes() };
        let put16 = |v: u16| if big_endian { v.to_be_bytes() } else { v.to_le_bytes() };
        let mut shb = Vec::new();
        shb.extend_from_slice(&put32(PCAPNG_BYTE_ORDER));
        shb.extend_from_slice(&put16(1));
        shb.extend_from_slice(&put16(0));
        shb.extend_from_slice(&(-1i64).to_le_bytes());
        let mut out = block(PCAPNG_SECTION, &shb, big_endian);
        // A block of a type this reader skips.
        out.extend(block(4, &[0; 8], big_endian));
        let mut idb = Vec::new();
        idb.extend_from_slice(&put16(link_type));
        idb.extend_from_slice(&put16(0));
        idb.extend_from_slice(&put32(0));
        idb.extend_from_slice(&put16(OPTION_TSRESOL));
        idb.extend_from_slice(&put16(1));
        idb.extend_from_slice(&[9, 0, 0, 0]);
        idb.extend_from_slice(&put16(OPTION_END));
        idb.extend_from_slice(&put16(0));
        out.extend(block(BLOCK_INTERFACE, &idb, big_endian));
        for (at_ns, data) in frames {
            let mut epb = Vec::new();
            epb.extend_from_slice(&put32(0));
            epb.extend_from_slice(&put32((at_ns >> 32) as u32));
            epb.extend_from_slice(&put32(*at_ns as u32));
            epb.extend_from_slice(&put32(data.len() as u32));
            epb.extend_from_slice(&put32(data.len() as u32));
            epb.extend_from_slice(data);
            out.extend(block(BLOCK_ENHANCED_PACKET, &epb, big_endian));
        }
        out
    }

    /// A frame's time, link type and bytes.
    type Read = (u64, u32, Vec<u8>);

    fn frames(bytes: &[u8]) -> (Vec<Read>, Option<u64>) {
        let mut reader = PcapReader::open(bytes).unwrap();
        let mut out = Vec::new();
        while let Some(frame) = reader.next_frame().unwrap() {
            out.push((frame.at_ns, frame.link_type, frame.data.to_vec()));
        }
        (out, reader.cut_at())
    }

    const T: u64 = 1_700_000_000_123_456_000;

    #[test]
    fn pcap_frames_and_times() {
        let file = pcap(1, &[(T, b"abc"), (T + 1_000, b"defgh")]);
        let (read, cut) = frames(&file);
        assert_eq!(read, vec![(T, 1, b"abc".to_vec()), (T + 1_000, 1, b"defgh".to_vec())]);
        assert_eq!(cut, None);
    }

    #[test]
    fn pcapng_in_both_byte_orders_with_nanosecond_times() {
        for big_endian in [false, true] {
            let file = pcapng(113, &[(T + 789, b"abc"), (T + 1_000, b"defgh")], big_endian);
            let (read, cut) = frames(&file);
            assert_eq!(
                read,
                vec![(T + 789, 113, b"abc".to_vec()), (T + 1_000, 113, b"defgh".to_vec())],
                "big endian: {big_endian}"
            );
            assert_eq!(cut, None);
        }
    }

    #[test]
    fn a_file_cut_inside_a_packet_ends_there() {
        for file in [pcap(1, &[(T, b"abc"), (T, b"defgh")]), pcapng(1, &[(T, b"abc"), (T, b"defgh")], false)] {
            let whole = frames(&file).0.len();
            for cut in 24..file.len() {
                let mut reader = PcapReader::open(&file[..cut]).unwrap();
                let mut n = 0;
                while reader.next_frame().unwrap().is_some() {
                    n += 1;
                }
                assert!(n < whole || cut == file.len());
            }
        }
    }

    #[test]
    fn timestamps_follow_the_interfaces_resolution() {
        let micro = Interface { link_type: 1, units_per_second: 1_000_000, offset_s: 0 };
        assert_eq!(timestamp(1_500_000, micro), 1_500_000_000);
        let binary = Interface { link_type: 1, units_per_second: 1 << 10, offset_s: 10 };
        assert_eq!(timestamp(1024 + 512, binary), 11_500_000_000);
    }

    #[test]
    fn other_files_and_damage_are_named() {
        let message = PcapReader::open(&b"\x89WBCAP\r\n"[..]).unwrap_err().to_string();
        assert!(message.contains("not a pcap"), "{message}");
        assert!(PcapReader::open(&b""[..]).unwrap_err().to_string().contains("empty"));
        let mut file = pcap(1, &[(T, b"abc")]);
        file[32..36].copy_from_slice(&u32::MAX.to_le_bytes());
        let mut reader = PcapReader::open(file.as_slice()).unwrap();
        assert!(matches!(reader.next_frame(), Err(PcapError::Damaged { offset: 24, .. })));
        let mut file = pcapng(1, &[(T, b"abc")], false);
        let last = file.len() - 1;
        file[last] ^= 1;
        let mut reader = PcapReader::open(file.as_slice()).unwrap();
        assert!(matches!(reader.next_frame(), Err(PcapError::Damaged { .. })));
    }
}
