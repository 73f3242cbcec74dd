//! TLS to the server with rustls (ring provider): the byte layer that
//! encrypts the packet stream after the SSLRequest, and the client
//! configuration built from `--mysql-ssl*`.
//!
//! The layer is sans-IO like the protocol crate: bytes read from the socket
//! go into [`TlsLayer::decode`], the packet-stream bytes they carry come out;
//! packet-stream bytes go into [`TlsLayer::encode`], TLS records come out.
//! The async client and both engine backends drive the same layer.
//!
//! What the modes mean (see docs/tls.md):
//! - `on` (sysbench 1.0.20): TLS is required; `cacert.pem`, `client-cert.pem`
//!   and `client-key.pem` are taken from the current directory when present
//!   (`--mysql-ssl-ca/-cert/-key` override each). sysbench fails with "No
//!   such file or directory" when one is missing; wirebench goes on without
//!   it and says so. A CA checks the certificate chain, not the host name,
//!   as libmariadb does.
//! - `PREFERRED`, `REQUIRED`, `VERIFY_CA`, `VERIFY_IDENTITY` (sysbench
//!   master, the MySQL client's `--ssl-mode`): only the files named by
//!   options are used; a CA given is always checked.

use std::fmt;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{ring, CryptoProvider};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, ClientConnection, DigitallySignedStruct, RootCertStore, SignatureScheme};
use rustls::{SupportedCipherSuite, SupportedProtocolVersion};
use rustls_pki_types::pem::PemObject;

/// The file names sysbench 1.0.20 passes to `mysql_ssl_set` with `--mysql-ssl=on`.
pub const SYSBENCH_CA: &str = "cacert.pem";
pub const SYSBENCH_CERT: &str = "client-cert.pem";
pub const SYSBENCH_KEY: &str = "client-key.pem";

/// What TLS without a CA means, said once per run (docs/tls.md): the
/// connection is encrypted, but to whoever answers, and a login that sends
/// the password itself sends it to them.
const UNAUTHENTICATED: &str = "the server is not authenticated, and a password sent in full (caching_sha2_password's \
                               full authentication, sha256_password, mysql_clear_password) goes in clear, inside TLS, \
                               to whoever answers; give the CA that signed the server's certificate \
                               (--mysql-ssl-ca=FILE, or cacert.pem with --mysql-ssl=on) to authenticate it";

/// `--mysql-ssl`: sysbench 1.0.20's on/off, or one of sysbench master's
/// modes (the MySQL client's `--ssl-mode` values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SslMode {
    /// `off`, `DISABLED`: no TLS.
    #[default]
    Disabled,
    /// `on`, as sysbench 1.0.20: TLS with `client-key.pem`, `client-cert.pem`
    /// and `cacert.pem` from the current directory, each used when present.
    On,
    /// TLS when the server offers it, else plain text.
    Preferred,
    /// TLS; the server's certificate is checked only against a CA given.
    Required,
    /// TLS; the server's certificate must be signed by `--mysql-ssl-ca`.
    VerifyCa,
    /// As `VerifyCa`, and the certificate must name the host connected to.
    VerifyIdentity,
}

impl SslMode {
    /// The spellings `--mysql-ssl` takes besides sysbench's booleans.
    pub const NAMES: [(&'static str, SslMode); 5] = [
        ("DISABLED", SslMode::Disabled),
        ("PREFERRED", SslMode::Preferred),
        ("REQUIRED", SslMode::Required),
        ("VERIFY_CA", SslMode::VerifyCa),
        ("VERIFY_IDENTITY", SslMode::VerifyIdentity),
    ];

    pub fn enabled(self) -> bool {
        self != SslMode::Disabled
    }
}

impl fmt::Display for SslMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            SslMode::On => "on",
            mode => SslMode::NAMES.iter().find(|(_, m)| m == mode).map_or("?", |(name, _)| name),
        };
        f.write_str(name)
    }
}

/// `--mysql-ssl*`: what a run asks of TLS.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TlsOptions {
    /// `--mysql-ssl`.
    pub mode: SslMode,
    /// `--mysql-ssl-cipher`: OpenSSL cipher names separated by `:`; empty
    /// for the defaults.
    pub cipher: String,
    /// `--mysql-ssl-key/-cert/-ca` (sysbench master). sysbench 1.0.20 uses
    /// `client-key.pem`, `client-cert.pem` and `cacert.pem` in the current
    /// directory when `--mysql-ssl=on`.
    pub key: Option<PathBuf>,
    pub cert: Option<PathBuf>,
    pub ca: Option<PathBuf>,
}

/// A TLS session over one connection: rustls's client state, fed and
/// drained with bytes.
pub struct TlsLayer {
    conn: ClientConnection,
}

