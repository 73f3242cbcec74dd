//! COM_STMT_SEND_LONG_DATA: `0x18`, the statement id (int<4>), the
//! parameter id (int<2>, from 0), then a piece of that parameter's value to
//! the end of the payload. The server appends the pieces and uses them at
//! the next execute; it sends no answer (an error, such as an unknown
//! parameter id, is reported by that execute).

use crate::buf::WriteExt;
use crate::constants::command::COM_STMT_SEND_LONG_DATA;
use crate::framing::{finish_packet, start_packet};

/// Appends a COM_STMT_SEND_LONG_DATA packet carrying `data` for parameter
/// `param_id` of statement `stmt_id`, split like a query when it reaches
/// 16 MiB. Nothing comes back.
pub fn encode_send_long_data(out: &mut Vec<u8>, stmt_id: u32, param_id: u16, data: &[u8]) {
    let start = start_packet(out);
    out.put_u8(COM_STMT_SEND_LONG_DATA);
    out.put_u32(stmt_id);
    out.put_u16(param_id);
    out.put_bytes(data);
    finish_packet(out, start, 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_in_documented_order() {
        // Length 10: 0x18, statement 0x01020304, parameter 2, then "abc".
        let mut out = Vec::new();
        encode_send_long_data(&mut out, 0x0102_0304, 2, b"abc");
        assert_eq!(out, [0x0a, 0x00, 0x00, 0x00, 0x18, 0x04, 0x03, 0x02, 0x01, 0x02, 0x00, b'a', b'b', b'c']);
    }

    #[test]
    fn empty_data_is_allowed() {
        let mut out = Vec::new();
        encode_send_long_data(&mut out, 1, 0, b"");
        assert_eq!(out, [0x07, 0x00, 0x00, 0x00, 0x18, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00]);
    }
}
