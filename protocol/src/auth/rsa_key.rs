//! The RSA path shared by `caching_sha2_password` and `sha256_password`:
//! over an unencrypted connection the password travels as
//! `RSA_OAEP(server key, (pw ‖ 0x00) XOR nonce[i % 20])`.
//!
//! The server decrypts with `RSA_PKCS1_OAEP_PADDING`, which is OAEP with
//! SHA-1 and MGF1-SHA-1; the XOR with its own scramble stops a captured
//! ciphertext from being replayed on another connection.

use rsa::pkcs1::DecodeRsaPublicKey;
use rsa::pkcs8::DecodePublicKey;
use rsa::{Oaep, RsaPublicKey};

use super::CryptoRngCore;
use crate::error::{ProtocolError, Result};

/// Bytes of the nonce the mask cycles over (the server's SCRAMBLE_LENGTH).
const NONCE_LEN: usize = 20;

/// Parses the server's public key as it sends it (`-----BEGIN PUBLIC KEY-----`,
/// SubjectPublicKeyInfo) or as PKCS#1 (`-----BEGIN RSA PUBLIC KEY-----`).
/// Surrounding whitespace and NULs are ignored.
pub fn parse_public_key(pem: &[u8]) -> Result<RsaPublicKey> {
    let text = std::str::from_utf8(pem)
        .map_err(|_| ProtocolError::Auth("the server's RSA public key is not PEM text".into()))?
        .trim_matches(|c: char| c == '\0' || c.is_ascii_whitespace());
    let key = if text.starts_with("-----BEGIN RSA PUBLIC KEY-----") {
        RsaPublicKey::from_pkcs1_pem(text).map_err(|e| e.to_string())
    } else {
        RsaPublicKey::from_public_key_pem(text).map_err(|e| e.to_string())
    };
    key.map_err(|e| ProtocolError::Auth(format!("cannot read the server's RSA public key: {e}")))
}

/// The password encrypted for the server: see the module documentation.
pub fn encrypt_password<R: CryptoRngCore>(password: &[u8], nonce: &[u8], pem: &[u8], rng: &mut R) -> Result<Vec<u8>> {
    let nonce = nonce.get(..NONCE_LEN).unwrap_or(nonce);
    if nonce.is_empty() {
        return Err(ProtocolError::Auth("the server sent an empty nonce".into()));
    }
    let key = parse_public_key(pem)?;
    let masked: Vec<u8> =
        password.iter().chain(core::iter::once(&0u8)).zip(nonce.iter().cycle()).map(|(p, n)| p ^ n).collect();
    key.encrypt(rng, Oaep::new::<sha1::Sha1>(), &masked)
        .map_err(|e| ProtocolError::Auth(format!("RSA encryption of the password failed: {e}")))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use rsa::pkcs1::EncodeRsaPublicKey;
    use rsa::pkcs8::{EncodePublicKey, LineEnding};
    use rsa::rand_core::{CryptoRng, RngCore};
    use rsa::RsaPrivateKey;
    use std::sync::OnceLock;

    /// A deterministic generator for tests only: SplitMix64. Marked
    /// `CryptoRng` because the API demands it; never use it outside tests.
    #[derive(Debug, Clone)]
    pub(crate) struct TestRng(pub u64);

    impl RngCore for TestRng {
        fn next_u32(&mut self) -> u32 {
            self.next_u64() as u32
        }
        fn next_u64(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
        fn fill_bytes(&mut self, dest: &mut [u8]) {
            for chunk in dest.chunks_mut(8) {
                let v = self.next_u64().to_le_bytes();
                chunk.copy_from_slice(&v[..chunk.len()]);
            }
        }
        fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rsa::rand_core::Error> {
            self.fill_bytes(dest);
            Ok(())
        }
    }
    impl CryptoRng for TestRng {}

    /// One 1024-bit key pair per test binary (generation is slow in debug builds).
    pub(crate) fn test_key() -> &'static (RsaPrivateKey, String) {
        static KEY: OnceLock<(RsaPrivateKey, String)> = OnceLock::new();
        KEY.get_or_init(|| {
            let private = RsaPrivateKey::new(&mut TestRng(42), 1024).unwrap();
            let pem = private.to_public_key().to_public_key_pem(LineEnding::LF).unwrap();
            (private, pem)
        })
    }

    /// What the server does with the ciphertext: decrypt, then unmask with its nonce.
    pub(crate) fn server_decrypt(ciphertext: &[u8], nonce: &[u8]) -> Vec<u8> {
        let plain = test_key().0.decrypt(Oaep::new::<sha1::Sha1>(), ciphertext).unwrap();
        plain.iter().enumerate().map(|(i, b)| b ^ nonce[i % 20]).collect()
    }

    const NONCE: &[u8; 20] = b"abcdefghij0123456789";

    #[test]
    fn oaep_round_trip() {
        let (_, pem) = test_key();
        let ct = encrypt_password(b"sbtest", NONCE, pem.as_bytes(), &mut TestRng(1)).unwrap();
        assert_eq!(ct.len(), 128);
        assert_eq!(server_decrypt(&ct, NONCE), b"sbtest\0");
        // A password longer than the nonce wraps around it.
        let long = b"a password that is longer than twenty bytes";
        let ct = encrypt_password(long, NONCE, pem.as_bytes(), &mut TestRng(2)).unwrap();
        let mut expected = long.to_vec();
        expected.push(0);
        assert_eq!(server_decrypt(&ct, NONCE), expected);
        // OAEP is randomised: another rng gives another ciphertext for the same input.
        let again = encrypt_password(long, NONCE, pem.as_bytes(), &mut TestRng(3)).unwrap();
        assert_ne!(ct, again);
    }

    #[test]
    fn key_forms() {
        let public = test_key().0.to_public_key();
        let spki = public.to_public_key_pem(LineEnding::LF).unwrap();
        let pkcs1 = public.to_pkcs1_pem(LineEnding::CRLF).unwrap();
        assert_eq!(parse_public_key(spki.as_bytes()).unwrap(), public);
        assert_eq!(parse_public_key(pkcs1.as_bytes()).unwrap(), public);
        // As a server may send it: trailing newline and NUL.
        let padded = format!("\n{spki}\n\0");
        assert_eq!(parse_public_key(padded.as_bytes()).unwrap(), public);
    }

    #[test]
    fn bad_keys_and_nonces_are_errors() {
        assert!(matches!(parse_public_key(b"not a key"), Err(ProtocolError::Auth(_))));
        assert!(matches!(parse_public_key(&[0xFF, 0xFE]), Err(ProtocolError::Auth(_))));
        let pem = test_key().1.as_bytes();
        assert!(matches!(encrypt_password(b"pw", b"", pem, &mut TestRng(1)), Err(ProtocolError::Auth(_))));
        // Too long for one 1024-bit OAEP block (128 - 42 = 86 bytes at most).
        let huge = [b'x'; 100];
        assert!(matches!(encrypt_password(&huge, NONCE, pem, &mut TestRng(1)), Err(ProtocolError::Auth(_))));
    }
}
