//! Tests against servers the tests script themselves: the null server,
//! servers with a planted bug (planted/), transcripts played over in-memory
//! pipes, the interop servers of tests/servers/, and the watch's runs
//! against no server (dry runs) with a real Prometheus and Chromium
//! (tests/README.md).

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
mod metrics_prometheus;
mod polling;
mod server_text;
mod tls_transcripts;
mod transcripts;
mod watch_capture;
mod watch_page;
mod watch_tools;
