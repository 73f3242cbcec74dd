//! Hand-over of statistics from the event loops to the collector.
//!
//! Each event loop owns a [`LoopStats`] and records into it with plain
//! integer updates: no atomics, locks or allocation per query or event.
//! Once per report interval the collector asks every loop for its data
//! ([`StatsBoard::request`]); each loop notices on its next event or timer
//! tick ([`StatsBoard::publish_if_requested`], one relaxed atomic load) and
//! merges what it recorded since its last hand-over into its own slot, a
//! `Mutex<IntervalBlock>` that only that loop and the collector touch. The
//! collector then drains every slot, so each mutex is taken about twice per
//! interval. Merging (not swapping) into the slot means nothing is lost when
//! a loop hands over twice before the collector drains, or when the
//! collector drains a slot whose loop has not answered yet: that data
//! simply lands in the next interval.
//!
//! Only the latest interval is kept per loop; the collector keeps the
//! totals since the start (or the last checkpoint), exactly as sysbench
//! folds its intermediate histogram slots into the cumulative one.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use super::counters::{ConnStats, Counters, QueryKind};
use super::histogram::LatencyHistogram;

/// What happened on one loop between two hand-overs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IntervalBlock {
    pub counters: Counters,
    pub latency: LatencyHistogram,
    /// Indexed by the loop's own connection index.
    pub connections: Vec<ConnStats>,
}

impl IntervalBlock {
    pub fn new(connections: usize) -> Self {
        IntervalBlock {
            counters: Counters::default(),
            latency: LatencyHistogram::new(),
            connections: vec![ConnStats::default(); connections],
        }
    }

    /// Adds `other` in. Connection `i` of `other` is added to connection `i`
    /// of `self`; both blocks must come from the same loop.
    pub fn merge(&mut self, other: &IntervalBlock) {
        self.counters.merge(&other.counters);
        self.latency.merge(&other.latency);
        merge_connections(&mut self.connections, &other.connections);
    }

    pub fn reset(&mut self) {
        self.counters = Counters::default();
        self.latency.reset();
        self.connections.fill(ConnStats::default());
    }
}

fn merge_connections(into: &mut [ConnStats], from: &[ConnStats]) {
    for (a, b) in into.iter_mut().zip(from) {
        a.merge(b);
    }
}

/// One event loop's recorder. Owned by the loop; every method is a few
/// integer updates.
#[derive(Debug)]
pub struct LoopStats {
    pending: IntervalBlock,
    /// The last request epoch this loop answered.
    answered: u64,
}

impl LoopStats {
    /// A recorder for a loop driving `connections` connections.
    pub fn new(connections: usize) -> Self {
        LoopStats { pending: IntervalBlock::new(connections), answered: 0 }
    }

    #[inline]
    pub fn record_query(&mut self, kind: QueryKind) {
        self.pending.counters.count_query(kind);
    }

    /// One completed event (transaction) on the loop's connection
    /// `connection`, which took `latency_ns` (under `--rate`, measured from
    /// the intended start, queue time included, as sysbench does).
    #[inline]
    pub fn record_event(&mut self, connection: usize, latency_ns: u64) {
        self.record_events(connection, 1, latency_ns);
    }

    /// `events` sysbench events done as one wirebench event in `latency_ns`
    /// (bulk_insert: the rows of one statement): counted as `events`
    /// events, with one latency sample.
    #[inline]
    pub fn record_events(&mut self, connection: usize, events: u64, latency_ns: u64) {
        self.pending.counters.events += events;
        self.pending.latency.record_ns(latency_ns);
        if let Some(c) = self.pending.connections.get_mut(connection) {
            c.events += events;
            c.busy_ns += latency_ns;
        }
    }

    /// An error ignored by `--mysql-ignore-errors`.
    #[inline]
    pub fn record_error(&mut self) {
        self.pending.counters.errors += 1;
    }

    /// A lost connection opened again.
    #[inline]
    pub fn record_reconnect(&mut self) {
        self.pending.counters.reconnects += 1;
    }

    /// Attempts to open a lost connection again that failed.
    #[inline]
    pub fn record_failed_reconnects(&mut self, attempts: u64) {
        self.pending.counters.failed_reconnects += attempts;
    }

    /// What was recorded since the last hand-over.
    pub fn pending(&self) -> &IntervalBlock {
        &self.pending
    }
}

struct Slot {
    block: Mutex<IntervalBlock>,
    answered: AtomicU64,
}

impl Slot {
    fn lock(&self) -> MutexGuard<'_, IntervalBlock> {
        // A panic while merging plain counters leaves them usable.
        self.block.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The meeting point of the loops and the collector: one slot per loop and
/// the collector's request counter. Share it with `Arc`.
pub struct StatsBoard {
    requested: AtomicU64,
    slots: Box<[Slot]>,
}

impl StatsBoard {
    /// A board for loops driving `connections_per_loop[i]` connections each.
    pub fn new(connections_per_loop: &[usize]) -> Arc<StatsBoard> {
        let slots = connections_per_loop
            .iter()
            .map(|&n| Slot { block: Mutex::new(IntervalBlock::new(n)), answered: AtomicU64::new(0) })
            .collect();
        Arc::new(StatsBoard { requested: AtomicU64::new(0), slots })
    }

