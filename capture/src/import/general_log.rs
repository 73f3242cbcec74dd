//! `capture import --from=general-log`: MariaDB's and MySQL's general
//! query log.
//!
//! A line is `TIME<TAB>ID COMMAND<TAB>ARGUMENT`: MySQL 5.7 and 8 give every
//! line an ISO 8601 time with microseconds; MariaDB gives `YYMMDD HH:MM:SS`
//! only when the second changed, two tabs otherwise. An argument with line
//! breaks (a multi-line statement) goes on over the lines that follow, up
//! to the next line that is one. The log has no answers and, from
//! MariaDB, times to the second: the header says so, and no answer
//! record is written.
//!
//! Connect opens a connection (user, host, database, whether over TLS);
//! Quit closes it; Query, Prepare and Init DB are their commands' wire
//! payloads; Execute (the statement with its values in place), Close stmt
//! and the other statement commands keep the log's text (`text_form`).

use std::io::BufRead;
use std::io::Write;

use wirebench_protocol::constants::command as com;

use super::emit::Emitter;
use super::log_lines::{field, is_start_banner, iso_time, mariadb_time, Lines, Threads};
use super::{ImportError, ImportReport, ImportSettings};
use crate::commands::command_byte;
use crate::format::{
    AnswerCoverage, CaptureHeader, CaptureWriter, CloseReason, Command, ConnectionOpen, Record, Source,
};

/// One line of the log that starts an entry.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    /// Its time; `None` for MariaDB's lines that repeat the second before.
    at_ns: Option<u64>,
    thread: u64,
    command: String,
    argument: Vec<u8>,
}

/// Which server wrote the log, by its time format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    Mysql,
    Mariadb,
}

/// How many lines may come before the first entry (the banner, a header)
/// before the file is taken as something else.
const MAX_LINES_BEFORE_AN_ENTRY: u64 = 50;

/// Parses a line that starts an entry.
fn entry(line: &[u8]) -> Option<(Style, Entry)> {
    let (style, at_ns, rest) = if let Some(rest) = line.strip_prefix(b"\t\t") {
        (Style::Mariadb, None, rest)
    } else {
        let tab = line.iter().position(|&b| b == b'\t')?;
        let (time, rest) = (line.get(..tab)?, line.get(tab + 1..)?);
        match (iso_time(time), mariadb_time(time)) {
            (Some(at), _) => (Style::Mysql, Some(at), rest),
            (None, Some(at)) => (Style::Mariadb, Some(at), rest),
            _ => return None,
        }
    };
    let rest = rest.strip_prefix(b" ").map_or(rest, |r| r).trim_ascii_start();
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    let thread = std::str::from_utf8(rest.get(..digits)?).ok()?.parse().ok()?;
    let rest = rest.get(digits..)?.strip_prefix(b" ")?;
    let tab = rest.iter().position(|&b| b == b'\t')?;
    let command = std::str::from_utf8(rest.get(..tab)?).ok()?;
    if command.is_empty() || !command.bytes().all(|b| b.is_ascii_alphabetic() || b == b' ' || b == b'_') {
        return None;
    }
    Some((style, Entry { at_ns, thread, command: command.to_owned(), argument: rest.get(tab + 1..)?.to_vec() }))
}

/// The command byte of a general log's command name, and whether its
/// argument is the command's wire payload (true) or the log's text.
fn command_of(name: &str) -> Option<(u8, bool)> {
    Some(match name {
        "Query" => (com::COM_QUERY, true),
        "Prepare" => (com::COM_STMT_PREPARE, true),
        "Init DB" => (com::COM_INIT_DB, true),
        "Execute" => (com::COM_STMT_EXECUTE, false),
        "Close stmt" => (com::COM_STMT_CLOSE, false),
        "Reset stmt" => (com::COM_STMT_RESET, false),
        "Long Data" => (com::COM_STMT_SEND_LONG_DATA, false),
        "Fetch" => (com::COM_STMT_FETCH, false),
        "Bulk_execute" => (com::COM_STMT_BULK_EXECUTE, false),
        "Ping" => (com::COM_PING, true),
        "Statistics" => (com::COM_STATISTICS, true),
        "Reset connection" => (com::COM_RESET_CONNECTION, true),
        "Field List" => (0x04, false),
        "Change user" => (com::COM_CHANGE_USER, false),
        "Set option" => (com::COM_SET_OPTION, false),
        "Processlist" => (0x0A, true),
        "Kill" => (0x0C, false),
        "Refresh" => (0x07, false),
        "Debug" => (0x0D, true),
        "Create DB" => (0x05, true),
        "Drop DB" => (0x06, true),
        other => {
            return command_byte(&format!("COM_{}", other.to_ascii_uppercase().replace(' ', "_"))).map(|b| (b, false))
        }
    })
}

