//! The backends: how a loop moves bytes between its connections' sockets
//! and their buffers, and how it waits. io_uring (`uring/`) and each
//! connection's own socket (`socket_loop/`, which the wait plan chooses)
//! run the engine's one loop (`driver::event_loop`) and only submit and
//! wait; a tokio current-thread runtime on epoll (`tokio_backend/`) runs a
//! task per connection with the same chores; `dry.rs` does no I/O at all
//! (`--mysql-dry-run`). A replay's loops are io_uring's or the socket
//! loop's (`spawn_replay_loops`).
//!
//! It may import everything else of the driver; nothing of the driver
//! imports a backend but `driver/mod.rs`, which runs them, and the run
//! layer's dry run.

pub(crate) mod dry;
pub(crate) mod socket_loop;
pub(crate) mod tokio_backend;
pub(crate) mod uring;

use std::sync::Arc;
use std::thread::JoinHandle;

use crate::driver::event_loop::replay_conns::ReplayConns;
use crate::driver::replay::{ReplayLoopPlan, ReplaySettings};
use crate::driver::tasks::start_gate::ArrivalGuard;
use crate::driver::threads::spawn::spawn_pinned;
use crate::driver::{Backend, ConnPlan, DriverError, LoopContext, TaskBody, WaitMode};

/// Runs one loop on this thread with the backend that does its wait: the
/// socket loop for a wait on each connection's own socket, else the one
/// `--io` chose (the epoll backend always sleeps in `epoll_wait`; the run
/// layer says so when `--poll` asks otherwise).
pub(crate) fn run_loop(
    index: usize,
    connections: Vec<ConnPlan>,
    tasks: Vec<TaskBody>,
    backend: Backend,
    wait: WaitMode,
    context: &LoopContext,
    arrival: Option<ArrivalGuard>,
) -> Result<(), DriverError> {
    match (wait, backend) {
        (WaitMode::OnSocket, _) => socket_loop::run_socket_loop(index, connections, tasks, context, arrival),
        (_, Backend::Tokio) => tokio_backend::run_tokio_loop(index, connections, tasks, context, arrival),
        (_, Backend::Uring) => uring::run_uring_loop(index, connections, tasks, context, wait, arrival),
    }
}

/// Starts one pinned thread per replay loop (`wirebench replay`), on
/// `settings`' backend; each ends once its feed has ended and its
/// connections are done, or the run is stopped.
pub(crate) fn spawn_replay_loops(
    plans: Vec<ReplayLoopPlan>,
    context: &LoopContext,
    settings: &Arc<ReplaySettings>,
) -> std::io::Result<Vec<JoinHandle<Result<(), DriverError>>>> {
    let plans = plans.into_iter().map(|plan| (plan.cpu, (plan.feed, settings.clone())));
    spawn_pinned("wirebench-loop", plans, context, |index, (feed, settings), context| {
        let backend = settings.backend;
        let replay = ReplayConns::new(feed, settings);
        match backend {
            Backend::Uring => uring::run_uring_replay_loop(index, replay, context),
            Backend::Tokio => socket_loop::run_socket_replay_loop(index, replay, context),
        }
    })
}
