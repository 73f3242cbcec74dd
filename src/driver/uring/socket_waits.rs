//! Answers awaited on the socket itself ([`AnswerWait::Socket`]), for a loop
//! that holds one connection (a built-in test's, or a script state's) to a
//! thread-per-connection server on this host's cores:
//! the command goes out with `send`, and the answer is read with `recv`,
//! waiting in `poll` when it is not there yet, as libmysqlclient does for
//! sysbench. The ring is not used for these exchanges, nor for the
//! COM_QUIT at the end. The loop runs the exchanges due at its turn
//! ([`exchange_due`](UringLoop::exchange_due)), never from within another
//! exchange or the ring's `advance`.
//!
//! Why: a unix socket wakes the thread that waits on it on the waker's
//! core, so the server's thread finds the next query waiting instead of
//! sleeping for it; a ring's completion gives no such hint. `poll(2)`, not
//! a blocking `recv`, which a unix socket also wakes when the server reads
//! the query (docs/benchmarking.md#waits-on-the-socket).
//!
//! The wait looks at the run every [`PUBLISH_TICK`](super::PUBLISH_TICK),
//! as the ring's does: the collector's requests, the read and write
//! timeouts (a connection past one is lost), and the run's cut, which ends
//! the call as stalled.

use std::io;
use std::os::fd::RawFd;

use super::{RingConnState, UringLoop, PUBLISH_TICK};
use crate::driver::conn_io::AfterSend;
use crate::driver::{DriverError, Lost};

/// How a loop waits for its connections' answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AnswerWait {
    /// On the ring, with every connection of the loop.
    #[default]
    Ring,
    /// On each connection's own socket, one exchange at a time: for a
    /// loop holding one connection (or one script state's) to a server on
    /// this host's cores over a unix socket (`WaitMode::OnSocket`).
    Socket,
}

/// Whether an exchange on the socket goes on.
enum Exchange {
    Goes,
    /// The connection was lost, failed or cut: the loop's usual handling
    /// (reopen, the task's failed call, the stall) has been done.
    Ended,
}

/// What a wait on the socket is for.
#[derive(Clone, Copy)]
enum Readiness {
    Input,
    Room,
}

/// Exchanges a loop runs in one turn before it looks at its ring, its
/// arrivals and the collector again (a server that drops every connection
/// sends the loop through reconnections without end).
const EXCHANGES_PER_TURN: usize = 64;

