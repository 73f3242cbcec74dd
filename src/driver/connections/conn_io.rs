//! One connection's work above its socket, the same under every backend:
//! the commands its work writes (a built-in test's [`EventPipeline`], a
//! task's [`CallExchange`]) pass through the transport into the backend's
//! send buffer, the bytes the backend received pass through it into the
//! work, and a lost connection is either fatal or opened again
//! with its [`Redial`]. A backend only moves bytes between the socket and
//! its two buffers, by its own rules (tokio streams; ring operations whose
//! buffers must stay put while in flight).
//!
//! With a plain transport, the usual case, the pipeline writes straight
//! into the backend's send buffer and walks its receive buffer in place:
//! no second buffer, no copy.

use std::cell::RefCell;
use std::io;
use std::sync::Arc;

use bytes::BytesMut;
use wirebench_protocol::command;
use wirebench_protocol::response::RowFormat;
use wirebench_protocol::Capabilities;

use crate::client::{Endpoint, LoggedIn, Stream};
use crate::driver::connections::call_exchange::{CallAnswer, CallError, CallExchange};
use crate::driver::connections::idle::{IdleInput, IdleWork};
use crate::driver::connections::redial::Redialled;
use crate::driver::connections::waits::WaitLimits;
use crate::driver::replay::replay_work::{ReplayInput, ReplayWork};
use crate::driver::replay::replayed_conn::ReplayStep;
use crate::driver::{
    Budget, ConnPlan, DriverError, EventPipeline, FailedStatement, IgnoreErrors, Lost, PipelineError, Redial,
    RefusedCommand, Reopened, StdSocket,
};
use crate::stats::LoopStats;
use crate::transport::{Transport, TransportError};
use crate::workload::CommandSql;

/// A connection's work, what sits between it and the socket, and how
/// to open it again.
pub(crate) struct ConnIo {
    work: Work,
    /// When it is not plain, the backend's buffers hold wire bytes and the
    /// packet stream passes through `plain_in` and `plain_out`.
    transport: Transport,
    /// Decoded responses not yet walked.
    plain_in: Vec<u8>,
    /// Commands on their way to the transport.
    plain_out: Vec<u8>,
    /// Where it goes and how it logs in; shared by an instance's idle
    /// connections to one server.
    redial: Arc<Redial>,
}

/// What a connection's commands come from: a built-in test's pipelined
/// events, a task's calls, one at a time, an idle connection's login
/// and pings, or a replayed connection's login and captured commands.
pub(crate) enum Work {
    Events(EventPipeline),
    Calls(CallExchange),
    Idle(IdleWork),
    Replay(Box<ReplayWork>),
}

/// What became of a task's call once the answer came in.
pub(crate) type CallDone = Result<CallAnswer, CallError>;

/// What a running connection waits for once its commands are sent
/// ([`ConnIo::after_send`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AfterSend {
    /// Its work is done and every answer is in: it quits.
    Quit,
    /// Nothing in flight and, under `--rate`, no event may start yet: the
    /// next arrival.
    Arrival,
    /// A task's call has its answer (or awaits none): the task resumes.
    CallAnswered,
    /// The server's answers.
    Answers,
    /// An idle connection: nothing, but a receive stays armed for what the
    /// server may say (a ping's answer, its close).
    Idle,
    /// A replayed connection between commands: its next command's time or
    /// its next records (the loop's replay timers and feed wake it).
    Later,
}

impl ConnIo {
    /// Splits a plan into what this layer keeps and what the backend takes:
    /// the socket, and the bytes already read from it.
    pub(crate) fn from_plan(plan: ConnPlan) -> (Self, StdSocket, BytesMut) {
        let ConnPlan { endpoint: _, socket, leftover, pipeline, transport, redial } = plan;
        let io = ConnIo::new(Work::Events(pipeline), transport, Arc::new(redial));
        (io, socket, leftover)
    }

    /// A task's connection, just opened: its calls, one at a time.
    pub(crate) fn for_calls(opened: OpenedCalls, redial: Redial) -> (Self, StdSocket, BytesMut) {
        let OpenedCalls { socket, leftover, calls, transport } = opened;
        let io = ConnIo::new(Work::Calls(calls), transport, Arc::new(redial));
        (io, socket, leftover)
    }

