//! The reproducer's round trip, end to end: sessions with every kind of
//! packet, field, framing and compressed-packet edit, and every live value,
//! run against a recording server as a confirmation runs them, written to
//! a reproducer, read back and replayed by `fuzz-replay` itself against the
//! same server. The server must receive the same bytes both times but for
//! the live values, and those must be right for the new connection: it
//! checks each scramble against the nonce it sent, and hands each
//! connection statement ids of its own. The Python script `--emit=python`
//! writes of the reproducer must send the same packet stream too (its zlib
//! may deflate long compressed payloads into other bytes, so the packets
//! are compared once inflated).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;
use wirebench_protocol::auth::native_password;
use wirebench_protocol::buf::WriteExt;
use wirebench_protocol::compress::{inflate_payload, CompressedHeader, Inflater, COMPRESSED_HEADER_LEN};
use wirebench_protocol::framing::{encode_packet, Header, HEADER_LEN};
use wirebench_protocol::Capabilities;

use super::emit::python_script;
use super::exec::{run_session, Limits, SessionOutcome};
use super::fields::{Edit, FieldEdit, FieldKind};
use super::fuzz_options::{GivenOptions, ReplayOptions, Target, WatchOptions};
use super::replay::{replay, ReplayVerdict};
use super::reproducer::{Reproducer, Reproduces};
use super::seeds::client_login;
use super::spec::{FrameEdit, LoginSpec, OwnedParam, PlannedPacket, SessionPlan, Spec, StmtRef, WrapEdit};
use super::vigil::Vigil;
use crate::client::Endpoint;

const PASSWORD: &str = "round-trip";

const SERVER_CAPS: Capabilities = Capabilities(
    Capabilities::CONNECT_WITH_DB.0
        | Capabilities::COMPRESS.0
        | Capabilities::PROTOCOL_41.0
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

/// What one connection sent the recording server.
#[derive(Debug, Clone, Default)]
struct Received {
    /// Every byte, as it came.
    raw: Vec<u8>,
    /// The packet stream those bytes carry (inflated once compressed).
    plain: Vec<u8>,
    nonce: [u8; 20],
    /// The statement ids this connection was given, in order.
    ids: Vec<u32>,
    /// Scrambles that matched the nonce (logins and COM_CHANGE_USER).
    good_scrambles: usize,
    /// The nonce of the auth switch the login was answered with, if any.
    switch_nonce: Option<[u8; 20]>,
}

impl Received {
    /// The bytes with the live values (the right scramble, the ids given
    /// out) replaced by what they stand for, so that two connections'
    /// bytes compare.
    fn normalised(&self, bytes: &[u8]) -> Vec<u8> {
        let mut bytes = bytes.to_vec();
        let scramble = native_password::scramble(PASSWORD.as_bytes(), &self.nonce);
        replace_all(&mut bytes, &scramble, &[0xAA; 20]);
        if let Some(switched) = &self.switch_nonce {
            replace_all(&mut bytes, &native_password::scramble(PASSWORD.as_bytes(), switched), &[0xAB; 20]);
        }
        for (k, id) in self.ids.iter().enumerate() {
            replace_all(&mut bytes, &id.to_le_bytes(), &[k as u8, 0xEE, 0xEE, 0xEE]);
        }
        bytes
    }

    /// Whether the connection was the replay's control connection.
    fn is_control(&self) -> bool {
        let mut select = Vec::new();
        encode_packet(&mut select, 0, b"\x03SELECT 1");
        self.raw.windows(select.len()).any(|w| w == select)
    }
}

fn replace_all(bytes: &mut [u8], from: &[u8], to: &[u8]) {
    let mut at = 0;
    while at + from.len() <= bytes.len() {
        if &bytes[at..at + from.len()] == from {
            bytes[at..at + from.len()].copy_from_slice(to);
            at += from.len();
        } else {
            at += 1;
        }
    }
}

/// The recording server: answers enough of the protocol for every packet
/// kind, and keeps what each connection sent.
struct RecordingServer {
    port: u16,
    connections: Arc<Mutex<Vec<Received>>>,
}

impl RecordingServer {
    async fn start() -> RecordingServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let connections = Arc::new(Mutex::new(Vec::new()));
        let counter = Arc::new(AtomicU32::new(1));
        let shared = connections.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let n = counter.fetch_add(1, Ordering::Relaxed);
                let at = {
                    let mut conns = shared.lock().unwrap();
                    conns.push(Received { nonce: connection_nonce(n), ..Received::default() });
                    conns.len() - 1
                };
                tokio::spawn(serve(stream, n, shared.clone(), at));
            }
        });
        RecordingServer { port, connections }
    }

    fn take(&self) -> Vec<Received> {
        std::mem::take(&mut *self.connections.lock().unwrap())
    }
}

