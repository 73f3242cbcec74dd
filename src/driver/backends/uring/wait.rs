//! How the loop waits on its ring for completions: a spin as its wait mode
//! says, then a sleep, for a batch of answers while batches fill
//! ([`BatchGate`](super::batch_gate::BatchGate)), or until the next
//! `--rate` arrival or task timer.

use std::time::{Duration, Instant};

use io_uring::types;

use super::ring::{is_transient, timespec};
use super::UringIo;
use crate::driver::event_loop::loop_io::WaitFor;
use crate::driver::wait_plan::spin::Spinner;
use crate::driver::{DriverError, LoopOp, PUBLISH_TICK};

/// How long a wait for a batch of completions may hold back the first one.
pub(super) const BATCH_WAIT_US: u32 = 500;
/// Busy connections per completion waited for, and the most waited for.
/// Waking when half of the busy connections have answered keeps the other
/// half working at the server while the loop handles the first
/// (docs/benchmarking.md#batch-waits).
const CONNS_PER_WAKEUP: usize = 2;
pub(super) const MAX_BATCH: usize = 32;

impl UringIo {
    /// Waits for work: a look only if the loop says so, else a spin first,
    /// as the loop's wait mode says ([`Spinner`]), then a sleep. The spin's
    /// window counts from the start of the wait, the submission included;
    /// its time counts as spinning from the end of the first look (which
    /// submits: sending is work, not spinning) to the last (which found the
    /// work), less the gaps in which it was seen off its core. It stops at
    /// once for `--rate` arrivals to serve.
    pub(super) fn wait_for(&mut self, wait: &WaitFor) -> Result<(), DriverError> {
        if wait.look_only {
            return self.look_once();
        }
        let Some(limit) = self.spinner.spin_for() else { return self.sleep(wait) };
        let start = Instant::now();
        let (mut looked, mut off_core) = (start, Duration::ZERO);
        let mut submitted = None;
        loop {
            self.look_once()?;
            let now = Instant::now();
            let spinning_since = *submitted.get_or_insert(now);
            let spun = now - start;
            let found = !self.ring.completion().is_empty();
            // The first look submits what is queued: it may take long.
            let lost = !found && looked != start && Spinner::lost_core(looked, now);
            if lost {
                off_core += now - looked;
            }
            looked = now;
            if found || spun >= limit || wait.arrivals_waiting || (lost && !self.spinner.never_sleeps()) {
                // Time off the core was no spinning.
                self.spun += (now - spinning_since).saturating_sub(off_core);
                return if found || self.spinner.never_sleeps() { Ok(()) } else { self.sleep(wait) };
            }
            std::hint::spin_loop();
        }
    }

    /// How many completions a sleep waits for: the quick ones just queued,
    /// plus one per few busy connections while batches fill
    /// ([`BatchGate`](super::batch_gate::BatchGate)); never more than can
    /// come.
    pub(super) fn wanted(&self) -> usize {
        let batch = if self.batch_gate.open() { (self.recvs / CONNS_PER_WAKEUP).clamp(1, MAX_BATCH) } else { 1 };
        (self.quick_queued + batch).min(self.ops.max(1))
    }

    fn sleep(&mut self, wait: &WaitFor) -> Result<(), DriverError> {
        if let Some(at) = wait.wake_at {
            return self.sleep_until(at, wait.now_ns);
        }
        let want = self.wanted();
        let batching = want > self.quick_queued + 1;
        let tick = timespec(PUBLISH_TICK);
        let short = timespec(Duration::from_micros(u64::from(BATCH_WAIT_US)));
        let args = types::SubmitArgs::new();
        let args = match (batching, self.min_timeout) {
            (true, true) => args.timespec(&tick).min_wait_usec(BATCH_WAIT_US),
            (true, false) => args.timespec(&short),
            (false, _) => args.timespec(&tick),
        };
        let result = self.ring.submitter().submit_with_args(want, &args);
        self.quick_queued = 0;
        self.batch_gate.after_sleep(batching, want, self.ring.completion().len());
        self.waited(result)
    }

    /// A timer is set (a `--rate` arrival, a task's pause): sleeps until the
    /// first completion or `at` (ns on the loop's clock), whichever comes
    /// first; no batching, since an arrival's latency counts from its due
    /// time.
    fn sleep_until(&mut self, at: u64, now: u64) -> Result<(), DriverError> {
        let pause = Duration::from_nanos(at.saturating_sub(now)).min(PUBLISH_TICK);
        let timeout = timespec(pause);
        let args = types::SubmitArgs::new().timespec(&timeout);
        let result = self.ring.submitter().submit_with_args(self.quick_queued + 1, &args);
        self.quick_queued = 0;
        self.waited(result)
    }

    /// Submits what is queued and collects finished work, never blocking.
    pub(super) fn look_once(&mut self) -> Result<(), DriverError> {
        let sq = self.ring.submission();
        // Deferred or cooperative task work (completions) runs only in an
        // `io_uring_enter`, which the kernel asks for with the TASKRUN flag.
        let pending = !sq.is_empty() || sq.taskrun();
        drop(sq);
        if !pending {
            return Ok(());
        }
        // With TASKRUN set, `submit` enters with GETEVENTS, which runs it.
        let result = self.ring.submit();
        self.quick_queued = 0;
        result.map(drop).or_else(|e| self.tolerated(e, LoopOp::SubmitToRing))
    }

    fn waited(&mut self, result: std::io::Result<usize>) -> Result<(), DriverError> {
        result.map(drop).or_else(|e| self.tolerated(e, LoopOp::WaitOnRing))
    }

    /// An `io_uring_enter` that was interrupted or timed out did its work.
    fn tolerated(&self, e: std::io::Error, op: LoopOp) -> Result<(), DriverError> {
        if is_transient(&e) || e.raw_os_error() == Some(libc::ETIME) {
            return Ok(());
        }
        Err(self.ring_error(op, e))
    }
}
