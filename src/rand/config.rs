//! The `--rand-*` options and the constants sysbench derives from them once
//! in `sb_rand_init()`.

use std::fmt;
use std::str::FromStr;

/// `--rand-type`: the distribution behind `sysbench.rand.default()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Distribution {
    Uniform,
    Gaussian,
    /// The sysbench 1.0.20 default; removed upstream after 1.0.20.
    #[default]
    Special,
    Pareto,
    /// Only in sysbench after 1.0.20 (`--rand-zipfian-exp`).
    Zipfian,
}

impl Distribution {
    pub const ALL: [Distribution; 5] = [
        Distribution::Uniform,
        Distribution::Gaussian,
        Distribution::Special,
        Distribution::Pareto,
        Distribution::Zipfian,
    ];

    /// The `--rand-type` spelling.
    pub fn name(self) -> &'static str {
        match self {
            Distribution::Uniform => "uniform",
            Distribution::Gaussian => "gaussian",
            Distribution::Special => "special",
            Distribution::Pareto => "pareto",
            Distribution::Zipfian => "zipfian",
        }
    }
}

impl fmt::Display for Distribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Distribution {
    type Err = RandConfigError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Distribution::ALL
            .into_iter()
            .find(|d| d.name() == s)
            .ok_or_else(|| RandConfigError::UnknownDistribution(s.to_owned()))
    }
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum RandConfigError {
    #[error("invalid random numbers distribution: {0} (expected uniform, gaussian, special, pareto or zipfian)")]
    UnknownDistribution(String),
    #[error("--rand-zipfian-exp must be >= 0, got {0}")]
    NegativeZipfianExp(f64),
}

/// The random-number options as given on a sysbench command line.
///
/// The integer options are `int` in sysbench but stored in `unsigned int`, so
/// a command-line parser should convert a negative value with `as u32`, as C
/// does; sysbench validates none of them and neither does this type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RandConfig {
    pub distribution: Distribution,
    /// `--rand-spec-iter` (gaussian and special).
    pub spec_iter: u32,
    /// `--rand-spec-pct` (special).
    pub spec_pct: u32,
    /// `--rand-spec-res` (special).
    pub spec_res: u32,
    /// `--rand-pareto-h`.
    pub pareto_h: f64,
    /// `--rand-zipfian-exp`.
    pub zipfian_exp: f64,
    /// `--rand-seed`; 0 seeds from the time (see [`super::srandom_seed`]).
    pub seed: i32,
}

impl Default for RandConfig {
    /// sysbench 1.0.20's defaults.
    fn default() -> Self {
        RandConfig {
            distribution: Distribution::Special,
            spec_iter: 12,
            spec_pct: 1,
            spec_res: 75,
            pareto_h: 0.2,
            zipfian_exp: 0.8,
            seed: 0,
        }
    }
}

/// A [`RandConfig`] turned into the constants the generators use. It is
/// small and `Copy`, so every connection's [`super::Rng`] carries its own.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RandParams {
    pub(super) distribution: Distribution,
    pub(super) iter: u32,
    pub(super) iter_mult: f64,
    pub(super) pct_mult: f64,
    pub(super) pct_2_mult: f64,
    pub(super) res_mult: f64,
    pub(super) pareto_power: f64,
    pub(super) zipf_exp: f64,
    pub(super) zipf_s: f64,
    pub(super) zipf_h_integral_x1: f64,
}

impl RandParams {
    /// The same expressions, in the same order, as sysbench's
    /// `sb_rand_init()`, so every derived double is bit-identical. Rejects a
    /// negative (or NaN) Zipfian exponent even when another distribution is
    /// chosen, as sysbench does.
    pub fn new(config: &RandConfig) -> Result<Self, RandConfigError> {
        let e = config.zipfian_exp;
        if e.is_nan() || e < 0.0 {
            return Err(RandConfigError::NegativeZipfianExp(e));
        }
        let h = config.pareto_h;
        Ok(RandParams {
            distribution: config.distribution,
            iter: config.spec_iter,
            iter_mult: 1.0 / f64::from(config.spec_iter),
            pct_mult: f64::from(config.spec_pct) / 100.0,
            pct_2_mult: f64::from(config.spec_pct) / 200.0,
            res_mult: 100.0 / (100.0 - f64::from(config.spec_res)),
            pareto_power: h.ln() / (1.0 - h).ln(),
            zipf_exp: e,
            zipf_s: 2.0 - zipf::h_integral_inverse(zipf::h_integral(2.5, e) - zipf::h(2.0, e), e),
            zipf_h_integral_x1: zipf::h_integral(1.5, e) - 1.0,
        })
    }

