//! One connection's TLS stream: rustls's session, sans-IO, fed with the
//! bytes the socket delivered and drained of the records to send. A client
//! session towards a server; a server session towards a client
//! (`wirebench record`, which ends its applications' TLS).

use std::fmt;
use std::io::{self, Read, Write};

use rustls::{ClientConnection, Connection, ServerConnection};

use super::client_config::{ClientTls, TlsStartError};
use super::server_config::ServerTls;
use super::TlsError;

/// A TLS session over one connection: rustls's client or server state, fed
/// and drained with bytes.
pub struct TlsLayer {
    conn: Connection,
}

impl fmt::Debug for TlsLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsLayer")
            .field("handshaking", &self.conn.is_handshaking())
            .field("cipher", &self.cipher_name())
            .finish()
    }
}

impl TlsLayer {
    /// Starts a client session: [`write_pending`](Self::write_pending) then
    /// yields the ClientHello.
    /// `host` is the name the server's certificate is checked against
    /// (with VERIFY_IDENTITY) and sent as SNI.
    pub fn new(tls: &ClientTls, host: &str) -> Result<TlsLayer, TlsStartError> {
        let name = tls.server_name(host)?;
        let conn = ClientConnection::new(tls.config.clone(), name).map_err(TlsStartError::Rustls)?;
        Ok(TlsLayer { conn: Connection::Client(conn) })
    }

    /// Starts a server session: it waits for the client's ClientHello
    /// ([`decode`](Self::decode)), then [`write_pending`](Self::write_pending)
    /// yields the answer.
    pub fn serve(tls: &ServerTls) -> Result<TlsLayer, TlsStartError> {
        let conn = ServerConnection::new(tls.config.clone()).map_err(TlsStartError::Rustls)?;
        Ok(TlsLayer { conn: Connection::Server(conn) })
    }

    /// True until the handshake is complete (on this side).
    pub fn is_handshaking(&self) -> bool {
        self.conn.is_handshaking()
    }

    /// Appends the TLS records rustls wants sent (handshake messages,
    /// alerts, records encrypted by `encode`) to `wire`.
    pub fn write_pending(&mut self, wire: &mut Vec<u8>) -> Result<(), TlsError> {
        while self.conn.wants_write() {
            self.conn.write_tls(wire)?;
        }
        Ok(())
    }

    /// Bytes read from the socket: appends the packet-stream bytes they
    /// carry to `plain`. rustls keeps a partial record itself, so all of
    /// `wire` is consumed; the count is returned for the transport's contract.
    pub fn decode(&mut self, wire: &[u8], plain: &mut Vec<u8>) -> Result<usize, TlsError> {
        let mut rest = wire;
        while !rest.is_empty() {
            // Reads at most one buffer's worth; processing makes room for more.
            if self.conn.read_tls(&mut rest)? == 0 {
                break;
            }
            let state = self.conn.process_new_packets()?;
            let ready = state.plaintext_bytes_to_read();
            if ready > 0 {
                let start = plain.len();
                plain.resize(start + ready, 0);
                let into = plain.get_mut(start..).unwrap_or_default();
                self.conn.reader().read_exact(into)?;
            }
        }
        Ok(wire.len() - rest.len())
    }

    /// Packet-stream bytes to send: appends their TLS records to `wire`
    /// (after anything else pending, such as a handshake message).
    pub fn encode(&mut self, plain: &[u8], wire: &mut Vec<u8>) -> Result<(), TlsError> {
        let mut rest = plain;
        while !rest.is_empty() {
            // rustls buffers a bounded amount (64 KiB): encrypt in turns.
            let n = self.conn.writer().write(rest)?;
            let more = self.conn.wants_write();
            self.write_pending(wire)?;
            if n == 0 && !more {
                return Err(TlsError::Io(io::Error::new(io::ErrorKind::WriteZero, "TLS session accepts no more data")));
            }
            rest = rest.get(n..).unwrap_or_default();
        }
        self.write_pending(wire)
    }

    /// The negotiated suite's IANA name, e.g. `TLS13_AES_256_GCM_SHA384`.
    pub fn cipher_name(&self) -> Option<&'static str> {
        self.conn.negotiated_cipher_suite().and_then(|s| s.suite().as_str())
    }

    /// `TLSv1_3` or `TLSv1_2`, once negotiated.
    pub fn protocol_version(&self) -> Option<&'static str> {
        self.conn.protocol_version().and_then(|v| v.as_str())
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use super::super::test_pki::{connect, pki, with_ca, Dir};
    use super::super::{SslMode, TlsError};

    #[test]
    fn layer_carries_bytes_both_ways_fed_in_pieces() {
        let pki = pki(&["localhost", "127.0.0.1"]);
        let dir = Dir::new("roundtrip");
        let tls = with_ca(SslMode::VerifyIdentity, &pki, &dir);
        let (mut client, mut server) = connect(&tls, &pki, "127.0.0.1").unwrap();
        assert!(client.cipher_name().is_some_and(|c| c.starts_with("TLS13_")));
        let mut wire = Vec::new();
        client.encode(b"\x05\x00\x00\x00\x03ping", &mut wire).unwrap();
        server.read_tls(&mut &wire[..]).unwrap();
        server.process_new_packets().unwrap();
        let mut got = Vec::new();
        let _ = server.reader().read_to_end(&mut got);
        assert_eq!(got, b"\x05\x00\x00\x00\x03ping");

        let message: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        let mut records = Vec::new();
        for part in message.chunks(10_000) {
            server.writer().write_all(part).unwrap();
            while server.wants_write() {
                server.write_tls(&mut records).unwrap();
            }
        }
        let mut plain = Vec::new();
        for piece in records.chunks(7) {
            assert_eq!(client.decode(piece, &mut plain).unwrap(), piece.len());
        }
        assert_eq!(plain, message);

        // More than rustls buffers at once, in one call.
        let mut wire = Vec::new();
        client.encode(&message, &mut wire).unwrap();
        let mut got = Vec::new();
        let mut rest = &wire[..];
        while !rest.is_empty() {
            server.read_tls(&mut rest).unwrap();
            server.process_new_packets().unwrap();
            let _ = server.reader().read_to_end(&mut got);
        }
        assert_eq!(got, message);
    }

    #[test]
    fn garbage_and_alerts_after_the_handshake_are_errors() {
        let pki = pki(&["localhost"]);
        let dir = Dir::new("garbage");
        let tls = with_ca(SslMode::VerifyCa, &pki, &dir);
        let (mut client, _) = connect(&tls, &pki, "localhost").unwrap();
        let err = client.decode(b"\x17\x03\x03\x00\x05hello", &mut Vec::new()).unwrap_err();
        assert!(matches!(err, TlsError::Rustls(_)), "{err}");
        let (mut client, mut server) = connect(&tls, &pki, "localhost").unwrap();
        server.send_close_notify();
        let mut records = Vec::new();
        server.write_tls(&mut records).unwrap();
        // close_notify: the stream ends cleanly, nothing decoded.
        let mut plain = Vec::new();
        client.decode(&records, &mut plain).unwrap();
        assert!(plain.is_empty());
        // A fatal alert (handshake_failure, level 2 in clear) mid-stream.
        let (mut client, _) = connect(&tls, &pki, "localhost").unwrap();
        let err = client.decode(&[0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28], &mut Vec::new()).unwrap_err();
        assert!(err.to_string().contains("TLS error"), "{err}");
    }
}
