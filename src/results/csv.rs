//! `--format=csv`: one row per `--report-interval`, pgbench's
//! `--aggregate-interval` log fields first, under a header.
//!
//! pgbench's aggregate log line is `interval_start num_transactions
//! sum_latency sum_latency_2 min_latency max_latency [sum_lag sum_lag_2
//! min_lag max_lag skipped] [retried retries] failures ...`, latencies in
//! microseconds, the start as Unix time. Kept here, in that order and
//! unit: `interval_start` (Unix time, in seconds to the millisecond, since
//! intervals start when the run does, not on whole seconds),
//! `num_transactions`, `sum_latency`, `min_latency`, `max_latency`,
//! `failures` (sysbench's ignored errors). Left out: `sum_latency_2` and
//! the lag fields, which the statistics do not measure (sysbench's
//! histogram keeps no sum of squares, and no start delay is recorded
//! apart from the latency), and `skipped`/`retried`/`retries`, which have
//! no sysbench meaning. wirebench's own columns follow: `threads`,
//! `num_queries`, `reconnects`, and the latency at `--percentile`.

use super::record::IntervalResult;
use super::table::csv_line;

/// The header row, for latency percentile `percentile`.
pub fn header(percentile: f64) -> String {
    let columns = [
        "interval_start",
        "num_transactions",
        "sum_latency",
        "min_latency",
        "max_latency",
        "failures",
        "threads",
        "num_queries",
        "reconnects",
    ];
    let mut cells: Vec<String> = columns.iter().map(|c| (*c).to_owned()).collect();
    cells.push(format!("p{}_latency", trim_number(percentile)));
    csv_line(&cells)
}

/// One interval's row, matching [`header`].
pub fn row(interval: &IntervalResult, percentile: f64) -> String {
    let us = |ms: f64| format!("{:.0}", ms * 1000.0);
    let l = &interval.latency_ms;
    let c = &interval.counters;
    let cells = [
        format!("{:.3}", interval.start_unix_s),
        c.transactions.to_string(),
        us(l.sum),
        us(l.min),
        us(l.max),
        c.ignored_errors.to_string(),
        interval.threads.to_string(),
        c.queries.to_string(),
        c.reconnects.to_string(),
        l.at(percentile).map(us).unwrap_or_default(),
    ];
    csv_line(&cells)
}

/// `95`, `99.9`: a percentile as a column name part.
fn trim_number(x: f64) -> String {
    let text = format!("{x}");
    text.replace('.', "_")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::record::IntervalSpan;
    use crate::stats::{Counters, LatencyHistogram};

    #[test]
    fn a_row_per_interval_under_its_header() {
        let counters = Counters { reads: 20, events: 2, errors: 1, ..Counters::default() };
        let mut latency = LatencyHistogram::new();
        latency.record_ns(1_500_000);
        latency.record_ns(2_500_400);
        let span = IntervalSpan { threads: 4, end_s: 3.0, length_s: 1.0, clock_start_unix_s: 1_700_000_000.25 };
        let interval = IntervalResult::new(span, &counters, &latency, &[95.0], None);
        assert_eq!(
            header(95.0),
            "interval_start,num_transactions,sum_latency,min_latency,max_latency,failures,threads,num_queries,\
             reconnects,p95_latency\n"
        );
        let p95 = format!("{:.0}", latency.percentile(95.0) * 1000.0);
        assert_eq!(row(&interval, 95.0), format!("1700000002.250,2,4000,1500,2500,1,4,20,0,{p95}\n"));
        assert_eq!(header(99.9).trim_end().rsplit(',').next(), Some("p99_9_latency"));
    }
}
