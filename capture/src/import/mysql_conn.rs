//! One MySQL connection read off the wire, both directions: its login,
//! then its commands and their answers, as capture records.
//!
//! A connection whose login was seen has its capabilities; one joined
//! midway is read from its first whole command ([`seek`](super::seek)),
//! its capabilities found from its answers ([`guess`](super::guess)). TLS
//! and the compressed protocol cannot be read: the connection is recorded
//! as such and its bytes passed over. Lost bytes leave a gap record, and
//! reading resumes at the next whole command.
//!
//! A recording proxy sees more than the wire: it ends TLS and takes the
//! compression off a copy, and feeds that ([`MysqlConn::proxied`]). Such a
//! connection reads its login inside TLS, and its commands once the login
//! negotiated compression.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet, VecDeque};

use wirebench_protocol::constants::command as com;
use wirebench_protocol::framing::{decode_answer_packet, decode_packet, Frame};
use wirebench_protocol::handshake::{ClientFirstPacket, Greeting, LoginRequest};
use wirebench_protocol::response::{AnswerForm, AnswerSummariser, AnswerSummary, ColumnShape};
use wirebench_protocol::Capabilities;

use super::guess::{candidates, Guess, Verdict, CLIENT_BASE};
use super::seek::{find_command, summarisable, Found};
use super::ImportReport;
use crate::format::{Answer, CloseReason, Command, ConnId, ConnectionClose, ConnectionOpen, Gap, GapReason, Record};
use crate::redact::change_user_without_secret;

/// The largest command kept: MySQL's largest max_allowed_packet.
const MAX_COMMAND: usize = 1 << 30;
/// Packets of the login are small; a larger one is not a login.
const MAX_LOGIN_PACKET: usize = 1 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Greeting,
    Login,
    Auth,
    Commands,
    /// Looking for the first whole command.
    Seeking,
    /// TLS, the compressed protocol, a replication stream: passed over.
    Opaque,
    Closed,
}

/// A command waiting for its answer.
#[derive(Debug, Clone)]
struct Pending {
    form: AnswerForm,
    first_seq: u8,
    cached: Vec<ColumnShape>,
}

/// The server this connection talks to, as its greeting described it.
#[derive(Debug, Clone, Default)]
pub(crate) struct ServerInfo {
    pub(crate) capabilities: Option<Capabilities>,
    pub(crate) version: Option<Vec<u8>>,
}

/// Who closed the connection first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Closer {
    Client,
    Server,
    CaptureEnd,
}

pub(crate) struct MysqlConn {
    id: ConnId,
    client_addr: String,
    server_addr: String,
    phase: Phase,
    client: Vec<u8>,
    /// Where TCP segments began in `client`, while seeking.
    client_starts: Vec<usize>,
    server: Vec<u8>,
    /// The capabilities in force, once known.
    caps: Option<Capabilities>,
    /// While they are not: the combinations still in play.
    unsure: Vec<Capabilities>,
    reader: AnswerSummariser,
    guess: Option<Guess>,
    pending: VecDeque<Pending>,
    /// Result columns of each prepared statement (for CACHE_METADATA).
    statements: HashMap<u32, Vec<ColumnShape>>,
    last_prepared: Option<u32>,
    unknown_ids: HashSet<u32>,
    opened: bool,
    quit: bool,
    server_info: ServerInfo,
    thread_id: Option<u64>,
    /// Client bytes seen while no whole command had been found.
    unread_client_bytes: u64,
    /// The caller hands over the bytes inside TLS and compression (a
    /// proxy), not the wire's.
    proxied: bool,
    /// The client asked for TLS (a proxied connection reads on inside it).
    tls: bool,
    /// The login negotiated compression and is done: a proxied
    /// connection's bytes from now on come inflated.
    compressed: bool,
}

/// Client bytes of a connection joined midway, with no whole command found
/// in them, past which it is named as unreadable.
const UNREADABLE_AFTER: u64 = 64 << 10;

/// What the caller hands a connection's records to.
pub(crate) type Outbox = Vec<Record<'static>>;

impl MysqlConn {
    /// A connection whose SYN was seen: its greeting comes first.
    pub(crate) fn from_start(id: ConnId, client_addr: String, server_addr: String) -> Self {
        MysqlConn::new(id, client_addr, server_addr, Phase::Greeting)
    }

