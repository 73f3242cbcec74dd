//! `oltp_read_write.lua`: oltp_read_only's reads, then oltp_write_only's
//! writes, in one transaction.

use super::common::{Group, OltpWorkload, Phase};
use super::options::{OltpOptions, OptionsError};
use super::{oltp_read_only, oltp_write_only};

pub const NAME: &str = "oltp_read_write";

pub fn workload(options: &OltpOptions) -> Result<OltpWorkload, OptionsError> {
    let mut plan = Vec::new();
    if !options.skip_trx {
        plan.push(Phase::Begin);
    }
    plan.push(Phase::Group(Group::PointSelects, options.point_selects));
    if options.range_selects {
        plan.extend(oltp_read_only::range_selects(options));
    }
    plan.extend(oltp_write_only::writes(options));
    if !options.skip_trx {
        plan.push(Phase::Commit);
    }
    OltpWorkload::new(NAME, options, plan)
}
