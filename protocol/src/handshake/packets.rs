//! The connection phase packets: the server's greeting (HandshakeV10), the
//! client's HandshakeResponse41 and SSLRequest, the AuthSwitchRequest and
//! AuthMoreData packets, and capability negotiation.
//!
//! The order in which they are exchanged lives in [`ClientHandshake`](super::ClientHandshake).

use crate::buf::{Reader, WriteExt};
use crate::constants::{Capabilities, StatusFlags};
use crate::error::{ProtocolError, Result, UsageError};
use crate::framing::{finish_packet, start_packet};
use crate::response::err::{ErrPacket, ERR_HEADER};
use crate::tolerance::{Deviation, Deviations};

/// The only handshake protocol version spoken since MySQL 3.21.
pub const PROTOCOL_VERSION: u8 = 10;
/// Header of AuthSwitchRequest (shared with EOF and the 0xFE-headed OK).
pub const AUTH_SWITCH_HEADER: u8 = 0xFE;
/// Header of AuthMoreData.
pub const AUTH_MORE_DATA_HEADER: u8 = 0x01;
/// The prefix MariaDB puts before its version so that old clients, which
/// compared the major version, accept it.
const MARIADB_VERSION_PREFIX: &[u8] = b"5.5.5-";
/// Bytes of zeros between the charset and the user name in HandshakeResponse41
/// and SSLRequest; MariaDB uses the last 4 for its extended capabilities.
const RESPONSE_FILLER_LEN: usize = 23;
/// Bytes of the greeting's reserved block; MariaDB uses the last 4.
const GREETING_RESERVED_LEN: usize = 10;
/// The 4.1 scramble's second part with its NUL: libmariadb reads it
/// whenever that many bytes follow the reserved block, whatever the
/// capabilities say.
const SCRAMBLE_41_PART2_LEN: usize = 13;
/// The whole 4.1 scramble.
pub const SCRAMBLE_41_LEN: usize = 20;

/// The server's first packet: a greeting, or an ERR it sends instead when it
/// refuses the connection outright ("Too many connections", "Host ... is
/// blocked"). That ERR carries no SQLSTATE.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Greeting<'a> {
    Handshake(InitialHandshake<'a>),
    Error(ErrPacket<'a>),
}

impl<'a> Greeting<'a> {
    /// Parses the payload of the server's first packet.
    pub fn parse(payload: &'a [u8]) -> Result<Self> {
        match payload.first() {
            Some(&ERR_HEADER) => Ok(Greeting::Error(ErrPacket::parse(payload)?)),
            _ => Ok(Greeting::Handshake(InitialHandshake::parse(payload)?)),
        }
    }
}

/// Protocol::HandshakeV10.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InitialHandshake<'a> {
    /// As sent, e.g. `5.5.5-10.11.19-MariaDB-0+deb12u1`; see [`Self::display_version`].
    pub server_version: &'a [u8],
    pub connection_id: u32,
    /// Low 32 bits: the classic flags; high 32 bits: MariaDB's extended
    /// capabilities, read only when the server cleared bit 0 (CLIENT_MYSQL).
    pub capabilities: Capabilities,
    /// The server's default collation id (low 8 bits).
    pub charset: u8,
    pub status: StatusFlags,
    /// The nonce (scramble): part 1 and part 2 joined, part 2's trailing NUL
    /// dropped. 20 bytes from every current server; 8 from one before 4.1.
    pub auth_plugin_data: Vec<u8>,
    /// The plugin the nonce is meant for; empty when the server lacks
    /// CLIENT_PLUGIN_AUTH (then it is `mysql_native_password`).
    pub auth_plugin_name: &'a [u8],
}

impl<'a> InitialHandshake<'a> {
    /// Parses a HandshakeV10 payload. Bytes after the plugin name are ignored,
    /// as future servers may append fields.
    pub fn parse(payload: &'a [u8]) -> Result<Self> {
        let mut r = Reader::new(payload);
        let version = r.u8("protocol version")?;
        if version != PROTOCOL_VERSION {
            return Err(ProtocolError::UnsupportedProtocolVersion(version));
        }
        let server_version = r.null_terminated("server version")?;
        let connection_id = r.u32("connection id")?;
        let data1 = r.take(8, "auth plugin data part 1")?;
        r.skip(1, "filler")?;
        let caps_low = r.u16("capability flags")?;
        let mut hs = InitialHandshake {
            server_version,
            connection_id,
            capabilities: Capabilities(u64::from(caps_low)),
            charset: 0,
            status: StatusFlags::default(),
            auth_plugin_data: data1.to_vec(),
            auth_plugin_name: &[],
        };
        // Pre-4.1 servers may end here ("if more data in the packet").
        if r.is_empty() {
            return Ok(hs);
        }
        hs.charset = r.u8("character set")?;
        hs.status = StatusFlags(r.u16("status flags")?);
        let caps_high = r.u16("capability flags (upper)")?;
        let data_len = r.u8("auth plugin data length")?;
        let reserved = r.array::<GREETING_RESERVED_LEN>("reserved")?;
        let low = u32::from(caps_low) | u32::from(caps_high) << 16;
        let mut caps = Capabilities::from_parts(low, 0);
        if !caps.contains(Capabilities::LONG_PASSWORD) {
            let [.., a, b, c, d] = reserved;
            caps = Capabilities::from_parts(low, u32::from_le_bytes([a, b, c, d]));
        }
        hs.capabilities = caps;
        let part2_len = if caps.contains(Capabilities::SECURE_CONNECTION) {
            Some(usize::from(data_len).saturating_sub(8).max(SCRAMBLE_41_PART2_LEN))
        } else {
            // No SECURE_CONNECTION, yet the 4.1 part may be there (msql-srv
            // sends it): libmariadb takes it when the bytes are there.
            (r.remaining() >= SCRAMBLE_41_PART2_LEN).then_some(SCRAMBLE_41_PART2_LEN)
        };
        if let Some(len) = part2_len {
            let mut data2 = r.take(len, "auth plugin data part 2")?;
            if let [head @ .., 0] = data2 {
                data2 = head;
            }
            hs.auth_plugin_data.extend_from_slice(data2);
        }
        if caps.contains(Capabilities::PLUGIN_AUTH) {
            // MySQL 5.5.7-5.5.9 omitted the final NUL.
            hs.auth_plugin_name = r.null_terminated_or_rest();
        }
        Ok(hs)
    }

