//! `--idle-connections`: logged-in connections held beside the active ones
//! for the whole run, sending nothing but a COM_PING now and then, as the
//! clients of a connection pool or a thread-pool evaluation do. Each loop
//! holds its share on a readiness set of its own (epoll), served from the
//! loop's turn ([`IdleSet::serve`]): no thread, task or runtime per
//! connection, so thousands cost little more than their sockets.
//!
//! A connection logs in through the sans-IO handshake over a non-blocking
//! socket; logins are paced (`--idle-connect-rate`, a token bucket per
//! loop) with at most [`LOGINS_IN_FLIGHT`] per loop at once, so that the
//! server's back-log and `max_connections` are not what the run measures.
//! Once in, it pings every `--idle-ping-interval`; pings are due in the
//! order they were scheduled (all at the same interval), so one queue in
//! due order is the timer. A connection the server closes (its
//! `wait_timeout`), or that leaves a ping unanswered for an interval, is
//! lost: counted, and logged in again. A refused login is tried again after
//! [`RETRY_PAUSE`], so that a server at its `max_connections` is not
//! flooded with logins.
//!
//! Idle connections log in without a database (they run no statement),
//! uncompressed and without TLS (the orchestration refuses `--mysql-ssl`
//! with them).

use std::collections::VecDeque;
use std::io::{self, Read};
use std::net::ToSocketAddrs;
use std::ops::Range;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Arc;
use std::time::Duration;

use smallvec::SmallVec;
use socket2::{Domain, SockAddr, Socket, Type};
use wirebench_protocol::auth::rand_core::OsRng;
use wirebench_protocol::framing::decode_answer_packet;
use wirebench_protocol::handshake::{ClientHandshake, HandshakeConfig, HandshakeStep, MAX_LOGIN_PACKET};
use wirebench_protocol::ServerText;

use crate::client::{ConnectOptions, Endpoint};
use crate::driver::{Clock, Shard};
use crate::stats::IdleCounts;

/// Logins one loop has in flight at most: enough to keep a login storm at
/// its rate over a slow network, few enough not to fill a back-log.
const LOGINS_IN_FLIGHT: usize = 32;

/// How long a refused login waits before it is tried again.
const RETRY_PAUSE: Duration = Duration::from_secs(1);

/// How often the loop looks at its idle connections while logins are under
/// way, and once they are all in: a ping's answer or a server's close
/// waits that long at most to be seen, which costs nothing but the look.
const LOGIN_TICK_NS: u64 = 1_000_000;
const HELD_TICK_NS: u64 = 10_000_000;

/// Readiness events taken per look, and looks per turn at most.
const EVENTS_PER_LOOK: usize = 256;
const LOOKS_PER_TURN: usize = 8;

/// COM_PING and COM_QUIT, whole packets (sequence id 0).
const PING: [u8; 5] = [1, 0, 0, 0, 0x0e];
const QUIT: [u8; 5] = [1, 0, 0, 0, 0x01];

/// The answer to a ping an idle connection accepts at most: an OK packet,
/// or the ERR of a server that is closing it.
const MAX_PING_ANSWER: usize = 16 * 1024;

/// `--idle-connections`, `--idle-ping-interval`, `--idle-connect-rate`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdleSettings {
    /// Idle connections of the whole run (all shards).
    pub count: u64,
    pub ping_interval: Duration,
    /// Logins per second of the whole run (all shards).
    pub connect_rate: u32,
}

impl Default for IdleSettings {
    fn default() -> Self {
        IdleSettings { count: 0, ping_interval: Duration::from_secs(10), connect_rate: 1000 }
    }
}

impl IdleSettings {
    /// This shard's part: its connections (by their number in the run) and
    /// its share of the login rate (at least one a second).
    pub fn for_shard(&self, shard: Shard) -> (Range<u64>, u32) {
        let rate = shard.share(u64::from(self.connect_rate)).max(1);
        (shard.range(self.count), u32::try_from(rate).unwrap_or(u32::MAX))
    }
}

/// Where idle connections go and how they log in: one per server they go to.
#[derive(Debug)]
struct IdleTarget {
    endpoint: Endpoint,
    address: SockAddr,
    login: HandshakeConfig,
    connect_timeout: Duration,
}

