//! Result-set tests: the protocol documentation's examples, responses
//! captured from MariaDB 10.11 (testdata/, see capture.py and capture.sql),
//! synthesized responses, and property tests.

use super::*;
use crate::constants::{ColumnFlags, ColumnType};
use crate::framing::{decode_packet, encode_packet};
use crate::response::binary_row::encode_binary_row;
use crate::response::column::tests::{any_column, hex};
use crate::response::err::ErrPacket;
use crate::response::prepare_ok::{PrepareOutcome, PrepareResponse, PreparedStatement};
use crate::response::text_row::encode_text_row;
use proptest::prelude::*;

/// What capture.py negotiated.
const BASE: Capabilities = crate::response::testdata::CAPTURE_CAPABILITIES;
const DEOF: Capabilities = BASE.union(Capabilities::DEPRECATE_EOF);
const EXT: Capabilities =
    DEOF.union(Capabilities::MARIADB_CLIENT_EXTENDED_TYPE_INFO).union(Capabilities::MARIADB_CLIENT_CACHE_METADATA);

/// The three capability sets of the captures, by file-name suffix.
const VARIANTS: [(&str, Capabilities); 3] = [("eof", BASE), ("deof", DEOF), ("ext", EXT)];

macro_rules! captures {
    ($($name:literal),* $(,)?) => {
        /// Every capture, by name.
        const CAPTURES: &[(&str, &[u8])] = &[
            $(($name, include_bytes!(concat!("../testdata/", $name, ".bin")))),*
        ];
    };
}

captures!(
    "exec_alltypes_again_deof",
    "exec_alltypes_again_eof",
    "exec_alltypes_again_ext",
    "exec_alltypes_deof",
    "exec_alltypes_eof",
    "exec_alltypes_ext",
    "exec_call_deof",
    "exec_call_eof",
    "exec_call_ext",
    "exec_point_select_again_deof",
    "exec_point_select_again_eof",
    "exec_point_select_again_ext",
    "exec_point_select_deof",
    "exec_point_select_eof",
    "exec_point_select_ext",
    "exec_point_select_miss_deof",
    "exec_point_select_miss_eof",
    "exec_point_select_miss_ext",
    "prepare_alltypes_deof",
    "prepare_alltypes_eof",
    "prepare_alltypes_ext",
    "prepare_concat_deof",
    "prepare_concat_eof",
    "prepare_concat_ext",
    "prepare_error_deof",
    "prepare_error_eof",
    "prepare_error_ext",
    "prepare_point_select_deof",
    "prepare_point_select_eof",
    "prepare_point_select_ext",
    "text_alltypes_deof",
    "text_alltypes_eof",
    "text_alltypes_ext",
    "text_call_deof",
    "text_call_eof",
    "text_call_ext",
    "text_empty_deof",
    "text_empty_eof",
    "text_empty_ext",
    "text_error_deof",
    "text_error_eof",
    "text_error_ext",
    "text_local_infile_deof",
    "text_local_infile_eof",
    "text_local_infile_ext",
    "text_multi_deof",
    "text_multi_eof",
    "text_multi_ext",
    "text_update_deof",
    "text_update_eof",
    "text_update_ext",
);

fn capture(name: &str) -> &'static [u8] {
    CAPTURES.iter().find(|(n, _)| *n == name).map(|(_, b)| *b).unwrap_or_else(|| panic!("no capture {name}"))
}

/// The capabilities of a capture, from its name's last part ("point_select_deof" or "deof").
fn caps_of(name: &str) -> Capabilities {
    let tag = name.rsplit('_').next().unwrap_or(name);
    VARIANTS.iter().find(|(t, _)| *t == tag).map(|(_, c)| *c).unwrap()
}

fn format_of(name: &str) -> RowFormat {
    if name.starts_with("exec_") {
        RowFormat::Binary
    } else {
        RowFormat::Text
    }
}

/// The whole response in one call; checks everything was consumed.
fn read_whole(
    bytes: &[u8],
    caps: Capabilities,
    format: RowFormat,
) -> Result<(Outcome, Option<ServerError>), CodecError> {
    let mut reader = ResponseReader::new(caps, format);
    let p = reader.advance(bytes)?;
    assert_eq!(p.consumed, bytes.len(), "consumed everything");
    let outcome = p.done.expect("response complete");
    let err = outcome.error.as_ref().map(|e| e.to_server_error(bytes));
    Ok((outcome, err))
}

/// Feeds `bytes` as a socket would deliver them in `chunks`, keeping only
/// unconsumed bytes in a buffer, like a caller does.
fn read_streamed(
    bytes: &[u8],
    chunks: impl IntoIterator<Item = usize>,
    caps: Capabilities,
    format: RowFormat,
) -> Result<(Outcome, Option<ServerError>, usize), CodecError> {
    let mut reader = ResponseReader::new(caps, format);
    let mut buffer = Vec::new();
    let mut at = 0usize;
    let mut max_buffered = 0;
    for chunk in chunks.into_iter().chain(std::iter::repeat(usize::MAX)) {
        let end = at.saturating_add(chunk).min(bytes.len());
        buffer.extend_from_slice(&bytes[at..end]);
        at = end;
        max_buffered = max_buffered.max(buffer.len());
        let p = reader.advance(&buffer)?;
        if let Some(outcome) = p.done {
            let err = outcome.error.as_ref().map(|e| e.to_server_error(&buffer));
            assert_eq!(p.consumed, buffer.len(), "nothing left over");
            assert_eq!(at, bytes.len());
            return Ok((outcome, err, max_buffered));
        }
        buffer.drain(..p.consumed);
        assert!(at < bytes.len(), "input ended before the response did");
    }
    unreachable!()
}

/// The ERR message range is relative to each call's input: drop it to compare
/// outcomes reached through different reads (the message text is compared apart).
fn without_message_range(mut outcome: Outcome) -> Outcome {
    if let Some(e) = outcome.error.as_mut() {
        e.message = 0..0;
    }
    outcome
}

/// Splits raw bytes into payloads with the framing decoder and hands each
/// to `feed` until it returns the whole answer, which must end the input.
fn feed_frames<T>(bytes: &[u8], mut feed: impl FnMut(&[u8]) -> Result<Option<T>, CodecError>) -> Result<T, CodecError> {
    let mut at = 0;
    let mut seq = 1;
    loop {
        let frame = decode_packet(&bytes[at..], seq, usize::MAX)?.expect("whole packet");
        at += frame.consumed;
        seq = frame.next_seq;
        if let Some(answer) = feed(&frame.payload)? {
            assert_eq!(at, bytes.len(), "response ends with the input");
            return Ok(answer);
        }
    }
}

