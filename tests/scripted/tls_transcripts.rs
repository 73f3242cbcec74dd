//! The login and commands over TLS against scripted servers: each test plays
//! a server's side over an in-memory pipe, with rustls as the server's TLS,
//! and checks the client's bytes after decryption. MySQL 8's
//! caching_sha2_password full authentication sends the password in clear
//! inside TLS; the refusals (no TLS offered, a certificate from another CA,
//! a wrong host name) and broken streams must be errors that say what to do.

use crate::common;

use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::Arc;

use common::{greeting, ScratchDir, NONCE};
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ServerConfig, ServerConnection};
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};
use wirebench::client::{ClientError, ConnectOptions, Connection, Endpoint};
use wirebench::transport::client_tls;
use wirebench::transport::{SslMode, TlsOptions};
use wirebench_protocol::buf::Reader;
use wirebench_protocol::framing::{decode_packet, encode_packet};
use wirebench_protocol::Capabilities;

const OK: &[u8] = &[0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00];

/// A CA and a server certificate it signed for `names`.
struct Pki {
    ca_pem: String,
    server: Arc<ServerConfig>,
}

fn pki(ca_name: &str, names: &[&str]) -> Pki {
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.distinguished_name.push(DnType::CommonName, ca_name);
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let key = KeyPair::generate().unwrap();
    let params = CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).unwrap();
    let cert = params.signed_by(&key, &ca).unwrap();
    let chain = vec![CertificateDer::from_pem_slice(cert.pem().as_bytes()).unwrap()];
    let key = PrivateKeyDer::from_pem_slice(key.serialize_pem().as_bytes()).unwrap();
    let server = ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap();
    Pki { ca_pem: ca.pem(), server: Arc::new(server) }
}

/// Client options for `mode`, with `ca` as --mysql-ssl-ca when given.
fn tls_options(dir: &ScratchDir, mode: SslMode, ca: Option<&str>, host: &str) -> ConnectOptions {
    let mysql = TlsOptions { mode, ca: ca.map(|pem| dir.write("ca.pem", pem)), ..TlsOptions::default() };
    let setup = client_tls(&mysql, &dir.0).unwrap();
    let mut options = ConnectOptions::new(Endpoint::tcp(host, 3306), "sbtest", "sbtest").database("sbtest");
    options.tls = setup.tls;
    options
}

fn server_caps(ssl: bool) -> Capabilities {
    let mut caps = Capabilities::LONG_PASSWORD
        | Capabilities::PROTOCOL_41
        | Capabilities::SECURE_CONNECTION
        | Capabilities::PLUGIN_AUTH
        | Capabilities::PLUGIN_AUTH_LENENC_CLIENT_DATA
        | Capabilities::CONNECT_WITH_DB
        | Capabilities::TRANSACTIONS
        | Capabilities::MULTI_RESULTS
        | Capabilities::MULTI_STATEMENTS
        | Capabilities::CONNECT_ATTRS
        | Capabilities::DEPRECATE_EOF;
    if ssl {
        caps |= Capabilities::SSL;
    }
    caps
}

/// The server's side: clear packets until `start_tls`, then TLS records.
struct Server {
    pipe: DuplexStream,
    tls: Option<ServerConnection>,
    /// Packet-stream bytes received and not yet taken.
    plain: Vec<u8>,
    seq: u8,
}

impl Server {
    fn new(pipe: DuplexStream) -> Self {
        Server { pipe, tls: None, plain: Vec::new(), seq: 0 }
    }

    async fn write_out(&mut self, bytes: &[u8]) {
        match &mut self.tls {
            None => self.pipe.write_all(bytes).await.unwrap(),
            Some(tls) => {
                tls.writer().write_all(bytes).unwrap();
                self.flush_tls().await;
            }
        }
    }

    async fn flush_tls(&mut self) {
        let tls = self.tls.as_mut().unwrap();
        let mut out = Vec::new();
        while tls.wants_write() {
            tls.write_tls(&mut out).unwrap();
        }
        if !out.is_empty() {
            self.pipe.write_all(&out).await.unwrap();
        }
    }

