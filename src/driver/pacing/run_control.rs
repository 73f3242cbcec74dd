//! The run's limits, shared by every loop: `--events`' pool, the stop,
//! `--warmup-time`, `--rate` and `--rate-stages` split over the loops, the
//! moment the loops stop waiting for answers (the run's cut), and what each
//! loop publishes for the report thread (its backlog, its events in
//! progress, its work over its active span). Nothing here is written per
//! event: each loop keeps its own view ([`Budget`](super::budget::Budget)).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::arrivals::{arrival_rng, Arrival, ArrivalSchedule, Arrivals, Pace};
use super::rate_stages::{RateProfile, RateStages};
use crate::driver::threads::loop_usage::SpanWork;
use crate::stats::QueueStats;

/// What the `--rate` backlog was at some moment, over all loops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Backlog {
    /// Arrivals due and not yet started.
    pub waiting: u64,
    /// When the oldest of them was due (ns since the run's start).
    pub oldest_ns: Option<u64>,
    /// Arrivals due since the start, served or not.
    pub arrived: u64,
}

/// The run's limits, shared by all loops.
#[derive(Debug)]
pub struct RunControl {
    /// Events not yet handed out (`--events`), or `None` for no limit.
    events_left: Option<AtomicU64>,
    /// Set by the main thread to end the run early (time is up, Ctrl-C, a fatal error).
    stop: AtomicBool,
    /// The run begins with `--warmup-time`: each loop's `--events` count
    /// starts at its cut ([`Budget::hand_over`](super::budget::Budget::hand_over)).
    warmup: AtomicBool,
    loops: u64,
    rate: Option<RateShares>,
    /// What each loop last published about its queue and its events in
    /// progress, for the interim report and `--forced-shutdown`.
    gauges: Box<[LoopGauges]>,
    /// From when on (ns since the run's start) a connection still waiting
    /// for an answer is stalled and cut off; `u64::MAX` for never.
    cut_at_ns: AtomicU64,
    /// The connections cut off, and the longest any of them had waited.
    stalled: AtomicU64,
    longest_stall_ns: AtomicU64,
}

/// `--rate` or `--rate-stages` split over the loops.
#[derive(Debug)]
struct RateShares {
    /// `--rate`: arrivals per second, per loop. `--rate-stages`: each
    /// loop's share of the target (its share of the connections).
    per_loop: Box<[f64]>,
    /// Each loop's connections (or tasks).
    connections: Box<[usize]>,
    /// `--rate-stages`.
    stages: Option<StagedTarget>,
    /// `srandom` seed of the run; loop `i` draws from the stream sysbench's
    /// thread `first_stream + i` would get, past every connection's.
    seed: u32,
    first_stream: u32,
    arrival: Arrival,
}

/// `--rate-stages`, as the loops and the report thread use it.
#[derive(Debug)]
struct StagedTarget {
    stages: RateStages,
    /// `--warmup-time`, held at the first stage's rate before the stages.
    hold_secs: u32,
    /// This instance's whole target over time, for the reports.
    whole: RateProfile,
}

/// Under `--rate` or `--rate-stages`, arrivals that did not start on time
/// since the start, over all loops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tardiness {
    /// `--rate-stages`: arrivals dropped, not started within a second.
    pub dropped: u64,
    /// Events started more than a second after their arrival.
    pub late: u64,
}

#[derive(Debug)]
struct LoopGauges {
    queued: AtomicU64,
    in_progress: AtomicU64,
    /// When the oldest waiting arrival was due; `u64::MAX` for none.
    oldest: AtomicU64,
    arrived: AtomicU64,
    dropped: AtomicU64,
    late: AtomicU64,
    /// The loop's work over its active span ([`SpanWork`]), in ns, once
    /// the span has ended.
    span_busy: AtomicU64,
    span_cpu: AtomicU64,
    span: AtomicU64,
}

impl Default for LoopGauges {
    fn default() -> Self {
        LoopGauges {
            queued: AtomicU64::new(0),
            in_progress: AtomicU64::new(0),
            oldest: AtomicU64::new(u64::MAX),
            arrived: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            late: AtomicU64::new(0),
            span_busy: AtomicU64::new(0),
            span_cpu: AtomicU64::new(0),
            span: AtomicU64::new(0),
        }
    }
}

/// Connections cut off while still waiting for an answer when the run's
/// time was up, and the longest any of them had waited.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stalls {
    pub connections: usize,
    pub longest_wait_ns: u64,
}

impl Stalls {
    pub(crate) fn add(&mut self, waited_ns: u64) {
        self.connections += 1;
        self.longest_wait_ns = self.longest_wait_ns.max(waited_ns);
    }
}

impl RunControl {
    /// A closed-loop run (no `--rate`) over `loops` loops.
    pub fn new(events: Option<u64>, loops: usize) -> Arc<Self> {
        Arc::new(Self::build(events, loops, None))
    }