/// Why the idle connections cannot be set up.
#[derive(Debug, thiserror::Error)]
pub enum IdleSetupError {
    #[error("--idle-connections: cannot resolve {endpoint}: {source}; check --mysql-host")]
    Resolve { endpoint: Endpoint, source: io::Error },
    #[error("--idle-connections: {endpoint} resolves to no address; check --mysql-host")]
    NoAddress { endpoint: Endpoint },
}

/// The idle connections of this instance, for the loops to share out.
#[derive(Debug)]
pub struct IdlePlan {
    targets: Vec<IdleTarget>,
    /// Each connection's target, in connection order.
    assignment: Vec<u16>,
    ping_interval_ns: u64,
    /// Logins per second, all loops together.
    connect_rate: u32,
    /// The loops they are spread over.
    loops: usize,
    pub counts: Arc<IdleCounts>,
}

impl IdlePlan {
    /// `options`: how each idle connection logs in, in connection order;
    /// resolved here once, before the run starts.
    pub fn new(
        options: impl Iterator<Item = ConnectOptions>,
        ping_interval: Duration,
        connect_rate: u32,
        loops: usize,
    ) -> Result<IdlePlan, IdleSetupError> {
        let mut targets: Vec<IdleTarget> = Vec::new();
        let mut assignment = Vec::new();
        for options in options {
            let known = targets.iter().position(|t| t.endpoint == options.endpoint);
            let target = match known {
                Some(t) => t,
                None => {
                    targets.push(IdleTarget::new(&options)?);
                    targets.len() - 1
                }
            };
            assignment.push(u16::try_from(target).unwrap_or(u16::MAX));
        }
        let counts = Arc::new(IdleCounts::new(assignment.len() as u64));
        let ping_interval_ns = u64::try_from(ping_interval.as_nanos()).unwrap_or(u64::MAX).max(1);
        Ok(IdlePlan { targets, assignment, ping_interval_ns, connect_rate, loops: loops.max(1), counts })
    }

    /// The connections loop `index` holds: its share, as `--shard` splits.
    fn share(&self, index: usize) -> Range<usize> {
        let count = u32::try_from(self.loops).unwrap_or(u32::MAX);
        let Ok(part) = Shard::new(u32::try_from(index).unwrap_or(u32::MAX), count) else { return 0..0 };
        let range = part.range(self.assignment.len() as u64);
        range.start as usize..range.end as usize
    }
}

impl IdleTarget {
    fn new(options: &ConnectOptions) -> Result<IdleTarget, IdleSetupError> {
        let endpoint = options.endpoint.clone();
        let address = match &endpoint {
            Endpoint::Unix(path) => {
                SockAddr::unix(path).map_err(|source| IdleSetupError::Resolve { endpoint: endpoint.clone(), source })?
            }
            Endpoint::Tcp { host, port } => {
                let mut found = (host.as_str(), *port)
                    .to_socket_addrs()
                    .map_err(|source| IdleSetupError::Resolve { endpoint: endpoint.clone(), source })?;
                let first = found.next().ok_or_else(|| IdleSetupError::NoAddress { endpoint: endpoint.clone() })?;
                SockAddr::from(first)
            }
        };
        let mut login = options.handshake_config();
        // Nothing but pings: no database to select, nothing to compress.
        login.database = None;
        login.extra_capabilities = wirebench_protocol::Capabilities::empty();
        Ok(IdleTarget { endpoint, address, login, connect_timeout: options.connect_timeout })
    }
}

/// A login under way.
struct Login {
    machine: ClientHandshake,
    /// Read and not yet used by the handshake.
    input: Vec<u8>,
    /// To send, from `sent` on.
    output: Vec<u8>,
    sent: usize,
    deadline_ns: u64,
}

enum IdleState {
    /// Waiting for its turn to log in (or to log in again).
    Closed,
    /// The socket's connect is under way.
    Connecting(Box<Login>),
    LoggingIn(Box<Login>),
    /// Logged in; `pinged` while a ping waits for its answer.
    Held {
        pinged: bool,
    },
}

struct IdleConn {
    socket: Option<Socket>,
    state: IdleState,
    target: u16,
    /// Bumped with every new socket: readiness and pings of an older one
    /// are stale.
    generation: u32,
    /// Logged in before: its next login is a reconnect.
    was_open: bool,
    /// A ping's answer read in part.
    partial: SmallVec<[u8; 16]>,
}

