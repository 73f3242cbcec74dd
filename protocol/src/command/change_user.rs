//! COM_CHANGE_USER: log in again as another (or the same) user on an open
//! connection, which also resets the session.
//!
//! Payload (MySQL `page_protocol_com_change_user`, MariaDB's COM_CHANGE_USER):
//!
//! ```text
//! 0x11, user string<NUL>
//! SECURE_CONNECTION: auth response length int<1>, auth response
//!       otherwise:   auth response string<NUL>
//! schema string<NUL>
//! character set int<2>
//! PLUGIN_AUTH:       auth plugin name string<NUL>
//! CONNECT_ATTRS:     lenenc length of the attributes, then lenenc key/value pairs
//! ```
//!
//! The auth response answers the nonce of the connection's greeting. The
//! server answers OK, ERR, or an AuthSwitchRequest as in the login.

use crate::buf::{lenenc_int_len, WriteExt};
use crate::constants::command::COM_CHANGE_USER;
use crate::constants::Capabilities;
use crate::error::UsageError;
use crate::framing::{finish_packet, start_packet};

/// The fields of a COM_CHANGE_USER; `capabilities` (those in force on the
/// connection) decide which optional ones are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChangeUser<'a> {
    pub capabilities: Capabilities,
    pub user: &'a [u8],
    pub auth_response: &'a [u8],
    pub database: &'a [u8],
    /// The collation id (two bytes here, where the login has one).
    pub charset: u16,
    pub auth_plugin_name: &'a [u8],
    pub connect_attrs: &'a [(String, String)],
}

impl ChangeUser<'_> {
    /// Appends the packet (sequence id 0). Fails, writing nothing, when a
    /// NUL-terminated field holds a NUL or the auth response does not fit
    /// its one-byte length.
    pub fn encode(&self, out: &mut Vec<u8>) -> Result<(), UsageError> {
        let secure = self.capabilities.contains(Capabilities::SECURE_CONNECTION);
        let mut nul_terminated = vec![
            (self.user, "user name"),
            (self.database, "database name"),
            (self.auth_plugin_name, "auth plugin name"),
        ];
        if !secure {
            nul_terminated.push((self.auth_response, "auth response"));
        }
        if let Some((_, what)) = nul_terminated.iter().find(|(field, _)| field.contains(&0)) {
            return Err(UsageError::NulInField(what));
        }
        if secure && self.auth_response.len() > usize::from(u8::MAX) {
            return Err(UsageError::AuthResponseTooLong { len: self.auth_response.len() });
        }
        let start = start_packet(out);
        out.put_u8(COM_CHANGE_USER);
        out.put_null_terminated(self.user);
        if secure {
            out.put_u8(self.auth_response.len() as u8);
            out.put_bytes(self.auth_response);
        } else {
            out.put_null_terminated(self.auth_response);
        }
        out.put_null_terminated(self.database);
        out.put_u16(self.charset);
        if self.capabilities.contains(Capabilities::PLUGIN_AUTH) {
            out.put_null_terminated(self.auth_plugin_name);
        }
        if self.capabilities.contains(Capabilities::CONNECT_ATTRS) {
            let total: usize = self
                .connect_attrs
                .iter()
                .map(|(k, v)| lenenc_int_len(k.len() as u64) + k.len() + lenenc_int_len(v.len() as u64) + v.len())
                .sum();
            out.put_lenenc_int(total as u64);
            for (k, v) in self.connect_attrs {
                out.put_lenenc_bytes(k.as_bytes());
                out.put_lenenc_bytes(v.as_bytes());
            }
        }
        finish_packet(out, start, 0);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change_user<'a>(caps: Capabilities, attrs: &'a [(String, String)]) -> ChangeUser<'a> {
        ChangeUser {
            capabilities: caps,
            user: b"u",
            auth_response: &[0xAA, 0xBB],
            database: b"db",
            charset: 45,
            auth_plugin_name: b"p",
            connect_attrs: attrs,
        }
    }

    #[test]
    fn every_field_with_plugin_and_attributes() {
        let attrs = [("k".to_owned(), "vv".to_owned())];
        let caps = Capabilities::SECURE_CONNECTION | Capabilities::PLUGIN_AUTH | Capabilities::CONNECT_ATTRS;
        let mut out = Vec::new();
        change_user(caps, &attrs).encode(&mut out).unwrap();
        let payload = [0x11, b'u', 0, 2, 0xAA, 0xBB, b'd', b'b', 0, 45, 0, b'p', 0, 5, 1, b'k', 2, b'v', b'v'];
        assert_eq!(out[..4], [payload.len() as u8, 0, 0, 0]);
        assert_eq!(out[4..], payload);
    }

    #[test]
    fn without_secure_connection_the_auth_response_is_nul_terminated() {
        let mut out = Vec::new();
        change_user(Capabilities::empty(), &[]).encode(&mut out).unwrap();
        assert_eq!(out[4..], [0x11, b'u', 0, 0xAA, 0xBB, 0, b'd', b'b', 0, 45, 0]);
    }

    #[test]
    fn bad_fields_are_refused_and_nothing_is_written() {
        let mut out = Vec::new();
        let mut c = change_user(Capabilities::SECURE_CONNECTION, &[]);
        c.database = b"d\0b";
        assert_eq!(c.encode(&mut out), Err(UsageError::NulInField("database name")));
        let long = [1u8; 256];
        let mut c = change_user(Capabilities::SECURE_CONNECTION, &[]);
        c.auth_response = &long;
        assert_eq!(c.encode(&mut out), Err(UsageError::AuthResponseTooLong { len: 256 }));
        assert!(out.is_empty());
    }
}
