//! `oltp_update_non_index.lua`: `--non_index_updates` UPDATEs of `c`, no
//! transaction.

use super::common::{Group, OltpWorkload, Phase};
use super::options::{OltpOptions, OptionsError};

pub const NAME: &str = "oltp_update_non_index";

pub fn workload(options: &OltpOptions) -> Result<OltpWorkload, OptionsError> {
    OltpWorkload::new(NAME, options, vec![Phase::Group(Group::NonIndexUpdates, options.non_index_updates)])
}
