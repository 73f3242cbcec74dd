//! The io_uring backend: one ring per loop and no runtime. Each connection
//! keeps one receive outstanding while it has commands in flight and at
//! most one send; completions are handled in batches and everything they
//! lead to (the next sends and receives of every connection touched) goes to
//! the kernel in one `io_uring_enter`, which also waits for the next batch.
//!
//! Per query, only the send is submitted: each connection's receive is
//! armed once and stays armed (multishot, into the loop's [`RecvPool`];
//! one-shot receives that wait for data first on kernels before 6.1), and
//! sockets are registered files. At one query in flight over loopback TCP
//! what is left is the kernel's: the send, which also runs the server's
//! receive in our softirq, is three quarters of the client's CPU, and the
//! receive's copy most of the rest (docs/benchmarking.md).
//!
//! On this kind of machine a sleep and wake-up costs more than the query's
//! own work, so the loop waits for several completions per wake-up when
//! several connections are busy (`min_wait_usec` bounds the delay), and the
//! ring defers its task work to that wait (`DEFER_TASKRUN`): completions
//! arriving meanwhile do not wake the thread one by one.
//!
//! A connection's receive and send stamp their waits ([`Waits`]) with the
//! time the loop last read; the loop looks at them on its wake-ups (at
//! least every [`PUBLISH_TICK`](crate::driver::PUBLISH_TICK)) and treats a wait past its timeout as a
//! lost connection, and every connection still waiting once the run is cut
//! as stalled: its operations are cancelled, as for any other ending.
//!
//! Files:
//! - `ring.rs`: whether the kernel can run the loop, the ring's set-up,
//!   and what an entry's `user_data` says.
//! - `recv_pool.rs`: the provided buffers of multishot receives (shared
//!   with the kernel); a connection's unread bytes are in the driver's
//!   receive buffer.
//! - `conn.rs`: a connection on the ring; `lifecycle.rs`: how its life
//!   ends (COM_QUIT, failure, loss, timeout, the run's cut) or starts again.
//! - `submit.rs`: receives, sends and cancellations queued for the kernel.
//! - `wait.rs`: how the loop waits for completions; `batch_gate.rs`:
//!   whether a sleep waits for a batch of answers.
//! - `tasks.rs`: what the loop's tasks (a script's states) ask of their
//!   connections; the driver's task queue resumes them.

mod batch_gate;
mod conn;
mod lifecycle;
mod recv_pool;
mod ring;
mod submit;
mod tasks;
mod wait;

pub use ring::{probe, UringUnavailable};

use std::io;
use std::time::Duration;

use io_uring::{cqueue, IoUring};

use crate::driver::connections::conn_io::AfterSend;
use crate::driver::connections::waits::WaitCheck;
use crate::driver::tasks::fiber_task::TaskBody;
use crate::driver::tasks::task_queue::TaskQueue;
use crate::driver::wait_plan::spin::Spinner;
use crate::driver::{Budget, ConnPlan, DriverError, LoopContext, LoopOp, Lost, WaitMode};
use crate::stats::LoopStats;
use batch_gate::BatchGate;
use conn::{Conn, RingConnState};
use recv_pool::RecvPool;
use ring::{build_ring, decode_user_data, is_transient, Delivery, Op, RECV_POLL_FIRST};
use tasks::register_sockets;

