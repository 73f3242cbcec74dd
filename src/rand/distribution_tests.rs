//! Goodness of fit: a large fixed-seed sample of each distribution against
//! the exact probability of every value, derived from the definition (not
//! from the code under test), with Pearson's chi-square test. Each test also
//! checks that a slightly wrong model is rejected, so the check can fail.

use super::{Distribution, RandConfig, RandParams, Rng};

/// Samples per distribution: enough to see a 1-2 % distortion.
const SAMPLES: u64 = 1_000_000;
/// Adjacent values are merged into one bin until it expects this many draws,
/// so the chi-square approximation holds in sparse tails.
const MIN_EXPECTED: f64 = 20.0;
/// A fit is rejected below this p-value: the seed is fixed, so the test is
/// deterministic, and a correct generator needs a one-in-a-million fluke.
const REJECT_BELOW: f64 = 1e-6;

const A: u32 = 1;
const B: u32 = 1000;
const N: usize = (B - A + 1) as usize;

fn rng_for(config: RandConfig) -> Rng {
    match RandParams::new(&config) {
        Ok(params) => Rng::for_thread(20_240_601, 0, params),
        Err(e) => panic!("{e}"),
    }
}

fn config(distribution: Distribution) -> RandConfig {
    RandConfig { distribution, ..RandConfig::default() }
}

/// Counts of `draw()` per value `A..=B`; a value outside fails at once.
fn histogram(samples: u64, mut draw: impl FnMut() -> u32) -> Vec<u64> {
    let mut counts = vec![0u64; N];
    for _ in 0..samples {
        let v = draw();
        assert!((A..=B).contains(&v), "draw {v} outside [{A}, {B}]");
        counts[(v - A) as usize] += 1;
    }
    counts
}

struct Fit {
    statistic: f64,
    df: u32,
    p: f64,
}

impl std::fmt::Display for Fit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "chi-square {:.1} on {} degrees of freedom, p = {:.3e}", self.statistic, self.df, self.p)
    }
}

/// Pearson's chi-square of `observed` against `pmf` (same support, one
/// entry per value), with bins merged to `MIN_EXPECTED`.
fn chi_square(observed: &[u64], pmf: &[f64]) -> Fit {
    assert_eq!(observed.len(), pmf.len());
    let total: f64 = pmf.iter().sum();
    assert!((total - 1.0).abs() < 1e-9, "pmf sums to {total}");
    let n = observed.iter().sum::<u64>() as f64;
    let mut bins: Vec<(f64, f64)> = Vec::new();
    let (mut expected, mut seen) = (0.0, 0.0);
    for (&o, &p) in observed.iter().zip(pmf) {
        expected += p * n;
        seen += o as f64;
        if expected >= MIN_EXPECTED {
            bins.push((expected, seen));
            (expected, seen) = (0.0, 0.0);
        }
    }
    match bins.last_mut() {
        Some(last) => {
            last.0 += expected;
            last.1 += seen;
        }
        None => panic!("sample too small for {MIN_EXPECTED} expected per bin"),
    }
    let statistic = bins.iter().map(|&(e, o)| (o - e) * (o - e) / e).sum();
    let df = bins.len() as u32 - 1;
    Fit { statistic, df, p: chi_square_survival(statistic, df) }
}

fn assert_fits(name: &str, observed: &[u64], pmf: &[f64]) {
    let fit = chi_square(observed, pmf);
    assert!(fit.p >= REJECT_BELOW, "{name}: sample does not fit its definition: {fit}");
}

fn assert_rejected(name: &str, observed: &[u64], wrong_pmf: &[f64]) {
    let fit = chi_square(observed, wrong_pmf);
    assert!(fit.p < REJECT_BELOW, "{name}: a wrong model was not rejected: {fit}");
}

/// `P(X > statistic)` for X ~ chi-square(df): the regularized upper
/// incomplete gamma function Q(df/2, statistic/2).
fn chi_square_survival(statistic: f64, df: u32) -> f64 {
    let a = f64::from(df) / 2.0;
    let x = statistic / 2.0;
    if x <= 0.0 {
        return 1.0;
    }
    // x^a e^-x / Γ(a), the common factor of both expansions.
    let prefactor = (a * x.ln() - x - ln_gamma_of_half(df)).exp();
    if x < a + 1.0 {
        // Series for the lower function P: Σ x^n / (a (a+1) ... (a+n)).
        let (mut term, mut sum, mut denominator) = (1.0 / a, 1.0 / a, a);
        while term > sum * 1e-17 {
            denominator += 1.0;
            term *= x / denominator;
            sum += term;
        }
        1.0 - prefactor * sum
    } else {
        // Continued fraction for Q (modified Lentz).
        const TINY: f64 = 1e-300;
        let mut b = x + 1.0 - a;
        let mut c = 1.0 / TINY;
        let mut d = 1.0 / b;
        let mut fraction = d;
        for i in 1..100_000 {
            let i = f64::from(i);
            let an = -i * (i - a);
            b += 2.0;
            d = an * d + b;
            if d.abs() < TINY {
                d = TINY;
            }
            c = b + an / c;
            if c.abs() < TINY {
                c = TINY;
            }
            d = 1.0 / d;
            let step = d * c;
            fraction *= step;
            if (step - 1.0).abs() < 1e-16 {
                break;
            }
        }
        prefactor * fraction
    }
}