/// What a Connect line says: `user@host on db using TCP/IP`.
struct Login<'a> {
    user: &'a [u8],
    host: &'a [u8],
    database: &'a [u8],
    tls: bool,
}

fn connect(argument: &[u8]) -> Option<Login<'_>> {
    let text = std::str::from_utf8(argument).ok()?;
    let (user, rest) = text.split_once('@')?;
    let (host, rest) = rest.split_once(" on ")?;
    let (db, transport) = rest.split_once(" using ").unwrap_or((rest, ""));
    Some(Login {
        user: user.as_bytes(),
        host: host.as_bytes(),
        database: db.trim().as_bytes(),
        tls: transport.contains("SSL"),
    })
}

struct GeneralLog<W: Write> {
    emitter: Emitter<W>,
    threads: Threads,
    report: ImportReport,
    out: Vec<Record<'static>>,
    /// The time of the last line that gave one.
    last_ns: u64,
}

/// Imports a general query log.
pub fn import_general_log<R: BufRead, W: Write>(
    input: R,
    settings: &ImportSettings,
    out: W,
) -> Result<(W, ImportReport), ImportError> {
    let mut lines = Lines::new(input);
    let style = first_entry(&mut lines)?;
    let mut header = CaptureHeader::new(Source::GeneralLog, settings.source_name.clone());
    header.created_ns = settings.created_ns;
    header.writer = settings.writer.clone();
    header.answers = AnswerCoverage::None;
    header.time_resolution_ns = if style == Style::Mysql { 1_000 } else { 1_000_000_000 };
    let writer = CaptureWriter::create(out, &header, settings.blocks)?;
    let mut log = GeneralLog {
        emitter: Emitter::new(writer),
        threads: Threads::default(),
        report: ImportReport::default(),
        out: Vec::new(),
        last_ns: 0,
    };
    let mut current: Option<Entry> = None;
    while let Some(line) = lines.next_line()? {
        if let Some((_, next)) = entry(line) {
            if let Some(done) = current.replace(next) {
                log.entry(done)?;
            }
        } else if is_start_banner(line) {
            if let Some(done) = current.take() {
                log.entry(done)?;
            }
            log.threads.close_all(log.last_ns, CloseReason::ServerClosed, &mut log.out);
        } else if let Some(open) = current.as_mut() {
            // A line of a multi-line argument.
            open.argument.push(b'\n');
            open.argument.extend_from_slice(line);
        } else {
            log.report.skip("lines before the first entry");
        }
    }
    if let Some(done) = current.take() {
        log.entry(done)?;
    }
    log.finish()
}

/// Reads up to the first entry, which says the log's style; puts it back.
fn first_entry<R: BufRead>(lines: &mut Lines<R>) -> Result<Style, ImportError> {
    let mut read = 0u64;
    while let Some(line) = lines.next_line()? {
        if let Some((style, _)) = entry(line) {
            lines.put_back();
            return Ok(style);
        }
        if line.starts_with(b"# User@Host:") || line.starts_with(b"# Query_time:") {
            return Err(ImportError::NotALog("this is a slow query log: import it with --from=slow-log".into()));
        }
        read += 1;
        if read > MAX_LINES_BEFORE_AN_ENTRY {
            break;
        }
    }
    Err(ImportError::NotALog(format!(
        "not a general query log: none of its first {read} lines is an entry (TIME<TAB>ID COMMAND<TAB>ARGUMENT, the \
         time as MySQL's 2023-10-10T12:00:00.123456Z or MariaDB's 231010 12:00:00); write one with SET GLOBAL \
         general_log_file='/path/general.log', log_output='FILE', general_log=1"
    )))
}

