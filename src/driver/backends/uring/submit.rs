//! What goes to the kernel: receives (one-shot or multishot), sends and
//! cancellations; what comes back, taken off the completion queue with a
//! receive's bytes put in its connection's buffer; and, as the loop ends,
//! the cancellation of everything in flight (no operation may outlive the
//! buffers it points to).

use std::time::{Duration, Instant};

use io_uring::{cqueue, opcode, types};

use super::recv_pool::POOL_GROUP;
use super::ring::{cancel_entry, decode_user_data, is_transient, timespec, user_data};
use super::UringIo;
use crate::driver::event_loop::conn::{Conn, ConnState};
use crate::driver::event_loop::loop_io::{Completion, Op};
use crate::driver::{DriverError, LoopOp};

impl UringIo {
    pub(super) fn queue_recv(&mut self, conn: &mut Conn, i: usize) -> Result<(), DriverError> {
        let slot = types::Fixed(i as u32);
        let entry = if self.pool.is_some() {
            opcode::RecvMulti::new(slot, POOL_GROUP).build()
        } else {
            conn.recv.make_room();
            let (buf, len) = conn.recv.room();
            opcode::Recv::new(slot, buf, len).ioprio(self.recv_flags).build()
        };
        self.count_started(conn.is_idle(), true);
        self.recv_arms += 1;
        // SAFETY: a multishot receive writes only into the pool's buffers,
        // which outlive the ring (see `UringIo::pool`). A one-shot receive
        // writes into `conn.recv.data[end..]`, a boxed slice that is neither
        // moved, resized nor dropped while `recv_pending` is set:
        // `make_room` runs only before a receive is queued, and the loop
        // never ends (nor frees its connections) with an operation in
        // flight.
        unsafe { self.push(&entry.user_data(user_data(i, Op::Recv))) }
    }

    pub(super) fn queue_send(&mut self, conn: &Conn, i: usize) -> Result<(), DriverError> {
        let rest = conn.sending.get(conn.sent..).unwrap_or_default();
        let len = u32::try_from(rest.len()).unwrap_or(u32::MAX);
        let entry = opcode::Send::new(types::Fixed(i as u32), rest.as_ptr(), len).build();
        self.count_started(conn.is_idle(), false);
        self.quick_queued += 1;
        // SAFETY: the send reads `conn.sending[sent..]`, whose heap buffer is
        // not written, grown, swapped out or dropped while `send_pending` is
        // set: commands are written to `filling`, the two are swapped only
        // when no send is pending, and the loop never ends (nor frees its
        // connections) with an operation in flight.
        unsafe { self.push(&entry.user_data(user_data(i, Op::Send))) }
    }

    pub(super) fn queue_cancel(&mut self, i: usize, op: Op) -> Result<(), DriverError> {
        self.quick_queued += 1;
        // SAFETY: a cancellation refers to no memory.
        unsafe { self.push(&cancel_entry(i, op)) }
    }

    /// An operation of an active connection (one a wait may count on) or
    /// of an idle one is in flight.
    fn count_started(&mut self, idle: bool, recv: bool) {
        if idle {
            self.idle_ops += 1;
        } else {
            self.ops += 1;
            self.recvs += usize::from(recv);
        }
    }

    fn count_ended(&mut self, idle: bool, recv: bool) {
        if idle {
            self.idle_ops = self.idle_ops.saturating_sub(1);
        } else {
            self.ops = self.ops.saturating_sub(1);
            self.recvs = self.recvs.saturating_sub(usize::from(recv));
        }
    }

    /// Queues an entry, submitting what is queued first if the queue is full.
    ///
    /// # Safety
    /// Whatever memory the entry points to must stay valid until its completion.
    unsafe fn push(&mut self, entry: &io_uring::squeue::Entry) -> Result<(), DriverError> {
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

    /// Takes the completions off the queue into `out`: a receive's bytes
    /// go to its connection's buffer first (from the pool, where a running
    /// connection takes them; in place for a one-shot receive), and what is
    /// in flight is counted down.
    pub(super) fn take_completions(&mut self, conns: &mut [Conn], out: &mut Vec<Completion>) {
        let mut cqes = std::mem::take(&mut self.cqes);
        cqes.extend(self.ring.completion().map(|c| (c.user_data(), c.result(), c.flags())));
        for &(data, result, flags) in &cqes {
            let (i, op) = decode_user_data(data);
            let more = op == Op::Recv && cqueue::more(flags);
            out.push(Completion { conn: i, op, result, more });
            let Some(conn) = conns.get_mut(i) else { continue };
            match op {
                Op::Recv if !more => self.count_ended(conn.is_idle(), true),
                Op::Send => self.count_ended(conn.is_idle(), false),
                Op::Recv | Op::Cancel => {}
            }
            if op == Op::Recv {
                self.deliver(conn, result, cqueue::buffer_select(flags));
            }
        }
        cqes.clear();
        self.cqes = cqes;
        if let Some(pool) = &self.pool {
            pool.publish();
        }
    }

    /// Puts a receive's bytes in its connection's buffer: from the pool's
    /// buffer `provided` (given back at once) if a running connection takes
    /// them, or counted where a one-shot receive wrote them.
    fn deliver(&mut self, conn: &mut Conn, result: i32, provided: Option<u16>) {
        let n = usize::try_from(result).unwrap_or(0);
        match (provided, self.pool.as_mut()) {
            (Some(bid), Some(pool)) => {
                if conn.state == ConnState::Running {
                    conn.recv.append(pool.filled(bid, n));
                }
                pool.put(bid);
            }
            _ if n > 0 => conn.recv.received(n),
            _ => {}
        }
    }

    /// Cancels everything in flight and waits (a bounded time) for the
    /// completions, so no operation outlives the buffers it points to.
    pub(super) fn cancel_all(&mut self, conns: &mut [Conn]) {
        if self.ops + self.idle_ops == 0 {
            return;
        }
        for (i, conn) in conns.iter().enumerate() {
            // SAFETY: cancellations refer to no memory.
            if conn.recv_pending {
                let _ = unsafe { self.push(&cancel_entry(i, Op::Recv)) };
            }
            if conn.send_pending {
                let _ = unsafe { self.push(&cancel_entry(i, Op::Send)) };
            }
        }
        let start = Instant::now();
        while self.ops + self.idle_ops > 0 && start.elapsed() < Duration::from_secs(5) {
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
                let Some(conn) = conns.get_mut(i) else { continue };
                match op {
                    Op::Recv if conn.recv_pending => {
                        conn.recv_pending = false;
                        self.count_ended(conn.is_idle(), true);
                    }
                    Op::Send if conn.send_pending => {
                        conn.send_pending = false;
                        self.count_ended(conn.is_idle(), false);
                    }
                    _ => {}
                }
            }
        }
    }
}
