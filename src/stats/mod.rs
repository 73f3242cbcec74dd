//! Latency and throughput statistics, reported exactly as sysbench 1.0.20
//! reports them.
//!
//! - `histogram.rs` holds sysbench's 1024-bucket log histogram with its
//!   exact bucket and percentile arithmetic ([`LatencyHistogram`]).
//! - `counters.rs` has reads/writes/other/events/errors/reconnects
//!   ([`Counters`]) and per-connection work ([`ConnStats`]);
//!   `error_codes.rs` the ignored errors by the server's code
//!   ([`ErrorCodes`]).
//! - `collector.rs` is how per-core event loops record without sharing
//!   ([`LoopStats`]) and hand their data to the report thread once per
//!   interval ([`StatsBoard`], [`Collector`]).
//! - `latency.rs` keeps the same latencies in an HdrHistogram
//!   ([`HdrLatency`]: every percentile to 3 digits, no cap), and `kinds.rs`
//!   per statement kind ([`KindTable`]).
//! - `report.rs` writes the text sysbench prints, byte for byte;
//!   `extra_report.rs` the blocks wirebench adds after it.
//! - `hdr_log.rs`: `--hdr-log`, the latencies as an HdrHistogram interval
//!   log.
//! - `idle_counts.rs`: what happened to `--idle-connections` ([`IdleCounts`]).
//! - `relay_counts.rs`: what `wirebench record`'s proxy saw pass
//!   ([`RelayCounts`]), for the watch.
//!
//! Layer: at the bottom; it imports nothing of the crate, so the driver, the
//! orchestration and the null server can all use it.

pub(crate) mod collector;
pub(crate) mod counters;
pub(crate) mod error_codes;
pub(crate) mod extra_report;
pub(crate) mod hdr_log;
pub(crate) mod histogram;
pub(crate) mod idle_counts;
pub(crate) mod kinds;
pub(crate) mod latency;
pub(crate) mod relay_counts;
pub(crate) mod report;

pub use collector::{Collector, LoopStats, StatsBoard};
pub(crate) use collector::{Interval, Latencies, Recording};
pub use counters::{ConnStats, Counters, QueryKind};
pub use error_codes::ErrorCodes;
pub(crate) use extra_report::{
    ClientCpuBlock, ClientDelay, ClientLoad, PerStatementBlock, PercentileBlock, RateSummary, ToleratedBlock,
};
pub(crate) use hdr_log::{HdrLog, HdrLogError};
pub(crate) use histogram::HistogramParts;
pub use histogram::{bucket_value, LatencyHistogram, BUCKETS};
pub use idle_counts::{IdleCounts, IdleTally};
pub(crate) use kinds::KindTable;
pub(crate) use latency::{HdrLatency, HdrRecorder};
pub use relay_counts::RelayCounts;
pub use report::CFloat;
pub use report::{
    ArrivalStats, Banner, FinalReport, HistogramReport, InterimReport, QueueStats, RunHeader, INITIALIZING_WORKERS,
    THREADS_STARTED, VERSION_LINE,
};
