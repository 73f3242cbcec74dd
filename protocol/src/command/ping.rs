//! COM_PING: the single byte `0x0E`; the server answers OK (sequence id 1).

use crate::buf::WriteExt;
use crate::constants::command::COM_PING;
use crate::framing::{finish_packet, start_packet};

/// Appends a COM_PING packet.
pub fn encode_ping(out: &mut Vec<u8>) {
    let start = start_packet(out);
    out.put_u8(COM_PING);
    finish_packet(out, start, 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documented_example() {
        // The protocol documentation's COM_PING example: 01 00 00 00 0e
        let mut out = Vec::new();
        encode_ping(&mut out);
        assert_eq!(out, [0x01, 0x00, 0x00, 0x00, 0x0e]);
    }
}
