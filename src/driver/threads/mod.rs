//! The loops' threads: the cores they may be pinned to, the short time
//! slices they ask for, and the time they waited for a core.
//!
//! It imports nothing of the driver but its errors' types.

pub(crate) mod cpus;
