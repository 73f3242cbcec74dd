//! Servers with a planted bug, for the fuzzer's tests: small tokio servers
//! that speak enough of the protocol (a greeting, any login, OK for
//! queries, prepare and execute, send-long-data) to be fuzzed, and fail on
//! one specific malformed packet each:
//!
//! - `Bug::UnknownStatement`: COM_STMT_EXECUTE of a statement id it never
//!   gave out crashes it;
//! - `Bug::TruncatedValue`: COM_STMT_EXECUTE whose parameter values end
//!   before the last one does crashes it;
//! - `Bug::ConnectAttrs`: a login whose connection-attribute block is
//!   malformed (a length past its end) crashes it;
//! - `Bug::LongDataHang`: COM_STMT_SEND_LONG_DATA for an unknown statement
//!   or parameter makes it hang (it stops answering everyone);
//! - `Bug::ResetHang`: COM_STMT_RESET of a prepared statement that was sent
//!   long data (COM_STMT_SEND_LONG_DATA for one of its parameters), in a
//!   session that is otherwise ordinary, is never answered, and from then
//!   on no command of any connection is (greetings and logins still are, so
//!   new sessions get as far as their first command): the reset waits for
//!   a lock the long data holds;
//! - `Bug::DatabaseLoginHang`: a login that names a database
//!   (CONNECT_WITH_DB) is never answered; logins without one are, and so
//!   is everything else (another server library's bug);
//! - `Bug::InitDbHang`: its greeting does not offer CONNECT_WITH_DB, so a
//!   client selects the database with COM_INIT_DB after the login, and
//!   COM_INIT_DB is never answered (msql-srv's default `on_init`);
//! - `Bug::InternalError`: COM_QUERY or COM_STMT_PREPARE of a statement
//!   with `DISTINCT` gets ERR 1105 "TypeError: 'NoneType' object is not
//!   subscriptable" (it stays up); one with `ORDER BY` and no `DISTINCT`
//!   gets an ordinary syntax error whose text says "internal error"
//!   (ERR 1064: never a finding);
//! - `Bug::RefuseLogins`: every login gets ERR 1045 (a server we have no
//!   account on); a login naming another plugin than
//!   mysql_native_password is first switched to it (AuthSwitchRequest),
//!   and its reply gets the ERR;
//! - `Bug::PreAuthCrash`: as `RefuseLogins`, but an auth reply that is
//!   neither empty nor 20 bytes (a scramble's length) crashes it;
//! - `Bug::RowsCrash`: COM_STMT_EXECUTE of a statement whose text names
//!   `sbtest1` crashes it while that table has a row. It keeps tables in
//!   memory (they outlive restarts, as on disk: `sbtest1` with ids 1 to 5
//!   and `sbtest2` with 1 to 3 unless started empty) and answers what the
//!   fuzzer's setup needs: SHOW FULL TABLES, SHOW CREATE TABLE, SELECT *
//!   ... LIMIT, and DROP TABLE IF EXISTS / CREATE TABLE / INSERT INTO with
//!   backquoted names (sysbench's own unquoted statements only get OK);
//! - `Bug::None`: a healthy server.
//!
//! A crash stops serving: the listener and every connection are dropped.
//! Everything else malformed gets ERR (and, for framing errors, a closed
//! connection), as a real server does. A restart (the test's
//! `--restart-cmd` touches a file a watcher polls) serves again on the same port.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use wirebench_protocol::buf::Reader;
use wirebench_protocol::command::count_placeholders;
use wirebench_protocol::constants::command::*;
use wirebench_protocol::framing::{encode_packet, Header, HEADER_LEN};
use wirebench_protocol::response::resultset::{encode_metadata, encode_result_end};
use wirebench_protocol::response::text_row::encode_text_row;
use wirebench_protocol::response::{Column, ColumnDefinition, ErrPacket, OkPacket, PrepareOk, PreparedStatement};
use wirebench_protocol::{Capabilities, ColumnType, StatusFlags};

