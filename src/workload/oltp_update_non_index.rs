//! `oltp_update_non_index.lua`: `--non_index_updates` UPDATEs of `c`, no
//! transaction.

use super::oltp_options::{OltpOptions, OptionsError};
use super::oltp_statements::{EventStep, StatementGroup};
use super::oltp_workload::OltpWorkload;

pub const NAME: &str = "oltp_update_non_index";

pub fn workload(options: &OltpOptions) -> Result<OltpWorkload, OptionsError> {
    OltpWorkload::new(NAME, options, vec![EventStep::Group(StatementGroup::NonIndexUpdates, options.non_index_updates)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::testkit::{check_oltp_event, context, rng, shapes, Harness};

    #[test]
    fn non_index_updates_per_event() {
        let options = OltpOptions { tables: 2, non_index_updates: 2, ..OltpOptions::default() };
        let w = workload(&options).unwrap();
        let mut harness = Harness::new(&w, context(0, 1), rng(16));
        for _ in 0..100 {
            let event = harness.event();
            assert_eq!(shapes(&event), ["UPDATE sbtestN SET c=? WHERE id=?"; 2]);
            check_oltp_event(&event, &options);
        }
    }
}
