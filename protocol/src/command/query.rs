//! COM_QUERY: `0x03`, then the statement text to the end of the payload
//! (`string<EOF>`: its length is the payload length minus one, so it may hold
//! any byte, NUL included).
//!
//! CLIENT_QUERY_ATTRIBUTES (MySQL 8.0.23+) would put a parameter block before
//! the text; wirebench never negotiates it, so the text follows the command
//! byte directly.

use crate::constants::command::COM_QUERY;

/// Appends a COM_QUERY packet for `sql`. A statement of 16 MiB or more is
/// split into several packets (sequence ids 0, 1, ...); the returned sequence
/// id is the one the server's response starts with.
pub fn encode_query(out: &mut Vec<u8>, sql: &[u8]) -> u8 {
    super::encode_simple(out, COM_QUERY, sql)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framing::{decode_packet, HEADER_LEN, MAX_FRAGMENT};

    #[test]
    fn mysql_documented_example() {
        // The protocol documentation's COM_QUERY example:
        // 21 00 00 00 03 73 65 6c 65 63 74 20 40 40 76 65 72 73 69 6f 6e 5f
        // 63 6f 6d 6d 65 6e 74 20 6c 69 6d 69 74 20 31
        let expected = [
            0x21, 0x00, 0x00, 0x00, 0x03, 0x73, 0x65, 0x6c, 0x65, 0x63, 0x74, 0x20, 0x40, 0x40, 0x76, 0x65, 0x72, 0x73,
            0x69, 0x6f, 0x6e, 0x5f, 0x63, 0x6f, 0x6d, 0x6d, 0x65, 0x6e, 0x74, 0x20, 0x6c, 0x69, 0x6d, 0x69, 0x74, 0x20,
            0x31,
        ];
        let mut out = Vec::new();
        assert_eq!(encode_query(&mut out, b"select @@version_comment limit 1"), 1);
        assert_eq!(out, expected);
    }

    #[test]
    fn mariadb_documented_example() {
        // MariaDB's COM_QUERY page: 1b 00 00 00 03 44 52 4f 50 20 54 41 42 4c
        // 45 20 49 46 20 45 58 49 53 54 53 20 62 75 6c 6b 31
        let expected = [
            0x1b, 0x00, 0x00, 0x00, 0x03, 0x44, 0x52, 0x4f, 0x50, 0x20, 0x54, 0x41, 0x42, 0x4c, 0x45, 0x20, 0x49, 0x46,
            0x20, 0x45, 0x58, 0x49, 0x53, 0x54, 0x53, 0x20, 0x62, 0x75, 0x6c, 0x6b, 0x31,
        ];
        let mut out = vec![0xAA];
        encode_query(&mut out, b"DROP TABLE IF EXISTS bulk1");
        assert_eq!(out[0], 0xAA, "appends after what the buffer already holds");
        assert_eq!(&out[1..], expected);
    }

    #[test]
    fn statement_of_16_mib_splits() {
        // Payload = 1 command byte + SQL. One byte over a full fragment: a
        // 0xFFFFFF-byte packet, then a 1-byte one; the response starts at 2.
        let sql = vec![b'x'; MAX_FRAGMENT];
        let mut out = Vec::new();
        assert_eq!(encode_query(&mut out, &sql), 2);
        assert_eq!(&out[..HEADER_LEN + 1], &[0xFF, 0xFF, 0xFF, 0x00, 0x03]);
        let second = MAX_FRAGMENT + HEADER_LEN;
        assert_eq!(&out[second..], &[0x01, 0x00, 0x00, 0x01, b'x']);
        let frame = decode_packet(&out, 0, usize::MAX).unwrap().unwrap();
        assert_eq!(frame.payload[0], COM_QUERY);
        assert_eq!(&frame.payload[1..], &sql[..]);
        assert_eq!(frame.next_seq, 2);
    }

    #[test]
    fn statement_filling_exactly_one_fragment_ends_with_an_empty_packet() {
        let sql = vec![b'y'; MAX_FRAGMENT - 1];
        let mut out = Vec::new();
        assert_eq!(encode_query(&mut out, &sql), 2);
        assert_eq!(out.len(), MAX_FRAGMENT + 2 * HEADER_LEN);
        assert_eq!(&out[MAX_FRAGMENT + HEADER_LEN..], &[0x00, 0x00, 0x00, 0x01]);
        let frame = decode_packet(&out, 0, usize::MAX).unwrap().unwrap();
        assert_eq!(frame.payload.len(), MAX_FRAGMENT);
        assert_eq!(frame.consumed, out.len());
    }

    #[test]
    fn just_under_the_limit_is_one_packet() {
        let sql = vec![b'z'; MAX_FRAGMENT - 2];
        let mut out = Vec::new();
        assert_eq!(encode_query(&mut out, &sql), 1);
        assert_eq!(&out[..HEADER_LEN], &[0xFE, 0xFF, 0xFF, 0x00]);
        assert_eq!(out.len(), HEADER_LEN + MAX_FRAGMENT - 1);
    }
}