/// One loop's idle connections: see the module's description.
pub struct IdleSet {
    plan: Arc<IdlePlan>,
    /// Its own: a loop's clock starts again when a script's start gate opens.
    clock: Clock,
    epoll: OwnedFd,
    conns: Vec<IdleConn>,
    /// Waiting to log in, in order.
    to_login: VecDeque<u32>,
    /// Refused, and when they may try again.
    retry: VecDeque<(u64, u32)>,
    /// Logins in flight.
    logins: Vec<u32>,
    /// Pings due, in due order: when, which, of which socket.
    pings: VecDeque<(u64, u32, u32)>,
    /// Logins that may start now (the pacing's bucket), refilled at
    /// `rate_per_ns` since `refilled_ns`.
    tokens: f64,
    rate_per_ns: f64,
    refilled_ns: u64,
    next_look_ns: u64,
    events: Vec<libc::epoll_event>,
}

impl IdleSet {
    /// Loop `index`'s share of `plan`, or `None` when it has none.
    pub fn for_loop(plan: &Arc<IdlePlan>, index: usize) -> io::Result<Option<IdleSet>> {
        let share = plan.share(index);
        if share.is_empty() {
            return Ok(None);
        }
        // SAFETY: epoll_create1 takes no pointer; the fd is checked below.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a new descriptor nothing else owns.
        let epoll = unsafe { OwnedFd::from_raw_fd(fd) };
        let conns: Vec<IdleConn> = plan
            .assignment
            .get(share)
            .unwrap_or_default()
            .iter()
            .map(|&target| IdleConn {
                socket: None,
                state: IdleState::Closed,
                target,
                generation: 0,
                was_open: false,
                partial: SmallVec::new(),
            })
            .collect();
        let rate_per_ns = f64::from(plan.connect_rate) / plan.loops as f64 / 1e9;
        let clock = Clock::start();
        let now_ns = clock.now_ns();
        Ok(Some(IdleSet {
            plan: plan.clone(),
            clock,
            epoll,
            to_login: (0..conns.len() as u32).collect(),
            conns,
            retry: VecDeque::new(),
            logins: Vec::with_capacity(LOGINS_IN_FLIGHT),
            pings: VecDeque::new(),
            tokens: 1.0,
            rate_per_ns,
            refilled_ns: now_ns,
            next_look_ns: now_ns,
            events: Vec::with_capacity(EVENTS_PER_LOOK),
        }))
    }

    /// Called on every turn of the loop; does the work due (answers,
    /// closes, logins, pings) once a tick has passed since the last look,
    /// and nothing but a read of the clock otherwise.
    #[inline]
    pub fn serve(&mut self) {
        let now_ns = self.clock.now_ns();
        if now_ns >= self.next_look_ns {
            self.look(now_ns);
        }
    }

    #[cold]
    fn look(&mut self, now_ns: u64) {
        self.take_events(now_ns);
        self.expire_logins(now_ns);
        self.send_pings(now_ns);
        self.start_logins(now_ns);
        let busy = !self.logins.is_empty() || !self.to_login.is_empty() || !self.retry.is_empty();
        self.next_look_ns = now_ns + if busy { LOGIN_TICK_NS } else { HELD_TICK_NS };
    }

    fn take_events(&mut self, now_ns: u64) {
        for _ in 0..LOOKS_PER_TURN {
            self.events.clear();
            // SAFETY: the buffer has room for `EVENTS_PER_LOOK` events, and
            // its length is set to what the kernel wrote.
            let n = unsafe {
                let n = libc::epoll_wait(
                    self.epoll.as_raw_fd(),
                    self.events.as_mut_ptr(),
                    EVENTS_PER_LOOK as libc::c_int,
                    0,
                );
                if n > 0 {
                    self.events.set_len(n as usize);
                }
                n
            };
            if n <= 0 {
                return;
            }
            for e in 0..self.events.len() {
                let Some(event) = self.events.get(e) else { break };
                let (token, flags) = (event.u64, event.events);
                self.on_ready((token & 0xffff_ffff) as u32, (token >> 32) as u32, flags, now_ns);
            }
            if (n as usize) < EVENTS_PER_LOOK {
                return;
            }
        }
    }

