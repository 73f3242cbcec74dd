//! COM_STMT_FETCH: `0x1C`, the statement id (int<4>), the number of rows
//! wanted (int<4>). Valid after an execute that opened a cursor (flags
//! byte CURSOR_TYPE_READ_ONLY); the server answers with up to that many
//! binary rows and an EOF (or an OK under DEPRECATE_EOF), or with ERR.

use crate::buf::WriteExt;
use crate::constants::command::COM_STMT_FETCH;
use crate::framing::{finish_packet, start_packet};

/// The execute flags byte that opens a read-only cursor.
pub const CURSOR_TYPE_READ_ONLY: u8 = 0x01;

/// Appends a COM_STMT_FETCH packet asking for `rows` rows of `stmt_id`'s cursor.
pub fn encode_stmt_fetch(out: &mut Vec<u8>, stmt_id: u32, rows: u32) {
    let start = start_packet(out);
    out.put_u8(COM_STMT_FETCH);
    out.put_u32(stmt_id);
    out.put_u32(rows);
    finish_packet(out, start, 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statement_then_row_count() {
        let mut out = Vec::new();
        encode_stmt_fetch(&mut out, 7, 0x0100);
        assert_eq!(out, [0x09, 0x00, 0x00, 0x00, 0x1c, 0x07, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00]);
    }
}
