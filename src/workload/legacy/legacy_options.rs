//! The options only the 0.4/0.5 tests have. The ones 1.0 kept under
//! another name (`--oltp-table-size`, `--oltp-point-selects`, ...) arrive
//! in [`OltpOptions`](crate::workload::OltpOptions) like the 1.0 tests'.

use super::Rand04;

/// What a 0.4/0.5 test reads beyond [`OltpOptions`](crate::workload::OltpOptions).
/// [`Default`] gives 0.4/0.5's defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegacyOptions {
    /// `--oltp-read-only` (0.4's complex mode, 0.5's oltp.lua): no writes.
    pub read_only: bool,
    /// `--oltp-write-only`: no reads.
    pub write_only: bool,
    /// `--myisam-max-rows`: 0.5 writes `MAX_ROWS = N` into every CREATE
    /// TABLE; 0.4 only into a MyISAM one, and only when N > 0.
    pub myisam_max_rows: u64,
    /// 0.4's `--oltp-test-mode` (and `--oltp-nontrx-mode`).
    pub oltp04_mode: Oltp04Mode,
    /// 0.4's `--oltp-table-name`: its one table.
    pub table_name: String,
    /// 0.4's `--mysql-engine-trx`: BEGIN/COMMIT or LOCK TABLES.
    pub engine_trx: EngineTrx,
    /// 0.4's `--oltp-point-select-all-cols`: point selects read every
    /// column instead of `c`.
    pub point_select_all_cols: bool,
    /// 0.4's distribution of ids and the seed of its generator.
    pub rand04: Rand04,
}

impl Default for LegacyOptions {
    fn default() -> Self {
        LegacyOptions {
            read_only: false,
            write_only: false,
            myisam_max_rows: 1_000_000,
            oltp04_mode: Oltp04Mode::Complex,
            table_name: "sbtest".to_owned(),
            engine_trx: EngineTrx::Auto,
            point_select_all_cols: false,
            rand04: Rand04::default(),
        }
    }
}

/// 0.4's `--oltp-test-mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Oltp04Mode {
    /// One point select per event, no transaction.
    Simple,
    /// A transaction of point selects, ranges, updates and a delete/insert.
    Complex,
    /// One statement per event, no transaction.
    Nontrx(NontrxMode),
}

/// 0.4's `--oltp-nontrx-mode`: the one statement of a nontrx event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NontrxMode {
    /// `SELECT pad from sbtest where id=?`.
    Select,
    /// `UPDATE sbtest set k=k+1 where id=?`.
    UpdateKey,
    /// `UPDATE sbtest set c=? where id=?`.
    UpdateNokey,
    /// `INSERT INTO sbtest values(?,?,?,?)`, into a table emptied first.
    Insert,
    /// `DELETE from sbtest where id=?`, each id once until all are used.
    Delete,
}

/// 0.4's `--mysql-engine-trx`: whether the engine has transactions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineTrx {
    Yes,
    No,
    /// From the engine's name, as 0.4's `parse_table_engine` decides.
    Auto,
}