    /// A run at `rate` events per second (sysbench's `--rate`), Poisson
    /// arrivals; loop `i` drives `connections_per_loop[i]` connections and
    /// gets that share of the rate. `seed` is the run's `srandom` seed.
    pub fn with_rate(events: Option<u64>, connections_per_loop: &[usize], rate: u32, seed: u32) -> Arc<Self> {
        Self::with_arrival(events, connections_per_loop, rate, seed, Arrival::Poisson)
    }

    /// [`with_rate`](Self::with_rate) with arrivals spaced as `arrival` says.
    pub fn with_arrival(
        events: Option<u64>,
        connections_per_loop: &[usize],
        rate: u32,
        seed: u32,
        arrival: Arrival,
    ) -> Arc<Self> {
        let total: usize = connections_per_loop.iter().sum();
        let per_loop = connections_per_loop.iter().map(|&n| f64::from(rate) * n as f64 / total.max(1) as f64).collect();
        let connections = connections_per_loop.into();
        let shares = RateShares { per_loop, connections, stages: None, seed, first_stream: total as u32, arrival };
        Arc::new(Self::build(events, connections_per_loop.len(), Some(shares)))
    }

    /// A run whose target follows `stages` (`--rate-stages`), after
    /// `hold_secs` (`--warmup-time`) at its first stage's rate; loop `i`
    /// gets the share of the target that its connections are of all.
    pub fn with_stages(
        connections_per_loop: &[usize],
        stages: &RateStages,
        hold_secs: u32,
        seed: u32,
        arrival: Arrival,
    ) -> Arc<Self> {
        let total: usize = connections_per_loop.iter().sum();
        let per_loop = connections_per_loop.iter().map(|&n| n as f64 / total.max(1) as f64).collect();
        let whole = stages.profile(1.0, hold_secs);
        let stages = Some(StagedTarget { stages: stages.clone(), hold_secs, whole });
        let connections = connections_per_loop.into();
        let shares = RateShares { per_loop, connections, stages, seed, first_stream: total as u32, arrival };
        Arc::new(Self::build(None, connections_per_loop.len(), Some(shares)))
    }

    fn build(events: Option<u64>, loops: usize, rate: Option<RateShares>) -> Self {
        RunControl {
            events_left: events.map(AtomicU64::new),
            stop: AtomicBool::new(false),
            warmup: AtomicBool::new(false),
            loops: loops.max(1) as u64,
            rate,
            gauges: (0..loops.max(1)).map(|_| LoopGauges::default()).collect(),
            cut_at_ns: AtomicU64::new(u64::MAX),
            stalled: AtomicU64::new(0),
            longest_stall_ns: AtomicU64::new(0),
        }
    }

    /// From `at_ns` (ns since the run's start) on, the loops stop waiting
    /// for answers: a connection still waiting is stalled, cut off and
    /// counted, and the loop ends. The earliest time asked for wins.
    pub fn cut_at(&self, at_ns: u64) {
        self.cut_at_ns.fetch_min(at_ns, Ordering::Relaxed);
    }

    /// Whether the loops must stop waiting for answers now.
    pub fn cut_due(&self, now_ns: u64) -> bool {
        now_ns >= self.cut_at_ns.load(Ordering::Relaxed)
    }

    /// A loop's connections cut off by [`cut_at`](Self::cut_at).
    pub fn record_stalls(&self, stalls: Stalls) {
        self.stalled.fetch_add(stalls.connections as u64, Ordering::Relaxed);
        self.longest_stall_ns.fetch_max(stalls.longest_wait_ns, Ordering::Relaxed);
    }

    /// Every loop's connections cut off, once the loops have ended.
    pub fn stalls(&self) -> Stalls {
        Stalls {
            connections: usize::try_from(self.stalled.load(Ordering::Relaxed)).unwrap_or(usize::MAX),
            longest_wait_ns: self.longest_stall_ns.load(Ordering::Relaxed),
        }
    }

    /// A run with `--warmup-time` (before its loops start): events do not
    /// count against `--events` until the warm-up's end, as in sysbench
    /// master. Each loop counts from its own answer to the collection that
    /// ends it ([`Collector::cut_warmup`](crate::stats::Collector::cut_warmup)).
    pub fn start_warmup(&self) {
        self.warmup.store(true, Ordering::Relaxed);
    }

    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    pub fn is_stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Whether the run is open-loop (`--rate`).
    pub fn has_rate(&self) -> bool {
        self.rate.is_some()
    }

    /// Whether the target follows `--rate-stages`.
    pub fn has_stages(&self) -> bool {
        self.rate.as_ref().is_some_and(|r| r.stages.is_some())
    }

    /// The mean target between two instants (ns since the start), in
    /// events per second: `--rate`'s, or `--rate-stages`' over that span;
    /// `None` for a closed-loop run.
    pub fn target_rate(&self, from_ns: u64, to_ns: u64) -> Option<f64> {
        let shares = self.rate.as_ref()?;
        Some(match &shares.stages {
            Some(staged) => staged.whole.mean_rate(from_ns, to_ns),
            None => shares.per_loop.iter().sum(),
        })
    }

    /// Arrivals that did not start on time, as the loops last published
    /// them (every few ms).
    pub fn tardiness(&self) -> Tardiness {
        let sum = |f: fn(&LoopGauges) -> &AtomicU64| self.gauges.iter().map(|g| f(g).load(Ordering::Relaxed)).sum();
        Tardiness { dropped: sum(|g| &g.dropped), late: sum(|g| &g.late) }
    }

