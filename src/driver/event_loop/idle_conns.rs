//! `--idle-connections` on the loop: when its [`IdleSchedule`] says so, an
//! idle connection opens its socket (its connect under way, without
//! waiting) and logs in through the client's login on the loop's own
//! readiness, pings, and is counted when it logs in, is refused or is lost,
//! to be logged in again later. Everything else (its sends and receives,
//! its transport) is an ordinary connection's.

use crate::client::{connect_started, ClientError};
use crate::driver::connections::idle::{login_failure, IdleTrouble};
use crate::driver::{DriverError, StdSocket};

use super::conn::ConnState;
use super::loop_io::LoopIo;
use super::EventLoop;

impl<B: LoopIo> EventLoop<'_, B> {
    /// On the idle connections' tick: what their sockets brought (for a
    /// backend whose wait leaves them out), their logins past the connect
    /// timeout, their pings due, and the logins that may start.
    pub(super) fn serve_idle(&mut self) -> Result<(), DriverError> {
        let now = self.now_ns;
        let Some(idle) = &mut self.idle else { return Ok(()) };
        if !idle.schedule.due(now) {
            return Ok(());
        }
        let mut due = std::mem::take(&mut idle.due);
        idle.schedule.look(now, &mut due);
        let first = idle.first;
        self.io.look_at_idle(&mut self.conns, &mut self.completions)?;
        self.handle_completions()?;
        for &slot in &due.expired {
            let i = first + slot as usize;
            let endpoint = self.conns.get(i).map(|c| c.io.endpoint().to_string()).unwrap_or_default();
            let why = format!("{endpoint}: no login within the connect timeout (--mysql-connect-timeout)");
            self.idle_login_failed(i, why);
            self.finish(i)?;
        }
        for &slot in &due.pings {
            self.ping(first + slot as usize)?;
        }
        for &slot in &due.logins {
            self.start_idle_login(first + slot as usize)?;
        }
        if let Some(idle) = &mut self.idle {
            idle.due = due;
        }
        Ok(())
    }

    /// Opens idle connection `i`'s socket and starts its login: the server
    /// speaks first, so a receive is armed and nothing sent.
    fn start_idle_login(&mut self, i: usize) -> Result<(), DriverError> {
        let Some(conn) = self.conns.get_mut(i) else { return Ok(()) };
        if conn.state != ConnState::Retired {
            // Its last socket's operations have not all completed yet.
            if let (Some(slot), Some(idle)) = (self.idle_slot(i), &mut self.idle) {
                idle.schedule.not_ready(slot);
            }
            return Ok(());
        }
        let endpoint = conn.io.endpoint().clone();
        let Some(address) = self.idle_address(i) else { return Ok(()) };
        let opened = connect_started(&address).map(|socket| StdSocket::from_socket(socket, address.is_unix()));
        let socket = match opened {
            Ok(socket) => socket,
            Err(source) => return self.idle_refused(i, ClientError::Io { endpoint, source }),
        };
        let Some(conn) = self.conns.get_mut(i) else { return Ok(()) };
        conn.replace(socket, &[]);
        conn.io.start_login();
        conn.state = ConnState::Running;
        if let Err(source) = self.io.adopt(conn, i) {
            return self.idle_refused(i, ClientError::Io { endpoint, source });
        }
        self.advance(i)
    }

    /// The address idle connection `i` logs in at.
    fn idle_address(&self, i: usize) -> Option<socket2::SockAddr> {
        let idle = self.idle.as_ref()?;
        let plan = self.context.idle.as_ref()?;
        let target = plan.target_for(self.index, i.checked_sub(idle.first)?)?;
        Some(target.address.clone())
    }

    /// A ping is due on idle connection `i`: sent, unless the last one is
    /// still unanswered, which loses the connection.
    fn ping(&mut self, i: usize) -> Result<(), DriverError> {
        let Some(conn) = self.conns.get_mut(i).filter(|c| c.state == ConnState::Running) else { return Ok(()) };
        let Some(idle) = conn.io.idle().filter(|idle| idle.is_held()) else { return Ok(()) };
        if idle.awaits_ping() {
            return self.drop_idle(i, None);
        }
        idle.ping_due();
        self.advance(i)
    }

    /// What idle connection `i`'s input came to: a login done is counted,
    /// its pings start, and its login's buffers go.
    pub(super) fn idle_input(&mut self, i: usize) {
        let now = self.now_ns;
        let recv_in_place = self.io.receives_in_place();
        let Some(conn) = self.conns.get_mut(i) else { return };
        if !conn.io.idle().is_some_and(|idle| idle.take_fresh_login()) {
            return;
        }
        conn.shrink(recv_in_place);
        if let Some(idle) = &mut self.idle {
            if let Some(slot) = i.checked_sub(idle.first) {
                idle.schedule.logged_in(slot as u32, now);
            }
        }
    }

    /// Idle connection `i` ends: a login that failed (`error`, or the
    /// server's close during it) is counted as a failed login, a held
    /// connection that failed or was lost as lost; either way it closes,
    /// to log in again later.
    pub(super) fn drop_idle(&mut self, i: usize, error: Option<DriverError>) -> Result<(), DriverError> {
        let Some(conn) = self.conns.get_mut(i) else { return Ok(()) };
        let held = conn.io.idle().is_some_and(|idle| idle.is_held());
        let closed = conn.io.idle().and_then(|idle| idle.closed_during_login());
        if held {
            if let Some(slot) = self.idle_slot(i) {
                if let Some(idle) = &mut self.idle {
                    idle.schedule.lost(slot);
                }
            }
        } else {
            let why = match (error, closed) {
                (Some(DriverError::Idle(trouble)), _) => match *trouble {
                    IdleTrouble::Login(error) => login_failure(&error),
                    held => held.to_string(),
                },
                (Some(other), _) => other.to_string(),
                (None, Some(closed)) => login_failure(&closed),
                (None, None) => "the connection ended during the login".to_owned(),
            };
            self.idle_login_failed(i, why);
        }
        self.finish(i)
    }

    /// A login that could not even start: counted, and its place closed.
    fn idle_refused(&mut self, i: usize, error: ClientError) -> Result<(), DriverError> {
        self.idle_login_failed(i, login_failure(&error));
        self.finish(i)
    }

    fn idle_login_failed(&mut self, i: usize, why: String) {
        let now = self.now_ns;
        let Some(slot) = self.idle_slot(i) else { return };
        if let Some(idle) = &mut self.idle {
            idle.schedule.login_failed(slot, why, now);
        }
    }

    fn idle_slot(&self, i: usize) -> Option<u32> {
        let idle = self.idle.as_ref()?;
        u32::try_from(i.checked_sub(idle.first)?).ok()
    }

    /// As the loop ends: every idle connection logged in says goodbye (a
    /// COM_QUIT, through its transport, which an idle socket takes at
    /// once), so the server counts no aborted client.
    pub(super) fn say_goodbye_to_idle(&mut self) {
        let Some(idle) = &self.idle else { return };
        let range = idle.first..idle.first + idle.schedule.len();
        let mut quit = Vec::new();
        for conn in self.conns.get_mut(range).unwrap_or_default() {
            let held = conn.io.idle().is_some_and(|idle| idle.is_held());
            if conn.state != ConnState::Running || !held || conn.send_pending {
                continue;
            }
            quit.clear();
            if conn.io.write_quit(&mut quit).is_ok() {
                if let Some(socket) = conn.socket() {
                    socket.send_now(&quit);
                }
            }
        }
    }
}