use super::common::greeting;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bug {
    None,
    UnknownStatement,
    TruncatedValue,
    ConnectAttrs,
    LongDataHang,
    ResetHang,
    DatabaseLoginHang,
    InitDbHang,
    InternalError,
    RefuseLogins,
    PreAuthCrash,
    RowsCrash,
}

/// Tables in memory: name -> (CREATE statement, the rows' ids).
pub type Tables = Arc<Mutex<std::collections::BTreeMap<String, (String, Vec<String>)>>>;

/// A text result set: its column names and rows.
type TextResult = (Vec<&'static [u8]>, Vec<Vec<String>>);

fn create_statement(name: &str) -> String {
    format!("CREATE TABLE `{name}` (\n  `id` int(11) NOT NULL,\n  PRIMARY KEY (`id`)\n) ENGINE=InnoDB")
}

/// What the server does after a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Serve,
    Close,
    Crash,
    Hang,
    /// This command is never answered, nor any command after it.
    HangCommands,
    /// This connection is never answered again (the others are).
    Silent,
}

fn caps() -> Capabilities {
    Capabilities::PROTOCOL_41
        | Capabilities::SECURE_CONNECTION
        | Capabilities::PLUGIN_AUTH
        | Capabilities::PLUGIN_AUTH_LENENC_CLIENT_DATA
        | Capabilities::CONNECT_WITH_DB
        | Capabilities::CONNECT_ATTRS
        | Capabilities::TRANSACTIONS
        | Capabilities::MULTI_RESULTS
        | Capabilities::MULTI_STATEMENTS
        | Capabilities::PS_MULTI_RESULTS
        | Capabilities::DEPRECATE_EOF
}

/// One running instance; a restart replaces it.
struct Instance {
    /// true: crashed (stop everything); the receivers end their tasks.
    stop: watch::Sender<bool>,
}

/// A planted-bug server on a fixed port, restartable.
pub struct PlantedServer {
    pub port: u16,
    pub bug: Bug,
    instance: Mutex<Option<Instance>>,
    /// Set when the bug fired: what fired it.
    pub fired: Arc<Mutex<Vec<&'static str>>>,
    /// Its tables (for `Bug::RowsCrash`).
    pub tables: Tables,
}

impl PlantedServer {
    /// Starts on a free port.
    pub async fn start(bug: Bug) -> Arc<PlantedServer> {
        let server = PlantedServer::start_empty(bug).await;
        if bug == Bug::RowsCrash {
            let mut tables = server.tables.lock().unwrap();
            for (name, rows) in [("sbtest1", 5), ("sbtest2", 3)] {
                let ids = (1..=rows).map(|i: u32| i.to_string()).collect();
                tables.insert(name.to_owned(), (create_statement(name), ids));
            }
        }
        server
    }

    /// Starts on a free port with no tables.
    pub async fn start_empty(bug: Bug) -> Arc<PlantedServer> {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = Arc::new(PlantedServer {
            port,
            bug,
            instance: Mutex::new(None),
            fired: Arc::default(),
            tables: Arc::default(),
        });
        server.serve(listener);
        server
    }

    fn serve(&self, listener: TcpListener) {
        let (stop, stopped) = watch::channel(false);
        let bug = self.bug;
        let fired = self.fired.clone();
        let hung = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let commands_hung = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let tables = self.tables.clone();
        let ctl = Control { stop: stop.clone(), stopped, fired, hung, commands_hung, tables };
        tokio::spawn(accept_loop(listener, bug, ctl));
        *self.instance.lock().unwrap() = Some(Instance { stop });
    }

    /// Stops the current instance (if any) and serves afresh on the same port.
    pub async fn restart(&self) {
        self.restart_after(Duration::ZERO).await;
    }