    /// An idle connection, between logins: see [`start_login`](Self::start_login).
    pub(crate) fn for_idle(redial: Arc<Redial>) -> Self {
        ConnIo::new(Work::Idle(IdleWork::Closed), Transport::plain(), redial)
    }

    fn new(work: Work, transport: Transport, redial: Arc<Redial>) -> Self {
        ConnIo { work, transport, plain_in: Vec::new(), plain_out: Vec::new(), redial }
    }

    /// An idle connection that logged in elsewhere (the async client's
    /// login, on the tokio backend): held, with the login's transport.
    pub(crate) fn for_held_idle(redial: Arc<Redial>, transport: Transport) -> Self {
        ConnIo::new(Work::Idle(IdleWork::held()), transport, redial)
    }

    /// A replayed connection, not yet opened: the loop opens its socket
    /// when its time comes.
    pub(crate) fn for_replay(work: ReplayWork, redial: Arc<Redial>) -> Self {
        ConnIo::new(Work::Replay(Box::new(work)), Transport::plain(), redial)
    }

    /// A replayed connection's work.
    pub(crate) fn replay(&mut self) -> Option<&mut ReplayWork> {
        match &mut self.work {
            Work::Replay(replay) => Some(replay),
            _ => None,
        }
    }

    pub(crate) fn is_replay(&self) -> bool {
        matches!(self.work, Work::Replay(_))
    }

    /// An idle connection's login starts, through the client's login, on
    /// its new socket: its transport is the login's until it is done.
    pub(crate) fn start_login(&mut self) {
        self.transport = Transport::plain();
        self.plain_in = Vec::new();
        self.plain_out = Vec::new();
        self.work = Work::Idle(IdleWork::logging_in(&self.redial.options));
    }

    /// An idle connection's socket is gone: nothing to do until its next
    /// login.
    pub(crate) fn close_idle(&mut self) {
        if let Work::Idle(idle) = &mut self.work {
            *idle = IdleWork::Closed;
            self.transport = Transport::plain();
        }
    }

    /// An idle connection's work.
    pub(crate) fn idle(&mut self) -> Option<&mut IdleWork> {
        match &mut self.work {
            Work::Idle(idle) => Some(idle),
            _ => None,
        }
    }

    pub(crate) fn is_idle(&self) -> bool {
        matches!(self.work, Work::Idle(_))
    }

    pub(crate) fn endpoint(&self) -> &Endpoint {
        &self.redial.options.endpoint
    }

    /// The task's calls, if the connection is a task's.
    pub(crate) fn calls(&mut self) -> Option<&mut CallExchange> {
        match &mut self.work {
            Work::Calls(calls) => Some(calls),
            Work::Events(_) | Work::Idle(_) | Work::Replay(_) => None,
        }
    }

    pub(crate) fn is_task_conn(&self) -> bool {
        matches!(self.work, Work::Calls(_))
    }

    /// True once its work is done and every answer is in (a task's
    /// connection is done when the task closes it).
    pub(crate) fn is_done(&self) -> bool {
        match &self.work {
            Work::Events(pipeline) => pipeline.is_done(),
            Work::Replay(replay) => replay.step == ReplayStep::Quit,
            Work::Calls(_) | Work::Idle(_) => false,
        }
    }

    /// True when nothing is in flight and, under `--rate`, the connection
    /// waits for an arrival.
    pub(crate) fn is_waiting(&self) -> bool {
        match &self.work {
            Work::Events(pipeline) => pipeline.is_waiting(),
            Work::Calls(_) | Work::Idle(_) | Work::Replay(_) => false,
        }
    }

    /// Whether answers are due from the server: a wait the timeouts and
    /// the run's cut concern. An idle connection's never is (its ping's
    /// answer has its own deadline, the next ping).
    pub(crate) fn awaits_answers(&self) -> bool {
        match &self.work {
            Work::Events(pipeline) => pipeline.in_flight() > 0,
            Work::Calls(calls) => calls.awaits_answer(),
            Work::Replay(replay) => replay.awaits_answers(),
            Work::Idle(_) => false,
        }
    }

