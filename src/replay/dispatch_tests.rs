use std::borrow::Cow;

use wirebench_capture::format::{
    AnswerError, BlockSettings, CaptureHeader, CaptureWriter, CloseReason, ConnectionClose,
};
use wirebench_protocol::response::{AnswerKind, PreparedSummary};

use super::*;
use crate::driver::replay::feed::{feed_channel, FeedReceiver};
use crate::replay::replay_options::Speed;

const MS: u64 = 1_000_000;
const T0: u64 = 1_700_000_000_000_000_000;

fn open(conn: u64, at_ms: u64, user: &'static [u8]) -> Record<'static> {
    Record::Open(ConnectionOpen {
        at_ns: T0 + at_ms * MS,
        conn,
        user: Some(Cow::Borrowed(user)),
        database: Some(Cow::Borrowed(b"shop")),
        ..ConnectionOpen::default()
    })
}

fn command(conn: u64, at_ms: u64, payload: &'static [u8]) -> Record<'static> {
    Record::Command(Command {
        at_ns: T0 + at_ms * MS,
        conn,
        answer_follows: true,
        payload: Cow::Borrowed(payload),
        ..Command::default()
    })
}

fn ok_record(conn: u64, at_ms: u64, affected: u64) -> Record<'static> {
    Record::Answer(Answer {
        at_ns: T0 + at_ms * MS,
        conn,
        kind: Some(AnswerKind::Ok),
        affected_rows: Some(affected),
        ..Answer::default()
    })
}

fn close(conn: u64, at_ms: u64) -> Record<'static> {
    Record::Close(ConnectionClose { at_ns: T0 + at_ms * MS, conn, reason: CloseReason::Quit })
}

