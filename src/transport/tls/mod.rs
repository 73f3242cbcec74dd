//! TLS to the server with rustls (ring provider): the byte layer that
//! encrypts the packet stream after the SSLRequest, and the client
//! configuration built from `--mysql-ssl*`; and the server's side of it,
//! for `wirebench record`'s applications (`--ssl-cert`, `--ssl-key`).
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
//!
//! Files (this file holds the options and the errors they share):
//! - `tls_session.rs`: one connection's TLS stream ([`TlsLayer`]).
//! - `client_config.rs`: the run's client configuration ([`ClientTls`])
//!   built from the options, and the hints for a failed handshake.
//! - `server_config.rs`: a server's configuration ([`ServerTls`]) from a
//!   certificate and its key.
//! - `pem_files.rs`: which CA, certificate and key files a mode uses, read
//!   from PEM.
//! - `ciphers.rs`: `--mysql-ssl-cipher`'s names, the rustls suites and the
//!   TLS versions they give.
//! - `cert_verifiers.rs`: the server certificate checks without a CA and
//!   with a CA but no host name.
//! - `test_pki.rs`: the unit tests' CAs, certificates and in-memory server.

mod cert_verifiers;
mod ciphers;
mod client_config;
mod pem_files;
mod server_config;
#[cfg(test)]
mod test_pki;
mod tls_session;

pub use client_config::{client_tls, ClientTls, TlsStartError};
pub use server_config::{server_tls, ServerTls};
pub use tls_session::TlsLayer;

use std::fmt;
use std::io;
use std::path::PathBuf;

use ciphers::supported_ciphers;

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

/// A failure of the TLS layer once it runs: the peer's alert, a record that
/// does not decrypt, a certificate refused during the handshake.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("TLS error: {0}")]
    Rustls(#[from] rustls::Error),
    #[error("TLS error: {0}")]
    Io(#[from] io::Error),
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
