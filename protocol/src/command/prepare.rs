//! COM_STMT_PREPARE: `0x16`, then the statement text to the end of the
//! payload. The server answers with COM_STMT_PREPARE_OK (statement id, column
//! and parameter counts) or ERR.

use crate::constants::command::COM_STMT_PREPARE;

/// Appends a COM_STMT_PREPARE packet for `sql`, split like a query when it
/// reaches 16 MiB. Returns the sequence id the server's response starts with.
pub fn encode_prepare(out: &mut Vec<u8>, sql: &[u8]) -> u8 {
    super::encode_simple(out, COM_STMT_PREPARE, sql)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framing::{decode_packet, MAX_FRAGMENT};

    #[test]
    fn mysql_documented_example() {
        // The protocol documentation's COM_STMT_PREPARE example:
        // 1c 00 00 00 16 53 45 4c 45 43 54 20 43 4f 4e 43
        // 41 54 28 3f 2c 20 3f 29 20 41 53 20 63 6f 6c 31
        let expected = [
            0x1c, 0x00, 0x00, 0x00, 0x16, 0x53, 0x45, 0x4c, 0x45, 0x43, 0x54, 0x20, 0x43, 0x4f, 0x4e, 0x43, 0x41, 0x54,
            0x28, 0x3f, 0x2c, 0x20, 0x3f, 0x29, 0x20, 0x41, 0x53, 0x20, 0x63, 0x6f, 0x6c, 0x31,
        ];
        let mut out = Vec::new();
        assert_eq!(encode_prepare(&mut out, b"SELECT CONCAT(?, ?) AS col1"), 1);
        assert_eq!(out, expected);
    }

    #[test]
    fn mariadb_documented_example() {
        // MariaDB's COM_STMT_PREPARE page: 1F 00 00 00 16 53 45 4C 45 43 54 20
        // 2A 20 46 52 4F 4D 20 74 65 73 74 5F 62 69 6E 64 5F 72 65 73 75 6C 74
        let expected = [
            0x1F, 0x00, 0x00, 0x00, 0x16, 0x53, 0x45, 0x4C, 0x45, 0x43, 0x54, 0x20, 0x2A, 0x20, 0x46, 0x52, 0x4F, 0x4D,
            0x20, 0x74, 0x65, 0x73, 0x74, 0x5F, 0x62, 0x69, 0x6E, 0x64, 0x5F, 0x72, 0x65, 0x73, 0x75, 0x6C, 0x74,
        ];
        let mut out = Vec::new();
        encode_prepare(&mut out, b"SELECT * FROM test_bind_result");
        assert_eq!(out, expected);
    }

    #[test]
    fn matches_what_libmariadb_sends() {
        // Captured with strace from sysbench 1.0.20 (libmariadb 3) preparing
        // oltp_point_select's statement on MariaDB 10.11.
        let mut expected = vec![0x21, 0x00, 0x00, 0x00, 0x16];
        expected.extend_from_slice(b"SELECT c FROM sbtest1 WHERE id=?");
        let mut out = Vec::new();
        encode_prepare(&mut out, b"SELECT c FROM sbtest1 WHERE id=?");
        assert_eq!(out, expected);
    }

    #[test]
    fn large_statement_splits() {
        let sql = vec![b'?'; MAX_FRAGMENT + 5];
        let mut out = Vec::new();
        assert_eq!(encode_prepare(&mut out, &sql), 2);
        let frame = decode_packet(&out, 0, usize::MAX).unwrap().unwrap();
        assert_eq!(frame.payload[0], COM_STMT_PREPARE);
        assert_eq!(frame.payload.len(), sql.len() + 1);
    }
}
