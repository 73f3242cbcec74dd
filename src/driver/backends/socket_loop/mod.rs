//! The socket loop: the backend of loops whose wait plan is
//! [`WaitMode::OnSocket`](crate::driver::WaitMode::OnSocket). It submits
//! nothing to a ring: a send goes out with `send` at once, and a receive
//! is read with `recv` when its answer is there, waiting in `poll(2)` on
//! the sockets that await one, as libmysqlclient waits in sysbench's
//! threads. The loop itself (what an answer leads to, its chores, its
//! connections' lives, its tasks and idle connections) is
//! `driver::event_loop`'s, as the io_uring backend's is.
//!
//! Why: a unix socket wakes the thread that waits on it on the waker's
//! core, so the server's thread finds the next query waiting instead of
//! sleeping for it; a ring's completion gives no such hint. `poll(2)`, not
//! a blocking `recv`, which a unix socket also wakes when the server reads
//! the query (docs/benchmarking.md#waits-on-the-socket). A loop here holds
//! a script's state (one call at a time, on one connection), so a wait
//! watches one socket; a loop's idle connections are looked at on their
//! own tick, never in that wait.
//!
//! Files:
//! - `tests.rs`: the loop against scripted servers.

#[cfg(test)]
mod tests;

use std::io;
use std::os::fd::RawFd;
use std::time::Duration;

use crate::driver::event_loop::conn::Conn;
use crate::driver::event_loop::loop_io::{Completion, LoopIo, Op, Submitted, WaitFor};
use crate::driver::event_loop::replay_conns::ReplayConns;
use crate::driver::event_loop::{loop_conns, EventLoop};
use crate::driver::tasks::start_gate::ArrivalGuard;
use crate::driver::{ConnPlan, DriverError, LoopContext, TaskBody, PUBLISH_TICK};

/// The most connections a socket loop's tasks hold at once.
const MAX_TASK_CONNS: usize = 32 * 1024;

/// One loop's sockets and what it waits for on them.
#[derive(Default)]
pub(crate) struct SocketIo {
    /// Cancellations, which end at once, handed out at the next wait.
    done: Vec<Completion>,
    /// Connections whose receive is armed, and those whose send waits for
    /// room; the idle connections' apart.
    reading: Vec<usize>,
    writing: Vec<usize>,
    idle_reading: Vec<usize>,
    idle_writing: Vec<usize>,
    pollfds: Vec<libc::pollfd>,
}

/// Runs a socket loop over `connections` (a built-in test's) or `tasks`
/// (a script's states) on this thread until every one is done.
pub fn run_socket_loop(
    index: usize,
    connections: Vec<ConnPlan>,
    tasks: Vec<TaskBody>,
    context: &LoopContext,
    arrival: Option<ArrivalGuard>,
) -> Result<(), DriverError> {
    let (conns, idle) = loop_conns(index, connections, context);
    let max_conns = conns.len() + MAX_TASK_CONNS;
    let mut event_loop = EventLoop::new(SocketIo::default(), index, conns, idle, max_conns, context);
    event_loop.run(tasks, arrival)
}

/// Runs a loop over a replay (`wirebench replay`) on this thread, each
/// connection's socket waited on in `poll(2)`, until its feed has ended
/// and its connections are done: where io_uring is not to be had.
pub(crate) fn run_socket_replay_loop(
    index: usize,
    replay: ReplayConns,
    context: &LoopContext,
) -> Result<(), DriverError> {
    let mut event_loop = EventLoop::new(SocketIo::default(), index, Vec::new(), 0, MAX_TASK_CONNS, context);
    event_loop.run_replay(replay)
}

impl LoopIo for SocketIo {
    fn push_send(&mut self, conn: &Conn, i: usize) -> Result<Submitted, DriverError> {
        let rest = conn.sending.get(conn.sent..).unwrap_or_default();
        match send_now(conn.raw_fd(), rest) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                self.lists(conn.is_idle()).1.push(i);
                Ok(Submitted::Queued)
            }
            sent => Ok(Submitted::Done(result_of(sent))),
        }
    }

    fn push_recv(&mut self, conn: &mut Conn, i: usize) -> Result<(), DriverError> {
        self.lists(conn.is_idle()).0.push(i);
        Ok(())
    }

    fn push_cancel(&mut self, i: usize, op: Op) -> Result<(), DriverError> {
        let lists: [&mut Vec<usize>; 2] = match op {
            Op::Recv => [&mut self.reading, &mut self.idle_reading],
            Op::Send => [&mut self.writing, &mut self.idle_writing],
            Op::Cancel => return Ok(()),
        };
        let mut watched = false;
        for list in lists {
            let before = list.len();
            list.retain(|&c| c != i);
            watched |= list.len() != before;
        }
        // A receive armed or a send waiting for room ends now; a send done
        // at once has its completion on its way already.
        if watched {
            self.done.push(Completion { conn: i, op, result: -libc::ECANCELED, more: false });
        }
        Ok(())
    }

    fn adopt(&mut self, _conn: &Conn, _i: usize) -> io::Result<()> {
        Ok(())
    }

    fn wait(&mut self, conns: &mut [Conn], wait: &WaitFor, out: &mut Vec<Completion>) -> Result<(), DriverError> {
        if !self.done.is_empty() {
            out.append(&mut self.done);
            return Ok(());
        }
        // The answer may be there already: looked for before a wait.
        try_sockets(conns, &mut self.reading, &mut self.writing, out);
        if !out.is_empty() || wait.look_only {
            return Ok(());
        }
        let timeout = wait.wake_at.map_or(PUBLISH_TICK, |at| Duration::from_nanos(at.saturating_sub(wait.now_ns)));
        if poll(conns, &self.reading, &self.writing, &mut self.pollfds, timeout.min(PUBLISH_TICK)) {
            try_sockets(conns, &mut self.reading, &mut self.writing, out);
        }
        Ok(())
    }

    fn look_at_idle(&mut self, conns: &mut [Conn], out: &mut Vec<Completion>) -> Result<(), DriverError> {
        if (self.idle_reading.len() + self.idle_writing.len()) == 0 {
            return Ok(());
        }
        if poll(conns, &self.idle_reading, &self.idle_writing, &mut self.pollfds, Duration::ZERO) {
            try_sockets(conns, &mut self.idle_reading, &mut self.idle_writing, out);
        }
        Ok(())
    }

    fn quiesce(&mut self, _conns: &mut [Conn]) {
        for list in [&mut self.reading, &mut self.writing, &mut self.idle_reading, &mut self.idle_writing] {
            list.clear();
        }
    }

    fn in_flight(&self) -> bool {
        false
    }

    fn receives_in_place(&self) -> bool {
        false
    }
}

