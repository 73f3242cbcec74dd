//! `wirebench replay` on the loop: a capture's connections are ordinary
//! connections of the loop ([`ReplayWork`] is their work), on the same
//! backend, buffers, transports and timeouts as a built-in test's. What
//! the loop adds for them is here:
//!
//! - its feed, taken at its turns (every [`INTAKE_TICK_NS`] at most, or
//!   at once when a connection runs out) while its connections hold less
//!   than [`MAX_QUEUED`] of records: each OPEN item takes a slot (a retired
//!   replayed connection's, or a new one), each other item goes to its
//!   connection, found by its capture id;
//! - its timers, in one heap whose first is the wait's wake-up time: a
//!   connection opens [`OPEN_LEAD_NS`] before its time (its login done by
//!   then, else refused at its connect timeout) and sends each command
//!   when it is due;
//! - their ends: a connection the capture closes sends COM_QUIT through
//!   the usual quit path; one the server refuses, closes or breaks is
//!   counted (refused or lost), never opened again nor fatal; the run's
//!   cut abandons what is left; a retired slot is reused.
//!
//! The loop runs until its feed has ended and every connection is done,
//! or the run stopped; its tally goes to the replay's at the end.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::rc::Rc;
use std::sync::{Arc, PoisonError};

use socket2::SockAddr;

use super::conn::{Conn, ConnState};
use super::loop_io::LoopIo;
use super::EventLoop;
use crate::client::{connect_started, ClientError, Endpoint};
use crate::driver::connections::conn_io::ConnIo;
use crate::driver::replay::feed::{FeedItem, FeedReceiver, OpenItem, ReplayConnId};
use crate::driver::replay::replay_tally::LoopSkip;
use crate::driver::replay::replay_work::{login_options, ReplayShared, ReplayTrouble, ReplayWork};
use crate::driver::replay::replayed_conn::ReplayStep;
use crate::driver::replay::{ReplaySettings, OPEN_LEAD_NS};
use crate::driver::{DriverError, Lost, Redial, StdSocket};

/// How often, at most, a loop takes its feed's batches (a connection's
/// records arrive well before they are due: the reader reads ahead of the
/// schedule).
const INTAKE_TICK_NS: u64 = 1_000_000;

/// The most bytes of records a loop's connections hold before it takes no
/// more from its feed (the reader then waits): at `--speed=max` a
/// connection held up by a slow answer must not make its loop hold the
/// rest of the capture.
const MAX_QUEUED: usize = 32 << 20;

/// A loop's replay: its feed, its connections by capture id, their timers.
pub(crate) struct ReplayConns {
    feed: FeedReceiver,
    settings: Arc<ReplaySettings>,
    shared: Rc<ReplayShared>,
    /// By the feed's login number: how a connection logs in and where it
    /// connects (resolved once).
    targets: Vec<ReplayTarget>,
    batches: Vec<Vec<u8>>,
    by_id: HashMap<ReplayConnId, usize>,
    /// When a slot is due: its open, or its next command.
    timers: BinaryHeap<Reverse<(u64, usize)>>,
    /// Logins under way and when each is past the connect timeout, in
    /// that order (one timeout for all): looked at on the loop's turns,
    /// never a wake-up time of their own (a wait with one takes a single
    /// completion on io_uring, and the loop turns at least every 5 ms).
    logins: VecDeque<(u64, usize)>,
    /// Retired slots, for the next connections.
    free: Vec<usize>,
    /// Slots whose connection waits for its next records: while there are
    /// any, or a timer is set (the wait has a wake-up time anyway), the
    /// loop wakes for its feed every [`INTAKE_TICK_NS`]; else its wait is
    /// its backend's own (a batch of answers on io_uring, as a run's at
    /// `--speed=max`), and the feed is looked at as the loop's tick comes.
    starving: Vec<usize>,
    /// The slots of `starving` being served, swapped with it.
    serving: Vec<usize>,
    feed_ended: bool,
    /// The run's stop has been carried out.
    stopped: bool,
    next_intake_ns: u64,
}

