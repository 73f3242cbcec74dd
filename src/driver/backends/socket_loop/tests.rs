//! The socket loop against scripted servers: each test plays the server's
//! side of a transcript over a unix socket and checks what the loop did.

use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use wirebench_protocol::buf::WriteExt;
use wirebench_protocol::framing::encode_packet;
use wirebench_protocol::response::{resultset, text_row, ColumnDefinition, OkPacket};
use wirebench_protocol::{Capabilities, ColumnType, StatusFlags};

use super::{run_socket_loop, run_socket_replay_loop};
use crate::client::{ConnectOptions, Endpoint};
use crate::driver::connections::recv_buffer::RECV_BUFFER;
use crate::driver::event_loop::replay_conns::ReplayConns;
use crate::driver::replay::feed::{feed_channel, CommandItem, FeedItem, OpenItem};
use crate::driver::replay::replayed_conn::ReplaySchedule;
use crate::driver::replay::ReplaySettings;
use crate::driver::testing::SelectOne;
use crate::driver::{
    Clock, ConnPlan, DriverError, EventPipeline, IgnoreErrors, LoopContext, Lost, Redial, RunControl, StdSocket,
};
use crate::rand::{RandConfig, RandParams, Rng};
use crate::stats::{Collector, Counters, StatsBoard};
use crate::transport::Transport;
use crate::workload::{CommandSink, Script, Step, WorkloadError};

const CAPS: Capabilities =
    Capabilities(Capabilities::PROTOCOL_41.0 | Capabilities::DEPRECATE_EOF.0 | Capabilities::SECURE_CONNECTION.0);
const COM_QUIT: u8 = 0x01;
const COM_QUERY: u8 = 0x03;

/// How the scripted server answers each COM_QUERY.
#[derive(Clone, Copy)]
enum ScriptedAnswer {
    /// An OK packet, written one byte at a time.
    Trickle,
    /// A result set whose one row is larger than the receive buffer.
    Big,
    /// OK packets, then the connection is closed after this many.
    CloseAfter(usize),
    /// Never: the query is read and the server stays silent.
    Never,
}

/// The server's side of one connection: the first byte of every command
/// it read, in order, until the client hung up (or, for
/// [`ScriptedAnswer::CloseAfter`], until it closed). A second command arriving
/// before the first's answer fails the test: the loop never pipelines.
fn serve_commands(mut stream: UnixStream, reply: ScriptedAnswer) -> Vec<u8> {
    let mut commands = Vec::new();
    let mut answered = 0;
    while let Some(command) = read_command(&mut stream) {
        commands.push(command[0]);
        if command[0] == COM_QUIT {
            continue;
        }
        stream.set_nonblocking(true).unwrap();
        let pipelined = stream.read(&mut [0u8; 1]).is_ok_and(|n| n > 0);
        stream.set_nonblocking(false).unwrap();
        assert!(!pipelined, "a second command came before the answer");
        let mut out = Vec::new();
        match reply {
            ScriptedAnswer::Never => {
                // Held until the client hangs up.
                while read_command(&mut stream).is_some() {}
                return commands;
            }
            ScriptedAnswer::CloseAfter(n) if answered == n => return commands,
            ScriptedAnswer::Trickle | ScriptedAnswer::CloseAfter(_) => {
                OkPacket::default().encode(0, CAPS, 1, &mut out);
            }
            ScriptedAnswer::Big => {
                let col = ColumnDefinition::new(b"c", ColumnType::VarString);
                let seq = resultset::encode_metadata(&[col], true, StatusFlags::AUTOCOMMIT, CAPS, 1, &mut out);
                let value = vec![b'x'; 3 * RECV_BUFFER];
                let seq = text_row::encode_text_row([Some(&value[..])], seq, &mut out);
                resultset::encode_result_end(StatusFlags::AUTOCOMMIT, 0, CAPS, seq, &mut out);
            }
        }
        let written = match reply {
            ScriptedAnswer::Trickle => out.iter().try_for_each(|b| stream.write_all(std::slice::from_ref(b))),
            _ => stream.write_all(&out),
        };
        if written.is_err() {
            break;
        }
        answered += 1;
    }
    commands
}