fn decode_whole(bytes: &[u8], mut decoder: ResultSetDecoder) -> Result<Response, CodecError> {
    feed_frames(bytes, |payload| decoder.feed(payload))
}

fn prepare_whole(bytes: &[u8], caps: Capabilities) -> Result<PrepareOutcome, CodecError> {
    let mut reader = PrepareResponse::new(caps);
    feed_frames(bytes, |payload| reader.feed(payload))
}

fn prepared(bytes: &[u8], caps: Capabilities) -> PreparedStatement {
    match prepare_whole(bytes, caps).unwrap() {
        PrepareOutcome::Prepared(stmt) => stmt,
        PrepareOutcome::Error(e) => panic!("prepare failed: {e}"),
    }
}

fn only_result_set(response: &Response) -> &ResultSet {
    let sets: Vec<_> = response.result_sets().collect();
    assert_eq!(sets.len(), 1);
    assert!(response.error.is_none());
    sets[0]
}

const DOC_TEXT_RESULTSET: &str = "
    01 00 00 01 01 27 00 00 02 03 64 65 66 00 00 00 11 40 40 76 65 72 73 69 6f 6e 5f 63 6f 6d 6d 65
    6e 74 00 0c 08 00 1c 00 00 00 fd 00 00 1f 00 00 05 00 00 03 fe 00 00 02 00 1d 00 00 04 1c 4d 79
    53 51 4c 20 43 6f 6d 6d 75 6e 69 74 79 20 53 65 72 76 65 72 20 28 47 50 4c 29 05 00 00 05 fe 00
    00 02 00";

const DOC_BINARY_RESULTSET: &str = "
    01 00 00 01 01 1a 00 00 02 03 64 65 66 00 00 00 04 63 6f 6c 31 00 0c 08 00 06 00 00 00 fd 00 00
    1f 00 00 05 00 00 03 fe 00 00 02 00 09 00 00 04 00 00 06 66 6f 6f 62 61 72 05 00 00 05 fe 00 00
    02 00";

const DOC_PREPARE_RESPONSE: &str = "
    0c 00 00 01 00 01 00 00 00 01 00 02 00 00 00 00 17 00 00 02 03 64 65 66 00 00 00 01 3f 00 0c 3f
    00 00 00 00 00 fd 80 00 00 00 00 17 00 00 03 03 64 65 66 00 00 00 01 3f 00 0c 3f 00 00 00 00 00
    fd 80 00 00 00 00 05 00 00 04 fe 00 00 02 00 1a 00 00 05 03 64 65 66 00 00 00 04 63 6f 6c 31 00
    0c 3f 00 00 00 00 00 fd 80 00 1f 00 00 05 00 00 06 fe 00 00 02 00";

#[test]
fn documented_text_resultset() {
    // The protocol documentation's Text Resultset example (SELECT @@version_comment LIMIT 1).
    let bytes = hex(DOC_TEXT_RESULTSET);
    let caps = Capabilities::PROTOCOL_41;
    let (outcome, err) = read_whole(&bytes, caps, RowFormat::Text).unwrap();
    assert_eq!(err, None);
    assert_eq!((outcome.result_sets, outcome.rows, outcome.status), (1, 1, StatusFlags::AUTOCOMMIT));
    let response = decode_whole(&bytes, ResultSetDecoder::new(caps, RowFormat::Text)).unwrap();
    let rs = only_result_set(&response);
    assert_eq!(&*rs.columns[0].name, b"@@version_comment");
    assert_eq!(rs.text_rows().unwrap(), vec![vec![Some(b"MySQL Community Server (GPL)".to_vec())]]);
    assert_eq!(rs.end.status, StatusFlags::AUTOCOMMIT);
}

#[test]
fn documented_binary_resultset() {
    let bytes = hex(DOC_BINARY_RESULTSET);
    let caps = Capabilities::PROTOCOL_41;
    let (outcome, _) = read_whole(&bytes, caps, RowFormat::Binary).unwrap();
    assert_eq!((outcome.result_sets, outcome.rows), (1, 1));
    let response = decode_whole(&bytes, ResultSetDecoder::new(caps, RowFormat::Binary)).unwrap();
    let rs = only_result_set(&response);
    assert_eq!(rs.rows[0].values(&rs.columns).unwrap(), vec![Value::Bytes(b"foobar")]);
    // The same response re-encoded from its parts is the documented bytes.
    let mut out = Vec::new();
    let mut seq = encode_metadata(&rs.columns, true, StatusFlags::AUTOCOMMIT, caps, 1, &mut out);
    seq = encode_binary_row(&[Value::Bytes(b"foobar")], &rs.columns, seq, &mut out).unwrap();
    encode_result_end(StatusFlags::AUTOCOMMIT, 0, caps, seq, &mut out);
    assert_eq!(out, bytes);
}

#[test]
fn documented_prepare_response() {
    // SELECT CONCAT(?, ?) AS col1, from the COM_STMT_PREPARE documentation.
    let bytes = hex(DOC_PREPARE_RESPONSE);
    let caps = Capabilities::PROTOCOL_41;
    let stmt = prepared(&bytes, caps);
    assert_eq!((stmt.statement_id(), stmt.ok.num_params, stmt.ok.num_columns, stmt.ok.warnings), (1, 2, 1, 0));
    assert_eq!(stmt.params.len(), 2);
    assert_eq!(stmt.params[0].column_type, ColumnType::VarString);
    assert_eq!(stmt.params[0].flags, ColumnFlags::BINARY);
    assert_eq!(&*stmt.columns[0].name, b"col1");
    let mut out = Vec::new();
    assert_eq!(stmt.encode_response(caps, &mut out), 7);
    assert_eq!(out, bytes);
}

