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
use super::error_codes::ErrorCodes;
use super::histogram::LatencyHistogram;
#[cfg(test)]
use super::kinds::KindStats;
use super::kinds::KindTable;
use super::latency::{HdrLatency, HdrRecorder};

/// Latencies of one stretch of the run, each kept two ways: sysbench's
/// histogram for its report, byte for byte, and HdrHistograms for every
/// other figure.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Latencies {
    /// Each event's latency in sysbench's histogram: from the event's
    /// start, which under `--rate` is its intended start (its arrival), so
    /// queue time is included, as in sysbench.
    pub sysbench: LatencyHistogram,
    /// The same latencies in an HdrHistogram: under `--rate`, corrected
    /// for coordinated omission (as wrk2).
    pub events: HdrLatency,
    /// Each event's service time: from when its first command was sent to
    /// its last answer, queue time excluded. Equal to `events` without
    /// `--rate`.
    pub service: HdrLatency,
    /// Under `--rate`, the client's own delay of each event: from when it
    /// could have started (its arrival, or its connection having room,
    /// whichever was later) to when the loop handed its first command to
    /// the kernel. Empty without `--rate`.
    pub client_delay: HdrLatency,
    /// Each statement, by kind.
    pub kinds: KindTable,
}

impl Latencies {
    pub fn new(kind_names: &'static [&'static str]) -> Self {
        Latencies {
            sysbench: LatencyHistogram::new(),
            events: HdrLatency::new(),
            service: HdrLatency::new(),
            client_delay: HdrLatency::new(),
            kinds: KindTable::new(kind_names),
        }
    }

    pub fn merge(&mut self, other: &Latencies) {
        self.sysbench.merge(&other.sysbench);
        if other.events.count() > 0 {
            self.events.merge(&other.events);
            self.service.merge(&other.service);
        }
        if other.client_delay.count() > 0 {
            self.client_delay.merge(&other.client_delay);
        }
        self.kinds.merge(&other.kinds);
    }

    pub fn reset(&mut self) {
        self.sysbench.reset();
        if self.events.count() > 0 {
            self.events.reset();
            self.service.reset();
        }
        if self.client_delay.count() > 0 {
            self.client_delay.reset();
        }
        self.kinds.reset();
    }
}

/// Which latencies the loops record besides sysbench's histogram and the
/// events' HdrHistogram. Each costs an HdrHistogram update per query, so
/// only what an output will show is recorded; statement counts always are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Recording {
    /// Each event's service time apart from its latency (`--rate`: without
    /// it the two are the same, and [`Totals::service`] is the latency).
    pub service_time: bool,
    /// The client's own delay of each event (`--rate`, see
    /// [`Latencies::client_delay`]).
    pub client_delay: bool,
    /// Each statement's latency by kind (`--per-statement`, `--hdr-log`,
    /// JSON output).
    pub statement_latency: bool,
}

impl Recording {
    /// Every latency: for tests and tools that read them all.
    pub const ALL: Recording = Recording { service_time: true, client_delay: true, statement_latency: true };
}

/// What happened on one loop between two hand-overs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IntervalBlock {
    pub counters: Counters,
    pub latencies: Latencies,
    /// Indexed by the loop's own connection index.
    pub connections: Vec<ConnStats>,
    /// The ignored errors that came with a server error code.
    pub error_codes: ErrorCodes,
}

