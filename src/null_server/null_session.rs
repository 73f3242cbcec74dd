//! One client connection of the null server, sans-IO: bytes in, answers
//! out. The event loop reads whatever the socket has, calls
//! [`NullSession::handle`] once, and writes everything it appended with one
//! write, so a pipelining client is served with one syscall per batch.

use std::collections::HashMap;
use std::sync::Arc;

use wirebench_protocol::command::count_placeholders;
use wirebench_protocol::constants::command::*;
use wirebench_protocol::framing::decode_packet;
use wirebench_protocol::response::{Column, ColumnDefinition, PrepareOk, PreparedStatement};
use wirebench_protocol::{Capabilities, ColumnFlags, ColumnType, ProtocolError};

use super::answer::{self, errors, CannedAnswers, ExecuteAnswer};
use super::handshake::{self, ServerGreeting, NONCE_LEN};
use super::sql_scan::{classify, Statement};
use wirebench_protocol::handshake::ClientFirstPacket;

/// The largest handshake response accepted: real ones are a few hundred
/// bytes; the limit keeps a stray HTTP request from being buffered.
const MAX_LOGIN_PACKET: usize = 64 * 1024;
/// The largest command accepted (MariaDB's max_allowed_packet ceiling is 1 GiB;
/// a load generator's commands are far below this).
pub const MAX_COMMAND_PACKET: usize = 64 * 1024 * 1024;
/// MariaDB's limit on parameter markers in one statement.
const MAX_PARAMS: usize = u16::MAX as usize;
const TOO_MANY_PLACEHOLDERS: (u16, &[u8; 5], &[u8]) =
    (1390, b"HY000", b"Prepared statement contains too many placeholders");
/// PREPARE_OK counts columns in 16 bits.
const TOO_MANY_COLUMNS: (u16, &[u8; 5], &[u8]) = (1117, b"HY000", b"Too many columns");

/// How one null server presents itself and what it answers: the version
/// it announces and its canned answers. Every connection of the server
/// shares it, read-only.
#[derive(Debug)]
pub struct ServerProfile {
    /// As the greeting sends it, e.g. `5.5.5-10.11.99-wirebench-null`.
    pub greeting_version: Vec<u8>,
    /// MYSQL_VERSION_ID form of the version, for counting placeholders.
    pub version_id: u32,
    pub canned: CannedAnswers,
    /// Answers to commands wait this long before they are written.
    pub answer_delay: std::time::Duration,
    /// A connection silent this long is closed (MariaDB's `wait_timeout`).
    pub wait_timeout: Option<std::time::Duration>,
    /// `--serial`: the one service slot every connection takes in turn.
    pub serial: Option<std::sync::Arc<SerialSlot>>,
}

/// `--serial`'s service slot: when the server is next free.
pub type SerialSlot = std::sync::Mutex<std::time::Instant>;

/// Where a connection is in the protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ConnPhase {
    /// The greeting is out; the handshake response is awaited.
    Login,
    Command,
    /// The connection is to be closed once the output is written.
    Closed,
}

/// The result of one [`NullSession::handle`] call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Handled {
    /// Bytes of the input used; the rest is an incomplete packet.
    pub consumed: usize,
    /// Commands answered (the login included).
    pub commands: u64,
    /// Write the output, then close the connection.
    pub close: bool,
}

/// The protocol state of one null-server connection: its phase, the
/// capabilities agreed at login, its default database and its prepared
/// statements.
#[derive(Debug)]
pub struct NullSession {
    profile: Arc<ServerProfile>,
    phase: ConnPhase,
    caps: Capabilities,
    /// The default database, named in the column definitions of table columns.
    schema: Vec<u8>,
    statements: HashMap<u32, ExecuteAnswer>,
    last_statement_id: u32,
    /// The client said goodbye with COM_QUIT (rather than just hanging up).
    quit: bool,
}

