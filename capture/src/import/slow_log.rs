//! `capture import --from=slow-log`: the slow query log, written with
//! `long_query_time=0` so that it holds every statement.
//!
//! An entry is a few `# ` lines (`# Time:`, `# User@Host:`, MariaDB's
//! `# Thread_id: ... Schema:`, `# Query_time: ... Rows_sent: ...`,
//! MariaDB's `# Rows_affected:`), then `use db;` when the database
//! changed, `SET timestamp=N;`, and the statement (its lines up to the next
//! entry, the `;` the server adds taken off).
//!
//! Each entry is a COM_QUERY and a partial answer (rows sent and examined,
//! affected rows where MariaDB gives them, the error number where MySQL's
//! `log_slow_extra` does). Its start: MySQL's `Start:` (log_slow_extra),
//! else its `# Time:` less its `Query_time` when the entry has its own
//! time to the microsecond (MySQL 5.7, 8), else its `SET timestamp`, the
//! second the statement started (MariaDB, which prints `# Time:` only when
//! the second changes). Its answer comes `Query_time` later.
//!
//! The log is in the order statements ended; records are put in the order
//! they started, over a window of [`REORDER_WINDOW_NS`]; a statement that
//! started earlier than that before one logged ahead of it is moved, and
//! counted. A thread's change of database between two statements becomes a
//! COM_INIT_DB before the second: the log does not say how it changed.

use std::borrow::Cow;
use std::io::{BufRead, Write};

use wirebench_protocol::constants::command as com;

use super::emit::Emitter;
use super::log_lines::{field, is_start_banner, iso_time, mariadb_time, Lines, Threads};
use super::{ImportError, ImportReport, ImportSettings};
use crate::format::{
    Answer, AnswerCoverage, AnswerError, CaptureHeader, CaptureWriter, CloseReason, Command, ConnectionOpen, Record,
    Source,
};

/// How far back a statement may have started before the last one logged.
pub const REORDER_WINDOW_NS: u64 = 10_000_000_000;

/// One entry of the log, read.
#[derive(Debug, Clone, Default, PartialEq)]
struct Entry {
    /// `# Time:`, when the entry has one, and whether it is to the microsecond.
    time: Option<(u64, bool)>,
    user: Vec<u8>,
    host: Vec<u8>,
    thread: Option<u64>,
    schema: Option<Vec<u8>>,
    query_time_ns: u64,
    rows_sent: Option<u64>,
    rows_examined: Option<u64>,
    rows_affected: Option<u64>,
    errno: Option<u16>,
    start: Option<u64>,
    use_db: Option<Vec<u8>>,
    timestamp_s: Option<u64>,
    statement: Vec<u8>,
    /// `# administrator command: Quit;` and the like.
    admin: Option<String>,
}

/// The `Key: value` pairs of a `# ` line (a value may be empty).
fn pairs(line: &str) -> Vec<(&str, &str)> {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(token) = tokens.get(i) {
        if let Some(key) = token.strip_suffix(':') {
            let value = tokens.get(i + 1).filter(|v| !v.ends_with(':')).copied().unwrap_or("");
            out.push((key, value));
            i += if value.is_empty() { 1 } else { 2 };
        } else {
            i += 1;
        }
    }
    out
}

fn seconds_ns(value: &str) -> Option<u64> {
    let seconds: f64 = value.parse().ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| (seconds * 1e9).round() as u64)
}

impl Entry {
    /// Reads one `# ` line of the entry's head.
    fn head_line(&mut self, line: &str) {
        let line = line.trim_start_matches('#').trim();
        if let Some(time) = line.strip_prefix("Time:") {
            let time = time.trim();
            self.time = iso_time(time.as_bytes())
                .map(|t| (t, true))
                .or_else(|| mariadb_time(time.as_bytes()).map(|t| (t, false)));
            return;
        }
        if let Some(who) = line.strip_prefix("User@Host:") {
            self.user_host(who);
            return;
        }
        for (key, value) in pairs(line) {
            match key {
                "Thread_id" | "Id" => self.thread = value.parse().ok(),
                "Schema" => self.schema = Some(value.as_bytes().to_vec()),
                "Query_time" => self.query_time_ns = seconds_ns(value).unwrap_or(0),
                "Rows_sent" => self.rows_sent = value.parse().ok(),
                "Rows_examined" => self.rows_examined = value.parse().ok(),
                "Rows_affected" => self.rows_affected = value.parse().ok(),
                "Errno" => self.errno = value.parse().ok().filter(|&e| e != 0),
                "Start" => self.start = iso_time(value.as_bytes()),
                _ => {}
            }
        }
    }

