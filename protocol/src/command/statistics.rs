//! COM_STATISTICS: the single byte `0x09`. The answer is one packet holding
//! a human-readable status line (`Uptime: 42  Threads: 1 ...`) with no
//! header byte: neither OK nor a result set.

use crate::constants::command::COM_STATISTICS;

/// Appends a COM_STATISTICS packet.
pub fn encode_statistics(out: &mut Vec<u8>) {
    super::encode_bare_command(out, COM_STATISTICS);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documented_example() {
        // The protocol documentation's COM_STATISTICS: 01 00 00 00 09
        let mut out = Vec::new();
        encode_statistics(&mut out);
        assert_eq!(out, [0x01, 0x00, 0x00, 0x00, 0x09]);
    }
}