    /// What the connection waits for once what it filled is on its way;
    /// the one answer for every backend and way of waiting.
    pub(crate) fn after_send(&self) -> AfterSend {
        if self.is_idle() {
            AfterSend::Idle
        } else if self.is_done() {
            AfterSend::Quit
        } else if self.is_replay() {
            if self.awaits_answers() {
                AfterSend::Answers
            } else {
                AfterSend::Later
            }
        } else if self.is_waiting() {
            AfterSend::Arrival
        } else if !self.awaits_answers() {
            // Only a task's connection: a built-in test's that is neither
            // done nor waiting has a command in flight.
            debug_assert!(self.is_task_conn(), "a built-in connection awaits nothing but is not done");
            AfterSend::CallAnswered
        } else {
            AfterSend::Answers
        }
    }

    /// A task's call that has its answer: the answer.
    pub(crate) fn take_call_answer(&mut self) -> Option<CallDone> {
        self.calls().and_then(CallExchange::take_answer)
    }

    pub(crate) fn redial(&self) -> &Redial {
        &self.redial
    }

    /// Lets the work append its next commands, in wire form, to `wire_out`.
    // Inlined into each backend's caller, which then calls the pipeline
    // itself, as it did when each backend had its own copy of this.
    #[inline(always)]
    pub(crate) fn fill(
        &mut self,
        wire_out: &mut Vec<u8>,
        now_ns: u64,
        budget: &mut Budget,
        stats: &mut LoopStats,
    ) -> Result<(), DriverError> {
        let Work::Events(pipeline) = &mut self.work else { return self.fill_other(wire_out, now_ns, budget, stats) };
        if self.transport.is_plain() {
            let filled = pipeline.fill(wire_out, now_ns, budget);
            filled.map_err(|e| self.pipeline_error(e))?;
            return Ok(());
        }
        let filled = pipeline.fill(&mut self.plain_out, now_ns, budget);
        filled.map_err(|e| self.pipeline_error(e))?;
        let encoded = self.transport.encode(&self.plain_out, wire_out);
        self.plain_out.clear();
        encoded.map_err(|e| self.transport_error(e))
    }

    /// What a task's connection, an idle one or a replayed one has to send.
    fn fill_other(
        &mut self,
        wire_out: &mut Vec<u8>,
        now_ns: u64,
        budget: &mut Budget,
        stats: &mut LoopStats,
    ) -> Result<(), DriverError> {
        match &mut self.work {
            Work::Events(_) => Ok(()),
            Work::Calls(_) => self.fill_call(wire_out),
            Work::Idle(_) => self.fill_idle(wire_out),
            Work::Replay(_) => self.fill_replay(wire_out, now_ns, budget, stats),
        }
    }

    /// A replayed connection's login bytes (wire bytes), or its commands
    /// due, through the transport.
    fn fill_replay(
        &mut self,
        wire_out: &mut Vec<u8>,
        now_ns: u64,
        budget: &mut Budget,
        stats: &mut LoopStats,
    ) -> Result<(), DriverError> {
        let Work::Replay(replay) = &mut self.work else { return Ok(()) };
        replay.take_login_output(wire_out);
        if self.transport.is_plain() {
            replay.fill(wire_out, now_ns, budget, stats);
            return Ok(());
        }
        replay.fill(&mut self.plain_out, now_ns, budget, stats);
        let encoded = self.transport.encode(&self.plain_out, wire_out);
        self.plain_out.clear();
        encoded.map_err(|e| self.transport_error(e))
    }

    /// An idle connection's login bytes (wire bytes: the login has its own
    /// transport until it is done), or its ping through the transport,
    /// awaited at the sequence id the transport numbers its answer with.
    fn fill_idle(&mut self, wire_out: &mut Vec<u8>) -> Result<(), DriverError> {
        let Work::Idle(idle) = &mut self.work else { return Ok(()) };
        idle.take_login_output(wire_out);
        let plain = self.transport.is_plain();
        if !idle.fill_packets(if plain { &mut *wire_out } else { &mut self.plain_out }) {
            return Ok(());
        }
        if !plain {
            let encoded = self.transport.encode(&self.plain_out, wire_out);
            self.plain_out.clear();
            encoded.map_err(|e| self.transport_error(e))?;
        }
        if let (Some(seq), Work::Idle(idle)) = (self.transport.answer_seq(), &mut self.work) {
            idle.ping_awaited_at(seq);
        }
        Ok(())
    }

