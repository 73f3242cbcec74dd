//! Latencies as results list them: from the statistics' HdrHistograms,
//! every percentile asked for, per statement kind, and wrk2's spectrum.

use serde::{Deserialize, Serialize};

use super::recorded::{Recorded, RecordedHistograms};
use crate::stats::{ConnStats, HdrLatency, KindTable, Latencies, LatencyHistogram};

/// The percentiles every result lists, besides `--percentile`'s.
pub const STANDARD_PERCENTILES: [f64; 7] = [50.0, 90.0, 95.0, 99.0, 99.9, 99.99, 100.0];

/// Steps per halving of the distance to 100 % in the spectrum, as wrk2's
/// "Detailed Percentile spectrum".
pub const SPECTRUM_TICKS: u32 = 5;

fn millis(ns: f64) -> f64 {
    ns / 1e6
}

/// One percentile of a latency.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PercentileValue {
    pub percentile: f64,
    pub ms: f64,
}

/// Latencies in milliseconds: count, min, avg, max and sum exact, the
/// percentiles from an HdrHistogram (3 significant digits, never above the
/// max, no cap), the same figures as the text report's `pNN:` lines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    pub count: u64,
    pub min: f64,
    pub avg: f64,
    pub max: f64,
    pub sum: f64,
    pub percentiles: Vec<PercentileValue>,
}

impl LatencySummary {
    /// From `latency`, at each of `percentiles`.
    pub fn of(latency: &HdrLatency, percentiles: &[f64]) -> Self {
        LatencySummary {
            count: latency.count(),
            min: millis(latency.min_ns() as f64),
            avg: millis(latency.mean_ns()),
            max: millis(latency.max_ns() as f64),
            sum: millis(latency.sum_ns() as f64),
            percentiles: percentiles
                .iter()
                .map(|&percentile| PercentileValue { percentile, ms: latency.percentile_ms(percentile) })
                .collect(),
        }
    }

    /// The value at `percentile`, if it is listed.
    pub fn at(&self, percentile: f64) -> Option<f64> {
        self.percentiles.iter().find(|p| p.percentile == percentile).map(|p| p.ms)
    }
}

/// One step of the percentile spectrum (wrk2's "Detailed Percentile
/// spectrum", HdrHistogram's percentile distribution).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SpectrumValue {
    pub percentile: f64,
    pub ms: f64,
    /// Values at or below `ms`.
    pub count: u64,
}

/// The spectrum of `latency`, [`SPECTRUM_TICKS`] steps per halving.
pub fn latency_spectrum(latency: &HdrLatency) -> Vec<SpectrumValue> {
    let points = latency.spectrum(SPECTRUM_TICKS);
    points
        .iter()
        .map(|p| SpectrumValue { percentile: p.percentile, ms: millis(p.value_ns as f64), count: p.total_count })
        .collect()
}

/// One statement kind's share (point select, range, update index, ...).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatementResult {
    pub kind: String,
    /// Statements answered without an error.
    pub count: u64,
    /// Statements answered with an error that did not end the run.
    pub errors: u64,
    /// From each statement's send to its answer.
    pub latency_ms: LatencySummary,
}

/// Each kind that ran (answered or failed), as the text report's
/// `--per-statement` block lists them.
pub fn statement_results(kinds: &KindTable, percentiles: &[f64]) -> Vec<StatementResult> {
    kinds
        .iter()
        .filter(|(_, k)| k.count + k.errors > 0)
        .map(|(name, k)| StatementResult {
            kind: name.to_owned(),
            count: k.count,
            errors: k.errors,
            latency_ms: LatencySummary::of(&k.latency, percentiles),
        })
        .collect()
}

/// What the latency blocks of a result list, and whether it keeps the
/// histograms themselves: the same for every interval and final object of
/// a command.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyListing {
    /// [`STANDARD_PERCENTILES`] and `--percentile`'s list, in order.
    pub percentiles: Vec<f64>,
    /// sysbench's own percentile (`--percentile`'s whole one); none with
    /// `--percentile=0`.
    pub sysbench_percentile: Option<u8>,
    /// Under `--rate`, the service time is listed beside the latency.
    pub rate: bool,
    pub histograms: RecordedHistograms,
}

