//! Helpers shared by the fuzz targets: carving parameters out of the fuzz
//! input, capability sets, column definitions and a deterministic rng.
//!
//! Every target takes its parameters (capabilities, column types, split
//! points) from the first bytes of the input and feeds the rest to the
//! decoder, so the seed corpus can be real captured bytes behind a few
//! parameter bytes.

use wirebench_protocol::auth::rand_core::{self, CryptoRng, RngCore};
use wirebench_protocol::framing::decode_packet;
use wirebench_protocol::response::ColumnDefinition;
use wirebench_protocol::{Capabilities, ColumnFlags, ColumnType};

/// A cursor that hands out parameter bytes, zero once the input runs out.
pub struct Input<'a> {
    data: &'a [u8],
}

impl<'a> Input<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Input { data }
    }

    pub fn u8(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }

    /// Up to `n` bytes, fewer if the input runs out.
    pub fn take(&mut self, n: usize) -> &'a [u8] {
        let (taken, rest) = self.data.split_at(n.min(self.data.len()));
        self.data = rest;
        taken
    }

    /// What is left, without using it up.
    pub fn rest(&self) -> &'a [u8] {
        self.data
    }
}

/// The capability bits that change how some decoder reads its bytes.
const DECODING_CAPS: [Capabilities; 8] = [
    Capabilities::PROTOCOL_41,
    Capabilities::TRANSACTIONS,
    Capabilities::SESSION_TRACK,
    Capabilities::DEPRECATE_EOF,
    Capabilities::MARIADB_CLIENT_EXTENDED_TYPE_INFO,
    Capabilities::MARIADB_CLIENT_CACHE_METADATA,
    Capabilities::CONNECT_WITH_DB,
    Capabilities::MULTI_RESULTS,
];

/// Any combination of the decoding-relevant capabilities, one bit each.
pub fn caps_from_bits(bits: u8) -> Capabilities {
    DECODING_CAPS
        .iter()
        .enumerate()
        .filter(|(i, _)| bits & (1 << i) != 0)
        .fold(Capabilities::empty(), |caps, (_, &flag)| caps | flag)
}

/// What the MariaDB 10.11 captures in protocol/src/response/testdata negotiated.
pub const CAPTURE_BASE: Capabilities = wirebench_protocol::response::testdata::CAPTURE_CAPABILITIES;

/// The capability sets a client really runs with, then the odd ones: index
/// with the low bits of a parameter byte. 0..=2 are the captures' own sets
/// (suffixes eof, deof, ext).
pub const CAPABILITY_SETS: [Capabilities; 8] = [
    CAPTURE_BASE,
    CAPTURE_BASE.union(Capabilities::DEPRECATE_EOF),
    CAPTURE_BASE
        .union(Capabilities::DEPRECATE_EOF)
        .union(Capabilities::MARIADB_CLIENT_EXTENDED_TYPE_INFO)
        .union(Capabilities::MARIADB_CLIENT_CACHE_METADATA),
    CAPTURE_BASE.union(Capabilities::SESSION_TRACK),
    CAPTURE_BASE.union(Capabilities::DEPRECATE_EOF).union(Capabilities::SESSION_TRACK),
    CAPTURE_BASE.union(Capabilities::MARIADB_CLIENT_CACHE_METADATA),
    Capabilities::TRANSACTIONS,
    Capabilities::empty(),
];

/// Every column type a server can send, so any byte picks a valid one.
pub const COLUMN_TYPES: [ColumnType; 33] = {
    let mut types = [ColumnType::Decimal; 33];
    let mut n = 0;
    let mut b = 0usize;
    while b < 256 {
        if let Some(ty) = ColumnType::from_u8(b as u8) {
            types[n] = ty;
            n += 1;
        }
        b += 1;
    }
    assert!(n == 33, "ColumnType gained or lost variants: update COLUMN_TYPES");
    types
};

/// A column definition from four parameter bytes: type, flags (UNSIGNED and
/// ZEROFILL by bit), decimals, display length.
pub fn column_from(input: &mut Input<'_>) -> ColumnDefinition<'static> {
    let ty = COLUMN_TYPES[usize::from(input.u8()) % COLUMN_TYPES.len()];
    let flag_bits = input.u8();
    let mut col = ColumnDefinition::new(b"c", ty);
    let mut flags = 0;
    if flag_bits & 1 != 0 {
        flags |= ColumnFlags::UNSIGNED.0;
    }
    if flag_bits & 2 != 0 {
        flags |= ColumnFlags::ZEROFILL.0;
    }
    col.flags = ColumnFlags(flags);
    col.decimals = input.u8();
    col.column_length = u32::from(input.u8());
    col
}

/// The logical packets at the start of `bytes` (sequence ids from
/// `first_seq`), stopping at the first incomplete or malformed one. Returns
/// the payloads and the bytes they used.
pub fn split_packets(bytes: &[u8], first_seq: u8) -> (Vec<Vec<u8>>, Vec<usize>) {
    let mut payloads = Vec::new();
    let mut ends = Vec::new();
    let mut pos = 0usize;
    let mut seq = first_seq;
    while let Ok(Some(frame)) = decode_packet(&bytes[pos..], seq, 1 << 24) {
        pos += frame.consumed;
        seq = frame.next_seq;
        payloads.push(frame.payload.into_owned());
        ends.push(pos);
    }
    (payloads, ends)
}

/// A deterministic rng (SplitMix64) for the RSA-OAEP padding. Marked
/// `CryptoRng` only because the API asks for one: never use it for real.
#[derive(Debug, Clone)]
pub struct FuzzRng(pub u64);

impl RngCore for FuzzRng {
    fn next_u32(&mut self) -> u32 {
        self.next_u64() as u32
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn fill_bytes(&mut self, dest: &mut [u8]) {
        for chunk in dest.chunks_mut(8) {
            let v = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }

    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand_core::Error> {
        self.fill_bytes(dest);
        Ok(())
    }
}

impl CryptoRng for FuzzRng {}

/// A 1024-bit RSA public key (SubjectPublicKeyInfo PEM, as MySQL sends it);
/// its private half was thrown away.
pub const TEST_PUBLIC_KEY: &str = "-----BEGIN PUBLIC KEY-----
MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQChtlTRBg8Z+RvebisH/IYXCCI1
2RZbQzhpUBBVBtqrbIVnQjqm2q0QlUjz0wrolKjk5hF/gjWbnmkqMYeatMiIfCyc
SQs7wdTMvqgbmxPtVXmtQYH5EatQc+kz08WbfmBiGOyHqXmquhH1vReklCFiCeDs
uK/ebH4NgAaP0ghiDwIDAQAB
-----END PUBLIC KEY-----
";