impl fmt::Debug for TlsLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsLayer")
            .field("handshaking", &self.conn.is_handshaking())
            .field("cipher", &self.cipher_name())
            .finish()
    }
}

/// A failure of the TLS layer once it runs: the peer's alert, a record that
/// does not decrypt, a certificate refused during the handshake.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("TLS error: {0}")]
    Rustls(#[from] rustls::Error),
    #[error("TLS error: {0}")]
    Io(#[from] io::Error),
}

impl TlsLayer {
    /// Starts a client session: [`write_pending`](Self::write_pending) then
    /// yields the ClientHello.
    /// `host` is the name the server's certificate is checked against
    /// (with VERIFY_IDENTITY) and sent as SNI.
    pub fn new(tls: &ClientTls, host: &str) -> Result<TlsLayer, TlsStartError> {
        let name = tls.server_name(host)?;
        let conn = ClientConnection::new(tls.config.clone(), name).map_err(TlsStartError::Rustls)?;
        Ok(TlsLayer { conn })
    }

    /// True until the handshake is complete (on the client's side).
    pub fn is_handshaking(&self) -> bool {
        self.conn.is_handshaking()
    }

    /// Appends the TLS records rustls wants sent (handshake messages,
    /// alerts, records encrypted by `encode`) to `wire`.
    pub fn write_pending(&mut self, wire: &mut Vec<u8>) -> Result<(), TlsError> {
        while self.conn.wants_write() {
            self.conn.write_tls(wire)?;
        }
        Ok(())
    }

    /// Bytes read from the socket: appends the packet-stream bytes they
    /// carry to `plain`. rustls keeps a partial record itself, so all of
    /// `wire` is consumed; the count is returned for the transport's contract.
    pub fn decode(&mut self, wire: &[u8], plain: &mut Vec<u8>) -> Result<usize, TlsError> {
        let mut rest = wire;
        while !rest.is_empty() {
            // Reads at most one buffer's worth; processing makes room for more.
            if self.conn.read_tls(&mut rest)? == 0 {
                break;
            }
            let state = self.conn.process_new_packets()?;
            let ready = state.plaintext_bytes_to_read();
            if ready > 0 {
                let start = plain.len();
                plain.resize(start + ready, 0);
                let into = plain.get_mut(start..).unwrap_or_default();
                self.conn.reader().read_exact(into)?;
            }
        }
        Ok(wire.len() - rest.len())
    }

    /// Packet-stream bytes to send: appends their TLS records to `wire`
    /// (after anything else pending, such as a handshake message).
    pub fn encode(&mut self, plain: &[u8], wire: &mut Vec<u8>) -> Result<(), TlsError> {
        let mut rest = plain;
        while !rest.is_empty() {
            // rustls buffers a bounded amount (64 KiB): encrypt in turns.
            let n = self.conn.writer().write(rest)?;
            let more = self.conn.wants_write();
            self.write_pending(wire)?;
            if n == 0 && !more {
                return Err(TlsError::Io(io::Error::new(io::ErrorKind::WriteZero, "TLS session accepts no more data")));
            }
            rest = rest.get(n..).unwrap_or_default();
        }
        self.write_pending(wire)
    }

    /// The negotiated suite's IANA name, e.g. `TLS13_AES_256_GCM_SHA384`.
    pub fn cipher_name(&self) -> Option<&'static str> {
        self.conn.negotiated_cipher_suite().and_then(|s| s.suite().as_str())
    }

    /// `TLSv1_3` or `TLSv1_2`, once negotiated.
    pub fn protocol_version(&self) -> Option<&'static str> {
        self.conn.protocol_version().and_then(|v| v.as_str())
    }
}

/// How every connection of a run speaks TLS: built once from the options.
#[derive(Debug, Clone)]
pub struct ClientTls {
    pub mode: SslMode,
    pub config: Arc<ClientConfig>,
    /// The CA file the chain is checked against, for error messages.
    pub ca: Option<PathBuf>,
    /// Whether a client certificate is sent, for error messages.
    pub client_cert: bool,
}

impl ClientTls {
    /// Whether a server without TLS is an error (all modes but PREFERRED).
    pub fn required(&self) -> bool {
        self.mode != SslMode::Preferred
    }