    fn on_ready(&mut self, i: u32, generation: u32, flags: u32, now_ns: u64) {
        let Some(conn) = self.conns.get_mut(i as usize) else { return };
        if conn.generation != generation {
            return;
        }
        match conn.state {
            IdleState::Connecting(_) => self.on_connected(i, now_ns),
            IdleState::LoggingIn(_) => self.advance_login(i, flags, now_ns),
            IdleState::Held { .. } => self.on_held_input(i),
            IdleState::Closed => {}
        }
    }

    /// Starts the logins the pacing allows.
    fn start_logins(&mut self, now_ns: u64) {
        while self.retry.front().is_some_and(|&(due, _)| due <= now_ns) {
            if let Some((_, i)) = self.retry.pop_front() {
                self.to_login.push_back(i);
            }
        }
        let elapsed = now_ns.saturating_sub(self.refilled_ns) as f64;
        self.tokens = (self.tokens + elapsed * self.rate_per_ns).min(LOGINS_IN_FLIGHT as f64);
        self.refilled_ns = now_ns;
        while self.tokens >= 1.0 && self.logins.len() < LOGINS_IN_FLIGHT {
            let Some(i) = self.to_login.pop_front() else { break };
            self.tokens -= 1.0;
            self.start_login(i, now_ns);
        }
    }

    fn start_login(&mut self, i: u32, now_ns: u64) {
        let Some(conn) = self.conns.get_mut(i as usize) else { return };
        let Some(target) = self.plan.targets.get(usize::from(conn.target)) else { return };
        conn.generation = conn.generation.wrapping_add(1);
        let timeout = u64::try_from(target.connect_timeout.as_nanos()).unwrap_or(u64::MAX);
        let login = Box::new(Login {
            machine: ClientHandshake::new(target.login.clone()),
            input: Vec::new(),
            output: Vec::new(),
            sent: 0,
            deadline_ns: now_ns.saturating_add(timeout),
        });
        conn.state = IdleState::Connecting(login);
        self.logins.push(i);
        let socket = match open_socket(&target.address) {
            Ok(socket) => socket,
            Err(e) => return self.login_failed(i, &format!("cannot connect: {e}"), now_ns),
        };
        let token = u64::from(conn.generation) << 32 | u64::from(i);
        let interest = (libc::EPOLLOUT | libc::EPOLLIN | libc::EPOLLRDHUP) as u32;
        let added = epoll_ctl(&self.epoll, libc::EPOLL_CTL_ADD, &socket, interest, token);
        conn.socket = Some(socket);
        if let Err(e) = added {
            self.login_failed(i, &format!("cannot watch the socket: {e}"), now_ns);
        }
    }

    fn on_connected(&mut self, i: u32, now_ns: u64) {
        let Some(conn) = self.conns.get_mut(i as usize) else { return };
        let Some(socket) = &conn.socket else { return };
        match socket.take_error() {
            Ok(None) => {}
            Ok(Some(e)) | Err(e) => return self.login_failed(i, &format!("cannot connect: {e}"), now_ns),
        }
        let token = u64::from(conn.generation) << 32 | u64::from(i);
        // The server speaks first: until the client has something to send,
        // only its input matters.
        let watched = epoll_ctl(&self.epoll, libc::EPOLL_CTL_MOD, socket, input_interest(), token);
        let IdleState::Connecting(login) = std::mem::replace(&mut conn.state, IdleState::Closed) else { return };
        conn.state = IdleState::LoggingIn(login);
        if let Err(e) = watched {
            return self.login_failed(i, &format!("cannot watch the socket: {e}"), now_ns);
        }
        self.advance_login(i, libc::EPOLLIN as u32, now_ns);
    }

    /// Reads what the server sent, hands it to the handshake and sends its
    /// answer; logged in, the connection is held.
    fn advance_login(&mut self, i: u32, flags: u32, now_ns: u64) {
        let outcome = match self.conns.get_mut(i as usize) {
            Some(IdleConn { socket: Some(socket), state: IdleState::LoggingIn(login), .. }) => {
                login_step(socket, login, flags)
            }
            _ => return,
        };
        match outcome {
            // What waited for room has gone: input is all that matters again.
            Ok(LoginProgress::Going) if flags & libc::EPOLLOUT as u32 != 0 => self.watch_output(i, false, now_ns),
            Ok(LoginProgress::Going) => {}
            Ok(LoginProgress::Sending) => self.watch_output(i, true, now_ns),
            Ok(LoginProgress::Done) => self.logged_in(i, now_ns),
            Err(why) => self.login_failed(i, &why, now_ns),
        }
    }

