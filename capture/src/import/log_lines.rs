//! What the general and slow log imports share: reading lines, the
//! servers' timestamps, and the table of connections by thread id.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::BufRead;

use super::ImportReport;
use crate::format::{CloseReason, ConnId, ConnectionClose, ConnectionOpen, Record};

/// The longest line read: a statement of MySQL's largest max_allowed_packet.
const MAX_LINE: usize = (1 << 30) + 4096;

/// Lines of a log, each with the offset it starts at.
pub(crate) struct Lines<R: BufRead> {
    input: R,
    offset: u64,
    line: Vec<u8>,
    /// A line read ahead and put back.
    peeked: bool,
}

impl<R: BufRead> Lines<R> {
    pub(crate) fn new(input: R) -> Self {
        Lines { input, offset: 0, line: Vec::new(), peeked: false }
    }

    /// The next line without its line end; `None` at the end.
    pub(crate) fn next_line(&mut self) -> std::io::Result<Option<&[u8]>> {
        if self.peeked {
            self.peeked = false;
            return Ok(Some(&self.line));
        }
        self.line.clear();
        let got =
            <&mut R as std::io::Read>::take(&mut self.input, MAX_LINE as u64).read_until(b'\n', &mut self.line)?;
        if got == 0 {
            return Ok(None);
        }
        self.offset += got as u64;
        if self.line.last() == Some(&b'\n') {
            self.line.pop();
        } else if got >= MAX_LINE {
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, "a line longer than 1 GiB: not a log"));
        }
        if self.line.last() == Some(&b'\r') {
            self.line.pop();
        }
        Ok(Some(&self.line))
    }

    /// Puts the last line back, to be read again.
    pub(crate) fn put_back(&mut self) {
        self.peeked = true;
    }
}

/// Days from 1970-01-01 to a civil date (proleptic Gregorian; Howard
/// Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = i64::from((month + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn digits(text: &[u8]) -> Option<u64> {
    if text.is_empty() || text.len() > 18 || !text.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(text.iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0')))
}

/// ns since the epoch of a civil date and time (taken as UTC).
fn epoch_ns(year: i64, month: u64, day: u64, h: u64, m: u64, s: u64, nanos: u64) -> Option<u64> {
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || h > 23 || m > 59 || s > 60 {
        return None;
    }
    let days = days_from_civil(year, month as u32, day as u32);
    let seconds = days.checked_mul(86_400)?.checked_add((h * 3600 + m * 60 + s) as i64)?;
    u64::try_from(seconds).ok()?.checked_mul(1_000_000_000)?.checked_add(nanos)
}

/// MySQL's ISO 8601 time, `2023-10-10T12:00:00.123456Z` or with a
/// `+02:00` offset (log_timestamps=SYSTEM): ns since the epoch.
pub(crate) fn iso_time(text: &[u8]) -> Option<u64> {
    let field = |a: usize, b: usize| text.get(a..b).and_then(digits);
    if text.get(4) != Some(&b'-') || text.get(10) != Some(&b'T') {
        return None;
    }
    let (year, month, day) = (field(0, 4)?, field(5, 7)?, field(8, 10)?);
    let (h, m, s) = (field(11, 13)?, field(14, 16)?, field(17, 19)?);
    let mut at = 19;
    let mut nanos = 0;
    if text.get(at) == Some(&b'.') {
        let fraction: Vec<u8> = text.get(at + 1..)?.iter().take_while(|b| b.is_ascii_digit()).copied().collect();
        let scale = 10u64.checked_pow(9u32.checked_sub(fraction.len().min(9) as u32)?)?;
        nanos = digits(fraction.get(..fraction.len().min(9))?)? * scale;
        at += 1 + fraction.len();
    }
    let base = epoch_ns(year as i64, month, day, h, m, s, nanos)?;
    match text.get(at..)? {
        b"Z" | b"" => Some(base),
        [sign @ (b'+' | b'-'), rest @ ..] if rest.len() == 5 && rest.get(2) == Some(&b':') => {
            let offset_ns = (digits(rest.get(..2)?)? * 3600 + digits(rest.get(3..)?)? * 60) * 1_000_000_000;
            if *sign == b'+' {
                base.checked_sub(offset_ns)
            } else {
                base.checked_add(offset_ns)
            }
        }
        _ => None,
    }
}

/// MariaDB's `YYMMDD HH:MM:SS` (the hour may be space-padded), in the
/// server's local time, which the log does not name: taken as UTC.
pub(crate) fn mariadb_time(text: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(text).ok()?;
    let (date, time) = text.trim().split_once(' ')?;
    let date = date.as_bytes();
    if date.len() != 6 {
        return None;
    }
    let field = |a: usize| date.get(a..a + 2).and_then(digits);
    let mut parts = time.trim().split(':').map(|p| digits(p.as_bytes()));
    let (h, m, s) = (parts.next()??, parts.next()??, parts.next()??);
    epoch_ns(2000 + field(0)? as i64, field(2)?, field(4)?, h, m, s, 0)
}

