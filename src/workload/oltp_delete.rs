//! `oltp_delete.lua`: one DELETE per event, no transaction. Its `event()`
//! draws the table and the id itself, in the same order as a group does.

use super::common::{Group, OltpWorkload, Phase};
use super::options::{OltpOptions, OptionsError};

pub const NAME: &str = "oltp_delete";

pub fn workload(options: &OltpOptions) -> Result<OltpWorkload, OptionsError> {
    OltpWorkload::new(NAME, options, vec![Phase::Group(Group::Deletes, 1)])
}
