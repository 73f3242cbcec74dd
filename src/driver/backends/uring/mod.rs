//! The io_uring backend: one ring per loop and no runtime. Each connection
//! keeps one receive outstanding while it has commands in flight and at
//! most one send; completions are handled in batches and everything they
//! lead to (the next sends and receives of every connection touched) goes to
//! the kernel in one `io_uring_enter`, which also waits for the next batch.
//! The loop itself (what a completion leads to, its chores, its
//! connections' lives and its tasks) is `driver::event_loop`'s; this
//! backend submits and waits ([`LoopIo`]).
//!
//! Per query, only the send is submitted: each connection's receive is
//! armed once and stays armed (multishot, into the loop's [`RecvPool`];
//! one-shot receives that wait for data first on kernels before 6.1), and
//! sockets are registered files. At one query in flight over loopback TCP
//! what is left is the kernel's: the send and the receive's copy
//! (docs/benchmarking.md#what-a-query-costs-on-the-ring).
//!
//! A sleep and its wake-up cost more than a query's own work on a
//! machine where waking a thread is dear, so the loop waits for several
//! completions per wake-up when several connections are busy
//! (`min_wait_usec` bounds the delay), and the ring defers its task work
//! to that wait (`DEFER_TASKRUN`): completions arriving meanwhile do not
//! wake the thread one by one.
//!
//! Files:
//! - `ring.rs`: whether the kernel can run the loop, the ring's set-up,
//!   and what an entry's `user_data` says.
//! - `recv_pool.rs`: the provided buffers of multishot receives (shared
//!   with the kernel); a connection's unread bytes are in its receive
//!   buffer.
//! - `submit.rs`: receives, sends and cancellations queued for the kernel,
//!   and the completions taken off the queue.
//! - `wait.rs`: how the loop waits for completions; `batch_gate.rs`:
//!   whether a sleep waits for a batch of answers.

mod batch_gate;
mod recv_pool;
pub(crate) mod ring;
mod submit;
mod wait;

pub use ring::{probe, UringUnavailable};

use std::io;
use std::time::Duration;

use io_uring::IoUring;

use crate::driver::connections::idle::LOGINS_IN_FLIGHT;
use crate::driver::event_loop::conn::Conn;
use crate::driver::event_loop::loop_io::{Completion, LoopIo, Op, Submitted, WaitFor};
use crate::driver::event_loop::replay_conns::ReplayConns;
use crate::driver::event_loop::{loop_conns, EventLoop};
use crate::driver::tasks::start_gate::ArrivalGuard;
use crate::driver::wait_plan::spin::Spinner;
use crate::driver::{ConnPlan, DriverError, LoopContext, LoopOp, TaskBody, WaitMode};
use batch_gate::BatchGate;
use recv_pool::RecvPool;
use ring::{build_ring, Delivery, RECV_POLL_FIRST};

/// Registered-file slots a loop keeps per task, for the connections its
/// tasks open (a script usually opens one per state).
const SLOTS_PER_TASK: usize = 16;

/// The most registered files a ring's table holds (the kernel's
/// IORING_MAX_FIXED_FILES).
const MAX_SLOTS: usize = 1 << 20;

/// One loop's ring, what it has in flight, and how it waits.
pub(crate) struct UringIo {
    index: usize,
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
    /// Receives and sends of the active connections submitted (or queued)
    /// and not yet completed (a multishot receive until its last
    /// completion): what a wait may count on.
    ops: usize,
    /// Receives among them.
    recvs: usize,
    /// The idle connections' operations in flight: they answer rarely, so
    /// a wait never counts on them.
    idle_ops: usize,
    /// Receives armed so far: once per connection with multishot
    /// receives (unless the pool ran dry), once per completion without.
    recv_arms: u64,
    /// Entries queued since the last `io_uring_enter` that usually complete
    /// at once (sends, cancellations): a wait counts them too.
    quick_queued: usize,
    /// Whether sleeps wait for a batch of answers ([`BatchGate`]).
    batch_gate: BatchGate,
    /// Time spent spinning for completions.
    spun: Duration,
    spinner: Spinner,
    /// How many connections the registered-file table holds.
    slots: usize,
    /// Completions copied off the queue (user data, result, flags), reused
    /// on every wake-up.
    cqes: Vec<(u64, i32, u32)>,
}

