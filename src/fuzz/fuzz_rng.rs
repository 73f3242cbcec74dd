//! The fuzzer's randomness: one seeded xoroshiro128+ per worker and per
//! purpose, so that a run is reproducible from `--rand-seed` (the order of
//! sessions across workers is not: that depends on the server's timing).

use crate::rand::Xoroshiro128Plus;

/// A seeded generator with the small helpers mutators need.
#[derive(Debug, Clone)]
pub struct FuzzRng(Xoroshiro128Plus);

impl FuzzRng {
    /// Stream `stream` of seed `seed`: distinct streams are independent.
    pub fn new(seed: u64, stream: u64) -> Self {
        // splitmix64 turns any (seed, stream) into a well-mixed, non-zero state.
        let mut x = seed ^ stream.wrapping_mul(0xD1B5_4A32_D192_ED03);
        let mut next = || {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        let s0 = next();
        let s1 = next() | 1;
        FuzzRng(Xoroshiro128Plus::from_state(s0, s1))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    pub fn next_u32(&mut self) -> u32 {
        // The high half: xoroshiro128+'s low bits are its weakest.
        (self.0.next_u64() >> 32) as u32
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        ((u128::from(self.0.next_u64()) * n as u128) >> 64) as usize
    }

    /// True once in `n` times on average.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n.max(1)) == 0
    }

    /// A random element, or `None` from an empty slice.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        items.get(self.below(items.len()))
    }

    /// `n` random bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| (self.next_u32() >> 24) as u8).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_and_streams_differ() {
        let a: Vec<u64> = (0..4)
            .map({
                let mut r = FuzzRng::new(42, 0);
                move |_| r.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..4)
            .map({
                let mut r = FuzzRng::new(42, 0);
                move |_| r.next_u64()
            })
            .collect();
        let c: Vec<u64> = (0..4)
            .map({
                let mut r = FuzzRng::new(42, 1);
                move |_| r.next_u64()
            })
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut r = FuzzRng::new(7, 0);
        let mut seen = [false; 5];
        for _ in 0..1000 {
            let v = r.below(5);
            assert!(v < 5);
            seen[v] = true;
        }
        assert!(seen.iter().all(|&s| s));
        assert_eq!(r.below(0), 0);
        assert!(r.pick::<u8>(&[]).is_none());
    }
}
