//! Whether another task wants an adaptive loop's core, so that it sleeps
//! instead of spinning while one does.
//!
//! `--poll=auto` picks spinning for a loop whose core the server may not
//! use, but other work may still run there (a build, another benchmark).
//! A spinning loop then gets only its fair share of the core, and an
//! answer that comes while the other task has its turn waits out that
//! turn, where a sleeping loop woken by its answer preempts the other task
//! at once (docs/benchmarking.md#the-busy-core-watch).
//!
//! The sign is the loop thread's own run delay: time it was ready to run
//! while another task had its core (`/proc/thread-self/schedstat`, the
//! second field; the count of involuntary context switches where that file
//! is missing). A spinning thread is always ready, so its delay over a
//! window is the share of the core others took. Past [`BUSY_PERMILLE`] of
//! a [`WINDOW`], or as soon as a spin finds itself off its core for a
//! while (the loop's clock jumps between two looks at its completions),
//! the loop sleeps for a hold ([`FIRST_HOLD`], doubling up to
//! [`LONGEST_HOLD`] while the core stays busy), then spins again for a
//! window to see (the first window, from the loop's start, is such a
//! probe). Reading the file costs a few microseconds once per window, never
//! per query.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::time::{Duration, Instant};

/// How long the loop spins between two looks at its run delay.
const WINDOW: Duration = Duration::from_millis(20);
/// The share of a window (in thousandths) others may take of the core
/// before it counts as busy: kernel threads take well under 1%, a build
/// job at nice 10 about 10%.
const BUSY_PERMILLE: u64 = 20;
/// Without a run delay to read: involuntary context switches in a window
/// that make the core busy (a task of equal weight takes the core about
/// every 3 ms).
const BUSY_PREEMPTIONS: u64 = 2;
const FIRST_HOLD: Duration = Duration::from_millis(250);
const LONGEST_HOLD: Duration = Duration::from_secs(4);

/// What the loop thread has been denied of its core so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Denied {
    /// Time ready to run while another task ran (ns), when the kernel says.
    pub(super) run_delay_ns: Option<u64>,
    /// Involuntary context switches.
    pub(super) preempted: u64,
}

/// Whether others wanted the core during a window of `window` in which
/// the thread went from `before` to `after`.
fn busy(window: Duration, before: Denied, after: Denied) -> bool {
    match (before.run_delay_ns, after.run_delay_ns) {
        (Some(b), Some(a)) => {
            let window_ns = u64::try_from(window.as_nanos()).unwrap_or(u64::MAX);
            a.saturating_sub(b).saturating_mul(1000) >= window_ns.saturating_mul(BUSY_PERMILLE)
        }
        _ => after.preempted.saturating_sub(before.preempted) >= BUSY_PREEMPTIONS,
    }
}

/// Where the loop is in its watch of the core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CorePhase {
    /// Spinning allowed; judged at `since + WINDOW` against `base`. `hold`
    /// is the sleep a busy verdict brings.
    Spinning { since: Instant, base: Denied, hold: Duration },
    /// Sleeping until `until`, after a hold of `hold`.
    Holding { until: Instant, hold: Duration },
}

impl CorePhase {
    fn start(now: Instant, sample: Denied) -> Self {
        CorePhase::Spinning { since: now, base: sample, hold: FIRST_HOLD }
    }

    /// Whether a look is due at `now`.
    fn due(&self, now: Instant) -> bool {
        match *self {
            CorePhase::Spinning { since, .. } => now.saturating_duration_since(since) >= WINDOW,
            CorePhase::Holding { until, .. } => now >= until,
        }
    }

    /// The state after a look at `now` that read `sample`: a busy window
    /// starts a hold (twice the last one when that window was a probe
    /// after a hold), a quiet one another window; a hold ends in a probe.
    fn next(self, now: Instant, sample: Denied) -> Self {
        match self {
            CorePhase::Spinning { since, base, hold } if busy(now.saturating_duration_since(since), base, sample) => {
                CorePhase::Holding { until: now + hold, hold }
            }
            CorePhase::Spinning { .. } => CorePhase::start(now, sample),
            CorePhase::Holding { hold, .. } => {
                CorePhase::Spinning { since: now, base: sample, hold: hold.saturating_mul(2).min(LONGEST_HOLD) }
            }
        }
    }

