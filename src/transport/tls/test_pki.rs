//! What the TLS unit tests share: a CA and server certificates made on the
//! spot, a scratch directory, and an in-memory rustls server to shake hands
//! with.

use std::path::PathBuf;
use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
use rustls::crypto::ring;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ServerConfig, ServerConnection};
use rustls_pki_types::pem::PemObject;

use super::{client_tls, ClientTls, SslMode, TlsError, TlsLayer, TlsOptions};

/// A CA and a server certificate for `names`, as PEM.
pub(super) struct Pki {
    pub(super) ca: String,
    pub(super) server_cert: String,
    pub(super) server_key: String,
}

pub(super) fn pki(names: &[&str]) -> Pki {
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

/// A scratch directory of the test's own, removed when dropped.
pub(super) struct Dir(pub(super) PathBuf);

impl Dir {
    pub(super) fn new(name: &str) -> Dir {
        let dir = std::env::temp_dir().join(format!("wirebench-tls-unit-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Dir(dir)
    }

    pub(super) fn write(&self, name: &str, contents: &str) -> PathBuf {
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

pub(super) fn options(mode: SslMode) -> TlsOptions {
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
fn run_handshake(client: &mut TlsLayer, server: &mut ServerConnection) -> Result<(), TlsError> {
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

/// A session with `tls` to an in-memory rustls server for `pki`, past its handshake.
pub(super) fn connect(tls: &ClientTls, pki: &Pki, host: &str) -> Result<(TlsLayer, ServerConnection), TlsError> {
    let mut client = TlsLayer::new(tls, host).unwrap();
    let mut server = ServerConnection::new(server_config(pki)).unwrap();
    run_handshake(&mut client, &mut server)?;
    Ok((client, server))
}

/// `mode` with `pki`'s CA written in `dir`.
pub(super) fn with_ca(mode: SslMode, pki: &Pki, dir: &Dir) -> ClientTls {
    let mut mysql = options(mode);
    mysql.ca = Some(dir.write("ca.pem", &pki.ca));
    client_tls(&mysql, &dir.0).unwrap().tls.unwrap()
}
