//! The last complete interval's families, published for the scrapes: the
//! report thread swaps in a new list once per interval; a scrape takes
//! the current one (a reference count, under a lock held for nothing
//! else) and writes its text outside the lock. A scrape never reaches the
//! event loops, and never waits for the report thread's work.

use std::sync::{Arc, Mutex, PoisonError};

use super::exposition::{exposition, TextFormat};
use super::families::{CommonLabels, Family};

pub struct Scoreboard {
    latest: Mutex<Arc<Vec<Family>>>,
    common: CommonLabels,
}

impl Scoreboard {
    pub fn new(common: CommonLabels) -> Scoreboard {
        Scoreboard { latest: Mutex::new(Arc::new(Vec::new())), common }
    }

    pub fn publish(&self, families: Vec<Family>) {
        *self.latest.lock().unwrap_or_else(PoisonError::into_inner) = Arc::new(families);
    }

    pub fn latest(&self) -> Arc<Vec<Family>> {
        Arc::clone(&self.latest.lock().unwrap_or_else(PoisonError::into_inner))
    }

    pub fn common(&self) -> &CommonLabels {
        &self.common
    }

    /// `/metrics`' body in `format`.
    pub fn exposition(&self, format: TextFormat) -> String {
        exposition(&self.latest(), &self.common, format)
    }
}
