//! The null server's answers: result sets whose columns come from a select
//! list, filled with sysbench-like values, and the OK and ERR packets.
//!
//! Text result sets are encoded straight from the statement text into the
//! connection's write buffer (no allocation); binary result sets for
//! prepared statements are encoded once at prepare time and copied on every
//! execute.

use wirebench_protocol::buf::WriteExt;
use wirebench_protocol::constants::{CHARSET_BINARY, CHARSET_UTF8MB4_GENERAL_CI};
use wirebench_protocol::framing::{Header, HEADER_LEN};
use wirebench_protocol::response::binary_row::encode_binary_row;
use wirebench_protocol::response::column::NOT_FIXED_DECIMALS;
use wirebench_protocol::response::resultset::{encode_column_count, encode_result_end};
use wirebench_protocol::response::text_row::encode_text_row;
use wirebench_protocol::response::{Column, ColumnDefinition, EofPacket, ErrPacket, OkPacket, Value};
use wirebench_protocol::{Capabilities, ColumnFlags, ColumnType, StatusFlags, UsageError};

use super::sql_scan::{ColumnKind, ColumnSpec, Select};

/// The status every answer carries: autocommit on, no transaction tracked.
pub const STATUS: StatusFlags = StatusFlags::AUTOCOMMIT;

/// A sysbench `c` value: ten groups of eleven digits (CHAR(120)).
pub const C_VALUE: &[u8] =
    b"83868641912-28773972837-60736120486-75162659906-27563526494-20381887404-41576422241-93426793964-56405065102-33518432330";
/// A sysbench `pad` value: five groups of eleven digits (CHAR(60)).
pub const PAD_VALUE: &[u8] = b"67847967377-48000963322-62604785301-91415491898-96926520291";
const ID_VALUE: i64 = 1;
const K_VALUE: i64 = 4993;
const COUNT_VALUE: i64 = 1;
const SUM_VALUE: &[u8] = b"5050";
const AVG_VALUE: &[u8] = b"50.5000";

/// The answers of one server: the values its result sets are filled with,
/// and the encoders that build them from a select list.
#[derive(Debug, Clone)]
pub struct CannedAnswers {
    /// As `SELECT @@version` shows it: without MariaDB's `5.5.5-` prefix.
    pub version: Vec<u8>,
    pub version_comment: Vec<u8>,
    /// Rows in the answer to a SELECT from a table that is not a pure aggregate.
    pub rows_per_select: usize,
}

impl CannedAnswers {
    fn rows(&self, select: &Select<'_>) -> usize {
        if select.is_single_row() {
            1
        } else {
            self.rows_per_select
        }
    }

    fn text_value<'a>(&'a self, spec: &ColumnSpec<'a>) -> &'a [u8] {
        match spec.kind {
            ColumnKind::C => C_VALUE,
            ColumnKind::Pad => PAD_VALUE,
            ColumnKind::Id => b"1",
            ColumnKind::K => b"4993",
            ColumnKind::Sum => SUM_VALUE,
            ColumnKind::Avg => AVG_VALUE,
            ColumnKind::Count => b"1",
            ColumnKind::Version => &self.version,
            ColumnKind::VersionComment => &self.version_comment,
            ColumnKind::Text => spec.name,
        }
    }

    fn binary_value<'a>(&'a self, spec: &ColumnSpec<'a>) -> Value<'a> {
        match spec.kind {
            ColumnKind::Id => Value::Int(ID_VALUE),
            ColumnKind::K => Value::Int(K_VALUE),
            ColumnKind::Count => Value::Int(COUNT_VALUE),
            _ => Value::Bytes(self.text_value(spec)),
        }
    }