    /// Reads more from the client; false once it has closed.
    async fn read_more(&mut self) -> bool {
        let mut chunk = vec![0u8; 64 * 1024];
        let n = self.pipe.read(&mut chunk).await.unwrap();
        if n == 0 {
            return false;
        }
        match &mut self.tls {
            None => self.plain.extend_from_slice(&chunk[..n]),
            Some(tls) => {
                let mut rest = &chunk[..n];
                while !rest.is_empty() {
                    tls.read_tls(&mut rest).unwrap();
                    tls.process_new_packets().unwrap();
                    let _ = tls.reader().read_to_end(&mut self.plain);
                }
            }
        }
        true
    }

    async fn send(&mut self, payload: &[u8]) {
        let mut out = Vec::new();
        self.seq = encode_packet(&mut out, self.seq, payload);
        self.write_out(&out).await;
    }

    /// The next packet, whole (header included), with the expected sequence id.
    async fn recv_raw(&mut self) -> Vec<u8> {
        loop {
            if let Some(frame) = decode_packet(&self.plain, self.seq, 1 << 24).unwrap() {
                self.seq = frame.next_seq;
                return self.plain.drain(..frame.consumed).collect();
            }
            assert!(self.read_more().await, "the client closed the connection");
        }
    }

    async fn recv(&mut self) -> Vec<u8> {
        self.recv_raw().await[4..].to_vec()
    }

    /// Switches to TLS: what the client sent after the SSLRequest (its
    /// ClientHello, often in the same read) is TLS input.
    fn accept_tls(&mut self, config: Arc<ServerConfig>) {
        let mut tls = ServerConnection::new(config).unwrap();
        let early = std::mem::take(&mut self.plain);
        let mut rest = &early[..];
        while !rest.is_empty() {
            tls.read_tls(&mut rest).unwrap();
        }
        self.tls = Some(tls);
    }

    /// The TLS handshake, as the server.
    async fn start_tls(&mut self, config: Arc<ServerConfig>) {
        self.accept_tls(config);
        self.tls.as_mut().unwrap().process_new_packets().unwrap();
        while self.tls.as_ref().unwrap().is_handshaking() {
            if self.tls.as_ref().unwrap().wants_write() {
                self.flush_tls().await;
            } else {
                assert!(self.read_more().await, "the client left during the TLS handshake");
            }
        }
        self.flush_tls().await;
    }

    /// Greeting with SSL, the SSLRequest in clear, then TLS.
    async fn greet_and_start_tls(&mut self, config: Arc<ServerConfig>, plugin: &str) {
        self.send(&greeting("8.0.36", server_caps(true), plugin)).await;
        let request = self.recv().await;
        assert_eq!(request.len(), 32, "an SSLRequest is the 32-byte prefix of a handshake response");
        let caps = Capabilities::from_parts(Reader::new(&request).u32("caps").unwrap(), 0);
        assert!(caps.contains(Capabilities::SSL));
        self.start_tls(config).await;
    }
}

/// Logs in against `script`, which goes on in its task: await its handle
/// for the server's end once the client is done with it.
async fn login(
    options: ConnectOptions,
    script: impl FnOnce(Server) -> tokio::task::JoinHandle<Server>,
) -> (Result<Connection<DuplexStream>, ClientError>, tokio::task::JoinHandle<Server>) {
    let (client, server) = tokio::io::duplex(1 << 20);
    let server = script(Server::new(server));
    let result = Connection::handshake(client, &options).await;
    (result, server)
}

/// The user name and auth response out of a HandshakeResponse41.
fn response41(payload: &[u8]) -> (Capabilities, Vec<u8>, Vec<u8>) {
    let mut r = Reader::new(payload);
    let caps = Capabilities::from_parts(r.u32("caps").unwrap(), 0);
    r.take(4 + 1 + 23, "max packet, charset, filler").unwrap();
    let user = r.null_terminated("user").unwrap().to_vec();
    let auth = r.lenenc_bytes("auth").unwrap().to_vec();
    (caps, user, auth)
}

