//! glibc's `lrand48()`, the generator behind sysbench 0.4's `sb_rnd()`:
//! a 48-bit linear congruential generator, `X = (0x5DEECE66D * X + 0xB) mod
//! 2^48`, returning the top 31 bits. A program that never calls `srand48`
//! starts from `X = 0` in glibc (its state is zero-initialised), which is
//! why an unseeded 0.4 run draws the same values every time.

const MULTIPLIER: u64 = 0x5_DEEC_E66D;
const INCREMENT: u64 = 0xB;
const MASK: u64 = (1 << 48) - 1;

/// One `lrand48()` state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lrand48 {
    x: u64,
}

impl Lrand48 {
    /// The state of a process that never called `srand48`.
    pub fn unseeded() -> Self {
        Lrand48 { x: 0 }
    }

    /// `srand48(seed)`: the high 32 bits of the state are `seed`'s low 32
    /// bits, the low 16 bits `0x330E`.
    pub fn srand48(seed: i64) -> Self {
        Lrand48 { x: ((seed as u64 & 0xFFFF_FFFF) << 16) | 0x330E }
    }

    /// `lrand48()`: the next value, in `[0, 2^31)`.
    #[inline]
    pub fn next_u31(&mut self) -> u32 {
        self.x = MULTIPLIER.wrapping_mul(self.x).wrapping_add(INCREMENT) & MASK;
        (self.x >> 17) as u32
    }

    /// The state `steps` draws later, in O(log steps): composing the step
    /// `X -> aX + c` with itself by squaring.
    pub fn skip(&mut self, mut steps: u64) {
        let (mut mul, mut add) = (MULTIPLIER, INCREMENT);
        let (mut total_mul, mut total_add) = (1u64, 0u64);
        while steps > 0 {
            if steps & 1 == 1 {
                total_mul = total_mul.wrapping_mul(mul) & MASK;
                total_add = total_add.wrapping_mul(mul).wrapping_add(add) & MASK;
            }
            add = add.wrapping_mul(mul).wrapping_add(add) & MASK;
            mul = mul.wrapping_mul(mul) & MASK;
            steps >>= 1;
        }
        self.x = total_mul.wrapping_mul(self.x).wrapping_add(total_add) & MASK;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The values of glibc's unseeded `lrand48()` (seen with an LD_PRELOAD
    /// shim in sysbench 0.4.12) and after `srand48(1)` and `srand48(-5)`
    /// (printed by a C program).
    #[test]
    fn glibc_values() {
        let mut g = Lrand48::unseeded();
        let first: Vec<u32> = (0..5).map(|_| g.next_u31()).collect();
        assert_eq!(first, [0, 2_116_118, 89_401_895, 379_337_186, 782_977_366]);
        assert_eq!(Lrand48::srand48(1).next_u31(), 89_400_484);
        assert_eq!(Lrand48::srand48(-5).next_u31(), 1_754_100_061);
    }

    #[test]
    fn skip_is_stepping() {
        for steps in [0, 1, 2, 3, 1000, 65_537] {
            let (mut stepped, mut skipped) = (Lrand48::srand48(42), Lrand48::srand48(42));
            for _ in 0..steps {
                stepped.next_u31();
            }
            skipped.skip(steps);
            assert_eq!(stepped, skipped, "{steps}");
        }
    }
}
