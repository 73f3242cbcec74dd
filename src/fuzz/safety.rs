//! What keeps a fuzz run from hurting what it was not pointed at: targets
//! on this host only (unless `--fuzz-allow-remote`), no database but the
//! one given, no command that stops or reconfigures the server.

use std::net::{IpAddr, ToSocketAddrs};

use wirebench_protocol::constants::command::{COM_CHANGE_USER, COM_INIT_DB, COM_QUERY, COM_STMT_PREPARE};
use wirebench_protocol::constants::Capabilities;

use super::dictionary::{FORBIDDEN_COMMANDS, FORBIDDEN_WORDS};
use super::fuzz_error::FuzzError;
use crate::client::Endpoint;

/// Refuses a target that is not on this host unless `allow_remote`: a unix
/// socket, or a TCP host whose every address is a loopback one.
pub fn check_target(endpoint: &Endpoint, allow_remote: bool) -> Result<(), FuzzError> {
    let Endpoint::Tcp { host, port } = endpoint else { return Ok(()) };
    if allow_remote {
        return Ok(());
    }
    let addrs: Vec<IpAddr> = match (host.as_str(), *port).to_socket_addrs() {
        Ok(addrs) => addrs.map(|a| a.ip()).collect(),
        Err(e) => return Err(FuzzError::Resolve { host: host.clone(), reason: e.to_string() }),
    };
    if addrs.is_empty() || addrs.iter().any(|ip| !ip.is_loopback()) {
        return Err(FuzzError::RemoteTarget { endpoint: endpoint.clone() });
    }
    Ok(())
}

/// Why a packet must not be sent, or `None`. `payload` is what follows the
/// 4-byte header; `login` says the server reads it as a login.
pub fn forbidden(payload: &[u8], login: bool, database: &str) -> Option<String> {
    if login {
        return login_database(payload).and_then(|db| other_database(db, database));
    }
    let (&command, body) = payload.split_first()?;
    if let Some((_, name)) = FORBIDDEN_COMMANDS.iter().find(|(byte, _)| *byte == command) {
        return Some(format!("{name} is never sent"));
    }
    match command {
        COM_QUERY | COM_STMT_PREPARE => forbidden_word(body),
        COM_INIT_DB => other_database(body, database),
        COM_CHANGE_USER => change_user_database(body).and_then(|db| other_database(db, database)),
        _ => None,
    }
}

/// The first word of `sql` the safety check refuses, as a reason.
fn forbidden_word(sql: &[u8]) -> Option<String> {
    sql.split(|b| !(b.is_ascii_alphanumeric() || *b == b'_' || *b == b'$'))
        .find(|word| FORBIDDEN_WORDS.iter().any(|w| w.as_bytes().eq_ignore_ascii_case(word)))
        .map(|word| format!("statement text with {:?}", String::from_utf8_lossy(word).to_ascii_uppercase()))
}

/// A database name a server could take for another existing database: not
/// the run's, not empty, and short and clean enough to be an identifier.
fn other_database(name: &[u8], database: &str) -> Option<String> {
    let plausible = !name.is_empty()
        && name.len() <= 64
        && std::str::from_utf8(name).is_ok_and(|s| !s.contains(['\0', '/', '\\', '.']));
    (plausible && name != database.as_bytes())
        .then(|| format!("database name {:?}, not the run's {database:?}", String::from_utf8_lossy(name)))
}

/// Up to the first NUL, or the end.
fn nul_string(bytes: &[u8]) -> (&[u8], &[u8]) {
    match bytes.iter().position(|&b| b == 0) {
        Some(at) => (bytes.get(..at).unwrap_or_default(), bytes.get(at + 1..).unwrap_or_default()),
        None => (bytes, &[]),
    }
}

/// The database a HandshakeResponse41 names, read as a server reads it.
fn login_database(payload: &[u8]) -> Option<&[u8]> {
    let caps = Capabilities(u64::from(u32::from_le_bytes(payload.get(..4)?.try_into().ok()?)));
    if !caps.contains(Capabilities::CONNECT_WITH_DB) {
        return None;
    }
    let (_, rest) = nul_string(payload.get(32..)?);
    let rest = if caps.contains(Capabilities::PLUGIN_AUTH_LENENC_CLIENT_DATA) {
        let mut r = wirebench_protocol::buf::Reader::new(rest);
        r.lenenc_bytes("auth").ok()?;
        r.peek_rest()
    } else {
        let len = usize::from(*rest.first()?);
        rest.get(1 + len..)?
    };
    Some(nul_string(rest).0)
}

/// The database a COM_CHANGE_USER body names (SECURE_CONNECTION layout).
fn change_user_database(body: &[u8]) -> Option<&[u8]> {
    let (_, rest) = nul_string(body);
    let len = usize::from(*rest.first()?);
    Some(nul_string(rest.get(1 + len..)?).0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_targets_on_this_host() {
        assert!(check_target(&Endpoint::unix("/tmp/x.sock"), false).is_ok());
        assert!(check_target(&Endpoint::tcp("127.0.0.1", 3306), false).is_ok());
        assert!(check_target(&Endpoint::tcp("::1", 3306), false).is_ok());
        let remote = Endpoint::tcp("192.0.2.1", 3306);
        assert!(matches!(check_target(&remote, false), Err(FuzzError::RemoteTarget { .. })));
        assert!(check_target(&remote, true).is_ok());
    }

    #[test]
    fn commands_and_words_that_are_never_sent() {
        assert!(forbidden(&[0x08], false, "sbtest").unwrap().contains("COM_SHUTDOWN"));
        assert!(forbidden(b"\x03shutdown", false, "sbtest").is_some());
        assert!(forbidden(b"\x03SELECT * FROM mysql.user", false, "sbtest").is_some());
        assert!(forbidden(b"\x16DROP DATABASE sbtest", false, "sbtest").is_some());
        assert!(forbidden(b"\x03SET @@global.max_connections=1", false, "sbtest").is_some());
        assert_eq!(forbidden(b"\x03SELECT CURRENT_USER(), c FROM sbtest1", false, "sbtest"), None);
        assert_eq!(forbidden(&[0x0e], false, "sbtest"), None);
    }

    #[test]
    fn database_names_other_than_the_runs() {
        assert_eq!(forbidden(b"\x02sbtest", false, "sbtest"), None);
        assert_eq!(forbidden(b"\x02", false, "sbtest"), None);
        assert!(forbidden(b"\x02sbtes", false, "sbtest").is_some());
        assert_eq!(forbidden(&[&[0x02][..], &[b'x'; 300]].concat(), false, "sbtest"), None, "cannot be a name");
        // A login with CONNECT_WITH_DB (bit 3) and a one-byte auth length.
        let mut login = vec![0x08, 0, 0, 0];
        login.extend_from_slice(&[0; 28]);
        login.extend_from_slice(b"u\0\x01Xsbt\0");
        assert!(forbidden(&login, true, "sbtest").is_some());
        let fixed = [&login[..login.len() - 4], b"sbtest\0"].concat();
        assert_eq!(forbidden(&fixed, true, "sbtest"), None);
    }
}