/// The next packet's payload, or `None` once the client hung up.
fn read_command(stream: &mut UnixStream) -> Option<Vec<u8>> {
    let mut header = [0u8; 4];
    stream.read_exact(&mut header).ok()?;
    let len = usize::from(header[0]) | usize::from(header[1]) << 8 | usize::from(header[2]) << 16;
    let mut body = vec![0; len];
    stream.read_exact(&mut body).ok()?;
    Some(body)
}

/// Plays a login on `stream` (a greeting, any credentials, OK), then
/// serves it as [`serve_commands`] does.
fn log_in_and_serve(mut stream: UnixStream, reply: ScriptedAnswer) -> Vec<u8> {
    let mut out = Vec::new();
    encode_packet(&mut out, 0, &scripted_greeting());
    stream.write_all(&out).unwrap();
    read_command(&mut stream).expect("a login");
    out.clear();
    OkPacket::default().encode(0, CAPS, 2, &mut out);
    stream.write_all(&out).unwrap();
    serve_commands(stream, reply)
}

/// A HandshakeV10 payload, field by field from the protocol's
/// documentation: MariaDB's layout, mysql_native_password.
fn scripted_greeting() -> Vec<u8> {
    let caps = Capabilities(CAPS.0 | Capabilities::PLUGIN_AUTH.0);
    let mut p = vec![10];
    p.put_null_terminated(b"5.5.5-10.11.99-scripted");
    p.put_u32(2);
    p.put_bytes(b"01234567");
    p.put_u8(0);
    p.put_u16(caps.low() as u16);
    p.put_u8(45);
    p.put_u16(StatusFlags::AUTOCOMMIT.0);
    p.put_u16((caps.low() >> 16) as u16);
    p.put_u8(21);
    p.put_zeros(6);
    p.put_u32(caps.mariadb_ext());
    p.put_bytes(b"89abcdefghij");
    p.put_u8(0);
    p.put_null_terminated(b"mysql_native_password");
    p
}

/// A loop's context for a test: one connection, `events` events in all.
fn test_context(events: Option<u64>) -> LoopContext {
    LoopContext {
        board: StatsBoard::new(&[1]),
        control: RunControl::new(events, 1),
        clock: Clock::start(),
        deadline_ns: None,
        ignore: IgnoreErrors::List(vec![]),
        finished: Default::default(),
        usage: Default::default(),
        idle: None,
    }
}

/// A connection over a socket pair, opened again (when lost and the error
/// is ignored) at `redial_to` with `options`' timeouts; the server's end.
fn socket_pair_plan(options: ConnectOptions) -> (ConnPlan, UnixStream) {
    let (client, server) = UnixStream::pair().unwrap();
    let rng = Rng::for_thread(1, 0, RandParams::new(&RandConfig::default()).unwrap());
    let plan = ConnPlan {
        endpoint: options.endpoint.clone(),
        socket: StdSocket::Unix(client),
        leftover: bytes::BytesMut::new(),
        pipeline: EventPipeline::new(0, Box::new(SelectOne), rng, Vec::new(), CAPS, 1),
        transport: Transport::plain(),
        redial: Redial { options, statements: Arc::new(Vec::new()), prepare: false, init: &[] },
    };
    (plan, server)
}

fn redial_options(path: impl Into<PathBuf>) -> ConnectOptions {
    ConnectOptions::new(Endpoint::unix(path), "u", "p")
}

/// Runs the loop over one connection answered as `reply`: its result,
/// the run's counters, and the commands the server read.
fn run_scripted(
    context: &LoopContext,
    options: ConnectOptions,
    reply: ScriptedAnswer,
) -> (Result<(), DriverError>, Counters, Vec<u8>) {
    let mut collector = Collector::new(context.board.clone());
    let (plan, server) = socket_pair_plan(options);
    let server = std::thread::spawn(move || serve_commands(server, reply));
    let result = run_socket_loop(0, vec![plan], Vec::new(), context, None);
    let commands = server.join().unwrap();
    collector.drain();
    (result, collector.totals().counters, commands)
}

