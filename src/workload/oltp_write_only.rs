//! `oltp_write_only.lua`: BEGIN, index updates, non-index updates,
//! DELETE/INSERT pairs, COMMIT.

use super::common::{Group, OltpWorkload, Phase};
use super::options::{OltpOptions, OptionsError};

pub const NAME: &str = "oltp_write_only";

pub fn workload(options: &OltpOptions) -> Result<OltpWorkload, OptionsError> {
    let mut plan = Vec::new();
    if !options.skip_trx {
        plan.push(Phase::Begin);
    }
    plan.extend(writes(options));
    if !options.skip_trx {
        plan.push(Phase::Commit);
    }
    OltpWorkload::new(NAME, options, plan)
}

/// `execute_index_updates()`, `execute_non_index_updates()`,
/// `execute_delete_inserts()`, shared with oltp_read_write.
pub(crate) fn writes(options: &OltpOptions) -> [Phase; 3] {
    [
        Phase::Group(Group::IndexUpdates, options.index_updates),
        Phase::Group(Group::NonIndexUpdates, options.non_index_updates),
        Phase::Group(Group::DeleteInserts, options.delete_inserts),
    ]
}
