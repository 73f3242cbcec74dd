//! How long a loop spins for answers before it sleeps, wait by wait, as
//! its wait mode says (`wait_plan`).
//!
//! A loop that sleeps pays a wake-up per answer it waits for: at one
//! connection, the whole of the client's added latency (tens of
//! microseconds on a VM). `adaptive` spins instead for as long as answers have
//! been taking, up to [`LONGEST_SPIN`]: its window starts at
//! [`SHORTEST_SPIN`] and grows to a quarter more than the wait for an
//! answer that came after it, so one connection to a server answering in
//! 200 µs soon spins through each wait. Answers slower than the longest
//! spin are not worth it: after [`SPIN_MISSES`] of them in a row the loop
//! sleeps at once, until an answer comes within reach again. And it never
//! spins while another task wants its core ([`BusyCore`]): there a
//! sleeping loop, woken by its answer, gets the core sooner than a
//! spinning one gets its turn back.

use std::time::{Duration, Instant};

use super::busy_core::BusyCore;
use super::WaitMode;

/// The window an adaptive loop starts with, and goes back to when answers
/// are out of reach.
const SHORTEST_SPIN: Duration = Duration::from_micros(30);
/// The longest an adaptive loop spins for an answer: longer than a local
/// server's answer or a round trip within a data centre, short enough
/// that a loop waiting on slow queries soon gives up.
const LONGEST_SPIN: Duration = Duration::from_millis(1);
/// Answers in a row slower than [`LONGEST_SPIN`] after which the loop
/// sleeps without spinning.
const SPIN_MISSES: u32 = 8;
/// A gap this long between two looks at the completions of a spin that
/// found nothing means the loop was off its core meanwhile (a look that
/// finds nothing takes well under a microsecond, an interrupt a few).
const PREEMPTED_GAP: Duration = Duration::from_micros(200);
/// `Brief`: how long after its start a wait looks for answers before it
/// sleeps, sending what is queued included: about what a sleep and its
/// wake-up cost the loop's thread, so a miss costs no more than it could
/// save (docs/benchmarking.md#a-brief-look).
pub(super) const BRIEF_SPIN: Duration = Duration::from_micros(3);
/// `--poll=spin`: how long a spin goes on before the loop's other chores
/// (answering the collector, looking at waits) get a turn.
const SPIN_ROUND: Duration = Duration::from_millis(1);

/// A loop's spinning policy.
#[derive(Debug)]
pub(super) struct Spinner {
    mode: WaitMode,
    /// `adaptive`: how long the next spin may last.
    window: Duration,
    /// `adaptive`: answers in a row that came after [`LONGEST_SPIN`]
    /// (at most [`SPIN_MISSES`]).
    misses: u32,
    /// `adaptive`: whether others want the core.
    core: Option<BusyCore>,
}

impl Spinner {
    /// Made on the loop's thread, whose core it watches.
    pub(super) fn new(mode: WaitMode) -> Self {
        let core = (mode == WaitMode::Adaptive).then(|| BusyCore::new(Instant::now()));
        Spinner { mode, window: SHORTEST_SPIN, misses: 0, core }
    }

    /// Whether every wait sleeps (no clock is read for the spinner then).
    #[inline]
    pub(super) fn never_spins(&self) -> bool {
        matches!(self.mode, WaitMode::Sleep | WaitMode::OnSocket)
    }

    /// Whether a spin that finds nothing goes on spinning instead of sleeping.
    #[inline]
    pub(super) fn never_sleeps(&self) -> bool {
        self.mode == WaitMode::Spin
    }

    /// How long the wait starting at `now` may spin; `None`: it sleeps at once.
    #[inline]
    pub(super) fn spin_for(&mut self, now: Instant) -> Option<Duration> {
        match self.mode {
            WaitMode::Sleep | WaitMode::OnSocket => None,
            WaitMode::Spin => Some(SPIN_ROUND),
            WaitMode::Brief => Some(BRIEF_SPIN),
            WaitMode::Adaptive => {
                let quiet = self.core.as_mut().map_or(true, |core| core.may_spin(now));
                (quiet && self.misses < SPIN_MISSES).then_some(self.window)
            }
        }
    }

    /// A spin that found nothing looked at the completions at `then`
    /// and again at `now`: whether the loop lost its core in between, and
    /// then (`adaptive`) stops spinning until its core is quiet again.
    #[inline]
    pub(super) fn lost_core(&mut self, then: Instant, now: Instant) -> bool {
        if now.saturating_duration_since(then) < PREEMPTED_GAP {
            return false;
        }
        if let Some(core) = self.core.as_mut() {
            core.preempted(now);
        }
        true
    }

    /// A spin found an answer.
    #[inline]
    pub(super) fn found(&mut self) {
        self.misses = 0;
    }

