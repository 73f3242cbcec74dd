//! Tests whose measure is the rate a run achieves (`--rate-stages` against
//! the null server, the capacity search against `null-server --serial`
//! and the test MariaDB): a binary of their own, so that no test of another file
//! runs beside them and takes the cores the rate needs (tests/README.md).

#[path = "../common/mod.rs"]
mod common;

mod rate_stages;
mod search;
