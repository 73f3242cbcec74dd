//! Tests that read a child's peak memory (`ru_maxrss` from wait4): a binary
//! of their own, as a child's peak counts its parent's resident memory at
//! the fork, and the test binary of a whole group is larger than one of
//! these files' (tests/README.md). faults.rs needs the test MariaDB.

#[path = "../common/mod.rs"]
mod common;

mod faults;
mod lua_hostile;
