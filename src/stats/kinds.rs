//! Counts and latencies per statement kind (point select, range, ...,
//! begin, commit, other): one [`KindStats`] per kind, indexed by a number
//! the caller gives. The kinds themselves are the workload's (this layer
//! knows no SQL): their names come in once, at construction, and a
//! statement is recorded by its kind's index, an array index per query.

use super::latency::HdrLatency;

/// One statement kind's share of a run or an interval.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KindStats {
    /// Statements of this kind answered without an error.
    pub count: u64,
    /// Statements of this kind answered with an error that did not end the run.
    pub errors: u64,
    /// Each answered statement's latency, from when it was sent (written
    /// to the connection's send buffer) to its answer.
    pub latency: HdrLatency,
}

impl KindStats {
    fn merge(&mut self, other: &KindStats) {
        self.count += other.count;
        self.errors += other.errors;
        if other.count > 0 {
            self.latency.merge(&other.latency);
        }
    }

    fn reset(&mut self) {
        if self.count > 0 {
            self.latency.reset();
        }
        self.count = 0;
        self.errors = 0;
    }
}

/// Every kind's [`KindStats`], in the order of the names it was made with.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KindTable {
    names: &'static [&'static str],
    kinds: Box<[KindStats]>,
}

impl KindTable {
    /// A table for the kinds `names`; kind `i` is `names[i]`. Allocates
    /// every histogram now, none later.
    pub fn new(names: &'static [&'static str]) -> Self {
        KindTable { names, kinds: names.iter().map(|_| KindStats::default()).collect() }
    }

    /// A statement of kind `kind` answered after `latency_ns`. A kind
    /// beyond the table counts as its last kind (by convention "other").
    #[inline]
    #[cfg(test)]
    pub fn record(&mut self, kind: usize, latency_ns: u64) {
        if let Some(k) = self.slot(kind) {
            k.count += 1;
            k.latency.record_ns(latency_ns);
        }
    }

    /// A statement of kind `kind` answered, its latency not kept.
    #[inline]
    pub fn count(&mut self, kind: usize) {
        if let Some(k) = self.slot(kind) {
            k.count += 1;
        }
    }

    /// Kind `kind`'s latencies (a kind beyond the table: its last).
    pub fn latency_mut(&mut self, kind: usize) -> Option<&mut HdrLatency> {
        self.slot(kind).map(|k| &mut k.latency)
    }

    /// A statement of kind `kind` answered with an error that was ignored.
    #[inline]
    pub fn record_error(&mut self, kind: usize) {
        if let Some(k) = self.slot(kind) {
            k.errors += 1;
        }
    }

    #[inline]
    fn slot(&mut self, kind: usize) -> Option<&mut KindStats> {
        let last = self.kinds.len().checked_sub(1)?;
        self.kinds.get_mut(kind.min(last))
    }

    /// Adds a kind's figures kept elsewhere (a result file) to kind `kind`.
    pub fn add(&mut self, kind: usize, count: u64, errors: u64, latency: &HdrLatency) {
        if let Some(k) = self.slot(kind) {
            k.count += count;
            k.errors += errors;
            if latency.count() > 0 {
                k.latency.merge(latency);
            }
        }
    }

    /// Adds `other` in; both must have been made with the same names.
    pub fn merge(&mut self, other: &KindTable) {
        for (a, b) in self.kinds.iter_mut().zip(other.kinds.iter()) {
            a.merge(b);
        }
    }

    pub fn reset(&mut self) {
        self.kinds.iter_mut().for_each(KindStats::reset);
    }

    /// Every kind with its name, in table order, those never seen included.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &KindStats)> + '_ {
        self.names.iter().copied().zip(self.kinds.iter())
    }

    /// The kind called `name`.
    #[cfg(test)]
    pub fn get(&self, name: &str) -> Option<&KindStats> {
        self.iter().find(|(n, _)| *n == name).map(|(_, k)| k)
    }

    /// Statements answered, all kinds together.
    pub fn total(&self) -> u64 {
        self.kinds.iter().map(|k| k.count).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAMES: &[&str] = &["point_select", "commit", "other"];

    #[test]
    fn record_merge_reset() {
        let mut a = KindTable::new(NAMES);
        a.record(0, 1_000);
        a.record(0, 3_000);
        a.record(1, 50_000);
        a.record_error(1);
        a.record(7, 9);
        let mut b = KindTable::new(NAMES);
        b.record(0, 2_000);
        b.merge(&a);
        let point = b.get("point_select").unwrap();
        assert_eq!((point.count, point.latency.max_ns(), point.latency.min_ns()), (3, 3_000, 1_000));
        assert_eq!((b.get("commit").unwrap().count, b.get("commit").unwrap().errors), (1, 1));
        assert_eq!(b.get("other").unwrap().count, 1, "an unknown kind is other");
        assert_eq!(b.total(), 5);
        assert_eq!(b.iter().map(|(n, _)| n).collect::<Vec<_>>(), NAMES);
        b.reset();
        assert_eq!(b, KindTable::new(NAMES));
    }

    #[test]
    fn an_empty_table_records_nothing() {
        let mut t = KindTable::new(&[]);
        t.record(0, 1);
        assert_eq!(t.total(), 0);
    }
}
