//! `--idle-connections`: logged-in connections held beside the active ones
//! for the whole run, sending nothing but a COM_PING now and then, as the
//! clients of a connection pool or a thread-pool evaluation do. They are
//! ordinary connections of the loops that hold them ([`IdleWork`] is their
//! work, as a pipeline of events is a built-in test's): the same sockets,
//! buffers, transport and readiness as the active ones, no thread, task or
//! runtime of their own, so thousands cost little more than their
//! sockets. They log in through the client's own login
//! ([`Login`](crate::client::Login)), as the active connections do: TLS,
//! compression and the database come with it.
//!
//! When they log in, ping and are logged in again is each loop's
//! [`IdleSchedule`]: logins are paced (`--idle-connect-rate`, a token
//! bucket per loop) with at most [`LOGINS_IN_FLIGHT`] per loop at once, so
//! that the server's back-log and `max_connections` are not what the run
//! measures. Once in, a connection pings every `--idle-ping-interval`;
//! pings are due in the order they were scheduled (all at the same
//! interval), so one queue in due order is the timer. A connection the
//! server closes (its `wait_timeout`), or that leaves a ping unanswered for
//! an interval, is lost: counted, and logged in again. A refused login is
//! tried again after [`RETRY_PAUSE`], so that a server at its
//! `max_connections` is not flooded with logins; the report shows why it
//! was refused, the server's ERR first.

use std::collections::VecDeque;
use std::io;
use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use socket2::SockAddr;
use wirebench_protocol::command;
use wirebench_protocol::framing::decode_answer_packet;

use crate::client::{ClientError, ConnectOptions, Endpoint, LoggedIn, Login, LoginStep};
use crate::driver::{Redial, Shard};
use crate::stats::IdleCounts;

/// Logins one loop has in flight at most: enough to keep a login storm at
/// its rate over a slow network, few enough not to fill a back-log.
pub(crate) const LOGINS_IN_FLIGHT: usize = 32;

/// How long a refused login waits before it is tried again.
const RETRY_PAUSE: Duration = Duration::from_secs(1);

/// How often a loop looks at its idle connections while logins are under
/// way, and once they are all in: a ping's answer or a server's close is
/// handled as it comes, so the ticks only time logins and pings.
const LOGIN_TICK_NS: u64 = 1_000_000;
const HELD_TICK_NS: u64 = 10_000_000;

/// The answer to a ping an idle connection accepts at most: an OK packet,
/// or the ERR of a server that is closing it.
const MAX_PING_ANSWER: usize = 16 * 1024;

/// Where idle connections go and how they log in: one per server they go
/// to.
#[derive(Debug)]
pub(crate) struct IdleTarget {
    /// The login, as the active connections' (nothing to prepare).
    pub(crate) redial: Arc<Redial>,
    /// Resolved once, before the run starts.
    pub(crate) address: SockAddr,
}

/// Why the idle connections cannot be set up.
#[derive(Debug, thiserror::Error)]
pub enum IdleSetupError {
    #[error("--idle-connections: cannot resolve {endpoint}: {source}; check --mysql-host")]
    Resolve { endpoint: Endpoint, source: io::Error },
}

