//! `oltp_common.lua`'s tables: the CREATE TABLE and its index, the rows of
//! `prepare` as multi-row INSERTs cut where sysbench's bulk-insert buffer
//! cuts them (drawn lazily, a thread's tables as `cmd_prepare` deals them),
//! `prewarm`'s and `cleanup`'s statements, and the lines `prepare` prints.

use std::iter::StepBy;
use std::ops::RangeInclusive;

use super::common::{BULK_PACKET_SIZE, C_TEMPLATE, PAD_TEMPLATE};
use super::oltp_options::OltpOptions;
use super::ScriptContext;
use crate::rand::Rng;

/// The tables `prepare` and `prewarm` thread `context.thread` handles:
/// `tid % threads + 1`, then every `threads`-th, as `cmd_prepare` loops.
pub(crate) fn tables_of(context: ScriptContext, tables: u32) -> StepBy<RangeInclusive<u32>> {
    let threads = context.threads.max(1);
    (context.thread % threads + 1..=tables).step_by(threads as usize)
}

/// `create_table()`'s CREATE TABLE for the MySQL driver, byte for byte
/// (including the space before the empty table options).
pub(crate) fn create_table_sql(options: &OltpOptions, table: u32) -> String {
    let id_def = if options.auto_inc { "INTEGER NOT NULL AUTO_INCREMENT" } else { "INTEGER NOT NULL" };
    let id_index_def = if options.secondary { "KEY xid" } else { "PRIMARY KEY" };
    format!(
        "CREATE TABLE sbtest{table}(\n  id {id_def},\n  k INTEGER DEFAULT '0' NOT NULL,\n  \
         c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  {id_index_def} (id)\n) \
         /*! ENGINE = {engine} */ {extra}",
        engine = options.mysql_storage_engine,
        extra = options.mysql_table_options,
    )
}

/// `create_table()`'s index on `k`, created after the rows, if
/// `--create_secondary`.
pub(crate) fn create_index_sql(options: &OltpOptions, table: u32) -> Option<String> {
    options.create_secondary.then(|| format!("CREATE INDEX k_{table} ON sbtest{table}(k)"))
}

/// `cmd_prewarm()` for one thread.
pub(crate) fn prewarm_sql(options: &OltpOptions, context: ScriptContext) -> Vec<String> {
    let mut sql =
        vec!["SET tmp_table_size=2*1024*1024*1024".to_string(), "SET max_heap_table_size=2*1024*1024*1024".to_string()];
    for table in tables_of(context, options.tables) {
        let size = options.table_size;
        sql.push(format!("ANALYZE TABLE sbtest{table}"));
        sql.push(format!("SELECT AVG(id) FROM (SELECT * FROM sbtest{table} FORCE KEY (PRIMARY) LIMIT {size}) t"));
        sql.push(format!("SELECT COUNT(*) FROM (SELECT * FROM sbtest{table} WHERE k LIKE '%0%' LIMIT {size}) t"));
    }
    sql
}

/// `cleanup()`: tables 1..=`tables`.
pub(crate) fn cleanup_sql(tables: u32) -> Vec<String> {
    (1..=tables).map(|table| format!("DROP TABLE IF EXISTS sbtest{table}")).collect()
}

/// How a script writes its tables, for [`TableLoad`]: the CREATE TABLE,
/// one row of the data load, the index on `k`.
pub(crate) trait TableSql: Send {
    fn create_table(&self, table: u32) -> String;

    /// Appends one row to `row`; `id` is given when the script numbers the
    /// rows itself (no auto_inc).
    fn push_row(&self, row: &mut String, id: Option<u32>, k: u32, c: &[u8], pad: &[u8]);

    /// The index on `k` created after the rows, if the script creates one.
    fn create_index(&self, table: u32) -> Option<String>;
}

/// `oltp_common.lua`'s `create_table()`.
struct OltpCommonSql {
    options: OltpOptions,
}

impl TableSql for OltpCommonSql {
    fn create_table(&self, table: u32) -> String {
        create_table_sql(&self.options, table)
    }

    /// `(%d, '%s', '%s')`, or `(%d, %d, '%s', '%s')` with the id.
    fn push_row(&self, row: &mut String, id: Option<u32>, k: u32, c: &[u8], pad: &[u8]) {
        row.push('(');
        if let Some(id) = id {
            row.push_str(&id.to_string());
            row.push_str(", ");
        }
        row.push_str(&k.to_string());
        row.push_str(", '");
        row.extend(c.iter().map(|&b| char::from(b)));
        row.push_str("', '");
        row.extend(pad.iter().map(|&b| char::from(b)));
        row.push_str("')");
    }

    fn create_index(&self, table: u32) -> Option<String> {
        create_index_sql(&self.options, table)
    }
}