    /// `host` as the name the server's certificate is checked against
    /// (with VERIFY_IDENTITY) and sent as SNI; a host that is no DNS name
    /// or IP address is sent as `localhost` when the name is not checked.
    pub fn server_name(&self, host: &str) -> Result<ServerName<'static>, TlsStartError> {
        let name = |host: &str| {
            ServerName::try_from(host.to_owned())
                .map_err(|e| TlsStartError::NotAServerName { host: host.to_owned(), problem: e.to_string() })
        };
        match name(host) {
            Err(_) if self.mode != SslMode::VerifyIdentity => name("localhost"),
            named => named,
        }
    }

    /// The message for a TLS failure during the login, with what to do.
    pub fn explain(&self, error: &TlsError) -> String {
        let hint = match error {
            TlsError::Rustls(rustls::Error::InvalidCertificate(e)) => self.certificate_hint(e),
            TlsError::Rustls(rustls::Error::AlertReceived(alert)) => {
                let alert = format!("{alert:?}");
                if alert.contains("Certificate") && !self.client_cert {
                    "; the server may want a client certificate: give --mysql-ssl-cert and --mysql-ssl-key (or \
                     client-cert.pem and client-key.pem with --mysql-ssl=on)"
                        .to_owned()
                } else if alert == "HandshakeFailure" || alert == "InsufficientSecurity" {
                    "; the server accepts none of the offered cipher suites and TLS versions: check \
                     --mysql-ssl-cipher and the server's tls_version and ssl_cipher"
                        .to_owned()
                } else {
                    String::new()
                }
            }
            TlsError::Rustls(rustls::Error::PeerIncompatible(_)) => {
                "; the server's TLS is too old for wirebench (TLS 1.2 with ECDHE and AES-GCM or ChaCha20, or TLS \
                 1.3, is needed)"
                    .to_owned()
            }
            _ => String::new(),
        };
        format!("TLS handshake failed: {}{hint}", display_rustls(error))
    }

    fn certificate_hint(&self, error: &CertificateError) -> String {
        let ca = self.ca.as_ref().map_or_else(|| "the CA".to_owned(), |p| p.display().to_string());
        match error {
            CertificateError::UnknownIssuer | CertificateError::BadSignature => {
                format!("; the server's certificate is not signed by {ca}: give the CA that signed it")
            }
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
                "; VERIFY_IDENTITY checks that the certificate names the host connected to: connect with a name \
                 it carries, or use --mysql-ssl=VERIFY_CA to check the CA only"
                    .to_owned()
            }
            CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
                "; the server's certificate has expired".to_owned()
            }
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
                "; the server's certificate is not valid yet (check the clocks)".to_owned()
            }
            _ => String::new(),
        }
    }
}

fn display_rustls(error: &TlsError) -> String {
    match error {
        TlsError::Rustls(e) => e.to_string(),
        TlsError::Io(e) => e.to_string(),
    }
}

/// Why a connection's TLS session could not start.
#[derive(Debug, thiserror::Error)]
pub enum TlsStartError {
    #[error("--mysql-ssl=VERIFY_IDENTITY: host {host:?} is not a valid DNS name or IP address ({problem}): connect with a name its certificate carries, or use --mysql-ssl=VERIFY_CA to check the CA only (see docs/tls.md)")]
    NotAServerName { host: String, problem: String },
    #[error("cannot start TLS: {0}")]
    Rustls(rustls::Error),
}

/// Why the TLS configuration could not be built.
#[derive(Debug, thiserror::Error)]
pub enum TlsConfigError {
    #[error("{option}: cannot read {}: {problem}", path.display())]
    File { option: &'static str, path: PathBuf, problem: String },
    #[error("--mysql-ssl-cipher: unknown or unsupported cipher {name:?}; supported: {}", supported_ciphers().join(", "))]
    Cipher { name: String },
    #[error("{0}")]
    Options(String),
}

/// What `--mysql-ssl*` amount to: the configuration, or none without TLS,
/// and one line for each thing wirebench decided on the user's behalf.
#[derive(Debug)]
pub struct TlsSetup {
    pub tls: Option<ClientTls>,
    pub notes: Vec<String>,
}

/// Builds the client configuration from the options; `cwd` is where `on`
/// looks for sysbench's file names.
pub fn client_tls(options: &TlsOptions, cwd: &Path) -> Result<TlsSetup, TlsConfigError> {
    let mode = options.mode;
    let mut notes = Vec::new();
    if !mode.enabled() {
        return Ok(TlsSetup { tls: None, notes });
    }
    let files = Files::resolve(options, cwd, &mut notes)?;
    if matches!(mode, SslMode::VerifyCa | SslMode::VerifyIdentity) && files.ca.is_none() {
        return Err(TlsConfigError::Options(format!(
            "--mysql-ssl={mode} needs --mysql-ssl-ca=FILE: the CA that signed the server's certificate"
        )));
    }
    let suites = cipher_suites(&options.cipher)?;
    let versions = protocol_versions(&suites);
    let provider = Arc::new(CryptoProvider { cipher_suites: suites, ..ring::default_provider() });
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&versions)
        .map_err(|e| TlsConfigError::Options(format!("--mysql-ssl-cipher: {e}")))?;