/// How the connections of one login log in, and where.
struct ReplayTarget {
    redial: Arc<Redial>,
    address: Result<SockAddr, String>,
}

impl ReplayConns {
    /// A loop's replay of `feed`, as `settings` says.
    pub(crate) fn new(feed: FeedReceiver, settings: Arc<ReplaySettings>) -> Self {
        let targets = settings.logins.iter().map(|options| ReplayTarget::new(options.clone())).collect();
        let shared = Rc::new(ReplayShared {
            tally: Default::default(),
            schedule: settings.schedule,
            queued: Default::default(),
            over: Default::default(),
        });
        ReplayConns {
            feed,
            settings,
            shared,
            targets,
            batches: Vec::new(),
            by_id: HashMap::new(),
            timers: BinaryHeap::new(),
            logins: VecDeque::new(),
            free: Vec::new(),
            starving: Vec::new(),
            serving: Vec::new(),
            feed_ended: false,
            stopped: false,
            next_intake_ns: 0,
        }
    }

    /// When the loop must wake for its replay: the first timer, or the
    /// next look at the feed while a timer is set or a connection waits
    /// for its records.
    pub(super) fn wake_at(&self) -> Option<u64> {
        let timer = self.timers.peek().map(|Reverse((at, _))| *at);
        let intake = (self.going() && (timer.is_some() || !self.starving.is_empty())).then_some(self.next_intake_ns);
        timer.into_iter().chain(intake).min()
    }

    /// Whether connections may still come.
    pub(super) fn going(&self) -> bool {
        !self.feed_ended && !self.stopped
    }
}

impl ReplayTarget {
    fn new(options: crate::client::ConnectOptions) -> Self {
        let address = options.endpoint.resolve().map_err(|e| format!("{}: {e}", options.endpoint));
        let redial = Redial { options, statements: Arc::new(Vec::new()), prepare: false, init: &[] };
        ReplayTarget { redial: Arc::new(redial), address }
    }
}