    /// A connection already open when the capture began.
    pub(crate) fn joined(id: ConnId, client_addr: String, server_addr: String, server: ServerInfo) -> Self {
        let mut conn = MysqlConn::new(id, client_addr, server_addr, Phase::Seeking);
        conn.server_info = server;
        let base = conn
            .server_info
            .capabilities
            .map_or(CLIENT_BASE, |s| (CLIENT_BASE | super::guess::UNSURE[0] | super::guess::UNSURE[1]) & s);
        conn.unsure = candidates(base | Capabilities::SECURE_CONNECTION);
        conn
    }

    /// A connection a proxy forwards, from its greeting on: the caller feeds
    /// the bytes inside TLS and, once [`is_compressed`](Self::is_compressed),
    /// inflated.
    pub(crate) fn proxied(id: ConnId, client_addr: String, server_addr: String) -> Self {
        MysqlConn { proxied: true, ..MysqlConn::new(id, client_addr, server_addr, Phase::Greeting) }
    }

    /// The login negotiated compression and is done: the packets both ways
    /// are inside compressed packets from here on.
    pub(crate) fn is_compressed(&self) -> bool {
        self.compressed
    }

    fn new(id: ConnId, client_addr: String, server_addr: String, phase: Phase) -> Self {
        MysqlConn {
            id,
            client_addr,
            server_addr,
            phase,
            client: Vec::new(),
            client_starts: Vec::new(),
            server: Vec::new(),
            caps: None,
            unsure: Vec::new(),
            reader: AnswerSummariser::new(Capabilities::empty()),
            guess: None,
            pending: VecDeque::new(),
            statements: HashMap::new(),
            last_prepared: None,
            unknown_ids: HashSet::new(),
            opened: false,
            quit: false,
            server_info: ServerInfo::default(),
            thread_id: None,
            unread_client_bytes: 0,
            proxied: false,
            tls: false,
            compressed: false,
        }
    }

    /// What its greeting said of the server, for connections joined later.
    pub(crate) fn server_info(&self) -> &ServerInfo {
        &self.server_info
    }

    /// The earliest time a record this connection has yet to write may carry.
    pub(crate) fn hold_from(&self) -> Option<u64> {
        self.guess.as_ref().and_then(Guess::hold_from)
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.phase == Phase::Closed
    }

    /// Bytes from the client.
    pub(crate) fn client_bytes(
        &mut self,
        at_ns: u64,
        bytes: &[u8],
        segment_start: bool,
        out: &mut Outbox,
        report: &mut ImportReport,
    ) {
        match self.phase {
            Phase::Opaque | Phase::Closed => return,
            Phase::Seeking if segment_start => self.client_starts.push(self.client.len()),
            _ => {}
        }
        if !self.opened {
            self.unread_client_bytes += bytes.len() as u64;
        }
        self.client.extend_from_slice(bytes);
        self.read_client(at_ns, out, report);
    }

    /// Bytes from the server.
    pub(crate) fn server_bytes(&mut self, at_ns: u64, bytes: &[u8], out: &mut Outbox, report: &mut ImportReport) {
        match self.phase {
            Phase::Opaque | Phase::Closed | Phase::Seeking => return,
            _ => {}
        }
        self.server.extend_from_slice(bytes);
        self.read_server(at_ns, out, report);
    }

    /// The capture lost bytes of this connection.
    pub(crate) fn gap(&mut self, at_ns: u64, out: &mut Outbox, report: &mut ImportReport) {
        match self.phase {
            Phase::Commands | Phase::Seeking => self.lose_track(at_ns, GapReason::BytesLost, out, report),
            // The login's bytes are gone: its commands can still be read.
            Phase::Greeting | Phase::Login | Phase::Auth => {
                self.phase = Phase::Seeking;
                self.client.clear();
                self.client_starts.clear();
                self.server.clear();
            }
            Phase::Opaque | Phase::Closed => {}
        }
    }

