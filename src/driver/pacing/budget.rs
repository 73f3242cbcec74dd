//! One loop's budget: whether, and from when, its next event may start.
//! It joins the run's limits ([`RunControl`]: the deadline, a stop), the
//! loop's `--events` permits ([`EventPermits`], with an event's weight
//! beyond one: [`ExtraEvents`]) and, with `--rate`, its share of the
//! arrivals ([`Arrivals`]); it stamps the client's own delay for the events
//! it admits ([`UnsentStarts`]) and watches the loop's active span. Owned
//! by the loop: nothing here is shared per event.

use std::sync::Arc;

use super::active_span::ActiveSpan;
use super::arrivals::{Arrivals, ON_TIME_NS};
use super::client_delay::UnsentStarts;
use super::event_permits::{EventPermits, ExtraEvents};
use super::run_control::RunControl;
use super::Admission;
use crate::stats::{LoopStats, StatsBoard};

/// An admitted event abandoned before it ran to the end ([`Budget::refund`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Abandoned {
    /// Its start as admitted ([`Admission::Start`]).
    pub at: u64,
    /// Its stamp ([`Budget::cut`] at its admission).
    pub cut: u32,
}

/// One loop's view of the limits and its share of the arrivals. Owned by
/// the loop; nothing here is shared per event.
#[derive(Debug)]
pub struct Budget {
    control: Arc<RunControl>,
    index: usize,
    permits: EventPermits,
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
    /// The loop's warm-up cut as its statistics know it
    /// ([`LoopStats::cut`]): the stamp of the events admitted now.
    cut: u32,
}

impl Budget {
    /// The budget of loop 0: for a single loop and for tests.
    pub fn new(control: Arc<RunControl>, deadline_ns: Option<u64>) -> Self {
        Self::for_loop(control, deadline_ns, 0)
    }

    /// The budget of loop `index`, with its share of `--rate`.
    pub fn for_loop(control: Arc<RunControl>, deadline_ns: Option<u64>, index: usize) -> Self {
        let (arrivals, unsent) = match control.loop_arrivals(index) {
            Some((arrivals, connections)) => (Some(arrivals), Some(UnsentStarts::for_connections(connections))),
            None => (None, None),
        };
        let (permits, span) = (EventPermits::default(), ActiveSpan::default());
        Budget { control, index, permits, deadline_ns, arrivals, unsent, span, in_progress: 0, cut: 0 }
    }

    /// Hands the loop's statistics over if the collector asked since the
    /// last time ([`StatsBoard::publish_if_requested`]); returns whether
    /// it did. The hand-over that ends the warm-up is the loop's cut: from
    /// then on its events take `--events` permits and are counted, and
    /// those it admitted before are not ([`LoopStats::counts`]).
    #[inline]
    pub fn hand_over(&mut self, board: &StatsBoard, stats: &mut LoopStats) -> bool {
        if !board.publish_if_requested(self.index, stats) {
            return false;
        }
        if stats.cut() != self.cut {
            self.cut = stats.cut();
            self.permits.pass_warmup();
        }
        true
    }

    /// The stamp of an event admitted now: whether what it does is
    /// counted when it is done ([`LoopStats::counts`]).
    #[inline]
    pub fn cut(&self) -> u32 {
        self.cut
    }

    /// Whether one more event may start now, by the closed-loop limits
    /// (deadline, stop, `--events`); takes a permit if so.
    #[inline]
    pub fn take_event(&mut self, now_ns: u64) -> bool {
        if self.deadline_ns.is_some_and(|d| now_ns >= d) || self.control.is_stopped() {
            return false;
        }
        self.permits.take(&self.control)
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

    /// The just admitted event's weight beyond one (bulk_insert's rows in
    /// one INSERT), which `--events` counts too.
    pub fn extra_events(&mut self) -> ExtraEvents<'_> {
        ExtraEvents { permits: &mut self.permits, control: &self.control }
    }

