//! The client's own delay under `--rate`: for each event, the time from
//! when it could have started (its arrival, or its connection having room
//! for it, whichever was later) to when its loop handed its first command
//! to the kernel. Queueing behind a busy server is not in it (the event
//! could not start before a connection was free); a loop too busy, or off
//! its core, to start an event on time is. It is what tells a search step
//! the client limited from one the server did (docs/search.md).
//!
//! The loop notes each event's ready time when it admits it and stamps
//! every noted event when it next hands bytes to the kernel (io_uring
//! submits once per turn; the socket loop and tokio send at once): one
//! clock read per hand-over, never per event.

use crate::stats::LoopStats;

/// Events admitted since the last hand-over: room for at least this many,
/// and for twice the loop's connections, before the list grows (every
/// loop hands over at each turn, and a turn rarely admits more events than
/// the loop has connections; a list that grew keeps its size).
const UNSENT_ROOM: usize = 1024;

/// The ready times (ns since the run's start) of the events a loop has
/// admitted and not yet handed to the kernel.
#[derive(Debug)]
pub(crate) struct UnsentStarts {
    ready_ns: Vec<u64>,
}

impl UnsentStarts {
    /// For a loop of `connections` connections (or tasks).
    pub(crate) fn for_connections(connections: usize) -> Self {
        UnsentStarts { ready_ns: Vec::with_capacity(UNSENT_ROOM.max(2 * connections)) }
    }

    /// An event admitted: it could have started at `ready_ns`.
    #[inline]
    pub(crate) fn admitted(&mut self, ready_ns: u64) {
        self.ready_ns.push(ready_ns);
    }

    /// The loop handed what it had written to the kernel at `now_ns`: each
    /// event admitted since waited that long for the client.
    #[inline]
    pub(crate) fn sent(&mut self, now_ns: u64, stats: &mut LoopStats) {
        for &ready in &self.ready_ns {
            stats.record_client_delay(now_ns.saturating_sub(ready));
        }
        self.ready_ns.clear();
    }

    /// Whether events wait to be stamped.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.ready_ns.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{Recording, StatsBoard};

    #[test]
    fn each_event_is_stamped_once_from_its_ready_time() {
        let board = StatsBoard::with_recording(&[1], &[], Recording::ALL);
        let mut stats = board.loop_stats(0);
        let mut unsent = UnsentStarts::for_connections(1);
        unsent.admitted(1_000);
        unsent.admitted(4_000);
        unsent.sent(5_000, &mut stats);
        assert!(unsent.is_empty());
        unsent.sent(9_000, &mut stats);
        board.publish(0, &mut stats);
        let mut collector = crate::stats::Collector::new(board.clone());
        collector.drain();
        let delay = collector.totals().client_delay().expect("recorded");
        assert_eq!(delay.count(), 2);
        assert_eq!((delay.min_ns(), delay.max_ns()), (1_000, 4_000));
    }
}
