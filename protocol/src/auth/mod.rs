//! Authentication plugins, one file each.
//!
//! Each plugin file holds the pure computation (scrambles, signatures,
//! encryption); the order in which they are used over the wire lives in
//! [`crate::handshake::ClientHandshake`]. Randomness (only RSA-OAEP needs it) comes from the caller.

pub mod caching_sha2;
pub mod clear_password;
pub mod ed25519;
pub mod native_password;
pub mod rsa_key;
pub mod sha256_password;

/// The random number generator traits RSA-OAEP needs (rand_core 0.6, as
/// `rsa` uses), re-exported so callers need no direct dependency on them.
/// `rand_core::OsRng` is the natural generator to pass in.
pub use rsa::rand_core;
pub use rsa::rand_core::{CryptoRng, CryptoRngCore, RngCore};

use crate::error::Result;

/// The authentication plugins wirebench implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AuthPlugin {
    /// `mysql_native_password`: SHA-1 challenge-response.
    MysqlNativePassword,
    /// `caching_sha2_password`: the MySQL 8.0+ default.
    CachingSha2Password,
    /// `sha256_password`: MySQL's RSA- or TLS-protected password, deprecated in 8.0.
    Sha256Password,
    /// `client_ed25519`: MariaDB's Ed25519 signature of the nonce.
    ClientEd25519,
    /// `mysql_clear_password`: the password in clear (PAM, LDAP).
    MysqlClearPassword,
}

impl AuthPlugin {
    /// The plugin a server names, or `None` for one wirebench does not implement.
    pub fn from_name(name: &[u8]) -> Option<Self> {
        Some(match name {
            b"mysql_native_password" => Self::MysqlNativePassword,
            b"caching_sha2_password" => Self::CachingSha2Password,
            b"sha256_password" => Self::Sha256Password,
            b"client_ed25519" => Self::ClientEd25519,
            b"mysql_clear_password" => Self::MysqlClearPassword,
            _ => return None,
        })
    }

    /// The name on the wire.
    pub const fn name(self) -> &'static str {
        match self {
            Self::MysqlNativePassword => "mysql_native_password",
            Self::CachingSha2Password => "caching_sha2_password",
            Self::Sha256Password => "sha256_password",
            Self::ClientEd25519 => "client_ed25519",
            Self::MysqlClearPassword => "mysql_clear_password",
        }
    }

    /// Appends the plugin's first answer to `nonce` (in the handshake
    /// response or after an AuthSwitchRequest).
    ///
    /// `secure` says whether the transport hides the password from
    /// eavesdroppers (TLS or a unix socket); `server_key` is a PEM RSA public
    /// key, when one is known, for `sha256_password`.
    pub fn first_response<R: CryptoRngCore>(
        self,
        password: &[u8],
        nonce: &[u8],
        secure: bool,
        server_key: Option<&[u8]>,
        rng: &mut R,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        match self {
            Self::MysqlNativePassword => {
                // An empty password is sent as an empty response, not as a scramble.
                if !password.is_empty() {
                    out.extend_from_slice(&native_password::scramble(password, nonce));
                }
            }
            Self::CachingSha2Password => {
                if !password.is_empty() {
                    out.extend_from_slice(&caching_sha2::scramble(password, nonce));
                }
            }
            Self::Sha256Password => sha256_password::first_response(password, nonce, secure, server_key, rng, out)?,
            Self::ClientEd25519 => out.extend_from_slice(&ed25519::sign(password, nonce)),
            Self::MysqlClearPassword => clear_password::response(password, secure, out)?,
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for plugin in [
            AuthPlugin::MysqlNativePassword,
            AuthPlugin::CachingSha2Password,
            AuthPlugin::Sha256Password,
            AuthPlugin::ClientEd25519,
            AuthPlugin::MysqlClearPassword,
        ] {
            assert_eq!(AuthPlugin::from_name(plugin.name().as_bytes()), Some(plugin));
        }
        assert_eq!(AuthPlugin::from_name(b"auth_gssapi_client"), None);
        assert_eq!(AuthPlugin::from_name(b"mysql_old_password"), None);
        assert_eq!(AuthPlugin::from_name(b""), None);
    }
}
