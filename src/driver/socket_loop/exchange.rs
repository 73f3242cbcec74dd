//! One connection's exchanges on its socket: its commands go out with
//! `send`, its answers come in with `recv`, and between them the loop
//! waits in `poll`, looking at the run every
//! [`PUBLISH_TICK`](crate::driver::PUBLISH_TICK).

use std::io;
use std::os::fd::RawFd;

use super::SocketLoop;
use crate::driver::conn_io::AfterSend;
use crate::driver::{DriverError, Lost, PUBLISH_TICK};

/// Whether an exchange goes on.
pub(super) enum Exchange {
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

impl SocketLoop<'_> {
    /// Sends connection `i`'s next commands and reads their answers on its
    /// socket until its session awaits nothing more: a task's call is
    /// answered, a built-in test's connection is done or waits for its
    /// `--rate` arrival. A connection opened again after a loss goes on at
    /// the loop's next turn, so that a server that drops every connection
    /// cannot keep the loop from its chores.
    pub(super) fn exchange_until_answered(&mut self, i: usize) -> Result<(), DriverError> {
        loop {
            let Some(conn) = self.conns.get_mut(i).filter(|c| c.running) else { return Ok(()) };
            let now = self.clock.now_ns();
            self.now_ns = now;
            if let Err(error) = conn.fill(now, &mut self.budget) {
                return self.fail(i, error);
            }
            if !conn.out.is_empty() {
                if let Exchange::Ended = self.send_on_socket(i)? {
                    return Ok(());
                }
            }
            let Some(conn) = self.conns.get_mut(i) else { return Ok(()) };
            match conn.io.after_send() {
                AfterSend::Quit => return self.quit(i),
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
        while let Some(rest) = self.conns.get(i).and_then(|c| c.out.get(sent..)).filter(|r| !r.is_empty()) {
            match send_now(fd, rest) {
                Ok(n) => {
                    if sent == 0 && self.budget.has_unsent() {
                        self.budget.sent(self.clock.now_ns(), &mut self.stats);
                    }
                    sent += n;
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                    if let Exchange::Ended = self.wait_on_socket(i, fd, Readiness::Room)? {
                        return Ok(Exchange::Ended);
                    }
                }
                Err(error) => {
                    self.lose(i, Lost::Write(error))?;
                    return Ok(Exchange::Ended);
                }
            }
        }
        let Some(conn) = self.conns.get_mut(i) else { return Ok(Exchange::Ended) };
        conn.out.clear();
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
            // SAFETY: `room` is valid for `len` bytes of writes.
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
            let lost = if n == 0 {
                Lost::Closed
            } else {
                let error = io::Error::last_os_error();
                match error.kind() {
                    io::ErrorKind::Interrupted => continue,
                    io::ErrorKind::WouldBlock => match self.wait_on_socket(i, fd, Readiness::Input)? {
                        Exchange::Goes => continue,
                        Exchange::Ended => return Ok(Exchange::Ended),
                    },
                    _ => Lost::Read(error),
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

    /// What the loop's chores do, within an exchange: hands the collector
    /// its statistics when asked, serves the idle connections, publishes the events in progress, ends
    /// the exchange when the run is cut (stalled: rows that keep coming
    /// count as waiting too) or when connection `i` waited past a timeout
    /// (lost).
    fn look_at_run(&mut self, i: usize, now: u64) -> Result<Exchange, DriverError> {
        self.context.board.publish_if_requested(self.index, &mut self.stats);
        if let Some(idle) = &mut self.idle {
            idle.serve();
        }
        self.budget.publish(now);
        if self.context.control.cut_due(now) {
            self.cut_stalled(now);
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

/// Sends what the socket takes of `bytes` now, without waiting: how much.
pub(super) fn send_now(fd: RawFd, bytes: &[u8]) -> io::Result<usize> {
    // SAFETY: `bytes` is valid for `bytes.len()` bytes of reads.
    let n = unsafe { libc::send(fd, bytes.as_ptr().cast(), bytes.len(), libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT) };
    match n {
        0 => Err(io::ErrorKind::WriteZero.into()),
        n if n < 0 => Err(io::Error::last_os_error()),
        n => Ok(n as usize),
    }
}