#[test]
fn prepare_captures() {
    for (tag, caps) in VARIANTS {
        let point = prepared(capture(&format!("prepare_point_select_{tag}")), caps);
        assert_eq!((point.params.len(), point.columns.len()), (1, 1), "{tag}");
        assert_eq!(&*point.columns[0].org_name, b"c");
        let all = prepared(capture(&format!("prepare_alltypes_{tag}")), caps);
        assert_eq!((all.params.len(), all.columns.len()), (0, 29), "{tag}");
        let concat = prepared(capture(&format!("prepare_concat_{tag}")), caps);
        assert_eq!((concat.params.len(), concat.columns.len()), (2, 1), "{tag}");
        // Re-encoding gives the server's bytes back.
        for name in ["prepare_point_select", "prepare_alltypes", "prepare_concat"] {
            let bytes = capture(&format!("{name}_{tag}"));
            let mut out = Vec::new();
            prepared(bytes, caps).encode_response(caps, &mut out);
            assert_eq!(out, bytes, "{name}_{tag}");
        }
        match prepare_whole(capture(&format!("prepare_error_{tag}")), caps).unwrap() {
            PrepareOutcome::Error(e) => {
                assert_eq!((e.code, e.sql_state_str()), (1064, Some("42000")));
                assert!(e.message.starts_with("You have an error in your SQL syntax"));
            }
            other => panic!("{other:?}"),
        }
    }
    // The JSON column under extended type info.
    let all = prepared(capture("prepare_alltypes_ext"), EXT);
    assert_eq!(all.columns[28].ext_format_name.as_deref(), Some(&b"json"[..]));
    assert!(all.columns[..28].iter().all(|c| c.ext_format_name.is_none()));
}

#[test]
fn point_select_execute() {
    // The wire notes' 190 / 197 bytes: one column definition, one binary row,
    // and a 0xFE-OK (DEPRECATE_EOF) or two EOF packets. With metadata caching
    // the column definition is not sent at all.
    let c_value = b"83868641912-28773972837-60736120486-75162659906-27563526494-20381887404-41576422241-93426793964-56405065102-33518432330";
    for (tag, len) in [("eof", 197), ("deof", 190), ("ext", 143)] {
        let caps = caps_of(tag);
        let prep = prepared(capture(&format!("prepare_point_select_{tag}")), caps);
        for name in ["exec_point_select", "exec_point_select_again"] {
            let bytes = capture(&format!("{name}_{tag}"));
            assert_eq!(bytes.len(), len, "{name}_{tag}");
            let (outcome, err) = read_whole(bytes, caps, RowFormat::Binary).unwrap();
            assert_eq!(err, None);
            assert_eq!((outcome.result_sets, outcome.rows), (1, 1));
            assert_eq!(outcome.status, StatusFlags::AUTOCOMMIT);
            let decoder = ResultSetDecoder::with_cached_columns(caps, RowFormat::Binary, prep.columns.clone());
            let response = decode_whole(bytes, decoder).unwrap();
            let rs = only_result_set(&response);
            assert_eq!(rs.metadata_skipped, tag == "ext");
            assert_eq!(rs.columns, prep.columns);
            assert_eq!(rs.rows[0].values(&rs.columns).unwrap(), vec![Value::Bytes(c_value)]);
        }
        let (outcome, _) =
            read_whole(capture(&format!("exec_point_select_miss_{tag}")), caps, RowFormat::Binary).unwrap();
        assert_eq!((outcome.result_sets, outcome.rows), (1, 0));
    }
    // Skipped metadata without cached definitions cannot be decoded.
    let err = decode_whole(capture("exec_point_select_ext"), ResultSetDecoder::new(EXT, RowFormat::Binary));
    assert!(matches!(err, Err(CodecError::Protocol(ProtocolError::UnexpectedMessage { .. }))));
}

/// The expected binary values of wb.alltypes row 1 (see capture.sql).
fn alltypes_row1() -> Vec<Value<'static>> {
    vec![
        Value::Int(1),
        Value::Int(-128),
        Value::UInt(255),
        Value::Int(-32768),
        Value::UInt(65535),
        Value::Int(-8_388_608),
        Value::UInt(16_777_215),
        Value::Int(-2_147_483_648),
        Value::UInt(4_294_967_295),
        Value::Int(i64::MIN),
        Value::UInt(u64::MAX),
        Value::Float(1.5),
        Value::Double(2.25),
        Value::Bytes(b"-123456789.125"),
        Value::Date { year: 2024, month: 2, day: 29 },
        Value::Time { negative: true, days: 34, hours: 22, minutes: 59, seconds: 59, micros: 0 },
        Value::Time { negative: false, days: 4, hours: 4, minutes: 0, seconds: 0, micros: 500_000 },
        Value::DateTime { year: 2010, month: 10, day: 17, hour: 19, minute: 27, second: 30, micros: 1 },
        Value::DateTime { year: 1000, month: 1, day: 1, hour: 0, minute: 0, second: 0, micros: 0 },
        Value::DateTime { year: 2038, month: 1, day: 19, hour: 3, minute: 14, second: 7, micros: 0 },
        Value::UInt(2155),
        Value::Bytes(b"ab"),
        Value::Bytes(b"hello world"),
        Value::Bytes(b"\x00\xff\x10"),
        Value::Bytes(b"text value"),
        Value::Bytes(b"bb"),
        Value::Bytes(b"x,y"),
        Value::Bytes(&[0b10, 0b1010_1010]),
        Value::Bytes(br#"{"a": [1, 2.5, null]}"#),
    ]
}

#[test]
fn binary_and_text_protocol_agree_on_every_type() {
    for (tag, caps) in VARIANTS {
        let text = decode_whole(capture(&format!("text_alltypes_{tag}")), ResultSetDecoder::new(caps, RowFormat::Text))
            .unwrap();
        let text = only_result_set(&text);
        let prep = prepared(capture(&format!("prepare_alltypes_{tag}")), caps);
        let decoder = ResultSetDecoder::with_cached_columns(caps, RowFormat::Binary, prep.columns.clone());
        let binary = decode_whole(capture(&format!("exec_alltypes_{tag}")), decoder).unwrap();
        let binary = only_result_set(&binary);
        assert_eq!(text.rows.len(), 4);
        assert_eq!(binary.rows.len(), 4);
        assert_eq!(text.columns, prep.columns, "{tag}: the same column definitions both ways");
        assert_eq!(binary.rows[0].values(&binary.columns).unwrap(), alltypes_row1(), "{tag}");
        let nulls = binary.rows[2].values(&binary.columns).unwrap();
        assert!(nulls[1..].iter().all(|v| *v == Value::Null));
        let text_rows = text.text_rows().unwrap();
        let binary_rows = binary.text_rows().unwrap();
        for (r, (t, b)) in text_rows.iter().zip(&binary_rows).enumerate() {
            for (c, (tv, bv)) in t.iter().zip(b).enumerate() {
                let show = |v: &Option<Vec<u8>>| v.as_deref().map(|b| String::from_utf8_lossy(b).into_owned());
                assert_eq!(
                    tv,
                    bv,
                    "{tag} row {r} column {}: text {:?} binary {:?}",
                    String::from_utf8_lossy(&text.columns[c].name),
                    show(tv),
                    show(bv)
                );
            }
        }
    }
}

