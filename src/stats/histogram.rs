//! sysbench 1.0.20's latency histogram (`sb_histogram.c`), owned by one event
//! loop: a plain array, no atomics, no lock, no allocation per record.
//!
//! sysbench keeps 1024 counters whose bucket `i` stands for the value
//! `exp(i / mult + ln(1e-3))` ms, with `mult = 1023 / (ln(1e5) - ln(1e-3))`,
//! so consecutive buckets are about 1.8 % apart and span 1 µs to 100 s. A
//! latency goes to the *nearest* bucket on the log scale
//! (`floor((ln(ms) - ln(1e-3)) * mult + 0.5)`), clamped to the first and
//! the last; a percentile is the representative value of the first bucket
//! at which the running count reaches `floor(n * p / 100 + 0.5)`. That is
//! why sysbench prints percentiles such as 97.55 or 123.28 (buckets 638 and
//! 651) and never more than 100000.00 (#242).
//!
//! The arithmetic is sysbench's, in the same order, with the same libm
//! (`f64::ln`/`f64::exp` call glibc's `log`/`exp` on Linux), so bucket
//! choices and printed values match bit for bit.
//!
//! Min, max, sum and the event count follow `sb_timer.c` instead: they are
//! exact nanoseconds, not bucketed, and are what the final report prints as
//! min/avg/max/sum.

use std::fmt;

/// Number of buckets (`OPER_LOG_GRANULARITY`).
pub const BUCKETS: usize = 1024;
/// Lowest bucket value in ms (`OPER_LOG_MIN_VALUE`).
pub const MIN_MS: f64 = 1e-3;
/// Highest bucket value in ms (`OPER_LOG_MAX_VALUE`).
pub const MAX_MS: f64 = 1e5;

/// `range_deduct` and `range_mult` of `sb_histogram_init()`.
#[derive(Clone, Copy, Debug)]
struct Scale {
    deduct: f64,
    mult: f64,
}

impl Scale {
    fn sysbench() -> Scale {
        let deduct = MIN_MS.ln();
        Scale { deduct, mult: (BUCKETS - 1) as f64 / (MAX_MS.ln() - deduct) }
    }

    #[inline]
    fn index(self, ms: f64) -> usize {
        let i = ((ms.ln() - self.deduct) * self.mult + 0.5).floor();
        // ln(0) = -inf (and NaN) become a negative index in sysbench's cast
        // to ssize_t, hence bucket 0.
        if i.is_nan() || i < 0.0 {
            0
        } else if i >= BUCKETS as f64 {
            BUCKETS - 1
        } else {
            i as usize
        }
    }

    /// Bucket `i`'s representative value. `i` may be `BUCKETS`: that is what
    /// sysbench returns when the percentile loop runs off the end.
    fn value(self, i: usize) -> f64 {
        (i as f64 / self.mult + self.deduct).exp()
    }
}

/// The bucket a latency of `ms` milliseconds is counted in.
#[cfg(test)]
fn bucket_index(ms: f64) -> usize {
    Scale::sysbench().index(ms)
}

/// The value sysbench prints for bucket `index`, in ms.
pub fn bucket_value(index: usize) -> f64 {
    Scale::sysbench().value(index)
}

/// `NS2MS()`: nanoseconds to milliseconds as sysbench converts them.
#[inline]
fn ns_to_ms(ns: u64) -> f64 {
    ns as f64 / 1_000_000.0
}

/// A [`LatencyHistogram`] as plain numbers: its non-empty buckets by
/// index, and its event count, sum, min and max in ns.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HistogramParts {
    pub buckets: Vec<(u32, u64)>,
    pub events: u64,
    pub sum_ns: u64,
    pub min_ns: u64,
    pub max_ns: u64,
}

/// One event loop's latencies: sysbench's bucket counts plus the exact
/// count/sum/min/max of `sb_timer_t`. About 8 KiB; recording touches one
/// counter and four integers.
#[derive(Clone)]
pub struct LatencyHistogram {
    scale: Scale,
    counts: [u64; BUCKETS],
    /// Sum of `counts` (sysbench's `nevents` in the percentile code).
    counted: u64,
    events: u64,
    sum_ns: u64,
    min_ns: u64,
    max_ns: u64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for LatencyHistogram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LatencyHistogram")
            .field("events", &self.events)
            .field("sum_ns", &self.sum_ns)
            .field("min_ns", &self.min_ns())
            .field("max_ns", &self.max_ns)
            .field("non_empty_buckets", &self.counts.iter().filter(|&&c| c != 0).count())
            .finish()
    }
}

