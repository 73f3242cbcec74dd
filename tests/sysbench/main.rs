//! Tests that run sysbench 1.0.20 itself beside wirebench, most against the
//! test MariaDB, for parity of counts, reports, random numbers and Lua
//! (tests/README.md).

#[path = "../common/mod.rs"]
mod common;

mod cli;
mod compression;
mod dropin;
mod lua_cram;
mod lua_ffi;
mod lua_tpcc;
mod ps_mode;
mod rand_sysbench;
mod report_format;
mod sysbench_parity;
mod tls_mariadb;
mod workload_mariadb;
