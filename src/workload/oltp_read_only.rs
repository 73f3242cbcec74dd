//! `oltp_read_only.lua`: BEGIN, point selects, the four range selects,
//! COMMIT.

use super::common::{Group, OltpWorkload, Phase};
use super::options::{OltpOptions, OptionsError};

pub const NAME: &str = "oltp_read_only";

pub fn workload(options: &OltpOptions) -> Result<OltpWorkload, OptionsError> {
    let mut plan = Vec::new();
    if !options.skip_trx {
        plan.push(Phase::Begin);
    }
    plan.push(Phase::Group(Group::PointSelects, options.point_selects));
    if options.range_selects {
        plan.extend(range_selects(options));
    }
    if !options.skip_trx {
        plan.push(Phase::Commit);
    }
    OltpWorkload::new(NAME, options, plan)
}

/// `execute_simple_ranges()` .. `execute_distinct_ranges()`, shared with
/// oltp_read_write.
pub(crate) fn range_selects(options: &OltpOptions) -> [Phase; 4] {
    [
        Phase::Group(Group::SimpleRanges, options.simple_ranges),
        Phase::Group(Group::SumRanges, options.sum_ranges),
        Phase::Group(Group::OrderRanges, options.order_ranges),
        Phase::Group(Group::DistinctRanges, options.distinct_ranges),
    ]
}
