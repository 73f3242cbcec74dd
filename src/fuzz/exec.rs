//! Running one session on a fresh connection: read the greeting, send each
//! packet and read its answer, answer the login's own questions (auth
//! switches, caching_sha2_password's steps) as a client must, and record
//! what was sent and what came back. The same code runs the fuzzer's
//! plans and a reproducer's recorded packets.

use std::time::Duration;

use tokio::time::Instant;
use wirebench_protocol::auth::{caching_sha2, rand_core::OsRng, rsa_key, AuthPlugin};
use wirebench_protocol::constants::command::{COM_CHANGE_USER, COM_QUIT, COM_STMT_PREPARE};
use wirebench_protocol::constants::Capabilities;
use wirebench_protocol::framing::{encode_packet, Header, HEADER_LEN, MAX_FRAGMENT};
use wirebench_protocol::handshake::{AuthSwitchRequest, InitialHandshake};

use super::answer_reader::{err_code, err_message, read_answer, Answer, AnswerShape};
use super::conn::{FuzzConn, Gone};
use super::encode_spec::BuildCtx;
use super::feedback_state::{AnswerClass, ClientMessage, State};
use super::fields::LiveSpot;
use super::fuzz_options::Target;
use super::internal_error::{InternalError, InternalErrors};
use super::safety;
use super::spec::WrapEdit;
use super::vigil::{Patience, Vigil};

/// How the server reads a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// The answer to the greeting: a login.
    Login,
    /// An SSLRequest answering the greeting (no answer comes: the server
    /// waits for TLS).
    SslRequest,
    /// The client's answer to an AuthSwitchRequest or AuthMoreData.
    AuthReply,
    Command,
}

/// One packet ready to send on this connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    pub phase: Phase,
    /// The packet-stream bytes, headers included.
    pub bytes: Vec<u8>,
    /// Values recomputed per connection, as ranges of `bytes`.
    pub spots: Vec<LiveSpot>,
    pub wrap: Vec<WrapEdit>,
}

/// A packet as it was sent, and the first state its answer gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentPacket {
    pub rendered: Rendered,
    pub answered: Option<State>,
}

/// Something a session sends: a planned packet, or a recorded one.
pub trait Outgoing {
    /// The packet for position `index` of the session on this connection.
    fn render(&self, index: usize, ctx: &BuildCtx<'_>) -> Rendered;
    /// Whether it answers the server's auth request: the exchange before
    /// it stops at that request instead of answering it itself.
    fn is_auth_reply(&self) -> bool;
}

/// How long the steps of a session may take.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub connect: Duration,
    /// From sending a packet to its complete answer.
    pub answer: Duration,
}

/// How a session ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// Every packet was sent and answered; the client closed.
    Completed,
    /// The server closed after COM_QUIT, or after an ERR: what servers do
    /// with a bad connection.
    ClosedAsExpected,
    /// Closed by the server without an ERR.
    Closed,
    Reset,
    /// A packet got no answer in time.
    NoReply,
    /// The server sent bytes that are no packet stream.
    Garbled,
    /// No connection, or no greeting.
    ConnectFailed(String),
    /// Still running when the server failed (or the run ended): halted.
    InFlight,
}

impl Ending {
    /// Whether the control connection should look at the server now:
    /// the session ended in a way a dead or hung server would cause.
    pub fn is_suspicious(&self) -> bool {
        !matches!(self, Ending::Completed | Ending::ClosedAsExpected)
    }
}

/// What a session did.
#[derive(Debug, Clone)]
pub struct SessionOutcome {
    pub sent: Vec<SentPacket>,
    pub states: Vec<State>,
    pub ending: Ending,
    /// The positions of the packets the safety check kept back.
    pub withheld: Vec<usize>,
    /// From connecting to closing.
    pub took: Duration,
    /// When the last packet sent went out, while its answer has not come
    /// (a session in flight: the earliest is the likeliest to hang a server).
    pub unanswered_since: Option<Instant>,
    /// The first error answer that betrayed an internal fault, and the
    /// state it came with.
    pub internal_error: Option<(State, InternalError)>,
}