#[tokio::test]
async fn caching_sha2_full_auth_over_tls_sends_the_password_in_clear_inside_tls() {
    let pki = pki("transcript CA", &["localhost", "127.0.0.1"]);
    let dir = ScratchDir::new("tls-full-auth");
    let options = tls_options(&dir, SslMode::VerifyIdentity, Some(&pki.ca_pem), "127.0.0.1");
    let config = pki.server.clone();
    let (conn, server) = login(options, |mut server| {
        tokio::spawn(async move {
            server.greet_and_start_tls(config, "caching_sha2_password").await;
            // Inside TLS: the handshake response carries sequence id 2.
            let (caps, user, auth) = response41(&server.recv().await);
            assert!(caps.contains(Capabilities::SSL));
            assert_eq!(user, b"sbtest");
            assert_eq!(auth, wirebench_protocol::auth::caching_sha2::scramble(b"sbtest", &NONCE));
            // perform_full_authentication: over TLS the password goes as is.
            server.send(&[0x01, 0x04]).await;
            let packet = server.recv_raw().await;
            assert_eq!(packet, b"\x07\x00\x00\x04sbtest\x00", "the clear password, NUL-terminated, seq 4");
            server.send(OK).await;
            // A query inside TLS, and its OK.
            server.seq = 0;
            assert_eq!(server.recv_raw().await, b"\x05\x00\x00\x00\x03DO 1");
            server.send(OK).await;
            // An unsolicited packet the client reads but does not consume
            // before it hands the connection over.
            server.seq = 0;
            server.send(b"\x00\x00\x00\x02\x00\x00\x00\x00").await;
            server
        })
    })
    .await;
    let mut conn = conn.unwrap_or_else(|e| panic!("{e}"));
    assert!(conn.tls_cipher().is_some_and(|c| c.starts_with("TLS13_")), "{:?}", conn.tls_cipher());
    conn.query_drop("DO 1").await.unwrap();
    let (mut stream, wire, _login, mut transport) = conn.into_parts();
    assert!(!transport.is_plain());
    let mut plain = Vec::new();
    transport.decode(&wire, &mut plain).unwrap();
    if plain.is_empty() {
        // Still on the pipe: read it the way an event loop would.
        let mut chunk = vec![0u8; 4096];
        let n = stream.read(&mut chunk).await.unwrap();
        transport.decode(&chunk[..n], &mut plain).unwrap();
    }
    assert_eq!(plain, b"\x08\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00");
    let mut server = server.await.unwrap();
    // The client's next command, encoded by the handed-over transport,
    // decrypts on the server.
    let mut wire = Vec::new();
    transport.encode(b"\x01\x00\x00\x00\x0e", &mut wire).unwrap();
    let tls = server.tls.as_mut().unwrap();
    tls.read_tls(&mut &wire[..]).unwrap();
    tls.process_new_packets().unwrap();
    let mut got = Vec::new();
    let _ = tls.reader().read_to_end(&mut got);
    assert_eq!(got, b"\x01\x00\x00\x00\x0e");
}

#[tokio::test]
async fn a_server_without_tls_is_refused_when_tls_is_required() {
    let dir = ScratchDir::new("tls-not-offered");
    for mode in [SslMode::On, SslMode::Required, SslMode::VerifyCa] {
        let ca = pki("unused CA", &["localhost"]).ca_pem;
        let options = tls_options(&dir, mode, Some(&ca), "db1");
        let (result, _server) = login(options, |mut server| {
            tokio::spawn(async move {
                server.send(&greeting("8.0.36", server_caps(false), "mysql_native_password")).await;
                server
            })
        })
        .await;
        let message = result.unwrap_err().to_string();
        assert!(
            message
                .starts_with(&format!("db1:3306: --mysql-ssl={mode} requires TLS, and the server does not offer it")),
            "{message}"
        );
        assert!(message.contains("ssl_cert") && message.contains("--mysql-ssl=PREFERRED"), "{message}");
    }
}

#[tokio::test]
async fn preferred_falls_back_to_plain_text() {
    let dir = ScratchDir::new("tls-preferred");
    let options = tls_options(&dir, SslMode::Preferred, None, "localhost");
    let (result, _server) = login(options, |mut server| {
        tokio::spawn(async move {
            server.send(&greeting("8.0.36", server_caps(false), "mysql_native_password")).await;
            let (caps, user, _) = response41(&server.recv().await);
            assert!(!caps.contains(Capabilities::SSL));
            assert_eq!(user, b"sbtest");
            server.send(OK).await;
            server
        })
    })
    .await;
    let conn = result.unwrap();
    assert_eq!(conn.tls_cipher(), None);
}