/// ln Γ(k/2), exactly from Γ(1) = 1, Γ(1/2) = √π and Γ(a+1) = a Γ(a).
fn ln_gamma_of_half(k: u32) -> f64 {
    let target = f64::from(k) / 2.0;
    let (mut a, mut acc) = if k % 2 == 0 { (1.0, 0.0) } else { (0.5, 0.5 * std::f64::consts::PI.ln()) };
    while a < target {
        acc += f64::ln(a);
        a += 1.0;
    }
    acc
}

/// CDF of the Irwin–Hall distribution (sum of `m` uniforms on [0, 1)):
/// `F(x) = 1/m! Σ_{j ≤ x} (-1)^j C(m, j) (x - j)^m`, evaluated on the
/// nearer half and mirrored to limit cancellation.
fn irwin_hall_cdf(x: f64, m: u32) -> f64 {
    let mf = f64::from(m);
    if x <= 0.0 {
        return 0.0;
    }
    if x >= mf {
        return 1.0;
    }
    if x > mf / 2.0 {
        return 1.0 - irwin_hall_cdf(mf - x, m);
    }
    let factorial: f64 = (1..=m).map(f64::from).product();
    let mut sum = 0.0;
    let mut binomial = 1.0;
    let mut j = 0;
    while f64::from(j) <= x && j <= m {
        let sign = if j % 2 == 0 { 1.0 } else { -1.0 };
        sum += sign * binomial * (x - f64::from(j)).powi(m as i32);
        binomial = binomial * f64::from(m - j) / f64::from(j + 1);
        j += 1;
    }
    sum / factorial
}

/// `a + trunc(size * S / iter)`, S ~ Irwin–Hall(iter): per-offset mass over
/// `len` offsets.
fn scaled_irwin_hall_pmf(size: f64, iter: u32, len: usize) -> Vec<f64> {
    let cdf = |k: usize| irwin_hall_cdf(f64::from(iter) * k as f64 / size, iter);
    (0..len).map(|k| cdf(k + 1) - cdf(k)).collect()
}

fn uniform_pmf(len: usize) -> Vec<f64> {
    vec![1.0 / len as f64; len]
}

/// sysbench's special distribution over offsets `0..=t` (t = b - a): with
/// probability q = (100 - res)/100 the value is `trunc(t * S / iter)`;
/// otherwise the same first draw U, uniform on [q, 1), gives
/// `trunc(U (d + 1) + t/2 - t pct/200)` with `d = t pct / 100`.
fn special_pmf(t: u32, iter: u32, pct: u32, res: u32) -> Vec<f64> {
    let tf = f64::from(t);
    let q = f64::from(100 - res) / 100.0;
    let len = t as usize + 1;
    let mut pmf: Vec<f64> = scaled_irwin_hall_pmf(tf, iter, len).into_iter().map(|p| q * p).collect();
    let d = tf * f64::from(pct) / 100.0;
    let shift = tf / 2.0 - tf * f64::from(pct) / 200.0;
    let (lo, hi) = (q * (d + 1.0) + shift, (d + 1.0) + shift);
    for (k, p) in pmf.iter_mut().enumerate() {
        let overlap = (hi.min(k as f64 + 1.0) - lo.max(k as f64)).max(0.0);
        *p += overlap / (d + 1.0);
    }
    pmf
}

/// `trunc(n U^p)`, p = ln h / ln(1 - h): `P(k) = ((k+1)/n)^(1/p) - (k/n)^(1/p)`.
fn pareto_pmf(h: f64, len: usize) -> Vec<f64> {
    let inverse_power = (1.0 - h).ln() / h.ln();
    let cdf = |k: usize| (k as f64 / len as f64).powf(inverse_power);
    (0..len).map(|k| cdf(k + 1) - cdf(k)).collect()
}

/// `P(a + k - 1) = k^-e / Σ j^-e`.
fn zipf_pmf(e: f64, len: usize) -> Vec<f64> {
    let weights: Vec<f64> = (1..=len).map(|k| (k as f64).powf(-e)).collect();
    let total: f64 = weights.iter().sum();
    weights.into_iter().map(|w| w / total).collect()
}