    /// The state after the loop lost its core in the middle of a spin:
    /// a hold, as after a busy window.
    fn preempted(self, now: Instant) -> Self {
        match self {
            CorePhase::Spinning { hold, .. } => CorePhase::Holding { until: now + hold, hold },
            holding => holding,
        }
    }

    fn may_spin(&self) -> bool {
        matches!(self, CorePhase::Spinning { .. })
    }
}

/// One loop thread's watch of its core. Made on that thread: the files it
/// reads are the thread's own.
#[derive(Debug)]
pub(super) struct BusyCore {
    schedstat: Option<File>,
    watch: CorePhase,
}

impl BusyCore {
    pub(super) fn new(now: Instant) -> Self {
        let schedstat = File::open("/proc/thread-self/schedstat").ok();
        let watch = CorePhase::start(now, denied(schedstat.as_ref()));
        BusyCore { schedstat, watch }
    }

    /// Whether the loop may spin now; looks at its run delay when a look
    /// is due (once per window).
    #[inline]
    pub(super) fn may_spin(&mut self, now: Instant) -> bool {
        if self.watch.due(now) {
            self.watch = self.watch.next(now, denied(self.schedstat.as_ref()));
        }
        self.watch.may_spin()
    }

    /// The loop was off its core for a while in the middle of a spin:
    /// another task had it, no need to wait for the window's end to know.
    pub(super) fn preempted(&mut self, now: Instant) {
        self.watch = self.watch.preempted(now);
    }
}

/// What the calling thread has been denied of its core so far.
fn denied(schedstat: Option<&File>) -> Denied {
    Denied { run_delay_ns: schedstat.and_then(run_delay_ns), preempted: involuntary_switches() }
}

/// The calling thread's run delay so far (its time ready to run without a
/// core), where the kernel keeps schedstat.
pub(super) fn own_run_delay() -> Option<Duration> {
    let file = File::open("/proc/thread-self/schedstat").ok()?;
    run_delay_ns(&file).map(Duration::from_nanos)
}

/// The second field of `/proc/thread-self/schedstat` ("run_ns delay_ns
/// slices"), read again from its start.
fn run_delay_ns(file: &File) -> Option<u64> {
    let mut buf = [0u8; 96];
    let n = file.read_at(&mut buf, 0).ok()?;
    let text = std::str::from_utf8(buf.get(..n)?).ok()?;
    text.split_ascii_whitespace().nth(1)?.parse().ok()
}