/// One loop's ring and connections.
struct UringLoop<'c> {
    index: usize,
    context: &'c LoopContext,
    ring: IoUring,
    /// Multishot receives' buffers, where the kernel has them (6.1 and
    /// later here: the deferred-task-work ring); else one-shot receives
    /// into each connection's own buffer. Dropped after the ring.
    pool: Option<RecvPool>,
    /// Whether a wait can hold out for several completions for a bounded
    /// time and then settle for one (IORING_FEAT_MIN_TIMEOUT, Linux 6.12).
    min_timeout: bool,
    /// What each receive's `ioprio` carries: [`RECV_POLL_FIRST`] where the
    /// kernel knows it (older ones refuse unknown bits).
    recv_flags: u16,
    conns: Vec<Conn>,
    budget: Budget,
    stats: LoopStats,
    /// Completions copied off the queue (user data, result, flags),
    /// reused on every wake-up.
    completions: Vec<(u64, i32, u32)>,
    /// Receives and sends submitted (or queued) and not yet completed (a
    /// multishot receive until its last completion).
    ops: usize,
    /// Receives among them.
    recvs: usize,
    /// Receives armed so far: once per connection with multishot
    /// receives (unless the pool ran dry), once per completion without.
    recv_arms: u64,
    /// Entries queued since the last `io_uring_enter` that usually complete
    /// at once (sends, cancellations): a wait counts them too.
    quick_queued: usize,
    /// Whether sleeps wait for a batch of answers ([`BatchGate`]).
    batch_gate: BatchGate,
    /// Connections not yet retired.
    live: usize,
    /// `--rate`: connections with nothing in flight, waiting for an
    /// arrival; `spare` is the list being served, swapped with it.
    waiting: Vec<usize>,
    spare: Vec<usize>,
    first_error: Option<DriverError>,
    /// The latest time the loop read (ns since the run's start): what
    /// waits are stamped with, so that stamping reads no clock.
    now_ns: u64,
    wait_check: WaitCheck,
    /// Time spent spinning for completions.
    spun: Duration,
    spinner: Spinner,
    /// The tasks this loop runs (a script's states): see [`tasks`].
    tasks: TaskQueue,
    /// How many connections the loop's registered-file table holds.
    slots: usize,
    /// The run's clock and deadline (the loop's set-up ones until a start
    /// gate opens).
    clock: crate::driver::Clock,
    deadline_ns: Option<u64>,
    /// Where a script run's tasks wait for its start, until they have.
    arrival: Option<crate::driver::tasks::start_gate::ArrivalGuard>,
    /// `--idle-connections`: this loop's share, served at each turn.
    idle: Option<crate::driver::IdleSet>,
}

pub fn run_uring_loop(
    index: usize,
    connections: Vec<ConnPlan>,
    tasks: Vec<TaskBody>,
    context: &LoopContext,
    wait: WaitMode,
    arrival: Option<crate::driver::tasks::start_gate::ArrivalGuard>,
) -> Result<(), DriverError> {
    let mut ring_loop = UringLoop::new(index, connections, tasks.len(), context, wait)?;
    ring_loop.arrival = arrival;
    if let Err(source) = ring_loop.tasks.add(tasks, ring_loop.clock) {
        return Err(DriverError::Loop { index, op: LoopOp::StartTask, source });
    }
    let result = ring_loop.run();
    context.board.publish(index, &mut ring_loop.stats);
    if wait.spins() {
        context.usage.add_spinning(ring_loop.spun);
    }
    result
}

