//! The replay's statements: each captured command's statement (its
//! fingerprint, or for a command that carries none its `COM_*` name) gets
//! a number, which the loops count under; the table keeps what the
//! capture says of each (runs, the captured latency, errors, rows) for
//! the report to put beside what the replay measured.
//!
//! A text query is fingerprinted once per distinct text: the table keeps
//! the texts' hashes (XXH64) it has seen, up to [`TEXT_CACHE`] of them, so
//! a statement repeated with the same literals costs one hash.

use std::collections::HashMap;

use wirebench_capture::commands::command_name;
use wirebench_capture::fingerprint::{fingerprint, fingerprint_id};
use wirebench_protocol::constants::command::{COM_CREATE_DB, COM_DROP_DB};
use wirebench_protocol::response::Xxh64;

use crate::stats::LatencyHistogram;

/// Distinct texts whose statement is remembered; the cache starts afresh
/// when full (a workload whose literals never repeat).
const TEXT_CACHE: usize = 1 << 16;

/// What the capture says of one statement.
#[derive(Debug, Clone)]
pub struct StatementEntry {
    /// The fingerprint, or the command's name.
    pub text: String,
    /// The fingerprint's XXH64, in hex: the key `compare` matches on.
    pub id: String,
    /// Whether running it may change data (`--read-only` skips it).
    pub writes: bool,
    /// Runs in the capture (prepares apart).
    pub captured_runs: u64,
    /// The captured time from command to answer, of those answered.
    pub captured_latency: Option<Box<LatencyHistogram>>,
    pub captured_errors: u64,
    pub captured_rows: u64,
}

/// Every statement of a replay, by number.
#[derive(Debug, Default)]
pub struct StatementTable {
    entries: Vec<StatementEntry>,
    by_text: HashMap<String, u32>,
    by_hash: HashMap<u64, u32>,
}

impl StatementTable {
    /// The number of a query's or prepare's statement, from its text.
    pub fn of_text(&mut self, sql: &[u8]) -> u32 {
        let hash = Xxh64::hash(sql);
        if let Some(&index) = self.by_hash.get(&hash) {
            return index;
        }
        let text = fingerprint(sql);
        let writes = writes_data(&text);
        let index = self.named(text, writes);
        if self.by_hash.len() >= TEXT_CACHE {
            self.by_hash.clear();
        }
        self.by_hash.insert(hash, index);
        index
    }

    /// The number of a command that carries no statement, by its name.
    pub fn of_command(&mut self, command: u8) -> u32 {
        let name = command_name(command).into_owned();
        let writes = matches!(command, COM_CREATE_DB | COM_DROP_DB);
        self.named(name, writes)
    }

    fn named(&mut self, text: String, writes: bool) -> u32 {
        if let Some(&index) = self.by_text.get(&text) {
            return index;
        }
        let index = self.entries.len() as u32;
        self.entries.push(StatementEntry {
            id: fingerprint_id(&text),
            text: text.clone(),
            writes,
            captured_runs: 0,
            captured_latency: None,
            captured_errors: 0,
            captured_rows: 0,
        });
        self.by_text.insert(text, index);
        index
    }

    pub fn get(&self, index: u32) -> Option<&StatementEntry> {
        self.entries.get(index as usize)
    }

    pub fn entries(&self) -> &[StatementEntry] {
        &self.entries
    }

    /// A captured run of statement `index` (counted whether or not it is replayed).
    pub fn captured_run(&mut self, index: u32) {
        if let Some(entry) = self.entries.get_mut(index as usize) {
            entry.captured_runs += 1;
        }
    }

    /// A captured run's answer: its time from command to answer, whether it
    /// was an error, its rows.
    pub fn captured_answer(&mut self, index: u32, took_ns: u64, error: bool, rows: u64) {
        let Some(entry) = self.entries.get_mut(index as usize) else { return };
        entry.captured_latency.get_or_insert_with(|| Box::new(LatencyHistogram::new())).record_ns(took_ns);
        entry.captured_errors += u64::from(error);
        entry.captured_rows += rows;
    }
}

/// Whether a statement (its fingerprint: lowercase, comments gone) may
/// change data or the server's state for others, by its first word: what
/// `--read-only` leaves out. What only reads, or only changes the
/// session's own state (SET, USE, transactions, locks it takes), runs.
pub fn writes_data(fingerprint: &str) -> bool {
    let mut words = first_words(fingerprint).split(|c: char| !c.is_ascii_alphanumeric() && c != '_');
    let mut words = words.by_ref().filter(|w| !w.is_empty());
    let first = words.next().unwrap_or("");
    let reads = [
        "select",
        "show",
        "describe",
        "desc",
        "explain",
        "with",
        "set",
        "use",
        "begin",
        "start",
        "commit",
        "rollback",
        "savepoint",
        "release",
        "do",
        "help",
        "handler",
        "xa",
        "lock",
        "unlock",
        "check",
        "checksum",
        "prepare",
        "execute",
        "deallocate",
        "values",
        "table",
        "get",
        "signal",
        "resignal",
    ];
    if first == "select" || first == "with" {
        // SELECT ... INTO OUTFILE writes a file on the server.
        return fingerprint.contains(" into outfile") || fingerprint.contains(" into dumpfile");
    }
    !reads.contains(&first)
}

/// The statement from its first word on: a leading executable comment
/// (`/*!40101 SET ... */`) is read as its content, a leading optimizer
/// hint is passed over.
fn first_words(fingerprint: &str) -> &str {
    let text = fingerprint.trim_start();
    if let Some(versioned) = text.strip_prefix("/*!") {
        return versioned.trim_start_matches(|c: char| c.is_ascii_digit());
    }
    match text.strip_prefix("/*+").and_then(|hint| hint.split_once("*/")) {
        Some((_, rest)) => rest,
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_are_numbered_by_fingerprint() {
        let mut table = StatementTable::default();
        let a = table.of_text(b"SELECT c FROM sbtest1 WHERE id=42");
        let b = table.of_text(b"select c  from sbtest1 where id = 7");
        let c = table.of_text(b"SELECT c FROM sbtest1 WHERE id=42");
        let d = table.of_command(0x0E);
        assert_eq!((a, b, c, d), (0, 0, 0, 1));
        assert_eq!(table.get(0).unwrap().text, "select c from sbtest1 where id = ?");
        assert_eq!(table.get(1).unwrap().text, "COM_PING");
        assert_eq!(table.get(0).unwrap().id, fingerprint_id("select c from sbtest1 where id = ?"));
        table.captured_run(0);
        table.captured_answer(0, 2_000_000, false, 1);
        let entry = table.get(0).unwrap();
        assert_eq!((entry.captured_runs, entry.captured_rows), (1, 1));
        assert_eq!(entry.captured_latency.as_ref().unwrap().events(), 1);
    }

    #[test]
    fn what_writes_is_told_by_its_first_word() {
        for (sql, writes) in [
            ("select c from sbtest1 where id = ?", false),
            ("select * from t into outfile ?", true),
            ("begin", false),
            ("set autocommit = ?", false),
            ("insert into t values(?+)", true),
            ("update sbtest1 set k = k + ? where id = ?", true),
            ("delete from t", true),
            ("replace into t values(?)", true),
            ("create table t (a int)", true),
            ("call p", true),
            ("/*!40101 set names utf8 */ select ?", false),
            ("show tables", false),
            ("commit", false),
            ("kill ?", true),
        ] {
            assert_eq!(writes_data(sql), writes, "{sql}");
        }
    }
}
