//! `--format=csv`: one row per `--report-interval`, pgbench's
//! `--aggregate-interval` log fields first, under a header.
//!
//! pgbench's aggregate log line is `interval_start num_transactions
//! sum_latency sum_latency_2 min_latency max_latency [sum_lag sum_lag_2
//! min_lag max_lag skipped] [retried retries] failures ...`, latencies in
//! microseconds, the start as Unix time. Kept here, in that order and
//! unit: `interval_start` (Unix time, in seconds to the millisecond, since
//! intervals start when the run does, not on whole seconds),
//! `num_transactions`, `sum_latency`, `min_latency`, `max_latency`, under
//! `--rate` `sum_lag` (each event's wait from its intended start to its
//! first send: the latency's sum less the service time's, both exact), and
//! `failures` (sysbench's ignored errors). Left out: `sum_latency_2`,
//! `sum_lag_2`, `min_lag` and `max_lag`, which the statistics do not keep
//! (no sum of squares; the lag is the difference of two histograms, whose
//! extremes it does not give), and `skipped`/`retried`/`retries`, which
//! have no sysbench meaning. wirebench's own columns follow: `threads`,
//! `num_queries`, `reconnects`, and the latency at each of
//! `--percentile`'s values (from the HdrHistogram). With `--server-stats`,
//! the server's: its headline figures, then each status counter's increase
//! (`server_com_select`, ...), empty where the server has no such counter
//! or the interval's sample failed.

use super::record::IntervalResult;
use super::table::csv_line;
use crate::server_stats::{ServerResult, STATUS_COUNTERS};

/// The server's headline columns, before its counters'.
const SERVER_FIGURES: [&str; 6] = [
    "server_cpu_us_per_query",
    "server_cpu_cores",
    "server_buffer_pool_hit_ratio",
    "server_rows_read_per_query",
    "server_disk_reads_per_query",
    "server_threads_running",
];

/// What the rows of a command hold: the same for all of them.
#[derive(Debug, Clone, PartialEq)]
pub struct CsvColumns {
    /// `--percentile`'s list: a `pNN_latency` column each.
    pub percentiles: Vec<f64>,
    /// Under `--rate`, the `sum_lag` column.
    pub rate: bool,
    /// `--server-stats`: the server's columns.
    pub server: bool,
}

impl CsvColumns {
    /// The header row.
    pub fn header(&self) -> String {
        let mut cells: Vec<String> =
            ["interval_start", "num_transactions", "sum_latency", "min_latency", "max_latency"]
                .map(str::to_owned)
                .to_vec();
        if self.rate {
            cells.push("sum_lag".to_owned());
        }
        cells.extend(["failures", "threads", "num_queries", "reconnects"].map(str::to_owned));
        cells.extend(self.percentiles.iter().map(|&p| format!("p{}_latency", trim_number(p))));
        if self.server {
            cells.extend(SERVER_FIGURES.map(str::to_owned));
            cells.extend(STATUS_COUNTERS.iter().map(|name| format!("server_{}", name.to_ascii_lowercase())));
        }
        csv_line(&cells)
    }

    /// One interval's row, matching [`header`](Self::header).
    pub fn row(&self, interval: &IntervalResult) -> String {
        let us = |ms: f64| format!("{:.0}", ms * 1000.0);
        let (l, c) = (&interval.latency_ms, &interval.counters);
        let mut cells =
            vec![format!("{:.3}", interval.start_unix_s), c.transactions.to_string(), us(l.sum), us(l.min), us(l.max)];
        if self.rate {
            let service_sum = interval.service_latency_ms.as_ref().map_or(l.sum, |s| s.sum);
            cells.push(us((l.sum - service_sum).max(0.0)));
        }
        cells.extend([
            c.ignored_errors.to_string(),
            interval.threads.to_string(),
            c.queries.to_string(),
            c.reconnects.to_string(),
        ]);
        cells.extend(self.percentiles.iter().map(|&p| l.at(p).map(us).unwrap_or_default()));
        if self.server {
            cells.extend(server_cells(interval.server.as_deref()));
        }
        csv_line(&cells)
    }
}