/// Runs a loop over `connections` (a built-in test's) or `tasks` (a
/// script's states) on this thread with an io_uring, until every one is
/// done.
pub fn run_uring_loop(
    index: usize,
    connections: Vec<ConnPlan>,
    tasks: Vec<TaskBody>,
    context: &LoopContext,
    wait: WaitMode,
    arrival: Option<ArrivalGuard>,
) -> Result<(), DriverError> {
    let (conns, idle) = loop_conns(index, connections, context);
    let io = UringIo::new(index, &conns, tasks.len(), idle, wait)?;
    let slots = io.slots;
    let mut event_loop = EventLoop::new(io, index, conns, idle, slots, context);
    let result = event_loop.run(tasks, arrival);
    if wait.spins() {
        context.usage.add_spinning(event_loop.io.spun);
    }
    result
}

/// Replayed connections a loop's ring has room for at once (its
/// registered-file table): a replay's connections come and go.
const REPLAY_SLOTS: usize = 16 * 1024;

/// Runs a loop over a replay (`wirebench replay`) on this thread with an
/// io_uring, until its feed has ended and its connections are done.
pub(crate) fn run_uring_replay_loop(
    index: usize,
    replay: ReplayConns,
    context: &LoopContext,
) -> Result<(), DriverError> {
    let io = UringIo::new(index, &[], REPLAY_SLOTS / SLOTS_PER_TASK, 0, WaitMode::Sleep)?;
    let slots = io.slots;
    let mut event_loop = EventLoop::new(io, index, Vec::new(), 0, slots, context);
    event_loop.run_replay(replay)
}

impl UringIo {
    /// The ring for `conns` (`idle` of them idle, with no socket yet) and
    /// room for `tasks`' connections; their sockets registered.
    fn new(index: usize, conns: &[Conn], tasks: usize, idle: usize, wait: WaitMode) -> Result<Self, DriverError> {
        let active = conns.len() - idle;
        // Each connection has at most a receive, a send and their two
        // cancellations queued between two submissions; the completion
        // queue is twice that, so it never overflows. A task's connections
        // come and go; two each is the usual most. Idle connections log in
        // a few dozen at a time.
        let expected = active + tasks * 2 + idle.min(LOGINS_IN_FLIGHT * 2);
        let entries = (expected * 4).next_power_of_two().clamp(8, 32 * 1024);
        let (ring, delivery) =
            build_ring(entries as u32).map_err(|source| loop_error(index, LoopOp::CreateRing, source))?;
        let min_timeout = ring.params().is_feature_min_timeout();
        let cq_entries = ring.params().cq_entries() as usize;
        let slots = register_sockets(&ring, conns, tasks, idle)
            .map_err(|source| loop_error(index, LoopOp::RegisterSockets, source))?;
        let pool = match delivery {
            Delivery::Deferred => Some(
                RecvPool::register(&ring, RecvPool::size_for(expected))
                    .map_err(|source| loop_error(index, LoopOp::RegisterBuffers, source))?,
            ),
            Delivery::Cooperative | Delivery::Plain => None,
        };
        Ok(UringIo {
            index,
            ring,
            pool,
            min_timeout,
            recv_flags: if delivery == Delivery::Plain { 0 } else { RECV_POLL_FIRST },
            ops: 0,
            recvs: 0,
            idle_ops: 0,
            recv_arms: 0,
            quick_queued: 0,
            batch_gate: BatchGate::default(),
            spun: Duration::ZERO,
            spinner: Spinner::new(wait),
            slots,
            cqes: Vec::with_capacity(cq_entries),
        })
    }

    fn ring_error(&self, op: LoopOp, source: io::Error) -> DriverError {
        loop_error(self.index, op, source)
    }
}

fn loop_error(index: usize, op: LoopOp, source: io::Error) -> DriverError {
    DriverError::Loop { index, op, source }
}

/// Registers the loop's sockets with its ring, blocking (io_uring tries
/// every receive and send without blocking and, when it must, waits for
/// readiness itself; a blocking socket keeps EAGAIN from reaching us). A
/// built-in test's connections are registered as they are; with tasks or
/// idle connections, a table with room for the connections they will
/// open, each in its connection's slot. How many slots the table has.
fn register_sockets(ring: &IoUring, conns: &[Conn], tasks: usize, idle: usize) -> io::Result<usize> {
    for socket in conns.iter().filter_map(Conn::socket) {
        socket.set_nonblocking(false)?;
    }
    let fds: Vec<_> = conns.iter().map(Conn::raw_fd).collect();
    if tasks == 0 && idle == 0 {
        if !fds.is_empty() {
            ring.submitter().register_files(&fds)?;
        }
        return Ok(fds.len());
    }
    let slots = (fds.len() + tasks * SLOTS_PER_TASK).clamp(64, MAX_SLOTS);
    ring.submitter().register_files_sparse(slots as u32)?;
    if !fds.is_empty() {
        ring.submitter().register_files_update(0, &fds)?;
    }
    Ok(slots)
}

