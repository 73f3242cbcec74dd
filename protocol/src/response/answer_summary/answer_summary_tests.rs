//! The summariser on the MariaDB 10.11 captures (testdata/, capture.py),
//! against the allocating decoders, and on synthesized answers for the
//! rarer forms.

use super::*;
use crate::framing::{decode_packet, encode_packet};
use crate::response::prepare_ok::{PrepareOutcome, PrepareResponse};
use crate::response::resultset::{QueryResult, ResultSetDecoder};
use crate::response::text_row::encode_text_row;

const BASE: Capabilities = crate::response::testdata::CAPTURE_CAPABILITIES;
const DEOF: Capabilities = BASE.union(Capabilities::DEPRECATE_EOF);
const EXT: Capabilities =
    DEOF.union(Capabilities::MARIADB_CLIENT_EXTENDED_TYPE_INFO).union(Capabilities::MARIADB_CLIENT_CACHE_METADATA);
const VARIANTS: [(&str, Capabilities); 3] = [("eof", BASE), ("deof", DEOF), ("ext", EXT)];

macro_rules! capture {
    ($name:literal) => {
        ($name, include_bytes!(concat!("../testdata/", $name, ".bin")).as_slice())
    };
}

const CAPTURES: &[(&str, &[u8])] = &[
    capture!("text_alltypes_eof"),
    capture!("text_alltypes_deof"),
    capture!("text_alltypes_ext"),
    capture!("exec_alltypes_eof"),
    capture!("exec_alltypes_deof"),
    capture!("exec_alltypes_ext"),
    capture!("exec_alltypes_again_ext"),
    capture!("prepare_alltypes_eof"),
    capture!("prepare_alltypes_deof"),
    capture!("prepare_alltypes_ext"),
    capture!("exec_point_select_eof"),
    capture!("exec_point_select_ext"),
    capture!("exec_point_select_again_ext"),
    capture!("exec_point_select_miss_deof"),
    capture!("prepare_point_select_ext"),
    capture!("text_empty_eof"),
    capture!("text_empty_deof"),
    capture!("text_multi_eof"),
    capture!("text_multi_deof"),
    capture!("text_call_eof"),
    capture!("text_call_deof"),
    capture!("exec_call_eof"),
    capture!("exec_call_deof"),
    capture!("text_update_eof"),
    capture!("text_update_deof"),
    capture!("text_error_eof"),
    capture!("text_error_deof"),
    capture!("prepare_error_eof"),
    capture!("prepare_error_deof"),
    capture!("text_local_infile_eof"),
];

fn capture(name: &str) -> &'static [u8] {
    CAPTURES.iter().find(|(n, _)| *n == name).map(|(_, b)| *b).unwrap_or_else(|| panic!("no capture {name}"))
}

fn caps_of(name: &str) -> Capabilities {
    let tag = name.rsplit('_').next().unwrap();
    VARIANTS.iter().find(|(t, _)| *t == tag).map(|(_, c)| *c).unwrap()
}

fn form_of(name: &str) -> AnswerForm {
    match name.split('_').next().unwrap() {
        "text" => AnswerForm::Results(RowFormat::Text),
        "exec" => AnswerForm::Results(RowFormat::Binary),
        "prepare" => AnswerForm::Prepare,
        other => panic!("no form for {other}"),
    }
}

/// The summary of `bytes` read in pieces of `chunk` bytes through a buffer
/// that keeps what was not consumed, as a caller does.
fn summarise(
    bytes: &[u8],
    caps: Capabilities,
    form: AnswerForm,
    cached: &[ColumnShape],
    chunk: usize,
) -> Result<AnswerSummary, CodecError> {
    let mut summariser = AnswerSummariser::new(caps).strict();
    assert!(summariser.begin(form, 1, cached)?);
    let mut buffer = Vec::new();
    for piece in bytes.chunks(chunk) {
        buffer.extend_from_slice(piece);
        let progress = summariser.advance(&buffer)?;
        buffer.drain(..progress.consumed);
        if let Some(summary) = progress.done {
            assert!(buffer.is_empty(), "the answer ends with the input");
            assert!(!summariser.is_reading());
            return Ok(summary);
        }
    }
    panic!("the input ended before the answer");
}

/// The result columns a client knows for an execute under
/// MARIADB_CLIENT_CACHE_METADATA: those of the statement's prepare.
fn cached_for(name: &str) -> Vec<ColumnShape> {
    let Some(statement) = name.strip_prefix("exec_").and_then(|n| n.strip_suffix("_ext")) else { return Vec::new() };
    let statement = statement.trim_end_matches("_again").trim_end_matches("_miss");
    let mut summariser = AnswerSummariser::new(EXT);
    summariser.begin(AnswerForm::Prepare, 1, &[]).unwrap();
    summariser.advance(capture(&format!("prepare_{statement}_ext"))).unwrap().done.unwrap();
    summariser.prepared_columns().to_vec()
}

