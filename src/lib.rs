//! wirebench: a MySQL/MariaDB load generator that speaks the wire protocol itself.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod cli;
pub mod client;
pub mod driver;
pub mod fuzz;
pub mod lua;
pub mod null_server;
pub mod rand;
pub mod results;
pub mod run;
pub mod server_stats;
pub mod stats;
pub mod transport;
pub mod workload;
