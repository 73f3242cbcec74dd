//! Finding the test MariaDB (started by `scripts/mariadb.sh`).
#![allow(dead_code)]

use std::path::PathBuf;
use std::time::Duration;

use wirebench::client::{ConnectOptions, Endpoint};

/// Where the test server listens.
pub struct TestServer {
    pub host: String,
    pub port: u16,
    pub socket: Option<PathBuf>,
}

impl TestServer {
    /// The server named by WIREBENCH_TEST_HOST/PORT/SOCKET, or `None` (the
    /// test is skipped) when there is none. With WIREBENCH_REQUIRE_SERVER=1,
    /// as in CI, a missing server fails the test instead.
    pub fn find() -> Option<TestServer> {
        let required = std::env::var("WIREBENCH_REQUIRE_SERVER").is_ok_and(|v| v == "1");
        let host = std::env::var("WIREBENCH_TEST_HOST").ok();
        let port = std::env::var("WIREBENCH_TEST_PORT").ok();
        match (host, port) {
            (Some(host), Some(port)) => {
                let port = port.parse().unwrap_or_else(|_| panic!("WIREBENCH_TEST_PORT={port:?} is not a port"));
                let socket = std::env::var_os("WIREBENCH_TEST_SOCKET").map(PathBuf::from);
                Some(TestServer { host, port, socket })
            }
            _ if required => panic!(
                "WIREBENCH_REQUIRE_SERVER=1 but WIREBENCH_TEST_HOST/WIREBENCH_TEST_PORT are not set: \
                 start the server with scripts/mariadb.sh start and eval \"$(scripts/mariadb.sh env)\""
            ),
            _ => {
                eprintln!(
                    "skipped: no test server (set WIREBENCH_TEST_HOST and WIREBENCH_TEST_PORT, see scripts/mariadb.sh)"
                );
                None
            }
        }
    }

    pub fn tcp(&self) -> Endpoint {
        Endpoint::tcp(self.host.clone(), self.port)
    }

    pub fn socket(&self) -> Endpoint {
        let required = std::env::var("WIREBENCH_REQUIRE_SERVER").is_ok_and(|v| v == "1");
        match &self.socket {
            Some(path) => Endpoint::unix(path.clone()),
            None if required => panic!("WIREBENCH_REQUIRE_SERVER=1 but WIREBENCH_TEST_SOCKET is not set"),
            None => self.tcp(),
        }
    }

    /// Options for user `sbtest` (mysql_native_password) on database `sbtest`.
    pub fn options(&self, endpoint: Endpoint) -> ConnectOptions {
        let mut options = ConnectOptions::new(endpoint, "sbtest", "sbtest").database("sbtest");
        options.connect_timeout = Duration::from_secs(20);
        options
    }
}