    /// Stops the current instance (if any), stays down for `down`, then
    /// serves afresh on the same port: a server slow to restart.
    pub async fn restart_after(&self, down: Duration) {
        if let Some(instance) = self.instance.lock().unwrap().take() {
            let _ = instance.stop.send(true);
        }
        // sleep: the server stays down that long, the fault under test.
        tokio::time::sleep(down).await;
        for _ in 0..100 {
            match TcpListener::bind(("127.0.0.1", self.port)).await {
                Ok(listener) => return self.serve(listener),
                // sleep: polls for the port (the old listener is closing).
                Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        }
        panic!("cannot listen on port {} again", self.port);
    }

    /// Restarts whenever `file` appears (the fuzzer's `--restart-cmd` touches it).
    pub fn restart_on(self: &Arc<Self>, file: PathBuf) {
        self.slow_restart_on(file, Duration::ZERO);
    }

    /// Restarts whenever `file` appears, down for `down` each time (the
    /// `--restart-cmd` that touches it returns at once).
    pub fn slow_restart_on(self: &Arc<Self>, file: PathBuf, down: Duration) {
        let server = self.clone();
        tokio::spawn(async move {
            loop {
                // sleep: polls for the file the restart command touches.
                tokio::time::sleep(Duration::from_millis(20)).await;
                if std::fs::remove_file(&file).is_ok() {
                    server.restart_after(down).await;
                }
            }
        });
    }
}

async fn accept_loop(listener: TcpListener, bug: Bug, ctl: Control) {
    let mut stopped = ctl.stopped.clone();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stopped.changed() => return,
        };
        let Ok((stream, _)) = accepted else { continue };
        let conn = Conn {
            stream,
            buf: Vec::new(),
            bug,
            statements: HashMap::new(),
            next_id: 1,
            deprecate_eof: false,
            long_data: Vec::new(),
            texts: HashMap::new(),
            tables: ctl.tables.clone(),
        };
        tokio::spawn(conn.serve(ctl.clone()));
    }
}

/// What every connection of an instance shares.
#[derive(Clone)]
struct Control {
    stop: watch::Sender<bool>,
    stopped: watch::Receiver<bool>,
    fired: Arc<Mutex<Vec<&'static str>>>,
    /// Nothing is answered any more, not even a greeting.
    hung: Arc<std::sync::atomic::AtomicBool>,
    /// No command is answered any more.
    commands_hung: Arc<std::sync::atomic::AtomicBool>,
    tables: Tables,
}

struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
    bug: Bug,
    /// Statement id -> parameter count.
    statements: HashMap<u32, usize>,
    /// Statements that were sent long data.
    long_data: Vec<u32>,
    next_id: u32,
    deprecate_eof: bool,
    /// Statement id -> its text.
    texts: HashMap<u32, Vec<u8>>,
    tables: Tables,
}

impl Conn {
    async fn serve(mut self, ctl: Control) {
        let mut stopped = ctl.stopped.clone();
        let work = async {
            if ctl.hung.load(std::sync::atomic::Ordering::SeqCst) {
                return std::future::pending::<()>().await;
            }
            let offered = if self.bug == Bug::InitDbHang { caps() & !Capabilities::CONNECT_WITH_DB } else { caps() };
            self.send(0, &greeting("5.5.5-10.11.99-planted", offered, "mysql_native_password")).await;
            let mut login = true;
            loop {
                let Some((seq, payload)) = self.read_packet().await else { return };
                if !login && ctl.commands_hung.load(std::sync::atomic::Ordering::SeqCst) {
                    return std::future::pending::<()>().await;
                }
                let verdict = if login { self.login(seq, &payload).await } else { self.command(seq, &payload).await };
                login = false;
                match verdict {
                    Verdict::Serve => {}
                    Verdict::Close => return,
                    Verdict::Crash => {
                        ctl.fired.lock().unwrap().push("crash");
                        let _ = ctl.stop.send(true);
                        return;
                    }
                    Verdict::Hang => {
                        ctl.fired.lock().unwrap().push("hang");
                        ctl.hung.store(true, std::sync::atomic::Ordering::SeqCst);
                        return std::future::pending::<()>().await;
                    }
                    Verdict::HangCommands => {
                        ctl.fired.lock().unwrap().push("hang");
                        ctl.commands_hung.store(true, std::sync::atomic::Ordering::SeqCst);
                        return std::future::pending::<()>().await;
                    }
                    Verdict::Silent => {
                        ctl.fired.lock().unwrap().push("login hang");
                        return std::future::pending::<()>().await;
                    }
                }
                if ctl.hung.load(std::sync::atomic::Ordering::SeqCst) {
                    return std::future::pending::<()>().await;
                }
            }
        };
        tokio::select! {
            () = work => {}
            _ = stopped.changed() => {}
        }
    }