#[test]
fn readers_agree_on_every_capture() {
    for &(name, bytes) in CAPTURES {
        if name.starts_with("prepare_") {
            continue;
        }
        let caps = caps_of(name);
        let format = format_of(name);
        if name.starts_with("text_local_infile") {
            let want = CodecError::Protocol(ProtocolError::LocalInfileRefused("/tmp/wb-none.csv".into()));
            assert_eq!(read_whole(bytes, caps, format), Err(want.clone()));
            assert_eq!(decode_whole(bytes, ResultSetDecoder::new(caps, format)), Err(want));
            continue;
        }
        let (outcome, err) = read_whole(bytes, caps, format).unwrap();
        // Under metadata caching the executes skip the definitions the prepare sent.
        let tag = name.rsplit('_').next().unwrap();
        let statement = if name.contains("point_select") { "prepare_point_select" } else { "prepare_alltypes" };
        let cached = prepared(capture(&format!("{statement}_{tag}")), caps).columns;
        let response = decode_whole(bytes, ResultSetDecoder::with_cached_columns(caps, format, cached)).unwrap();
        assert_eq!(err, response.error, "{name}");
        assert_eq!(outcome.result_sets as usize, response.result_sets().count(), "{name}");
        assert_eq!(outcome.rows, response.result_sets().map(|rs| rs.rows.len() as u64).sum::<u64>(), "{name}");
        let last_status = match response.results.last() {
            Some(QueryResult::Ok(ok)) => ok.status,
            Some(QueryResult::ResultSet(rs)) => rs.end.status,
            None => StatusFlags::default(),
        };
        if err.is_none() {
            assert_eq!(outcome.status, last_status, "{name}");
            assert!(!outcome.status.contains(StatusFlags::MORE_RESULTS_EXISTS));
        }
    }
}

#[test]
fn every_split_of_every_capture_gives_the_same_outcome() {
    for &(name, bytes) in CAPTURES {
        if name.starts_with("prepare_") || name.starts_with("text_local_infile") {
            continue;
        }
        let (caps, format) = (caps_of(name), format_of(name));
        let whole = read_whole(bytes, caps, format).unwrap();
        for cut in 0..=bytes.len() {
            let (outcome, err, _) = read_streamed(bytes, [cut], caps, format).unwrap();
            let got = (without_message_range(outcome), err);
            assert_eq!(got, (without_message_range(whole.0.clone()), whole.1.clone()), "{name} cut at {cut}");
        }
        let (one_by_one, err, _) = read_streamed(bytes, std::iter::repeat(1), caps, format).unwrap();
        assert_eq!((one_by_one.rows, err), (whole.0.rows, whole.1), "{name} byte by byte");
    }
}

#[test]
fn multi_statement_and_call() {
    // SELECT 1; INSERT two rows; SELECT 'x', NULL: result set, OK, result set.
    for (tag, caps) in VARIANTS {
        let bytes = capture(&format!("text_multi_{tag}"));
        let (outcome, _) = read_whole(bytes, caps, RowFormat::Text).unwrap();
        assert_eq!((outcome.result_sets, outcome.rows, outcome.affected_rows), (2, 2, 2), "{tag}");
        assert!(outcome.last_insert_id > 0);
        let response = decode_whole(bytes, ResultSetDecoder::new(caps, RowFormat::Text)).unwrap();
        assert_eq!(response.results.len(), 3);
        let QueryResult::Ok(ok) = &response.results[1] else { panic!("{:?}", response.results[1]) };
        assert_eq!(ok.affected_rows, 2);
        assert_eq!(ok.info, b"Records: 2  Duplicates: 0  Warnings: 0");
        let QueryResult::ResultSet(last) = &response.results[2] else { panic!() };
        assert_eq!(last.text_rows().unwrap(), vec![vec![Some(b"x".to_vec()), None]]);

        // CALL: two result sets, then the OK of the CALL itself; in both protocols.
        for (name, format) in [("text_call", RowFormat::Text), ("exec_call", RowFormat::Binary)] {
            let bytes = capture(&format!("{name}_{tag}"));
            let (outcome, _) = read_whole(bytes, caps, format).unwrap();
            assert_eq!((outcome.result_sets, outcome.rows), (2, 2), "{name}_{tag}");
            let response = decode_whole(bytes, ResultSetDecoder::new(caps, format)).unwrap();
            assert_eq!(response.results.len(), 3);
            assert!(matches!(response.results[2], QueryResult::Ok(_)));
            let sets: Vec<_> = response.result_sets().collect();
            assert_eq!(sets[0].text_rows().unwrap(), vec![vec![Some(b"1".to_vec())]]);
            assert_eq!(sets[1].text_rows().unwrap(), vec![vec![Some(b"two".to_vec()), None]]);
            assert!(sets[0].end.status.contains(StatusFlags::MORE_RESULTS_EXISTS));
        }
    }
}

#[test]
fn ok_and_err_responses() {
    for (tag, caps) in VARIANTS {
        let bytes = capture(&format!("text_update_{tag}"));
        let (outcome, err) = read_whole(bytes, caps, RowFormat::Text).unwrap();
        assert_eq!((outcome.result_sets, outcome.affected_rows, err), (0, 0, None));
        let response = decode_whole(bytes, ResultSetDecoder::new(caps, RowFormat::Text)).unwrap();
        let QueryResult::Ok(ok) = &response.results[0] else { panic!() };
        assert_eq!(ok.info, b"Rows matched: 1  Changed: 0  Warnings: 0");

        let bytes = capture(&format!("text_error_{tag}"));
        let (outcome, err) = read_whole(bytes, caps, RowFormat::Text).unwrap();
        let info = outcome.error.unwrap();
        assert_eq!((info.code, info.sql_state), (1146, Some(*b"42S02")));
        assert_eq!(info.message(bytes), b"Table 'wb.nope' doesn't exist");
        assert_eq!(err.unwrap().to_string(), "ERROR 1146 (42S02): Table 'wb.nope' doesn't exist");
    }
}