/// Printable and different for each connection.
fn connection_nonce(n: u32) -> [u8; 20] {
    let mut x = u64::from(n).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    std::array::from_fn(|_| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        b'!' + (x % 90) as u8
    })
}

/// One connection's state on the server.
struct Served {
    stream: TcpStream,
    n: u32,
    log: Arc<Mutex<Vec<Received>>>,
    at: usize,
    wire: Vec<u8>,
    plain: Vec<u8>,
    compressed: bool,
    logged_in: bool,
    deprecate_eof: bool,
    prepares: u32,
    /// The login's capabilities.
    login_caps: Capabilities,
    /// An auth switch's nonce, while its answer is awaited.
    switched: Option<[u8; 20]>,
}

async fn serve(stream: TcpStream, n: u32, log: Arc<Mutex<Vec<Received>>>, at: usize) {
    let mut s = Served {
        stream,
        n,
        log,
        at,
        wire: Vec::new(),
        plain: Vec::new(),
        compressed: false,
        logged_in: false,
        deprecate_eof: false,
        prepares: 0,
        login_caps: Capabilities::empty(),
        switched: None,
    };
    let nonce = s.record(|r| r.nonce);
    let mut greeting = Vec::new();
    encode_packet(&mut greeting, 0, &greeting_payload(&nonce));
    let _ = s.stream.write_all(&greeting).await;
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        while let Some((seq, payload)) = s.next_packet() {
            if !s.answer(seq, &payload, &nonce).await {
                return;
            }
        }
        match s.stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(got) => {
                s.record(|r| r.raw.extend_from_slice(&chunk[..got]));
                s.wire.extend_from_slice(&chunk[..got]);
                if !s.unwrap_compressed() {
                    return;
                }
            }
        }
    }
}

/// HandshakeV10, written out from the protocol documentation.
fn greeting_payload(nonce: &[u8; 20]) -> Vec<u8> {
    let mut p = vec![10];
    p.put_null_terminated(b"5.5.5-10.11.99-recording");
    p.put_u32(7);
    p.put_bytes(&nonce[..8]);
    p.put_u8(0);
    p.put_u16(SERVER_CAPS.low() as u16);
    p.put_u8(45);
    p.put_u16(2);
    p.put_u16((SERVER_CAPS.low() >> 16) as u16);
    p.put_u8(21);
    p.put_zeros(10);
    p.put_bytes(&nonce[8..]);
    p.put_u8(0);
    p.put_null_terminated(b"mysql_native_password");
    p
}

impl Served {
    fn record<T>(&self, f: impl FnOnce(&mut Received) -> T) -> T {
        f(&mut self.log.lock().unwrap()[self.at])
    }

    /// Moves whole compressed packets into the packet stream; false when
    /// one does not inflate (the server closes, as a real one does).
    fn unwrap_compressed(&mut self) -> bool {
        if !self.compressed {
            self.record(|r| r.plain.extend_from_slice(&self.wire));
            self.plain.append(&mut self.wire);
            return true;
        }
        let mut inflater = Inflater::new();
        while let Some(header) = CompressedHeader::parse(&self.wire) {
            let end = COMPRESSED_HEADER_LEN + header.payload_len;
            if self.wire.len() < end {
                break;
            }
            let from = self.plain.len();
            let payload = &self.wire[COMPRESSED_HEADER_LEN..end];
            if inflate_payload(header, payload, &mut self.plain, &mut inflater).is_err() {
                return false;
            }
            self.record(|r| r.plain.extend_from_slice(&self.plain[from..]));
            self.wire.drain(..end);
        }
        true
    }

    fn next_packet(&mut self) -> Option<(u8, Vec<u8>)> {
        let header = Header::parse(&self.plain)?;
        if self.plain.len() < HEADER_LEN + header.len {
            return None;
        }
        let payload = self.plain[HEADER_LEN..HEADER_LEN + header.len].to_vec();
        self.plain.drain(..HEADER_LEN + header.len);
        Some((header.seq, payload))
    }

