//! The backends: how a loop moves bytes between its connections' sockets
//! and their buffers, and how it waits. io_uring (`uring/`) and each
//! connection's own socket (`socket_loop/`, which the wait plan chooses)
//! run the engine's one loop (`driver::event_loop`) and only submit and
//! wait; a tokio current-thread runtime on epoll (`tokio_backend/`) runs a
//! task per connection with the same chores; `dry.rs` does no I/O at all
//! (`--mysql-dry-run`).
//!
//! It may import everything else of the driver; nothing of the driver
//! imports a backend but `driver/mod.rs`, which runs them, and the run
//! layer's dry run.

pub(crate) mod dry;
pub(crate) mod socket_loop;
pub(crate) mod tokio_backend;
pub(crate) mod uring;

use crate::driver::tasks::start_gate::ArrivalGuard;
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