#[test]
fn pipelined_responses_are_not_overrun() {
    let first = capture("exec_point_select_deof");
    let second = capture("exec_point_select_miss_deof");
    let both = [first, second].concat();
    let mut reader = ResponseReader::new(DEOF, RowFormat::Binary);
    let p = reader.advance(&both).unwrap();
    assert_eq!(p.consumed, first.len());
    assert_eq!(p.done.unwrap().rows, 1);
    assert!(reader.is_done());
    assert!(matches!(
        reader.advance(&both[p.consumed..]),
        Err(CodecError::Usage(UsageError::OutOfOrder { call: "ResponseReader::advance", .. }))
    ));
    reader.reset();
    let p2 = reader.advance(&both[p.consumed..]).unwrap();
    assert_eq!(p2.consumed, second.len());
    assert_eq!(p2.done.unwrap().rows, 0);
}

#[test]
fn finished_decoders_refuse_more_packets() {
    // OK with status AUTOCOMMIT: a whole response.
    let ok = [0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00];
    let mut decoder = ResultSetDecoder::new(DEOF, RowFormat::Text);
    assert!(decoder.feed(&ok).unwrap().is_some());
    assert!(matches!(
        decoder.feed(&ok),
        Err(CodecError::Usage(UsageError::OutOfOrder { call: "ResultSetDecoder::feed", .. }))
    ));
    // PREPARE_OK without parameters or columns: a whole prepare response.
    let mut packet = Vec::new();
    crate::response::prepare_ok::PrepareOk { statement_id: 1, ..Default::default() }.encode(1, &mut packet);
    let mut prepare = PrepareResponse::new(DEOF);
    assert!(prepare.feed(&packet[4..]).unwrap().is_some());
    assert!(matches!(
        prepare.feed(&packet[4..]),
        Err(CodecError::Usage(UsageError::OutOfOrder { call: "PrepareResponse::feed", .. }))
    ));
}

/// `bytes` with its packets numbered from `first` on, as a server that
/// continues its own counter across commands (node-mysql2's) sends them.
fn renumbered(bytes: &[u8], first: u8) -> Vec<u8> {
    let mut out = bytes.to_vec();
    let (mut at, mut seq) = (0usize, first);
    while at + 4 <= out.len() {
        out[at + 3] = seq;
        seq = seq.wrapping_add(1);
        at += 4 + (u32::from_le_bytes([out[at], out[at + 1], out[at + 2], 0]) as usize);
    }
    out
}

#[test]
fn sequence_ids_that_do_not_follow_are_followed_and_counted() {
    let bytes = capture("exec_point_select_deof").to_vec();
    let mut reader = ResponseReader::new(DEOF, RowFormat::Binary);
    let expected = reader.advance(&bytes).unwrap().done.unwrap();
    assert_eq!(expected.seq_jumps, 0);
    // An answer numbered from the server's own counter (node-mysql2): one jump, at its start.
    for first in [0u8, 5, 255] {
        let mut reader = ResponseReader::new(DEOF, RowFormat::Binary);
        let outcome = reader.advance(&renumbered(&bytes, first)).unwrap().done.unwrap();
        assert_eq!(outcome, Outcome { seq_jumps: 1, ..expected.clone() }, "numbered from {first}");
    }
    // A jump inside the answer (the row, the third packet), then back: two, and the same rows.
    let mut jumped = bytes.clone();
    assert_eq!(jumped[53 + 3], 3);
    jumped[53 + 3] = 7;
    let mut reader = ResponseReader::new(DEOF, RowFormat::Binary);
    let outcome = reader.advance(&jumped).unwrap().done.unwrap();
    assert_eq!(outcome, Outcome { seq_jumps: 2, ..expected });
    // Byte by byte, the same.
    let mut reader = ResponseReader::new(DEOF, RowFormat::Binary);
    let whole = renumbered(&bytes, 9);
    let mut buf = Vec::new();
    let mut done = None;
    for &b in &whole {
        buf.push(b);
        let progress = reader.advance(&buf).unwrap();
        buf.drain(..progress.consumed);
        done = done.or(progress.done);
    }
    assert_eq!(done.map(|o| (o.rows, o.seq_jumps)), Some((1, 1)));
}

#[test]
fn binary_rows_must_start_with_zero() {
    let mut bytes = capture("exec_point_select_deof").to_vec();
    bytes[53 + 4] = 0x01;
    let mut reader = ResponseReader::new(DEOF, RowFormat::Binary);
    assert_eq!(
        reader.advance(&bytes),
        Err(CodecError::Protocol(ProtocolError::BadHeader { context: "binary row", byte: 0x01 }))
    );
}

/// A text result set with one column whose single row holds `value`, then an OK terminator.
fn text_response(value: &[u8], caps: Capabilities) -> Vec<u8> {
    let columns = [ColumnDefinition::new(b"big", ColumnType::LongBlob)];
    let mut out = Vec::new();
    let mut seq = encode_metadata(&columns, true, StatusFlags::AUTOCOMMIT, caps, 1, &mut out);
    seq = encode_text_row([Some(value)], seq, &mut out);
    encode_result_end(StatusFlags::AUTOCOMMIT, 0, caps, seq, &mut out);
    out
}

#[test]
fn huge_text_row_starting_with_0xfe_is_a_row() {
    // A value of 2^24 bytes has an 8-byte length prefix (0xFE ...), so the row
    // packet starts with 0xFE like a terminator; its first fragment is 0xFFFFFF
    // bytes long, a terminator's is not. The row spans two fragments.
    let value = vec![b'v'; 1 << 24];
    for caps in [BASE, DEOF] {
        let bytes = text_response(&value, caps);
        // Fed in 64 KiB reads, the reader never holds more than one read plus a small packet.
        let chunks = std::iter::repeat(64 * 1024);
        let (outcome, err, max_buffered) = read_streamed(&bytes, chunks, caps, RowFormat::Text).unwrap();
        assert_eq!((outcome.result_sets, outcome.rows, err), (1, 1, None));
        assert!(max_buffered < 2 * 64 * 1024, "buffered {max_buffered}");
        let response = decode_whole(&bytes, ResultSetDecoder::new(caps, RowFormat::Text)).unwrap();
        let rs = only_result_set(&response);
        assert_eq!(rs.rows[0].payload()[0], 0xFE);
        assert_eq!(rs.text_rows().unwrap()[0][0].as_ref().map(Vec::len), Some(1 << 24));
    }
}

