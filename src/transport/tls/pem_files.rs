//! The files behind `--mysql-ssl*`: which CA, client certificate and key a
//! mode uses (the options', or sysbench's names in the current directory
//! with `on`), what the run is told about the ones missing, and their PEM
//! contents.

use std::path::{Path, PathBuf};

use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::RootCertStore;
use rustls_pki_types::pem::PemObject;

use super::{SslMode, TlsConfigError, TlsOptions};

/// The file names sysbench 1.0.20 passes to `mysql_ssl_set` with `--mysql-ssl=on`.
pub(super) const SYSBENCH_CA: &str = "cacert.pem";
pub(super) const SYSBENCH_CERT: &str = "client-cert.pem";
pub(super) const SYSBENCH_KEY: &str = "client-key.pem";

/// What TLS without a CA means, said once per run (docs/tls.md): the
/// connection is encrypted, but to whoever answers, and a login that sends
/// the password itself sends it to them.
const UNAUTHENTICATED: &str = "the server is not authenticated, and a password sent in full (caching_sha2_password's \
                               full authentication, sha256_password, mysql_clear_password) goes in clear, inside TLS, \
                               to whoever answers; give the CA that signed the server's certificate \
                               (--mysql-ssl-ca=FILE, or cacert.pem with --mysql-ssl=on) to authenticate it";

/// A file and the option it came from (for messages).
#[derive(Debug)]
pub(super) struct Named {
    pub(super) option: &'static str,
    pub(super) path: PathBuf,
}

/// The CA, client certificate and key a run uses, each with where it was named.
#[derive(Debug)]
pub(super) struct Files {
    pub(super) ca: Option<Named>,
    pub(super) cert: Option<Named>,
    pub(super) key: Option<Named>,
}

impl Files {
    pub(super) fn resolve(options: &TlsOptions, cwd: &Path, notes: &mut Vec<String>) -> Result<Files, TlsConfigError> {
        let explicit =
            |option: &'static str, path: &Option<PathBuf>| path.as_ref().map(|p| Named { option, path: p.clone() });
        let mut files = Files {
            ca: explicit("--mysql-ssl-ca", &options.ca),
            cert: explicit("--mysql-ssl-cert", &options.cert),
            key: explicit("--mysql-ssl-key", &options.key),
        };
        if options.mode == SslMode::On {
            let dir = cwd.display();
            let in_cwd = |slot: &mut Option<Named>, name: &str| {
                if slot.is_none() {
                    let path = cwd.join(name);
                    if path.exists() {
                        *slot = Some(Named { option: "--mysql-ssl=on", path });
                    }
                }
            };
            in_cwd(&mut files.ca, SYSBENCH_CA);
            in_cwd(&mut files.cert, SYSBENCH_CERT);
            in_cwd(&mut files.key, SYSBENCH_KEY);
            if files.ca.is_none() {
                notes.push(format!(
                    "--mysql-ssl=on: {SYSBENCH_CA} not found in {dir}: the server certificate is not verified \
                     (sysbench 1.0.20 stops with \"TLS/SSL error: No such file or directory\"): {UNAUTHENTICATED}"
                ));
            }
            if files.cert.is_none() && files.key.is_none() {
                notes.push(format!(
                    "--mysql-ssl=on: {SYSBENCH_CERT} and {SYSBENCH_KEY} not found in {dir}: no client certificate \
                     is sent (sysbench 1.0.20 stops with \"TLS/SSL error: No such file or directory\")"
                ));
            }
        }
        if files.ca.is_none() && matches!(options.mode, SslMode::Preferred | SslMode::Required) {
            notes.push(format!(
                "--mysql-ssl={} without --mysql-ssl-ca: the server certificate is not verified: {UNAUTHENTICATED}",
                options.mode
            ));
        }
        match (&files.cert, &files.key) {
            (Some(cert), None) => Err(TlsConfigError::Options(format!(
                "{} names client certificate {} but no key goes with it: give --mysql-ssl-key (or {SYSBENCH_KEY} \
                 with --mysql-ssl=on)",
                cert.option,
                cert.path.display()
            ))),
            (None, Some(key)) => Err(TlsConfigError::Options(format!(
                "{} names client key {} but no certificate goes with it: give --mysql-ssl-cert (or \
                 {SYSBENCH_CERT} with --mysql-ssl=on)",
                key.option,
                key.path.display()
            ))),
            _ => Ok(files),
        }
    }
}

fn read_file(file: &Named) -> Result<Vec<u8>, TlsConfigError> {
    std::fs::read(&file.path).map_err(|e| TlsConfigError::File {
        option: file.option,
        path: file.path.clone(),
        problem: e.to_string(),
    })
}

fn pem_problem(file: &Named, what: &str, error: rustls_pki_types::pem::Error) -> TlsConfigError {
    let problem = match error {
        rustls_pki_types::pem::Error::NoItemsFound => format!("it holds no PEM {what}"),
        e => format!("not a valid PEM file ({e})"),
    };
    TlsConfigError::File { option: file.option, path: file.path.clone(), problem }
}

pub(super) fn load_certificates(file: &Named) -> Result<Vec<CertificateDer<'static>>, TlsConfigError> {
    let bytes = read_file(file)?;
    let certs = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| pem_problem(file, "certificate", e))?;
    if certs.is_empty() {
        return Err(pem_problem(file, "certificate", rustls_pki_types::pem::Error::NoItemsFound));
    }
    Ok(certs)
}

pub(super) fn load_key(file: &Named) -> Result<PrivateKeyDer<'static>, TlsConfigError> {
    let bytes = read_file(file)?;
    PrivateKeyDer::from_pem_slice(&bytes)
        .map_err(|e| pem_problem(file, "private key (PRIVATE KEY, RSA PRIVATE KEY or EC PRIVATE KEY)", e))
}