    fn column<'a>(&'a self, spec: &ColumnSpec<'a>, select: &Select<'a>, schema: &'a [u8]) -> ColumnDefinition<'a> {
        let (column_type, charset, column_length, flags, decimals) = match spec.kind {
            ColumnKind::C => (ColumnType::String, CHARSET_UTF8MB4_GENERAL_CI, 480, ColumnFlags::NOT_NULL, 0),
            ColumnKind::Pad => (ColumnType::String, CHARSET_UTF8MB4_GENERAL_CI, 240, ColumnFlags::NOT_NULL, 0),
            ColumnKind::Id | ColumnKind::K => {
                (ColumnType::Long, CHARSET_BINARY, 11, ColumnFlags(ColumnFlags::NOT_NULL.0 | ColumnFlags::NUM.0), 0)
            }
            ColumnKind::Sum => {
                (ColumnType::NewDecimal, CHARSET_BINARY, 33, ColumnFlags(ColumnFlags::BINARY.0 | ColumnFlags::NUM.0), 0)
            }
            ColumnKind::Avg => {
                (ColumnType::NewDecimal, CHARSET_BINARY, 15, ColumnFlags(ColumnFlags::BINARY.0 | ColumnFlags::NUM.0), 4)
            }
            ColumnKind::Count => (
                ColumnType::LongLong,
                CHARSET_BINARY,
                21,
                ColumnFlags(ColumnFlags::NOT_NULL.0 | ColumnFlags::BINARY.0 | ColumnFlags::NUM.0),
                0,
            ),
            ColumnKind::Version | ColumnKind::VersionComment | ColumnKind::Text => {
                let chars = self.text_value(spec).len().max(1);
                (
                    ColumnType::VarString,
                    CHARSET_UTF8MB4_GENERAL_CI,
                    4 * chars as u32,
                    ColumnFlags::NOT_NULL,
                    NOT_FIXED_DECIMALS,
                )
            }
        };
        let mut col = ColumnDefinition::new(spec.name, column_type);
        col.charset = u16::from(charset);
        col.column_length = column_length;
        col.flags = flags;
        col.decimals = decimals;
        if spec.from_table {
            col.schema = select.schema.unwrap_or(schema).into();
            col.table = select.table.into();
            col.org_table = select.table.into();
        } else {
            col.org_name = (&b""[..]).into();
        }
        col
    }

    /// Appends a text-protocol result set for `select`; returns the next sequence id.
    pub fn text_result(
        &self,
        select: &Select<'_>,
        schema: &[u8],
        caps: Capabilities,
        seq: u8,
        out: &mut Vec<u8>,
    ) -> u8 {
        let mut seq = encode_column_count(select.columns().count() as u64, true, caps, seq, out);
        for spec in select.columns() {
            seq = self.column(&spec, select, schema).encode(caps, seq, out);
        }
        seq = metadata_end(caps, seq, out);
        let rows = self.rows(select);
        if rows > 0 {
            let row = out.len();
            seq = encode_text_row(select.columns().map(|spec| Some(self.text_value(&spec))), seq, out);
            seq = repeat_packet(out, row, rows - 1, seq);
        }
        encode_result_end(STATUS, 0, caps, seq, out)
    }

    /// The owned column definitions of `select`, for a prepared statement.
    pub fn columns(&self, select: &Select<'_>, schema: &[u8]) -> Vec<Column> {
        select.columns().map(|spec| self.column(&spec, select, schema).into_owned()).collect()
    }

    /// The binary-protocol result set a COM_STMT_EXECUTE of `select` returns.
    pub fn binary_result(
        &self,
        select: &Select<'_>,
        columns: &[Column],
        caps: Capabilities,
    ) -> Result<ExecuteAnswer, UsageError> {
        let mut head = Vec::new();
        let mut seq = encode_column_count(columns.len() as u64, true, caps, 1, &mut head);
        for col in columns {
            seq = col.encode(caps, seq, &mut head);
        }
        metadata_end(caps, seq, &mut head);
        let values: Vec<Value<'_>> = select.columns().map(|spec| self.binary_value(&spec)).collect();
        let mut row = Vec::new();
        encode_binary_row(&values, columns, 0, &mut row)?;
        let mut tail = Vec::new();
        encode_result_end(STATUS, 0, caps, 0, &mut tail);
        Ok(ExecuteAnswer { head: head.into(), row: row.into(), rows: self.rows(select), tail: tail.into() })
    }
}

/// The answer to a prepared statement, encoded at prepare time. It is kept
/// in parts, so a statement answered with many rows holds one of them, not
/// all: answering copies the head, the row `rows` times and the tail,
/// numbering the packets as it goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecuteAnswer {
    head: Box<[u8]>,
    row: Box<[u8]>,
    rows: usize,
    tail: Box<[u8]>,
}

impl ExecuteAnswer {
    /// Packets without rows: an OK, or a result set's metadata and end.
    pub fn from_packets(packets: Vec<u8>) -> ExecuteAnswer {
        ExecuteAnswer { head: packets.into(), row: Box::default(), rows: 0, tail: Box::default() }
    }