    /// The connection ended (or the capture did).
    pub(crate) fn close(&mut self, at_ns: u64, closer: Closer, out: &mut Outbox, report: &mut ImportReport) {
        if self.phase == Phase::Closed {
            return;
        }
        self.settle_guess(at_ns, out, report);
        report.answers_missing += self.pending.len() as u64;
        self.pending.clear();
        let never_read = self.phase == Phase::Seeking && !self.opened && self.unread_client_bytes >= UNREADABLE_AFTER;
        self.phase = Phase::Closed;
        if never_read {
            report.not_importable.push(format!(
                "{}: open before the capture began, and no command could be read in its {} bytes (TLS or the \
                 compressed protocol?)",
                self.describe(),
                self.unread_client_bytes
            ));
        }
        if !self.opened {
            return;
        }
        let reason = match closer {
            _ if self.quit => CloseReason::Quit,
            Closer::Client => CloseReason::ClientClosed,
            Closer::Server => CloseReason::ServerClosed,
            Closer::CaptureEnd => CloseReason::CaptureEnded,
        };
        out.push(Record::Close(ConnectionClose { at_ns, conn: self.id, reason }));
    }

    fn read_client(&mut self, at_ns: u64, out: &mut Outbox, report: &mut ImportReport) {
        loop {
            let progressed = match self.phase {
                Phase::Login => self.read_login(at_ns, out, report),
                Phase::Seeking => self.seek(at_ns, out, report),
                Phase::Commands => self.read_command(at_ns, out, report),
                // The login's own packets (auth data) are not kept.
                Phase::Auth | Phase::Greeting => self.skip_client_packet(),
                Phase::Opaque | Phase::Closed => false,
            };
            if !progressed {
                return;
            }
        }
    }

    fn read_server(&mut self, at_ns: u64, out: &mut Outbox, report: &mut ImportReport) {
        loop {
            let progressed = match self.phase {
                Phase::Greeting => self.read_greeting(report),
                Phase::Auth => self.read_auth(at_ns, out, report),
                Phase::Commands => self.read_answer(at_ns, out, report),
                Phase::Login => false,
                Phase::Seeking | Phase::Opaque | Phase::Closed => false,
            };
            if !progressed {
                return;
            }
        }
    }

    /// The next whole packet of `buf` (any sequence id), taken off it.
    fn take_packet(buf: &mut Vec<u8>, max: usize) -> Result<Option<(Vec<u8>, u8)>, ()> {
        match decode_answer_packet(buf, 0, max) {
            Ok(Some(Frame { payload, consumed, next_seq, .. })) => {
                let taken = (payload.into_owned(), next_seq);
                buf.drain(..consumed);
                Ok(Some(taken))
            }
            Ok(None) => Ok(None),
            Err(_) => Err(()),
        }
    }

    fn skip_client_packet(&mut self) -> bool {
        matches!(MysqlConn::take_packet(&mut self.client, MAX_LOGIN_PACKET), Ok(Some(_)))
    }

    fn read_greeting(&mut self, report: &mut ImportReport) -> bool {
        let Ok(Some((payload, _))) = MysqlConn::take_packet(&mut self.server, MAX_LOGIN_PACKET) else {
            if self.server.len() > MAX_LOGIN_PACKET {
                self.not_mysql(report);
            }
            return false;
        };
        match Greeting::parse(&payload) {
            Ok(Greeting::Handshake(hs)) => {
                self.server_info =
                    ServerInfo { capabilities: Some(hs.capabilities), version: Some(hs.server_version.to_vec()) };
                self.thread_id = Some(u64::from(hs.connection_id));
                self.phase = Phase::Login;
                true
            }
            Ok(_) => {
                // An ERR instead of a greeting: the server refused the connection.
                report.logins_refused += 1;
                self.phase = Phase::Closed;
                false
            }
            Err(_) => {
                self.not_mysql(report);
                false
            }
        }
    }

    fn not_mysql(&mut self, report: &mut ImportReport) {
        report.not_importable.push(format!("{}: not the MySQL protocol", self.describe()));
        self.phase = Phase::Opaque;
    }

    fn describe(&self) -> String {
        format!("connection {} ({} -> {})", self.id, self.client_addr, self.server_addr)
    }

