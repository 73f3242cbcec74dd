//! The engine's per-query path allocates nothing in steady state: a
//! connection's EventPipeline emits oltp_read_write transactions (script, patched
//! pre-encoded packets, send buffer) and walks canned server answers
//! (response reader, counters, latency histogram) under a counting
//! allocator; with `--db-ps-mode=disable` too (statements rendered as
//! COM_QUERY text, text-protocol rows); and with `--mysql-compression=on`
//! (commands deflated or not through the transport, answers inflated); and
//! for the 0.4/0.5 tests' scripts; and while the metrics endpoint
//! (`--metrics-listen`) is scraped and fed the loop's intervals; and for a
//! replayed connection (`wirebench replay`) fed ahead of its commands.
//!
//! Implementing `GlobalAlloc` needs `unsafe`; it lives in this test crate.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use wirebench::driver::IgnoreErrors;
use wirebench::driver::{Budget, EventPipeline, RunControl};
use wirebench::rand::{RandConfig, RandParams, Rng};
use wirebench::results::IntervalResult;
use wirebench::stats::{Collector, LoopStats, StatsBoard};
use wirebench::transport::Transport;
use wirebench::watch::{IntervalTick, Watch, WatchSettings, WatchedCommand};
use wirebench::workload::legacy::{LegacyOptions, LegacyTest, NontrxMode, Oltp04Mode};
use wirebench::workload::{self, EmulatedStatement, OltpOptions, ScriptContext, Workload};
use wirebench_protocol::command::ExecuteTemplate;
use wirebench_protocol::compress::{encode_chunk, CompressedStream, Deflater, Inflater};
use wirebench_protocol::constants::command::{COM_QUERY, COM_STMT_EXECUTE};
use wirebench_protocol::framing::{Header, HEADER_LEN};
use wirebench_protocol::response::binary_row::encode_binary_row;
use wirebench_protocol::response::resultset::{encode_metadata, encode_result_end};
use wirebench_protocol::response::text_row::encode_text_row;
use wirebench_protocol::response::{ColumnDefinition, OkPacket, Value};
use wirebench_protocol::{Capabilities, ColumnType, StatusFlags};

struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn note_allocation() {
    if COUNTING.try_with(Cell::get).unwrap_or(false) {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
    }
}

// SAFETY: every call is forwarded unchanged to the system allocator.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note_allocation();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations_during(f: impl FnOnce()) -> usize {
    ALLOCATIONS.with(|n| n.set(0));
    COUNTING.with(|c| c.set(true));
    f();
    COUNTING.with(|c| c.set(false));
    ALLOCATIONS.with(Cell::get)
}

const CAPS: Capabilities = Capabilities(
    Capabilities::PROTOCOL_41.0
        | Capabilities::TRANSACTIONS.0
        | Capabilities::DEPRECATE_EOF.0
        | Capabilities::MULTI_RESULTS.0,
);

/// What a statement gets back.
#[derive(Clone, Copy)]
enum Kind {
    Rows,
    Changed,
    Other,
}

/// The canned answers a server gives: an OK with one affected row (DML), an
/// OK with none (BEGIN, COMMIT), and a one-row result set of one CHAR column
/// (binary rows for an execute, text rows for a query).
struct Answers {
    changed: Vec<u8>,
    other: Vec<u8>,
    rows: Vec<u8>,
    text_rows: Vec<u8>,
    /// The same four, each as the compressed packet a server sends in
    /// answer to a command (compressed sequence id 1).
    compressed: [Vec<u8>; 4],
    kinds: Vec<Kind>,
}

/// What SQL text gets back.
fn kind_of(sql: &[u8]) -> Kind {
    match sql.split(|&b| b == b' ').next() {
        Some(b"SELECT") => Kind::Rows,
        Some(b"UPDATE" | b"DELETE" | b"INSERT") => Kind::Changed,
        _ => Kind::Other,
    }
}

