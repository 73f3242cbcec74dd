//! COM_STMT_CLOSE: `0x19`, then the statement id (int<4>).
//!
//! The server sends no response at all, not even OK: the caller must not wait
//! for one, and the next command still starts at sequence id 0.

use crate::constants::command::COM_STMT_CLOSE;

/// Appends a COM_STMT_CLOSE packet for `stmt_id`. Nothing comes back.
pub fn encode_stmt_close(out: &mut Vec<u8>, stmt_id: u32) {
    super::encode_simple(out, COM_STMT_CLOSE, &stmt_id.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mariadb_documented_example() {
        // MariaDB's COM_STMT_CLOSE page: 05 00 00 00 19 04 00 00 00
        let mut out = Vec::new();
        encode_stmt_close(&mut out, 4);
        assert_eq!(out, [0x05, 0x00, 0x00, 0x00, 0x19, 0x04, 0x00, 0x00, 0x00]);
    }

    #[test]
    fn matches_what_libmariadb_sends() {
        // sysbench 1.0.20 (libmariadb 3) closing statement 7 at disconnect.
        let mut out = Vec::new();
        encode_stmt_close(&mut out, 7);
        assert_eq!(out, [0x05, 0x00, 0x00, 0x00, 0x19, 0x07, 0x00, 0x00, 0x00]);
    }

    #[test]
    fn statement_id_is_little_endian() {
        let mut out = Vec::new();
        encode_stmt_close(&mut out, 0x0403_0201);
        assert_eq!(out, [0x05, 0x00, 0x00, 0x00, 0x19, 0x01, 0x02, 0x03, 0x04]);
    }
}