    async fn send(&mut self, seq: u8, payload: &[u8]) {
        let mut out = Vec::new();
        encode_packet(&mut out, seq, payload);
        let _ = self.stream.write_all(&out).await;
    }

    async fn ok(&mut self, seq: u8) {
        let mut out = Vec::new();
        let ok = OkPacket { status: StatusFlags::AUTOCOMMIT, ..OkPacket::default() };
        ok.encode(0, Capabilities::PROTOCOL_41, seq, &mut out);
        let _ = self.stream.write_all(&out).await;
    }

    async fn err(&mut self, seq: u8, code: u16, message: &str) {
        let mut out = Vec::new();
        ErrPacket { code, sql_state: Some(*b"HY000"), message: message.as_bytes() }.encode(seq, &mut out);
        let _ = self.stream.write_all(&out).await;
    }

    /// The next packet (one fragment is enough here), any sequence id.
    async fn read_packet(&mut self) -> Option<(u8, Vec<u8>)> {
        loop {
            if let Some(h) = Header::parse(&self.buf) {
                if self.buf.len() >= HEADER_LEN + h.len {
                    let payload = self.buf[HEADER_LEN..HEADER_LEN + h.len].to_vec();
                    self.buf.drain(..HEADER_LEN + h.len);
                    return Some((h.seq, payload));
                }
            }
            let mut chunk = [0u8; 65536];
            match self.stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return None,
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
            }
        }
    }

    async fn login(&mut self, seq: u8, payload: &[u8]) -> Verdict {
        if seq != 1 {
            self.err(seq.wrapping_add(1), 1156, "Got packets out of order").await;
            return Verdict::Close;
        }
        let refusing = matches!(self.bug, Bug::RefuseLogins | Bug::PreAuthCrash);
        match parse_login(payload) {
            Login::Ok { with_database: true, .. } if self.bug == Bug::DatabaseLoginHang => Verdict::Silent,
            Login::Ok { plugin, .. } if refusing => self.refuse(seq, &plugin).await,
            Login::Ok { deprecate_eof, .. } => {
                self.deprecate_eof = deprecate_eof;
                self.ok(seq.wrapping_add(1)).await;
                Verdict::Serve
            }
            Login::BadAttrs if self.bug == Bug::ConnectAttrs => Verdict::Crash,
            Login::BadAttrs | Login::Bad => {
                self.err(seq.wrapping_add(1), 1043, "Bad handshake").await;
                Verdict::Close
            }
        }
    }

    /// `Bug::RefuseLogins` and `Bug::PreAuthCrash`: ERR 1045, after an
    /// auth switch to mysql_native_password for a login naming another
    /// plugin.
    async fn refuse(&mut self, seq: u8, plugin: &[u8]) -> Verdict {
        let mut seq = seq.wrapping_add(1);
        if plugin != b"mysql_native_password" {
            let switch = [&[0xFE][..], b"mysql_native_password\0", &super::common::NONCE[..], &[0]].concat();
            self.send(seq, &switch).await;
            let Some((reply_seq, reply)) = self.read_packet().await else { return Verdict::Close };
            if self.bug == Bug::PreAuthCrash && !matches!(reply.len(), 0 | 20) {
                return Verdict::Crash;
            }
            seq = reply_seq.wrapping_add(1);
        }
        self.err(seq, 1045, "Access denied for user 'fuzz'@'localhost' (using password: YES)").await;
        Verdict::Close
    }

    async fn command(&mut self, seq: u8, payload: &[u8]) -> Verdict {
        if seq != 0 {
            self.err(seq.wrapping_add(1), 1156, "Got packets out of order").await;
            return Verdict::Close;
        }
        let Some((&command, body)) = payload.split_first() else {
            self.err(1, 1047, "Unknown command").await;
            return Verdict::Close;
        };
        match command {
            COM_QUIT => return Verdict::Close,
            COM_STMT_RESET if self.bug == Bug::ResetHang && self.has_long_data(body) => return Verdict::HangCommands,
            COM_INIT_DB if self.bug == Bug::InitDbHang => return Verdict::Silent,
            COM_QUERY | COM_STMT_PREPARE if self.bug == Bug::InternalError && self.says_internal(body).await => {}
            COM_QUERY if self.bug == Bug::RowsCrash => self.query(body).await,
            COM_PING | COM_QUERY | COM_INIT_DB | COM_RESET_CONNECTION | COM_STMT_RESET => self.ok(1).await,
            COM_STMT_PREPARE => self.prepare(body).await,
            COM_STMT_EXECUTE => return self.execute(body).await,
            COM_STMT_SEND_LONG_DATA => return self.long_data(body),
            COM_STMT_CLOSE => {
                if let Some(id) = body.get(..4) {
                    self.statements.remove(&u32::from_le_bytes(id.try_into().unwrap()));
                }
            }
            _ => self.err(1, 1047, "Unknown command").await,
        }
        Verdict::Serve
    }

    /// For `Bug::InternalError`: answers a statement with `DISTINCT` with
    /// an internal error, one with `ORDER BY` with an ordinary one; whether
    /// it answered.
    async fn says_internal(&mut self, sql: &[u8]) -> bool {
        let text = String::from_utf8_lossy(sql).to_ascii_uppercase();
        if text.contains("DISTINCT") {
            self.err(1, 1105, "TypeError: 'NoneType' object is not subscriptable").await;
        } else if text.contains("ORDER BY") {
            self.err(1, 1064, "You have an error in your SQL syntax (internal error near ORDER BY)").await;
        } else {
            return false;
        }
        true
    }

    /// Whether the statement `body` names was sent long data.
    fn has_long_data(&self, body: &[u8]) -> bool {
        body.get(..4).is_some_and(|id| self.long_data.contains(&u32::from_le_bytes(id.try_into().unwrap())))
    }

    async fn prepare(&mut self, sql: &[u8]) {
        let params = count_placeholders(sql, 101_100).min(64);
        let id = self.next_id;
        self.next_id += 1;
        self.statements.insert(id, params);
        self.texts.insert(id, sql.to_vec());
        let param = {
            let mut p = ColumnDefinition::new(b"?", ColumnType::Null);
            p.org_name = (&b""[..]).into();
            p.into_owned()
        };
        let stmt = PreparedStatement {
            ok: PrepareOk { statement_id: id, num_columns: 0, num_params: params as u16, warnings: 0 },
            params: vec![param; params],
            columns: Vec::<Column>::new(),
        };
        let caps = if self.deprecate_eof { Capabilities::DEPRECATE_EOF } else { Capabilities::PROTOCOL_41 };
        let mut out = Vec::new();
        stmt.encode_response(caps | Capabilities::PROTOCOL_41, &mut out);
        let _ = self.stream.write_all(&out).await;
    }

    async fn execute(&mut self, body: &[u8]) -> Verdict {
        let Some(id) = body.get(..4).map(|b| u32::from_le_bytes(b.try_into().unwrap())) else {
            self.err(1, 1210, "Incorrect arguments to mysqld_stmt_execute").await;
            return Verdict::Serve;
        };
        if self.bug == Bug::RowsCrash && self.names_a_full_sbtest1(id) {
            return Verdict::Crash;
        }
        let Some(&params) = self.statements.get(&id) else {
            if self.bug == Bug::UnknownStatement {
                return Verdict::Crash;
            }
            self.err(1, 1243, "Unknown prepared statement handler").await;
            return Verdict::Serve;
        };
        match check_values(body.get(4..).unwrap_or_default(), params) {
            Values::Fine => self.ok(1).await,
            Values::Truncated if self.bug == Bug::TruncatedValue => return Verdict::Crash,
            Values::Truncated | Values::Malformed => {
                self.err(1, 1210, "Incorrect arguments to mysqld_stmt_execute").await
            }
        }
        Verdict::Serve
    }

    /// Whether statement `id` names sbtest1 (a word of its text:
    /// `sbtest10` is another table) while that table has a row.
    fn names_a_full_sbtest1(&self, id: u32) -> bool {
        let names = self.texts.get(&id).is_some_and(|text| {
            text.split(|b| !(b.is_ascii_alphanumeric() || *b == b'_' || *b == b'$'))
                .any(|word| word.eq_ignore_ascii_case(b"sbtest1"))
        });
        names && self.tables.lock().unwrap().get("sbtest1").is_some_and(|(_, rows)| !rows.is_empty())
    }

    /// COM_QUERY for `Bug::RowsCrash`: what the fuzzer's setup sends, on
    /// the tables in memory; anything else gets OK.
    async fn query(&mut self, body: &[u8]) {
        let sql = String::from_utf8_lossy(body).into_owned();
        let name_after = |prefix: &str| {
            let rest = sql.strip_prefix(prefix)?.strip_prefix('`')?;
            Some(rest.split('`').next()?.to_owned())
        };
        let result: Option<TextResult> = {
            let mut tables = self.tables.lock().unwrap();
            if sql.starts_with("SHOW FULL TABLES") {
                let rows = tables.keys().map(|n| vec![n.clone(), "BASE TABLE".to_owned()]).collect();
                Some((vec![b"Tables_in_planted", b"Table_type"], rows))
            } else if let Some(name) = name_after("SHOW CREATE TABLE ") {
                let rows =
                    tables.get(&name).map(|(create, _)| vec![name.clone(), create.clone()]).into_iter().collect();
                Some((vec![b"Table", b"Create Table"], rows))
            } else if let Some(name) = name_after("SELECT * FROM ") {
                let rows = tables.get(&name).map(|(_, ids)| ids.iter().map(|id| vec![id.clone()]).collect());
                Some((vec![b"id"], rows.unwrap_or_default()))
            } else {
                if let Some(name) = name_after("DROP TABLE IF EXISTS ") {
                    tables.remove(&name);
                } else if let Some(name) = name_after("CREATE TABLE ") {
                    tables.insert(name.clone(), (sql.clone(), Vec::new()));
                } else if let Some(name) = name_after("INSERT INTO ") {
                    let values = sql.split_once(" VALUES ").map_or("", |(_, v)| v);
                    if let Some((_, rows)) = tables.get_mut(&name) {
                        for tuple in values.split("),(") {
                            rows.push(tuple.chars().filter(char::is_ascii_digit).collect());
                        }
                    }
                }
                None
            }
        };
        let Some((columns, rows)) = result else { return self.ok(1).await };
        let caps = if self.deprecate_eof { caps() } else { caps() & !Capabilities::DEPRECATE_EOF };
        let definitions: Vec<ColumnDefinition<'_>> =
            columns.iter().map(|name| ColumnDefinition::new(name, ColumnType::VarString)).collect();
        let mut out = Vec::new();
        let mut seq = encode_metadata(&definitions, true, StatusFlags::AUTOCOMMIT, caps, 1, &mut out);
        for row in &rows {
            seq = encode_text_row(row.iter().map(|v| Some(v.as_bytes())), seq, &mut out);
        }
        encode_result_end(StatusFlags::AUTOCOMMIT, 0, caps, seq, &mut out);
        let _ = self.stream.write_all(&out).await;
    }

    fn long_data(&mut self, body: &[u8]) -> Verdict {
        let (Some(id), Some(param)) = (body.get(..4), body.get(4..6)) else { return Verdict::Serve };
        let id = u32::from_le_bytes(id.try_into().unwrap());
        let param = usize::from(u16::from_le_bytes(param.try_into().unwrap()));
        let known = self.statements.get(&id).is_some_and(|&count| param < count);
        if !known && self.bug == Bug::LongDataHang {
            return Verdict::Hang;
        }
        if known {
            self.long_data.push(id);
        }
        Verdict::Serve
    }
}

