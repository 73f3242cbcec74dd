//! How hard a loop worked while it ran events: its thread's CPU time and
//! its time ready to run without a core (the run delay), from its first
//! admitted event to the first moment no more may start. A loop's whole
//! life also holds its set-up and its wind-down (the last answers, the
//! goodbyes), mostly asleep: over a short search step they hide a
//! saturated loop under the limit that tells a client-bound step
//! (docs/search.md, "Honest about the client").

use std::time::{Duration, Instant};

use crate::driver::threads::loop_usage::SpanWork;

/// A loop thread's work so far and when it was read.
#[derive(Debug, Clone, Copy)]
struct ThreadWork {
    cpu: Duration,
    run_delay: Duration,
    at: Instant,
}

impl ThreadWork {
    /// The calling thread's; `None` where the kernel does not say.
    fn now() -> Option<Self> {
        let cpu = crate::driver::threads::loop_usage::thread_cpu_time()?;
        let run_delay = crate::driver::threads::cpus::own_run_delay().unwrap_or_default();
        Some(ThreadWork { cpu, run_delay, at: Instant::now() })
    }
}

/// Watches a loop's admissions for the start and the end of its span.
#[derive(Debug, Default)]
pub(crate) struct ActiveSpan {
    start: Option<ThreadWork>,
    ended: bool,
}

impl ActiveSpan {
    /// An event was admitted: the first opens the span.
    #[inline]
    pub(crate) fn started(&mut self) {
        if self.start.is_none() && !self.ended {
            self.start = ThreadWork::now();
        }
    }

    /// No more events may start: the first time after a start closes the
    /// span and returns what the loop did within it.
    #[inline]
    pub(crate) fn ended(&mut self) -> Option<SpanWork> {
        if self.ended {
            return None;
        }
        self.ended = true;
        let start = self.start.take()?;
        let end = ThreadWork::now()?;
        let cpu = end.cpu.saturating_sub(start.cpu);
        let busy = cpu + end.run_delay.saturating_sub(start.run_delay);
        Some(SpanWork { busy, cpu, span: end.at.duration_since(start.at) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_span_runs_from_the_first_start_to_the_first_end() {
        let mut span = ActiveSpan::default();
        span.started();
        let spin = Instant::now();
        while spin.elapsed() < Duration::from_millis(20) {
            std::hint::spin_loop();
        }
        span.started();
        let work = span.ended().expect("the span closes");
        assert!(work.span >= Duration::from_millis(20), "{work:?}");
        assert!(work.busy >= work.cpu && work.cpu > Duration::ZERO, "{work:?}");
        assert_eq!(span.ended(), None, "once");
        span.started();
        assert_eq!(span.ended(), None, "a start after the end opens nothing");
    }

    #[test]
    fn a_span_that_never_started_has_no_work() {
        let mut span = ActiveSpan::default();
        assert_eq!(span.ended(), None);
    }
}
