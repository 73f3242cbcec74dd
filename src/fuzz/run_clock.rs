//! When a fuzz run ends. Fuzzing stops at `--time`; a failure found
//! before then may take `--fuzz-overtime` more to be confirmed, minimised
//! and saved; at that hard end whatever still waits for the server (a
//! login it never answers, a restart that never comes back, a check) is
//! abandoned, and the run prints its summary and exits. Every wait of the
//! run is also bounded on its own (`--fuzz-deadline`, `--fuzz-restart-wait`),
//! so the hard end is the last resort, not the rule.

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

/// The instants a run keeps to.
#[derive(Debug, Clone, Copy)]
pub struct RunClock {
    pub started: Instant,
    /// `--time` from the start: fuzzing stops; `None` without a limit.
    pub fuzz_until: Option<Instant>,
    /// `--time` plus `--fuzz-overtime`: the run stops.
    pub hard_end: Option<Instant>,
}

impl RunClock {
    /// A run that starts now.
    pub fn start(time: Option<Duration>, overtime: Duration) -> RunClock {
        let started = Instant::now();
        let fuzz_until = time.map(|t| started + t);
        RunClock { started, fuzz_until, hard_end: fuzz_until.map(|at| at + overtime) }
    }

    /// Runs `work` unless the hard end comes first; `None` then (and
    /// `work` is dropped where it was waiting).
    pub async fn bounded<T>(&self, work: impl Future<Output = T>) -> Option<T> {
        within(self.hard_end, work).await
    }

    /// Runs `work`, which stops by itself at the hard end, unless it is
    /// still running `grace` after it (a wait without a bound: a bug);
    /// `None` then.
    pub async fn abandoned_after<T>(&self, grace: Duration, work: impl Future<Output = T>) -> Option<T> {
        within(self.hard_end.map(|end| end + grace), work).await
    }
}

/// Runs `work` unless `end` comes first; `None` then.
pub async fn within<T>(end: Option<Instant>, work: impl Future<Output = T>) -> Option<T> {
    match end {
        Some(end) => tokio::time::timeout_at(end, work).await.ok(),
        None => Some(work.await),
    }
}

/// Returns at `end`; never without one.
pub async fn sleep_until_end(end: Option<Instant>) {
    match end {
        Some(end) => tokio::time::sleep_until(end).await,
        None => std::future::pending().await,
    }
}

/// Whether `end` has passed.
pub fn past(end: Option<Instant>) -> bool {
    end.is_some_and(|end| Instant::now() >= end)
}

/// What a failure's reproducer says when the run's time ran out first.
pub const OUT_OF_TIME: &str = "the run's time (--time, then --fuzz-overtime) ran out";

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_hard_end_cuts_what_still_waits() {
        let clock = RunClock::start(Some(Duration::from_millis(20)), Duration::from_millis(30));
        assert!(clock.hard_end.unwrap() - clock.fuzz_until.unwrap() == Duration::from_millis(30));
        assert_eq!(clock.bounded(async { 7 }).await, Some(7));
        assert_eq!(clock.bounded(std::future::pending::<()>()).await, None);
        assert!(past(clock.hard_end));
        let endless = RunClock::start(None, Duration::from_secs(1));
        assert_eq!(endless.hard_end, None);
        assert!(!past(endless.hard_end));
        assert_eq!(endless.bounded(async { 1 }).await, Some(1));
    }
}