#[test]
fn row_of_exactly_one_fragment_ends_with_an_empty_fragment() {
    // Payload 0xFFFFFF = 4 (0xFD + 3 length bytes) + value: the row needs a
    // trailing empty fragment, which must not be taken for the next packet.
    let value = vec![b'w'; MAX_FRAGMENT - 4];
    let bytes = text_response(&value, DEOF);
    let (outcome, _, _) = read_streamed(&bytes, std::iter::repeat(1 << 20), DEOF, RowFormat::Text).unwrap();
    assert_eq!((outcome.rows, outcome.status), (1, StatusFlags::AUTOCOMMIT));
    let response = decode_whole(&bytes, ResultSetDecoder::new(DEOF, RowFormat::Text)).unwrap();
    assert_eq!(only_result_set(&response).rows[0].payload().len(), MAX_FRAGMENT);
}

#[test]
fn empty_row_packet_is_malformed_however_it_arrives() {
    // Found by fuzz/ (response_reader): with the next packet already buffered,
    // an empty packet in row position was judged by that packet's first byte
    // (counted as a row, or a bad binary header) instead of refused as when
    // the bytes stopped right after its header.
    let mut bytes = Vec::new();
    let mut seq = encode_column_count(1, true, DEOF, 1, &mut bytes);
    seq = encode_packet(&mut bytes, seq, &[0x00]); // a column definition: skipped unread
    let empty_row_end = bytes.len() + 4;
    seq = encode_packet(&mut bytes, seq, &[]);
    seq = encode_text_row([Some(&b"A"[..])], seq, &mut bytes);
    encode_result_end(StatusFlags::AUTOCOMMIT, 0, DEOF, seq, &mut bytes);
    let malformed = CodecError::Protocol(ProtocolError::Malformed("empty row packet"));
    for format in [RowFormat::Text, RowFormat::Binary] {
        assert_eq!(ResponseReader::new(DEOF, format).advance(&bytes), Err(malformed.clone()), "{format:?}");
        let streamed = read_streamed(&bytes, [empty_row_end], DEOF, format);
        assert_eq!(streamed.err(), Some(malformed.clone()), "{format:?}");
    }
}

#[test]
fn error_after_rows() {
    // A server can fail while sending rows: ERR instead of the terminator.
    let columns = [ColumnDefinition::new(b"a", ColumnType::Long)];
    for caps in [BASE, DEOF] {
        let mut out = Vec::new();
        let mut seq = encode_metadata(&columns, true, StatusFlags::AUTOCOMMIT, caps, 1, &mut out);
        seq = encode_text_row([Some(&b"1"[..])], seq, &mut out);
        let err = ErrPacket { code: 1317, sql_state: Some(*b"70100"), message: b"Query execution was interrupted" };
        err.encode(seq, &mut out);
        let (outcome, got) = read_whole(&out, caps, RowFormat::Text).unwrap();
        assert_eq!(outcome.rows, 1);
        assert_eq!(got, Some(err.to_owned()));
        let response = decode_whole(&out, ResultSetDecoder::new(caps, RowFormat::Text)).unwrap();
        assert_eq!(response.error, Some(err.to_owned()));
        assert!(response.results.is_empty(), "the unfinished result set is not reported");
    }
}

/// `bytes` with `extra` appended to the payload of its first packet.
fn with_bytes_after_first_payload(bytes: &[u8], extra: &[u8]) -> Vec<u8> {
    let len = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], 0]) as usize;
    let mut out = bytes[..4 + len].to_vec();
    out.extend_from_slice(extra);
    let new_len = (len + extra.len()) as u32;
    out[..3].copy_from_slice(&new_len.to_le_bytes()[..3]);
    out.extend_from_slice(&bytes[4 + len..]);
    out
}

/// libmariadb reads a column count and nothing after it (after the
/// metadata flag under CACHE_METADATA): bytes there are walked past and
/// counted, by both decoders, and the result set is the same.
#[test]
fn bytes_after_a_column_count_are_ignored_and_counted() {
    let columns = [ColumnDefinition::new(b"a", ColumnType::Long)];
    let cache = DEOF | Capabilities::MARIADB_CLIENT_CACHE_METADATA;
    for caps in [BASE, DEOF, cache] {
        let mut clean = Vec::new();
        let seq = encode_metadata(&columns, true, StatusFlags::AUTOCOMMIT, caps, 1, &mut clean);
        let seq = encode_text_row([Some(&b"1"[..])], seq, &mut clean);
        encode_result_end(StatusFlags::AUTOCOMMIT, 0, caps, seq, &mut clean);
        let expected = read_whole(&clean, caps, RowFormat::Text).unwrap().0;
        assert_eq!(expected.column_count_trailing, 0);
        let odd = with_bytes_after_first_payload(&clean, b"\x00\x07junk");
        let (outcome, error) = read_whole(&odd, caps, RowFormat::Text).unwrap();
        assert_eq!((outcome.clone(), error), (Outcome { column_count_trailing: 1, ..expected }, None), "{caps:?}");
        let decoded = decode_whole(&odd, ResultSetDecoder::new(caps, RowFormat::Text)).unwrap();
        let plain = decode_whole(&clean, ResultSetDecoder::new(caps, RowFormat::Text)).unwrap();
        assert_eq!(decoded, Response { column_count_trailing: 1, ..plain }, "{caps:?}");
    }
}

