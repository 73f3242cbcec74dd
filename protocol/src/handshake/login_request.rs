//! The server's side of the client's first packet: a HandshakeResponse41
//! read back, as a server, a recording proxy or a capture import reads it.
//!
//! Only what the login establishes is kept (capabilities, charset, user,
//! database, plugin); the auth response, a password's scramble, is stepped
//! over and never returned, so nothing downstream can store it.

use crate::buf::Reader;
use crate::constants::Capabilities;
use crate::error::Result;

/// HandshakeResponse41's zero filler after the charset; MariaDB clients
/// put their extended capabilities in its last 4 bytes.
const RESPONSE_FILLER_LEN: usize = 23;
/// An SSLRequest is exactly the 32-byte prefix of a HandshakeResponse41.
const SSL_REQUEST_LEN: usize = 32;

/// What a HandshakeResponse41 establishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoginRequest<'a> {
    /// The client's capabilities, MariaDB's extended ones included when it
    /// cleared bit 0.
    pub capabilities: Capabilities,
    pub max_packet_size: u32,
    /// The connection's collation id (low 8 bits).
    pub charset: u8,
    pub user: &'a [u8],
    pub database: Option<&'a [u8]>,
    pub auth_plugin: &'a [u8],
}

/// The first packets a client may send, told apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientFirstPacket<'a> {
    Response(LoginRequest<'a>),
    /// An SSLRequest: TLS starts after it.
    SslRequest {
        capabilities: Capabilities,
        charset: u8,
    },
    /// A HandshakeResponse320 from a pre-4.1 client.
    Pre41,
}

impl<'a> ClientFirstPacket<'a> {
    /// Parses a client's first packet leniently: the trailing fields a
    /// client may omit (database, plugin, attributes) are optional; the
    /// connection attributes are not read.
    pub fn parse(payload: &'a [u8]) -> Result<Self> {
        let mut r = Reader::new(payload);
        let low = r.u16("client capabilities")?;
        if u32::from(low) & Capabilities::PROTOCOL_41.low() == 0 {
            return Ok(ClientFirstPacket::Pre41);
        }
        let low = u32::from(low) | u32::from(r.u16("client capabilities (upper)")?) << 16;
        let max_packet_size = r.u32("max packet size")?;
        let charset = r.u8("character set")?;
        let filler = r.array::<RESPONSE_FILLER_LEN>("filler")?;
        let [.., a, b, c, d] = filler;
        let ext = if low & 1 == 0 { u32::from_le_bytes([a, b, c, d]) } else { 0 };
        let capabilities = Capabilities::from_parts(low, ext);
        if payload.len() == SSL_REQUEST_LEN {
            return Ok(ClientFirstPacket::SslRequest { capabilities, charset });
        }
        let user = r.null_terminated("user name")?;
        if capabilities.contains(Capabilities::PLUGIN_AUTH_LENENC_CLIENT_DATA) {
            r.lenenc_bytes("auth response")?;
        } else if capabilities.contains(Capabilities::SECURE_CONNECTION) {
            let len = r.u8("auth response length")?;
            r.skip(usize::from(len), "auth response")?;
        } else {
            r.null_terminated("auth response")?;
        }
        let mut database = None;
        if capabilities.contains(Capabilities::CONNECT_WITH_DB) && !r.is_empty() {
            database = Some(r.null_terminated_or_rest());
        }
        let mut auth_plugin: &[u8] = &[];
        if capabilities.contains(Capabilities::PLUGIN_AUTH) && !r.is_empty() {
            auth_plugin = r.null_terminated_or_rest();
        }
        Ok(ClientFirstPacket::Response(LoginRequest {
            capabilities,
            max_packet_size,
            charset,
            user,
            database,
            auth_plugin,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handshake::{HandshakeResponse41, SslRequest};

    const CAPS: Capabilities = Capabilities(
        Capabilities::PROTOCOL_41.0
            | Capabilities::SECURE_CONNECTION.0
            | Capabilities::PLUGIN_AUTH.0
            | Capabilities::PLUGIN_AUTH_LENENC_CLIENT_DATA.0
            | Capabilities::CONNECT_WITH_DB.0
            | Capabilities::DEPRECATE_EOF.0,
    );

    #[test]
    fn a_response_reads_back_without_its_secret() {
        let mut out = Vec::new();
        let response = HandshakeResponse41 {
            capabilities: CAPS.union(Capabilities::MARIADB_CLIENT_CACHE_METADATA),
            max_packet_size: 1 << 24,
            charset: 45,
            user: b"sbtest",
            auth_response: b"0123456789abcdefghij",
            database: Some(b"sbtest"),
            auth_plugin_name: b"mysql_native_password",
            connect_attrs: &[],
        };
        response.encode(&mut out, 1).unwrap();
        let ClientFirstPacket::Response(login) = ClientFirstPacket::parse(&out[4..]).unwrap() else { panic!() };
        assert_eq!(login.user, b"sbtest");
        assert_eq!(login.database, Some(&b"sbtest"[..]));
        assert_eq!(login.auth_plugin, b"mysql_native_password");
        assert_eq!((login.charset, login.max_packet_size), (45, 1 << 24));
        // Bit 0 clear (a MariaDB client): its extended capabilities are read.
        assert!(login.capabilities.contains(Capabilities::MARIADB_CLIENT_CACHE_METADATA));
        assert!(login.capabilities.contains(Capabilities::DEPRECATE_EOF));
    }

    #[test]
    fn ssl_requests_and_old_clients_are_told_apart() {
        let mut out = Vec::new();
        SslRequest { capabilities: CAPS.union(Capabilities::SSL), max_packet_size: 0, charset: 33 }.encode(&mut out, 1);
        let parsed = ClientFirstPacket::parse(&out[4..]).unwrap();
        assert!(
            matches!(parsed, ClientFirstPacket::SslRequest { charset: 33, capabilities } if capabilities.contains(Capabilities::SSL))
        );
        assert_eq!(ClientFirstPacket::parse(&[0x05, 0x00, 0, 0, 0]).unwrap(), ClientFirstPacket::Pre41);
        assert!(ClientFirstPacket::parse(&[0x00, 0x02]).is_err());
    }

    #[test]
    fn a_minimal_response_has_no_optional_fields() {
        let caps = Capabilities::PROTOCOL_41 | Capabilities::SECURE_CONNECTION | Capabilities::LONG_PASSWORD;
        let response = HandshakeResponse41 {
            capabilities: caps,
            max_packet_size: 1 << 24,
            charset: 33,
            user: b"root",
            auth_response: &[1; 20],
            database: None,
            auth_plugin_name: b"",
            connect_attrs: &[],
        };
        let mut out = Vec::new();
        response.encode(&mut out, 1).unwrap();
        let ClientFirstPacket::Response(login) = ClientFirstPacket::parse(&out[4..]).unwrap() else { panic!() };
        assert_eq!(login.capabilities, caps);
        assert_eq!((login.user, login.database, login.auth_plugin), (&b"root"[..], None, &b""[..]));
    }

    #[test]
    fn short_or_garbage_packets_are_errors_not_panics() {
        for len in 0..40 {
            let garbage: Vec<u8> = (0..len).map(|i| (i * 37 + 0xfe) as u8 | 0x02).collect();
            let _ = ClientFirstPacket::parse(&garbage);
        }
    }
}
