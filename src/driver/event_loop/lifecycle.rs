//! How a connection's life on the ring ends or starts again: its COM_QUIT,
//! a fatal error, a loss (reopened when `--mysql-ignore-errors` lists it),
//! a timeout, and the run's cut (stalled).

use super::conn::RingConnState;
use super::ring::Op;
use super::UringLoop;
use crate::driver::{DriverError, Lost, Stalls};

impl UringLoop<'_> {
    /// A connection whose work is done sends COM_QUIT, behind a send still
    /// in flight if there is one (every answer is in, so the server has
    /// every byte of it), and finishes once it is sent.
    pub(super) fn start_quit(&mut self, i: usize) -> Result<(), DriverError> {
        let Some(conn) = self.conns.get_mut(i) else { return Ok(()) };
        conn.state = RingConnState::Quitting;
        if conn.io.write_quit(&mut conn.filling).is_err() {
            // The transport cannot encode it: leave without a goodbye.
            conn.filling.clear();
            return self.end_after_quit(i);
        }
        if conn.recv_pending {
            // No answer is due: the armed multishot receive ends.
            self.push_cancel(i, Op::Recv)?;
        }
        let Some(conn) = self.conns.get_mut(i) else { return Ok(()) };
        if conn.send_pending {
            return Ok(());
        }
        std::mem::swap(&mut conn.filling, &mut conn.sending);
        conn.sent = 0;
        self.push_send(i)
    }

    pub(super) fn end_after_quit(&mut self, i: usize) -> Result<(), DriverError> {
        if let Some(conn) = self.conns.get_mut(i) {
            conn.state = RingConnState::Finishing;
        }
        self.retire_if_idle(i);
        Ok(())
    }

    /// Records a connection's fatal error (the first one is the loop's
    /// result), stops the run and cancels what the connection has in flight.
    pub(super) fn fail(&mut self, i: usize, error: DriverError) -> Result<(), DriverError> {
        if self.conns.get(i).is_some_and(|c| c.task.owner.is_some()) {
            return self.fail_call(i, error);
        }
        self.context.control.stop();
        self.first_error.get_or_insert(error);
        let Some(conn) = self.conns.get_mut(i) else { return Ok(()) };
        conn.state = RingConnState::Finishing;
        self.cancel_ops(i)?;
        self.retire_if_idle(i);
        Ok(())
    }

    /// Cancels the connection's receive and send, if in flight.
    pub(super) fn cancel_ops(&mut self, i: usize) -> Result<(), DriverError> {
        let Some(conn) = self.conns.get(i) else { return Ok(()) };
        let (recv, send) = (conn.recv_pending, conn.send_pending);
        if recv {
            self.push_cancel(i, Op::Recv)?;
        }
        if send {
            self.push_cancel(i, Op::Send)?;
        }
        Ok(())
    }

    /// A lost connection: fatal unless `--mysql-ignore-errors` lists its
    /// code; then its operations are cancelled, and it is opened again
    /// once they have completed (and counted as a reconnect if that works).
    pub(super) fn lose(&mut self, i: usize, lost: Lost) -> Result<(), DriverError> {
        let Some(conn) = self.conns.get_mut(i) else { return Ok(()) };
        if conn.task.owner.is_some() {
            return self.lose_call(i, lost);
        }
        if let Err(error) = conn.io.lost(lost, &self.context.ignore) {
            return self.fail(i, error);
        }
        conn.state = RingConnState::Reconnecting;
        self.cancel_ops(i)?;
        self.settle(i)
    }

    /// An operation of a connection that is not running has completed:
    /// once it has none left, a finishing one retires and a lost one is
    /// opened again.
    pub(super) fn settle(&mut self, i: usize) -> Result<(), DriverError> {
        self.retire_if_idle(i);
        self.reopen_if_idle(i)
    }

    /// Opens a lost connection again, retrying every millisecond as
    /// sysbench does, until it works or the run is over. This blocks the
    /// loop's other connections meanwhile: usually they are lost too (the
    /// server went away), and a reconnect takes about a millisecond when
    /// only one connection was killed.
    pub(super) fn reopen_if_idle(&mut self, i: usize) -> Result<(), DriverError> {
        let Some(conn) = self.conns.get_mut(i) else { return Ok(()) };
        if conn.state != RingConnState::Reconnecting || conn.recv_pending || conn.send_pending {
            return Ok(());
        }
        let (control, clock, deadline) = (self.context.control.clone(), self.clock, self.deadline_ns);
        let run_over = move || control.is_stopped() || deadline.is_some_and(|d| clock.now_ns() >= d);
        let replaced = match conn.io.reopen_blocking(run_over, &mut self.stats) {
            Ok(Some((socket, leftover))) => conn.replace(socket, leftover, &self.ring),
            Ok(None) => {
                // The run ended meanwhile; its lost events are not counted
                // (a task's call ends as the run's cut ends it).
                conn.state = RingConnState::Finishing;
                self.retire_if_idle(i);
                self.cut_call(i);
                return Ok(());
            }
            Err(e) => Err(e),
        };
        if let Err(source) = replaced {
            let error = conn.io.io_error(source);
            return self.fail(i, error);
        }
        conn.state = RingConnState::Running;
        self.tell_lost(i, true);
        self.advance(i)
    }

    /// Treats a connection that waited past its read or write timeout as
    /// lost (one sending its COM_QUIT just ends); once the run is cut, ends
    /// every connection still waiting for an answer, counted as stalled.
    pub(super) fn check_waits(&mut self, now: u64) -> Result<(), DriverError> {
        if self.context.control.cut_due(now) {
            return self.cut_stalled(now);
        }
        for i in 0..self.conns.len() {
            let Some(conn) = self.conns.get(i) else { continue };
            let Some(overdue) = conn.waits.overdue(now, conn.limits) else { continue };
            match conn.state {
                RingConnState::Running => self.lose(i, overdue.lost())?,
                RingConnState::Quitting => self.abandon(i)?,
                _ => {}
            }
        }
        Ok(())
    }

    /// The run is cut: stops it, and ends the connections that still wait
    /// for an answer; their events are not counted, the connections are
    /// (each once: it is no longer running). A COM_QUIT still being sent
    /// is given up.
    pub(super) fn cut_stalled(&mut self, now: u64) -> Result<(), DriverError> {
        self.context.control.stop();
        let mut stalls = Stalls::default();
        for i in 0..self.conns.len() {
            let Some(conn) = self.conns.get(i) else { continue };
            match conn.state {
                RingConnState::Running if conn.io.awaits_answers() => {
                    stalls.add(conn.waits.waited(now).unwrap_or(0));
                    self.abandon(i)?;
                }
                RingConnState::Quitting => self.abandon(i)?,
                _ => {}
            }
        }
        if stalls.connections > 0 {
            self.context.control.record_stalls(stalls);
        }
        self.tasks.cut();
        Ok(())
    }

    /// Ends a connection without waiting for what it has in flight: its
    /// operations are cancelled, and it retires once they complete.
    pub(super) fn abandon(&mut self, i: usize) -> Result<(), DriverError> {
        let Some(conn) = self.conns.get_mut(i) else { return Ok(()) };
        conn.state = RingConnState::Finishing;
        self.cancel_ops(i)?;
        self.retire_if_idle(i);
        self.end_call(i, Err(crate::driver::CallError::Cut));
        Ok(())
    }

    pub(super) fn retire_if_idle(&mut self, i: usize) {
        if let Some(conn) = self.conns.get_mut(i) {
            if conn.state == RingConnState::Finishing && !conn.recv_pending && !conn.send_pending {
                conn.state = RingConnState::Retired;
                self.live -= 1;
            }
        }
    }
}
