//! A connection of the socket loop: its socket, its buffers, and where it
//! is in its life. Nothing is ever in flight between two exchanges, so a
//! connection is either running or retired.

use bytes::BytesMut;

use crate::driver::connections::conn_io::ConnIo;
use crate::driver::connections::recv_buffer::RecvBuffer;
use crate::driver::connections::waits::{WaitLimits, Waits};
use crate::driver::tasks::task_calls::TaskLink;
use crate::driver::{Budget, ConnPlan, DriverError, IgnoreErrors, StdSocket};
use crate::stats::LoopStats;

/// A connection's socket, its buffers and its state.
pub(super) struct SocketConn {
    /// Its session and transport: `recv` and `out` hold wire bytes.
    pub(super) io: ConnIo,
    /// Owns the descriptor; closed when the connection is replaced or the
    /// loop ends.
    socket: StdSocket,
    pub(super) recv: RecvBuffer,
    /// The commands being sent.
    pub(super) out: Vec<u8>,
    /// Running, or retired: done, failed, or lost for good.
    pub(super) running: bool,
    /// Since when its receive and send have waited.
    pub(super) waits: Waits,
    pub(super) limits: WaitLimits,
    /// The task whose connection it is, if any, and its call.
    pub(super) task: TaskLink,
}

impl SocketConn {
    pub(super) fn new(plan: ConnPlan) -> SocketConn {
        let (io, socket, leftover) = ConnIo::from_plan(plan);
        Self::with_io(io, socket, leftover, TaskLink::default())
    }

    /// A connection whose sends and receives never block: each exchange
    /// waits for its socket in `poll`, where it can look at the run.
    pub(super) fn with_io(io: ConnIo, socket: StdSocket, leftover: BytesMut, task: TaskLink) -> SocketConn {
        let limits = io.wait_limits();
        SocketConn {
            io,
            socket,
            recv: RecvBuffer::new(&leftover),
            out: Vec::with_capacity(1024),
            running: true,
            waits: Waits::default(),
            limits,
            task,
        }
    }

    pub(super) fn raw_fd(&self) -> std::os::fd::RawFd {
        std::os::fd::AsRawFd::as_raw_fd(&self.socket)
    }

    /// Takes over the socket of a connection opened again
    /// ([`ConnIo::reopen_blocking`]), with fresh buffers; the old socket
    /// closes.
    pub(super) fn replace(&mut self, socket: StdSocket, leftover: BytesMut) {
        self.socket = socket;
        self.recv = RecvBuffer::new(&leftover);
        self.out.clear();
        self.waits = Waits::default();
    }

    /// Lets the session append its next commands to `out`.
    pub(super) fn fill(&mut self, now: u64, budget: &mut Budget) -> Result<(), DriverError> {
        self.io.fill(&mut self.out, now, budget)
    }

    /// Hands the session the responses received so far.
    pub(super) fn on_input(
        &mut self,
        now: u64,
        stats: &mut LoopStats,
        ignore: &IgnoreErrors,
    ) -> Result<(), DriverError> {
        let used = self.io.on_input(self.recv.unread(), now, stats, ignore)?;
        self.recv.consume(used);
        Ok(())
    }
}