impl<'c> UringLoop<'c> {
    fn new(
        index: usize,
        connections: Vec<ConnPlan>,
        tasks: usize,
        context: &'c LoopContext,
        wait: WaitMode,
    ) -> Result<Self, DriverError> {
        // Each connection has at most a receive, a send and their two
        // cancellations queued between two submissions; the completion
        // queue is twice that, so it never overflows. A task's connections
        // come and go; two each is the usual most.
        let expected = connections.len() + tasks * 2;
        let entries = (expected * 4).next_power_of_two().clamp(8, 32 * 1024);
        let (ring, delivery) =
            build_ring(entries as u32).map_err(|source| DriverError::Loop { index, op: LoopOp::CreateRing, source })?;
        let min_timeout = ring.params().is_feature_min_timeout();
        let mut conns = Vec::with_capacity(connections.len());
        for (slot, plan) in (0u32..).zip(connections) {
            conns.push(Conn::new(plan, slot)?);
        }
        let slots = register_sockets(&ring, &conns, tasks).map_err(|source| DriverError::Loop {
            index,
            op: LoopOp::RegisterSockets,
            source,
        })?;
        let pool = match delivery {
            Delivery::Deferred => {
                Some(RecvPool::register(&ring, RecvPool::size_for(expected)).map_err(|source| DriverError::Loop {
                    index,
                    op: LoopOp::RegisterBuffers,
                    source,
                })?)
            }
            Delivery::Cooperative | Delivery::Plain => None,
        };
        let completions = Vec::with_capacity(ring.params().cq_entries() as usize);
        let conns_len = conns.len();
        let idle = context.idle_set(index)?;
        Ok(UringLoop {
            index,
            context,
            ring,
            pool,
            min_timeout,
            recv_flags: if delivery == Delivery::Plain { 0 } else { RECV_POLL_FIRST },
            live: conns.len(),
            conns,
            budget: Budget::for_loop(context.control.clone(), context.deadline_ns, index),
            stats: context.board.loop_stats(index),
            completions,
            ops: 0,
            recvs: 0,
            recv_arms: 0,
            quick_queued: 0,
            batch_gate: BatchGate::default(),
            waiting: Vec::with_capacity(conns_len),
            spare: Vec::with_capacity(conns_len),
            first_error: None,
            now_ns: context.clock.now_ns(),
            wait_check: WaitCheck::default(),
            spun: Duration::ZERO,
            spinner: Spinner::new(wait),
            tasks: TaskQueue::default(),
            slots,
            clock: context.clock,
            deadline_ns: context.deadline_ns,
            arrival: None,
            idle,
        })
    }

    fn run(&mut self) -> Result<(), DriverError> {
        for i in 0..self.conns.len() {
            self.advance(i)?;
        }
        self.run_tasks()?;
        while self.live > 0 || self.tasks.live() > 0 {
            self.wait()?;
            let mut completions = std::mem::take(&mut self.completions);
            completions.extend(self.ring.completion().map(|c| (c.user_data(), c.result(), c.flags())));
            for &(data, result, flags) in &completions {
                let (conn, op) = decode_user_data(data);
                match op {
                    Op::Recv => self.on_recv(conn, result, flags)?,
                    Op::Send => self.on_send(conn, result)?,
                    Op::Cancel => {}
                }
            }
            completions.clear();
            self.completions = completions;
            if let Some(pool) = &self.pool {
                pool.publish();
            }
            self.serve_arrivals()?;
            self.wake_tasks();
            self.run_tasks()?;
            self.context.board.publish_if_requested(self.index, &mut self.stats);
            self.now_ns = self.clock.now_ns();
            if let Some(idle) = &mut self.idle {
                idle.serve();
            }
            if self.wait_check.due(self.now_ns) {
                self.check_waits(self.now_ns)?;
            }
            // Events in progress, for --forced-shutdown's report: two relaxed
            // stores per wake-up.
            self.budget.publish(self.now_ns);
        }
        if let Some(failure) = self.tasks.take_failure() {
            return Err(DriverError::Script(failure));
        }
        self.first_error.take().map_or(Ok(()), Err)
    }

    /// Hands the session what it can send and keeps a receive outstanding
    /// while it waits for answers.
    fn advance(&mut self, i: usize) -> Result<(), DriverError> {
        let Some(conn) = self.conns.get_mut(i) else { return Ok(()) };
        if conn.state != RingConnState::Running {
            return Ok(());
        }
        let now = self.clock.now_ns();
        self.now_ns = now;
        if let Err(error) = conn.fill(now, &mut self.budget) {
            return self.fail(i, error);
        }
        if !conn.send_pending && !conn.filling.is_empty() {
            std::mem::swap(&mut conn.filling, &mut conn.sending);
            conn.sent = 0;
            self.push_send(i)?;
        }
        let Some(conn) = self.conns.get_mut(i) else { return Ok(()) };
        match conn.io.after_send() {
            AfterSend::Quit => return self.start_quit(i),
            AfterSend::Arrival => self.waiting.push(i),
            AfterSend::CallAnswered => self.answer_call(i),
            AfterSend::Answers if !conn.recv_pending => self.push_recv(i)?,
            // A multishot receive stays armed: answers are awaited from now.
            AfterSend::Answers => conn.waits.start_read_unless_reading(self.now_ns),
        }
        Ok(())
    }

