//! Tests whose measure is the rate a run achieves (`--rate-stages` against
//! the null server, the capacity search against `null-server --serial`
//! and the test MariaDB): a binary of their own, so that no test of another file
//! runs beside them and takes the cores the rate needs (tests/README.md).

#[path = "../common/mod.rs"]
mod common;

mod rate_stages;
mod replay_search;
mod search;

use std::sync::{Condvar, Mutex, MutexGuard};

/// The machine as this binary's tests share it: a test against the null
/// server at a few hundred or thousand events a second takes a few percent
/// of a core, so such tests run side by side; a test that loads the cores
/// (a search on MariaDB, spinning threads) runs with no other. Light tests
/// go first even when a heavy one is waiting (unlike `RwLock`, which queues
/// them behind it): they all start together and the heavy ones follow,
/// instead of the light ones starting in two waves around the heavy ones.
struct Machine {
    /// How many light tests run, or `None` while a heavy one does.
    light_tests: Mutex<Option<usize>>,
    changed: Condvar,
}

static MACHINE: Machine = Machine { light_tests: Mutex::new(Some(0)), changed: Condvar::new() };

impl Machine {
    fn state(&self) -> MutexGuard<'_, Option<usize>> {
        self.light_tests.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn wait<'a>(&self, state: MutexGuard<'a, Option<usize>>) -> MutexGuard<'a, Option<usize>> {
        self.changed.wait(state).unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Held by a test for as long as it runs; lets the others in when dropped.
#[must_use]
struct Turn {
    light: bool,
}

impl Drop for Turn {
    fn drop(&mut self) {
        let mut state = MACHINE.state();
        *state = match (*state, self.light) {
            (Some(running), true) => Some(running - 1),
            _ => Some(0),
        };
        MACHINE.changed.notify_all();
    }
}

/// For a test that leaves the cores nearly idle: it runs beside the others
/// that do.
fn light_on_the_cores() -> Turn {
    let mut state = MACHINE.state();
    while state.is_none() {
        state = MACHINE.wait(state);
    }
    *state = state.map(|running| running + 1);
    Turn { light: true }
}

/// For a test that loads the cores: it waits for the machine to itself.
fn the_cores_to_itself() -> Turn {
    let mut state = MACHINE.state();
    while *state != Some(0) {
        state = MACHINE.wait(state);
    }
    *state = None;
    Turn { light: false }
}
