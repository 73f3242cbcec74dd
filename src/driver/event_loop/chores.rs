//! The chores every loop does at each turn, whatever its backend: hand the
//! collector its statistics when it asks, publish the events in progress
//! and the `--rate` backlog (for the interim report and
//! `--forced-shutdown`), and now and then look at the connections' waits:
//! their read and write timeouts or, once the run is cut, the stalls. What
//! a backend does about a late connection is its own (a loop that owns its
//! connections loses or ends it; the tokio backend shuts its socket down,
//! so that the task awaiting it wakes), so the chores say what is due.

use crate::driver::connections::waits::WaitCheck;
use crate::driver::{Budget, LoopContext};
use crate::stats::LoopStats;

/// What a turn's look at the connections' waits is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WaitsDue {
    /// Not this turn.
    Nothing,
    /// The read and write timeouts.
    Timeouts,
    /// The run is cut: every connection still waiting for an answer ends,
    /// counted as stalled.
    Cut,
}

/// A loop's chores, and when it next looks at its connections' waits.
#[derive(Debug, Default)]
pub(crate) struct Chores {
    wait_check: WaitCheck,
}

impl Chores {
    /// One turn's chores at `now_ns` (the loop's clock): see the module's
    /// description.
    #[inline]
    pub(crate) fn turn(
        &mut self,
        now_ns: u64,
        context: &LoopContext,
        budget: &mut Budget,
        stats: &mut LoopStats,
    ) -> WaitsDue {
        budget.hand_over(&context.board, stats);
        // Events in progress, for --forced-shutdown's report: two relaxed
        // stores per turn.
        budget.publish(now_ns);
        if !self.wait_check.due(now_ns) {
            return WaitsDue::Nothing;
        }
        if context.control.cut_due(now_ns) {
            WaitsDue::Cut
        } else {
            WaitsDue::Timeouts
        }
    }
}