    /// `--rate`: once the next arrival is due (or no event can start any
    /// more), lets the waiting connections look again. Busy connections
    /// take due arrivals themselves when they finish an event.
    fn serve_arrivals(&mut self) -> Result<(), DriverError> {
        if self.waiting.is_empty() {
            return Ok(());
        }
        let now = self.clock.now_ns();
        if self.budget.wake_at(now).is_some_and(|at| at > now) {
            return Ok(());
        }
        std::mem::swap(&mut self.waiting, &mut self.spare);
        let mut serving = std::mem::take(&mut self.spare);
        for &i in &serving {
            self.advance(i)?;
        }
        serving.clear();
        self.spare = serving;
        Ok(())
    }

    fn on_recv(&mut self, i: usize, result: i32, flags: u32) -> Result<(), DriverError> {
        let Some(conn) = self.conns.get_mut(i) else { return Ok(()) };
        if !cqueue::more(flags) {
            conn.recv_pending = false;
            self.ops -= 1;
            self.recvs -= 1;
        }
        conn.waits.end_read();
        let provided = cqueue::buffer_select(flags);
        if let (Some(bid), Some(pool)) = (provided, self.pool.as_mut()) {
            if conn.state == RingConnState::Running {
                conn.recv.append(pool.filled(bid, usize::try_from(result).unwrap_or(0)));
            }
            pool.put(bid);
        }
        if conn.state != RingConnState::Running {
            return self.settle(i);
        }
        if result < 0 {
            let error = io::Error::from_raw_os_error(-result);
            // ENOBUFS: the pool ran dry and ended the multishot receive;
            // buffers are back by the time it is armed again.
            if is_transient(&error) || error.raw_os_error() == Some(libc::ENOBUFS) {
                return if conn.recv_pending { Ok(()) } else { self.push_recv(i) };
            }
            return self.lose(i, Lost::Read(error));
        }
        if result == 0 {
            return self.lose(i, Lost::Closed);
        }
        if provided.is_none() {
            conn.recv.received(result as usize);
        }
        let now = self.clock.now_ns();
        self.now_ns = now;
        if let Err(error) = conn.on_input(now, &mut self.stats, &self.context.ignore) {
            return self.fail(i, error);
        }
        self.advance(i)
    }

    fn on_send(&mut self, i: usize, result: i32) -> Result<(), DriverError> {
        let Some(conn) = self.conns.get_mut(i) else { return Ok(()) };
        conn.send_pending = false;
        conn.waits.end_write();
        self.ops -= 1;
        let quitting = conn.state == RingConnState::Quitting;
        if conn.state != RingConnState::Running && !quitting {
            return self.settle(i);
        }
        if result < 0 {
            let error = io::Error::from_raw_os_error(-result);
            if is_transient(&error) {
                return self.push_send(i);
            }
            return if quitting { self.end_after_quit(i) } else { self.lose(i, Lost::Write(error)) };
        }
        if result == 0 {
            return if quitting {
                self.end_after_quit(i)
            } else {
                self.lose(i, Lost::Write(io::ErrorKind::WriteZero.into()))
            };
        }
        conn.sent += result as usize;
        if conn.sent < conn.sending.len() {
            return self.push_send(i);
        }
        conn.sending.clear();
        conn.sent = 0;
        if !conn.filling.is_empty() {
            std::mem::swap(&mut conn.filling, &mut conn.sending);
            return self.push_send(i);
        }
        if quitting {
            return self.end_after_quit(i);
        }
        Ok(())
    }