    /// Appends the answer, its first packet numbered `seq`.
    pub fn write(&self, seq: u8, out: &mut Vec<u8>) {
        let mut seq = append_renumbered(out, &self.head, seq);
        if self.rows > 0 {
            let row = out.len();
            seq = append_renumbered(out, &self.row, seq);
            seq = repeat_packet(out, row, self.rows - 1, seq);
        }
        append_renumbered(out, &self.tail, seq);
    }
}

/// Appends `times` copies of the packet at `out[at..]`, numbered from `seq`.
fn repeat_packet(out: &mut Vec<u8>, at: usize, times: usize, mut seq: u8) -> u8 {
    let end = out.len();
    for _ in 0..times {
        let copy = out.len();
        out.extend_from_within(at..end);
        if let Some(b) = out.get_mut(copy + 3) {
            *b = seq;
        }
        seq = seq.wrapping_add(1);
    }
    seq
}

/// The columns of the answer to SHOW: the `SHOW VARIABLES` layout.
pub fn show_columns() -> Vec<Column> {
    [&b"Variable_name"[..], b"Value"]
        .into_iter()
        .map(|name| {
            let mut col = ColumnDefinition::new(name, ColumnType::VarString);
            col.charset = u16::from(CHARSET_UTF8MB4_GENERAL_CI);
            col.column_length = 256;
            col.decimals = NOT_FIXED_DECIMALS;
            col
        })
        .collect()
}

/// The answer to SHOW: [`show_columns`] without rows, which every SHOW
/// consumer reads as "nothing there".
pub fn show_result(caps: Capabilities, seq: u8, out: &mut Vec<u8>) -> u8 {
    let columns = show_columns();
    let mut seq = encode_column_count(columns.len() as u64, true, caps, seq, out);
    for col in &columns {
        seq = col.encode(caps, seq, out);
    }
    seq = metadata_end(caps, seq, out);
    encode_result_end(STATUS, 0, caps, seq, out)
}

/// The EOF after column definitions, which DEPRECATE_EOF drops.
fn metadata_end(caps: Capabilities, seq: u8, out: &mut Vec<u8>) -> u8 {
    if caps.contains(Capabilities::DEPRECATE_EOF) {
        seq
    } else {
        EofPacket { warnings: 0, status: STATUS }.encode(caps, seq, out)
    }
}

pub fn ok(affected_rows: u64, caps: Capabilities, seq: u8, out: &mut Vec<u8>) -> u8 {
    OkPacket { affected_rows, status: STATUS, ..OkPacket::default() }.encode(0x00, caps, seq, out)
}

pub fn err((code, state, message): (u16, &[u8; 5], &[u8]), seq: u8, out: &mut Vec<u8>) -> u8 {
    ErrPacket { code, sql_state: Some(*state), message }.encode(seq, out)
}

/// Server error codes and SQLSTATEs (MariaDB `include/mysqld_error.h`).
pub mod errors {
    pub const HANDSHAKE: (u16, &[u8; 5], &[u8]) = (1043, b"08S01", b"Bad handshake");
    pub const UNKNOWN_COMMAND: (u16, &[u8; 5], &[u8]) = (1047, b"08S01", b"Unknown command");
    pub const PACKET_TOO_LARGE: (u16, &[u8; 5], &[u8]) =
        (1153, b"08S01", b"Got a packet bigger than 'max_allowed_packet' bytes");
    pub const OUT_OF_ORDER: (u16, &[u8; 5], &[u8]) = (1156, b"08S01", b"Got packets out of order");
    pub const UNKNOWN_STATEMENT: (u16, &[u8; 5], &[u8]) =
        (1243, b"HY000", b"Unknown prepared statement handler given to mysqld_stmt_execute");
    pub const MALFORMED: (u16, &[u8; 5], &[u8]) = (1835, b"08S01", b"Malformed communication packet");
    pub const SSL_UNSUPPORTED: (u16, &[u8; 5], &[u8]) =
        (1043, b"08S01", b"Bad handshake: this null server does not speak TLS");
    pub const OLD_PROTOCOL: (u16, &[u8; 5], &[u8]) =
        (1043, b"08S01", b"Bad handshake: clients without CLIENT_PROTOCOL_41 are not supported");
}

/// Appends pre-encoded packets renumbered from `seq` (a response follows
/// its request's last sequence id, which is 0 unless the request came in
/// 16 MiB fragments); returns the next sequence id.
pub fn append_renumbered(out: &mut Vec<u8>, packets: &[u8], seq: u8) -> u8 {
    let start = out.len();
    out.put_bytes(packets);
    renumber(out, start, seq)
}

