//! What `prepare` and `cleanup` have done so far, told from the statements
//! the server has answered, for the line they print when a signal stops
//! them: which tables are complete, which are half made (and how far),
//! which statement was in flight and may still complete on the server.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

/// What a statement of `prepare` or `cleanup` does to which table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TableStep<'a> {
    Create(&'a str),
    /// An INSERT of this many rows.
    Insert(&'a str, u64),
    /// A LOAD DATA, whose row count only its sender knows.
    Load(&'a str),
    /// A prepared INSERT run for many rows (COM_STMT_BULK_EXECUTE), whose
    /// row count only its sender knows.
    BulkInsert(&'a str),
    Index(&'a str),
    Drop(&'a str),
}

impl<'a> TableStep<'a> {
    /// The step `sql` is, for the statements sysbench's scripts send.
    fn parse(sql: &'a str) -> Option<TableStep<'a>> {
        let table_after = |prefix: &str| {
            let rest = sql.strip_prefix(prefix)?;
            let rest = rest.strip_prefix("IF NOT EXISTS ").or_else(|| rest.strip_prefix("IF EXISTS ")).unwrap_or(rest);
            rest.split(['(', ' ', '\n']).next().filter(|t| !t.is_empty())
        };
        if let Some(table) = table_after("CREATE TABLE ") {
            return Some(TableStep::Create(table));
        }
        if let Some(table) = table_after("INSERT INTO ") {
            if sql.ends_with("VALUES(?, ?, ?, ?)") {
                // Bulk-executed: its rows are known to the sender.
                return Some(TableStep::BulkInsert(table));
            }
            // Rows are `(...)` groups joined by commas; their values are
            // numbers and digits-and-dashes strings, never "),(".
            return Some(TableStep::Insert(table, sql.matches("),(").count() as u64 + 1));
        }
        if let Some(rest) = sql.strip_prefix("LOAD DATA LOCAL INFILE ") {
            // Its rows are known to the sender, not written in the SQL.
            let table = rest.split(" INTO TABLE ").nth(1)?.split(' ').next()?;
            return Some(TableStep::Load(table));
        }
        if let Some(table) = table_after("DROP TABLE ") {
            return Some(TableStep::Drop(table));
        }
        if sql.starts_with("CREATE INDEX") {
            // 0.4 and 0.5 wrote `on`.
            let on = sql.split(" ON ").nth(1).or_else(|| sql.split(" on ").nth(1));
            return on?.split('(').next().map(TableStep::Index);
        }
        None
    }

    fn table(self) -> &'a str {
        match self {
            TableStep::Create(t)
            | TableStep::Insert(t, _)
            | TableStep::Load(t)
            | TableStep::BulkInsert(t)
            | TableStep::Index(t)
            | TableStep::Drop(t) => t,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            TableStep::Create(_) => "a CREATE TABLE",
            TableStep::Insert(..) => "an INSERT",
            TableStep::BulkInsert(_) => "a bulk INSERT",
            TableStep::Load(_) => "a LOAD DATA",
            TableStep::Index(_) => "a CREATE INDEX",
            TableStep::Drop(_) => "a DROP TABLE",
        }
    }
}

#[derive(Debug, Default, Clone)]
struct TableState {
    created: bool,
    rows: u64,
    indexed: bool,
    /// Its connection went on to another table, or had nothing more to do.
    complete: bool,
    dropped: bool,
    /// A statement sent and not yet answered (the last sent, when several
    /// connections share the table's rows).
    in_flight: Option<&'static str>,
    /// How many are.
    in_flight_count: u32,
}

/// The tables of one `prepare` or `cleanup`, shared by its connections.
#[derive(Debug, Default)]
pub(super) struct TableProgress {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    tables: BTreeMap<(u64, String), TableState>,
    /// The summary is written: nothing more may be sent, or it would not
    /// be in it. (The connections' tasks may run a moment longer than the
    /// future that awaited them.)
    closed: bool,
}

impl TableProgress {
    /// `sql` is about to be sent; false once the summary is written: then
    /// it must not be.
    #[must_use]
    pub(super) fn sending(&self, sql: &str) -> bool {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if inner.closed {
            return false;
        }
        if let Some(step) = TableStep::parse(sql) {
            let table = inner.tables.entry(table_key(step.table())).or_default();
            table.in_flight = Some(step.describe());
            table.in_flight_count += 1;
        }
        true
    }

    /// The server answered `sql` with success, having loaded `loaded` rows
    /// when the sender knows (LOAD DATA); the table it touched, if any.
    pub(super) fn done(&self, sql: &str, loaded: Option<u64>) -> Option<String> {
        let step = TableStep::parse(sql)?;
        self.update(step.table(), |t| {
            t.in_flight_count = t.in_flight_count.saturating_sub(1);
            if t.in_flight_count == 0 {
                t.in_flight = None;
            }
            match step {
                TableStep::Create(_) => t.created = true,
                TableStep::Insert(_, rows) => t.rows += rows,
                TableStep::Load(_) | TableStep::BulkInsert(_) => t.rows += loaded.unwrap_or(0),
                TableStep::Index(_) => t.indexed = true,
                TableStep::Drop(_) => t.dropped = true,
            }
        });
        Some(step.table().to_owned())
    }

    /// A connection is through with `table`.
    pub(super) fn complete(&self, table: &str) {
        self.update(table, |t| t.complete = true);
    }

    fn update(&self, table: &str, change: impl FnOnce(&mut TableState)) {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        change(inner.tables.entry(table_key(table)).or_default());
    }

    /// No statement is sent from now on.
    pub(super) fn stop_sending(&self) {
        drop(self.close());
    }

    /// The tables as they stand, and no statement sent from now on.
    fn close(&self) -> std::sync::MutexGuard<'_, Inner> {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner.closed = true;
        inner
    }

    /// What `prepare` had done: complete tables, half-made ones, and how
    /// many of `total` it never created.
    pub(super) fn prepare_summary(&self, total: u32) -> String {
        let tables = &self.close().tables;
        let complete = names(tables, |t| t.complete);
        let partial: Vec<String> = tables
            .iter()
            .filter(|(_, t)| !t.complete && (t.created || t.in_flight.is_some()))
            .map(|((_, name), t)| format!("{name} ({})", partial_state(t)))
            .collect();
        let untouched = (total as usize).saturating_sub(complete.len() + partial.len());
        let mut parts = vec![format!("complete: {}", list_or_none(&complete))];
        if !partial.is_empty() {
            parts.push(format!("incomplete: {}", partial.join(", ")));
        }
        parts.push(format!("not created: {untouched}"));
        let something_made = !complete.is_empty() || !partial.is_empty();
        let advice = if something_made && (!partial.is_empty() || untouched > 0) {
            "; run cleanup before prepare again"
        } else {
            ""
        };
        format!("{}{advice}", parts.join("; "))
    }

    /// Rows loaded so far, per table not yet complete, in table order.
    pub(super) fn loading(&self) -> Vec<(String, u64)> {
        let inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner
            .tables
            .iter()
            .filter(|(_, t)| t.created && !t.complete)
            .map(|((_, name), t)| (name.clone(), t.rows))
            .collect()
    }

    /// What `cleanup` had done: the tables dropped, and the one in flight.
    pub(super) fn cleanup_summary(&self, total: u32) -> String {
        let tables = &self.close().tables;
        let dropped = names(tables, |t| t.dropped);
        let in_flight = names(tables, |t| t.in_flight.is_some());
        let mut line = format!("dropped: {}", list_or_none(&dropped));
        if !in_flight.is_empty() {
            line.push_str(&format!(
                "; in flight, may still complete on the server: DROP TABLE {}",
                in_flight.join(", ")
            ));
        }
        let left = (total as usize).saturating_sub(dropped.len() + in_flight.len());
        line.push_str(&format!("; not dropped: {left}"));
        line
    }
}

/// Orders `sbtest2` before `sbtest10`.
fn table_key(table: &str) -> (u64, String) {
    let digits = table.trim_start_matches(|c: char| !c.is_ascii_digit());
    (digits.parse().unwrap_or(u64::MAX), table.to_owned())
}

fn names(tables: &BTreeMap<(u64, String), TableState>, keep: impl Fn(&TableState) -> bool) -> Vec<String> {
    tables.iter().filter(|(_, t)| keep(t)).map(|((_, name), _)| name.clone()).collect()
}

fn list_or_none(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

fn partial_state(t: &TableState) -> String {
    let mut state = if t.created { format!("created, {} rows inserted", t.rows) } else { "not created".to_owned() };
    if t.indexed {
        state.push_str(", indexed");
    }
    if let Some(statement) = t.in_flight {
        state.push_str(&format!("; {statement} was in flight and may still complete on the server"));
    }
    state
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_of_sysbench_statements() {
        assert_eq!(TableStep::parse("CREATE TABLE sbtest3(\n  id INTEGER"), Some(TableStep::Create("sbtest3")));
        assert_eq!(TableStep::parse("CREATE TABLE IF NOT EXISTS sbtest1 (id INT)"), Some(TableStep::Create("sbtest1")));
        assert_eq!(
            TableStep::parse("INSERT INTO sbtest2(k, c, pad) VALUES(5, '1-2', '3-4'),(6, '5-6', '7-8'),(7, '9', '0')"),
            Some(TableStep::Insert("sbtest2", 3))
        );
        assert_eq!(
            TableStep::parse("INSERT INTO sbtest2(k, c, pad) VALUES(5, '1-2', '3-4')"),
            Some(TableStep::Insert("sbtest2", 1))
        );
        assert_eq!(TableStep::parse("CREATE INDEX k_4 ON sbtest4(k)"), Some(TableStep::Index("sbtest4")));
        assert_eq!(TableStep::parse("CREATE INDEX k_4 on sbtest4(k)"), Some(TableStep::Index("sbtest4")));
        assert_eq!(TableStep::parse("CREATE INDEX k on sbtest(k)"), Some(TableStep::Index("sbtest")));
        assert_eq!(TableStep::parse("DROP TABLE IF EXISTS sbtest12"), Some(TableStep::Drop("sbtest12")));
        assert_eq!(
            TableStep::parse("LOAD DATA LOCAL INFILE 'memory:sbtest7' INTO TABLE sbtest7 CHARACTER SET utf8mb4 (k)"),
            Some(TableStep::Load("sbtest7"))
        );
        assert_eq!(
            TableStep::parse("INSERT INTO sbtest5(id, k, c, pad) VALUES(?, ?, ?, ?)"),
            Some(TableStep::BulkInsert("sbtest5"))
        );
        assert_eq!(TableStep::parse("ANALYZE TABLE sbtest1"), None);
    }

    /// A bulk-executed INSERT adds the rows its sender counted, not one.
    #[test]
    fn bulk_inserts_count_the_rows_sent() {
        let progress = TableProgress::default();
        let insert = "INSERT INTO sbtest1(id, k, c, pad) VALUES(?, ?, ?, ?)";
        for sql in ["CREATE TABLE sbtest1(id INT)", insert, insert] {
            assert!(progress.sending(sql));
            progress.done(sql, (sql == insert).then_some(2500));
        }
        assert_eq!(progress.loading(), [("sbtest1".to_owned(), 5000)]);
        assert!(progress.sending(insert));
        let summary = progress.prepare_summary(1);
        assert!(summary.contains("(created, 5000 rows inserted; a bulk INSERT was in flight"), "{summary}");
    }

    /// Complete, half-made and untouched tables, with the statement in
    /// flight named, in table order.
    #[test]
    fn an_interrupted_prepare_says_what_it_had_done() {
        let progress = TableProgress::default();
        for sql in [
            "CREATE TABLE sbtest10(id INT)",
            "INSERT INTO sbtest10(k) VALUES(1),(2)",
            "CREATE INDEX k_10 ON sbtest10(k)",
        ] {
            assert!(progress.sending(sql));
            progress.done(sql, None);
        }
        progress.complete("sbtest10");
        assert!(progress.sending("CREATE TABLE sbtest2(id INT)"));
        progress.done("CREATE TABLE sbtest2(id INT)", None);
        assert!(progress.sending("INSERT INTO sbtest2(k) VALUES(1),(2),(3)"));
        progress.done("INSERT INTO sbtest2(k) VALUES(1),(2),(3)", None);
        assert!(progress.sending("INSERT INTO sbtest2(k) VALUES(4)"));
        assert!(progress.sending("CREATE TABLE sbtest3(id INT)"));
        assert_eq!(
            progress.prepare_summary(5),
            "complete: sbtest10; incomplete: sbtest2 (created, 3 rows inserted; an INSERT was in flight and may \
             still complete on the server), sbtest3 (not created; a CREATE TABLE was in flight and may still \
             complete on the server); not created: 2; run cleanup before prepare again"
        );
        assert!(!progress.sending("INSERT INTO sbtest2(k) VALUES(5)"), "nothing is sent after the summary");
        let nothing = TableProgress::default();
        assert_eq!(nothing.prepare_summary(2), "complete: none; not created: 2", "nothing to undo");
    }

    /// Two LOAD DATA of one table in flight, one answered: the other is
    /// still said to be in flight.
    #[test]
    fn a_shared_table_is_in_flight_until_its_last_batch_is_answered() {
        let progress = TableProgress::default();
        let load = "LOAD DATA LOCAL INFILE 'memory:sbtest1' INTO TABLE sbtest1 CHARACTER SET binary (id, k, c, pad)";
        assert!(progress.sending("CREATE TABLE sbtest1(id INT)"));
        progress.done("CREATE TABLE sbtest1(id INT)", None);
        assert!(progress.sending(load) && progress.sending(load));
        progress.done(load, Some(1000));
        assert_eq!(
            progress.prepare_summary(1),
            "complete: none; incomplete: sbtest1 (created, 1000 rows inserted; a LOAD DATA was in flight and may still \
             complete on the server); not created: 0; run cleanup before prepare again"
        );
    }

    #[test]
    fn an_interrupted_cleanup_says_what_it_had_dropped() {
        let progress = TableProgress::default();
        for table in ["sbtest1", "sbtest2"] {
            let sql = format!("DROP TABLE IF EXISTS {table}");
            assert!(progress.sending(&sql));
            progress.done(&sql, None);
        }
        assert!(progress.sending("DROP TABLE IF EXISTS sbtest3"));
        assert_eq!(
            progress.cleanup_summary(5),
            "dropped: sbtest1, sbtest2; in flight, may still complete on the server: DROP TABLE sbtest3; not dropped: 2"
        );
    }
}
