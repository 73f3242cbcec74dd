//! The table that ends a `--threads` sweep: one row per step.

use super::record::{RunEnd, StepFigures};
use super::table::Table;

/// `1234.57`, or `-` where the figure was not measured.
pub fn cell(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |x| format!("{x:.2}"))
}

/// Rows = threads; columns = tps, qps, p95 and p99 latency, errors. A step
/// that did not complete says how it ended.
pub fn sweep_table(test: &str, steps: &[StepFigures]) -> Table {
    let header = ["threads", "tps", "qps", "p95 ms", "p99 ms", "errors"].map(str::to_owned).to_vec();
    let rows = steps
        .iter()
        .map(|s| {
            let threads = match s.end {
                RunEnd::Completed => s.threads.to_string(),
                RunEnd::Interrupted => format!("{} (interrupted)", s.threads),
                RunEnd::ForcedShutdown => format!("{} (forced shutdown)", s.threads),
                RunEnd::Cut => format!("{} (cut)", s.threads),
            };
            vec![
                threads,
                cell(Some(s.tps)),
                cell(Some(s.qps)),
                cell(s.p95_ms),
                cell(s.p99_ms),
                s.ignored_errors.to_string(),
            ]
        })
        .collect();
    Table { title: format!("{test}: sweep of {} step(s)", steps.len()), header, rows }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_row_per_step() {
        let step = |threads, qps, end| StepFigures {
            threads,
            tps: qps / 10.0,
            qps,
            p95_ms: Some(1.5),
            p99_ms: None,
            ignored_errors: 3,
            end,
            server: None,
        };
        let table =
            sweep_table("oltp_read_only", &[step(1, 100.0, RunEnd::Completed), step(2, 210.0, RunEnd::Interrupted)]);
        assert_eq!(
            table.text(),
            "oltp_read_only: sweep of 2 step(s)\n\
             threads            tps     qps  p95 ms  p99 ms  errors\n\
             1                10.00  100.00    1.50       -       3\n\
             2 (interrupted)  21.00  210.00    1.50       -       3\n"
        );
    }
}
