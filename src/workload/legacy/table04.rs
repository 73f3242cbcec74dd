//! sysbench 0.4's one table (`sb_oltp.c`'s `oltp_cmd_prepare` and
//! `oltp_cmd_cleanup`, `drv_mysql.c`'s `parse_table_engine`): named by
//! `--oltp-table-name` (`sbtest`), created with its secondary index on `k`
//! before the rows, which are all alike (`k` 0, `c` a space, `pad` a fixed
//! string) and go in 10,000 per INSERT.
//!
//! One difference: `cleanup` sends `DROP TABLE IF EXISTS`, where 0.4 sent
//! `DROP TABLE` and failed when the table was missing, as every 1.0
//! cleanup does.

use super::super::{OltpOptions, OptionsError};
use super::{EngineTrx, LegacyOptions};

/// `INSERT_ROWS`: rows per INSERT of the load.
const INSERT_ROWS: u32 = 10_000;

/// The `pad` of every loaded row.
const LOAD_PAD: &str = "qqqqqqqqqqwwwwwwwwwweeeeeeeeeerrrrrrrrrrtttttttttt";

/// How 0.4 brackets a complex-mode transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TrxStyle {
    BeginCommit,
    /// `LOCK TABLES t WRITE` (`READ` when read-only) and `UNLOCK TABLES`,
    /// for an engine without transactions.
    LockTables,
}

/// `parse_table_engine()`'s answer: whether `engine` has transactions,
/// from `--mysql-engine-trx` or, with `auto`, from the engine's name.
/// 0.4 knew MyISAM, HEAP and Maria without; the modern names of the last
/// two, MEMORY and Aria, count as theirs.
pub(crate) fn trx_style(options: &OltpOptions, legacy: &LegacyOptions) -> Result<TrxStyle, OptionsError> {
    let engine = options.mysql_storage_engine.to_ascii_lowercase();
    match legacy.engine_trx {
        EngineTrx::Yes => Ok(TrxStyle::BeginCommit),
        EngineTrx::No => Ok(TrxStyle::LockTables),
        EngineTrx::Auto => match engine.as_str() {
            "myisam" | "heap" | "memory" | "maria" | "aria" => Ok(TrxStyle::LockTables),
            "innodb" | "bdb" | "berkeleydb" | "ndbcluster" | "federated" | "pbxt" | "falcon" | "xtradb" => {
                Ok(TrxStyle::BeginCommit)
            }
            _ => Err(OptionsError::UnknownEngineTrx { engine: options.mysql_storage_engine.clone() }),
        },
    }
}

/// The table options 0.4 appends: `--mysql-create-options`, then the
/// engine in a version comment, with `MAX_ROWS` for MyISAM.
fn table_options(options: &OltpOptions, legacy: &LegacyOptions) -> String {
    let create = &options.mysql_table_options;
    let engine = &options.mysql_storage_engine;
    match engine.to_ascii_lowercase().as_str() {
        "myisam" if legacy.myisam_max_rows > 0 => {
            format!("{create} /*! ENGINE=MyISAM MAX_ROWS={} */", legacy.myisam_max_rows)
        }
        "myisam" => format!("{create} /*! ENGINE=MyISAM */"),
        "bdb" | "berkeleydb" => format!("{create} /*! ENGINE=BerkeleyDB */"),
        "ndbcluster" => format!("{create} /*! ENGINE=NDB */"),
        _ => format!("{create} /*! ENGINE={engine} */"),
    }
}

