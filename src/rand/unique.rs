//! `sysbench.rand.unique()`: a permutation of the 2^32 `u32` values
//! (Jeff Preshing's quadratic-residue construction, as in sysbench's
//! `sb_rand_unique`), walked by a counter.
//!
//! sysbench keeps one global counter and bumps it with an atomic add on
//! every call. wirebench separates the permutation ([`RandUnique`], `Copy`,
//! shared by value) from the counter, so each event loop can pick:
//! - [`UniqueCursor`]: a disjoint slice of the counter space owned by one
//!   loop; no shared memory at all, values unique across loops, but each
//!   loop's order differs from sysbench's single sequence;
//! - [`SharedUnique`]: sysbench's design, one `AtomicU32` shared by all
//!   loops (a relaxed fetch-add per call, no lock); with one caller the
//!   values come out in sysbench's exact order.

use std::sync::atomic::{AtomicU32, Ordering};

use super::glibc::GlibcRandom;

const PRIME: u32 = 4_294_967_291;

/// Preshing's permutation: for a prime `p ≡ 3 (mod 4)`, `x ↦ x² mod p` on
/// the lower half and `p - x² mod p` on the upper half is a bijection of
/// `[0, p)`; the five values `>= p` map to themselves.
fn permute(x: u32) -> u32 {
    if x >= PRIME {
        return x;
    }
    let residue = (u64::from(x) * u64::from(x) % u64::from(PRIME)) as u32;
    if x <= PRIME / 2 {
        residue
    } else {
        PRIME - residue
    }
}

/// The seeded permutation; the n-th value sysbench returns is [`Self::nth`]`(n)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RandUnique {
    first_index: u32,
    offset: u32,
}

impl RandUnique {
    /// sysbench's `rand_unique_seed(index, offset)`.
    pub fn new(index: u32, offset: u32) -> Self {
        RandUnique {
            first_index: permute(permute(index).wrapping_add(0x682f_0161)),
            offset: permute(permute(offset).wrapping_add(0x4679_0905)),
        }
    }

    /// `rand_unique_seed(random(), random())` as the sysbench binary runs
    /// it: gcc evaluates the arguments right to left, so the first draw is
    /// the offset and the second the index (checked with an LD_PRELOAD shim
    /// on `random()`).
    pub fn from_glibc(glibc: &mut GlibcRandom) -> Self {
        let offset = glibc.random();
        let index = glibc.random();
        RandUnique::new(index, offset)
    }

    /// The sequence of an upstream sysbench 1.0.20 build, whatever
    /// `--rand-seed`: `sb_rand_init()` seeds it before `srandom(seed)` runs,
    /// from glibc's unseeded state (as `srandom(1)`), after the main thread's
    /// four seeding draws.
    ///
    /// Debian's sysbench links the distribution's LuaJIT (luajit2), whose
    /// string-hash initialisation calls `srandom` with a varying value and
    /// then `random()` before `main`; there the sequence differs on every
    /// run and cannot be reproduced.
    pub fn sysbench_upstream() -> Self {
        let mut glibc = GlibcRandom::new(1);
        for _ in 0..4 {
            glibc.random();
        }
        RandUnique::from_glibc(&mut glibc)
    }

    /// The value at counter position `n` (the `n`-th call, from 0).
    #[inline]
    pub fn nth(&self, n: u32) -> u32 {
        let index = self.first_index.wrapping_add(n);
        permute(permute(index).wrapping_add(self.offset) ^ 0x5bf0_3635)
    }

    /// Positions `start..end` (at most `2^32`) of the sequence.
    pub fn cursor(&self, start: u64, end: u64) -> UniqueCursor {
        assert!(start <= end && end <= 1 << 32, "unique cursor range {start}..{end} outside 0..2^32");
        UniqueCursor { sequence: *self, next: start, end }
    }

    /// Part `part` of `parts` equal, disjoint slices of the whole sequence,
    /// for one event loop each. Part 0 of 1 is sysbench's order.
    pub fn split(&self, part: u32, parts: u32) -> UniqueCursor {
        assert!(part < parts, "unique split part {part} of {parts}");
        let bound = |i: u32| (u64::from(i) << 32) / u64::from(parts);
        self.cursor(bound(part), bound(part + 1))
    }
}

/// A loop-owned slice of a [`RandUnique`] sequence: every value it yields
/// differs from every value any other disjoint cursor yields. Ends (`None`)
/// when the slice is used up instead of repeating values.
#[derive(Clone, Debug)]
pub struct UniqueCursor {
    sequence: RandUnique,
    next: u64,
    end: u64,
}

impl UniqueCursor {
    pub fn remaining(&self) -> u64 {
        self.end - self.next
    }
}

