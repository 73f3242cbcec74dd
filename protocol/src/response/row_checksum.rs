//! The checksum of a result's rows, as a capture and a replay compare them.
//!
//! Each row is hashed in its text-protocol form (a length-encoded string per
//! value, 0xFB for NULL: exactly the payload of a text row, and what a
//! binary row becomes through [`Value::write_text`](super::Value::write_text))
//! with XXH64 (seed 0), and the rows' hashes are added modulo 2^64. The sum
//! does not depend on row order, which SQL leaves undefined without ORDER BY
//! and which servers of different versions do change; a row present twice
//! counts twice. Column names, types and lengths are not hashed: servers
//! describe the same data differently (MariaDB and MySQL disagree on display
//! lengths and collations), and the question is whether the data differs.
//!
//! XXH64 is specified (xxhash.com, XXH64 in `doc/xxhash_spec.md`) and fast,
//! so another tool can recompute a checksum from the same rows.

const PRIME_1: u64 = 0x9E37_79B1_85EB_CA87;
const PRIME_2: u64 = 0xC2B2_AE3D_27D4_EB4F;
const PRIME_3: u64 = 0x1656_67B1_9E37_79F9;
const PRIME_4: u64 = 0x85EB_CA77_C2B2_AE63;
const PRIME_5: u64 = 0x27D4_EB2F_1656_67C5;
/// XXH64 consumes its input in stripes of four 8-byte lanes.
const STRIPE: usize = 32;

/// Streaming XXH64 with seed 0: [`write`](Self::write) the bytes in any
/// pieces, then [`finish`](Self::finish). Allocation-free.
#[derive(Debug, Clone)]
pub struct Xxh64 {
    lanes: [u64; 4],
    total: u64,
    pending: [u8; STRIPE],
    pending_len: usize,
}

impl Default for Xxh64 {
    fn default() -> Self {
        Xxh64 {
            lanes: [PRIME_1.wrapping_add(PRIME_2), PRIME_2, 0, 0u64.wrapping_sub(PRIME_1)],
            total: 0,
            pending: [0; STRIPE],
            pending_len: 0,
        }
    }
}

fn round(acc: u64, lane: u64) -> u64 {
    acc.wrapping_add(lane.wrapping_mul(PRIME_2)).rotate_left(31).wrapping_mul(PRIME_1)
}

fn merge_round(acc: u64, lane: u64) -> u64 {
    (acc ^ round(0, lane)).wrapping_mul(PRIME_1).wrapping_add(PRIME_4)
}

fn read_u64(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    for (w, b) in word.iter_mut().zip(bytes) {
        *w = *b;
    }
    u64::from_le_bytes(word)
}

impl Xxh64 {
    pub fn new() -> Self {
        Xxh64::default()
    }

    /// The hash of `bytes` alone.
    pub fn hash(bytes: &[u8]) -> u64 {
        let mut h = Xxh64::new();
        h.write(bytes);
        h.finish()
    }

    pub fn write(&mut self, mut bytes: &[u8]) {
        self.total = self.total.wrapping_add(bytes.len() as u64);
        if self.pending_len > 0 {
            let take = (STRIPE - self.pending_len).min(bytes.len());
            let (head, rest) = bytes.split_at(take);
            if let Some(slot) = self.pending.get_mut(self.pending_len..self.pending_len + take) {
                slot.copy_from_slice(head);
            }
            self.pending_len += take;
            bytes = rest;
            if self.pending_len < STRIPE {
                return;
            }
            let stripe = self.pending;
            self.consume_stripe(&stripe);
            self.pending_len = 0;
        }
        let mut stripes = bytes.chunks_exact(STRIPE);
        for stripe in stripes.by_ref() {
            self.consume_stripe(stripe);
        }
        let tail = stripes.remainder();
        if let Some(slot) = self.pending.get_mut(..tail.len()) {
            slot.copy_from_slice(tail);
        }
        self.pending_len = tail.len();
    }

    fn consume_stripe(&mut self, stripe: &[u8]) {
        for (lane, word) in self.lanes.iter_mut().zip(stripe.chunks_exact(8)) {
            *lane = round(*lane, read_u64(word));
        }
    }