impl LatencyListing {
    pub fn new(asked: &[f64], sysbench_percentile: Option<u8>, rate: bool, histograms: RecordedHistograms) -> Self {
        let mut percentiles = STANDARD_PERCENTILES.to_vec();
        percentiles.extend(asked.iter().filter(|p| !STANDARD_PERCENTILES.contains(p)));
        percentiles.sort_by(f64::total_cmp);
        percentiles.dedup();
        LatencyListing { percentiles, sysbench_percentile, rate, histograms }
    }

    /// The event latencies of `latencies` (under `--rate`, from each
    /// event's intended start).
    pub fn event_summary(&self, latencies: &Latencies) -> LatencySummary {
        LatencySummary::of(&latencies.events, &self.percentiles)
    }

    /// The service time (from each event's first send), under `--rate`.
    pub fn service_summary(&self, latencies: &Latencies) -> Option<LatencySummary> {
        self.rate.then(|| LatencySummary::of(&latencies.service, &self.percentiles))
    }

    /// The text report's own percentile line, from sysbench's histogram.
    pub fn sysbench_line(&self, histogram: &LatencyHistogram) -> Option<PercentileValue> {
        self.sysbench_percentile
            .map(f64::from)
            .map(|percentile| PercentileValue { percentile, ms: histogram.percentile(percentile) })
    }

    pub fn kind_results(&self, latencies: &Latencies) -> Vec<StatementResult> {
        statement_results(&latencies.kinds, &self.percentiles)
    }

    /// The histograms themselves, when kept.
    pub fn recorded(&self, latencies: &Latencies, connections: &[ConnStats]) -> Option<Recorded> {
        match self.histograms {
            RecordedHistograms::Kept => Recorded::of(latencies, connections),
            RecordedHistograms::Omitted => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_is_standard_and_asked_in_order_each_once() {
        let listing = LatencyListing::new(&[99.9, 97.0, 50.0], Some(97), false, RecordedHistograms::Omitted);
        assert_eq!(listing.percentiles, [50.0, 90.0, 95.0, 97.0, 99.0, 99.9, 99.99, 100.0]);
        assert_eq!(
            LatencyListing::new(&[], None, false, RecordedHistograms::Omitted).percentiles,
            STANDARD_PERCENTILES
        );
    }

    #[test]
    fn a_summary_is_the_hdr_figures_in_ms() {
        let mut h = HdrLatency::new();
        for us in 1..=1_000u64 {
            h.record_ns(us * 1_000);
        }
        let summary = LatencySummary::of(&h, &[50.0, 99.9]);
        assert_eq!((summary.count, summary.min, summary.max), (1_000, 0.001, 1.0));
        assert_eq!(summary.avg, 0.5005);
        assert_eq!(summary.at(50.0), Some(h.percentile_ms(50.0)));
        assert_eq!(summary.at(99.9), Some(h.percentile_ms(99.9)));
        assert_eq!(summary.at(95.0), None);
        let spectrum = latency_spectrum(&h);
        assert_eq!(spectrum.last().map(|s| (s.percentile, s.ms, s.count)), Some((100.0, 1.0, 1_000)));
    }

    #[test]
    fn statements_list_the_kinds_that_ran() {
        let mut kinds = KindTable::new(&["point_select", "range", "commit"]);
        kinds.record(0, 2_000_000);
        kinds.record_error(2);
        let listed = statement_results(&kinds, &[95.0]);
        let names: Vec<_> = listed.iter().map(|s| (s.kind.as_str(), s.count, s.errors)).collect();
        assert_eq!(names, [("point_select", 1, 0), ("commit", 0, 1)]);
        assert_eq!(listed[0].latency_ms.at(95.0), Some(2.0));
    }
}
