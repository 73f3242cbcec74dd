//! COM_INIT_DB: `0x02`, then the schema name to the end of the payload
//! (`string<EOF>`, not quoted). Equivalent to `USE schema`; the server answers
//! OK or ERR.

use crate::constants::command::COM_INIT_DB;

/// Appends a COM_INIT_DB packet for `schema`. Returns the sequence id the
/// server's response starts with.
pub fn encode_init_db(out: &mut Vec<u8>, schema: &[u8]) -> u8 {
    super::encode_simple(out, COM_INIT_DB, schema)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mysql_documented_example() {
        // The protocol documentation's COM_INIT_DB example: 05 00 00 00 02 74 65 73 74
        let mut out = Vec::new();
        assert_eq!(encode_init_db(&mut out, b"test"), 1);
        assert_eq!(out, [0x05, 0x00, 0x00, 0x00, 0x02, 0x74, 0x65, 0x73, 0x74]);
    }

    #[test]
    fn mariadb_documented_example() {
        // MariaDB's COM_INIT_DB page: 06 00 00 00 02 74 65 73 74 63
        let mut out = Vec::new();
        encode_init_db(&mut out, b"testc");
        assert_eq!(out, [0x06, 0x00, 0x00, 0x00, 0x02, 0x74, 0x65, 0x73, 0x74, 0x63]);
    }
}
