//! AnswerSummariser over arbitrary server bytes, whole vs chunked, and
//! against the hot-path ResponseReader where both read a response.
//!
//! Input: a parameter byte (capability set in bits 0..3, the command's form
//! in bits 3..6, strict sequence in bit 6), two split points, then the
//! answer's bytes (headers included, sequence ids from 1).
#![no_main]

use libfuzzer_sys::fuzz_target;
use wirebench_protocol::response::{AnswerForm, AnswerSummariser, AnswerSummary, ResponseReader, RowFormat};
use wirebench_protocol::Capabilities;
use wirebench_protocol_fuzz::{Input, CAPABILITY_SETS};

const FORMS: [AnswerForm; 8] = [
    AnswerForm::Results(RowFormat::Text),
    AnswerForm::Results(RowFormat::Binary),
    AnswerForm::Prepare,
    AnswerForm::Status,
    AnswerForm::Fetch,
    AnswerForm::FieldList,
    AnswerForm::Statistics,
    AnswerForm::ChangeUser,
];

/// The summary and the bytes it used, the input given in pieces through a
/// buffer that keeps what was not consumed.
fn summarise(caps: Capabilities, form: AnswerForm, strict: bool, bytes: &[u8], cuts: &[usize]) -> Option<(AnswerSummary, usize)> {
    let mut summariser = AnswerSummariser::new(caps);
    if strict {
        summariser = summariser.strict();
    }
    summariser.begin(form, 1, &[]).ok()?;
    let mut buffer = Vec::new();
    let mut fed = 0usize;
    let mut used = 0usize;
    for &end in cuts.iter().chain([&bytes.len()]) {
        let end = end.max(fed);
        buffer.extend_from_slice(&bytes[fed..end]);
        fed = end;
        let progress = summariser.advance(&buffer).ok()?;
        assert!(progress.consumed <= buffer.len(), "consumed more than it was given");
        buffer.drain(..progress.consumed);
        used += progress.consumed;
        if let Some(summary) = progress.done {
            assert!(!summariser.is_reading());
            return Some((summary, used));
        }
    }
    None
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let params = input.u8();
    let caps = CAPABILITY_SETS[usize::from(params & 7)];
    let form = FORMS[usize::from(params >> 3 & 7)];
    let strict = params & 0x40 != 0;
    let cuts = (input.u16(), input.u16());
    let bytes = input.rest();
    let whole = summarise(caps, form, strict, bytes, &[]);
    let (a, b) = (usize::from(cuts.0) % (bytes.len() + 1), usize::from(cuts.1) % (bytes.len() + 1));
    let chunked = summarise(caps, form, strict, bytes, &[a.min(b), a.max(b)]);
    assert_eq!(whole, chunked, "whole and chunked reading disagree (cuts at {a}, {b})");
    // Where the hot-path reader reads the same bytes as a whole response,
    // the counts agree.
    let (Some((summary, used)), AnswerForm::Results(format)) = (whole, form) else { return };
    let mut reader = ResponseReader::new(caps, format);
    let Ok(progress) = reader.advance(&bytes[..used]) else { return };
    let Some(outcome) = progress.done else { return };
    assert_eq!(progress.consumed, used, "reader and summariser used different bytes");
    assert_eq!((outcome.rows, outcome.result_sets), (summary.rows, summary.result_sets));
    assert_eq!((outcome.affected_rows, outcome.last_insert_id), (summary.affected_rows, summary.last_insert_id));
    assert_eq!(outcome.error.map(|e| e.code), summary.error.map(|e| e.code));
});
