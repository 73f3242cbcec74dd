//! A command that failed on a table that is not there (ERROR 1146): which
//! of the test's tables the database has, read once the command has
//! failed (`tables::with_table_census`), so that the error says whether
//! `prepare` made fewer tables than this run's `--tables` asks for, made
//! none, or left gaps.

use std::collections::BTreeSet;
use std::fmt;

use crate::client::{ClientError, ConnectOptions, Connection};

/// MySQL's and MariaDB's "Table 'db.name' doesn't exist".
pub(super) const NO_SUCH_TABLE: u16 = 1146;

/// The numbers `n` of the tables `prefix` + `n` in the database `options`
/// log in to.
pub(super) async fn tables_like(options: &ConnectOptions, prefix: &str) -> Result<BTreeSet<u32>, ClientError> {
    let mut conn = Connection::connect(options).await?;
    let listed = conn.query("SHOW TABLES").await?;
    let _ = conn.quit().await;
    let names = listed.result_sets().flat_map(|set| set.text_rows().unwrap_or_default());
    let names = names.filter_map(|row| row.into_iter().next().flatten());
    Ok(names.filter_map(|name| String::from_utf8(name).ok()?.strip_prefix(prefix)?.parse().ok()).collect())
}

/// The table the server said does not exist, as a test names its tables:
/// a prefix and a number (`sbtest5`), or a prefix alone (0.4's `sbtest`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingTable {
    pub prefix: String,
    pub number: Option<u32>,
}

impl MissingTable {
    /// From the server's message, `Table 'sbtest.sbtest5' doesn't exist`.
    pub(super) fn parse(message: &str) -> Option<MissingTable> {
        let quoted = message.split('\'').nth(1)?;
        let name = quoted.rsplit('.').next()?;
        let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        let (prefix, number) = name.split_at(name.len() - digits);
        Some(MissingTable { prefix: prefix.to_owned(), number: number.parse().ok() })
    }
}

/// What the database holds of the test's tables, for the error's advice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableCensus {
    pub missing: MissingTable,
    /// The numbers of the tables named prefix + number that are there.
    pub present: BTreeSet<u32>,
    /// `--tables`, for the tests that take it.
    pub tables_option: Option<u32>,
}

impl fmt::Display for TableCensus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let prefix = &self.missing.prefix;
        let Some(missing) = self.missing.number else {
            return write!(f, "run prepare with the same options first");
        };
        // The tables 1 to `prepared` are there, and no other.
        let prepared = (1..).find(|n| !self.present.contains(n)).unwrap_or(1) - 1;
        let fewer = missing > prepared && self.present.len() as u32 == prepared;
        match (self.present.is_empty(), fewer, self.tables_option) {
            (true, _, _) => write!(
                f,
                "the database has none of the test's {prefix}N tables: run prepare with the same options first"
            ),
            (false, true, Some(wanted)) => write!(
                f,
                "the database has {prefix}1 to {prefix}{prepared} only: they were prepared with --tables={prepared} \
                 and this run has --tables={wanted}; run with --tables={prepared}, or run cleanup with \
                 --tables={prepared}, then prepare with --tables={wanted}"
            ),
            (false, true, None) => write!(
                f,
                "the database has {prefix}1 to {prefix}{prepared} only, prepared for fewer tables than this run \
                 uses: run with the options prepare had, or run cleanup, then prepare with this run's"
            ),
            (false, false, _) => write!(
                f,
                "the database has {} {prefix}N tables, but not {prefix}{missing}: run cleanup, then prepare again \
                 with the same options",
                self.present.len()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_missing_table_is_read_from_the_servers_message() {
        let parse = |m: &str| MissingTable::parse(m);
        let table = |prefix: &str, number| Some(MissingTable { prefix: prefix.to_owned(), number });
        assert_eq!(parse("Table 'sbtest.sbtest5' doesn't exist"), table("sbtest", Some(5)));
        assert_eq!(parse("Table 'my.db.sbtest12' doesn't exist"), table("sbtest", Some(12)));
        assert_eq!(parse("Table 'sbtest.sbtest' doesn't exist"), table("sbtest", None));
        assert_eq!(parse("no quotes"), None);
    }

    fn census(present: &[u32], missing: u32, tables: u32) -> String {
        let missing = MissingTable { prefix: "sbtest".to_owned(), number: Some(missing) };
        let present = present.iter().copied().collect();
        TableCensus { missing, present, tables_option: Some(tables) }.to_string()
    }

    /// Prepared with 4, run with 8; never prepared; a table dropped from
    /// the middle; a test without `--tables`.
    #[test]
    fn the_advice_follows_what_is_there() {
        assert_eq!(
            census(&[1, 2, 3, 4], 5, 8),
            "the database has sbtest1 to sbtest4 only: they were prepared with --tables=4 and this run has \
             --tables=8; run with --tables=4, or run cleanup with --tables=4, then prepare with --tables=8"
        );
        assert!(census(&[], 1, 8).starts_with("the database has none of the test's sbtestN tables: run prepare"));
        assert_eq!(
            census(&[1, 2, 4], 3, 4),
            "the database has 3 sbtestN tables, but not sbtest3: run cleanup, then prepare again with the same \
             options"
        );
        let missing = MissingTable { prefix: "sbtest".to_owned(), number: Some(3) };
        let scripted = TableCensus { missing, present: [1, 2].into(), tables_option: None };
        assert!(scripted.to_string().starts_with("the database has sbtest1 to sbtest2 only, prepared for fewer"));
        let missing = MissingTable { prefix: "sbtest".to_owned(), number: None };
        let legacy = TableCensus { missing, present: BTreeSet::new(), tables_option: None };
        assert_eq!(legacy.to_string(), "run prepare with the same options first");
    }
}
