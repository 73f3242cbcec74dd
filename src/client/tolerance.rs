//! The run's tally of what servers got wrong and were served all the same
//! (see `wirebench_protocol::tolerance` and docs/connecting.md's table).
//! Every connection adds what it tolerated here, whichever loop drives it;
//! the orchestration says each kind once ([`unsaid`]) and reports the
//! counts ([`tally`]).
//!
//! Process-wide atomics rather than per-loop counters: a deviation is
//! either absent (nothing is touched per query) or a property of the
//! server, and then one relaxed add per answer is the whole cost.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use wirebench_protocol::response::Outcome;
use wirebench_protocol::tolerance::{Deviation, Deviations};

const KINDS: usize = Deviation::ALL.len();

static COUNTS: [AtomicU64; KINDS] = [const { AtomicU64::new(0) }; KINDS];
static SAID: [AtomicBool; KINDS] = [const { AtomicBool::new(false) }; KINDS];

fn slot(kind: Deviation) -> usize {
    Deviation::ALL.iter().position(|&k| k == kind).unwrap_or(0)
}

/// Adds what one login tolerated.
pub fn record_login(found: &Deviations) {
    for (kind, n) in found.iter() {
        if let Some(count) = COUNTS.get(slot(kind)) {
            count.fetch_add(n, Ordering::Relaxed);
        }
    }
}

/// Adds `n` answers' packets that were renumbered (the hot path's call).
#[inline]
pub fn record_seq_jumps(n: u32) {
    if n > 0 {
        if let Some(count) = COUNTS.get(slot(Deviation::SequenceRenumbered)) {
            count.fetch_add(u64::from(n), Ordering::Relaxed);
        }
    }
}

/// Adds `n` result sets whose column count had bytes after it.
#[inline]
pub fn record_column_count_trailing(n: u32) {
    if n > 0 {
        if let Some(count) = COUNTS.get(slot(Deviation::ColumnCountTrailing)) {
            count.fetch_add(u64::from(n), Ordering::Relaxed);
        }
    }
}

/// Adds what one walked answer tolerated.
#[inline]
pub fn record_answer(outcome: &Outcome) {
    record_seq_jumps(outcome.seq_jumps);
    record_column_count_trailing(outcome.column_count_trailing);
}

/// Everything tolerated so far in this process.
pub fn tally() -> Deviations {
    let mut all = Deviations::default();
    for kind in Deviation::ALL {
        if let Some(count) = COUNTS.get(slot(kind)) {
            all.add(kind, count.load(Ordering::Relaxed));
        }
    }
    all
}

/// The kinds seen and not yet said, each returned once per process.
pub fn unsaid() -> Vec<Deviation> {
    let seen = tally();
    Deviation::ALL
        .into_iter()
        .filter(|&kind| seen.get(kind) > 0)
        .filter(|&kind| SAID.get(slot(kind)).is_some_and(|said| !said.swap(true, Ordering::Relaxed)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_is_said_once_and_counted_always() {
        let before = tally().get(Deviation::NoTransactions);
        let mut found = Deviations::default();
        found.add(Deviation::NoTransactions, 1);
        record_login(&found);
        record_login(&found);
        assert_eq!(tally().get(Deviation::NoTransactions), before + 2);
        let first = unsaid();
        assert!(first.contains(&Deviation::NoTransactions));
        assert!(!unsaid().contains(&Deviation::NoTransactions));
    }
}