    /// A task's call, if one is to go out: through the transport, then
    /// awaited at the sequence id its answer will carry (compression
    /// numbers it after its own packets).
    fn fill_call(&mut self, wire_out: &mut Vec<u8>) -> Result<(), DriverError> {
        let Work::Calls(calls) = &mut self.work else { return Ok(()) };
        let plain = self.transport.is_plain();
        let out = if plain { &mut *wire_out } else { &mut self.plain_out };
        let start = out.len();
        let Some(expect) = calls.fill(out) else { return Ok(()) };
        let answer_seq = packets_after(out.get(start..).unwrap_or_default());
        if !plain {
            let encoded = self.transport.encode(&self.plain_out, wire_out);
            self.plain_out.clear();
            encoded.map_err(|e| self.transport_error(e))?;
        }
        let answer_seq = self.transport.answer_seq().unwrap_or(answer_seq);
        if let Work::Calls(calls) = &mut self.work {
            calls.sent(expect, answer_seq);
        }
        Ok(())
    }

    /// Appends COM_QUIT, in wire form, to `wire_out`: a connection whose
    /// work is done says goodbye before it closes, as libmysqlclient's
    /// `mysql_close` does, so the server does not count it as aborted.
    pub(crate) fn write_quit(&mut self, wire_out: &mut Vec<u8>) -> Result<(), DriverError> {
        if self.transport.is_plain() {
            command::encode_quit(wire_out);
            return Ok(());
        }
        command::encode_quit(&mut self.plain_out);
        let encoded = self.transport.encode(&self.plain_out, wire_out);
        self.plain_out.clear();
        encoded.map_err(|e| self.transport_error(e))
    }

    /// Hands the work the responses in `wire_in`, the bytes received and
    /// not yet consumed. Returns how many of them are consumed; the rest
    /// (a partial packet) must be passed again with what comes next.
    #[inline(always)]
    pub(crate) fn on_input(
        &mut self,
        wire_in: &[u8],
        now_ns: u64,
        stats: &mut LoopStats,
        ignore: &IgnoreErrors,
    ) -> Result<usize, DriverError> {
        if self.transport.is_plain() {
            return self.walk(wire_in, now_ns, stats, ignore);
        }
        let decoded = self.transport.decode(wire_in, &mut self.plain_in).map_err(|e| self.transport_error(e))?;
        crate::client::tolerance::record_seq_jumps(self.transport.take_seq_jumps());
        let plain_in = std::mem::take(&mut self.plain_in);
        let walked = self.walk(&plain_in, now_ns, stats, ignore);
        self.plain_in = plain_in;
        self.plain_in.drain(..walked?);
        Ok(decoded)
    }

    /// Hands the packet stream to the pipeline or the call awaiting it.
    #[inline(always)]
    fn walk(
        &mut self,
        input: &[u8],
        now_ns: u64,
        stats: &mut LoopStats,
        ignore: &IgnoreErrors,
    ) -> Result<usize, DriverError> {
        match &mut self.work {
            Work::Events(pipeline) => {
                let walked = pipeline.on_input(input, now_ns, stats, ignore);
                walked.map_err(|e| self.pipeline_error(e))
            }
            Work::Calls(calls) => {
                let walked = calls.on_input(input);
                walked.map_err(|source| DriverError::Call { endpoint: self.redial.options.endpoint.clone(), source })
            }
            Work::Idle(idle) => match idle.on_input(input) {
                Ok(IdleInput::Used(used)) => Ok(used),
                Ok(IdleInput::LoggedIn(logged_in)) => self.logged_in(*logged_in, input.len(), now_ns, stats, ignore),
                Err(trouble) => Err(DriverError::Idle(Box::new(trouble))),
            },
            Work::Replay(replay) => match replay.on_input(input, now_ns, stats) {
                Ok(ReplayInput::Used(used)) => Ok(used),
                Ok(ReplayInput::LoggedIn(logged_in)) => self.logged_in(*logged_in, input.len(), now_ns, stats, ignore),
                Err(trouble) => Err(DriverError::Replayed(Box::new(trouble))),
            },
        }
    }

    /// An idle connection's login is done: it goes on with the login's
    /// transport, through which the bytes read past the login (usually
    /// none) pass first.
    #[cold]
    fn logged_in(
        &mut self,
        logged_in: LoggedIn,
        used: usize,
        now_ns: u64,
        stats: &mut LoopStats,
        ignore: &IgnoreErrors,
    ) -> Result<usize, DriverError> {
        let (_, transport, leftover) = logged_in.into_wire_parts();
        self.transport = transport;
        if !leftover.is_empty() || !self.transport.is_plain() {
            self.on_input(&leftover, now_ns, stats, ignore)?;
        }
        Ok(used)
    }

