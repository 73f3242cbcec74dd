//! What a recording proxy keeps of one connection it forwards: the same
//! reading as a pcap import's ([`import`](crate::import)), fed with what
//! the proxy sees inside TLS (it ends it) and inflated once the login
//! negotiated compression (the proxy forwards the compressed bytes as they
//! are and inflates a copy for the tap). Records come out in the order
//! the bytes went in, each dated with the time its bytes were read.
//!
//! The proxy calls, per connection: [`ConnectionTap::client_bytes`] and
//! [`ConnectionTap::server_bytes`] with each read, before it forwards the
//! bytes (so a command is read before its answer can be, and a LOCAL INFILE
//! request before the file it asks for); [`ConnectionTap::is_compressed`]
//! after server bytes, to start inflating; [`ConnectionTap::close`] once.

use crate::format::{ConnId, Record};
use crate::import::mysql_conn::MysqlConn;
use crate::import::ImportReport;

pub use crate::import::mysql_conn::Closer;

/// One forwarded connection's reading, from its greeting on.
pub struct ConnectionTap {
    conn: MysqlConn,
}

impl std::fmt::Debug for ConnectionTap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectionTap").field("compressed", &self.conn.is_compressed()).finish()
    }
}

impl ConnectionTap {
    /// `id` is the connection's id in the capture; the addresses are kept
    /// in its open record (`host:port`, or a socket's path).
    pub fn new(id: ConnId, client_addr: String, server_addr: String) -> Self {
        ConnectionTap { conn: MysqlConn::proxied(id, client_addr, server_addr) }
    }

    /// Bytes the client sent, read at `at_ns` (ns since the Unix epoch):
    /// its records are appended to `out`, counted in `counts` (an
    /// import's counts: connections, commands, answers, gaps, ...).
    pub fn client_bytes(
        &mut self,
        at_ns: u64,
        bytes: &[u8],
        out: &mut Vec<Record<'static>>,
        counts: &mut ImportReport,
    ) {
        self.conn.client_bytes(at_ns, bytes, true, out, counts);
    }

    /// Bytes the server sent, read at `at_ns`.
    pub fn server_bytes(
        &mut self,
        at_ns: u64,
        bytes: &[u8],
        out: &mut Vec<Record<'static>>,
        counts: &mut ImportReport,
    ) {
        self.conn.server_bytes(at_ns, bytes, out, counts);
    }

    /// The login negotiated compression and is done: from here on the
    /// bytes handed over, both ways, must be inflated.
    pub fn is_compressed(&self) -> bool {
        self.conn.is_compressed()
    }