    async fn send(&mut self, seq: u8, payload: &[u8]) {
        let mut packet = Vec::new();
        encode_packet(&mut packet, seq, payload);
        if self.compressed {
            let mut wrapped = Vec::new();
            wrapped.put_u24(packet.len() as u32);
            wrapped.put_u8(0);
            wrapped.put_u24(0);
            wrapped.extend_from_slice(&packet);
            packet = wrapped;
        }
        let _ = self.stream.write_all(&packet).await;
    }

    /// Answers one packet; false to close the connection.
    async fn answer(&mut self, seq: u8, payload: &[u8], nonce: &[u8; 20]) -> bool {
        let next = seq.wrapping_add(1);
        const OK: &[u8] = &[0, 0, 0, 2, 0, 0, 0];
        const EOF: &[u8] = &[0xFE, 0, 0, 2, 0];
        if !self.logged_in {
            return self.login(next, payload, nonce).await;
        }
        let body = payload.get(1..).unwrap_or_default();
        match payload.first().copied().unwrap_or(0xFF) {
            0x01 => return false,
            0x02 | 0x03 | 0x0E | 0x17 | 0x1A | 0x1F => self.send(next, OK).await,
            0x09 => self.send(next, b"Uptime: 1  Threads: 1").await,
            0x04 | 0x1B => self.send(next, EOF).await,
            0x18 | 0x19 => {}
            0x1C => self.send(next, b"\xff\xdb\x04#HY000Unknown prepared statement handler").await,
            0x16 => self.prepared(next, body).await,
            0x11 => {
                let (_, rest) = body.split_at(body.iter().position(|&b| b == 0).map_or(body.len(), |p| p + 1));
                let len = usize::from(rest.first().copied().unwrap_or(0));
                self.check_scramble(rest.get(1..1 + len).unwrap_or_default(), nonce);
                self.send(next, OK).await;
            }
            _ => self.send(next, b"\xff\x17\x04#08S01Unknown command").await,
        }
        true
    }

    /// The login, or the answer to its auth switch: a login whose bytes
    /// say `switch-me` is switched to mysql_native_password with a new nonce.
    async fn login(&mut self, next: u8, payload: &[u8], nonce: &[u8; 20]) -> bool {
        if let Some(switched) = self.switched.take() {
            self.check_scramble(payload, &switched);
            return self.logged_in(next).await;
        }
        if payload.len() == 32 {
            return true; // An SSLRequest: a TLS handshake would follow.
        }
        let Some((caps, auth)) = login_auth(payload) else {
            self.send(next, b"\xff\x13\x04#08S01Bad handshake").await;
            return false;
        };
        self.check_scramble(auth, nonce);
        self.login_caps = caps;
        if payload.windows(9).any(|w| w == b"switch-me") {
            let switched = connection_nonce(self.n + 1000);
            self.record(|r| r.switch_nonce = Some(switched));
            let mut switch = vec![0xFE];
            switch.put_null_terminated(b"mysql_native_password");
            switch.put_null_terminated(&switched);
            self.send(next, &switch).await;
            self.switched = Some(switched);
            return true;
        }
        self.logged_in(next).await
    }

    async fn logged_in(&mut self, seq: u8) -> bool {
        self.send(seq, &[0, 0, 0, 2, 0, 0, 0]).await;
        self.logged_in = true;
        self.deprecate_eof = self.login_caps.contains(Capabilities::DEPRECATE_EOF);
        self.compressed = self.login_caps.contains(Capabilities::COMPRESS);
        if self.compressed {
            // What followed the login was logged as plain: it is not.
            let unread = self.plain.len();
            self.record(|r| r.plain.truncate(r.plain.len() - unread));
            self.wire.append(&mut self.plain);
        }
        self.unwrap_compressed()
    }

    fn check_scramble(&mut self, auth: &[u8], nonce: &[u8; 20]) {
        if auth == native_password::scramble(PASSWORD.as_bytes(), nonce) {
            self.record(|r| r.good_scrambles += 1);
        }
    }

