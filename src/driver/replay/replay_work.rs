//! A replayed connection as the engine's loop runs it: the work of a
//! [`ConnIo`](crate::driver::connections::conn_io::ConnIo), as a pipeline
//! of events is a built-in test's. It waits for its time to open, logs in
//! through the client's own login ([`Login`], as an idle connection
//! does), then hands the loop what its [`ReplayedConn`] says is due and
//! walks the answers into it. The loop owns its socket, its timers and
//! its feed (`event_loop/replay_conns.rs`); what every connection of the
//! loop shares (the tally, the schedule, the bytes queued) is a
//! [`ReplayShared`].

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use wirebench_protocol::Capabilities;

use super::feed::{OpenItem, ReplayConnId, OPEN_ALREADY};
use super::replay_tally::{LoopSkip, ReplayTally};
use super::replayed_conn::{ReplayConnError, ReplaySchedule, ReplayStep, ReplayTurn, ReplayedConn};
use super::SESSION_CAPABILITIES;
use crate::client::{ClientError, ConnectOptions, LoggedIn, Login, LoginStep};
use crate::driver::Budget;
use crate::stats::LoopStats;

/// What a loop's replayed connections share, on its one thread.
#[derive(Debug)]
pub(crate) struct ReplayShared {
    pub(crate) tally: RefCell<ReplayTally>,
    pub(crate) schedule: ReplaySchedule,
    /// Bytes of records its connections hold, not yet used.
    pub(crate) queued: Cell<usize>,
    /// No more records come (the feed ended) or the run stopped: a
    /// connection waiting for records ends.
    pub(crate) over: Cell<bool>,
}

/// Where a replayed connection is in its life.
pub(crate) enum ReplayPhase {
    /// Known, not yet opened: how it logs in when its time comes.
    Pending(Box<ConnectOptions>),
    /// Its login under way, and the login's bytes to send.
    LoggingIn { login: Box<Login>, out: Vec<u8> },
    /// Logged in: its commands go out.
    Replaying,
}

/// One replayed connection's work.
pub(crate) struct ReplayWork {
    pub(crate) conn: ReplayedConn,
    pub(crate) phase: ReplayPhase,
    /// The feed's login number it logs in with (for a refusal's count).
    pub(crate) login: u32,
    /// What its last fill said it waits for.
    pub(crate) step: ReplayStep,
    /// When its login, under way, has taken too long (the connect timeout).
    pub(crate) login_deadline_ns: u64,
    shared: Rc<ReplayShared>,
}

/// Why a replayed connection cannot go on.
#[derive(Debug, thiserror::Error)]
pub enum ReplayTrouble {
    /// Its login failed (refused, or the server went away during it).
    #[error("{0}")]
    Login(Box<ClientError>),
    #[error("{0}")]
    Answer(#[from] ReplayConnError),
}

/// What a replayed connection's input came to.
pub(crate) enum ReplayInput {
    /// This many bytes of the input were used (the rest: a partial packet).
    Used(usize),
    /// The login is done, with all of the input.
    LoggedIn(Box<LoggedIn>),
}

impl ReplayWork {
    /// A connection the capture opened, known at `now_ns`, to log in with
    /// `options` when its time comes.
    pub(crate) fn new(
        id: ReplayConnId,
        options: ConnectOptions,
        login: u32,
        now_ns: u64,
        shared: Rc<ReplayShared>,
    ) -> Self {
        ReplayWork {
            conn: ReplayedConn::new(id, now_ns),
            phase: ReplayPhase::Pending(Box::new(options)),
            login,
            step: ReplayStep::Records,
            login_deadline_ns: u64::MAX,
            shared,
        }
    }

    /// Its time has come: the login starts (the server speaks first), to
    /// be done by `deadline_ns`.
    pub(crate) fn start_login(&mut self, deadline_ns: u64) {
        self.login_deadline_ns = deadline_ns;
        if let ReplayPhase::Pending(options) = &self.phase {
            self.phase = ReplayPhase::LoggingIn { login: Box::new(Login::new(options)), out: Vec::new() };
        }
    }

    pub(crate) fn is_pending(&self) -> bool {
        matches!(self.phase, ReplayPhase::Pending(_))
    }

    pub(crate) fn is_logging_in(&self) -> bool {
        matches!(self.phase, ReplayPhase::LoggingIn { .. })
    }

    /// Whether its login is still under way at `now_ns`, past its deadline.
    pub(crate) fn login_overdue(&self, now_ns: u64) -> bool {
        self.is_logging_in() && now_ns >= self.login_deadline_ns
    }

    /// The error of a login whose socket reached its end.
    pub(crate) fn closed_during_login(&self) -> Option<ClientError> {
        match &self.phase {
            ReplayPhase::LoggingIn { login, .. } => Some(login.closed()),
            _ => None,
        }
    }

