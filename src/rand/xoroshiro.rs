//! xoroshiro128+ with the rotation constants sysbench 1.0.20 ships
//! (`src/xoroshiro128plus.h`: a=55, b=14, c=36, the 2016 variant).

use super::glibc::GlibcRandom;

/// sysbench's per-thread generator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Xoroshiro128Plus {
    s0: u64,
    s1: u64,
}

impl Xoroshiro128Plus {
    /// A generator with the given state. An all-zero state only yields zeros.
    pub const fn from_state(s0: u64, s1: u64) -> Self {
        Xoroshiro128Plus { s0, s1 }
    }

    /// `sb_rand_thread_init()`: each state word is `random() << 32 | random()`,
    /// the high half drawn first (checked against sysbench's own output).
    pub fn from_sysbench_thread_init(glibc: &mut GlibcRandom) -> Self {
        let mut word = || {
            let high = u64::from(glibc.random());
            let low = u64::from(glibc.random());
            high << 32 | low
        };
        let s0 = word();
        let s1 = word();
        Xoroshiro128Plus { s0, s1 }
    }

    #[cfg(test)]
    pub fn state(&self) -> (u64, u64) {
        (self.s0, self.s1)
    }

    /// `sb_rand_uniform_uint64()`.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s0 = self.s0;
        let mut s1 = self.s1;
        let result = s0.wrapping_add(s1);
        s1 ^= s0;
        self.s0 = s0.rotate_left(55) ^ s1 ^ (s1 << 14);
        self.s1 = s1.rotate_left(36);
        result
    }

    /// `sb_rand_uniform_double()`: the top 52 bits as the mantissa of a double
    /// in [1, 2), minus 1, so a multiple of 2^-52 in [0, 1).
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        f64::from_bits(0x3ff << 52 | self.next_u64() >> 12) - 1.0
    }
}

#[cfg(test)]
mod tests {
    use super::{GlibcRandom, Xoroshiro128Plus};

    #[test]
    fn reproduces_sysbench_uniform_uint64_for_seed_42() {
        // `sysbench --rand-seed=42 --threads=1`, first three
        // sysbench.rand.uniform_uint64() values of worker thread 0.
        let mut x = Xoroshiro128Plus::from_sysbench_thread_init(&mut GlibcRandom::new(42));
        let got: Vec<u64> = (0..3).map(|_| x.next_u64()).collect();
        assert_eq!(got, [6_678_695_823_595_818_893, 12_985_727_069_636_131_040, 13_785_426_779_914_018_964]);
    }

    #[test]
    fn state_words_put_the_first_draw_high() {
        let x = Xoroshiro128Plus::from_sysbench_thread_init(&mut GlibcRandom::new(42));
        assert_eq!(x.state(), (71_876_166 << 32 | 708_592_740, 1_483_128_881 << 32 | 907_283_241));
    }

    #[test]
    fn first_output_is_the_sum_of_the_state_words() {
        let mut x = Xoroshiro128Plus::from_state(u64::MAX, 2);
        assert_eq!(x.next_u64(), 1);
        // s1 ^= s0 -> !2; s0 = rotl(MAX, 55) ^ !2 ^ (!2 << 14); s1 = rotl(!2, 36).
        let s1 = !2u64;
        assert_eq!(x.state(), (u64::MAX ^ s1 ^ (s1 << 14), s1.rotate_left(36)));
    }

    #[test]
    fn next_f64_uses_the_top_52_bits() {
        let mut top = Xoroshiro128Plus::from_state(u64::MAX, 0);
        assert_eq!(top.next_f64(), 1.0 - f64::EPSILON);
        let mut low_bits_only = Xoroshiro128Plus::from_state(0xfff, 0);
        assert_eq!(low_bits_only.next_f64(), 0.0);
        let mut half = Xoroshiro128Plus::from_state(1 << 63, 0);
        assert_eq!(half.next_f64(), 0.5);
    }
}
