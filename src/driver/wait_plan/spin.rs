//! How long a loop looks for answers before it sleeps, wait by wait, as
//! its wait mode says (`wait_plan`): `Brief` a few microseconds, `Spin`
//! for ever (in rounds, so that the loop's other chores get a turn), the
//! others not at all.

use std::time::Duration;

use crate::driver::WaitMode;

/// A gap this long between two looks at the completions of a spin that
/// found nothing means the loop was off its core meanwhile (a look that
/// finds nothing takes well under a microsecond, an interrupt a few).
const PREEMPTED_GAP: Duration = Duration::from_micros(200);
/// `Brief`: how long after its start a wait looks for answers before it
/// sleeps, sending what is queued included: about what a sleep and its
/// wake-up cost the loop's thread, so a miss costs no more than it could
/// save (docs/benchmarking.md#a-brief-look).
pub(crate) const BRIEF_SPIN: Duration = Duration::from_micros(3);
/// `--poll=spin`: how long a spin goes on before the loop's other chores
/// (answering the collector, looking at waits) get a turn.
const SPIN_ROUND: Duration = Duration::from_millis(1);

/// A loop's spinning policy.
#[derive(Debug)]
pub(crate) struct Spinner {
    mode: WaitMode,
}

impl Spinner {
    pub(crate) fn new(mode: WaitMode) -> Self {
        Spinner { mode }
    }

    /// Whether a spin that finds nothing goes on spinning instead of sleeping.
    #[inline]
    pub(crate) fn never_sleeps(&self) -> bool {
        self.mode == WaitMode::Spin
    }

    /// How long a wait may spin; `None`: it sleeps at once.
    #[inline]
    pub(crate) fn spin_for(&self) -> Option<Duration> {
        match self.mode {
            WaitMode::Sleep | WaitMode::OnSocket => None,
            WaitMode::Spin => Some(SPIN_ROUND),
            WaitMode::Brief => Some(BRIEF_SPIN),
        }
    }

    /// A spin that found nothing looked at the completions at `then` and
    /// again at `now`: whether the loop lost its core in between (that
    /// time is not counted as spinning, and a brief look sleeps at once).
    #[inline]
    pub(crate) fn lost_core(then: std::time::Instant, now: std::time::Instant) -> bool {
        now.saturating_duration_since(then) >= PREEMPTED_GAP
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    #[test]
    fn each_mode_spins_as_it_says() {
        assert_eq!(Spinner::new(WaitMode::Sleep).spin_for(), None);
        assert_eq!(Spinner::new(WaitMode::OnSocket).spin_for(), None);
        let brief = Spinner::new(WaitMode::Brief);
        assert!(!brief.never_sleeps());
        assert_eq!(brief.spin_for(), Some(BRIEF_SPIN));
        let spin = Spinner::new(WaitMode::Spin);
        assert!(spin.never_sleeps());
        assert_eq!(spin.spin_for(), Some(SPIN_ROUND));
    }

    #[test]
    fn a_gap_between_looks_is_time_off_the_core() {
        let now = Instant::now();
        assert!(!Spinner::lost_core(now, now + PREEMPTED_GAP - Duration::from_micros(1)));
        assert!(Spinner::lost_core(now, now + PREEMPTED_GAP));
    }
}
