//! The loops' threads: one per loop, spawned, named and pinned
//! (`spawn.rs`, which also counts the ended ones for the report thread);
//! the cores they may be pinned to and the short time slices they ask for
//! (`cpus.rs`); what they spent and how hard they worked (`loop_usage.rs`).
//!
//! It may import the driver's context and errors; nothing of the
//! backends, whose loops it runs.

pub(crate) mod cpus;
pub(crate) mod loop_usage;
pub(crate) mod spawn;