impl<W: Write> GeneralLog<W> {
    fn entry(&mut self, entry: Entry) -> Result<(), ImportError> {
        let at_ns = entry.at_ns.unwrap_or(self.last_ns);
        self.last_ns = at_ns;
        match entry.command.as_str() {
            "Connect" => self.connect(at_ns, &entry),
            "Quit" => {
                let conn = self.threads.get_or_join(entry.thread, at_ns, &mut self.out, &mut self.report);
                self.command(at_ns, conn, vec![com::COM_QUIT], false);
                self.threads.close(entry.thread, at_ns, CloseReason::Quit, &mut self.out);
            }
            name => match command_of(name) {
                Some((byte, wire)) => {
                    let conn = self.threads.get_or_join(entry.thread, at_ns, &mut self.out, &mut self.report);
                    let mut payload = vec![byte];
                    payload.extend_from_slice(&entry.argument);
                    self.command(at_ns, conn, payload, !wire);
                }
                None => self.report.skip(&format!("entries of command {name}")),
            },
        }
        for record in self.out.drain(..) {
            self.emitter.push(record);
        }
        self.emitter.release(at_ns)?;
        Ok(())
    }

    fn connect(&mut self, at_ns: u64, entry: &Entry) {
        let Some(login) = connect(&entry.argument) else {
            // "Access denied for user ...": a login refused.
            self.report.logins_refused += 1;
            return;
        };
        let open = ConnectionOpen {
            at_ns,
            tls: login.tls,
            user: field(login.user),
            database: field(login.database),
            client_addr: field(login.host),
            ..ConnectionOpen::default()
        };
        self.threads.open(open, entry.thread, &mut self.out, &mut self.report);
    }

    fn command(&mut self, at_ns: u64, conn: u64, payload: Vec<u8>, text_form: bool) {
        self.report.commands += 1;
        let payload = std::borrow::Cow::Owned(payload);
        self.out.push(Record::Command(Command {
            at_ns,
            conn,
            answer_follows: false,
            text_form,
            unknown_statement: false,
            payload,
        }));
    }