    fn ring_error(&self, op: LoopOp, source: io::Error) -> DriverError {
        DriverError::Loop { index: self.index, op, source }
    }
}

impl Drop for UringLoop<'_> {
    fn drop(&mut self) {
        self.tasks.forget_suspended();
        self.quiesce();
        if self.ops > 0 {
            // The kernel still holds pointers into these buffers: leaking
            // them is the only safe thing left.
            std::mem::forget(std::mem::take(&mut self.conns));
            std::mem::forget(self.pool.take());
        }
    }
}

#[cfg(test)]
mod tests {
    use wirebench_protocol::Capabilities;

    use std::time::Instant;

    use super::recv_pool::POOL_GROUP;
    use super::wait::{BATCH_WAIT_US, MAX_BATCH};
    use super::*;
    use crate::client::Endpoint;
    use crate::driver::connections::recv_buffer::RECV_BUFFER;
    use crate::driver::testing::SelectOne;
    use crate::driver::{Clock, EventPipeline, IgnoreErrors, RunControl, StdSocket};
    use crate::rand::{RandConfig, RandParams, Rng};
    use crate::stats::{Collector, Counters, StatsBoard};
    use crate::transport::Transport;

    /// How the fake server answers each COM_QUERY.
    #[derive(Clone, Copy)]
    enum FakeReply {
        /// An OK packet, written one byte at a time.
        Trickle,
        /// A result set whose one row is larger than the receive buffer.
        Big,
        /// OK packets, then the connection is closed after this many.
        CloseAfter(usize),
        /// An OK packet, 3 ms late: far slower than a brief look.
        Slow,
        /// An OK packet, 20 ms late: a query held in the server.
        Held,
    }

    const CAPS: Capabilities =
        Capabilities(Capabilities::PROTOCOL_41.0 | Capabilities::DEPRECATE_EOF.0 | Capabilities::SECURE_CONNECTION.0);

    fn answer(reply: FakeReply, out: &mut Vec<u8>) {
        use wirebench_protocol::response::{resultset, text_row, ColumnDefinition, OkPacket};
        use wirebench_protocol::{ColumnType, StatusFlags};
        match reply {
            FakeReply::Trickle | FakeReply::CloseAfter(_) | FakeReply::Slow | FakeReply::Held => {
                OkPacket::default().encode(0, CAPS, 1, out);
            }
            FakeReply::Big => {
                let col = ColumnDefinition::new(b"c", ColumnType::VarString);
                let seq = resultset::encode_metadata(&[col], true, StatusFlags::AUTOCOMMIT, CAPS, 1, out);
                let value = vec![b'x'; 3 * RECV_BUFFER];
                let seq = text_row::encode_text_row([Some(&value[..])], seq, out);
                resultset::encode_result_end(StatusFlags::AUTOCOMMIT, 0, CAPS, seq, out);
            }
        }
    }

    /// Answers every command on `stream` until the client hangs up.
    fn fake_server(mut stream: std::os::unix::net::UnixStream, reply: FakeReply) {
        use std::io::{Read, Write};
        let mut header = [0u8; 4];
        let mut answered = 0;
        while stream.read_exact(&mut header).is_ok() {
            let len = usize::from(header[0]) | usize::from(header[1]) << 8 | usize::from(header[2]) << 16;
            let mut body = vec![0; len];
            if stream.read_exact(&mut body).is_err() {
                return;
            }
            if matches!(reply, FakeReply::CloseAfter(n) if answered == n) {
                return;
            }
            let mut out = Vec::new();
            answer(reply, &mut out);
            match reply {
                FakeReply::Slow => std::thread::sleep(Duration::from_millis(3)),
                FakeReply::Held => std::thread::sleep(Duration::from_millis(20)),
                _ => {}
            }
            let written = match reply {
                FakeReply::Trickle => out.chunks(1).try_for_each(|b| stream.write_all(b).and_then(|()| stream.flush())),
                _ => stream.write_all(&out),
            };
            if written.is_err() {
                return;
            }
            answered += 1;
        }
    }

