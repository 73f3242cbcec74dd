//! Where a script's states wait for the run to start, as sysbench's worker
//! threads wait at a barrier after `thread_init`: each loop runs its tasks
//! until every one is ready (its state loaded, its `thread_init` done) or
//! has ended, and arrives; once every loop has, the run's clock starts
//! and the gate opens with it, so that neither loading nor `thread_init`
//! counts in the run's time, and "Threads started!" follows what they print.

use std::sync::{Arc, Condvar, Mutex, PoisonError};

use crate::driver::Clock;

/// The run's start, as the loops take it at the gate: its clock, and the
/// instant (ns on that clock) no event starts after.
#[derive(Debug, Clone, Copy)]
pub struct Started {
    pub clock: Clock,
    pub deadline_ns: Option<u64>,
}

/// The gate between the loops' set-up and the run.
#[derive(Debug, Default)]
pub struct StartGate {
    state: Mutex<GateState>,
    changed: Condvar,
}

#[derive(Debug, Default)]
struct GateState {
    /// Loops whose tasks are all ready or ended.
    arrived: usize,
    /// Set when the gate opens.
    started: Option<Started>,
}

impl StartGate {
    pub fn new() -> Arc<StartGate> {
        Arc::new(StartGate::default())
    }

    /// A loop whose tasks are all ready (or ended) arrives and waits until
    /// the gate opens; the run's start.
    pub(crate) fn arrive_and_wait(&self) -> Started {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.arrived += 1;
        self.changed.notify_all();
        loop {
            if let Some(started) = state.started {
                return started;
            }
            state = self.changed.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Waits until `loops` loops have arrived (each arrives once, whatever
    /// befalls its tasks).
    pub fn wait_for_loops(&self, loops: usize) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        while state.arrived < loops {
            state = self.changed.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Opens the gate: the loops go on, on the run's clock.
    pub fn open(&self, started: Started) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.started = Some(started);
        self.changed.notify_all();
    }
}

/// Counts its loop as arrived when dropped if it never arrived: a loop
/// that failed, or whose tasks all ended, before its set-up was done must
/// not keep the run from starting.
pub(crate) struct ArrivalGuard {
    gate: Arc<StartGate>,
    arrived: bool,
}

impl ArrivalGuard {
    pub(crate) fn new(gate: Arc<StartGate>) -> Self {
        ArrivalGuard { gate, arrived: false }
    }

    /// Arrives (once) and waits for the run's start.
    pub(crate) fn arrive(&mut self) -> Started {
        self.arrived = true;
        self.gate.arrive_and_wait()
    }

    pub(crate) fn has_arrived(&self) -> bool {
        self.arrived
    }
}

impl Drop for ArrivalGuard {
    fn drop(&mut self) {
        if !self.arrived {
            let mut state = self.gate.state.lock().unwrap_or_else(PoisonError::into_inner);
            state.arrived += 1;
            self.gate.changed.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The main thread waits for every loop, and each loop for the start;
    /// a loop that never arrives still counts once it is gone.
    #[test]
    fn the_run_starts_once_every_loop_arrived() {
        let gate = StartGate::new();
        let waiting = {
            let gate = gate.clone();
            std::thread::spawn(move || ArrivalGuard::new(gate).arrive().deadline_ns)
        };
        drop(ArrivalGuard::new(gate.clone()));
        gate.wait_for_loops(2);
        gate.open(Started { clock: Clock::start(), deadline_ns: Some(7) });
        assert_eq!(waiting.join().unwrap(), Some(7));
    }
}