impl SocketIo {
    /// The receives and sends watched, for an active connection or an idle
    /// one.
    fn lists(&mut self, idle: bool) -> (&mut Vec<usize>, &mut Vec<usize>) {
        if idle {
            (&mut self.idle_reading, &mut self.idle_writing)
        } else {
            (&mut self.reading, &mut self.writing)
        }
    }
}

/// Reads what the watched sockets have and sends what they take now: a
/// completion for each that did either (or failed), which leaves its list.
fn try_sockets(conns: &mut [Conn], reading: &mut Vec<usize>, writing: &mut Vec<usize>, out: &mut Vec<Completion>) {
    reading.retain(|&i| {
        let Some(conn) = conns.get_mut(i) else { return false };
        match recv_now(conn) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => true,
            received => {
                out.push(Completion { conn: i, op: Op::Recv, result: result_of(received), more: false });
                false
            }
        }
    });
    writing.retain(|&i| {
        let Some(conn) = conns.get(i) else { return false };
        match send_now(conn.raw_fd(), conn.sending.get(conn.sent..).unwrap_or_default()) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => true,
            sent => {
                out.push(Completion { conn: i, op: Op::Send, result: result_of(sent), more: false });
                false
            }
        }
    });
}

/// Waits in `ppoll` until one of the sockets is ready (readable for
/// `reading`, writable for `writing`, or in error) or `timeout` has passed;
/// whether one is.
fn poll(
    conns: &[Conn],
    reading: &[usize],
    writing: &[usize],
    pollfds: &mut Vec<libc::pollfd>,
    timeout: Duration,
) -> bool {
    pollfds.clear();
    let fd = |i: usize| conns.get(i).map_or(-1, Conn::raw_fd);
    pollfds.extend(reading.iter().map(|&i| libc::pollfd { fd: fd(i), events: libc::POLLIN, revents: 0 }));
    pollfds.extend(writing.iter().map(|&i| libc::pollfd { fd: fd(i), events: libc::POLLOUT, revents: 0 }));
    let timeout = libc::timespec { tv_sec: timeout.as_secs() as libc::time_t, tv_nsec: timeout.subsec_nanos().into() };
    // SAFETY: `pollfds` holds `len` valid entries, and `timeout` is valid for
    // the call; no signal mask is given.
    let ready = unsafe { libc::ppoll(pollfds.as_mut_ptr(), pollfds.len() as libc::nfds_t, &timeout, std::ptr::null()) };
    ready > 0
}

/// Reads what connection `conn`'s socket has into its receive buffer,
/// without waiting: how much (0 at the end of the stream).
fn recv_now(conn: &mut Conn) -> io::Result<usize> {
    let fd = conn.raw_fd();
    conn.recv.make_room();
    let (room, len) = conn.recv.room();
    loop {
        // SAFETY: `room` is valid for `len` bytes of writes.
        let n = unsafe { libc::recv(fd, room.cast(), len as usize, libc::MSG_DONTWAIT) };
        if n >= 0 {
            conn.recv.received(n as usize);
            return Ok(n as usize);
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

/// Sends what the socket takes of `bytes` now, without waiting: how much.
fn send_now(fd: RawFd, bytes: &[u8]) -> io::Result<usize> {
    loop {
        // SAFETY: `bytes` is valid for `bytes.len()` bytes of reads.
        let n = unsafe { libc::send(fd, bytes.as_ptr().cast(), bytes.len(), libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT) };
        match n {
            0 if !bytes.is_empty() => return Err(io::ErrorKind::WriteZero.into()),
            n if n < 0 => {
                let error = io::Error::last_os_error();
                if error.kind() != io::ErrorKind::Interrupted {
                    return Err(error);
                }
            }
            n => return Ok(n as usize),
        }
    }
}

/// A syscall's outcome as a completion's result: bytes moved, or a
/// negated errno.
fn result_of(outcome: io::Result<usize>) -> i32 {
    match outcome {
        Ok(n) => i32::try_from(n).unwrap_or(i32::MAX),
        Err(e) => -e.raw_os_error().unwrap_or(libc::EIO),
    }
}