    /// Runs `events` events over `connections` socket pairs, each answered
    /// by a fake server thread.
    fn run_fake(
        reply: FakeReply,
        connections: usize,
        pipeline: usize,
        events: u64,
    ) -> (Result<(), DriverError>, Counters) {
        let (result, counters, _) = run_fake_waiting(reply, connections, pipeline, events, WaitMode::Sleep);
        (result, counters)
    }

    /// [`run_fake`] with the loop waiting as `wait` says; also the time it spun.
    fn run_fake_waiting(
        reply: FakeReply,
        connections: usize,
        pipeline: usize,
        events: u64,
        wait: WaitMode,
    ) -> (Result<(), DriverError>, Counters, Duration) {
        let context = test_context(connections, Some(events));
        let mut collector = Collector::new(context.board.clone());
        let (plans, servers) = fake_servers(connections, pipeline, reply);
        let result = run_uring_loop(0, plans, Vec::new(), &context, wait, None);
        for server in servers {
            server.join().unwrap();
        }
        collector.drain();
        (result, collector.totals().counters, context.usage.spinning())
    }

    /// A loop's context for a test: `connections` connections, `events`
    /// events in all (`None`: no limit).
    fn test_context(connections: usize, events: Option<u64>) -> LoopContext {
        LoopContext {
            board: StatsBoard::new(&[connections]),
            control: RunControl::new(events, 1),
            clock: Clock::start(),
            deadline_ns: None,
            ignore: IgnoreErrors::List(vec![]),
            finished: Default::default(),
            usage: Default::default(),
            idle: None,
        }
    }

    /// Plans for `connections` connections, each answered by a
    /// [`fake_server`] thread replying as `reply` says.
    fn fake_servers(
        connections: usize,
        pipeline: usize,
        reply: FakeReply,
    ) -> (Vec<ConnPlan>, Vec<std::thread::JoinHandle<()>>) {
        socket_pair_plans(connections, pipeline)
            .into_iter()
            .map(|(plan, server)| (plan, std::thread::spawn(move || fake_server(server, reply))))
            .unzip()
    }

    /// Connections over socket pairs: each plan with the server's end.
    fn socket_pair_plans(connections: usize, pipeline: usize) -> Vec<(ConnPlan, std::os::unix::net::UnixStream)> {
        let mut plans = Vec::new();
        for i in 0..connections {
            let (client, server) = std::os::unix::net::UnixStream::pair().unwrap();
            let rng = Rng::for_thread(1, i as u32, RandParams::new(&RandConfig::default()).unwrap());
            let plan = ConnPlan {
                endpoint: Endpoint::unix("fake"),
                socket: StdSocket::Unix(client),
                leftover: bytes::BytesMut::new(),
                pipeline: EventPipeline::new(i, Box::new(SelectOne), rng, Vec::new(), CAPS, pipeline),
                transport: Transport::plain(),
                redial: crate::driver::Redial {
                    options: crate::client::ConnectOptions::new(Endpoint::unix("fake"), "u", "p"),
                    statements: std::sync::Arc::new(Vec::new()),
                    prepare: false,
                    init: &[],
                },
            };
            plans.push((plan, server));
        }
        plans
    }

