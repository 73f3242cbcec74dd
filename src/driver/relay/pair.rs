//! One application's connection and the proxy's connection upstream for
//! it: a task on its loop, from the accept to the close.
//!
//! 1. Connect upstream; a server that cannot be reached is answered to the
//!    application as its client library says a server it cannot reach:
//!    an ERR 2003 in place of the greeting, naming the upstream.
//! 2. Forward the server's bytes (its greeting) until the client's first
//!    packet is whole. An SSLRequest starts TLS: it goes upstream as it is,
//!    then the proxy runs a TLS handshake with the server (as a client)
//!    and one with the application (as the server, `--ssl-cert`); without
//!    a certificate the application gets an ERR that says what to do.
//! 3. Forward both ways, each direction read, handed to the tap and
//!    written on; through TLS where it was started. When one peer closes,
//!    the other is told (its reads end) and the pair lives until it closes
//!    too, as a direct connection would; an error ends both at once.

use std::cell::RefCell;
use std::io;
use std::rc::Rc;

use tokio::sync::watch;
use wirebench_capture::tap::{Closer, ConnectionTap};
use wirebench_protocol::handshake::ClientFirstPacket;
use wirebench_protocol::response::ErrPacket;

use super::listen::AcceptedSocket;
use super::loop_shared::RelayShared;
use super::relay_socket::{tls_handshake, HandshakeFailure, RelaySocket};
use super::tap_copy::TapCopy;
use crate::transport::tls::TlsLayer;

/// The application's side or the server's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Client,
    Server,
}

impl Side {
    fn other(self) -> Side {
        match self {
            Side::Client => Side::Server,
            Side::Server => Side::Client,
        }
    }

    fn closer(self) -> Closer {
        match self {
            Side::Client => Closer::Client,
            Side::Server => Closer::Server,
        }
    }
}

/// Serves one accepted connection until both peers have closed, or the
/// loop stops (the recording ends: the connections close).
pub(super) async fn serve_pair(accepted: AcceptedSocket, shared: Rc<RelayShared>, mut stopped: watch::Receiver<bool>) {
    let Ok(client) = RelaySocket::from_accepted(accepted) else { return };
    let upstream_name = shared.options.upstream.to_string();
    let tap = RefCell::new(ConnectionTap::new(shared.next_id(), client.peer_name(), upstream_name));
    let closer = tokio::select! {
        closer = relay(&client, &tap, &shared) => closer,
        _ = stopped.wait_for(|stopped| *stopped) => Closer::CaptureEnd,
    };
    let at = shared.now_ns();
    shared.with_records(|records, counts| tap.borrow_mut().close(at, closer, records, counts));
}

async fn relay(client: &RelaySocket, tap: &RefCell<ConnectionTap>, shared: &RelayShared) -> Closer {
    let options = &shared.options;
    let upstream = match tokio::time::timeout(options.connect_timeout, RelaySocket::connect(&options.upstream)).await {
        Ok(Ok(upstream)) => upstream,
        Ok(Err(e)) => return upstream_down(client, shared, &e.to_string()).await,
        Err(_) => return upstream_down(client, shared, "no answer in time").await,
    };
    let pair = Pair { shared, client, upstream: &upstream, tap, tls: [RefCell::new(None), RefCell::new(None)] };
    let mut copy = TapCopy::default();
    let first = match pair.first_packet(&mut copy).await {
        Ok(first) => first,
        Err(closer) => return closer,
    };
    let mut from_client = first.bytes;
    if first.asks_tls {
        match pair.start_tls(&from_client, first.len).await {
            Ok(early) => from_client = early,
            Err(closer) => return closer,
        }
    }
    if let Err(closer) = pair.forward_first(&from_client).await {
        return closer;
    }
    pair.run().await
}

/// The application gets what its client library says of a server it
/// cannot reach (ERR 2003), naming the upstream; the log says it too.
async fn upstream_down(client: &RelaySocket, shared: &RelayShared, problem: &str) -> Closer {
    let upstream = &shared.options.upstream;
    let message = format!("wirebench record: cannot connect to the server at {upstream}: {problem}");
    shared.notice(&format!("{}: {message}", client.peer_name()));
    shared.upstream_failures.set(shared.upstream_failures.get() + 1);
    let mut packet = Vec::new();
    ErrPacket { code: 2003, sql_state: None, message: message.as_bytes() }.encode(0, &mut packet);
    let _ = client.write_all(&packet).await;
    Closer::Server
}

