//! How a connection's life ends or starts again: its COM_QUIT, a fatal
//! error, a loss (reopened when `--mysql-ignore-errors` lists it), a
//! timeout, and the run's cut (stalled). An operation still in flight is
//! cancelled, and the connection settles once it has completed (at once
//! on a backend that has nothing in flight between two turns). A task's
//! connection fails only its task's call (`task_conns.rs`); an idle one
//! is counted and logged in again later (`idle_conns.rs`).

use super::conn::ConnState;
use super::loop_io::{LoopIo, Op};
use super::EventLoop;
use crate::driver::{CallError, DriverError, Lost, Stalls};

impl<B: LoopIo> EventLoop<'_, B> {
    /// A connection whose work is done sends COM_QUIT, behind a send still
    /// in flight if there is one (every answer is in, so the server has
    /// every byte of it), and finishes once it is sent.
    pub(super) fn start_quit(&mut self, i: usize) -> Result<(), DriverError> {
        let Some(conn) = self.conns.get_mut(i) else { return Ok(()) };
        conn.state = ConnState::Quitting;
        if conn.io.write_quit(&mut conn.filling).is_err() {
            // The transport cannot encode it: leave without a goodbye.
            conn.filling.clear();
            return self.end_after_quit(i);
        }
        if conn.recv_pending {
            // No answer is due: the receive still armed ends.
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
            conn.state = ConnState::Finishing;
        }
        self.retire_if_idle(i);
        Ok(())
    }

    /// Records a connection's fatal error (the first one is the loop's
    /// result), stops the run and cancels what the connection has in
    /// flight. A task's connection fails only its task's call; an idle
    /// one is counted and logged in again.
    pub(super) fn fail(&mut self, i: usize, error: DriverError) -> Result<(), DriverError> {
        let Some(conn) = self.conns.get(i) else { return Ok(()) };
        if conn.task.owner.is_some() {
            return self.fail_call(i, error);
        }
        if conn.is_idle() {
            return self.drop_idle(i, Some(error));
        }
        if conn.io.is_replay() {
            return self.fail_replayed(i, error);
        }
        self.context.control.stop();
        self.first_error.get_or_insert(error);
        self.finish(i)
    }

    /// Ends a connection: what it has in flight is cancelled, and it
    /// retires once that has completed.
    pub(super) fn finish(&mut self, i: usize) -> Result<(), DriverError> {
        let Some(conn) = self.conns.get_mut(i) else { return Ok(()) };
        conn.state = ConnState::Finishing;
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
        if conn.is_idle() {
            return self.drop_idle(i, None);
        }
        if conn.io.is_replay() {
            return self.lose_replayed(i, lost);
        }
        if let Err(error) = conn.io.lost(lost, &self.context.ignore) {
            return self.fail(i, error);
        }
        conn.state = ConnState::Reconnecting;
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
    /// loop's other connections meanwhile, as a reconnect blocks a sysbench
    /// thread: usually they are lost too (the server went away), and a
    /// reconnect takes about a millisecond when only one connection was
    /// killed.
    pub(super) fn reopen_if_idle(&mut self, i: usize) -> Result<(), DriverError> {
        let Some(conn) = self.conns.get_mut(i) else { return Ok(()) };
        if conn.state != ConnState::Reconnecting || conn.recv_pending || conn.send_pending {
            return Ok(());
        }
        let (control, clock, deadline) = (self.context.control.clone(), self.clock, self.deadline_ns);
        let run_over = move || control.is_stopped() || deadline.is_some_and(|d| clock.now_ns() >= d);
        let reopened = match conn.io.reopen_blocking(run_over, &mut self.stats) {
            Ok(Some(reopened)) => reopened,
            Ok(None) => {
                // The run ended meanwhile; its lost events are not counted
                // (a task's call ends as the run's cut ends it).
                conn.state = ConnState::Finishing;
                self.retire_if_idle(i);
                self.cut_call(i);
                return Ok(());
            }
            Err(source) => {
                let error = conn.io.io_error(source);
                return self.fail(i, error);
            }
        };
        let (socket, leftover) = reopened;
        conn.replace(socket, &leftover);
        if let Err(source) = self.io.adopt(conn, i) {
            let error = conn.io.io_error(source);
            return self.fail(i, error);
        }
        conn.state = ConnState::Running;
        self.tell_lost(i, true);
        self.advance(i)
    }

    /// Treats a connection that waited past its read or write timeout as
    /// lost (one sending its COM_QUIT just ends).
    pub(super) fn check_timeouts(&mut self, now: u64) -> Result<(), DriverError> {
        for i in 0..self.conns.len() {
            let Some(conn) = self.conns.get(i) else { continue };
            let Some(overdue) = conn.waits.overdue(now, conn.limits) else { continue };
            match conn.state {
                ConnState::Running => self.lose(i, overdue.lost())?,
                ConnState::Quitting => self.abandon(i)?,
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
                ConnState::Running if conn.io.awaits_answers() => {
                    stalls.add(conn.waits.waited(now).unwrap_or(0));
                    self.abandon(i)?;
                }
                ConnState::Quitting => self.abandon(i)?,
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
        self.finish(i)?;
        self.end_call(i, Err(CallError::Cut));
        Ok(())
    }

    /// A finishing connection with nothing in flight retires; an idle one
    /// closes its socket until its next login.
    pub(super) fn retire_if_idle(&mut self, i: usize) {
        let Some(conn) = self.conns.get_mut(i) else { return };
        if conn.state != ConnState::Finishing || conn.recv_pending || conn.send_pending {
            return;
        }
        conn.state = ConnState::Retired;
        if conn.io.is_replay() {
            self.retire_replayed(i);
        } else if conn.is_idle() {
            conn.close_socket();
            conn.io.close_idle();
            self.io.release(i);
        } else {
            self.live -= 1;
        }
    }
}