    /// The connection was lost: fatal unless `--mysql-ignore-errors` lists
    /// its code; the backend then opens it again with
    /// [`reopen`](Self::reopen) or [`reopen_blocking`](Self::reopen_blocking),
    /// once it no longer uses the old socket.
    pub(crate) fn lost(&self, lost: Lost, ignore: &IgnoreErrors) -> Result<(), DriverError> {
        if !ignore.ignores(lost.code()) {
            return Err(DriverError::Lost { endpoint: self.endpoint().clone(), lost });
        }
        Ok(())
    }

    /// Opens the lost connection again, from within the loop's runtime,
    /// retrying until it works or `run_over` says the run is over (the
    /// loop's own view: its clock and deadline); the pipeline starts its
    /// event over on it. The new stream and the bytes already read from it,
    /// or none when the run ended first; the attempts are counted in `stats`.
    pub(crate) async fn reopen(
        &mut self,
        run_over: impl Fn() -> bool,
        stats: &RefCell<LoopStats>,
    ) -> Option<(Stream, BytesMut)> {
        let Redialled { opened, failed_attempts } = self.redial.reopen(run_over).await;
        count_attempts(opened.is_some(), failed_attempts, &mut stats.borrow_mut());
        let (conn, statement_ids) = opened?;
        let (stream, leftover, login, transport) = conn.into_parts();
        self.restart(login.capabilities, transport, &statement_ids);
        Some((stream, leftover))
    }

    /// [`reopen`](Self::reopen) for a loop without a runtime: blocks the
    /// loop's thread, and so its other connections, until the connection
    /// is back or the run is over (see [`Redial::reopen_blocking`]).
    pub(crate) fn reopen_blocking(
        &mut self,
        run_over: impl Fn() -> bool,
        stats: &mut LoopStats,
    ) -> io::Result<Option<(StdSocket, BytesMut)>> {
        let Redialled { opened, failed_attempts } = self.redial.reopen_blocking(run_over)?;
        count_attempts(opened.is_some(), failed_attempts, stats);
        let Some(reopened) = opened else { return Ok(None) };
        let Reopened { socket, leftover, capabilities, transport, statement_ids } = reopened;
        self.restart(capabilities, transport, &statement_ids);
        Ok(Some((socket, leftover)))
    }

    /// The read and write timeouts the connection was opened with.
    pub(crate) fn wait_limits(&self) -> WaitLimits {
        let options = &self.redial.options;
        WaitLimits { read: options.read_timeout, write: options.write_timeout }
    }

    /// On a connection opened again: its new transport; the commands in
    /// flight are gone, and so are their bytes.
    fn restart(&mut self, capabilities: Capabilities, transport: Transport, statement_ids: &[u32]) {
        self.transport = transport;
        self.plain_in.clear();
        self.plain_out.clear();
        match &mut self.work {
            Work::Events(pipeline) => pipeline.reconnected(capabilities, statement_ids),
            Work::Calls(calls) => {
                calls.abandon();
                calls.reconnected(capabilities);
            }
            Work::Idle(_) | Work::Replay(_) => {}
        }
    }

    pub(crate) fn io_error(&self, source: io::Error) -> DriverError {
        DriverError::Io { endpoint: self.endpoint().clone(), source }
    }

    /// A server error names the statement's SQL; the rest is the pipeline's.
    fn pipeline_error(&self, source: PipelineError) -> DriverError {
        let endpoint = self.endpoint().clone();
        let PipelineError::Server(refused) = source else {
            return DriverError::EventPipeline { endpoint, source };
        };
        let RefusedCommand { error, sql, format } = *refused;
        let sql = match sql {
            CommandSql::Statement(stmt) => self.redial.statements.get(stmt).map_or_else(String::new, |s| s.sql.clone()),
            CommandSql::Text(text) => String::from_utf8_lossy(text).into_owned(),
        };
        let prepared = format == RowFormat::Binary;
        let test = match &self.work {
            Work::Events(pipeline) => pipeline.test(),
            Work::Calls(_) => "a script",
            Work::Idle(_) => "an idle connection",
            Work::Replay(_) => "a replay",
        };
        DriverError::Statement(Box::new(FailedStatement { endpoint, test, prepared, sql, error }))
    }

