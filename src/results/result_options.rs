//! The options of the results' outputs, as the command line gives them.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::record::StepFigures;
use super::shard_info::RunIdentity;

/// `--format` of `run`: where the numbers go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputFormat {
    /// sysbench's report on standard output.
    #[default]
    Text,
    /// JSON lines on standard output; the report on standard error.
    Json,
    /// CSV rows per interval on standard output; the report on standard
    /// error.
    Csv,
}

impl OutputFormat {
    pub const NAMES: [(&'static str, OutputFormat); 3] =
        [("text", OutputFormat::Text), ("json", OutputFormat::Json), ("csv", OutputFormat::Csv)];

    /// Whether standard output carries data, so that the human report
    /// moves to standard error.
    pub fn is_machine_readable(self) -> bool {
        self != OutputFormat::Text
    }
}

/// `--format` of `compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TableFormat {
    /// Columns aligned with spaces.
    #[default]
    Text,
    /// GitHub-flavoured Markdown tables.
    Markdown,
    /// One CSV table with every column.
    Csv,
}

impl TableFormat {
    pub const NAMES: [(&'static str, TableFormat); 3] =
        [("text", TableFormat::Text), ("markdown", TableFormat::Markdown), ("csv", TableFormat::Csv)];
}

/// `--metric` of `compare`: which figure the tables compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Metric {
    #[default]
    Qps,
    Tps,
    /// 95th percentile latency, ms.
    P95,
    /// 99th percentile latency, ms.
    P99,
    /// `--server-stats`: the server's CPU time per query, µs.
    ServerCpuPerQuery,
    /// The server's CPU time per transaction, µs.
    ServerCpuPerTransaction,
    /// The cores the server kept busy.
    ServerCpu,
    /// InnoDB's buffer pool hit ratio, %.
    BufferPoolHit,
    /// Rows the server read per query.
    RowsReadPerQuery,
    /// Pages read from disk per query.
    DiskReadsPerQuery,
}

impl Metric {
    pub const NAMES: [(&'static str, Metric); 10] = [
        ("qps", Metric::Qps),
        ("tps", Metric::Tps),
        ("p95", Metric::P95),
        ("p99", Metric::P99),
        ("server_cpu_per_query", Metric::ServerCpuPerQuery),
        ("server_cpu_per_transaction", Metric::ServerCpuPerTransaction),
        ("server_cpu", Metric::ServerCpu),
        ("buffer_pool_hit", Metric::BufferPoolHit),
        ("rows_read_per_query", Metric::RowsReadPerQuery),
        ("disk_reads_per_query", Metric::DiskReadsPerQuery),
    ];

    /// How a table's title names it.
    pub fn title(self) -> &'static str {
        match self {
            Metric::Qps => "queries per second",
            Metric::Tps => "transactions per second",
            Metric::P95 => "95th percentile latency (ms)",
            Metric::P99 => "99th percentile latency (ms)",
            Metric::ServerCpuPerQuery => "server CPU per query (us)",
            Metric::ServerCpuPerTransaction => "server CPU per transaction (us)",
            Metric::ServerCpu => "server CPU busy (cores)",
            Metric::BufferPoolHit => "buffer pool hit ratio (%)",
            Metric::RowsReadPerQuery => "rows read per query",
            Metric::DiskReadsPerQuery => "disk reads per query",
        }
    }

    /// The short name a CSV column carries.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Qps => "qps",
            Metric::Tps => "tps",
            Metric::P95 => "p95_ms",
            Metric::P99 => "p99_ms",
            Metric::ServerCpuPerQuery => "server_cpu_us_per_query",
            Metric::ServerCpuPerTransaction => "server_cpu_us_per_transaction",
            Metric::ServerCpu => "server_cpu_cores",
            Metric::BufferPoolHit => "buffer_pool_hit_pct",
            Metric::RowsReadPerQuery => "rows_read_per_query",
            Metric::DiskReadsPerQuery => "disk_reads_per_query",
        }
    }

    /// The metric's value in a step's figures: none when the step lacks
    /// it (a latency of no events, a server figure not sampled).
    pub fn of(self, step: &StepFigures) -> Option<f64> {
        let server = step.server.as_ref();
        match self {
            Metric::Qps => Some(step.qps),
            Metric::Tps => Some(step.tps),
            Metric::P95 => step.p95_ms,
            Metric::P99 => step.p99_ms,
            Metric::ServerCpuPerQuery => server?.cpu_us_per_query,
            Metric::ServerCpuPerTransaction => server?.cpu_us_per_transaction,
            Metric::ServerCpu => server?.cpu_cores,
            Metric::BufferPoolHit => server?.buffer_pool_hit_ratio.map(|r| r * 100.0),
            Metric::RowsReadPerQuery => server?.rows_read_per_query,
            Metric::DiskReadsPerQuery => server?.disk_reads_per_query,
        }
    }

    /// The names `--metric` takes, for its refusal.
    pub fn expected() -> String {
        let names: Vec<&str> = Metric::NAMES.iter().map(|(name, _)| *name).collect();
        format!("one of {}", names.join(", "))
    }
}

/// `run`'s result options.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResultOptions {
    pub format: OutputFormat,
    /// `--chart=FILE.svg`.
    pub chart: Option<PathBuf>,
    /// `--label`.
    pub label: Option<String>,
    /// The options as given, by name, a password as `(hidden)`: what the
    /// results record as the options used.
    pub options_given: BTreeMap<String, String>,
    /// What names the run among others, for `wirebench merge`: the whole
    /// run's options every shard shares, and `--start-at`.
    pub run_identity: Option<RunIdentity>,
}

/// `wirebench compare FILE...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompareOptions {
    /// The first is the baseline of the relative table.
    pub files: Vec<PathBuf>,
    pub format: TableFormat,
    pub metric: Metric,
    pub chart: Option<PathBuf>,
    /// `--report-html`: the comparison as a page (run's compare command
    /// writes it through the watch layer's page).
    pub report_html: Option<PathBuf>,
}

/// `wirebench merge FILE...`.
#[derive(Debug, Clone, PartialEq)]
pub struct MergeOptions {
    /// The JSON results of one run's shards.
    pub files: Vec<PathBuf>,
    /// `text`: sysbench's report; `json`: the result lines, the report on
    /// standard error. CSV is refused.
    pub format: OutputFormat,
    /// `--percentile`'s list, as in a run.
    pub percentiles: Vec<f64>,
    /// The whole percentile of sysbench's own lines; none for 0.
    pub percentile: Option<u8>,
    /// `--per-statement`.
    pub per_statement: bool,
}
