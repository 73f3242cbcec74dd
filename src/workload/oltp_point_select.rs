//! `oltp_point_select.lua`: one point select per event, no transaction
//! (the script sets `point_selects=1` whatever the command line says).

use super::oltp_options::{OltpOptions, OptionsError};
use super::oltp_statements::{EventStep, StatementGroup};
use super::oltp_workload::OltpWorkload;

pub const NAME: &str = "oltp_point_select";

pub fn workload(options: &OltpOptions) -> Result<OltpWorkload, OptionsError> {
    OltpWorkload::new(NAME, options, vec![EventStep::Group(StatementGroup::PointSelects, 1)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::testkit::{check_oltp_event, context, rng, shapes, Harness};
    use crate::workload::Workload;

    #[test]
    fn one_point_select_whatever_point_selects_says() {
        let options = OltpOptions { tables: 3, table_size: 20, point_selects: 10, ..OltpOptions::default() };
        let w = workload(&options).unwrap();
        assert_eq!(w.statements().len(), 3);
        let mut harness = Harness::new(&w, context(0, 1), rng(14));
        for _ in 0..200 {
            let event = harness.event();
            assert_eq!(shapes(&event), ["SELECT c FROM sbtestN WHERE id=?"]);
            check_oltp_event(&event, &options);
        }
    }
}
