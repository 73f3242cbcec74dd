//! sysbench's per-thread counters (`sb_counter.h`), as plain integers owned
//! by one event loop.

/// What a finished query counts as, by sysbench's rule (`db_driver.c`):
/// a statement that returned a result set is a read, DML that changed rows
/// is a write, everything else (BEGIN, COMMIT, DML that matched no rows,
/// SET, ...) is "other".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueryKind {
    Read,
    Write,
    Other,
}

impl QueryKind {
    /// sysbench's classification of a finished statement.
    pub fn classify(returned_result_set: bool, affected_rows: u64) -> QueryKind {
        if returned_result_set {
            QueryKind::Read
        } else if affected_rows > 0 {
            QueryKind::Write
        } else {
            QueryKind::Other
        }
    }
}

/// `SB_CNT_*`: queries by kind, events (transactions), ignored errors and
/// reconnects. Either totals since some point or a delta between two
/// snapshots; the arithmetic is the same.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub reads: u64,
    pub writes: u64,
    pub others: u64,
    /// Completed events, which the SQL report calls transactions.
    pub events: u64,
    /// Errors ignored by `--mysql-ignore-errors` (each restarts its event),
    /// and with `--pipeline` > 1 any error in the already-sent rest of a
    /// failed event, which sysbench would never have sent.
    pub errors: u64,
    /// Lost connections opened again (sysbench's counter: it retries
    /// until the reconnect works).
    pub reconnects: u64,
    /// Attempts to open a lost connection again that failed, or were
    /// abandoned when the run ended; wirebench's own, reported apart.
    pub failed_reconnects: u64,
}

impl Counters {
    #[inline]
    pub fn count_query(&mut self, kind: QueryKind) {
        match kind {
            QueryKind::Read => self.reads += 1,
            QueryKind::Write => self.writes += 1,
            QueryKind::Other => self.others += 1,
        }
    }

    /// reads + writes + others: sysbench's "queries".
    pub fn queries(&self) -> u64 {
        self.reads + self.writes + self.others
    }

    pub fn merge(&mut self, other: &Counters) {
        self.reads += other.reads;
        self.writes += other.writes;
        self.others += other.others;
        self.events += other.events;
        self.errors += other.errors;
        self.reconnects += other.reconnects;
        self.failed_reconnects += other.failed_reconnects;
    }

    /// What happened between snapshot `earlier` and `self` (both totals of
    /// the same monotonic counters), as `sb_counters_checkpoint()` computes.
    #[cfg(test)]
    pub fn delta(&self, earlier: &Counters) -> Counters {
        Counters {
            reads: self.reads.wrapping_sub(earlier.reads),
            writes: self.writes.wrapping_sub(earlier.writes),
            others: self.others.wrapping_sub(earlier.others),
            events: self.events.wrapping_sub(earlier.events),
            errors: self.errors.wrapping_sub(earlier.errors),
            reconnects: self.reconnects.wrapping_sub(earlier.reconnects),
            failed_reconnects: self.failed_reconnects.wrapping_sub(earlier.failed_reconnects),
        }
    }
}

/// One connection's share of the work, for "Threads fairness". sysbench
/// runs one connection per thread and reports per thread; wirebench
/// reports per connection, which is the same unit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConnStats {
    /// Completed events.
    pub events: u64,
    /// Sum of those events' latencies (`sb_timer_sum()`, "execution time").
    pub busy_ns: u64,
}

impl ConnStats {
    pub fn merge(&mut self, other: &ConnStats) {
        self.events += other.events;
        self.busy_ns += other.busy_ns;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(reads: u64, writes: u64, others: u64, events: u64, errors: u64, reconnects: u64) -> Counters {
        Counters { reads, writes, others, events, errors, reconnects, failed_reconnects: errors + reconnects }
    }

    #[test]
    fn classify() {
        assert_eq!(QueryKind::classify(true, 0), QueryKind::Read);
        assert_eq!(QueryKind::classify(false, 1), QueryKind::Write);
        assert_eq!(QueryKind::classify(false, 0), QueryKind::Other);
    }

    #[test]
    fn count_and_queries() {
        let mut x = Counters::default();
        for k in [QueryKind::Read, QueryKind::Read, QueryKind::Write, QueryKind::Other] {
            x.count_query(k);
        }
        assert_eq!(x, c(2, 1, 1, 0, 0, 0));
        assert_eq!(x.queries(), 4);
    }

    #[test]
    fn merge_and_delta() {
        let a = c(1, 2, 3, 4, 5, 6);
        let b = c(10, 20, 30, 40, 50, 60);
        let mut ab = a;
        ab.merge(&b);
        let mut ba = b;
        ba.merge(&a);
        assert_eq!(ab, ba);
        assert_eq!(ab, c(11, 22, 33, 44, 55, 66));
        assert_eq!(ab.delta(&a), b);
        assert_eq!(ab.delta(&ab), Counters::default());
    }
}
