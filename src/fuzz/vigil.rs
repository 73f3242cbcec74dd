//! What a session does when its answer is late, and how a failure stops
//! the sessions where they are.
//!
//! A fuzzed packet gets [`ANSWER_TIMEOUT`](super::campaign::ANSWER_TIMEOUT)
//! to be answered: servers answer malformed packets at once or wait for
//! bytes that never come. But silence is also what a hang looks like, and
//! the session that hung a server is the one still waiting for its answer.
//! So a session whose answer is late asks the control connection to look
//! at the server and waits on until a check that began after it asked has
//! passed (a healthy server is checked in a millisecond or two; then the
//! session gives up on the answer, as before). A hung server fails that
//! check after the deadline, and the failure halts every session where it
//! is: in flight, with what it sent and what it received, the culprit
//! among them. The fuzzing run, its confirmation, minimisation and
//! `fuzz-replay` all wait this way, so a hang is judged by the same
//! deadline throughout.

use std::time::Duration;

use tokio::sync::{watch, Notify};
use tokio::time::Instant;

use super::conn::{FuzzConn, Gone};

/// The control connection's side and the sessions' side of the checks.
#[derive(Debug)]
pub struct Vigil {
    /// A session asks the control connection to look now.
    asked: Notify,
    /// When the last check that passed began.
    passed: watch::Sender<Option<Instant>>,
    /// True once the sessions must stop where they are.
    halt: watch::Sender<bool>,
    /// The longest a late answer is waited for, whatever the checks say:
    /// longer than one check can take.
    longest: Duration,
}

impl Vigil {
    /// For a control connection whose checks take at most `deadline`.
    pub fn new(deadline: Duration) -> Vigil {
        Vigil {
            asked: Notify::new(),
            passed: watch::Sender::new(None),
            halt: watch::Sender::new(false),
            longest: deadline.saturating_mul(2) + Duration::from_secs(1),
        }
    }

    /// Sessions may run again (after a halt).
    pub fn resume(&self) {
        self.halt.send_replace(false);
    }

    /// Every session stops where it is.
    pub fn halt(&self) {
        self.halt.send_replace(true);
    }

    /// Returns once the sessions must stop.
    pub async fn halted(&self) {
        let mut halt = self.halt.subscribe();
        if halt.wait_for(|&halted| halted).await.is_err() {
            std::future::pending::<()>().await;
        }
    }

    /// Asks the control connection to look at the server now.
    pub fn ask(&self) {
        self.asked.notify_one();
    }

    /// The control side: returns once a session asked for a check.
    pub async fn asked(&self) {
        self.asked.notified().await;
    }

    /// The control side: a check that began at `began` passed.
    pub fn check_passed(&self, began: Instant) {
        self.passed.send_replace(Some(began));
    }

    /// Returns once a check that began after `since` has passed, or at
    /// the latest [`longest`](Self::longest) after `since`.
    async fn checked_after(&self, since: Instant) {
        let mut passed = self.passed.subscribe();
        let good = passed.wait_for(|began| began.is_some_and(|b| b >= since));
        let _ = tokio::time::timeout_at(since + self.longest, good).await;
    }
}

/// How long one answer is waited for: the answer timeout from the packet,
/// then, once late, until the control connection has looked.
#[derive(Debug)]
pub struct Patience<'v> {
    deadline: Instant,
    late_since: Option<Instant>,
    vigil: &'v Vigil,
}

impl<'v> Patience<'v> {
    /// `answer` from now.
    pub fn new(answer: Duration, vigil: &'v Vigil) -> Patience<'v> {
        Patience { deadline: Instant::now() + answer, late_since: None, vigil }
    }

    /// When the answer is due (for the writes the exchange makes).
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Reads more from `conn`: [`Gone::Timeout`] once the answer is late
    /// and a check since then found the server well.
    pub async fn fill(&mut self, conn: &mut FuzzConn) -> Result<(), Gone> {
        let since = match self.late_since {
            Some(since) => since,
            None => match conn.fill(self.deadline).await {
                Err(Gone::Timeout) => {
                    let now = Instant::now();
                    self.vigil.ask();
                    *self.late_since.insert(now)
                }
                other => return other,
            },
        };
        tokio::select! {
            // What came wins over a check that passed meanwhile.
            biased;
            filled = conn.fill(since + self.vigil.longest) => filled,
            () = self.vigil.checked_after(since) => Err(Gone::Timeout),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vigil(longest: Duration) -> Vigil {
        Vigil { longest, ..Vigil::new(Duration::ZERO) }
    }

    #[tokio::test]
    async fn a_late_session_waits_for_a_check_begun_after_it_asked() {
        let vigil = vigil(Duration::from_secs(60));
        let since = Instant::now();
        vigil.check_passed(since - Duration::from_millis(1));
        let waiting = vigil.checked_after(since);
        tokio::pin!(waiting);
        assert!(tokio::time::timeout(Duration::from_millis(50), &mut waiting).await.is_err(), "an older check");
        vigil.check_passed(Instant::now());
        assert!(tokio::time::timeout(Duration::from_millis(50), &mut waiting).await.is_ok());
    }

    #[tokio::test]
    async fn without_checks_it_waits_its_longest_only() {
        let vigil = vigil(Duration::from_millis(80));
        let since = Instant::now();
        vigil.checked_after(since).await;
        assert!(since.elapsed() >= Duration::from_millis(80));
        assert_eq!(Vigil::new(Duration::from_secs(2)).longest, Duration::from_secs(5));
    }

    #[tokio::test]
    async fn a_halt_reaches_every_session_until_resumed() {
        let vigil = vigil(Duration::from_secs(1));
        let short = Duration::from_millis(30);
        assert!(tokio::time::timeout(short, vigil.halted()).await.is_err());
        vigil.halt();
        vigil.halted().await;
        vigil.halted().await;
        vigil.resume();
        assert!(tokio::time::timeout(short, vigil.halted()).await.is_err());
    }
}
