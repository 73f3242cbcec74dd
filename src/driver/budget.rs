//! When an event may start: the run's limits (`--events`, `--time`, a stop
//! request) and, with `--rate`, the arrival schedule. Shared by every loop
//! without a shared write per event: loops claim `--events` permits in
//! batches, and each loop draws its own share of the arrivals.
//!
//! The arrival schedule itself is in [`super::arrivals`].

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::active_span::{ActiveSpan, SpanWork};
use super::arrivals::{arrival_rng, Arrival, ArrivalSchedule, Arrivals, Pace, ON_TIME_NS};
use super::client_delay::UnsentStarts;
use super::rate_stages::{RateProfile, RateStages};
use super::Stalls;
use crate::stats::{LoopStats, QueueStats};

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
    /// `--warmup-time` is running: `--events` does not count yet.
    warming: AtomicBool,
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
            warming: AtomicBool::new(false),
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

    /// A run with `--warmup-time`: events do not count against `--events`
    /// until [`end_warmup`](Self::end_warmup), as in sysbench master.
    pub fn start_warmup(&self) {
        self.warming.store(true, Ordering::Relaxed);
    }

    pub fn end_warmup(&self) {
        self.warming.store(false, Ordering::Relaxed);
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
    pub(super) fn span_work(&self) -> Option<SpanWork> {
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

    fn add_span_work(&self, index: usize, work: SpanWork) {
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

    fn events_exhausted(&self) -> bool {
        self.events_left.as_ref().is_some_and(|left| left.load(Ordering::Relaxed) == 0)
    }
}

/// What [`Budget::admit`] allows a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Start an event that began at this time (ns since the run's start):
    /// now, or under `--rate` the arrival it serves.
    Start(u64),
    /// `--rate`: no arrival is due yet; wait for [`Budget::wake_at`].
    Wait,
    /// No more events will start.
    Over,
}

/// One loop's view of the limits and its share of the arrivals. Owned by
/// the loop; nothing here is shared per event.
#[derive(Debug)]
pub struct Budget {
    control: Arc<RunControl>,
    index: usize,
    permits: u64,
    /// When no new event may start (`--time`), in ns since the run's start.
    deadline_ns: Option<u64>,
    arrivals: Option<Arrivals>,
    /// Under `--rate`: the events admitted and not yet handed to the
    /// kernel, for the client's delay.
    unsent: Option<UnsentStarts>,
    /// From the first event admitted to the first refusal: the loop's
    /// work there says whether it was the limit.
    span: ActiveSpan,
    /// Events admitted and not yet reported finished.
    in_progress: u64,
}

impl Budget {
    /// The budget of loop 0: for a single loop and for tests.
    pub fn new(control: Arc<RunControl>, deadline_ns: Option<u64>) -> Self {
        Self::for_loop(control, deadline_ns, 0)
    }

    /// The budget of loop `index`, with its share of `--rate`.
    pub fn for_loop(control: Arc<RunControl>, deadline_ns: Option<u64>, index: usize) -> Self {
        let loops = control.gauges.len();
        let arrivals = control.rate.as_ref().map(|shares| {
            let share = shares.per_loop.get(index).copied().unwrap_or(0.0);
            let pace = match &shares.stages {
                Some(staged) => Pace::stages(Arc::new(staged.stages.profile(share, staged.hold_secs))),
                None => Pace::constant(share),
            };
            let stream = shares.first_stream.saturating_add(index as u32);
            let phase = (index as f64 + 1.0) / loops as f64;
            Arrivals::new(pace, ArrivalSchedule::new(shares.arrival, arrival_rng(shares.seed, stream), phase))
        });
        let connections = control.rate.as_ref().and_then(|r| r.connections.get(index).copied()).unwrap_or(0);
        let unsent = arrivals.as_ref().map(|_| UnsentStarts::for_connections(connections));
        let span = ActiveSpan::default();
        Budget { control, index, permits: 0, deadline_ns, arrivals, unsent, span, in_progress: 0 }
    }

    /// Whether one more event may start now, by the closed-loop limits
    /// (deadline, stop, `--events`); takes a permit if so.
    #[inline]
    pub fn take_event(&mut self, now_ns: u64) -> bool {
        if self.deadline_ns.is_some_and(|d| now_ns >= d) || self.control.is_stopped() {
            return false;
        }
        let Some(left) = &self.control.events_left else { return true };
        if self.control.warming.load(Ordering::Relaxed) {
            return true;
        }
        if self.permits > 0 {
            self.permits -= 1;
            return true;
        }
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

    /// Whether, and from when, a connection may start its next event;
    /// `room_since_ns` is when the connection last got room for one (its
    /// previous event's answer, or now), for the client's delay.
    #[inline]
    pub fn admit(&mut self, now_ns: u64, room_since_ns: u64) -> Admission {
        let admission = self.admit_now(now_ns, room_since_ns);
        match admission {
            Admission::Start(_) => self.span.started(),
            Admission::Over => {
                if let Some(work) = self.span.ended() {
                    self.control.add_span_work(self.index, work);
                }
            }
            Admission::Wait => {}
        }
        admission
    }

    #[inline]
    fn admit_now(&mut self, now_ns: u64, room_since_ns: u64) -> Admission {
        let until = self.arrival_horizon(now_ns);
        let Some(arrivals) = &mut self.arrivals else {
            if !self.take_event(now_ns) {
                return Admission::Over;
            }
            self.in_progress += 1;
            return Admission::Start(now_ns);
        };
        let Some(arrival) = arrivals.oldest_due(until) else {
            return if self.is_over(now_ns) { Admission::Over } else { Admission::Wait };
        };
        if !self.take_event(now_ns) {
            return Admission::Over;
        }
        if let Some(arrivals) = &mut self.arrivals {
            arrivals.serve();
            arrivals.late += u64::from(now_ns.saturating_sub(arrival) > ON_TIME_NS);
        }
        if let Some(unsent) = &mut self.unsent {
            unsent.admitted(arrival.max(room_since_ns).min(now_ns));
        }
        self.in_progress += 1;
        Admission::Start(arrival)
    }

    /// The loop handed what it had written to the kernel at `now_ns`: the
    /// events admitted since count their client's delay
    /// ([`UnsentStarts`]).
    #[inline]
    pub fn sent(&mut self, now_ns: u64, stats: &mut LoopStats) {
        if let Some(unsent) = self.unsent.as_mut().filter(|u| !u.is_empty()) {
            unsent.sent(now_ns, stats);
        }
    }

    /// Whether admitted events wait for [`sent`](Self::sent).
    #[inline]
    pub fn has_unsent(&self) -> bool {
        self.unsent.as_ref().is_some_and(|u| !u.is_empty())
    }

    /// `extra` more events than admitted were done (bulk_insert's rows
    /// beyond the first in one statement): they count against `--events`.
    pub fn consume(&mut self, extra: u64) {
        let local = extra.min(self.permits);
        self.permits -= local;
        let rest = extra - local;
        if let (Some(left), true) = (&self.control.events_left, rest > 0) {
            let _ = left.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| Some(n.saturating_sub(rest)));
        }
    }

    /// Up to `max` more events for the one just admitted (bulk_insert's
    /// rows beyond its first): from this loop's permits, then the shared
    /// pool; `max` when `--events` sets no limit. What the event does not
    /// use goes back with [`return_extra`](Self::return_extra).
    pub fn take_extra(&mut self, max: u64) -> u64 {
        let Some(left) = &self.control.events_left else { return max };
        let local = max.min(self.permits);
        self.permits -= local;
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

    /// Extra events taken with [`take_extra`](Self::take_extra) and not
    /// used: this loop's next events take them.
    pub fn return_extra(&mut self, n: u64) {
        if self.control.events_left.is_some() {
            self.permits += n;
        }
    }

    /// `n` admitted events have finished.
    #[inline]
    pub fn finish(&mut self, n: u64) {
        self.in_progress = self.in_progress.saturating_sub(n);
    }

    /// Admitted events that were abandoned before they ran to the end
    /// (pipelined behind a lost connection or a failed statement) go back:
    /// their `--events` permits and, under `--rate`, their arrivals, so
    /// that they are run again and the run still does the events asked
    /// for. `started` are their start times, oldest first.
    pub fn refund(&mut self, started: &[u64]) {
        let n = started.len() as u64;
        self.in_progress = self.in_progress.saturating_sub(n);
        if self.control.events_left.is_some() {
            self.permits += n;
        }
        if let Some(arrivals) = &mut self.arrivals {
            // Only after a failure, never per query: the queue may grow.
            arrivals.refunded.extend(started);
        }
    }

    /// Events admitted and not yet finished.
    pub fn in_progress(&self) -> u64 {
        self.in_progress
    }

    /// Whether this loop runs on a `--rate` schedule.
    pub fn has_rate(&self) -> bool {
        self.arrivals.is_some()
    }

    /// `--rate` arrivals due and not yet served, as of the last
    /// [`publish`](Self::publish).
    pub fn queued(&self) -> u64 {
        self.arrivals.as_ref().map_or(0, Arrivals::waiting)
    }

    /// When a connection waiting for an arrival should look again: the
    /// next arrival, or the deadline if sooner. `None` once no event can
    /// start any more (time is up, the run stopped, `--events` are spent).
    pub fn wake_at(&self, now_ns: u64) -> Option<u64> {
        if self.is_over(now_ns) {
            return None;
        }
        let next = self.arrivals.as_ref().map_or(now_ns, Arrivals::next_to_serve);
        Some(self.deadline_ns.map_or(next, |d| next.min(d)))
    }

    /// Counts the `--rate` arrivals due by `now_ns` and publishes the
    /// backlog and the events in progress for the report thread. Called
    /// every few milliseconds, so the backlog of an overloaded loop shows
    /// even when no connection is free to look.
    pub fn publish(&mut self, now_ns: u64) {
        // Nothing is served once the run stopped or `--events` are spent,
        // so nothing queues then; after the deadline nothing new arrives.
        let accepting = !(self.control.is_stopped() || self.events_spent());
        let until = self.arrival_horizon(now_ns);
        let staged = self.control.has_stages();
        if let (Some(arrivals), true) = (&mut self.arrivals, accepting) {
            arrivals.count_due(until);
            if staged {
                arrivals.drop_overdue(until);
            }
        }
        let Some(gauges) = self.control.gauges.get(self.index) else { return };
        gauges.in_progress.store(self.in_progress, Ordering::Relaxed);
        if let Some(arrivals) = &self.arrivals {
            gauges.queued.store(arrivals.waiting(), Ordering::Relaxed);
            gauges.oldest.store(arrivals.oldest_waiting().unwrap_or(u64::MAX), Ordering::Relaxed);
            gauges.arrived.store(arrivals.due, Ordering::Relaxed);
            gauges.dropped.store(arrivals.dropped, Ordering::Relaxed);
            gauges.late.store(arrivals.late, Ordering::Relaxed);
        }
    }

    /// Arrivals up to this time may be queued: sysbench's generator stops
    /// at the deadline, and its workers serve nothing from then on.
    fn arrival_horizon(&self, now_ns: u64) -> u64 {
        self.deadline_ns.map_or(now_ns, |d| now_ns.min(d.saturating_sub(1)))
    }

    fn is_over(&self, now_ns: u64) -> bool {
        self.deadline_ns.is_some_and(|d| now_ns >= d) || self.control.is_stopped() || self.events_spent()
    }

    /// `--events`: this loop can start no more.
    fn events_spent(&self) -> bool {
        self.permits == 0 && self.control.events_exhausted()
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

    #[test]
    fn closed_loop_admits_now_and_counts_in_progress() {
        let mut budget = Budget::new(RunControl::new(Some(2), 1), None);
        assert_eq!(budget.admit(7, 0), Admission::Start(7));
        assert_eq!(budget.admit(8, 0), Admission::Start(8));
        assert_eq!(budget.admit(9, 0), Admission::Over);
        assert_eq!(budget.in_progress(), 2);
        budget.finish(1);
        budget.publish(10);
        assert_eq!(budget.control.queue_stats(), QueueStats { length: 0, concurrency: 1 });
        assert_eq!(budget.wake_at(10), None, "--events spent");
    }

    /// Extra events (bulk_insert rows) come out of the local batch first,
    /// then the shared pool, which never goes below zero.
    #[test]
    fn consume_extra_events() {
        let control = RunControl::new(Some(1_000), 1);
        let mut budget = Budget::new(control.clone(), None);
        assert!(budget.take_event(0));
        let taken = 1 + budget.permits;
        budget.consume(budget.permits + 10);
        assert_eq!(budget.permits, 0);
        assert_eq!(control.events_left.as_ref().unwrap().load(Ordering::Relaxed), 1_000 - taken - 10);
        budget.consume(5_000);
        assert!(!budget.take_event(0));
    }

    /// Abandoned events come back: `--events` permits, and under `--rate`
    /// their arrivals, served again first and at their original times.
    #[test]
    fn refunded_events_run_again() {
        let mut budget = Budget::new(RunControl::new(Some(2), 1), None);
        assert_eq!(budget.admit(1, 0), Admission::Start(1));
        assert_eq!(budget.admit(2, 0), Admission::Start(2));
        assert_eq!(budget.admit(3, 0), Admission::Over);
        budget.refund(&[2]);
        assert_eq!(budget.in_progress(), 1);
        assert_eq!(budget.admit(4, 0), Admission::Start(4));
        assert_eq!(budget.admit(5, 0), Admission::Over);

        let control = RunControl::with_rate(None, &[1], 1_000, 42);
        let mut budget = Budget::new(control, None);
        let late = budget.arrivals.as_ref().unwrap().serve.next_ns + 5_000_000;
        let Admission::Start(a) = budget.admit(late, 0) else { panic!("nothing due") };
        let Admission::Start(b) = budget.admit(late, 0) else { panic!("one due only") };
        budget.refund(&[a, b]);
        assert_eq!(budget.admit(late, 0), Admission::Start(a));
        assert_eq!(budget.admit(late, 0), Admission::Start(b));
        let Admission::Start(c) = budget.admit(late, 0) else { panic!("more are due") };
        assert!(c > b, "then the schedule goes on where it was");
    }

    /// Arrivals are served oldest first, each starting at its own time; a
    /// connection that comes early waits until the next one is due.
    #[test]
    fn rate_admits_arrivals_at_their_time() {
        let control = RunControl::with_rate(None, &[1], 1_000, 42);
        let mut budget = Budget::new(control, None);
        let first = budget.arrivals.as_ref().unwrap().serve.next_ns;
        assert_eq!(budget.admit(first - 1, 0), Admission::Wait);
        assert_eq!(budget.wake_at(first - 1), Some(first));
        // Looking 5 mean gaps late: everything due by then, oldest first.
        let late = first + 5_000_000;
        let mut starts = Vec::new();
        while let Admission::Start(at) = budget.admit(late, 0) {
            starts.push(at);
        }
        assert_eq!(starts.first(), Some(&first));
        assert!(starts.len() > 1 && starts.windows(2).all(|w| w[0] <= w[1]) && starts.iter().all(|&t| t <= late));
        assert_eq!(budget.in_progress(), starts.len() as u64);
        assert_eq!(budget.admit(late, 0), Admission::Wait);
        assert!(budget.wake_at(late).unwrap() > late);
    }

    /// The arrival times a schedule gives over `until` ns.
    fn arrival_times(arrival: Arrival, rate: u32, loops: &[usize], index: usize, until: u64) -> Vec<u64> {
        let control = RunControl::with_arrival(None, loops, rate, 7, arrival);
        let mut budget = Budget::for_loop(control, None, index);
        let arrivals = budget.arrivals.as_mut().unwrap();
        let mut times = Vec::new();
        while let Some(at) = arrivals.oldest_due(until) {
            times.push(at);
            arrivals.serve();
        }
        times
    }

    /// The gaps are exponential with mean 1e9/rate: over 1 s at 10,000/s
    /// about 10,000 arrivals (Poisson: sd 100), and the share of gaps
    /// longer than the mean is about e^-1.
    #[test]
    fn arrivals_are_poisson() {
        let times = arrival_times(Arrival::Poisson, 40_000, &[1, 3], 0, 1_000_000_000);
        assert!((9_500..=10_500).contains(&times.len()), "{} arrivals", times.len());
        let long = times.windows(2).filter(|w| w[1] - w[0] > 100_000).count() as f64;
        let share = long / (times.len() - 1) as f64;
        assert!((share - (-1f64).exp()).abs() < 0.03, "{share}");
    }

    /// `--rate-arrival=fixed`: every gap is 1/rate, no drift over a
    /// second, and the loops' first arrivals are spread over one gap.
    #[test]
    fn fixed_arrivals_are_evenly_spaced() {
        let times = arrival_times(Arrival::Fixed, 2_000, &[1, 1], 0, 1_000_000_000);
        assert_eq!(times.len(), 1_000, "1,000/s for this loop");
        assert_eq!(times[0], 500_000, "loop 0 of 2: half a gap in");
        assert!(times.windows(2).all(|w| (999_999..=1_000_001).contains(&(w[1] - w[0]))));
        assert_eq!(*times.last().unwrap(), 999_500_000);
        let other = arrival_times(Arrival::Fixed, 2_000, &[1, 1], 1, 1_000_000_000);
        assert_eq!(other[0], 1_000_000);
    }

    /// A target no server could meet (10^10 a second) is counted by the
    /// rate past a million arrivals per look, without stalling the loop.
    #[test]
    fn an_absurd_rate_is_counted_without_drawing_every_arrival() {
        for arrival in [Arrival::Poisson, Arrival::Fixed] {
            let control = RunControl::with_arrival(None, &[1], u32::MAX, 3, arrival);
            let mut budget = Budget::new(control.clone(), None);
            let started = std::time::Instant::now();
            budget.publish(10_000_000_000);
            assert!(started.elapsed() < std::time::Duration::from_secs(5), "{arrival:?}");
            let waiting = control.backlog().waiting as f64;
            let expected = f64::from(u32::MAX) * 10.0;
            assert!((waiting / expected - 1.0).abs() < 0.01, "{arrival:?}: {waiting} vs {expected}");
            budget.publish(20_000_000_000);
            let waiting = control.backlog().waiting as f64;
            assert!((waiting / (2.0 * expected) - 1.0).abs() < 0.01, "{arrival:?}: {waiting}");
        }
    }

    /// Deadline: arrivals at or after it are never served; the waiting
    /// connections learn that the run is over. Past capacity, nothing
    /// overflows: the backlog is counted, however long, and the run goes on.
    #[test]
    fn rate_deadline_and_backlog() {
        let control = RunControl::with_rate(None, &[1], 1_000_000, 1);
        let mut budget = Budget::new(control.clone(), Some(1_000_000));
        budget.publish(u64::MAX);
        assert!(budget.queued() > 900 && budget.queued() < 1_100, "{}", budget.queued());
        assert_eq!(budget.wake_at(1_000_000), None);
        assert_eq!(budget.admit(1_000_000, 0), Admission::Over);

        // 1e6/s for 0.2 s is 200,000 arrivals: more than sysbench's queue holds.
        let control = RunControl::with_rate(None, &[1], 1_000_000, 1);
        let mut budget = Budget::new(control.clone(), None);
        budget.publish(200_000_000);
        let backlog = control.backlog();
        assert!(!control.is_stopped());
        assert!((195_000..205_000).contains(&backlog.waiting), "{backlog:?}");
        assert_eq!(backlog.arrived, backlog.waiting);
        let first = budget.arrivals.as_ref().unwrap().serve.next_ns;
        assert_eq!(backlog.oldest_ns, Some(first));
        let Admission::Start(at) = budget.admit(200_000_001, 0) else { panic!("the oldest is due") };
        assert_eq!(at, first);
        budget.publish(200_000_001);
        assert_eq!(control.backlog().waiting, backlog.waiting - 1);
        assert!(control.backlog().oldest_ns > Some(first));
    }

    /// The arrival times of loop `index` under `stages` (rate, seconds).
    fn staged_times(arrival: Arrival, stages: &[(u32, u32)], loops: &[usize], index: usize) -> Vec<u64> {
        let list = stages.iter().map(|&(rate, secs)| crate::driver::Stage { rate, secs }).collect();
        let stages = RateStages::new(list).unwrap();
        let control = RunControl::with_stages(loops, &stages, 0, 11, arrival);
        let mut budget = Budget::for_loop(control, None, index);
        let arrivals = budget.arrivals.as_mut().unwrap();
        let mut times = Vec::new();
        while let Some(at) = arrivals.oldest_due(u64::MAX - 1) {
            times.push(at);
            arrivals.serve();
        }
        times
    }

    fn per_second(times: &[u64], secs: usize) -> Vec<usize> {
        let mut counts = vec![0; secs];
        for &t in times {
            counts[(t / 1_000_000_000) as usize] += 1;
        }
        counts
    }

    /// Through a ramp from 0, a hold and a ramp down, each second gets the
    /// integral of the target over it: exactly (within one) for fixed
    /// arrivals, within 4 sd for Poisson ones; nothing after the stages.
    #[test]
    fn staged_arrivals_follow_the_target() {
        let stages = [(0, 0), (20_000, 4), (20_000, 2), (0, 2)];
        // The target's integral over each second of the 8.
        let expected = [2_500.0, 7_500.0, 12_500.0, 17_500.0, 20_000.0, 20_000.0, 15_000.0, 5_000.0];
        let fixed = staged_times(Arrival::Fixed, &stages, &[1], 0);
        assert!(fixed.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(
            fixed.len(),
            99_999,
            "the whole integral (the last at the very end, when the run is over), then none"
        );
        for (got, want) in per_second(&fixed, 8).iter().zip(expected) {
            assert!((*got as f64 - want).abs() <= 1.0, "fixed: {got} vs {want}");
        }
        // Two loops of 1 and 3 connections: a quarter and three quarters.
        let poisson: Vec<u64> =
            [0, 1].iter().flat_map(|&i| staged_times(Arrival::Poisson, &stages, &[1, 3], i)).collect();
        let counts = per_second(&poisson, 8);
        for (got, want) in counts.iter().zip(expected) {
            assert!((*got as f64 - want).abs() <= 4.0 * want.sqrt(), "poisson: {got} vs {want}");
        }
        assert!(poisson.iter().all(|&t| t < 8_000_000_000));
        let quarter = staged_times(Arrival::Poisson, &stages, &[1, 3], 0).len() as f64;
        assert!((quarter - 25_000.0).abs() < 4.0 * 25_000f64.sqrt(), "{quarter}");
    }

    /// A stage at rate 0 has no arrival, and a loop with no share none.
    #[test]
    fn a_stage_at_rate_zero_sends_nothing() {
        let times = staged_times(Arrival::Poisson, &[(1_000, 1), (0, 0), (0, 2), (1_000, 0), (1_000, 1)], &[1], 0);
        assert!(times.iter().all(|&t| !(1_000_000_000..3_000_000_000).contains(&t)));
        assert!((1_800..2_200).contains(&times.len()), "{}", times.len());
        assert!(staged_times(Arrival::Fixed, &[(1_000, 1)], &[0, 1], 0).is_empty());
    }

    /// Under stages an arrival not started within a second is dropped and
    /// counted, so the backlog stays within a second's arrivals; plain
    /// `--rate` keeps its queue and counts the late starts.
    #[test]
    fn overdue_arrivals_are_dropped_under_stages_only() {
        let stages = RateStages::new(vec![crate::driver::Stage { rate: 10_000, secs: 10 }]).unwrap();
        let control = RunControl::with_stages(&[1], &stages, 0, 5, Arrival::Fixed);
        let mut budget = Budget::new(control.clone(), Some(10_000_000_000));
        budget.publish(3_000_000_000);
        assert_eq!(control.tardiness().dropped, 20_000, "due before 2 s: dropped");
        assert_eq!(control.backlog().waiting, 10_000, "the last second's wait");
        let Admission::Start(at) = budget.admit(3_000_000_000, 0) else { panic!("due") };
        assert!(at >= 2_000_000_000, "{at}");
        budget.publish(3_000_000_000);
        assert_eq!(control.tardiness(), Tardiness { dropped: 20_000, late: 0 });
        assert!(control.target_rate(0, 5_000_000_000).is_some_and(|r| (r - 10_000.0).abs() < 1e-6));

        let control = RunControl::with_arrival(None, &[1], 10_000, 5, Arrival::Fixed);
        let mut budget = Budget::new(control.clone(), None);
        budget.publish(3_000_000_000);
        assert_eq!(control.backlog().waiting, 30_000);
        let Admission::Start(at) = budget.admit(3_000_000_000, 0) else { panic!("due") };
        assert!(at < 1_000_000);
        budget.publish(3_000_000_000);
        assert_eq!(control.tardiness(), Tardiness { dropped: 0, late: 1 });
        assert_eq!(control.target_rate(0, 1), Some(10_000.0));
    }
}