fn captured_file(records: &[Record<'_>]) -> Vec<u8> {
    let header = CaptureHeader::new(Source::Pcap, "test");
    let mut writer = CaptureWriter::create(Vec::new(), &header, BlockSettings::default()).unwrap();
    for record in records {
        writer.append(record).unwrap();
    }
    writer.finish().unwrap()
}

fn replay_options_with(multiply: u32, read_only: bool) -> CaptureReplayOptions {
    CaptureReplayOptions {
        file: "test.wbc".into(),
        speed: Speed::Max,
        users: vec![super::super::replay_options::UserMapping {
            captured: "app".into(),
            user: "appuser".into(),
            password: "secret".into(),
        }],
        read_only,
        multiply,
    }
}

/// Runs the reader over `records` into `loops` loops; what each loop got,
/// as owned items in order, and the outcome.
fn dispatch_records(
    records: &[Record<'_>],
    loops: usize,
    options: CaptureReplayOptions,
    shard: Shard,
    schedule: (Option<f64>, Option<u64>),
) -> (Vec<Vec<String>>, DispatchOutcome) {
    let bytes = captured_file(records);
    let (senders, receivers): (Vec<FeedSender>, Vec<FeedReceiver>) = (0..loops).map(|_| feed_channel(1024)).unzip();
    let (speed, deadline_ns) = schedule;
    let plan = DispatchPlan {
        reader: CaptureReader::open(&bytes[..]).unwrap(),
        feeds: senders,
        options,
        shard,
        clock: Clock::start(),
        schedule: ReplaySchedule { speed, start_ns: 0 },
        control: RunControl::new(None, loops),
        deadline_ns,
    };
    let outcome = dispatch_capture(plan);
    let got = receivers
        .iter()
        .map(|receiver| {
            let mut batches = Vec::new();
            assert!(receiver.take(&mut batches), "the feed ended");
            let mut items = Vec::new();
            for batch in &batches {
                let mut rest = &batch[..];
                while let Some((item, len)) = FeedItem::parse(rest) {
                    items.push(describe(&item, &outcome.table));
                    rest = &rest[len..];
                }
                assert!(rest.is_empty());
            }
            items
        })
        .collect();
    (got, outcome)
}

fn describe(item: &FeedItem<'_>, table: &StatementTable) -> String {
    match item {
        FeedItem::Open(open) => {
            format!("{} open login {} db {}", open.conn, open.login, String::from_utf8_lossy(open.database))
        }
        FeedItem::Command(c) => {
            let statement = &table.get(c.statement).unwrap().text;
            format!("{} command {:?} [{statement}] flags {}", c.conn, String::from_utf8_lossy(c.payload), c.flags)
        }
        FeedItem::Answer { conn, answer } => format!("{conn} answer {:?} {:?}", answer.kind, answer.prepared),
        FeedItem::Close { conn, .. } => format!("{conn} close"),
    }
}

/// Prepares, executes and answers go to the connection's loop with their
/// statements; an execute of a statement the capture never saw prepared
/// does not, and is counted.
#[test]
fn a_connection_goes_to_its_loop_with_its_statements() {
    let prepared = Record::Answer(Answer {
        at_ns: T0 + 2 * MS,
        conn: 5,
        kind: Some(AnswerKind::Prepared),
        prepared: Some(PreparedSummary { statement_id: 3, params: 1, columns: 1 }),
        ..Answer::default()
    });
    let mut unknown = command(5, 5, b"\x17\x09\x00\x00\x00\x00\x01\x00\x00\x00");
    if let Record::Command(c) = &mut unknown {
        c.unknown_statement = true;
    }
    let records = [
        open(5, 0, b"app"),
        command(5, 1, b"\x16SELECT c FROM t WHERE id=?"),
        prepared,
        command(5, 3, b"\x17\x03\x00\x00\x00\x00\x01\x00\x00\x00"),
        ok_record(5, 4, 0),
        unknown,
        ok_record(5, 6, 0),
        command(5, 7, b"\x01"),
        close(5, 7),
    ];
    let (got, outcome) = dispatch_records(&records, 1, replay_options_with(1, false), Shard::WHOLE, (None, None));
    assert_eq!(
        got[0],
        [
            "5 open login 1 db shop",
            "5 command \"\\u{16}SELECT c FROM t WHERE id=?\" [COM_STMT_PREPARE] flags 1",
            "5 answer Some(Prepared) Some(3)",
            "5 command \"\\u{17}\\u{3}\\0\\0\\0\\0\\u{1}\\0\\0\\0\" [select c from t where id = ?] flags 1",
            "5 answer Some(Ok) None",
            "5 close",
        ]
    );
    let tally = &outcome.tally;
    assert_eq!((tally.connections, tally.commands, tally.replayed_connections), (1, 4, 1));
    assert_eq!(tally.unreplayed[0], 1, "the execute of a statement prepared before the capture");
    assert!(outcome.error.is_none() && matches!(outcome.ending, Some(Ending::Clean(_))));
    let select = outcome.table.entries().iter().find(|s| s.text.starts_with("select")).unwrap();
    assert_eq!((select.captured_runs, select.captured_latency.as_ref().unwrap().events()), (1, 1));
}

/// `--multiply=3` makes three copies of each connection; `--shard=1/2`
/// keeps the odd ones, spread over the loops.
#[test]
fn copies_are_made_and_the_shard_keeps_its_part() {
    let records = [open(1, 0, b"x"), command(1, 1, b"\x03SELECT 1"), ok_record(1, 2, 0), close(1, 3)];
    let (got, outcome) =
        dispatch_records(&records, 2, replay_options_with(3, false), Shard::new(1, 2).unwrap(), (None, None));
    let opened: Vec<&String> = got.iter().flatten().filter(|i| i.contains("open")).collect();
    assert_eq!(opened, ["3 open login 0 db shop", "5 open login 0 db shop"]);
    assert_eq!(got[0].len(), 4, "one copy per loop: {got:?}");
    assert_eq!(got[1].len(), 4);
    assert_eq!(outcome.tally.replayed_connections, 2);
}

/// `--read-only` leaves out what writes, and its captured answer.
#[test]
fn read_only_leaves_the_writes_out() {
    let failed = Record::Answer(Answer {
        at_ns: T0 + 2 * MS,
        conn: 1,
        kind: Some(AnswerKind::Error),
        error: Some(AnswerError { code: 1062, sql_state: None, message: None }),
        ..Answer::default()
    });
    let records = [
        open(1, 0, b"x"),
        command(1, 1, b"\x03INSERT INTO t VALUES (1)"),
        failed,
        command(1, 3, b"\x03SELECT 1"),
        ok_record(1, 4, 0),
        close(1, 5),
    ];
    let (got, outcome) = dispatch_records(&records, 1, replay_options_with(1, true), Shard::WHOLE, (None, None));
    assert_eq!(got[0].len(), 4, "{got:?}");
    assert!(got[0][1].contains("SELECT 1"));
    assert_eq!(outcome.tally.unreplayed[Unreplayed::ALL.iter().position(|&u| u == Unreplayed::Writes).unwrap()], 1);
    let insert = outcome.table.entries().iter().find(|s| s.text.starts_with("insert")).unwrap();
    assert_eq!((insert.captured_runs, insert.captured_errors), (1, 1), "the capture's figures stay whole");
}

/// At a finite speed nothing due after the run's end is read.
#[test]
fn records_due_after_the_run_are_not_read() {
    let records = [open(1, 0, b"x"), command(1, 1, b"\x03SELECT 1"), command(1, 60_000, b"\x03SELECT 2")];
    let (got, outcome) =
        dispatch_records(&records, 1, replay_options_with(1, false), Shard::WHOLE, (Some(1.0), Some(1_000 * MS)));
    assert_eq!(got[0].len(), 3, "open, the first command, and the close at the end: {got:?}");
    assert_eq!(outcome.tally.commands, 1);
}