enum Login {
    Ok { deprecate_eof: bool, with_database: bool, plugin: Vec<u8> },
    BadAttrs,
    Bad,
}

/// A HandshakeResponse41, as a server reads it; the attribute block is
/// checked field by field.
fn parse_login(payload: &[u8]) -> Login {
    let mut r = Reader::new(payload);
    let Ok(low) = r.u32("caps") else { return Login::Bad };
    let caps = Capabilities(u64::from(low));
    if r.skip(4 + 1 + 23, "prefix").is_err() || r.null_terminated("user").is_err() {
        return Login::Bad;
    }
    let auth = if caps.contains(Capabilities::PLUGIN_AUTH_LENENC_CLIENT_DATA) {
        r.lenenc_bytes("auth").map(drop)
    } else {
        r.u8("auth len").and_then(|n| r.skip(usize::from(n), "auth"))
    };
    if auth.is_err() {
        return Login::Bad;
    }
    if caps.contains(Capabilities::CONNECT_WITH_DB) && r.null_terminated("db").is_err() {
        return Login::Bad;
    }
    let plugin = match caps.contains(Capabilities::PLUGIN_AUTH) {
        true => match r.null_terminated("plugin") {
            Ok(plugin) => plugin.to_vec(),
            Err(_) => return Login::Bad,
        },
        false => b"mysql_native_password".to_vec(),
    };
    if caps.contains(Capabilities::CONNECT_ATTRS) && !attrs_are_well_formed(&mut r) {
        return Login::BadAttrs;
    }
    Login::Ok {
        deprecate_eof: caps.contains(Capabilities::DEPRECATE_EOF),
        with_database: caps.contains(Capabilities::CONNECT_WITH_DB),
        plugin,
    }
}