fn involuntary_switches() -> u64 {
    // SAFETY: an all-zero rusage is a valid value of the plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is valid for the write.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) };
    if rc == 0 {
        u64::try_from(usage.ru_nivcsw).unwrap_or(0)
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    fn delayed(ns: u64) -> Denied {
        Denied { run_delay_ns: Some(ns), preempted: 0 }
    }

    #[test]
    fn a_core_is_busy_once_others_take_a_fiftieth_of_a_window() {
        let w = 20 * MS;
        assert!(!busy(w, delayed(1_000), delayed(1_000)), "nobody else ran");
        assert!(!busy(w, delayed(0), delayed(399_999)), "kernel threads now and then");
        assert!(busy(w, delayed(0), delayed(400_000)));
        assert!(busy(w, delayed(5_000_000), delayed(15_000_000)), "a task of equal weight takes half");
        assert!(!busy(w, delayed(9), delayed(3)), "a counter that went back is no delay");
    }

    #[test]
    fn without_a_run_delay_involuntary_switches_decide() {
        let switches = |n| Denied { run_delay_ns: None, preempted: n };
        assert!(!busy(20 * MS, switches(10), switches(11)));
        assert!(busy(20 * MS, switches(10), switches(12)));
        assert!(busy(20 * MS, delayed(0), switches(12)), "the file went away meanwhile");
    }

    #[test]
    fn a_busy_window_holds_the_spinning_back_doubling_while_it_stays_busy() {
        let t0 = Instant::now();
        let mut watch = CorePhase::start(t0, delayed(0));
        assert!(watch.may_spin() && !watch.due(t0 + 19 * MS) && watch.due(t0 + WINDOW));
        watch = watch.next(t0 + WINDOW, delayed(10_000_000));
        assert_eq!(watch, CorePhase::Holding { until: t0 + WINDOW + FIRST_HOLD, hold: FIRST_HOLD });
        assert!(!watch.may_spin() && !watch.due(t0 + WINDOW + FIRST_HOLD - MS));
        let probe_at = t0 + WINDOW + FIRST_HOLD;
        watch = watch.next(probe_at, delayed(11_000_000));
        assert!(watch.may_spin(), "a hold ends in a probe");
        watch = watch.next(probe_at + WINDOW, delayed(21_000_000));
        assert_eq!(watch, CorePhase::Holding { until: probe_at + WINDOW + 2 * FIRST_HOLD, hold: 2 * FIRST_HOLD });
        let mut at = probe_at + WINDOW + 2 * FIRST_HOLD;
        for _ in 0..10 {
            watch = watch.next(at, delayed(0)).next(at + WINDOW, delayed(u64::MAX));
            let CorePhase::Holding { until, hold } = watch else { panic!("{watch:?}") };
            assert!(hold <= LONGEST_HOLD);
            at = until;
        }
        assert!(matches!(watch, CorePhase::Holding { hold: LONGEST_HOLD, .. }));
    }

    #[test]
    fn a_spin_that_lost_its_core_holds_at_once() {
        let t0 = Instant::now();
        let watch = CorePhase::start(t0, delayed(0)).preempted(t0 + MS);
        assert_eq!(watch, CorePhase::Holding { until: t0 + MS + FIRST_HOLD, hold: FIRST_HOLD });
        assert_eq!(watch.preempted(t0 + 2 * MS), watch, "a hold goes on as it was");
        let probe = watch.next(t0 + MS + FIRST_HOLD, delayed(0));
        let again = probe.preempted(t0 + 2 * MS + FIRST_HOLD);
        assert_eq!(again, CorePhase::Holding { until: t0 + 2 * MS + 3 * FIRST_HOLD, hold: 2 * FIRST_HOLD }, "doubled");
    }

    #[test]
    fn a_quiet_probe_spins_on_and_forgets_the_holds() {
        let t0 = Instant::now();
        let watch = CorePhase::Holding { until: t0, hold: LONGEST_HOLD };
        let watch = watch.next(t0, delayed(100)).next(t0 + WINDOW, delayed(200));
        assert_eq!(watch, CorePhase::Spinning { since: t0 + WINDOW, base: delayed(200), hold: FIRST_HOLD });
        let busy_again = watch.next(t0 + 2 * WINDOW, delayed(20_000_000));
        assert_eq!(busy_again, CorePhase::Holding { until: t0 + 2 * WINDOW + FIRST_HOLD, hold: FIRST_HOLD });
    }

    /// The real signal: this test's thread spins beside a hog pinned to
    /// the same core, and sees the core busy; the file is there on this
    /// kernel.
    #[test]
    fn a_thread_spinning_beside_a_hog_sees_its_core_busy() {
        let cpu = crate::driver::allowed_cpus().and_then(|cpus| cpus.last().copied()).unwrap();
        let pin = move || core_affinity::set_for_current(core_affinity::CoreId { id: cpu });
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let hog_stop = stop.clone();
        let hog = std::thread::spawn(move || {
            pin();
            while !hog_stop.load(std::sync::atomic::Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        });
        assert!(pin());
        let file = File::open("/proc/thread-self/schedstat").ok();
        let (start, before) = (Instant::now(), denied(file.as_ref()));
        assert!(before.run_delay_ns.is_some(), "{before:?}");
        let mut watch = BusyCore::new(start);
        assert!(watch.may_spin(start), "the first window is a probe");
        while start.elapsed() < 10 * WINDOW {
            std::hint::spin_loop();
        }
        let after = denied(file.as_ref());
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        hog.join().unwrap();
        assert!(busy(start.elapsed(), before, after), "{before:?} {after:?}");
        assert!(!watch.may_spin(Instant::now()), "the watch holds the spinning back");
    }
}