    /// The version without MariaDB's `5.5.5-` compatibility prefix.
    pub fn display_version(&self) -> &'a [u8] {
        match self.server_version.strip_prefix(MARIADB_VERSION_PREFIX) {
            Some(rest) if self.is_mariadb() => rest,
            _ => self.server_version,
        }
    }

    /// Whether the greeting carries the 4.1 scramble (20 bytes), which the
    /// login needs; a server before 4.1 sent only the first 8.
    pub fn has_41_scramble(&self) -> bool {
        self.auth_plugin_data.len() >= SCRAMBLE_41_LEN
    }

    /// MariaDB clears CLIENT_MYSQL (bit 0) since 10.2 and names itself in the version.
    pub fn is_mariadb(&self) -> bool {
        !self.capabilities.contains(Capabilities::LONG_PASSWORD)
            || self.server_version.windows(7).any(|w| w.eq_ignore_ascii_case(b"mariadb"))
    }
}

/// What the client wants beyond the fixed set; see [`negotiate_capabilities`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CapabilityOptions {
    /// A default database is sent in the handshake response.
    pub with_database: bool,
    /// TLS will be used: ask for CLIENT_SSL, and require the server to offer it.
    pub tls: bool,
    /// Ask for CLIENT_DEPRECATE_EOF (OK instead of EOF packets after rows).
    pub deprecate_eof: bool,
    /// Connection attributes will be sent.
    pub connect_attrs: bool,
    /// Anything else to ask for, e.g. MariaDB extended capabilities.
    pub extra: Capabilities,
}

/// The capabilities the client asks for.
pub fn client_capabilities(options: &CapabilityOptions) -> Capabilities {
    let mut caps = Capabilities::LONG_PASSWORD
        | Capabilities::PROTOCOL_41
        | Capabilities::SECURE_CONNECTION
        | Capabilities::PLUGIN_AUTH
        | Capabilities::PLUGIN_AUTH_LENENC_CLIENT_DATA
        | Capabilities::TRANSACTIONS
        | Capabilities::MULTI_RESULTS
        | Capabilities::PS_MULTI_RESULTS
        | Capabilities::MULTI_STATEMENTS
        | options.extra;
    for (wanted, flag) in [
        (options.with_database, Capabilities::CONNECT_WITH_DB),
        (options.tls, Capabilities::SSL),
        (options.deprecate_eof, Capabilities::DEPRECATE_EOF),
        (options.connect_attrs, Capabilities::CONNECT_ATTRS),
    ] {
        if wanted {
            caps |= flag;
        }
    }
    caps
}

/// The capabilities in force: what the client asks for and the server offers.
///
/// LONG_PASSWORD (bit 0) is always asked for; against MariaDB, which clears
/// it, the intersection clears it too, which is how a client says "read my
/// extended capabilities from the filler".
///
/// PROTOCOL_41 is required (wirebench reads 4.1 result sets only).
/// SECURE_CONNECTION is not: a greeting with the 4.1 scramble is answered
/// with 4.1 authentication whatever its flags say, as libmariadb answers it
/// ([`InitialHandshake::has_41_scramble`] is the caller's check), so the
/// flag stays in what the client announces.
pub fn negotiate_capabilities(server: Capabilities, options: &CapabilityOptions) -> Result<Capabilities> {
    if !server.contains(Capabilities::PROTOCOL_41) {
        return Err(ProtocolError::MissingCapability("PROTOCOL_41"));
    }
    if options.tls && !server.contains(Capabilities::SSL) {
        return Err(ProtocolError::MissingCapability("SSL"));
    }
    Ok((client_capabilities(options) & server) | Capabilities::SECURE_CONNECTION)
}

