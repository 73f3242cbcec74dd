//! wirebench: a MySQL/MariaDB load generator that speaks the wire protocol itself.

pub mod client;
pub mod null_server;
pub mod rand;
