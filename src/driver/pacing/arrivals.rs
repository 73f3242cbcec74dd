//! The `--rate` arrival schedule: when each loop's events arrive.
//!
//! `--rate` (sysbench's open loop). sysbench runs one generator thread that
//! queues Poisson arrivals (exponential gaps, mean 1e9/rate ns) into one
//! 131072-slot ring; a free worker takes the oldest, and its latency counts
//! from that arrival (queue time included). Here each loop generates its own
//! Poisson stream with rate `rate × its connections / all connections`;
//! independent Poisson streams add up to one Poisson stream of rate `rate`,
//! so the server sees sysbench's arrival process. A loop's connection
//! starts an event only once the loop's oldest unserved arrival is due, and
//! the event's start is that arrival's intended time, not the send time.
//! Arrivals due and not yet served form the loop's backlog. sysbench
//! keeps them in a 131072-slot ring and aborts the run when it is full
//! ("The event queue is full", #483); here the backlog is not stored but
//! counted: the schedule is a random stream, so the loop keeps two cursors
//! on it, the next arrival to serve and the last one due, and the backlog
//! is the distance between them, however long. An overloaded run goes on
//! to its end, and the report says by how much the target was missed.
//! Unlike sysbench, an arrival waits for a connection of its own loop, not
//! for any free connection. `--rate-arrival=fixed` spaces the arrivals
//! evenly instead ([`Arrival::Fixed`]).

use std::collections::VecDeque;
use std::sync::Arc;

use crate::driver::pacing::rate_stages::RateProfile;
use crate::rand::{GlibcRandom, Xoroshiro128Plus};

/// How `--rate` arrivals are spaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Arrival {
    /// Exponential gaps, a Poisson process, as sysbench.
    #[default]
    Poisson,
    /// Every gap `1 / rate` (per loop, the loops' phases spread evenly).
    Fixed,
}

/// The stream sysbench's thread `stream` would draw from after
/// `srandom(seed)`: distinct from every connection's.
pub(crate) fn arrival_rng(seed: u32, stream: u32) -> Xoroshiro128Plus {
    let mut glibc = GlibcRandom::new(seed);
    for _ in 0..u64::from(stream) * 4 {
        glibc.random();
    }
    Xoroshiro128Plus::from_sysbench_thread_init(&mut glibc)
}

/// How fast a loop's arrivals come.
#[derive(Debug, Clone)]
pub(crate) enum Pace {
    /// `--rate`: one rate; the mean gap in ns (sysbench's `lambda`).
    Constant { mean_gap_ns: f64 },
    /// `--rate-stages`: the loop's target over time; the next arrival
    /// comes when the expected arrivals reach `position`
    /// ([`RateProfile::time_of`]), `piece` the profile's piece it is in.
    Stages { profile: Arc<RateProfile>, position: f64, piece: usize },
}

impl Pace {
    /// `rate` arrivals per second.
    pub(crate) fn constant(rate: f64) -> Self {
        Pace::Constant { mean_gap_ns: if rate > 0.0 { 1e9 / rate } else { f64::INFINITY } }
    }

    pub(crate) fn stages(profile: Arc<RateProfile>) -> Self {
        Pace::Stages { profile, position: 0.0, piece: 0 }
    }
}

/// One loop's arrival times: a stream drawn in order, Poisson gaps or
/// fixed ones.
#[derive(Debug, Clone)]
pub(crate) struct ArrivalSchedule {
    arrival: Arrival,
    rng: Xoroshiro128Plus,
    pace: Pace,
    /// The next arrival's time.
    pub(crate) next_ns: u64,
    /// Fixed arrivals at a constant pace: how many came before `next_ns`,
    /// and when the first was, so that `next_ns` does not drift by rounding.
    drawn: u64,
    first_ns: f64,
}

impl ArrivalSchedule {
    /// `phase` (0 to 1] places a fixed schedule's first arrival within its
    /// first gap, so that the loops' fixed arrivals interleave.
    pub(crate) fn new(arrival: Arrival, rng: Xoroshiro128Plus, phase: f64) -> Self {
        let pace = Pace::constant(0.0);
        ArrivalSchedule { arrival, rng, pace, next_ns: 0, drawn: 0, first_ns: phase }
    }