/// `oltp_cmd_prepare()`'s CREATE TABLE for the MySQL driver (unsigned
/// integers, AUTO_INCREMENT), spaces as its format string leaves them.
pub(crate) fn create_table04(options: &OltpOptions, legacy: &LegacyOptions) -> String {
    let auto_inc = if options.auto_inc { "AUTO_INCREMENT" } else { "" };
    let index = if options.secondary { "KEY xid" } else { "PRIMARY KEY" };
    format!(
        "CREATE TABLE {table} (id INTEGER UNSIGNED NOT NULL {auto_inc}, k integer UNSIGNED DEFAULT '0' NOT NULL, \
         c char(120) DEFAULT '' NOT NULL, pad char(60) DEFAULT '' NOT NULL, {index} (id) ) {table_options}",
        table = legacy.table_name,
        table_options = table_options(options, legacy),
    )
}

/// `prepare`: the table, its index on `k`, then the rows.
pub(crate) fn prepare04(options: &OltpOptions, legacy: &LegacyOptions) -> impl Iterator<Item = String> + Send {
    let table = legacy.table_name.clone();
    let (size, auto_inc) = (options.table_size, options.auto_inc);
    let head = [create_table04(options, legacy), format!("CREATE INDEX k on {table}(k)")];
    let inserts = (0..size.div_ceil(INSERT_ROWS)).map(move |batch| {
        let first = batch * INSERT_ROWS + 1;
        let last = size.min(first.saturating_add(INSERT_ROWS - 1));
        load_insert(&table, auto_inc, first..=last)
    });
    head.into_iter().chain(inserts)
}

/// One INSERT of the load: rows `ids`, numbered only without auto_inc.
fn load_insert(table: &str, auto_inc: bool, ids: std::ops::RangeInclusive<u32>) -> String {
    let columns = if auto_inc { "(k, c, pad)" } else { "(id, k, c, pad)" };
    let mut sql = format!("INSERT INTO {table}{columns} VALUES ");
    for id in ids {
        if !sql.ends_with(' ') {
            sql.push(',');
        }
        if auto_inc {
            sql.push_str("(0,' ','");
        } else {
            sql.push('(');
            sql.push_str(&id.to_string());
            sql.push_str(",0,' ','");
        }
        sql.push_str(LOAD_PAD);
        sql.push_str("')");
    }
    sql
}

/// `cleanup`.
pub(crate) fn cleanup04(legacy: &LegacyOptions) -> Vec<String> {
    vec![format!("DROP TABLE IF EXISTS {}", legacy.table_name)]
}

