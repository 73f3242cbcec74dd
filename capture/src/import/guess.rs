//! The capabilities of a connection whose login the capture never saw.
//!
//! Two of them change how an answer reads: DEPRECATE_EOF (an OK in place
//! of the EOF packets) and MariaDB's CACHE_METADATA (a flag after each
//! column count). Each combination reads the answer as a hypothesis with
//! strict sequence ids; a hypothesis that fails, or that ends the answer
//! before the server's bytes end, is dropped; one left alone is the
//! connection's. Several that agree to the last byte stay in play until a
//! later answer tells them apart (a SELECT's first result set always
//! does), and the first of them is taken meanwhile.

use wirebench_protocol::response::{AnswerForm, AnswerSummariser, AnswerSummary, ColumnShape};
use wirebench_protocol::Capabilities;

/// The bits a hypothesis varies.
pub(crate) const UNSURE: [Capabilities; 2] = [Capabilities::DEPRECATE_EOF, Capabilities::MARIADB_CLIENT_CACHE_METADATA];

/// What a client of a connection joined midway is taken to have asked for,
/// before the unsure bits: libmariadb's and libmysqlclient's fixed set.
pub(crate) const CLIENT_BASE: Capabilities = Capabilities(
    Capabilities::LONG_FLAG.0
        | Capabilities::PROTOCOL_41.0
        | Capabilities::TRANSACTIONS.0
        | Capabilities::SECURE_CONNECTION.0
        | Capabilities::MULTI_STATEMENTS.0
        | Capabilities::MULTI_RESULTS.0
        | Capabilities::PS_MULTI_RESULTS.0
        | Capabilities::PLUGIN_AUTH.0
        | Capabilities::LOCAL_FILES.0,
);

/// Every combination of the unsure bits over `base`.
pub(crate) fn candidates(base: Capabilities) -> Vec<Capabilities> {
    let mut all = vec![base & !(UNSURE[0] | UNSURE[1])];
    for bit in UNSURE {
        let with: Vec<Capabilities> = all.iter().map(|c| *c | bit).collect();
        all.extend(with);
    }
    all
}

/// One hypothesis's reading of a whole answer.
#[derive(Debug, Clone)]
pub(crate) struct Reading {
    pub(crate) summary: AnswerSummary,
    /// When the answer ended.
    pub(crate) at_ns: u64,
    /// A prepare's result columns.
    pub(crate) columns: Vec<ColumnShape>,
}

#[derive(Debug, Clone)]
struct Hypothesis {
    caps: Capabilities,
    reader: AnswerSummariser,
    /// Bytes of the answer this hypothesis read.
    consumed: usize,
    done: Option<Reading>,
    dead: bool,
}

/// One answer read under every live hypothesis.
#[derive(Debug, Clone)]
pub(crate) struct Guess {
    hypotheses: Vec<Hypothesis>,
    /// The answer's bytes so far.
    bytes: Vec<u8>,
}

/// Where the hypotheses stand.
#[derive(Debug)]
pub(crate) enum Verdict {
    /// None reads the answer.
    NoneFits,
    /// One is left: its capabilities and reader (with the bytes it has not read).
    Settled { caps: Capabilities, reader: Box<AnswerSummariser>, done: Option<Reading>, unread: Vec<u8> },
    /// Several are still in play.
    Open,
}

/// The largest answer read under several hypotheses at once; past it the
/// first live one is taken.
const MAX_GUESSED_ANSWER: usize = 16 << 20;

impl Guess {
    pub(crate) fn new(caps: &[Capabilities], form: AnswerForm, first_seq: u8, cached: &[ColumnShape]) -> Self {
        let hypotheses = caps
            .iter()
            .filter_map(|&caps| {
                let mut reader = AnswerSummariser::new(caps).strict();
                reader.begin(form, first_seq, cached).ok()?;
                Some(Hypothesis { caps, reader, consumed: 0, done: None, dead: false })
            })
            .collect();
        Guess { hypotheses, bytes: Vec::new() }
    }

    /// Reads more of the answer under every live hypothesis.
    pub(crate) fn feed(&mut self, more: &[u8], at_ns: u64) -> Verdict {
        self.bytes.extend_from_slice(more);
        for h in self.hypotheses.iter_mut().filter(|h| !h.dead) {
            if h.done.is_some() {
                // The server went on after this reading's end, before any command.
                h.dead = h.consumed < self.bytes.len();
                continue;
            }
            match h.reader.advance(self.bytes.get(h.consumed..).unwrap_or_default()) {
                Ok(progress) => {
                    h.consumed += progress.consumed;
                    if let Some(summary) = progress.done {
                        h.done = Some(Reading { summary, at_ns, columns: h.reader.prepared_columns().to_vec() });
                        h.dead = h.consumed < self.bytes.len();
                    }
                }
                Err(_) => h.dead = true,
            }
        }
        if self.bytes.len() > MAX_GUESSED_ANSWER {
            let mut first = true;
            for h in self.hypotheses.iter_mut().filter(|h| !h.dead) {
                h.dead = !std::mem::take(&mut first);
            }
        }
        self.verdict()
    }