impl NullSession {
    /// A new connection: appends the greeting to `out`.
    pub fn new(
        profile: Arc<ServerProfile>,
        connection_id: u32,
        nonce: &[u8; NONCE_LEN],
        out: &mut Vec<u8>,
    ) -> NullSession {
        ServerGreeting {
            server_version: &profile.greeting_version,
            connection_id,
            nonce,
            capabilities: handshake::SERVER_CAPABILITIES,
            status: answer::STATUS,
        }
        .encode(out);
        NullSession {
            profile,
            phase: ConnPhase::Login,
            caps: Capabilities::empty(),
            schema: Vec::new(),
            statements: HashMap::new(),
            last_statement_id: 0,
            quit: false,
        }
    }

    /// The capabilities in force once logged in.
    #[cfg(test)]
    pub fn capabilities(&self) -> Capabilities {
        self.caps
    }

    /// Whether the client ended the connection with COM_QUIT.
    pub fn said_goodbye(&self) -> bool {
        self.quit
    }

    /// Logged in with the compressed protocol: from now on the connection's
    /// bytes go through [`super::server_compress::ServerCompression`].
    pub fn is_compressed(&self) -> bool {
        self.phase == ConnPhase::Command && self.caps.contains(Capabilities::COMPRESS)
    }

    /// Answers every complete packet at the start of `input`, appending the
    /// answers to `out`. Garbage gets an ERR and closes the connection.
    pub fn handle(&mut self, input: &[u8], out: &mut Vec<u8>) -> Handled {
        let mut consumed = 0;
        let mut commands = 0;
        while self.phase != ConnPhase::Closed {
            let (expected_seq, max) = match self.phase {
                ConnPhase::Login => (1, MAX_LOGIN_PACKET),
                _ => (0, MAX_COMMAND_PACKET),
            };
            let rest = input.get(consumed..).unwrap_or_default();
            match decode_packet(rest, expected_seq, max) {
                Ok(None) => break,
                Ok(Some(frame)) => {
                    consumed += frame.consumed;
                    commands += 1;
                    match self.phase {
                        ConnPhase::Login => self.login(&frame.payload, frame.next_seq, out),
                        _ => self.command(&frame.payload, frame.next_seq, out),
                    }
                }
                Err(error) => {
                    let reply = match error {
                        ProtocolError::PacketTooLarge { .. } => errors::PACKET_TOO_LARGE,
                        ProtocolError::OutOfSync { .. } => errors::OUT_OF_ORDER,
                        _ => errors::MALFORMED,
                    };
                    self.fail(reply, expected_seq.wrapping_add(1), out);
                    consumed = input.len();
                }
            }
        }
        Handled { consumed, commands, close: self.phase == ConnPhase::Closed }
    }

    fn fail(&mut self, error: (u16, &[u8; 5], &[u8]), seq: u8, out: &mut Vec<u8>) {
        answer::err(error, seq, out);
        self.phase = ConnPhase::Closed;
    }

    /// Any password is right; any plugin the client chose is fine.
    fn login(&mut self, payload: &[u8], seq: u8, out: &mut Vec<u8>) {
        match ClientFirstPacket::parse(payload) {
            Ok(ClientFirstPacket::Response(login)) => {
                self.caps = login.capabilities & handshake::SERVER_CAPABILITIES;
                self.schema = login.database.unwrap_or_default().to_vec();
                self.phase = ConnPhase::Command;
                answer::ok(0, self.caps, seq, out);
            }
            Ok(ClientFirstPacket::SslRequest { .. }) => self.fail(errors::SSL_UNSUPPORTED, seq, out),
            Ok(ClientFirstPacket::Pre41) => self.fail(errors::OLD_PROTOCOL, seq, out),
            // A variant added later: refused as a broken handshake.
            Ok(_) | Err(_) => self.fail(errors::HANDSHAKE, seq, out),
        }
    }