fn whole(name: &str) -> AnswerSummary {
    summarise(capture(name), caps_of(name), form_of(name), &cached_for(name), usize::MAX).unwrap()
}

fn decoded(name: &str) -> crate::response::Response {
    let caps = caps_of(name);
    let format = match form_of(name) {
        AnswerForm::Results(format) => format,
        _ => unreachable!(),
    };
    let bytes = capture(name);
    let mut decoder = ResultSetDecoder::new(caps, format);
    let (mut at, mut seq) = (0, 1);
    loop {
        let frame = decode_packet(&bytes[at..], seq, usize::MAX).unwrap().unwrap();
        at += frame.consumed;
        seq = frame.next_seq;
        if let Some(response) = decoder.feed(&frame.payload).unwrap() {
            return response;
        }
    }
}

#[test]
fn captured_answers_read_whole_and_byte_by_byte_alike() {
    for (name, bytes) in CAPTURES.iter().filter(|(n, _)| !n.contains("again") && !n.contains("infile")) {
        let one = whole(name);
        let bytewise = summarise(bytes, caps_of(name), form_of(name), &cached_for(name), 1).unwrap();
        assert_eq!(one, bytewise, "{name}");
    }
}

#[test]
fn result_sets_agree_with_the_decoder() {
    // The decoder needs the cached columns given apart: the ext executes are left out.
    let compared = CAPTURES.iter().filter(|(n, _)| {
        (n.starts_with("text_") || n.starts_with("exec_")) && !n.contains("again") && !n.contains("infile")
    });
    for (name, _) in compared.filter(|(n, _)| !(n.starts_with("exec_") && n.ends_with("_ext"))) {
        let summary = whole(name);
        let response = decoded(name);
        let sets: Vec<_> = response.result_sets().collect();
        assert_eq!(summary.result_sets as usize, sets.len(), "{name}");
        assert_eq!(summary.rows, sets.iter().map(|s| s.rows.len() as u64).sum::<u64>(), "{name}");
        assert_eq!(summary.columns, sets.first().map_or(0, |s| s.columns.len() as u64), "{name}");
        assert_eq!(summary.error, response.error, "{name}");
        let affected: u64 = response
            .results
            .iter()
            .map(|r| match r {
                QueryResult::Ok(ok) => ok.affected_rows,
                QueryResult::ResultSet(rs) => rs.end.affected_rows,
            })
            .sum();
        assert_eq!(summary.affected_rows, affected, "{name}");
        assert_eq!(summary.row_checksum.is_some(), !sets.is_empty(), "{name}");
        // The checksum is the sum of each row's text form's hash.
        let mut expected = RowChecksum::default();
        for set in &sets {
            for row in set.text_rows().unwrap() {
                let mut text = Vec::new();
                for value in row {
                    match value {
                        Some(v) => text.put_lenenc_bytes(&v),
                        None => text.push(0xFB),
                    }
                }
                expected.add_row(&text);
            }
        }
        if !sets.is_empty() {
            assert_eq!(summary.row_checksum, Some(expected.value()), "{name}");
        }
    }
}

#[test]
fn kinds_and_figures_of_known_answers() {
    let update = whole("text_update_deof");
    assert_eq!((update.kind, update.affected_rows, update.result_sets), (AnswerKind::Ok, 0, 0));
    let error = whole("text_error_eof");
    assert_eq!(error.kind, AnswerKind::Error);
    let err = error.error.unwrap();
    assert_eq!((err.code, err.sql_state_str()), (1146, Some("42S02")));
    let multi = whole("text_multi_eof");
    assert_eq!((multi.kind, multi.result_sets, multi.rows, multi.affected_rows), (AnswerKind::ResultSet, 2, 2, 2));
    assert_ne!(multi.last_insert_id, 0);
    let empty = whole("text_empty_deof");
    assert_eq!((empty.kind, empty.columns, empty.rows), (AnswerKind::ResultSet, 2, 0));
    assert_eq!(empty.row_checksum, Some(0));
    let all = whole("text_alltypes_eof");
    assert_eq!((all.columns, all.rows), (29, 4));
}

#[test]
fn the_checksum_is_the_same_over_the_text_and_binary_protocols() {
    for tag in ["eof", "deof", "ext"] {
        let text = whole(&format!("text_alltypes_{tag}"));
        let binary = whole(&format!("exec_alltypes_{tag}"));
        assert_eq!(text.rows, binary.rows);
        assert_eq!(text.row_checksum, binary.row_checksum, "{tag}");
    }
    assert_eq!(whole("exec_call_eof").row_checksum, whole("text_call_eof").row_checksum);
}

