//! `--rate-stages`: a target rate that changes over the run. Each stage
//! moves the target linearly from where the previous stage ended to its
//! own rate over its seconds; the first stage holds its rate (there is no
//! stage before it), so `0:0,5000:30,5000:60,20000:10` ramps from 0 to
//! 5000/s over 30 s, holds 60 s, then ramps to 20000/s over 10 s.
//!
//! The schedule follows the rate through its integral, `Λ(t)`, the number
//! of arrivals expected by time `t`: arrival `k` comes when `Λ` reaches
//! the `k`-th point of a unit-rate stream (exponential gaps of mean 1 for
//! Poisson arrivals, a non-homogeneous Poisson process by time rescaling;
//! gaps of exactly 1 for fixed ones, so a fixed arrival comes each time
//! the integral crosses a whole number). A linear stage makes `Λ` a
//! quadratic on it, inverted in closed form, so finding an arrival's time
//! costs a square root and an index that only moves forward.

use std::fmt;

use crate::driver::Shard;

/// One stage: the target moves to `rate` (events per second) over `secs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stage {
    pub rate: u32,
    pub secs: u32,
}

/// `--rate-stages`, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateStages {
    stages: Vec<Stage>,
}

/// Stages that make no run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum StagesError {
    #[error("no stage given: list RATE:SECONDS pairs, such as 0:0,5000:30,5000:60")]
    Empty,
    #[error("the stages last 0 seconds in all: give at least one stage a number of seconds above 0")]
    NoTime,
    #[error("the stages last {secs} seconds in all, more than {max}: split the run into several")]
    TooLong { secs: u64, max: u32 },
}

/// The longest run stages may describe (as `--time`, a C int).
const MAX_TOTAL_SECS: u32 = i32::MAX as u32;

impl RateStages {
    pub fn new(stages: Vec<Stage>) -> Result<Self, StagesError> {
        let secs: u64 = stages.iter().map(|s| u64::from(s.secs)).sum();
        match secs {
            _ if stages.is_empty() => Err(StagesError::Empty),
            0 => Err(StagesError::NoTime),
            s if s > u64::from(MAX_TOTAL_SECS) => Err(StagesError::TooLong { secs: s, max: MAX_TOTAL_SECS }),
            _ => Ok(RateStages { stages }),
        }
    }

    pub fn stages(&self) -> &[Stage] {
        &self.stages
    }

    /// How long the stages last, in seconds: the run's `--time`.
    pub fn total_secs(&self) -> u32 {
        self.stages.iter().map(|s| s.secs).sum()
    }

    /// The highest target of any stage.
    pub fn peak(&self) -> u32 {
        self.stages.iter().map(|s| s.rate).max().unwrap_or(0)
    }

    /// `shard`'s part: each stage's rate split as `--rate` is (`rate / N`
    /// each, the remainder one apiece to the first shards), so that the
    /// shards' targets add up to the whole run's at every instant.
    pub fn share(&self, shard: Shard) -> RateStages {
        let stages = self.stages.iter().map(|s| Stage { rate: shard.share(u64::from(s.rate)) as u32, ..*s }).collect();
        RateStages { stages }
    }

    /// The target over time, scaled by `scale` (a loop's share of the
    /// connections), after `hold_secs` at the first stage's rate (the
    /// warm-up, which runs before the stages).
    pub(crate) fn profile(&self, scale: f64, hold_secs: u32) -> RateProfile {
        let first = self.stages.first().map_or(0, |s| s.rate);
        let hold = Stage { rate: first, secs: hold_secs };
        RateProfile::new(std::iter::once(hold).chain(self.stages.iter().copied()), scale)
    }
}

/// `0:0,5000:30`, as `--rate-stages` takes it.
impl fmt::Display for RateStages {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.stages.iter().enumerate() {
            write!(f, "{}{}:{}", if i > 0 { "," } else { "" }, s.rate, s.secs)?;
        }
        Ok(())
    }
}

