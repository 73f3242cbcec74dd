//! Two samples of the server, and what happened between them.

use std::collections::BTreeMap;
use std::time::{Instant, SystemTime};

use serde::{Deserialize, Serialize};

use super::process::{ProcessDelta, ProcessReading};
use super::status::{StatusReading, STATUS_COUNTERS, THREADS_RUNNING};

/// One sample: the status variables, and the process when it is read.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerSample {
    /// When the server answered.
    pub at: Instant,
    pub wall: SystemTime,
    pub status: StatusReading,
    /// `None` for a server elsewhere, or a process that could not be read.
    pub process: Option<ProcessReading>,
    /// Statements the sampler has sent, this sample's included: the
    /// server counts them in `Questions` too.
    pub own_statements: u64,
}

/// What the server did between two samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerDelta {
    /// Seconds between the two samples.
    pub seconds: f64,
    /// Each status counter's increase, by name: those the server has (a
    /// counter that went back, after `FLUSH STATUS` or a restart, is left
    /// out).
    pub status: BTreeMap<String, u64>,
    /// `Threads_running` at the later sample, less the sampler's own
    /// thread, which runs as it reads it.
    pub threads_running: Option<u64>,
    /// The process, when it runs on this host and was read both times.
    pub process: Option<ProcessDelta>,
    /// Statements the sampler sent in the span (each counts in
    /// `Questions`).
    pub sampler_statements: u64,
}

impl ServerDelta {
    pub fn between(before: &ServerSample, after: &ServerSample) -> ServerDelta {
        let mut status = BTreeMap::new();
        for name in STATUS_COUNTERS {
            if let (Some(a), Some(b)) = (before.status.get(name), after.status.get(name)) {
                if b >= a {
                    status.insert((*name).to_owned(), b - a);
                }
            }
        }
        let process = match (&before.process, &after.process) {
            (Some(a), Some(b)) => Some(ProcessDelta::between(a, b)),
            _ => None,
        };
        ServerDelta {
            seconds: after.at.saturating_duration_since(before.at).as_secs_f64(),
            status,
            threads_running: after.status.get(THREADS_RUNNING).map(|n| n.saturating_sub(1)),
            process,
            sampler_statements: after.own_statements.saturating_sub(before.own_statements),
        }
    }

    /// A counter's increase, when the server has it.
    pub fn counter(&self, name: &str) -> Option<u64> {
        self.status.get(name).copied()
    }

    /// This span followed by `later` (two intervals a merge puts in one
    /// slot): counters add, gauges are the later one's.
    pub fn then(&self, later: &ServerDelta) -> ServerDelta {
        let mut status = self.status.clone();
        for (name, n) in &later.status {
            let sum = status.entry(name.clone()).or_insert(0);
            *sum = sum.saturating_add(*n);
        }
        status.retain(|name, _| later.status.contains_key(name));
        ServerDelta {
            seconds: self.seconds + later.seconds,
            status,
            threads_running: later.threads_running,
            process: match (&self.process, &later.process) {
                (Some(a), Some(b)) => Some(a.then(b)),
                _ => None,
            },
            sampler_statements: self.sampler_statements.saturating_add(later.sampler_statements),
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use std::time::Duration;

    pub(in crate::server_stats) fn sample(at: Instant, values: &[(&'static str, u64)], own: u64) -> ServerSample {
        ServerSample {
            at,
            wall: SystemTime::UNIX_EPOCH,
            status: StatusReading { values: values.iter().copied().collect() },
            process: None,
            own_statements: own,
        }
    }

    #[test]
    fn counters_increase_gauges_are_read_absent_names_are_skipped() {
        let t0 = Instant::now();
        let before =
            sample(t0, &[("Questions", 100), ("Com_select", 50), ("Bytes_sent", 9), ("Threads_running", 1)], 1);
        let after = sample(
            t0 + Duration::from_millis(1500),
            &[("Questions", 1103), ("Com_select", 1050), ("Bytes_sent", 3), ("Threads_running", 5)],
            2,
        );
        let delta = ServerDelta::between(&before, &after);
        assert_eq!(delta.seconds, 1.5);
        assert_eq!(delta.counter("Questions"), Some(1003));
        assert_eq!(delta.counter("Com_select"), Some(1000));
        assert_eq!(delta.counter("Bytes_sent"), None, "went back: FLUSH STATUS or a restart");
        assert_eq!(delta.counter("Innodb_rows_read"), None, "not in either sample");
        assert_eq!(delta.threads_running, Some(4), "the sampler's own thread is not the run's");
        assert_eq!(delta.sampler_statements, 1);
        assert_eq!(delta.process, None);
    }

    #[test]
    fn spans_one_after_the_other_add_up() {
        let t0 = Instant::now();
        let s = |ms: u64, q: u64, running: u64, own: u64| {
            sample(t0 + Duration::from_millis(ms), &[("Questions", q), ("Threads_running", running)], own)
        };
        let (a, b, c) = (s(0, 10, 1, 1), s(1000, 20, 3, 2), s(2000, 35, 2, 3));
        let joined = ServerDelta::between(&a, &b).then(&ServerDelta::between(&b, &c));
        assert_eq!(joined, ServerDelta::between(&a, &c));
    }
}