/// What the connection has established so far.
struct Established {
    server_caps: Capabilities,
    nonce: Vec<u8>,
    session_caps: Capabilities,
    prepared: Vec<Option<u32>>,
    /// The class of the last answer: an ERR before a close makes it normal.
    last_class: AnswerClass,
    last_command: Option<u8>,
    /// The sequence id a login or SSLRequest takes while the login has not
    /// been answered; `None` after.
    handshake_seq: Option<u8>,
    /// The nonce of the auth exchange under way (the greeting's, or a
    /// switch's).
    auth_nonce: Vec<u8>,
    /// The server's auth request the session's next packet answers.
    auth_ask: Option<AuthAsk>,
}

/// An auth request left for the session's own AuthReply to answer.
struct AuthAsk {
    /// What a client answers.
    reply: Vec<u8>,
    /// The sequence id of that answer.
    seq: u8,
}

/// Runs `items` on a new connection to `target`, until they are done or
/// `vigil` halts the sessions (then it ends [`Ending::InFlight`], with
/// what it sent and what it received so far); `judge` tells which error
/// answers betray an internal fault.
pub async fn run_session<T: Outgoing>(
    target: &Target,
    items: &[T],
    limits: &Limits,
    judge: &InternalErrors,
    vigil: &Vigil,
) -> SessionOutcome {
    let started = Instant::now();
    let mut outcome = SessionOutcome {
        sent: Vec::new(),
        states: Vec::new(),
        ending: Ending::Completed,
        withheld: Vec::new(),
        took: Duration::ZERO,
        unanswered_since: None,
        internal_error: None,
    };
    let halted = tokio::select! {
        biased;
        () = vigil.halted() => true,
        () = run_items(target, items, limits, judge, vigil, &mut outcome) => false,
    };
    if halted {
        outcome.ending = Ending::InFlight;
    }
    outcome.took = started.elapsed();
    outcome
}

async fn run_items<T: Outgoing>(
    target: &Target,
    items: &[T],
    limits: &Limits,
    judge: &InternalErrors,
    vigil: &Vigil,
    outcome: &mut SessionOutcome,
) {
    let mut conn = match FuzzConn::open(&target.endpoint, limits.connect).await {
        Ok(conn) => conn,
        Err(e) => {
            outcome.ending = Ending::ConnectFailed(e.to_string());
            return;
        }
    };
    let Some(mut live) = greet(&mut conn, limits, outcome).await else {
        conn.close().await;
        return;
    };
    for (index, item) in items.iter().enumerate() {
        let ctx = build_ctx(target, &live);
        let rendered = item.render(index, &ctx);
        if kept_back(&rendered, &target.database).is_some() {
            outcome.withheld.push(index);
            continue;
        }
        // Recorded before it goes out: a halt mid-exchange keeps it.
        let pending = State { step: step_of(&rendered), class: AnswerClass::Pending, code: 0 };
        outcome.sent.push(SentPacket { rendered, answered: Some(pending) });
        outcome.unanswered_since = Some(Instant::now());
        let Some(sending) = outcome.sent.last() else { break };
        let patience = Patience::new(limits.answer, vigil);
        let manual_auth = items.get(index + 1).is_some_and(Outgoing::is_auth_reply);
        let (step, answers) =
            exchange_packets(&mut conn, &sending.rendered, &mut live, target, patience, manual_auth).await;
        outcome.unanswered_since = None;
        let gone = answers.last().and_then(|a| a.gone);
        if outcome.internal_error.is_none() {
            let sent = sending.rendered.bytes.get(HEADER_LEN..).unwrap_or_default();
            outcome.internal_error = answers.iter().find_map(|a| {
                let betrayed = (a.code != 0).then(|| judge.judge(a.code, &a.message, sent)).flatten()?;
                Some((State { step, class: a.class, code: a.code }, betrayed))
            });
        }
        outcome.states.extend(answers.iter().map(|a| State { step, class: a.class, code: a.code }));
        if let Some(sent) = outcome.sent.last_mut() {
            sent.answered = answers.first().map(|a| State { step, class: a.class, code: a.code });
        }
        if let Some(gone) = gone {
            outcome.ending = ending(gone, &live);
            break;
        }
    }
    conn.close().await;
}