    fn transport_error(&self, source: TransportError) -> DriverError {
        DriverError::Transport { endpoint: self.endpoint().clone(), source }
    }
}

/// The sequence id after the packets of `command` (whole packets from
/// sequence id 0): where its answer starts.
fn packets_after(command: &[u8]) -> u8 {
    let mut at = 0;
    let mut next = 0u8;
    while let Some(header) = command.get(at..at + 4) {
        let len = usize::from(header[0]) | usize::from(header[1]) << 8 | usize::from(header[2]) << 16;
        next = header[3].wrapping_add(1);
        at += 4 + len;
    }
    next
}

/// A connection a task opened, before its loop takes it.
pub(crate) struct OpenedCalls {
    pub(crate) socket: StdSocket,
    pub(crate) leftover: BytesMut,
    pub(crate) calls: CallExchange,
    pub(crate) transport: Transport,
}

/// sysbench's `reconnects` counts a lost connection once it is open again;
/// the attempts that failed on the way are wirebench's own count.
fn count_attempts(reconnected: bool, failed_attempts: u64, stats: &mut LoopStats) {
    if reconnected {
        stats.record_reconnect();
    }
    stats.record_failed_reconnects(failed_attempts);
}

#[cfg(test)]
mod tests {
    use wirebench_protocol::command::{ExecuteTemplate, ParamSlot};
    use wirebench_protocol::compress::{encode_chunk, CompressedStream, Deflater, Inflater};
    use wirebench_protocol::response::{ErrPacket, OkPacket};

    use super::*;
    use crate::client::ConnectOptions;
    use crate::driver::testing::SelectOne;
    use crate::driver::RunControl;
    use crate::rand::{RandConfig, RandParams, Rng};
    use crate::workload::{CommandSink, Script, StatementSpec, Step, WorkloadError};

    const CAPS: Capabilities = Capabilities::PROTOCOL_41.union(Capabilities::DEPRECATE_EOF);
    const SELECT_1: &[u8] = b"\x09\x00\x00\x00\x03SELECT 1";

    fn conn_io(transport: Transport) -> ConnIo {
        let rng = Rng::for_thread(1, 0, RandParams::new(&RandConfig::default()).unwrap());
        let (socket, _) = std::os::unix::net::UnixStream::pair().unwrap();
        let endpoint = Endpoint::unix("fake");
        let plan = ConnPlan {
            endpoint: endpoint.clone(),
            socket: StdSocket::Unix(socket),
            leftover: BytesMut::new(),
            pipeline: EventPipeline::new(0, Box::new(SelectOne), rng, Vec::new(), CAPS, 1),
            transport,
            redial: Redial {
                options: ConnectOptions::new(endpoint, "u", "p"),
                statements: Arc::new(Vec::new()),
                prepare: false,
                init: &[],
            },
        };
        ConnIo::from_plan(plan).0
    }

    /// A connection over `transport` that has written its first command
    /// (SELECT 1) to `wire`, and what its answers are counted against.
    struct FirstCommandSent {
        io: ConnIo,
        budget: Budget,
        stats: LoopStats,
        ignore: IgnoreErrors,
        wire: Vec<u8>,
    }

    fn first_command_sent(transport: Transport) -> FirstCommandSent {
        let mut io = conn_io(transport);
        let mut budget = Budget::new(RunControl::new(None, 1), None);
        let mut wire = Vec::new();
        io.fill(&mut wire, 0, &mut budget, &mut LoopStats::new(1)).unwrap();
        FirstCommandSent { io, budget, stats: LoopStats::new(1), ignore: IgnoreErrors::default(), wire }
    }

    fn ok_packet() -> Vec<u8> {
        let mut ok = Vec::new();
        OkPacket::default().encode(0x00, CAPS, 1, &mut ok);
        ok
    }

    /// A plain connection's commands and answers are the wire bytes: the
    /// pipeline writes and walks the backend's buffers, no copy between.
    #[test]
    fn plain_bytes_pass_through_untouched() {
        let FirstCommandSent { mut io, mut stats, ignore, wire, .. } = first_command_sent(Transport::plain());
        assert_eq!(wire, SELECT_1);
        let ok = ok_packet();
        assert_eq!(io.on_input(&ok[..ok.len() - 1], 1, &mut stats, &ignore).unwrap(), 0, "a partial packet waits");
        assert_eq!(io.on_input(&ok, 1, &mut stats, &ignore).unwrap(), ok.len());
        assert_eq!(stats.pending().counters.events, 1);
        assert_eq!((io.plain_in.capacity(), io.plain_out.capacity()), (0, 0), "the second buffers are never used");
    }

