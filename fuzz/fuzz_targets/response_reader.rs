//! The hot-path ResponseReader over arbitrary server bytes, checked against
//! itself and against the allocating ResultSetDecoder.
//!
//! Input: a parameter byte (capability set in bits 0..3, row format in bit
//! 3), two split points, then the response bytes (headers included,
//! sequence ids from 1).
//!
//! 1. Whole vs chunked: the reader given everything at once and the reader
//!    given the bytes in three chunks through a buffer (unconsumed bytes kept,
//!    as a driver does) must consume the same bytes and reach the same result.
//! 2. Reader vs decoder: when ResultSetDecoder, fed the packets one by one,
//!    completes a response, the reader must complete the same response from
//!    the same bytes with the same counts, status and error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wirebench_protocol::response::{
    ErrorInfo, Outcome, QueryResult, Response, ResponseReader, ResultSetDecoder, RowFormat,
};
use wirebench_protocol::{Capabilities, CodecError, StatusFlags, UsageError};
use wirebench_protocol_fuzz::{split_packets, Input, CAPABILITY_SETS};

/// The reader's result, with the ERR message as a range of the whole input.
type ReaderResult = Result<(Option<Outcome>, usize), CodecError>;

fn read(caps: Capabilities, format: RowFormat, bytes: &[u8], ends: &[usize]) -> ReaderResult {
    let mut reader = ResponseReader::new(caps, format);
    let mut consumed = 0usize;
    for &end in ends.iter().chain([&bytes.len()]) {
        let chunk = &bytes[consumed..end.max(consumed)];
        let progress = reader.advance(chunk)?;
        assert!(progress.consumed <= chunk.len(), "consumed more than it was given");
        let base = consumed;
        consumed += progress.consumed;
        if let Some(mut outcome) = progress.done {
            assert!(reader.is_done());
            assert!(
                matches!(reader.advance(&bytes[consumed..]), Err(CodecError::Usage(UsageError::OutOfOrder { .. }))),
                "a finished reader took more input"
            );
            if let Some(ErrorInfo { message, .. }) = outcome.error.as_mut() {
                assert!(message.end <= progress.consumed, "ERR message outside the consumed bytes");
                *message = message.start + base..message.end + base;
            }
            // reset() must give a reader that walks the same bytes the same way.
            reader.reset();
            let again = reader.advance(&bytes[..consumed]).expect("a reset reader re-reads a complete response");
            assert_eq!(again.consumed, consumed);
            return Ok((Some(outcome), consumed));
        }
    }
    Ok((None, consumed))
}

/// Feeds the decoder packet by packet; returns the response and the bytes it used.
fn decode(caps: Capabilities, format: RowFormat, bytes: &[u8]) -> Option<(Response, usize)> {
    let (packets, ends) = split_packets(bytes, 1);
    let mut decoder = ResultSetDecoder::new(caps, format);
    for (payload, end) in packets.iter().zip(ends) {
        match decoder.feed(payload) {
            Ok(None) => {}
            Ok(Some(response)) => return Some((response, end)),
            Err(_) => return None,
        }
    }
    None
}

/// What the reader should have summed up from a decoded response.
fn expected_outcome(response: &Response) -> (u32, u64, u64, u64, u16, StatusFlags) {
    let (mut sets, mut rows, mut affected, mut last_id, mut warnings, mut status) =
        (0u32, 0u64, 0u64, 0u64, 0u16, StatusFlags::default());
    for result in &response.results {
        let ok = match result {
            QueryResult::Ok(ok) => ok,
            QueryResult::ResultSet(rs) => {
                sets += 1;
                rows += rs.rows.len() as u64;
                &rs.end
            }
            other => panic!("a result this target does not know how to check: {other:?}"),
        };
        affected = affected.saturating_add(ok.affected_rows);
        if ok.last_insert_id != 0 {
            last_id = ok.last_insert_id;
        }
        warnings = warnings.saturating_add(ok.warnings);
        status = ok.status;
    }
    (sets, rows, affected, last_id, warnings, status)
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let params = input.u8();
    let caps = CAPABILITY_SETS[usize::from(params & 7)];
    let format = if params & 8 != 0 { RowFormat::Text } else { RowFormat::Binary };
    let cuts = (input.u16(), input.u16());
    let bytes = input.rest();

    let whole = read(caps, format, bytes, &[]);
    let (a, b) = (usize::from(cuts.0) % (bytes.len() + 1), usize::from(cuts.1) % (bytes.len() + 1));
    let split = read(caps, format, bytes, &[a.min(b), a.max(b)]);
    assert_eq!(whole, split, "whole and chunked reading disagree (cuts at {a}, {b})");

    let Some((response, used)) = decode(caps, format, bytes) else { return };
    let Ok((Some(outcome), consumed)) = whole else {
        panic!("the decoder completed a response ({used} bytes) that the reader did not: {whole:?}");
    };
    assert_eq!(consumed, used, "reader and decoder used different bytes");
    let error = outcome.error.as_ref().map(|e| e.to_server_error(bytes));
    assert_eq!(error, response.error, "reader and decoder saw different errors");
    let (sets, rows, affected, last_id, warnings, status) = expected_outcome(&response);
    if response.error.is_none() {
        assert_eq!((outcome.result_sets, outcome.rows), (sets, rows), "result set and row counts");
        assert_eq!(outcome.status, status);
    } else {
        // The result set an ERR cut short is dropped by the decoder only.
        assert!(outcome.result_sets >= sets && outcome.rows >= rows);
    }
    assert_eq!((outcome.affected_rows, outcome.last_insert_id, outcome.warnings), (affected, last_id, warnings));
});