    fn verdict(&mut self) -> Verdict {
        let mut live = self.hypotheses.iter_mut().filter(|h| !h.dead);
        let (Some(only), None) = (live.next(), live.next()) else {
            return if self.hypotheses.iter().any(|h| !h.dead) { Verdict::Open } else { Verdict::NoneFits };
        };
        Verdict::Settled {
            caps: only.caps,
            reader: Box::new(only.reader.clone()),
            done: only.done.take(),
            unread: self.bytes.get(only.consumed..).unwrap_or_default().to_vec(),
        }
    }

    /// The time from which the answer may be dated: the earliest end any
    /// live hypothesis found. Records after it wait for the verdict.
    pub(crate) fn hold_from(&self) -> Option<u64> {
        self.hypotheses.iter().filter(|h| !h.dead).filter_map(|h| h.done.as_ref().map(|d| d.at_ns)).min()
    }

    /// The client sent its next command: the answer ended. The live
    /// hypotheses that read it to its last byte survive; the answer is the
    /// first one's reading, with the capabilities still in play.
    pub(crate) fn close(self) -> Option<(Vec<Capabilities>, Reading)> {
        let total = self.bytes.len();
        let mut survivors: Vec<Hypothesis> =
            self.hypotheses.into_iter().filter(|h| !h.dead && h.done.is_some() && h.consumed == total).collect();
        let caps = survivors.iter().map(|h| h.caps).collect();
        let first = survivors.first_mut()?.done.take()?;
        Some((caps, first))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wirebench_protocol::framing::encode_packet;
    use wirebench_protocol::response::RowFormat;

    fn packet(seq: u8, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        encode_packet(&mut out, seq, payload);
        out
    }

    const COLUMN: &[u8] = b"\x03def\0\0\0\x01v\0\x0c\x21\0\0\0\0\0\xfd\0\0\0\0\0";

    fn all() -> Vec<Capabilities> {
        candidates(CLIENT_BASE)
    }

    #[test]
    fn an_eof_after_the_columns_settles_it() {
        // One column, its EOF (5 bytes: EOF mode), one row, the final EOF.
        let mut bytes = packet(1, &[1]);
        bytes.extend(packet(2, COLUMN));
        bytes.extend(packet(3, &[0xFE, 0, 0, 2, 0]));
        bytes.extend(packet(4, b"\x011"));
        bytes.extend(packet(5, &[0xFE, 0, 0, 2, 0]));
        let mut guess = Guess::new(&all(), AnswerForm::Results(RowFormat::Text), 1, &[]);
        let Verdict::Settled { caps, done: Some(reading), unread, .. } = guess.feed(&bytes, 77) else {
            panic!("not settled")
        };
        assert!(!caps.contains(Capabilities::DEPRECATE_EOF));
        assert!(!caps.contains(Capabilities::MARIADB_CLIENT_CACHE_METADATA));
        assert_eq!((reading.summary.rows, reading.at_ns, unread.len()), (1, 77, 0));
    }

    #[test]
    fn deprecate_eof_and_cache_metadata_are_found() {
        // A column count with the metadata flag, the column, a row, the 0xFE OK.
        let mut bytes = packet(1, &[1, 1]);
        bytes.extend(packet(2, COLUMN));
        bytes.extend(packet(3, b"\x011"));
        bytes.extend(packet(4, &[0xFE, 0, 0, 2, 0, 0, 0]));
        let mut guess = Guess::new(&all(), AnswerForm::Results(RowFormat::Text), 1, &[]);
        let Verdict::Settled { caps, done: Some(_), .. } = guess.feed(&bytes, 1) else { panic!("not settled") };
        assert!(caps.contains(Capabilities::DEPRECATE_EOF));
        assert!(caps.contains(Capabilities::MARIADB_CLIENT_CACHE_METADATA));
    }

    #[test]
    fn an_ok_reads_alike_under_all_and_waits_for_the_next_command() {
        let mut guess = Guess::new(&all(), AnswerForm::Status, 1, &[]);
        assert!(matches!(guess.feed(&packet(1, &[0, 1, 0, 2, 0, 0, 0]), 5), Verdict::Open));
        assert_eq!(guess.hold_from(), Some(5));
        let (caps, reading) = guess.close().unwrap();
        assert_eq!((caps.len(), reading.summary.affected_rows, reading.at_ns), (4, 1, 5));
    }

    #[test]
    fn garbage_fits_none() {
        let mut guess = Guess::new(&all(), AnswerForm::Results(RowFormat::Text), 1, &[]);
        assert!(matches!(guess.feed(&packet(7, &[0x42, 0x42]), 5), Verdict::NoneFits));
    }
}
