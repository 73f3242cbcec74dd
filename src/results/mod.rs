//! What a run measured, as data people and programs can use: the JSON
//! lines and CSV rows of `--format`, the table that ends a `--threads`
//! sweep, `wirebench compare`'s tables, and `--chart`'s SVG.
//!
//! - `record.rs`: the result types ([`RunResult`], [`IntervalResult`],
//!   [`SweepSummary`]), serialisable with serde, and how they are built
//!   from the statistics' counters and histograms.
//! - `latency_summary.rs`: latencies as results list them, from the
//!   statistics' HdrHistograms: the percentiles, per statement kind, the
//!   service time under `--rate`, wrk2's percentile spectrum.
//! - `csv.rs`: one CSV row per interval, pgbench's aggregate log fields.
//! - `table.rs`: a table written as aligned text, Markdown or CSV.
//! - `sweep.rs`: the table that ends a sweep.
//! - `comparison.rs`: result files read back, and the comparison tables.
//! - `recorded.rs`: the histograms a result keeps so that shards add up
//!   exactly; `shard_info.rs`: which shard of which run a result is;
//!   `shard_merge.rs`: a run's shards put back together (`wirebench merge`),
//!   `log_merge.rs`: their `--hdr-log` files, latencies only.
//! - `result_line.rs`: one JSON line, of whichever kind ([`ResultLine`]).
//! - `replay_record.rs`: a replay's result and its text report (the
//!   per-statement table, the differences from the capture);
//!   `replay_comparison.rs`: `compare`'s tables of replays.
//! - `search_record.rs`: the capacity search's settings, its steps and its
//!   summary.
//! - `chart.rs`: the SVG charts.
//! - `result_options.rs`: the options of these outputs, which the command line
//!   converts into.
//! - `clock.rs`: the start time as RFC 3339 text.
//!
//! Layer: above `stats`, which it reads; below the run orchestration, which
//! hands it the numbers and writes what it makes. It does no I/O itself
//! but for the chart file.

pub(crate) mod chart;
pub(crate) mod clock;
pub(crate) mod comparison;
pub(crate) mod csv;
pub(crate) mod latency_summary;
pub(crate) mod log_merge;
pub(crate) mod record;
pub(crate) mod recorded;
pub(crate) mod replay_comparison;
pub(crate) mod replay_record;
pub(crate) mod result_line;
pub(crate) mod result_options;
pub(crate) mod search_record;
pub(crate) mod shard_info;
pub(crate) mod shard_merge;
pub(crate) mod sweep;
pub(crate) mod table;

pub(crate) use chart::ChartError;
pub(crate) use comparison::{CompareError, Comparison, ResultFile};
pub(crate) use latency_summary::LatencyListing;
pub use record::IntervalResult;
pub(crate) use record::{IdleResult, RunEnd, RunInfo, RunResult, StepFigures, SweepStep, SweepSummary};
pub(crate) use result_line::ResultLine;
pub(crate) use result_options::{CompareOptions, MergeOptions, ResultOptions};
pub use result_options::{Metric, OutputFormat, TableFormat};
pub(crate) use table::Table;