/// Answers a byte at a time and rows larger than the receive buffer come
/// whole; each query goes out once the last one's answer is in, then a
/// COM_QUIT on the same socket, which then closes.
#[test]
fn answers_come_whole_one_exchange_at_a_time() {
    let context = test_context(Some(3));
    let (result, counters, commands) = run_scripted(&context, redial_options("unused"), ScriptedAnswer::Trickle);
    result.unwrap();
    assert_eq!((counters.events, counters.others), (3, 3));
    assert_eq!(commands, [COM_QUERY, COM_QUERY, COM_QUERY, COM_QUIT], "three COM_QUERY, then COM_QUIT");
    assert_eq!(context.usage.spinning(), Duration::ZERO, "a socket wait never spins");
    let context = test_context(Some(20));
    let (result, counters, _) = run_scripted(&context, redial_options("unused"), ScriptedAnswer::Big);
    result.unwrap();
    assert_eq!((counters.events, counters.reads), (20, 20));
}

/// A connection the server closes is lost, and the run fails with it
/// unless `--mysql-ignore-errors` lists the error.
#[test]
fn a_closed_connection_is_lost() {
    let context = test_context(Some(1_000));
    let (result, counters, _) = run_scripted(&context, redial_options("unused"), ScriptedAnswer::CloseAfter(5));
    assert!(matches!(result, Err(DriverError::Lost { lost: Lost::Closed, .. })), "{result:?}");
    assert_eq!(counters.events, 5, "{counters:?}");
    assert!(context.control.is_stopped(), "a failed loop stops the run");
}

/// With the error ignored, a lost connection is opened again at its
/// endpoint (a login there) and its events go on there: every event is
/// counted, and the reconnect once.
#[test]
fn a_lost_connection_is_opened_again() {
    let dir = std::env::temp_dir().join(format!("wirebench-socket-loop-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("reconnect.sock");
    let _ = std::fs::remove_file(&path);
    let listener = UnixListener::bind(&path).unwrap();
    let again: JoinHandle<Vec<u8>> = std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        log_in_and_serve(stream, ScriptedAnswer::Trickle)
    });
    let mut context = test_context(Some(12));
    context.ignore = IgnoreErrors::List(vec![Lost::Closed.code()]);
    let (result, counters, first) = run_scripted(&context, redial_options(&path), ScriptedAnswer::CloseAfter(5));
    let second = again.join().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    result.unwrap();
    assert_eq!((counters.events, counters.reconnects), (12, 1), "{counters:?}");
    assert_eq!(first.iter().filter(|&&c| c == COM_QUERY).count(), 6, "five answered, the sixth lost");
    assert_eq!(second.iter().filter(|&&c| c == COM_QUERY).count(), 7, "the rest, the lost one again");
    assert_eq!(second.last(), Some(&COM_QUIT));
}

/// An answer that never comes outlasts `--mysql-read-timeout`: the
/// connection is lost with that, and the run fails with it.
#[test]
fn a_read_timeout_loses_the_connection() {
    let context = test_context(Some(10));
    let mut options = redial_options("unused");
    options.read_timeout = Some(Duration::from_millis(50));
    let start = Instant::now();
    let (result, counters, _) = run_scripted(&context, options, ScriptedAnswer::Never);
    assert!(matches!(result, Err(DriverError::Lost { lost: Lost::ReadTimeout(_), .. })), "{result:?}");
    assert_eq!(counters.events, 0);
    assert!(start.elapsed() >= Duration::from_millis(50), "not before the timeout");
}