impl IntervalBlock {
    pub fn new(connections: usize, kind_names: &'static [&'static str]) -> Self {
        IntervalBlock {
            counters: Counters::default(),
            latencies: Latencies::new(kind_names),
            connections: vec![ConnStats::default(); connections],
            error_codes: ErrorCodes::default(),
        }
    }

    /// Adds `other` in. Connection `i` of `other` is added to connection `i`
    /// of `self`; both blocks must come from the same loop.
    pub fn merge(&mut self, other: &IntervalBlock) {
        self.counters.merge(&other.counters);
        self.latencies.merge(&other.latencies);
        merge_connections(&mut self.connections, &other.connections);
        self.error_codes.merge(&other.error_codes);
    }

    pub fn reset(&mut self) {
        self.counters = Counters::default();
        self.latencies.reset();
        self.connections.fill(ConnStats::default());
        self.error_codes.reset();
    }

    /// Nothing recorded: every record counts in the counters or a kind.
    fn is_empty(&self) -> bool {
        self.counters == Counters::default() && self.latencies.kinds.total() == 0
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
    /// The HdrHistogram latencies as they are recorded, moved into
    /// `pending` at hand-over ([`HdrRecorder`]: a few instructions a value).
    event_latency: HdrRecorder,
    /// Allocated under `Recording::service_time` only.
    service_time: Option<HdrRecorder>,
    /// Allocated under `Recording::client_delay` only.
    client_delay: Option<HdrRecorder>,
    /// One per kind under `Recording::statement_latency`, else none.
    statement_latency: Box<[HdrRecorder]>,
    /// The last request epoch this loop answered.
    answered: u64,
    /// How many warm-up cuts this loop has passed (0 or 1): an event
    /// admitted before the cut is stamped 0 and is not counted after it
    /// ([`counts`](Self::counts)).
    cut: u32,
    /// The counts handed over so far (for [`LoopStats::counters_so_far`]).
    handed_over: Counters,
}

impl LoopStats {
    /// A recorder for a loop driving `connections` connections, with no
    /// statement kinds (every statement is counted in no kind).
    pub fn new(connections: usize) -> Self {
        Self::with_kinds(connections, &[])
    }

