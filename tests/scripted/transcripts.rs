//! The connection against scripted servers: each test plays a server's side
//! of a transcript over an in-memory pipe and checks the client's bytes.
//! MySQL 8 cannot run here, so its caching_sha2_password exchanges are built
//! from the protocol documentation.

use std::time::Duration;

use crate::common;

use common::{greeting, NONCE};
use rsa::pkcs8::EncodePublicKey;
use rsa::{Oaep, RsaPrivateKey};
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};
use wirebench::client::{ClientError, ConnectOptions, Connection, Endpoint, ServerKey};
use wirebench_protocol::auth::{caching_sha2, ed25519, native_password, AuthPlugin};
use wirebench_protocol::buf::{Reader, WriteExt};
use wirebench_protocol::framing::{decode_packet, encode_packet};
use wirebench_protocol::response::ServerError;
use wirebench_protocol::{Capabilities, ProtocolError};

const MYSQL8: &str = "8.0.36";
const MARIADB: &str = "5.5.5-10.11.6-MariaDB";

/// The server's side of one connection.
struct Server {
    pipe: DuplexStream,
    buf: Vec<u8>,
    seq: u8,
}

impl Server {
    async fn send(&mut self, payload: &[u8]) {
        let mut out = Vec::new();
        self.seq = encode_packet(&mut out, self.seq, payload);
        self.pipe.write_all(&out).await.unwrap();
    }

    async fn send_raw(&mut self, bytes: &[u8]) {
        self.pipe.write_all(bytes).await.unwrap();
    }

