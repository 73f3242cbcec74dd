//! One connection's generator: sysbench's `sb_rand_*` functions over a
//! private xoroshiro128+ state.

use super::config::{zipf, Distribution, RandParams};
use super::glibc::GlibcRandom;
use super::xoroshiro::Xoroshiro128Plus;

/// `(uint32_t) x` as gcc compiles it for x86-64 (the Debian/upstream sysbench
/// binaries): `cvttsd2si` into a 64-bit register, low 32 bits kept. So values
/// in [2^32, 2^63) wrap and negative values in (-2^63, -1] wrap too, while
/// NaN and values beyond ±2^63 give the "integer indefinite" 2^63, whose low
/// half is 0. Rust's `as u32` saturates instead, hence this helper.
#[inline]
fn c_double_to_u32(x: f64) -> u32 {
    const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;
    if (-TWO_POW_63..TWO_POW_63).contains(&x) {
        x as i64 as u32
    } else {
        0
    }
}

/// A per-connection random number generator with sysbench 1.0.20's
/// distributions. Every method draws from this generator only: no shared
/// state, no lock, no allocation.
///
/// All arithmetic follows the C source: range sizes are computed in `u32`
/// (so `b - a + 1` wraps, and `a > b` gives a huge range), doubles are
/// combined in the same order, and results are truncated to `u32` as x86-64
/// gcc does (wrapping modulo 2^32) before a wrapping `a +`.
#[derive(Clone, Debug)]
pub struct Rng {
    xoro: Xoroshiro128Plus,
    params: RandParams,
}

impl Rng {
    pub fn new(xoro: Xoroshiro128Plus, params: RandParams) -> Self {
        Rng { xoro, params }
    }

    /// The generator sysbench's worker thread `thread_index` gets with
    /// `--rand-seed=seed` when threads seed in creation order: after
    /// `srandom(seed)` each thread takes four `random()` values, thread 0
    /// first. With `--threads=1` (and no `--report-interval`, `--rate` or
    /// `--report-checkpoints`, whose helper threads are created before the
    /// workers and usually, not always, seed first) this is exactly
    /// sysbench's stream. `seed` is the value passed to `srandom`: see
    /// [`super::srandom_seed`].
    ///
    /// Costs `310 + 4 * thread_index` glibc steps; to seed many connections
    /// use [`Rng::for_connections`].
    pub fn for_thread(seed: u32, thread_index: u32, params: RandParams) -> Self {
        let mut glibc = GlibcRandom::new(seed);
        for _ in 0..u64::from(thread_index) * 4 {
            glibc.random();
        }
        Rng::new(Xoroshiro128Plus::from_sysbench_thread_init(&mut glibc), params)
    }

    /// wirebench's seeding for many connections: connection `i` (the i-th
    /// item) gets `Rng::for_thread(seed, i, params)`, the stream sysbench's
    /// worker thread `i` would get. Deterministic per connection index, and
    /// for one connection identical to sysbench `--threads=1`.
    pub fn for_connections(seed: u32, params: RandParams) -> impl Iterator<Item = Rng> {
        let mut glibc = GlibcRandom::new(seed);
        std::iter::repeat_with(move || Rng::new(Xoroshiro128Plus::from_sysbench_thread_init(&mut glibc), params))
    }