impl Answers {
    fn new(statements: &[workload::StatementSpec]) -> Self {
        let (mut changed, mut other) = (Vec::new(), Vec::new());
        OkPacket { affected_rows: 1, status: StatusFlags::AUTOCOMMIT, ..OkPacket::default() }.encode(
            0x00,
            CAPS,
            1,
            &mut changed,
        );
        OkPacket { status: StatusFlags::AUTOCOMMIT, ..OkPacket::default() }.encode(0x00, CAPS, 1, &mut other);
        let columns = [ColumnDefinition::new(b"c", ColumnType::String)];
        let mut rows = Vec::new();
        let seq = encode_metadata(&columns, true, StatusFlags::AUTOCOMMIT, CAPS, 1, &mut rows);
        let seq = encode_binary_row(&[Value::Bytes(&[b'x'; 119])], &columns, seq, &mut rows).unwrap();
        encode_result_end(StatusFlags::AUTOCOMMIT, 0, CAPS, seq, &mut rows);
        let mut text_rows = Vec::new();
        let seq = encode_metadata(&columns, true, StatusFlags::AUTOCOMMIT, CAPS, 1, &mut text_rows);
        let seq = encode_text_row([Some(&[b'x'; 119][..])], seq, &mut text_rows);
        encode_result_end(StatusFlags::AUTOCOMMIT, 0, CAPS, seq, &mut text_rows);
        let kinds = statements.iter().map(|s| kind_of(s.sql.as_bytes())).collect();
        let compress = |plain: &Vec<u8>| {
            let mut packet = Vec::new();
            encode_chunk(plain, 1, &mut packet, &mut Deflater::new());
            packet
        };
        let compressed = [&changed, &other, &rows, &text_rows].map(compress);
        assert!(compressed[2].len() < rows.len(), "the row answer is deflated");
        Answers { changed, other, rows, text_rows, compressed, kinds }
    }

    /// Appends the answer to every command packet in `sent`, compressed or not.
    fn answer(&self, sent: &[u8], input: &mut Vec<u8>, compressed: bool) {
        let mut at = 0;
        while let Some(header) = sent.get(at..).and_then(Header::parse) {
            let payload = &sent[at + HEADER_LEN..at + HEADER_LEN + header.len];
            let (kind, text) = match payload[0] {
                COM_QUERY => (kind_of(&payload[1..]), true),
                COM_STMT_EXECUTE => {
                    let id = u32::from_le_bytes(payload[1..5].try_into().unwrap());
                    (self.kinds[id as usize - 1], false)
                }
                other => panic!("unexpected command 0x{other:02x}"),
            };
            let (plain, index) = match kind {
                Kind::Changed => (&self.changed, 0),
                Kind::Other => (&self.other, 1),
                Kind::Rows if text => (&self.text_rows, 3),
                Kind::Rows => (&self.rows, 2),
            };
            input.extend_from_slice(if compressed { &self.compressed[index] } else { plain });
            at += HEADER_LEN + header.len;
        }
    }
}

fn oltp_read_write() -> Box<dyn Workload> {
    let options = OltpOptions { tables: 4, table_size: 10_000, ..OltpOptions::default() };
    workload::Test::OltpReadWrite.workload(&options).unwrap()
}

fn session(workload: &dyn Workload, pipeline: usize, text: bool) -> (EventPipeline, Answers) {
    let statements = workload.statements();
    let templates: Vec<_> =
        statements.iter().enumerate().map(|(i, s)| ExecuteTemplate::new(i as u32 + 1, &s.slots).unwrap()).collect();
    let params = RandParams::new(&RandConfig::default()).unwrap();
    let script = workload.script(ScriptContext { thread: 0, threads: 1 });
    let emulated = text.then(|| EmulatedStatement::all(&statements).unwrap().into());
    let session =
        EventPipeline::new(0, script, Rng::for_thread(7, 0, params), templates, CAPS, pipeline).emulating(emulated);
    (session, Answers::new(&statements))
}

/// A fake server's side of compressed connection: what it reads, and the
/// answers it sends.
struct CompressedPeer {
    client: Transport,
    server: CompressedStream,
    inflater: Inflater,
    /// Compressed commands, then the server's compressed answers.
    wire: Vec<u8>,
    /// The commands as the server reads them.
    commands: Vec<u8>,
}