    /// With compression, commands are encoded on their way out and answers
    /// decoded on their way in; the wire bytes consumed are reported.
    #[test]
    fn compressed_bytes_pass_through_the_transport() {
        let FirstCommandSent { mut io, mut stats, ignore, wire, .. } = first_command_sent(Transport::compressed());
        let mut commands = Vec::new();
        let used = CompressedStream::new().decode(&wire, &mut commands, &mut Inflater::new()).unwrap();
        assert_eq!((used, &commands[..]), (wire.len(), SELECT_1));
        let mut answer = Vec::new();
        encode_chunk(&ok_packet(), 1, &mut answer, &mut Deflater::new());
        assert_eq!(io.on_input(&answer, 1, &mut stats, &ignore).unwrap(), answer.len());
        assert_eq!(stats.pending().counters.events, 1);
        assert!(io.plain_in.is_empty() && io.plain_out.is_empty());
    }

    /// A connection opened again drops what the old one left half-decoded,
    /// and takes the new transport.
    #[test]
    fn a_restart_forgets_the_old_connections_bytes() {
        let FirstCommandSent { mut io, mut budget, mut stats, ignore, mut wire } =
            first_command_sent(Transport::compressed());
        let ok = ok_packet();
        let mut answer = Vec::new();
        encode_chunk(&ok[..ok.len() - 1], 1, &mut answer, &mut Deflater::new());
        assert_eq!(io.on_input(&answer, 1, &mut stats, &ignore).unwrap(), answer.len());
        assert_eq!((io.plain_in.len(), io.awaits_answers()), (ok.len() - 1, true));
        io.restart(CAPS, Transport::plain(), &[]);
        assert_eq!((io.plain_in.len(), io.awaits_answers()), (0, false));
        wire.clear();
        io.fill(&mut wire, 2, &mut budget, &mut stats).unwrap();
        assert_eq!(wire, SELECT_1, "the event starts over, on a plain transport");
    }

    /// COM_QUIT goes out as its five bytes, or through the transport.
    #[test]
    fn write_quit_is_com_quit_through_the_transport() {
        let mut wire = Vec::new();
        conn_io(Transport::plain()).write_quit(&mut wire).unwrap();
        assert_eq!(wire, [0x01, 0x00, 0x00, 0x00, 0x01]);
        let mut io = conn_io(Transport::compressed());
        wire.clear();
        io.write_quit(&mut wire).unwrap();
        let mut commands = Vec::new();
        CompressedStream::new().decode(&wire, &mut commands, &mut Inflater::new()).unwrap();
        assert_eq!(commands, [0x01, 0x00, 0x00, 0x00, 0x01]);
        assert!(io.plain_out.is_empty());
    }

    /// Executes statement 0 (an ERR answers it below).
    struct ExecuteFirst;

    impl Script for ExecuteFirst {
        fn next(&mut self, _: &mut Rng, sink: &mut CommandSink<'_>) -> Result<Step, WorkloadError> {
            sink.execute(0, |_| Ok(()))?;
            Ok(Step::Last)
        }
        fn restart_event(&mut self) {}
    }

    fn missing_table() -> Vec<u8> {
        let mut err = Vec::new();
        let message = b"Table 'sbtest.sbtest1' doesn't exist";
        ErrPacket { code: 1146, sql_state: Some(*b"42S02"), message }.encode(1, &mut err);
        err
    }