    /// `sysbench.rand.uniform_uint64()`.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.xoro.next_u64()
    }

    /// `sysbench.rand.uniform_double()`: [0, 1).
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        self.xoro.next_f64()
    }

    /// `sysbench.rand.default(a, b)`: the `--rand-type` distribution.
    #[inline]
    pub fn default(&mut self, a: u32, b: u32) -> u32 {
        match self.params.distribution {
            Distribution::Uniform => self.uniform(a, b),
            Distribution::Gaussian => self.gaussian(a, b),
            Distribution::Special => self.special(a, b),
            Distribution::Pareto => self.pareto(a, b),
            Distribution::Zipfian => self.zipfian(a, b),
        }
    }

    /// `sb_rand_uniform`: `a + U * (b - a + 1)`.
    #[inline]
    pub fn uniform(&mut self, a: u32, b: u32) -> u32 {
        let size = f64::from(b.wrapping_sub(a).wrapping_add(1));
        c_double_to_u32(f64::from(a) + self.next_f64() * size)
    }

    /// `sb_rand_gaussian`: the mean of `--rand-spec-iter` uniform draws over
    /// the range (Irwin–Hall, scaled).
    #[inline]
    pub fn gaussian(&mut self, a: u32, b: u32) -> u32 {
        let size = f64::from(b.wrapping_sub(a).wrapping_add(1));
        let mut sum = 0.0;
        for _ in 0..self.params.iter {
            sum += self.next_f64() * size;
        }
        a.wrapping_add(c_double_to_u32(sum * self.params.iter_mult))
    }

    /// `sb_rand_special`: with probability `1 - res/100` a Gaussian bump
    /// over the whole range, otherwise uniform over `pct` percent of the
    /// range just right of the centre. The first draw both picks the branch
    /// and positions the value in the hot spot.
    #[inline]
    pub fn special(&mut self, a: u32, b: u32) -> u32 {
        let p = &self.params;
        let t = f64::from(b.wrapping_sub(a));
        let range_size = t * p.res_mult;
        let rnd = self.xoro.next_f64();
        let res = rnd * range_size;
        if res < t {
            let mut sum = 0.0;
            for _ in 0..p.iter {
                sum += self.xoro.next_f64();
            }
            return c_double_to_u32(f64::from(a) + sum * t * p.iter_mult);
        }
        let d = t * p.pct_mult;
        let mut res = rnd * (d + 1.0);
        res += t / 2.0 - t * p.pct_2_mult;
        a.wrapping_add(c_double_to_u32(res))
    }

    /// `sb_rand_pareto`: `a + (b - a + 1) * U^(ln h / ln(1 - h))`.
    #[inline]
    pub fn pareto(&mut self, a: u32, b: u32) -> u32 {
        let size = f64::from(b.wrapping_sub(a).wrapping_add(1));
        a.wrapping_add(c_double_to_u32(size * self.next_f64().powf(self.params.pareto_power)))
    }

    /// `sb_rand_zipfian` (sysbench after 1.0.20): `P(a + k - 1) ∝ k^-e` for
    /// `k` in `1..=b - a + 1`, so `a` is the hottest value.
    #[inline]
    pub fn zipfian(&mut self, a: u32, b: u32) -> u32 {
        a.wrapping_add(self.zipfian_rank(b.wrapping_sub(a).wrapping_add(1))).wrapping_sub(1)
    }

    /// Rejection-inversion over `1..=n`; accepts in about one try.
    fn zipfian_rank(&mut self, n: u32) -> u32 {
        let e = self.params.zipf_exp;
        let h_integral_x1 = self.params.zipf_h_integral_x1;
        let h_integral_n = zipf::h_integral(f64::from(n) + 0.5, e);
        loop {
            // Uniform in (H(1.5) - 1, H(n + 0.5)].
            let u = h_integral_n + self.xoro.next_f64() * (h_integral_x1 - h_integral_n);
            let x = zipf::h_integral_inverse(u, e);
            // Clamp: rounding can put k just outside [1, n].
            let mut k = c_double_to_u32(x + 0.5);
            if k < 1 {
                k = 1;
            } else if k > n {
                k = n;
            }
            let kf = f64::from(k);
            // The first test is a cheap sufficient condition for the second.
            if kf - x <= self.params.zipf_s || u >= zipf::h_integral(kf + 0.5, e) - zipf::h(kf, e) {
                return k;
            }
        }
    }

    /// `sysbench.rand.string(template)` written into `out`: each `#` becomes
    /// `uniform('0', '9')`, each `@` becomes `uniform('a', 'z')`, any other
    /// byte is copied. One draw per `#` or `@`. Unlike sysbench's C loop, a
    /// NUL byte does not end the template; it is copied.
    ///
    /// Panics if `out` and `template` differ in length.
    pub fn rand_str(&mut self, template: &[u8], out: &mut [u8]) {
        assert_eq!(template.len(), out.len(), "rand_str: output must be as long as the template");
        for (dst, &c) in out.iter_mut().zip(template) {
            // `buf[i] = sb_rand_uniform(...)`: a u32 stored in a char.
            *dst = match c {
                b'#' => self.uniform(u32::from(b'0'), u32::from(b'9')) as u8,
                b'@' => self.uniform(u32::from(b'a'), u32::from(b'z')) as u8,
                other => other,
            };
        }
    }
}

/// The seed sysbench passes to `srandom`: `--rand-seed` reinterpreted as
/// `unsigned int`, or, when it is 0, `time(NULL)` truncated to 32 bits.
pub fn srandom_seed(rand_seed: i32, unix_time_secs: u64) -> u32 {
    if rand_seed != 0 {
        rand_seed as u32
    } else {
        unix_time_secs as u32
    }
}

/// The seed of shard `shard`'s own generators (its `--rate` arrivals) in a
/// run split over several instances: shard 0 keeps the run's seed, so an
/// unsplit run is unchanged; the others get seeds as far apart as a
/// splitmix64 step puts them, so no two shards draw the same arrivals and
/// the same `--rand-seed` gives each shard the same ones again.
pub fn shard_seed(seed: u32, shard: u32) -> u32 {
    if shard == 0 {
        return seed;
    }
    let mut z = (u64::from(seed) << 32 | u64::from(shard)).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) as u32
}

