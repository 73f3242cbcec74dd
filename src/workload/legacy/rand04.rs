//! sysbench 0.4's random ids: `sb_oltp.c`'s `rnd_func_uniform`,
//! `rnd_func_gaussian` and `rnd_func_special`, in its unsigned integer
//! arithmetic, over `sb_rnd()` = `lrand48() % 0x3fffffff`.
//!
//! 0.4 shared one `lrand48()` state between its threads; here each
//! connection has its own, connection t starting `t * 2^32` draws into the
//! stream of the seed, so connection 0 draws exactly what a one-thread 0.4
//! run draws, and connections never draw the same values.

use crate::rand::Lrand48;

/// `SB_MAX_RND`: `sb_rnd()` is `lrand48() % SB_MAX_RND`.
const SB_MAX_RND: u32 = 0x3fff_ffff;

/// 0.4's `--oltp-dist-type`, `--oltp-dist-iter`, `--oltp-dist-pct`,
/// `--oltp-dist-res`, and how the generator is seeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rand04 {
    pub distribution: Dist04,
    pub iter: u32,
    pub pct: u32,
    pub res: u32,
    pub seed: Seed04,
}

impl Default for Rand04 {
    fn default() -> Self {
        Rand04 { distribution: Dist04::Special, iter: 12, pct: 1, res: 75, seed: Seed04::Unseeded }
    }
}

/// 0.4's three distributions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dist04 {
    Uniform,
    Gaussian,
    Special,
}

/// How 0.4's `lrand48()` starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seed04 {
    /// Neither `--seed-rng` nor `--init-rng`: glibc's initial state, the
    /// same values on every run.
    Unseeded,
    /// `srand48(N)`: `--seed-rng=N`, or `--init-rng=on` with the time.
    Srand48(i64),
}

/// One connection's 0.4 generator.
#[derive(Debug, Clone)]
pub(crate) struct Gen04 {
    lrand: Lrand48,
    rand: Rand04,
}

impl Gen04 {
    pub(crate) fn for_connection(rand: Rand04, thread: u32) -> Self {
        let mut lrand = match rand.seed {
            Seed04::Unseeded => Lrand48::unseeded(),
            Seed04::Srand48(seed) => Lrand48::srand48(seed),
        };
        lrand.skip(u64::from(thread) << 32);
        Gen04 { lrand, rand }
    }

    /// `sb_rnd()`.
    #[inline]
    pub(crate) fn sb_rnd(&mut self) -> u32 {
        self.lrand.next_u31() % SB_MAX_RND
    }

    /// `GET_RANDOM_ID()`: the `--oltp-dist-type` distribution over
    /// `1..=table_size` (0 for an empty table, where 0.4 divided by zero
    /// outside the special distribution).
    pub(crate) fn random_id(&mut self, table_size: u32) -> u32 {
        if table_size == 0 {
            return 0;
        }
        match self.rand.distribution {
            Dist04::Uniform => 1 + self.sb_rnd() % table_size,
            Dist04::Gaussian => self.rnd_func_gaussian(table_size),
            Dist04::Special => self.rnd_func_special(table_size),
        }
    }

    /// `int sum` of `iter` uniform draws, divided by `iter`.
    fn rnd_func_gaussian(&mut self, table_size: u32) -> u32 {
        let mut sum = 0i32;
        for _ in 0..self.rand.iter {
            sum = sum.wrapping_add((1 + self.sb_rnd() % table_size) as i32);
        }
        (sum / self.rand.iter.max(1) as i32) as u32
    }

    /// A uniform draw over `table_size * 100 / (100 - res)` values: the
    /// first `table_size` go to the gaussian part, the rest to `pct`% of
    /// the ids around the middle. With `res` 100 (a division by zero in
    /// 0.4) every draw is of the second kind, as in sysbench 1.0.
    fn rnd_func_special(&mut self, table_size: u32) -> u32 {
        let rand = self.rand;
        let range_size = match 100u32.checked_sub(rand.res).filter(|&d| d > 0) {
            Some(d) => table_size.wrapping_mul(100 / d),
            None => 0,
        };
        let mut res = match range_size {
            0 => self.sb_rnd(),
            _ => 1 + self.sb_rnd() % range_size,
        };
        if range_size != 0 && res <= table_size {
            return self.rnd_func_gaussian(table_size);
        }
        let d = (table_size.wrapping_mul(rand.pct) / 100).max(1);
        res %= d;
        res.wrapping_add(table_size / 2).wrapping_sub(table_size.wrapping_mul(rand.pct) / 200)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first point selects of an unseeded one-thread 0.4.12 run on
    /// 1000 rows (`testdata/sysbench_04/oltp04.txt`).
    #[test]
    fn unseeded_special_ids_are_0_4s() {
        let mut g = Gen04::for_connection(Rand04::default(), 0);
        let ids: Vec<u32> = (0..10).map(|_| g.random_id(1000)).collect();
        assert_eq!(ids, [523, 539, 498, 498, 452, 495, 503, 581, 503, 501]);
    }

    #[test]
    fn distributions_stay_in_the_table() {
        for distribution in [Dist04::Uniform, Dist04::Gaussian, Dist04::Special] {
            for res in [0, 75, 99, 100] {
                let rand = Rand04 { distribution, res, seed: Seed04::Srand48(3), ..Rand04::default() };
                let mut g = Gen04::for_connection(rand, 1);
                for _ in 0..2000 {
                    let id = g.random_id(300);
                    assert!((1..=300).contains(&id) || (distribution == Dist04::Special && id < 300), "{id}");
                }
                assert_eq!(g.random_id(0), 0);
            }
        }
        let (mut a, mut b) = (Gen04::for_connection(Rand04::default(), 0), Gen04::for_connection(Rand04::default(), 1));
        assert_ne!((0..4).map(|_| a.sb_rnd()).collect::<Vec<_>>(), (0..4).map(|_| b.sb_rnd()).collect::<Vec<_>>());
    }
}