impl UringLoop<'_> {
    /// Runs the exchanges that are due, and the tasks they answer, whose
    /// next calls are due in turn, up to [`EXCHANGES_PER_TURN`]; the rest
    /// at the loop's next turn, which does not sleep while some are due.
    pub(super) fn exchange_due(&mut self) -> Result<(), DriverError> {
        let mut ran = 0;
        while ran < EXCHANGES_PER_TURN && !self.exchanges.is_empty() {
            let i = self.exchanges.remove(0);
            self.exchange_until_answered(i)?;
            ran += 1;
            if self.exchanges.is_empty() {
                self.run_tasks()?;
            }
        }
        Ok(())
    }

    /// A connection done on its socket says goodbye there (COM_QUIT, a few
    /// bytes a socket's buffer always has room for: sent without waiting,
    /// and a failure leaves without a goodbye, as the ring's does).
    pub(super) fn quit_on_socket(&mut self, i: usize) -> Result<(), DriverError> {
        let Some(conn) = self.conns.get_mut(i) else { return Ok(()) };
        let fd = conn.raw_fd();
        let mut sent = 0;
        while let Some(rest) = conn.filling.get(sent..).filter(|r| !r.is_empty()) {
            // SAFETY: `rest` is valid for `rest.len()` bytes of reads.
            let n =
                unsafe { libc::send(fd, rest.as_ptr().cast(), rest.len(), libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT) };
            if n <= 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            if n <= 0 {
                break;
            }
            sent += n as usize;
        }
        conn.filling.clear();
        self.end_after_quit(i)
    }

    /// Sends connection `i`'s next commands and reads their answers on its
    /// socket until its session awaits nothing more: a task's call is
    /// answered, a built-in test's connection is done or waits for its
    /// `--rate` arrival. A connection opened again after a loss goes on at
    /// the loop's next turn (`advance` queues it), so that a server that
    /// drops every connection cannot deepen the stack.
    fn exchange_until_answered(&mut self, i: usize) -> Result<(), DriverError> {
        loop {
            let Some(conn) = self.conns.get_mut(i) else { return Ok(()) };
            if conn.state != RingConnState::Running {
                return Ok(());
            }
            let now = self.clock.now_ns();
            self.now_ns = now;
            if let Err(error) = conn.fill(now, &mut self.budget) {
                return self.fail(i, error);
            }
            if !conn.filling.is_empty() {
                if let Exchange::Ended = self.send_on_socket(i)? {
                    return Ok(());
                }
            }
            let Some(conn) = self.conns.get_mut(i) else { return Ok(()) };
            match conn.io.after_send() {
                AfterSend::Quit => return self.start_quit(i),
                AfterSend::Arrival => {
                    self.waiting.push(i);
                    return Ok(());
                }
                AfterSend::CallAnswered => {
                    self.answer_call(i);
                    return Ok(());
                }
                AfterSend::Answers => {
                    if let Exchange::Ended = self.receive_on_socket(i)? {
                        return Ok(());
                    }
                }
            }
        }
    }

    /// Sends what connection `i` has filled, waiting for room as long as
    /// its write timeout allows.
    fn send_on_socket(&mut self, i: usize) -> Result<Exchange, DriverError> {
        let Some(conn) = self.conns.get_mut(i) else { return Ok(Exchange::Ended) };
        let fd = conn.raw_fd();
        conn.waits.start_write(self.now_ns);
        let mut sent = 0;
        while let Some(rest) = self.conns.get(i).and_then(|c| c.filling.get(sent..)).filter(|r| !r.is_empty()) {
            // SAFETY: `rest` is valid for `rest.len()` bytes of reads.
            let n =
                unsafe { libc::send(fd, rest.as_ptr().cast(), rest.len(), libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT) };
            if n > 0 {
                sent += n as usize;
                continue;
            }
            let error = if n == 0 { io::ErrorKind::WriteZero.into() } else { io::Error::last_os_error() };
            match error.kind() {
                io::ErrorKind::Interrupted => {}
                io::ErrorKind::WouldBlock => {
                    if let Exchange::Ended = self.wait_on_socket(i, fd, Readiness::Room)? {
                        return Ok(Exchange::Ended);
                    }
                }
                _ => {
                    self.lose(i, Lost::Write(error))?;
                    return Ok(Exchange::Ended);
                }
            }
        }
        let Some(conn) = self.conns.get_mut(i) else { return Ok(Exchange::Ended) };
        conn.filling.clear();
        conn.waits.end_write();
        Ok(Exchange::Goes)
    }

    /// Reads what the server sent on connection `i` (waiting for it if
    /// nothing is there yet) and hands it to the session.
    fn receive_on_socket(&mut self, i: usize) -> Result<Exchange, DriverError> {
        let Some(conn) = self.conns.get_mut(i) else { return Ok(Exchange::Ended) };
        let fd = conn.raw_fd();
        conn.waits.start_read_unless_reading(self.now_ns);
        loop {
            let Some(conn) = self.conns.get_mut(i) else { return Ok(Exchange::Ended) };
            conn.recv.make_room();
            let (room, len) = conn.recv.room();
            // SAFETY: `room` is valid for `len` bytes of writes, and no ring
            // operation of this connection is in flight to write there too.
            let n = unsafe { libc::recv(fd, room.cast(), len as usize, libc::MSG_DONTWAIT) };
            if n > 0 {
                conn.waits.end_read();
                conn.recv.received(n as usize);
                let now = self.clock.now_ns();
                self.now_ns = now;
                if let Err(error) = conn.on_input(now, &mut self.stats, &self.context.ignore) {
                    self.fail(i, error)?;
                    return Ok(Exchange::Ended);
                }
                return self.look_at_run(i, now);
            }
            let lost = match n {
                0 => Lost::Closed,
                _ => {
                    let error = io::Error::last_os_error();
                    match error.kind() {
                        io::ErrorKind::Interrupted => continue,
                        io::ErrorKind::WouldBlock => match self.wait_on_socket(i, fd, Readiness::Input)? {
                            Exchange::Goes => continue,
                            Exchange::Ended => return Ok(Exchange::Ended),
                        },
                        _ => Lost::Read(error),
                    }
                }
            };
            if let Some(conn) = self.conns.get(i) {
                conn.waits.end_read();
            }
            self.lose(i, lost)?;
            return Ok(Exchange::Ended);
        }
    }

    /// Waits in `poll` until connection `i`'s socket is ready, looking at
    /// the run every [`PUBLISH_TICK`]: ended when the wait outlasted its
    /// timeout (the connection is lost) or the run was cut (it stalled).
    fn wait_on_socket(&mut self, i: usize, fd: RawFd, want: Readiness) -> Result<Exchange, DriverError> {
        let events = match want {
            Readiness::Input => libc::POLLIN,
            Readiness::Room => libc::POLLOUT,
        };
        loop {
            let mut watched = libc::pollfd { fd, events, revents: 0 };
            let tick = PUBLISH_TICK.as_millis() as libc::c_int;
            // SAFETY: one valid `pollfd`.
            let ready = unsafe { libc::poll(&mut watched, 1, tick) };
            if ready > 0 {
                // Readiness, a hang-up or an error: the next call says which.
                return Ok(Exchange::Goes);
            }
            let now = self.clock.now_ns();
            self.now_ns = now;
            if let Exchange::Ended = self.look_at_run(i, now)? {
                return Ok(Exchange::Ended);
            }
        }
    }

    /// What the ring's loop does on each wake-up: hands the collector its
    /// statistics when asked, serves the idle connections, publishes the events in progress, ends the
    /// exchange when the run is cut (stalled: rows that keep coming count
    /// as waiting too) or when connection `i` waited past a timeout (lost).
    fn look_at_run(&mut self, i: usize, now: u64) -> Result<Exchange, DriverError> {
        self.context.board.publish_if_requested(self.index, &mut self.stats);
        if let Some(idle) = &mut self.idle {
            idle.serve();
        }
        self.budget.publish(now);
        if self.context.control.cut_due(now) {
            self.cut_stalled(now)?;
            return Ok(Exchange::Ended);
        }
        let Some(conn) = self.conns.get(i) else { return Ok(Exchange::Ended) };
        if let Some(overdue) = conn.waits.overdue(now, conn.limits) {
            self.lose(i, overdue.lost())?;
            return Ok(Exchange::Ended);
        }
        Ok(Exchange::Goes)
    }
}
