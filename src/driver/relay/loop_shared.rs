//! What the pairs of one relay loop share, on its one thread: the clock
//! their records are dated with, the loop's batch of records and the taps'
//! counts, the options, and the connection ids all loops draw from.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::SyncSender;
use std::sync::Arc;

use wirebench_capture::format::Record;
use wirebench_capture::import::ImportReport;

use super::recording::Shipment;
use super::RelayOptions;
use crate::driver::Clock;

/// What a loop's pairs share, on its one thread.
pub(super) struct RelayShared {
    pub(super) index: usize,
    pub(super) options: Arc<RelayOptions>,
    pub(super) clock: Clock,
    pub(super) epoch_ns: u64,
    pub(super) next_id: Arc<AtomicU64>,
    pub(super) records: RefCell<Vec<Record<'static>>>,
    pub(super) counts: RefCell<ImportReport>,
    /// Applications answered ERR 2003 since the last batch.
    pub(super) upstream_failures: Cell<u64>,
}

impl RelayShared {
    /// Now, ns since the Unix epoch, from the run's monotonic clock.
    pub(super) fn now_ns(&self) -> u64 {
        self.epoch_ns + self.clock.now_ns()
    }

    /// A connection id no other loop gives.
    pub(super) fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Runs `f` on the loop's batch of records and its counts.
    pub(super) fn with_records<T>(&self, f: impl FnOnce(&mut Vec<Record<'static>>, &mut ImportReport) -> T) -> T {
        f(&mut self.records.borrow_mut(), &mut self.counts.borrow_mut())
    }

    pub(super) fn notice(&self, line: &str) {
        (self.options.notices)(line);
    }

    /// Sends the batch, and the counts with the last one. A recording
    /// thread that is gone (its file failed) has stopped the run already.
    pub(super) fn ship(&self, inlet: &SyncSender<Shipment>, last: bool) {
        let records = std::mem::take(&mut *self.records.borrow_mut());
        let counts = last.then(|| std::mem::take(&mut *self.counts.borrow_mut()));
        let upstream_failures = self.upstream_failures.take();
        let shipment =
            Shipment { source: self.index, records, through_ns: self.now_ns(), last: counts, upstream_failures };
        let _ = inlet.send(shipment);
    }
}
