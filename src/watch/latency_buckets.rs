//! `wirebench_latency_seconds`: the events' latencies as a Prometheus
//! histogram, counted from each interval's HdrHistogram.
//!
//! The bounds are dense where latency bounds are usually set (every
//! 0.5 to 1 ms below 10 ms, then 5 to 10 ms steps to 50 ms) and sparse
//! beyond, so that `histogram_quantile()` over them is close to the
//! HdrHistogram's own percentiles where an SLO is judged. Each value is
//! placed by the lowest value of its HdrHistogram bucket (3 significant
//! digits): a value exactly at a bound counts within it, and a count is
//! exact to 0.1 % of the bound.

use crate::stats::HdrLatency;

/// The buckets' upper bounds in ns, `+Inf` implied.
pub const BOUNDS_NS: [u64; 40] = [
    50_000,
    100_000,
    200_000,
    300_000,
    400_000,
    500_000,
    750_000,
    1_000_000,
    1_500_000,
    2_000_000,
    2_500_000,
    3_000_000,
    4_000_000,
    5_000_000,
    6_000_000,
    7_500_000,
    10_000_000,
    15_000_000,
    20_000_000,
    25_000_000,
    30_000_000,
    40_000_000,
    50_000_000,
    75_000_000,
    100_000_000,
    150_000_000,
    200_000_000,
    250_000_000,
    300_000_000,
    400_000_000,
    500_000_000,
    750_000_000,
    1_000_000_000,
    1_500_000_000,
    2_000_000_000,
    3_000_000_000,
    5_000_000_000,
    10_000_000_000,
    30_000_000_000,
    60_000_000_000,
];

/// Counts per bucket (not cumulative; the last is `+Inf`'s share), the
/// sum and the count, since the measured run began.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyBuckets {
    counts: [u64; BOUNDS_NS.len() + 1],
    sum_ns: u128,
    count: u64,
}

impl Default for LatencyBuckets {
    fn default() -> Self {
        LatencyBuckets { counts: [0; BOUNDS_NS.len() + 1], sum_ns: 0, count: 0 }
    }
}

impl LatencyBuckets {
    /// Adds an interval's latencies.
    pub fn add(&mut self, latency: &HdrLatency) {
        let histogram = latency.histogram();
        for value in histogram.iter_recorded() {
            let at = histogram.lowest_equivalent(value.value_iterated_to());
            let bucket = BOUNDS_NS.partition_point(|&bound| bound < at);
            if let Some(count) = self.counts.get_mut(bucket) {
                *count += value.count_at_value();
            }
        }
        self.sum_ns += latency.sum_ns();
        self.count += latency.count();
    }

    /// Each bound in seconds (`f64::INFINITY` last) with the count of
    /// values at or below it.
    pub fn cumulative(&self) -> impl Iterator<Item = (f64, u64)> + '_ {
        let bounds = BOUNDS_NS.iter().map(|&ns| ns as f64 / 1e9).chain(std::iter::once(f64::INFINITY));
        bounds.zip(self.counts.iter().scan(0, |total, &n| {
            *total += n;
            Some(*total)
        }))
    }

    pub fn sum_seconds(&self) -> f64 {
        self.sum_ns as f64 / 1e9
    }

    pub fn count(&self) -> u64 {
        self.count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_rise() {
        assert!(BOUNDS_NS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn values_land_at_or_below_their_bound() {
        let mut latency = HdrLatency::new();
        for ns in [40_000, 1_000_000, 1_002_000, 4_900_000, 5_100_000, 90_000_000_000] {
            latency.record_ns(ns);
        }
        let mut buckets = LatencyBuckets::default();
        buckets.add(&latency);
        buckets.add(&latency);
        let at = |s: f64| buckets.cumulative().find(|&(bound, _)| bound == s).map(|(_, n)| n);
        assert_eq!(at(0.00005), Some(2));
        assert_eq!(at(0.001), Some(4), "1 ms exactly is within 1 ms");
        assert_eq!(at(0.0015), Some(6));
        assert_eq!(at(0.005), Some(8));
        assert_eq!(at(0.006), Some(10));
        assert_eq!(at(60.0), Some(10));
        assert_eq!(at(f64::INFINITY), Some(12));
        assert_eq!(buckets.count(), 12);
        let sum = 2.0 * (0.00004 + 0.001 + 0.001002 + 0.0049 + 0.0051 + 90.0);
        assert!((buckets.sum_seconds() - sum).abs() < 1e-9);
    }
}
