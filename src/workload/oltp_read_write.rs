//! `oltp_read_write.lua`: oltp_read_only's reads, then oltp_write_only's
//! writes, in one transaction.

use super::oltp_options::{OltpOptions, OptionsError};
use super::oltp_statements::{EventStep, StatementGroup};
use super::oltp_workload::OltpWorkload;
use super::{oltp_read_only, oltp_write_only};

pub const NAME: &str = "oltp_read_write";

pub fn workload(options: &OltpOptions) -> Result<OltpWorkload, OptionsError> {
    let mut plan = Vec::new();
    if !options.skip_trx {
        plan.push(EventStep::Begin);
    }
    plan.push(EventStep::Group(StatementGroup::PointSelects, options.point_selects));
    if options.range_selects {
        plan.extend(oltp_read_only::range_selects(options));
    }
    plan.extend(oltp_write_only::writes(options));
    if !options.skip_trx {
        plan.push(EventStep::Commit);
    }
    OltpWorkload::new(NAME, options, plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::testkit::{check_oltp_event, context, rng, shapes, Harness};
    use crate::workload::Workload;

    const WRITES: [&str; 4] = [
        "UPDATE sbtestN SET k=k+1 WHERE id=?",
        "UPDATE sbtestN SET c=? WHERE id=?",
        "DELETE FROM sbtestN WHERE id=?",
        "INSERT INTO sbtestN (id, k, c, pad) VALUES (?, ?, ?, ?)",
    ];

    fn run(options: &OltpOptions) -> Vec<Vec<String>> {
        let w = workload(options).unwrap();
        let mut harness = Harness::new(&w, context(0, 1), rng(12));
        (0..200)
            .map(|_| {
                let event = harness.event();
                check_oltp_event(&event, options);
                shapes(&event)
            })
            .collect()
    }

    #[test]
    fn default_event() {
        let options = OltpOptions { tables: 4, table_size: 300, ..OltpOptions::default() };
        for shape in run(&options) {
            assert_eq!(shape.len(), 20);
            assert_eq!((shape[0].as_str(), shape[19].as_str()), ("BEGIN", "COMMIT"));
            assert!(shape[1..11].iter().all(|s| s == "SELECT c FROM sbtestN WHERE id=?"));
            assert!(shape[11..15].iter().all(|s| s.contains("BETWEEN")));
            assert_eq!(shape[15..19], WRITES);
        }
        assert_eq!(workload(&options).unwrap().statements().len(), 1 + 4 * 9);
    }

    #[test]
    fn without_ranges_transaction_or_with_more_writes() {
        let options = OltpOptions {
            skip_trx: true,
            range_selects: false,
            point_selects: 1,
            index_updates: 2,
            non_index_updates: 0,
            delete_inserts: 3,
            ..OltpOptions::default()
        };
        for shape in run(&options) {
            let mut expected = vec!["SELECT c FROM sbtestN WHERE id=?", WRITES[0], WRITES[0]];
            for _ in 0..3 {
                expected.extend(&WRITES[2..]);
            }
            assert_eq!(shape, expected);
        }
    }

    #[test]
    fn every_table_is_used() {
        let options = OltpOptions { tables: 5, ..OltpOptions::default() };
        let w = workload(&options).unwrap();
        let mut harness = Harness::new(&w, context(0, 1), rng(2));
        let mut seen = [false; 5];
        for _ in 0..100 {
            for command in harness.event() {
                if let Some(t) = crate::workload::testkit::split_table(command.sql()).1 {
                    seen[t as usize - 1] = true;
                }
            }
        }
        assert_eq!(seen, [true; 5]);
    }
}
