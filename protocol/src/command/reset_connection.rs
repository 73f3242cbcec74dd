//! COM_RESET_CONNECTION: the single byte `0x1F`. The server resets the
//! session (user variables, temporary tables, prepared statements) without
//! a new login and answers OK.

use crate::constants::command::COM_RESET_CONNECTION;

/// Appends a COM_RESET_CONNECTION packet.
pub fn encode_reset_connection(out: &mut Vec<u8>) {
    super::encode_bare_command(out, COM_RESET_CONNECTION);
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
