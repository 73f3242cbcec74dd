//! 0.5's `common.lua` for the MySQL driver: the tables every 0.5 OLTP
//! script creates (`prepare`) and drops (`cleanup`), and its messages.
//!
//! Byte for byte the copy in sysbench 1.0.20's tree
//! (`tests/include/oltp_legacy/common.lua`), which 1.0.20 runs for a 0.5
//! command line given that path, and against which the tests compare
//! (`testdata/sysbench_legacy`). It differs from 0.5's own in three things
//! a user could see, and follows 1.0.20's for each:
//! - the index on `k` obeys `--oltp-create-secondary` (0.5 always made it);
//! - `cleanup` sends `DROP TABLE IF EXISTS` (0.5 `DROP TABLE`, an error for
//!   a missing table);
//! - 1.0.20's compatibility layer forces `myisam_max_rows` to 1000000;
//!   `--myisam-max-rows` is honoured here, as 0.5 did.
//!
//! Unlike `oltp_common.lua`, `prepare` is one function run once: one
//! connection creates and loads the tables, one after the other.

use super::super::table_load::{oltp_common_progress_line, TableLoad, TableSql};
use super::super::{OltpOptions, ScriptContext};
use super::LegacyOptions;
use crate::rand::Rng;

/// `create_insert()`'s SQL for the MySQL driver.
struct Common05Sql {
    auto_inc: bool,
    secondary: bool,
    create_secondary: bool,
    engine: String,
    max_rows: u64,
    table_options: String,
}

impl TableSql for Common05Sql {
    fn create_table(&self, table: u32) -> String {
        let auto_inc = if self.auto_inc { "AUTO_INCREMENT" } else { "" };
        let index = if self.secondary { "KEY xid" } else { "PRIMARY KEY" };
        format!(
            "CREATE TABLE sbtest{table} (\nid INTEGER UNSIGNED NOT NULL {auto_inc},\nk INTEGER UNSIGNED DEFAULT '0' \
             NOT NULL,\nc CHAR(120) DEFAULT '' NOT NULL,\npad CHAR(60) DEFAULT '' NOT NULL,\n{index} (id)\n) \
             /*! ENGINE = {engine} MAX_ROWS = {max_rows} */ {options}",
            engine = self.engine,
            max_rows = self.max_rows,
            options = self.table_options,
        )
    }

    /// `(k, 'c', 'pad')`, or `(id,k,'c', 'pad'  )` with the id, spaces as
    /// the script writes them.
    fn push_row(&self, row: &mut String, id: Option<u32>, k: u32, c: &[u8], pad: &[u8]) {
        row.push('(');
        match id {
            Some(id) => {
                row.push_str(&id.to_string());
                row.push(',');
                row.push_str(&k.to_string());
                row.push_str(",'");
            }
            None => {
                row.push_str(&k.to_string());
                row.push_str(", '");
            }
        }
        row.extend(c.iter().map(|&b| char::from(b)));
        row.push_str("', '");
        row.extend(pad.iter().map(|&b| char::from(b)));
        row.push_str(if id.is_some() { "'  )" } else { "')" });
    }

    fn create_index(&self, table: u32) -> Option<String> {
        self.create_secondary.then(|| format!("CREATE INDEX k_{table} on sbtest{table}(k)"))
    }
}

/// `prepare()`: tables 1..=`tables` created and loaded by one connection
/// (thread 0's; the others have nothing to do); or, for
/// `parallel_prepare.lua`, by every thread, `thread+1`, then every
/// `threads`-th, as 1.0's.
pub(crate) fn prepare05(
    options: &OltpOptions,
    legacy: &LegacyOptions,
    context: ScriptContext,
    rng: Rng,
    parallel: bool,
) -> Box<dyn Iterator<Item = String> + Send> {
    if context.thread != 0 && !parallel {
        return Box::new(std::iter::empty());
    }
    let sql = Common05Sql {
        auto_inc: options.auto_inc,
        secondary: options.secondary,
        create_secondary: options.create_secondary,
        engine: options.mysql_storage_engine.clone(),
        max_rows: legacy.myisam_max_rows,
        table_options: options.mysql_table_options.clone(),
    };
    let context = if parallel { context } else { ScriptContext { thread: 0, threads: 1 } };
    Box::new(TableLoad::with_sql(Box::new(sql), options, options.table_size, context, rng))
}

/// `cleanup()`.
pub(crate) fn cleanup05(tables: u32) -> Vec<String> {
    (1..=tables).map(|table| format!("DROP TABLE IF EXISTS sbtest{table}")).collect()
}