#[test]
fn malformed_responses() {
    // A first byte of 0x00 is an OK, never a column count of 0 ...
    let mut reader = ResponseReader::new(DEOF, RowFormat::Text);
    assert_eq!(
        reader.advance(&[1, 0, 0, 1, 0x00]),
        Err(CodecError::Protocol(ProtocolError::UnexpectedEof("OK affected rows")))
    );
    // ... and a count of 0 written long is no result set.
    let mut reader = ResponseReader::new(DEOF, RowFormat::Text);
    assert_eq!(
        reader.advance(&[3, 0, 0, 1, 0xFC, 0, 0]),
        Err(CodecError::Protocol(ProtocolError::Malformed("column count")))
    );
    let mut reader = ResponseReader::new(DEOF | Capabilities::MARIADB_CLIENT_CACHE_METADATA, RowFormat::Text);
    assert_eq!(
        reader.advance(&[2, 0, 0, 1, 0x01, 0x02]),
        Err(CodecError::Protocol(ProtocolError::Malformed("metadata follows flag")))
    );
    // An OK too large to be read whole.
    let mut reader = ResponseReader::new(DEOF, RowFormat::Text);
    assert!(matches!(
        reader.advance(&[0xFF, 0xFF, 0xFF, 1, 0x00]),
        Err(CodecError::Protocol(ProtocolError::PacketTooLarge { .. }))
    ));
    // No EOF after the column definitions where one is due.
    let mut bytes = Vec::new();
    let columns = [ColumnDefinition::new(b"a", ColumnType::Long)];
    let seq = encode_metadata(&columns, true, StatusFlags::AUTOCOMMIT, DEOF, 1, &mut bytes);
    encode_text_row([Some(&b"1"[..])], seq, &mut bytes);
    let mut reader = ResponseReader::new(BASE, RowFormat::Text);
    assert!(matches!(reader.advance(&bytes), Err(CodecError::Protocol(ProtocolError::BadHeader { .. }))));
    assert!(matches!(
        decode_whole(&bytes, ResultSetDecoder::new(BASE, RowFormat::Text)),
        Err(CodecError::Protocol(ProtocolError::BadHeader { .. }))
    ));
}

/// One result of a synthesized response.
#[derive(Debug, Clone)]
enum Spec {
    Ok { affected: u64, insert_id: u64, warnings: u16 },
    Set { columns: Vec<Column>, rows: Vec<Vec<Option<Vec<u8>>>>, warnings: u16 },
}

fn spec() -> impl Strategy<Value = Spec> {
    let ok = (any::<u64>(), any::<u64>(), 0u16..100).prop_map(|(affected, insert_id, warnings)| Spec::Ok {
        affected,
        insert_id,
        warnings,
    });
    let set = (1usize..4, 0usize..5, 0u16..100).prop_flat_map(|(ncols, nrows, warnings)| {
        let cols = proptest::collection::vec(any_column(true), ncols);
        let value = proptest::option::of(proptest::collection::vec(any::<u8>(), 0..40));
        let rows = proptest::collection::vec(proptest::collection::vec(value, ncols), nrows);
        (cols, rows).prop_map(move |(columns, rows)| Spec::Set { columns, rows, warnings })
    });
    prop_oneof![ok, set]
}

/// Encodes a response from its parts (text rows; binary rows as BLOB columns)
/// and returns it with the outcome it must produce.
fn synthesize(results: &[Spec], error: bool, caps: Capabilities, format: RowFormat) -> (Vec<u8>, Outcome) {
    let mut out = Vec::new();
    let mut seq = 1u8;
    let mut expect = Outcome::default();
    for (i, result) in results.iter().enumerate() {
        let last = i + 1 == results.len() && !error;
        let status = if last {
            StatusFlags::AUTOCOMMIT
        } else {
            StatusFlags(StatusFlags::AUTOCOMMIT.0 | StatusFlags::MORE_RESULTS_EXISTS.0)
        };
        match result {
            Spec::Ok { affected, insert_id, warnings } => {
                let ok = OkPacket {
                    affected_rows: *affected,
                    last_insert_id: *insert_id,
                    status,
                    warnings: *warnings,
                    ..OkPacket::default()
                };
                seq = ok.encode(OK_HEADER, caps, seq, &mut out);
                expect.affected_rows = expect.affected_rows.saturating_add(*affected);
                if *insert_id != 0 {
                    expect.last_insert_id = *insert_id;
                }
                expect.warnings = expect.warnings.saturating_add(*warnings);
            }
            Spec::Set { columns, rows, warnings } => {
                let columns: Vec<Column> = columns
                    .iter()
                    .cloned()
                    .map(|mut c| {
                        if format == RowFormat::Binary {
                            c.column_type = ColumnType::Blob;
                        }
                        c
                    })
                    .collect();
                seq = encode_metadata(&columns, true, status, caps, seq, &mut out);
                for row in rows {
                    seq = match format {
                        RowFormat::Text => encode_text_row(row.iter().map(|v| v.as_deref()), seq, &mut out),
                        RowFormat::Binary => {
                            let values: Vec<_> =
                                row.iter().map(|v| v.as_deref().map_or(Value::Null, Value::Bytes)).collect();
                            encode_binary_row(&values, &columns, seq, &mut out).unwrap()
                        }
                    };
                }
                seq = encode_result_end(status, *warnings, caps, seq, &mut out);
                expect.result_sets += 1;
                expect.rows += rows.len() as u64;
                expect.warnings = expect.warnings.saturating_add(*warnings);
            }
        }
        expect.status = status;
    }
    if error {
        let err = ErrPacket { code: 1064, sql_state: Some(*b"42000"), message: b"syntax" };
        err.encode(seq, &mut out);
        let message = out.len() - 6..out.len();
        expect.error = Some(ErrorInfo { code: 1064, sql_state: Some(*b"42000"), message });
    }
    (out, expect)
}

fn any_caps() -> impl Strategy<Value = Capabilities> {
    (any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(deof, ext, track)| {
        let mut caps = BASE;
        if deof {
            caps |= Capabilities::DEPRECATE_EOF;
        }
        if ext {
            caps |= Capabilities::MARIADB_CLIENT_EXTENDED_TYPE_INFO | Capabilities::MARIADB_CLIENT_CACHE_METADATA;
        }
        if track {
            caps |= Capabilities::SESSION_TRACK;
        }
        caps
    })
}

