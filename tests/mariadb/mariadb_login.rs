//! Logging in to the real MariaDB: plugins, transports, refusals.

use crate::common;

use common::TestServer;
use wirebench::client::{ClientError, Connection};
use wirebench_protocol::auth::AuthPlugin;
use wirebench_protocol::Capabilities;

#[tokio::test]
async fn native_password_over_tcp_and_socket() {
    let Some(server) = TestServer::find() else { return };
    for endpoint in [server.tcp(), server.socket()] {
        let conn = Connection::connect(&server.options(endpoint.clone())).await.unwrap_or_else(|e| panic!("{e}"));
        let login = conn.login();
        assert!(login.is_mariadb, "{endpoint}: {}", login.server_version);
        assert!(login.server_version.starts_with("10."), "version {:?} keeps no 5.5.5- prefix", login.server_version);
        assert_eq!(login.auth_plugin, AuthPlugin::MysqlNativePassword);
        assert!(login.capabilities.contains(Capabilities::DEPRECATE_EOF));
    }
}

#[tokio::test]
async fn ed25519_over_tcp_and_socket() {
    let Some(server) = TestServer::find() else { return };
    for endpoint in [server.tcp(), server.socket()] {
        let mut options = server.options(endpoint.clone());
        options.user = "sbtest_ed".into();
        let conn = Connection::connect(&options).await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(conn.login().auth_plugin, AuthPlugin::ClientEd25519, "{endpoint}");
    }
}

#[tokio::test]
async fn without_deprecate_eof() {
    let Some(server) = TestServer::find() else { return };
    let mut options = server.options(server.tcp());
    options.deprecate_eof = false;
    let conn = Connection::connect(&options).await.unwrap_or_else(|e| panic!("{e}"));
    assert!(!conn.login().capabilities.contains(Capabilities::DEPRECATE_EOF));
}

#[tokio::test]
async fn wrong_password_shows_1045_and_the_servers_message() {
    let Some(server) = TestServer::find() else { return };
    for user in ["sbtest", "sbtest_ed"] {
        let mut options = server.options(server.tcp());
        options.user = user.into();
        options.password = "not-the-password".into();
        let err = Connection::connect(&options).await.expect_err("a wrong password must be refused");
        let server_error = err.server_error().unwrap_or_else(|| panic!("expected a server error, got {err}"));
        assert_eq!(server_error.code, 1045, "{err}");
        assert_eq!(server_error.sql_state_str(), Some("28000"));
        assert!(server_error.message.contains("Access denied for user 'sbtest"), "{err}");
        let text = err.to_string();
        assert!(
            text.starts_with(&format!("{}:{}: ERROR 1045 (28000): Access denied", server.host, server.port)),
            "{text}"
        );
    }
}

#[tokio::test]
async fn unknown_database() {
    let Some(server) = TestServer::find() else { return };
    let options = server.options(server.socket()).database("wirebench_no_such_db");
    let err = Connection::connect(&options).await.expect_err("an unknown database must be refused");
    let server_error = err.server_error().unwrap_or_else(|| panic!("expected a server error, got {err}"));
    // 1044: access denied to the database (the user has no rights on it); 1049: unknown database.
    assert!(matches!(server_error.code, 1044 | 1049), "{err}");
    assert!(server_error.message.contains("wirebench_no_such_db"), "{err}");
}

#[tokio::test]
async fn refused_port_names_the_address() {
    // Port 9 (discard) on loopback: nothing listens there.
    let Some(server) = TestServer::find() else { return };
    let options = server.options(wirebench::client::Endpoint::tcp("127.0.0.1", 9));
    match Connection::connect(&options).await {
        Err(ClientError::Io { endpoint, source }) => {
            assert_eq!(endpoint.to_string(), "127.0.0.1:9");
            assert_eq!(source.kind(), std::io::ErrorKind::ConnectionRefused);
        }
        other => panic!("expected connection refused, got {other:?}"),
    }
}