/// The idle connections of this instance, for the loops to share out.
#[derive(Debug)]
pub struct IdlePlan {
    pub(crate) targets: Vec<IdleTarget>,
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
    /// each server resolved here once, before the run starts.
    pub fn new(
        options: impl Iterator<Item = ConnectOptions>,
        ping_interval: Duration,
        connect_rate: u32,
        loops: usize,
    ) -> Result<IdlePlan, IdleSetupError> {
        let mut targets: Vec<IdleTarget> = Vec::new();
        let mut assignment = Vec::new();
        for options in options {
            let known = targets.iter().position(|t| t.redial.options.endpoint == options.endpoint);
            let target = match known {
                Some(t) => t,
                None => {
                    let address = options
                        .endpoint
                        .resolve()
                        .map_err(|source| IdleSetupError::Resolve { endpoint: options.endpoint.clone(), source })?;
                    let redial = Redial { options, statements: Arc::new(Vec::new()), prepare: false, init: &[] };
                    targets.push(IdleTarget { redial: Arc::new(redial), address });
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

    /// How many idle connections loop `index` holds.
    pub(crate) fn count_for(&self, index: usize) -> usize {
        self.share(index).len()
    }

    /// The target of the `n`th connection of loop `index`'s share.
    pub(crate) fn target_for(&self, index: usize, n: usize) -> Option<&IdleTarget> {
        let global = self.share(index).start + n;
        let target = self.assignment.get(global)?;
        self.targets.get(usize::from(*target))
    }
}

/// An idle connection's work, as [`ConnIo`](super::conn_io::ConnIo) drives
/// it: between logins, logging in, or held.
pub(crate) enum IdleWork {
    /// No socket: waiting for its turn to log in (or to log in again).
    Closed,
    /// The client's login, and what it has to send.
    LoggingIn { login: Box<Login>, out: Vec<u8> },
    /// Logged in. `fresh` until the loop has counted the login.
    Held { ping: Ping, fresh: bool },
}

/// A held connection's ping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ping {
    Quiet,
    /// Due: the next fill sends it.
    Due,
    /// Sent; its OK is awaited at this sequence id.
    Awaited(u8),
}

/// What an idle connection's input came to.
pub(crate) enum IdleInput {
    /// This many bytes of the input were used (the rest: a partial packet).
    Used(usize),
    /// The login is done, with all of the input: the connection goes on
    /// with what it established.
    LoggedIn(Box<LoggedIn>),
}

/// Why an idle connection stopped: its login failed (the client's error,
/// the server's ERR first), or, held, it received what it cannot take.
#[derive(Debug, thiserror::Error)]
pub enum IdleTrouble {
    #[error("{0}")]
    Login(Box<ClientError>),
    #[error("{0}")]
    Held(&'static str),
}

impl IdleWork {
    /// A login starts, to be fed from the new socket's first bytes.
    pub(crate) fn logging_in(options: &ConnectOptions) -> IdleWork {
        IdleWork::LoggingIn { login: Box::new(Login::new(options)), out: Vec::new() }
    }

    /// Logged in, its login counted.
    pub(crate) fn held() -> IdleWork {
        IdleWork::Held { ping: Ping::Quiet, fresh: false }
    }

    /// Appends what is to be sent in the packet stream: a due ping. (A
    /// login's bytes are wire bytes: [`take_login_output`](Self::take_login_output).)
    pub(crate) fn fill_packets(&mut self, out: &mut Vec<u8>) -> bool {
        let IdleWork::Held { ping: ping @ Ping::Due, .. } = self else { return false };
        command::encode_ping(out);
        *ping = Ping::Awaited(1);
        true
    }

    /// The login's wire bytes to send, appended to `wire_out`.
    pub(crate) fn take_login_output(&mut self, wire_out: &mut Vec<u8>) {
        if let IdleWork::LoggingIn { out, .. } = self {
            wire_out.append(out);
        }
    }

    /// A ping is awaited at `seq` (the transport's numbering, under
    /// compression).
    pub(crate) fn ping_awaited_at(&mut self, seq: u8) {
        if let IdleWork::Held { ping: ping @ Ping::Awaited(_), .. } = self {
            *ping = Ping::Awaited(seq);
        }
    }

    /// Takes the bytes received: wire bytes for the login (which keeps what
    /// it cannot use yet), the packet stream once held.
    pub(crate) fn on_input(&mut self, input: &[u8]) -> Result<IdleInput, IdleTrouble> {
        match self {
            IdleWork::Closed => Ok(IdleInput::Used(input.len())),
            IdleWork::LoggingIn { login, out } => match login.advance(input, out) {
                Ok(LoginStep::NeedMore) => Ok(IdleInput::Used(input.len())),
                Ok(LoginStep::Done(logged_in)) => {
                    *self = IdleWork::Held { ping: Ping::Quiet, fresh: true };
                    Ok(IdleInput::LoggedIn(logged_in))
                }
                Err(error) => Err(IdleTrouble::Login(Box::new(error))),
            },
            IdleWork::Held { ping, .. } => ping_answer(ping, input).map(IdleInput::Used),
        }
    }

    /// Whether a ping is awaited.
    pub(crate) fn awaits_ping(&self) -> bool {
        matches!(self, IdleWork::Held { ping: Ping::Awaited(_), .. })
    }

    /// Whether the login is done and not yet counted; counts it as seen.
    pub(crate) fn take_fresh_login(&mut self) -> bool {
        match self {
            IdleWork::Held { fresh, .. } => std::mem::take(fresh),
            _ => false,
        }
    }

    /// A ping is due (the previous one answered): the next fill sends it.
    pub(crate) fn ping_due(&mut self) {
        if let IdleWork::Held { ping: ping @ Ping::Quiet, .. } = self {
            *ping = Ping::Due;
        }
    }

    pub(crate) fn is_held(&self) -> bool {
        matches!(self, IdleWork::Held { .. })
    }

    /// The error of a login whose socket reached its end.
    pub(crate) fn closed_during_login(&self) -> Option<ClientError> {
        match self {
            IdleWork::LoggingIn { login, .. } => Some(login.closed()),
            _ => None,
        }
    }
}

/// A held connection's bytes: a ping's OK; anything else (an ERR, as a
/// server closing the connection sends, a packet out of turn, bytes that
/// are no packet) puts the connection out of step.
fn ping_answer(ping: &mut Ping, input: &[u8]) -> Result<usize, IdleTrouble> {
    if input.is_empty() {
        return Ok(0);
    }
    let Ping::Awaited(seq) = *ping else { return Err(IdleTrouble::Held("the server sent a packet unasked")) };
    match decode_answer_packet(input, seq, MAX_PING_ANSWER) {
        Ok(None) => Ok(0),
        Ok(Some(frame)) if frame.payload.first() == Some(&0x00) => {
            *ping = Ping::Quiet;
            Ok(frame.consumed)
        }
        Ok(Some(_)) => Err(IdleTrouble::Held("the server answered a ping with an error")),
        Err(_) => Err(IdleTrouble::Held("the server's answer to a ping is no packet")),
    }
}

/// What the report says of a failed login: the client's error (the
/// server's ERR, when it sent one), and what to do about a full server.
pub(crate) fn login_failure(error: &ClientError) -> String {
    match error.server_error().map(|e| e.code) {
        Some(1040) => format!(
            "{error}; the server's max_connections is reached: raise it above --threads plus \
             --idle-connections (see docs/idle-connections.md)"
        ),
        _ => error.to_string(),
    }
}

/// One slot of a loop's idle connections, as the schedule sees it.
#[derive(Debug, Clone, Copy, Default)]
struct SlotState {
    /// Bumped with every login: pings and deadlines of an older one are
    /// stale.
    generation: u32,
    /// Logged in before: its next login is a reconnect.
    was_open: bool,
}

/// When one loop's idle connections log in and ping: see the module's
/// description. Slots are numbered within the loop's share (0 is its
/// first idle connection).
#[derive(Debug)]
pub(crate) struct IdleSchedule {
    plan: Arc<IdlePlan>,
    slots: Vec<SlotState>,
    /// Waiting to log in, in order.
    to_login: VecDeque<u32>,
    /// Refused, and when they may try again.
    retry: VecDeque<(u64, u32)>,
    /// Logins in flight: which, of which generation, and their deadline.
    logins: Vec<(u32, u32, u64)>,
    /// Pings due, in due order: when, which, of which generation.
    pings: VecDeque<(u64, u32, u32)>,
    /// Logins that may start now (the pacing's bucket), refilled at
    /// `rate_per_ns` since `refilled_ns`.
    tokens: f64,
    rate_per_ns: f64,
    refilled_ns: u64,
    next_look_ns: u64,
    connect_timeout_ns: u64,
}

/// What one look at the schedule found due.
#[derive(Debug, Default)]
pub(crate) struct IdleDue {
    /// Logins past their connect timeout: they fail.
    pub(crate) expired: Vec<u32>,
    /// Pings due on held connections (a ping still unanswered then is
    /// lost).
    pub(crate) pings: Vec<u32>,
    /// Connections whose login starts now.
    pub(crate) logins: Vec<u32>,
}

impl IdleDue {
    fn clear(&mut self) {
        self.expired.clear();
        self.pings.clear();
        self.logins.clear();
    }
}

impl IdleSchedule {
    /// Loop `index`'s share of `plan`, or `None` when it has none; its
    /// clock starts at `now_ns`.
    pub(crate) fn for_loop(plan: &Arc<IdlePlan>, index: usize, now_ns: u64) -> Option<IdleSchedule> {
        let count = plan.count_for(index);
        if count == 0 {
            return None;
        }
        let timeout = plan.targets.iter().map(|t| t.redial.options.connect_timeout).max().unwrap_or_default();
        Some(IdleSchedule {
            plan: plan.clone(),
            slots: vec![SlotState::default(); count],
            to_login: (0..count as u32).collect(),
            retry: VecDeque::new(),
            logins: Vec::with_capacity(LOGINS_IN_FLIGHT),
            pings: VecDeque::new(),
            tokens: 1.0,
            rate_per_ns: f64::from(plan.connect_rate) / plan.loops as f64 / 1e9,
            refilled_ns: now_ns,
            next_look_ns: now_ns,
            connect_timeout_ns: u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX),
        })
    }

    /// How many idle connections the loop holds.
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether a look is due: one comparison per turn of the loop.
    #[inline]
    pub(crate) fn due(&self, now_ns: u64) -> bool {
        now_ns >= self.next_look_ns
    }

    /// What is due now, into `due`: logins past their timeout, pings, and
    /// the logins the pacing lets start (counted as in flight from now).
    pub(crate) fn look(&mut self, now_ns: u64, due: &mut IdleDue) {
        due.clear();
        for &(slot, generation, deadline) in &self.logins {
            if deadline <= now_ns && self.is_current(slot, generation) {
                due.expired.push(slot);
            }
        }
        while let Some(&(at, slot, generation)) = self.pings.front() {
            if at > now_ns {
                break;
            }
            self.pings.pop_front();
            if self.is_current(slot, generation) {
                due.pings.push(slot);
                let next = now_ns.saturating_add(self.plan.ping_interval_ns);
                self.pings.push_back((next, slot, generation));
            }
        }
        self.start_logins(now_ns, due);
        let busy = !self.logins.is_empty() || !self.to_login.is_empty() || !self.retry.is_empty();
        self.next_look_ns = now_ns + if busy { LOGIN_TICK_NS } else { HELD_TICK_NS };
    }

    fn is_current(&self, slot: u32, generation: u32) -> bool {
        self.slots.get(slot as usize).is_some_and(|s| s.generation == generation)
    }

    /// The logins the pacing allows now.
    fn start_logins(&mut self, now_ns: u64, due: &mut IdleDue) {
        while self.retry.front().is_some_and(|&(at, _)| at <= now_ns) {
            if let Some((_, slot)) = self.retry.pop_front() {
                self.to_login.push_back(slot);
            }
        }
        let elapsed = now_ns.saturating_sub(self.refilled_ns) as f64;
        self.tokens = (self.tokens + elapsed * self.rate_per_ns).min(LOGINS_IN_FLIGHT as f64);
        self.refilled_ns = now_ns;
        while self.tokens >= 1.0 && self.logins.len() < LOGINS_IN_FLIGHT {
            let Some(slot) = self.to_login.pop_front() else { break };
            let Some(state) = self.slots.get_mut(slot as usize) else { continue };
            self.tokens -= 1.0;
            state.generation = state.generation.wrapping_add(1);
            let deadline = now_ns.saturating_add(self.connect_timeout_ns);
            self.logins.push((slot, state.generation, deadline));
            due.logins.push(slot);
        }
    }

    /// Slot `slot` cannot log in yet (its last socket is still being
    /// closed): it goes first at the next look, its token back.
    pub(crate) fn not_ready(&mut self, slot: u32) {
        self.end_generation(slot);
        self.logins.retain(|&(s, ..)| s != slot);
        self.tokens += 1.0;
        self.to_login.push_front(slot);
    }

    /// Slot `slot` logged in: counted, and its pings start.
    pub(crate) fn logged_in(&mut self, slot: u32, now_ns: u64) {
        let Some(state) = self.slots.get_mut(slot as usize) else { return };
        self.logins.retain(|&(s, ..)| s != slot);
        self.plan.counts.logged_in(state.was_open);
        state.was_open = true;
        self.pings.push_back((now_ns.saturating_add(self.plan.ping_interval_ns), slot, state.generation));
    }

    /// Slot `slot`'s login failed, and why: counted, and tried again after
    /// [`RETRY_PAUSE`].
    pub(crate) fn login_failed(&mut self, slot: u32, why: String, now_ns: u64) {
        self.end_generation(slot);
        self.logins.retain(|&(s, ..)| s != slot);
        self.plan.counts.login_failed(why);
        let pause = u64::try_from(RETRY_PAUSE.as_nanos()).unwrap_or(u64::MAX);
        self.retry.push_back((now_ns.saturating_add(pause), slot));
    }

    /// Slot `slot`, logged in, was lost: counted, and logged in again at
    /// its turn.
    pub(crate) fn lost(&mut self, slot: u32) {
        self.end_generation(slot);
        self.plan.counts.lost();
        self.to_login.push_back(slot);
    }

    /// Its pings and deadline are stale from now on.
    fn end_generation(&mut self, slot: u32) {
        if let Some(state) = self.slots.get_mut(slot as usize) {
            state.generation = state.generation.wrapping_add(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ping_answer_is_an_ok_packet_at_its_sequence_id() {
        let ok = [7, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0];
        let mut ping = Ping::Awaited(1);
        assert_eq!(ping_answer(&mut ping, &ok[..5]).unwrap(), 0, "a partial packet waits");
        assert_eq!(ping_answer(&mut ping, &ok).unwrap(), ok.len());
        assert_eq!(ping, Ping::Quiet);
        let err = [9, 0, 0, 1, 0xff, 0x7f, 0x0f, b'#', b'H', b'Y', b'0', b'0', b'0'];
        let mut ping = Ping::Awaited(1);
        assert!(ping_answer(&mut ping, &err).is_err(), "an ERR puts it out of step");
        assert!(ping_answer(&mut Ping::Quiet, &ok).is_err(), "a packet unasked");
        assert!(ping_answer(&mut Ping::Awaited(1), &[0xff; 8]).is_err(), "no packet");
    }

    fn plan(count: usize, rate: u32, loops: usize, timeout: Duration) -> Arc<IdlePlan> {
        let mut options = ConnectOptions::new(Endpoint::unix("/nonexistent/sock"), "u", "p");
        options.connect_timeout = timeout;
        Arc::new(IdlePlan::new(std::iter::repeat(options).take(count), Duration::from_secs(1), rate, loops).unwrap())
    }

    #[test]
    fn loops_share_the_connections_like_shards() {
        let plan = plan(10, 100, 3, Duration::from_secs(1));
        assert_eq!(plan.targets.len(), 1);
        assert_eq!([plan.share(0), plan.share(1), plan.share(2)], [0..4, 4..7, 7..10]);
        assert_eq!(plan.share(3), 0..0);
        assert!(IdleSchedule::for_loop(&plan, 3, 0).is_none(), "a loop with no share holds none");
    }

    /// With a bucket that allows them all, no more than
    /// [`LOGINS_IN_FLIGHT`] logins are under way at once; each fails at
    /// the connect timeout, counted, and is tried again a pause later.
    #[test]
    fn logins_in_flight_are_bounded_and_time_out() {
        let plan = plan(100, 1_000_000, 1, Duration::from_millis(50));
        let mut schedule = IdleSchedule::for_loop(&plan, 0, 0).unwrap();
        let mut due = IdleDue::default();
        let mut started = 0;
        for ms in 0..30 {
            schedule.look(ms * 1_000_000, &mut due);
            started += due.logins.len();
            assert!(due.expired.is_empty());
        }
        assert_eq!((started, schedule.logins.len()), (LOGINS_IN_FLIGHT, LOGINS_IN_FLIGHT));
        schedule.look(51_000_000, &mut due);
        assert_eq!(due.expired.len(), LOGINS_IN_FLIGHT, "every one past its timeout");
        for &slot in &due.expired.clone() {
            schedule.login_failed(slot, "no login within the connect timeout".into(), 51_000_000);
        }
        let tally = plan.counts.tally();
        assert_eq!((tally.failed_logins, tally.open), (LOGINS_IN_FLIGHT as u64, 0));
        schedule.look(52_000_000, &mut due);
        assert!(due.logins.iter().all(|&s| s as usize >= LOGINS_IN_FLIGHT), "the refused wait their pause");
        schedule.look(1_100_000_000, &mut due);
        assert!(due.expired.len() <= LOGINS_IN_FLIGHT);
    }

    /// Logins are paced by the rate; a login counts once, its pings come
    /// every interval, and a lost one is logged in again (counted as such).
    #[test]
    fn logins_are_paced_and_pings_follow_the_interval() {
        let plan = plan(10, 1000, 1, Duration::from_secs(10));
        let mut schedule = IdleSchedule::for_loop(&plan, 0, 0).unwrap();
        let mut due = IdleDue::default();
        schedule.look(0, &mut due);
        assert_eq!(due.logins, [0], "one token to start with");
        schedule.look(1_000_000, &mut due);
        assert_eq!(due.logins, [1], "then one a millisecond at 1000/s");
        schedule.logged_in(0, 1_000_000);
        schedule.look(1_500_000_000, &mut due);
        assert_eq!(due.pings, [0], "slot 0's first ping");
        schedule.look(1_600_000_000, &mut due);
        assert!(due.pings.is_empty(), "the next a second later");
        schedule.lost(0);
        schedule.look(2_600_000_000, &mut due);
        assert!(!due.pings.contains(&0), "a lost connection's pings are stale");
        assert!(due.logins.contains(&0), "and it logs in again");
        schedule.logged_in(0, 2_600_000_000);
        let tally = plan.counts.tally();
        assert_eq!((tally.lost, tally.reconnected, tally.open), (1, 1, 1));
    }
}