/// Why the safety check keeps `rendered` back, or `None`. A login, or an
/// SSLRequest (which carries no more than a login's first 32 bytes), is
/// checked as a login, anything else as a command.
pub fn kept_back(rendered: &Rendered, database: &str) -> Option<String> {
    let payload = rendered.bytes.get(HEADER_LEN..).unwrap_or_default();
    safety::forbidden(payload, rendered.phase != Phase::Command, database)
}

/// The step a packet is: how the server reads it.
pub fn step_of(rendered: &Rendered) -> ClientMessage {
    match rendered.phase {
        Phase::Login => ClientMessage::Login,
        Phase::SslRequest => ClientMessage::SslRequest,
        Phase::AuthReply => ClientMessage::AuthReply,
        Phase::Command => ClientMessage::of_command(rendered.bytes.get(HEADER_LEN).copied().unwrap_or(0)),
    }
}

/// Reads and parses the greeting; records its state.
async fn greet(conn: &mut FuzzConn, limits: &Limits, outcome: &mut SessionOutcome) -> Option<Established> {
    let deadline = Instant::now() + limits.connect;
    let payload = match read_packet(conn, deadline).await {
        Ok((_, payload)) => payload,
        Err(gone) => {
            outcome.ending = Ending::ConnectFailed(format!("no greeting: {}", Answer::gone(gone).class));
            return None;
        }
    };
    let class = match payload.first() {
        Some(0xFF) => AnswerClass::Err,
        Some(10) => AnswerClass::Handshake,
        _ => AnswerClass::Garbled,
    };
    let code = if class == AnswerClass::Err { err_code(&payload) } else { 0 };
    outcome.states.push(State { step: ClientMessage::Greeting, class, code });
    let Ok(hs) = InitialHandshake::parse(&payload) else {
        outcome.ending = Ending::ConnectFailed(format!("the greeting was {class}"));
        return None;
    };
    Some(Established {
        server_caps: hs.capabilities,
        auth_nonce: hs.auth_plugin_data.clone(),
        nonce: hs.auth_plugin_data,
        session_caps: hs.capabilities,
        prepared: Vec::new(),
        last_class: class,
        last_command: None,
        handshake_seq: Some(1),
        auth_ask: None,
    })
}

fn build_ctx<'a>(target: &'a Target, live: &'a Established) -> BuildCtx<'a> {
    BuildCtx {
        user: &target.user,
        password: &target.password,
        database: &target.database,
        server_caps: live.server_caps,
        nonce: &live.nonce,
        secure: target.endpoint.is_secure_transport(),
        session_caps: live.session_caps,
        prepared: &live.prepared,
        compress: target.compression,
        auth_reply: live.auth_ask.as_ref().map(|ask| (&ask.reply[..], ask.seq)),
        handshake_seq: live.handshake_seq,
    }
}