#[cfg(test)]
mod tests {
    use super::{c_double_to_u32, shard_seed, srandom_seed, Rng};
    use crate::rand::{Distribution, RandConfig, RandParams, Xoroshiro128Plus};

    fn params(distribution: Distribution) -> RandParams {
        let config = RandConfig { distribution, ..RandConfig::default() };
        match RandParams::new(&config) {
            Ok(p) => p,
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn casts_like_x86_64_gcc() {
        assert_eq!(c_double_to_u32(3.99), 3);
        assert_eq!(c_double_to_u32(-0.5), 0);
        assert_eq!(c_double_to_u32(-1.5), u32::MAX);
        assert_eq!(c_double_to_u32(4_294_967_296.0 + 7.5), 7);
        assert_eq!(c_double_to_u32(f64::NAN), 0);
        assert_eq!(c_double_to_u32(1e300), 0);
        assert_eq!(c_double_to_u32(-1e300), 0);
    }

    #[test]
    fn seed_zero_means_time() {
        assert_eq!(srandom_seed(42, 1_700_000_000), 42);
        assert_eq!(srandom_seed(-1, 1_700_000_000), u32::MAX);
        assert_eq!(srandom_seed(0, (1 << 32) + 5), 5);
    }

    #[test]
    fn for_connections_matches_for_thread() {
        let p = params(Distribution::Uniform);
        for (i, mut rng) in Rng::for_connections(7, p).take(5).enumerate() {
            let mut expected = Rng::for_thread(7, i as u32, p);
            assert_eq!(rng.next_u64(), expected.next_u64(), "connection {i}");
        }
    }

    #[test]
    fn ranges_are_respected() {
        for d in Distribution::ALL {
            let mut rng = Rng::for_thread(3, 0, params(d));
            for (a, b) in [(1, 10), (5, 5), (0, 1), (1_000_000, 1_000_100), (u32::MAX - 3, u32::MAX)] {
                for _ in 0..2_000 {
                    let v = rng.default(a, b);
                    assert!((a..=b).contains(&v), "{d}({a}, {b}) = {v}");
                }
            }
        }
    }

    #[test]
    fn full_u32_range_wraps_to_an_empty_size() {
        // b - a + 1 == 0 in uint32: sysbench returns a for uniform and pareto.
        let mut rng = Rng::for_thread(3, 0, params(Distribution::Uniform));
        assert_eq!(rng.uniform(0, u32::MAX), 0);
        assert_eq!(rng.pareto(0, u32::MAX), 0);
        assert_eq!(rng.gaussian(0, u32::MAX), 0);
    }

    #[test]
    fn special_hot_spot_is_right_of_centre() {
        let mut rng = Rng::for_thread(11, 0, params(Distribution::Special));
        let hot = (0..10_000).filter(|_| (4975..=5051).contains(&rng.special(1, 10_000))).count();
        // 75 % hot-spot draws plus a little of the bump.
        assert!((7_400..8_000).contains(&hot), "hot = {hot}");
    }

    #[test]
    fn rand_str_fills_the_template() {
        let mut rng = Rng::new(Xoroshiro128Plus::from_state(1, 2), params(Distribution::Uniform));
        let mut out = [0u8; 9];
        rng.rand_str(b"###-@@@x\0", &mut out);
        assert!(out[..3].iter().all(u8::is_ascii_digit));
        assert_eq!(out[3], b'-');
        assert!(out[4..7].iter().all(u8::is_ascii_lowercase));
        assert_eq!(&out[7..], b"x\0");
        // Six draws, one per placeholder.
        let mut replay = Rng::new(Xoroshiro128Plus::from_state(1, 2), params(Distribution::Uniform));
        let digits: Vec<u8> = (0..3).map(|_| replay.uniform(48, 57) as u8).collect();
        assert_eq!(&out[..3], &digits[..]);
    }

    #[test]
    #[should_panic(expected = "as long as the template")]
    fn rand_str_rejects_a_short_buffer() {
        let mut rng = Rng::for_thread(1, 0, params(Distribution::Uniform));
        rng.rand_str(b"###", &mut [0u8; 2]);
    }

    #[test]
    fn shard_seeds_differ_per_shard_and_repeat_per_seed() {
        assert_eq!(shard_seed(42, 0), 42);
        let seeds: std::collections::BTreeSet<u32> = (0..64).map(|shard| shard_seed(42, shard)).collect();
        assert_eq!(seeds.len(), 64);
        assert_eq!(shard_seed(42, 3), shard_seed(42, 3));
        assert_ne!(shard_seed(42, 3), shard_seed(43, 3));
    }
}