/// One linear piece of the target: from `start_ns` to `end_ns` the rate is
/// `rate + slope × (t - start_ns)` arrivals per ns.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Piece {
    start_ns: f64,
    end_ns: f64,
    rate: f64,
    slope: f64,
    /// `Λ(start_ns)`: arrivals expected before the piece.
    before: f64,
    /// Arrivals expected over the piece.
    count: f64,
}

impl Piece {
    /// Arrivals expected from the piece's start to `start_ns + x`.
    #[inline]
    fn integral(&self, x: f64) -> f64 {
        x * (self.rate + 0.5 * self.slope * x)
    }

    /// How far into the piece `d` arrivals are expected: the root of
    /// `slope/2 x² + rate x = d` in the form that neither cancels nor
    /// divides by 0 when the slope is 0 or the rate starts at 0.
    #[inline]
    fn reach(&self, d: f64) -> f64 {
        if d <= 0.0 {
            return 0.0;
        }
        let root = (self.rate * self.rate + 2.0 * self.slope * d).max(0.0).sqrt();
        (2.0 * d / (self.rate + root)).min(self.end_ns - self.start_ns)
    }
}

/// The target over time, in the run's ns: linear pieces, then nothing.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RateProfile {
    pieces: Box<[Piece]>,
    /// Arrivals expected over the whole profile.
    total: f64,
}

impl RateProfile {
    fn new(stages: impl Iterator<Item = Stage>, scale: f64) -> Self {
        let mut pieces = Vec::new();
        let (mut at, mut before, mut previous) = (0.0f64, 0.0f64, None);
        for stage in stages {
            let to = f64::from(stage.rate) * scale / 1e9;
            let from = previous.unwrap_or(to);
            previous = Some(to);
            if stage.secs == 0 {
                continue;
            }
            let length = f64::from(stage.secs) * 1e9;
            let mut piece = Piece {
                start_ns: at,
                end_ns: at + length,
                rate: from,
                slope: (to - from) / length,
                before,
                count: 0.0,
            };
            piece.count = piece.integral(length);
            before += piece.count;
            at += length;
            pieces.push(piece);
        }
        RateProfile { pieces: pieces.into_boxed_slice(), total: before }
    }

    /// `Λ(t)`: arrivals expected by `t_ns`. `hint` is the index of a piece
    /// at or before the one holding `t_ns`, moved forward to it.
    #[inline]
    pub(crate) fn expected_by(&self, t_ns: f64, hint: &mut usize) -> f64 {
        while self.pieces.get(*hint).is_some_and(|p| p.end_ns <= t_ns) {
            *hint += 1;
        }
        match self.pieces.get(*hint) {
            Some(p) if t_ns > p.start_ns => p.before + p.integral(t_ns - p.start_ns),
            Some(p) => p.before,
            None => self.total,
        }
    }

    /// `Λ⁻¹(u)`: when the expected arrivals reach `u`, or `None` when they
    /// never do (past the last stage). `hint` as in
    /// [`expected_by`](Self::expected_by), for `u` that only grows.
    #[inline]
    pub(crate) fn time_of(&self, u: f64, hint: &mut usize) -> Option<f64> {
        // `>=`: a piece with nothing expected (a stage at rate 0) is passed over.
        while self.pieces.get(*hint).is_some_and(|p| u >= p.before + p.count) {
            *hint += 1;
        }
        let p = self.pieces.get(*hint)?;
        Some(p.start_ns + p.reach(u - p.before))
    }