fn attrs_are_well_formed(r: &mut Reader<'_>) -> bool {
    let Ok(block) = r.lenenc_bytes("attrs") else { return false };
    let mut b = Reader::new(block);
    while !b.is_empty() {
        if b.lenenc_bytes("key").is_err() || b.lenenc_bytes("value").is_err() {
            return false;
        }
    }
    true
}

enum Values {
    Fine,
    /// The values ended before the last parameter's did.
    Truncated,
    /// The head (flags, bitmap, types) is short or makes no sense.
    Malformed,
}

/// COM_STMT_EXECUTE after the statement id, for `params` parameters.
fn check_values(rest: &[u8], params: usize) -> Values {
    let mut r = Reader::new(rest);
    if r.skip(5, "flags, iterations").is_err() {
        return Values::Malformed;
    }
    if params == 0 {
        return Values::Fine;
    }
    let (Ok(bitmap), Ok(bound)) = (r.take(params.div_ceil(8), "bitmap"), r.u8("bound")) else {
        return Values::Malformed;
    };
    if bound != 1 {
        return Values::Malformed;
    }
    let Ok(types) = r.take(2 * params, "types") else { return Values::Malformed };
    for i in 0..params {
        if bitmap[i / 8] & (1 << (i % 8)) != 0 {
            continue;
        }
        let read = match types[2 * i] {
            0x01 => r.skip(1, "v"),
            0x02 | 0x0D => r.skip(2, "v"),
            0x03 | 0x04 | 0x09 => r.skip(4, "v"),
            0x05 | 0x08 => r.skip(8, "v"),
            0x06 => Ok(()),
            0x07 | 0x0A | 0x0B | 0x0C => r.u8("len").and_then(|n| r.skip(usize::from(n), "v")),
            0x0F | 0x10 | 0xF5..=0xFE => r.lenenc_bytes("v").map(drop),
            _ => return Values::Malformed,
        };
        if read.is_err() {
            return Values::Truncated;
        }
    }
    Values::Fine
}
