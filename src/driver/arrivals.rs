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
pub(super) fn arrival_rng(seed: u32, stream: u32) -> Xoroshiro128Plus {
    let mut glibc = GlibcRandom::new(seed);
    for _ in 0..u64::from(stream) * 4 {
        glibc.random();
    }
    Xoroshiro128Plus::from_sysbench_thread_init(&mut glibc)
}

/// One loop's arrival times: a stream drawn in order, Poisson gaps or
/// fixed ones.
#[derive(Debug, Clone)]
pub(super) struct ArrivalSchedule {
    arrival: Arrival,
    rng: Xoroshiro128Plus,
    /// `1e9 / rate`: the mean gap in ns (sysbench's `lambda`).
    mean_gap_ns: f64,
    /// The next arrival's time.
    pub(super) next_ns: u64,
    /// Fixed arrivals: how many came before `next_ns`, and when the first
    /// was, so that `next_ns` does not drift by rounding.
    drawn: u64,
    first_ns: f64,
}

impl ArrivalSchedule {
    /// `phase` (0 to 1] places a fixed schedule's first arrival within its
    /// first gap, so that the loops' fixed arrivals interleave.
    pub(super) fn new(arrival: Arrival, rng: Xoroshiro128Plus, phase: f64) -> Self {
        ArrivalSchedule { arrival, rng, mean_gap_ns: f64::INFINITY, next_ns: 0, drawn: 0, first_ns: phase }
    }

    /// Starts the stream at `rate` arrivals per second.
    fn start(mut self, rate: f64) -> Self {
        self.mean_gap_ns = if rate > 0.0 { 1e9 / rate } else { f64::INFINITY };
        self.first_ns *= self.mean_gap_ns;
        self.next_ns = match self.arrival {
            Arrival::Poisson => self.poisson_gap(),
            // `as` saturates: an infinite gap (rate 0) never comes.
            Arrival::Fixed => self.first_ns as u64,
        };
        self
    }

    /// `sb_rand_exp()`: `-lambda * ln(1 - u)`, truncated to whole ns as
    /// sysbench adds it to its `uint64_t` schedule.
    fn poisson_gap(&mut self) -> u64 {
        let gap = -self.mean_gap_ns * (1.0 - self.rng.next_f64()).ln();
        gap as u64
    }

    /// Moves `n` arrivals on without drawing them: Poisson by their mean gap.
    fn skip(&mut self, n: u64) {
        match self.arrival {
            Arrival::Poisson => self.next_ns = self.next_ns.saturating_add((n as f64 * self.mean_gap_ns) as u64),
            Arrival::Fixed => {
                self.drawn += n;
                self.next_ns = (self.first_ns + self.drawn as f64 * self.mean_gap_ns) as u64;
            }
        }
    }

    /// Moves to the next arrival.
    #[inline]
    fn advance(&mut self) {
        self.next_ns = match self.arrival {
            Arrival::Poisson => self.next_ns.saturating_add(self.poisson_gap()),
            Arrival::Fixed => {
                self.drawn += 1;
                (self.first_ns + self.drawn as f64 * self.mean_gap_ns) as u64
            }
        };
    }
}

/// Arrivals counted one by one per look at the clock (every few ms); past
/// that, 200 million a second, the count is estimated from the rate.
const EXACT_COUNT: u32 = 1_000_000;

/// One loop's `--rate` arrivals: the next to serve and the count of those
/// due, two cursors on the same schedule; no queue to fill.
#[derive(Debug)]
pub(super) struct Arrivals {
    /// Its `next_ns` is the oldest arrival not yet served.
    pub(super) serve: ArrivalSchedule,
    /// Runs ahead of `serve`, up to the last look at the clock: its
    /// `next_ns` is the first arrival not yet due.
    count: ArrivalSchedule,
    /// Arrivals served (events started) from `serve`.
    served: u64,
    /// Arrivals due, counted by `count`.
    pub(super) due: u64,
    /// Arrivals of abandoned events, to be served again first, oldest first.
    pub(super) refunded: VecDeque<u64>,
}

impl Arrivals {
    pub(super) fn new(rate: f64, schedule: ArrivalSchedule) -> Self {
        let serve = schedule.start(rate);
        Arrivals { count: serve.clone(), serve, served: 0, due: 0, refunded: VecDeque::with_capacity(64) }
    }

    /// The oldest arrival due by `until` and not yet served.
    #[inline]
    pub(super) fn oldest_due(&self, until: u64) -> Option<u64> {
        if let Some(&at) = self.refunded.front() {
            return Some(at);
        }
        (self.serve.next_ns <= until).then_some(self.serve.next_ns)
    }

    /// The arrival [`oldest_due`](Self::oldest_due) gave is served.
    #[inline]
    pub(super) fn serve(&mut self) {
        if self.refunded.pop_front().is_none() {
            self.serve.advance();
            self.served += 1;
        }
    }

    /// When a connection should look again for an arrival.
    pub(super) fn next_to_serve(&self) -> u64 {
        self.refunded.front().copied().unwrap_or(self.serve.next_ns)
    }

    /// Counts the arrivals due by `until`: one by one up to
    /// [`EXACT_COUNT`] per look, then by the rate, so that a target far
    /// beyond what anything can serve never stalls the loop that counts.
    pub(super) fn count_due(&mut self, until: u64) {
        for _ in 0..EXACT_COUNT {
            if self.count.next_ns > until {
                return;
            }
            self.count.advance();
            self.due += 1;
        }
        if self.count.next_ns <= until {
            let behind = (until - self.count.next_ns) as f64 / self.count.mean_gap_ns;
            let skipped = behind as u64 + 1;
            self.count.skip(skipped);
            self.due += skipped;
        }
    }

    /// Arrivals due (at the last count) and not yet served.
    pub(super) fn waiting(&self) -> u64 {
        self.due.saturating_sub(self.served) + self.refunded.len() as u64
    }

    /// When the oldest waiting arrival was due.
    pub(super) fn oldest_waiting(&self) -> Option<u64> {
        self.refunded.front().copied().or((self.due > self.served).then_some(self.serve.next_ns))
    }
}
