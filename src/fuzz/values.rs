//! Edge values for integers, parameters and lengths: where servers'
//! arithmetic and bounds checks break.

use wirebench_protocol::buf::WriteExt;
use wirebench_protocol::command::{Date, DateTime, Time};

use super::dictionary::VALUES;
use super::fuzz_rng::FuzzRng;
use super::spec::OwnedParam;

/// A 32-bit value near a boundary, or a random one.
pub fn edge_u32(rng: &mut FuzzRng) -> u32 {
    const EDGES: [u32; 10] = [0, 1, 2, 0x7F, 0x80, 0xFFFF, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFE, 0xFFFF_FFFF];
    match rng.below(4) {
        0 => rng.next_u32(),
        _ => EDGES.get(rng.below(EDGES.len())).copied().unwrap_or(0),
    }
}

/// A 16-bit value near a boundary, or a small or random one.
pub fn edge_u16(rng: &mut FuzzRng) -> u16 {
    const EDGES: [u16; 9] = [0, 1, 2, 3, 0x7F, 0xFF, 0x7FFF, 0x8000, 0xFFFF];
    match rng.below(4) {
        0 => rng.next_u32() as u16,
        _ => EDGES.get(rng.below(EDGES.len())).copied().unwrap_or(0),
    }
}

/// A one-byte value near a boundary.
pub fn edge_u8(rng: &mut FuzzRng) -> u8 {
    const EDGES: [u8; 10] = [0, 1, 2, 4, 8, 0x7F, 0x80, 0xFB, 0xFE, 0xFF];
    match rng.below(4) {
        0 => (rng.next_u32() >> 24) as u8,
        _ => EDGES.get(rng.below(EDGES.len())).copied().unwrap_or(0),
    }
}

/// Length prefixes at the boundaries of the length-encoded form (0xFB is
/// NULL, 0xFF is no length at all, 0xFE announces 8 bytes) and lies of one
/// byte around `actual`.
pub fn edge_lenenc(rng: &mut FuzzRng, actual: u64) -> Vec<u8> {
    let mut out = Vec::new();
    match rng.below(12) {
        0 => out.push(0xFB),
        1 => out.push(0xFF),
        2 => out.push(0xFE),
        3 => out.extend_from_slice(&[0xFC, 0xFF, 0xFF]),
        4 => out.extend_from_slice(&[0xFD, 0xFF, 0xFF, 0xFF]),
        5 => out.extend_from_slice(&[0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]),
        6 => {
            // Not the shortest form: a small value in 8 bytes.
            out.push(0xFE);
            out.put_u64(actual);
        }
        7 => out.extend_from_slice(&[0xFC, 0x00, 0x00]),
        8 => out.put_lenenc_int(actual.wrapping_sub(1)),
        9 => out.put_lenenc_int(actual.saturating_mul(2).max(0x100)),
        10 => out.push(0),
        _ => out.put_lenenc_int(actual.wrapping_add(1)),
    }
    out
}

/// A one-byte length near the truth or at its limits.
pub fn edge_one_byte_len(rng: &mut FuzzRng, actual: u8) -> Vec<u8> {
    vec![match rng.below(4) {
        0 => 0,
        1 => 0xFF,
        2 => actual.wrapping_sub(1),
        _ => actual.wrapping_add(1),
    }]
}

/// A string: a dictionary value, random bytes, or a long run.
pub fn edge_bytes(rng: &mut FuzzRng) -> Vec<u8> {
    match rng.below(6) {
        0 => Vec::new(),
        1 => {
            let n = rng.below(64);
            rng.bytes(n)
        }
        2 => vec![b'x'; [251, 255, 256, 65_535, 65_536, 70_000][rng.below(6)]],
        _ => rng.pick(VALUES).map_or_else(Vec::new, |v| v.as_bytes().to_vec()),
    }
}

/// A parameter value of a random type, often at the edge of its range.
pub fn random_param(rng: &mut FuzzRng) -> OwnedParam {
    let big = rng.next_u64();
    let edge64 = [0, -1, i64::MIN, i64::MAX, 1, big as i64][rng.below(6)];
    match rng.below(14) {
        0 => OwnedParam::Null,
        1 => OwnedParam::I8(edge64 as i8),
        2 => OwnedParam::I16(edge64 as i16),
        3 => OwnedParam::I32(edge64 as i32),
        4 => OwnedParam::I64(edge64),
        5 => OwnedParam::U64(u64::MAX - rng.below(2) as u64),
        6 => OwnedParam::F32([f32::NAN, f32::INFINITY, -0.0, f32::MAX][rng.below(4)]),
        7 => OwnedParam::F64([f64::NAN, f64::NEG_INFINITY, f64::MIN_POSITIVE, 1e308][rng.below(4)]),
        8 => OwnedParam::Bytes(edge_bytes(rng)),
        9 => OwnedParam::VarString(edge_bytes(rng)),
        10 => OwnedParam::Blob(edge_bytes(rng)),
        11 => {
            OwnedParam::Date(Date { year: [0, 1, 9999, 65535][rng.below(4)], month: edge_u8(rng), day: edge_u8(rng) })
        }
        12 => OwnedParam::Time(Time {
            negative: rng.one_in(2),
            days: edge_u32(rng),
            hours: edge_u8(rng),
            minutes: edge_u8(rng),
            seconds: edge_u8(rng),
            microseconds: edge_u32(rng),
        }),
        _ => OwnedParam::DateTime(DateTime {
            year: [0, 1970, 2038, 9999, 65535][rng.below(5)],
            month: edge_u8(rng),
            day: edge_u8(rng),
            hour: edge_u8(rng),
            minute: edge_u8(rng),
            second: edge_u8(rng),
            microsecond: edge_u32(rng),
        }),
    }
}

/// A plausible value for a parameter: an integer id or a short string, as
/// sysbench binds them.
pub fn plain_param(rng: &mut FuzzRng) -> OwnedParam {
    if rng.one_in(2) {
        OwnedParam::I32(rng.below(10_000) as i32 + 1)
    } else {
        OwnedParam::Bytes(format!("{}-{}", rng.below(100_000), rng.below(100_000)).into_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wirebench_protocol::buf::Reader;

    #[test]
    fn lenenc_edges_include_lies_and_markers() {
        let mut rng = FuzzRng::new(1, 2);
        let mut seen_marker = false;
        let mut seen_off_by_one = false;
        for _ in 0..500 {
            let bytes = edge_lenenc(&mut rng, 10);
            seen_marker |= bytes == [0xFB] || bytes == [0xFF];
            seen_off_by_one |= Reader::new(&bytes).lenenc_int("x").is_ok_and(|v| v == 9 || v == 11);
        }
        assert!(seen_marker && seen_off_by_one);
    }

    #[test]
    fn random_params_cover_every_kind() {
        let mut rng = FuzzRng::new(3, 0);
        let kinds: std::collections::HashSet<_> =
            (0..2000).map(|_| std::mem::discriminant(&random_param(&mut rng))).collect();
        assert_eq!(kinds.len(), 14);
    }
}