    /// A recorder that also keeps the statement kinds `kind_names`, and
    /// every latency.
    pub fn with_kinds(connections: usize, kind_names: &'static [&'static str]) -> Self {
        Self::with_recording(connections, kind_names, Recording::ALL)
    }

    /// A recorder for the statement kinds `kind_names` that records the
    /// latencies `recording` asks for.
    pub fn with_recording(connections: usize, kind_names: &'static [&'static str], recording: Recording) -> Self {
        LoopStats {
            pending: IntervalBlock::new(connections, kind_names),
            event_latency: HdrRecorder::new(),
            service_time: recording.service_time.then(HdrRecorder::new),
            client_delay: recording.client_delay.then(HdrRecorder::new),
            statement_latency: match recording.statement_latency {
                true => kind_names.iter().map(|_| HdrRecorder::new()).collect(),
                false => Box::new([]),
            },
            answered: 0,
            cut: 0,
            handed_over: Counters::default(),
        }
    }

    /// The loop's cut: the stamp of the events it admits now.
    #[inline]
    pub fn cut(&self) -> u32 {
        self.cut
    }

    /// Whether what an event stamped `cut` at its admission does is
    /// counted now: an event admitted in the warm-up belongs to it, however
    /// late it ends, so that the measured run counts whole events only, and
    /// each of them took an `--events` permit.
    #[inline]
    pub fn counts(&self, cut: u32) -> bool {
        cut == self.cut
    }

    /// The warm-up is over for this loop: what it recorded since its last
    /// hand-over belongs to the warm-up and is dropped here, not handed
    /// over, so that a loop that answers after the collector has moved on
    /// still cannot add warm-up events to the measured run.
    fn pass_warmup_cut(&mut self) {
        self.flush_latencies();
        self.handed_over.merge(&self.pending.counters);
        self.pending.reset();
        self.cut += 1;
    }

    /// Moves the latencies recorded since the last hand-over into the
    /// pending block's HdrHistograms.
    fn flush_latencies(&mut self) {
        let latencies = &mut self.pending.latencies;
        self.event_latency.drain_into(&mut latencies.events);
        if let Some(service) = &mut self.service_time {
            service.drain_into(&mut latencies.service);
        }
        if let Some(delay) = &mut self.client_delay {
            delay.drain_into(&mut latencies.client_delay);
        }
        for (kind, recorder) in self.statement_latency.iter_mut().enumerate() {
            if let Some(latency) = latencies.kinds.latency_mut(kind) {
                recorder.drain_into(latency);
            }
        }
    }

    #[inline]
    pub fn record_query(&mut self, kind: QueryKind) {
        self.pending.counters.count_query(kind);
    }

    /// One completed event (transaction) on the loop's connection
    /// `connection`, which took `latency_ns` (under `--rate`, measured from
    /// the intended start, queue time included, as sysbench does) and
    /// `service_ns` from its first command's send.
    #[inline]
    pub fn record_event(&mut self, connection: usize, latency_ns: u64, service_ns: u64) {
        self.record_events(connection, 1, latency_ns, service_ns);
    }

    /// `events` sysbench events done as one wirebench event in `latency_ns`
    /// (bulk_insert: the rows of one statement): counted as `events`
    /// events, with one latency sample.
    #[inline]
    pub fn record_events(&mut self, connection: usize, events: u64, latency_ns: u64, service_ns: u64) {
        self.pending.counters.events += events;
        let latencies = &mut self.pending.latencies;
        latencies.sysbench.record_ns(latency_ns);
        self.event_latency.record_ns(latency_ns);
        if let Some(service) = &mut self.service_time {
            service.record_ns(service_ns);
        }
        if let Some(c) = self.pending.connections.get_mut(connection) {
            c.events += events;
            c.busy_ns += latency_ns;
        }
    }

    /// Whether the client's delay is recorded (`--rate`).
    #[inline]
    pub fn records_client_delay(&self) -> bool {
        self.client_delay.is_some()
    }

    /// An event's first command went to the kernel `delay_ns` after it
    /// could have started ([`Latencies::client_delay`]).
    #[inline]
    pub fn record_client_delay(&mut self, delay_ns: u64) {
        if let Some(delay) = &mut self.client_delay {
            delay.record_ns(delay_ns);
        }
    }

    /// A statement of kind `kind` (an index into the kind names) answered
    /// `latency_ns` after it was sent.
    #[inline]
    pub fn record_statement(&mut self, kind: usize, latency_ns: u64) {
        self.pending.latencies.kinds.count(kind);
        let last = self.statement_latency.len().saturating_sub(1);
        if let Some(recorder) = self.statement_latency.get_mut(kind.min(last)) {
            recorder.record_ns(latency_ns);
        }
    }

    /// A statement of kind `kind` answered with an ignored error.
    #[inline]
    pub fn record_statement_error(&mut self, kind: usize) {
        self.pending.latencies.kinds.record_error(kind);
    }

    /// An error ignored by `--mysql-ignore-errors`.
    #[inline]
    pub fn record_error(&mut self) {
        self.pending.counters.errors += 1;
    }

    /// An error with the server's code `code`, ignored by
    /// `--mysql-ignore-errors`: counted as [`record_error`](Self::record_error)
    /// does, and by its code.
    #[inline]
    pub fn record_error_code(&mut self, code: u16) {
        self.record_error();
        self.pending.error_codes.record(code);
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

    /// Adds `more` to the counts, as if each had been recorded here (a
    /// script's own `sb_counter_inc`).
    #[inline]
    pub fn add_counters(&mut self, more: &Counters) {
        self.pending.counters.merge(more);
    }

    /// What was recorded since the last hand-over; its HdrHistograms are
    /// filled at hand-over ([`StatsBoard::publish`]).
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
    /// The request at which the warm-up ends ([`request_warmup_cut`](Self::request_warmup_cut));
    /// `u64::MAX` until then.
    warmup_cut: AtomicU64,
    slots: Box<[Slot]>,
    kind_names: &'static [&'static str],
    recording: Recording,
}

