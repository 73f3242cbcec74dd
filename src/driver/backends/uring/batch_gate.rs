//! Whether a sleeping loop waits for a batch of answers or wakes at the
//! first.
//!
//! A loop with many busy connections sleeps until about half of them have
//! answered (or `BATCH_WAIT_US` has passed), which saves it a
//! wake-up per answer. That pays only while answers keep coming: when most
//! of the busy connections are held in the server (a row lock that another
//! of the loop's connections holds, `SELECT SLEEP()`, a long query), the
//! batch does not fill, and the wait holds back the one answer the others
//! are waiting for, which costs a contended workload most of its rate,
//! while the built-in tests' batches nearly always fill
//! (docs/benchmarking.md#the-batch-gate has the figures).
//!
//! So a batch wait that ends with fewer completions than it wanted turns
//! batching off for a number of sleeps, doubled each time a batch falls
//! short again, and halved by [`FILLS_TO_SHORTEN`] batches in a row that
//! fill.

/// Sleeps without batching after the first batch that fell short.
const FIRST_PAUSE: u32 = 64;
/// The most sleeps batching stays off (a few seconds at the wake-up rates
/// of a contended run), after which it is tried again.
const LONGEST_PAUSE: u32 = 1 << 16;
/// Batches that must fill in a row to halve the pause: a workload whose
/// batches fill most of the time but not nearly always (sysbench-tpcc:
/// one in 16 fell short, each holding a lock for the batch time) keeps
/// batching off.
const FILLS_TO_SHORTEN: u32 = 256;

/// The loop's record of how its batch waits went.
#[derive(Debug, Default)]
pub(super) struct BatchGate {
    /// Sleeps left before batching is tried again.
    paused_for: u32,
    /// The pause the next batch that falls short starts.
    pause: u32,
    /// Batches filled since one fell short or the pause was halved.
    filled: u32,
}

impl BatchGate {
    /// Whether the next sleep may wait for a batch.
    pub(super) fn open(&self) -> bool {
        self.paused_for == 0
    }

    /// After a sleep that waited for `wanted` completions (a batch when
    /// `batched`) and found `arrived` on the queue when it woke.
    pub(super) fn after_sleep(&mut self, batched: bool, wanted: usize, arrived: usize) {
        if !batched {
            self.paused_for = self.paused_for.saturating_sub(1);
        } else if arrived >= wanted {
            self.filled += 1;
            if self.filled >= FILLS_TO_SHORTEN {
                self.pause /= 2;
                self.filled = 0;
            }
        } else {
            self.filled = 0;
            self.pause = self.pause.saturating_mul(2).clamp(FIRST_PAUSE, LONGEST_PAUSE);
            self.paused_for = self.pause;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sleeps without batching until the gate opens again.
    fn sleeps_paused(gate: &mut BatchGate) -> u32 {
        let mut sleeps = 0;
        while !gate.open() {
            gate.after_sleep(false, 1, 1);
            sleeps += 1;
        }
        sleeps
    }

    #[test]
    fn batches_that_fill_keep_the_gate_open() {
        let mut gate = BatchGate::default();
        for _ in 0..1000 {
            assert!(gate.open());
            gate.after_sleep(true, 8, 8);
        }
        gate.after_sleep(true, 8, 11);
        assert!(gate.open(), "more than wanted is a full batch too");
    }

    #[test]
    fn a_batch_that_falls_short_pauses_batching_longer_each_time() {
        let mut gate = BatchGate::default();
        gate.after_sleep(true, 8, 1);
        assert!(!gate.open());
        assert_eq!(sleeps_paused(&mut gate), FIRST_PAUSE);
        gate.after_sleep(true, 8, 0);
        assert_eq!(sleeps_paused(&mut gate), 2 * FIRST_PAUSE);
        for _ in 0..40 {
            gate.after_sleep(true, 8, 2);
            sleeps_paused(&mut gate);
        }
        gate.after_sleep(true, 8, 2);
        assert_eq!(sleeps_paused(&mut gate), LONGEST_PAUSE, "bounded: batching is tried again");
    }

    #[test]
    fn only_a_long_run_of_full_batches_shortens_the_pause() {
        let mut gate = BatchGate::default();
        for _ in 0..3 {
            gate.after_sleep(true, 8, 1);
            sleeps_paused(&mut gate);
        }
        assert_eq!(gate.pause, 4 * FIRST_PAUSE);
        for _ in 0..FILLS_TO_SHORTEN - 1 {
            gate.after_sleep(true, 8, 8);
        }
        gate.after_sleep(true, 8, 3);
        assert_eq!(gate.pause, 8 * FIRST_PAUSE, "a fall before the run ends: longer still");
        sleeps_paused(&mut gate);
        for _ in 0..2 * FILLS_TO_SHORTEN {
            gate.after_sleep(true, 8, 8);
        }
        assert_eq!(gate.pause, 2 * FIRST_PAUSE);
        gate.after_sleep(true, 8, 3);
        assert_eq!(sleeps_paused(&mut gate), 4 * FIRST_PAUSE, "from the shortened pause");
    }
}
