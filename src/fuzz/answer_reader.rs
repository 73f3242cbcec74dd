//! Reading a server's answer to one fuzzed packet without trusting it:
//! packets are split by their headers (sequence ids are not checked, as
//! fuzzed commands shift them), and the answer's shape decides when it is
//! complete: one packet, a PREPARE_OK and its definitions, a result set to
//! its terminator (several with SERVER_MORE_RESULTS_EXISTS). Its first
//! packet gives the answer's class.

use std::collections::VecDeque;

use wirebench_protocol::buf::Reader;
use wirebench_protocol::constants::{Capabilities, StatusFlags};
use wirebench_protocol::framing::encode_packet;
use wirebench_protocol::response::ok::is_result_terminator;
use wirebench_protocol::response::{EofPacket, ErrPacket, OkPacket, PrepareOk};

use super::conn::{FuzzConn, Gone};
use super::feedback_state::AnswerClass;
use super::vigil::Patience;

/// The shape of answer a packet calls for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerShape {
    /// None (COM_STMT_CLOSE, COM_STMT_SEND_LONG_DATA, an SSLRequest).
    Nothing,
    /// One packet (OK, ERR, EOF, or COM_STATISTICS's text).
    One,
    /// OK, ERR, or result sets (COM_QUERY, COM_STMT_EXECUTE).
    Results,
    /// PREPARE_OK and its parameter and column definitions, or ERR.
    Prepare,
    /// Rows up to a terminator (COM_STMT_FETCH).
    Rows,
    /// Column definitions up to an EOF (COM_FIELD_LIST).
    Definitions,
    /// The server closes the connection (COM_QUIT).
    Closing,
}

/// What came back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub class: AnswerClass,
    /// The ERR's code (the first ERR of the answer), 0 otherwise.
    pub code: u16,
    /// That ERR's message.
    pub message: Vec<u8>,
    /// The connection ended while reading.
    pub gone: Option<Gone>,
    /// PREPARE_OK's statement id.
    pub statement_id: Option<u32>,
}

impl Answer {
    pub fn of(class: AnswerClass) -> Answer {
        Answer { class, code: 0, message: Vec::new(), gone: None, statement_id: None }
    }

    pub fn gone(gone: Gone) -> Answer {
        let class = match gone {
            Gone::Closed => AnswerClass::Closed,
            Gone::Reset => AnswerClass::Reset,
            Gone::Timeout => AnswerClass::NoReply,
            Gone::Garbled => AnswerClass::Garbled,
        };
        Answer { gone: Some(gone), ..Answer::of(class) }
    }
}

/// What follows in an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Definitions(u64),
    Eof,
    /// Rows up to a terminator.
    Rows,
    /// Definitions up to an EOF.
    DefinitionsToEof,
}

/// The walk through one answer.
struct Walk {
    expect: AnswerShape,
    caps: Capabilities,
    /// What comes next; empty at the start of a result.
    parts: VecDeque<Part>,
    answer: Option<Answer>,
}

/// What the walk wants after a packet.
enum Fed {
    More,
    Done,
    /// LOAD DATA LOCAL INFILE: answer with an empty packet (no file is ever sent).
    SendEmpty,
}

impl Walk {
    fn first(&mut self, class: AnswerClass, code: u16) {
        self.answer.get_or_insert(Answer { code, ..Answer::of(class) });
    }

    fn feed(&mut self, payload: &[u8]) -> Fed {
        if let Some(part) = self.parts.front().copied() {
            return self.feed_part(part, payload);
        }
        let header = payload.first().copied();
        match header {
            Some(0xFF) => {
                self.first(AnswerClass::Err, err_code(payload));
                if let Some(answer) = &mut self.answer {
                    answer.message = err_message(payload);
                }
                Fed::Done
            }
            Some(0x00) if self.expect == AnswerShape::Prepare => self.prepare_ok(payload),
            Some(0x00) => {
                self.first(AnswerClass::Ok, 0);
                self.after_status(status(payload, self.caps))
            }
            Some(0xFE) if is_result_terminator(payload) => {
                self.first(AnswerClass::Eof, 0);
                self.after_status(status(payload, self.caps))
            }
            Some(0xFB) if self.expect == AnswerShape::Results => {
                self.first(AnswerClass::LocalInfile, 0);
                Fed::SendEmpty
            }
            _ => self.start_rows(payload),
        }
    }

