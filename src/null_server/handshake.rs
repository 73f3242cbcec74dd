//! The server side of the connection phase, which the protocol crate (a
//! client codec) does not carry: the HandshakeV10 greeting encoder. The
//! client's response is read with the protocol crate's `ClientFirstPacket`.

use wirebench_protocol::buf::WriteExt;
use wirebench_protocol::constants::CHARSET_UTF8MB4_GENERAL_CI;
use wirebench_protocol::framing::{finish_packet, start_packet};
use wirebench_protocol::handshake::PROTOCOL_VERSION;
use wirebench_protocol::{Capabilities, StatusFlags};

/// The scramble length every current server uses (8 + 12 bytes).
pub const NONCE_LEN: usize = 20;
/// The greeting's reserved block; MariaDB keeps its extended capabilities in
/// the last 4 bytes.
const GREETING_RESERVED_LEN: usize = 6;
pub const NATIVE_PASSWORD: &[u8] = b"mysql_native_password";

/// What the server offers. MariaDB-like: CLIENT_MYSQL (bit 0) is cleared,
/// which tells MariaDB clients to read extended capabilities from the
/// reserved bytes, where we offer none. The compressed protocol (zlib), but
/// no SSL, no LOCAL INFILE, no SESSION_TRACK (so OK packets stay the short
/// classic form).
pub const SERVER_CAPABILITIES: Capabilities = Capabilities(
    Capabilities::FOUND_ROWS.0
        | Capabilities::LONG_FLAG.0
        | Capabilities::CONNECT_WITH_DB.0
        | Capabilities::COMPRESS.0
        | Capabilities::PROTOCOL_41.0
        | Capabilities::INTERACTIVE.0
        | Capabilities::IGNORE_SIGPIPE.0
        | Capabilities::TRANSACTIONS.0
        | Capabilities::SECURE_CONNECTION.0
        | Capabilities::MULTI_STATEMENTS.0
        | Capabilities::MULTI_RESULTS.0
        | Capabilities::PS_MULTI_RESULTS.0
        | Capabilities::PLUGIN_AUTH.0
        | Capabilities::CONNECT_ATTRS.0
        | Capabilities::PLUGIN_AUTH_LENENC_CLIENT_DATA.0
        | Capabilities::DEPRECATE_EOF.0,
);

/// The greeting the server sends first, Protocol::HandshakeV10, as MariaDB
/// lays it out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerGreeting<'a> {
    pub server_version: &'a [u8],
    pub connection_id: u32,
    pub nonce: &'a [u8; NONCE_LEN],
    pub capabilities: Capabilities,
    pub status: StatusFlags,
}

impl ServerGreeting<'_> {
    /// Appends the greeting with sequence id 0; returns the next id.
    pub fn encode(&self, out: &mut Vec<u8>) -> u8 {
        let caps = self.capabilities;
        let (part1, part2) = self.nonce.split_at(8);
        let start = start_packet(out);
        out.put_u8(PROTOCOL_VERSION);
        out.put_null_terminated(self.server_version);
        out.put_u32(self.connection_id);
        out.put_bytes(part1);
        out.put_u8(0);
        out.put_u16(caps.low() as u16);
        out.put_u8(CHARSET_UTF8MB4_GENERAL_CI);
        out.put_u16(self.status.0);
        out.put_u16((caps.low() >> 16) as u16);
        // The scramble length including part 2's trailing NUL.
        out.put_u8(NONCE_LEN as u8 + 1);
        out.put_zeros(GREETING_RESERVED_LEN);
        let ext = if caps.contains(Capabilities::LONG_PASSWORD) { 0 } else { caps.mariadb_ext() };
        out.put_u32(ext);
        out.put_null_terminated(part2);
        out.put_null_terminated(NATIVE_PASSWORD);
        finish_packet(out, start, 0)
    }
}

