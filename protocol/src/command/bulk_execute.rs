//! COM_STMT_BULK_EXECUTE (MariaDB 10.2 and later, with
//! MARIADB_CLIENT_STMT_BULK_OPERATIONS): one prepared statement run for
//! many rows of parameters in one packet, the server's array binding.
//! An INSERT sent so executes once: no SQL to parse and no text fields to
//! scan per row, the rows' values read in their binary form.
//!
//! Payload (MariaDB's documentation, "COM_STMT_BULK_EXECUTE"):
//!
//! ```text
//! 0xfa, stmt_id u32, flags u16 (SEND_TYPES_TO_SERVER = 128)
//! if SEND_TYPES_TO_SERVER: num_params x (type u8, flags u8; 0x80 = unsigned)
//! for each row, for each parameter:
//!   indicator u8 (0 = a value follows, 1 = NULL, 2 = DEFAULT, 3 = IGNORE)
//!   the value, in the binary protocol form, when the indicator is 0
//! ```
//!
//! Without SEND_UNIT_RESULTS (64) the server answers with one OK (the
//! affected rows of all the rows together) or one ERR. The whole payload
//! counts against the server's `max_allowed_packet`.

use super::execute::Param;
use crate::buf::WriteExt;
use crate::constants::command::COM_STMT_BULK_EXECUTE;
use crate::framing::{finish_packet, start_packet};

/// The flag that says the parameter types follow the flags.
pub const SEND_TYPES_TO_SERVER: u16 = 128;
/// Indicator: the parameter's value follows.
const VALUE_FOLLOWS: u8 = 0;
/// Indicator: the parameter is NULL, and no value follows.
const NULL_VALUE: u8 = 1;

/// The payload's bytes before the rows, for a statement of `params`
/// parameters: what the server's `max_allowed_packet` must hold besides them.
pub fn bulk_execute_head_len(params: usize) -> usize {
    1 + 4 + 2 + 2 * params
}

/// Appends one row of parameter values as COM_STMT_BULK_EXECUTE carries
/// them: an indicator before each value, a NULL as its indicator alone.
/// The values' types must be the ones [`encode_bulk_execute`] announces.
pub fn push_bulk_row(out: &mut Vec<u8>, params: &[Param<'_>]) {
    for param in params {
        match param {
            Param::Null => out.put_u8(NULL_VALUE),
            value => {
                out.put_u8(VALUE_FOLLOWS);
                value.put_value(out);
            }
        }
    }
}

/// Appends a COM_STMT_BULK_EXECUTE packet running statement `stmt_id` for
/// `rows` (rows from [`push_bulk_row`], a value or NULL for each of
/// `types`, the statement's parameters as [`Param::type_bytes`] gives
/// them). Past 16 MiB the packet splits; the returned sequence id is the
/// one the server's response starts with.
pub fn encode_bulk_execute(out: &mut Vec<u8>, stmt_id: u32, types: &[[u8; 2]], rows: &[u8]) -> u8 {
    let start = start_packet(out);
    out.put_u8(COM_STMT_BULK_EXECUTE);
    out.put_u32(stmt_id);
    out.put_u16(SEND_TYPES_TO_SERVER);
    for ty in types {
        out.put_bytes(ty);
    }
    out.put_bytes(rows);
    finish_packet(out, start, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What libmariadb 10.11 (`mysql_stmt_execute` with STMT_ATTR_ARRAY_SIZE
    /// 2, row-wise binding) sent to MariaDB 10.11 for `INSERT INTO sbg(id,
    /// k, c, pad) VALUES(?, ?, ?, ?)` with the rows (1, 7, 'ab', 'c') and
    /// (2, 8, 'xyz', ''): unsigned LONGs and STRINGs, captured with strace.
    const LIBMARIADB_TWO_ROWS: &[u8] = &[
        0x31, 0x00, 0x00, 0x00, 0xfa, 0x08, 0x00, 0x00, 0x00, 0x80, 0x00, 0x03, 0x80, 0x03, 0x80, 0xfe, 0x00, 0xfe,
        0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x00, 0x02, 0x61, 0x62, 0x00, 0x01, 0x63,
        0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x03, 0x78, 0x79, 0x7a, 0x00, 0x00,
    ];

    fn row<'a>(id: u32, k: u32, c: &'a [u8], pad: &'a [u8]) -> [Param<'a>; 4] {
        [Param::U32(id), Param::U32(k), Param::Bytes(c), Param::Bytes(pad)]
    }

    #[test]
    fn two_rows_as_libmariadb_sends_them() {
        let first = row(1, 7, b"ab", b"c");
        let mut rows = Vec::new();
        push_bulk_row(&mut rows, &first);
        push_bulk_row(&mut rows, &row(2, 8, b"xyz", b""));
        let types: Vec<[u8; 2]> = first.iter().map(Param::type_bytes).collect();
        let mut out = Vec::new();
        assert_eq!(encode_bulk_execute(&mut out, 8, &types, &rows), 1);
        assert_eq!(out, LIBMARIADB_TWO_ROWS);
        assert_eq!(out.len() - 4, bulk_execute_head_len(4) + rows.len());
    }

    #[test]
    fn a_null_is_its_indicator_alone() {
        let mut rows = Vec::new();
        push_bulk_row(&mut rows, &[Param::Null, Param::I16(-2), Param::Null]);
        assert_eq!(rows, [NULL_VALUE, VALUE_FOLLOWS, 0xfe, 0xff, NULL_VALUE]);
    }

    #[test]
    fn a_payload_of_16_mib_or_more_splits() {
        let mut rows = Vec::new();
        let big = vec![b'x'; 1 << 24];
        push_bulk_row(&mut rows, &[Param::Bytes(&big)]);
        let mut out = Vec::new();
        let seq = encode_bulk_execute(&mut out, 1, &[Param::Bytes(b"").type_bytes()], &rows);
        assert_eq!(seq, 2, "a full packet, then the rest");
        assert_eq!(&out[..4], &[0xff, 0xff, 0xff, 0x00]);
        assert_eq!(out.len(), 4 + 0xff_ffff + 4 + (bulk_execute_head_len(1) + rows.len() - 0xff_ffff));
    }
}