    /// A fatal server error names the statement's SQL as sysbench does
    /// (`check_error` in drv_mysql.c), then the test, the server and what
    /// to do; prepared or sent as text.
    #[test]
    fn a_fatal_server_error_names_the_statements_sql() {
        let sql = "SELECT c FROM sbtest1 WHERE id=?";
        let mut io = conn_io(Transport::plain());
        let rng = Rng::for_thread(1, 0, RandParams::new(&RandConfig::default()).unwrap());
        let template = ExecuteTemplate::new(7, &[ParamSlot::Int32]).unwrap();
        io.work = Work::Events(
            EventPipeline::new(0, Box::new(ExecuteFirst), rng, vec![template], CAPS, 1).running("oltp_point_select"),
        );
        Arc::make_mut(&mut io.redial).statements =
            Arc::new(vec![StatementSpec { sql: sql.to_owned(), slots: vec![ParamSlot::Int32] }]);
        let mut budget = Budget::new(RunControl::new(None, 1), None);
        let mut stats = LoopStats::new(1);
        io.fill(&mut Vec::new(), 0, &mut budget, &mut stats).unwrap();
        let error = io.on_input(&missing_table(), 1, &mut stats, &IgnoreErrors::default()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "mysql_stmt_execute() returned error 1146 (Table 'sbtest.sbtest1' doesn't exist) for query \
             'SELECT c FROM sbtest1 WHERE id=?', in an event of oltp_point_select on unix:fake (SQLSTATE 42S02); \
             create the tables with the prepare command (same --tables and --mysql-db) first"
        );
        let mut io = conn_io(Transport::plain());
        io.fill(&mut Vec::new(), 0, &mut budget, &mut stats).unwrap();
        let mut err = Vec::new();
        ErrPacket { code: 1064, sql_state: Some(*b"42000"), message: b"syntax" }.encode(1, &mut err);
        let error = io.on_input(&err, 1, &mut stats, &IgnoreErrors::default()).unwrap_err().to_string();
        assert!(error.starts_with("mysql_drv_query() returned error 1064 (syntax) for query 'SELECT 1', "), "{error}");
        assert!(error.ends_with("list 1064 in --mysql-ignore-errors to count it as an ignored error and go on"));
        // The server's text, made safe to print: no escape sequence reaches
        // the terminal, and a long message is cut.
        let mut io = conn_io(Transport::plain());
        io.fill(&mut Vec::new(), 0, &mut budget, &mut stats).unwrap();
        let hostile = [&b"\x1b[2J\x1b]0;owned\x07line\nbreak"[..], &[b'x'; 4096][..]].concat();
        let mut err = Vec::new();
        ErrPacket { code: 1064, sql_state: Some(*b"4\x1b[0m"), message: &hostile }.encode(1, &mut err);
        let error = io.on_input(&err, 1, &mut stats, &IgnoreErrors::default()).unwrap_err().to_string();
        assert!(!error.contains('\x1b') && !error.contains('\n') && !error.contains('\x07'), "{error}");
        assert!(error.contains("(\\u{1b}[2J\\u{1b}]0;owned\\u{7}line\\nbreak"), "{error}");
        assert!(error.contains("[... cut: ") && error.len() < 1024, "{error}");
    }

    /// A lost connection is fatal unless its code is ignored; a timeout is
    /// lost as libmysqlclient reports it (2013 reading, 2006 writing).
    #[test]
    fn a_lost_connection_is_fatal_unless_ignored() {
        let io = conn_io(Transport::plain());
        let error = io.lost(Lost::Closed, &IgnoreErrors::List(vec![2006])).unwrap_err();
        assert!(matches!(error, DriverError::Lost { lost: Lost::Closed, .. }), "{error}");
        assert!(error.to_string().contains("list 2013 in --mysql-ignore-errors"), "{error}");
        io.lost(Lost::Closed, &IgnoreErrors::List(vec![2013])).unwrap();
        io.lost(Lost::Write(io::ErrorKind::BrokenPipe.into()), &IgnoreErrors::All).unwrap();
        let read = std::time::Duration::from_secs(3);
        io.lost(Lost::ReadTimeout(read), &IgnoreErrors::List(vec![2013])).unwrap();
        let error = io.lost(Lost::ReadTimeout(read), &IgnoreErrors::List(vec![2006])).unwrap_err().to_string();
        assert!(error.contains("client error 2013: no answer for 3s, --mysql-read-timeout"), "{error}");
        let error = io.lost(Lost::WriteTimeout(read), &IgnoreErrors::List(vec![2013])).unwrap_err().to_string();
        assert!(error.contains("client error 2006") && error.contains("list 2006 in"), "{error}");
    }

    /// Only a reconnect that worked counts as one; failed attempts apart.
    #[test]
    fn reconnects_count_only_when_they_work() {
        let mut stats = LoopStats::new(1);
        count_attempts(false, 3, &mut stats);
        count_attempts(true, 2, &mut stats);
        let counters = stats.pending().counters;
        assert_eq!((counters.reconnects, counters.failed_reconnects), (1, 5));
    }
}