impl StatsBoard {
    /// A board for loops driving `connections_per_loop[i]` connections each.
    pub fn new(connections_per_loop: &[usize]) -> Arc<StatsBoard> {
        Self::with_kinds(connections_per_loop, &[])
    }

    /// A board whose loops also keep the statement kinds `kind_names`, and
    /// every latency.
    pub fn with_kinds(connections_per_loop: &[usize], kind_names: &'static [&'static str]) -> Arc<StatsBoard> {
        Self::with_recording(connections_per_loop, kind_names, Recording::ALL)
    }

    /// A board whose loops keep the statement kinds `kind_names` and record
    /// the latencies `recording` asks for.
    pub fn with_recording(
        connections_per_loop: &[usize],
        kind_names: &'static [&'static str],
        recording: Recording,
    ) -> Arc<StatsBoard> {
        let slots = connections_per_loop
            .iter()
            .map(|&n| Slot { block: Mutex::new(IntervalBlock::new(n, kind_names)), answered: AtomicU64::new(0) })
            .collect();
        let (requested, warmup_cut) = (AtomicU64::new(0), AtomicU64::new(u64::MAX));
        Arc::new(StatsBoard { requested, warmup_cut, slots, kind_names, recording })
    }

    /// The statement kinds the loops keep.
    pub fn kind_names(&self) -> &'static [&'static str] {
        self.kind_names
    }

    /// The recorder for loop `index`, sized to match its slot.
    pub fn loop_stats(&self, index: usize) -> LoopStats {
        let connections = self.slots.get(index).map_or(0, |s| s.lock().connections.len());
        LoopStats::with_recording(connections, self.kind_names, self.recording)
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

    /// Asks every loop to hand over, as [`request`](Self::request), and
    /// ends the warm-up there: each loop's answer to this request is its
    /// cut ([`LoopStats::counts`]). Returns the request's epoch.
    pub fn request_warmup_cut(&self) -> u64 {
        // Only the collector's thread requests: the next epoch is ours.
        let epoch = self.requested.load(Ordering::Relaxed) + 1;
        self.warmup_cut.store(epoch, Ordering::Relaxed);
        // Release: a loop that sees this epoch sees the cut too.
        self.requested.fetch_add(1, Ordering::Release) + 1
    }

    /// Hands loop `index`'s pending data over unconditionally; a loop does
    /// this once more when it finishes.
    pub fn publish(&self, index: usize, stats: &mut LoopStats) {
        let epoch = self.requested.load(Ordering::Acquire);
        let Some(slot) = self.slots.get(index) else { return };
        if stats.cut == 0 && epoch >= self.warmup_cut.load(Ordering::Relaxed) {
            stats.pass_warmup_cut();
        }
        stats.flush_latencies();
        stats.handed_over.merge(&stats.pending.counters);
        let mut block = slot.lock();
        // The collector drained the slot (and cleared it, on its own
        // thread): swapping hands the data over without the loop clearing
        // its histograms, hundreds of KB each.
        if block.is_empty() {
            std::mem::swap(&mut *block, &mut stats.pending);
        } else {
            block.merge(&stats.pending);
            stats.pending.reset();
        }
        drop(block);
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
    pub latencies: Latencies,
}

impl Interval {
    pub fn new(kind_names: &'static [&'static str]) -> Self {
        Interval { counters: Counters::default(), latencies: Latencies::new(kind_names) }
    }

    /// Adds `other` in (an interval a checkpoint collected that the next
    /// interim line must still show).
    pub fn merge(&mut self, other: &Interval) {
        self.counters.merge(&other.counters);
        self.latencies.merge(&other.latencies);
    }

    pub fn reset(&mut self) {
        self.counters = Counters::default();
        self.latencies.reset();
    }
}

/// Everything since the start of the run (or the end of the warm-up, or
/// the last [`Collector::reset_totals`]), merged over all loops.
///
/// The read API for reports and machine-readable output: every figure is
/// here, as a field or a method.
#[derive(Clone, Debug, Default)]
pub struct Totals {
    pub counters: Counters,
    pub latencies: Latencies,
    /// Every connection of every loop, loop by loop.
    pub connections: Vec<ConnStats>,
}

