//! The run's TLS client configuration: built once from `--mysql-ssl*` (the
//! files, the suites, the certificate check each mode asks for), shared by
//! every connection, and the hints for a handshake that failed with it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::ServerCertVerifier;
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{ring, CryptoProvider};
use rustls::pki_types::ServerName;
use rustls::{CertificateError, ClientConfig};

use super::cert_verifiers::{AnyCertificate, ChainOnly};
use super::ciphers::{cipher_suites, protocol_versions};
use super::pem_files::{load_certificates, load_key, load_roots, Files};
use super::{SslMode, TlsConfigError, TlsError, TlsOptions};

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

#[cfg(test)]
mod tests {
    use super::super::test_pki::{connect, options, pki, with_ca, Dir};
    use super::super::SslMode;
    use super::client_tls;

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
}