/// A query larger than the socket takes, to a server that reads nothing:
/// the send waits for room past `--mysql-write-timeout`, and the
/// connection is lost with that.
#[test]
fn a_write_timeout_loses_the_connection() {
    struct HugeQuery;
    impl Script for HugeQuery {
        fn next(&mut self, _: &mut Rng, sink: &mut CommandSink<'_>) -> Result<Step, WorkloadError> {
            sink.query_with(b"SELECT 'x...'", |out| {
                out.extend_from_slice(b"SELECT '");
                out.resize(out.len() + (4 << 20), b'x');
                out.push(b'\'');
            });
            Ok(Step::Last)
        }
        fn restart_event(&mut self) {}
    }
    let context = test_context(Some(1));
    let mut options = redial_options("unused");
    options.write_timeout = Some(Duration::from_millis(50));
    let (mut plan, deaf_server) = socket_pair_plan(options);
    let rng = Rng::for_thread(1, 0, RandParams::new(&RandConfig::default()).unwrap());
    plan.pipeline = EventPipeline::new(0, Box::new(HugeQuery), rng, Vec::new(), CAPS, 1);
    let start = Instant::now();
    let result = run_socket_loop(0, vec![plan], Vec::new(), &context, None);
    assert!(matches!(result, Err(DriverError::Lost { lost: Lost::WriteTimeout(_), .. })), "{result:?}");
    assert!(start.elapsed() >= Duration::from_millis(50), "not before the timeout");
    drop(deaf_server);
}

/// `--time` ends the run though the server never answers: once the run
/// is cut (as the run layer cuts it past the deadline), the connection
/// still waiting ends, counted as stalled, and the loop ends.
#[test]
fn the_runs_cut_ends_a_wait_for_a_server_that_never_answers() {
    let mut context = test_context(None);
    context.deadline_ns = Some(Duration::from_millis(50).as_nanos() as u64);
    context.control.cut_at(Duration::from_millis(100).as_nanos() as u64);
    let (result, counters, commands) = run_scripted(&context, redial_options("unused"), ScriptedAnswer::Never);
    result.unwrap();
    assert_eq!(counters.events, 0);
    assert_eq!(commands, [COM_QUERY], "the one query, no goodbye from a stalled connection");
    let stalls = context.control.stalls();
    assert_eq!(stalls.connections, 1);
    assert!(stalls.longest_wait_ns >= Duration::from_millis(50).as_nanos() as u64, "{stalls:?}");
}

/// `--rate`: the connection waits for each event's arrival between its
/// exchanges (the loop sleeping meanwhile), and the run takes about as
/// long as the arrivals say, not less.
#[test]
fn rate_arrivals_pace_the_exchanges() {
    use crate::driver::Arrival;
    let mut context = test_context(Some(20));
    context.control = RunControl::with_arrival(Some(20), &[1], 200, 1, Arrival::Fixed);
    let start = Instant::now();
    let (result, counters, commands) = run_scripted(&context, redial_options("unused"), ScriptedAnswer::Trickle);
    result.unwrap();
    assert_eq!(counters.events, 20);
    assert_eq!(commands.len(), 21, "twenty queries and the goodbye");
    // Twenty arrivals 5 ms apart: nineteen gaps at least.
    assert!(start.elapsed() >= Duration::from_millis(19 * 5), "{:?}", start.elapsed());
}

