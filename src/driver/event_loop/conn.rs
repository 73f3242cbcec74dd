//! A connection of a loop, whatever the backend: its work and transport
//! ([`ConnIo`]), its socket, its buffers, its operations in flight and
//! where it is in its life. A built-in test's connection, a task's and an
//! idle one are all this; only their work differs.

use std::os::fd::{AsRawFd, RawFd};

use bytes::BytesMut;

use crate::driver::connections::conn_io::ConnIo;
use crate::driver::connections::recv_buffer::RecvBuffer;
use crate::driver::connections::waits::{WaitLimits, Waits};
use crate::driver::tasks::task_calls::TaskLink;
use crate::driver::{Budget, ConnPlan, DriverError, IgnoreErrors, StdSocket};
use crate::stats::LoopStats;

/// Where a connection is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConnState {
    Running,
    /// Lost, and `--mysql-ignore-errors` lists the error: waiting for its
    /// operations to complete, then opened again.
    Reconnecting,
    /// Done: its COM_QUIT is queued or being sent; then it finishes.
    Quitting,
    /// Done or failed; waiting for its operations to complete.
    Finishing,
    /// No operation in flight and nothing more to do (an idle connection
    /// waits here for its next login).
    Retired,
}

/// A connection's socket, its buffers and its operations in flight.
pub(crate) struct Conn {
    /// Its work and transport: `recv`, `filling` and `sending` hold wire
    /// bytes.
    pub(crate) io: ConnIo,
    /// Owns the descriptor; none for an idle connection between logins.
    socket: Option<StdSocket>,
    pub(crate) recv: RecvBuffer,
    /// Where the next commands are written.
    pub(crate) filling: Vec<u8>,
    /// The bytes of the send in flight: never touched until it completes.
    pub(crate) sending: Vec<u8>,
    /// How much of `sending` the kernel has taken.
    pub(crate) sent: usize,
    pub(crate) recv_pending: bool,
    pub(crate) send_pending: bool,
    pub(crate) state: ConnState,
    /// Since when the receive and the send in flight have waited.
    pub(crate) waits: Waits,
    pub(crate) limits: WaitLimits,
    /// The task whose connection it is, if any, and its call.
    pub(crate) task: TaskLink,
}

impl Conn {
    pub(crate) fn new(plan: ConnPlan) -> Self {
        let (io, socket, leftover) = ConnIo::from_plan(plan);
        Self::with_io(io, socket, leftover, TaskLink::default())
    }

    pub(crate) fn with_io(io: ConnIo, socket: StdSocket, leftover: BytesMut, task: TaskLink) -> Self {
        let limits = io.wait_limits();
        Conn {
            io,
            socket: Some(socket),
            recv: RecvBuffer::new(&leftover),
            filling: Vec::with_capacity(1024),
            sending: Vec::with_capacity(1024),
            sent: 0,
            recv_pending: false,
            send_pending: false,
            state: ConnState::Running,
            waits: Waits::default(),
            limits,
            task,
        }
    }

    /// An idle connection's place, before its first login: no socket, and
    /// buffers that grow only as its login needs them.
    pub(crate) fn idle(io: ConnIo) -> Self {
        Conn {
            io,
            socket: None,
            recv: RecvBuffer::small(),
            filling: Vec::new(),
            sending: Vec::new(),
            sent: 0,
            recv_pending: false,
            send_pending: false,
            state: ConnState::Retired,
            waits: Waits::default(),
            limits: WaitLimits::default(),
            task: TaskLink::default(),
        }
    }

    /// Its socket's descriptor; -1 without one.
    pub(crate) fn raw_fd(&self) -> RawFd {
        self.socket.as_ref().map_or(-1, AsRawFd::as_raw_fd)
    }

    pub(crate) fn socket(&self) -> Option<&StdSocket> {
        self.socket.as_ref()
    }

    /// Takes over a new socket (a connection opened again, an idle one
    /// logging in), with fresh buffers. Nothing may be in flight on the
    /// old one, which closes.
    pub(crate) fn replace(&mut self, socket: StdSocket, leftover: &[u8]) {
        self.socket = Some(socket);
        self.recv = if self.io.is_idle() { RecvBuffer::small_with(leftover) } else { RecvBuffer::new(leftover) };
        self.filling.clear();
        self.sending.clear();
        self.sent = 0;
        self.waits = Waits::default();
    }

    /// Closes the socket (an idle connection between logins).
    pub(crate) fn close_socket(&mut self) {
        self.socket = None;
    }

    /// An idle connection logged in: its login's buffers go, so that a
    /// held connection is little more than its socket. Only with nothing in
    /// flight on them (`recv_in_place`: a receive in flight writes into
    /// the receive buffer itself).
    pub(crate) fn shrink(&mut self, recv_in_place: bool) {
        if !self.send_pending {
            self.filling = Vec::new();
            self.sending = Vec::new();
            self.sent = 0;
        }
        if self.recv.unread().is_empty() && !(self.recv_pending && recv_in_place) {
            self.recv = RecvBuffer::small();
        }
    }

    pub(crate) fn is_idle(&self) -> bool {
        self.io.is_idle()
    }

    /// Lets its work append its next commands to `filling`.
    #[inline(always)]
    pub(crate) fn fill(&mut self, now: u64, budget: &mut Budget, stats: &mut LoopStats) -> Result<(), DriverError> {
        self.io.fill(&mut self.filling, now, budget, stats)
    }

    /// Hands its work the responses received so far.
    #[inline(always)]
    pub(crate) fn on_input(
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