/// The deviations a greeting's capabilities show against what the client
/// asked for, each of which the login tolerates (see [`Deviation`]).
pub fn greeting_deviations(server: Capabilities, options: &CapabilityOptions) -> Deviations {
    let mut found = Deviations::default();
    for (missing, asked, kind) in [
        (Capabilities::SECURE_CONNECTION, true, Deviation::NoSecureConnection),
        (Capabilities::CONNECT_WITH_DB, options.with_database, Deviation::NoConnectWithDb),
        (Capabilities::TRANSACTIONS, true, Deviation::NoTransactions),
        (Capabilities::PLUGIN_AUTH, true, Deviation::NoPluginAuth),
        (Capabilities::DEPRECATE_EOF, options.deprecate_eof, Deviation::NoDeprecateEof),
    ] {
        if asked && !server.contains(missing) {
            found.add(kind, 1);
        }
    }
    found
}

/// Writes the prefix HandshakeResponse41 and SSLRequest share: capabilities,
/// max packet size, charset, and the filler whose last 4 bytes carry
/// MariaDB's extended capabilities (zero unless bit 0 was cleared).
fn put_client_prefix(out: &mut Vec<u8>, caps: Capabilities, max_packet_size: u32, charset: u8) {
    out.put_u32(caps.low());
    out.put_u32(max_packet_size);
    out.put_u8(charset);
    out.put_zeros(RESPONSE_FILLER_LEN - 4);
    let ext = if caps.contains(Capabilities::LONG_PASSWORD) { 0 } else { caps.mariadb_ext() };
    out.put_u32(ext);
}

/// Protocol::SSLRequest: the start of a handshake response, after which the
/// client begins the TLS handshake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SslRequest {
    /// The negotiated capabilities, CLIENT_SSL included.
    pub capabilities: Capabilities,
    pub max_packet_size: u32,
    pub charset: u8,
}

impl SslRequest {
    /// Appends the packet with sequence id `seq` (1); returns the next id.
    pub fn encode(&self, out: &mut Vec<u8>, seq: u8) -> u8 {
        let start = start_packet(out);
        put_client_prefix(out, self.capabilities, self.max_packet_size, self.charset);
        finish_packet(out, start, seq)
    }
}

/// Protocol::HandshakeResponse41.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HandshakeResponse41<'a> {
    /// The negotiated capabilities; they decide which fields are written.
    pub capabilities: Capabilities,
    pub max_packet_size: u32,
    pub charset: u8,
    pub user: &'a [u8],
    /// The auth plugin's first answer.
    pub auth_response: &'a [u8],
    /// Written when CONNECT_WITH_DB is set.
    pub database: Option<&'a [u8]>,
    /// Written when PLUGIN_AUTH is set.
    pub auth_plugin_name: &'a [u8],
    /// Written when CONNECT_ATTRS is set.
    pub connect_attrs: &'a [(String, String)],
}

impl HandshakeResponse41<'_> {
    /// Appends the packet with sequence id `seq` (1, or 2 after SSLRequest);
    /// returns the next id. Fails when a NUL-terminated field contains a NUL,
    /// or when the auth response does not fit its length prefix; then
    /// nothing is written.
    pub fn encode(&self, out: &mut Vec<u8>, seq: u8) -> Result<u8, UsageError> {
        let caps = self.capabilities;
        let database = self.database.unwrap_or_default();
        for (field, what) in
            [(self.user, "user name"), (database, "database name"), (self.auth_plugin_name, "auth plugin name")]
        {
            if field.contains(&0) {
                return Err(UsageError::NulInField(what));
            }
        }
        let rollback = out.len();
        let start = start_packet(out);
        put_client_prefix(out, caps, self.max_packet_size, self.charset);
        out.put_null_terminated(self.user);
        if caps.contains(Capabilities::PLUGIN_AUTH_LENENC_CLIENT_DATA) {
            out.put_lenenc_bytes(self.auth_response);
        } else {
            let Ok(len) = u8::try_from(self.auth_response.len()) else {
                out.truncate(rollback);
                return Err(UsageError::AuthResponseTooLong { len: self.auth_response.len() });
            };
            out.put_u8(len);
            out.put_bytes(self.auth_response);
        }
        if caps.contains(Capabilities::CONNECT_WITH_DB) {
            out.put_null_terminated(database);
        }
        if caps.contains(Capabilities::PLUGIN_AUTH) {
            out.put_null_terminated(self.auth_plugin_name);
        }
        if caps.contains(Capabilities::CONNECT_ATTRS) {
            let total: usize = self
                .connect_attrs
                .iter()
                .map(|(k, v)| lenenc_str_len(k.as_bytes()) + lenenc_str_len(v.as_bytes()))
                .sum();
            out.put_lenenc_int(total as u64);
            for (k, v) in self.connect_attrs {
                out.put_lenenc_bytes(k.as_bytes());
                out.put_lenenc_bytes(v.as_bytes());
            }
        }
        Ok(finish_packet(out, start, seq))
    }
}

fn lenenc_str_len(s: &[u8]) -> usize {
    crate::buf::lenenc_int_len(s.len() as u64) + s.len()
}

/// Protocol::AuthSwitchRequest: the server wants another plugin, with a new nonce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuthSwitchRequest<'a> {
    pub plugin_name: &'a [u8],
    /// The new nonce, without the trailing NUL servers append.
    pub plugin_data: &'a [u8],
}