    /// PREPARE_OK with an id of this connection's own, a parameter per `?`.
    async fn prepared(&mut self, mut seq: u8, sql: &[u8]) {
        let id = 0xC0DE_0000 | self.n << 8 | self.prepares;
        self.prepares += 1;
        self.record(|r| r.ids.push(id));
        let params = sql.iter().filter(|&&b| b == b'?').count() as u16;
        let mut ok = vec![0];
        ok.put_u32(id);
        ok.put_u16(0);
        ok.put_u16(params);
        ok.put_u8(0);
        ok.put_u16(0);
        self.send(seq, &ok).await;
        for _ in 0..params {
            seq = seq.wrapping_add(1);
            self.send(seq, b"\x03def\x00\x00\x00\x01?\x00\x0c\x3f\x00\x00\x00\x00\x00\x06\x80\x00\x00\x00\x00").await;
        }
        if params > 0 && !self.deprecate_eof {
            self.send(seq.wrapping_add(1), &[0xFE, 0, 0, 2, 0]).await;
        }
    }
}

/// A HandshakeResponse41's capabilities and auth response.
fn login_auth(payload: &[u8]) -> Option<(Capabilities, &[u8])> {
    let low = u32::from_le_bytes(payload.get(..4)?.try_into().ok()?);
    let ext = if low & 1 == 0 { u32::from_le_bytes(payload.get(28..32)?.try_into().ok()?) } else { 0 };
    let caps = Capabilities::from_parts(low, ext);
    let rest = payload.get(32..)?;
    let rest = rest.get(rest.iter().position(|&b| b == 0)? + 1..)?;
    let len = usize::from(*rest.first()?);
    Some((caps, rest.get(1..1 + len)?))
}

fn packet(spec: Spec) -> PlannedPacket {
    PlannedPacket::new(spec)
}

fn with_frame(spec: Spec, frame: FrameEdit) -> PlannedPacket {
    PlannedPacket { frame: vec![frame], ..PlannedPacket::new(spec) }
}

/// Every command, field edits, framing edits, a COM_CHANGE_USER's
/// scramble and statement ids, over the plain protocol with EOF packets.
fn plain_session() -> SessionPlan {
    let mut login = client_login();
    login.deprecate_eof = false;
    let mut login = packet(Spec::Login(login));
    login.edits.push(FieldEdit { kind: FieldKind::AttrValue, nth: 1, edit: Edit::Append(b"-edited".to_vec()) });
    let stmt = StmtRef::Prepared;
    let mut literal = packet(Spec::Execute { stmt: stmt(1), flags: 0, params: Vec::new() });
    literal.edits.push(FieldEdit { kind: FieldKind::StatementId, nth: 0, edit: Edit::Set(vec![9, 9, 9, 9]) });
    let mut flipped = packet(Spec::Execute { stmt: stmt(0), flags: 0, params: vec![OwnedParam::I32(5)] });
    flipped.edits.push(FieldEdit { kind: FieldKind::ParamType, nth: 0, edit: Edit::FlipBit(3) });
    let params = vec![OwnedParam::I64(-7), OwnedParam::VarString(b"seven".to_vec()), OwnedParam::Null];
    SessionPlan {
        packets: vec![
            login,
            packet(Spec::Prepare(b"SELECT ?, ?, ? FROM t".to_vec())),
            packet(Spec::Prepare(b"SELECT 2".to_vec())),
            packet(Spec::Execute { stmt: stmt(0), flags: 1, params }),
            packet(Spec::SendLongData { stmt: stmt(0), param: 1, data: b"long data".to_vec() }),
            packet(Spec::Execute { stmt: stmt(1), flags: 0, params: Vec::new() }),
            packet(Spec::Fetch { stmt: stmt(0), rows: 10 }),
            packet(Spec::Reset(stmt(1))),
            literal,
            flipped,
            packet(Spec::Query(b"SELECT c FROM sbtest1".to_vec())),
            packet(Spec::Ping),
            packet(Spec::Statistics),
            packet(Spec::InitDb),
            packet(Spec::SetOption(1)),
            packet(Spec::FieldList { table: b"sbtest1".to_vec(), wildcard: b"%".to_vec() }),
            packet(Spec::ChangeUser { connect_attrs: vec![("a".into(), "b".into())] }),
            packet(Spec::ResetConnection),
            packet(Spec::Other { command: 0x0F, body: b"body".to_vec() }),
            with_frame(Spec::Ping, FrameEdit::Seq(3)),
            with_frame(Spec::Query(b"DO 1".to_vec()), FrameEdit::Twice),
            with_frame(Spec::Query(b"DO 2, 3".to_vec()), FrameEdit::Truncate { keep: 3, fix_length: true }),
            with_frame(Spec::Ping, FrameEdit::Garbage(vec![1, 0, 0, 0, 0x0e])),
            packet(Spec::Close(stmt(0))),
            // A header announcing more than comes: the server waits, the
            // answer is late, the control connection looks, the session ends.
            with_frame(Spec::Ping, FrameEdit::Length(300)),
        ],
    }
}

