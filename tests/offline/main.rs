//! Tests that need nothing outside this repository: no server, no sysbench,
//! no network beyond loopback (tests/README.md has the map of the groups).

#[path = "../common/mod.rs"]
mod common;

mod capture_files;
mod credentials;
mod layers;
mod output_errors;
mod test_rules;
mod tree;