/// What `prepare` and `cleanup` print (`log_text(LOG_NOTICE, ...)`).
pub(crate) fn progress_line04(sql: &str, loading: &mut String, table_size: u32) -> Option<String> {
    let table_after = |prefix: &str| sql.strip_prefix(prefix).and_then(|rest| rest.split(['(', ' ']).next());
    if let Some(table) = table_after("CREATE TABLE ") {
        return Some(format!("Creating table '{table}'..."));
    }
    if let Some(table) = table_after("INSERT INTO ").filter(|&table| loading != table) {
        table.clone_into(loading);
        return Some(format!("Creating {table_size} records in table '{table}'..."));
    }
    table_after("DROP TABLE IF EXISTS ").map(|table| format!("Dropping table '{table}'..."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_table_is_sb_oltp_c() {
        let (mut o, mut l) = (OltpOptions::default(), LegacyOptions::default());
        assert_eq!(
            create_table04(&o, &l),
            "CREATE TABLE sbtest (id INTEGER UNSIGNED NOT NULL AUTO_INCREMENT, k integer UNSIGNED DEFAULT '0' NOT \
             NULL, c char(120) DEFAULT '' NOT NULL, pad char(60) DEFAULT '' NOT NULL, PRIMARY KEY (id) )  /*! \
             ENGINE=innodb */"
        );
        (o.auto_inc, o.secondary, o.mysql_storage_engine, o.mysql_table_options) =
            (false, true, "MyISAM".into(), "CHECKSUM=1".into());
        l.table_name = "t04".into();
        assert_eq!(
            create_table04(&o, &l),
            "CREATE TABLE t04 (id INTEGER UNSIGNED NOT NULL , k integer UNSIGNED DEFAULT '0' NOT NULL, c char(120) \
             DEFAULT '' NOT NULL, pad char(60) DEFAULT '' NOT NULL, KEY xid (id) ) CHECKSUM=1 /*! ENGINE=MyISAM \
             MAX_ROWS=1000000 */"
        );
        l.myisam_max_rows = 0;
        assert!(create_table04(&o, &l).ends_with(") CHECKSUM=1 /*! ENGINE=MyISAM */"));
        o.mysql_storage_engine = "bdb".into();
        assert!(create_table04(&o, &l).ends_with("/*! ENGINE=BerkeleyDB */"));
    }

    #[test]
    fn load_is_10000_rows_an_insert_after_the_index() {
        let o = OltpOptions { table_size: 20_001, ..OltpOptions::default() };
        let l = LegacyOptions::default();
        let sql: Vec<String> = prepare04(&o, &l).collect();
        assert_eq!(sql.len(), 5);
        assert_eq!(sql[1], "CREATE INDEX k on sbtest(k)");
        let row = "(0,' ','qqqqqqqqqqwwwwwwwwwweeeeeeeeeerrrrrrrrrrtttttttttt')";
        assert!(sql[2] == format!("INSERT INTO sbtest(k, c, pad) VALUES {}", vec![row; 10_000].join(",")));
        assert!(sql[3] == sql[2]);
        assert_eq!(sql[4], format!("INSERT INTO sbtest(k, c, pad) VALUES {row}"));
        let numbered = OltpOptions { table_size: 3, auto_inc: false, ..o.clone() };
        let sql: Vec<String> = prepare04(&numbered, &l).collect();
        assert_eq!(
            sql[2],
            "INSERT INTO sbtest(id, k, c, pad) VALUES (1,0,' ','qqqqqqqqqqwwwwwwwwwweeeeeeeeeerrrrrrrrrrtttttttttt'),\
             (2,0,' ','qqqqqqqqqqwwwwwwwwwweeeeeeeeeerrrrrrrrrrtttttttttt'),\
             (3,0,' ','qqqqqqqqqqwwwwwwwwwweeeeeeeeeerrrrrrrrrrtttttttttt')"
        );
        let empty = OltpOptions { table_size: 0, ..OltpOptions::default() };
        assert_eq!(prepare04(&empty, &l).count(), 2);
        let mut loading = String::new();
        let lines: Vec<String> =
            prepare04(&o, &l).chain(cleanup04(&l)).filter_map(|s| progress_line04(&s, &mut loading, 20_001)).collect();
        assert_eq!(
            lines,
            ["Creating table 'sbtest'...", "Creating 20001 records in table 'sbtest'...", "Dropping table 'sbtest'..."]
        );
    }

    #[test]
    fn engines_with_and_without_transactions() {
        let style = |engine: &str, trx: EngineTrx| {
            let o = OltpOptions { mysql_storage_engine: engine.into(), ..OltpOptions::default() };
            trx_style(&o, &LegacyOptions { engine_trx: trx, ..LegacyOptions::default() })
        };
        assert_eq!(style("innodb", EngineTrx::Auto), Ok(TrxStyle::BeginCommit));
        assert_eq!(style("MyISAM", EngineTrx::Auto), Ok(TrxStyle::LockTables));
        assert_eq!(style("heap", EngineTrx::Auto), Ok(TrxStyle::LockTables));
        assert_eq!(style("Memory", EngineTrx::Auto), Ok(TrxStyle::LockTables));
        assert_eq!(style("myisam", EngineTrx::Yes), Ok(TrxStyle::BeginCommit));
        assert_eq!(style("innodb", EngineTrx::No), Ok(TrxStyle::LockTables));
        assert_eq!(style("rocksdb", EngineTrx::Auto), Err(OptionsError::UnknownEngineTrx { engine: "rocksdb".into() }));
        assert_eq!(style("rocksdb", EngineTrx::Yes), Ok(TrxStyle::BeginCommit));
    }
}
