//! `--idle-connections` on the tokio backend: each idle connection is a
//! task of the loop's runtime, as each active one is. It connects to its
//! server's address (resolved once, before the run), logs in through the
//! client's login ([`Connection::handshake`]) as the active connections
//! did, and is then held, its pings and answers passing through its
//! transport ([`ConnIo`]). When it logs in and pings is the loop's
//! [`IdleSchedule`], which the ticker looks at; a connection the server
//! drops is counted and logged in again at its turn.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use bytes::{Buf, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use super::EpollLoop;
use crate::client::{ClientError, Connection, Stream};
use crate::driver::connections::conn_io::ConnIo;
use crate::driver::connections::idle::{login_failure, IdleDue, IdleSchedule};
use crate::driver::LoopContext;

/// A loop's idle connections: their schedule, and a task for each login
/// and held connection.
pub(super) struct IdleTasks {
    index: usize,
    state: RefCell<IdleState>,
    /// Each slot's ping: notified when one is due, or as the run ends.
    pings: Box<[Notify]>,
    /// Set as the run ends: held connections say goodbye, logins under way
    /// stop.
    closing: Cell<bool>,
    /// Wakes the logins under way as the run ends.
    closed: Notify,
}

struct IdleState {
    schedule: IdleSchedule,
    due: IdleDue,
    tasks: Vec<JoinHandle<()>>,
}

impl IdleTasks {
    /// Loop `index`'s share of the run's idle connections, if it holds any.
    pub(super) fn for_loop(index: usize, context: &LoopContext) -> Option<IdleTasks> {
        let plan = context.idle.as_ref()?;
        let schedule = IdleSchedule::for_loop(plan, index, context.clock.now_ns())?;
        let pings = (0..schedule.len()).map(|_| Notify::new()).collect();
        let state = RefCell::new(IdleState { schedule, due: IdleDue::default(), tasks: Vec::new() });
        Some(IdleTasks { index, state, pings, closing: Cell::new(false), closed: Notify::new() })
    }

    /// On the ticker's turn: the logins the schedule lets start get a task
    /// each, and the pings due are told.
    pub(super) fn serve(&self, shared: &Rc<EpollLoop>, now: u64) {
        if self.closing.get() {
            return;
        }
        let mut state = self.state.borrow_mut();
        if !state.schedule.due(now) {
            return;
        }
        let IdleState { schedule, due, tasks } = &mut *state;
        schedule.look(now, due);
        // A login past its timeout is its own task's to end.
        for &slot in &due.pings {
            if let Some(ping) = self.pings.get(slot as usize) {
                ping.notify_one();
            }
        }
        tasks.retain(|task| !task.is_finished());
        for &slot in &due.logins {
            tasks.push(tokio::task::spawn_local(log_in_and_hold(shared.clone(), slot)));
        }
    }

    /// As the run ends: every held connection says goodbye (COM_QUIT)
    /// before the loop goes, and the logins under way stop.
    pub(super) async fn say_goodbye(&self) {
        self.closing.set(true);
        self.closed.notify_waiters();
        for ping in self.pings.iter() {
            ping.notify_one();
        }
        let tasks = std::mem::take(&mut self.state.borrow_mut().tasks);
        for task in tasks {
            let _ = task.await;
        }
    }
}

impl IdleTasks {
    /// Resolves once the run ends. The flag is read before the wait is
    /// registered with no await between (the loop's tasks take turns on
    /// one thread), so an end that came first is not missed.
    async fn run_ends(&self) {
        while !self.closing.get() {
            self.closed.notified().await;
        }
    }
}

/// Idle connection `slot`'s life from one login to its loss (or the
/// run's end).
async fn log_in_and_hold(shared: Rc<EpollLoop>, slot: u32) {
    let Some(idle) = &shared.idle else { return };
    let Some(plan) = &shared.context.idle else { return };
    let Some(target) = plan.target_for(idle.index, slot as usize) else { return };
    let options = &target.redial.options;
    // Boxed: the login's future is large and lasts a moment; the held
    // connection's is small and lasts the run.
    let login = Box::pin(tokio::time::timeout(options.connect_timeout, async {
        let stream = Stream::open_at(&target.address)
            .await
            .map_err(|source| ClientError::Io { endpoint: options.endpoint.clone(), source })?;
        Connection::handshake(stream, options).await
    }));
    let now = || shared.clock.get().now_ns();
    let login = tokio::select! {
        login = login => login,
        () = idle.run_ends() => return,
    };
    let conn = match login {
        Ok(Ok(conn)) => conn,
        Ok(Err(error)) => return idle.state.borrow_mut().schedule.login_failed(slot, login_failure(&error), now()),
        Err(_) => {
            let why = format!("{}: no login within the connect timeout (--mysql-connect-timeout)", options.endpoint);
            return idle.state.borrow_mut().schedule.login_failed(slot, why, now());
        }
    };
    if idle.closing.get() {
        return;
    }
    idle.state.borrow_mut().schedule.logged_in(slot, now());
    let (stream, leftover, _, transport) = conn.into_parts();
    let io = ConnIo::for_held_idle(target.redial.clone(), transport);
    if hold(&shared, idle, slot, stream, leftover, io).await.is_err() {
        idle.state.borrow_mut().schedule.lost(slot);
    }
}

/// Holds a logged-in idle connection: its pings when due, their answers;
/// a COM_QUIT as the run ends. An error when it is lost.
async fn hold(
    shared: &EpollLoop,
    idle: &IdleTasks,
    slot: u32,
    mut stream: Stream,
    mut input: BytesMut,
    mut io: ConnIo,
) -> Result<(), ()> {
    let Some(ping) = idle.pings.get(slot as usize) else { return Ok(()) };
    let mut out = Vec::new();
    let now = || shared.clock.get().now_ns();
    loop {
        if !input.is_empty() {
            let used = io.on_input(&input, now(), &mut shared.stats.borrow_mut(), &shared.context.ignore);
            input.advance(used.map_err(drop)?);
        }
        tokio::select! {
            read = stream.read_buf(&mut input) => {
                if read.map_or(true, |n| n == 0) {
                    return Err(());
                }
            }
            () = ping.notified() => {
                if idle.closing.get() {
                    if io.write_quit(&mut out).is_ok() {
                        let _ = stream.try_write(&out);
                    }
                    return Ok(());
                }
                let Some(work) = io.idle() else { return Ok(()) };
                if work.awaits_ping() {
                    return Err(());
                }
                work.ping_due();
                io.fill(&mut out, now(), &mut shared.budget.borrow_mut(), &mut shared.stats.borrow_mut()).map_err(drop)?;
                stream.write_all(&out).await.map_err(drop)?;
                out.clear();
            }
        }
    }
}
