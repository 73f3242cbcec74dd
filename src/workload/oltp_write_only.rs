//! `oltp_write_only.lua`: BEGIN, index updates, non-index updates,
//! DELETE/INSERT pairs, COMMIT.

use super::oltp_options::{OltpOptions, OptionsError};
use super::oltp_statements::{EventStep, StatementGroup};
use super::oltp_workload::OltpWorkload;

pub const NAME: &str = "oltp_write_only";

pub fn workload(options: &OltpOptions) -> Result<OltpWorkload, OptionsError> {
    let mut plan = Vec::new();
    if !options.skip_trx {
        plan.push(EventStep::Begin);
    }
    plan.extend(writes(options));
    if !options.skip_trx {
        plan.push(EventStep::Commit);
    }
    OltpWorkload::new(NAME, options, plan)
}

/// `execute_index_updates()`, `execute_non_index_updates()`,
/// `execute_delete_inserts()`, shared with oltp_read_write.
pub(crate) fn writes(options: &OltpOptions) -> [EventStep; 3] {
    [
        EventStep::Group(StatementGroup::IndexUpdates, options.index_updates),
        EventStep::Group(StatementGroup::NonIndexUpdates, options.non_index_updates),
        EventStep::Group(StatementGroup::DeleteInserts, options.delete_inserts),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::testkit::{check_oltp_event, context, rng, shapes, Harness};

    #[test]
    fn event_with_and_without_transaction() {
        for skip_trx in [false, true] {
            let options = OltpOptions { tables: 2, table_size: 50, skip_trx, ..OltpOptions::default() };
            let w = workload(&options).unwrap();
            let mut harness = Harness::new(&w, context(0, 1), rng(13));
            let mut expected = vec![
                "UPDATE sbtestN SET k=k+1 WHERE id=?",
                "UPDATE sbtestN SET c=? WHERE id=?",
                "DELETE FROM sbtestN WHERE id=?",
                "INSERT INTO sbtestN (id, k, c, pad) VALUES (?, ?, ?, ?)",
            ];
            if !skip_trx {
                expected.insert(0, "BEGIN");
                expected.push("COMMIT");
            }
            for _ in 0..200 {
                let event = harness.event();
                assert_eq!(shapes(&event), expected);
                check_oltp_event(&event, &options);
            }
        }
    }
}