/// Runs a login whose TLS handshake the client must refuse; the server's
/// side only needs to survive it.
async fn refused_handshake(options: ConnectOptions, served: Arc<ServerConfig>) -> String {
    let (result, _server) = login(options, |mut server| {
        tokio::spawn(async move {
            server.send(&greeting("8.0.36", server_caps(true), "mysql_native_password")).await;
            server.recv().await;
            server.accept_tls(served);
            // Play the handshake until the client gives up.
            loop {
                if server.tls.as_mut().unwrap().process_new_packets().is_err() {
                    break;
                }
                if server.tls.as_ref().unwrap().wants_write() {
                    server.flush_tls().await;
                }
                let mut chunk = vec![0u8; 16 * 1024];
                let n = server.pipe.read(&mut chunk).await.unwrap_or(0);
                if n == 0 {
                    break;
                }
                let _ = server.tls.as_mut().unwrap().read_tls(&mut &chunk[..n]);
            }
            server
        })
    })
    .await;
    result.unwrap_err().to_string()
}

#[tokio::test]
async fn a_certificate_signed_by_another_ca_is_refused() {
    let served = pki("the server's CA", &["localhost"]);
    let trusted = pki("another CA", &["localhost"]);
    let dir = ScratchDir::new("tls-other-ca");
    let options = tls_options(&dir, SslMode::VerifyCa, Some(&trusted.ca_pem), "localhost");
    let message = refused_handshake(options, served.server).await;
    let ca: PathBuf = dir.0.join("ca.pem");
    assert!(message.starts_with("localhost:3306: TLS handshake failed: invalid peer certificate"), "{message}");
    assert!(message.contains(&format!("not signed by {}", ca.display())), "{message}");
}

#[tokio::test]
async fn verify_identity_refuses_a_certificate_for_another_host() {
    let pki = pki("identity CA", &["db.example"]);
    let dir = ScratchDir::new("tls-identity");
    let options = tls_options(&dir, SslMode::VerifyIdentity, Some(&pki.ca_pem), "127.0.0.1");
    let message = refused_handshake(options, pki.server.clone()).await;
    assert!(message.contains("TLS handshake failed") && message.contains("db.example"), "{message}");
    assert!(message.contains("--mysql-ssl=VERIFY_CA to check the CA only"), "{message}");
    // VERIFY_CA on the same certificate logs in.
    let options = tls_options(&dir, SslMode::VerifyCa, Some(&pki.ca_pem), "127.0.0.1");
    let config = pki.server.clone();
    let (result, _server) = login(options, |mut server| {
        tokio::spawn(async move {
            server.greet_and_start_tls(config, "mysql_native_password").await;
            server.recv().await;
            server.send(OK).await;
            server
        })
    })
    .await;
    result.unwrap();
}

