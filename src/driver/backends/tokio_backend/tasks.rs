//! The tokio backend's tasks (a script's states, see `driver::tasks::fiber_task`): one
//! tokio task per state resumes its fiber and does what it asks, on the
//! loop's runtime. Its connections are exchanged with as a built-in test's
//! are (`exchange`): the same buffers, waits, ticker and redial.

use std::os::fd::AsRawFd;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use super::{exchange, Cut, EpollLoop, WatchedConn, Wire};
use crate::driver::connections::call_exchange::{CallAnswer, CallError, CallExchange, Expect};
use crate::driver::connections::conn_io::{ConnIo, OpenedCalls};
use crate::driver::tasks::fiber_task::{ConnId, OpenCalls, OpenedConn, Reply, Request, Resumed, Task, TaskBody};
use crate::driver::{Admission, DriverError, LoopOp, Lost, Redial, StdSocket};
use wirebench_protocol::constants::client_error::is_lost_connection;

/// How often a paused task looks whether the run was stopped.
const STOP_POLL: Duration = Duration::from_millis(10);

/// A task's connection.
struct TaskConn {
    io: ConnIo,
    wire: Wire,
    result_limit: usize,
}

/// Runs task `t` of the loop to its end; its watch is `watches[watch]`.
pub(super) async fn drive_task(
    body: TaskBody,
    shared: Rc<EpollLoop>,
    t: usize,
    watch: usize,
) -> Result<(), DriverError> {
    let index = shared.index;
    let mut task = Task::new(body, shared.clock.get()).map_err(|source| DriverError::Loop {
        index,
        op: LoopOp::StartTask,
        source,
    })?;
    let Some(watch) = shared.watches.get(watch) else { return Ok(()) };
    let mut conns: Vec<Option<TaskConn>> = Vec::new();
    let mut reply = Reply::Start;
    loop {
        let resumed = task.resume(reply);
        task.fold_into(t, &mut shared.stats.borrow_mut(), &mut shared.budget.borrow_mut());
        let request = match resumed {
            Resumed::Asks(request) => request,
            Resumed::Ended(result) => {
                shared.start.task_ended(&shared).await;
                for conn in conns.iter_mut().filter_map(Option::take) {
                    quit(conn).await;
                }
                return match result {
                    Err(error) if !task.was_cut() => {
                        shared.context.control.stop();
                        Err(DriverError::Script(error))
                    }
                    _ => Ok(()),
                };
            }
        };
        reply = serve_request(request, &mut conns, &task, &shared, watch).await;
    }
}

/// Does what the task asked; what to resume it with.
async fn serve_request(
    request: Request,
    conns: &mut Vec<Option<TaskConn>>,
    task: &Task,
    shared: &EpollLoop,
    watch: &WatchedConn,
) -> Reply {
    match request {
        Request::Open(open) => Reply::Opened(open_conn(*open, conns).await),
        Request::Call { conn, expect } => Reply::Answered(call(conns, conn, expect, task, shared, watch).await),
        Request::Close(conn) => {
            if let Some(conn) = conns.get_mut(conn).and_then(Option::take) {
                quit(conn).await;
            }
            Reply::Done
        }
        Request::Reopen(conn) => {
            let Some(old) = conns.get_mut(conn).and_then(Option::take) else {
                return Reply::Opened(Err("reconnect() on a connection this thread does not hold".to_owned()));
            };
            let open = OpenCalls { options: old.io.redial().options.clone(), result_limit: old.result_limit };
            quit(old).await;
            Reply::Opened(open_conn(open, conns).await)
        }
        Request::Admit => {
            let admitted = admit(shared).await;
            task.admitted(&shared.budget.borrow());
            Reply::Admitted(admitted)
        }
        Request::Yield => {
            tokio::task::yield_now().await;
            Reply::Done
        }
        Request::Sleep(pause) => {
            pause_unless_stopped(pause, shared).await;
            Reply::Done
        }
        Request::AwaitStart => Reply::Started(shared.start.wait(shared).await),
    }
}