    fn command(&mut self, payload: &[u8], seq: u8, out: &mut Vec<u8>) {
        let Some((&command, body)) = payload.split_first() else {
            return self.fail(errors::MALFORMED, seq, out);
        };
        let caps = self.caps;
        match command {
            COM_STMT_EXECUTE => match executed_statement_id(body).map(|id| self.statements.get(&id)) {
                Some(Some(prepared)) => prepared.write(seq, out),
                Some(None) => {
                    answer::err(errors::UNKNOWN_STATEMENT, seq, out);
                }
                None => self.fail(errors::MALFORMED, seq, out),
            },
            COM_QUERY => {
                match classify(body) {
                    Statement::Select(select) => self.profile.canned.text_result(&select, &self.schema, caps, seq, out),
                    Statement::Show => answer::show_result(caps, seq, out),
                    Statement::Write => answer::ok(1, caps, seq, out),
                    Statement::Other => answer::ok(0, caps, seq, out),
                };
            }
            COM_STMT_PREPARE => self.prepare(body, seq, out),
            COM_STMT_CLOSE => match executed_statement_id(body) {
                Some(id) => {
                    self.statements.remove(&id);
                }
                None => self.fail(errors::MALFORMED, seq, out),
            },
            COM_STMT_RESET | COM_PING => {
                answer::ok(0, caps, seq, out);
            }
            // No answer, as from a real server; an error would be reported at execute.
            COM_STMT_SEND_LONG_DATA => {}
            COM_INIT_DB => {
                self.schema.clear();
                self.schema.extend_from_slice(body);
                answer::ok(0, caps, seq, out);
            }
            COM_RESET_CONNECTION => {
                self.statements.clear();
                answer::ok(0, caps, seq, out);
            }
            COM_QUIT => {
                self.quit = true;
                self.phase = ConnPhase::Closed;
            }
            _ => {
                answer::err(errors::UNKNOWN_COMMAND, seq, out);
            }
        }
    }

    /// PREPARE_OK with a fresh statement id, one parameter definition per
    /// marker and the columns the statement's answer will have.
    fn prepare(&mut self, sql: &[u8], seq: u8, out: &mut Vec<u8>) {
        let num_params = count_placeholders(sql, self.profile.version_id);
        if num_params > MAX_PARAMS {
            answer::err(TOO_MANY_PLACEHOLDERS, seq, out);
            return;
        }
        let caps = self.caps;
        let canned = &self.profile.canned;
        let mut packets = Vec::new();
        let (execute_answer, columns) = match classify(sql) {
            Statement::Select(select) => {
                let columns = canned.columns(&select, &self.schema);
                match canned.binary_result(&select, &columns, caps) {
                    Ok(execute_answer) => (execute_answer, columns),
                    Err(_) => return self.fail(errors::MALFORMED, seq, out),
                }
            }
            Statement::Show => {
                answer::show_result(caps, 1, &mut packets);
                (ExecuteAnswer::from_packets(packets), answer::show_columns())
            }
            Statement::Write => {
                answer::ok(1, caps, 1, &mut packets);
                (ExecuteAnswer::from_packets(packets), Vec::new())
            }
            Statement::Other => {
                answer::ok(0, caps, 1, &mut packets);
                (ExecuteAnswer::from_packets(packets), Vec::new())
            }
        };
        let Ok(num_columns) = u16::try_from(columns.len()) else {
            answer::err(TOO_MANY_COLUMNS, seq, out);
            return;
        };
        self.last_statement_id = self.last_statement_id.wrapping_add(1).max(1);
        let statement_id = self.last_statement_id;
        let response = PreparedStatement {
            ok: PrepareOk { statement_id, num_columns, num_params: num_params as u16, warnings: 0 },
            params: vec![param_definition(); num_params],
            columns,
        };
        let start = out.len();
        response.encode_response(caps, out);
        answer::renumber(out, start, seq);
        self.statements.insert(statement_id, execute_answer);
    }
}

fn executed_statement_id(body: &[u8]) -> Option<u32> {
    let bytes: [u8; 4] = body.get(..4)?.try_into().ok()?;
    Some(u32::from_le_bytes(bytes))
}