/// Sends one packet and reads what it causes; returns the step it was and
/// the answers (several for a login that switched plugins).
async fn exchange_packets(
    conn: &mut FuzzConn,
    rendered: &Rendered,
    live: &mut Established,
    target: &Target,
    mut patience: Patience<'_>,
    manual_auth: bool,
) -> (ClientMessage, Vec<Answer>) {
    let payload = rendered.bytes.get(HEADER_LEN..).unwrap_or_default();
    let command = payload.first().copied();
    let step = step_of(rendered);
    if let Err(gone) = conn.send(&rendered.bytes, &rendered.wrap, patience.deadline()).await {
        return (step, vec![Answer::gone(gone)]);
    }
    let answers = match (rendered.phase, command) {
        (Phase::Login | Phase::AuthReply, _) => {
            if rendered.phase == Phase::Login {
                live.session_caps = sent_capabilities(payload) & live.server_caps;
                live.handshake_seq = None;
                live.auth_nonce.clone_from(&live.nonce);
            }
            live.auth_ask = None;
            let answers = authenticate(conn, live, target, &mut patience, manual_auth).await;
            let logged_in = answers.last().is_some_and(|a| a.class == AnswerClass::Ok && a.gone.is_none());
            if logged_in && live.session_caps.contains(Capabilities::COMPRESS) {
                conn.start_compression();
            }
            answers
        }
        (Phase::SslRequest, _) => {
            live.handshake_seq = live.handshake_seq.map(|seq| seq.wrapping_add(1));
            vec![Answer::of(AnswerClass::Silent)]
        }
        (Phase::Command, Some(COM_CHANGE_USER)) => {
            live.auth_nonce.clone_from(&live.nonce);
            authenticate(conn, live, target, &mut patience, false).await
        }
        (Phase::Command, _) => {
            let expect = expect_for(command.unwrap_or(0));
            let mut answers = vec![read_answer(conn, expect, live.session_caps, &mut patience).await];
            // A packet sent with lies in its framing, or one that expects
            // no answer, may still get one (or several): read what comes at
            // once, so that the next packet is not blamed for it.
            if expect == AnswerShape::Nothing || !is_one_clean_packet(&rendered.bytes) {
                if let Some(extra) = drain_extra(conn, EXTRA_ANSWER_WINDOW).await {
                    answers.push(extra);
                }
            }
            answers
        }
    };
    if command == Some(COM_STMT_PREPARE) && rendered.phase == Phase::Command {
        live.prepared.push(answers.first().and_then(|a| a.statement_id));
    }
    live.last_command = (rendered.phase == Phase::Command).then_some(command.unwrap_or(0));
    // The last real answer: an ERR followed by the close it announced
    // makes that close normal.
    let real = |a: &&Answer| {
        !matches!(
            a.class,
            AnswerClass::Closed
                | AnswerClass::Reset
                | AnswerClass::NoReply
                | AnswerClass::Silent
                | AnswerClass::Garbled
        )
    };
    if let Some(last) = answers.iter().rev().find(real) {
        live.last_class = last.class;
    }
    (step, answers)
}

/// How long to wait for answers nobody asked for.
const EXTRA_ANSWER_WINDOW: Duration = Duration::from_millis(10);

/// Whether `bytes` are exactly one packet of sequence id 0 whose header
/// tells its length.
fn is_one_clean_packet(bytes: &[u8]) -> bool {
    Header::parse(bytes).is_some_and(|h| h.seq == 0 && h.len + HEADER_LEN == bytes.len() && h.len < MAX_FRAGMENT)
}

/// Reads whatever arrives within `window`: the first packet's class, or
/// the end of the connection; `None` when nothing came.
async fn drain_extra(conn: &mut FuzzConn, window: Duration) -> Option<Answer> {
    let deadline = Instant::now() + window;
    let mut first: Option<Answer> = None;
    loop {
        loop {
            match conn.front() {
                Ok(Some(front)) => {
                    let payload = conn.front_payload(front);
                    first.get_or_insert_with(|| extra_answer(payload));
                    conn.consume(front);
                }
                Ok(None) => break,
                Err(gone) => return Some(Answer { gone: Some(gone), ..first.unwrap_or(Answer::gone(gone)) }),
            }
        }
        match conn.fill(deadline).await {
            Ok(()) => {}
            Err(Gone::Timeout) => return first,
            Err(gone) => return Some(Answer { gone: Some(gone), ..first.unwrap_or(Answer::gone(gone)) }),
        }
    }
}

/// The class of a packet that came unasked.
fn extra_answer(payload: &[u8]) -> Answer {
    match payload.first() {
        Some(0x00) => Answer::of(AnswerClass::Ok),
        Some(0xFF) => Answer { code: err_code(payload), ..Answer::of(AnswerClass::Err) },
        Some(0xFE) => Answer::of(AnswerClass::Eof),
        _ => Answer::of(AnswerClass::ResultSet),
    }
}