    fn read_login(&mut self, at_ns: u64, out: &mut Outbox, report: &mut ImportReport) -> bool {
        let Ok(Some((payload, _))) = MysqlConn::take_packet(&mut self.client, MAX_LOGIN_PACKET) else { return false };
        match ClientFirstPacket::parse(&payload) {
            Ok(ClientFirstPacket::Response(login)) => {
                let caps = match self.server_info.capabilities {
                    Some(server) => (login.capabilities & server) | Capabilities::SECURE_CONNECTION,
                    None => login.capabilities,
                };
                self.caps = Some(caps);
                self.reader = AnswerSummariser::new(caps);
                let compressed = caps.contains(Capabilities::COMPRESS);
                self.open(at_ns, Some((&login, caps)), self.tls, compressed, out, report);
                self.phase = Phase::Auth;
                true
            }
            // A proxy ends the TLS: the login comes next, inside it.
            Ok(ClientFirstPacket::SslRequest { .. }) if self.proxied && !self.tls => {
                self.tls = true;
                true
            }
            Ok(ClientFirstPacket::SslRequest { capabilities, .. }) => {
                self.caps = Some(capabilities);
                self.open(at_ns, None, true, false, out, report);
                report.not_importable.push(format!("{}: TLS (its commands are encrypted)", self.describe()));
                self.phase = Phase::Opaque;
                false
            }
            _ => {
                self.not_mysql(report);
                false
            }
        }
    }