#[tokio::test]
async fn garbage_or_an_alert_where_tls_records_belong_is_an_error() {
    let pki = pki("garbage CA", &["localhost"]);
    let dir = ScratchDir::new("tls-garbage");
    // Mid-stream: after the login, where the answer to a query belongs.
    let garbage: [&[u8]; 3] = [
        b"HTTP/1.1 400 Bad Request\r\n\r\n",
        // A fatal alert record in clear (handshake_failure).
        &[0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28],
        // A record header announcing more than TLS allows.
        &[0x17, 0x03, 0x03, 0xff, 0xff, 0x00],
    ];
    for bytes in garbage {
        let options = tls_options(&dir, SslMode::VerifyCa, Some(&pki.ca_pem), "localhost");
        let config = pki.server.clone();
        let (result, _server) = login(options, |mut server| {
            tokio::spawn(async move {
                server.greet_and_start_tls(config, "mysql_native_password").await;
                server.recv().await;
                server.send(OK).await;
                server.seq = 0;
                server.recv().await;
                server.pipe.write_all(bytes).await.unwrap();
                server
            })
        })
        .await;
        let mut conn = result.unwrap();
        let err = conn.query_drop("DO 1").await.unwrap_err();
        assert!(matches!(err, ClientError::Transport { .. }), "{err:?}");
        assert!(err.to_string().contains("TLS error") && err.to_string().contains("cannot continue"), "{err}");
    }
    // During the handshake: the server answers the ClientHello with garbage.
    let options = tls_options(&dir, SslMode::VerifyCa, Some(&pki.ca_pem), "localhost");
    let (result, _server) = login(options, |mut server| {
        tokio::spawn(async move {
            server.send(&greeting("8.0.36", server_caps(true), "mysql_native_password")).await;
            server.recv().await;
            server.pipe.write_all(b"\x16\x03\x01\x00\x04\xff\xff\xff\xff").await.unwrap();
            server
        })
    })
    .await;
    let message = result.unwrap_err().to_string();
    assert!(message.starts_with("localhost:3306: TLS handshake failed"), "{message}");
    // Or closes the connection.
    let options = tls_options(&dir, SslMode::VerifyCa, Some(&pki.ca_pem), "localhost");
    let (result, _server) = login(options, |mut server| {
        tokio::spawn(async move {
            server.send(&greeting("8.0.36", server_caps(true), "mysql_native_password")).await;
            server.recv().await;
            server.pipe.shutdown().await.unwrap();
            let mut sink = Vec::new();
            let _ = server.pipe.read_to_end(&mut sink).await;
            server
        })
    })
    .await;
    let message = result.unwrap_err().to_string();
    assert!(message.contains("closed the connection during the TLS handshake"), "{message}");
}

/// The binary against a server without TLS (the null server): `on` stops
/// with the advice, PREFERRED runs in plain text and says so, and a bad
/// cipher name or a missing file stops before connecting.
#[test]
fn the_command_line_against_a_server_without_tls() {
    use wirebench::null_server::{NullServer, NullServerConfig};
    let config = NullServerConfig { tcp: Some("127.0.0.1:0".parse().unwrap()), ..NullServerConfig::default() };
    let server = NullServer::start(config).expect("the null server starts");
    let addr = server.local_addr().expect("it listens on TCP");
    let dir = ScratchDir::new("tls-cli");
    let run = |extra: &[&str]| {
        let output = common::wirebench()
            .args(["oltp_point_select", "--mysql-host=127.0.0.1", "--events=20", "--time=0"])
            .arg(format!("--mysql-port={}", addr.port()))
            .args(extra)
            .arg("run")
            .current_dir(&dir.0)
            .output()
            .unwrap();
        (output.status.success(), String::from_utf8_lossy(&output.stderr).into_owned())
    };
    let (ok, stderr) = run(&["--mysql-ssl=on"]);
    assert!(!ok);
    assert!(stderr.contains(&format!("cacert.pem not found in {}", dir.0.display())), "{stderr}");
    assert!(
        stderr.contains(&format!("FATAL: unable to connect: 127.0.0.1:{}: --mysql-ssl=on requires TLS", addr.port())),
        "{stderr}"
    );
    let (ok, stderr) = run(&["--mysql-ssl=PREFERRED"]);
    assert!(ok, "{stderr}");
    assert!(stderr.contains("--mysql-ssl=PREFERRED: 127.0.0.1:") && stderr.contains("offers no TLS"), "{stderr}");
    let (ok, stderr) = run(&["--mysql-ssl=REQUIRED", "--mysql-ssl-cipher=RC4-MD5"]);
    assert!(!ok);
    assert!(stderr.contains("FATAL: --mysql-ssl-cipher: unknown or unsupported cipher \"RC4-MD5\""), "{stderr}");
    let (ok, stderr) = run(&["--mysql-ssl=VERIFY_CA", "--mysql-ssl-ca=nowhere.pem"]);
    assert!(!ok);
    assert!(stderr.contains("FATAL: --mysql-ssl-ca: cannot read nowhere.pem"), "{stderr}");
    // Off: nothing about TLS.
    let (ok, stderr) = run(&["--mysql-ssl=off"]);
    assert!(ok && !stderr.contains("TLS"), "{stderr}");
}