fn drive(workload: &dyn Workload, pipeline: usize, text: bool, compressed: bool, events: u64) -> (usize, LoopStats) {
    let (mut session, answers) = session(workload, pipeline, text);
    let mut budget = Budget::new(RunControl::new(None, 1), None);
    let mut stats = LoopStats::new(1);
    let ignore = IgnoreErrors::List(vec![1213, 1020, 1205]);
    let (mut out, mut input) = (Vec::with_capacity(64 * 1024), Vec::with_capacity(64 * 1024));
    let mut peer = CompressedPeer {
        client: Transport::compressed(),
        server: CompressedStream::new(),
        inflater: Inflater::new(),
        wire: Vec::with_capacity(64 * 1024),
        commands: Vec::with_capacity(64 * 1024),
    };
    let mut step = |now: &mut u64, stats: &mut LoopStats| {
        session.fill(&mut out, *now, &mut budget).unwrap();
        if text {
            assert!(out.get(4) == Some(&COM_QUERY) || out.is_empty(), "disable mode sends text");
        }
        if compressed {
            let p = &mut peer;
            p.client.encode(&out, &mut p.wire).unwrap();
            let used = p.server.decode(&p.wire, &mut p.commands, &mut p.inflater).unwrap();
            assert_eq!((used, &p.commands), (p.wire.len(), &out), "the server reads the commands sent");
            p.wire.clear();
            answers.answer(&p.commands, &mut p.wire, true);
            p.commands.clear();
            assert_eq!(p.client.decode(&p.wire, &mut input).unwrap(), p.wire.len());
            p.wire.clear();
        } else {
            answers.answer(&out, &mut input, false);
        }
        out.clear();
        *now += 1_000;
        let used = session.on_input(&input, *now, stats, &ignore).unwrap();
        assert_eq!(used, input.len());
        input.clear();
    };
    let mut now = 0u64;
    // Warm up: buffers reach their steady size.
    while stats.pending().counters.events < 100 {
        step(&mut now, &mut stats);
    }
    let target = stats.pending().counters.events + events;
    let allocations = allocations_during(|| {
        while stats.pending().counters.events < target {
            step(&mut now, &mut stats);
        }
    });
    (allocations, stats)
}

#[test]
fn steady_state_allocates_nothing() {
    for (pipeline, text, compressed) in [
        (1, false, false),
        (8, false, false),
        (1, true, false),
        (8, true, false),
        (1, false, true),
        (8, false, true),
        (8, true, true),
    ] {
        let (allocations, stats) = drive(&*oltp_read_write(), pipeline, text, compressed, 10_000);
        let counters = &stats.pending().counters;
        // oltp_read_write: 14 reads, 4 writes, 2 others per transaction.
        assert_eq!(
            (counters.reads, counters.writes, counters.others),
            (14 * counters.events, 4 * counters.events, 2 * counters.events)
        );
        assert_eq!(
            allocations, 0,
            "pipeline {pipeline}, text {text}, compressed {compressed}: {allocations} allocations in 10,000 transactions"
        );
    }
}

