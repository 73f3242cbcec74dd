//! The server's RSA public key, which caching_sha2_password's full
//! authentication and sha256_password need over unencrypted TCP: the
//! password goes encrypted to it. Asking the server for it, as wirebench
//! once did by default, hands the password to whoever answers in the
//! server's place, so libmysqlclient refuses unless told where the key is
//! (`--server-public-key-path`) or that the server's may be trusted
//! (`--get-server-public-key`); wirebench does the same.

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use wirebench_protocol::auth::rsa_key;
use wirebench_protocol::ProtocolError;

/// A PEM RSA public key is under 3 KiB even at 16384 bits; more is not a key.
const MAX_KEY_FILE: u64 = 64 * 1024;

/// What a login over unencrypted TCP may encrypt the password to.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ServerKey {
    /// The server's public key (PEM), from `--mysql-server-public-key-path`;
    /// the server is then never asked for its own.
    pub pem: Option<Arc<[u8]>>,
    /// `--mysql-get-server-public-key`: without `pem`, ask the server for
    /// its key and trust what comes back.
    pub fetch: bool,
}

impl fmt::Debug for ServerKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerKey")
            .field("pem_bytes", &self.pem.as_ref().map(|k| k.len()))
            .field("fetch", &self.fetch)
            .finish()
    }
}

/// Why a key file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "cannot use {} as the server's public key: {problem}; give the server's RSA public key in PEM form (MySQL: the \
     file caching_sha2_password_public_key_path names, or the value of SHOW STATUS LIKE \
     'Caching_sha2_password_rsa_public_key')",
    path.display()
)]
pub struct ServerKeyError {
    pub path: PathBuf,
    pub problem: String,
}

impl ServerKey {
    /// Reads and checks a PEM public key file (at most 64 KiB of it: a
    /// device or an endless file is refused, not read forever).
    pub fn read_pem(path: &Path) -> Result<Arc<[u8]>, ServerKeyError> {
        let problem = |problem: String| ServerKeyError { path: path.to_owned(), problem };
        let file = std::fs::File::open(path).map_err(|e| problem(e.to_string()))?;
        let mut pem = Vec::new();
        file.take(MAX_KEY_FILE + 1).read_to_end(&mut pem).map_err(|e| problem(e.to_string()))?;
        if pem.len() as u64 > MAX_KEY_FILE {
            return Err(problem(format!("it is larger than {} KiB, which no public key is", MAX_KEY_FILE / 1024)));
        }
        rsa_key::parse_public_key(&pem).map_err(|e| match e {
            // Not the client's authentication failing: only the file's text.
            ProtocolError::Auth(message) => problem(message),
            other => problem(other.to_string()),
        })?;
        Ok(pem.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PEM: &str = "-----BEGIN PUBLIC KEY-----
MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQDScqdbuk0bNbypfqNW0KESXz35
fbOY8uD7L6QAWTmE0dJl/PCBkD0tYyW+27zEdFAcwArYjqxhT0bUjwf/LbrMfMob
U3YyKTif4S5RVKzTYdn92ZAym8+STMh/1Urzq6STrJ18Sbz2so05WFKxbl46XDG1
gh3CMz3QLfKnRkNnhQIDAQAB
-----END PUBLIC KEY-----
";

    fn file(name: &str, contents: &[u8]) -> PathBuf {
        let path = std::env::temp_dir().join(format!("wirebench-server-key-{}-{name}", std::process::id()));
        std::fs::write(&path, contents).unwrap();
        path
    }

    #[test]
    fn a_pem_public_key_is_read() {
        let path = file("good.pem", PEM.as_bytes());
        assert_eq!(&*ServerKey::read_pem(&path).unwrap(), PEM.as_bytes());
        std::fs::remove_file(path).unwrap();
    }

    #[test]
    fn anything_else_is_refused_with_the_file_named() {
        let missing = Path::new("/nonexistent/key.pem");
        let error = ServerKey::read_pem(missing).unwrap_err().to_string();
        assert!(error.starts_with("cannot use /nonexistent/key.pem as the server's public key: "), "{error}");
        let not_a_key = file("passwd", b"root:x:0:0:root:/root:/bin/bash\n");
        let error = ServerKey::read_pem(&not_a_key).unwrap_err().to_string();
        assert!(error.contains("RSA public key") && error.contains("PEM"), "{error}");
        assert!(!error.contains("authentication failed"), "only the file is wrong: {error}");
        std::fs::remove_file(not_a_key).unwrap();
        let error = ServerKey::read_pem(Path::new("/dev/zero")).unwrap_err().to_string();
        assert!(error.contains("larger than 64 KiB"), "{error}");
    }
}