/// A script run's tasks, waiting for its start (see `start_gate`): the
/// last of the loop's tasks to be set up (or to end) arrives at the gate
/// for the loop, which blocks the loop's thread until the run starts (its
/// other tasks wait here meanwhile, so nothing else could run), then takes
/// the run's clock and budget and wakes them.
pub(super) struct StartWait {
    arrival: std::cell::RefCell<Option<crate::driver::tasks::start_gate::ArrivalGuard>>,
    /// Tasks not yet set up and not ended.
    setting_up: std::cell::Cell<usize>,
    started: std::cell::Cell<bool>,
    woken: tokio::sync::Notify,
}

impl StartWait {
    pub(super) fn new(tasks: usize, arrival: Option<crate::driver::tasks::start_gate::ArrivalGuard>) -> Self {
        StartWait {
            arrival: std::cell::RefCell::new(arrival),
            setting_up: std::cell::Cell::new(tasks),
            started: std::cell::Cell::new(false),
            woken: tokio::sync::Notify::new(),
        }
    }

    /// A task is set up: the run's clock, once it started.
    async fn wait(&self, shared: &EpollLoop) -> crate::driver::Clock {
        self.setting_up.set(self.setting_up.get().saturating_sub(1));
        if !self.start_if_set_up(shared) {
            while !self.started.get() {
                self.woken.notified().await;
            }
        }
        shared.clock.get()
    }

    /// A task ended: it no longer holds up the start.
    async fn task_ended(&self, shared: &EpollLoop) {
        if !self.started.get() {
            self.setting_up.set(self.setting_up.get().saturating_sub(1));
            self.start_if_set_up(shared);
        }
    }

    /// Arrives for the loop once no task is still setting up; true once
    /// the run started (at once without a gate).
    fn start_if_set_up(&self, shared: &EpollLoop) -> bool {
        if self.started.get() {
            return true;
        }
        if self.setting_up.get() > 0 {
            return false;
        }
        if let Some(arrival) = self.arrival.borrow_mut().as_mut() {
            let started = arrival.arrive();
            shared.clock.set(started.clock);
            shared.deadline_ns.set(started.deadline_ns);
            let control = shared.context.control.clone();
            *shared.budget.borrow_mut() = crate::driver::Budget::for_loop(control, started.deadline_ns, shared.index);
        }
        self.started.set(true);
        self.woken.notify_waiters();
        true
    }
}

/// Logs in; the connection takes the first free slot of the task's.
async fn open_conn(open: OpenCalls, conns: &mut Vec<Option<TaskConn>>) -> Result<OpenedConn, String> {
    let OpenCalls { options, result_limit } = open;
    let max_packet = options.max_packet_size as usize;
    let redial = Redial { options, statements: Arc::new(Vec::new()), prepare: false, init: &[] };
    let (conn, _) = redial.open().await.map_err(|e| e.to_string())?;
    let (stream, leftover, login, transport) = conn.into_parts();
    let capabilities = login.capabilities;
    let socket = StdSocket::from_stream(stream).map_err(|e| e.to_string())?;
    let calls = CallExchange::new(capabilities, max_packet, result_limit);
    let opened = OpenedCalls { socket, leftover, calls, transport };
    let (io, socket, leftover) = ConnIo::for_calls(opened, redial);
    let stream = socket.into_stream().map_err(|e| e.to_string())?;
    let conn = TaskConn { io, wire: Wire::new(stream, leftover), result_limit };
    let id = match conns.iter().position(Option::is_none) {
        Some(free) => free,
        None => {
            conns.push(None);
            conns.len() - 1
        }
    };
    if let Some(slot) = conns.get_mut(id) {
        *slot = Some(conn);
    }
    Ok(OpenedConn { id, capabilities, max_packet })
}

