//! The server's side of TLS: a certificate chain and its key, read once
//! from PEM files (`wirebench record --ssl-cert --ssl-key`), shared by
//! every connection an application opens.

use std::path::Path;
use std::sync::Arc;

use rustls::crypto::ring;
use rustls::ServerConfig;

use super::pem_files::{load_certificates, load_key, Named};
use super::TlsConfigError;

/// How every connection served speaks TLS: built once from the files.
#[derive(Debug, Clone)]
pub struct ServerTls {
    pub config: Arc<ServerConfig>,
}

/// Reads `cert` (the chain, the server's certificate first) and `key`;
/// TLS 1.2 and 1.3 with rustls' default suites, no client certificate
/// asked for.
pub fn server_tls(cert: &Path, key: &Path) -> Result<ServerTls, TlsConfigError> {
    let cert = Named { option: "--ssl-cert", path: cert.to_owned() };
    let key = Named { option: "--ssl-key", path: key.to_owned() };
    let chain = load_certificates(&cert)?;
    let key_der = load_key(&key)?;
    let config = ServerConfig::builder_with_provider(Arc::new(ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsConfigError::Options(format!("TLS versions: {e}")))?
        .with_no_client_auth()
        .with_single_cert(chain, key_der)
        .map_err(|e| TlsConfigError::File {
            option: key.option,
            path: key.path.clone(),
            problem: format!("does not go with {}: {e}", cert.path.display()),
        })?;
    Ok(ServerTls { config: Arc::new(config) })
}

#[cfg(test)]
mod tests {
    use super::super::test_pki::{pki, with_ca, Dir};
    use super::super::{SslMode, TlsLayer};
    use super::*;

    /// A client layer and a server layer made from files shake hands and
    /// carry bytes both ways.
    #[test]
    fn a_server_layer_serves_a_client_layer() {
        let pki = pki(&["localhost"]);
        let dir = Dir::new("serve");
        let served =
            server_tls(&dir.write("cert.pem", &pki.server_cert), &dir.write("key.pem", &pki.server_key)).unwrap();
        let client_tls = with_ca(SslMode::VerifyIdentity, &pki, &dir);
        let mut client = TlsLayer::new(&client_tls, "localhost").unwrap();
        let mut server = TlsLayer::serve(&served).unwrap();
        let (mut to_server, mut to_client, mut plain) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..10 {
            client.write_pending(&mut to_server).unwrap();
            server.decode(&to_server, &mut plain).unwrap();
            to_server.clear();
            server.write_pending(&mut to_client).unwrap();
            client.decode(&to_client, &mut plain).unwrap();
            to_client.clear();
        }
        assert!(!client.is_handshaking() && !server.is_handshaking());
        client.encode(b"\x01\0\0\0\x0e", &mut to_server).unwrap();
        server.decode(&to_server, &mut plain).unwrap();
        assert_eq!(plain, b"\x01\0\0\0\x0e");
        plain.clear();
        server.encode(b"\x07\0\0\x01\0\0\0\x02\0\0\0", &mut to_client).unwrap();
        client.decode(&to_client, &mut plain).unwrap();
        assert_eq!(plain, b"\x07\0\0\x01\0\0\0\x02\0\0\0");
    }

    #[test]
    fn files_that_do_not_serve_are_named() {
        let pki = pki(&["localhost"]);
        let other = super::super::test_pki::pki(&["localhost"]);
        let dir = Dir::new("serve-bad");
        let cert = dir.write("cert.pem", &pki.server_cert);
        let wrong_key = dir.write("other-key.pem", &other.server_key);
        let message = server_tls(&cert, &wrong_key).unwrap_err().to_string();
        assert!(message.starts_with("--ssl-key: cannot read") && message.contains("does not go with"), "{message}");
        let message = server_tls(&dir.0.join("missing.pem"), &wrong_key).unwrap_err().to_string();
        assert!(message.starts_with("--ssl-cert: cannot read"), "{message}");
        let message = server_tls(&wrong_key, &wrong_key).unwrap_err().to_string();
        assert!(message.contains("holds no PEM certificate"), "{message}");
    }
}