    fn open(
        &mut self,
        at_ns: u64,
        login: Option<(&LoginRequest<'_>, Capabilities)>,
        tls: bool,
        compressed: bool,
        out: &mut Outbox,
        report: &mut ImportReport,
    ) {
        let owned = |b: &[u8]| Some(Cow::Owned(b.to_vec()));
        let mut open = ConnectionOpen {
            at_ns,
            conn: self.id,
            already_open: login.is_none() && !tls,
            tls,
            compressed,
            server_thread_id: self.thread_id,
            client_addr: owned(self.client_addr.as_bytes()),
            server_addr: owned(self.server_addr.as_bytes()),
            server_version: self.server_info.version.as_deref().and_then(owned),
            ..ConnectionOpen::default()
        };
        if let Some((login, caps)) = login {
            open.user = owned(login.user);
            open.database = login.database.and_then(owned);
            open.charset = Some(login.charset);
            open.capabilities = Some(caps.0);
        }
        report.connections += 1;
        report.already_open += u64::from(open.already_open);
        self.opened = true;
        out.push(Record::Open(open));
    }

    fn read_auth(&mut self, at_ns: u64, out: &mut Outbox, report: &mut ImportReport) -> bool {
        let Ok(Some((payload, _))) = MysqlConn::take_packet(&mut self.server, MAX_LOGIN_PACKET) else { return false };
        match payload.first() {
            Some(0x00) if self.proxied && self.caps.is_some_and(|c| c.contains(Capabilities::COMPRESS)) => {
                self.compressed = true;
                self.phase = Phase::Commands;
                true
            }
            Some(0x00) if self.caps.is_some_and(|c| c.contains(Capabilities::COMPRESS)) => {
                report.not_importable.push(format!("{}: the compressed protocol", self.describe()));
                self.phase = Phase::Opaque;
                false
            }
            Some(0x00) => {
                self.phase = Phase::Commands;
                true
            }
            Some(0xFF) => {
                report.logins_refused += 1;
                self.close(at_ns, Closer::Server, out, report);
                false
            }
            // AuthSwitchRequest, AuthMoreData: the exchange goes on.
            _ => true,
        }
    }

    /// Looks for the first whole command of a connection joined midway.
    fn seek(&mut self, at_ns: u64, out: &mut Outbox, report: &mut ImportReport) -> bool {
        match find_command(&self.client, &self.client_starts) {
            Found::At(start) => {
                self.client.drain(..start);
                self.client_starts.clear();
                // Whatever the server sent so far answered commands not seen.
                self.server.clear();
                self.phase = Phase::Commands;
                if !self.opened {
                    self.open(at_ns, None, false, false, out, report);
                }
                true
            }
            Found::Wait(start) | Found::Nothing(start) => {
                self.client.drain(..start);
                self.client_starts.retain(|&s| s >= start);
                self.client_starts.iter_mut().for_each(|s| *s -= start);
                false
            }
        }
    }

    /// A client packet in the commands phase: a command, or data the
    /// current answer asked for.
    fn read_command(&mut self, at_ns: u64, out: &mut Outbox, report: &mut ImportReport) -> bool {
        if self.reader.awaits_client() && self.caps.is_some() {
            return self.skip_client_packet();
        }
        match decode_packet(&self.client, 0, MAX_COMMAND) {
            Ok(Some(frame)) => {
                let (payload, next_seq, consumed) = (frame.payload.into_owned(), frame.next_seq, frame.consumed);
                self.client.drain(..consumed);
                self.command(at_ns, payload, next_seq, out, report);
                true
            }
            Ok(None) => false,
            Err(_) => {
                self.lose_track(at_ns, GapReason::Undecodable, out, report);
                false
            }
        }
    }

    fn command(&mut self, at_ns: u64, mut payload: Vec<u8>, next_seq: u8, out: &mut Outbox, report: &mut ImportReport) {
        self.settle_guess(at_ns, out, report);
        let Some(&byte) = payload.first() else { return };
        if !summarisable(byte) {
            report
                .not_importable
                .push(format!("{}: a replication stream (command 0x{byte:02x}) from here on", self.describe()));
            self.phase = Phase::Opaque;
            return;
        }
        let form = AnswerForm::of(byte);
        let unknown_statement = self.statement_command(byte, &payload, report);
        if byte == com::COM_CHANGE_USER {
            payload = change_user_without_secret(&payload, self.caps.unwrap_or(CLIENT_BASE));
        }
        self.quit |= byte == com::COM_QUIT;
        report.commands += 1;
        let answer_follows = form != AnswerForm::Nothing;
        if answer_follows {
            let cached = match (byte, statement_id(&payload).map(|id| self.resolve(id))) {
                (com::COM_STMT_EXECUTE | com::COM_STMT_FETCH, Some(id)) => {
                    self.statements.get(&id).cloned().unwrap_or_default()
                }
                _ => Vec::new(),
            };
            self.pending.push_back(Pending { form, first_seq: next_seq, cached });
        }
        out.push(Record::Command(Command {
            at_ns,
            conn: self.id,
            answer_follows,
            text_form: false,
            unknown_statement,
            payload: Cow::Owned(payload),
        }));
    }

    /// MariaDB's execute of statement id 0xFFFFFFFF is of the last statement prepared.
    fn resolve(&self, id: u32) -> u32 {
        if id == u32::MAX {
            self.last_prepared.unwrap_or(id)
        } else {
            id
        }
    }

    /// For a command on a prepared statement: whether its prepare was never
    /// seen. COM_STMT_CLOSE forgets the statement.
    fn statement_command(&mut self, byte: u8, payload: &[u8], report: &mut ImportReport) -> bool {
        let on_statement = matches!(
            byte,
            com::COM_STMT_EXECUTE
                | com::COM_STMT_FETCH
                | com::COM_STMT_CLOSE
                | com::COM_STMT_RESET
                | com::COM_STMT_SEND_LONG_DATA
                | com::COM_STMT_BULK_EXECUTE
        );
        let Some(id) = statement_id(payload).filter(|_| on_statement).map(|id| self.resolve(id)) else { return false };
        let unknown = !self.statements.contains_key(&id);
        if unknown {
            report.unknown_statement_commands += 1;
            if self.unknown_ids.insert(id) {
                report.unknown_statement_ids += 1;
            }
        }
        if byte == com::COM_STMT_CLOSE {
            self.statements.remove(&id);
        }
        unknown
    }

    /// Server bytes in the commands phase: the oldest pending command's answer.
    fn read_answer(&mut self, at_ns: u64, out: &mut Outbox, report: &mut ImportReport) -> bool {
        if self.server.is_empty() {
            return false;
        }
        let Some(pending) = self.pending.front().cloned() else {
            return self.unsolicited(at_ns, out, report);
        };
        if self.caps.is_none() {
            return self.read_guessed(at_ns, &pending, out, report);
        }
        if !self.reader.is_reading() && self.reader.begin(pending.form, pending.first_seq, &pending.cached).is_err() {
            self.lose_track(at_ns, GapReason::Undecodable, out, report);
            return false;
        }
        match self.reader.advance(&self.server) {
            Ok(progress) => {
                self.server.drain(..progress.consumed);
                match progress.done {
                    Some(summary) => {
                        let columns = self.reader.prepared_columns().to_vec();
                        self.answered(at_ns, summary, columns, out, report);
                        true
                    }
                    None => false,
                }
            }
            Err(_) => {
                self.lose_track(at_ns, GapReason::Undecodable, out, report);
                false
            }
        }
    }

    /// Server bytes while no command waits: an ERR a server sends before it
    /// closes a connection (killed, shut down) is passed over; anything else
    /// means the reading is lost.
    fn unsolicited(&mut self, at_ns: u64, out: &mut Outbox, report: &mut ImportReport) -> bool {
        match MysqlConn::take_packet(&mut self.server, MAX_LOGIN_PACKET) {
            Ok(Some((payload, _))) if payload.first() == Some(&0xFF) => true,
            Ok(None) => false,
            _ => {
                self.lose_track(at_ns, GapReason::Undecodable, out, report);
                false
            }
        }
    }

    /// An answer on a connection whose capabilities are not known yet.
    fn read_guessed(&mut self, at_ns: u64, pending: &Pending, out: &mut Outbox, report: &mut ImportReport) -> bool {
        let unsure = &self.unsure;
        let guess =
            self.guess.get_or_insert_with(|| Guess::new(unsure, pending.form, pending.first_seq, &pending.cached));
        let bytes = std::mem::take(&mut self.server);
        match guess.feed(&bytes, at_ns) {
            Verdict::Open => false,
            Verdict::NoneFits => {
                self.guess = None;
                self.lose_track(at_ns, GapReason::Undecodable, out, report);
                false
            }
            Verdict::Settled { caps, reader, done, unread } => {
                self.guess = None;
                self.caps = Some(caps);
                self.reader = *reader;
                self.server = unread;
                if let Some(reading) = done {
                    self.answered(reading.at_ns, reading.summary, reading.columns, out, report);
                }
                true
            }
        }
    }

    /// The next command came: an answer read under several hypotheses is
    /// taken as the first's reading, with the capabilities still in play.
    fn settle_guess(&mut self, at_ns: u64, out: &mut Outbox, report: &mut ImportReport) {
        let Some(guess) = self.guess.take() else { return };
        match guess.close() {
            Some((caps, reading)) => {
                if let [only] = caps.as_slice() {
                    self.caps = Some(*only);
                    self.reader = AnswerSummariser::new(*only).strict();
                } else {
                    self.unsure = caps;
                }
                self.answered(reading.at_ns, reading.summary, reading.columns, out, report);
            }
            None => {
                // No reading ended where the server's bytes did.
                self.pending.pop_front();
                report.answers_missing += 1;
                self.gap_record(at_ns, GapReason::Undecodable, out, report);
            }
        }
    }

    fn answered(
        &mut self,
        at_ns: u64,
        summary: AnswerSummary,
        columns: Vec<ColumnShape>,
        out: &mut Outbox,
        report: &mut ImportReport,
    ) {
        self.pending.pop_front();
        if let Some(prepared) = summary.prepared {
            self.statements.insert(prepared.statement_id, columns);
            self.last_prepared = Some(prepared.statement_id);
        }
        report.answers += 1;
        out.push(Record::Answer(Answer::from_summary(at_ns, self.id, &summary)).into_owned());
    }

    /// The bytes can no longer be read as the protocol: a gap, then the
    /// next whole command.
    fn lose_track(&mut self, at_ns: u64, reason: GapReason, out: &mut Outbox, report: &mut ImportReport) {
        report.answers_missing += self.pending.len() as u64;
        self.pending.clear();
        self.guess = None;
        self.server.clear();
        self.client.clear();
        self.client_starts.clear();
        if self.caps.is_some() {
            let caps = self.caps.unwrap_or(CLIENT_BASE);
            self.reader = AnswerSummariser::new(caps);
        }
        self.phase = Phase::Seeking;
        if self.opened {
            self.gap_record(at_ns, reason, out, report);
        }
    }

    fn gap_record(&mut self, at_ns: u64, reason: GapReason, out: &mut Outbox, report: &mut ImportReport) {
        report.gaps += 1;
        out.push(Record::Gap(Gap { at_ns, conn: self.id, reason }));
    }
}

/// The statement id after a COM_STMT_* command byte.
fn statement_id(payload: &[u8]) -> Option<u32> {
    let id = payload.get(1..5)?;
    Some(u32::from_le_bytes([*id.first()?, *id.get(1)?, *id.get(2)?, *id.get(3)?]))
}