    /// The mean target between two instants, in events per second.
    pub(crate) fn mean_rate(&self, from_ns: u64, to_ns: u64) -> f64 {
        if to_ns <= from_ns {
            return 0.0;
        }
        let at = |t: u64| {
            let t = t as f64;
            let mut hint = self.pieces.partition_point(|p| p.end_ns <= t);
            self.expected_by(t, &mut hint)
        };
        (at(to_ns) - at(from_ns)) * 1e9 / (to_ns - from_ns) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stages(list: &[(u32, u32)]) -> RateStages {
        RateStages::new(list.iter().map(|&(rate, secs)| Stage { rate, secs }).collect()).unwrap()
    }

    const S: f64 = 1e9;

    /// The example: the integral over each stage is its mean rate
    /// times its length, and it inverts back to the same instants.
    #[test]
    fn the_integral_of_ramps_and_holds() {
        let p = stages(&[(0, 0), (5000, 30), (5000, 60), (20000, 10)]).profile(1.0, 0);
        let mut hint = 0;
        let by = |t: f64, hint: &mut usize| p.expected_by(t * S, hint);
        assert_eq!(by(0.0, &mut hint), 0.0);
        assert!((by(30.0, &mut hint) - 75_000.0).abs() < 1e-6);
        assert!((by(90.0, &mut hint) - 375_000.0).abs() < 1e-6);
        assert!((by(100.0, &mut hint) - 500_000.0).abs() < 1e-6);
        assert_eq!(by(1000.0, &mut hint), 500_000.0, "nothing after the last stage");
        let mut hint = 0;
        for u in [1.0, 2_500.0, 75_000.0, 100_000.0, 499_999.0] {
            let t = p.time_of(u, &mut hint).unwrap();
            assert!((p.expected_by(t, &mut 0) - u).abs() < 1e-6, "{u} at {t}");
        }
        assert_eq!(p.time_of(500_000.5, &mut hint), None);
        // Ramp from 0: the first arrival comes at sqrt(2 / slope).
        let first = p.time_of(1.0, &mut 0).unwrap() / S;
        assert!((first - (2.0 * 30.0 / 5000.0f64).sqrt()).abs() < 1e-9, "{first}");
        assert_eq!(p.time_of(0.0, &mut 0), Some(0.0), "no division by 0 at a rate of 0");
        assert!((p.mean_rate(30 * 1_000_000_000, 90 * 1_000_000_000) - 5000.0).abs() < 1e-6);
        assert!((p.mean_rate(0, 30 * 1_000_000_000) - 2500.0).abs() < 1e-6);
    }

    /// A stage at rate 0 expects nothing: the next arrival is after it.
    #[test]
    fn a_stage_at_rate_zero_has_no_arrivals() {
        let p = stages(&[(100, 1), (0, 0), (0, 5), (100, 0), (100, 1)]).profile(1.0, 0);
        let mut hint = 0;
        let t = p.time_of(100.0, &mut hint).unwrap();
        assert_eq!(t / S, 6.0, "the 100th: where the integral reaches 100 and goes on");
        let t = p.time_of(100.5, &mut hint).unwrap() / S;
        assert!((t - 6.005).abs() < 1e-9, "{t}");
        assert_eq!(p.mean_rate(1_500_000_000, 5_500_000_000), 0.0);
        assert!(RateStages::new(vec![Stage { rate: 1, secs: 0 }]).is_err());
        assert!(RateStages::new(Vec::new()).is_err());
    }

    /// The warm-up holds the first stage's rate; the scale is a loop's share.
    #[test]
    fn warmup_and_scale() {
        let p = stages(&[(1000, 10), (2000, 10)]).profile(0.25, 5);
        assert!((p.mean_rate(0, 5_000_000_000) - 250.0).abs() < 1e-9);
        assert!((p.mean_rate(15_000_000_000, 25_000_000_000) - 375.0).abs() < 1e-9);
    }

    /// Shards' stage rates add up to the whole run's at every stage.
    #[test]
    fn shards_share_each_stage() {
        let whole = stages(&[(10, 1), (7, 2), (0, 3)]);
        let parts: Vec<_> = (0..3).map(|i| whole.share(Shard::new(i, 3).unwrap())).collect();
        for (k, stage) in whole.stages().iter().enumerate() {
            assert_eq!(parts.iter().map(|p| p.stages()[k].rate).sum::<u32>(), stage.rate);
            assert!(parts.iter().all(|p| p.stages()[k].secs == stage.secs));
        }
        assert_eq!(whole.to_string(), "10:1,7:2,0:3");
        assert_eq!(whole.total_secs(), 6);
    }
}
