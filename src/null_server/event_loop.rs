//! The null server's event loops: one thread per chosen core, pinned, each
//! with its own current-thread tokio runtime. Loop 0 also runs the
//! acceptor, which hands connections to the loops round-robin; after that
//! a connection never leaves its loop, and nothing is shared per query.

use std::io::{self, Write as _};
use std::os::unix::net::UnixStream as StdUnixStream;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream, UnixListener, UnixStream};
use tokio::sync::{mpsc, watch};

use super::delay::AnswerDelay;
use super::handshake::NONCE_LEN;
use super::null_session::SerialSlot;
use super::null_session::{NullSession, ServerProfile};
use super::server_compress::ServerCompression;

/// Read buffer kept per connection; grows for larger packets.
const READ_BUFFER: usize = 16 * 1024;
/// Room the read buffer must have before a read.
const MIN_READ_ROOM: usize = 4 * 1024;
/// A buffer that grew past this while serving a large packet is given back.
const KEEP_BUFFER: usize = 1024 * 1024;
/// Back-off after a failed accept (out of file descriptors, ...).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(10);

/// A connection handed from the acceptor to a loop.
#[derive(Debug)]
pub enum Accepted {
    Tcp(std::net::TcpStream),
    Unix(StdUnixStream),
}

/// Counters of one null-server event loop, written only by its thread.
#[derive(Debug, Default)]
#[repr(align(64))]
pub struct ServerLoopStats {
    pub connections: AtomicU64,
    pub commands: AtomicU64,
    /// Connections the client ended with COM_QUIT.
    pub quits: AtomicU64,
    /// Connections closed for their silence (`--wait-timeout`).
    pub timed_out: AtomicU64,
    /// Connections ended, for any reason: all of their bytes handled.
    pub closed: AtomicU64,
    /// The loop thread's Linux thread id, for its CPU time; 0 until known.
    pub tid: AtomicU32,
}

impl ServerLoopStats {
    /// Single writer: a load and a store, not a locked read-modify-write.
    fn add(counter: &AtomicU64, n: u64) {
        counter.store(counter.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
    }
}

/// The listeners, bound by the caller (so that errors and the chosen port
/// are known before any thread starts).
#[derive(Debug)]
pub struct Listeners {
    pub tcp: Option<std::net::TcpListener>,
    pub unix: Option<std::os::unix::net::UnixListener>,
}

/// One event loop of the null server: what its thread runs until `stop`
/// turns true.
pub struct ServerLoop {
    pub profile: Arc<ServerProfile>,
    pub stats: Arc<ServerLoopStats>,
    pub incoming: mpsc::UnboundedReceiver<Accepted>,
    pub stop: watch::Receiver<bool>,
    /// Loop 0 accepts for everyone.
    pub acceptor: Option<(Listeners, Vec<mpsc::UnboundedSender<Accepted>>)>,
    pub next_connection_id: Arc<AtomicU32>,
}

impl ServerLoop {
    /// Notes which thread runs this loop, so its CPU time can be read.
    pub fn record_thread(&self) {
        self.stats.tid.store(current_tid().unwrap_or(0), Ordering::Relaxed);
    }

