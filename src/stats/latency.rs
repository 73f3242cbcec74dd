//! Latencies in an HdrHistogram (the `hdrhistogram` crate), beside
//! sysbench's own histogram: every percentile to 3 significant digits, with
//! no upper cap (sysbench's stops at 100 s, #242) and never above the
//! largest latency recorded (sysbench's can be, #486).
//!
//! The histogram covers 1 ns to 2^63 ns (292 years) from the start, so
//! recording never resizes it: no allocation on the per-query path. That
//! costs about 450 KB per histogram, most of it zero pages never touched.

use std::fmt;

use hdrhistogram::Histogram;

/// Significant digits kept: a value is exact to 0.1 %.
pub const SIGNIFICANT_DIGITS: u8 = 3;

/// The largest value the histograms track, in ns; anything above it (a
/// latency of centuries) is counted at it.
pub const HIGHEST_TRACKABLE_NS: u64 = u64::MAX / 2;

/// One set of latencies, in ns: the HdrHistogram plus the exact smallest,
/// largest and summed values, which the histogram only keeps to 3 digits.
#[derive(Clone)]
pub struct HdrLatency {
    histogram: Histogram<u64>,
    min_ns: u64,
    max_ns: u64,
    sum_ns: u128,
}

impl Default for HdrLatency {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for HdrLatency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HdrLatency")
            .field("count", &self.count())
            .field("min_ns", &self.min_ns())
            .field("max_ns", &self.max_ns)
            .finish()
    }
}

impl PartialEq for HdrLatency {
    fn eq(&self, other: &Self) -> bool {
        self.histogram == other.histogram
            && self.min_ns() == other.min_ns()
            && self.max_ns == other.max_ns
            && self.sum_ns == other.sum_ns
    }
}

impl HdrLatency {
    pub fn new() -> Self {
        HdrLatency { histogram: empty_histogram(), min_ns: u64::MAX, max_ns: 0, sum_ns: 0 }
    }

    #[inline]
    #[cfg(test)]
    pub fn record_ns(&mut self, ns: u64) {
        // Sized for every u64 up to HIGHEST_TRACKABLE_NS: saturating only
        // matters above it, and never resizes.
        self.histogram.saturating_record(ns.max(1));
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
        self.sum_ns += u128::from(ns);
    }

    /// Latencies kept elsewhere (a result file): `histogram` with the
    /// exact min, max and sum beside it. `None` when the histogram cannot
    /// be added to this layer's (another precision, or a range that does
    /// not fit).
    pub fn from_parts(histogram: &Histogram<u64>, min_ns: u64, max_ns: u64, sum_ns: u128) -> Option<Self> {
        let mut latency = HdrLatency::new();
        latency.histogram.add(histogram).ok()?;
        if histogram.sigfig() != SIGNIFICANT_DIGITS {
            return None;
        }
        if latency.count() > 0 {
            (latency.min_ns, latency.max_ns, latency.sum_ns) = (min_ns, max_ns, sum_ns);
        }
        Some(latency)
    }