/// The connections of a log, by the server's thread id.
#[derive(Debug, Default)]
pub(crate) struct Threads {
    open: HashMap<u64, ConnId>,
    next: ConnId,
}

impl Threads {
    pub(crate) fn get(&self, thread: u64) -> Option<ConnId> {
        self.open.get(&thread).copied()
    }

    /// Opens a connection for `thread`, closing one it had (its Quit was not logged).
    pub(crate) fn open(
        &mut self,
        mut open: ConnectionOpen<'static>,
        thread: u64,
        out: &mut Vec<Record<'static>>,
        report: &mut ImportReport,
    ) -> ConnId {
        if let Some(old) = self.open.remove(&thread) {
            out.push(Record::Close(ConnectionClose { at_ns: open.at_ns, conn: old, reason: CloseReason::NotLogged }));
        }
        self.next += 1;
        open.conn = self.next;
        open.server_thread_id = Some(thread);
        self.open.insert(thread, self.next);
        report.connections += 1;
        report.already_open += u64::from(open.already_open);
        out.push(Record::Open(open));
        self.next
    }

    /// The connection of a thread seen first in the middle of its life.
    pub(crate) fn get_or_join(
        &mut self,
        thread: u64,
        at_ns: u64,
        out: &mut Vec<Record<'static>>,
        report: &mut ImportReport,
    ) -> ConnId {
        if let Some(conn) = self.get(thread) {
            return conn;
        }
        let open = ConnectionOpen { at_ns, already_open: true, ..ConnectionOpen::default() };
        self.open(open, thread, out, report)
    }

    pub(crate) fn close(&mut self, thread: u64, at_ns: u64, reason: CloseReason, out: &mut Vec<Record<'static>>) {
        if let Some(conn) = self.open.remove(&thread) {
            out.push(Record::Close(ConnectionClose { at_ns, conn, reason }));
        }
    }

    /// Closes every connection (the log ended, or the server restarted).
    pub(crate) fn close_all(&mut self, at_ns: u64, reason: CloseReason, out: &mut Vec<Record<'static>>) {
        let mut conns: Vec<ConnId> = self.open.drain().map(|(_, conn)| conn).collect();
        conns.sort_unstable();
        for conn in conns {
            out.push(Record::Close(ConnectionClose { at_ns, conn, reason }));
        }
    }
}

/// `Some(Cow::Owned)` of a non-empty field.
pub(crate) fn field(bytes: &[u8]) -> Option<Cow<'static, [u8]>> {
    (!bytes.is_empty()).then(|| Cow::Owned(bytes.to_vec()))
}

/// Whether a line starts a server's log (`mariadbd, Version: ... started
/// with:`): the server (re)started.
pub(crate) fn is_start_banner(line: &[u8]) -> bool {
    line.ends_with(b"started with:") && line.windows(10).any(|w| w == b", Version:")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_of_both_servers() {
        // 2023-10-10T12:00:00Z is 1696939200.
        assert_eq!(iso_time(b"2023-10-10T12:00:00.123456Z"), Some(1_696_939_200_123_456_000));
        assert_eq!(iso_time(b"2023-10-10T14:00:00.5+02:00"), Some(1_696_939_200_500_000_000));
        assert_eq!(iso_time(b"2023-10-10T12:00:00Z"), Some(1_696_939_200_000_000_000));
        assert_eq!(mariadb_time(b"231010 12:00:00"), Some(1_696_939_200_000_000_000));
        assert_eq!(
            mariadb_time(b"231010  9:05:03"),
            Some(1_696_939_200_000_000_000 - (2 * 3600 + 54 * 60 + 57) * 1_000_000_000)
        );
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        for bad in
            [&b""[..], b"2023-13-10T12:00:00Z", b"2023-10-10 12:00:00", b"2023-10-10T12:00:00+0200", b"231310 12:00:00"]
        {
            assert_eq!(iso_time(bad).or_else(|| mariadb_time(bad)), None, "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn lines_end_with_either_line_end() {
        let mut lines = Lines::new(&b"a\r\nb\nc"[..]);
        assert_eq!(lines.next_line().unwrap(), Some(&b"a"[..]));
        assert_eq!(lines.next_line().unwrap(), Some(&b"b"[..]));
        lines.put_back();
        assert_eq!(lines.next_line().unwrap(), Some(&b"b"[..]));
        assert_eq!(lines.next_line().unwrap(), Some(&b"c"[..]));
        assert_eq!(lines.next_line().unwrap(), None);
    }
}