/// The lines `oltp_common.lua` prints as `prepare` and `cleanup` send
/// `sql`; `loading` is the table whose rows are being inserted, announced
/// once, `table_size` the rows it announces.
pub(crate) fn oltp_common_progress_line(sql: &str, loading: &mut String, table_size: u32) -> Option<String> {
    let table_after = |prefix: &str| sql.strip_prefix(prefix).and_then(|rest| rest.split(['(', ' ', '\n']).next());
    if let Some(table) = table_after("CREATE TABLE ") {
        return Some(format!("Creating table '{table}'..."));
    }
    let loaded = sql.strip_prefix("LOAD DATA LOCAL INFILE ").and_then(|rest| rest.split(" INTO TABLE ").nth(1));
    if let Some(table) = table_after("INSERT INTO ").or_else(|| loaded?.split(' ').next()) {
        if loading != table {
            table.clone_into(loading);
            return Some(format!("Inserting {table_size} records into '{table}'"));
        }
        return None;
    }
    if sql.starts_with("CREATE INDEX") {
        let table = sql.split(" ON ").nth(1)?.split('(').next()?;
        return Some(format!("Creating a secondary index on '{table}'..."));
    }
    table_after("DROP TABLE IF EXISTS ").map(|table| format!("Dropping table '{table}'..."))
}

/// Draws one row's values as the loop in `create_table()` does: c, pad,
/// then k, which it returns.
pub(crate) fn draw_row(
    rng: &mut Rng,
    table_size: u32,
    c: &mut [u8; C_TEMPLATE.len()],
    pad: &mut [u8; PAD_TEMPLATE.len()],
) -> u32 {
    rng.rand_str(C_TEMPLATE, c);
    rng.rand_str(PAD_TEMPLATE, pad);
    rng.default(1, table_size)
}

/// `cmd_prepare()` for one thread, produced lazily: for each of its tables
/// the CREATE TABLE, the rows as multi-row INSERTs cut where sysbench's
/// bulk-insert buffer cuts them, then the index on `k`.
pub(crate) struct TableLoad {
    sql: Box<dyn TableSql>,
    auto_inc: bool,
    /// Rows per table (0 for oltp_insert without auto_inc).
    table_size: u32,
    tables: StepBy<RangeInclusive<u32>>,
    rng: Rng,
    stage: LoadStage,
    /// The next row's text, generated (and its random values drawn) before
    /// sysbench finds that it does not fit the current statement.
    row: String,
    row_pending: bool,
    c: [u8; C_TEMPLATE.len()],
    pad: [u8; PAD_TEMPLATE.len()],
}

#[derive(Debug, Clone, Copy)]
enum LoadStage {
    NextTable,
    Rows { table: u32, next_row: u32 },
    Index { table: u32 },
}

impl TableLoad {
    pub(crate) fn new(options: &OltpOptions, table_size: u32, context: ScriptContext, rng: Rng) -> Self {
        TableLoad::with_sql(Box::new(OltpCommonSql { options: options.clone() }), options, table_size, context, rng)
    }

    /// The load of another script's tables (0.5's `common.lua`).
    pub(crate) fn with_sql(
        sql: Box<dyn TableSql>,
        options: &OltpOptions,
        table_size: u32,
        context: ScriptContext,
        rng: Rng,
    ) -> Self {
        TableLoad {
            sql,
            auto_inc: options.auto_inc,
            table_size,
            tables: tables_of(context, options.tables),
            rng,
            stage: LoadStage::NextTable,
            row: String::with_capacity(256),
            row_pending: false,
            c: *C_TEMPLATE,
            pad: *PAD_TEMPLATE,
        }
    }

    /// Every row's id in the INSERTs, also with `auto_inc` (the ids the
    /// server gives sysbench's, 1, 2, 3...), so that the statements may
    /// reach the server in any order. Only the SQL text changes: the rows'
    /// values are drawn as without.
    pub(crate) fn with_row_ids(mut self) -> Self {
        self.auto_inc = false;
        self
    }

    /// Draws row `i` as the loop in `create_table()` does: c, pad, then k.
    fn generate_row(&mut self, i: u32) {
        let k = draw_row(&mut self.rng, self.table_size, &mut self.c, &mut self.pad);
        self.row.clear();
        let id = (!self.auto_inc).then_some(i);
        self.sql.push_row(&mut self.row, id, k, &self.c, &self.pad);
    }

