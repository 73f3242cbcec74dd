//! The recording thread's count of what it writes, for the watch: each
//! record as it goes into the file, into the stats layer's
//! [`RelayCounts`]. An answer's time is its command's: the oldest command
//! of its connection still waiting for one (the capture's own rule).

use std::collections::{HashMap, VecDeque};

use wirebench_capture::format::{ConnId, Record};
use wirebench_protocol::response::AnswerKind;

use crate::stats::{HdrRecorder, QueryKind, RelayCounts};

/// The counts so far, and what they need to time answers.
#[derive(Debug, Default)]
pub(super) struct TrafficCount {
    counts: RelayCounts,
    answer_time: HdrRecorder,
    /// Per connection, the times of its commands still waiting for an answer.
    waiting: HashMap<ConnId, VecDeque<u64>>,
}

impl TrafficCount {
    pub(super) fn count(&mut self, record: &Record<'_>) {
        let counts = &mut self.counts;
        match record {
            Record::Open(_) => counts.connections_opened += 1,
            Record::Close(close) => {
                counts.connections_closed += 1;
                self.waiting.remove(&close.conn);
            }
            Record::Command(command) => {
                if let Some(byte) = command.command_byte() {
                    *counts.commands.entry(byte).or_default() += 1;
                }
                if command.answer_follows {
                    self.waiting.entry(command.conn).or_default().push_back(command.at_ns);
                }
            }
            Record::Answer(answer) => {
                let sent = self.waiting.get_mut(&answer.conn).and_then(VecDeque::pop_front);
                if let Some(sent_ns) = sent {
                    self.answer_time.record_ns(answer.at_ns.saturating_sub(sent_ns));
                }
                match (&answer.error, answer.kind) {
                    (Some(error), _) => {
                        counts.answered.errors += 1;
                        counts.error_codes.record(error.code);
                    }
                    (None, Some(kind)) => {
                        let rows = kind == AnswerKind::ResultSet;
                        counts.answered.count_query(QueryKind::classify(rows, answer.affected_rows.unwrap_or(0)));
                    }
                    (None, None) => {}
                }
            }
            Record::Gap(_) => {}
        }
    }

    pub(super) fn add_upstream_failures(&mut self, n: u64) {
        self.counts.upstream_failures += n;
    }

    /// The counts now, with the capture's size.
    pub(super) fn now(&mut self, capture_bytes: u64) -> &RelayCounts {
        self.answer_time.drain_into(&mut self.counts.answer_time);
        self.counts.capture_bytes = capture_bytes;
        &self.counts
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use wirebench_capture::format::{Answer, AnswerError, Command, ConnectionOpen};

    use super::*;

    fn command(conn: ConnId, at_ns: u64, byte: u8) -> Record<'static> {
        let payload = Cow::Owned(vec![byte, b'x']);
        Record::Command(Command { at_ns, conn, answer_follows: true, payload, ..Command::default() })
    }

    /// Each answer is timed from its connection's oldest waiting command;
    /// answers count by sysbench's kind, errors by code.
    #[test]
    fn answers_are_timed_from_their_commands_and_counted_by_kind() {
        let mut count = TrafficCount::default();
        count.count(&Record::Open(ConnectionOpen { conn: 1, ..ConnectionOpen::default() }));
        count.count(&command(1, 1_000, 3));
        count.count(&command(2, 1_500, 3));
        count.count(&command(1, 2_000, 0x17));
        let rows = Answer { conn: 1, at_ns: 5_000, kind: Some(AnswerKind::ResultSet), ..Answer::default() };
        count.count(&Record::Answer(rows));
        let error = AnswerError { code: 1213, sql_state: None, message: None };
        let failed =
            Answer { conn: 1, at_ns: 9_000, kind: Some(AnswerKind::Error), error: Some(error), ..Answer::default() };
        count.count(&Record::Answer(failed));
        let written =
            Answer { conn: 2, at_ns: 3_500, kind: Some(AnswerKind::Ok), affected_rows: Some(2), ..Answer::default() };
        count.count(&Record::Answer(written));
        count.add_upstream_failures(2);
        let now = count.now(4096).clone();
        assert_eq!((now.answered.reads, now.answered.writes, now.answered.errors), (1, 1, 1));
        assert_eq!(now.error_codes.codes(), &[(1213, 1)]);
        assert_eq!(now.commands, [(3, 2), (0x17, 1)].into_iter().collect());
        assert_eq!((now.answer_time.count(), now.answer_time.min_ns(), now.answer_time.max_ns()), (3, 2_000, 7_000));
        assert_eq!((now.connections_open(), now.upstream_failures, now.capture_bytes), (1, 2, 4096));
    }
}