/// The answer a command byte calls for.
pub fn expect_for(command: u8) -> AnswerShape {
    use wirebench_protocol::constants::command::*;
    match command {
        COM_QUERY | COM_STMT_EXECUTE => AnswerShape::Results,
        COM_STMT_PREPARE => AnswerShape::Prepare,
        COM_STMT_FETCH => AnswerShape::Rows,
        COM_FIELD_LIST => AnswerShape::Definitions,
        COM_STMT_CLOSE | COM_STMT_SEND_LONG_DATA => AnswerShape::Nothing,
        COM_QUIT => AnswerShape::Closing,
        _ => AnswerShape::One,
    }
}

/// The capabilities a login packet announces (MariaDB's extended ones
/// when bit 0 is clear).
pub fn sent_capabilities(payload: &[u8]) -> Capabilities {
    let word = |at: usize| payload.get(at..at + 4).and_then(|b| b.try_into().ok()).map_or(0, u32::from_le_bytes);
    let low = word(0);
    let ext = if low & 1 == 0 { word(28) } else { 0 };
    Capabilities::from_parts(low, ext)
}

fn ending(gone: Gone, live: &Established) -> Ending {
    let after_err = live.last_class == AnswerClass::Err;
    let after_quit = live.last_command == Some(COM_QUIT);
    match gone {
        Gone::Closed | Gone::Reset if after_err || after_quit => Ending::ClosedAsExpected,
        Gone::Closed => Ending::Closed,
        Gone::Reset => Ending::Reset,
        Gone::Timeout => Ending::NoReply,
        Gone::Garbled => Ending::Garbled,
    }
}

/// Reads one whole packet before `deadline`.
async fn read_packet(conn: &mut FuzzConn, deadline: Instant) -> Result<(u8, Vec<u8>), Gone> {
    loop {
        if let Some(packet) = take_packet(conn)? {
            return Ok(packet);
        }
        conn.fill(deadline).await?;
    }
}

/// Reads one whole packet, as patient as `patience`.
async fn read_packet_patiently(conn: &mut FuzzConn, patience: &mut Patience<'_>) -> Result<(u8, Vec<u8>), Gone> {
    loop {
        if let Some(packet) = take_packet(conn)? {
            return Ok(packet);
        }
        patience.fill(conn).await?;
    }
}

/// The packet at the front of the read buffer, if it is whole.
fn take_packet(conn: &mut FuzzConn) -> Result<Option<(u8, Vec<u8>)>, Gone> {
    let Some(front) = conn.front()? else { return Ok(None) };
    let payload = conn.front_payload(front).to_vec();
    conn.consume(front);
    Ok(Some((front.seq, payload)))
}

/// The login's (or COM_CHANGE_USER's) exchange after the client's packet,
/// to OK or ERR: answers auth switches and caching_sha2_password's
/// requests as a client does, each server packet one answer. With
/// `manual`, the first such request is left for the session's next packet
/// (an AuthReply) to answer: the correct answer goes to `live.auth_ask`.
async fn authenticate(
    conn: &mut FuzzConn,
    live: &mut Established,
    target: &Target,
    patience: &mut Patience<'_>,
    manual: bool,
) -> Vec<Answer> {
    let mut answers = Vec::new();
    let mut plugin = AuthPlugin::MysqlNativePassword;
    let secure = target.endpoint.is_secure_transport();
    let password = target.password.as_bytes();
    for _ in 0..6 {
        let (seq, payload) = match read_packet_patiently(conn, patience).await {
            Ok(packet) => packet,
            Err(gone) => {
                answers.push(Answer::gone(gone));
                return answers;
            }
        };
        let mut reply = Vec::new();
        let class = match payload.first() {
            Some(0x00) => AnswerClass::Ok,
            Some(0xFF) => AnswerClass::Err,
            Some(0xFE) => {
                if let Ok(switch) = AuthSwitchRequest::parse(&payload) {
                    plugin = AuthPlugin::from_name(switch.plugin_name).unwrap_or(plugin);
                    live.auth_nonce = switch.plugin_data.to_vec();
                    let nonce = &live.auth_nonce;
                    let _ = plugin.first_response(password, nonce, secure, None, &mut OsRng, &mut reply);
                }
                AnswerClass::AuthSwitch
            }
            Some(0x01) => {
                reply = more_auth_data(payload.get(1..).unwrap_or_default(), password, &live.auth_nonce, secure);
                AnswerClass::AuthMoreData
            }
            _ => AnswerClass::Garbled,
        };
        let (code, message) =
            if class == AnswerClass::Err { (err_code(&payload), err_message(&payload)) } else { (0, Vec::new()) };
        answers.push(Answer { code, message, ..Answer::of(class) });
        if !matches!(class, AnswerClass::AuthSwitch | AnswerClass::AuthMoreData) {
            return answers;
        }
        if matches!(payload.as_slice(), [0x01, caching_sha2::FAST_AUTH_SUCCESS]) {
            continue;
        }
        if manual {
            live.auth_ask = Some(AuthAsk { reply, seq: seq.wrapping_add(1) });
            return answers;
        }
        let mut packet = Vec::new();
        encode_packet(&mut packet, seq.wrapping_add(1), &reply);
        if let Err(gone) = conn.send(&packet, &[], patience.deadline()).await {
            answers.push(Answer::gone(gone));
            return answers;
        }
    }
    answers
}