    /// `n` admitted events have finished.
    #[inline]
    pub fn finish(&mut self, n: u64) {
        self.in_progress = self.in_progress.saturating_sub(n);
    }

    /// Admitted events that were abandoned before they ran to the end
    /// (pipelined behind a lost connection or a failed statement) go back:
    /// their `--events` permits (those that took one: not the warm-up's,
    /// after the cut) and, under `--rate`, their arrivals, so that they are
    /// run again and the run still does the events asked for. `abandoned`
    /// are oldest first.
    pub fn refund(&mut self, abandoned: &[Abandoned]) {
        self.in_progress = self.in_progress.saturating_sub(abandoned.len() as u64);
        let permitted = abandoned.iter().filter(|a| a.cut == self.cut).count();
        self.permits.refund(&self.control, permitted as u64);
        if let Some(arrivals) = &mut self.arrivals {
            // Only after a failure, never per query: the queue may grow.
            arrivals.refunded.extend(abandoned.iter().map(|a| a.at));
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
        self.control.publish_gauges(self.index, self.in_progress, self.arrivals.as_ref());
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
        self.permits.spent(&self.control)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::pacing::arrivals::Arrival;
    use crate::driver::pacing::rate_stages::RateStages;
    use crate::driver::Tardiness;
    use crate::stats::QueueStats;

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

    /// With `--warmup-time`, a loop takes `--events` permits from its cut
    /// (its hand-over at the warm-up's end) on: the events it admitted
    /// before took none, are stamped with the old cut, and give none back
    /// when abandoned; exactly `--events` events are stamped with the new.
    #[test]
    fn events_count_from_the_loops_warmup_cut() {
        let control = RunControl::new(Some(3), 1);
        control.start_warmup();
        let board = StatsBoard::new(&[1]);
        let mut stats = board.loop_stats(0);
        let mut budget = Budget::new(control.clone(), None);
        let warm: Vec<_> = (0..5).map(|at| budget.admit(at, 0)).collect();
        assert!(warm.iter().all(|a| matches!(a, Admission::Start(_))), "{warm:?}");
        budget.refund(&[Abandoned { at: 0, cut: budget.cut() }]);
        board.request();
        assert!(budget.hand_over(&board, &mut stats), "an ordinary request is no cut");
        assert_eq!(budget.cut(), 0);
        board.request_warmup_cut();
        assert!(budget.hand_over(&board, &mut stats));
        assert_eq!((budget.cut(), stats.cut()), (1, 1));
        budget.refund(&[Abandoned { at: 4, cut: 0 }]);
        let counted = (10..20).take_while(|&at| budget.admit(at, 0) == Admission::Start(at)).count();
        assert_eq!(counted, 3);
    }

    /// Abandoned events come back: `--events` permits, and under `--rate`
    /// their arrivals, served again first and at their original times.
    #[test]
    fn refunded_events_run_again() {
        let mut budget = Budget::new(RunControl::new(Some(2), 1), None);
        assert_eq!(budget.admit(1, 0), Admission::Start(1));
        assert_eq!(budget.admit(2, 0), Admission::Start(2));
        assert_eq!(budget.admit(3, 0), Admission::Over);
        budget.refund(&[Abandoned { at: 2, cut: 0 }]);
        assert_eq!(budget.in_progress(), 1);
        assert_eq!(budget.admit(4, 0), Admission::Start(4));
        assert_eq!(budget.admit(5, 0), Admission::Over);

        let control = RunControl::with_rate(None, &[1], 1_000, 42);
        let mut budget = Budget::new(control, None);
        let late = budget.arrivals.as_ref().unwrap().serve.next_ns + 5_000_000;
        let Admission::Start(a) = budget.admit(late, 0) else { panic!("nothing due") };
        let Admission::Start(b) = budget.admit(late, 0) else { panic!("one due only") };
        budget.refund(&[Abandoned { at: a, cut: 0 }, Abandoned { at: b, cut: 0 }]);
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
