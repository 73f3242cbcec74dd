//! `oltp_delete.lua`: one DELETE per event, no transaction. Its `event()`
//! draws the table and the id itself, in the same order as a group does.

use super::oltp_options::{OltpOptions, OptionsError};
use super::oltp_statements::{EventStep, StatementGroup};
use super::oltp_workload::OltpWorkload;

pub const NAME: &str = "oltp_delete";

pub fn workload(options: &OltpOptions) -> Result<OltpWorkload, OptionsError> {
    OltpWorkload::new(NAME, options, vec![EventStep::Group(StatementGroup::Deletes, 1)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::testkit::{check_oltp_event, context, rng, shapes, Harness};
    use crate::workload::Workload;

    #[test]
    fn one_delete_per_event() {
        let options = OltpOptions { tables: 3, delete_inserts: 5, ..OltpOptions::default() };
        let w = workload(&options).unwrap();
        assert_eq!(w.statements().len(), 3);
        let mut harness = Harness::new(&w, context(0, 1), rng(17));
        for _ in 0..100 {
            let event = harness.event();
            assert_eq!(shapes(&event), ["DELETE FROM sbtestN WHERE id=?"]);
            check_oltp_event(&event, &options);
        }
    }
}