    /// `sbtest[sbtest] @  [127.0.0.1]`, `root[root] @ localhost []  Id:     8`.
    fn user_host(&mut self, who: &str) {
        let (user, rest) = who.split_once('@').unwrap_or((who, ""));
        self.user = user.split('[').next().unwrap_or("").trim().as_bytes().to_vec();
        let (place, after) = rest.split_once(']').unwrap_or((rest, ""));
        let (name, ip) = place.split_once('[').unwrap_or((place, ""));
        let host = if ip.trim().is_empty() { name.trim() } else { ip.trim() };
        self.host = host.as_bytes().to_vec();
        for (key, value) in pairs(after) {
            if key == "Id" {
                self.thread = value.parse().ok();
            }
        }
    }

    /// When the statement started, and the resolution of that time.
    fn started(&self) -> Option<(u64, u64)> {
        if let Some(start) = self.start {
            return Some((start, 1_000));
        }
        match (self.time, self.timestamp_s) {
            (Some((end, true)), _) => Some((end.saturating_sub(self.query_time_ns), 1_000)),
            (_, Some(seconds)) => Some((seconds.saturating_mul(1_000_000_000), 1_000_000_000)),
            (Some((end, false)), None) => Some((end.saturating_sub(self.query_time_ns), 1_000_000_000)),
            (None, None) => None,
        }
    }
}

/// Reads entries off the lines.
struct Entries<R: BufRead> {
    lines: Lines<R>,
    /// The last `# Time:` seen: MariaDB prints it only when it changes.
    last_time: Option<(u64, bool)>,
    restarted: bool,
}

impl<R: BufRead> Entries<R> {
    /// The next entry; `None` at the end. Sets `restarted` when a server
    /// start banner came before it.
    fn next_entry(&mut self, report: &mut ImportReport) -> Result<Option<Entry>, ImportError> {
        let mut entry = Entry::default();
        let mut in_head = false;
        let mut in_body = false;
        while let Some(line) = self.lines.next_line()? {
            let text = String::from_utf8_lossy(line);
            let starts_entry = text.starts_with("# Time:") || text.starts_with("# User@Host:");
            if in_body && (starts_entry || is_start_banner(line)) {
                self.lines.put_back();
                break;
            }
            if is_start_banner(line) {
                self.restarted = true;
                continue;
            }
            if let Some(admin) = text.strip_prefix("# administrator command:") {
                entry.admin = Some(admin.trim().trim_end_matches(';').to_owned());
                in_body = true;
            } else if text.starts_with("# ") && !in_body {
                entry.head_line(&text);
                in_head = true;
            } else if !in_head {
                // The lines under a server's start banner are no entry either.
                let banner = text.starts_with("Tcp port:") || (text.starts_with("Time") && text.contains("Id Command"));
                if !banner {
                    report.skip("lines outside an entry");
                }
            } else if !in_body && entry.timestamp_s.is_none() && text.starts_with("use ") && text.ends_with(';') {
                let db = text.trim_start_matches("use ").trim_end_matches(';').trim_matches('`');
                entry.use_db = Some(db.as_bytes().to_vec());
            } else if !in_body && entry.timestamp_s.is_none() && text.starts_with("SET timestamp=") {
                entry.timestamp_s = text.trim_start_matches("SET timestamp=").trim_end_matches(';').parse().ok();
            } else {
                if in_body {
                    entry.statement.push(b'\n');
                }
                entry.statement.extend_from_slice(line);
                in_body = true;
            }
        }
        if !in_head {
            return Ok(None);
        }
        if entry.statement.last() == Some(&b';') {
            entry.statement.pop();
        }
        match entry.time {
            Some(time) => self.last_time = Some(time),
            None => entry.time = self.last_time,
        }
        Ok(Some(entry))
    }
}

struct SlowLog<W: Write> {
    emitter: Emitter<W>,
    threads: Threads,
    /// Each open connection's database, as the log last showed it.
    databases: std::collections::HashMap<u64, Vec<u8>>,
    /// When each thread's last statement ended.
    thread_ends: std::collections::HashMap<u64, u64>,
    report: ImportReport,
    out: Vec<Record<'static>>,
    /// The latest time the log reached (a statement's end).
    last_ns: u64,
}

