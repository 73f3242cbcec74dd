//! `sha256_password` (MySQL, deprecated in 8.0): no scramble, only the
//! password itself, in clear over TLS or a unix socket, else RSA-encrypted
//! ([`super::rsa_key`]). Without a key the client sends `01` and the server
//! answers with AuthMoreData holding its PEM key. An empty password is a
//! single `00` byte.

use super::{rsa_key, CryptoRngCore};
use crate::error::Result;

/// The client's request for the server's RSA public key.
pub const REQUEST_PUBLIC_KEY: u8 = 0x01;

/// Appends the first answer; see the module documentation. When it is
/// [`REQUEST_PUBLIC_KEY`], the next AuthMoreData carries the key for
/// [`rsa_key::encrypt_password`].
pub fn first_response<R: CryptoRngCore>(
    password: &[u8],
    nonce: &[u8],
    secure: bool,
    server_key: Option<&[u8]>,
    rng: &mut R,
    out: &mut Vec<u8>,
) -> Result<()> {
    if secure || password.is_empty() {
        out.extend_from_slice(password);
        out.push(0);
        return Ok(());
    }
    match server_key {
        Some(pem) => out.extend_from_slice(&rsa_key::encrypt_password(password, nonce, pem, rng)?),
        None => out.push(REQUEST_PUBLIC_KEY),
    }
    Ok(())
}

/// Whether [`first_response`] asks for the server's key (so the server's
/// next AuthMoreData is that key).
pub fn requests_public_key(password: &[u8], secure: bool, server_key: Option<&[u8]>) -> bool {
    !secure && !password.is_empty() && server_key.is_none()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::rsa_key::tests::{server_decrypt, test_key, TestRng};

    const NONCE: &[u8; 20] = b"01234567890123456789";

    fn answer(password: &[u8], secure: bool, key: Option<&[u8]>) -> Vec<u8> {
        let mut out = Vec::new();
        first_response(password, NONCE, secure, key, &mut TestRng(5), &mut out).unwrap();
        out
    }

    #[test]
    fn answers() {
        assert_eq!(answer(b"sbtest", true, None), b"sbtest\0");
        assert_eq!(answer(b"", false, None), b"\0");
        assert_eq!(answer(b"sbtest", false, None), [REQUEST_PUBLIC_KEY]);
        assert!(requests_public_key(b"sbtest", false, None));
        assert!(!requests_public_key(b"sbtest", true, None));
        assert!(!requests_public_key(b"", false, None));
        assert!(!requests_public_key(b"sbtest", false, Some(b"key")));
        let ct = answer(b"sbtest", false, Some(test_key().1.as_bytes()));
        assert_eq!(server_decrypt(&ct, NONCE), b"sbtest\0");
    }
}