    /// Starts the stream at `pace`.
    fn start(mut self, pace: Pace) -> Self {
        self.pace = pace;
        self.next_ns = match &mut self.pace {
            Pace::Constant { mean_gap_ns } => {
                self.first_ns *= *mean_gap_ns;
                match self.arrival {
                    Arrival::Poisson => self.poisson_gap(),
                    // `as` saturates: an infinite gap (rate 0) never comes.
                    Arrival::Fixed => self.first_ns as u64,
                }
            }
            Pace::Stages { position, .. } => {
                // The first fixed arrival where the integral reaches the
                // phase, the next ones a whole arrival apart.
                *position = match self.arrival {
                    Arrival::Poisson => unit_gap(&mut self.rng),
                    Arrival::Fixed => self.first_ns,
                };
                self.stage_time()
            }
        };
        self
    }

    /// `sb_rand_exp()`: `-lambda * ln(1 - u)`, truncated to whole ns as
    /// sysbench adds it to its `uint64_t` schedule.
    fn poisson_gap(&mut self) -> u64 {
        let Pace::Constant { mean_gap_ns } = self.pace else { return 0 };
        let gap = -mean_gap_ns * (1.0 - self.rng.next_f64()).ln();
        gap as u64
    }

    /// Under stages, when the expected arrivals reach the position; never
    /// (`u64::MAX`) past the last stage.
    #[inline]
    fn stage_time(&mut self) -> u64 {
        let Pace::Stages { profile, position, piece } = &mut self.pace else { return self.next_ns };
        // `as` saturates; past the last stage nothing comes.
        profile.time_of(*position, piece).map_or(u64::MAX, |t| t as u64)
    }

    /// Moves `n` arrivals on without drawing them: Poisson by their mean gap.
    fn skip(&mut self, n: u64) {
        match (&mut self.pace, self.arrival) {
            (Pace::Constant { mean_gap_ns }, Arrival::Poisson) => {
                self.next_ns = self.next_ns.saturating_add((n as f64 * *mean_gap_ns) as u64)
            }
            (Pace::Constant { mean_gap_ns }, Arrival::Fixed) => {
                self.drawn += n;
                self.next_ns = (self.first_ns + self.drawn as f64 * *mean_gap_ns) as u64;
            }
            (Pace::Stages { position, .. }, _) => {
                *position += n as f64;
                self.next_ns = self.stage_time();
            }
        }
    }

    /// About how many arrivals come from the next one to `until`: the
    /// count of a look too far behind to draw them one by one.
    fn expected_until(&self, until: u64) -> f64 {
        match &self.pace {
            Pace::Constant { mean_gap_ns } => until.saturating_sub(self.next_ns) as f64 / mean_gap_ns,
            Pace::Stages { profile, position, piece } => {
                (profile.expected_by(until as f64, &mut piece.clone()) - position).max(0.0)
            }
        }
    }

    /// Moves to the next arrival.
    #[inline]
    fn advance(&mut self) {
        self.next_ns = match (&mut self.pace, self.arrival) {
            (Pace::Constant { .. }, Arrival::Poisson) => self.next_ns.saturating_add(self.poisson_gap()),
            (Pace::Constant { mean_gap_ns }, Arrival::Fixed) => {
                self.drawn += 1;
                (self.first_ns + self.drawn as f64 * *mean_gap_ns) as u64
            }
            (Pace::Stages { position, .. }, arrival) => {
                *position += match arrival {
                    Arrival::Poisson => unit_gap(&mut self.rng),
                    Arrival::Fixed => 1.0,
                };
                self.stage_time()
            }
        };
    }
}

/// A gap of a unit-rate Poisson stream: exponential with mean 1.
#[inline]
fn unit_gap(rng: &mut Xoroshiro128Plus) -> f64 {
    -(1.0 - rng.next_f64()).ln()
}

/// An event starts on time within this of its arrival: one that starts
/// later counts as late, and under `--rate-stages` an arrival not started
/// by then is dropped. A second: far beyond a healthy server's latency,
/// short enough that a stage the server cannot hold shows within it.
pub(crate) const ON_TIME_NS: u64 = 1_000_000_000;

