//! A connection on the ring: its socket's registered slot, its buffers,
//! its operations in flight and where it is in its life.

use std::io;

use bytes::BytesMut;
use io_uring::{types, IoUring};

use crate::driver::connections::conn_io::ConnIo;
use crate::driver::connections::recv_buffer::RecvBuffer;
use crate::driver::connections::waits::{WaitLimits, Waits};
use crate::driver::tasks::task_calls::TaskLink;
use crate::driver::{Budget, ConnPlan, DriverError, IgnoreErrors, StdSocket};
use crate::stats::LoopStats;

/// Where a connection is in its life on the ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RingConnState {
    Running,
    /// Lost, and `--mysql-ignore-errors` lists the error: waiting for its
    /// operations to complete, then opened again.
    Reconnecting,
    /// Done: its COM_QUIT is queued or being sent; then it finishes.
    Quitting,
    /// Done or failed; waiting for its operations to complete.
    Finishing,
    /// No operation in flight and nothing more to do.
    Retired,
}

/// A connection's socket, its buffers and its operations in flight.
pub(super) struct Conn {
    /// Its session and transport: `recv`, `filling` and `sending` hold
    /// wire bytes.
    pub(super) io: ConnIo,
    /// Its socket's place in the ring's registered files: operations on it
    /// skip looking the descriptor up and taking a reference each time.
    pub(super) slot: types::Fixed,
    /// Owns the descriptor; closed when the loop ends.
    pub(super) _socket: StdSocket,
    pub(super) recv: RecvBuffer,
    /// Where the next commands are written.
    pub(super) filling: Vec<u8>,
    /// The bytes of the send in flight: never touched until it completes.
    pub(super) sending: Vec<u8>,
    /// How much of `sending` the kernel has taken.
    pub(super) sent: usize,
    pub(super) recv_pending: bool,
    pub(super) send_pending: bool,
    pub(super) state: RingConnState,
    /// Since when the receive and the send in flight have waited.
    pub(super) waits: Waits,
    pub(super) limits: WaitLimits,
    /// The task whose connection it is, if any, and its call.
    pub(super) task: TaskLink,
}

impl Conn {
    pub(super) fn new(plan: ConnPlan, slot: u32) -> Result<Self, DriverError> {
        let (io, socket, leftover) = ConnIo::from_plan(plan);
        Self::with_io(io, socket, leftover, slot, TaskLink::default())
    }

    pub(super) fn with_io(
        io: ConnIo,
        socket: StdSocket,
        leftover: BytesMut,
        slot: u32,
        task: TaskLink,
    ) -> Result<Self, DriverError> {
        // io_uring tries every receive and send without blocking and, when it
        // must, waits for readiness itself; a blocking socket keeps EAGAIN
        // from reaching us.
        if let Err(e) = socket.set_nonblocking(false) {
            return Err(io.io_error(e));
        }
        let limits = io.wait_limits();
        Ok(Conn {
            io,
            slot: types::Fixed(slot),
            _socket: socket,
            recv: RecvBuffer::new(&leftover),
            filling: Vec::with_capacity(1024),
            sending: Vec::with_capacity(1024),
            sent: 0,
            recv_pending: false,
            send_pending: false,
            state: RingConnState::Running,
            waits: Waits::default(),
            limits,
            task,
        })
    }

    pub(super) fn raw_fd(&self) -> std::os::fd::RawFd {
        std::os::fd::AsRawFd::as_raw_fd(&self._socket)
    }

    /// Takes over the socket of a connection opened again ([`ConnIo::reopen_blocking`]),
    /// with fresh buffers, in the old one's registered slot.
    pub(super) fn replace(&mut self, socket: StdSocket, leftover: BytesMut, ring: &IoUring) -> io::Result<()> {
        socket.set_nonblocking(false)?;
        ring.submitter().register_files_update(self.slot.0, &[std::os::fd::AsRawFd::as_raw_fd(&socket)])?;
        // Drops the old socket, which the ring no longer holds either:
        // nothing is in flight on it.
        self._socket = socket;
        self.recv = RecvBuffer::new(&leftover);
        self.filling.clear();
        self.sending.clear();
        self.sent = 0;
        Ok(())
    }

    /// Lets the session append its next commands to `filling`.
    pub(super) fn fill(&mut self, now: u64, budget: &mut Budget) -> Result<(), DriverError> {
        self.io.fill(&mut self.filling, now, budget)
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