    /// A packet that is not OK, ERR or EOF at the start of an answer.
    fn start_rows(&mut self, payload: &[u8]) -> Fed {
        match self.expect {
            AnswerShape::Results => {
                self.first(AnswerClass::ResultSet, 0);
                let mut r = Reader::new(payload);
                let Ok(columns) = r.lenenc_int("column count") else {
                    self.first(AnswerClass::Garbled, 0);
                    return Fed::Done;
                };
                let metadata_skipped =
                    self.caps.contains(Capabilities::MARIADB_CLIENT_CACHE_METADATA) && r.peek_u8() == Some(0);
                if !metadata_skipped {
                    self.parts.push_back(Part::Definitions(columns));
                }
                if !self.caps.contains(Capabilities::DEPRECATE_EOF) {
                    self.parts.push_back(Part::Eof);
                }
                self.parts.push_back(Part::Rows);
                Fed::More
            }
            AnswerShape::Rows => {
                self.first(AnswerClass::ResultSet, 0);
                self.parts.push_back(Part::Rows);
                Fed::More
            }
            AnswerShape::Definitions => {
                self.first(AnswerClass::ResultSet, 0);
                self.parts.push_back(Part::DefinitionsToEof);
                Fed::More
            }
            _ => {
                let text = payload.first().is_some_and(u8::is_ascii_graphic);
                self.first(if text { AnswerClass::Text } else { AnswerClass::Garbled }, 0);
                Fed::Done
            }
        }
    }

    fn prepare_ok(&mut self, payload: &[u8]) -> Fed {
        let Ok(ok) = PrepareOk::parse(payload) else {
            self.first(AnswerClass::Garbled, 0);
            return Fed::Done;
        };
        self.first(AnswerClass::PrepareOk, 0);
        if let Some(answer) = &mut self.answer {
            answer.statement_id = Some(ok.statement_id);
        }
        let eof = !self.caps.contains(Capabilities::DEPRECATE_EOF);
        for count in [ok.num_params, ok.num_columns] {
            if count > 0 {
                self.parts.push_back(Part::Definitions(u64::from(count)));
                if eof {
                    self.parts.push_back(Part::Eof);
                }
            }
        }
        if self.parts.is_empty() {
            Fed::Done
        } else {
            Fed::More
        }
    }

    fn feed_part(&mut self, part: Part, payload: &[u8]) -> Fed {
        if payload.first() == Some(&0xFF) {
            if let Some(answer) = &mut self.answer {
                answer.code = err_code(payload);
                answer.message = err_message(payload);
            }
            return Fed::Done;
        }
        match part {
            Part::Definitions(left) => {
                self.parts.pop_front();
                if left > 1 {
                    self.parts.push_front(Part::Definitions(left - 1));
                }
            }
            Part::Eof => {
                self.parts.pop_front();
            }
            Part::Rows | Part::DefinitionsToEof if is_result_terminator(payload) => {
                self.parts.pop_front();
                return self.after_status(status(payload, self.caps));
            }
            Part::Rows | Part::DefinitionsToEof => {}
        }
        if self.parts.is_empty() {
            Fed::Done
        } else {
            Fed::More
        }
    }

    /// After an OK or a terminator: another result follows, or the answer is over.
    fn after_status(&mut self, status: StatusFlags) -> Fed {
        self.parts.clear();
        if status.contains(StatusFlags::MORE_RESULTS_EXISTS) {
            Fed::More
        } else {
            Fed::Done
        }
    }
}

/// The code of an ERR payload (0 when too short).
pub fn err_code(payload: &[u8]) -> u16 {
    match payload {
        [_, a, b, ..] => u16::from_le_bytes([*a, *b]),
        _ => 0,
    }
}

/// The message of an ERR payload (empty when it does not parse).
pub fn err_message(payload: &[u8]) -> Vec<u8> {
    ErrPacket::parse(payload).map(|err| err.message.to_vec()).unwrap_or_default()
}

/// The status flags of an OK or EOF packet (none when it does not parse).
fn status(payload: &[u8], caps: Capabilities) -> StatusFlags {
    let caps = caps | Capabilities::PROTOCOL_41;
    if payload.len() <= 5 {
        return EofPacket::parse(payload, caps).map(|eof| eof.status).unwrap_or_default();
    }
    OkPacket::parse(payload, caps).map(|ok| ok.status).unwrap_or_default()
}