    /// Adds `other` in.
    pub fn merge(&mut self, other: &HdrLatency) {
        // Both cover the same range, so adding never fails or resizes.
        let _ = self.histogram.add(&other.histogram);
        self.min_ns = self.min_ns.min(other.min_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
        self.sum_ns += other.sum_ns;
    }

    pub fn reset(&mut self) {
        self.histogram.reset();
        self.min_ns = u64::MAX;
        self.max_ns = 0;
        self.sum_ns = 0;
    }

    /// Values recorded.
    pub fn count(&self) -> u64 {
        self.histogram.len()
    }

    /// The smallest value recorded, exactly; 0 when empty.
    pub fn min_ns(&self) -> u64 {
        if self.count() == 0 {
            0
        } else {
            self.min_ns
        }
    }

    /// The largest value recorded, exactly; 0 when empty.
    pub fn max_ns(&self) -> u64 {
        self.max_ns
    }

    /// The exact sum of the values recorded.
    pub fn sum_ns(&self) -> u128 {
        self.sum_ns
    }

    /// The exact mean; 0 when empty.
    pub fn mean_ns(&self) -> f64 {
        match self.count() {
            0 => 0.0,
            n => self.sum_ns as f64 / n as f64,
        }
    }

    /// Percentile `p` (0 to 100): the value that `p` % of the recorded
    /// values are at or below, to 3 significant digits, and never more
    /// than [`max_ns`](Self::max_ns). 0 when empty.
    pub fn percentile_ns(&self, p: f64) -> u64 {
        if self.count() == 0 {
            return 0;
        }
        let quantile = (p / 100.0).clamp(0.0, 1.0);
        self.histogram.value_at_quantile(quantile).min(self.max_ns)
    }

    /// [`percentile_ns`](Self::percentile_ns) in milliseconds.
    pub fn percentile_ms(&self, p: f64) -> f64 {
        self.percentile_ns(p) as f64 / 1e6
    }

    /// The percentile spectrum wrk2 prints ("Detailed Percentile
    /// spectrum"): `ticks` steps per halving of the distance to 100 %
    /// (wrk2 uses 5), each with its value, percentile and running count.
    pub fn spectrum(&self, ticks: u32) -> Vec<SpectrumPoint> {
        let mut points = Vec::new();
        let mut total = 0;
        for step in self.histogram.iter_quantiles(ticks) {
            total += step.count_since_last_iteration();
            points.push(SpectrumPoint {
                value_ns: step.value_iterated_to().min(self.max_ns),
                percentile: step.quantile_iterated_to() * 100.0,
                total_count: total,
            });
        }
        points
    }

    /// The HdrHistogram itself: for a percentile spectrum
    /// (`iter_quantiles`) or an interval log.
    pub fn histogram(&self) -> &Histogram<u64> {
        &self.histogram
    }
}

/// The loop side of an [`HdrLatency`]: the crate's buckets (3 digits, 1 ns
/// to [`HIGHEST_TRACKABLE_NS`], the same index for every value) counted in
/// a plain array, so that recording costs a few instructions instead of
/// the crate's checked path; [`drain_into`](Self::drain_into) hands the
/// counts to an `HdrLatency` once per interval, at hand-over.
pub struct HdrRecorder {
    counts: Box<[u64]>,
    /// The indexes touched since the last drain, `low > high` for none.
    low: usize,
    high: usize,
    min_ns: u64,
    max_ns: u64,
    sum_ns: u128,
}

/// The crate's layout for 3 significant digits and a lowest value of 1:
/// 2048 sub-buckets, the lower half of each bucket past the first shared
/// with the bucket before.
const SUB_BUCKET_HALF_MAGNITUDE: u32 = 10;
const SUB_BUCKET_HALF: usize = 1 << SUB_BUCKET_HALF_MAGNITUDE;
const SUB_BUCKET_MASK: u64 = (1 << (SUB_BUCKET_HALF_MAGNITUDE + 1)) - 1;
const LEADING_ZERO_BASE: u32 = 64 - (SUB_BUCKET_HALF_MAGNITUDE + 1);

/// The crate's `index_for`, values clamped as `saturating_record` clamps.
#[inline]
fn hdr_bucket_index(ns: u64) -> usize {
    let value = ns.clamp(1, HIGHEST_TRACKABLE_NS);
    let bucket = LEADING_ZERO_BASE - (value | SUB_BUCKET_MASK).leading_zeros();
    let sub_bucket = (value >> bucket) as usize;
    ((bucket as usize + 1) << SUB_BUCKET_HALF_MAGNITUDE) + sub_bucket - SUB_BUCKET_HALF
}

/// The lowest value of bucket index `index` (the crate's `value_for`).
fn hdr_bucket_value(index: usize) -> u64 {
    let bucket = (index >> SUB_BUCKET_HALF_MAGNITUDE) as u32;
    let sub_bucket = (index & (SUB_BUCKET_HALF - 1)) as u64;
    match bucket.checked_sub(1) {
        Some(bucket) => (sub_bucket + SUB_BUCKET_HALF as u64) << bucket,
        None => sub_bucket,
    }
}

impl Default for HdrRecorder {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for HdrRecorder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HdrRecorder").field("low", &self.low).field("high", &self.high).finish()
    }
}

impl HdrRecorder {
    /// Allocates every bucket now (zeroed pages, most never touched).
    pub fn new() -> Self {
        let len = hdr_bucket_index(HIGHEST_TRACKABLE_NS) + 1;
        HdrRecorder {
            counts: vec![0; len].into_boxed_slice(),
            low: usize::MAX,
            high: 0,
            min_ns: u64::MAX,
            max_ns: 0,
            sum_ns: 0,
        }
    }

    #[inline]
    pub fn record_ns(&mut self, ns: u64) {
        let index = hdr_bucket_index(ns);
        if let Some(count) = self.counts.get_mut(index) {
            *count += 1;
        }
        self.low = self.low.min(index);
        self.high = self.high.max(index);
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
        self.sum_ns += u128::from(ns);
    }

    /// Adds what was recorded to `into` and starts again empty.
    pub fn drain_into(&mut self, into: &mut HdrLatency) {
        if self.low > self.high {
            return;
        }
        let touched = self.counts.get_mut(self.low..=self.high).unwrap_or_default();
        for (i, count) in touched.iter_mut().enumerate().filter(|(_, c)| **c > 0) {
            into.histogram.saturating_record_n(hdr_bucket_value(self.low + i), *count);
            *count = 0;
        }
        into.min_ns = into.min_ns.min(self.min_ns);
        into.max_ns = into.max_ns.max(self.max_ns);
        into.sum_ns += self.sum_ns;
        (self.low, self.high, self.min_ns, self.max_ns, self.sum_ns) = (usize::MAX, 0, u64::MAX, 0, 0);
    }
}

