//! The backends: how a loop moves bytes between its connections' sockets
//! and their buffers, and how it waits. io_uring (`uring/`), a tokio
//! current-thread runtime on epoll (`tokio_backend/`), each connection's
//! own socket (`socket_loop/`, which the wait plan chooses), and no I/O
//! at all (`dry.rs`, `--mysql-dry-run`).
//!
//! It may import everything else of the driver; nothing of the driver
//! imports a backend but `driver/mod.rs`, which runs them.

pub(crate) mod dry;
pub(crate) mod socket_loop;
pub(crate) mod tokio_backend;
pub(crate) mod uring;
