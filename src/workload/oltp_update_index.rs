//! `oltp_update_index.lua`: `--index_updates` UPDATEs of `k`, no transaction.

use super::oltp_options::{OltpOptions, OptionsError};
use super::oltp_statements::{EventStep, StatementGroup};
use super::oltp_workload::OltpWorkload;

pub const NAME: &str = "oltp_update_index";

pub fn workload(options: &OltpOptions) -> Result<OltpWorkload, OptionsError> {
    OltpWorkload::new(NAME, options, vec![EventStep::Group(StatementGroup::IndexUpdates, options.index_updates)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::testkit::{check_oltp_event, context, rng, shapes, Harness};

    #[test]
    fn index_updates_per_event() {
        let options = OltpOptions { tables: 2, index_updates: 3, ..OltpOptions::default() };
        let w = workload(&options).unwrap();
        let mut harness = Harness::new(&w, context(0, 1), rng(15));
        for _ in 0..100 {
            let event = harness.event();
            assert_eq!(shapes(&event), ["UPDATE sbtestN SET k=k+1 WHERE id=?"; 3]);
            check_oltp_event(&event, &options);
        }
        let options = OltpOptions { index_updates: 0, ..OltpOptions::default() };
        assert!(workload(&options).is_err());
    }
}
