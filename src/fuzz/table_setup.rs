//! What a failing session needs from its database: the tables its
//! statements name, as `SHOW CREATE TABLE` gave them when the failure was
//! found, and their first rows. A reproducer carries it (its `setup`
//! section) and every replay (the fuzzer's re-runs, `fuzz-replay`, the
//! emitted Python script) makes it again before sending the session:
//! each table dropped and created afresh, its rows inserted. So a
//! reproducer does not depend on what an earlier session of the campaign
//! left behind.
//!
//! Rows: the first [`MAX_ROWS`] the server returns (InnoDB: by primary
//! key), at most [`MAX_ROW_BYTES`] of them per table. Fuzzed statements
//! come from sysbench's, whose point selects and ranges (100 rows by
//! default) read the first ids of a freshly prepared table; the minimiser
//! then drops the rows (and the tables) the failure does not need, so a
//! saved setup keeps only what makes it happen.

use std::fmt::Write as _;

use super::control::control_options;
use super::exec::{Phase, SentPacket};
use super::fuzz_options::Target;
use crate::client::{ClientError, Connection};
use wirebench_protocol::framing::HEADER_LEN;

/// Rows recorded per table, at most.
pub const MAX_ROWS: usize = 100;
/// Bytes of rows (as SQL) recorded per table, at most.
pub const MAX_ROW_BYTES: usize = 64 * 1024;
/// Tables of the database looked at, at most.
const MAX_TABLES: usize = 64;
/// Rows per INSERT when the setup is made.
const ROWS_PER_INSERT: usize = 50;

/// One table a session needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableSetup {
    pub name: String,
    /// `SHOW CREATE TABLE`'s statement.
    pub create: String,
    /// Each row as an SQL tuple: `(1,'abc',NULL)`.
    pub rows: Vec<String>,
}

/// The tables a session needs, in the order they are made.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Setup {
    pub tables: Vec<TableSetup>,
}

impl Setup {
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }

    /// The tables whose names the sessions' statement text uses: each
    /// command packet's bytes split into words (identifiers, with or
    /// without backquotes), compared without regard to case.
    pub fn for_sessions<'a>(&self, sessions: impl IntoIterator<Item = &'a [SentPacket]>) -> Setup {
        let mut words: Vec<Vec<u8>> = Vec::new();
        for packets in sessions {
            for packet in packets.iter().filter(|p| p.rendered.phase == Phase::Command) {
                let payload = packet.rendered.bytes.get(HEADER_LEN..).unwrap_or_default();
                words.extend(identifiers(payload).map(|w| w.to_ascii_lowercase()));
            }
        }
        let named = |t: &&TableSetup| words.iter().any(|w| w.as_slice() == t.name.to_ascii_lowercase().as_bytes());
        Setup { tables: self.tables.iter().filter(named).cloned().collect() }
    }

    /// The statements that make it, in order.
    pub fn statements(&self) -> Vec<String> {
        let mut out = Vec::new();
        for table in &self.tables {
            out.push(format!("DROP TABLE IF EXISTS {}", quoted(&table.name)));
            out.push(table.create.clone());
            for chunk in table.rows.chunks(ROWS_PER_INSERT) {
                out.push(format!("INSERT INTO {} VALUES {}", quoted(&table.name), chunk.join(",")));
            }
        }
        out
    }

    /// What makes it unsafe to run: a CREATE statement that is not the
    /// creation of its own table in the current database (a file edited
    /// by hand), or `None`.
    pub fn unsafe_statement(&self) -> Option<String> {
        self.tables.iter().find_map(|t| {
            let start = format!("CREATE TABLE {} (", quoted(&t.name));
            (!t.create.starts_with(&start) || t.name.is_empty())
                .then(|| format!("setup of table {:?}: its statement does not start with {start:?}", t.name))
        })
    }

    /// Makes the tables in `target`'s database: each dropped if it is
    /// there, created, and its rows inserted (foreign keys not checked).
    pub async fn make(&self, target: &Target, connect: std::time::Duration) -> Result<(), ClientError> {
        if self.is_empty() {
            return Ok(());
        }
        let mut conn = connect_to(target, connect).await?;
        conn.query_drop("SET SESSION foreign_key_checks = 0").await?;
        for statement in self.statements() {
            conn.query_drop(&statement).await?;
        }
        let _ = conn.quit().await;
        Ok(())
    }
}

/// A connection to `target`'s database: a login naming no database, then
/// COM_INIT_DB (the form of login the emitted Python script uses too, and
/// one that works when the server does not complete a login naming it),
/// the login within `connect`.
async fn connect_to(target: &Target, connect: std::time::Duration) -> Result<Connection, ClientError> {
    let options = control_options(target, connect, false);
    let mut conn = match tokio::time::timeout(connect, Connection::connect(&options)).await {
        Ok(conn) => conn?,
        Err(_) => {
            return Err(ClientError::Timeout { endpoint: target.endpoint.clone(), what: "the login", after: connect })
        }
    };
    conn.init_db(&target.database).await?;
    Ok(conn)
}

