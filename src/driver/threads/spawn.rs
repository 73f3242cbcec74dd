//! The loops' threads: one per loop, named and pinned to its core, that
//! counts as ended for the report thread whatever becomes of it
//! ([`Finished`]), adds what it spent to the run's [`LoopUsage`], and
//! stops the run when it fails.

use std::io;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Instant;

use super::cpus;
use super::loop_usage::thread_cpu_time;
use crate::driver::{DriverError, LoopContext};

/// Starts one thread per loop, named `name-INDEX` and pinned to its cpu
/// (if any), that runs `run` on the loop's connections. The thread counts
/// as ended for the report thread whatever happens, and a failed loop stops
/// the others.
pub(crate) fn spawn_pinned<C: Send + 'static>(
    name: &str,
    plans: impl Iterator<Item = (Option<usize>, C)>,
    context: &LoopContext,
    run: impl Fn(usize, C, &LoopContext) -> Result<(), DriverError> + Copy + Send + 'static,
) -> io::Result<Vec<JoinHandle<Result<(), DriverError>>>> {
    let mut handles = Vec::new();
    for (index, (cpu, connections)) in plans.enumerate() {
        let context = context.clone();
        let handle = std::thread::Builder::new().name(format!("{name}-{index}")).spawn(move || {
            let _ended = context.finished.guard();
            let born = Instant::now();
            if let Some(cpu) = cpu {
                core_affinity::set_for_current(core_affinity::CoreId { id: cpu });
            }
            cpus::ask_short_slice();
            let result = run(index, connections, &context);
            if let Some(spent) = thread_cpu_time() {
                context.usage.add_cpu(spent);
            }
            context.usage.add_life(born.elapsed(), cpus::own_run_delay());
            if result.is_err() {
                context.control.stop();
            }
            result
        })?;
        handles.push(handle);
    }
    Ok(handles)
}

/// Counts loop threads that have ended, and wakes whoever waits for them:
/// the report thread sleeps until a loop ends or its next report is due,
/// instead of looking again and again (a wake-up costs more than it looks). An
/// [`alert`](Finished::alert) wakes it too, for a stop from outside (a
/// signal).
#[derive(Clone, Default)]
pub struct Finished(Arc<(Mutex<Ended>, Condvar)>);

#[derive(Default)]
struct Ended {
    loops: usize,
    /// An alert not yet seen by a [`Finished::wait`].
    alerted: bool,
}

impl Finished {
    /// Held by a loop thread; counts it as ended when dropped, which also
    /// happens when the loop panics.
    pub fn guard(&self) -> FinishedGuard {
        FinishedGuard(self.clone())
    }

    /// How many loops have ended.
    pub fn count(&self) -> usize {
        self.0 .0.lock().unwrap_or_else(PoisonError::into_inner).loops
    }

    /// Waits until `count` loops have ended, `deadline` passes (`None`: no
    /// deadline) or an alert comes (one that came before the call counts,
    /// once); whether the loops have ended.
    pub fn wait(&self, count: usize, deadline: Option<Instant>) -> bool {
        let (ended, wake) = &*self.0;
        let mut ended = ended.lock().unwrap_or_else(PoisonError::into_inner);
        while ended.loops < count {
            if std::mem::take(&mut ended.alerted) {
                return false;
            }
            let Some(deadline) = deadline else {
                ended = wake.wait(ended).unwrap_or_else(PoisonError::into_inner);
                continue;
            };
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            ended = wake.wait_timeout(ended, left).unwrap_or_else(PoisonError::into_inner).0;
        }
        true
    }

    /// Wakes the thread in [`wait`](Self::wait), or makes its next wait
    /// return at once.
    pub fn alert(&self) {
        let (ended, wake) = &*self.0;
        ended.lock().unwrap_or_else(PoisonError::into_inner).alerted = true;
        wake.notify_all();
    }
}

pub struct FinishedGuard(Finished);

impl Drop for FinishedGuard {
    fn drop(&mut self) {
        let (ended, wake) = &*(self.0).0;
        ended.lock().unwrap_or_else(PoisonError::into_inner).loops += 1;
        wake.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// An alert wakes a wait without a deadline, counts once when it came
    /// before the wait, and a loop that ends still ends the wait.
    #[test]
    fn an_alert_wakes_the_waiting_report_thread() {
        let finished = Finished::default();
        let alerter = finished.clone();
        let waker = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            alerter.alert();
        });
        assert!(!finished.wait(1, None), "woken by the alert, no loop ended");
        waker.join().unwrap();
        finished.alert();
        assert!(!finished.wait(1, None), "an alert before the wait counts");
        let soon = Instant::now() + Duration::from_millis(20);
        assert!(!finished.wait(1, Some(soon)), "and only once: this one times out");
        assert!(Instant::now() >= soon);
        drop(finished.guard());
        assert!(finished.wait(1, None));
        assert_eq!(finished.count(), 1);
    }
}
