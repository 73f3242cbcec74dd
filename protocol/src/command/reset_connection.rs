//! COM_RESET_CONNECTION: the single byte `0x1F`. The server resets the
//! session (user variables, temporary tables, prepared statements) without
//! a new login and answers OK.

use crate::buf::WriteExt;
use crate::constants::command::COM_RESET_CONNECTION;
use crate::framing::{finish_packet, start_packet};

/// Appends a COM_RESET_CONNECTION packet.
pub fn encode_reset_connection(out: &mut Vec<u8>) {
    let start = start_packet(out);
    out.put_u8(COM_RESET_CONNECTION);
    finish_packet(out, start, 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_byte() {
        let mut out = Vec::new();
        encode_reset_connection(&mut out);
        assert_eq!(out, [0x01, 0x00, 0x00, 0x00, 0x1f]);
    }
}