    /// The next packet from the client, which must carry the expected sequence id.
    async fn recv(&mut self) -> Vec<u8> {
        loop {
            if let Some(frame) = decode_packet(&self.buf, self.seq, 1 << 24).unwrap() {
                let payload = frame.payload.into_owned();
                self.seq = frame.next_seq;
                self.buf.drain(..frame.consumed);
                return payload;
            }
            let mut chunk = [0u8; 4096];
            let n = self.pipe.read(&mut chunk).await.unwrap();
            assert!(n > 0, "client closed the connection");
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    /// A new command starts: sequence ids restart at 0.
    async fn recv_command(&mut self) -> Vec<u8> {
        self.seq = 0;
        self.recv().await
    }
}

fn server_caps(deprecate_eof: bool) -> Capabilities {
    let mut caps = Capabilities::LONG_PASSWORD
        | Capabilities::PROTOCOL_41
        | Capabilities::SECURE_CONNECTION
        | Capabilities::PLUGIN_AUTH
        | Capabilities::PLUGIN_AUTH_LENENC_CLIENT_DATA
        | Capabilities::CONNECT_WITH_DB
        | Capabilities::TRANSACTIONS
        | Capabilities::MULTI_RESULTS
        | Capabilities::MULTI_STATEMENTS
        | Capabilities::PS_MULTI_RESULTS
        | Capabilities::CONNECT_ATTRS;
    if deprecate_eof {
        caps |= Capabilities::DEPRECATE_EOF;
    }
    caps
}

/// What the server reads out of a HandshakeResponse41.
#[derive(Debug)]
struct Response41 {
    caps: Capabilities,
    user: Vec<u8>,
    auth: Vec<u8>,
    database: Vec<u8>,
    plugin: Vec<u8>,
}

fn parse_response41(payload: &[u8]) -> Response41 {
    let mut r = Reader::new(payload);
    let caps = Capabilities::from_parts(r.u32("caps").unwrap(), 0);
    assert_eq!(r.u32("max packet").unwrap(), 64 * 1024 * 1024);
    assert_eq!(r.u8("charset").unwrap(), 45);
    assert_eq!(r.take(23, "filler").unwrap(), &[0u8; 23], "MySQL gets an all-zero filler");
    let user = r.null_terminated("user").unwrap().to_vec();
    let auth = r.lenenc_bytes("auth").unwrap().to_vec();
    let database = r.null_terminated("db").unwrap().to_vec();
    let plugin = r.null_terminated("plugin").unwrap().to_vec();
    assert!(caps.contains(Capabilities::CONNECT_ATTRS));
    let attrs = r.lenenc_bytes("attrs").unwrap();
    assert!(attrs.windows(9).any(|w| w == b"wirebench"), "connect attributes name the client");
    r.finish("handshake response").unwrap();
    Response41 { caps, user, auth, database, plugin }
}

const OK: &[u8] = &[0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00];

fn options(endpoint: Endpoint) -> ConnectOptions {
    ConnectOptions::new(endpoint, "bench", "s3cret").database("sbtest")
}

fn tcp() -> Endpoint {
    Endpoint::tcp("db.example", 3306)
}

/// Runs the client's login against `script`, which plays the server.
async fn login<F, Fut>(options: ConnectOptions, script: F) -> Result<Connection<DuplexStream>, ClientError>
where
    F: FnOnce(Server) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let (client, server) = tokio::io::duplex(1 << 20);
    let server = tokio::spawn(script(Server { pipe: server, buf: Vec::new(), seq: 0 }));
    let result = tokio::time::timeout(Duration::from_secs(10), Connection::handshake(client, &options))
        .await
        .expect("the client must not hang");
    tokio::time::timeout(Duration::from_secs(10), server)
        .await
        .expect("the scripted server must not hang")
        .expect("the scripted server failed its checks");
    result
}

#[tokio::test]
async fn native_password_login_bytes() {
    let conn = login(options(tcp()), |mut s| async move {
        s.send(&greeting(MYSQL8, server_caps(true), "mysql_native_password")).await;
        let r = parse_response41(&s.recv().await);
        assert_eq!(r.user, b"bench");
        assert_eq!(r.database, b"sbtest");
        assert_eq!(r.plugin, b"mysql_native_password");
        assert_eq!(r.auth, native_password::scramble(b"s3cret", &NONCE));
        for cap in [
            Capabilities::PROTOCOL_41,
            Capabilities::SECURE_CONNECTION,
            Capabilities::PLUGIN_AUTH,
            Capabilities::PLUGIN_AUTH_LENENC_CLIENT_DATA,
            Capabilities::CONNECT_WITH_DB,
            Capabilities::TRANSACTIONS,
            Capabilities::MULTI_RESULTS,
            Capabilities::PS_MULTI_RESULTS,
            Capabilities::DEPRECATE_EOF,
        ] {
            assert!(r.caps.contains(cap), "{cap:?} asked for");
        }
        assert!(!r.caps.contains(Capabilities::SSL));
        s.send(OK).await;
    })
    .await
    .unwrap();
    assert_eq!(conn.login().connection_id, 42);
    assert_eq!(conn.login().server_version, MYSQL8);
}

#[tokio::test]
async fn mariadb_auth_switch_to_ed25519_uses_the_new_nonce() {
    let new_nonce: [u8; 32] = *b"ABCDEFGHIJKLMNOPQRSTUVWXYZ012345";
    let mut caps = server_caps(true);
    caps.0 &= !Capabilities::LONG_PASSWORD.0;
    let conn = login(options(tcp()), move |mut s| async move {
        s.send(&greeting(MARIADB, caps, "mysql_native_password")).await;
        let first = s.recv().await;
        assert!(!first.is_empty());
        let mut switch = vec![0xFE];
        switch.put_null_terminated(b"client_ed25519");
        switch.put_bytes(&new_nonce);
        s.send(&switch).await;
        let signature = s.recv().await;
        assert_eq!(signature, ed25519::sign(b"s3cret", &new_nonce), "signed the switch's nonce");
        s.send(OK).await;
    })
    .await
    .unwrap();
    assert!(conn.login().is_mariadb);
    assert_eq!(conn.login().server_version, "10.11.6-MariaDB");
    assert_eq!(conn.login().auth_plugin, AuthPlugin::ClientEd25519);
}

/// MySQL 8's default: caching_sha2_password with the fast path, then a query
/// whose result set ends the way the negotiated capabilities say.
#[tokio::test]
async fn mysql8_caching_sha2_fast_auth_then_query_with_and_without_deprecate_eof() {
    for deprecate_eof in [true, false] {
        let mut opts = options(tcp());
        opts.deprecate_eof = deprecate_eof;
        let mut conn = login(opts, move |mut s| async move {
            s.send(&greeting(MYSQL8, server_caps(true), "caching_sha2_password")).await;
            let r = parse_response41(&s.recv().await);
            assert_eq!(r.plugin, b"caching_sha2_password");
            assert_eq!(r.auth, caching_sha2::scramble(b"s3cret", &NONCE));
            assert_eq!(r.caps.contains(Capabilities::DEPRECATE_EOF), deprecate_eof);
            s.send(&[0x01, 0x03]).await; // fast_auth_success
            s.send(OK).await;
            tokio::spawn(async move {
                // SELECT 1: column count, one column definition, [EOF], one row, EOF or 0xFE-OK.
                assert_eq!(s.recv_command().await, b"\x03SELECT 1");
                s.send(&[0x01]).await;
                s.send(b"\x03def\x00\x00\x00\x011\x00\x0c\x3f\x00\x01\x00\x00\x00\x08\x81\x00\x00\x00\x00").await;
                if !deprecate_eof {
                    s.send(&[0xFE, 0x00, 0x00, 0x02, 0x00]).await;
                }
                s.send(b"\x011").await;
                if deprecate_eof {
                    s.send(&[0xFE, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00]).await;
                } else {
                    s.send(&[0xFE, 0x00, 0x00, 0x02, 0x00]).await;
                }
            });
        })
        .await
        .unwrap();
        assert_eq!(conn.login().auth_plugin, AuthPlugin::CachingSha2Password);
        let response = conn.query("SELECT 1").await.unwrap();
        let set = response.result_sets().next().unwrap();
        assert_eq!(set.text_rows().unwrap(), vec![vec![Some(b"1".to_vec())]]);
    }
}

#[tokio::test]
async fn caching_sha2_full_authentication_over_a_unix_socket_sends_the_password() {
    login(options(Endpoint::unix("/run/mysqld/mysqld.sock")), |mut s| async move {
        s.send(&greeting(MYSQL8, server_caps(true), "caching_sha2_password")).await;
        s.recv().await;
        s.send(&[0x01, 0x04]).await; // perform_full_authentication
        assert_eq!(s.recv().await, b"s3cret\0", "clear text over a socket");
        s.send(OK).await;
    })
    .await
    .unwrap();
}

/// Over plain TCP, with no key given and no leave to fetch one, the login
/// stops at perform_full_authentication: a fake server would send its own
/// key and read the password. Nothing is sent after it.
#[tokio::test]
async fn caching_sha2_full_authentication_over_tcp_is_refused_by_default() {
    let err = login(options(tcp()), |mut s| async move {
        s.send(&greeting(MYSQL8, server_caps(true), "caching_sha2_password")).await;
        s.recv().await;
        s.send(&[0x01, 0x04]).await;
        let mut rest = Vec::new();
        s.pipe.read_to_end(&mut rest).await.unwrap();
        assert_eq!(rest, [] as [u8; 0], "no key request, no password: the client only hangs up");
    })
    .await
    .unwrap_err();
    assert!(matches!(err, ClientError::InsecureAuth { plugin: "caching_sha2_password", .. }), "{err:?}");
    let message = err.to_string();
    for part in [
        "db.example:3306: error 2061",
        "Authentication requires secure connection",
        "--mysql-server-public-key-path=FILE",
        "--mysql-get-server-public-key",
        "--mysql-ssl",
    ] {
        assert!(message.contains(part), "{part:?} not in {message}");
    }
}

/// A switch to sha256_password over plain TCP is refused the same way.
#[tokio::test]
async fn sha256_password_over_tcp_is_refused_by_default() {
    let err = login(options(tcp()), |mut s| async move {
        s.send(&greeting(MYSQL8, server_caps(true), "mysql_native_password")).await;
        s.recv().await;
        let mut switch = b"\xfesha256_password\0".to_vec();
        switch.extend_from_slice(&NONCE);
        switch.push(0);
        s.send(&switch).await;
        let mut rest = Vec::new();
        s.pipe.read_to_end(&mut rest).await.unwrap();
        assert_eq!(rest, [] as [u8; 0], "no key request sent");
    })
    .await
    .unwrap_err();
    assert!(matches!(err, ClientError::InsecureAuth { plugin: "sha256_password", .. }), "{err:?}");
}

/// `--mysql-server-public-key-path`: the key file is read, the password goes
/// encrypted to that key at once, and the server is never asked for its own.
#[tokio::test]
async fn caching_sha2_full_authentication_over_tcp_uses_the_given_key() {
    let mut rng = rand_core_rng();
    let key = RsaPrivateKey::new(&mut rng, 1024).unwrap();
    let pem = key.to_public_key().to_public_key_pem(rsa::pkcs8::LineEnding::LF).unwrap();
    let file = std::env::temp_dir().join(format!("wirebench-transcript-key-{}.pem", std::process::id()));
    std::fs::write(&file, &pem).unwrap();
    let mut opts = options(tcp());
    opts.server_key = ServerKey { pem: Some(ServerKey::read_pem(&file).unwrap()), fetch: false };
    std::fs::remove_file(&file).unwrap();
    let conn = login(opts, move |mut s| async move {
        s.send(&greeting(MYSQL8, server_caps(true), "caching_sha2_password")).await;
        s.recv().await;
        s.send(&[0x01, 0x04]).await;
        let encrypted = s.recv().await;
        assert_ne!(encrypted, [0x02], "the key is not asked for");
        let plain = key.decrypt(Oaep::new::<sha1::Sha1>(), &encrypted).unwrap();
        let expected: Vec<u8> = b"s3cret\0".iter().zip(NONCE.iter().cycle()).map(|(p, n)| p ^ n).collect();
        assert_eq!(plain, expected, "(password NUL) XOR nonce, RSA-OAEP, to the given key");
        s.send(OK).await;
    })
    .await
    .unwrap();
    assert_eq!(conn.login().server_public_key, None, "no key was fetched");
}

/// `--mysql-get-server-public-key`: the server's key is fetched and trusted.
#[tokio::test]
async fn caching_sha2_full_authentication_over_tcp_fetches_the_key_and_encrypts() {
    let mut rng = rand_core_rng();
    let key = RsaPrivateKey::new(&mut rng, 1024).unwrap();
    let pem = key.to_public_key().to_public_key_pem(rsa::pkcs8::LineEnding::LF).unwrap();
    let mut opts = options(tcp());
    opts.server_key.fetch = true;
    let conn = login(opts, move |mut s| async move {
        s.send(&greeting(MYSQL8, server_caps(true), "caching_sha2_password")).await;
        s.recv().await;
        s.send(&[0x01, 0x04]).await;
        assert_eq!(s.recv().await, [0x02], "asks for the public key");
        let mut more = vec![0x01];
        more.extend_from_slice(pem.as_bytes());
        s.send(&more).await;
        let encrypted = s.recv().await;
        let plain = key.decrypt(Oaep::new::<sha1::Sha1>(), &encrypted).unwrap();
        let expected: Vec<u8> = b"s3cret\0".iter().zip(NONCE.iter().cycle()).map(|(p, n)| p ^ n).collect();
        assert_eq!(plain, expected, "(password NUL) XOR nonce, RSA-OAEP");
        s.send(OK).await;
    })
    .await
    .unwrap();
    assert!(conn.login().server_public_key.is_some(), "the fetched key is kept for the next connections");
}

#[tokio::test]
async fn wrong_password_is_the_servers_error() {
    let err = login(options(tcp()), |mut s| async move {
        s.send(&greeting(MYSQL8, server_caps(true), "mysql_native_password")).await;
        s.recv().await;
        s.send(b"\xff\x15\x04#28000Access denied for user 'bench'@'localhost' (using password: YES)").await;
    })
    .await
    .unwrap_err();
    let expected = ServerError {
        code: 1045,
        sql_state: Some(*b"28000"),
        message: "Access denied for user 'bench'@'localhost' (using password: YES)".into(),
    };
    assert_eq!(err.server_error(), Some(&expected));
    assert_eq!(
        err.to_string(),
        "db.example:3306: ERROR 1045 (28000): Access denied for user 'bench'@'localhost' (using password: YES)"
    );
}

/// A server without CLIENT_CONNECT_WITH_DB: the login leaves the database
/// out and COM_INIT_DB selects it after the OK, as libmariadb does; when
/// the server refuses it, the error names the database, the server's own
/// error and what to do, not a bare ERR after a login that looked done.
#[tokio::test]
async fn com_init_db_refused_after_the_login_names_the_database() {
    let mut caps = server_caps(true);
    caps.0 &= !Capabilities::CONNECT_WITH_DB.0;
    let err = login(options(tcp()), move |mut s| async move {
        s.send(&greeting(MYSQL8, caps, "mysql_native_password")).await;
        let response = s.recv().await;
        let asked = Capabilities::from_parts(Reader::new(&response).u32("caps").unwrap(), 0);
        assert!(!asked.contains(Capabilities::CONNECT_WITH_DB), "not asked for when not offered");
        assert!(!response.windows(6).any(|w| w == b"sbtest"), "no database in the login");
        s.send(OK).await;
        assert_eq!(s.recv_command().await, b"\x02sbtest", "COM_INIT_DB of the database");
        s.send(b"\xff\x19\x04#42000Unknown database 'sbtest'").await;
    })
    .await
    .unwrap_err();
    assert!(matches!(err, ClientError::SelectDatabase { ref database, .. } if database == "sbtest"), "{err:?}");
    assert_eq!(err.server_error().map(|e| e.code), Some(1049));
    let message = err.to_string();
    for part in [
        "db.example:3306",
        "no CLIENT_CONNECT_WITH_DB",
        "COM_INIT_DB",
        "database 'sbtest'",
        "ERROR 1049 (42000): Unknown database 'sbtest'",
        "create that database on the server, or name one it has",
    ] {
        assert!(message.contains(part), "{part:?} missing from: {message}");
    }
}

#[tokio::test]
async fn error_instead_of_a_greeting() {
    let err = login(options(tcp()), |mut s| async move {
        s.send(b"\xff\x10\x04Too many connections").await;
    })
    .await
    .unwrap_err();
    assert_eq!(err.to_string(), "db.example:3306: ERROR 1040: Too many connections");
}

#[tokio::test]
async fn server_closes_mid_packet() {
    let err = login(options(tcp()), |mut s| async move {
        let full = greeting(MYSQL8, server_caps(true), "mysql_native_password");
        let mut bytes = Vec::new();
        encode_packet(&mut bytes, 0, &full);
        s.send_raw(&bytes[..30]).await;
        drop(s);
    })
    .await
    .unwrap_err();
    assert!(matches!(err, ClientError::Closed { mid_packet: true, .. }), "{err:?}");
    assert_eq!(err.to_string(), "db.example:3306: the server closed the connection in the middle of a packet");
}

#[tokio::test]
async fn server_closes_after_login_during_a_query() {
    let mut conn = login(options(tcp()), |mut s| async move {
        s.send(&greeting(MYSQL8, server_caps(true), "mysql_native_password")).await;
        s.recv().await;
        s.send(OK).await;
        // Keep the pipe open only until the query arrives, then vanish.
        tokio::spawn(async move {
            s.recv_command().await;
            s.send_raw(&[0x05, 0x00, 0x00, 0x01, 0x01]).await;
        });
    })
    .await
    .unwrap();
    let err = conn.query("SELECT 1").await.unwrap_err();
    assert!(matches!(err, ClientError::Closed { mid_packet: true, .. }), "{err:?}");
}

/// Once logged in, a server that stops answering, or stops reading, ends
/// the command after `read_timeout` / `write_timeout` (libmysqlclient's
/// MYSQL_OPT_READ_TIMEOUT, _WRITE_TIMEOUT); the login itself is the
/// connect timeout's.
#[tokio::test]
async fn read_and_write_timeouts_end_a_stalled_command() {
    let mut opts = options(tcp());
    opts.read_timeout = Some(Duration::from_millis(200));
    opts.write_timeout = Some(Duration::from_millis(200));
    let (client, server) = tokio::io::duplex(64 * 1024);
    let mut s = Server { pipe: server, buf: Vec::new(), seq: 0 };
    let script = async move {
        s.send(&greeting(MYSQL8, server_caps(true), "mysql_native_password")).await;
        s.recv().await;
        // sleep: slower than the read timeout: the login is not under it.
        tokio::time::sleep(Duration::from_millis(400)).await;
        s.send(OK).await;
        s.recv_command().await;
        // sleep: neither answers nor reads any more, the fault under test.
        tokio::time::sleep(Duration::from_secs(5)).await;
    };
    let server = tokio::spawn(script);
    let mut conn = Connection::handshake(client, &opts).await.unwrap();
    let started = std::time::Instant::now();
    let err = conn.query("SELECT 1").await.unwrap_err();
    let waited = started.elapsed();
    assert_eq!(
        err.to_string(),
        "db.example:3306: waiting for the server's answer (--mysql-read-timeout) timed out after 200ms"
    );
    assert!(waited >= Duration::from_millis(200) && waited < Duration::from_secs(2), "{waited:?}");
    let big = format!("SELECT '{}'", "x".repeat(1 << 20));
    let err = conn.query(&big).await.unwrap_err();
    assert_eq!(err.to_string(), "db.example:3306: sending to the server (--mysql-write-timeout) timed out after 200ms");
    server.abort();
}

#[tokio::test]
async fn garbage_is_a_protocol_error() {
    // Not a greeting at all: an HTTP server on the MySQL port.
    let err = login(options(tcp()), |mut s| async move {
        s.send_raw(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n").await;
    })
    .await
    .unwrap_err();
    match err {
        // "HTT" is a 5.5 MB length (its sequence id 'P' is followed, as
        // libmariadb follows any): over the login's 64 KiB, refused at once.
        ClientError::Protocol { source: ProtocolError::PacketTooLarge { size: 0x54_5448, .. }, .. } => {}
        other => panic!("expected a protocol error, got {other:?}"),
    }
    // A well-framed packet that is not a greeting.
    let err = login(options(tcp()), |mut s| async move {
        s.send(&[0x09, 0x01, 0x02]).await;
    })
    .await
    .unwrap_err();
    assert!(
        matches!(err, ClientError::Protocol { source: ProtocolError::UnsupportedProtocolVersion(9), .. }),
        "{err:?}"
    );
}

#[tokio::test]
async fn connect_timeout_names_the_step() {
    // A listener that accepts but never greets.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let silent = tokio::spawn(async move {
        let (socket, _) = listener.accept().await.unwrap();
        // sleep: the server under test never greets.
        tokio::time::sleep(Duration::from_secs(5)).await;
        drop(socket);
    });
    let mut opts = options(Endpoint::tcp("127.0.0.1", port));
    opts.connect_timeout = Duration::from_millis(200);
    let err = Connection::connect(&opts).await.unwrap_err();
    assert_eq!(err.to_string(), format!("127.0.0.1:{port}: connecting and logging in timed out after 200ms"));
    silent.abort();
}