    /// The loops' work over their active spans, summed over the loops
    /// whose span has ended; `None` when none has.
    pub fn span_work(&self) -> Option<SpanWork> {
        let sum = |f: fn(&LoopGauges) -> &AtomicU64| -> u64 {
            self.gauges.iter().map(|g| f(g).load(Ordering::Relaxed)).sum()
        };
        let span = sum(|g| &g.span);
        (span > 0).then(|| SpanWork {
            busy: Duration::from_nanos(sum(|g| &g.span_busy)),
            cpu: Duration::from_nanos(sum(|g| &g.span_cpu)),
            span: Duration::from_nanos(span),
        })
    }

    pub(crate) fn add_span_work(&self, index: usize, work: SpanWork) {
        if let Some(gauges) = self.gauges.get(index) {
            let ns = |d: Duration| d.as_nanos() as u64;
            gauges.span_busy.fetch_add(ns(work.busy), Ordering::Relaxed);
            gauges.span_cpu.fetch_add(ns(work.cpu), Ordering::Relaxed);
            gauges.span.fetch_add(ns(work.span), Ordering::Relaxed);
        }
    }

    /// The `--rate` backlog as the loops last published it (every few ms).
    pub fn backlog(&self) -> Backlog {
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let oldest = self.gauges.iter().map(|g| load(&g.oldest)).min().filter(|&t| t != u64::MAX);
        Backlog {
            waiting: self.gauges.iter().map(|g| load(&g.queued)).sum(),
            oldest_ns: oldest,
            arrived: self.gauges.iter().map(|g| load(&g.arrived)).sum(),
        }
    }

    /// The interim report's `--rate` line: arrivals waiting, events in
    /// progress, as the loops last published them (every few ms).
    pub fn queue_stats(&self) -> QueueStats {
        let sum = |f: fn(&LoopGauges) -> &AtomicU64| self.gauges.iter().map(|g| f(g).load(Ordering::Relaxed)).sum();
        QueueStats { length: sum(|g| &g.queued), concurrency: sum(|g| &g.in_progress) }
    }

    pub(crate) fn events_exhausted(&self) -> bool {
        self.events_left.as_ref().is_some_and(|left| left.load(Ordering::Relaxed) == 0)
    }

    /// Loop `index`'s share of `--rate` or `--rate-stages`: its arrival
    /// schedule, drawn from the stream sysbench's thread `first_stream +
    /// index` would get, and how many connections (or tasks) serve it;
    /// `None` for a closed-loop run.
    pub(crate) fn loop_arrivals(&self, index: usize) -> Option<(Arrivals, usize)> {
        let shares = self.rate.as_ref()?;
        let share = shares.per_loop.get(index).copied().unwrap_or(0.0);
        let pace = match &shares.stages {
            Some(staged) => Pace::stages(Arc::new(staged.stages.profile(share, staged.hold_secs))),
            None => Pace::constant(share),
        };
        let stream = shares.first_stream.saturating_add(index as u32);
        let phase = (index as f64 + 1.0) / self.gauges.len() as f64;
        let schedule = ArrivalSchedule::new(shares.arrival, arrival_rng(shares.seed, stream), phase);
        let connections = shares.connections.get(index).copied().unwrap_or(0);
        Some((Arrivals::new(pace, schedule), connections))
    }

    /// What loop `index` publishes for the report thread, every few ms:
    /// its events in progress and, under `--rate`, its backlog.
    pub(crate) fn publish_gauges(&self, index: usize, in_progress: u64, arrivals: Option<&Arrivals>) {
        let Some(gauges) = self.gauges.get(index) else { return };
        gauges.in_progress.store(in_progress, Ordering::Relaxed);
        if let Some(arrivals) = arrivals {
            gauges.queued.store(arrivals.waiting(), Ordering::Relaxed);
            gauges.oldest.store(arrivals.oldest_waiting().unwrap_or(u64::MAX), Ordering::Relaxed);
            gauges.arrived.store(arrivals.due, Ordering::Relaxed);
            gauges.dropped.store(arrivals.dropped, Ordering::Relaxed);
            gauges.late.store(arrivals.late, Ordering::Relaxed);
        }
    }

    /// `--events`' pool: the events not yet handed to a loop, or `None`
    /// for no limit.
    pub(crate) fn events_pool(&self) -> Option<&AtomicU64> {
        self.events_left.as_ref()
    }

    /// Whether the run begins with `--warmup-time`.
    pub(crate) fn has_warmup(&self) -> bool {
        self.warmup.load(Ordering::Relaxed)
    }

    /// How many loops share the run.
    pub(crate) fn loops(&self) -> u64 {
        self.loops
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stalls_keep_the_longest_wait() {
        let mut stalls = Stalls::default();
        stalls.add(3);
        stalls.add(7);
        stalls.add(5);
        assert_eq!(stalls, Stalls { connections: 3, longest_wait_ns: 7 });
    }
}
