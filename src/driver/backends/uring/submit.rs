//! What goes to the kernel: receives (one-shot or multishot), sends and
//! cancellations, and, as the loop ends, the cancellation of everything in
//! flight (no operation may outlive the buffers it points to).

use std::time::{Duration, Instant};

use io_uring::{cqueue, opcode, types};

use super::recv_pool::POOL_GROUP;
use super::ring::{cancel_entry, decode_user_data, is_transient, timespec, user_data, Op};
use super::UringLoop;
use crate::driver::{DriverError, LoopOp};

impl UringLoop<'_> {
    pub(super) fn push_recv(&mut self, i: usize) -> Result<(), DriverError> {
        if self.pool.is_some() {
            return self.push_recv_multishot(i);
        }
        let Some(conn) = self.conns.get_mut(i) else { return Ok(()) };
        conn.recv.make_room();
        let (buf, len) = conn.recv.room();
        let entry =
            opcode::Recv::new(conn.slot, buf, len).ioprio(self.recv_flags).build().user_data(user_data(i, Op::Recv));
        conn.recv_pending = true;
        conn.waits.start_read(self.now_ns);
        self.ops += 1;
        self.recvs += 1;
        self.recv_arms += 1;
        // SAFETY: the receive writes into `conn.recv.data[end..]`, a boxed
        // slice that is neither moved, resized nor dropped while
        // `recv_pending` is set: `make_room` runs only before a receive is
        // queued, and the loop never ends (nor frees its connections, see
        // `Drop`) with an operation in flight.
        unsafe { self.push(&entry) }
    }

    /// Arms a receive that stays armed, each completion taking a buffer
    /// from the pool.
    pub(super) fn push_recv_multishot(&mut self, i: usize) -> Result<(), DriverError> {
        let Some(conn) = self.conns.get_mut(i) else { return Ok(()) };
        let entry = opcode::RecvMulti::new(conn.slot, POOL_GROUP).build().user_data(user_data(i, Op::Recv));
        conn.recv_pending = true;
        conn.waits.start_read(self.now_ns);
        self.ops += 1;
        self.recvs += 1;
        self.recv_arms += 1;
        // SAFETY: the receive writes only into the pool's buffers, which
        // outlive the ring (see `UringLoop::pool`).
        unsafe { self.push(&entry) }
    }

    pub(super) fn push_send(&mut self, i: usize) -> Result<(), DriverError> {
        let Some(conn) = self.conns.get_mut(i) else { return Ok(()) };
        let rest = &conn.sending[conn.sent..];
        let len = u32::try_from(rest.len()).unwrap_or(u32::MAX);
        let entry = opcode::Send::new(conn.slot, rest.as_ptr(), len).build().user_data(user_data(i, Op::Send));
        conn.send_pending = true;
        conn.waits.start_write(self.now_ns);
        self.ops += 1;
        self.quick_queued += 1;
        // SAFETY: the send reads `conn.sending[sent..]`, whose heap buffer is
        // not written, grown, swapped out or dropped while `send_pending` is
        // set: commands are written to `filling`, the two are swapped only
        // when no send is pending, and the loop never ends (nor frees its
        // connections, see `Drop`) with an operation in flight.
        unsafe { self.push(&entry) }
    }

    pub(super) fn push_cancel(&mut self, i: usize, op: Op) -> Result<(), DriverError> {
        let entry = opcode::AsyncCancel::new(user_data(i, op)).build().user_data(user_data(i, Op::Cancel));
        self.quick_queued += 1;
        // SAFETY: a cancellation refers to no memory.
        unsafe { self.push(&entry) }
    }

    /// Queues an entry, submitting what is queued first if the queue is full.
    ///
    /// # Safety
    /// Whatever memory the entry points to must stay valid until its completion.
    pub(super) unsafe fn push(&mut self, entry: &io_uring::squeue::Entry) -> Result<(), DriverError> {
        loop {
            // SAFETY: passed on to the caller.
            if unsafe { self.ring.submission().push(entry) }.is_ok() {
                return Ok(());
            }
            match self.ring.submit() {
                Ok(_) => {}
                Err(e) if is_transient(&e) => {}
                Err(e) => return Err(self.ring_error(LoopOp::SubmitToRing, e)),
            }
        }
    }

    /// Cancels everything in flight and waits (a bounded time) for the
    /// completions, so no operation outlives the buffers it points to.
    pub(super) fn quiesce(&mut self) {
        if self.ops == 0 {
            return;
        }
        for i in 0..self.conns.len() {
            let Some(conn) = self.conns.get(i) else { continue };
            let (recv, send) = (conn.recv_pending, conn.send_pending);
            // SAFETY: cancellations refer to no memory.
            if recv {
                let _ = unsafe { self.push(&cancel_entry(i, Op::Recv)) };
            }
            if send {
                let _ = unsafe { self.push(&cancel_entry(i, Op::Send)) };
            }
        }
        let start = Instant::now();
        while self.ops > 0 && start.elapsed() < Duration::from_secs(5) {
            let tick = timespec(Duration::from_millis(10));
            let args = types::SubmitArgs::new().timespec(&tick);
            if let Err(e) = self.ring.submitter().submit_with_args(1, &args) {
                if !is_transient(&e) && e.raw_os_error() != Some(libc::ETIME) {
                    break;
                }
            }
            let done: Vec<u64> =
                self.ring.completion().filter(|c| !cqueue::more(c.flags())).map(|c| c.user_data()).collect();
            for data in done {
                let (i, op) = decode_user_data(data);
                let Some(conn) = self.conns.get_mut(i) else { continue };
                match op {
                    Op::Recv if conn.recv_pending => {
                        conn.recv_pending = false;
                        self.ops -= 1;
                    }
                    Op::Send if conn.send_pending => {
                        conn.send_pending = false;
                        self.ops -= 1;
                    }
                    _ => {}
                }
            }
        }
    }
}