/// The 0.4/0.5 tests' scripts too: 0.5's statements written as text into
/// the send buffer, 0.4's prepared packets patched (INT ids, NULL, padded
/// strings), LOCK TABLES.
#[test]
fn legacy_workloads_allocate_nothing() {
    let options = OltpOptions { tables: 4, table_size: 10_000, ..OltpOptions::default() };
    let myisam = OltpOptions { mysql_storage_engine: "myisam".into(), ..options.clone() };
    let mode = |oltp04_mode| LegacyOptions { oltp04_mode, ..LegacyOptions::default() };
    let cases = [
        (LegacyTest::Oltp05, options.clone(), LegacyOptions::default()),
        (LegacyTest::Oltp05, myisam.clone(), LegacyOptions::default()),
        (LegacyTest::UpdateNonIndex05, options.clone(), LegacyOptions::default()),
        (LegacyTest::Insert05, OltpOptions { auto_inc: false, ..options.clone() }, LegacyOptions::default()),
        (LegacyTest::Oltp04, options.clone(), mode(Oltp04Mode::Complex)),
        (LegacyTest::Oltp04, myisam, mode(Oltp04Mode::Complex)),
        (LegacyTest::Oltp04, options.clone(), mode(Oltp04Mode::Nontrx(NontrxMode::Insert))),
        (LegacyTest::Oltp04, options, mode(Oltp04Mode::Nontrx(NontrxMode::Delete))),
    ];
    for (test, options, legacy) in cases {
        let workload = test.workload(&options, &legacy).unwrap();
        for (pipeline, text) in [(1, false), (8, false), (1, true)] {
            let (allocations, stats) = drive(&*workload, pipeline, text, false, 5_000);
            assert!(stats.pending().counters.events >= 5_000);
            assert_eq!(allocations, 0, "{test} {:?}, pipeline {pipeline}, text {text}", legacy.oltp04_mode);
        }
    }
}

#[test]
fn the_counter_sees_allocations() {
    let n = allocations_during(|| drop(std::hint::black_box(vec![1u8; 64])));
    assert_eq!(n, 1);
}

/// The `--rate` schedule per event (arrivals queued, admitted, finished,
/// published) allocates nothing, however long the queue gets.
#[test]
fn rate_schedule_allocates_nothing() {
    let control = RunControl::with_rate(None, &[2, 1], 225_000, 9);
    let mut budget = Budget::for_loop(control.clone(), None, 0);
    let mut stats = LoopStats::with_kinds(2, &[]);
    let mut now = 0u64;
    let mut started = 0u64;
    // 150,000 arrivals a second for loop 0 against 100,000 starts: its
    // backlog grows, to about 50,000, counted and never stored.
    let allocations = allocations_during(|| {
        for _ in 0..100_000 {
            now += 10_000;
            budget.admit(now, now);
            if budget.in_progress() > 0 {
                started += 1;
                budget.finish(1);
            }
            // A loop hands what it wrote to the kernel at every turn.
            if now % 1_000_000 == 0 {
                budget.sent(now, &mut stats);
            }
            if now % 5_000_000 == 0 {
                budget.publish(now);
            }
        }
    });
    assert_eq!(allocations, 0);
    assert!(started > 90_000, "{started}");
    assert!(!control.is_stopped());
    assert!(control.queue_stats().length > 40_000, "{:?}", control.queue_stats());
    assert!(control.backlog().oldest_ns.is_some_and(|t| t < now - 300_000_000), "{:?}", control.backlog());
}

/// A scrape of `/metrics` at `address`: the body of a 200 answer.
fn scrape(address: std::net::SocketAddr) -> Option<String> {
    use std::io::{Read, Write};
    let mut conn = std::net::TcpStream::connect(address).ok()?;
    conn.write_all(b"GET /metrics HTTP/1.1\r\nAccept: application/openmetrics-text\r\n\r\n").ok()?;
    let mut answer = String::new();
    conn.read_to_string(&mut answer).ok()?;
    answer.starts_with("HTTP/1.1 200 ").then(|| answer.split_once("\r\n\r\n").map(|(_, body)| body.to_owned()))?
}

/// An interval line to fill in: the watch takes what the orchestration's
/// result sink makes.
const INTERVAL: &str = r#"{"threads":1,"time_s":0.0,"interval_s":0.002,"start_unix_s":0.0,
  "counters":{"transactions":0,"queries":0,"reads":0,"writes":0,"others":0,"ignored_errors":0,"reconnects":0},
  "rates":{"tps":0.0,"qps":0.0,"reads_per_s":0.0,"writes_per_s":0.0,"others_per_s":0.0,"ignored_errors_per_s":0.0,
           "reconnects_per_s":0.0},
  "latency_ms":{"count":0,"min":0.0,"avg":0.0,"max":0.0,"sum":0.0,"percentiles":[]},"statements":[]}"#;