    pub fn run(self, runtime: &tokio::runtime::Runtime) {
        let ServerLoop { profile, stats, mut incoming, mut stop, acceptor, next_connection_id } = self;
        runtime.block_on(async move {
            if let Some((listeners, loops)) = acceptor {
                match Acceptor::register(listeners, loops) {
                    Ok(acceptor) => {
                        tokio::spawn(acceptor.run());
                    }
                    // eprintln! would panic on a closed stderr; the
                    // message is all that is lost then.
                    Err(e) => {
                        let _ = writeln!(io::stderr(), "null server: cannot register the listeners: {e}");
                    }
                }
            }
            while !*stop.borrow_and_update() {
                tokio::select! {
                    changed = stop.changed() => if changed.is_err() { break },
                    accepted = incoming.recv() => match accepted {
                        Some(accepted) => {
                            let id = next_connection_id.fetch_add(1, Ordering::Relaxed);
                            ServerLoopStats::add(&stats.connections, 1);
                            spawn_connection(accepted, id, profile.clone(), stats.clone());
                        }
                        None => break,
                    },
                }
            }
        });
    }
}

fn spawn_connection(accepted: Accepted, id: u32, profile: Arc<ServerProfile>, stats: Arc<ServerLoopStats>) {
    match accepted {
        Accepted::Tcp(stream) => {
            if let Ok(stream) = TcpStream::from_std(stream) {
                tokio::spawn(serve_connection(stream, id, profile, stats));
            }
        }
        Accepted::Unix(stream) => {
            if let Ok(stream) = UnixStream::from_std(stream) {
                tokio::spawn(serve_connection(stream, id, profile, stats));
            }
        }
    }
}

/// Serves one connection until it ends, and counts its end.
async fn serve_connection<S: AsyncRead + AsyncWrite + Unpin>(
    stream: S,
    id: u32,
    profile: Arc<ServerProfile>,
    stats: Arc<ServerLoopStats>,
) {
    serve_until_closed(stream, id, profile, stats.clone()).await;
    ServerLoopStats::add(&stats.closed, 1);
}

/// Serves one connection until the client leaves or breaks the protocol.
/// Per batch: one read, one pass over every complete command, one write.
async fn serve_until_closed<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    id: u32,
    profile: Arc<ServerProfile>,
    stats: Arc<ServerLoopStats>,
) {
    let mut input: Vec<u8> = Vec::with_capacity(READ_BUFFER);
    let mut output: Vec<u8> = Vec::with_capacity(READ_BUFFER);
    let delay = match profile.answer_delay {
        d if d.is_zero() => None,
        d => match AnswerDelay::new(d) {
            Ok(delay) => Some(delay),
            Err(_) => return,
        },
    };
    let wait_timeout = profile.wait_timeout;
    let serial = profile.serial.clone();
    let mut session = NullSession::new(profile, id, &nonce(id), &mut output);
    // Once the login negotiated it, every byte is in compressed packets.
    let mut compression: Option<ServerCompression> = None;
    loop {
        if !output.is_empty() {
            if stream.write_all(&output).await.is_err() {
                return;
            }
            output.clear();
            if output.capacity() > KEEP_BUFFER {
                output.shrink_to(READ_BUFFER);
            }
        }
        if input.capacity() - input.len() < MIN_READ_ROOM {
            input.reserve(READ_BUFFER);
        }
        // EOF (mid-packet or not) and socket errors end the connection
        // quietly; so does silence past the wait timeout, as MariaDB's
        // wait_timeout closes a connection without a word.
        let read = stream.read_buf(&mut input);
        let read = match wait_timeout {
            None => read.await,
            Some(limit) => match tokio::time::timeout(limit, read).await {
                Ok(read) => read,
                Err(_) => {
                    ServerLoopStats::add(&stats.timed_out, 1);
                    let _ = stream.shutdown().await;
                    return;
                }
            },
        };
        match read {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let handled = match compression.as_mut() {
            Some(compression) => compression.handle(&mut session, &input, &mut output),
            None => session.handle(&input, &mut output),
        };
        if compression.is_none() && session.is_compressed() {
            compression = Some(ServerCompression::new());
        }
        input.drain(..handled.consumed.min(input.len()));
        if input.is_empty() && input.capacity() > KEEP_BUFFER {
            input.shrink_to(READ_BUFFER);
        }
        ServerLoopStats::add(&stats.commands, handled.commands);
        if let Some(delay) = delay.as_ref().filter(|_| handled.commands > 0) {
            if serve_in_turn(delay, serial.as_deref(), handled.commands).await.is_err() {
                return;
            }
        }
        if handled.close {
            if session.said_goodbye() {
                ServerLoopStats::add(&stats.quits, 1);
            }
            let _ = stream.write_all(&output).await;
            let _ = stream.shutdown().await;
            return;
        }
    }
}

/// Holds a batch's answers back for its service time: the delay, or under
/// `--serial` the delay per command after every command that came before
/// it on any connection. The one service slot is a time (when the server
/// is next free), booked under a short lock: a batch ends at that time (or
/// now, if later) plus its commands' delays, so timer lateness never adds
/// up and the server holds exactly 1/delay commands per second.
async fn serve_in_turn(delay: &AnswerDelay, serial: Option<&SerialSlot>, commands: u64) -> io::Result<()> {
    let Some(slot) = serial else { return delay.wait().await };
    let service = delay.delay().saturating_mul(u32::try_from(commands).unwrap_or(u32::MAX));
    let now = Instant::now();
    let done = {
        let mut free_at = slot.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let done = (*free_at).max(now) + service;
        *free_at = done;
        done
    };
    delay.wait_for(done.saturating_duration_since(now)).await
}

/// A per-connection scramble. The null server checks no password, so it
/// need not be secret, only different per connection, as clients expect.
fn nonce(connection_id: u32) -> [u8; NONCE_LEN] {
    let mut state = u64::from(connection_id) ^ process_seed();
    let mut nonce = [0u8; NONCE_LEN];
    for b in &mut nonce {
        // splitmix64
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        // Printable ASCII without NUL or quotes, like MariaDB's scrambles.
        *b = b'0' + (z % 75) as u8;
    }
    nonce
}

fn process_seed() -> u64 {
    use std::sync::OnceLock;
    static SEED: OnceLock<u64> = OnceLock::new();
    *SEED.get_or_init(|| {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        now.as_nanos() as u64 ^ u64::from(std::process::id()) << 32
    })
}

/// Accepts on every listener and deals connections out round-robin.
struct Acceptor {
    tcp: Option<TcpListener>,
    unix: Option<UnixListener>,
    loops: Vec<mpsc::UnboundedSender<Accepted>>,
    next: usize,
}

impl Acceptor {
    fn register(listeners: Listeners, loops: Vec<mpsc::UnboundedSender<Accepted>>) -> io::Result<Acceptor> {
        let tcp = listeners.tcp.map(TcpListener::from_std).transpose()?;
        let unix = listeners.unix.map(UnixListener::from_std).transpose()?;
        Ok(Acceptor { tcp, unix, loops, next: 0 })
    }

    async fn run(mut self) {
        loop {
            let accepted = tokio::select! {
                r = accept_tcp(self.tcp.as_ref()) => r.and_then(|s| {
                    // Every answer is one small write that must leave at once.
                    s.set_nodelay(true)?;
                    Ok(Accepted::Tcp(s.into_std()?))
                }),
                r = accept_unix(self.unix.as_ref()) => r.and_then(|s| Ok(Accepted::Unix(s.into_std()?))),
            };
            match accepted {
                Ok(accepted) => self.hand_out(accepted),
                // Out of descriptors or an aborted handshake: the listener lives on.
                Err(_) => tokio::time::sleep(ACCEPT_BACKOFF).await,
            }
        }
    }

    fn hand_out(&mut self, accepted: Accepted) {
        if self.loops.is_empty() {
            return;
        }
        let i = self.next % self.loops.len();
        self.next = self.next.wrapping_add(1);
        if let Some(tx) = self.loops.get(i) {
            // A loop that has stopped drops the connection, closing it.
            let _ = tx.send(accepted);
        }
    }
}

async fn accept_tcp(listener: Option<&TcpListener>) -> io::Result<TcpStream> {
    match listener {
        Some(l) => l.accept().await.map(|(s, _)| s),
        None => std::future::pending().await,
    }
}

async fn accept_unix(listener: Option<&UnixListener>) -> io::Result<UnixStream> {
    match listener {
        Some(l) => l.accept().await.map(|(s, _)| s),
        None => std::future::pending().await,
    }
}

/// This thread's Linux thread id, from `/proc/thread-self` (`PID/task/TID`).
fn current_tid() -> Option<u32> {
    let link = std::fs::read_link("/proc/thread-self").ok()?;
    link.file_name()?.to_str()?.parse().ok()
}

/// CPU time a thread of this process has used, from its schedstat
/// (nanoseconds on CPU); `None` once the thread is gone or off Linux.
pub fn schedstat_cpu_time(tid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat")).ok()?;
    let ns: u64 = stat.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nonces_are_printable_and_differ() {
        let a = nonce(1);
        let b = nonce(2);
        assert_ne!(a, b);
        assert!(a.iter().all(|&c| (b'0'..=b'z').contains(&c)));
    }

    #[test]
    fn own_thread_has_cpu_time() {
        let tid = current_tid().expect("linux");
        // CPU time is accounted at ticks and switches: spend some, then yield.
        let start = std::time::Instant::now();
        while start.elapsed() < Duration::from_millis(30) {
            std::hint::spin_loop();
        }
        std::thread::sleep(Duration::from_millis(1));
        let spent = schedstat_cpu_time(tid).expect("schedstat");
        assert!(spent > Duration::ZERO);
    }
}