impl Totals {
    /// sysbench's histogram of the events' latencies: what its report
    /// prints (min/avg/max/sum exact, its percentile bucketed).
    pub fn sysbench_latency(&self) -> &LatencyHistogram {
        &self.latencies.sysbench
    }

    /// Each event's latency in an HdrHistogram; under `--rate` from its
    /// intended start (corrected for coordinated omission).
    pub fn latency(&self) -> &HdrLatency {
        &self.latencies.events
    }

    /// Percentile `p` (0-100) of the events' latency in ms, from the
    /// HdrHistogram: exact to 3 digits, never above the max, no cap.
    #[cfg(test)]
    pub fn latency_percentile(&self, p: f64) -> f64 {
        self.latencies.events.percentile_ms(p)
    }

    /// Each event's service time (from its first send, queue time
    /// excluded); the same as [`latency`](Self::latency) without `--rate`.
    pub fn service(&self) -> &HdrLatency {
        // Recorded apart only under --rate (Recording::service_time).
        if self.latencies.service.count() == 0 {
            &self.latencies.events
        } else {
            &self.latencies.service
        }
    }

    /// The client's own delay of each event under `--rate`
    /// ([`Latencies::client_delay`]); `None` when none was recorded.
    pub fn client_delay(&self) -> Option<&HdrLatency> {
        (self.latencies.client_delay.count() > 0).then_some(&self.latencies.client_delay)
    }

    /// Percentile `p` of the events' service time in ms.
    #[cfg(test)]
    pub fn service_percentile(&self, p: f64) -> f64 {
        self.service().percentile_ms(p)
    }

