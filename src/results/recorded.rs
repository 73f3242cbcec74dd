//! What a result keeps besides its summaries, so that `wirebench merge`
//! adds shards exactly: the histograms themselves (HdrHistogram's V2
//! compressed form in base64, as an interval log holds them; sysbench's
//! buckets by index), their exact min, max and sum, and each connection's
//! events and busy time for "Threads fairness". A percentile of summaries
//! cannot be merged; a histogram can, losslessly.

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::stats::{ConnStats, HdrLatency, HistogramParts, Latencies, LatencyHistogram};

/// Why kept histograms cannot be read back.
#[derive(Debug, thiserror::Error)]
pub enum RecordedError {
    #[error("a histogram is not base64 ({0}): the file was altered; use the file wirebench wrote")]
    NotBase64(base64::DecodeError),
    #[error("a histogram does not decode ({0}): the file was altered; use the file wirebench wrote")]
    NotAHistogram(String),
    #[error(
        "a histogram has another precision or range than this wirebench's (3 significant digits, 1 ns up): merge it \
         with the wirebench that wrote it"
    )]
    OtherLayout,
    #[error("sysbench's histogram counts {counted} events in its buckets but says {events}: the file was altered")]
    Inconsistent { counted: u64, events: u64 },
    #[error("statement kind '{0}' is not one this wirebench knows: merge with the wirebench that wrote the file")]
    UnknownKind(String),
}

/// Whether results carry their histograms ([`Recorded`]). Only JSON
/// output writes them, for `wirebench merge`; serialising them is most of
/// what a result costs the report thread, each `--report-interval`, so an
/// output that does not write them leaves them out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordedHistograms {
    Kept,
    Omitted,
}

/// One HdrHistogram, with the exact figures it keeps only to 3 digits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HdrParts {
    /// V2 compressed (deflate), base64.
    pub histogram: String,
    pub min_ns: u64,
    pub max_ns: u64,
    /// Saturated at `u64::MAX` (584 years of latencies added up): JSON
    /// readers, and serde's tagged enums, have no 128-bit integers.
    pub sum_ns: u64,
}

impl HdrParts {
    /// `None` only when the serializer fails, which it does not for the
    /// histograms the statistics make.
    fn of(latency: &HdrLatency) -> Option<Self> {
        let mut bytes = Vec::new();
        V2DeflateSerializer::new().serialize(latency.histogram(), &mut bytes).ok()?;
        Some(HdrParts {
            histogram: BASE64.encode(bytes),
            min_ns: latency.min_ns(),
            max_ns: latency.max_ns(),
            sum_ns: u64::try_from(latency.sum_ns()).unwrap_or(u64::MAX),
        })
    }

    pub fn latency(&self) -> Result<HdrLatency, RecordedError> {
        let histogram = decode_histogram(&self.histogram)?;
        HdrLatency::from_parts(&histogram, self.min_ns, self.max_ns, u128::from(self.sum_ns))
            .ok_or(RecordedError::OtherLayout)
    }
}

/// An HdrHistogram from its base64 V2 (compressed or not) form, as result
/// files and interval logs hold it.
pub fn decode_histogram(text: &str) -> Result<Histogram<u64>, RecordedError> {
    let bytes = BASE64.decode(text.trim()).map_err(RecordedError::NotBase64)?;
    Deserializer::new().deserialize(&mut bytes.as_slice()).map_err(|e| RecordedError::NotAHistogram(format!("{e:?}")))
}

/// sysbench's histogram: the non-empty buckets as `[index, count]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SysbenchParts {
    pub buckets: Vec<(u32, u64)>,
    pub events: u64,
    pub sum_ns: u64,
    pub min_ns: u64,
    pub max_ns: u64,
}

impl SysbenchParts {
    fn of(histogram: &LatencyHistogram) -> Self {
        let HistogramParts { buckets, events, sum_ns, min_ns, max_ns } = histogram.parts();
        SysbenchParts { buckets, events, sum_ns, min_ns, max_ns }
    }

    fn histogram(&self) -> Result<LatencyHistogram, RecordedError> {
        let parts = HistogramParts {
            buckets: self.buckets.clone(),
            events: self.events,
            sum_ns: self.sum_ns,
            min_ns: self.min_ns,
            max_ns: self.max_ns,
        };
        LatencyHistogram::from_parts(&parts)
            .ok_or(RecordedError::Inconsistent { counted: self.buckets.iter().map(|b| b.1).sum(), events: self.events })
    }
}

/// One statement kind that ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KindParts {
    pub kind: String,
    pub count: u64,
    pub errors: u64,
    pub latency: HdrParts,
}

