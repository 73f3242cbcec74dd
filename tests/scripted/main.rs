//! Tests against servers the tests script themselves: the null server,
//! servers with a planted bug (planted/), transcripts played over in-memory
//! pipes, and the interop servers of tests/servers/ (tests/README.md).

#[path = "../common/mod.rs"]
mod common;
mod planted;

mod fuzz_login;
mod fuzz_planted;
mod fuzz_pre_auth;
mod fuzz_run;
mod fuzz_setup;
mod fuzz_slow_restart;
mod interop_servers;
mod polling;
mod server_text;
mod tls_transcripts;
mod transcripts;