    /// Watches the socket for room to send (`true`) or for input only.
    fn watch_output(&mut self, i: u32, room: bool, now_ns: u64) {
        let Some(conn) = self.conns.get_mut(i as usize) else { return };
        let Some(socket) = &conn.socket else { return };
        let token = u64::from(conn.generation) << 32 | u64::from(i);
        let interest = if room { input_interest() | libc::EPOLLOUT as u32 } else { input_interest() };
        if let Err(e) = epoll_ctl(&self.epoll, libc::EPOLL_CTL_MOD, socket, interest, token) {
            self.login_failed(i, &format!("cannot watch the socket: {e}"), now_ns);
        }
    }

    fn logged_in(&mut self, i: u32, now_ns: u64) {
        self.watch_output(i, false, now_ns);
        let Some(conn) = self.conns.get_mut(i as usize) else { return };
        if !matches!(conn.state, IdleState::LoggingIn(_)) {
            return;
        }
        conn.state = IdleState::Held { pinged: false };
        self.plan.counts.logged_in(conn.was_open);
        conn.was_open = true;
        self.pings.push_back((now_ns.saturating_add(self.plan.ping_interval_ns), i, conn.generation));
        self.logins.retain(|&l| l != i);
    }

    fn login_failed(&mut self, i: u32, why: &str, now_ns: u64) {
        let Some(conn) = self.conns.get_mut(i as usize) else { return };
        let endpoint = self.plan.targets.get(usize::from(conn.target)).map(|t| &t.endpoint);
        let place = endpoint.map(|e| e.to_string()).unwrap_or_default();
        self.plan.counts.login_failed(format!("{place}: {why}"));
        conn.socket = None;
        conn.state = IdleState::Closed;
        conn.generation = conn.generation.wrapping_add(1);
        self.logins.retain(|&l| l != i);
        let pause = u64::try_from(RETRY_PAUSE.as_nanos()).unwrap_or(u64::MAX);
        self.retry.push_back((now_ns.saturating_add(pause), i));
    }

    /// A login past its connect timeout fails.
    fn expire_logins(&mut self, now_ns: u64) {
        let late: SmallVec<[u32; LOGINS_IN_FLIGHT]> = self
            .logins
            .iter()
            .copied()
            .filter(|&i| match self.conns.get(i as usize).map(|c| &c.state) {
                Some(IdleState::Connecting(login) | IdleState::LoggingIn(login)) => login.deadline_ns <= now_ns,
                _ => false,
            })
            .collect();
        for i in late {
            self.login_failed(i, "no login within the connect timeout (--mysql-connect-timeout)", now_ns);
        }
    }

    /// Input on a held connection: a ping's answer, or the server closing
    /// it (its end of file, or an ERR first, as MySQL sends on `wait_timeout`).
    fn on_held_input(&mut self, i: u32) {
        let Some(conn) = self.conns.get_mut(i as usize) else { return };
        let Some(socket) = &conn.socket else { return };
        let pinged = matches!(conn.state, IdleState::Held { pinged: true });
        let mut buf = [0u8; 512];
        let answer = loop {
            match (&*socket).read(&mut buf) {
                Ok(0) => break PingAnswer::Lost,
                Ok(n) if pinged && conn.partial.len() + n <= MAX_PING_ANSWER => {
                    conn.partial.extend_from_slice(buf.get(..n).unwrap_or_default());
                }
                Ok(_) => break PingAnswer::Lost,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break ping_answer(&conn.partial),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break PingAnswer::Lost,
            }
        };
        match answer {
            PingAnswer::Incomplete => {}
            PingAnswer::Ok => {
                conn.partial.clear();
                conn.state = IdleState::Held { pinged: false };
            }
            PingAnswer::Lost => self.lose(i),
        }
    }