    fn finish(mut self) -> Result<(W, ImportReport), ImportError> {
        self.threads.close_all(self.last_ns, CloseReason::CaptureEnded, &mut self.out);
        for record in self.out.drain(..) {
            self.emitter.push(record);
        }
        let (out, totals, late) = self.emitter.finish()?;
        self.report.totals = totals;
        self.report.late = late;
        Ok((out, self.report))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{BlockSettings, CaptureReader};

    fn settings() -> ImportSettings {
        ImportSettings {
            source_name: "general.log".into(),
            created_ns: 1,
            writer: "test".into(),
            blocks: BlockSettings::default(),
        }
    }

    pub(crate) fn records(log: &str) -> (Vec<Record<'static>>, ImportReport, u64) {
        let (bytes, report) = import_general_log(log.as_bytes(), &settings(), Vec::new()).unwrap();
        let mut reader = CaptureReader::open(bytes.as_slice()).unwrap();
        let resolution = reader.header().time_resolution_ns;
        let mut out = Vec::new();
        while let Some(r) = reader.next_record().unwrap() {
            out.push(r.into_owned());
        }
        (out, report, resolution)
    }

    fn commands(records: &[Record<'_>]) -> Vec<(u64, String, bool)> {
        records
            .iter()
            .filter_map(|r| match r {
                Record::Command(c) => Some((c.conn, String::from_utf8_lossy(&c.payload).into_owned(), c.text_form)),
                _ => None,
            })
            .collect()
    }

    const MARIADB: &str = "mariadbd, Version: 10.11.19-MariaDB-0+deb12u1 (Debian 12). started with:
Tcp port: 3450  Unix socket: /tmp/mariadbd.sock
Time\t\t    Id Command\tArgument
231010 12:00:00\t     9 Connect\tsbtest@127.0.0.1 on sbtest using TCP/IP
\t\t     9 Query\tCREATE TABLE t(
  id INT
)
\t\t     9 Prepare\tSELECT c FROM sbtest1 WHERE id=?
231010 12:00:01\t     9 Execute\tSELECT c FROM sbtest1 WHERE id=5
\t\t     7 Query\tSELECT 1
\t\t     9 Close stmt\t
\t\t     9 Init DB\tother
\t\t    10 Connect\tAccess denied for user 'x'@'localhost' (using password: YES)
\t\t     9 Quit\t
";

    #[test]
    fn mariadbs_log_with_its_seconds_and_continuation_lines() {
        let (records, report, resolution) = records(MARIADB);
        assert_eq!(resolution, 1_000_000_000);
        let Record::Open(open) = &records[0] else { panic!() };
        assert_eq!(
            (open.user.as_deref(), open.database.as_deref(), open.server_thread_id),
            (Some(&b"sbtest"[..]), Some(&b"sbtest"[..]), Some(9))
        );
        assert_eq!(open.at_ns, 1_696_939_200_000_000_000);
        assert_eq!(
            commands(&records),
            [
                (1, "\u{3}CREATE TABLE t(\n  id INT\n)".to_owned(), false),
                (1, "\u{16}SELECT c FROM sbtest1 WHERE id=?".to_owned(), false),
                (1, "\u{17}SELECT c FROM sbtest1 WHERE id=5".to_owned(), true),
                (2, "\u{3}SELECT 1".to_owned(), false),
                (1, "\u{19}".to_owned(), true),
                (1, "\u{2}other".to_owned(), false),
                (1, "\u{1}".to_owned(), false),
            ]
        );
        // Thread 7 was open before the log began.
        assert!(records.iter().any(|r| matches!(r, Record::Open(o) if o.conn == 2 && o.already_open)));
        assert!(records.iter().any(|r| matches!(r, Record::Close(c) if c.conn == 1 && c.reason == CloseReason::Quit)));
        assert!(records
            .iter()
            .any(|r| matches!(r, Record::Close(c) if c.conn == 2 && c.reason == CloseReason::CaptureEnded)));
        assert_eq!((report.connections, report.already_open, report.commands, report.logins_refused), (2, 1, 7, 1));
        assert!(!records.iter().any(|r| matches!(r, Record::Answer(_))));
    }

    #[test]
    fn mysqls_log_with_iso_times() {
        let log = "/usr/sbin/mysqld, Version: 8.0.34 (MySQL Community Server - GPL). started with:
Tcp port: 3306  Unix socket: /var/run/mysqld/mysqld.sock
Time                 Id Command    Argument
2023-10-10T12:00:00.000100Z\t    8 Connect\troot@localhost on  using Socket
2023-10-10T12:00:00.000200Z\t    8 Query\tselect 1
2023-10-10T14:00:00.000300+02:00\t    8 Query\tselect
2
2023-10-10T12:00:00.000400Z\t    8 Quit\t
";
        let (records, _, resolution) = records(log);
        assert_eq!(resolution, 1_000);
        let times: Vec<u64> = records.iter().map(|r| r.at_ns() - 1_696_939_200_000_000_000).collect();
        assert_eq!(times, [100_000, 200_000, 300_000, 400_000, 400_000]);
        let Record::Open(open) = &records[0] else { panic!() };
        assert_eq!(open.database, None);
        assert_eq!(commands(&records)[1].1, "\u{3}select\n2");
    }

    #[test]
    fn other_files_are_refused() {
        let slow = "# Time: 231010 12:00:00\n# User@Host: a[a] @ localhost []\n# Query_time: 0.1\nselect 1;\n";
        let message = import_general_log(slow.as_bytes(), &settings(), Vec::new()).unwrap_err().to_string();
        assert!(message.contains("--from=slow-log"), "{message}");
        let message =
            import_general_log(&b"\x89PNG\r\n\x1a\n garbage"[..], &settings(), Vec::new()).unwrap_err().to_string();
        assert!(message.contains("not a general query log"), "{message}");
    }
}
