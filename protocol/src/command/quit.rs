//! COM_QUIT: the single byte `0x01`. The server closes the connection (or,
//! rarely, answers ERR); a client sends it and then closes its side.

use crate::constants::command::COM_QUIT;

/// Appends a COM_QUIT packet.
pub fn encode_quit(out: &mut Vec<u8>) {
    super::encode_bare_command(out, COM_QUIT);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documented_example() {
        // The protocol documentation's COM_QUIT example: 01 00 00 00 01
        let mut out = Vec::new();
        encode_quit(&mut out);
        assert_eq!(out, [0x01, 0x00, 0x00, 0x00, 0x01]);
    }
}
