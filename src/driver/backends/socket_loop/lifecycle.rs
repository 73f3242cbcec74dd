//! How a connection's life on its socket ends or starts again: its
//! COM_QUIT, a fatal error, a loss (reopened when `--mysql-ignore-errors`
//! lists it), a timeout, and the run's cut (stalled). Nothing is in flight
//! between two exchanges, so each happens at once.

use super::exchange::send_now;
use super::SocketLoop;
use crate::driver::{CallError, DriverError, Lost, Stalls};

impl SocketLoop<'_> {
    /// A connection whose work is done says goodbye on its socket
    /// (COM_QUIT, a few bytes a socket's buffer always has room for: sent
    /// without waiting; a failure leaves without a goodbye) and retires.
    pub(super) fn quit(&mut self, i: usize) -> Result<(), DriverError> {
        let Some(conn) = self.conns.get_mut(i) else { return Ok(()) };
        conn.out.clear();
        if conn.io.write_quit(&mut conn.out).is_ok() {
            let fd = conn.raw_fd();
            let mut sent = 0;
            while let Some(rest) = conn.out.get(sent..).filter(|r| !r.is_empty()) {
                match send_now(fd, rest) {
                    Ok(n) => sent += n,
                    Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
        }
        conn.out.clear();
        self.retire(i);
        Ok(())
    }

    /// The connection is done with: the loop no longer runs it.
    pub(super) fn retire(&mut self, i: usize) {
        if let Some(conn) = self.conns.get_mut(i).filter(|c| c.running) {
            conn.running = false;
            self.live -= 1;
        }
    }

    /// Records a connection's fatal error (the first one is the loop's
    /// result), stops the run and retires the connection. A task's
    /// connection fails only the task's call.
    pub(super) fn fail(&mut self, i: usize, error: DriverError) -> Result<(), DriverError> {
        if self.conns.get(i).is_some_and(|c| c.task.owner.is_some()) {
            self.fail_call(i, error);
            return Ok(());
        }
        self.context.control.stop();
        self.first_error.get_or_insert(error);
        self.retire(i);
        Ok(())
    }

    /// A lost connection: fatal unless `--mysql-ignore-errors` lists its
    /// code; then it is opened again at once.
    pub(super) fn lose(&mut self, i: usize, lost: Lost) -> Result<(), DriverError> {
        let Some(conn) = self.conns.get_mut(i) else { return Ok(()) };
        if conn.task.owner.is_some() {
            return self.lose_call(i, lost);
        }
        if let Err(error) = conn.io.lost(lost, &self.context.ignore) {
            return self.fail(i, error);
        }
        self.reopen(i)
    }

    /// Opens a lost connection again, retrying every millisecond as
    /// sysbench does, until it works or the run is over (counted as a
    /// reconnect if it works); it goes on at the loop's next turn. This
    /// blocks the loop's other connections meanwhile, as a reconnect
    /// blocks a sysbench thread.
    pub(super) fn reopen(&mut self, i: usize) -> Result<(), DriverError> {
        let Some(conn) = self.conns.get_mut(i) else { return Ok(()) };
        let (control, clock, deadline) = (self.context.control.clone(), self.clock, self.deadline_ns);
        let run_over = move || control.is_stopped() || deadline.is_some_and(|d| clock.now_ns() >= d);
        match conn.io.reopen_blocking(run_over, &mut self.stats) {
            Ok(Some((socket, leftover))) => conn.replace(socket, leftover),
            Ok(None) => {
                // The run ended meanwhile; its lost events are not counted
                // (a task's call ends as the run's cut ends it).
                self.retire(i);
                self.cut_call(i);
                return Ok(());
            }
            Err(source) => {
                let error = conn.io.io_error(source);
                return self.fail(i, error);
            }
        }
        self.tell_lost(i, true);
        if !self.due.contains(&i) && self.conns.get(i).is_some_and(|c| c.task.owner.is_none()) {
            self.due.push(i);
        }
        Ok(())
    }

    /// Once the run is cut, ends it. Between two exchanges no connection
    /// waits for the server; the one in an exchange looks at its own
    /// timeouts ([`look_at_run`](Self::look_at_run)).
    pub(super) fn check_waits(&mut self, now: u64) -> Result<(), DriverError> {
        if self.context.control.cut_due(now) {
            self.cut_stalled(now);
        }
        Ok(())
    }

    /// The run is cut: stops it, and ends the connections that still wait
    /// for an answer; their events are not counted, the connections are
    /// (each once: it no longer runs). Tasks hear of it at their next call.
    pub(super) fn cut_stalled(&mut self, now: u64) {
        self.context.control.stop();
        let mut stalls = Stalls::default();
        for i in 0..self.conns.len() {
            let Some(conn) = self.conns.get(i).filter(|c| c.running && c.io.awaits_answers()) else { continue };
            stalls.add(conn.waits.waited(now).unwrap_or(0));
            self.retire(i);
            self.end_call(i, Err(CallError::Cut));
        }
        if stalls.connections > 0 {
            self.context.control.record_stalls(stalls);
        }
        self.tasks.cut();
    }
}
