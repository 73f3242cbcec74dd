//! COM_PING: the single byte `0x0E`; the server answers OK (sequence id 1).

use crate::constants::command::COM_PING;

/// Appends a COM_PING packet.
pub fn encode_ping(out: &mut Vec<u8>) {
    super::encode_bare_command(out, COM_PING);
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