#[test]
fn prepares_are_summed_up_and_their_columns_kept() {
    for tag in ["eof", "deof", "ext"] {
        let name = format!("prepare_alltypes_{tag}");
        let mut summariser = AnswerSummariser::new(caps_of(&name));
        summariser.begin(AnswerForm::Prepare, 1, &[]).unwrap();
        let progress = summariser.advance(capture(&name)).unwrap();
        let summary = progress.done.unwrap();
        assert_eq!(progress.consumed, capture(&name).len());
        assert_eq!(summary.kind, AnswerKind::Prepared);
        let PrepareOutcome::Prepared(stmt) = feed_packets(capture(&name), PrepareResponse::new(caps_of(&name))) else {
            panic!("prepare failed")
        };
        let prepared = summary.prepared.unwrap();
        assert_eq!(prepared.statement_id, stmt.ok.statement_id);
        assert_eq!((prepared.params, prepared.columns), (0, 29));
        let shapes: Vec<ColumnShape> = stmt.columns.iter().map(ColumnShape::of).collect();
        assert_eq!(summariser.prepared_columns(), shapes.as_slice());
    }
    let failed = whole("prepare_error_deof");
    assert_eq!((failed.kind, failed.error.unwrap().code), (AnswerKind::Error, 1064));
}

fn feed_packets(bytes: &[u8], mut reader: PrepareResponse) -> PrepareOutcome {
    let (mut at, mut seq) = (0, 1);
    loop {
        let frame = decode_packet(&bytes[at..], seq, usize::MAX).unwrap().unwrap();
        at += frame.consumed;
        seq = frame.next_seq;
        if let Some(outcome) = reader.feed(&frame.payload).unwrap() {
            return outcome;
        }
    }
}

/// MARIADB_CLIENT_CACHE_METADATA: an execute after the first skips the
/// column definitions; the prepare's columns stand in for them.
#[test]
fn skipped_metadata_takes_the_prepares_columns() {
    let mut summariser = AnswerSummariser::new(EXT);
    summariser.begin(AnswerForm::Prepare, 1, &[]).unwrap();
    summariser.advance(capture("prepare_alltypes_ext")).unwrap().done.unwrap();
    let cached = summariser.prepared_columns().to_vec();
    let text = whole("text_alltypes_ext");
    let again = summarise(capture("exec_alltypes_again_ext"), EXT, form_of("exec_"), &cached, 7).unwrap();
    assert_eq!((again.rows, again.row_checksum), (text.rows, text.row_checksum));
    // Without them the rows are counted and the checksum is missing, not made up.
    let blind = summarise(capture("exec_alltypes_again_ext"), EXT, form_of("exec_"), &[], 7).unwrap();
    assert_eq!((blind.rows, blind.row_checksum), (4, None));
}

/// One column definition (a VAR_STRING named `v`).
const COLUMN: &[u8] = b"\x03def\0\0\0\x01v\0\x0c\x21\0\0\0\0\0\xfd\0\0\0\0\0";

fn packet(seq: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    encode_packet(&mut out, seq, payload);
    out
}

#[test]
fn a_row_in_several_fragments_hashes_as_one() {
    // A text row of one value just over 16 MiB: two fragments.
    let value = vec![b'x'; MAX_FRAGMENT + 10];
    let mut bytes = packet(1, &[1]);
    bytes.extend(packet(2, COLUMN));
    let mut row = Vec::new();
    encode_text_row([Some(value.as_slice())], 3, &mut row);
    bytes.extend(&row);
    bytes.extend(packet(5, &[0xFE, 0, 0, 2, 0, 0, 0]));
    let summary = summarise(&bytes, DEOF, AnswerForm::Results(RowFormat::Text), &[], 1 << 20).unwrap();
    let mut text = Vec::new();
    text.put_lenenc_bytes(&value);
    let mut expected = RowChecksum::default();
    expected.add_row(&text);
    assert_eq!((summary.rows, summary.row_checksum), (1, Some(expected.value())));
}

#[test]
fn local_infile_reads_on_after_the_clients_file() {
    let request = capture("text_local_infile_eof");
    let mut summariser = AnswerSummariser::new(BASE);
    summariser.begin(AnswerForm::Results(RowFormat::Text), 1, &[]).unwrap();
    let progress = summariser.advance(request).unwrap();
    assert_eq!((progress.consumed, progress.done), (request.len(), None));
    // The client sent its file (sequence ids 2 and 3); the server's OK is 4.
    let done = summariser.advance(&packet(4, &[0, 3, 0, 2, 0, 0, 0])).unwrap().done.unwrap();
    assert!(done.local_infile);
    assert_eq!((done.kind, done.affected_rows), (AnswerKind::Ok, 3));
}