/// Imports a slow query log.
pub fn import_slow_log<R: BufRead, W: Write>(
    input: R,
    settings: &ImportSettings,
    out: W,
) -> Result<(W, ImportReport), ImportError> {
    let mut report = ImportReport::default();
    let mut entries = Entries { lines: Lines::new(input), last_time: None, restarted: false };
    let Some(first) = entries.next_entry(&mut report)? else {
        return Err(ImportError::NotALog(
            "not a slow query log: it holds no entry (# User@Host:, # Query_time:, then the statement); write one \
             with SET GLOBAL slow_query_log_file='/path/slow.log', log_output='FILE', long_query_time=0, \
             slow_query_log=1"
                .into(),
        ));
    };
    let mut header = CaptureHeader::new(Source::SlowLog, settings.source_name.clone());
    header.created_ns = settings.created_ns;
    header.writer = settings.writer.clone();
    header.answers = AnswerCoverage::Partial;
    header.time_resolution_ns = first.started().map_or(1_000_000_000, |(_, resolution)| resolution);
    let writer = CaptureWriter::create(out, &header, settings.blocks)?;
    let mut log = SlowLog {
        emitter: Emitter::new(writer),
        threads: Threads::default(),
        databases: Default::default(),
        thread_ends: Default::default(),
        report,
        out: Vec::new(),
        last_ns: 0,
    };
    entries.restarted = false;
    let mut next = Some(first);
    while let Some(entry) = next {
        log.entry(entry)?;
        next = entries.next_entry(&mut log.report)?;
        if std::mem::take(&mut entries.restarted) {
            log.threads.close_all(log.last_ns, CloseReason::ServerClosed, &mut log.out);
        }
    }
    log.finish()
}

impl<W: Write> SlowLog<W> {
    fn entry(&mut self, entry: Entry) -> Result<(), ImportError> {
        let (Some(thread), Some((start, _))) = (entry.thread, entry.started()) else {
            self.report.skip("entries without a thread id or a time");
            return Ok(());
        };
        // A thread runs one statement at a time: none starts before the one
        // before it ended (a start read to the second may fall before).
        let start = start.max(self.thread_ends.get(&thread).copied().unwrap_or(0));
        let end = start.saturating_add(entry.query_time_ns);
        self.thread_ends.insert(thread, end);
        self.last_ns = self.last_ns.max(end);
        let conn = self.connection(thread, start, &entry);
        match entry.admin.as_deref() {
            Some("Quit") => {
                self.command(start, conn, vec![com::COM_QUIT], false);
                self.threads.close(thread, end, CloseReason::Quit, &mut self.out);
                self.databases.remove(&thread);
                self.thread_ends.remove(&thread);
            }
            Some(other) => self.report.skip(&format!("administrator commands ({other})")),
            None => {
                let mut payload = vec![com::COM_QUERY];
                payload.extend_from_slice(&entry.statement);
                self.command(start, conn, payload, true);
                self.out.push(Record::Answer(answer(end, conn, &entry)));
                self.report.answers += 1;
            }
        }
        for record in self.out.drain(..) {
            self.emitter.push(record);
        }
        self.emitter.release(self.last_ns.saturating_sub(REORDER_WINDOW_NS))?;
        Ok(())
    }

    /// The thread's connection, opened at its first statement; a change of
    /// database since its last statement becomes a COM_INIT_DB.
    fn connection(&mut self, thread: u64, start: u64, entry: &Entry) -> u64 {
        let database = entry.use_db.clone().or_else(|| entry.schema.clone());
        let Some(conn) = self.threads.get(thread) else {
            let open = ConnectionOpen {
                at_ns: start,
                user: field(&entry.user),
                client_addr: field(&entry.host),
                database: database.as_deref().and_then(field),
                ..ConnectionOpen::default()
            };
            self.databases.insert(thread, database.unwrap_or_default());
            return self.threads.open(open, thread, &mut self.out, &mut self.report);
        };
        if let Some(database) = database.filter(|d| !d.is_empty()) {
            if self.databases.get(&thread) != Some(&database) {
                let mut payload = vec![com::COM_INIT_DB];
                payload.extend_from_slice(&database);
                self.command(start, conn, payload, false);
                self.databases.insert(thread, database);
            }
        }
        conn
    }

