//! The compressed protocol on the null server's side, as MariaDB's
//! `net_serv.cc` speaks it: a command arrives in compressed packets
//! numbered from 0; the answer goes out in compressed packets of its own,
//! numbered on from the last one read. The zlib state is the loop
//! thread's, shared by its connections, and so are the answers already
//! deflated: the null server's answers are canned, the same few recur, and
//! deflating each anew (tens of microseconds) would make the null server,
//! not the client under test, the bottleneck.

use std::cell::Cell;
use std::collections::HashMap;

use wirebench_protocol::compress::{
    encode_chunk, inflate_payload, CompressedHeader, COMPRESSED_HEADER_LEN, MAX_COMPRESSED_PAYLOAD,
};

use super::null_session::{Handled, NullSession};
use crate::transport::with_thread_codec;

/// Answers up to this size are kept once deflated.
const CACHED_ANSWER_MAX: usize = 64 * 1024;
/// Distinct answers kept per loop thread; past that the cache starts over.
const CACHED_ANSWERS: usize = 1024;

/// An answer's plain bytes, and its compressed packet with sequence id 0.
type Deflated = HashMap<Box<[u8]>, Box<[u8]>>;

thread_local! {
    static DEFLATED: Cell<Deflated> = Cell::new(HashMap::new());
}

/// One compressed connection's buffers and sequence state.
#[derive(Debug, Default)]
pub struct ServerCompression {
    /// Commands inflated and not yet handled (a part of one, at most).
    plain: Vec<u8>,
    /// The answer being produced, before compression.
    answer: Vec<u8>,
    /// The compressed id the next packet must carry.
    next_seq: u8,
}

impl ServerCompression {
    pub fn new() -> Self {
        ServerCompression::default()
    }

    /// Reads every complete compressed packet at the start of `input`,
    /// hands the commands in it to `session`, and appends their answers,
    /// compressed, to `out`. A packet out of sequence or corrupt closes the
    /// connection, as MariaDB does.
    pub fn handle(&mut self, session: &mut NullSession, input: &[u8], out: &mut Vec<u8>) -> Handled {
        let mut handled = Handled { consumed: 0, commands: 0, close: false };
        while let Some(header) = input.get(handled.consumed..).and_then(CompressedHeader::parse) {
            let start = handled.consumed + COMPRESSED_HEADER_LEN;
            let Some(payload) = input.get(start..start + header.payload_len) else { break };
            // A new command starts the numbering at 0; its further packets go on from there.
            let expected = if self.plain.is_empty() { 0 } else { self.next_seq };
            let inflated = with_thread_codec(|inflater, _| inflate_payload(header, payload, &mut self.plain, inflater));
            if header.seq != expected || inflated.is_err() {
                handled.close = true;
                handled.consumed = input.len();
                return handled;
            }
            handled.consumed = start + header.payload_len;
            self.next_seq = header.seq.wrapping_add(1);
            let answered = session.handle(&self.plain, &mut self.answer);
            self.plain.drain(..answered.consumed.min(self.plain.len()));
            handled.commands += answered.commands;
            self.flush_answer(out);
            if answered.close {
                handled.close = true;
                return handled;
            }
        }
        handled
    }

    /// Compresses the answer produced so far, numbered on from the command.
    fn flush_answer(&mut self, out: &mut Vec<u8>) {
        if self.answer.is_empty() {
            return;
        }
        if self.answer.len() <= CACHED_ANSWER_MAX {
            self.flush_cached(out);
            return;
        }
        with_thread_codec(|_, deflater| {
            for chunk in self.answer.chunks(MAX_COMPRESSED_PAYLOAD) {
                encode_chunk(chunk, self.next_seq, out, deflater);
                self.next_seq = self.next_seq.wrapping_add(1);
            }
        });
        self.answer.clear();
    }

    /// A small answer in one compressed packet, deflated once per thread.
    fn flush_cached(&mut self, out: &mut Vec<u8>) {
        let mut cache = DEFLATED.try_with(Cell::take).unwrap_or_default();
        let at = out.len();
        match cache.get(self.answer.as_slice()) {
            Some(packet) => out.extend_from_slice(packet),
            None => {
                with_thread_codec(|_, deflater| encode_chunk(&self.answer, 0, out, deflater));
                if cache.len() >= CACHED_ANSWERS {
                    cache.clear();
                }
                let packet = out.get(at..).unwrap_or_default();
                cache.insert(self.answer.as_slice().into(), packet.into());
            }
        }
        if let Some(seq) = out.get_mut(at + 3) {
            *seq = self.next_seq;
        }
        self.next_seq = self.next_seq.wrapping_add(1);
        let _ = DEFLATED.try_with(|shared| shared.set(cache));
        self.answer.clear();
    }
}