/// A script's states on one socket loop: each logs in (at the loop's
/// endpoint), makes its calls one at a time, each exchange to its end, and
/// says goodbye on its own connection as it ends.
#[test]
fn tasks_call_on_their_own_connections() {
    use crate::driver::{with_caller, CallAnswer, Expect, TaskBody};
    let dir = std::env::temp_dir().join(format!("wirebench-socket-loop-tasks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("tasks.sock");
    let _ = std::fs::remove_file(&path);
    let listener = UnixListener::bind(&path).unwrap();
    let server = std::thread::spawn(move || {
        let sessions: Vec<_> = (0..2)
            .map(|_| {
                let (stream, _) = listener.accept().unwrap();
                std::thread::spawn(move || log_in_and_serve(stream, ScriptedAnswer::Trickle))
            })
            .collect();
        sessions.into_iter().map(|s| s.join().unwrap()).collect::<Vec<_>>()
    });
    let task = |path: PathBuf| -> TaskBody {
        Box::new(move || {
            with_caller(|caller| {
                let opened = caller.open(redial_options(path), 1 << 20)?;
                for _ in 0..3 {
                    let answer = caller.call(opened.id, Expect::WalkText, &mut Vec::new(), |out| {
                        encode_packet(out, 0, b"\x03SELECT 1");
                    })?;
                    assert!(matches!(answer, CallAnswer::Walked(_)), "{answer:?}");
                }
                caller.close(opened.id);
                Ok(())
            })
            .expect("run as a task")
        })
    };
    let context = test_context(None);
    let result = run_socket_loop(0, Vec::new(), vec![task(path.clone()), task(path)], &context, None);
    let transcripts = server.join().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    result.unwrap();
    for commands in transcripts {
        assert_eq!(commands, [COM_QUERY, COM_QUERY, COM_QUERY, COM_QUIT]);
    }
}

/// A replay's loop over one feed: the settings it ran with (their tally
/// filled in), against logins to `options`.
fn run_replay(options: ConnectOptions, items: &[FeedItem<'_>]) -> Arc<ReplaySettings> {
    let schedule = ReplaySchedule { speed: None, start_ns: 0 };
    let settings = Arc::new(ReplaySettings {
        logins: vec![options],
        schedule,
        tally: Default::default(),
        backend: crate::driver::Backend::Tokio,
    });
    let (sender, feed) = feed_channel(4);
    let mut batch = Vec::new();
    for item in items {
        item.encode(&mut batch);
    }
    sender.send(batch, Instant::now() + Duration::from_secs(10)).unwrap();
    sender.end();
    let context = test_context(None);
    run_socket_replay_loop(0, ReplayConns::new(feed, settings.clone()), &context).unwrap();
    settings
}

fn replay_socket(name: &str) -> (PathBuf, UnixListener) {
    let dir = std::env::temp_dir().join(format!("wirebench-socket-loop-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    let listener = UnixListener::bind(&path).unwrap();
    (path, listener)
}

const OPEN: FeedItem<'static> =
    FeedItem::Open(OpenItem { conn: 7, offset_ns: 0, login: 0, flags: 0, charset: 0, capabilities: 0, database: b"" });

fn select(n: u64) -> FeedItem<'static> {
    FeedItem::Command(CommandItem { conn: 7, offset_ns: n, statement: 0, flags: 0, payload: b"\x03SELECT 1" })
}

/// A replayed connection is a connection of the loop: it logs in through
/// the client's login on the loop, sends its captured commands one at a
/// time as each answer comes (the answers trickle in a byte at a time),
/// and says goodbye with COM_QUIT when its capture closes it.
#[test]
fn a_replayed_connection_logs_in_sends_its_commands_and_quits() {
    let (path, listener) = replay_socket("replayed.sock");
    let server = std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        log_in_and_serve(stream, ScriptedAnswer::Trickle)
    });
    let close = FeedItem::Close { conn: 7, offset_ns: 3 };
    let settings = run_replay(redial_options(&path), &[OPEN, select(1), select(2), close]);
    assert_eq!(server.join().unwrap(), [COM_QUERY, COM_QUERY, COM_QUIT]);
    let tally = settings.tally.lock().unwrap();
    assert_eq!((tally.opened, tally.lost, tally.refused.len()), (1, 0, 0));
    assert_eq!(tally.statements.iter().map(|s| s.count).sum::<u64>(), 2);
}

/// A server that takes the connection and never greets it: the login is
/// refused at the connect timeout, counted with why (not waited on until
/// the run's end), and what the connection held is not replayed.
#[test]
fn a_replayed_login_the_server_never_answers_is_refused_at_its_timeout() {
    let (path, listener) = replay_socket("silent.sock");
    let server = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        // Silent until the client hangs up.
        let _ = stream.read(&mut [0u8; 1]);
    });
    let mut options = redial_options(&path);
    options.connect_timeout = Duration::from_millis(200);
    let settings = run_replay(options, &[OPEN, select(1)]);
    server.join().unwrap();
    let tally = settings.tally.lock().unwrap();
    assert_eq!((tally.opened, tally.refused.len()), (0, 1));
    let error = &tally.refused[0].error;
    assert!(error.contains("connecting and logging in"), "{error}");
    assert_eq!(tally.skipped.iter().sum::<u64>(), 1, "its command is counted as not replayed");
}