    /// The next INSERT of `table`, or `None` when its rows are all sent.
    /// A row joins the statement while `db_bulk_insert_next` would keep it
    /// in the buffer: statement, comma, row and NUL within
    /// [`BULK_PACKET_SIZE`].
    fn insert_statement(&mut self, table: u32, next_row: &mut u32) -> Option<String> {
        let mut sql = String::with_capacity(BULK_PACKET_SIZE);
        let columns = if self.auto_inc { "(k, c, pad)" } else { "(id, k, c, pad)" };
        sql.push_str("INSERT INTO sbtest");
        sql.push_str(&table.to_string());
        sql.push_str(columns);
        sql.push_str(" VALUES");
        let mut rows = 0u32;
        loop {
            if !self.row_pending {
                if *next_row > self.table_size || *next_row == 0 {
                    break;
                }
                self.generate_row(*next_row);
                // Wraps to 0 after u32::MAX, which ends the table.
                *next_row = next_row.wrapping_add(1);
                self.row_pending = true;
            }
            let comma = usize::from(rows > 0);
            if rows > 0 && sql.len() + comma + self.row.len() + 1 > BULK_PACKET_SIZE {
                break;
            }
            if rows > 0 {
                sql.push(',');
            }
            sql.push_str(&self.row);
            self.row_pending = false;
            rows += 1;
        }
        (rows > 0).then_some(sql)
    }
}

impl Iterator for TableLoad {
    type Item = String;