    /// Counts, errors and latencies per statement kind, every kind the
    /// workload names (kinds never sent have a count of 0).
    #[cfg(test)]
    pub fn per_kind(&self) -> impl Iterator<Item = (&'static str, &KindStats)> + '_ {
        self.latencies.kinds.iter()
    }

    /// Events per second over `elapsed_s` seconds (the run's measured time).
    pub fn events_per_second(&self, elapsed_s: f64) -> f64 {
        self.counters.events as f64 / elapsed_s
    }
}

/// Merges the loops' hand-overs into interval and run totals. Lives on the
/// report thread; allocates only in `new`.
pub struct Collector {
    board: Arc<StatsBoard>,
    interval: Interval,
    /// The last drained interval's errors by code.
    interval_error_codes: ErrorCodes,
    totals: Totals,
}

impl Collector {
    pub fn new(board: Arc<StatsBoard>) -> Self {
        let connections = board.slots.iter().map(|s| s.lock().connections.len()).sum();
        let kind_names = board.kind_names;
        let totals = Totals {
            counters: Counters::default(),
            latencies: Latencies::new(kind_names),
            connections: vec![ConnStats::default(); connections],
        };
        Collector { board, interval: Interval::new(kind_names), interval_error_codes: ErrorCodes::default(), totals }
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

    /// The end of `--warmup-time`: asks the loops to hand over for the
    /// last time in the warm-up ([`StatsBoard::request_warmup_cut`]),
    /// waits up to `timeout`, drains, and starts the totals afresh. A loop
    /// that answers later drops its warm-up tail itself.
    pub fn cut_warmup(&mut self, timeout: Duration) -> &Interval {
        let epoch = self.board.request_warmup_cut();
        self.board.wait_answered(epoch, timeout);
        self.drain();
        self.reset_totals();
        &self.interval
    }

    /// Takes whatever the slots hold now as the next interval and adds it to
    /// the totals.
    pub fn drain(&mut self) -> &Interval {
        self.interval.reset();
        self.interval_error_codes.reset();
        let mut offset = 0;
        for slot in self.board.slots.iter() {
            let mut block = slot.lock();
            self.interval.counters.merge(&block.counters);
            self.interval.latencies.merge(&block.latencies);
            self.interval_error_codes.merge(&block.error_codes);
            let n = block.connections.len();
            if let Some(mine) = self.totals.connections.get_mut(offset..offset + n) {
                merge_connections(mine, &block.connections);
            }
            offset += n;
            block.reset();
        }
        self.totals.counters.merge(&self.interval.counters);
        self.totals.latencies.merge(&self.interval.latencies);
        &self.interval
    }

    /// The last drained interval.
    pub fn interval(&self) -> &Interval {
        &self.interval
    }

    /// The last drained interval's ignored errors, by the server's code.
    pub fn interval_error_codes(&self) -> &ErrorCodes {
        &self.interval_error_codes
    }

    pub fn totals(&self) -> &Totals {
        &self.totals
    }

    /// Starts the totals afresh, as sysbench does after each
    /// `--report-checkpoints` report and at the end of `--warmup-time`.
    pub fn reset_totals(&mut self) {
        self.totals.counters = Counters::default();
        self.totals.latencies.reset();
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
        s.record_event(1, 5_000_000, 5_000_000);
        s.record_event(1, 7_000_000, 7_000_000);
        s.record_event(0, 1_000_000, 1_000_000);
        let p = s.pending();
        assert_eq!(
            p.counters,
            Counters { reads: 1, writes: 1, others: 1, events: 3, errors: 1, reconnects: 1, failed_reconnects: 0 }
        );
        assert_eq!(
            p.connections,
            vec![ConnStats { events: 1, busy_ns: 1_000_000 }, ConnStats { events: 2, busy_ns: 12_000_000 }]
        );
        assert_eq!(p.latencies.sysbench.events(), 3);
        assert_eq!(p.latencies.sysbench.sum_ns(), 13_000_000);
    }

    #[test]
    fn publish_only_when_requested() {
        let board = StatsBoard::new(&[1]);
        let mut s = board.loop_stats(0);
        s.record_event(0, 10, 10);
        assert!(!board.publish_if_requested(0, &mut s));
        let epoch = board.request();
        assert!(!board.all_answered(epoch));
        assert!(board.publish_if_requested(0, &mut s));
        assert!(board.all_answered(epoch));
        assert_eq!(s.pending().counters, Counters::default());
        assert!(!board.publish_if_requested(0, &mut s));
    }

    /// Each loop's answer to the warm-up's last request is its cut: what
    /// it recorded before is dropped, even when it answers after the
    /// collector has drained and moved on, and what an event of the
    /// warm-up does afterwards is no longer counted.
    #[test]
    fn the_warmup_cut_is_each_loops_answer() {
        let board = StatsBoard::new(&[1, 1]);
        let mut collector = Collector::new(Arc::clone(&board));
        let (mut on_time, mut late) = (board.loop_stats(0), board.loop_stats(1));
        on_time.record_event(0, 1_000, 1_000);
        late.record_event(0, 1_000, 1_000);
        assert!(on_time.counts(0) && late.counts(0));
        let epoch = board.request_warmup_cut();
        assert!(board.publish_if_requested(0, &mut on_time));
        assert!(!board.all_answered(epoch));
        collector.cut_warmup(Duration::ZERO);
        assert_eq!(collector.totals().counters.events, 0);
        late.record_event(0, 1_000, 1_000);
        assert!(board.publish_if_requested(1, &mut late));
        for stats in [&mut on_time, &mut late] {
            assert_eq!((stats.cut(), stats.counts(0), stats.counts(1)), (1, false, true));
            stats.record_event(0, 2_000, 2_000);
        }
        board.request();
        board.publish_if_requested(0, &mut on_time);
        board.publish_if_requested(1, &mut late);
        collector.drain();
        assert_eq!(collector.totals().counters.events, 2, "the warm-up's records are gone");
    }

    #[test]
    fn intervals_and_totals() {
        let board = StatsBoard::new(&[2, 1]);
        let mut collector = Collector::new(Arc::clone(&board));
        let mut a = board.loop_stats(0);
        let mut b = board.loop_stats(1);

        a.record_event(0, 1_000_000, 1_000_000);
        a.record_event(1, 2_000_000, 2_000_000);
        b.record_event(0, 3_000_000, 3_000_000);
        board.request();
        board.publish_if_requested(0, &mut a);
        board.publish_if_requested(1, &mut b);
        let i1 = collector.drain().clone();
        assert_eq!(i1.counters.events, 3);
        assert_eq!(i1.latencies.sysbench.max_ns(), 3_000_000);

        // Loop b hands over twice before the next drain: both count.
        b.record_event(0, 4_000_000, 4_000_000);
        board.request();
        board.publish_if_requested(1, &mut b);
        b.record_event(0, 5_000_000, 5_000_000);
        board.request();
        board.publish_if_requested(1, &mut b);
        let i2 = collector.drain().clone();
        assert_eq!(i2.counters.events, 2);
        assert_eq!(i2.latencies.sysbench.min_ns(), 4_000_000);

        let t = collector.totals();
        assert_eq!(t.counters.events, 5);
        assert_eq!(t.latencies.sysbench.sum_ns(), 15_000_000);
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

    /// The HdrHistograms and the statement kinds merge over loops and
    /// intervals as the counters do; the totals' read API sees them.
    #[test]
    fn hdr_and_kinds_reach_the_totals() {
        const KINDS: &[&str] = &["point_select", "commit", "other"];
        let board = StatsBoard::with_kinds(&[1, 1], KINDS);
        let mut collector = Collector::new(Arc::clone(&board));
        let (mut a, mut b) = (board.loop_stats(0), board.loop_stats(1));
        for ms in 1..=100u64 {
            a.record_event(0, ms * 1_000_000, ms * 500_000);
            a.record_statement(0, ms * 1_000);
        }
        b.record_event(0, 5_000_000_000, 1_000_000);
        b.record_statement(1, 7_000);
        b.record_statement_error(1);
        board.publish(0, &mut a);
        collector.drain();
        board.publish(1, &mut b);
        let interval = collector.drain();
        assert_eq!(interval.latencies.events.count(), 1);
        let t = collector.totals();
        assert_eq!(t.latency().count(), 101);
        let p50 = t.latency_percentile(50.0);
        assert!((51.0..51.0 * 1.001).contains(&p50), "to 3 digits, at the top of its bucket: {p50}");
        assert_eq!(t.latency_percentile(100.0), 5_000.0, "above sysbench's buckets, exact");
        assert_eq!(t.service_percentile(100.0), 50.0);
        let kinds: Vec<(&str, u64, u64)> = t.per_kind().map(|(n, k)| (n, k.count, k.errors)).collect();
        assert_eq!(kinds, [("point_select", 100, 0), ("commit", 1, 1), ("other", 0, 0)]);
        assert_eq!(t.per_kind().next().unwrap().1.latency.max_ns(), 100_000);
        assert!((t.events_per_second(2.0) - 50.5).abs() < 1e-9);
        collector.reset_totals();
        assert_eq!(collector.totals().latency().count(), 0);
        assert_eq!(collector.totals().per_kind().map(|(_, k)| k.count).sum::<u64>(), 0);
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
                        stats.record_event((n % 3) as usize, 1_000 + n, 1_000 + n);
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
        assert_eq!(t.latencies.sysbench.events(), LOOPS as u64 * EVENTS);
        assert_eq!(t.connections.iter().map(|c| c.events).sum::<u64>(), LOOPS as u64 * EVENTS);
        let per_loop_sum: u64 = (0..EVENTS).map(|n| 1_000 + n).sum();
        assert_eq!(t.latencies.sysbench.sum_ns(), LOOPS as u64 * per_loop_sum);
    }
}