impl<'a> AuthSwitchRequest<'a> {
    /// Parses a 0xFE-headed packet of the authentication phase. A bare 0xFE
    /// is the pre-4.1 "switch to mysql_old_password" request, refused as an
    /// unsupported plugin: that hash is broken and no current server uses it.
    pub fn parse(payload: &'a [u8]) -> Result<Self> {
        let mut r = Reader::new(payload);
        let header = r.u8("AuthSwitchRequest header")?;
        if header != AUTH_SWITCH_HEADER {
            return Err(ProtocolError::BadHeader { context: "AuthSwitchRequest", byte: header });
        }
        if r.is_empty() {
            return Err(ProtocolError::UnsupportedAuthPlugin("mysql_old_password".into()));
        }
        let plugin_name = r.null_terminated_or_rest();
        let mut plugin_data = r.rest();
        if let [head @ .., 0] = plugin_data {
            plugin_data = head;
        }
        Ok(AuthSwitchRequest { plugin_name, plugin_data })
    }
}

/// Protocol::AuthMoreData: plugin-specific bytes from the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuthMoreData<'a> {
    pub data: &'a [u8],
}

impl<'a> AuthMoreData<'a> {
    pub fn parse(payload: &'a [u8]) -> Result<Self> {
        match payload.split_first() {
            Some((&AUTH_MORE_DATA_HEADER, data)) => Ok(AuthMoreData { data }),
            Some((&byte, _)) => Err(ProtocolError::BadHeader { context: "AuthMoreData", byte }),
            None => Err(ProtocolError::UnexpectedEof("AuthMoreData header")),
        }
    }
}

/// A test-only decoder of HandshakeResponse41, as a server reads it, so that
/// tests check the encoder field by field rather than against itself.
#[cfg(test)]
pub(crate) mod test_support {
    use super::*;

    pub(crate) fn from_hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    /// The first packet of MariaDB 10.11.19 (Debian 12), captured on this
    /// machine from a unix socket: header included.
    pub(crate) const MARIADB_GREETING: &str =
        "64000000 0a 352e352e352d31302e31312e31392d4d6172696144422d302b64656231327531 00
        04000000 297431334d674253 00 fef7 08 0200 ff81 15 000000000000 1d000000
        5b505c604e43457024613e4e00 6d7973716c5f6e61746976655f70617373776f726400";

    /// A MySQL 8.0.32 greeting with the caching_sha2_password default plugin,
    /// as a publicly quoted Wireshark capture shows it: header included.
    pub(crate) const MYSQL8_GREETING: &str =
        "4a000000 0a 382e302e333200 d8010000 7571731458073040 00 ffff ff 0200 ffdf 15
        00000000000000000000 2841384f5745210e22157738 00 63616368696e675f736861325f70617373776f726400";

    /// msql-srv 0.11's greeting, byte for byte as it writes it: flags 0x4200
    /// (PROTOCOL_41 and bit 14, no SECURE_CONNECTION), a zero plugin-data
    /// length, and the 4.1 scramble's second part all the same.
    pub(crate) const MSQL_SRV_GREETING: &[u8] =
        b"\x0a5.1.10-alpha-msql-proxy\0\x08\x00\x00\x00;X,po_k}\0\x00\x42\x21\x00\x00\x00\x00\x00\
          \0\0\0\0\0\0\0\0\0\0>o6^Wz!/kM}N\0";

    #[derive(Debug, Clone, PartialEq, Eq)]
    pub(crate) struct ParsedResponse {
        pub capabilities: Capabilities,
        pub max_packet_size: u32,
        pub charset: u8,
        pub user: Vec<u8>,
        pub auth_response: Vec<u8>,
        pub database: Option<Vec<u8>>,
        pub auth_plugin_name: Option<Vec<u8>>,
        pub connect_attrs: Vec<(String, String)>,
    }