/// The compressed protocol: commands wrapped, and wraps broken.
fn compressed_session() -> SessionPlan {
    let wrapped = |spec, edit| PlannedPacket { wrap: vec![edit], ..PlannedPacket::new(spec) };
    let stmt = StmtRef::Prepared(0);
    SessionPlan {
        packets: vec![
            packet(Spec::Login(LoginSpec { deprecate_eof: true, connect_attrs: switched_attrs(), ..client_login() })),
            packet(Spec::Prepare(b"SELECT ?".to_vec())),
            packet(Spec::Execute { stmt, flags: 0, params: vec![OwnedParam::I8(1)] }),
            wrapped(Spec::Ping, WrapEdit::Seq(9)),
            packet(Spec::Query(vec![b'x'; 400])),
            wrapped(Spec::Reset(stmt), WrapEdit::Corrupt(35)),
            packet(Spec::Quit),
        ],
    }
}

/// Connection attributes that make the recording server switch auth plugins.
fn switched_attrs() -> Vec<(String, String)> {
    let mut attrs = client_login().connect_attrs;
    attrs.push(("switch-me".into(), "1".into()));
    attrs
}

/// An SSLRequest answering the greeting, then a command where the server
/// waits for TLS (it refuses the bytes as a login, and closes).
fn ssl_request_session() -> SessionPlan {
    SessionPlan { packets: vec![packet(Spec::SslRequest), packet(Spec::Ping)] }
}

fn recording_target(port: u16, compression: bool) -> Target {
    Target {
        endpoint: Endpoint::tcp("127.0.0.1", port),
        user: "fuzzer".into(),
        password: PASSWORD.into(),
        database: "fuzzdb".into(),
        compression,
    }
}

