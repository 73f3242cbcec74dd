//! How many events may still start, shared by every loop without a
//! shared write per event: loops claim permits in batches.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// The run's limits, shared by all loops.
#[derive(Debug)]
pub struct RunControl {
    /// Events not yet handed out (`--events`), or `None` for no limit.
    events_left: Option<AtomicU64>,
    /// Set by the main thread to end the run early (time is up, Ctrl-C, a fatal error).
    stop: AtomicBool,
    loops: u64,
}

impl RunControl {
    pub fn new(events: Option<u64>, loops: usize) -> Arc<Self> {
        Arc::new(RunControl {
            events_left: events.map(AtomicU64::new),
            stop: AtomicBool::new(false),
            loops: loops.max(1) as u64,
        })
    }

    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    pub fn is_stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

/// One loop's view of the limits.
#[derive(Debug)]
pub struct Budget {
    control: Arc<RunControl>,
    permits: u64,
    /// When no new event may start (`--time`), in ns since the run's start.
    deadline_ns: Option<u64>,
}

impl Budget {
    pub fn new(control: Arc<RunControl>, deadline_ns: Option<u64>) -> Self {
        Budget { control, permits: 0, deadline_ns }
    }

    /// Whether one more event may start now.
    #[inline]
    pub fn take_event(&mut self, now_ns: u64) -> bool {
        if self.deadline_ns.is_some_and(|d| now_ns >= d) || self.control.is_stopped() {
            return false;
        }
        if self.permits > 0 {
            self.permits -= 1;
            return true;
        }
        let Some(left) = &self.control.events_left else { return true };
        // Batches shrink as the pool drains, so every loop keeps working
        // until the end and the total is exact.
        let mut current = left.load(Ordering::Relaxed);
        loop {
            if current == 0 {
                return false;
            }
            let batch = (current / (4 * self.control.loops)).clamp(1, 256);
            match left.compare_exchange_weak(current, current - batch, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => {
                    self.permits = batch - 1;
                    return true;
                }
                Err(now) => current = now,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_event_total_across_loops() {
        let control = RunControl::new(Some(10_007), 3);
        let handles: Vec<_> = (0..3)
            .map(|_| {
                let control = control.clone();
                std::thread::spawn(move || {
                    let mut budget = Budget::new(control, None);
                    let mut n = 0u64;
                    while budget.take_event(0) {
                        n += 1;
                    }
                    n
                })
            })
            .collect();
        let total: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
        assert_eq!(total, 10_007);
    }

    #[test]
    fn deadline_and_stop() {
        let control = RunControl::new(None, 1);
        let mut budget = Budget::new(control.clone(), Some(1_000));
        assert!(budget.take_event(999));
        assert!(!budget.take_event(1_000));
        let mut budget = Budget::new(control.clone(), None);
        assert!(budget.take_event(5));
        control.stop();
        assert!(!budget.take_event(6));
    }
}