    let verifier: Arc<dyn ServerCertVerifier> = match &files.ca {
        None => Arc::new(AnyCertificate { provider: provider.clone() }),
        Some(ca) => {
            let roots = load_roots(ca)?;
            let webpki =
                WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone()).build().map_err(
                    |e| TlsConfigError::File { option: ca.option, path: ca.path.clone(), problem: e.to_string() },
                )?;
            if mode == SslMode::VerifyIdentity {
                webpki
            } else {
                Arc::new(ChainOnly { inner: webpki })
            }
        }
    };
    let builder = builder.dangerous().with_custom_certificate_verifier(verifier);
    let config = match (&files.cert, &files.key) {
        (Some(cert), Some(key)) => {
            let chain = load_certificates(cert)?;
            let key_der = load_key(key)?;
            builder.with_client_auth_cert(chain, key_der).map_err(|e| TlsConfigError::File {
                option: key.option,
                path: key.path.clone(),
                problem: format!("does not go with {}: {e}", cert.path.display()),
            })?
        }
        _ => builder.with_no_client_auth(),
    };
    Ok(TlsSetup {
        tls: Some(ClientTls {
            mode,
            config: Arc::new(config),
            ca: files.ca.map(|f| f.path),
            client_cert: files.cert.is_some(),
        }),
        notes,
    })
}

/// A file and the option it came from (for messages).
#[derive(Debug)]
struct Named {
    option: &'static str,
    path: PathBuf,
}

#[derive(Debug)]
struct Files {
    ca: Option<Named>,
    cert: Option<Named>,
    key: Option<Named>,
}

impl Files {
    fn resolve(options: &TlsOptions, cwd: &Path, notes: &mut Vec<String>) -> Result<Files, TlsConfigError> {
        let explicit =
            |option: &'static str, path: &Option<PathBuf>| path.as_ref().map(|p| Named { option, path: p.clone() });
        let mut files = Files {
            ca: explicit("--mysql-ssl-ca", &options.ca),
            cert: explicit("--mysql-ssl-cert", &options.cert),
            key: explicit("--mysql-ssl-key", &options.key),
        };
        if options.mode == SslMode::On {
            let dir = cwd.display();
            let in_cwd = |slot: &mut Option<Named>, name: &str| {
                if slot.is_none() {
                    let path = cwd.join(name);
                    if path.exists() {
                        *slot = Some(Named { option: "--mysql-ssl=on", path });
                    }
                }
            };
            in_cwd(&mut files.ca, SYSBENCH_CA);
            in_cwd(&mut files.cert, SYSBENCH_CERT);
            in_cwd(&mut files.key, SYSBENCH_KEY);
            if files.ca.is_none() {
                notes.push(format!(
                    "--mysql-ssl=on: {SYSBENCH_CA} not found in {dir}: the server certificate is not verified \
                     (sysbench 1.0.20 stops with \"TLS/SSL error: No such file or directory\"): {UNAUTHENTICATED}"
                ));
            }
            if files.cert.is_none() && files.key.is_none() {
                notes.push(format!(
                    "--mysql-ssl=on: {SYSBENCH_CERT} and {SYSBENCH_KEY} not found in {dir}: no client certificate \
                     is sent (sysbench 1.0.20 stops with \"TLS/SSL error: No such file or directory\")"
                ));
            }
        }
        if files.ca.is_none() && matches!(options.mode, SslMode::Preferred | SslMode::Required) {
            notes.push(format!(
                "--mysql-ssl={} without --mysql-ssl-ca: the server certificate is not verified: {UNAUTHENTICATED}",
                options.mode
            ));
        }
        match (&files.cert, &files.key) {
            (Some(cert), None) => Err(TlsConfigError::Options(format!(
                "{} names client certificate {} but no key goes with it: give --mysql-ssl-key (or {SYSBENCH_KEY} \
                 with --mysql-ssl=on)",
                cert.option,
                cert.path.display()
            ))),
            (None, Some(key)) => Err(TlsConfigError::Options(format!(
                "{} names client key {} but no certificate goes with it: give --mysql-ssl-cert (or \
                 {SYSBENCH_CERT} with --mysql-ssl=on)",
                key.option,
                key.path.display()
            ))),
            _ => Ok(files),
        }
    }
}

fn read_file(file: &Named) -> Result<Vec<u8>, TlsConfigError> {
    std::fs::read(&file.path).map_err(|e| TlsConfigError::File {
        option: file.option,
        path: file.path.clone(),
        problem: e.to_string(),
    })
}

fn pem_problem(file: &Named, what: &str, error: rustls_pki_types::pem::Error) -> TlsConfigError {
    let problem = match error {
        rustls_pki_types::pem::Error::NoItemsFound => format!("it holds no PEM {what}"),
        e => format!("not a valid PEM file ({e})"),
    };
    TlsConfigError::File { option: file.option, path: file.path.clone(), problem }
}