/// A call on connection `id`: its command out, its answer in; a lost
/// connection is opened again when `--mysql-ignore-errors` lists the error.
async fn call(
    conns: &mut [Option<TaskConn>],
    id: ConnId,
    expect: Expect,
    task: &Task,
    shared: &EpollLoop,
    watch: &WatchedConn,
) -> Result<CallAnswer, CallError> {
    if task.was_cut() || shared.context.control.cut_due(shared.clock.get().now_ns()) {
        task.shared.borrow_mut().cut = true;
        return Err(CallError::Cut);
    }
    let slot = conns.get_mut(id).ok_or(CallError::Closed)?;
    let conn = slot.as_mut().ok_or(CallError::Closed)?;
    let calls = conn.io.calls().ok_or(CallError::Closed)?;
    calls.start(&task.shared.borrow().command, expect)?;
    watch.fd.set(Some(conn.wire.stream.as_raw_fd()));
    watch.limits.set(conn.io.wait_limits());
    let exchanged = exchange(&mut conn.io, &mut conn.wire, shared, &watch.waits).await;
    watch.fd.set(None);
    let lost = match (exchanged, watch.cut.take()) {
        (_, Some(Cut::Stalled)) => {
            task.shared.borrow_mut().cut = true;
            *slot = None;
            return Err(CallError::Cut);
        }
        (Ok(None), None) => return answered(conn, task),
        (Ok(_), Some(Cut::Overdue(overdue))) => overdue.lost(),
        (Ok(Some(lost)), None) => lost,
        (Err(DriverError::Call { source, .. }), _) => {
            *slot = None;
            return Err(source);
        }
        (Err(other), _) => {
            *slot = None;
            return Err(CallError::Loop(other.to_string()));
        }
    };
    lost_call(slot, lost, shared, task).await
}

/// The call's answer, an execution's kept packets handed to the task.
fn answered(conn: &mut TaskConn, task: &Task) -> Result<CallAnswer, CallError> {
    let done = conn.io.take_call_answer().unwrap_or(Err(CallError::Closed));
    if let (Ok(CallAnswer::Walked(_)), Some(calls)) = (&done, conn.io.calls()) {
        calls.swap_kept(&mut task.shared.borrow_mut().kept);
    }
    done
}

/// The connection in `slot` was lost during a call: opened again if the
/// error is ignored (the loop counts the reconnect), else closed.
async fn lost_call(
    slot: &mut Option<TaskConn>,
    lost: Lost,
    shared: &EpollLoop,
    task: &Task,
) -> Result<CallAnswer, CallError> {
    let Some(conn) = slot.as_mut() else { return Err(CallError::Closed) };
    if !shared.context.ignore.ignores(lost.code()) || !is_lost_connection(lost.code()) {
        *slot = None;
        return Err(CallError::Lost { lost, reopened: false });
    }
    match conn.io.reopen(|| shared.run_over(), &shared.stats).await {
        Some((stream, leftover)) => {
            conn.wire.replace(stream, leftover);
            Err(CallError::Lost { lost, reopened: true })
        }
        None => {
            // The run ended first: the call ends as the cut ends calls.
            *slot = None;
            task.shared.borrow_mut().cut = true;
            Err(CallError::Cut)
        }
    }
}

/// COM_QUIT, and the connection closes.
async fn quit(mut conn: TaskConn) {
    conn.wire.send_quit(&mut conn.io).await;
}

/// sysbench's `sb_more_events`: the next event's admission, waiting for
/// its `--rate` arrival as a built-in connection does.
async fn admit(shared: &EpollLoop) -> Option<u64> {
    shared.budget.borrow_mut().hand_over(&shared.context.board, &mut shared.stats.borrow_mut());
    let asked = shared.clock.get().now_ns();
    // A task's events that sent nothing are stamped here; those that did,
    // at their send.
    shared.budget.borrow_mut().sent(asked, &mut shared.stats.borrow_mut());
    loop {
        let now = shared.clock.get().now_ns();
        let admission = shared.budget.borrow_mut().admit(now, asked);
        match admission {
            Admission::Start(at) => return Some(at),
            Admission::Over => return None,
            Admission::Wait => {
                shared.budget.borrow().wake_at(now)?;
                shared.waiters.wait().await;
            }
        }
    }
}

/// Pauses for `pause`, less if the run is stopped meanwhile.
async fn pause_unless_stopped(pause: Duration, shared: &EpollLoop) {
    let end = tokio::time::Instant::now() + pause;
    while !shared.context.control.is_stopped() {
        let now = tokio::time::Instant::now();
        if now >= end {
            return;
        }
        tokio::time::sleep((end - now).min(STOP_POLL)).await;
    }
}