/// Arrivals counted one by one per look at the clock (every few ms); past
/// that, 200 million a second, the count is estimated from the rate.
const EXACT_COUNT: u32 = 1_000_000;

/// One loop's `--rate` arrivals: the next to serve and the count of those
/// due, two cursors on the same schedule; no queue to fill.
#[derive(Debug)]
pub(crate) struct Arrivals {
    /// Its `next_ns` is the oldest arrival not yet served.
    pub(crate) serve: ArrivalSchedule,
    /// Runs ahead of `serve`, up to the last look at the clock: its
    /// `next_ns` is the first arrival not yet due.
    count: ArrivalSchedule,
    /// Arrivals taken from `serve`: events started, or dropped.
    served: u64,
    /// Arrivals due, counted by `count`.
    pub(crate) due: u64,
    /// Arrivals of abandoned events, to be served again first, oldest first.
    pub(crate) refunded: VecDeque<u64>,
    /// Under stages, arrivals that could not start on time and never will
    /// ([`drop_overdue`](Self::drop_overdue)).
    pub(crate) dropped: u64,
    /// Events that started more than [`ON_TIME_NS`] after their arrival.
    pub(crate) late: u64,
}

impl Arrivals {
    pub(crate) fn new(pace: Pace, schedule: ArrivalSchedule) -> Self {
        let serve = schedule.start(pace);
        let refunded = VecDeque::with_capacity(64);
        Arrivals { count: serve.clone(), serve, served: 0, due: 0, refunded, dropped: 0, late: 0 }
    }

    /// The oldest arrival due by `until` and not yet served.
    #[inline]
    pub(crate) fn oldest_due(&self, until: u64) -> Option<u64> {
        if let Some(&at) = self.refunded.front() {
            return Some(at);
        }
        (self.serve.next_ns <= until).then_some(self.serve.next_ns)
    }

    /// The arrival [`oldest_due`](Self::oldest_due) gave is served.
    #[inline]
    pub(crate) fn serve(&mut self) {
        if self.refunded.pop_front().is_none() {
            self.serve.advance();
            self.served += 1;
        }
    }

    /// When a connection should look again for an arrival.
    pub(crate) fn next_to_serve(&self) -> u64 {
        self.refunded.front().copied().unwrap_or(self.serve.next_ns)
    }

    /// Counts the arrivals due by `until`: one by one up to
    /// [`EXACT_COUNT`] per look, then by the rate, so that a target far
    /// beyond what anything can serve never stalls the loop that counts.
    pub(crate) fn count_due(&mut self, until: u64) {
        for _ in 0..EXACT_COUNT {
            if self.count.next_ns > until {
                return;
            }
            self.count.advance();
            self.due += 1;
        }
        if self.count.next_ns <= until {
            let skipped = self.count.expected_until(until) as u64 + 1;
            self.count.skip(skipped);
            self.due += skipped;
        }
    }

    /// Drops the arrivals due and not started that were due more than
    /// [`ON_TIME_NS`] before `now_ns`: they could not start on time, and
    /// under stages they never will, so that the backlog stays within what
    /// the loop's connections could have started on time. One by one up to
    /// [`EXACT_COUNT`] per look, then by the rate, as
    /// [`count_due`](Self::count_due) counts.
    pub(crate) fn drop_overdue(&mut self, now_ns: u64) {
        let limit = now_ns.saturating_sub(ON_TIME_NS);
        for _ in 0..EXACT_COUNT {
            if self.due <= self.served || self.serve.next_ns >= limit {
                return;
            }
            self.serve.advance();
            self.served += 1;
            self.dropped += 1;
        }
        if self.due > self.served && self.serve.next_ns < limit {
            let skipped = (self.serve.expected_until(limit) as u64 + 1).min(self.due - self.served);
            self.serve.skip(skipped);
            self.served += skipped;
            self.dropped += skipped;
        }
    }

    /// Arrivals due (at the last count) and not yet served.
    pub(crate) fn waiting(&self) -> u64 {
        self.due.saturating_sub(self.served) + self.refunded.len() as u64
    }

    /// When the oldest waiting arrival was due.
    pub(crate) fn oldest_waiting(&self) -> Option<u64> {
        self.refunded.front().copied().or((self.due > self.served).then_some(self.serve.next_ns))
    }
}
