//! Pacing: when an event may start. The run's limits shared by every loop
//! ([`budget::RunControl`]: `--events`, `--time`, a stop), each loop's view
//! of them ([`budget::Budget`]), `--rate`'s arrivals and `--rate-stages`'
//! target over time, the client's own delay before an event's bytes reach
//! the kernel, the loops' active span, and `--shard=I/N`'s part of the
//! totals.
//!
//! It may import `stats` (where the client's delay and the backlog are
//! counted) and the driver's own types; nothing of the backends, the
//! connections or the tasks, which ask it.
//!
//! Files:
//! - `run_control.rs`: the run's limits, shared by every loop;
//!   `event_permits.rs`: a loop's `--events` permits and an event's extra
//!   weight; `budget.rs`: a loop's budget, which joins them.
//! - `arrivals.rs`: when `--rate`'s events arrive; `rate_stages.rs`:
//!   `--rate-stages`' target over time.
//! - `client_delay.rs`: the client's own delay; `active_span.rs`: how hard
//!   a loop worked from its first event to the first refused.
//! - `shard_split.rs`: `--shard=I/N`'s part of the totals.

pub(crate) mod active_span;
pub(crate) mod arrivals;
pub(crate) mod budget;
pub(crate) mod client_delay;
pub(crate) mod event_permits;
pub(crate) mod rate_stages;
pub(crate) mod run_control;
pub(crate) mod shard_split;

/// What [`Budget::admit`](budget::Budget::admit) allows a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Start an event that began at this time (ns since the run's start):
    /// now, or under `--rate` the arrival it serves.
    Start(u64),
    /// `--rate`: no arrival is due yet; wait for [`Budget::wake_at`](budget::Budget::wake_at).
    Wait,
    /// No more events will start.
    Over,
}