/// The client's first packet, read whole.
struct FirstPacket {
    /// What the client sent so far: the packet, and with TLS maybe the
    /// start of its handshake.
    bytes: Vec<u8>,
    len: usize,
    /// It is an SSLRequest.
    asks_tls: bool,
}

/// The packet at the start of `bytes`, when it is whole: its length.
fn whole_packet_len(bytes: &[u8]) -> Option<usize> {
    let [a, b, c, _, ..] = *bytes else { return None };
    let len = 4 + u32::from_le_bytes([a, b, c, 0]) as usize;
    (bytes.len() >= len).then_some(len)
}

/// What `Pair::pass` works in, per direction.
#[derive(Default)]
struct PumpBuffers {
    wire: Vec<u8>,
    plain: Vec<u8>,
    out: Vec<u8>,
    copy: TapCopy,
}

/// The two connections of a pair, their TLS layers once started, the tap.
struct Pair<'a> {
    shared: &'a RelayShared,
    client: &'a RelaySocket,
    upstream: &'a RelaySocket,
    tap: &'a RefCell<ConnectionTap>,
    /// The client leg's TLS (the proxy serves it), the upstream leg's.
    tls: [RefCell<Option<TlsLayer>>; 2],
}

impl Pair<'_> {
    fn socket(&self, side: Side) -> &RelaySocket {
        match side {
            Side::Client => self.client,
            Side::Server => self.upstream,
        }
    }

    fn tls(&self, side: Side) -> &RefCell<Option<TlsLayer>> {
        let [client, server] = &self.tls;
        match side {
            Side::Client => client,
            Side::Server => server,
        }
    }

    /// Forwards what the server sends (its greeting) until the client's
    /// first packet is whole.
    async fn first_packet(&self, copy: &mut TapCopy) -> Result<FirstPacket, Closer> {
        let (mut from_client, mut from_server) = (Vec::new(), Vec::new());
        loop {
            if let Some(len) = whole_packet_len(&from_client) {
                let payload = from_client.get(4..len).unwrap_or_default();
                let asks_tls = matches!(ClientFirstPacket::parse(payload), Ok(ClientFirstPacket::SslRequest { .. }));
                return Ok(FirstPacket { bytes: from_client, len, asks_tls });
            }
            tokio::select! {
                read = self.client.read_into(&mut from_client) => if !matches!(read, Ok(n) if n > 0) {
                    return Err(Closer::Client);
                },
                read = self.upstream.read_into(&mut from_server) => {
                    if !matches!(read, Ok(n) if n > 0) {
                        return Err(Closer::Server);
                    }
                    self.tap_bytes(Side::Server, &from_server, copy);
                    self.client.write_all(&from_server).await.map_err(|_| Closer::Client)?;
                    from_server.clear();
                }
            }
        }
    }

    /// TLS on both legs, the SSLRequest (`first[..len]`) sent upstream
    /// before it; returns the packet-stream bytes that came with the
    /// client's last handshake flight.
    async fn start_tls(&self, first: &[u8], len: usize) -> Result<Vec<u8>, Closer> {
        let options = &self.shared.options;
        let (Some(serve), Some(upstream_tls)) = (&options.serve_tls, &options.upstream_tls) else {
            return Err(self.refuse_tls().await);
        };
        let (request, early) = first.split_at(len.min(first.len()));
        self.tap_bytes(Side::Client, request, &mut TapCopy::default());
        self.upstream.write_all(request).await.map_err(|_| Closer::Server)?;
        let peer = self.client.peer_name();
        let failed = |leg: &str, e: String| self.shared.notice(&format!("{peer}: TLS {leg} failed: {e}"));
        let mut up = TlsLayer::new(upstream_tls, options.upstream.tls_server_name()).map_err(|e| {
            failed("upstream", e.to_string());
            Closer::Server
        })?;
        if let Err(e) = tls_handshake(self.upstream, &mut up, &[], &mut Vec::new()).await {
            let message = match &e {
                HandshakeFailure::Tls(tls) => upstream_tls.explain(tls),
                other => other.to_string(),
            };
            failed(&format!("to the server at {}", options.upstream), message);
            return Err(Closer::Server);
        }
        let mut down = TlsLayer::serve(serve).map_err(|e| {
            failed("with the client", e.to_string());
            Closer::Client
        })?;
        let mut plain = Vec::new();
        if let Err(e) = tls_handshake(self.client, &mut down, early, &mut plain).await {
            failed("with the client", e.to_string());
            return Err(Closer::Client);
        }
        *self.tls(Side::Client).borrow_mut() = Some(down);
        *self.tls(Side::Server).borrow_mut() = Some(up);
        Ok(plain)
    }

    /// A client that asks for TLS when the proxy cannot serve it gets an
    /// ERR after its SSLRequest, saying what to do (its TLS library may
    /// show its own error instead: the log says it too).
    async fn refuse_tls(&self) -> Closer {
        let options = &self.shared.options;
        let message = if options.serve_tls.is_none() {
            "wirebench record cannot serve TLS without a certificate: restart record with --ssl-cert=FILE \
             --ssl-key=FILE, or connect without TLS"
        } else {
            "wirebench record was told to use no TLS upstream (--mysql-ssl=off), so it serves none: restart it \
             without --mysql-ssl=off, or connect without TLS"
        };
        self.shared.notice(&format!("{}: a client asked for TLS: {message}", self.client.peer_name()));
        let mut packet = Vec::new();
        ErrPacket { code: 1043, sql_state: Some(*b"08S01"), message: message.as_bytes() }.encode(2, &mut packet);
        let _ = self.client.write_all(&packet).await;
        Closer::Client
    }

    /// The client's bytes read before the pumps start (its first packet,
    /// or what came inside TLS with its handshake), forwarded.
    async fn forward_first(&self, bytes: &[u8]) -> Result<(), Closer> {
        let mut copy = TapCopy::default();
        self.tap_bytes(Side::Client, bytes, &mut copy);
        let mut out = Vec::new();
        let wire = match self.tls(Side::Server).borrow_mut().as_mut() {
            None => bytes,
            Some(layer) => {
                layer.encode(bytes, &mut out).map_err(|_| Closer::Server)?;
                &out
            }
        };
        self.upstream.write_all(wire).await.map_err(|_| Closer::Server)
    }

    /// Both directions until both peers closed (or one failed); who closed first.
    async fn run(&self) -> Closer {
        let to_server = self.pump(Side::Client);
        let to_client = self.pump(Side::Server);
        tokio::pin!(to_server, to_client);
        let (first, ended) = tokio::select! {
            ended = &mut to_server => (Side::Client, ended),
            ended = &mut to_client => (Side::Server, ended),
        };
        let at = self.shared.now_ns();
        self.shared.with_records(|records, counts| self.tap.borrow_mut().close(at, first.closer(), records, counts));
        if ended.is_ok() {
            self.socket(first.other()).shut_write();
            let _ = match first {
                Side::Client => to_client.await,
                Side::Server => to_server.await,
            };
        }
        first.closer()
    }

    /// Forwards what `from` sends until it closes (`Ok`) or fails.
    async fn pump(&self, from: Side) -> io::Result<()> {
        let (source, sink) = (self.socket(from), self.socket(from.other()));
        let mut buffers = PumpBuffers::default();
        loop {
            buffers.wire.clear();
            if source.read_into(&mut buffers.wire).await? == 0 {
                return Ok(());
            }
            let out = self.pass(from, &mut buffers)?;
            sink.write_all(out).await?;
        }
    }

    /// Bytes read from `from`'s socket: out of its TLS, to the tap, into
    /// the other leg's TLS; what to write on.
    fn pass<'b>(&self, from: Side, buffers: &'b mut PumpBuffers) -> io::Result<&'b [u8]> {
        let PumpBuffers { wire, plain, out, copy } = buffers;
        let forwarded: &[u8] = match self.tls(from).borrow_mut().as_mut() {
            None => wire,
            Some(layer) => {
                plain.clear();
                layer.decode(wire, plain).map_err(io::Error::other)?;
                plain
            }
        };
        self.tap_bytes(from, forwarded, copy);
        match self.tls(from.other()).borrow_mut().as_mut() {
            None => Ok(forwarded),
            Some(layer) => {
                out.clear();
                layer.encode(forwarded, out).map_err(io::Error::other)?;
                Ok(out)
            }
        }
    }

    /// Hands packet-stream bytes from `from` to the tap, dated now.
    fn tap_bytes(&self, from: Side, bytes: &[u8], copy: &mut TapCopy) {
        if bytes.is_empty() {
            return;
        }
        let mut tap = self.tap.borrow_mut();
        let packets = match copy.packets(tap.is_compressed(), bytes) {
            Ok(packets) => packets,
            Err(e) => {
                let peer = self.client.peer_name();
                self.shared.notice(&format!("{peer}: its compressed packets cannot be read ({e}): not recorded"));
                return;
            }
        };
        let at = self.shared.now_ns();
        self.shared.with_records(|records, counts| match from {
            Side::Client => tap.client_bytes(at, packets, records, counts),
            Side::Server => tap.server_bytes(at, packets, records, counts),
        });
    }
}