/// Reads the answer to one packet, as patient as `patience`. `caps` are
/// the session's (DEPRECATE_EOF decides how result sets end).
pub async fn read_answer(
    conn: &mut FuzzConn,
    expect: AnswerShape,
    caps: Capabilities,
    patience: &mut Patience<'_>,
) -> Answer {
    if expect == AnswerShape::Nothing {
        return Answer::of(AnswerClass::Silent);
    }
    let mut walk = Walk { expect, caps, parts: VecDeque::new(), answer: None };
    loop {
        let front = match conn.front() {
            Ok(front) => front,
            Err(gone) => return ended(walk.answer, gone),
        };
        let Some(front) = front else {
            if let Err(gone) = patience.fill(conn).await {
                return ended(walk.answer, gone);
            }
            continue;
        };
        let fed = walk.feed(conn.front_payload(front));
        conn.consume(front);
        match fed {
            Fed::More => {}
            Fed::Done if expect == AnswerShape::Closing => {}
            Fed::Done => return walk.answer.unwrap_or(Answer::of(AnswerClass::Garbled)),
            Fed::SendEmpty => {
                let mut empty = Vec::new();
                encode_packet(&mut empty, front.seq.wrapping_add(1), &[]);
                if let Err(gone) = conn.send(&empty, &[], patience.deadline()).await {
                    return ended(walk.answer, gone);
                }
            }
        }
    }
}

/// The answer so far, with the end of the connection noted; the end itself
/// when nothing came first.
fn ended(answer: Option<Answer>, gone: Gone) -> Answer {
    match answer {
        Some(answer) => Answer { gone: Some(gone), ..answer },
        None => Answer::gone(gone),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walk(expect: AnswerShape, caps: Capabilities, packets: &[&[u8]]) -> (Option<Answer>, usize) {
        let mut w = Walk { expect, caps, parts: VecDeque::new(), answer: None };
        for (i, p) in packets.iter().enumerate() {
            if let Fed::Done = w.feed(p) {
                return (w.answer, i + 1);
            }
        }
        (w.answer, usize::MAX)
    }

    const OK: &[u8] = &[0, 0, 0, 2, 0, 0, 0];
    const OK_MORE: &[u8] = &[0, 0, 0, 0x0a, 0, 0, 0];
    const EOF: &[u8] = &[0xFE, 0, 0, 2, 0];

    #[test]
    fn result_sets_end_at_their_terminator_and_chain_with_more_results() {
        let deof = Capabilities::DEPRECATE_EOF;
        let packets: [&[u8]; 5] = [&[1], b"coldef", b"\x01x", &[0xFE, 0, 0, 0x0a, 0, 0, 0], OK];
        let (answer, used) = walk(AnswerShape::Results, deof, &packets);
        assert_eq!((answer.unwrap().class, used), (AnswerClass::ResultSet, 5));
        let packets: [&[u8]; 5] = [&[1], b"coldef", EOF, b"\x01x", EOF];
        assert_eq!(walk(AnswerShape::Results, Capabilities::empty(), &packets).1, 5);
        assert_eq!(walk(AnswerShape::Results, deof, &[OK_MORE, OK]).1, 2);
    }

    #[test]
    fn prepare_reads_its_definitions() {
        // id 7, 1 column, 2 params; without DEPRECATE_EOF: 2 defs, EOF, 1 def, EOF.
        let ok: &[u8] = &[0, 7, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0];
        let (answer, used) = walk(AnswerShape::Prepare, Capabilities::empty(), &[ok, b"p", b"p", EOF, b"c", EOF]);
        let answer = answer.unwrap();
        assert_eq!((answer.class, answer.statement_id, used), (AnswerClass::PrepareOk, Some(7), 6));
    }

    #[test]
    fn errors_and_single_packets() {
        let err: &[u8] = b"\xff\x1a\x04#HY000Unknown prepared statement handler";
        let (answer, used) = walk(AnswerShape::Results, Capabilities::empty(), &[err]);
        let answer = answer.unwrap();
        assert_eq!((answer.class, answer.code, used), (AnswerClass::Err, 1050, 1));
        assert_eq!(answer.message, b"Unknown prepared statement handler");
        let (answer, _) = walk(AnswerShape::One, Capabilities::empty(), &[b"Uptime: 1  Threads: 1"]);
        assert_eq!(answer.unwrap().class, AnswerClass::Text);
        let (answer, used) = walk(AnswerShape::Definitions, Capabilities::empty(), &[b"\x03def", b"\x03def", EOF]);
        assert_eq!((answer.unwrap().class, used), (AnswerClass::ResultSet, 3));
    }
}