/// With `--metrics-listen` on, the loop's per-query path still allocates
/// nothing: the report thread collects the loop's hand-overs and feeds
/// the watch, a client scrapes `/metrics` all the while, and the loop
/// (this thread) only answers the collector's requests, as it always does.
#[test]
fn the_metrics_endpoint_costs_the_loop_nothing() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Arc;

    let settings = WatchSettings { listen: Some("127.0.0.1:0".parse().unwrap()), ..WatchSettings::default() };
    let command = WatchedCommand { test: Some("oltp_read_write".to_owned()), ..WatchedCommand::default() };
    let watch = Arc::new(Watch::start(&settings, command, |_| {}).unwrap().unwrap());
    let address = watch.addresses()[0].0;
    let board = StatsBoard::new(&[1]);
    let (stop, fed, scraped) =
        (Arc::new(AtomicBool::new(false)), Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let reporter = {
        let (watch, board, stop, fed) = (watch.clone(), board.clone(), stop.clone(), fed.clone());
        std::thread::spawn(move || {
            let mut collector = Collector::new(board);
            let mut record: IntervalResult = serde_json::from_str(INTERVAL).unwrap();
            while !stop.load(Ordering::Relaxed) {
                collector.collect(std::time::Duration::from_millis(2));
                let interval = collector.interval();
                record.counters.transactions = interval.counters.events;
                record.counters.reads = interval.counters.reads;
                let tick = IntervalTick {
                    record: &record,
                    events: &interval.latencies.events,
                    error_codes: collector.interval_error_codes(),
                };
                watch.interval(tick);
                fed.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    let scraper = {
        let (stop, scraped) = (stop.clone(), scraped.clone());
        std::thread::spawn(move || {
            let mut last = None;
            while !stop.load(Ordering::Relaxed) {
                if let Some(body) = scrape(address) {
                    scraped.fetch_add(1, Ordering::Relaxed);
                    last = Some(body);
                }
            }
            last
        })
    };

    let workload = oltp_read_write();
    let (mut session, answers) = session(&*workload, 1, false);
    let mut budget = Budget::new(RunControl::new(None, 1), None);
    let mut stats = board.loop_stats(0);
    let ignore = IgnoreErrors::List(vec![1213, 1020, 1205]);
    let (mut out, mut input) = (Vec::with_capacity(64 * 1024), Vec::with_capacity(64 * 1024));
    let mut now = 0u64;
    let mut step = |now: &mut u64, stats: &mut LoopStats| {
        session.fill(&mut out, *now, &mut budget).unwrap();
        answers.answer(&out, &mut input, false);
        out.clear();
        *now += 1_000;
        assert_eq!(session.on_input(&input, *now, stats, &ignore).unwrap(), input.len());
        input.clear();
        board.publish_if_requested(0, stats);
    };
    // Warm up: buffers reach their steady size, the loop has handed over.
    for _ in 0..200 {
        step(&mut now, &mut stats);
    }
    let (fed_before, scraped_before) = (fed.load(Ordering::Relaxed), scraped.load(Ordering::Relaxed));
    let mut steps = 0u64;
    let allocations = allocations_during(|| {
        // Until the watch has had intervals and the endpoint scrapes while
        // the loop ran.
        while steps < 20_000
            || fed.load(Ordering::Relaxed) < fed_before + 20
            || scraped.load(Ordering::Relaxed) < scraped_before + 20
        {
            step(&mut now, &mut stats);
            steps += 1;
        }
    });
    board.publish(0, &mut stats);
    stop.store(true, Ordering::Relaxed);
    reporter.join().unwrap();
    let last = scraper.join().unwrap().expect("a scrape");
    assert_eq!(allocations, 0, "{allocations} allocations in {steps} transactions while the endpoint was scraped");
    assert!(last.contains("wirebench_transactions_total{test=\"oltp_read_write\"}"), "{last}");
    let shown: f64 = last
        .lines()
        .find(|l| l.starts_with("wirebench_transactions_total"))
        .unwrap()
        .rsplit(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(shown > 0.0, "the endpoint shows the loop's transactions: {last}");
}

/// A replayed connection (`wirebench replay`) of a prepared point select:
/// once its statement is prepared again, each command fed, sent,
/// answered and compared with its captured answer allocates nothing
/// (its queue, arena and checks reuse their room, also when it is fed
/// ahead; its statement's tally and the latency histogram are in place).
#[test]
fn a_replayed_connection_allocates_nothing_per_command() {
    use wirebench::driver::{
        CapturedAnswer, CommandItem, FeedItem, ReplaySchedule, ReplayStep, ReplayTally, ReplayTurn, ReplayedConn,
        COMMAND_ANSWER_CAPTURED,
    };
    use wirebench_protocol::command::{encode_execute, Param};
    use wirebench_protocol::response::{AnswerKind, PrepareOk, PreparedStatement};

    let columns = [ColumnDefinition::new(b"c", ColumnType::String)];
    let mut prepared = Vec::new();
    PreparedStatement {
        ok: PrepareOk { statement_id: 9, num_columns: 1, num_params: 1, warnings: 0 },
        params: vec![ColumnDefinition::new(b"?", ColumnType::LongLong).into_owned()],
        columns: columns.iter().map(|c| c.clone().into_owned()).collect(),
    }
    .encode_response(CAPS, &mut prepared);
    let mut rows = Vec::new();
    let seq = encode_metadata(&columns, true, StatusFlags::AUTOCOMMIT, CAPS, 1, &mut rows);
    let seq = encode_binary_row(&[Value::Bytes(&[b'x'; 119])], &columns, seq, &mut rows).unwrap();
    encode_result_end(StatusFlags::AUTOCOMMIT, 0, CAPS, seq, &mut rows);
    let mut execute = Vec::new();
    encode_execute(&mut execute, 7, &[Param::I64(17)]);
    let execute = execute.split_off(HEADER_LEN);
    let prepare = b"\x16SELECT c FROM sbtest1 WHERE id=?";
    let captured_rows =
        CapturedAnswer { kind: Some(AnswerKind::ResultSet), rows: Some(1), ..CapturedAnswer::default() };
    let captured_prepare = CapturedAnswer { kind: Some(AnswerKind::Prepared), prepared: Some(7), ..Default::default() };

    let mut conn = ReplayedConn::new(1, 0);
    conn.logged_in(CAPS, 0);
    let (mut stats, mut tally) = (LoopStats::new(1), ReplayTally::default());
    let mut budget = Budget::new(RunControl::new(None, 1), None);
    let schedule = ReplaySchedule { speed: None, start_ns: 0 };
    let (mut item, mut out) = (Vec::with_capacity(256), Vec::with_capacity(256));
    let mut feed = |conn: &mut ReplayedConn, statement: u32, payload: &[u8], answer: CapturedAnswer| {
        item.clear();
        let flags = COMMAND_ANSWER_CAPTURED;
        FeedItem::Command(CommandItem { conn: 1, offset_ns: 0, statement, flags, payload }).encode(&mut item);
        FeedItem::Answer { conn: 1, answer }.encode(&mut item);
        conn.push(&item);
    };
    let mut exchange = |conn: &mut ReplayedConn, answer: &[u8], now: u64| {
        let mut turn = ReplayTurn { stats: &mut stats, tally: &mut tally, budget: &mut budget, schedule: &schedule };
        out.clear();
        assert_eq!(conn.fill(&mut out, now, &mut turn), ReplayStep::Answer);
        assert_eq!(conn.on_input(answer, now + 1, turn.stats, turn.tally).unwrap(), answer.len());
    };
    feed(&mut conn, 0, prepare, captured_prepare);
    exchange(&mut conn, &prepared, 1);
    feed(&mut conn, 1, &execute, captured_rows);
    // Each command is fed before the one ahead of it is answered, as the
    // reader feeds a loop ahead of its connections: the queue never empties.
    let mut run = |conn: &mut ReplayedConn, from: u64| {
        for n in from..from + 2_000 {
            feed(conn, 1, &execute, captured_rows);
            exchange(conn, &rows, n * 10);
        }
    };
    run(&mut conn, 1);
    assert_eq!(allocations_during(|| run(&mut conn, 2_001)), 0);
}
