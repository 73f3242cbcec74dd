//! What happened to a run's idle connections (`--idle-connections`): how
//! many logged in, were lost (closed by the server, its `wait_timeout`, a
//! ping unanswered) and were opened again, and how many logins failed.
//! The loops that hold them add to one [`IdleCounts`] (a login or a loss
//! is rare: relaxed atomics, never on the path of a query); the report
//! reads an [`IdleTally`] at the end.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

/// The counts the loops add to.
#[derive(Debug, Default)]
pub struct IdleCounts {
    /// Idle connections this instance holds (its `--shard` part).
    wanted: u64,
    logins: AtomicU64,
    lost: AtomicU64,
    reconnected: AtomicU64,
    failed_logins: AtomicU64,
    /// Why the latest login failed, for the report.
    last_failure: Mutex<Option<String>>,
}

impl IdleCounts {
    pub fn new(wanted: u64) -> Self {
        IdleCounts { wanted, ..IdleCounts::default() }
    }

    /// A login succeeded; `again` when it replaced a lost connection.
    pub fn logged_in(&self, again: bool) {
        self.logins.fetch_add(1, Ordering::Relaxed);
        if again {
            self.reconnected.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A logged-in connection was lost.
    pub fn lost(&self) {
        self.lost.fetch_add(1, Ordering::Relaxed);
    }

    /// A login failed, and why.
    pub fn login_failed(&self, why: String) {
        self.failed_logins.fetch_add(1, Ordering::Relaxed);
        *self.last_failure.lock().unwrap_or_else(PoisonError::into_inner) = Some(why);
    }

    pub fn tally(&self) -> IdleTally {
        let logins = self.logins.load(Ordering::Relaxed);
        let lost = self.lost.load(Ordering::Relaxed);
        IdleTally {
            wanted: self.wanted,
            // Each login is either still open or lost once.
            open: logins.saturating_sub(lost),
            lost,
            reconnected: self.reconnected.load(Ordering::Relaxed),
            failed_logins: self.failed_logins.load(Ordering::Relaxed),
            last_failure: self.last_failure.lock().unwrap_or_else(PoisonError::into_inner).clone(),
        }
    }
}

/// The idle connections' figures at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IdleTally {
    pub wanted: u64,
    /// Logged in and not lost.
    pub open: u64,
    pub lost: u64,
    /// Lost ones logged in again.
    pub reconnected: u64,
    pub failed_logins: u64,
    pub last_failure: Option<String>,
}

impl IdleTally {
    /// The statements of the idle connections that the server's
    /// `Questions` counts: the COM_QUIT each one logged in and not lost
    /// sends as the run ends. Their logins and pings it does not count
    /// (COM_PING is one of the commands that skip it, in MySQL and
    /// MariaDB alike); a lost one went without a word.
    pub fn questions_at_end(&self) -> u64 {
        self.open
    }
}

impl std::fmt::Display for IdleTally {
    /// The report's block: after sysbench's, with labels of its own.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let IdleTally { wanted, open, lost, reconnected, failed_logins, .. } = self;
        f.write_str("\nIdle connections:\n")?;
        writeln!(f, "    open:                                {open} of {wanted}")?;
        writeln!(f, "    lost:                                {lost}")?;
        writeln!(f, "    reconnected:                         {reconnected}")?;
        writeln!(f, "    failed logins:                       {failed_logins}")?;
        if let Some(why) = &self.last_failure {
            writeln!(f, "    last failed login:                   {why}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_is_logins_less_losses() {
        let counts = IdleCounts::new(3);
        counts.logged_in(false);
        counts.logged_in(false);
        counts.lost();
        counts.logged_in(true);
        counts.login_failed("too many connections".into());
        let tally = counts.tally();
        assert_eq!(
            tally,
            IdleTally {
                wanted: 3,
                open: 2,
                lost: 1,
                reconnected: 1,
                failed_logins: 1,
                last_failure: Some("too many connections".into())
            }
        );
        assert_eq!(tally.questions_at_end(), 2, "a COM_QUIT from each one still open");
        let text = tally.to_string();
        assert!(text.contains("open:                                2 of 3"), "{text}");
        assert!(text.contains("last failed login:                   too many connections"), "{text}");
    }
}