fn rand_core_rng() -> impl rsa::rand_core::CryptoRngCore {
    wirebench_protocol::auth::rand_core::OsRng
}

/// A server that answers the login with an endless flood of well-framed
/// 16 MiB fragments (the most a packet header can announce, with the
/// sequence ids the client expects), counting what the client read.
#[derive(Debug)]
struct Flood {
    served: usize,
}

impl Flood {
    const FRAGMENT: usize = 0xFF_FFFF;

    fn byte_at(pos: usize) -> u8 {
        let (fragment, offset) = (pos / (Self::FRAGMENT + 4), pos % (Self::FRAGMENT + 4));
        match offset {
            0..=2 => 0xFF,
            3 => fragment as u8,
            _ => b'x',
        }
    }
}

impl tokio::io::AsyncRead for Flood {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let n = buf.remaining();
        let start = self.served;
        let bytes: Vec<u8> = (start..start + n).map(Flood::byte_at).collect();
        buf.put_slice(&bytes);
        self.served += n;
        std::task::Poll::Ready(Ok(()))
    }
}

impl tokio::io::AsyncWrite for Flood {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::task::Poll::Ready(Ok(buf.len()))
    }
    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

/// A flood of bytes during the login is refused at its first header, not
/// buffered up to the 64 MiB packet cap (72 MB per connection before):
/// the client reads at most one read buffer's worth.
#[tokio::test]
async fn a_login_flood_is_refused_before_it_is_buffered() {
    use wirebench_protocol::handshake::MAX_LOGIN_PACKET;
    let mut flood = Flood { served: 0 };
    let err = Connection::handshake(&mut flood, &options(tcp())).await.unwrap_err();
    assert!(
        matches!(
            err,
            ClientError::Protocol { source: ProtocolError::PacketTooLarge { max: MAX_LOGIN_PACKET, .. }, .. }
        ),
        "{err:?}"
    );
    assert!(flood.served <= 64 * 1024, "the client read {} bytes of the flood", flood.served);
}
