//! `--events`: how many more events a loop may start. The run's pool is
//! one counter ([`RunControl::events_pool`]); a loop claims permits from it
//! in batches, so that no event costs a shared write, and the batches
//! shrink as the pool drains, so that every loop keeps working to the end
//! and the total is exact. While `--warmup-time` runs, events do not count
//! (as in sysbench master): a loop takes permits from its cut on
//! ([`Budget::hand_over`](super::budget::Budget::hand_over)), the moment it
//! hands its warm-up's statistics over, so that the events it counts and
//! the permits it takes are the same events.
//!
//! An event may stand for several sysbench events (bulk_insert's rows in
//! one INSERT): its weight beyond the first is taken from the same permits
//! ([`ExtraEvents`]), so that `--events` counts rows there too.

use std::sync::atomic::Ordering;

use super::run_control::RunControl;

/// A loop's permits claimed from the pool and not yet used.
#[derive(Debug, Default)]
pub(crate) struct EventPermits {
    local: u64,
    /// This loop has passed the warm-up's cut (or the run has none).
    past_warmup: bool,
}

impl EventPermits {
    /// Takes a permit for one event: from this loop's batch, or a new batch
    /// from the pool; false once the pool is spent.
    #[inline]
    pub(crate) fn take(&mut self, control: &RunControl) -> bool {
        let Some(left) = control.events_pool() else { return true };
        if !self.counting(control) {
            return true;
        }
        if self.local > 0 {
            self.local -= 1;
            return true;
        }
        let mut current = left.load(Ordering::Relaxed);
        loop {
            if current == 0 {
                return false;
            }
            let batch = (current / (4 * control.loops())).clamp(1, 256);
            match left.compare_exchange_weak(current, current - batch, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => {
                    self.local = batch - 1;
                    return true;
                }
                Err(now) => current = now,
            }
        }
    }

    /// Whether events take permits now: after the loop's warm-up cut.
    #[inline]
    fn counting(&self, control: &RunControl) -> bool {
        self.past_warmup || !control.has_warmup()
    }

    /// The loop has passed the warm-up's cut: its events count from now.
    pub(crate) fn pass_warmup(&mut self) {
        self.past_warmup = true;
    }

    /// Permits of events that were abandoned (to run again) come back to
    /// this loop; the warm-up's events took none.
    pub(crate) fn refund(&mut self, control: &RunControl, n: u64) {
        if control.events_pool().is_some() && self.counting(control) {
            self.local += n;
        }
    }

    /// Whether this loop can start no more events: its batch and the pool
    /// are spent.
    pub(crate) fn spent(&self, control: &RunControl) -> bool {
        self.local == 0 && control.events_exhausted()
    }
}

/// An event's weight beyond its first (bulk_insert's rows in one INSERT),
/// taken from the loop's permits and then the pool.
pub struct ExtraEvents<'a> {
    pub(crate) permits: &'a mut EventPermits,
    pub(crate) control: &'a RunControl,
}

impl ExtraEvents<'_> {
    /// Up to `max` more events for the one just admitted: `max` when
    /// `--events` sets no limit. What the event does not use goes back with
    /// [`give_back`](Self::give_back).
    pub fn take(&mut self, max: u64) -> u64 {
        let Some(left) = self.control.events_pool().filter(|_| self.permits.counting(self.control)) else {
            return max;
        };
        let local = max.min(self.permits.local);
        self.permits.local -= local;
        let want = max - local;
        let shared = if want == 0 {
            0
        } else {
            match left.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| Some(n - n.min(want))) {
                Ok(before) | Err(before) => before.min(want),
            }
        };
        local + shared
    }

    /// Extra events taken and not used: this loop's next events take them.
    pub fn give_back(&mut self, n: u64) {
        if self.control.events_pool().is_some() && self.permits.counting(self.control) {
            self.permits.local += n;
        }
    }

    /// `extra` more events than admitted were done, none taken beforehand:
    /// they count against `--events` all the same (the pool never goes
    /// below zero).
    pub fn consume(&mut self, extra: u64) {
        if !self.permits.counting(self.control) {
            return;
        }
        let local = extra.min(self.permits.local);
        self.permits.local -= local;
        let rest = extra - local;
        if let (Some(left), true) = (self.control.events_pool(), rest > 0) {
            let _ = left.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| Some(n.saturating_sub(rest)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three loops drawing at once take exactly the pool.
    #[test]
    fn exact_event_total_across_loops() {
        let control = RunControl::new(Some(10_007), 3);
        let handles: Vec<_> = (0..3)
            .map(|_| {
                let control = control.clone();
                std::thread::spawn(move || {
                    let mut permits = EventPermits::default();
                    let mut n = 0u64;
                    while permits.take(&control) {
                        n += 1;
                    }
                    n
                })
            })
            .collect();
        let total: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
        assert_eq!(total, 10_007);
    }

    /// Extra events (bulk_insert rows) come out of the local batch first,
    /// then the shared pool, which never goes below zero.
    #[test]
    fn consume_extra_events() {
        let control = RunControl::new(Some(1_000), 1);
        let mut permits = EventPermits::default();
        assert!(permits.take(&control));
        let taken = 1 + permits.local;
        let batch = permits.local;
        ExtraEvents { permits: &mut permits, control: &control }.consume(batch + 10);
        assert_eq!(permits.local, 0);
        assert_eq!(control.events_pool().unwrap().load(Ordering::Relaxed), 1_000 - taken - 10);
        ExtraEvents { permits: &mut permits, control: &control }.consume(5_000);
        assert!(!permits.take(&control));
    }

    /// What an event took and did not use comes back to the loop's next
    /// events; without `--events`, any weight is allowed.
    #[test]
    fn extra_events_taken_and_given_back() {
        let control = RunControl::new(Some(10), 1);
        let mut permits = EventPermits::default();
        assert!(permits.take(&control));
        let mut extra = ExtraEvents { permits: &mut permits, control: &control };
        assert_eq!(extra.take(100), 9, "no more than the pool holds");
        extra.give_back(4);
        let mut n = 0;
        while permits.take(&control) {
            n += 1;
        }
        assert_eq!(n, 4);
        let unlimited = RunControl::new(None, 1);
        let mut permits = EventPermits::default();
        assert_eq!(ExtraEvents { permits: &mut permits, control: &unlimited }.take(100), 100);
    }
}