fn load_certificates(file: &Named) -> Result<Vec<CertificateDer<'static>>, TlsConfigError> {
    let bytes = read_file(file)?;
    let certs = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| pem_problem(file, "certificate", e))?;
    if certs.is_empty() {
        return Err(pem_problem(file, "certificate", rustls_pki_types::pem::Error::NoItemsFound));
    }
    Ok(certs)
}

fn load_key(file: &Named) -> Result<PrivateKeyDer<'static>, TlsConfigError> {
    let bytes = read_file(file)?;
    PrivateKeyDer::from_pem_slice(&bytes)
        .map_err(|e| pem_problem(file, "private key (PRIVATE KEY, RSA PRIVATE KEY or EC PRIVATE KEY)", e))
}

fn load_roots(file: &Named) -> Result<RootCertStore, TlsConfigError> {
    let mut roots = RootCertStore::empty();
    for cert in load_certificates(file)? {
        roots.add(cert).map_err(|e| TlsConfigError::File {
            option: file.option,
            path: file.path.clone(),
            problem: format!("not a usable CA certificate: {e}"),
        })?;
    }
    Ok(roots)
}

/// OpenSSL's names for the suites the ring provider implements, with the
/// rustls suite. TLS 1.3 names are the same in OpenSSL and IANA.
const CIPHERS: &[(&str, SupportedCipherSuite)] = {
    use ring::cipher_suite::*;
    &[
        ("TLS_AES_256_GCM_SHA384", TLS13_AES_256_GCM_SHA384),
        ("TLS_AES_128_GCM_SHA256", TLS13_AES_128_GCM_SHA256),
        ("TLS_CHACHA20_POLY1305_SHA256", TLS13_CHACHA20_POLY1305_SHA256),
        ("ECDHE-ECDSA-AES256-GCM-SHA384", TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384),
        ("ECDHE-ECDSA-AES128-GCM-SHA256", TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256),
        ("ECDHE-ECDSA-CHACHA20-POLY1305", TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256),
        ("ECDHE-RSA-AES256-GCM-SHA384", TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384),
        ("ECDHE-RSA-AES128-GCM-SHA256", TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256),
        ("ECDHE-RSA-CHACHA20-POLY1305", TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256),
    ]
};

/// The names `--mysql-ssl-cipher` takes.
pub fn supported_ciphers() -> Vec<&'static str> {
    CIPHERS.iter().map(|(name, _)| *name).collect()
}

/// `--mysql-ssl-cipher`: names separated by `:` (also `,` or blanks, as
/// OpenSSL allows), OpenSSL's or IANA's spelling, any case; empty for all.
/// Only the named suites are offered, so a TLS 1.2 name alone means TLS 1.2.
pub fn cipher_suites(list: &str) -> Result<Vec<SupportedCipherSuite>, TlsConfigError> {
    let mut suites: Vec<SupportedCipherSuite> = Vec::new();
    for name in list.split([':', ',', ' ']).filter(|n| !n.is_empty()) {
        let found = CIPHERS.iter().find(|(openssl, suite)| {
            openssl.eq_ignore_ascii_case(name)
                || suite.suite().as_str().is_some_and(|iana| iana.eq_ignore_ascii_case(name))
        });
        let (_, suite) = found.ok_or_else(|| TlsConfigError::Cipher { name: name.to_owned() })?;
        if !suites.iter().any(|s| s.suite() == suite.suite()) {
            suites.push(*suite);
        }
    }
    if suites.is_empty() {
        suites = ring::default_provider().cipher_suites;
    }
    Ok(suites)
}

fn protocol_versions(suites: &[SupportedCipherSuite]) -> Vec<&'static SupportedProtocolVersion> {
    let mut versions = Vec::new();
    if suites.iter().any(|s| matches!(s, SupportedCipherSuite::Tls13(_))) {
        versions.push(&rustls::version::TLS13);
    }
    if suites.iter().any(|s| matches!(s, SupportedCipherSuite::Tls12(_))) {
        versions.push(&rustls::version::TLS12);
    }
    versions
}

/// No CA: any certificate is accepted, but the handshake signatures are
/// still checked (the connection is encrypted, not authenticated).
#[derive(Debug)]
struct AnyCertificate {
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider.signature_verification_algorithms.supported_schemes()
    }
}

