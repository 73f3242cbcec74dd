//! Finding the first whole command in the client's bytes of a connection
//! joined midway (or after bytes were lost): a packet that starts where a
//! TCP segment started, with sequence id 0, a command byte that exists and
//! a body that fits it, ending where the client's bytes end or another
//! segment starts.

use wirebench_protocol::constants::command as com;
use wirebench_protocol::framing::{Header, HEADER_LEN, MAX_FRAGMENT};
use wirebench_protocol::response::AnswerForm;

/// Where the search stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Found {
    /// A command starts at this offset.
    At(usize),
    /// A candidate at this offset is not whole yet.
    Wait(usize),
    /// Nothing here: the bytes before this offset can go.
    Nothing(usize),
}

/// Looks for a command at the segment starts `starts` of `client`.
pub(crate) fn find_command(client: &[u8], starts: &[usize]) -> Found {
    for (i, &start) in starts.iter().enumerate() {
        let rest = client.get(start..).unwrap_or_default();
        let Some(header) = Header::parse(rest) else { return Found::Wait(start) };
        let Some(&command) = rest.get(HEADER_LEN) else { return Found::Wait(start) };
        if header.seq != 0
            || header.len == 0
            || !plausible(command, rest.get(HEADER_LEN..).unwrap_or_default(), header.len)
        {
            continue;
        }
        if header.len >= MAX_FRAGMENT {
            // A command over 16 MiB: trusted on its header alone.
            return Found::At(start);
        }
        let end = start + HEADER_LEN + header.len;
        if end > client.len() {
            return Found::Wait(start);
        }
        let later = starts.get(i + 1..).unwrap_or_default();
        if end == client.len() || later.contains(&end) {
            return Found::At(start);
        }
    }
    Found::Nothing(starts.last().copied().unwrap_or(client.len()))
}

/// Whether a command byte and the start of its body fit each other.
fn plausible(command: u8, body: &[u8], len: usize) -> bool {
    // The first bytes of a statement that are in yet (none yet: judged when they come).
    let text = |from: usize| {
        let available = body.get(from..len.min(body.len())).unwrap_or_default();
        let sample = available.get(..available.len().min(64)).unwrap_or_default();
        len > from && sample.iter().all(|&b| b >= 0x20 || b == b'\n' || b == b'\r' || b == b'\t')
    };
    match command {
        com::COM_QUERY | com::COM_STMT_PREPARE => text(1),
        com::COM_INIT_DB => text(1) && len < 256,
        com::COM_QUIT | com::COM_PING | com::COM_STATISTICS | com::COM_RESET_CONNECTION => len == 1,
        com::COM_STMT_CLOSE | com::COM_STMT_RESET => len == 5,
        com::COM_SET_OPTION => len == 3,
        com::COM_STMT_FETCH => len == 9,
        // Statement id, flags (cursor types, at most 0x0F), iteration count 1.
        com::COM_STMT_EXECUTE => {
            len >= 10 && body.get(5).is_some_and(|&f| f <= 0x0F) && body.get(6..10) == Some(&[1, 0, 0, 0][..])
        }
        com::COM_STMT_SEND_LONG_DATA => len >= 7,
        com::COM_STMT_BULK_EXECUTE => len >= 7,
        com::COM_CHANGE_USER | com::COM_FIELD_LIST => text(1),
        _ => false,
    }
}

/// Whether a command can be summarised at all (replication streams cannot).
pub(crate) fn summarisable(command: u8) -> bool {
    AnswerForm::of(command) != AnswerForm::Unsupported
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(payload: &[u8]) -> Vec<u8> {
        let mut out = (payload.len() as u32).to_le_bytes()[..3].to_vec();
        out.push(0);
        out.extend_from_slice(payload);
        out
    }

    #[test]
    fn the_first_whole_command_at_a_segment_start() {
        // The tail of a command whose start the capture missed, then a whole one.
        let mut client = b"ERE id=5".to_vec();
        let at = client.len();
        client.extend(command(b"\x03SELECT 1"));
        assert_eq!(find_command(&client, &[0, at]), Found::At(at));
        // Its end not in yet.
        assert_eq!(find_command(&client[..at + 6], &[0, at]), Found::Wait(at));
        assert_eq!(find_command(b"ERE id=5", &[0]), Found::Nothing(0));
    }

    #[test]
    fn bodies_must_fit_their_command() {
        assert_eq!(find_command(&command(b"\x0e"), &[0]), Found::At(0));
        assert_eq!(find_command(&command(b"\x0ezzz"), &[0]), Found::Nothing(0));
        let execute = command(b"\x17\x01\0\0\0\0\x01\0\0\0");
        assert_eq!(find_command(&execute, &[0]), Found::At(0));
        let not_execute = command(b"\x17\x01\0\0\0\x80\x07\0\0\0");
        assert_eq!(find_command(&not_execute, &[0]), Found::Nothing(0));
        assert_eq!(find_command(&command(b"\x03\x01\x02binary"), &[0]), Found::Nothing(0));
        assert!(!summarisable(0x12));
    }

    #[test]
    fn a_command_must_end_where_the_bytes_or_a_segment_end() {
        let mut client = command(b"\x03SELECT 1");
        client.extend_from_slice(b"junk");
        assert_eq!(find_command(&client, &[0]), Found::Nothing(0));
        let end = client.len() - 4;
        assert_eq!(find_command(&client, &[0, end]), Found::At(0));
    }
}