    /// Pings the connections due; one whose last ping is still unanswered
    /// is lost.
    fn send_pings(&mut self, now_ns: u64) {
        while let Some(&(due, i, generation)) = self.pings.front() {
            if due > now_ns {
                return;
            }
            self.pings.pop_front();
            let Some(conn) = self.conns.get_mut(i as usize) else { continue };
            let (IdleState::Held { pinged }, Some(socket)) = (&conn.state, &conn.socket) else { continue };
            if conn.generation != generation {
                continue;
            }
            // Five bytes into an idle socket's empty buffer go at once, or
            // the socket is broken.
            if *pinged || socket.send(&PING).ok() != Some(PING.len()) {
                self.lose(i);
                continue;
            }
            conn.state = IdleState::Held { pinged: true };
            self.pings.push_back((now_ns.saturating_add(self.plan.ping_interval_ns), i, generation));
        }
    }

    /// A held connection is lost: counted, and logged in again at its turn.
    fn lose(&mut self, i: u32) {
        let Some(conn) = self.conns.get_mut(i as usize) else { return };
        conn.socket = None;
        conn.state = IdleState::Closed;
        conn.partial = SmallVec::new();
        conn.generation = conn.generation.wrapping_add(1);
        self.plan.counts.lost();
        self.to_login.push_back(i);
    }
}

impl Drop for IdleSet {
    /// Says goodbye on every held connection (a COM_QUIT, which an idle
    /// socket takes at once), so the server counts no aborted client.
    fn drop(&mut self) {
        for conn in &self.conns {
            if let (IdleState::Held { .. }, Some(socket)) = (&conn.state, &conn.socket) {
                let _ = socket.send(&QUIT);
            }
        }
    }
}

/// What a login's step came to.
enum LoginProgress {
    Going,
    /// Its answer did not all go: it waits for room.
    Sending,
    Done,
}

/// What a held connection's input was.
enum PingAnswer {
    Incomplete,
    Ok,
    Lost,
}

fn login_step(socket: &Socket, login: &mut Login, flags: u32) -> Result<LoginProgress, String> {
    if flags & libc::EPOLLOUT as u32 != 0 {
        flush(socket, login)?;
    }
    let mut buf = [0u8; 4096];
    loop {
        match (&*socket).read(&mut buf) {
            Ok(0) => return Err("the server closed the connection during the login".to_owned()),
            Ok(n) if login.input.len() + n <= MAX_LOGIN_PACKET + 4 => {
                login.input.extend_from_slice(buf.get(..n).unwrap_or_default())
            }
            Ok(_) => return Err("the server sent more than a login's packet".to_owned()),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("reading the login: {e}")),
        }
    }
    loop {
        let (used, step) = login
            .machine
            .advance(&login.input, &mut login.output, &mut OsRng)
            .map_err(|e| format!("the login failed: {e}"))?;
        login.input.drain(..used.min(login.input.len()));
        let sending = !flush(socket, login)?;
        match step {
            HandshakeStep::NeedMore if used > 0 && !login.input.is_empty() => continue,
            HandshakeStep::NeedMore if sending => return Ok(LoginProgress::Sending),
            HandshakeStep::NeedMore => return Ok(LoginProgress::Going),
            HandshakeStep::Done(_) if sending => {
                return Err("the login's last packet did not go out at once".to_owned());
            }
            HandshakeStep::Done(_) => return Ok(LoginProgress::Done),
            HandshakeStep::ServerError(error) => {
                return Err(format!(
                    "the server refused the login: error {} ({})",
                    error.code,
                    ServerText(&error.message)
                ))
            }
            HandshakeStep::StartTls => return Err("the server asked for TLS, which idle connections do not use".into()),
            other => return Err(format!("the login asked for a step idle connections cannot take: {other:?}")),
        }
    }
}

/// Sends what the login has to send; whether it all went.
fn flush(socket: &Socket, login: &mut Login) -> Result<bool, String> {
    while let Some(rest) = login.output.get(login.sent..).filter(|rest| !rest.is_empty()) {
        match socket.send(rest) {
            Ok(n) => login.sent += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("sending the login: {e}")),
        }
    }
    login.output.clear();
    login.sent = 0;
    Ok(true)
}

