//! The structures `sysbench.sql` declares (`sql_value`, `sql_row`,
//! `sql_result`, `sql_connection`, `sql_statement`, `sql_bind`), laid out
//! as its `ffi.cdef` has them so that a script reads their public fields,
//! each followed by what wirebench keeps behind it. They point at each
//! other as in C (a result at its connection and statement, a statement at
//! its connection), so they stand together; what each does is in its own
//! file. A pointer a script passes back is checked by the mark its
//! structure carries before it is used.

use std::ffi::{c_char, c_int, c_ulong, c_void, CString};

use wirebench_protocol::command::ExecuteTemplate;
use wirebench_protocol::response::{PreparedStatement, ResultSet};
use wirebench_protocol::Capabilities;

use super::sql_driver::SqlDriver;
use crate::driver::{ConnId, KeptTextRows};

/// `sql_value`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct SqlValue {
    pub(super) len: u32,
    pub(super) ptr: *const c_char,
}

/// `sql_row`.
#[repr(C)]
pub struct SqlRow {
    pub(super) ptr: *mut c_void,
    pub(super) values: *mut SqlValue,
}

/// `sql_result`: a connection's one result, as in sysbench (`con->rs`),
/// and what backs its rows.
#[repr(C)]
pub struct SqlResult {
    pub(super) counter: c_int,
    pub(super) nrows: u32,
    pub(super) nfields: u32,
    pub(super) statement: *mut SqlStatement,
    pub(super) ptr: *mut c_void,
    pub(super) row: SqlRow,
    pub(super) rows: Rows,
    pub(super) magic: u64,
    /// The connection whose result it is, and which of its two.
    pub(super) owner: *mut SqlConnection,
    pub(super) slot: ResultSlot,
}

/// A connection's two results: the one a read leaves open, and the one
/// every other statement gives, which has no rows (sysbench's `db_query`
/// gives NULL there: a script reading `rs.nrows` of it would crash).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ResultSlot {
    Rows,
    NoRows,
}

/// A result's rows as the script fetches them: values as text.
#[derive(Default)]
pub(super) struct Rows {
    /// A query's rows, read in place from the connection's kept packets.
    pub(super) text: Option<KeptTextRows>,
    /// A packet of 16 MiB or more, joined from its fragments.
    pub(super) joined: Vec<u8>,
    /// An execution's rows, decoded when first fetched.
    pub(super) decoded: Option<ResultSet>,
    /// The next decoded row to fetch (from 0).
    pub(super) next: usize,
    /// A decoded row's values, as text, and where each is.
    pub(super) decoded_text: Vec<u8>,
    pub(super) spans: Vec<Option<(usize, usize)>>,
    /// The fetched row's values, for the script.
    pub(super) values: Vec<SqlValue>,
}

impl Rows {
    /// No rows any more; the buffers stay for the next result's.
    pub(super) fn forget(&mut self) {
        (self.text, self.decoded, self.next) = (None, None, 0);
    }
}

/// Where a connection is, as sysbench's `db_conn_state_t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SqlConnState {
    Ready,
    /// A result set is open (a read's): fetch its rows, or free it.
    ResultSet,
    Invalid,
}

/// `sql_connection`: sysbench's public fields first, then wirebench's.
#[repr(C)]
pub struct SqlConnection {
    pub(super) error: c_int,
    pub(super) sql_errno: c_int,
    pub(super) sql_state: *const c_char,
    pub(super) sql_errmsg: *const c_char,
    pub(super) driver: *mut SqlDriver,
    pub(super) inner: ConnInner,
}

pub(super) struct ConnInner {
    /// The loop's connection, while one is open.
    pub(super) id: Option<ConnId>,
    pub(super) capabilities: Capabilities,
    pub(super) max_packet: usize,
    pub(super) state: SqlConnState,
    /// What `sql_state` and `sql_errmsg` point to.
    pub(super) sql_state: CString,
    pub(super) sql_errmsg: CString,
    pub(super) rs: SqlResult,
    /// The result of a statement without rows.
    pub(super) none: SqlResult,
    /// An execution's answer packets, kept for its rows.
    pub(super) kept: Vec<u8>,
    pub(super) bulk: Option<Bulk>,
    /// The connection's address, for refusals.
    pub(super) magic: u64,
}

/// Marks the structures wirebench made, so that a pointer a script passes
/// is checked before it is used.
pub(super) const CONN_MAGIC: u64 = 0x5742_434f_4e4e_0001;
pub(super) const STMT_MAGIC: u64 = 0x5742_5354_4d54_0001;
pub(super) const RESULT_MAGIC: u64 = 0x5742_5245_5355_0001;

pub(super) struct Bulk {
    pub(super) sql: Vec<u8>,
    /// Length of the `INSERT ... VALUES` head.
    pub(super) head: usize,
    pub(super) rows: usize,
}

/// `sql_statement`.
#[repr(C)]
pub struct SqlStatement {
    pub(super) connection: *mut SqlConnection,
    pub(super) inner: StmtInner,
}

pub(super) struct StmtInner {
    pub(super) magic: u64,
    /// The statement on the server, until closed.
    pub(super) prepared: Option<PreparedStatement>,
    /// What `db_bind_param` bound: the script's buffers, read at each execution.
    pub(super) binds: Vec<SqlBind>,
    /// The COM_STMT_EXECUTE laid out for the values' types and sizes, each
    /// execution patching the values in while they keep those sizes.
    pub(super) template: Option<ExecuteTemplate>,
    pub(super) query: String,
}

/// `sql_bind`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct SqlBind {
    pub(super) kind: c_int,
    pub(super) buffer: *mut c_void,
    pub(super) data_len: *mut c_ulong,
    pub(super) max_len: c_ulong,
    pub(super) is_null: *mut c_char,
}

/// A script's pointer to a connection, if it is one wirebench made.
///
/// # Safety
/// `con` is null or was returned by `db_connection_create` and not freed.
pub(super) unsafe fn connection<'a>(con: *mut SqlConnection) -> Option<&'a mut SqlConnection> {
    // SAFETY: as the caller promises; the magic catches a stray pointer
    // to other memory of ours.
    let con = unsafe { con.as_mut() }?;
    (con.inner.magic == CONN_MAGIC).then_some(con)
}

/// # Safety
/// `stmt` is null or was returned by `db_prepare` and not closed.
pub(super) unsafe fn statement_at<'a>(stmt: *mut SqlStatement) -> Option<&'a mut SqlStatement> {
    // SAFETY: as the caller promises.
    let stmt = unsafe { stmt.as_mut() }?;
    (stmt.inner.magic == STMT_MAGIC).then_some(stmt)
}