    pub fn loops(&self) -> usize {
        self.slots.len()
    }

    /// The recorder for loop `index`, sized to match its slot.
    pub fn loop_stats(&self, index: usize) -> LoopStats {
        let connections = self.slots.get(index).map_or(0, |s| s.lock().connections.len());
        LoopStats::new(connections)
    }

    /// Called by loop `index` after each event and from a periodic timer
    /// (so an idle or stuck loop still answers): hands over when the
    /// collector has asked since the last hand-over. Returns whether it did.
    #[inline]
    pub fn publish_if_requested(&self, index: usize, stats: &mut LoopStats) -> bool {
        // Relaxed: the flag only says "go"; the slot mutex orders the data.
        if self.requested.load(Ordering::Relaxed) == stats.answered {
            return false;
        }
        self.publish(index, stats);
        true
    }

    /// Hands loop `index`'s pending data over unconditionally; a loop does
    /// this once more when it finishes.
    pub fn publish(&self, index: usize, stats: &mut LoopStats) {
        let epoch = self.requested.load(Ordering::Relaxed);
        let Some(slot) = self.slots.get(index) else { return };
        slot.lock().merge(&stats.pending);
        stats.pending.reset();
        stats.answered = epoch;
        slot.answered.store(epoch, Ordering::Release);
    }

    /// Asks every loop to hand over; returns the request's epoch.
    pub fn request(&self) -> u64 {
        self.requested.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Whether every loop has answered request `epoch` (or a later one).
    pub fn all_answered(&self, epoch: u64) -> bool {
        self.slots.iter().all(|s| s.answered.load(Ordering::Acquire) >= epoch)
    }

    /// Polls [`all_answered`](Self::all_answered) until it holds or
    /// `timeout` passes. Blocks the calling thread: for the report thread.
    pub fn wait_answered(&self, epoch: u64, timeout: Duration) -> bool {
        let start = Instant::now();
        loop {
            if self.all_answered(epoch) {
                return true;
            }
            if start.elapsed() >= timeout {
                return false;
            }
            std::thread::sleep(Duration::from_micros(100));
        }
    }
}

/// One report interval, merged over all loops.
#[derive(Clone, Debug, Default)]
pub struct Interval {
    pub counters: Counters,
    pub latency: LatencyHistogram,
}

/// Everything since the start of the run (or the last
/// [`Collector::reset_totals`]), merged over all loops.
#[derive(Clone, Debug, Default)]
pub struct Totals {
    pub counters: Counters,
    pub latency: LatencyHistogram,
    /// Every connection of every loop, loop by loop.
    pub connections: Vec<ConnStats>,
}

/// Merges the loops' hand-overs into interval and run totals. Lives on the
/// report thread; allocates only in `new`.
pub struct Collector {
    board: Arc<StatsBoard>,
    interval: Interval,
    totals: Totals,
}

impl Collector {
    pub fn new(board: Arc<StatsBoard>) -> Self {
        let connections = board.slots.iter().map(|s| s.lock().connections.len()).sum();
        let totals = Totals { connections: vec![ConnStats::default(); connections], ..Totals::default() };
        Collector { board, interval: Interval::default(), totals }
    }

    pub fn board(&self) -> &Arc<StatsBoard> {
        &self.board
    }

    /// Asks the loops to hand over, waits up to `timeout` for all of them,
    /// then [`drain`](Self::drain)s. Loops that did not answer in time are
    /// counted in a later interval.
    pub fn collect(&mut self, timeout: Duration) -> &Interval {
        let epoch = self.board.request();
        self.board.wait_answered(epoch, timeout);
        self.drain()
    }

    /// Takes whatever the slots hold now as the next interval and adds it to
    /// the totals.
    pub fn drain(&mut self) -> &Interval {
        self.interval.counters = Counters::default();
        self.interval.latency.reset();
        let mut offset = 0;
        for slot in self.board.slots.iter() {
            let mut block = slot.lock();
            self.interval.counters.merge(&block.counters);
            self.interval.latency.merge(&block.latency);
            let n = block.connections.len();
            if let Some(mine) = self.totals.connections.get_mut(offset..offset + n) {
                merge_connections(mine, &block.connections);
            }
            offset += n;
            block.reset();
        }
        self.totals.counters.merge(&self.interval.counters);
        self.totals.latency.merge(&self.interval.latency);
        &self.interval
    }

    /// The last drained interval.
    pub fn interval(&self) -> &Interval {
        &self.interval
    }

    pub fn totals(&self) -> &Totals {
        &self.totals
    }