#[test]
fn change_user_reads_the_authentication_to_its_end() {
    let mut bytes = packet(1, b"\xfemysql_native_password\0abcdefghijklmnopqrst\0");
    bytes.extend(packet(3, &[0, 0, 0, 2, 0, 0, 0]));
    let summary = summarise(&bytes, DEOF, AnswerForm::ChangeUser, &[], 3).unwrap();
    assert_eq!(summary.kind, AnswerKind::Ok);
    assert!(AnswerForm::ChangeUser.client_speaks_during());
    let refused =
        summarise(&packet(1, b"\xff\x15\x04#28000Access denied"), DEOF, AnswerForm::ChangeUser, &[], 3).unwrap();
    assert_eq!(refused.error.unwrap().code, 1045);
}

#[test]
fn progress_reports_are_passed_over() {
    let caps = DEOF.union(Capabilities::MARIADB_CLIENT_PROGRESS);
    let mut bytes = packet(1, b"\xff\xff\xff\x01\x01\x02\x10\x27\x00\x00\x05stage");
    bytes.extend(packet(2, &[0, 5, 0, 2, 0, 0, 0]));
    let summary = summarise(&bytes, caps, AnswerForm::Results(RowFormat::Text), &[], 4).unwrap();
    assert_eq!((summary.kind, summary.affected_rows), (AnswerKind::Ok, 5));
}

#[test]
fn statistics_and_field_list() {
    let stats = summarise(&packet(1, b"Uptime: 5  Threads: 1"), DEOF, AnswerForm::Statistics, &[], 5).unwrap();
    assert_eq!(stats.kind, AnswerKind::Text);
    let mut bytes = packet(1, b"\x03def\0\0\0\x01v\0\x0c\x21\0\0\0\0\0\xfd\0\0\0\0\0");
    bytes.extend(packet(2, &[0xFE, 0, 0, 2, 0]));
    let fields = summarise(&bytes, BASE, AnswerForm::FieldList, &[], 5).unwrap();
    assert_eq!((fields.kind, fields.columns), (AnswerKind::FieldList, 1));
}

#[test]
fn commands_without_answers_and_streams() {
    let mut summariser = AnswerSummariser::new(DEOF);
    for command in [com::COM_QUIT, com::COM_STMT_CLOSE, com::COM_STMT_SEND_LONG_DATA] {
        assert!(!summariser.begin_command(&[command, 1, 0, 0, 0], 1, &[]).unwrap());
        assert!(!summariser.is_reading());
    }
    assert!(summariser.begin_command(&[0x12], 1, &[]).is_err());
    assert!(summariser.advance(&[]).is_err(), "advance without an answer begun is the caller's error");
}

#[test]
fn strict_refuses_a_jump_the_default_adopts() {
    let bytes = packet(5, &[0, 0, 0, 2, 0, 0, 0]);
    assert!(matches!(
        summarise(&bytes, DEOF, AnswerForm::Status, &[], 99),
        Err(CodecError::Protocol(ProtocolError::OutOfSync { expected: 1, got: 5 }))
    ));
    let mut lenient = AnswerSummariser::new(DEOF);
    lenient.begin(AnswerForm::Status, 1, &[]).unwrap();
    assert!(lenient.advance(&bytes).unwrap().done.is_some());
}

#[test]
fn garbage_is_an_error_never_a_panic() {
    let inputs: [&[u8]; 4] = [
        b"\x01\x00\x00\x01\xfb",
        b"\x02\x00\x00\x01\x01\x00",
        b"\x00\x00\x00\x01",
        b"\x05\x00\x00\x01\xfe\xff\xff\xff\xff",
    ];
    for bytes in inputs {
        for form in [AnswerForm::Results(RowFormat::Binary), AnswerForm::Prepare, AnswerForm::Status] {
            let mut summariser = AnswerSummariser::new(DEOF);
            summariser.begin(form, 1, &[]).unwrap();
            let _ = summariser.advance(bytes);
        }
    }
}

/// Found by the answer_summary fuzz target: an empty packet where a row
/// belongs was read as a row starting with the next packet's first byte,
/// when that byte was in the same input (and not when it came later).
#[test]
fn an_empty_row_packet_is_refused_however_the_bytes_come() {
    let mut bytes = packet(1, &[1]);
    bytes.extend(packet(2, COLUMN));
    bytes.extend(packet(3, &[]));
    bytes.extend(packet(4, b"\x011"));
    for chunk in [1, 5, bytes.len()] {
        let result = summarise(&bytes, DEOF, AnswerForm::Results(RowFormat::Text), &[], chunk);
        assert!(
            matches!(result, Err(CodecError::Protocol(ProtocolError::Malformed("empty row packet")))),
            "{result:?}"
        );
    }
}