/// Everything an interval or a run measured, as numbers that add up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recorded {
    pub sysbench: SysbenchParts,
    pub events: HdrParts,
    /// Under `--rate`: the service times, recorded apart.
    pub service: Option<HdrParts>,
    /// The kinds that ran (counted or failed).
    pub kinds: Vec<KindParts>,
    /// Per connection, `[events, busy_ns]`; empty in an interval.
    pub connections: Vec<(u64, u64)>,
}

impl Recorded {
    /// `None` only when a histogram fails to serialize.
    pub fn of(latencies: &Latencies, connections: &[ConnStats]) -> Option<Self> {
        let mut kinds = Vec::new();
        for (name, kind) in latencies.kinds.iter().filter(|(_, k)| k.count > 0 || k.errors > 0) {
            let latency = HdrParts::of(&kind.latency)?;
            kinds.push(KindParts { kind: name.to_owned(), count: kind.count, errors: kind.errors, latency });
        }
        let service = match latencies.service.count() {
            0 => None,
            _ => Some(HdrParts::of(&latencies.service)?),
        };
        Some(Recorded {
            sysbench: SysbenchParts::of(&latencies.sysbench),
            events: HdrParts::of(&latencies.events)?,
            service,
            kinds,
            connections: connections.iter().map(|c| (c.events, c.busy_ns)).collect(),
        })
    }

    /// The latencies back, their kinds among `kind_names`.
    pub fn latencies(&self, kind_names: &'static [&'static str]) -> Result<Latencies, RecordedError> {
        let mut latencies = Latencies::new(kind_names);
        latencies.sysbench = self.sysbench.histogram()?;
        latencies.events = self.events.latency()?;
        if let Some(service) = &self.service {
            latencies.service = service.latency()?;
        }
        for kind in &self.kinds {
            let index = kind_names
                .iter()
                .position(|name| *name == kind.kind)
                .ok_or_else(|| RecordedError::UnknownKind(kind.kind.clone()))?;
            latencies.kinds.add(index, kind.count, kind.errors, &kind.latency.latency()?);
        }
        Ok(latencies)
    }

    pub fn connections(&self) -> Vec<ConnStats> {
        self.connections.iter().map(|&(events, busy_ns)| ConnStats { events, busy_ns }).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KINDS: &[&str] = &["point_select", "commit", "other"];

    #[test]
    fn latencies_read_back_as_recorded() {
        let mut latencies = Latencies::new(KINDS);
        for us in [3u64, 17, 250, 1_000, 99_999, 123_456_789] {
            latencies.sysbench.record_ns(us * 1_000);
            latencies.events.record_ns(us * 1_000);
            latencies.service.record_ns(us * 700);
            latencies.kinds.record(1, us * 300);
        }
        latencies.kinds.record_error(0);
        let connections = [ConnStats { events: 4, busy_ns: 9 }, ConnStats { events: 2, busy_ns: 5 }];
        let recorded = Recorded::of(&latencies, &connections).unwrap();
        assert_eq!(recorded.kinds.iter().map(|k| k.kind.as_str()).collect::<Vec<_>>(), ["point_select", "commit"]);
        let text = serde_json::to_string(&recorded).unwrap();
        let read: Recorded = serde_json::from_str(&text).unwrap();
        assert_eq!(read.latencies(KINDS).unwrap(), latencies);
        assert_eq!(read.connections(), connections);
        let empty = Recorded::of(&Latencies::new(KINDS), &[]).unwrap();
        assert_eq!(empty.latencies(KINDS).unwrap(), Latencies::new(KINDS));
    }

    #[test]
    fn altered_histograms_are_named() {
        let mut latencies = Latencies::new(KINDS);
        latencies.sysbench.record_ns(5);
        latencies.kinds.record(0, 5);
        let mut recorded = Recorded::of(&latencies, &[]).unwrap();
        recorded.sysbench.events = 2;
        let error = recorded.latencies(KINDS).unwrap_err().to_string();
        assert!(error.contains("counts 1 events in its buckets but says 2"), "{error}");
        recorded.sysbench.events = 1;
        let kept = recorded.events.histogram.clone();
        let error = recorded.latencies(&["commit"]).unwrap_err().to_string();
        assert!(error.contains("'point_select' is not one this wirebench knows"), "{error}");
        recorded.events.histogram = "not base64!".to_owned();
        assert!(matches!(recorded.latencies(KINDS), Err(RecordedError::NotBase64(_))));
        recorded.events.histogram = BASE64.encode(b"not a histogram");
        assert!(matches!(recorded.latencies(KINDS), Err(RecordedError::NotAHistogram(_))));
        recorded.events.histogram = kept;
        assert!(recorded.latencies(KINDS).is_ok());
    }
}
