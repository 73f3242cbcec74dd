//! COM_STMT_RESET: `0x1A`, then the statement id (int<4>). It discards data
//! sent with COM_STMT_SEND_LONG_DATA and closes an open cursor; the server
//! answers OK or ERR (response sequence id 1).

use crate::constants::command::COM_STMT_RESET;

/// Appends a COM_STMT_RESET packet for `stmt_id`.
pub fn encode_stmt_reset(out: &mut Vec<u8>, stmt_id: u32) {
    super::encode_simple(out, COM_STMT_RESET, &stmt_id.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mariadb_documented_example() {
        // MariaDB's COM_STMT_RESET page: 05 00 00 00 1A 04 00 00 00
        let mut out = Vec::new();
        encode_stmt_reset(&mut out, 4);
        assert_eq!(out, [0x05, 0x00, 0x00, 0x00, 0x1A, 0x04, 0x00, 0x00, 0x00]);
    }
}