/// A parameter as MariaDB 10.11 describes it: `?`, type NULL, binary.
fn param_definition() -> Column {
    let mut param = ColumnDefinition::new(b"?", ColumnType::Null);
    param.org_name = (&b""[..]).into();
    param.flags = ColumnFlags::BINARY;
    param.into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use wirebench_protocol::auth::rand_core::OsRng;
    use wirebench_protocol::command::{encode_execute, encode_prepare, encode_query, encode_stmt_close, Param};
    use wirebench_protocol::handshake::{ClientHandshake, HandshakeConfig, HandshakeStep, TlsMode};
    use wirebench_protocol::response::{PrepareOutcome, PrepareResponse, ResponseReader, RowFormat};

    fn profile() -> Arc<ServerProfile> {
        Arc::new(ServerProfile {
            greeting_version: b"5.5.5-10.11.99-wirebench-null".to_vec(),
            version_id: 101199,
            canned: CannedAnswers {
                version: b"10.11.99-wirebench-null".to_vec(),
                version_comment: b"null".to_vec(),
                rows_per_select: 1,
            },
            answer_delay: std::time::Duration::ZERO,
            wait_timeout: None,
            serial: None,
        })
    }

    /// A session logged in by the wirebench client state machine.
    fn logged_in(deprecate_eof: bool) -> (NullSession, Capabilities) {
        let mut out = Vec::new();
        let mut session = NullSession::new(profile(), 1, b"01234567890123456789", &mut out);
        let mut config = HandshakeConfig::new("u", b"any password".to_vec());
        config.database = Some("sbtest".into());
        config.tls = TlsMode::Disabled;
        config.deprecate_eof = deprecate_eof;
        let mut client = ClientHandshake::new(config);
        let mut to_server = Vec::new();
        let (used, step) = client.advance(&out, &mut to_server, &mut OsRng).unwrap();
        assert_eq!((used, matches!(step, HandshakeStep::NeedMore)), (out.len(), true));
        out.clear();
        let handled = session.handle(&to_server, &mut out);
        assert_eq!(handled, Handled { consumed: to_server.len(), commands: 1, close: false });
        let mut ignored = Vec::new();
        let (used, step) = client.advance(&out, &mut ignored, &mut OsRng).unwrap();
        assert_eq!(used, out.len());
        let HandshakeStep::Done(done) = step else { panic!("login did not finish: {step:?}") };
        assert_eq!(done.capabilities, session.capabilities());
        let caps = session.capabilities();
        (session, caps)
    }

    /// Sends `request`, returns the answer after checking it is complete.
    fn ask(session: &mut NullSession, request: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let handled = session.handle(request, &mut out);
        assert_eq!(handled.consumed, request.len());
        assert!(!handled.close);
        out
    }

    fn outcome(bytes: &[u8], caps: Capabilities, format: RowFormat) -> wirebench_protocol::response::Outcome {
        let progress = ResponseReader::new(caps, format).advance(bytes).unwrap();
        assert_eq!(progress.consumed, bytes.len(), "exactly one response");
        progress.done.expect("complete")
    }

    #[test]
    fn login_honours_deprecate_eof_choice() {
        let (_, caps) = logged_in(true);
        assert!(caps.contains(Capabilities::DEPRECATE_EOF));
        let (_, caps) = logged_in(false);
        assert!(!caps.contains(Capabilities::DEPRECATE_EOF));
    }

    #[test]
    fn queries_get_their_answers() {
        for deof in [true, false] {
            let (mut session, caps) = logged_in(deof);
            let mut req = Vec::new();
            encode_query(&mut req, b"SELECT c FROM sbtest1 WHERE id=1");
            let o = outcome(&ask(&mut session, &req), caps, RowFormat::Text);
            assert_eq!((o.result_sets, o.rows), (1, 1));
            for (sql, affected) in
                [("UPDATE sbtest1 SET k=k+1 WHERE id=1", 1), ("BEGIN", 0), ("INSERT INTO t VALUES (1)", 1)]
            {
                req.clear();
                encode_query(&mut req, sql.as_bytes());
                let o = outcome(&ask(&mut session, &req), caps, RowFormat::Text);
                assert_eq!((o.result_sets, o.affected_rows), (0, affected), "{sql}");
            }
        }
    }

    #[test]
    fn prepare_matches_mariadb_and_execute_answers_from_cache() {
        let capture = include_bytes!("../../protocol/src/response/testdata/prepare_point_select_eof.bin");
        let (mut session, caps) = logged_in(false);
        let mut req = Vec::new();
        encode_prepare(&mut req, b"SELECT c FROM sbtest1 WHERE id=?");
        let answer = ask(&mut session, &req);
        assert_eq!(&answer[..], &capture[..]);

        let (mut session, caps_deof) = logged_in(true);
        let answer = ask(&mut session, &req);
        let mut decoder = PrepareResponse::new(caps_deof);
        let mut at = 0;
        let mut seq = 1;
        let mut prepared = None;
        while at < answer.len() {
            let frame = decode_packet(&answer[at..], seq, 1 << 20).unwrap().unwrap();
            seq = frame.next_seq;
            at += frame.consumed;
            prepared = decoder.feed(&frame.payload).unwrap();
        }
        let Some(PrepareOutcome::Prepared(stmt)) = prepared else { panic!("not prepared") };
        assert_eq!((stmt.ok.num_params, stmt.columns.len()), (1, 1));

        req.clear();
        encode_execute(&mut req, stmt.statement_id(), &[Param::I32(5)]);
        let pipelined = [req.clone(), req.clone(), req.clone()].concat();
        let answers = ask(&mut session, &pipelined);
        let one = &answers[..answers.len() / 3];
        assert_eq!(one, include_bytes!("../../protocol/src/response/testdata/exec_point_select_deof.bin"));
        assert_eq!(answers, [one, one, one].concat());
        let o = outcome(one, caps_deof, RowFormat::Binary);
        assert_eq!(o.rows, 1);
        let _ = caps;
    }

    #[test]
    fn statement_ids_are_per_connection_and_close_forgets() {
        let (mut session, caps) = logged_in(true);
        let mut req = Vec::new();
        encode_prepare(&mut req, b"UPDATE sbtest1 SET k=k+1 WHERE id=?");
        let first = ask(&mut session, &req);
        let second = ask(&mut session, &req);
        assert_eq!(&first[5..9], &1u32.to_le_bytes());
        assert_eq!(&second[5..9], &2u32.to_le_bytes());
        req.clear();
        encode_execute(&mut req, 2, &[Param::I32(1)]);
        let o = outcome(&ask(&mut session, &req), caps, RowFormat::Binary);
        assert_eq!(o.affected_rows, 1);
        let mut close = Vec::new();
        encode_stmt_close(&mut close, 2);
        assert!(ask(&mut session, &close).is_empty());
        let o = outcome(&ask(&mut session, &req), caps, RowFormat::Binary);
        assert_eq!(o.error.map(|e| e.code), Some(1243));
    }

    #[test]
    fn ping_init_db_unknown_and_quit() {
        let (mut session, caps) = logged_in(true);
        let o = outcome(&ask(&mut session, &[1, 0, 0, 0, COM_PING]), caps, RowFormat::Text);
        assert_eq!(o.error, None);
        let o = outcome(&ask(&mut session, &[3, 0, 0, 0, COM_INIT_DB, b'd', b'b']), caps, RowFormat::Text);
        assert_eq!(o.error, None);
        let o = outcome(&ask(&mut session, &[1, 0, 0, 0, 0x42]), caps, RowFormat::Text);
        assert_eq!(o.error.map(|e| e.code), Some(1047));
        assert!(!session.said_goodbye());
        let mut out = Vec::new();
        let handled = session.handle(&[1, 0, 0, 0, COM_QUIT], &mut out);
        assert!(handled.close && out.is_empty() && session.said_goodbye());
    }

    #[test]
    fn any_plugin_and_password_are_accepted() {
        let mut out = Vec::new();
        let mut session = NullSession::new(profile(), 9, b"01234567890123456789", &mut out);
        let caps = Capabilities::PROTOCOL_41
            | Capabilities::SECURE_CONNECTION
            | Capabilities::PLUGIN_AUTH
            | Capabilities::PLUGIN_AUTH_LENENC_CLIENT_DATA;
        let response = wirebench_protocol::handshake::HandshakeResponse41 {
            capabilities: caps,
            max_packet_size: 1 << 24,
            charset: 45,
            user: b"root",
            auth_response: &[7; 32],
            database: None,
            auth_plugin_name: b"caching_sha2_password",
            connect_attrs: &[],
        };
        let mut login = Vec::new();
        response.encode(&mut login, 1).unwrap();
        out.clear();
        let handled = session.handle(&login, &mut out);
        assert!(!handled.close);
        assert_eq!((out[3], out[4]), (2, 0x00), "OK with sequence id 2");
        assert_eq!(session.capabilities(), caps);
        let o = outcome(&ask(&mut session, &[5, 0, 0, 0, COM_STMT_RESET, 1, 0, 0, 0]), caps, RowFormat::Text);
        assert_eq!(o.error, None);
    }

    #[test]
    fn ssl_requests_are_refused() {
        let mut out = Vec::new();
        let mut session = NullSession::new(profile(), 9, b"01234567890123456789", &mut out);
        let mut ssl = vec![32, 0, 0, 1];
        ssl.extend_from_slice(&(Capabilities::PROTOCOL_41 | Capabilities::SSL).low().to_le_bytes());
        ssl.extend_from_slice(&[0, 0, 0, 1, 45]);
        ssl.extend_from_slice(&[0; 23]);
        out.clear();
        let handled = session.handle(&ssl, &mut out);
        assert!(handled.close);
        assert_eq!((out[3], out[4]), (2, 0xFF));
    }

    #[test]
    fn statements_too_wide_for_prepare_ok_are_refused() {
        let (mut session, caps) = logged_in(true);
        let mut req = Vec::new();
        let many = vec!["1"; 70_000].join(",");
        encode_prepare(&mut req, format!("SELECT {many} FROM t").as_bytes());
        let o = outcome(&ask(&mut session, &req), caps, RowFormat::Text);
        assert_eq!(o.error.map(|e| e.code), Some(1117));
        req.clear();
        let markers = vec!["?"; 70_000].join(",");
        encode_prepare(&mut req, format!("INSERT INTO t VALUES ({markers})").as_bytes());
        let o = outcome(&ask(&mut session, &req), caps, RowFormat::Text);
        assert_eq!(o.error.map(|e| e.code), Some(1390));
    }

    #[test]
    fn partial_packets_wait_for_more() {
        let (mut session, _) = logged_in(true);
        let mut req = Vec::new();
        encode_query(&mut req, b"SELECT 1");
        encode_query(&mut req, b"SELECT 2");
        let mut out = Vec::new();
        let handled = session.handle(&req[..req.len() - 3], &mut out);
        assert_eq!(handled.consumed, req.len() / 2);
        assert_eq!(handled.commands, 1);
        assert!(!out.is_empty());
    }

    #[test]
    fn garbage_gets_an_error_and_a_close() {
        let (mut session, _) = logged_in(true);
        let mut out = Vec::new();
        let handled = session.handle(b"\x05\x00\x00\x07hello", &mut out);
        assert!(handled.close);
        assert_eq!(out[4], 0xFF);
        assert_eq!(u16::from_le_bytes([out[5], out[6]]), 1156);

        let mut out = Vec::new();
        let mut session = NullSession::new(profile(), 2, b"01234567890123456789", &mut out);
        out.clear();
        let handled = session.handle(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", &mut out);
        assert!(handled.close);
        assert_eq!(out[4], 0xFF);

        for len in 0..64usize {
            let mut out = Vec::new();
            let mut session = NullSession::new(profile(), 3, b"01234567890123456789", &mut out);
            let mut bytes = vec![(len as u8).wrapping_mul(7), 0, 0, 1];
            bytes.extend((0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(len as u8)));
            let _ = session.handle(&bytes, &mut out);
        }
    }

    #[test]
    fn empty_command_and_short_execute_are_malformed() {
        let (mut session, _) = logged_in(true);
        let mut out = Vec::new();
        assert!(session.handle(&[0, 0, 0, 0], &mut out).close);
        let (mut session, _) = logged_in(true);
        let mut out = Vec::new();
        assert!(session.handle(&[2, 0, 0, 0, COM_STMT_EXECUTE, 1], &mut out).close);
        assert_eq!(u16::from_le_bytes([out[5], out[6]]), 1835);
    }
}