    /// A wait for answers that slept (after a spin that missed, or none)
    /// ended `waited` after it began: the window grows to reach such an
    /// answer, or, when it is out of reach, the miss counts.
    pub(super) fn answered_after(&mut self, waited: Duration) {
        if self.mode != WaitMode::Adaptive {
            return;
        }
        if waited <= LONGEST_SPIN {
            self.misses = 0;
            self.window = self.window.max(waited.saturating_add(waited / 4).min(LONGEST_SPIN));
            return;
        }
        self.misses = self.misses.saturating_add(1).min(SPIN_MISSES);
        if self.misses == SPIN_MISSES {
            self.window = SHORTEST_SPIN;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Duration = Duration::from_micros(1);

    /// An adaptive spinner that does not watch its core.
    fn adaptive() -> Spinner {
        Spinner { mode: WaitMode::Adaptive, window: SHORTEST_SPIN, misses: 0, core: None }
    }

    #[test]
    fn the_window_grows_to_reach_the_answers() {
        let mut spinner = adaptive();
        let now = Instant::now();
        assert_eq!(spinner.spin_for(now), Some(SHORTEST_SPIN));
        spinner.answered_after(240 * US);
        assert_eq!(spinner.spin_for(now), Some(300 * US), "a quarter more than the answer took");
        spinner.answered_after(100 * US);
        assert_eq!(spinner.spin_for(now), Some(300 * US), "a quicker answer does not shrink it");
        spinner.answered_after(LONGEST_SPIN - US);
        assert_eq!(spinner.spin_for(now), Some(LONGEST_SPIN), "never past the longest");
    }

    #[test]
    fn answers_out_of_reach_stop_the_spinning_until_one_is_within_reach() {
        let mut spinner = adaptive();
        let now = Instant::now();
        spinner.answered_after(400 * US);
        for _ in 0..SPIN_MISSES - 1 {
            spinner.answered_after(5 * LONGEST_SPIN);
            assert_eq!(spinner.spin_for(now), Some(500 * US));
        }
        spinner.answered_after(5 * LONGEST_SPIN);
        assert_eq!(spinner.spin_for(now), None, "{SPIN_MISSES} slow answers in a row");
        spinner.answered_after(5 * LONGEST_SPIN);
        assert_eq!(spinner.spin_for(now), None);
        spinner.answered_after(20 * US);
        assert_eq!(spinner.spin_for(now), Some(SHORTEST_SPIN), "back, from the shortest window");
        spinner.answered_after(5 * LONGEST_SPIN);
        spinner.found();
        assert_eq!(spinner.misses, 0, "a found answer clears the misses");
    }

    #[test]
    fn a_spin_off_its_core_stops_the_adaptive_spinning() {
        let now = Instant::now();
        let mut spinner = Spinner::new(WaitMode::Adaptive);
        assert!(spinner.spin_for(now).is_some());
        assert!(!spinner.lost_core(now, now + PREEMPTED_GAP - US));
        assert!(spinner.spin_for(now + PREEMPTED_GAP).is_some());
        assert!(spinner.lost_core(now, now + PREEMPTED_GAP));
        assert_eq!(spinner.spin_for(now + PREEMPTED_GAP), None, "held back");
        let mut spin = Spinner::new(WaitMode::Spin);
        assert!(spin.lost_core(now, now + PREEMPTED_GAP));
        assert!(spin.spin_for(now + PREEMPTED_GAP).is_some(), "--poll=spin spins on");
    }

    #[test]
    fn sleep_and_spin_are_obeyed_as_given() {
        let now = Instant::now();
        let mut sleep = Spinner::new(WaitMode::Sleep);
        assert!(sleep.never_spins() && sleep.spin_for(now).is_none() && sleep.core.is_none());
        let mut spin = Spinner::new(WaitMode::Spin);
        for _ in 0..SPIN_MISSES + 1 {
            spin.answered_after(5 * LONGEST_SPIN);
        }
        assert_eq!(spin.spin_for(now), Some(SPIN_ROUND));
        assert!(spin.never_sleeps() && spin.core.is_none(), "--poll=spin spins whatever its core runs");
        assert!(Spinner::new(WaitMode::Adaptive).core.is_some());
    }

    /// A brief spin keeps its few microseconds whatever the answers take:
    /// it never grows, and slow answers do not stop it (a slept wait always
    /// takes longer than the spin, so counting misses would end it for good).
    #[test]
    fn a_brief_spin_stays_brief() {
        let now = Instant::now();
        let mut brief = Spinner::new(WaitMode::Brief);
        assert!(!brief.never_spins() && !brief.never_sleeps() && brief.core.is_none());
        assert_eq!(brief.spin_for(now), Some(BRIEF_SPIN));
        brief.answered_after(240 * US);
        assert_eq!(brief.spin_for(now), Some(BRIEF_SPIN), "it does not grow");
        for _ in 0..SPIN_MISSES + 1 {
            brief.answered_after(5 * LONGEST_SPIN);
        }
        assert_eq!(brief.spin_for(now), Some(BRIEF_SPIN), "slow answers do not end it");
        assert!(BRIEF_SPIN < SHORTEST_SPIN);
    }
}
