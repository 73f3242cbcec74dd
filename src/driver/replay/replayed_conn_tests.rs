use wirebench_protocol::constants::{ColumnType, StatusFlags};
use wirebench_protocol::response::RowChecksum;
use wirebench_protocol::response::{
    resultset, text_row, ColumnDefinition, ErrPacket, OkPacket, PrepareOk, PreparedStatement,
};

use super::*;
use crate::driver::replay::feed::CommandItem;
use crate::driver::replay::replay_tally::Difference;
use crate::driver::RunControl;

const CAPS: Capabilities = Capabilities::PROTOCOL_41.union(Capabilities::DEPRECATE_EOF);
const MS: u64 = 1_000_000;

/// A connection, its loop's pieces, and the clock.
struct ConnBench {
    conn: ReplayedConn,
    stats: LoopStats,
    tally: ReplayTally,
    budget: Budget,
    schedule: ReplaySchedule,
}

impl ConnBench {
    fn at_speed(speed: Option<f64>) -> Self {
        ConnBench {
            conn: {
                let mut conn = ReplayedConn::new(1, 0);
                conn.logged_in(CAPS, 0);
                conn
            },
            stats: LoopStats::new(1),
            tally: ReplayTally::default(),
            budget: Budget::new(RunControl::new(None, 1), None),
            schedule: ReplaySchedule { speed, start_ns: 0 },
        }
    }

    fn feed(&mut self, item: FeedItem<'_>) {
        let mut bytes = Vec::new();
        item.encode(&mut bytes);
        self.conn.push(&bytes);
    }

    fn command(&mut self, offset_ms: u64, statement: u32, payload: &[u8], captured: bool) {
        let flags = if captured { COMMAND_ANSWER_CAPTURED } else { 0 };
        self.feed(FeedItem::Command(CommandItem { conn: 1, offset_ns: offset_ms * MS, statement, flags, payload }));
    }

    fn captured(&mut self, answer: CapturedAnswer) {
        self.feed(FeedItem::Answer { conn: 1, answer });
    }

    fn fill(&mut self, now_ms: u64) -> (ReplayStep, Vec<u8>) {
        let mut out = Vec::new();
        let mut turn = ReplayTurn {
            stats: &mut self.stats,
            tally: &mut self.tally,
            budget: &mut self.budget,
            schedule: &self.schedule,
        };
        let step = self.conn.fill(&mut out, now_ms * MS, &mut turn);
        (step, out)
    }

    fn answer(&mut self, now_ms: u64, bytes: &[u8]) {
        let used = self.conn.on_input(bytes, now_ms * MS, &mut self.stats, &mut self.tally).unwrap();
        assert_eq!(used, bytes.len());
    }
}

fn ok_packet(affected: u64) -> Vec<u8> {
    let mut out = Vec::new();
    OkPacket { affected_rows: affected, ..OkPacket::default() }.encode(0x00, CAPS, 1, &mut out);
    out
}

fn error(code: u16) -> Vec<u8> {
    let mut out = Vec::new();
    ErrPacket { code, sql_state: Some(*b"23000"), message: b"Duplicate entry" }.encode(1, &mut out);
    out
}

fn prepared(id: u32) -> Vec<u8> {
    let mut out = Vec::new();
    PrepareOk { statement_id: id, num_columns: 0, num_params: 0, warnings: 0 }.encode(1, &mut out);
    out
}

fn text_rows(values: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    let columns = [ColumnDefinition::new(b"c", ColumnType::VarString)];
    let mut seq = resultset::encode_metadata(&columns, true, StatusFlags::AUTOCOMMIT, CAPS, 1, &mut out);
    for value in values {
        seq = text_row::encode_text_row([Some(*value)], seq, &mut out);
    }
    resultset::encode_result_end(StatusFlags::AUTOCOMMIT, 0, CAPS, seq, &mut out);
    out
}

/// The checksum of one-column text rows, as the capture would hold it.
fn checksum(values: &[&[u8]]) -> u64 {
    let mut sum = RowChecksum::default();
    for value in values {
        let mut row = Vec::new();
        text_row::encode_text_row_payload([Some(*value)], &mut row);
        sum.add_row(&row);
    }
    sum.value()
}

fn captured_rows(values: &[&[u8]]) -> CapturedAnswer {
    CapturedAnswer {
        kind: Some(AnswerKind::ResultSet),
        rows: Some(values.len() as u64),
        row_checksum: Some(checksum(values)),
        ..CapturedAnswer::default()
    }
}

fn captured_ok(affected: u64) -> CapturedAnswer {
    CapturedAnswer { kind: Some(AnswerKind::Ok), affected_rows: Some(affected), ..CapturedAnswer::default() }
}