/// Records the base tables of `target`'s database (up to 64), each with
/// its first rows: what [`Setup::for_sessions`] picks from later.
pub async fn capture(target: &Target, connect: std::time::Duration) -> Result<Setup, ClientError> {
    let mut conn = connect_to(target, connect).await?;
    let listed = conn.query("SHOW FULL TABLES WHERE Table_type = 'BASE TABLE'").await?;
    let names: Vec<String> = first_column(&listed).into_iter().take(MAX_TABLES).collect();
    let mut tables = Vec::new();
    for name in names {
        let created = conn.query(&format!("SHOW CREATE TABLE {}", quoted(&name))).await?;
        let Some(create) = nth_column(&created, 1).into_iter().next() else { continue };
        let selected = conn.query(&format!("SELECT * FROM {} LIMIT {MAX_ROWS}", quoted(&name))).await?;
        let mut rows = Vec::new();
        let mut bytes = 0;
        for set in selected.result_sets() {
            for row in set.text_rows().unwrap_or_default() {
                let tuple = sql_tuple(&row);
                bytes += tuple.len();
                if bytes > MAX_ROW_BYTES {
                    break;
                }
                rows.push(tuple);
            }
        }
        tables.push(TableSetup { name, create, rows });
    }
    let _ = conn.quit().await;
    Ok(Setup { tables })
}

fn nth_column(response: &wirebench_protocol::response::Response, n: usize) -> Vec<String> {
    let mut out = Vec::new();
    for set in response.result_sets() {
        for row in set.text_rows().unwrap_or_default() {
            if let Some(Some(value)) = row.get(n) {
                out.push(String::from_utf8_lossy(value).into_owned());
            }
        }
    }
    out
}

fn first_column(response: &wirebench_protocol::response::Response) -> Vec<String> {
    nth_column(response, 0)
}

/// A row as an SQL tuple: NULL, printable ASCII as a quoted string, other
/// bytes as a hex literal (only string and binary columns hold those).
pub fn sql_tuple(row: &[Option<Vec<u8>>]) -> String {
    let mut out = String::from("(");
    for (i, value) in row.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match value {
            None => out.push_str("NULL"),
            Some(bytes) if bytes.iter().all(|b| (0x20..0x7f).contains(b)) => {
                out.push('\'');
                for &b in bytes {
                    if b == b'\'' || b == b'\\' {
                        out.push('\\');
                    }
                    out.push(b as char);
                }
                out.push('\'');
            }
            Some(bytes) => {
                out.push_str("X'");
                for b in bytes {
                    let _ = write!(out, "{b:02x}");
                }
                out.push('\'');
            }
        }
    }
    out.push(')');
    out
}

/// `name` in backquotes, a backquote in it doubled.
pub fn quoted(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// The identifier-like words of statement text.
fn identifiers(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    text.split(|b| !(b.is_ascii_alphanumeric() || *b == b'_' || *b == b'$' || *b >= 0x80)).filter(|w| !w.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz::exec::Rendered;

    fn command(text: &[u8]) -> SentPacket {
        let mut bytes = vec![0, 0, 0, 0, 0x16];
        bytes.extend_from_slice(text);
        SentPacket {
            rendered: Rendered { phase: Phase::Command, bytes, spots: Vec::new(), wrap: Vec::new() },
            answered: None,
        }
    }

    fn table(name: &str, rows: &[&str]) -> TableSetup {
        TableSetup {
            name: name.into(),
            create: format!("CREATE TABLE `{name}` (\n  `id` int(11) NOT NULL\n)"),
            rows: rows.iter().map(|r| r.to_string()).collect(),
        }
    }

    #[test]
    fn the_tables_a_session_names_are_picked() {
        let setup = Setup { tables: vec![table("sbtest1", &["(1)"]), table("sbtest2", &[]), table("t", &[])] };
        let session = [command(b"SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?"), command(b"SELECT 1 FROM `T`")];
        let picked = setup.for_sessions([&session[..]]);
        let names: Vec<&str> = picked.tables.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["sbtest1", "t"]);
        let login =
            SentPacket { rendered: Rendered { phase: Phase::Login, ..session[1].rendered.clone() }, answered: None };
        assert!(setup.for_sessions([&[login][..]]).is_empty(), "a login names no table");
    }

    #[test]
    fn rows_become_sql_and_the_statements_recreate_each_table() {
        let row = vec![Some(b"1".to_vec()), None, Some(b"it's \\ ok".to_vec()), Some(vec![0, 0xff, b'a'])];
        assert_eq!(sql_tuple(&row), r"('1',NULL,'it\'s \\ ok',X'00ff61')");
        let rows: Vec<String> = (0..51).map(|i| format!("({i})")).collect();
        let setup = Setup { tables: vec![TableSetup { rows, ..table("a`b", &[]) }] };
        let statements = setup.statements();
        assert_eq!(statements[0], "DROP TABLE IF EXISTS `a``b`");
        assert_eq!(statements.len(), 4, "50 rows an INSERT: {statements:?}");
        assert!(statements[3] == "INSERT INTO `a``b` VALUES (50)", "{statements:?}");
    }

    #[test]
    fn a_create_statement_for_another_table_is_refused() {
        assert_eq!(Setup { tables: vec![table("t", &[])] }.unsafe_statement(), None);
        let mut other = table("t", &[]);
        other.create = "CREATE TABLE mysql.user (id int)".into();
        assert!(Setup { tables: vec![other] }.unsafe_statement().unwrap().contains("does not start with"));
    }
}