fn any_format() -> impl Strategy<Value = RowFormat> {
    prop_oneof![Just(RowFormat::Text), Just(RowFormat::Binary)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn synthesized_responses(results in proptest::collection::vec(spec(), 0..4), error in any::<bool>(),
                             caps in any_caps(), format in any_format(),
                             cuts in proptest::collection::vec(0usize..200, 0..6)) {
        prop_assume!(!results.is_empty() || error);
        let (bytes, expect) = synthesize(&results, error, caps, format);
        let (outcome, _) = read_whole(&bytes, caps, format).unwrap();
        prop_assert_eq!(&outcome, &expect);
        // The same bytes in arbitrary reads.
        let (streamed, err, _) = read_streamed(&bytes, cuts, caps, format).unwrap();
        prop_assert_eq!(err.map(|e| e.message), error.then(|| "syntax".to_string()));
        prop_assert_eq!(without_message_range(streamed), without_message_range(expect));
        // The decoder sees the same results, rows and values.
        let response = decode_whole(&bytes, ResultSetDecoder::new(caps, format)).unwrap();
        prop_assert_eq!(response.results.len(), results.len());
        for (got, want) in response.results.iter().zip(&results) {
            match (got, want) {
                (QueryResult::Ok(ok), Spec::Ok { affected, insert_id, .. }) => {
                    prop_assert_eq!((ok.affected_rows, ok.last_insert_id), (*affected, *insert_id));
                }
                (QueryResult::ResultSet(rs), Spec::Set { columns, rows, .. }) => {
                    prop_assert_eq!(rs.columns.len(), columns.len());
                    prop_assert_eq!(&rs.columns[0].name, &columns[0].name);
                    prop_assert_eq!(&rs.text_rows().unwrap(), rows);
                }
                _ => prop_assert!(false, "{:?} vs {:?}", got, want),
            }
        }
    }

    #[test]
    fn reader_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200), caps in any_caps(),
                           format in any_format(), cut in 0usize..200) {
        let mut reader = ResponseReader::new(caps, format);
        let cut = cut.min(bytes.len());
        if let Ok(p) = reader.advance(&bytes[..cut]) {
            prop_assert!(p.consumed <= cut);
            if p.done.is_none() {
                let _ = reader.advance(&bytes[p.consumed..]);
            }
        }
    }

    #[test]
    fn reader_never_panics_on_damaged_captures(index in 0usize..CAPTURES.len(), at in any::<usize>(), byte in any::<u8>()) {
        let (name, bytes) = CAPTURES[index];
        let mut bytes = bytes.to_vec();
        let at = at % bytes.len();
        bytes[at] = byte;
        let _ = ResponseReader::new(caps_of(name), format_of(name)).advance(&bytes);
        let mut decoder = ResultSetDecoder::new(caps_of(name), format_of(name));
        let mut prepare = PrepareResponse::new(caps_of(name));
        let mut pos = 0;
        while let Ok(Some(frame)) = decode_packet(&bytes[pos..], bytes.get(pos + 3).copied().unwrap_or(0), usize::MAX) {
            pos += frame.consumed;
            let _ = decoder.feed(&frame.payload);
            let _ = prepare.feed(&frame.payload);
        }
    }

    #[test]
    fn decoders_never_panic(payloads in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40), 0..8),
                            caps in any_caps(), format in any_format()) {
        let mut decoder = ResultSetDecoder::new(caps, format);
        let mut prepare = PrepareResponse::new(caps);
        for p in &payloads {
            let _ = decoder.feed(p);
            let _ = prepare.feed(p);
        }
    }

    #[test]
    fn prepare_round_trip(params in proptest::collection::vec(any_column(true), 0..4),
                          columns in proptest::collection::vec(any_column(true), 0..4),
                          id in any::<u32>(), warnings in any::<u16>(), caps in any_caps()) {
        let stmt = PreparedStatement {
            ok: crate::response::prepare_ok::PrepareOk {
                statement_id: id,
                num_columns: columns.len() as u16,
                num_params: params.len() as u16,
                warnings,
            },
            params,
            columns,
        };
        let mut out = Vec::new();
        stmt.encode_response(caps, &mut out);
        if !caps.contains(Capabilities::MARIADB_CLIENT_EXTENDED_TYPE_INFO) {
            // Extended names are only sent under the capability.
            let strip = |c: &Column| Column { ext_type_name: None, ext_format_name: None, ..c.clone() };
            let stmt = PreparedStatement {
                params: stmt.params.iter().map(strip).collect(),
                columns: stmt.columns.iter().map(strip).collect(),
                ..stmt.clone()
            };
            prop_assert_eq!(prepare_whole(&out, caps).unwrap(), PrepareOutcome::Prepared(stmt));
        } else {
            prop_assert_eq!(prepare_whole(&out, caps).unwrap(), PrepareOutcome::Prepared(stmt));
        }
    }
}

#[test]
fn frames_cover_whole_captures() {
    // Every capture is a sequence of whole packets numbered from 1 (sanity of the test data).
    for &(name, bytes) in CAPTURES {
        let mut at = 0;
        let mut seq = 1u8;
        while at < bytes.len() {
            let frame = decode_packet(&bytes[at..], seq, usize::MAX).unwrap().unwrap_or_else(|| panic!("{name}"));
            at += frame.consumed;
            seq = frame.next_seq;
        }
        assert_eq!(at, bytes.len(), "{name}");
    }
    let mut out = Vec::new();
    assert_eq!(encode_packet(&mut out, 1, &[0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00]), 2);
    assert_eq!(read_whole(&out, DEOF, RowFormat::Text).unwrap().0.status, StatusFlags::AUTOCOMMIT);
}

#[test]
fn skipped_metadata_still_has_its_eof_without_deprecate_eof() {
    // The wire notes: with metadata caching and no DEPRECATE_EOF, the EOF that
    // would follow the (skipped) definitions is still sent.
    let caps = BASE | Capabilities::MARIADB_CLIENT_CACHE_METADATA;
    let columns = vec![ColumnDefinition::new(b"a", ColumnType::LongLong).into_owned()];
    let mut out = Vec::new();
    let mut seq = encode_metadata(&columns, false, StatusFlags::AUTOCOMMIT, caps, 1, &mut out);
    assert_eq!(&out[..9], [2, 0, 0, 1, 1, 0, 5, 0, 0], "count 1, flag 0, then the EOF");
    seq = encode_binary_row(&[Value::Int(-5)], &columns, seq, &mut out).unwrap();
    encode_result_end(StatusFlags::AUTOCOMMIT, 1, caps, seq, &mut out);
    let (outcome, _) = read_whole(&out, caps, RowFormat::Binary).unwrap();
    assert_eq!((outcome.result_sets, outcome.rows, outcome.warnings), (1, 1, 1));
    let response =
        decode_whole(&out, ResultSetDecoder::with_cached_columns(caps, RowFormat::Binary, columns.clone())).unwrap();
    let rs = only_result_set(&response);
    assert!(rs.metadata_skipped);
    assert_eq!(rs.rows[0].values(&rs.columns).unwrap(), vec![Value::Int(-5)]);
    // Cached definitions of the wrong width are refused.
    let two = vec![columns[0].clone(), columns[0].clone()];
    let decoder = ResultSetDecoder::with_cached_columns(caps, RowFormat::Binary, two);
    assert_eq!(
        decode_whole(&out, decoder),
        Err(CodecError::Protocol(ProtocolError::Malformed("column count differs from the cached definitions")))
    );
}
