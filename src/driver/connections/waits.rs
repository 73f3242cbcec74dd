//! How long each connection has been waiting for the server, and what
//! comes of waiting too long: libmysqlclient's read and write timeouts
//! (`--mysql-read-timeout`, `--mysql-write-timeout`), after which the
//! connection is lost as libmysqlclient reports it (client error 2013 or
//! 2006, so `--mysql-ignore-errors` can reconnect it); and the end of a
//! run's time, after which a connection still waiting for an answer is
//! stalled: it is cut off and counted (`pacing::run_control::Stalls`).
//!
//! A backend stamps a wait when it starts one and clears the stamp when it
//! ends, with a time it has already read for its own work: a store, no
//! clock read. It looks at the stamps on wake-ups it has anyway (each loop
//! wakes at least every few milliseconds), at most every
//! [`CHECK_EVERY_NS`]: no timer, system call or allocation per query.

use std::cell::Cell;
use std::time::Duration;

use crate::driver::Lost;

/// How often a loop looks at its connections' waits: timeouts are whole
/// seconds, and the end of a run is noticed within this.
pub(crate) const CHECK_EVERY_NS: u64 = 100_000_000;

/// A connection's waits in progress, each since when (ns since the run's
/// start; [`NOT_WAITING`] when there is none). Cells: the epoll backend's
/// ticker reads what its connection tasks write, on the same thread.
#[derive(Debug)]
pub(crate) struct Waits {
    reading: Cell<u64>,
    writing: Cell<u64>,
}

/// A stamp that is no wait: one word, so that stamping is one store.
const NOT_WAITING: u64 = u64::MAX;

impl Default for Waits {
    fn default() -> Self {
        Waits { reading: Cell::new(NOT_WAITING), writing: Cell::new(NOT_WAITING) }
    }
}

impl Waits {
    /// A wait for the server's bytes starts (a receive is outstanding).
    #[inline]
    pub(crate) fn start_read(&self, now_ns: u64) {
        self.reading.set(now_ns);
    }

    /// A wait for the server's bytes goes on, or starts now if none was
    /// in progress (a receive that stays armed between answers).
    #[inline]
    pub(crate) fn start_read_unless_reading(&self, now_ns: u64) {
        if self.reading.get() == NOT_WAITING {
            self.reading.set(now_ns);
        }
    }

    #[inline]
    pub(crate) fn end_read(&self) {
        self.reading.set(NOT_WAITING);
    }

    /// A wait for the socket to take commands starts (a send is outstanding).
    #[inline]
    pub(crate) fn start_write(&self, now_ns: u64) {
        self.writing.set(now_ns);
    }

    #[inline]
    pub(crate) fn end_write(&self) {
        self.writing.set(NOT_WAITING);
    }

    /// The wait that has lasted its limit, if one has.
    pub(crate) fn overdue(&self, now_ns: u64, limits: WaitLimits) -> Option<Overdue> {
        let past = |since: Option<u64>, limit: Option<Duration>| match (since, limit) {
            (Some(since), Some(limit)) => now_ns.saturating_sub(since) >= duration_ns(limit),
            _ => false,
        };
        if past(since(&self.writing), limits.write) {
            return limits.write.map(Overdue::Write);
        }
        if past(since(&self.reading), limits.read) {
            return limits.read.map(Overdue::Read);
        }
        None
    }

    /// How long the oldest wait in progress has lasted, if one is.
    pub(crate) fn waited(&self, now_ns: u64) -> Option<u64> {
        let oldest = match (since(&self.reading), since(&self.writing)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        oldest.map(|since| now_ns.saturating_sub(since))
    }
}

fn since(stamp: &Cell<u64>) -> Option<u64> {
    Some(stamp.get()).filter(|&at| at != NOT_WAITING)
}

fn duration_ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// A wait that lasted its limit: the read or the write timeout, which it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Overdue {
    Read(Duration),
    Write(Duration),
}

impl Overdue {
    /// The connection loss libmysqlclient reports for it.
    pub(crate) fn lost(self) -> Lost {
        match self {
            Overdue::Read(after) => Lost::ReadTimeout(after),
            Overdue::Write(after) => Lost::WriteTimeout(after),
        }
    }
}

/// A connection's read and write timeouts; `None` waits without limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct WaitLimits {
    pub(crate) read: Option<Duration>,
    pub(crate) write: Option<Duration>,
}

/// When a loop next looks at its connections' waits.
#[derive(Debug, Default)]
pub(crate) struct WaitCheck {
    next_ns: u64,
}

impl WaitCheck {
    /// Whether it is time to look (then the next look is due in
    /// [`CHECK_EVERY_NS`]): one comparison per wake-up.
    #[inline]
    pub(crate) fn due(&mut self, now_ns: u64) -> bool {
        if now_ns < self.next_ns {
            return false;
        }
        self.next_ns = now_ns.saturating_add(CHECK_EVERY_NS);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: u64 = 1_000_000_000;

    #[test]
    fn a_wait_is_overdue_once_it_has_lasted_its_limit() {
        let limits = WaitLimits { read: Some(Duration::from_secs(2)), write: Some(Duration::from_secs(1)) };
        let waits = Waits::default();
        assert!(waits.overdue(100 * SECOND, limits).is_none(), "no wait, nothing overdue");
        waits.start_read(10 * SECOND);
        assert!(waits.overdue(12 * SECOND - 1, limits).is_none());
        assert_eq!(waits.overdue(12 * SECOND, limits), Some(Overdue::Read(Duration::from_secs(2))));
        assert!(waits.overdue(100 * SECOND, WaitLimits::default()).is_none(), "no limit, never overdue");
        waits.start_write(11 * SECOND);
        let write = waits.overdue(12 * SECOND, limits);
        assert_eq!(write, Some(Overdue::Write(Duration::from_secs(1))), "the write first");
        assert!(matches!(write.map(Overdue::lost), Some(Lost::WriteTimeout(_))));
        assert_eq!(waits.waited(13 * SECOND), Some(3 * SECOND), "the oldest wait");
        waits.end_read();
        waits.end_write();
        assert_eq!((waits.waited(13 * SECOND), waits.overdue(100 * SECOND, limits).is_none()), (None, true));
    }

    #[test]
    fn checks_come_at_most_every_interval() {
        let mut check = WaitCheck::default();
        assert!(check.due(0));
        assert!(!check.due(CHECK_EVERY_NS - 1));
        assert!(check.due(CHECK_EVERY_NS));
        assert!(!check.due(CHECK_EVERY_NS + 1));
    }
}