    /// The hash of everything written; the hasher is left as it was.
    pub fn finish(&self) -> u64 {
        let [v1, v2, v3, v4] = self.lanes;
        let mut h = if self.total >= STRIPE as u64 {
            let h = v1.rotate_left(1).wrapping_add(v2.rotate_left(7)).wrapping_add(v3.rotate_left(12));
            let h = h.wrapping_add(v4.rotate_left(18));
            [v1, v2, v3, v4].into_iter().fold(h, merge_round)
        } else {
            PRIME_5
        };
        h = h.wrapping_add(self.total);
        let tail = self.pending.get(..self.pending_len).unwrap_or_default();
        let mut words = tail.chunks_exact(8);
        for word in words.by_ref() {
            h ^= round(0, read_u64(word));
            h = h.rotate_left(27).wrapping_mul(PRIME_1).wrapping_add(PRIME_4);
        }
        let mut rest = words.remainder();
        if rest.len() >= 4 {
            let (word, after) = rest.split_at(4);
            h ^= read_u64(word).wrapping_mul(PRIME_1);
            h = h.rotate_left(23).wrapping_mul(PRIME_2).wrapping_add(PRIME_3);
            rest = after;
        }
        for &b in rest {
            h ^= u64::from(b).wrapping_mul(PRIME_5);
            h = h.rotate_left(11).wrapping_mul(PRIME_1);
        }
        h ^= h >> 33;
        h = h.wrapping_mul(PRIME_2);
        h ^= h >> 29;
        h = h.wrapping_mul(PRIME_3);
        h ^ (h >> 32)
    }

    pub fn reset(&mut self) {
        *self = Xxh64::default();
    }
}

/// The rows' checksum: the sum of each row's hash (see the module documentation).
#[derive(Debug, Clone, Default)]
pub struct RowChecksum {
    sum: u64,
    row: Xxh64,
}

impl RowChecksum {
    /// Bytes of the current row's text form.
    pub fn write(&mut self, bytes: &[u8]) {
        self.row.write(bytes);
    }

    /// Ends the current row.
    pub fn end_row(&mut self) {
        self.sum = self.sum.wrapping_add(self.row.finish());
        self.row.reset();
    }

    /// A whole row's text form at once.
    pub fn add_row(&mut self, text_form: &[u8]) {
        self.sum = self.sum.wrapping_add(Xxh64::hash(text_form));
    }

    pub fn value(&self) -> u64 {
        self.sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Vectors from the reference implementation (`xxhsum -H1`).
    #[test]
    fn xxh64_matches_the_reference() {
        assert_eq!(Xxh64::hash(b""), 0xef46_db37_51d8_e999);
        assert_eq!(Xxh64::hash(b"a"), 0xd24e_c4f1_a98c_6e5b);
        assert_eq!(Xxh64::hash(b"abc"), 0x44bc_2cf5_ad77_0999);
        assert_eq!(Xxh64::hash(b"0123456789abcdef0123456789abcdef0123456789"), 0xa761_90c3_acf0_8a1c);
    }

    #[test]
    fn pieces_hash_as_the_whole() {
        let data: Vec<u8> = (0..200u32).map(|i| (i * 7 + 3) as u8).collect();
        let whole = Xxh64::hash(&data);
        for cut in [0, 1, 7, 31, 32, 33, 64, 100, 199, 200] {
            let mut h = Xxh64::new();
            let (a, b) = data.split_at(cut);
            h.write(a);
            for byte in b.chunks(5) {
                h.write(byte);
            }
            assert_eq!(h.finish(), whole, "cut at {cut}");
        }
    }

    #[test]
    fn row_order_does_not_matter_but_duplicates_do() {
        let (a, b) = (b"\x011\x03abc".as_slice(), b"\x012\xfb".as_slice());
        let mut one = RowChecksum::default();
        one.add_row(a);
        one.add_row(b);
        let mut two = RowChecksum::default();
        two.write(&b[..1]);
        two.write(&b[1..]);
        two.end_row();
        two.add_row(a);
        assert_eq!(one.value(), two.value());
        two.add_row(a);
        assert_ne!(one.value(), two.value());
    }
}