#[test]
fn chi_square_survival_matches_tables() {
    // Critical values at p = 0.05 and p = 0.001 from standard tables.
    assert!((chi_square_survival(3.841_459, 1) - 0.05).abs() < 1e-6);
    assert!((chi_square_survival(18.307_038, 10) - 0.05).abs() < 1e-6);
    assert!((chi_square_survival(29.588_298, 10) - 0.001).abs() < 1e-7);
    // df = 2 is the exponential distribution: Q = e^(-x/2).
    for x in [0.5, 3.0, 40.0, 200.0] {
        let q = chi_square_survival(x, 2);
        assert!((q / (-x / 2.0).exp() - 1.0).abs() < 1e-10, "x={x} q={q}");
    }
    // Far tail and a large df, where the mean is df.
    assert!(chi_square_survival(2_000.0, 1_000) < 1e-50);
    assert!((chi_square_survival(1_000.0, 1_000) - 0.5).abs() < 0.02);
}

#[test]
fn irwin_hall_cdf_is_right() {
    // m = 2 is the triangle: F(x) = x²/2 on [0, 1].
    assert!((irwin_hall_cdf(0.6, 2) - 0.18).abs() < 1e-15);
    assert!((irwin_hall_cdf(1.5, 2) - 0.875).abs() < 1e-15);
    assert!((irwin_hall_cdf(6.0, 12) - 0.5).abs() < 1e-12);
    // m = 12 has variance 1: P(S < 6 - 1.96) is about 0.025.
    assert!((irwin_hall_cdf(6.0 - 1.96, 12) - 0.025).abs() < 0.001);
}

#[test]
fn uniform_fits() {
    let mut rng = rng_for(config(Distribution::Uniform));
    let observed = histogram(SAMPLES, || rng.default(A, B));
    assert_fits("uniform", &observed, &uniform_pmf(N));
    // Off by one (values 1..=1001): the missing top value must show.
    let mut padded = observed.clone();
    padded.push(0);
    assert_rejected("uniform", &padded, &uniform_pmf(N + 1));
}

#[test]
fn gaussian_fits() {
    let mut rng = rng_for(config(Distribution::Gaussian));
    let observed = histogram(SAMPLES, || rng.default(A, B));
    assert_fits("gaussian", &observed, &scaled_irwin_hall_pmf(N as f64, 12, N));
    assert_rejected("gaussian", &observed, &scaled_irwin_hall_pmf(N as f64, 11, N));
}

#[test]
fn gaussian_follows_spec_iter() {
    let mut rng = rng_for(RandConfig { spec_iter: 3, ..config(Distribution::Gaussian) });
    let observed = histogram(SAMPLES / 4, || rng.default(A, B));
    assert_fits("gaussian iter=3", &observed, &scaled_irwin_hall_pmf(N as f64, 3, N));
    assert_rejected("gaussian iter=3", &observed, &scaled_irwin_hall_pmf(N as f64, 12, N));
}

#[test]
fn special_fits() {
    let mut rng = rng_for(config(Distribution::Special));
    let observed = histogram(SAMPLES, || rng.default(A, B));
    assert_fits("special", &observed, &special_pmf(B - A, 12, 1, 75));
    assert_rejected("special", &observed, &special_pmf(B - A, 12, 2, 75));
    assert_rejected("special", &observed, &special_pmf(B - A, 12, 1, 70));
}

#[test]
fn special_follows_its_options() {
    let options = RandConfig { spec_iter: 4, spec_pct: 10, spec_res: 50, ..config(Distribution::Special) };
    let mut rng = rng_for(options);
    let observed = histogram(SAMPLES / 4, || rng.default(A, B));
    assert_fits("special 4/10/50", &observed, &special_pmf(B - A, 4, 10, 50));
    assert_rejected("special 4/10/50", &observed, &special_pmf(B - A, 12, 1, 75));
}

#[test]
fn pareto_fits() {
    let mut rng = rng_for(config(Distribution::Pareto));
    let observed = histogram(SAMPLES, || rng.default(A, B));
    assert_fits("pareto", &observed, &pareto_pmf(0.2, N));
    assert_rejected("pareto", &observed, &pareto_pmf(0.21, N));
}

#[test]
fn zipfian_fits() {
    let mut rng = rng_for(config(Distribution::Zipfian));
    let observed = histogram(SAMPLES, || rng.default(A, B));
    assert_fits("zipfian", &observed, &zipf_pmf(0.8, N));
    assert_rejected("zipfian", &observed, &zipf_pmf(0.79, N));
}

#[test]
fn zipfian_fits_other_exponents() {
    // 0 is uniform, 1 takes the logarithm branch, 2.5 is very steep.
    for e in [0.0, 1.0, 2.5] {
        let mut rng = rng_for(RandConfig { zipfian_exp: e, ..config(Distribution::Zipfian) });
        let observed = histogram(SAMPLES / 5, || rng.default(A, B));
        assert_fits(&format!("zipfian e={e}"), &observed, &zipf_pmf(e, N));
        assert_rejected(&format!("zipfian e={e}"), &observed, &zipf_pmf(e + 0.05, N));
    }
}
