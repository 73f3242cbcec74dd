//! What a loop asks of its backend, and all it asks: start a send, keep a
//! receive armed, cancel one, take a connection's new socket, and wait.
//! The backend reports what finished as [`Completion`]s, with the bytes a
//! receive brought already in the connection's receive buffer; everything
//! they lead to is the loop's ([`EventLoop`](super::EventLoop)), the same
//! for every backend.

use std::io;

use super::conn::Conn;
use crate::driver::DriverError;

/// An operation on a connection's socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Recv = 0,
    Send = 1,
    Cancel = 2,
}

/// An operation that finished: on which connection, and its result as the
/// kernel gives it (bytes moved, 0 for the end of the stream, or a negated
/// errno).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Completion {
    pub(crate) conn: usize,
    pub(crate) op: Op,
    pub(crate) result: i32,
    /// A receive that stays armed (multishot): more completions follow.
    pub(crate) more: bool,
}

/// What became of a send handed to the backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Submitted {
    /// Queued: its completion comes from a wait.
    Queued,
    /// Done at once, with this result (bytes sent, or a negated errno):
    /// the loop takes it as the send's completion now, not a turn later.
    Done(i32),
}

/// What the loop's wait may do.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WaitFor {
    /// Look at what finished without sleeping: a task gave way, or a timer
    /// is due.
    pub(crate) look_only: bool,
    /// `--rate`: connections wait for an arrival; a wait for a batch of
    /// answers would make them late.
    pub(crate) arrivals_waiting: bool,
    /// Wake no later than this (ns on the loop's clock): the next `--rate`
    /// arrival or a task's pause; else within the loop's tick.
    pub(crate) wake_at: Option<u64>,
    /// The loop's clock when it decided.
    pub(crate) now_ns: u64,
}

/// A backend: how a loop submits and how it waits.
pub(crate) trait LoopIo {
    /// Starts sending `conn.sending[conn.sent..]`, or sends it at once
    /// (then the bytes are with the kernel already, for the client's
    /// delay).
    fn push_send(&mut self, conn: &Conn, i: usize) -> Result<Submitted, DriverError>;

    /// Arms a receive on connection `i`, which stays armed until a
    /// completion without [`Completion::more`].
    fn push_recv(&mut self, conn: &mut Conn, i: usize) -> Result<(), DriverError>;

    /// Cancels connection `i`'s operation `op`; its completion still comes.
    fn push_cancel(&mut self, i: usize, op: Op) -> Result<(), DriverError>;

    /// Connection `i` has a new socket (opened again, or a task's or idle
    /// connection's own): the backend takes it where the old one was.
    fn adopt(&mut self, conn: &Conn, i: usize) -> io::Result<()>;

    /// Connection `i` closed its socket for good or for a while (an idle
    /// connection between logins): the backend lets go of it too.
    fn release(&mut self, _i: usize) {}

    /// Hands the kernel what is queued and waits as `wait` allows, then
    /// appends what finished to `out`.
    fn wait(&mut self, conns: &mut [Conn], wait: &WaitFor, out: &mut Vec<Completion>) -> Result<(), DriverError>;

    /// The idle connections' sockets, looked at on the loop's idle tick,
    /// for a backend whose wait leaves them out; what finished goes to
    /// `out`.
    fn look_at_idle(&mut self, _conns: &mut [Conn], _out: &mut Vec<Completion>) -> Result<(), DriverError> {
        Ok(())
    }

    /// As the loop ends: cancels what is in flight and waits (a bounded
    /// time) until nothing is, so no operation outlives its buffers.
    fn quiesce(&mut self, conns: &mut [Conn]);

    /// Whether an operation is still in flight (then the connections'
    /// buffers must outlive the loop).
    fn in_flight(&self) -> bool;

    /// Whether a receive in flight writes into the connection's receive
    /// buffer itself (then the buffer must stay put until it completes).
    fn receives_in_place(&self) -> bool;
}
