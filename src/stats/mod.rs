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
//! - [`report`] writes the text sysbench prints, byte for byte.
//!
//! Layer: at the bottom; it imports nothing of the crate, so the driver, the
//! orchestration and the null server can all use it.

pub mod collector;
pub mod counters;
pub mod histogram;
pub mod report;

pub use collector::{Collector, Interval, IntervalBlock, LoopStats, StatsBoard, Totals};
pub use counters::{ConnStats, Counters, QueryKind};
pub use histogram::LatencyHistogram;
pub use report::{
    Banner, CheckpointLine, FinalReport, HistogramReport, InterimReport, QueueStats, RunHeader, INITIALIZING_WORKERS,
    THREADS_STARTED, VERSION_LINE,
};