/// Runs `plan` as a confirmation does; a late answer's check always passes.
async fn run_plan(target: &Target, plan: &SessionPlan) -> SessionOutcome {
    let vigil = Arc::new(Vigil::new(Duration::from_secs(1)));
    let control = vigil.clone();
    let checks = tokio::spawn(async move {
        loop {
            control.asked().await;
            control.check_passed(Instant::now());
        }
    });
    let limits = Limits { connect: Duration::from_secs(5), answer: Duration::from_millis(200) };
    let outcome = run_session(target, &plan.packets, &limits, &Default::default(), &vigil).await;
    checks.abort();
    outcome
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_sends_what_the_confirmation_sent_but_for_the_live_values() {
    let server = RecordingServer::start().await;
    let failing = run_plan(&recording_target(server.port, false), &plain_session()).await;
    let compressed = run_plan(&recording_target(server.port, true), &compressed_session()).await;
    let ssl = run_plan(&recording_target(server.port, false), &ssl_request_session()).await;
    let first = server.take();
    assert_eq!(failing.sent.len(), plain_session().packets.len(), "every packet went out: {:?}", failing.states);
    assert_eq!(compressed.sent.len(), compressed_session().packets.len(), "{:?}", compressed.states);
    assert_eq!((&failing.withheld, &compressed.withheld, &ssl.withheld), (&vec![], &vec![], &vec![]));

    let reproducer = Reproducer {
        observed: "nothing".into(),
        details: Vec::new(),
        kind: None,
        server: String::new(),
        deadline: Some(Duration::from_secs(2)),
        seed: 1,
        session: 1,
        found_after: Duration::ZERO,
        target: "127.0.0.1".into(),
        user: "fuzzer".into(),
        database: "fuzzdb".into(),
        compression: false,
        minimised: "no".into(),
        error_patterns: Vec::new(),
        pre_auth: false,
        reproduces: Reproduces::WithHistory,
        setup: crate::fuzz::table_setup::Setup::default(),
        failing: failing.sent,
        history: vec![compressed.sent, ssl.sent],
    };
    let file = std::env::temp_dir().join(format!("wirebench-roundtrip-{}.repro", std::process::id()));
    std::fs::write(&file, reproducer.to_text()).unwrap();
    // As a user replays it: the server and the password, nothing else.
    let mut command_line = recording_target(server.port, false);
    command_line.user = "sbtest".into();
    command_line.database = "sbtest".into();
    let options = ReplayOptions {
        file: file.clone(),
        target: command_line,
        given: GivenOptions::default(),
        watch: WatchOptions::default(),
        allow_remote: false,
        deadline: None,
        emit: None,
        internal_errors: Default::default(),
    };
    let verdict = std::thread::spawn(move || replay(&options)).join().unwrap();
    let _ = std::fs::remove_file(&file);
    assert_eq!(verdict.unwrap(), ReplayVerdict::Survived);
    let again: Vec<Received> = server.take().into_iter().filter(|r| !r.is_control()).collect();

    same_sessions(&first, &again, |r| &r.raw);
    // The live values were recomputed: every login, auth switch and
    // COM_CHANGE_USER matched its own connection's nonce, and the raw bytes
    // differ.
    let scrambles = |rs: &[Received]| rs.iter().map(|r| r.good_scrambles).sum::<usize>();
    assert_eq!(scrambles(&first), 4, "2 logins, an auth switch, COM_CHANGE_USER");
    assert_eq!(scrambles(&again), 4);
    let ids = |rs: &[Received]| rs.iter().map(|r| r.ids.len()).sum::<usize>();
    assert_eq!((ids(&first), ids(&again)), (3, 3));
    for replayed in again.iter().filter(|r| r.good_scrambles > 0) {
        assert!(first.iter().all(|r| r.raw != replayed.raw), "a connection's live values were not patched");
    }

    if run_emitted_python(&reproducer, server.port) {
        let by_python: Vec<Received> = server.take().into_iter().filter(|r| !r.is_control()).collect();
        assert_eq!((scrambles(&by_python), ids(&by_python)), (4, 3));
        same_sessions(&first, &by_python, |r| &r.plain);
    }
}

/// Each connection of `before` sent what one of `after` sent (in any
/// order: sessions run at the same time), but for the live values.
fn same_sessions(before: &[Received], after: &[Received], bytes: impl Fn(&Received) -> &Vec<u8>) {
    assert_eq!(after.len(), before.len());
    let normalised = |rs: &[Received]| {
        let mut all: Vec<Vec<u8>> = rs.iter().map(|r| r.normalised(bytes(r))).collect();
        all.sort();
        all
    };
    for (b, a) in normalised(before).iter().zip(&normalised(after)) {
        let at = b.iter().zip(a).position(|(x, y)| x != y).unwrap_or(b.len().min(a.len()));
        let around = |v: &[u8]| format!("{:02x?}", &v[at.saturating_sub(8)..(at + 8).min(v.len())]);
        assert!(
            a == b,
            "a replayed connection's bytes differ from byte {at} of {} (replayed: {}): {} vs {}",
            b.len(),
            a.len(),
            around(b),
            around(a)
        );
    }
}

/// Runs the script `--emit=python` writes of `reproducer` against the
/// server on `port`; false (the comparison skipped) without python3.
fn run_emitted_python(reproducer: &Reproducer, port: u16) -> bool {
    let has_python = std::process::Command::new("python3").arg("--version").output().is_ok_and(|o| o.status.success());
    if !has_python {
        let required = std::env::var("WIREBENCH_REQUIRE_SERVER").is_ok_and(|v| v == "1");
        assert!(!required, "WIREBENCH_REQUIRE_SERVER=1 but python3 is not installed (scripts/test.sh installs it)");
        eprintln!("skipped the emitted script's round trip: python3 is not installed");
        return false;
    }
    let script = std::env::temp_dir().join(format!("wirebench-roundtrip-{}.py", std::process::id()));
    std::fs::write(&script, python_script(reproducer, std::path::Path::new("roundtrip.repro"))).unwrap();
    let out = std::process::Command::new("python3")
        .arg(&script)
        .args(["--host=127.0.0.1", &format!("--port={port}"), "--user=fuzzer", &format!("--password={PASSWORD}")])
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&script);
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "the script must run the sessions and see the server survive:\n{text}");
    true
}