    pub(crate) fn parse_response(payload: &[u8]) -> Result<ParsedResponse> {
        let mut r = Reader::new(payload);
        let low = r.u32("caps")?;
        let max_packet_size = r.u32("max packet")?;
        let charset = r.u8("charset")?;
        let filler = r.array::<23>("filler")?;
        let ext = u32::from_le_bytes(filler[19..].try_into().unwrap());
        assert!(filler[..19].iter().all(|&b| b == 0), "filler bytes 0..19 must be zero");
        let capabilities = Capabilities::from_parts(low, if low & 1 == 0 { ext } else { 0 });
        if low & 1 == 1 {
            assert_eq!(ext, 0, "extended capabilities sent to a MySQL server");
        }
        let mut p = ParsedResponse {
            capabilities,
            max_packet_size,
            charset,
            user: Vec::new(),
            auth_response: Vec::new(),
            database: None,
            auth_plugin_name: None,
            connect_attrs: Vec::new(),
        };
        if r.is_empty() {
            return Ok(p); // an SSLRequest
        }
        p.user = r.null_terminated("user")?.to_vec();
        p.auth_response = if capabilities.contains(Capabilities::PLUGIN_AUTH_LENENC_CLIENT_DATA) {
            r.lenenc_bytes("auth")?.to_vec()
        } else {
            let n = r.u8("auth len")?;
            r.take(usize::from(n), "auth")?.to_vec()
        };
        if capabilities.contains(Capabilities::CONNECT_WITH_DB) {
            p.database = Some(r.null_terminated("db")?.to_vec());
        }
        if capabilities.contains(Capabilities::PLUGIN_AUTH) {
            p.auth_plugin_name = Some(r.null_terminated("plugin")?.to_vec());
        }
        if capabilities.contains(Capabilities::CONNECT_ATTRS) {
            let total = r.lenenc_int("attrs len")? as usize;
            let mut attrs = Reader::new(r.take(total, "attrs")?);
            while !attrs.is_empty() {
                let k = String::from_utf8(attrs.lenenc_bytes("key")?.to_vec()).unwrap();
                let v = String::from_utf8(attrs.lenenc_bytes("value")?.to_vec()).unwrap();
                p.connect_attrs.push((k, v));
            }
        }
        r.finish("handshake response")?;
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::{from_hex, parse_response, MARIADB_GREETING, MSQL_SRV_GREETING, MYSQL8_GREETING};
    use super::*;
    use crate::framing::decode_packet;
    use proptest::prelude::*;

    fn greeting_payload(hex: &str) -> Vec<u8> {
        let bytes = from_hex(hex);
        let frame = decode_packet(&bytes, 0, 1 << 20).unwrap().unwrap();
        assert_eq!(frame.consumed, bytes.len());
        frame.payload.into_owned()
    }

    #[test]
    fn mariadb_10_11_greeting() {
        let payload = greeting_payload(MARIADB_GREETING);
        let Greeting::Handshake(hs) = Greeting::parse(&payload).unwrap() else { panic!("not a greeting") };
        assert_eq!(hs.server_version, b"5.5.5-10.11.19-MariaDB-0+deb12u1");
        assert_eq!(hs.display_version(), b"10.11.19-MariaDB-0+deb12u1");
        assert!(hs.is_mariadb());
        assert_eq!(hs.connection_id, 4);
        assert_eq!(hs.charset, 8);
        assert_eq!(hs.status, StatusFlags::AUTOCOMMIT);
        // Bit 0 clear: MariaDB; 0x1d = PROGRESS | STMT_BULK_OPERATIONS | EXTENDED_TYPE_INFO | CACHE_METADATA.
        assert_eq!(hs.capabilities, Capabilities::from_parts(0x81ff_f7fe, 0x1d));
        assert!(!hs.capabilities.contains(Capabilities::LONG_PASSWORD));
        assert!(hs.capabilities.contains(Capabilities::MARIADB_CLIENT_CACHE_METADATA));
        assert!(hs.capabilities.contains(Capabilities::DEPRECATE_EOF));
        assert_eq!(hs.auth_plugin_data, b")t13MgBS[P\\`NCEp$a>N");
        assert_eq!(hs.auth_plugin_name, b"mysql_native_password");
    }

    #[test]
    fn mysql_8_greeting() {
        let payload = greeting_payload(MYSQL8_GREETING);
        let hs = InitialHandshake::parse(&payload).unwrap();
        assert_eq!(hs.server_version, b"8.0.32");
        assert_eq!(hs.display_version(), b"8.0.32");
        assert!(!hs.is_mariadb());
        assert_eq!(hs.connection_id, 472);
        assert_eq!(hs.charset, 255);
        assert_eq!(hs.capabilities, Capabilities(0xdfff_ffff), "no extended capabilities when bit 0 is set");
        assert_eq!(hs.auth_plugin_data, from_hex("7571731458073040 2841384f5745210e22157738"));
        assert_eq!(hs.auth_plugin_name, b"caching_sha2_password");
    }

    #[test]
    fn greeting_without_secure_connection_keeps_its_41_scramble() {
        let hs = InitialHandshake::parse(MSQL_SRV_GREETING).unwrap();
        assert_eq!(hs.capabilities, Capabilities(0x4200));
        assert_eq!(hs.auth_plugin_data, b";X,po_k}>o6^Wz!/kM}N");
        assert!(hs.has_41_scramble());
        assert_eq!(hs.auth_plugin_name, b"");
        // The same greeting cut before its second part: what a server before
        // 4.1 sent (8 bytes of scramble): parsed, but not a 4.1 scramble.
        let cut = &MSQL_SRV_GREETING[..MSQL_SRV_GREETING.len() - 13];
        let hs = InitialHandshake::parse(cut).unwrap();
        assert_eq!(hs.auth_plugin_data, b";X,po_k}");
        assert!(!hs.has_41_scramble());
    }

    #[test]
    fn greeting_variants() {
        // A long nonce: auth_plugin_data_len 33 gives a 25-byte part 2 (24 + NUL).
        let mut p = vec![10];
        p.extend_from_slice(b"8.0.0\0");
        p.extend_from_slice(&[1, 0, 0, 0]);
        p.extend_from_slice(b"ABCDEFGH\0");
        p.extend_from_slice(&[0xff, 0xff, 45, 2, 0, 0xff, 0xff, 33]);
        p.extend_from_slice(&[0; 10]);
        p.extend_from_slice(b"IJKLMNOPQRSTUVWXYZ012345\0");
        p.extend_from_slice(b"caching_sha2_password"); // no final NUL (MySQL 5.5.7)
        let hs = InitialHandshake::parse(&p).unwrap();
        assert_eq!(hs.auth_plugin_data, b"ABCDEFGHIJKLMNOPQRSTUVWXYZ012345");
        assert_eq!(hs.auth_plugin_name, b"caching_sha2_password");
        // A bit-0-set server's reserved bytes are not extended capabilities.
        assert_eq!(hs.capabilities.mariadb_ext(), 0);

        // Pre-4.1 server: ends after the low capability bytes.
        let mut old = vec![10];
        old.extend_from_slice(b"4.0.1\0\x01\0\0\0ABCDEFGH\0\x2c\x00");
        let hs = InitialHandshake::parse(&old).unwrap();
        assert_eq!(hs.capabilities, Capabilities(0x2c));
        assert_eq!(hs.auth_plugin_data, b"ABCDEFGH");
        assert_eq!(
            negotiate_capabilities(hs.capabilities, &CapabilityOptions::default()),
            Err(ProtocolError::MissingCapability("PROTOCOL_41"))
        );
    }

    #[test]
    fn greeting_errors() {
        assert_eq!(InitialHandshake::parse(b"\x09abc\0"), Err(ProtocolError::UnsupportedProtocolVersion(9)));
        assert_eq!(InitialHandshake::parse(b""), Err(ProtocolError::UnexpectedEof("protocol version")));
        let full = greeting_payload(MARIADB_GREETING);
        // Every truncation before the plugin name is an error, never a panic.
        for cut in 0..full.len() - 22 {
            // Cut right after the low capability flags, it reads as a pre-4.1 greeting.
            assert_eq!(InitialHandshake::parse(&full[..cut]).is_err(), cut != 49, "cut at {cut}");
        }
        // Pre-handshake ERR, as a server at max_connections sends it.
        let err = b"\xff\x10\x04Too many connections";
        let Greeting::Error(e) = Greeting::parse(err).unwrap() else { panic!("not an error") };
        assert_eq!((e.code, e.sql_state, e.message), (1040, None, &b"Too many connections"[..]));
    }

    #[test]
    fn negotiation() {
        let mysql = Capabilities(0xdfff_ffff);
        let mariadb = Capabilities::from_parts(0x81ff_f7fe, 0x1d);
        let opts = CapabilityOptions { deprecate_eof: true, ..Default::default() };
        let caps = negotiate_capabilities(mysql, &opts).unwrap();
        let expected = Capabilities::LONG_PASSWORD
            | Capabilities::PROTOCOL_41
            | Capabilities::SECURE_CONNECTION
            | Capabilities::PLUGIN_AUTH
            | Capabilities::PLUGIN_AUTH_LENENC_CLIENT_DATA
            | Capabilities::TRANSACTIONS
            | Capabilities::MULTI_RESULTS
            | Capabilities::PS_MULTI_RESULTS
            | Capabilities::MULTI_STATEMENTS
            | Capabilities::DEPRECATE_EOF;
        assert_eq!(caps, expected);
        // MariaDB: bit 0 cleared by the intersection, no extended caps unless asked.
        let caps = negotiate_capabilities(mariadb, &opts).unwrap();
        assert_eq!(caps, Capabilities(expected.0 & !1));
        let opts = CapabilityOptions {
            with_database: true,
            connect_attrs: true,
            extra: Capabilities::MARIADB_CLIENT_CACHE_METADATA | Capabilities::MARIADB_CLIENT_COM_MULTI,
            ..Default::default()
        };
        let caps = negotiate_capabilities(mariadb, &opts).unwrap();
        assert!(caps.contains(Capabilities::CONNECT_WITH_DB | Capabilities::CONNECT_ATTRS));
        assert!(!caps.contains(Capabilities::DEPRECATE_EOF));
        assert_eq!(
            caps.mariadb_ext(),
            Capabilities::MARIADB_CLIENT_CACHE_METADATA.mariadb_ext(),
            "COM_MULTI not offered"
        );
        // TLS.
        let tls = CapabilityOptions { tls: true, ..Default::default() };
        assert!(negotiate_capabilities(mysql, &tls).unwrap().contains(Capabilities::SSL));
        assert_eq!(negotiate_capabilities(mariadb, &tls), Err(ProtocolError::MissingCapability("SSL")));
        assert!(!negotiate_capabilities(mysql, &CapabilityOptions::default()).unwrap().contains(Capabilities::SSL));
        // Without SECURE_CONNECTION (msql-srv), the client still announces it.
        let no_secure = Capabilities(mysql.0 & !Capabilities::SECURE_CONNECTION.0);
        assert!(negotiate_capabilities(no_secure, &opts).unwrap().contains(Capabilities::SECURE_CONNECTION));
        assert_eq!(greeting_deviations(mysql, &opts), Deviations::default());
        let seen = greeting_deviations(no_secure, &opts);
        assert_eq!(seen.iter().collect::<Vec<_>>(), [(Deviation::NoSecureConnection, 1)]);
        // msql-srv's flags: PROTOCOL_41 and bit 14, nothing else.
        let msql_srv = Capabilities(0x4200);
        let asked = CapabilityOptions { with_database: true, deprecate_eof: true, ..Default::default() };
        let caps = negotiate_capabilities(msql_srv, &asked).unwrap();
        assert_eq!(caps, Capabilities::PROTOCOL_41 | Capabilities::SECURE_CONNECTION);
        assert_eq!(greeting_deviations(msql_srv, &asked).iter().count(), 5);
        // Without PROTOCOL_41: refused.
        let pre41 = Capabilities(mysql.0 & !Capabilities::PROTOCOL_41.0);
        assert_eq!(negotiate_capabilities(pre41, &opts), Err(ProtocolError::MissingCapability("PROTOCOL_41")));
    }

    #[test]
    fn handshake_response_golden() {
        // To MariaDB (bit 0 clear, CACHE_METADATA asked for), user "sbtest",
        // native scramble of the captured greeting's nonce, database "sbtest".
        let caps = Capabilities::PROTOCOL_41
            | Capabilities::SECURE_CONNECTION
            | Capabilities::PLUGIN_AUTH
            | Capabilities::PLUGIN_AUTH_LENENC_CLIENT_DATA
            | Capabilities::CONNECT_WITH_DB
            | Capabilities::TRANSACTIONS
            | Capabilities::MARIADB_CLIENT_CACHE_METADATA;
        let scramble = crate::auth::native_password::scramble(b"sbtest", b")t13MgBS[P\\`NCEp$a>N");
        let resp = HandshakeResponse41 {
            capabilities: caps,
            max_packet_size: 0x0100_0000,
            charset: 45,
            user: b"sbtest",
            auth_response: &scramble,
            database: Some(b"sbtest"),
            auth_plugin_name: b"mysql_native_password",
            connect_attrs: &[],
        };
        let mut out = vec![0xAA]; // existing content stays
        assert_eq!(resp.encode(&mut out, 1), Ok(2));
        let expected = from_hex(
            "AA 590000 01 08a22800 00000001 2d 00000000000000000000000000000000000000 10000000
             73627465737400 14 d98f690c3fff028b3366943b30cb23a24a7ca629 73627465737400
             6d7973716c5f6e61746976655f70617373776f726400",
        );
        assert_eq!(out, expected);
    }

    #[test]
    fn handshake_response_to_mysql_with_attrs() {
        let caps = Capabilities::LONG_PASSWORD
            | Capabilities::PROTOCOL_41
            | Capabilities::SECURE_CONNECTION
            | Capabilities::PLUGIN_AUTH
            | Capabilities::CONNECT_ATTRS
            | Capabilities::MARIADB_CLIENT_CACHE_METADATA; // not sent: bit 0 is set
        let attrs = vec![("_client_name".to_string(), "wirebench".to_string())];
        let resp = HandshakeResponse41 {
            capabilities: caps,
            max_packet_size: 1 << 24,
            charset: 255,
            user: b"root",
            auth_response: b"",
            database: Some(b"ignored without CONNECT_WITH_DB"),
            auth_plugin_name: b"caching_sha2_password",
            connect_attrs: &attrs,
        };
        let mut out = Vec::new();
        resp.encode(&mut out, 2).unwrap();
        let expected = from_hex(
            "540000 02 01821800 00000001 ff 0000000000000000000000000000000000000000000000
             726f6f7400 00 63616368696e675f736861325f70617373776f726400
             17 0c 5f636c69656e745f6e616d65 09 7769726562656e6368",
        );
        assert_eq!(out, expected);
    }

    #[test]
    fn handshake_response_refusals() {
        let base = HandshakeResponse41 {
            capabilities: Capabilities::PROTOCOL_41 | Capabilities::SECURE_CONNECTION,
            max_packet_size: 1,
            charset: 45,
            user: b"u",
            auth_response: &[7; 256],
            database: None,
            auth_plugin_name: b"",
            connect_attrs: &[],
        };
        let mut out = b"keep".to_vec();
        assert_eq!(base.encode(&mut out, 1), Err(UsageError::AuthResponseTooLong { len: 256 }));
        assert_eq!(out, b"keep", "a refused packet leaves no partial bytes");
        let nul_user = HandshakeResponse41 { user: b"a\0b", auth_response: b"", ..base };
        assert_eq!(nul_user.encode(&mut out, 1), Err(UsageError::NulInField("user name")));
        assert_eq!(out, b"keep");
        let lenenc = HandshakeResponse41 {
            capabilities: base.capabilities | Capabilities::PLUGIN_AUTH_LENENC_CLIENT_DATA,
            ..base
        };
        lenenc.encode(&mut out, 1).unwrap();
        assert_eq!(parse_response(&out[8..]).unwrap().auth_response, vec![7; 256]);
    }

    #[test]
    fn ssl_request_golden() {
        let caps = Capabilities::LONG_PASSWORD
            | Capabilities::PROTOCOL_41
            | Capabilities::SSL
            | Capabilities::SECURE_CONNECTION
            | Capabilities::PLUGIN_AUTH;
        let mut out = Vec::new();
        let next = SslRequest { capabilities: caps, max_packet_size: 1 << 24, charset: 45 }.encode(&mut out, 1);
        assert_eq!(next, 2);
        assert_eq!(out, from_hex("200000 01 018a0800 00000001 2d 0000000000000000000000000000000000000000000000"));
        // MariaDB: extended capabilities in the last 4 filler bytes, as in the response.
        let caps = Capabilities(caps.0 & !1) | Capabilities::MARIADB_CLIENT_CACHE_METADATA;
        let mut out = Vec::new();
        SslRequest { capabilities: caps, max_packet_size: 1 << 24, charset: 45 }.encode(&mut out, 1);
        assert_eq!(&out[4..], &from_hex("008a0800 00000001 2d 00000000000000000000000000000000000000 10000000")[..]);
    }

    #[test]
    fn auth_switch_and_more_data() {
        // MariaDB switching to client_ed25519 with a 32-byte nonce (no trailing NUL).
        let mut p = vec![0xFE];
        p.extend_from_slice(b"client_ed25519\0");
        p.extend_from_slice(&[0x55; 32]);
        let sw = AuthSwitchRequest::parse(&p).unwrap();
        assert_eq!(sw.plugin_name, b"client_ed25519");
        assert_eq!(sw.plugin_data, &[0x55; 32]);
        // MySQL appends a NUL to the 20-byte nonce.
        let mut p = vec![0xFE];
        p.extend_from_slice(b"mysql_native_password\0");
        p.extend_from_slice(b"01234567890123456789\0");
        let sw = AuthSwitchRequest::parse(&p).unwrap();
        assert_eq!(sw.plugin_data, b"01234567890123456789");
        // The pre-4.1 form.
        assert_eq!(
            AuthSwitchRequest::parse(&[0xFE]),
            Err(ProtocolError::UnsupportedAuthPlugin("mysql_old_password".into()))
        );
        assert!(matches!(AuthSwitchRequest::parse(&[0x01]), Err(ProtocolError::BadHeader { .. })));
        // Plugin name without NUL and no data.
        let sw = AuthSwitchRequest::parse(b"\xfeclient_ed25519").unwrap();
        assert_eq!((sw.plugin_name, sw.plugin_data), (&b"client_ed25519"[..], &b""[..]));

        assert_eq!(AuthMoreData::parse(&[0x01, 0x03]).unwrap().data, &[0x03]);
        assert_eq!(AuthMoreData::parse(&[0x01]).unwrap().data, b"");
        assert_eq!(AuthMoreData::parse(&[]), Err(ProtocolError::UnexpectedEof("AuthMoreData header")));
        assert!(matches!(AuthMoreData::parse(&[0x02]), Err(ProtocolError::BadHeader { .. })));
    }

    fn arb_caps() -> impl Strategy<Value = Capabilities> {
        any::<u64>().prop_map(|bits| {
            // Extended bits travel only when bit 0 is clear.
            if bits & 1 == 1 {
                Capabilities(bits & 0xFFFF_FFFF)
            } else {
                Capabilities(bits)
            }
        })
    }

    proptest! {
        #[test]
        fn response_round_trip(
            caps in arb_caps(),
            max_packet in any::<u32>(),
            charset in any::<u8>(),
            user in "[a-z_]{0,20}",
            auth in proptest::collection::vec(any::<u8>(), 0..300),
            db in proptest::option::of("[a-z]{1,10}"),
            plugin in "[a-z_]{0,25}",
            attrs in proptest::collection::vec(("[a-z_]{0,12}", ".{0,40}"), 0..5),
            seq in any::<u8>(),
        ) {
            let resp = HandshakeResponse41 {
                capabilities: caps,
                max_packet_size: max_packet,
                charset,
                user: user.as_bytes(),
                auth_response: &auth,
                database: db.as_deref().map(str::as_bytes),
                auth_plugin_name: plugin.as_bytes(),
                connect_attrs: &attrs,
            };
            let mut out = Vec::new();
            let lenenc = caps.contains(Capabilities::PLUGIN_AUTH_LENENC_CLIENT_DATA);
            match resp.encode(&mut out, seq) {
                Err(_) => prop_assert!(!lenenc && auth.len() > 255),
                Ok(next) => {
                    prop_assert_eq!(next, seq.wrapping_add(1));
                    let frame = decode_packet(&out, seq, 1 << 20).unwrap().unwrap();
                    let p = parse_response(&frame.payload).unwrap();
                    prop_assert_eq!(p.capabilities, caps);
                    prop_assert_eq!((p.max_packet_size, p.charset), (max_packet, charset));
                    prop_assert_eq!(&p.user, user.as_bytes());
                    prop_assert_eq!(&p.auth_response, &auth);
                    if caps.contains(Capabilities::CONNECT_WITH_DB) {
                        prop_assert_eq!(p.database.unwrap(), db.unwrap_or_default().into_bytes());
                    }
                    if caps.contains(Capabilities::PLUGIN_AUTH) {
                        prop_assert_eq!(p.auth_plugin_name.unwrap(), plugin.into_bytes());
                    }
                    if caps.contains(Capabilities::CONNECT_ATTRS) {
                        prop_assert_eq!(p.connect_attrs, attrs);
                    }
                }
            }
        }

        #[test]
        fn decoders_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..128)) {
            let _ = Greeting::parse(&bytes);
            let _ = AuthSwitchRequest::parse(&bytes);
            let _ = AuthMoreData::parse(&bytes);
        }

        #[test]
        fn greeting_mutations_never_panic(
            pos in 0usize..100, byte in any::<u8>(), cut in 0usize..110,
        ) {
            let mut g = greeting_payload(MARIADB_GREETING);
            if pos < g.len() {
                g[pos] = byte;
            }
            g.truncate(cut);
            let _ = Greeting::parse(&g);
        }
    }
}
