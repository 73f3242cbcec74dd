//! Replayed connections (`wirebench replay`): a capture's connections run
//! on the engine's loops, each opened when its capture opened it and sending
//! its captured commands at their times, its answers compared with the
//! captured ones. What a loop does here is what it does for a built-in
//! test's connections (the same sockets, transports, waits and timeouts);
//! only what fills a connection and what its answers count for differ.
//!
//! - `feed.rs`: the items the capture's reader hands each loop (the
//!   reader is the replay layer's), in batches through a bounded queue.
//! - `replayed_conn.rs`: one connection's state machine, without I/O
//!   (`replayed_conn_tests.rs`: its tests, against answers made in memory).
//! - `replay_tally.rs`: what a loop counts per statement, and the
//!   differences from the capture.
//! - `epoll_replay.rs`: the replayed connections on a loop of the epoll
//!   backend (tokio), a task each, and the loop's intake of its feed.

pub(crate) mod epoll_replay;
pub(crate) mod feed;
pub(crate) mod replay_tally;
pub(crate) mod replay_work;
pub(crate) mod replayed_conn;

use std::sync::Arc;
use std::thread::JoinHandle;

use epoll_replay::{run_replay_loop, ReplayLoopPlan, ReplaySettings};

use super::backends::uring::run_uring_replay_loop;
use super::event_loop::replay_conns::ReplayConns;
use super::{spawn_pinned, Backend, DriverError, LoopContext};

/// Starts one pinned thread per replay loop; each ends once its feed has
/// ended and its connections are done, or the run is stopped.
pub(crate) fn spawn_replay_loops(
    plans: Vec<ReplayLoopPlan>,
    context: &LoopContext,
    settings: &Arc<ReplaySettings>,
) -> std::io::Result<Vec<JoinHandle<Result<(), DriverError>>>> {
    let plans = plans.into_iter().map(|plan| (plan.cpu, (plan.feed, settings.clone())));
    spawn_pinned("wirebench-loop", plans, context, |index, (feed, settings), context| match settings.backend {
        Backend::Uring => run_uring_replay_loop(index, ReplayConns::new(feed, settings), context),
        Backend::Tokio => run_replay_loop(index, feed, settings, context),
    })
}
