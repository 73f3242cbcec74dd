//! `oltp_update_index.lua`: `--index_updates` UPDATEs of `k`, no transaction.

use super::common::{Group, OltpWorkload, Phase};
use super::options::{OltpOptions, OptionsError};

pub const NAME: &str = "oltp_update_index";

pub fn workload(options: &OltpOptions) -> Result<OltpWorkload, OptionsError> {
    OltpWorkload::new(NAME, options, vec![Phase::Group(Group::IndexUpdates, options.index_updates)])
}
