//! MariaDB `client_ed25519`: an RFC 8032 Ed25519 signature of the server's
//! 32-byte nonce, with the password bytes (any length) in place of the
//! 32-byte seed. The server stores the public key `A`, base64-encoded.
//!
//! `az = SHA512(pw)`, `s = clamp(az[..32])`, `A = s·B`;
//! `r = SHA512(az[32..] ‖ nonce) mod L`, `R = r·B`;
//! `k = SHA512(R ‖ A ‖ nonce) mod L`, `S = r + k·s mod L`; the answer is `R ‖ S`.

use curve25519_dalek::scalar::clamp_integer;
use curve25519_dalek::{EdwardsPoint, Scalar};
use sha2::{Digest, Sha512};

/// The secret scalar and the nonce-derivation prefix for a password.
fn expand(password: &[u8]) -> (Scalar, [u8; 32]) {
    let az: [u8; 64] = Sha512::digest(password).into();
    let mut lower = [0u8; 32];
    let mut prefix = [0u8; 32];
    let (a, z) = az.split_at(32);
    lower.copy_from_slice(a);
    prefix.copy_from_slice(z);
    // The clamped integer is below 2^255; reducing it mod L changes neither s·B
    // (B has order L) nor S, which is computed mod L.
    (Scalar::from_bytes_mod_order(clamp_integer(lower)), prefix)
}

fn hash_to_scalar(parts: &[&[u8]]) -> Scalar {
    let mut h = Sha512::new();
    for part in parts {
        h.update(part);
    }
    Scalar::from_bytes_mod_order_wide(&h.finalize().into())
}

/// The public key `A` the server stores for `password`.
pub fn public_key(password: &[u8]) -> [u8; 32] {
    let (s, _) = expand(password);
    EdwardsPoint::mul_base(&s).compress().to_bytes()
}

/// The 64-byte answer `R ‖ S` to `nonce`.
pub fn sign(password: &[u8], nonce: &[u8]) -> [u8; 64] {
    let (s, prefix) = expand(password);
    let a = EdwardsPoint::mul_base(&s).compress().to_bytes();
    let r = hash_to_scalar(&[&prefix, nonce]);
    let big_r = EdwardsPoint::mul_base(&r).compress().to_bytes();
    let k = hash_to_scalar(&[&big_r, &a, nonce]);
    let big_s = r + k * s;
    let mut out = [0u8; 64];
    let (left, right) = out.split_at_mut(32);
    left.copy_from_slice(&big_r);
    right.copy_from_slice(big_s.as_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use curve25519_dalek::edwards::CompressedEdwardsY;

    fn from_hex(s: &str) -> Vec<u8> {
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    /// Standard base64 without padding, as MariaDB prints the stored key.
    fn from_base64(s: &str) -> Vec<u8> {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut bits = 0u32;
        let mut nbits = 0;
        let mut out = Vec::new();
        for c in s.bytes().filter(|&c| c != b'=') {
            bits = bits << 6 | ALPHABET.iter().position(|&a| a == c).unwrap() as u32;
            nbits += 6;
            if nbits >= 8 {
                nbits -= 8;
                out.push((bits >> nbits) as u8);
            }
        }
        out
    }

    /// The verifier's equation, as the server checks it: S·B = R + k·A.
    fn verifies(public: &[u8; 32], nonce: &[u8], sig: &[u8; 64]) -> bool {
        let a = CompressedEdwardsY(*public).decompress().unwrap();
        let r = CompressedEdwardsY(sig[..32].try_into().unwrap()).decompress().unwrap();
        let s = Scalar::from_canonical_bytes(sig[32..].try_into().unwrap()).unwrap();
        let k = hash_to_scalar(&[&sig[..32], public, nonce]);
        EdwardsPoint::mul_base(&s) == r + k * a
    }

    #[test]
    fn rfc8032_test_vectors() {
        // RFC 8032 section 7.1, TEST 1 and TEST 2: with a 32-byte password the
        // scheme is exactly Ed25519 with that seed.
        let cases = [
            (
                "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
                "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
                "",
                "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
            ),
            (
                "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
                "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
                "72",
                "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00",
            ),
        ];
        for (seed, public, message, signature) in cases {
            let seed = from_hex(seed);
            assert_eq!(public_key(&seed).to_vec(), from_hex(public));
            assert_eq!(sign(&seed, &from_hex(message)).to_vec(), from_hex(signature));
        }
    }

    #[test]
    fn public_key_matches_mariadb() {
        // MariaDB 10.11: CREATE USER ... IDENTIFIED VIA ed25519 USING PASSWORD('...'),
        // then SHOW CREATE USER prints the stored base64 A.
        assert_eq!(public_key(b"sbtest").to_vec(), from_base64("cs2Dykgvdg71o74AP3Z3atP3j2X9JBldZBBuit9KSMg"));
        assert_eq!(
            public_key(b"a much longer password with more than thirty-two bytes in it").to_vec(),
            from_base64("8ZQMva6cIFqYbA2zzAKO5x0f3camX/FVOBtrFZ8UKvE")
        );
    }

    #[test]
    fn signatures_verify_against_the_stored_key() {
        let public = public_key(b"sbtest");
        let nonce: Vec<u8> = (0u8..32).collect();
        let sig = sign(b"sbtest", &nonce);
        assert!(verifies(&public, &nonce, &sig));
        // Another nonce or password does not verify.
        let mut other = nonce.clone();
        other[0] ^= 1;
        assert!(!verifies(&public, &other, &sig));
        assert!(!verifies(&public, &nonce, &sign(b"sbtesT", &nonce)));
        // Empty password: still a signature under SHA512("").
        assert!(verifies(&public_key(b""), &nonce, &sign(b"", &nonce)));
    }
}