impl PartialEq for LatencyHistogram {
    fn eq(&self, other: &Self) -> bool {
        self.counts == other.counts
            && self.counted == other.counted
            && self.events == other.events
            && self.sum_ns == other.sum_ns
            && self.min_ns == other.min_ns
            && self.max_ns == other.max_ns
    }
}

impl Eq for LatencyHistogram {}

impl LatencyHistogram {
    pub fn new() -> Self {
        LatencyHistogram {
            scale: Scale::sysbench(),
            counts: [0; BUCKETS],
            counted: 0,
            events: 0,
            sum_ns: 0,
            min_ns: u64::MAX,
            max_ns: 0,
        }
    }

    /// Records one event's latency, as `sb_event_stop()` does: into the
    /// timer (exact ns) and into the histogram (bucketed ms).
    #[inline]
    pub fn record_ns(&mut self, ns: u64) {
        self.events += 1;
        self.sum_ns = self.sum_ns.wrapping_add(ns);
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
        let i = self.scale.index(ns_to_ms(ns));
        // `index` clamps to BUCKETS - 1; `get_mut` keeps that proof local.
        if let Some(c) = self.counts.get_mut(i) {
            *c += 1;
        }
        self.counted += 1;
    }

    /// Adds `count` to bucket `index` (clamped to the last bucket) without
    /// touching count/sum/min/max: for rebuilding a histogram from bucket
    /// counts, such as the rows sysbench prints.
    pub fn add_to_bucket(&mut self, index: usize, count: u64) {
        if let Some(c) = self.counts.get_mut(index.min(BUCKETS - 1)) {
            *c += count;
        }
        self.counted += count;
    }

    /// A histogram as [`parts`](Self::parts) described it: bucket counts
    /// (an index past the last counts in the last, as `add_to_bucket`
    /// does) and the timer's exact figures. `None` when the parts cannot
    /// be one histogram's (more buckets counted than events).
    pub fn from_parts(parts: &HistogramParts) -> Option<Self> {
        let mut histogram = LatencyHistogram::new();
        for &(index, count) in &parts.buckets {
            histogram.add_to_bucket(index as usize, count);
        }
        let consistent = histogram.counted == parts.events && (parts.events == 0 || parts.min_ns <= parts.max_ns);
        histogram.events = parts.events;
        histogram.sum_ns = parts.sum_ns;
        if parts.events > 0 {
            histogram.min_ns = parts.min_ns;
            histogram.max_ns = parts.max_ns;
        }
        consistent.then_some(histogram)
    }

    /// The counts of the non-empty buckets and the timer's figures: all a
    /// histogram holds, for one kept in a result file.
    pub fn parts(&self) -> HistogramParts {
        let buckets = self.counts.iter().enumerate().filter(|(_, &c)| c > 0).map(|(i, &c)| (i as u32, c)).collect();
        HistogramParts { buckets, events: self.events, sum_ns: self.sum_ns, min_ns: self.min_ns(), max_ns: self.max_ns }
    }

    /// Adds `other` into `self` (sysbench's slot merge plus
    /// `sb_timer_merge()`).
    pub fn merge(&mut self, other: &LatencyHistogram) {
        for (a, b) in self.counts.iter_mut().zip(other.counts.iter()) {
            *a += b;
        }
        self.counted += other.counted;
        self.events += other.events;
        self.sum_ns = self.sum_ns.wrapping_add(other.sum_ns);
        self.min_ns = self.min_ns.min(other.min_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
    }

    pub fn reset(&mut self) {
        *self = LatencyHistogram { scale: self.scale, ..LatencyHistogram::new() };
    }

    /// Events recorded with [`record_ns`](Self::record_ns).
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Total of the bucket counts (equals `events()` unless
    /// [`add_to_bucket`](Self::add_to_bucket) was used).
    pub fn counted(&self) -> u64 {
        self.counted
    }

    pub fn sum_ns(&self) -> u64 {
        self.sum_ns
    }

    /// `sb_timer_min()`: 0 when there were no events.
    pub fn min_ns(&self) -> u64 {
        if self.events == 0 {
            0
        } else {
            self.min_ns
        }
    }

    /// `sb_timer_max()`: 0 when there were no events.
    pub fn max_ns(&self) -> u64 {
        self.max_ns
    }

    /// `sb_timer_avg()`: integer division in ns, 0 when there were no events.
    pub fn avg_ns(&self) -> u64 {
        self.sum_ns.checked_div(self.events).unwrap_or(0)
    }

    #[cfg(test)]
    pub fn counts(&self) -> &[u64; BUCKETS] {
        &self.counts
    }

    /// sysbench's percentile `p` (0..=100) in ms: the representative value
    /// of the first bucket where the running count reaches
    /// `floor(n * p / 100 + 0.5)`. With no events (or `p` = 0) that is
    /// bucket 0, 0.001 ms, printed as "0.00".
    pub fn percentile(&self, p: f64) -> f64 {
        let target = (self.counted as f64 * p / 100.0 + 0.5).floor() as u64;
        let mut running = 0u64;
        let mut index = BUCKETS;
        for (i, &c) in self.counts.iter().enumerate() {
            running += c;
            if running >= target {
                index = i;
                break;
            }
        }
        self.scale.value(index)
    }

    /// The rows of `sb_histogram_print()`: the column header, then
    /// `%12.3f |%-40.*s %lu` for each non-empty bucket, the bar scaled so the
    /// fullest bucket gets 40 stars. Nothing at all when the histogram is
    /// empty (sysbench returns before the header).
    pub fn rows(&self) -> HistogramRows<'_> {
        HistogramRows(self)
    }
}

/// [`LatencyHistogram::rows`]'s `Display`.
pub struct HistogramRows<'a>(&'a LatencyHistogram);

