//! glibc's `srandom()`/`random()`: the default TYPE_3 additive feedback
//! generator (degree 31, separation 3), which sysbench uses only to seed its
//! per-thread xoroshiro128+ states.
//!
//! Emulated from glibc's `stdlib/random_r.c`: `srandom(seed)` fills 31 words
//! with the Park–Miller sequence `r[i] = 16807 * r[i-1] mod (2^31 - 1)`
//! (Schrage's method, with the intermediate kept in an `int32_t`), then
//! throws away 310 outputs; each output is `r[i] = r[i-3] + r[i-31]`
//! (wrapping) shifted right by one bit.

const DEGREE: usize = 31;
const SEPARATION: usize = 3;
const DISCARDED: usize = DEGREE * 10;

/// One `random()` stream, as after `srandom(seed)` in a glibc process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GlibcRandom {
    table: [u32; DEGREE],
    front: usize,
    rear: usize,
}

impl GlibcRandom {
    /// `srandom(seed)`. glibc replaces seed 0 by 1, and a process that never
    /// calls `srandom` behaves as after `srandom(1)`.
    pub fn new(seed: u32) -> Self {
        let seed = if seed == 0 { 1 } else { seed };
        let mut table = [0u32; DEGREE];
        table[0] = seed;
        // glibc stores the seed in an int32_t, so seeds >= 2^31 start negative.
        let mut word = seed as i32;
        for slot in table.iter_mut().skip(1) {
            let hi = i64::from(word) / 127_773;
            let lo = i64::from(word) % 127_773;
            word = (16_807 * lo - 2_836 * hi) as i32;
            if word < 0 {
                word += 2_147_483_647;
            }
            *slot = word as u32;
        }
        let mut generator = GlibcRandom { table, front: SEPARATION, rear: 0 };
        for _ in 0..DISCARDED {
            generator.random();
        }
        generator
    }

    /// `random()`: a value in `[0, 2^31)`.
    pub fn random(&mut self) -> u32 {
        let sum = self.table[self.front].wrapping_add(self.table[self.rear]);
        self.table[self.front] = sum;
        self.front = (self.front + 1) % DEGREE;
        self.rear = (self.rear + 1) % DEGREE;
        sum >> 1
    }
}

#[cfg(test)]
mod tests {
    use super::GlibcRandom;

    #[test]
    fn srandom_1_gives_the_well_known_sequence() {
        let mut g = GlibcRandom::new(1);
        let first: Vec<u32> = (0..10).map(|_| g.random()).collect();
        assert_eq!(
            first,
            [
                1_804_289_383,
                846_930_886,
                1_681_692_777,
                1_714_636_915,
                1_957_747_793,
                424_238_335,
                719_885_386,
                1_649_760_492,
                596_516_649,
                1_189_641_421
            ]
        );
    }

    #[test]
    fn seed_zero_is_seed_one() {
        assert_eq!(GlibcRandom::new(0), GlibcRandom::new(1));
    }

    #[test]
    fn srandom_42_matches_what_sysbench_drew() {
        // Observed with an LD_PRELOAD shim on random() under
        // `sysbench --rand-seed=42` (the worker thread's four seeding draws).
        let mut g = GlibcRandom::new(42);
        let first: Vec<u32> = (0..4).map(|_| g.random()).collect();
        assert_eq!(first, [71_876_166, 708_592_740, 1_483_128_881, 907_283_241]);
    }

    #[test]
    fn outputs_have_31_bits() {
        let mut g = GlibcRandom::new(0xdead_beef);
        assert!((0..10_000).all(|_| g.random() < 1 << 31));
    }
}
