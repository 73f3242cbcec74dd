//! Tests against the test MariaDB of scripts/mariadb.sh (and, for
//! fuzz_mariadb_crash, a MariaDB of their own from the same binaries). Tests
//! of different files share databases such as sbtest: `TestServer::find`
//! lets the tests of one file at a time use the server (tests/README.md).

#[path = "../common/mod.rs"]
mod common;

mod capture_import;
mod cli_environment;
mod docs;
mod fuzz_mariadb_crash;
mod fuzz_servers;
mod hints;
mod idle_connections;
mod latency;
mod legacy_mariadb;
mod lua_loops;
mod lua_mariadb;
mod lua_shards;
mod lua_stdin;
mod mariadb_commands;
mod mariadb_login;
mod merge;
mod pcap_capture;
mod pipeline_transactions;
mod prepare_methods;
mod record;
mod replay_clients;
mod replay_schedule;
mod results_output;
mod run_end;
mod seeds_run;
mod server_stats;
