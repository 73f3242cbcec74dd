//! The per-test options of sysbench 1.0.20's bundled scripts, with their
//! defaults (`sysbench.cmdline.options` in `oltp_common.lua`,
//! `select_random_points.lua` and `select_random_ranges.lua`).

/// Every option the bundled test scripts define. A plain struct: the
/// command-line parser fills it, [`Default`] gives sysbench's defaults.
///
/// sysbench keeps all of these as Lua numbers; counts and sizes are `u32`
/// here because they reach `sysbench.rand.*` as `uint32_t` anyway.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OltpOptions {
    /// `--tables`: number of tables (`sbtest1`..`sbtestN`).
    pub tables: u32,
    /// `--table_size`: rows per table.
    pub table_size: u32,
    /// `--range_size`: rows in each range SELECT (`id BETWEEN x AND x+range_size-1`).
    pub range_size: u32,
    /// `--point_selects`: point SELECTs per transaction.
    pub point_selects: u32,
    /// `--simple_ranges`: simple range SELECTs per transaction.
    pub simple_ranges: u32,
    /// `--sum_ranges`: SELECT SUM() queries per transaction.
    pub sum_ranges: u32,
    /// `--order_ranges`: SELECT ... ORDER BY queries per transaction.
    pub order_ranges: u32,
    /// `--distinct_ranges`: SELECT DISTINCT queries per transaction.
    pub distinct_ranges: u32,
    /// `--index_updates`: UPDATEs of the indexed column `k` per transaction.
    pub index_updates: u32,
    /// `--non_index_updates`: UPDATEs of `c` per transaction.
    pub non_index_updates: u32,
    /// `--delete_inserts`: DELETE/INSERT pairs per transaction.
    pub delete_inserts: u32,
    /// `--range_selects`: off removes every range SELECT.
    pub range_selects: bool,
    /// `--auto_inc`: `id` is AUTO_INCREMENT; off makes the client number rows.
    pub auto_inc: bool,
    /// `--skip_trx`: no BEGIN/COMMIT, every statement autocommits.
    pub skip_trx: bool,
    /// `--secondary`: a secondary index `xid` on `id` instead of the primary key.
    pub secondary: bool,
    /// `--create_secondary`: the index `k_N` on `k`, created after the load.
    pub create_secondary: bool,
    /// `--mysql_storage_engine`.
    pub mysql_storage_engine: String,
    /// Appended to CREATE TABLE. sysbench 1.0.20 reads it from a Lua global
    /// `mysql_table_options` that no command-line option sets, so it is
    /// always empty there; `--create_table_options` (sysbench master),
    /// `--mysql-create-options` (0.4) and `--mysql-table-options` (0.5) set it.
    pub mysql_table_options: String,
    /// `--random_points` (select_random_points): values in the IN() list.
    pub random_points: u32,
    /// `--number_of_ranges` (select_random_ranges): BETWEEN ranges per SELECT.
    pub number_of_ranges: u32,
    /// `--delta` (select_random_ranges): a range is `k BETWEEN x AND x+delta`.
    pub delta: i64,
    /// `--threads`, which bulk_insert's `prepare` and `cleanup` read: they
    /// handle one table per thread. The other tests take the thread count
    /// from [`super::ScriptContext`].
    pub threads: u32,
    /// `--prepare-method`: how `prepare` sends the rows.
    pub prepare_method: PrepareMethod,
}

impl Default for OltpOptions {
    fn default() -> Self {
        OltpOptions {
            tables: 1,
            table_size: 10_000,
            range_size: 100,
            point_selects: 10,
            simple_ranges: 1,
            sum_ranges: 1,
            order_ranges: 1,
            distinct_ranges: 1,
            index_updates: 1,
            non_index_updates: 1,
            delete_inserts: 1,
            range_selects: true,
            auto_inc: true,
            skip_trx: false,
            secondary: false,
            create_secondary: true,
            mysql_storage_engine: "innodb".to_string(),
            mysql_table_options: String::new(),
            random_points: 10,
            number_of_ranges: 10,
            delta: 5,
            threads: 1,
            prepare_method: PrepareMethod::Auto,
        }
    }
}