/// The chain must lead to the CA; the host name is not checked (VERIFY_CA,
/// and libmariadb's behaviour with a CA under sysbench 1.0.20).
#[derive(Debug)]
struct ChainOnly {
    inner: Arc<WebPkiServerVerifier>,
}

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self.inner.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
    use rustls::server::{ServerConfig, ServerConnection};

    /// A CA and a server certificate for `names`, as PEM.
    struct Pki {
        ca: String,
        server_cert: String,
        server_key: String,
    }

    fn pki(names: &[&str]) -> Pki {
        static CAS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let n = CAS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        ca_params.distinguished_name.push(DnType::CommonName, format!("unit test CA {n}"));
        let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
        let key = KeyPair::generate().unwrap();
        let params = CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).unwrap();
        let cert = params.signed_by(&key, &ca).unwrap();
        Pki { ca: ca.pem(), server_cert: cert.pem(), server_key: key.serialize_pem() }
    }

    struct Dir(PathBuf);

    impl Dir {
        fn new(name: &str) -> Dir {
            let dir = std::env::temp_dir().join(format!("wirebench-tls-unit-{}-{name}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            Dir(dir)
        }

        fn write(&self, name: &str, contents: &str) -> PathBuf {
            let path = self.0.join(name);
            std::fs::write(&path, contents).unwrap();
            path
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn options(mode: SslMode) -> TlsOptions {
        TlsOptions { mode, ..TlsOptions::default() }
    }

    fn server_config(pki: &Pki) -> Arc<ServerConfig> {
        let certs = CertificateDer::pem_slice_iter(pki.server_cert.as_bytes()).collect::<Result<_, _>>().unwrap();
        let key = PrivateKeyDer::from_pem_slice(pki.server_key.as_bytes()).unwrap();
        let provider = Arc::new(ring::default_provider());
        let config = ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .unwrap();
        Arc::new(config)
    }

    /// Shuttles bytes between the layer and a rustls server until both
    /// are done with the handshake, or one fails.
    fn handshake(client: &mut TlsLayer, server: &mut ServerConnection) -> Result<(), TlsError> {
        for _ in 0..20 {
            let mut wire = Vec::new();
            client.write_pending(&mut wire)?;
            server.read_tls(&mut &wire[..])?;
            if let Err(e) = server.process_new_packets() {
                // The server's alert goes to the client, which reports it.
                let mut alert = Vec::new();
                server.write_tls(&mut alert)?;
                client.decode(&alert, &mut Vec::new())?;
                panic!("the server failed ({e}) but the client did not");
            }
            let mut back = Vec::new();
            while server.wants_write() {
                server.write_tls(&mut back)?;
            }
            let mut plain = Vec::new();
            client.decode(&back, &mut plain)?;
            assert!(plain.is_empty());
            if !client.is_handshaking() && !server.is_handshaking() {
                return Ok(());
            }
        }
        panic!("the handshake did not finish");
    }

    fn connect(tls: &ClientTls, pki: &Pki, host: &str) -> Result<(TlsLayer, ServerConnection), TlsError> {
        let mut client = TlsLayer::new(tls, host).unwrap();
        let mut server = ServerConnection::new(server_config(pki)).unwrap();
        handshake(&mut client, &mut server)?;
        Ok((client, server))
    }

    fn with_ca(mode: SslMode, pki: &Pki, dir: &Dir) -> ClientTls {
        let mut mysql = options(mode);
        mysql.ca = Some(dir.write("ca.pem", &pki.ca));
        client_tls(&mysql, &dir.0).unwrap().tls.unwrap()
    }

    #[test]
    fn cipher_names_map_to_rustls_suites() {
        let suites = cipher_suites("ECDHE-RSA-AES128-GCM-SHA256:tls_aes_256_gcm_sha384").unwrap();
        let names: Vec<_> = suites.iter().map(|s| s.suite().as_str().unwrap()).collect();
        assert_eq!(names, ["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS13_AES_256_GCM_SHA384"]);
        assert_eq!(protocol_versions(&suites).len(), 2);
        // IANA spelling, other separators, duplicates.
        let suites = cipher_suites("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, ECDHE-RSA-AES128-GCM-SHA256").unwrap();
        assert_eq!(suites.len(), 1);
        assert_eq!(protocol_versions(&suites), [&rustls::version::TLS12]);
        assert_eq!(cipher_suites("").unwrap().len(), ring::default_provider().cipher_suites.len());
    }

    #[test]
    fn an_unknown_cipher_is_named_with_the_supported_ones() {
        let err = cipher_suites("TLS_AES_128_GCM_SHA256:AES128-SHA").unwrap_err().to_string();
        assert!(err.contains("\"AES128-SHA\""), "{err}");
        assert!(err.contains("ECDHE-RSA-AES128-GCM-SHA256") && err.contains("TLS_CHACHA20_POLY1305_SHA256"), "{err}");
    }

    #[test]
    fn on_without_files_says_what_it_does() {
        let dir = Dir::new("nofiles");
        let setup = client_tls(&options(SslMode::On), &dir.0).unwrap();
        let tls = setup.tls.unwrap();
        assert!(tls.required() && tls.ca.is_none() && !tls.client_cert);
        assert_eq!(setup.notes.len(), 2, "{:?}", setup.notes);
        let shown = dir.0.display().to_string();
        assert!(setup.notes[0]
            .contains(&format!("cacert.pem not found in {shown}: the server certificate is not verified")));
        assert!(setup.notes[0].contains("the server is not authenticated"), "{}", setup.notes[0]);
        assert!(setup.notes[1].contains("no client certificate is sent"));
        assert!(client_tls(&options(SslMode::Disabled), &dir.0).unwrap().tls.is_none());
    }

    /// TLS without a CA verifies nothing: a password sent in full goes to
    /// whoever answers, and the run says so once; with a CA it does not.
    #[test]
    fn tls_without_a_ca_says_the_server_is_not_authenticated() {
        let pki = pki(&["localhost"]);
        let dir = Dir::new("unauthenticated");
        for mode in [SslMode::Required, SslMode::Preferred] {
            let notes = client_tls(&options(mode), &dir.0).unwrap().notes;
            assert_eq!(notes.len(), 1, "{mode}: {notes:?}");
            let note = &notes[0];
            assert!(note.starts_with(&format!("--mysql-ssl={mode} without --mysql-ssl-ca: ")), "{note}");
            for part in ["the server is not authenticated", "password", "whoever answers", "--mysql-ssl-ca=FILE"] {
                assert!(note.contains(part), "{part:?} not in {note}");
            }
            let mut with_ca = options(mode);
            with_ca.ca = Some(dir.write("ca.pem", &pki.ca));
            assert!(client_tls(&with_ca, &dir.0).unwrap().notes.is_empty(), "{mode} with a CA");
        }
        let mut verify = options(SslMode::VerifyCa);
        verify.ca = Some(dir.write("ca.pem", &pki.ca));
        assert!(client_tls(&verify, &dir.0).unwrap().notes.is_empty());
    }

    #[test]
    fn on_takes_sysbench_file_names_from_the_directory() {
        let pki = pki(&["localhost"]);
        let dir = Dir::new("sysbench-names");
        dir.write(SYSBENCH_CA, &pki.ca);
        let setup = client_tls(&options(SslMode::On), &dir.0).unwrap();
        assert_eq!(setup.notes.len(), 1);
        assert_eq!(setup.tls.unwrap().ca, Some(dir.0.join(SYSBENCH_CA)));
        // A certificate without its key is an error, not a silent choice.
        dir.write(SYSBENCH_CERT, &pki.server_cert);
        let err = client_tls(&options(SslMode::On), &dir.0).unwrap_err().to_string();
        assert!(err.contains("client-cert.pem") && err.contains("no key"), "{err}");
        dir.write(SYSBENCH_KEY, &pki.server_key);
        let setup = client_tls(&options(SslMode::On), &dir.0).unwrap();
        assert!(setup.notes.is_empty());
        assert!(setup.tls.unwrap().client_cert);
        // A key that does not go with the certificate.
        dir.write(SYSBENCH_KEY, &KeyPair::generate().unwrap().serialize_pem());
        let err = client_tls(&options(SslMode::On), &dir.0).unwrap_err().to_string();
        assert!(err.contains("client-key.pem") && err.contains("does not go with"), "{err}");
    }

    #[test]
    fn file_errors_name_the_file_and_the_problem() {
        let dir = Dir::new("bad-files");
        let mut mysql = options(SslMode::Required);
        mysql.ca = Some(dir.0.join("missing.pem"));
        let err = client_tls(&mysql, &dir.0).unwrap_err().to_string();
        assert!(err.starts_with("--mysql-ssl-ca: cannot read ") && err.contains("missing.pem"), "{err}");
        mysql.ca = Some(dir.write("empty.pem", "not a certificate\n"));
        let err = client_tls(&mysql, &dir.0).unwrap_err().to_string();
        assert!(err.contains("empty.pem") && err.contains("holds no PEM certificate"), "{err}");
        mysql.ca = None;
        mysql.cert = Some(dir.write("cert.pem", &pki(&["x"]).server_cert));
        mysql.key = Some(dir.write("key.pem", "-----BEGIN PRIVATE KEY-----\nnot base64!\n-----END PRIVATE KEY-----\n"));
        let err = client_tls(&mysql, &dir.0).unwrap_err().to_string();
        assert!(err.starts_with("--mysql-ssl-key: cannot read ") && err.contains("key.pem"), "{err}");
        mysql.mode = SslMode::VerifyCa;
        let err = client_tls(&mysql, &dir.0).unwrap_err().to_string();
        assert!(err.contains("--mysql-ssl=VERIFY_CA needs --mysql-ssl-ca"), "{err}");
    }

    #[test]
    fn layer_carries_bytes_both_ways_fed_in_pieces() {
        let pki = pki(&["localhost", "127.0.0.1"]);
        let dir = Dir::new("roundtrip");
        let tls = with_ca(SslMode::VerifyIdentity, &pki, &dir);
        let (mut client, mut server) = connect(&tls, &pki, "127.0.0.1").unwrap();
        assert!(client.cipher_name().is_some_and(|c| c.starts_with("TLS13_")));
        let mut wire = Vec::new();
        client.encode(b"\x05\x00\x00\x00\x03ping", &mut wire).unwrap();
        server.read_tls(&mut &wire[..]).unwrap();
        server.process_new_packets().unwrap();
        let mut got = Vec::new();
        let _ = server.reader().read_to_end(&mut got);
        assert_eq!(got, b"\x05\x00\x00\x00\x03ping");

        let message: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        let mut records = Vec::new();
        for part in message.chunks(10_000) {
            server.writer().write_all(part).unwrap();
            while server.wants_write() {
                server.write_tls(&mut records).unwrap();
            }
        }
        let mut plain = Vec::new();
        for piece in records.chunks(7) {
            assert_eq!(client.decode(piece, &mut plain).unwrap(), piece.len());
        }
        assert_eq!(plain, message);

        // More than rustls buffers at once, in one call.
        let mut wire = Vec::new();
        client.encode(&message, &mut wire).unwrap();
        let mut got = Vec::new();
        let mut rest = &wire[..];
        while !rest.is_empty() {
            server.read_tls(&mut rest).unwrap();
            server.process_new_packets().unwrap();
            let _ = server.reader().read_to_end(&mut got);
        }
        assert_eq!(got, message);
    }

    #[test]
    fn tls12_only_when_only_tls12_suites_are_named() {
        let pki = pki(&["localhost"]);
        let dir = Dir::new("tls12");
        let mut mysql = options(SslMode::Required);
        mysql.cipher = "ECDHE-ECDSA-AES128-GCM-SHA256".into();
        let tls = client_tls(&mysql, &dir.0).unwrap().tls.unwrap();
        let (client, _) = connect(&tls, &pki, "localhost").unwrap();
        assert_eq!(client.cipher_name(), Some("TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"));
        assert_eq!(client.protocol_version(), Some("TLSv1_2"));
    }

    #[test]
    fn a_certificate_from_another_ca_is_refused_with_the_ca_file_named() {
        let served = pki(&["localhost"]);
        let other = pki(&["localhost"]);
        let dir = Dir::new("other-ca");
        for mode in [SslMode::VerifyCa, SslMode::Required, SslMode::On] {
            let tls = with_ca(mode, &other, &dir);
            let err = connect(&tls, &served, "localhost").map(drop).unwrap_err();
            let message = tls.explain(&err);
            assert!(message.contains("UnknownIssuer"), "{message}");
            assert!(message.contains(&format!("not signed by {}", dir.0.join("ca.pem").display())), "{message}");
        }
        // Without a CA nothing is checked.
        let unverified = client_tls(&options(SslMode::Required), &dir.0).unwrap().tls.unwrap();
        connect(&unverified, &served, "localhost").unwrap();
    }

    #[test]
    fn only_verify_identity_checks_the_host_name() {
        let pki = pki(&["db.example"]);
        let dir = Dir::new("identity");
        for mode in [SslMode::VerifyCa, SslMode::Required, SslMode::On] {
            connect(&with_ca(mode, &pki, &dir), &pki, "127.0.0.1").unwrap();
        }
        let tls = with_ca(SslMode::VerifyIdentity, &pki, &dir);
        connect(&tls, &pki, "db.example").unwrap();
        let err = connect(&tls, &pki, "127.0.0.1").map(drop).unwrap_err();
        let message = tls.explain(&err);
        assert!(message.contains("not valid for name") || message.contains("NotValidForName"), "{message}");
        assert!(message.contains("VERIFY_CA to check the CA only"), "{message}");
    }

    #[test]
    fn garbage_and_alerts_after_the_handshake_are_errors() {
        let pki = pki(&["localhost"]);
        let dir = Dir::new("garbage");
        let tls = with_ca(SslMode::VerifyCa, &pki, &dir);
        let (mut client, _) = connect(&tls, &pki, "localhost").unwrap();
        let err = client.decode(b"\x17\x03\x03\x00\x05hello", &mut Vec::new()).unwrap_err();
        assert!(matches!(err, TlsError::Rustls(_)), "{err}");
        let (mut client, mut server) = connect(&tls, &pki, "localhost").unwrap();
        server.send_close_notify();
        let mut records = Vec::new();
        server.write_tls(&mut records).unwrap();
        // close_notify: the stream ends cleanly, nothing decoded.
        let mut plain = Vec::new();
        client.decode(&records, &mut plain).unwrap();
        assert!(plain.is_empty());
        // A fatal alert (handshake_failure, level 2 in clear) mid-stream.
        let (mut client, _) = connect(&tls, &pki, "localhost").unwrap();
        let err = client.decode(&[0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28], &mut Vec::new()).unwrap_err();
        assert!(err.to_string().contains("TLS error"), "{err}");
    }
}
