//! What the loops spent: their threads' CPU time, how much of it went to
//! spinning, how long they waited for a core, and how hard they worked
//! ([`LoopUsage::load`]), for the report's client lines and the capacity
//! search's verdict.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

/// A loop's work over its active span, once it has ended.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SpanWork {
    /// CPU time plus run delay over the span.
    pub busy: Duration,
    /// CPU time alone (to take out the share of it that spinning was).
    pub cpu: Duration,
    pub span: Duration,
}

/// How hard the loops worked ([`LoopUsage::load`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoopLoad {
    /// Working or wanting to, 0 to 1.
    pub busy_share: f64,
    /// Time ready to run while another task had the core.
    pub run_delay: Duration,
    /// That time's share, 0 to 1.
    pub core_wait_share: f64,
}

/// What the loops spent, each adding its share as it ends: their threads'
/// CPU time, how much of it went to spinning for answers, how long they
/// waited for a core while ready to run, and how long they lived.
#[derive(Debug, Default)]
pub struct LoopUsage {
    cpu_ns: AtomicU64,
    spinning_ns: AtomicU64,
    /// Loops that spun at all (`--poll=spin`, or a script's brief looks).
    spinning_loops: AtomicUsize,
    /// Time ready to run while another task had the core (the run queue).
    run_delay_ns: AtomicU64,
    /// The loop threads' lives, summed.
    lived_ns: AtomicU64,
}

impl LoopUsage {
    /// The loop threads' CPU time (user and system).
    pub fn cpu(&self) -> Duration {
        Duration::from_nanos(self.cpu_ns.load(Ordering::Relaxed))
    }

    /// Time spent spinning for completions: a loop that spins owns its
    /// core, so this is CPU time too, spent waiting rather than working.
    pub fn spinning(&self) -> Duration {
        Duration::from_nanos(self.spinning_ns.load(Ordering::Relaxed))
    }

    /// Whether any loop spun.
    pub fn spun(&self) -> bool {
        self.spinning_loops.load(Ordering::Relaxed) > 0
    }

    /// How hard the loops worked: the share of the time they were working
    /// or wanted to (CPU time less spinning, as a spinning loop has
    /// nothing to do, plus time ready to run without a core) and the share
    /// they waited for a core. Near 1, the client itself is the limit: an
    /// event that arrives waits for the loop, not the server. Counted over
    /// the loops' active spans (from their first event to the first
    /// refused, `RunControl::span_work`) where they have them, the share
    /// of their CPU time spent spinning taken out as over their lives;
    /// else over their lives. `None` before any loop has ended.
    pub fn load(&self, span_work: Option<SpanWork>) -> Option<LoopLoad> {
        let spin_share = self.spinning().as_secs_f64() / self.cpu().as_secs_f64().max(f64::MIN_POSITIVE);
        if let Some(work) = span_work {
            let span = work.span.as_secs_f64();
            let spun = work.cpu.as_secs_f64() * spin_share.min(1.0);
            let run_delay = work.busy.saturating_sub(work.cpu);
            return Some(LoopLoad {
                busy_share: ((work.busy.as_secs_f64() - spun).max(0.0) / span).min(1.0),
                run_delay,
                core_wait_share: (run_delay.as_secs_f64() / span).min(1.0),
            });
        }
        let lived = self.lived_ns.load(Ordering::Relaxed);
        let working = self.cpu().saturating_sub(self.spinning()).as_nanos() as u64;
        let wanting = self.run_delay_ns.load(Ordering::Relaxed);
        (lived > 0).then(|| LoopLoad {
            busy_share: ((working + wanting) as f64 / lived as f64).min(1.0),
            run_delay: self.run_delay(),
            core_wait_share: (wanting as f64 / lived as f64).min(1.0),
        })
    }

    /// Time the loops were ready to run while another task had their core.
    pub fn run_delay(&self) -> Duration {
        Duration::from_nanos(self.run_delay_ns.load(Ordering::Relaxed))
    }

    pub(crate) fn add_cpu(&self, spent: Duration) {
        self.cpu_ns.fetch_add(spent.as_nanos() as u64, Ordering::Relaxed);
    }

    /// A loop thread's life and its run delay, once, as it ends.
    pub(crate) fn add_life(&self, lived: Duration, run_delay: Option<Duration>) {
        self.lived_ns.fetch_add(lived.as_nanos() as u64, Ordering::Relaxed);
        let delay = run_delay.map_or(0, |d| d.as_nanos() as u64);
        self.run_delay_ns.fetch_add(delay, Ordering::Relaxed);
    }

    /// A spinning loop's time spinning, once, as it ends.
    pub(crate) fn add_spinning(&self, spun: Duration) {
        self.spinning_ns.fetch_add(spun.as_nanos() as u64, Ordering::Relaxed);
        self.spinning_loops.fetch_add(1, Ordering::Relaxed);
    }
}

/// The calling thread's CPU time so far.
pub(crate) fn thread_cpu_time() -> Option<Duration> {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is valid for the write.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0).then(|| Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32))
}
