//! `caching_sha2_password`, the MySQL 8.0+ default.
//!
//! First answer: `SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) ‖ nonce)`. The
//! server replies with AuthMoreData `01 03` (fast_auth_success: its cache
//! knew the account; an OK follows) or `01 04`
//! (perform_full_authentication). Full authentication sends the password:
//! in clear over TLS or a unix socket, else RSA-encrypted
//! ([`super::rsa_key`]) with a known key or one fetched by sending `02`
//! (MySQL's `page_caching_sha2_authentication_exchanges`).

use sha2::{Digest, Sha256};

use super::{rsa_key, CryptoRngCore};
use crate::error::Result;

/// AuthMoreData byte: the cached hash matched; an OK packet follows.
pub const FAST_AUTH_SUCCESS: u8 = 0x03;
/// AuthMoreData byte: the server needs the password itself.
pub const PERFORM_FULL_AUTHENTICATION: u8 = 0x04;
/// The client's request for the server's RSA public key.
pub const REQUEST_PUBLIC_KEY: u8 = 0x02;

/// Bytes of the nonce the scramble uses.
pub const NONCE_LEN: usize = 20;

/// The 32-byte first answer for a non-empty password (an empty password is
/// sent as an empty answer).
pub fn scramble(password: &[u8], nonce: &[u8]) -> [u8; 32] {
    let nonce = nonce.get(..NONCE_LEN).unwrap_or(nonce);
    let stage1: [u8; 32] = Sha256::digest(password).into();
    let stage2: [u8; 32] = Sha256::digest(stage1).into();
    let mask: [u8; 32] = Sha256::new().chain_update(stage2).chain_update(nonce).finalize().into();
    let mut out = stage1;
    for (o, m) in out.iter_mut().zip(mask) {
        *o ^= m;
    }
    out
}

/// What the client sends after `01 04`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FullAuthentication {
    /// Send these bytes (the password in clear, or RSA-encrypted).
    Send(Vec<u8>),
    /// No secure transport and no key: send [`REQUEST_PUBLIC_KEY`] and
    /// encrypt with the PEM key the server answers with.
    RequestPublicKey,
}

/// Decides the answer to perform_full_authentication.
pub fn full_authentication<R: CryptoRngCore>(
    password: &[u8],
    nonce: &[u8],
    secure: bool,
    server_key: Option<&[u8]>,
    rng: &mut R,
) -> Result<FullAuthentication> {
    if secure {
        let mut clear = Vec::with_capacity(password.len() + 1);
        clear.extend_from_slice(password);
        clear.push(0);
        return Ok(FullAuthentication::Send(clear));
    }
    match server_key {
        Some(pem) => Ok(FullAuthentication::Send(rsa_key::encrypt_password(password, nonce, pem, rng)?)),
        None => Ok(FullAuthentication::RequestPublicKey),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::rsa_key::tests::{server_decrypt, test_key, TestRng};

    const NONCE: &[u8; 20] = b")t13MgBS[P\\`NCEp$a>N";

    #[test]
    fn known_answer() {
        // Computed independently with Python's hashlib:
        // xor(sha256(pw), sha256(sha256(sha256(pw)) + nonce)).
        let expected = "01b54665de69dfd84a4e530e842cc8d14cdf6fbe587a598c6d21001e4a8b6854";
        let got: String = scramble(b"sbtest", NONCE).iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn the_server_accepts_it() {
        // The server stores SHA256(SHA256(pw)) in its cache; it unmasks the
        // answer with SHA256(stored ‖ nonce) and checks SHA256(result) == stored.
        let stored = Sha256::digest(Sha256::digest(b"sbtest"));
        let mask = Sha256::new().chain_update(stored).chain_update(NONCE).finalize();
        let answer = scramble(b"sbtest", NONCE);
        let stage1: Vec<u8> = answer.iter().zip(mask).map(|(a, m)| a ^ m).collect();
        assert_eq!(Sha256::digest(&stage1), stored);
    }

    #[test]
    fn full_authentication_choices() {
        let mut rng = TestRng(7);
        assert_eq!(
            full_authentication(b"sbtest", NONCE, true, None, &mut rng),
            Ok(FullAuthentication::Send(b"sbtest\0".to_vec()))
        );
        assert_eq!(
            full_authentication(b"sbtest", NONCE, false, None, &mut rng),
            Ok(FullAuthentication::RequestPublicKey)
        );
        let pem = test_key().1.as_bytes();
        let Ok(FullAuthentication::Send(ct)) = full_authentication(b"sbtest", NONCE, false, Some(pem), &mut rng) else {
            panic!("expected an encrypted password");
        };
        assert_eq!(server_decrypt(&ct, NONCE), b"sbtest\0");
    }
}