/// The payloads of whole packets from sequence id 0.
fn payloads(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut rest = bytes;
    while let Some(&[lo, mid, hi, seq]) = rest.first_chunk::<4>() {
        assert_eq!(seq, 0, "each command starts a sequence");
        let len = usize::from(lo) | usize::from(mid) << 8 | usize::from(hi) << 16;
        out.push(rest[4..4 + len].to_vec());
        rest = &rest[4 + len..];
    }
    out
}

/// A command waits for its time at the speed asked, goes out as captured,
/// and its latency counts from its time, not from its late send.
#[test]
fn commands_go_out_at_their_time_and_count_from_it() {
    let mut bench = ConnBench::at_speed(Some(2.0));
    bench.command(10, 0, b"\x03BEGIN", true);
    bench.captured(captured_ok(0));
    bench.command(20, 1, b"\x03SELECT c FROM t", true);
    bench.captured(captured_rows(&[b"x"]));
    assert_eq!(bench.fill(0), (ReplayStep::Until(5 * MS), Vec::new()));
    let (step, sent) = bench.fill(5);
    assert_eq!((step, payloads(&sent)), (ReplayStep::Answer, vec![b"\x03BEGIN".to_vec()]));
    assert_eq!(bench.fill(6).0, ReplayStep::Answer, "one command in flight");
    bench.answer(8, &ok_packet(0));
    assert_eq!(bench.fill(8).0, ReplayStep::Until(10 * MS));
    // Sent 2 ms late, answered 1 ms later: 3 ms from its time.
    let (_, sent) = bench.fill(12);
    assert_eq!(payloads(&sent), [b"\x03SELECT c FROM t".to_vec()]);
    bench.answer(13, &text_rows(&[b"x"]));
    assert_eq!(bench.fill(13).0, ReplayStep::Records);
    let select = &bench.tally.statements[1];
    assert_eq!((select.count, select.rows, select.differences()), (1, 1, 0));
    assert_eq!(select.latency.as_ref().unwrap().max_ns(), 3 * MS);
    let counters = bench.stats.pending().counters;
    assert_eq!((counters.events, counters.reads, counters.others), (2, 1, 1));
    assert_eq!(bench.tally.differences(), 0);
}

/// At `--speed=max` each command goes as soon as the one before is
/// answered, whatever its captured time.
#[test]
fn at_max_speed_commands_follow_each_answer() {
    let mut bench = ConnBench::at_speed(None);
    bench.command(1_000, 0, b"\x03SELECT 1", false);
    bench.command(9_000, 0, b"\x03SELECT 1", false);
    assert_eq!(bench.fill(1).0, ReplayStep::Answer);
    bench.answer(2, &text_rows(&[b"1"]));
    let (step, sent) = bench.fill(2);
    assert_eq!((step, payloads(&sent).len()), (ReplayStep::Answer, 1));
    assert_eq!(bench.tally.statements[0].unknown, 1, "the capture has no answer to compare with");
}

/// A prepared statement is prepared again and its executes, resets and
/// close carry this connection's id; one whose id the connection never
/// prepared is not sent, and its captured answer is set aside.
#[test]
fn prepared_statement_ids_are_mapped() {
    let mut bench = ConnBench::at_speed(None);
    bench.command(0, 0, b"\x16SELECT ?", true);
    bench.captured(CapturedAnswer { kind: Some(AnswerKind::Prepared), prepared: Some(7), ..Default::default() });
    bench.command(1, 1, b"\x17\x07\x00\x00\x00\x00\x01\x00\x00\x00", true);
    bench.captured(captured_ok(0));
    bench.command(2, 2, b"\x17\x09\x00\x00\x00\x00\x01\x00\x00\x00", true);
    bench.captured(captured_ok(5));
    bench.command(3, 3, b"\x1a\x07\x00\x00\x00", true);
    bench.captured(captured_ok(0));
    bench.command(4, 4, b"\x19\x07\x00\x00\x00", false);
    bench.command(5, 1, b"\x17\x07\x00\x00\x00\x00\x01\x00\x00\x00", true);
    bench.captured(captured_ok(0));
    bench.feed(FeedItem::Close { conn: 1, offset_ns: 6 * MS });

    let (_, sent) = bench.fill(0);
    assert_eq!(payloads(&sent), [b"\x16SELECT ?".to_vec()]);
    bench.answer(0, &prepared(42));
    let (_, sent) = bench.fill(1);
    assert_eq!(payloads(&sent), [b"\x17\x2a\x00\x00\x00\x00\x01\x00\x00\x00".to_vec()], "id 7 is 42 here");
    bench.answer(1, &ok_packet(0));
    // The execute of id 9 is skipped; the reset goes out.
    let (_, sent) = bench.fill(2);
    assert_eq!(payloads(&sent), [b"\x1a\x2a\x00\x00\x00".to_vec()]);
    bench.answer(2, &ok_packet(0));
    // The close needs no answer; the execute after it has no statement.
    let (step, sent) = bench.fill(3);
    assert_eq!(payloads(&sent), [b"\x19\x2a\x00\x00\x00".to_vec()]);
    assert_eq!(step, ReplayStep::Quit);
    assert_eq!(bench.tally.skipped, [0, 2, 0, 0], "two executes of ids not prepared here");
    assert_eq!(bench.tally.differences(), 0, "the skipped execute's captured answer was set aside");
    assert_eq!(bench.tally.commands(), 4);
}