/// How `prepare` sends the rows (`--prepare-method`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PrepareMethod {
    /// LOAD DATA LOCAL INFILE where the server allows it, else INSERTs.
    #[default]
    Auto,
    /// LOAD DATA LOCAL INFILE, or an error if the server refuses it.
    LoadData,
    /// MariaDB's COM_STMT_BULK_EXECUTE of a prepared INSERT, or an error
    /// if the server has none.
    BulkExecute,
    /// sysbench's multi-row INSERTs, byte for byte.
    Insert,
}

/// Why a test cannot run with the given options.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionsError {
    #[error("{test}: --tables must be at least 1")]
    NoTables { test: &'static str },
    #[error("{test}: --{option} must be at least 1")]
    ZeroCount { test: &'static str, option: &'static str },
    /// sysbench would run events that send nothing; wirebench's engine
    /// measures commands, so an event needs at least one.
    #[error("{test}: with these options an event sends no query (every query count is 0)")]
    EmptyEvent { test: &'static str },
    #[error("{test}: --threads must be at least 1")]
    NoThreads { test: &'static str },
    /// 0.4 decided BEGIN/COMMIT or LOCK TABLES from the engine's name.
    #[error(
        "--mysql-table-engine={engine}: sysbench 0.4 cannot tell whether this engine has transactions; give \
         --mysql-engine-trx=yes (BEGIN/COMMIT) or --mysql-engine-trx=no (LOCK TABLES)"
    )]
    UnknownEngineTrx { engine: String },
    #[error(
        "--oltp-secondary needs --oltp-auto-inc=off: sysbench 0.4 refuses an AUTO_INCREMENT id without its \
         primary key (\"Cannot set both --oltp-auto-inc and --oltp-secondary\")"
    )]
    AutoIncWithSecondary,
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn defaults_are_the_scripts() {
        let Some(common) = crate::workload::testkit::lua_script("oltp_common.lua") else { return };
        let o = OltpOptions::default();
        for (name, value) in [
            ("table_size", o.table_size.to_string()),
            ("range_size", o.range_size.to_string()),
            ("tables", o.tables.to_string()),
            ("point_selects", o.point_selects.to_string()),
            ("simple_ranges", o.simple_ranges.to_string()),
            ("sum_ranges", o.sum_ranges.to_string()),
            ("order_ranges", o.order_ranges.to_string()),
            ("distinct_ranges", o.distinct_ranges.to_string()),
            ("index_updates", o.index_updates.to_string()),
            ("non_index_updates", o.non_index_updates.to_string()),
            ("delete_inserts", o.delete_inserts.to_string()),
            ("range_selects", o.range_selects.to_string()),
            ("auto_inc", o.auto_inc.to_string()),
            ("skip_trx", o.skip_trx.to_string()),
            ("secondary", o.secondary.to_string()),
            ("create_secondary", o.create_secondary.to_string()),
            ("mysql_storage_engine", format!("\"{}\"", o.mysql_storage_engine)),
        ] {
            // `name =` then, after the description, `, default}`.
            let at = common.find(&format!("   {name} =")).unwrap_or_else(|| panic!("{name} not in oltp_common.lua"));
            let entry = &common[at..at + common[at..].find('}').unwrap()];
            assert!(entry.ends_with(&format!(", {value}")), "{name}: {entry}");
        }
        let Some(points) = crate::workload::testkit::lua_script("select_random_points.lua") else { return };
        assert!(points.contains(&format!("IN() clause in generated SELECTs\", {}}}", o.random_points)));
        let Some(ranges) = crate::workload::testkit::lua_script("select_random_ranges.lua") else { return };
        assert!(ranges.contains(&format!("BETWEEN ranges per SELECT\", {}}}", o.number_of_ranges)));
        assert!(ranges.contains(&format!("\"Size of BETWEEN ranges\", {}}}", o.delta)));
    }
}