/// One line of [`HdrLatency::spectrum`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpectrumPoint {
    /// The latency at this point, in ns (never above the max).
    pub value_ns: u64,
    /// The share of values at or below it, 0 to 100.
    pub percentile: f64,
    /// How many values are at or below it.
    pub total_count: u64,
}

fn empty_histogram() -> Histogram<u64> {
    // The crate refuses only bounds or digits outside its limits; these
    // constants are within them (`bounds_are_accepted`), so this returns
    // on the first pass, with no resizing ever after.
    loop {
        if let Ok(mut h) = Histogram::new_with_bounds(1, HIGHEST_TRACKABLE_NS, SIGNIFICANT_DIGITS) {
            h.auto(false);
            return h;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_accepted() {
        assert!(Histogram::<u64>::new_with_bounds(1, HIGHEST_TRACKABLE_NS, SIGNIFICANT_DIGITS).is_ok());
    }

    #[test]
    fn percentiles_are_exact_to_three_digits() {
        let mut h = HdrLatency::new();
        for us in 1..=10_000u64 {
            h.record_ns(us * 1_000);
        }
        assert_eq!(h.count(), 10_000);
        for (p, exact) in [(50.0, 5_000_000u64), (95.0, 9_500_000), (99.0, 9_900_000), (99.9, 9_990_000)] {
            let got = h.percentile_ns(p);
            assert!(got.abs_diff(exact) * 1_000 <= exact, "p{p}: {got} vs {exact}");
        }
        assert_eq!(h.percentile_ns(100.0), 10_000_000);
        assert_eq!((h.min_ns(), h.max_ns()), (1_000, 10_000_000));
        assert_eq!(h.mean_ns(), 5_000_500.0);
    }

    /// sysbench caps at 100 s (#242) and can print a percentile above its
    /// max (#486): here neither.
    #[test]
    fn no_cap_and_never_above_the_max() {
        let mut h = HdrLatency::new();
        h.record_ns(3_600_000_000_000);
        assert_eq!(h.percentile_ns(99.0), 3_600_000_000_000);
        let mut h = HdrLatency::new();
        h.record_ns(1_000_001);
        // The bucket's highest equivalent is above 1_000_001.
        assert!(h.histogram().highest_equivalent(1_000_001) > 1_000_001);
        assert_eq!(h.percentile_ns(95.0), 1_000_001);
        h.record_ns(u64::MAX);
        assert_eq!(h.count(), 2);
        assert_eq!(h.max_ns(), u64::MAX);
    }

    #[test]
    fn spectrum_as_wrk2() {
        let mut h = HdrLatency::new();
        for us in 1..=1_000u64 {
            h.record_ns(us * 1_000);
        }
        let points = h.spectrum(5);
        assert!(points.len() > 20, "{}", points.len());
        assert!(points.windows(2).all(|w| w[0].percentile <= w[1].percentile && w[0].value_ns <= w[1].value_ns));
        let last = points.last().unwrap();
        assert_eq!((last.percentile, last.total_count, last.value_ns), (100.0, 1_000, 1_000_000));
        let median = points.iter().find(|p| p.percentile >= 50.0).unwrap();
        assert!(median.value_ns.abs_diff(500_000) <= 500, "{median:?}");
    }

    /// The recorder's buckets are the crate's: drained, it gives the
    /// histogram that recording each value directly gives.
    #[test]
    fn a_drained_recorder_equals_direct_recording() {
        let mut values: Vec<u64> = vec![0, 1, 2, 1023, 1024, 2047, 2048, 2049, 4095, 4096, 1_000_001, u64::MAX];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            values.push(x >> (x % 64));
        }
        let (mut direct, mut drained, mut recorder) = (HdrLatency::new(), HdrLatency::new(), HdrRecorder::new());
        for (i, &v) in values.iter().enumerate() {
            direct.record_ns(v);
            recorder.record_ns(v);
            if i % 7_000 == 0 {
                recorder.drain_into(&mut drained);
            }
        }
        recorder.drain_into(&mut drained);
        assert_eq!(drained, direct);
        // Index 0 would be the value 0, below the lowest value, 1.
        for index in 1..hdr_bucket_index(HIGHEST_TRACKABLE_NS) {
            assert_eq!(hdr_bucket_index(hdr_bucket_value(index)), index, "{index}");
        }
        recorder.drain_into(&mut drained);
        assert_eq!(drained, direct, "a second drain adds nothing");
    }

    #[test]
    fn merge_and_reset() {
        let (mut a, mut b) = (HdrLatency::new(), HdrLatency::new());
        a.record_ns(10);
        b.record_ns(1_000_000);
        b.record_ns(0);
        a.merge(&b);
        assert_eq!((a.count(), a.min_ns(), a.max_ns(), a.sum_ns()), (3, 0, 1_000_000, 1_000_010));
        a.reset();
        assert_eq!(a, HdrLatency::new());
        assert_eq!((a.count(), a.min_ns(), a.percentile_ns(99.0)), (0, 0, 0));
    }
}
