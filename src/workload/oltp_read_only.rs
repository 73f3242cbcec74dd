//! `oltp_read_only.lua`: BEGIN, point selects, the four range selects,
//! COMMIT.

use super::oltp_options::{OltpOptions, OptionsError};
use super::oltp_statements::{EventStep, StatementGroup};
use super::oltp_workload::OltpWorkload;

pub const NAME: &str = "oltp_read_only";

pub fn workload(options: &OltpOptions) -> Result<OltpWorkload, OptionsError> {
    let mut plan = Vec::new();
    if !options.skip_trx {
        plan.push(EventStep::Begin);
    }
    plan.push(EventStep::Group(StatementGroup::PointSelects, options.point_selects));
    if options.range_selects {
        plan.extend(range_selects(options));
    }
    if !options.skip_trx {
        plan.push(EventStep::Commit);
    }
    OltpWorkload::new(NAME, options, plan)
}

/// `execute_simple_ranges()` .. `execute_distinct_ranges()`, shared with
/// oltp_read_write.
pub(crate) fn range_selects(options: &OltpOptions) -> [EventStep; 4] {
    [
        EventStep::Group(StatementGroup::SimpleRanges, options.simple_ranges),
        EventStep::Group(StatementGroup::SumRanges, options.sum_ranges),
        EventStep::Group(StatementGroup::OrderRanges, options.order_ranges),
        EventStep::Group(StatementGroup::DistinctRanges, options.distinct_ranges),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::testkit::{check_oltp_event, context, rng, shapes, DecodedCommand, Harness};
    use crate::workload::Workload;

    const POINT: &str = "SELECT c FROM sbtestN WHERE id=?";
    const RANGES: [&str; 4] = [
        "SELECT c FROM sbtestN WHERE id BETWEEN ? AND ?",
        "SELECT SUM(k) FROM sbtestN WHERE id BETWEEN ? AND ?",
        "SELECT c FROM sbtestN WHERE id BETWEEN ? AND ? ORDER BY c",
        "SELECT DISTINCT c FROM sbtestN WHERE id BETWEEN ? AND ? ORDER BY c",
    ];

    fn run(options: &OltpOptions, expected: &[&str]) {
        let w = workload(options).unwrap();
        let mut harness = Harness::new(&w, context(0, 1), rng(11));
        for _ in 0..200 {
            let event = harness.event();
            assert_eq!(shapes(&event), expected);
            check_oltp_event(&event, options);
        }
    }

    #[test]
    fn default_event() {
        let options = OltpOptions { tables: 3, table_size: 500, ..OltpOptions::default() };
        let mut expected = vec!["BEGIN"];
        expected.extend([POINT; 10]);
        expected.extend(RANGES);
        expected.push("COMMIT");
        run(&options, &expected);
        let w = workload(&options).unwrap();
        assert_eq!(w.statements().len(), 1 + 3 * 5);
        let mut harness = Harness::new(&w, context(0, 1), rng(1));
        assert_eq!(harness.step().0, DecodedCommand::Query("BEGIN".into()));
    }

    #[test]
    fn skip_trx_and_range_selects_off() {
        let options = OltpOptions { skip_trx: true, range_selects: false, tables: 2, ..OltpOptions::default() };
        run(&options, &[POINT; 10]);
        assert_eq!(workload(&options).unwrap().statements().len(), 2);
        let options = OltpOptions { skip_trx: true, point_selects: 2, range_size: 7, ..OltpOptions::default() };
        let mut expected = vec![POINT; 2];
        expected.extend(RANGES);
        run(&options, &expected);
    }

    #[test]
    fn query_counts_per_group() {
        let options = OltpOptions {
            point_selects: 0,
            simple_ranges: 2,
            sum_ranges: 0,
            order_ranges: 3,
            distinct_ranges: 1,
            range_size: 1,
            ..OltpOptions::default()
        };
        let mut expected = vec!["BEGIN", RANGES[0], RANGES[0], RANGES[2], RANGES[2], RANGES[2], RANGES[3]];
        expected.push("COMMIT");
        run(&options, &expected);
    }
}
