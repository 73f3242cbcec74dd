//! COM_SET_OPTION: `0x1B`, then the option (int<2>): 0 turns
//! CLIENT_MULTI_STATEMENTS on, 1 off. The server answers with an EOF
//! packet (not OK) or ERR (1047 for an unknown option on MariaDB).

use crate::constants::command::COM_SET_OPTION;

/// MYSQL_OPTION_MULTI_STATEMENTS_ON.
pub const MULTI_STATEMENTS_ON: u16 = 0;
/// MYSQL_OPTION_MULTI_STATEMENTS_OFF.
pub const MULTI_STATEMENTS_OFF: u16 = 1;

/// Appends a COM_SET_OPTION packet.
pub fn encode_set_option(out: &mut Vec<u8>, option: u16) {
    super::encode_simple(out, COM_SET_OPTION, &option.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_statements_off() {
        let mut out = Vec::new();
        encode_set_option(&mut out, MULTI_STATEMENTS_OFF);
        assert_eq!(out, [0x03, 0x00, 0x00, 0x00, 0x1b, 0x01, 0x00]);
    }
}