    /// Whether it waits for the server: its login's answer or a command's.
    pub(crate) fn awaits_answers(&self) -> bool {
        match self.phase {
            ReplayPhase::Pending(_) => false,
            ReplayPhase::LoggingIn { .. } => true,
            ReplayPhase::Replaying => self.conn.awaits_answer(),
        }
    }

    /// The login's wire bytes to send, appended to `wire_out`.
    pub(crate) fn take_login_output(&mut self, wire_out: &mut Vec<u8>) {
        if let ReplayPhase::LoggingIn { out, .. } = &mut self.phase {
            wire_out.append(out);
        }
    }

    /// Appends the commands due by `now_ns` to `out` (the packet stream);
    /// what it waits for then. Waiting for records that will not come
    /// (the feed ended, the run stopped) ends it.
    pub(crate) fn fill(
        &mut self,
        out: &mut Vec<u8>,
        now_ns: u64,
        budget: &mut Budget,
        stats: &mut LoopStats,
    ) -> ReplayStep {
        if !matches!(self.phase, ReplayPhase::Replaying) {
            return self.step;
        }
        let shared = self.shared.clone();
        let mut tally = shared.tally.borrow_mut();
        let before = self.conn.queued();
        let mut turn = ReplayTurn { stats, tally: &mut tally, budget, schedule: &shared.schedule };
        let mut step = self.conn.fill(out, now_ns, &mut turn);
        if step == ReplayStep::Records && shared.over.get() {
            self.conn.abandon(&mut tally, LoopSkip::RunEnded);
            step = ReplayStep::Quit;
        }
        self.count_used(before);
        self.step = step;
        step
    }

    /// Takes the bytes received: wire bytes for the login, the packet
    /// stream once logged in.
    pub(crate) fn on_input(
        &mut self,
        input: &[u8],
        now_ns: u64,
        stats: &mut LoopStats,
    ) -> Result<ReplayInput, ReplayTrouble> {
        match &mut self.phase {
            ReplayPhase::Pending(_) => Ok(ReplayInput::Used(input.len())),
            ReplayPhase::LoggingIn { login, out } => match login.advance(input, out) {
                Ok(LoginStep::NeedMore) => Ok(ReplayInput::Used(input.len())),
                Ok(LoginStep::Done(logged_in)) => {
                    self.phase = ReplayPhase::Replaying;
                    self.logged_in(logged_in.info.capabilities, now_ns);
                    Ok(ReplayInput::LoggedIn(logged_in))
                }
                Err(error) => Err(ReplayTrouble::Login(Box::new(error))),
            },
            ReplayPhase::Replaying => {
                let shared = self.shared.clone();
                let mut tally = shared.tally.borrow_mut();
                let before = self.conn.queued();
                let used = self.conn.on_input(input, now_ns, stats, &mut tally);
                self.count_used(before);
                Ok(ReplayInput::Used(used?))
            }
        }
    }

    fn logged_in(&mut self, capabilities: Capabilities, now_ns: u64) {
        self.conn.logged_in(capabilities, now_ns);
        self.step = ReplayStep::Until(now_ns);
        self.shared.tally.borrow_mut().opened += 1;
    }

    /// Appends a feed item of this connection; records arrived at `now_ns`.
    pub(crate) fn push(&mut self, item: &[u8], now_ns: u64) {
        self.conn.push(item);
        self.conn.fed(now_ns);
        self.shared.queued.set(self.shared.queued.get() + item.len());
    }

    /// The connection is gone, for `why`: what it holds is not replayed.
    pub(crate) fn abandon(&mut self, why: LoopSkip) {
        let before = self.conn.queued();
        self.conn.abandon(&mut self.shared.tally.borrow_mut(), why);
        self.count_used(before);
        self.step = ReplayStep::Quit;
    }

    fn count_used(&self, before: usize) {
        let used = before.saturating_sub(self.conn.queued());
        self.shared.queued.set(self.shared.queued.get().saturating_sub(used));
    }
}

/// The login of a captured connection: its login's user (`logins` by the
/// feed's login number), the captured database (an already open one's is
/// not known: `--mysql-db`'s), its collation and session capabilities.
pub(crate) fn login_options(logins: &[ConnectOptions], open: &OpenItem<'_>) -> Option<ConnectOptions> {
    let mut options = logins.get(open.login as usize).or(logins.first())?.clone();
    if open.flags & OPEN_ALREADY == 0 {
        options.database = (!open.database.is_empty()).then(|| String::from_utf8_lossy(open.database).into_owned());
    }
    if open.charset != 0 {
        options.charset = Some(open.charset);
    }
    options.session_capabilities = Capabilities(open.capabilities) & SESSION_CAPABILITIES;
    Some(options)
}
