//! `--mysql-ssl-cipher`: OpenSSL's and IANA's suite names, the rustls
//! suites they stand for, and the TLS versions those allow.

use rustls::crypto::ring;
use rustls::{SupportedCipherSuite, SupportedProtocolVersion};

use super::TlsConfigError;

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
pub(super) fn supported_ciphers() -> Vec<&'static str> {
    CIPHERS.iter().map(|(name, _)| *name).collect()
}

/// `--mysql-ssl-cipher`: names separated by `:` (also `,` or blanks, as
/// OpenSSL allows), OpenSSL's or IANA's spelling, any case; empty for all.
/// Only the named suites are offered, so a TLS 1.2 name alone means TLS 1.2.
pub(super) fn cipher_suites(list: &str) -> Result<Vec<SupportedCipherSuite>, TlsConfigError> {
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

/// The TLS versions to offer: those the suites belong to.
pub(super) fn protocol_versions(suites: &[SupportedCipherSuite]) -> Vec<&'static SupportedProtocolVersion> {
    let mut versions = Vec::new();
    if suites.iter().any(|s| matches!(s, SupportedCipherSuite::Tls13(_))) {
        versions.push(&rustls::version::TLS13);
    }
    if suites.iter().any(|s| matches!(s, SupportedCipherSuite::Tls12(_))) {
        versions.push(&rustls::version::TLS12);
    }
    versions
}

#[cfg(test)]
mod tests {
    use super::super::test_pki::{connect, options, pki, Dir};
    use super::super::{client_tls, SslMode};
    use super::*;

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
}