/// The server's cells of a row: empty ones where nothing is known.
fn server_cells(server: Option<&ServerResult>) -> Vec<String> {
    let Some(server) = server else { return vec![String::new(); SERVER_FIGURES.len() + STATUS_COUNTERS.len()] };
    let (delta, figures) = (&server.delta, &server.figures);
    let number = |value: Option<f64>, decimals: usize| value.map(|v| format!("{v:.decimals$}")).unwrap_or_default();
    let mut cells = vec![
        number(figures.cpu_us_per_query, 3),
        number(figures.cpu_cores, 3),
        number(figures.buffer_pool_hit_ratio, 6),
        number(figures.rows_read_per_query, 3),
        number(figures.disk_reads_per_query, 6),
        delta.threads_running.map(|n| n.to_string()).unwrap_or_default(),
    ];
    cells.extend(STATUS_COUNTERS.iter().map(|name| delta.counter(name).map(|n| n.to_string()).unwrap_or_default()));
    cells
}

/// `95`, `99.9`: a percentile as a column name part.
fn trim_number(x: f64) -> String {
    let text = format!("{x}");
    text.replace('.', "_")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::latency_summary::LatencyListing;
    use crate::results::record::IntervalSpan;
    use crate::results::recorded::RecordedHistograms;
    use crate::stats::{Counters, Interval};

    fn interval(rate: bool) -> (IntervalResult, Interval) {
        let mut interval = Interval::new(&[]);
        interval.counters = Counters { reads: 20, events: 2, errors: 1, ..Counters::default() };
        for (latency, service) in [(1_500_000, 1_000_000), (2_500_400, 2_000_000)] {
            interval.latencies.events.record_ns(latency);
            interval.latencies.service.record_ns(service);
        }
        let span = IntervalSpan { threads: 4, end_s: 3.0, length_s: 1.0, measured_from_unix_s: 1_700_000_000.25 };
        let listing = LatencyListing::new(&[50.0, 99.9], Some(50), rate, RecordedHistograms::Omitted);
        (IntervalResult::new(span, &interval, &listing, None), interval)
    }

    #[test]
    fn a_row_per_interval_under_its_header() {
        let columns = CsvColumns { percentiles: vec![50.0, 99.9], rate: false, server: false };
        assert_eq!(
            columns.header(),
            "interval_start,num_transactions,sum_latency,min_latency,max_latency,failures,threads,num_queries,\
             reconnects,p50_latency,p99_9_latency\n"
        );
        let (result, interval) = interval(false);
        let p = |q: f64| format!("{:.0}", interval.latencies.events.percentile_ms(q) * 1000.0);
        assert_eq!(columns.row(&result), format!("1700000002.250,2,4000,1500,2500,1,4,20,0,{},{}\n", p(50.0), p(99.9)));
    }

    #[test]
    fn under_rate_the_lag_sum_follows_max_latency() {
        let columns = CsvColumns { percentiles: vec![], rate: true, server: false };
        let header = columns.header();
        assert!(header.starts_with("interval_start,num_transactions,sum_latency,min_latency,max_latency,sum_lag,"));
        // (1.5 - 1.0) + (2.5004 - 2.0) ms waited behind the schedule.
        let (result, _) = interval(true);
        assert_eq!(columns.row(&result), "1700000002.250,2,4000,1500,2500,1000,1,4,20,0\n");
    }

    /// With `--server-stats`, the server's columns follow, empty when the
    /// interval's sample failed or the server has no such counter.
    #[test]
    fn the_servers_columns_follow() {
        use crate::server_stats::{ClientCounts, ServerDelta};
        let columns = CsvColumns { percentiles: vec![], rate: false, server: true };
        let header = columns.header();
        assert!(
            header.contains(",reconnects,server_cpu_us_per_query,server_cpu_cores,server_buffer_pool_hit_ratio,"),
            "{header}"
        );
        assert!(
            header.contains(",server_questions,server_com_select,") && header.ends_with(",server_bytes_received\n")
        );
        let (mut result, _) = interval(false);
        let empty = columns.row(&result);
        assert!(empty.ends_with(&format!("{}\n", ",".repeat(SERVER_FIGURES.len() + STATUS_COUNTERS.len()))), "{empty}");
        let delta = ServerDelta {
            seconds: 1.0,
            status: [("Questions".to_owned(), 21), ("Com_select".to_owned(), 20)].into(),
            threads_running: Some(3),
            process: None,
            sampler_statements: 1,
        };
        result.server =
            Some(Box::new(ServerResult::interval(delta, Some(ClientCounts { queries: 20, transactions: 2 }))));
        let row = columns.row(&result);
        assert!(row.contains(",0,,,,,,3,21,20,,"), "{row}");
        assert_eq!(row.split(',').count(), header.split(',').count());
    }
}
