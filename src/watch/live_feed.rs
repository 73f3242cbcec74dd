//! The live page's events: every result line of the command so far (an
//! interval, a step, a final result), as JSON, kept in order so that a
//! page opened late, or an `EventSource` reconnecting with its
//! `Last-Event-ID`, gets them all. The report thread appends; each page's
//! connection thread waits for more on the condition variable, never
//! holding the lock while it writes.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

#[derive(Default)]
struct FeedState {
    events: Vec<Arc<str>>,
    /// The command has ended: no event will follow.
    ended: bool,
    /// The server is stopping: connections return now.
    closed: bool,
}

/// The events of one command.
#[derive(Default)]
pub struct LiveFeed {
    state: Mutex<FeedState>,
    changed: Condvar,
}

/// What a page's connection reads next.
#[derive(Debug, PartialEq, Eq)]
pub enum FeedRead {
    /// The events from the cursor on.
    Events(Vec<Arc<str>>),
    /// None came in the wait: time for a keep-alive comment.
    Quiet,
    /// Every event is read and the command has ended.
    Ended,
    /// The server is stopping.
    Closed,
}

impl LiveFeed {
    fn lock(&self) -> MutexGuard<'_, FeedState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Appends one event's JSON.
    pub fn publish(&self, json: String) {
        self.lock().events.push(Arc::from(json));
        self.changed.notify_all();
    }

    /// The command has ended.
    pub fn end(&self) {
        self.lock().ended = true;
        self.changed.notify_all();
    }

    /// Connections return at their next read.
    pub fn close(&self) {
        self.lock().closed = true;
        self.changed.notify_all();
    }

    /// Events from `cursor` (the number already read) on, waiting up to
    /// `wait` for one.
    pub fn read_from(&self, cursor: usize, wait: Duration) -> FeedRead {
        let mut state = self.lock();
        if state.events.len() <= cursor && !state.ended && !state.closed {
            state = self.changed.wait_timeout(state, wait).unwrap_or_else(PoisonError::into_inner).0;
        }
        if state.closed {
            return FeedRead::Closed;
        }
        match state.events.get(cursor..) {
            Some(new) if !new.is_empty() => FeedRead::Events(new.to_vec()),
            _ if state.ended => FeedRead::Ended,
            _ => FeedRead::Quiet,
        }
    }

    /// Every event so far, for the report written at the end.
    pub fn all(&self) -> Vec<Arc<str>> {
        self.lock().events.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reader_gets_what_came_and_waits_for_more() {
        let feed = Arc::new(LiveFeed::default());
        feed.publish("a".into());
        assert_eq!(feed.read_from(0, Duration::ZERO), FeedRead::Events(vec![Arc::from("a")]));
        assert_eq!(feed.read_from(1, Duration::from_millis(1)), FeedRead::Quiet);
        let writer = {
            let feed = Arc::clone(&feed);
            std::thread::spawn(move || feed.publish("b".into()))
        };
        let mut read = feed.read_from(1, Duration::from_secs(30));
        while read == FeedRead::Quiet {
            read = feed.read_from(1, Duration::from_secs(30));
        }
        assert_eq!(read, FeedRead::Events(vec![Arc::from("b")]));
        writer.join().unwrap();
        feed.end();
        assert_eq!(feed.read_from(0, Duration::ZERO), FeedRead::Events(vec![Arc::from("a"), Arc::from("b")]));
        assert_eq!(feed.read_from(2, Duration::from_secs(30)), FeedRead::Ended, "no wait once ended");
        feed.close();
        assert_eq!(feed.read_from(0, Duration::from_secs(30)), FeedRead::Closed);
    }
}