    fn command(&mut self, at_ns: u64, conn: u64, payload: Vec<u8>, answer_follows: bool) {
        self.report.commands += 1;
        self.out.push(Record::Command(Command {
            at_ns,
            conn,
            answer_follows,
            text_form: false,
            unknown_statement: false,
            payload: Cow::Owned(payload),
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

/// What the entry says of the statement's answer.
fn answer(at_ns: u64, conn: u64, entry: &Entry) -> Answer<'static> {
    Answer {
        at_ns,
        conn,
        rows: entry.rows_sent,
        rows_examined: entry.rows_examined,
        affected_rows: entry.rows_affected,
        error: entry.errno.map(|code| AnswerError { code, sql_state: None, message: None }),
        ..Answer::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{BlockSettings, CaptureReader};

    fn settings() -> ImportSettings {
        ImportSettings {
            source_name: "slow.log".into(),
            created_ns: 1,
            writer: "test".into(),
            blocks: BlockSettings::default(),
        }
    }

    fn records(log: &str) -> (Vec<Record<'static>>, ImportReport, u64) {
        let (bytes, report) = import_slow_log(log.as_bytes(), &settings(), Vec::new()).unwrap();
        let mut reader = CaptureReader::open(bytes.as_slice()).unwrap();
        let resolution = reader.header().time_resolution_ns;
        let mut out = Vec::new();
        while let Some(r) = reader.next_record().unwrap() {
            out.push(r.into_owned());
        }
        (out, report, resolution)
    }

    const T: u64 = 1_696_939_200_000_000_000;

    const MARIADB: &str = "mariadbd, Version: 10.11.19-MariaDB-0+deb12u1 (Debian 12). started with:
Tcp port: 3450  Unix socket: /tmp/mariadbd.sock
Time\t\t    Id Command\tArgument
# Time: 231010 12:00:05
# User@Host: sbtest[sbtest] @  [127.0.0.1]
# Thread_id: 9  Schema: sbtest  QC_hit: No
# Query_time: 0.038197  Lock_time: 0.000146  Rows_sent: 0  Rows_examined: 0
# Rows_affected: 3  Bytes_sent: 11
use `sbtest`;
SET timestamp=1696939205;
UPDATE t SET a=1
WHERE b=2;
# User@Host: sbtest[sbtest] @  [127.0.0.1]
# Thread_id: 10  Schema:   QC_hit: No
# Query_time: 0.000166  Lock_time: 0.000044  Rows_sent: 1  Rows_examined: 1
# Rows_affected: 0  Bytes_sent: 0
SET timestamp=1696939205;
SELECT 1;
# User@Host: sbtest[sbtest] @  [127.0.0.1]
# Thread_id: 11  Schema: other  QC_hit: No
# Query_time: 1.500000  Lock_time: 0.000044  Rows_sent: 2  Rows_examined: 7
# Rows_affected: 0  Bytes_sent: 0
use `other`;
SET timestamp=1696939204;
SELECT c FROM t;
# User@Host: sbtest[sbtest] @  [127.0.0.1]
# Thread_id: 9  Schema: other  QC_hit: No
# Query_time: 0.000100  Lock_time: 0.000044  Rows_sent: 0  Rows_examined: 0
# Rows_affected: 0  Bytes_sent: 0
SET timestamp=1696939206;
COMMIT;
";

    #[test]
    fn mariadbs_entries_start_at_their_timestamp_in_start_order() {
        let (records, report, resolution) = records(MARIADB);
        assert_eq!(resolution, 1_000_000_000);
        let summary: Vec<(u64, &str, String)> = records
            .iter()
            .map(|r| match r {
                Record::Open(o) => {
                    (r.at_ns() - T, "open", String::from_utf8_lossy(o.database.as_deref().unwrap_or(b"")).into_owned())
                }
                Record::Command(c) => (r.at_ns() - T, "command", String::from_utf8_lossy(&c.payload[1..]).into_owned()),
                Record::Answer(a) => {
                    (r.at_ns() - T, "answer", format!("{:?} {:?} {:?}", a.rows, a.rows_examined, a.affected_rows))
                }
                Record::Close(_) => (r.at_ns() - T, "close", String::new()),
                Record::Gap(_) => (r.at_ns() - T, "gap", String::new()),
            })
            .collect();
        let s = 1_000_000_000;
        assert_eq!(
            summary,
            [
                // Logged third, started first.
                (4 * s, "open", "other".to_owned()),
                (4 * s, "command", "SELECT c FROM t".to_owned()),
                (5 * s, "open", "sbtest".to_owned()),
                (5 * s, "command", "UPDATE t SET a=1\nWHERE b=2".to_owned()),
                (5 * s, "open", "".to_owned()),
                (5 * s, "command", "SELECT 1".to_owned()),
                (5 * s + 166_000, "answer", "Some(1) Some(1) Some(0)".to_owned()),
                (5 * s + 38_197_000, "answer", "Some(0) Some(0) Some(3)".to_owned()),
                (5 * s + 500_000_000, "answer", "Some(2) Some(7) Some(0)".to_owned()),
                // Thread 9 changed its database between its two statements.
                (6 * s, "command", "other".to_owned()),
                (6 * s, "command", "COMMIT".to_owned()),
                (6 * s + 100_000, "answer", "Some(0) Some(0) Some(0)".to_owned()),
                (6 * s + 100_000, "close", String::new()),
                (6 * s + 100_000, "close", String::new()),
                (6 * s + 100_000, "close", String::new()),
            ]
        );
        assert_eq!((report.connections, report.commands, report.answers), (3, 5, 4));
    }

    #[test]
    fn mysqls_entries_with_microsecond_times_and_extra_fields() {
        let log = "/usr/sbin/mysqld, Version: 8.0.34 (MySQL Community Server - GPL). started with:
# Time: 2023-10-10T12:00:00.500000Z
# User@Host: root[root] @ localhost []  Id:     8
# Query_time: 0.250000  Lock_time: 0.000002 Rows_sent: 1  Rows_examined: 0
SET timestamp=1696939200;
select 1;
# Time: 2023-10-10T12:00:00.600000Z
# User@Host: root[root] @ localhost []  Id:     8
# Query_time: 0.000100  Lock_time: 0.000000 Rows_sent: 0  Rows_examined: 0 Thread_id: 8 Errno: 1146 Killed: 0 Start: 2023-10-10T12:00:00.599900Z End: 2023-10-10T12:00:00.600000Z
SET timestamp=1696939200;
select * from nope;
# Time: 2023-10-10T12:00:00.700000Z
# User@Host: root[root] @ localhost []  Id:     8
# Query_time: 0.000010  Lock_time: 0.000000 Rows_sent: 0  Rows_examined: 0
SET timestamp=1696939200;
# administrator command: Quit;
";
        let (records, _, resolution) = records(log);
        assert_eq!(resolution, 1_000);
        let times: Vec<u64> = records.iter().map(|r| r.at_ns() - T).collect();
        assert_eq!(times, [250_000_000, 250_000_000, 500_000_000, 599_900_000, 600_000_000, 699_990_000, 700_000_000]);
        let Record::Open(open) = &records[0] else { panic!() };
        assert_eq!(
            (open.user.as_deref(), open.client_addr.as_deref(), open.server_thread_id),
            (Some(&b"root"[..]), Some(&b"localhost"[..]), Some(8))
        );
        let Record::Answer(failed) = &records[4] else { panic!() };
        assert_eq!(failed.error.as_ref().map(|e| e.code), Some(1146));
        assert!(matches!(&records[6], Record::Close(c) if c.reason == CloseReason::Quit));
    }

    #[test]
    fn a_threads_statements_in_one_second_keep_their_answers() {
        // Two statements of one thread in the same second, the first slower:
        // the second cannot have started before the first ended.
        let entry = |query_time: &str, statement: &str| {
            format!(
                "# User@Host: a[a] @  [127.0.0.1]\n# Thread_id: 9  Schema: db  QC_hit: No\n# Query_time: {query_time}  \
                 Lock_time: 0  Rows_sent: 0  Rows_examined: 0\nSET timestamp=1696939200;\n{statement};\n"
            )
        };
        let log = entry("0.038", "CREATE TABLE t(a INT)") + &entry("0.011", "INSERT INTO t VALUES (1)");
        let (records, _, _) = records(&log);
        let times: Vec<(u64, bool)> = records
            .iter()
            .filter_map(|r| match r {
                Record::Command(_) => Some((r.at_ns() - T, true)),
                Record::Answer(_) => Some((r.at_ns() - T, false)),
                _ => None,
            })
            .collect();
        assert_eq!(times, [(0, true), (38_000_000, false), (38_000_000, true), (49_000_000, false)]);
    }

    #[test]
    fn a_general_log_is_not_a_slow_log() {
        let general = "231010 12:00:00\t     9 Connect\tsbtest@127.0.0.1 on sbtest using TCP/IP\n";
        let message = import_slow_log(general.as_bytes(), &settings(), Vec::new()).unwrap_err().to_string();
        assert!(message.contains("not a slow query log"), "{message}");
    }
}