impl<B: LoopIo> EventLoop<'_, B> {
    /// Runs the loop over a replay until its feed has ended and its
    /// connections are done (or the run stopped); its tally goes to the
    /// replay's.
    pub(crate) fn run_replay(&mut self, replay: ReplayConns) -> Result<(), DriverError> {
        let (settings, shared) = (replay.settings.clone(), replay.shared.clone());
        self.replay = Some(replay);
        let result = self.run(Vec::new(), None);
        settings.tally.lock().unwrap_or_else(PoisonError::into_inner).merge(&shared.tally.borrow());
        result
    }

    /// The replay's part of a turn: the run's stop carried out, the feed
    /// taken, the timers due fired.
    pub(super) fn serve_replay(&mut self) -> Result<(), DriverError> {
        let Some(replay) = &mut self.replay else { return Ok(()) };
        if !replay.stopped && self.context.control.is_stopped() {
            replay.stopped = true;
            replay.shared.over.set(true);
            return self.end_replay_waits();
        }
        self.take_feed()?;
        self.check_logins(self.now_ns)?;
        self.fire_replay_timers()
    }

    /// Takes the feed's batches, if it is time and there is room.
    fn take_feed(&mut self) -> Result<(), DriverError> {
        let now = self.now_ns;
        let Some(replay) = &mut self.replay else { return Ok(()) };
        if !replay.going() || now < replay.next_intake_ns || replay.shared.queued.get() >= MAX_QUEUED {
            return Ok(());
        }
        replay.next_intake_ns = now + INTAKE_TICK_NS;
        let mut batches = std::mem::take(&mut replay.batches);
        let ended = replay.feed.take(&mut batches);
        for batch in &batches {
            self.take_batch(batch, now)?;
        }
        let Some(replay) = &mut self.replay else { return Ok(()) };
        replay.feed.recycle(&mut batches);
        replay.batches = batches;
        if ended {
            replay.feed_ended = true;
            replay.shared.over.set(true);
            return self.end_replay_waits();
        }
        self.feed_starving()
    }

    /// The connections that waited for records and have some now go on.
    fn feed_starving(&mut self) -> Result<(), DriverError> {
        let Some(replay) = &mut self.replay else { return Ok(()) };
        std::mem::swap(&mut replay.starving, &mut replay.serving);
        let mut serving = std::mem::take(&mut replay.serving);
        for &i in &serving {
            let Some(conn) = self.conns.get_mut(i).filter(|c| c.state == ConnState::Running) else { continue };
            let Some(work) = conn.io.replay().filter(|w| w.step == ReplayStep::Records) else { continue };
            if work.conn.queued() > 0 {
                self.advance(i)?;
            } else if let Some(replay) = &mut self.replay {
                replay.starving.push(i);
            }
        }
        serving.clear();
        if let Some(replay) = &mut self.replay {
            replay.serving = serving;
        }
        Ok(())
    }

    /// Hands each item of `batch` to its connection, taking a slot for
    /// each connection it opens.
    fn take_batch(&mut self, batch: &[u8], now: u64) -> Result<(), DriverError> {
        let mut rest = batch;
        while let Some((item, len)) = FeedItem::parse(rest) {
            let bytes = rest.get(..len).unwrap_or_default();
            rest = rest.get(len..).unwrap_or_default();
            if let FeedItem::Open(open) = item {
                self.replay_open_item(&open, now)?;
                continue;
            }
            let Some(replay) = &mut self.replay else { return Ok(()) };
            let slot = replay.by_id.get(&item.conn()).copied();
            let conn = slot.and_then(|i| self.conns.get_mut(i));
            match conn {
                Some(conn) => {
                    if let Some(work) = conn.io.replay() {
                        work.push(bytes, now);
                    }
                }
                // Its connection is gone (lost, or refused): not replayed.
                None if matches!(item, FeedItem::Command(_)) => {
                    let ended = replay.stopped || self.deadline_ns.is_some_and(|end| now >= end);
                    let why = if ended { LoopSkip::RunEnded } else { LoopSkip::NoConnection };
                    replay.shared.tally.borrow_mut().record_skip(why);
                }
                None => {}
            }
        }
        Ok(())
    }

    /// A connection the capture opens: a slot, and its open timed.
    fn replay_open_item(&mut self, open: &OpenItem<'_>, now: u64) -> Result<(), DriverError> {
        let max_conns = self.max_conns;
        let Some(replay) = &mut self.replay else { return Ok(()) };
        let Some(target) = replay.targets.get(open.login as usize).or(replay.targets.first()) else { return Ok(()) };
        let Some(options) = login_options(&replay.settings.logins, open) else { return Ok(()) };
        let work = ReplayWork::new(open.conn, options, open.login, now, replay.shared.clone());
        let conn = Conn::idle(ConnIo::for_replay(work, target.redial.clone()));
        let i = match replay.free.pop() {
            Some(i) => i,
            None if self.conns.len() < max_conns => self.conns.len(),
            None => {
                let why = format!(
                    "this event loop holds {max_conns} replayed connections already: spread the replay over more \
                     loops (--cpus)"
                );
                replay.shared.tally.borrow_mut().record_refused(open.login, || why);
                return Ok(());
            }
        };
        match self.conns.get_mut(i) {
            Some(slot) => *slot = conn,
            None => self.conns.push(conn),
        }
        self.live += 1;
        let Some(replay) = &mut self.replay else { return Ok(()) };
        replay.by_id.insert(open.conn, i);
        let open_at = replay.shared.schedule.due_at(open.offset_ns).map_or(now, |due| due.saturating_sub(OPEN_LEAD_NS));
        if open_at > now {
            replay.timers.push(Reverse((open_at, i)));
            return Ok(());
        }
        self.open_replayed(i)
    }

    /// Fires the timers due: a connection opens, or sends what is due.
    fn fire_replay_timers(&mut self) -> Result<(), DriverError> {
        let now = self.clock.now_ns();
        loop {
            let Some(replay) = &mut self.replay else { return Ok(()) };
            let Some(&Reverse((at, i))) = replay.timers.peek() else { return Ok(()) };
            if at > now {
                return Ok(());
            }
            replay.timers.pop();
            let Some(conn) = self.conns.get_mut(i) else { continue };
            let pending = conn.io.replay().is_some_and(|work| work.is_pending());
            if pending && conn.state == ConnState::Retired {
                self.open_replayed(i)?;
            } else if conn.state == ConnState::Running && !conn.io.awaits_answers() {
                self.advance(i)?;
            }
        }
    }

    /// Refuses the logins still under way past their connect timeout.
    fn check_logins(&mut self, now: u64) -> Result<(), DriverError> {
        loop {
            let Some(replay) = &mut self.replay else { return Ok(()) };
            let Some(&(deadline, i)) = replay.logins.front() else { return Ok(()) };
            if deadline > now {
                return Ok(());
            }
            replay.logins.pop_front();
            let Some(conn) = self.conns.get_mut(i).filter(|c| c.state == ConnState::Running) else { continue };
            if !conn.io.replay().is_some_and(|work| work.login_overdue(now)) {
                continue;
            }
            let endpoint = conn.io.endpoint().clone();
            let after = conn.io.redial().options.connect_timeout;
            let why = ClientError::Timeout { endpoint, what: "connecting and logging in", after }.to_string();
            self.end_replayed(i, why, true)?;
        }
    }

    /// Opens replayed connection `i`'s socket and starts its login: the
    /// server speaks first, so a receive is armed and nothing sent.
    fn open_replayed(&mut self, i: usize) -> Result<(), DriverError> {
        let Some(replay) = &self.replay else { return Ok(()) };
        let Some(conn) = self.conns.get_mut(i) else { return Ok(()) };
        let endpoint = conn.io.endpoint().clone();
        let Some(work) = conn.io.replay() else { return Ok(()) };
        let target = replay.targets.get(work.login as usize).or(replay.targets.first());
        let Some(address) = target.map(|t| t.address.clone()) else { return Ok(()) };
        let opened = address.and_then(|address| {
            let socket = connect_started(&address).map_err(|source| io_refusal(&endpoint, source))?;
            Ok(StdSocket::from_socket(socket, address.is_unix()))
        });
        let socket = match opened {
            Ok(socket) => socket,
            Err(why) => return self.end_replayed(i, why, true),
        };
        conn.replace(socket, &[]);
        let timeout = conn.io.redial().options.connect_timeout;
        let deadline = self.clock.now_ns().saturating_add(u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX));
        if let Some(work) = conn.io.replay() {
            work.start_login(deadline);
        }
        conn.state = ConnState::Running;
        if let Some(replay) = &mut self.replay {
            replay.logins.push_back((deadline, i));
        }
        if let Err(source) = self.io.adopt(conn, i) {
            return self.end_replayed(i, io_refusal(&endpoint, source), true);
        }
        self.advance(i)
    }

    /// After a fill, a replayed connection waits for its next command's
    /// time (timed) or for its next records (the feed's intake wakes it).
    pub(super) fn replay_later(&mut self, i: usize) {
        let Some(conn) = self.conns.get_mut(i) else { return };
        let step = conn.io.replay().map(|work| work.step);
        let Some(replay) = &mut self.replay else { return };
        match step {
            Some(ReplayStep::Until(at)) => replay.timers.push(Reverse((at, i))),
            Some(ReplayStep::Records) => {
                replay.starving.push(i);
                // It asks for records: the feed is looked at next turn.
                replay.next_intake_ns = replay.next_intake_ns.min(self.now_ns);
            }
            _ => {}
        }
    }

    /// The feed ended or the run stopped: the connections that wait for
    /// records end, and, once stopped, those not yet opened too and those
    /// waiting for their next command's time (their fill finds the run over).
    fn end_replay_waits(&mut self) -> Result<(), DriverError> {
        let stopped = self.replay.as_ref().is_some_and(|replay| replay.stopped);
        for i in 0..self.conns.len() {
            let Some(conn) = self.conns.get_mut(i) else { continue };
            let Some(work) = conn.io.replay() else { continue };
            if work.is_pending() && conn.state == ConnState::Retired && stopped {
                work.abandon(LoopSkip::RunEnded);
                conn.state = ConnState::Finishing;
                self.retire_if_idle(i);
            } else if conn.state == ConnState::Running
                && !work.awaits_answers()
                && (stopped || work.step == ReplayStep::Records)
            {
                self.advance(i)?;
            }
        }
        Ok(())
    }

    /// A replayed connection lost (its socket closed or broke): counted,
    /// as a refused login if it was logging in.
    pub(super) fn lose_replayed(&mut self, i: usize, lost: Lost) -> Result<(), DriverError> {
        let Some(conn) = self.conns.get_mut(i) else { return Ok(()) };
        let endpoint = conn.io.endpoint().clone();
        let Some(work) = conn.io.replay() else { return Ok(()) };
        let logging_in = work.is_logging_in();
        let why = match lost {
            Lost::Closed if logging_in => work.closed_during_login().map(|e| e.to_string()),
            Lost::Read(source) | Lost::Write(source) if logging_in => Some(io_refusal(&endpoint, source)),
            Lost::Closed => Some("the server closed the connection".to_owned()),
            Lost::Read(e) => Some(format!("reading: {e}")),
            Lost::Write(e) => Some(format!("writing: {e}")),
            other => Some(other.to_string()),
        };
        self.end_replayed(i, why.unwrap_or_default(), logging_in)
    }

    /// A replayed connection's login failed or its answer broke the
    /// protocol: counted, refused or lost.
    pub(super) fn fail_replayed(&mut self, i: usize, error: DriverError) -> Result<(), DriverError> {
        let refused = matches!(&error, DriverError::Replayed(trouble) if matches!(**trouble, ReplayTrouble::Login(_)));
        self.end_replayed(i, error.to_string(), refused)
    }

    /// Ends replayed connection `i` for `why`: a refused login or a lost
    /// connection counted (after the run's stop, neither: the run ended
    /// it), what it held not replayed.
    fn end_replayed(&mut self, i: usize, why: String, refused: bool) -> Result<(), DriverError> {
        let stopped = self.context.control.is_stopped();
        let Some(replay) = &mut self.replay else { return Ok(()) };
        let Some(conn) = self.conns.get_mut(i) else { return Ok(()) };
        let Some(work) = conn.io.replay() else { return Ok(()) };
        let skip = if refused {
            replay.shared.tally.borrow_mut().record_refused(work.login, || why);
            LoopSkip::NoConnection
        } else if stopped {
            LoopSkip::RunEnded
        } else {
            let mut tally = replay.shared.tally.borrow_mut();
            tally.lost += 1;
            tally.first_loss.get_or_insert(why);
            LoopSkip::NoConnection
        };
        work.abandon(skip);
        let id = work.conn.id;
        if replay.by_id.get(&id) == Some(&i) {
            replay.by_id.remove(&id);
        }
        self.finish(i)
    }

    /// A replayed connection with nothing in flight retires: its socket
    /// closes, what it still held is not replayed, and its slot is free.
    pub(super) fn retire_replayed(&mut self, i: usize) {
        let Some(conn) = self.conns.get_mut(i) else { return };
        conn.close_socket();
        self.io.release(i);
        self.live -= 1;
        let Some(work) = conn.io.replay() else { return };
        work.abandon(LoopSkip::RunEnded);
        let id = work.conn.id;
        let Some(replay) = &mut self.replay else { return };
        if replay.by_id.get(&id) == Some(&i) {
            replay.by_id.remove(&id);
        }
        replay.free.push(i);
    }
}

/// A connect that failed, as the client's login reports it.
fn io_refusal(endpoint: &Endpoint, source: std::io::Error) -> String {
    ClientError::Io { endpoint: endpoint.clone(), source }.to_string()
}