/// A prepare that fails here leaves its executes unsent, counted.
#[test]
fn executes_of_a_prepare_that_failed_here_are_not_sent() {
    let mut bench = ConnBench::at_speed(None);
    bench.command(0, 0, b"\x16SELECT x FROM gone", true);
    bench.captured(CapturedAnswer { kind: Some(AnswerKind::Prepared), prepared: Some(1), ..Default::default() });
    bench.command(1, 1, b"\x17\x01\x00\x00\x00\x00\x01\x00\x00\x00", true);
    bench.captured(captured_ok(0));
    bench.fill(0);
    bench.answer(0, &error(1146));
    assert_eq!(bench.fill(1), (ReplayStep::Records, Vec::new()));
    assert_eq!(bench.tally.skipped, [1, 0, 0, 0]);
    assert_eq!(bench.tally.statements[0].differences[Difference::FailsNow as usize], 1);
}

/// Another row, another count, another error: each is a difference of
/// its statement, the first with its example.
#[test]
fn differences_are_counted_with_their_first_example() {
    let mut bench = ConnBench::at_speed(None);
    bench.command(0, 0, b"\x03SELECT c FROM t WHERE id=1", true);
    bench.captured(captured_rows(&[b"old"]));
    bench.command(1, 0, b"\x03SELECT c FROM t WHERE id=2", true);
    bench.captured(captured_rows(&[b"same"]));
    bench.command(2, 1, b"\x03INSERT INTO t VALUES (1)", true);
    bench.captured(captured_ok(1));
    bench.fill(0);
    bench.answer(0, &text_rows(&[b"new"]));
    bench.fill(1);
    bench.answer(1, &text_rows(&[b"same"]));
    bench.fill(2);
    bench.answer(2, &error(1062));
    let select = &bench.tally.statements[0];
    assert_eq!(select.differences[Difference::Checksum as usize], 1);
    let example = select.examples[Difference::Checksum as usize].as_ref().unwrap();
    assert_eq!((example.conn, example.command_no, example.offset_ns), (1, 1, 0));
    assert_eq!(example.payload, b"\x03SELECT c FROM t WHERE id=1");
    assert_eq!(example.captured, format!("1 rows, checksum {:016x}", checksum(&[b"old"])));
    assert!(example.replayed.starts_with("1 rows, checksum "), "{}", example.replayed);
    let insert = &bench.tally.statements[1];
    let example = insert.examples[Difference::FailsNow as usize].as_ref().unwrap();
    assert_eq!(
        (example.captured.as_str(), example.replayed.as_str()),
        ("OK, 1 affected", "error 1062: Duplicate entry")
    );
    assert_eq!(insert.errors, [(1062, 1)]);
    assert_eq!(bench.stats.pending().counters.errors, 1);
}

