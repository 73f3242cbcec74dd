//! Records into the capture in time order, whatever order the source
//! produced them in.
//!
//! A source produces a record when it knows it, which can be after records
//! of other connections that are later in time (an answer is known only
//! when the next command shows which reading of it was right; a slow log
//! writes a statement when it ends, its start earlier). The emitter holds
//! records until the source says nothing earlier can come (its watermark),
//! then writes them in time order. A record that still comes too late is
//! written at the time of the last record written, and counted.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::io::Write;

use crate::format::{CaptureWriter, Record, Totals, WriteError};

struct Held {
    at_ns: u64,
    /// Production order, which breaks ties.
    order: u64,
    record: Record<'static>,
}

impl PartialEq for Held {
    fn eq(&self, other: &Self) -> bool {
        (self.at_ns, self.order) == (other.at_ns, other.order)
    }
}
impl Eq for Held {}
impl PartialOrd for Held {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Held {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.at_ns, self.order).cmp(&(other.at_ns, other.order))
    }
}

/// Records moved to a later time because they came after the watermark passed them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LateRecords {
    pub count: u64,
    pub max_ns: u64,
}

pub(crate) struct Emitter<W: Write> {
    writer: CaptureWriter<W>,
    held: BinaryHeap<Reverse<Held>>,
    order: u64,
    last_ns: u64,
    pub(crate) late: LateRecords,
}

impl<W: Write> Emitter<W> {
    pub(crate) fn new(writer: CaptureWriter<W>) -> Self {
        Emitter { writer, held: BinaryHeap::new(), order: 0, last_ns: 0, late: LateRecords::default() }
    }

    pub(crate) fn push(&mut self, record: Record<'static>) {
        self.order += 1;
        self.held.push(Reverse(Held { at_ns: record.at_ns(), order: self.order, record }));
    }

    /// Writes every held record at or before `watermark`.
    pub(crate) fn release(&mut self, watermark: u64) -> Result<(), WriteError> {
        while self.held.peek().is_some_and(|Reverse(h)| h.at_ns <= watermark) {
            let Some(Reverse(mut held)) = self.held.pop() else { break };
            if held.at_ns < self.last_ns {
                self.late.count += 1;
                self.late.max_ns = self.late.max_ns.max(self.last_ns - held.at_ns);
                held.record.set_at_ns(self.last_ns);
            }
            self.last_ns = held.record.at_ns();
            self.writer.append(&held.record)?;
        }
        Ok(())
    }

    pub(crate) fn finish(mut self) -> Result<(W, Totals, LateRecords), WriteError> {
        self.release(u64::MAX)?;
        let totals = self.writer.totals();
        Ok((self.writer.finish()?, totals, self.late))
    }
}