    /// Fifteen of sixteen connections held in the server (their answers
    /// 20 ms late) and one answered at once: the batches never fill, so
    /// the loop stops waiting for them and the quick connection's answers
    /// are handled as they come. With batching always on, each of them
    /// waited out `BATCH_WAIT_US`: 400 events took at least 400 x 500 µs.
    #[test]
    fn batches_that_never_fill_do_not_hold_back_the_answers_that_come() {
        if !ring::ring_here() {
            return;
        }
        let bound = Duration::from_micros(u64::from(BATCH_WAIT_US)) * 400 / 4;
        let mut tries = Vec::new();
        for _ in 0..3 {
            let context = test_context(16, Some(400));
            let mut collector = Collector::new(context.board.clone());
            let (plans, servers): (Vec<_>, Vec<_>) = socket_pair_plans(16, 1)
                .into_iter()
                .enumerate()
                .map(|(i, (plan, server))| {
                    let reply = if i == 0 { FakeReply::CloseAfter(usize::MAX) } else { FakeReply::Held };
                    (plan, std::thread::spawn(move || fake_server(server, reply)))
                })
                .unzip();
            let start = Instant::now();
            let result = run_uring_loop(0, plans, Vec::new(), &context, WaitMode::Sleep, None);
            let took = start.elapsed();
            for server in servers {
                server.join().unwrap();
            }
            result.unwrap();
            collector.drain();
            assert_eq!(collector.totals().counters.events, 400);
            if took < bound + Duration::from_millis(40) {
                return;
            }
            tries.push(took);
        }
        panic!("400 events took {tries:?}, each more than {bound:?} and the held answers' 40 ms");
    }

    /// A brief look stays brief when the answers are slow (one connection
    /// to a server answering in 3 ms): each wait spins its few microseconds
    /// and sleeps, so 400 waits spin well under a millisecond's worth each
    /// (the bound, 20 µs a wait, leaves room for a loaded machine; a look
    /// that spun through its wait would spin 1.2 s).
    #[test]
    fn a_brief_look_stays_brief_when_answers_are_slow() {
        if !ring::ring_here() {
            return;
        }
        let (result, counters, spun) = run_fake_waiting(FakeReply::Slow, 1, 1, 400, WaitMode::Brief);
        result.unwrap();
        assert_eq!(counters.events, 400);
        assert!(spun < Duration::from_micros(20) * 400, "spun {spun:?}");
    }

    #[test]
    fn responses_arriving_a_byte_at_a_time() {
        if !ring::ring_here() {
            return;
        }
        let (result, counters) = run_fake(FakeReply::Trickle, 3, 4, 200);
        result.unwrap();
        assert_eq!((counters.events, counters.reads, counters.others), (200, 0, 200));
    }

    #[test]
    fn rows_larger_than_the_receive_buffer() {
        if !ring::ring_here() {
            return;
        }
        let (result, counters) = run_fake(FakeReply::Big, 2, 2, 20);
        result.unwrap();
        assert_eq!((counters.events, counters.reads), (20, 20));
    }

    /// An answer larger than the whole pool: the kernel runs out of
    /// buffers before the loop gives them back (ENOBUFS ends the multishot
    /// receive), and the receive is armed again.
    #[test]
    fn answers_larger_than_the_receive_pool() {
        if !ring::ring_here() {
            return;
        }
        let context = test_context(1, Some(20));
        let (plans, servers) = fake_servers(1, 1, FakeReply::Big);
        let mut d = UringLoop::new(0, plans, 0, &context, WaitMode::Sleep).unwrap();
        if d.pool.is_none() {
            return;
        }
        d.ring.submitter().unregister_buf_ring(POOL_GROUP).unwrap();
        d.pool = Some(RecvPool::register(&d.ring, 2).unwrap());
        let mut collector = Collector::new(context.board.clone());
        d.run().unwrap();
        assert!(d.recv_arms > 1, "the pool never ran dry");
        context.board.publish(0, &mut d.stats);
        drop(d);
        servers.into_iter().for_each(|s| s.join().unwrap());
        collector.drain();
        assert_eq!(collector.totals().counters.events, 20);
    }