/// What `create_insert()` and `cleanup()` print: as `oltp_common.lua` but
/// for the index, "Creating secondary indexes on 'sbtestN'...".
pub(crate) fn progress_line05(sql: &str, loading: &mut String, table_size: u32) -> Option<String> {
    if let Some(rest) = sql.strip_prefix("CREATE INDEX ") {
        let table = rest.split(" on ").nth(1)?.split('(').next()?;
        return Some(format!("Creating secondary indexes on '{table}'..."));
    }
    oltp_common_progress_line(sql, loading, table_size)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::testkit::{context, rng};

    fn options() -> (OltpOptions, LegacyOptions) {
        (OltpOptions { tables: 2, table_size: 30, ..OltpOptions::default() }, LegacyOptions::default())
    }

    /// The exact text; `sysbench_traces.rs` checks it against what the real
    /// sysbench 1.0.20 sends running the script.
    #[test]
    fn create_table() {
        let (mut o, mut l) = options();
        let sql = |o: &OltpOptions, l: &LegacyOptions| prepare05(o, l, context(0, 1), rng(1), false).next().unwrap();
        let head = "CREATE TABLE sbtest1 (\nid INTEGER UNSIGNED NOT NULL ";
        let body = ",\nk INTEGER UNSIGNED DEFAULT '0' NOT NULL,\nc CHAR(120) DEFAULT '' NOT NULL,\n\
                    pad CHAR(60) DEFAULT '' NOT NULL,\n";
        let tail = "PRIMARY KEY (id)\n) /*! ENGINE = innodb MAX_ROWS = 1000000 */ ";
        assert_eq!(sql(&o, &l), format!("{head}AUTO_INCREMENT{body}{tail}"));
        (o.auto_inc, o.secondary, o.mysql_storage_engine, o.mysql_table_options) =
            (false, true, "myisam".into(), "ROW_FORMAT=FIXED".into());
        l.myisam_max_rows = 5;
        let tail = "KEY xid (id)\n) /*! ENGINE = myisam MAX_ROWS = 5 */ ROW_FORMAT=FIXED";
        assert_eq!(sql(&o, &l), format!("{head}{body}{tail}"));
    }

    #[test]
    fn rows_index_and_messages() {
        let (mut o, l) = options();
        for auto_inc in [true, false] {
            o.auto_inc = auto_inc;
            let sql: Vec<String> = prepare05(&o, &l, context(0, 3), rng(2), false).collect();
            assert_eq!(sql.len(), 6, "two tables of create, insert, index");
            let insert = &sql[1];
            let row = &insert[insert.find(" VALUES").unwrap() + 7..insert.find("),(").unwrap() + 1];
            if auto_inc {
                assert!(insert.starts_with("INSERT INTO sbtest1(k, c, pad) VALUES("), "{insert}");
                assert_eq!(row.matches(", '").count(), 2, "{row}");
            } else {
                assert!(insert.starts_with("INSERT INTO sbtest1(id, k, c, pad) VALUES(1,"), "{insert}");
                assert!(row.ends_with("'  )") && row.contains(",'"), "{row}");
            }
            assert_eq!(insert.matches("),(").count(), 29);
            assert_eq!(sql[2], "CREATE INDEX k_1 on sbtest1(k)");
            let mut loading = String::new();
            let lines: Vec<String> = sql.iter().filter_map(|s| progress_line05(s, &mut loading, 30)).collect();
            assert_eq!(
                lines,
                [
                    "Creating table 'sbtest1'...",
                    "Inserting 30 records into 'sbtest1'",
                    "Creating secondary indexes on 'sbtest1'...",
                    "Creating table 'sbtest2'...",
                    "Inserting 30 records into 'sbtest2'",
                    "Creating secondary indexes on 'sbtest2'...",
                ]
            );
        }
        assert_eq!(prepare05(&o, &l, context(1, 3), rng(2), false).count(), 0, "one connection prepares");
        o.create_secondary = false;
        assert!(prepare05(&o, &l, context(0, 1), rng(2), false).all(|s| !s.starts_with("CREATE INDEX")));
        assert_eq!(cleanup05(2), ["DROP TABLE IF EXISTS sbtest1", "DROP TABLE IF EXISTS sbtest2"]);
        assert_eq!(progress_line05(&cleanup05(2)[1], &mut String::new(), 0).unwrap(), "Dropping table 'sbtest2'...");
    }
}