    /// Starts the totals afresh, as sysbench does after each
    /// `--report-checkpoints` report.
    pub fn reset_totals(&mut self) {
        self.totals.counters = Counters::default();
        self.totals.latency.reset();
        self.totals.connections.fill(ConnStats::default());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loop_stats_record() {
        let mut s = LoopStats::new(2);
        s.record_query(QueryKind::Read);
        s.record_query(QueryKind::Write);
        s.record_query(QueryKind::Other);
        s.record_error();
        s.record_reconnect();
        s.record_event(1, 5_000_000);
        s.record_event(1, 7_000_000);
        s.record_event(0, 1_000_000);
        let p = s.pending();
        assert_eq!(
            p.counters,
            Counters { reads: 1, writes: 1, others: 1, events: 3, errors: 1, reconnects: 1, failed_reconnects: 0 }
        );
        assert_eq!(
            p.connections,
            vec![ConnStats { events: 1, busy_ns: 1_000_000 }, ConnStats { events: 2, busy_ns: 12_000_000 }]
        );
        assert_eq!(p.latency.events(), 3);
        assert_eq!(p.latency.sum_ns(), 13_000_000);
    }

    #[test]
    fn publish_only_when_requested() {
        let board = StatsBoard::new(&[1]);
        let mut s = board.loop_stats(0);
        s.record_event(0, 10);
        assert!(!board.publish_if_requested(0, &mut s));
        let epoch = board.request();
        assert!(!board.all_answered(epoch));
        assert!(board.publish_if_requested(0, &mut s));
        assert!(board.all_answered(epoch));
        assert_eq!(s.pending().counters, Counters::default());
        assert!(!board.publish_if_requested(0, &mut s));
    }

    #[test]
    fn intervals_and_totals() {
        let board = StatsBoard::new(&[2, 1]);
        let mut collector = Collector::new(Arc::clone(&board));
        let mut a = board.loop_stats(0);
        let mut b = board.loop_stats(1);

        a.record_event(0, 1_000_000);
        a.record_event(1, 2_000_000);
        b.record_event(0, 3_000_000);
        board.request();
        board.publish_if_requested(0, &mut a);
        board.publish_if_requested(1, &mut b);
        let i1 = collector.drain().clone();
        assert_eq!(i1.counters.events, 3);
        assert_eq!(i1.latency.max_ns(), 3_000_000);

        // Loop b hands over twice before the next drain: both count.
        b.record_event(0, 4_000_000);
        board.request();
        board.publish_if_requested(1, &mut b);
        b.record_event(0, 5_000_000);
        board.request();
        board.publish_if_requested(1, &mut b);
        let i2 = collector.drain().clone();
        assert_eq!(i2.counters.events, 2);
        assert_eq!(i2.latency.min_ns(), 4_000_000);

        let t = collector.totals();
        assert_eq!(t.counters.events, 5);
        assert_eq!(t.latency.sum_ns(), 15_000_000);
        assert_eq!(
            t.connections,
            vec![
                ConnStats { events: 1, busy_ns: 1_000_000 },
                ConnStats { events: 1, busy_ns: 2_000_000 },
                ConnStats { events: 3, busy_ns: 12_000_000 },
            ]
        );

        collector.reset_totals();
        assert_eq!(collector.totals().counters, Counters::default());
        assert_eq!(collector.totals().connections.len(), 3);
    }

    #[test]
    fn threads_lose_nothing() {
        const LOOPS: usize = 4;
        const EVENTS: u64 = 20_000;
        let board = StatsBoard::new(&[3; LOOPS]);
        let mut collector = Collector::new(Arc::clone(&board));
        let workers: Vec<_> = (0..LOOPS)
            .map(|index| {
                let board = Arc::clone(&board);
                std::thread::spawn(move || {
                    let mut stats = board.loop_stats(index);
                    for n in 0..EVENTS {
                        stats.record_query(QueryKind::Read);
                        stats.record_event((n % 3) as usize, 1_000 + n);
                        board.publish_if_requested(index, &mut stats);
                    }
                    board.publish(index, &mut stats);
                })
            })
            .collect();
        let mut seen = 0;
        for _ in 0..50 {
            seen += collector.collect(Duration::from_millis(1)).counters.events;
        }
        for w in workers {
            assert!(w.join().is_ok());
        }
        seen += collector.drain().counters.events;
        let t = collector.totals();
        assert_eq!(seen, LOOPS as u64 * EVENTS);
        assert_eq!(t.counters.events, LOOPS as u64 * EVENTS);
        assert_eq!(t.counters.reads, LOOPS as u64 * EVENTS);
        assert_eq!(t.latency.events(), LOOPS as u64 * EVENTS);
        assert_eq!(t.connections.iter().map(|c| c.events).sum::<u64>(), LOOPS as u64 * EVENTS);
        let per_loop_sum: u64 = (0..EVENTS).map(|n| 1_000 + n).sum();
        assert_eq!(t.latency.sum_ns(), LOOPS as u64 * per_loop_sum);
    }
}