    #[cfg(test)]
    pub fn distribution(&self) -> Distribution {
        self.distribution
    }
}

impl Default for RandParams {
    fn default() -> Self {
        // The default exponent is valid, so this cannot fail; spelled out to
        // avoid an unwrap.
        match RandParams::new(&RandConfig::default()) {
            Ok(params) => params,
            Err(_) => unreachable!("sysbench's default options are valid"),
        }
    }
}

/// The helpers of sysbench's Zipfian sampler (rejection-inversion,
/// Hörmann & Derflinger 1996, as in Apache Commons RNG), with sysbench's
/// Taylor-series cut-offs so results match bit for bit.
pub(super) mod zipf {
    /// sysbench writes the constant as `0.33333333333333333`, which parses
    /// to this same double.
    const ONE_THIRD: f64 = 1.0 / 3.0;

    /// `H(x) = (x^(1-e) - 1) / (1-e)`, or `ln x` when e = 1.
    pub(in crate::rand) fn h_integral(x: f64, e: f64) -> f64 {
        let log_x = x.ln();
        helper2((1.0 - e) * log_x) * log_x
    }

    /// `h(x) = x^-e`.
    pub(in crate::rand) fn h(x: f64, e: f64) -> f64 {
        (-e * x.ln()).exp()
    }

    pub(in crate::rand) fn h_integral_inverse(x: f64, e: f64) -> f64 {
        let mut t = x * (1.0 - e);
        // Rounding can push t below -1, outside log1p's domain. (Not
        // `f64::max`, which would also replace a NaN.)
        if t < -1.0 {
            t = -1.0;
        }
        (helper1(t) * x).exp()
    }

    /// `log1p(x) / x`.
    fn helper1(x: f64) -> f64 {
        if x.abs() > 1e-8 {
            x.ln_1p() / x
        } else {
            1.0 - x * (0.5 - x * (ONE_THIRD - 0.25 * x))
        }
    }

    /// `expm1(x) / x`.
    fn helper2(x: f64) -> f64 {
        if x.abs() > 1e-8 {
            x.exp_m1() / x
        } else {
            1.0 + x * 0.5 * (1.0 + x * ONE_THIRD * (1.0 + 0.25 * x))
        }
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn one_third_is_sysbench_literal() {
            assert_eq!(Ok(super::ONE_THIRD), "0.33333333333333333".parse::<f64>());
        }

        #[test]
        fn h_integral_inverts() {
            for e in [0.0, 0.5, 0.8, 1.0, 1.5, 3.0] {
                for x in [1.0, 1.5, 2.5, 10.0, 1e3] {
                    let back = super::h_integral_inverse(super::h_integral(x, e), e);
                    assert!((back - x).abs() <= 1e-9 * x, "e={e} x={x} back={back}");
                }
            }
        }

        #[test]
        fn exponent_one_is_the_logarithm() {
            assert_eq!(super::h_integral(7.0, 1.0), 7.0f64.ln());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Distribution, RandConfig, RandConfigError, RandParams};

    #[test]
    fn names_round_trip() {
        for d in Distribution::ALL {
            assert_eq!(d.name().parse::<Distribution>(), Ok(d));
        }
        assert_eq!("normal".parse::<Distribution>(), Err(RandConfigError::UnknownDistribution("normal".into())));
    }

    #[test]
    fn default_is_sysbench_1_0_20() {
        let p = RandParams::default();
        assert_eq!(p.distribution(), Distribution::Special);
        assert_eq!(p.iter, 12);
        assert_eq!(p.res_mult, 4.0);
        assert_eq!(p.pct_mult, 0.01);
        assert_eq!(p.pct_2_mult, 0.005);
        assert!((p.pareto_power - 7.212_567_439_010_781).abs() < 1e-12);
    }

    #[test]
    fn zipfian_exponent_must_not_be_negative() {
        for bad in [-0.1, f64::NAN] {
            let config = RandConfig { zipfian_exp: bad, ..RandConfig::default() };
            assert!(matches!(RandParams::new(&config), Err(RandConfigError::NegativeZipfianExp(_))));
        }
        let zero = RandConfig { zipfian_exp: 0.0, ..RandConfig::default() };
        assert!(RandParams::new(&zero).is_ok());
    }
}