/// An execute's example carries its values, read with the types of the
/// execute that bound them when it binds none (as libmariadb sends them).
#[test]
fn an_executes_example_shows_its_values() {
    use wirebench_protocol::command::{encode_execute, Param};
    let mut bench = ConnBench::at_speed(None);
    let mut bound = Vec::new();
    encode_execute(&mut bound, 7, &[Param::I64(17), Param::Bytes(b"it's")]);
    let bound = bound.split_off(4);
    // The same execute with new_params_bound_flag 0 and no types.
    let flag_at = 1 + 4 + 5 + 1;
    let mut unbound = bound[..flag_at].to_vec();
    unbound.push(0);
    unbound.extend_from_slice(&bound[flag_at + 1 + 4..]);
    unbound[flag_at + 1] = 18;
    bench.command(0, 0, b"\x16SELECT c FROM t WHERE id=? AND k=?", true);
    bench.captured(CapturedAnswer { kind: Some(AnswerKind::Prepared), prepared: Some(7), ..Default::default() });
    bench.command(1, 1, &bound, true);
    bench.captured(captured_ok(0));
    bench.command(2, 1, &unbound, true);
    bench.captured(captured_ok(1));
    bench.fill(0);
    let statement = PreparedStatement {
        ok: PrepareOk { statement_id: 42, num_columns: 0, num_params: 2, warnings: 0 },
        params: vec![ColumnDefinition::new(b"?", ColumnType::LongLong); 2],
        columns: Vec::new(),
    };
    let mut prepare_ok = Vec::new();
    statement.encode_response(CAPS, &mut prepare_ok);
    bench.answer(0, &prepare_ok);
    bench.fill(1);
    bench.answer(1, &ok_packet(0));
    bench.fill(2);
    bench.answer(2, &ok_packet(0));
    let example = bench.tally.statements[1].examples[Difference::AffectedRows as usize].as_ref().unwrap();
    assert_eq!(example.params.as_deref(), Some("18, 'it''s'"));
}

/// At `--speed=max` a replayed answer may come before the captured one
/// is read: the comparison waits for it.
#[test]
fn a_captured_answer_read_after_the_replayed_one_is_compared() {
    let mut bench = ConnBench::at_speed(None);
    bench.command(0, 0, b"\x03UPDATE t SET c=1", true);
    bench.fill(0);
    bench.answer(0, &ok_packet(2));
    assert_eq!(bench.fill(0).0, ReplayStep::Records);
    assert_eq!(bench.tally.differences(), 0);
    bench.captured(captured_ok(3));
    bench.feed(FeedItem::Close { conn: 1, offset_ns: MS });
    assert_eq!(bench.fill(1).0, ReplayStep::Quit);
    assert_eq!(bench.tally.statements[0].differences[Difference::AffectedRows as usize], 1);
}

/// When the run's time is up, nothing more is sent.
#[test]
fn the_end_of_the_run_quits() {
    let mut bench = ConnBench::at_speed(None);
    bench.budget = Budget::new(RunControl::new(Some(1), 1), None);
    bench.command(0, 0, b"\x03SELECT 1", false);
    bench.command(1, 0, b"\x03SELECT 1", false);
    bench.fill(0);
    bench.answer(0, &text_rows(&[b"1"]));
    assert_eq!(bench.fill(1), (ReplayStep::Quit, Vec::new()));
}

/// Bytes with no command in flight, or after an answer's end, are the
/// server's error: the connection cannot go on.
#[test]
fn unsolicited_bytes_end_the_connection() {
    let mut bench = ConnBench::at_speed(None);
    assert!(matches!(
        bench.conn.on_input(&ok_packet(0), 0, &mut bench.stats, &mut bench.tally),
        Err(ReplayConnError::Unsolicited)
    ));
    bench.command(0, 0, b"\x03DO 1", false);
    bench.fill(0);
    let twice = [ok_packet(0), ok_packet(0)].concat();
    assert!(matches!(
        bench.conn.on_input(&twice, 0, &mut bench.stats, &mut bench.tally),
        Err(ReplayConnError::Unsolicited)
    ));
}

/// A lost connection counts what it still held as not replayed.
#[test]
fn an_abandoned_connection_counts_its_commands_as_not_replayed() {
    let mut bench = ConnBench::at_speed(None);
    bench.command(0, 0, b"\x03SELECT 1", true);
    bench.captured(captured_rows(&[b"1"]));
    bench.command(1, 0, b"\x03SELECT 1", true);
    bench.captured(captured_rows(&[b"1"]));
    bench.fill(0);
    bench.conn.abandon(&mut bench.tally, LoopSkip::NoConnection);
    assert_eq!(bench.tally.skipped, [0, 0, 1, 0]);
    assert_eq!(bench.fill(1).0, ReplayStep::Quit);
    assert_eq!(bench.tally.differences(), 0);
}

/// A connection whose records keep coming before it has used the last
/// (a long one, fed ahead of its schedule) keeps only what it has not
/// used: its queue does not grow with the capture.
#[test]
fn a_connection_fed_ahead_holds_only_what_it_has_not_used() {
    let mut bench = ConnBench::at_speed(None);
    bench.command(0, 0, b"\x03SELECT 1", false);
    for n in 1..10_000u64 {
        bench.command(n, 0, b"\x03SELECT 1", false);
        let (step, _) = bench.fill(n);
        assert_eq!(step, ReplayStep::Answer);
        bench.answer(n, &ok_packet(0));
    }
    assert!(bench.conn.queue.len() < 4096, "the queue holds {} bytes", bench.conn.queue.len());
}
