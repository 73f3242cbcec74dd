//! wirebench: a MySQL/MariaDB load generator that speaks the wire protocol itself.

pub mod cli;
pub mod client;
pub mod rand;
pub mod stats;
pub mod workload;
pub mod driver;
pub mod run;
