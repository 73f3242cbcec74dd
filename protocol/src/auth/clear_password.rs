//! `mysql_clear_password`: the password and a NUL, as servers using PAM or
//! LDAP ask for it. Sent only where nobody can read it on the way.

use crate::error::{ProtocolError, Result};

/// Appends `pw ‖ 0x00`, or refuses over an insecure transport.
pub fn response(password: &[u8], secure: bool, out: &mut Vec<u8>) -> Result<()> {
    if !secure {
        return Err(ProtocolError::InsecureTransport("mysql_clear_password"));
    }
    out.extend_from_slice(password);
    out.push(0);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clear_only_when_secure() {
        let mut out = Vec::new();
        response(b"sbtest", true, &mut out).unwrap();
        assert_eq!(out, b"sbtest\0");
        let mut out = Vec::new();
        assert_eq!(response(b"sbtest", false, &mut out), Err(ProtocolError::InsecureTransport("mysql_clear_password")));
        assert!(out.is_empty(), "nothing may be written when refusing");
    }
}
