//! Latency and throughput statistics, reported exactly as sysbench 1.0.20
//! reports them.
//!
//! - [`histogram`] holds sysbench's 1024-bucket log histogram with its
//!   exact bucket and percentile arithmetic ([`LatencyHistogram`]).
//! - [`counters`] has reads/writes/other/events/errors/reconnects
//!   ([`Counters`]) and per-connection work ([`ConnStats`]).
//! - [`collector`] is how per-core event loops record without sharing
//!   ([`LoopStats`]) and hand their data to the report thread once per
//!   interval ([`StatsBoard`], [`Collector`]).
//! - [`latency`] keeps the same latencies in an HdrHistogram
//!   ([`HdrLatency`]: every percentile to 3 digits, no cap), and [`kinds`]
//!   per statement kind ([`KindTable`]).
//! - [`report`] writes the text sysbench prints, byte for byte.
//!
//! Layer: at the bottom; it imports nothing of the crate, so the driver, the
//! orchestration and the null server can all use it.

pub mod collector;
pub mod counters;
pub mod extra_report;
pub mod hdr_log;
pub mod histogram;
pub mod kinds;
pub mod latency;
pub mod report;

pub use collector::{Collector, Interval, IntervalBlock, Latencies, LoopStats, Recording, StatsBoard, Totals};
pub use counters::{ConnStats, Counters, QueryKind};
pub use extra_report::{ClientCpuBlock, PerStatementBlock, PercentileBlock, RateSummary};
pub use hdr_log::{HdrLog, HdrLogError};
pub use histogram::{HistogramParts, LatencyHistogram};
pub use kinds::{KindStats, KindTable};
pub use latency::{HdrLatency, SpectrumPoint};
pub use report::{
    Banner, CheckpointLine, FinalReport, HistogramReport, InterimReport, QueueStats, RunHeader, INITIALIZING_WORKERS,
    THREADS_STARTED, VERSION_LINE,
};
