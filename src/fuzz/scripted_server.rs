//! Servers that behave in one scripted way, for the fuzzer's own tests of
//! what the control connection and the login probe decide: a greeting, any
//! login, OK to every command, except for the one thing each script does.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use wirebench_protocol::buf::WriteExt;
use wirebench_protocol::framing::encode_packet;
use wirebench_protocol::response::resultset::{encode_column_count, encode_result_end};
use wirebench_protocol::response::text_row::encode_text_row;
use wirebench_protocol::response::{ColumnDefinition, EofPacket, OkPacket};
use wirebench_protocol::{Capabilities, ColumnType, StatusFlags};

use super::fuzz_options::Target;
use crate::client::Endpoint;

/// What the server does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerScript {
    /// Answers everything as it should.
    Healthy,
    /// Numbers its answers from its own counter (node-mysql2's server API
    /// does): the login's OK is 2, the first command's answer 3, and so on.
    ContinuingSequence,
    /// Resets the connection at the first command.
    ResetOnCommand,
    /// Never answers a command (logins still are).
    SilentOnCommand,
    /// Answers commands with a packet that fits no answer (0x07...).
    GarbledAnswer,
    /// Never answers a login that names a database (CONNECT_WITH_DB); a
    /// login without one is answered.
    LoginHangsWithDatabase,
    /// Answers COM_QUERY with a one-row result set, pausing after its
    /// column count ([`ANSWER_PAUSE`]) as a slow server would between
    /// packets; COM_PING with OK.
    PausedResultSet,
}

/// How long [`ServerScript::PausedResultSet`] pauses inside an answer.
pub const ANSWER_PAUSE: std::time::Duration = std::time::Duration::from_millis(300);

/// One server on a free port of 127.0.0.1, serving until dropped.
pub struct ScriptedServer {
    pub port: u16,
    /// Set once a connection ended in the scripted way.
    pub acted: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl ScriptedServer {
    pub async fn start(script: ServerScript) -> ScriptedServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let acted = Arc::new(AtomicBool::new(false));
        let flag = acted.clone();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve_script(stream, script, flag.clone()));
            }
        });
        ScriptedServer { port, acted, task }
    }

    /// The server as a fuzz target: user `u`, password `p`, database `db`.
    pub fn target(&self) -> Target {
        Target {
            endpoint: Endpoint::tcp("127.0.0.1", self.port),
            user: "u".into(),
            password: "p".into(),
            database: "db".into(),
            compression: false,
        }
    }
}

fn caps() -> Capabilities {
    Capabilities::LONG_PASSWORD
        | Capabilities::PROTOCOL_41
        | Capabilities::SECURE_CONNECTION
        | Capabilities::PLUGIN_AUTH
        | Capabilities::CONNECT_WITH_DB
        | Capabilities::TRANSACTIONS
}

fn greeting() -> Vec<u8> {
    let caps = caps();
    let mut p = vec![10];
    p.put_null_terminated(b"5.7.99-scripted");
    p.put_u32(7);
    p.put_bytes(b"abcdefgh");
    p.put_u8(0);
    p.put_u16(caps.low() as u16);
    p.put_u8(45);
    p.put_u16(0x0002);
    p.put_u16((caps.low() >> 16) as u16);
    p.put_u8(21);
    p.put_zeros(10);
    p.put_bytes(b"ijklmnopqrst");
    p.put_u8(0);
    p.put_null_terminated(b"mysql_native_password");
    p
}

async fn send(stream: &mut TcpStream, seq: u8, payload: &[u8]) {
    let mut out = Vec::new();
    encode_packet(&mut out, seq, payload);
    let _ = stream.write_all(&out).await;
}

async fn read_scripted_packet(stream: &mut TcpStream) -> Option<Vec<u8>> {
    let mut header = [0u8; 4];
    stream.read_exact(&mut header).await.ok()?;
    let len = usize::from(header[0]) | usize::from(header[1]) << 8 | usize::from(header[2]) << 16;
    let mut payload = vec![0; len];
    stream.read_exact(&mut payload).await.ok()?;
    Some(payload)
}

/// A result set of one column and one row (`1`), in two writes with
/// [`ANSWER_PAUSE`] between the column count and the rest.
async fn send_paused_result_set(stream: &mut TcpStream) {
    let caps = caps();
    let mut count = Vec::new();
    let seq = encode_column_count(1, true, caps, 1, &mut count);
    let mut rest = Vec::new();
    let seq = ColumnDefinition::new(b"1", ColumnType::LongLong).encode(caps, seq, &mut rest);
    let seq = EofPacket { warnings: 0, status: StatusFlags::AUTOCOMMIT }.encode(caps, seq, &mut rest);
    let seq = encode_text_row([Some(&b"1"[..])], seq, &mut rest);
    encode_result_end(StatusFlags::AUTOCOMMIT, 0, caps, seq, &mut rest);
    let _ = stream.write_all(&count).await;
    tokio::time::sleep(ANSWER_PAUSE).await;
    let _ = stream.write_all(&rest).await;
}

async fn serve_script(mut stream: TcpStream, script: ServerScript, acted: Arc<AtomicBool>) {
    let mut ok = Vec::new();
    OkPacket { status: StatusFlags::AUTOCOMMIT, ..OkPacket::default() }.encode_payload(
        0,
        Capabilities::PROTOCOL_41,
        &mut ok,
    );
    send(&mut stream, 0, &greeting()).await;
    let Some(login) = read_scripted_packet(&mut stream).await else { return };
    let with_db = login.first().is_some_and(|low| low & 0x08 != 0);
    if script == ServerScript::LoginHangsWithDatabase && with_db {
        acted.store(true, Ordering::SeqCst);
        return std::future::pending().await;
    }
    send(&mut stream, 2, &ok).await;
    let mut counter = 3u8;
    while let Some(command) = read_scripted_packet(&mut stream).await {
        if command.first() == Some(&0x01) {
            return;
        }
        match script {
            ServerScript::Healthy | ServerScript::LoginHangsWithDatabase => send(&mut stream, 1, &ok).await,
            ServerScript::ContinuingSequence => {
                acted.store(true, Ordering::SeqCst);
                send(&mut stream, counter, &ok).await;
                counter = counter.wrapping_add(1);
            }
            ServerScript::ResetOnCommand => {
                acted.store(true, Ordering::SeqCst);
                let _ = stream.set_zero_linger();
                return;
            }
            ServerScript::SilentOnCommand => {
                acted.store(true, Ordering::SeqCst);
                return std::future::pending().await;
            }
            ServerScript::GarbledAnswer => {
                acted.store(true, Ordering::SeqCst);
                send(&mut stream, 1, &[0x07, 1, 2, 3]).await;
            }
            ServerScript::PausedResultSet if command.first() == Some(&0x03) => {
                acted.store(true, Ordering::SeqCst);
                send_paused_result_set(&mut stream).await;
            }
            ServerScript::PausedResultSet => send(&mut stream, 1, &ok).await,
        }
    }
}
