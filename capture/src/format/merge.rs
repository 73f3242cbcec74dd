//! [`RecordMerge`]: records from several sources, each in its own time
//! order (a recording proxy's event loops), put in one time order for a
//! [`CaptureWriter`](super::CaptureWriter), which takes nothing earlier
//! than what it took before.
//!
//! Each source hands over its records in batches with a promise: nothing
//! it hands over later is earlier than `through_ns`. A record goes out once
//! every source still open has promised past it, so the merge holds at
//! most what the sources sent since their slowest promise.

use std::collections::VecDeque;

use super::record::Record;

/// One source's records not yet out, and its promise.
#[derive(Debug, Default)]
struct Queue {
    records: VecDeque<Record<'static>>,
    /// Nothing later from this source is earlier than this.
    through_ns: u64,
    ended: bool,
}

/// Sources' records in, one time order out.
#[derive(Debug)]
pub struct RecordMerge {
    queues: Vec<Queue>,
}

impl RecordMerge {
    pub fn new(sources: usize) -> Self {
        RecordMerge { queues: (0..sources).map(|_| Queue::default()).collect() }
    }

    /// Records of `source`, in its time order, and its promise that none
    /// it sends later is earlier than `through_ns`.
    pub fn add(&mut self, source: usize, records: impl IntoIterator<Item = Record<'static>>, through_ns: u64) {
        let Some(queue) = self.queues.get_mut(source) else { return };
        queue.records.extend(records);
        queue.through_ns = queue.through_ns.max(through_ns);
    }

    /// `source` sends nothing more.
    pub fn end(&mut self, source: usize) {
        if let Some(queue) = self.queues.get_mut(source) {
            queue.ended = true;
        }
    }

    /// Whether every source has ended and every record has gone out.
    pub fn is_done(&self) -> bool {
        self.queues.iter().all(|q| q.ended && q.records.is_empty())
    }

    /// The earliest record no source can still precede, if there is one.
    pub fn pop_ready(&mut self) -> Option<Record<'static>> {
        let settled = self.queues.iter().filter(|q| !q.ended).map(|q| q.through_ns).min().unwrap_or(u64::MAX);
        let (_, earliest) =
            self.queues.iter().enumerate().filter_map(|(i, q)| q.records.front().map(|r| (r.at_ns(), i))).min()?;
        let queue = self.queues.get_mut(earliest)?;
        if queue.records.front()?.at_ns() > settled {
            return None;
        }
        queue.records.pop_front()
    }

    /// Records held, waiting for a slower source's promise.
    pub fn held(&self) -> usize {
        self.queues.iter().map(|q| q.records.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{CloseReason, ConnectionClose};

    fn close(at_ns: u64, conn: u64) -> Record<'static> {
        Record::Close(ConnectionClose { at_ns, conn, reason: CloseReason::Quit })
    }

    fn drain(merge: &mut RecordMerge) -> Vec<(u64, u64)> {
        std::iter::from_fn(|| merge.pop_ready()).map(|r| (r.at_ns(), r.conn())).collect()
    }

    /// A record waits until every open source has promised past it; an
    /// ended source promises everything.
    #[test]
    fn records_wait_for_the_slowest_promise() {
        let mut merge = RecordMerge::new(2);
        merge.add(0, [close(10, 1), close(30, 1)], 35);
        assert_eq!(drain(&mut merge), [], "source 1 has promised nothing yet");
        merge.add(1, [close(20, 2)], 25);
        assert_eq!(drain(&mut merge), [(10, 1), (20, 2)]);
        assert_eq!(merge.held(), 1);
        merge.add(1, [], 40);
        assert_eq!(drain(&mut merge), [(30, 1)]);
        merge.add(1, [close(45, 2)], 50);
        merge.end(0);
        assert!(!merge.is_done());
        assert_eq!(drain(&mut merge), [(45, 2)]);
        merge.end(1);
        assert!(merge.is_done());
    }

    /// Equal times keep one source's order; nothing is lost or repeated.
    #[test]
    fn ties_and_many_sources() {
        let mut merge = RecordMerge::new(3);
        for source in 0..3u64 {
            merge.add(source as usize, (0..5).map(|i| close(i * 10, source * 100 + i)), 100);
        }
        let out = drain(&mut merge);
        assert_eq!(out.len(), 15);
        assert!(out.windows(2).all(|w| w[0].0 <= w[1].0));
        for source in 0..3u64 {
            let mine: Vec<u64> = out.iter().filter(|(_, c)| c / 100 == source).map(|(_, c)| c % 100).collect();
            assert_eq!(mine, [0, 1, 2, 3, 4]);
        }
    }
}