/// Rewrites the sequence ids of the packets in `out[start..]`, the first to
/// `seq`; returns the next sequence id.
pub fn renumber(out: &mut [u8], start: usize, mut seq: u8) -> u8 {
    let mut at = start;
    while let Some(header) = out.get(at..).and_then(Header::parse) {
        if let Some(b) = out.get_mut(at + 3) {
            *b = seq;
        }
        seq = seq.wrapping_add(1);
        at += HEADER_LEN + header.len;
    }
    seq
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::null_server::sql_scan::{classify, Statement};
    use wirebench_protocol::framing::decode_packet;
    use wirebench_protocol::response::{ResponseReader, ResultSetDecoder, RowFormat};

    fn canned(rows: usize) -> CannedAnswers {
        CannedAnswers {
            version: b"10.11.99-wirebench-null".to_vec(),
            version_comment: b"null".to_vec(),
            rows_per_select: rows,
        }
    }

    fn select(sql: &str) -> Select<'_> {
        let Statement::Select(s) = classify(sql.as_bytes()) else { panic!("not a select") };
        s
    }

    const DEOF: Capabilities = Capabilities(Capabilities::PROTOCOL_41.0 | Capabilities::DEPRECATE_EOF.0);
    const EOF: Capabilities = Capabilities::PROTOCOL_41;

    type TextRows = Vec<Vec<Option<Vec<u8>>>>;

    /// Decodes a whole response with both client decoders: (columns, rows as text).
    fn decode(bytes: &[u8], caps: Capabilities, format: RowFormat) -> (Vec<Column>, TextRows) {
        let progress = ResponseReader::new(caps, format).advance(bytes).unwrap();
        assert_eq!(progress.consumed, bytes.len());
        let outcome = progress.done.expect("a complete response");
        let mut decoder = ResultSetDecoder::new(caps, format);
        let (mut at, mut seq, mut response) = (0, 1, None);
        while at < bytes.len() {
            let frame = decode_packet(&bytes[at..], seq, 1 << 24).unwrap().unwrap();
            seq = frame.next_seq;
            at += frame.consumed;
            if let Some(r) = decoder.feed(&frame.payload).unwrap() {
                assert_eq!(at, bytes.len(), "the response ends at its last packet");
                response = Some(r);
            }
        }
        let set = response.expect("a complete response").result_sets().next().expect("a result set").clone();
        assert_eq!(outcome.rows, set.rows.len() as u64);
        (set.columns.clone(), set.text_rows().unwrap())
    }

    #[test]
    fn point_select_text_result_decodes_under_both_eof_modes() {
        let canned = canned(1);
        let s = select("SELECT c FROM sbtest1 WHERE id=5");
        for caps in [DEOF, EOF] {
            let mut out = Vec::new();
            canned.text_result(&s, b"sbtest", caps, 1, &mut out);
            let (columns, rows) = decode(&out, caps, RowFormat::Text);
            assert_eq!(columns.len(), 1);
            assert_eq!(&*columns[0].name, b"c");
            assert_eq!(&*columns[0].table, b"sbtest1");
            assert_eq!(&*columns[0].schema, b"sbtest");
            assert_eq!(columns[0].column_type, ColumnType::String);
            assert_eq!(rows, vec![vec![Some(C_VALUE.to_vec())]]);
            let eofs = if caps.contains(Capabilities::DEPRECATE_EOF) { 0 } else { 1 };
            // count + def + [eof] + row + terminator
            assert_eq!(count_packets(&out), 4 + eofs);
        }
    }

    fn count_packets(bytes: &[u8]) -> usize {
        let mut n = 0;
        let mut at = 0;
        while let Some(h) = Header::parse(&bytes[at..]) {
            at += HEADER_LEN + h.len;
            n += 1;
        }
        assert_eq!(at, bytes.len());
        n
    }

    #[test]
    fn point_select_binary_result_matches_mariadb_capture() {
        // MariaDB 10.11's answer to `SELECT c FROM sbtest1 WHERE id=?`, which
        // the null server imitates byte for byte (same row value).
        let canned = canned(1);
        let s = select("SELECT c FROM sbtest1 WHERE id=?");
        for (caps, capture) in [
            (DEOF, &include_bytes!("../../protocol/src/response/testdata/exec_point_select_deof.bin")[..]),
            (EOF, &include_bytes!("../../protocol/src/response/testdata/exec_point_select_eof.bin")[..]),
        ] {
            let columns = canned.columns(&s, b"sbtest");
            let mut out = Vec::new();
            canned.binary_result(&s, &columns, caps).unwrap().write(1, &mut out);
            assert_eq!(out, capture);
        }
    }

    #[test]
    fn range_and_aggregate_row_counts() {
        let canned = canned(3);
        let mut out = Vec::new();
        canned.text_result(&select("SELECT id, k, c, pad FROM sbtest1"), b"", DEOF, 1, &mut out);
        let (columns, rows) = decode(&out, DEOF, RowFormat::Text);
        assert_eq!(
            columns.iter().map(|c| c.column_type).collect::<Vec<_>>(),
            [ColumnType::Long, ColumnType::Long, ColumnType::String, ColumnType::String]
        );
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0][1].as_deref(), Some(&b"4993"[..]));
        out.clear();
        canned.text_result(&select("SELECT SUM(k), COUNT(*) FROM sbtest1"), b"", DEOF, 1, &mut out);
        let (columns, rows) = decode(&out, DEOF, RowFormat::Text);
        assert_eq!((columns[0].column_type, columns[1].column_type), (ColumnType::NewDecimal, ColumnType::LongLong));
        assert_eq!(rows, vec![vec![Some(b"5050".to_vec()), Some(b"1".to_vec())]]);
    }

    #[test]
    fn binary_rows_decode_with_their_types() {
        let canned = canned(2);
        let s = select("SELECT id, k, SUM(k), COUNT(*), c FROM sbtest1 GROUP BY c");
        let columns = canned.columns(&s, b"sbtest");
        let mut out = Vec::new();
        canned.binary_result(&s, &columns, DEOF).unwrap().write(1, &mut out);
        let (_, rows) = decode(&out, DEOF, RowFormat::Binary);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0][0].as_deref(), Some(&b"1"[..]));
        assert_eq!(rows[0][1].as_deref(), Some(&b"4993"[..]));
        assert_eq!(rows[0][2].as_deref(), Some(&b"5050"[..]));
        assert_eq!(rows[0][3].as_deref(), Some(&b"1"[..]));
    }

    #[test]
    fn many_rows_are_numbered_and_decode() {
        let canned = canned(300);
        let s = select("SELECT c, pad FROM sbtest1 WHERE id BETWEEN ? AND ?");
        let columns = canned.columns(&s, b"sbtest");
        for caps in [DEOF, EOF] {
            let mut out = Vec::new();
            canned.binary_result(&s, &columns, caps).unwrap().write(1, &mut out);
            let (_, rows) = decode(&out, caps, RowFormat::Binary);
            assert_eq!(rows.len(), 300, "sequence ids wrap past 255");
            assert_eq!(rows[299], vec![Some(C_VALUE.to_vec()), Some(PAD_VALUE.to_vec())]);
            out.clear();
            canned.text_result(&s, b"sbtest", caps, 1, &mut out);
            let (_, rows) = decode(&out, caps, RowFormat::Text);
            assert_eq!(rows.len(), 300);
        }
    }

    #[test]
    fn version_and_show() {
        let canned = canned(5);
        let mut out = Vec::new();
        canned.text_result(&select("select @@version_comment limit 1"), b"", EOF, 1, &mut out);
        let (_, rows) = decode(&out, EOF, RowFormat::Text);
        assert_eq!(rows, vec![vec![Some(b"null".to_vec())]], "no FROM: one row");
        out.clear();
        show_result(DEOF, 1, &mut out);
        let (columns, rows) = decode(&out, DEOF, RowFormat::Text);
        assert_eq!(columns.len(), 2);
        assert!(rows.is_empty());
    }

    #[test]
    fn renumbering() {
        let mut packets = Vec::new();
        ok(1, DEOF, 1, &mut packets);
        ok(0, DEOF, 2, &mut packets);
        let mut out = vec![9];
        assert_eq!(append_renumbered(&mut out, &packets, 5), 7);
        assert_eq!(out[1 + 3], 5);
        assert_eq!(out[1 + packets.len() / 2 + 3], 6);
        let mut same = Vec::new();
        assert_eq!(append_renumbered(&mut same, &packets, 1), 3);
        assert_eq!(same, packets);
    }
}