impl LoopIo for UringIo {
    fn push_send(&mut self, conn: &Conn, i: usize) -> Result<Submitted, DriverError> {
        self.queue_send(conn, i)?;
        Ok(Submitted::Queued)
    }

    fn push_recv(&mut self, conn: &mut Conn, i: usize) -> Result<(), DriverError> {
        self.queue_recv(conn, i)
    }

    fn push_cancel(&mut self, i: usize, op: Op) -> Result<(), DriverError> {
        self.queue_cancel(i, op)
    }

    fn release(&mut self, i: usize) {
        // The table holds its own reference to a socket: a closed idle
        // connection's goes with it.
        if let Ok(slot) = u32::try_from(i) {
            let _ = self.ring.submitter().register_files_update(slot, &[-1]);
        }
    }

    fn adopt(&mut self, conn: &Conn, i: usize) -> io::Result<()> {
        if let Some(socket) = conn.socket() {
            socket.set_nonblocking(false)?;
        }
        let slot = u32::try_from(i).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        self.ring.submitter().register_files_update(slot, &[conn.raw_fd()])?;
        Ok(())
    }

    fn wait(&mut self, conns: &mut [Conn], wait: &WaitFor, out: &mut Vec<Completion>) -> Result<(), DriverError> {
        self.wait_for(wait)?;
        self.take_completions(conns, out);
        Ok(())
    }

    fn quiesce(&mut self, conns: &mut [Conn]) {
        self.cancel_all(conns);
    }

    fn in_flight(&self) -> bool {
        self.ops + self.idle_ops > 0
    }

    fn receives_in_place(&self) -> bool {
        self.pool.is_none()
    }
}

impl Drop for UringIo {
    fn drop(&mut self) {
        if self.in_flight() {
            // The kernel may still write into the pool's buffers.
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
    use crate::driver::{Clock, EventPipeline, IgnoreErrors, Lost, RunControl, StdSocket};
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

    /// A loop on a ring over `plans`, not yet run.
    fn event_loop(context: &LoopContext, plans: Vec<ConnPlan>) -> EventLoop<'_, UringIo> {
        let (conns, idle) = loop_conns(0, plans, context);
        let io = UringIo::new(0, &conns, 0, idle, WaitMode::Sleep).unwrap();
        let slots = io.slots;
        EventLoop::new(io, 0, conns, idle, slots, context)
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
        let mut d = event_loop(&context, plans);
        if d.io.pool.is_none() {
            return;
        }
        d.io.ring.submitter().unregister_buf_ring(POOL_GROUP).unwrap();
        d.io.pool = Some(RecvPool::register(&d.io.ring, 2).unwrap());
        let mut collector = Collector::new(context.board.clone());
        d.run(Vec::new(), None).unwrap();
        assert!(d.io.recv_arms > 1, "the pool never ran dry");
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
        let mut d = event_loop(&context, plans);
        d.run(Vec::new(), None).unwrap();
        let (multishot, arms) = (d.io.pool.is_some(), d.io.recv_arms);
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
        let mut d = event_loop(&context, Vec::new());
        let io = &mut d.io;
        let mut want = |recvs, sends, cancels| {
            (io.recvs, io.ops, io.quick_queued) = (recvs, recvs + sends, sends + cancels);
            io.wanted()
        };
        assert_eq!(want(1, 0, 0), 1);
        assert_eq!(want(16, 0, 0), 8);
        assert_eq!(want(16, 3, 0), 3 + 8, "sends just queued complete at once and count");
        assert_eq!(want(1000, 0, 0), MAX_BATCH);
        assert_eq!(want(0, 2, 0), 2, "only sends in flight");
        assert_eq!(want(0, 1, 1), 1, "a send and its cancellation: wake early rather than late");
        d.io.batch_gate.after_sleep(true, 8, 1);
        (d.io.recvs, d.io.ops, d.io.quick_queued) = (16, 19, 3);
        assert_eq!(d.io.wanted(), 3 + 1, "a batch fell short: the next sleeps wake at the first answer");
        (d.io.recvs, d.io.ops, d.io.quick_queued) = (0, 0, 0);
        assert!(d.run(Vec::new(), None).is_ok(), "no connections: nothing to do");
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
        let d = event_loop(&context, plans);
        for (i, conn) in d.conns.iter().enumerate() {
            assert_eq!(d.io.ring.submitter().register_files_update(i as u32, &[conn.raw_fd()]).unwrap(), 1);
        }
        assert!(d.io.ring.submitter().register_files_update(3, &[d.conns[0].raw_fd()]).is_err(), "no fourth slot");
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