impl Iterator for UniqueCursor {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        if self.next == self.end {
            return None;
        }
        // Positions are below 2^32 here.
        let value = self.sequence.nth(self.next as u32);
        self.next += 1;
        Some(value)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = usize::try_from(self.remaining()).unwrap_or(usize::MAX);
        (n, usize::try_from(self.remaining()).ok())
    }
}

/// sysbench's shared counter: any number of loops call
/// [`SharedUnique::next_value`] through a shared reference. Wraps after
/// 2^32 calls, as sysbench does.
#[derive(Debug)]
pub struct SharedUnique {
    sequence: RandUnique,
    next: AtomicU32,
}

impl SharedUnique {
    #[cfg(test)]
    pub fn new(sequence: RandUnique) -> Self {
        SharedUnique { sequence, next: AtomicU32::new(0) }
    }

    /// The counter of part `part` of `parts` (a run's shards): it starts
    /// where [`RandUnique::split`]'s part does, so that no two parts give
    /// the same value until one has drawn 2^32 / `parts` of them. Part 0
    /// of 1 is [`SharedUnique::new`].
    pub fn for_part(sequence: RandUnique, part: u32, parts: u32) -> Self {
        let start = (u64::from(part) << 32) / u64::from(parts.max(1));
        SharedUnique { sequence, next: AtomicU32::new(start as u32) }
    }

    #[inline]
    pub fn next_value(&self) -> u32 {
        // Only uniqueness of the counter matters, not ordering with other
        // memory, so relaxed suffices.
        self.sequence.nth(self.next.fetch_add(1, Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::{permute, RandUnique, SharedUnique, PRIME};
    use std::collections::HashSet;

    #[test]
    fn parts_of_the_shared_counter_start_apart() {
        let sequence = RandUnique::new(3, 4);
        let whole = SharedUnique::new(sequence);
        let first = SharedUnique::for_part(sequence, 0, 1);
        assert_eq!(
            (0..5).map(|_| whole.next_value()).collect::<Vec<_>>(),
            (0..5).map(|_| first.next_value()).collect::<Vec<_>>()
        );
        let second = SharedUnique::for_part(sequence, 1, 2);
        assert_eq!(second.next_value(), sequence.nth(1 << 31));
    }

    #[test]
    fn reproduces_values_seen_from_debian_sysbench() {
        // One `sysbench --threads=1` run under an LD_PRELOAD shim logging
        // random(): sb_rand_init drew 247756097 then 330645525 for the
        // unique seed, and sysbench.rand.unique() then returned these.
        let seq = RandUnique::new(330_645_525, 247_756_097);
        assert_eq!([seq.nth(0), seq.nth(1), seq.nth(2)], [500_500_954, 2_110_407_243, 4_020_333_103]);
    }

    #[test]
    fn permute_is_a_bijection_near_the_edges() {
        let edges = (0..50_000u32).chain(PRIME / 2 - 25_000..PRIME / 2 + 25_000).chain(PRIME - 50_000..=u32::MAX);
        let mut seen = HashSet::new();
        for x in edges {
            // x and p - x share a square; the half split sends one to r and
            // the other to p - r, so no two inputs may collide.
            assert!(seen.insert(permute(x)), "collision at {x}");
        }
        assert_eq!(permute(PRIME), PRIME);
        assert_eq!(permute(3), 9);
        assert_eq!(permute(PRIME - 3), PRIME - 9);
    }

    #[test]
    fn sequence_has_no_repeats_in_a_long_run() {
        let seq = RandUnique::sysbench_upstream();
        let mut seen = HashSet::new();
        assert!((0..200_000).all(|n| seen.insert(seq.nth(n))));
    }

    #[test]
    fn split_parts_are_disjoint_and_cover_everything() {
        let seq = RandUnique::new(1, 2);
        let parts: Vec<_> = (0..3).map(|p| seq.split(p, 3)).collect();
        assert_eq!(parts.iter().map(|c| c.remaining()).sum::<u64>(), 1 << 32);
        let mut whole = seq.split(0, 1);
        let mut first = parts[0].clone();
        assert_eq!(whole.next(), first.next());
        let mut second = parts[1].clone();
        assert_eq!(second.next(), Some(seq.nth(1_431_655_765)));
    }

    #[test]
    fn cursor_ends_instead_of_repeating() {
        let seq = RandUnique::new(9, 9);
        let tail: Vec<u32> = seq.cursor((1 << 32) - 2, 1 << 32).collect();
        assert_eq!(tail, [seq.nth(u32::MAX - 1), seq.nth(u32::MAX)]);
    }

    #[test]
    fn shared_counter_follows_the_sequence() {
        let seq = RandUnique::new(5, 6);
        let shared = SharedUnique::new(seq);
        let got: Vec<u32> = (0..4).map(|_| shared.next_value()).collect();
        assert_eq!(got, (0..4).map(|n| seq.nth(n)).collect::<Vec<_>>());
    }
}