/// `10.11.99` from `5.5.5-10.11.99-wirebench-null`, as the MYSQL_VERSION_ID
/// number (101199) that decides which versioned comments count as code.
pub fn version_id(version: &str) -> Option<u32> {
    let display = version.strip_prefix("5.5.5-").unwrap_or(version);
    let mut parts = display.split(|c: char| !c.is_ascii_digit());
    let mut next = || parts.next().and_then(|p| p.parse::<u32>().ok());
    let (major, minor, patch) = (next()?, next()?, next()?);
    (minor < 100 && patch < 100).then_some(major * 10000 + minor * 100 + patch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wirebench_protocol::framing::decode_packet;
    use wirebench_protocol::handshake::{
        ClientFirstPacket, ClientHandshake, Greeting, HandshakeConfig, HandshakeStep, InitialHandshake, TlsMode,
    };

    const NONCE: [u8; NONCE_LEN] = *b"abcdefghijklmnopqrst";

    fn greeting_bytes() -> Vec<u8> {
        let mut out = Vec::new();
        let greeting = ServerGreeting {
            server_version: b"5.5.5-10.11.99-wirebench-null",
            connection_id: 7,
            nonce: &NONCE,
            capabilities: SERVER_CAPABILITIES,
            status: StatusFlags::AUTOCOMMIT,
        };
        assert_eq!(greeting.encode(&mut out), 1);
        out
    }

    #[test]
    fn greeting_parses_as_mariadb() {
        let bytes = greeting_bytes();
        let frame = decode_packet(&bytes, 0, 1 << 20).unwrap().unwrap();
        assert_eq!(frame.consumed, bytes.len());
        let Greeting::Handshake(hs) = Greeting::parse(&frame.payload).unwrap() else { panic!("not a handshake") };
        assert_eq!(hs.server_version, b"5.5.5-10.11.99-wirebench-null");
        assert_eq!(hs.display_version(), b"10.11.99-wirebench-null");
        assert!(hs.is_mariadb());
        assert_eq!(hs.connection_id, 7);
        assert_eq!(hs.auth_plugin_data, NONCE);
        assert_eq!(hs.auth_plugin_name, NATIVE_PASSWORD);
        assert_eq!(hs.capabilities, SERVER_CAPABILITIES);
        assert_eq!(hs.status, StatusFlags::AUTOCOMMIT);
        assert_eq!(hs.charset, 45);
    }

    #[test]
    fn greeting_layout_matches_mariadb_capture() {
        // Same field layout as MariaDB 10.11's greeting: the 10 reserved bytes
        // sit between the scramble length (21) and scramble part 2.
        let bytes = greeting_bytes();
        let payload = &bytes[4..];
        let after_version = 1 + b"5.5.5-10.11.99-wirebench-null".len() + 1;
        let fixed = &payload[after_version..];
        assert_eq!(&fixed[..4], &7u32.to_le_bytes());
        assert_eq!(&fixed[4..12], b"abcdefgh");
        assert_eq!(fixed[12], 0);
        assert_eq!(fixed[15], 45);
        assert_eq!(fixed[20], 21);
        assert_eq!(&fixed[21..31], &[0u8; 10]);
        assert_eq!(&fixed[31..44], b"ijklmnopqrst\0");
        assert_eq!(&fixed[44..], b"mysql_native_password\0");
        let _ = InitialHandshake::parse(payload).unwrap();
    }

    #[test]
    fn parses_the_wirebench_client_response() {
        // Drive the real client state machine against our greeting.
        let mut config = HandshakeConfig::new("bench", b"secret".to_vec());
        config.database = Some("sbtest".into());
        config.tls = TlsMode::Disabled;
        config.deprecate_eof = true;
        config.connect_attrs = vec![("_client_name".into(), "wirebench".into())];
        let mut client = ClientHandshake::new(config);
        let mut out = Vec::new();
        let greeting = greeting_bytes();
        let mut rng = wirebench_protocol::auth::rand_core::OsRng;
        let (used, step) = client.advance(&greeting, &mut out, &mut rng).unwrap();
        assert_eq!(used, greeting.len());
        assert!(matches!(step, HandshakeStep::NeedMore));
        let frame = decode_packet(&out, 1, 1 << 20).unwrap().unwrap();
        let ClientFirstPacket::Response(login) = ClientFirstPacket::parse(&frame.payload).unwrap() else {
            panic!("not a response")
        };
        assert_eq!(login.user, b"bench");
        assert_eq!(login.database, Some(&b"sbtest"[..]));
        assert_eq!(login.auth_plugin, NATIVE_PASSWORD);
        assert!(login.capabilities.contains(Capabilities::DEPRECATE_EOF | Capabilities::PROTOCOL_41));
        assert!(!login.capabilities.contains(Capabilities::LONG_PASSWORD), "a MariaDB client clears bit 0");
    }

    #[test]
    fn version_ids() {
        assert_eq!(version_id("5.5.5-10.11.99-wirebench-null"), Some(101199));
        assert_eq!(version_id("8.0.36"), Some(80036));
        assert_eq!(version_id("wirebench"), None);
    }
}