pub(super) fn load_roots(file: &Named) -> Result<RootCertStore, TlsConfigError> {
    let mut roots = RootCertStore::empty();
    for cert in load_certificates(file)? {
        roots.add(cert).map_err(|e| TlsConfigError::File {
            option: file.option,
            path: file.path.clone(),
            problem: format!("not a usable CA certificate: {e}"),
        })?;
    }
    Ok(roots)
}

#[cfg(test)]
mod tests {
    use rcgen::KeyPair;

    use super::super::client_tls;
    use super::super::test_pki::{options, pki, Dir};
    use super::super::SslMode;
    use super::{SYSBENCH_CA, SYSBENCH_CERT, SYSBENCH_KEY};

    #[test]
    fn on_without_files_says_what_it_does() {
        let dir = Dir::new("nofiles");
        let setup = client_tls(&options(SslMode::On), &dir.0).unwrap();
        let tls = setup.tls.unwrap();
        assert!(tls.required() && tls.ca.is_none() && !tls.client_cert);
        assert_eq!(setup.notes.len(), 2, "{:?}", setup.notes);
        let shown = dir.0.display().to_string();
        assert!(setup.notes[0]
            .contains(&format!("cacert.pem not found in {shown}: the server certificate is not verified")));
        assert!(setup.notes[0].contains("the server is not authenticated"), "{}", setup.notes[0]);
        assert!(setup.notes[1].contains("no client certificate is sent"));
        assert!(client_tls(&options(SslMode::Disabled), &dir.0).unwrap().tls.is_none());
    }

    /// TLS without a CA verifies nothing: a password sent in full goes to
    /// whoever answers, and the run says so once; with a CA it does not.
    #[test]
    fn tls_without_a_ca_says_the_server_is_not_authenticated() {
        let pki = pki(&["localhost"]);
        let dir = Dir::new("unauthenticated");
        for mode in [SslMode::Required, SslMode::Preferred] {
            let notes = client_tls(&options(mode), &dir.0).unwrap().notes;
            assert_eq!(notes.len(), 1, "{mode}: {notes:?}");
            let note = &notes[0];
            assert!(note.starts_with(&format!("--mysql-ssl={mode} without --mysql-ssl-ca: ")), "{note}");
            for part in ["the server is not authenticated", "password", "whoever answers", "--mysql-ssl-ca=FILE"] {
                assert!(note.contains(part), "{part:?} not in {note}");
            }
            let mut with_ca = options(mode);
            with_ca.ca = Some(dir.write("ca.pem", &pki.ca));
            assert!(client_tls(&with_ca, &dir.0).unwrap().notes.is_empty(), "{mode} with a CA");
        }
        let mut verify = options(SslMode::VerifyCa);
        verify.ca = Some(dir.write("ca.pem", &pki.ca));
        assert!(client_tls(&verify, &dir.0).unwrap().notes.is_empty());
    }

    #[test]
    fn on_takes_sysbench_file_names_from_the_directory() {
        let pki = pki(&["localhost"]);
        let dir = Dir::new("sysbench-names");
        dir.write(SYSBENCH_CA, &pki.ca);
        let setup = client_tls(&options(SslMode::On), &dir.0).unwrap();
        assert_eq!(setup.notes.len(), 1);
        assert_eq!(setup.tls.unwrap().ca, Some(dir.0.join(SYSBENCH_CA)));
        // A certificate without its key is an error, not a silent choice.
        dir.write(SYSBENCH_CERT, &pki.server_cert);
        let err = client_tls(&options(SslMode::On), &dir.0).unwrap_err().to_string();
        assert!(err.contains("client-cert.pem") && err.contains("no key"), "{err}");
        dir.write(SYSBENCH_KEY, &pki.server_key);
        let setup = client_tls(&options(SslMode::On), &dir.0).unwrap();
        assert!(setup.notes.is_empty());
        assert!(setup.tls.unwrap().client_cert);
        // A key that does not go with the certificate.
        dir.write(SYSBENCH_KEY, &KeyPair::generate().unwrap().serialize_pem());
        let err = client_tls(&options(SslMode::On), &dir.0).unwrap_err().to_string();
        assert!(err.contains("client-key.pem") && err.contains("does not go with"), "{err}");
    }

    #[test]
    fn file_errors_name_the_file_and_the_problem() {
        let dir = Dir::new("bad-files");
        let mut mysql = options(SslMode::Required);
        mysql.ca = Some(dir.0.join("missing.pem"));
        let err = client_tls(&mysql, &dir.0).unwrap_err().to_string();
        assert!(err.starts_with("--mysql-ssl-ca: cannot read ") && err.contains("missing.pem"), "{err}");
        mysql.ca = Some(dir.write("empty.pem", "not a certificate\n"));
        let err = client_tls(&mysql, &dir.0).unwrap_err().to_string();
        assert!(err.contains("empty.pem") && err.contains("holds no PEM certificate"), "{err}");
        mysql.ca = None;
        mysql.cert = Some(dir.write("cert.pem", &pki(&["x"]).server_cert));
        mysql.key = Some(dir.write("key.pem", "-----BEGIN PRIVATE KEY-----\nnot base64!\n-----END PRIVATE KEY-----\n"));
        let err = client_tls(&mysql, &dir.0).unwrap_err().to_string();
        assert!(err.starts_with("--mysql-ssl-key: cannot read ") && err.contains("key.pem"), "{err}");
        mysql.mode = SslMode::VerifyCa;
        let err = client_tls(&mysql, &dir.0).unwrap_err().to_string();
        assert!(err.contains("--mysql-ssl=VERIFY_CA needs --mysql-ssl-ca"), "{err}");
    }
}