/// A held connection's bytes: a ping's OK, or anything else (an ERR, a
/// packet out of turn), after which the connection is not used again.
fn ping_answer(bytes: &[u8]) -> PingAnswer {
    match decode_answer_packet(bytes, 1, MAX_PING_ANSWER) {
        Ok(None) => PingAnswer::Incomplete,
        Ok(Some(frame)) if frame.consumed == bytes.len() && frame.payload.first() == Some(&0x00) => PingAnswer::Ok,
        // An ERR (a server closing the connection), a second packet, or
        // bytes that are no packet: the connection is out of step.
        Ok(Some(_)) | Err(_) => PingAnswer::Lost,
    }
}

fn input_interest() -> u32 {
    (libc::EPOLLIN | libc::EPOLLRDHUP) as u32
}

/// A non-blocking stream socket whose connect to `address` is under way.
fn open_socket(address: &SockAddr) -> io::Result<Socket> {
    let domain = if address.is_unix() {
        Domain::UNIX
    } else {
        Domain::for_address(address.as_socket().ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?)
    };
    let socket = Socket::new(domain, Type::STREAM, None)?;
    socket.set_nonblocking(true)?;
    match socket.connect(address) {
        Ok(()) => Ok(socket),
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) || e.kind() == io::ErrorKind::WouldBlock => Ok(socket),
        Err(e) => Err(e),
    }
}

fn epoll_ctl(epoll: &OwnedFd, op: libc::c_int, socket: &Socket, interest: u32, token: u64) -> io::Result<()> {
    let mut event = libc::epoll_event { events: interest, u64: token };
    // SAFETY: both descriptors are open (owned by the caller) and `event`
    // is valid for the call.
    let rc = unsafe { libc::epoll_ctl(epoll.as_raw_fd(), op, socket.as_raw_fd(), &mut event) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ping_answer_is_an_ok_packet_with_sequence_one() {
        let ok = [7, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0];
        assert!(matches!(ping_answer(&ok), PingAnswer::Ok));
        assert!(matches!(ping_answer(&ok[..5]), PingAnswer::Incomplete));
        let err = [9, 0, 0, 1, 0xff, 0x7f, 0x0f, b'#', b'H', b'Y', b'0', b'0', b'0'];
        assert!(matches!(ping_answer(&err), PingAnswer::Lost));
        let mut two = ok.to_vec();
        two.extend_from_slice(&ok);
        assert!(matches!(ping_answer(&two), PingAnswer::Lost), "a second packet is out of turn");
    }

    /// A server that accepts and never speaks: no more than
    /// [`LOGINS_IN_FLIGHT`] logins wait on it at once, and each fails at
    /// the connect timeout, counted, to be tried again later.
    #[test]
    fn logins_in_flight_are_bounded_and_time_out() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let endpoint = Endpoint::tcp("127.0.0.1", listener.local_addr().unwrap().port());
        let mut options = ConnectOptions::new(endpoint, "u", "p");
        options.connect_timeout = Duration::from_millis(50);
        let plan = IdlePlan::new(std::iter::repeat(options).take(100), Duration::from_secs(1), 1_000_000, 1).unwrap();
        let plan = Arc::new(plan);
        let mut idle = IdleSet::for_loop(&plan, 0).unwrap().unwrap();
        let start = std::time::Instant::now();
        while start.elapsed() < Duration::from_millis(30) {
            idle.serve();
            assert!(idle.logins.len() <= LOGINS_IN_FLIGHT);
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(idle.logins.len(), LOGINS_IN_FLIGHT, "the bucket allows all, the bound holds");
        assert_eq!(plan.counts.tally().failed_logins, 0);
        std::thread::sleep(Duration::from_millis(60));
        idle.serve();
        let tally = plan.counts.tally();
        assert!(tally.failed_logins >= LOGINS_IN_FLIGHT as u64, "{tally:?}");
        assert!(tally.last_failure.is_some_and(|why| why.contains("connect timeout")));
        assert_eq!(tally.open, 0);
        drop(listener);
    }

    #[test]
    fn loops_share_the_connections_like_shards() {
        let options = (0..10).map(|_| ConnectOptions::new(Endpoint::unix("/nonexistent/sock"), "u", "p"));
        let plan = IdlePlan::new(options, Duration::from_secs(1), 100, 3).unwrap();
        assert_eq!(plan.targets.len(), 1);
        assert_eq!([plan.share(0), plan.share(1), plan.share(2)], [0..4, 4..7, 7..10]);
        assert_eq!(plan.share(3), 0..0);
    }
}