/// caching_sha2_password's AuthMoreData: full authentication sends the
/// password in clear over a unix socket, else asks for the server's key;
/// a key that came is used to encrypt it.
fn more_auth_data(data: &[u8], password: &[u8], nonce: &[u8], secure: bool) -> Vec<u8> {
    match data {
        [caching_sha2::PERFORM_FULL_AUTHENTICATION] if secure => [password, &[0]].concat(),
        [caching_sha2::PERFORM_FULL_AUTHENTICATION] => vec![caching_sha2::REQUEST_PUBLIC_KEY],
        pem => rsa_key::encrypt_password(password, nonce, pem, &mut OsRng).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live(last_class: AnswerClass, last_command: Option<u8>) -> Established {
        Established {
            server_caps: Capabilities::empty(),
            nonce: Vec::new(),
            auth_nonce: Vec::new(),
            handshake_seq: None,
            auth_ask: None,
            session_caps: Capabilities::empty(),
            prepared: Vec::new(),
            last_class,
            last_command,
        }
    }

    #[test]
    fn a_close_is_normal_after_an_err_or_quit_only() {
        assert_eq!(ending(Gone::Closed, &live(AnswerClass::Err, Some(0x03))), Ending::ClosedAsExpected);
        assert_eq!(ending(Gone::Reset, &live(AnswerClass::Ok, Some(COM_QUIT))), Ending::ClosedAsExpected);
        assert_eq!(ending(Gone::Closed, &live(AnswerClass::Ok, Some(0x03))), Ending::Closed);
        assert_eq!(ending(Gone::Timeout, &live(AnswerClass::Err, None)), Ending::NoReply);
        assert!(Ending::Closed.is_suspicious() && Ending::NoReply.is_suspicious());
        assert!(!Ending::ClosedAsExpected.is_suspicious() && !Ending::Completed.is_suspicious());
    }

    #[test]
    fn clean_packets_and_sent_capabilities() {
        assert!(is_one_clean_packet(&[1, 0, 0, 0, 0x0e]));
        assert!(!is_one_clean_packet(&[1, 0, 0, 1, 0x0e]), "another sequence id");
        assert!(!is_one_clean_packet(&[2, 0, 0, 0, 0x0e]), "a length that lies");
        assert!(!is_one_clean_packet(&[1, 0, 0, 0, 0x0e, 1, 0, 0, 0, 0x0e]), "two packets");
        let mut login = vec![0x0c, 0x02, 0, 0];
        login.resize(32, 0);
        login[28] = 0x04;
        assert_eq!(sent_capabilities(&login), Capabilities::from_parts(0x20c, 4), "MariaDB's, with bit 0 clear");
        login[0] = 0x0d;
        assert_eq!(sent_capabilities(&login), Capabilities::from_parts(0x20d, 0));
        assert_eq!(sent_capabilities(&[1]), Capabilities::empty());
    }
}