impl fmt::Display for HistogramRows<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const STARS: &str = "****************************************";
        let h = self.0;
        let max = h.counts.iter().copied().max().unwrap_or(0);
        if max == 0 {
            return Ok(());
        }
        f.write_str("       value  ------------- distribution ------------- count\n")?;
        for (i, &c) in h.counts.iter().enumerate() {
            if c == 0 {
                continue;
            }
            let width = (c as f64 * 40.0 / max as f64 + 0.5).floor() as usize;
            let bar = STARS.get(..width).unwrap_or(STARS);
            writeln!(f, "{:12.3} |{:<40} {}", h.scale.value(i), bar, c)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected values below were computed outside Rust from sysbench's
    // formulas (`sb_histogram_init`/`_update`/`get_pct_*`) with glibc's
    // log/exp: range_deduct = ln(1e-3) = -6.907755278982137,
    // range_mult = 1023 / ln(1e8) = 55.53540687337832.

    #[test]
    fn scale_constants() {
        let s = Scale::sysbench();
        assert_eq!(s.deduct, -6.907755278982137);
        assert_eq!(s.mult, 55.53540687337832);
    }

    #[test]
    fn bucket_mapping() {
        assert_eq!(bucket_index(0.0), 0);
        assert_eq!(bucket_index(0.000_5), 0);
        assert_eq!(bucket_index(0.001), 0);
        assert_eq!(bucket_index(0.0015), 23);
        assert_eq!(bucket_index(1.0), 384);
        assert_eq!(bucket_index(97.0), 638);
        assert_eq!(bucket_index(97.55), 638);
        assert_eq!(bucket_index(100.0), 639);
        assert_eq!(bucket_index(1e5), 1023);
        assert_eq!(bucket_index(2e5), 1023);
        assert_eq!(bucket_index(f64::INFINITY), 1023);
    }

    #[test]
    fn bucket_values() {
        assert_eq!(bucket_value(0), 0.0010000000000000002);
        assert_eq!(bucket_value(23), 0.0015130843788045585);
        assert_eq!(bucket_value(384), 1.0067752981368578);
        assert_eq!(bucket_value(638), 97.55450100468757);
        assert_eq!(bucket_value(639), 99.32702976032554);
        assert_eq!(bucket_value(1023), 100000.0000000002);
        assert_eq!(bucket_value(1024), 101816.96255670766);
    }

    /// Percentiles printed by real sysbench runs (the 003 seed report) are
    /// bucket values, each of exactly one bucket.
    #[test]
    fn printed_percentiles_are_bucket_values() {
        for (printed, bucket) in [
            ("97.55", 638),
            ("123.28", 651),
            ("116.80", 648),
            ("110.66", 645),
            ("94.10", 636),
            ("84.47", 630),
            ("121.08", 650),
            ("147.61", 661),
            ("3.02", 445),
        ] {
            let hits: Vec<usize> = (0..BUCKETS).filter(|&i| format!("{:.2}", bucket_value(i)) == printed).collect();
            assert_eq!(hits, vec![bucket], "{printed}");
        }
    }

    #[test]
    fn record_ns_buckets_and_timer() {
        let mut h = LatencyHistogram::new();
        for ns in [0, 999, 1_000_000, 97_550_000, 259_330_000, 100_000_000_000_000] {
            h.record_ns(ns);
        }
        let non_empty: Vec<(usize, u64)> =
            h.counts().iter().enumerate().filter(|(_, &c)| c != 0).map(|(i, &c)| (i, c)).collect();
        assert_eq!(non_empty, vec![(0, 2), (384, 1), (638, 1), (692, 1), (1023, 1)]);
        assert_eq!(h.events(), 6);
        assert_eq!(h.min_ns(), 0);
        assert_eq!(h.max_ns(), 100_000_000_000_000);
        assert_eq!(h.sum_ns(), 999 + 1_000_000 + 97_550_000 + 259_330_000 + 100_000_000_000_000);
    }

    #[test]
    fn empty_histogram() {
        let h = LatencyHistogram::new();
        assert_eq!((h.events(), h.min_ns(), h.max_ns(), h.avg_ns(), h.sum_ns()), (0, 0, 0, 0, 0));
        assert_eq!(h.percentile(95.0), bucket_value(0));
        assert_eq!(format!("{:.2}", h.percentile(95.0)), "0.00");
        assert_eq!(h.rows().to_string(), "");
    }

    #[test]
    fn percentile_rank_rounding() {
        // 10 events: p95 -> floor(9.5 + 0.5) = 10th event; p94 -> floor(9.4 + 0.5) = 9th.
        let mut h = LatencyHistogram::new();
        for _ in 0..9 {
            h.record_ns(1_000_000);
        }
        h.record_ns(97_550_000);
        assert_eq!(h.percentile(95.0), bucket_value(638));
        assert_eq!(h.percentile(94.0), bucket_value(384));
        assert_eq!(h.percentile(100.0), bucket_value(638));
        assert_eq!(h.percentile(0.0), bucket_value(0));
        // 41990 events (the seed run): p95 -> floor(39890.5 + 0.5) = 39891st.
        let mut h = LatencyHistogram::new();
        h.add_to_bucket(600, 39_890);
        h.add_to_bucket(638, 1);
        h.add_to_bucket(700, 2_099);
        assert_eq!(h.percentile(95.0), bucket_value(638));
    }

    #[test]
    fn values_above_range_are_capped() {
        let mut h = LatencyHistogram::new();
        h.record_ns(3_600_000_000_000);
        assert_eq!(format!("{:.2}", h.percentile(99.0)), "100000.00");
    }

    #[test]
    fn avg_is_integer_division() {
        let mut h = LatencyHistogram::new();
        h.record_ns(1);
        h.record_ns(2);
        assert_eq!(h.avg_ns(), 1);
    }

    fn sample(seed: u64, n: usize) -> LatencyHistogram {
        let mut h = LatencyHistogram::new();
        let mut x = seed;
        for _ in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            h.record_ns(x % 5_000_000_000);
        }
        h
    }

    #[test]
    fn merge_is_associative_and_commutative() {
        let (a, b, c) = (sample(1, 1000), sample(2, 10), sample(3, 333));
        let mut ab_c = a.clone();
        ab_c.merge(&b);
        ab_c.merge(&c);
        let mut bc = b.clone();
        bc.merge(&c);
        let mut a_bc = a.clone();
        a_bc.merge(&bc);
        let mut cba = c.clone();
        cba.merge(&b);
        cba.merge(&a);
        assert_eq!(ab_c, a_bc);
        assert_eq!(ab_c, cba);
        assert_eq!(ab_c.events(), 1343);
        assert_eq!(ab_c.min_ns(), a.min_ns().min(b.min_ns()).min(c.min_ns()));
        assert_ne!(ab_c, a);
    }

    #[test]
    fn merge_with_empty_is_identity() {
        let a = sample(7, 100);
        let mut m = a.clone();
        m.merge(&LatencyHistogram::new());
        assert_eq!(m, a);
        let mut e = LatencyHistogram::new();
        e.merge(&a);
        assert_eq!(e, a);
    }

    #[test]
    fn reset_empties() {
        let mut h = sample(9, 100);
        h.reset();
        assert_eq!(h, LatencyHistogram::new());
        assert_eq!(h.min_ns(), 0);
    }

    #[test]
    fn rows_format() {
        let mut h = LatencyHistogram::new();
        h.add_to_bucket(384, 3);
        h.add_to_bucket(638, 1);
        h.add_to_bucket(639, 120);
        let expected = "       value  ------------- distribution ------------- count\n\
                        \x20      1.007 |*                                        3\n\
                        \x20     97.555 |                                         1\n\
                        \x20     99.327 |**************************************** 120\n";
        assert_eq!(h.rows().to_string(), expected);
    }
}