    /// The connection ended at `at_ns`, closed first by `closer`; a
    /// connection that never logged in leaves no record.
    pub fn close(&mut self, at_ns: u64, closer: Closer, out: &mut Vec<Record<'static>>, counts: &mut ImportReport) {
        self.conn.close(at_ns, closer, out, counts);
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use wirebench_protocol::compress::{CompressedStream, Deflater, Inflater};
    use wirebench_protocol::constants::command::{COM_QUERY, COM_QUIT};
    use wirebench_protocol::handshake::{HandshakeResponse41, SslRequest};
    use wirebench_protocol::response::AnswerKind;
    use wirebench_protocol::Capabilities;

    use super::*;
    use crate::format::CloseReason;

    const SERVER_CAPS: Capabilities = Capabilities(
        Capabilities::PROTOCOL_41.0
            | Capabilities::SECURE_CONNECTION.0
            | Capabilities::PLUGIN_AUTH.0
            | Capabilities::CONNECT_WITH_DB.0
            | Capabilities::DEPRECATE_EOF.0
            | Capabilities::SSL.0
            | Capabilities::COMPRESS.0
            | Capabilities::TRANSACTIONS.0,
    );

    fn packet(seq: u8, payload: &[u8]) -> Vec<u8> {
        let mut out = (payload.len() as u32).to_le_bytes()[..3].to_vec();
        out.push(seq);
        out.extend_from_slice(payload);
        out
    }

    fn greeting() -> Vec<u8> {
        let mut g = vec![10];
        g.extend_from_slice(b"10.11.19-MariaDB\0");
        g.extend_from_slice(&42u32.to_le_bytes());
        g.extend_from_slice(b"abcdefgh\0");
        g.extend_from_slice(&(SERVER_CAPS.0 as u16).to_le_bytes());
        g.push(45);
        g.extend_from_slice(&2u16.to_le_bytes());
        g.extend_from_slice(&((SERVER_CAPS.0 >> 16) as u16).to_le_bytes());
        g.push(21);
        g.extend_from_slice(&[0; 10]);
        g.extend_from_slice(b"ijklmnopqrst\0");
        g.extend_from_slice(b"mysql_native_password\0");
        packet(0, &g)
    }

    fn client_caps(extra: Capabilities) -> Capabilities {
        Capabilities::PROTOCOL_41
            | Capabilities::SECURE_CONNECTION
            | Capabilities::PLUGIN_AUTH
            | Capabilities::CONNECT_WITH_DB
            | Capabilities::DEPRECATE_EOF
            | extra
    }

    fn login(caps: Capabilities, seq: u8) -> Vec<u8> {
        let mut out = Vec::new();
        HandshakeResponse41 {
            capabilities: caps,
            max_packet_size: 1 << 24,
            charset: 45,
            user: b"app",
            auth_response: b"0123456789abcdefghij",
            database: Some(b"shop"),
            auth_plugin_name: b"mysql_native_password",
            connect_attrs: &[],
        }
        .encode(&mut out, seq)
        .unwrap();
        out
    }

    const OK: &[u8] = b"\x00\x00\x00\x02\x00\x00\x00";

    struct Fed {
        tap: ConnectionTap,
        records: Vec<Record<'static>>,
        counts: ImportReport,
    }

    impl Fed {
        fn new() -> Self {
            Fed {
                tap: ConnectionTap::new(7, "127.0.0.1:5000".into(), "127.0.0.1:3306".into()),
                records: Vec::new(),
                counts: ImportReport::default(),
            }
        }
        fn client(&mut self, at: u64, bytes: &[u8]) {
            self.tap.client_bytes(at, bytes, &mut self.records, &mut self.counts);
        }
        fn server(&mut self, at: u64, bytes: &[u8]) {
            self.tap.server_bytes(at, bytes, &mut self.records, &mut self.counts);
        }
    }

    /// The login read inside TLS: the SSLRequest says TLS, the login after
    /// it gives the user; the scramble is in no record.
    #[test]
    fn a_login_inside_tls_is_read_whole() {
        let mut fed = Fed::new();
        fed.server(1, &greeting());
        let caps = client_caps(Capabilities::SSL);
        let mut ssl = Vec::new();
        SslRequest { capabilities: caps, max_packet_size: 1 << 24, charset: 45 }.encode(&mut ssl, 1);
        fed.client(2, &ssl);
        assert!(fed.records.is_empty(), "no open before the login");
        fed.client(3, &login(caps, 2));
        fed.server(4, &packet(3, OK));
        fed.client(5, &packet(0, b"\x03SELECT 1"));
        fed.server(
            6,
            &[packet(1, b"\x01"), packet(2, b"\x03def\0\0\0\x011\0\x0c\x3f\0\x01\0\0\0\x08\x81\0\0\0\0")].concat(),
        );
        fed.server(7, &[packet(3, b"\x011"), packet(4, b"\xfe\0\0\x02\0\0\0")].concat());
        fed.client(8, &packet(0, &[COM_QUIT]));
        fed.tap.close(9, Closer::Client, &mut fed.records, &mut fed.counts);
        let Record::Open(open) = &fed.records[0] else { panic!("{:?}", fed.records) };
        assert!(open.tls && !open.compressed);
        assert_eq!(open.user.as_deref(), Some(&b"app"[..]));
        assert_eq!(open.database.as_deref(), Some(&b"shop"[..]));
        assert_eq!(open.server_thread_id, Some(42));
        for record in &fed.records {
            assert!(!format!("{record:?}").contains("0123456789"), "a scramble in {record:?}");
        }
        let Record::Answer(answer) = &fed.records[2] else { panic!("{:?}", fed.records) };
        assert_eq!((answer.at_ns, answer.kind, answer.rows), (7, Some(AnswerKind::ResultSet), Some(1)));
        assert!(matches!(fed.records.last(), Some(Record::Close(c)) if c.reason == CloseReason::Quit));
        assert_eq!((fed.counts.commands, fed.counts.answers), (2, 1));
    }

    /// Compression starts after the login's OK: the tap says so, and the
    /// commands and answers it is then fed inflated are read.
    #[test]
    fn compression_is_read_from_the_inflated_copy() {
        let mut fed = Fed::new();
        fed.server(1, &greeting());
        fed.client(2, &login(client_caps(Capabilities::COMPRESS), 1));
        assert!(!fed.tap.is_compressed());
        fed.server(3, &packet(2, OK));
        assert!(fed.tap.is_compressed(), "compressed from the login's OK on");
        let (mut deflater, mut inflater) = (Deflater::new(), Inflater::new());
        let long = format!("\x03SELECT '{}'", "x".repeat(400));
        let mut wire = Vec::new();
        CompressedStream::new().encode(&packet(0, long.as_bytes()), &mut wire, &mut deflater);
        let mut inflated = Vec::new();
        CompressedStream::new().decode(&wire, &mut inflated, &mut inflater).unwrap();
        fed.client(4, &inflated);
        fed.server(5, &packet(1, OK));
        let Record::Open(open) = &fed.records[0] else { panic!() };
        assert!(open.compressed);
        let Record::Command(command) = &fed.records[1] else { panic!("{:?}", fed.records) };
        assert_eq!(command.payload, Cow::Borrowed(long.as_bytes()));
        assert_eq!(command.command_byte(), Some(COM_QUERY));
        assert!(matches!(&fed.records[2], Record::Answer(a) if a.kind == Some(AnswerKind::Ok)));
    }

    /// A login the server refuses: the open record, then the close.
    #[test]
    fn a_refused_login_opens_and_closes() {
        let mut fed = Fed::new();
        fed.server(1, &greeting());
        fed.client(2, &login(client_caps(Capabilities::empty()), 1));
        fed.server(3, &packet(2, b"\xff\x15\x04#28000Access denied"));
        assert_eq!(fed.counts.logins_refused, 1);
        assert!(matches!(fed.records.last(), Some(Record::Close(c)) if c.reason == CloseReason::ServerClosed));
    }
}