    /// Where the kernel has multishot receives, each connection's receive
    /// is armed once for the whole run, not once per answer.
    #[test]
    fn a_multishot_receive_is_armed_once_per_connection() {
        if !ring::ring_here() {
            return;
        }
        let context = test_context(3, Some(300));
        let (plans, servers) = fake_servers(3, 1, FakeReply::Trickle);
        let mut d = UringLoop::new(0, plans, 0, &context, WaitMode::Sleep).unwrap();
        d.run().unwrap();
        let (multishot, arms) = (d.pool.is_some(), d.recv_arms);
        drop(d);
        let deferred = IoUring::<io_uring::squeue::Entry, io_uring::cqueue::Entry>::builder()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .build(8)
            .is_ok();
        assert_eq!(multishot, deferred, "multishot receives wherever the ring defers task work (Linux 6.1)");
        servers.into_iter().for_each(|s| s.join().unwrap());
        if multishot {
            assert_eq!(arms, 3);
        } else {
            assert!(arms > 300, "{arms}: one per answer at least");
        }
    }

    #[test]
    fn a_closed_connection_stops_the_loop() {
        if !ring::ring_here() {
            return;
        }
        let (result, counters) = run_fake(FakeReply::CloseAfter(5), 2, 1, 1_000);
        assert!(matches!(result, Err(DriverError::Lost { lost: Lost::Closed, .. })), "{result:?}");
        assert!(counters.events >= 5 && counters.events < 1_000, "{counters:?}");
    }

    #[test]
    fn waits_for_a_batch_but_never_more_than_can_come() {
        if !ring::ring_here() {
            return;
        }
        let context = test_context(0, None);
        let mut d = UringLoop::new(0, Vec::new(), 0, &context, WaitMode::Sleep).unwrap();
        let mut want = |recvs, sends, cancels| {
            (d.recvs, d.ops, d.quick_queued) = (recvs, recvs + sends, sends + cancels);
            d.wanted()
        };
        assert_eq!(want(1, 0, 0), 1);
        assert_eq!(want(16, 0, 0), 8);
        assert_eq!(want(16, 3, 0), 3 + 8, "sends just queued complete at once and count");
        assert_eq!(want(1000, 0, 0), MAX_BATCH);
        assert_eq!(want(0, 2, 0), 2, "only sends in flight");
        assert_eq!(want(0, 1, 1), 1, "a send and its cancellation: wake early rather than late");
        d.batch_gate.after_sleep(true, 8, 1);
        (d.recvs, d.ops, d.quick_queued) = (16, 19, 3);
        assert_eq!(d.wanted(), 3 + 1, "a batch fell short: the next sleeps wake at the first answer");
        (d.recvs, d.ops, d.quick_queued) = (0, 0, 0);
        assert!(d.run().is_ok(), "no connections: nothing to do");
    }

    /// Operations name sockets by their registered slot, so every socket
    /// must be registered, each in its connection's slot (updating a slot
    /// that was never registered fails with ENXIO).
    #[test]
    fn sockets_are_registered_in_their_connections_slots() {
        if !ring::ring_here() {
            return;
        }
        let context = test_context(3, Some(1));
        let (plans, _servers): (Vec<_>, Vec<_>) = socket_pair_plans(3, 1).into_iter().unzip();
        let d = UringLoop::new(0, plans, 0, &context, WaitMode::Sleep).unwrap();
        for (i, conn) in d.conns.iter().enumerate() {
            assert_eq!(conn.slot.0 as usize, i);
            assert_eq!(d.ring.submitter().register_files_update(conn.slot.0, &[conn.raw_fd()]).unwrap(), 1);
        }
        assert!(d.ring.submitter().register_files_update(3, &[d.conns[0].raw_fd()]).is_err(), "no fourth slot");
    }

    #[test]
    fn probe_answers() {
        // Either io_uring works here or the reason says why not, and what to do.
        if let Err(reason) = probe() {
            let reason = reason.to_string();
            assert!(reason.starts_with("--io=uring: ") && reason.ends_with("; use --io=epoll"), "{reason}");
        }
    }
}