    fn next(&mut self) -> Option<String> {
        loop {
            match self.stage {
                LoadStage::NextTable => {
                    let table = self.tables.next()?;
                    self.stage = LoadStage::Rows { table, next_row: 1 };
                    return Some(self.sql.create_table(table));
                }
                LoadStage::Rows { table, mut next_row } => {
                    let statement = self.insert_statement(table, &mut next_row);
                    self.stage = match statement {
                        Some(_) => LoadStage::Rows { table, next_row },
                        None => LoadStage::Index { table },
                    };
                    if statement.is_some() {
                        return statement;
                    }
                }
                LoadStage::Index { table } => {
                    self.stage = LoadStage::NextTable;
                    if let Some(index) = self.sql.create_index(table) {
                        return Some(index);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::oltp_read_write;
    use crate::workload::testkit::{self, context, long_strings, lua_format, lua_script, rng, split_table};
    use crate::workload::Workload;

    #[test]
    fn create_table_is_oltp_common_lua() {
        let Some(lua) = lua_script("oltp_common.lua") else { return };
        let strings = long_strings(&lua);
        assert_eq!(strings.len(), 1, "oltp_common.lua has one long string, the CREATE TABLE");
        for (auto_inc, secondary, engine, extra) in
            [(true, false, "innodb", ""), (false, true, "MyISAM", ""), (true, true, "innodb", "ROW_FORMAT=COMPRESSED")]
        {
            let options = OltpOptions {
                auto_inc,
                secondary,
                mysql_storage_engine: engine.into(),
                mysql_table_options: extra.into(),
                ..OltpOptions::default()
            };
            let id_def = if auto_inc { "INTEGER NOT NULL AUTO_INCREMENT" } else { "INTEGER NOT NULL" };
            let index = if secondary { "KEY xid" } else { "PRIMARY KEY" };
            let engine_def = format!("/*! ENGINE = {engine} */");
            let expected = lua_format(&strings[0], &["7", id_def, index, &engine_def, extra]);
            assert_eq!(create_table_sql(&options, 7), expected);
        }
        assert!(lua.contains(r#""CREATE INDEX k_%d ON sbtest%d(k)""#));
        assert!(lua.contains(r#""DROP TABLE IF EXISTS sbtest" .. i"#));
        assert!(lua.contains(r#""INSERT INTO sbtest" .. table_num .. "(k, c, pad) VALUES""#));
        assert!(lua.contains(r#""INSERT INTO sbtest" .. table_num .. "(id, k, c, pad) VALUES""#));
        assert!(lua.contains(r#""(%d, '%s', '%s')""#));
        assert!(lua.contains(r#""(%d, %d, '%s', '%s')""#));
    }

    #[test]
    fn prewarm_is_oltp_common_lua() {
        let Some(lua) = lua_script("oltp_common.lua") else { return };
        // The format strings, as the pieces the script concatenates.
        let avg = ["SELECT AVG(id) FROM ", "(SELECT * FROM %s FORCE KEY (PRIMARY) ", "LIMIT %u) t"];
        let count = ["SELECT COUNT(*) FROM ", "(SELECT * FROM %s WHERE k LIKE '%%0%%' LIMIT %u) t"];
        for piece in avg.iter().chain(&count) {
            assert!(lua.contains(&format!("\"{piece}\"")), "{piece} not in oltp_common.lua");
        }
        for set in ["SET tmp_table_size=2*1024*1024*1024", "SET max_heap_table_size=2*1024*1024*1024"] {
            assert!(lua.contains(&format!("con:query(\"{set}\")")));
        }
        assert!(lua.contains(r#"con:query("ANALYZE TABLE sbtest" .. i)"#));
        let options = OltpOptions { tables: 5, table_size: 1234, ..OltpOptions::default() };
        let sql = prewarm_sql(&options, context(1, 2));
        let mut expected = vec![
            "SET tmp_table_size=2*1024*1024*1024".to_string(),
            "SET max_heap_table_size=2*1024*1024*1024".to_string(),
        ];
        for t in ["2", "4"] {
            expected.push(format!("ANALYZE TABLE sbtest{t}"));
            expected.push(lua_format(&avg.concat(), &[&format!("sbtest{t}"), "1234"]));
            expected.push(lua_format(&count.concat(), &[&format!("sbtest{t}"), "1234"]));
        }
        assert_eq!(sql, expected);
    }

    #[test]
    fn prepare_spreads_tables_over_threads() {
        let options = OltpOptions { tables: 7, table_size: 3, ..OltpOptions::default() };
        let w = oltp_read_write::workload(&options).unwrap();
        let created = |thread| -> Vec<u32> {
            w.prepare(context(thread, 3), rng(1))
                .filter(|sql| sql.starts_with("CREATE TABLE"))
                .map(|sql| split_table(&sql).1.unwrap())
                .collect()
        };
        assert_eq!(created(0), [1, 4, 7]);
        assert_eq!(created(1), [2, 5]);
        assert_eq!(created(2), [3, 6]);
        let sql: Vec<String> = w.prepare(context(1, 3), rng(1)).collect();
        assert_eq!(sql.len(), 6);
        assert!(sql[1].starts_with("INSERT INTO sbtest2(k, c, pad) VALUES("));
        assert_eq!(sql[2], "CREATE INDEX k_2 ON sbtest2(k)");
        assert_eq!(w.cleanup(), (1..=7).map(|t| format!("DROP TABLE IF EXISTS sbtest{t}")).collect::<Vec<_>>());
    }

    /// The rows of a load INSERT: `(id, k, 'c', 'pad')` split apart.
    fn rows(sql: &str) -> Vec<&str> {
        let values = &sql[sql.find(" VALUES(").unwrap() + " VALUES".len()..];
        values.split("),(").collect()
    }

    #[test]
    fn load_statements_are_cut_where_sysbench_cuts_them() {
        let options = OltpOptions {
            tables: 2,
            table_size: 7000,
            auto_inc: false,
            create_secondary: false,
            ..OltpOptions::default()
        };
        let w = oltp_read_write::workload(&options).unwrap();
        let sql: Vec<String> = w.prepare(context(0, 1), rng(5)).collect();
        let shape: Vec<&str> = sql.iter().map(|s| if s.starts_with("CREATE") { "C" } else { "I" }).collect();
        assert_eq!(shape, ["C", "I", "I", "I", "C", "I", "I", "I"]);
        for table in [&sql[1..4], &sql[5..8]] {
            let mut next_id = 1;
            for (i, statement) in table.iter().enumerate() {
                assert!(statement.len() < BULK_PACKET_SIZE, "{} bytes", statement.len());
                for row in rows(statement) {
                    let row = row.trim_start_matches('(').trim_end_matches(')');
                    let fields: Vec<&str> = row.split(", ").collect();
                    assert_eq!(fields[0], next_id.to_string());
                    assert!((1..=7000).contains(&fields[1].parse::<u32>().unwrap()));
                    assert!(testkit::fits_template(fields[2].trim_matches('\'').as_bytes(), C_TEMPLATE));
                    assert!(testkit::fits_template(fields[3].trim_matches('\'').as_bytes(), PAD_TEMPLATE));
                    next_id += 1;
                }
                if let Some(next) = table.get(i + 1) {
                    // The next statement's first row did not fit: with its
                    // comma and the buffer's NUL it would pass 512 KiB.
                    let first_row = rows(next)[0].len() + usize::from(rows(next).len() > 1);
                    assert!(statement.len() + 1 + first_row + 1 > BULK_PACKET_SIZE);
                }
            }
            assert_eq!(next_id, 7001);
        }
    }

    #[test]
    fn load_is_lazy() {
        let options = OltpOptions { table_size: 100_000_000, ..OltpOptions::default() };
        let w = oltp_read_write::workload(&options).unwrap();
        let start = std::time::Instant::now();
        let first: Vec<String> = w.prepare(context(0, 1), rng(1)).take(3).collect();
        assert!(first[0].starts_with("CREATE TABLE sbtest1("));
        assert!(first[2].starts_with("INSERT INTO sbtest1(k, c, pad) VALUES("));
        assert!(start.elapsed() < std::time::Duration::from_secs(20), "took {:?}", start.elapsed());
    }
}
