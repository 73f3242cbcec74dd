//! `oltp_point_select.lua`: one point select per event, no transaction
//! (the script sets `point_selects=1` whatever the command line says).

use super::common::{Group, OltpWorkload, Phase};
use super::options::{OltpOptions, OptionsError};

pub const NAME: &str = "oltp_point_select";

pub fn workload(options: &OltpOptions) -> Result<OltpWorkload, OptionsError> {
    OltpWorkload::new(NAME, options, vec![Phase::Group(Group::PointSelects, 1)])
}
