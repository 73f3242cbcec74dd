//! COM_FIELD_LIST (deprecated, still served by MariaDB and MySQL 8.0):
//! `0x04`, the table name (string<NUL>), then a column-name wildcard to the
//! end of the payload. The answer is one column definition per matching
//! column and an EOF, or ERR.

use crate::buf::WriteExt;
use crate::constants::command::COM_FIELD_LIST;
use crate::error::UsageError;
use crate::framing::{finish_packet, start_packet};

/// Appends a COM_FIELD_LIST packet for `table` and `wildcard` (empty: every
/// column). Fails, writing nothing, when the table name contains a NUL.
pub fn encode_field_list(out: &mut Vec<u8>, table: &[u8], wildcard: &[u8]) -> Result<(), UsageError> {
    if table.contains(&0) {
        return Err(UsageError::NulInField("table name"));
    }
    let start = start_packet(out);
    out.put_u8(COM_FIELD_LIST);
    out.put_null_terminated(table);
    out.put_bytes(wildcard);
    finish_packet(out, start, 0);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_nul_then_wildcard() {
        let mut out = Vec::new();
        encode_field_list(&mut out, b"t1", b"a%").unwrap();
        assert_eq!(out, [0x06, 0x00, 0x00, 0x00, 0x04, b't', b'1', 0x00, b'a', b'%']);
    }

    #[test]
    fn nul_in_the_table_name_is_refused() {
        let mut out = Vec::new();
        assert_eq!(encode_field_list(&mut out, b"t\x001", b""), Err(UsageError::NulInField("table name")));
        assert!(out.is_empty());
    }
}
