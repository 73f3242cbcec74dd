//! `sysbench.sql`'s C side: the functions sysbench 1.0.20's binary exports
//! to its Lua scripts (`db_create`, `db_connection_create`, `db_query`,
//! `db_prepare`, `db_execute`, `db_fetch_row`, ...) under the same names
//! and C signatures, over the structures its `sysbench.sql` module
//! declares (`sql_connection`, `sql_result`, `sql_bind`, ...). The
//! prelude's `sysbench.sql` calls them through LuaJIT's FFI, as sysbench's
//! own module does, so a script's SQL call is a C call that LuaJIT
//! compiles into the script's trace; a script that calls `ffi.C.db_query`
//! itself gets the same.
//!
//! A call runs on the state's task: the command goes to the loop, which
//! owns the connection, and the task waits for the answer
//! ([`driver::Caller`](crate::driver::Caller)). What the answer means to
//! the script, and what it counts, is sysbench's (`db_driver.c`,
//! `drv_mysql.c`): a query with rows is a read and leaves a result set
//! until the next call, one with affected rows a write, anything else
//! other; an error `--mysql-ignore-errors` lists is ignorable (a lost
//! connection is opened again first and counts as a reconnect), any other
//! is fatal and logged.
//!
//! Every function here is called from C: none may unwind (a panic is
//! caught and the call fails as a driver error would), and each checks the
//! pointers it is given against what it made.

use std::ffi::{c_char, c_int, c_ulong, c_void, CStr, CString};

use smallvec::SmallVec;
use wirebench_protocol::command::{self, ExecuteTemplate, Param, ParamSlot};
use wirebench_protocol::response::{Outcome, PreparedStatement, QueryResult, ResultSet};
use wirebench_protocol::Capabilities;

use super::context;
use super::ffi::guarded;
use crate::driver::{decode_walked, with_caller, CallAnswer, CallError, ConnId, CounterKind, Expect, KeptTextRows};

/// sysbench's `BULK_PACKET_SIZE`: a bulk INSERT is sent before it grows past this.
const BULK_PACKET_SIZE: usize = 512 * 1024;

/// `sql_error_t`.
const DB_ERROR_NONE: c_int = 0;
const DB_ERROR_IGNORABLE: c_int = 1;
const DB_ERROR_FATAL: c_int = 2;

/// `sql_bind_type_t`, as sysbench numbers it.
const SQL_TYPE_TINYINT: c_int = 1;
const SQL_TYPE_SMALLINT: c_int = 2;
const SQL_TYPE_INT: c_int = 3;
const SQL_TYPE_BIGINT: c_int = 4;
const SQL_TYPE_FLOAT: c_int = 5;
const SQL_TYPE_DOUBLE: c_int = 6;
const SQL_TYPE_CHAR: c_int = 11;
const SQL_TYPE_VARCHAR: c_int = 12;

/// Parameters bound without a heap allocation.
const INLINE_PARAMS: usize = 8;

/// `sql_driver`: the one driver wirebench has.
#[repr(C)]
pub struct SqlDriver {
    sname: *const c_char,
    lname: *const c_char,
}

/// The driver `db_create` hands out: static, never freed.
struct StaticDriver(SqlDriver);

// SAFETY: the pointers are to static C strings, never written.
unsafe impl Sync for StaticDriver {}

static MYSQL_DRIVER: StaticDriver =
    StaticDriver(SqlDriver { sname: c"mysql".as_ptr(), lname: c"MySQL driver".as_ptr() });

/// `sql_value`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct SqlValue {
    len: u32,
    ptr: *const c_char,
}

/// `sql_row`.
#[repr(C)]
pub struct SqlRow {
    ptr: *mut c_void,
    values: *mut SqlValue,
}

/// `sql_result`: a connection's one result, as in sysbench (`con->rs`),
/// and what backs its rows.
#[repr(C)]
pub struct SqlResult {
    counter: c_int,
    nrows: u32,
    nfields: u32,
    statement: *mut SqlStatement,
    ptr: *mut c_void,
    row: SqlRow,
    rows: Rows,
    magic: u64,
    /// The connection whose result it is, and which of its two.
    owner: *mut SqlConnection,
    slot: ResultSlot,
}

/// A connection's two results: the one a read leaves open, and the one
/// every other statement gives, which has no rows (sysbench's `db_query`
/// gives NULL there: a script reading `rs.nrows` of it would crash).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ResultSlot {
    Rows,
    NoRows,
}

/// A result's rows as the script fetches them: values as text.
#[derive(Default)]
struct Rows {
    /// A query's rows, read in place from the connection's kept packets.
    text: Option<KeptTextRows>,
    /// A packet of 16 MiB or more, joined from its fragments.
    joined: Vec<u8>,
    /// An execution's rows, decoded when first fetched.
    decoded: Option<ResultSet>,
    /// The next decoded row to fetch (from 0).
    next: usize,
    /// A decoded row's values, as text, and where each is.
    decoded_text: Vec<u8>,
    spans: Vec<Option<(usize, usize)>>,
    /// The fetched row's values, for the script.
    values: Vec<SqlValue>,
}

impl Rows {
    /// No rows any more; the buffers stay for the next result's.
    fn forget(&mut self) {
        (self.text, self.decoded, self.next) = (None, None, 0);
    }
}

/// Where a connection is, as sysbench's `db_conn_state_t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SqlConnState {
    Ready,
    /// A result set is open (a read's): fetch its rows, or free it.
    ResultSet,
    Invalid,
}

/// `sql_connection`: sysbench's public fields first, then wirebench's.
#[repr(C)]
pub struct SqlConnection {
    error: c_int,
    sql_errno: c_int,
    sql_state: *const c_char,
    sql_errmsg: *const c_char,
    driver: *mut SqlDriver,
    inner: ConnInner,
}

struct ConnInner {
    /// The loop's connection, while one is open.
    id: Option<ConnId>,
    capabilities: Capabilities,
    max_packet: usize,
    state: SqlConnState,
    /// What `sql_state` and `sql_errmsg` point to.
    sql_state: CString,
    sql_errmsg: CString,
    rs: SqlResult,
    /// The result of a statement without rows.
    none: SqlResult,
    /// An execution's answer packets, kept for its rows.
    kept: Vec<u8>,
    bulk: Option<Bulk>,
    /// The connection's address, for refusals.
    magic: u64,
}

/// Marks the structures wirebench made, so that a pointer a script passes
/// is checked before it is used.
const CONN_MAGIC: u64 = 0x5742_434f_4e4e_0001;
const STMT_MAGIC: u64 = 0x5742_5354_4d54_0001;
const RESULT_MAGIC: u64 = 0x5742_5245_5355_0001;

struct Bulk {
    sql: Vec<u8>,
    /// Length of the `INSERT ... VALUES` head.
    head: usize,
    rows: usize,
}

/// `sql_statement`.
#[repr(C)]
pub struct SqlStatement {
    connection: *mut SqlConnection,
    inner: StmtInner,
}

struct StmtInner {
    magic: u64,
    /// The statement on the server, until closed.
    prepared: Option<PreparedStatement>,
    /// What `db_bind_param` bound: the script's buffers, read at each execution.
    binds: Vec<SqlBind>,
    /// The COM_STMT_EXECUTE laid out for the values' types and sizes, each
    /// execution patching the values in while they keep those sizes.
    template: Option<ExecuteTemplate>,
    query: String,
}

/// `sql_bind`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct SqlBind {
    kind: c_int,
    buffer: *mut c_void,
    data_len: *mut c_ulong,
    max_len: c_ulong,
    is_null: *mut c_char,
}

/// sysbench's `log_text(LOG_ALERT, ...)`.
fn alert(message: &str) {
    eprintln!("ALERT: {message}");
}

/// sysbench's `log_text(LOG_FATAL, ...)`, with the server's text made safe.
fn fatal(message: &str) {
    eprintln!("FATAL: {message}");
}

/// A script's pointer to a connection, if it is one wirebench made.
///
/// # Safety
/// `con` is null or was returned by `db_connection_create` and not freed.
unsafe fn connection<'a>(con: *mut SqlConnection) -> Option<&'a mut SqlConnection> {
    // SAFETY: as the caller promises; the magic catches a stray pointer
    // to other memory of ours.
    let con = unsafe { con.as_mut() }?;
    (con.inner.magic == CONN_MAGIC).then_some(con)
}

/// # Safety
/// `stmt` is null or was returned by `db_prepare` and not closed.
unsafe fn statement_at<'a>(stmt: *mut SqlStatement) -> Option<&'a mut SqlStatement> {
    // SAFETY: as the caller promises.
    let stmt = unsafe { stmt.as_mut() }?;
    (stmt.inner.magic == STMT_MAGIC).then_some(stmt)
}

/// The bytes of a (pointer, length) pair from C.
///
/// # Safety
/// `ptr` is null or valid for `len` bytes.
unsafe fn bytes<'a>(ptr: *const c_char, len: usize) -> &'a [u8] {
    if ptr.is_null() {
        return &[];
    }
    // SAFETY: as the caller promises.
    unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) }
}

/// `sql_driver *db_create(const char *name)`: the mysql driver (the
/// default, also for a NULL name); from now on the reports are sysbench's
/// SQL statistics.
#[no_mangle]
pub extern "C" fn db_create(name: *const c_char) -> *mut SqlDriver {
    guarded("db_create", std::ptr::null_mut(), || {
        // SAFETY: a NUL-terminated string from Lua, or NULL.
        let name = (!name.is_null()).then(|| unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned());
        if name.as_deref().is_some_and(|n| n != "mysql") {
            fatal(&format!("invalid database driver name: '{}'", name.unwrap_or_default()));
            return std::ptr::null_mut();
        }
        context::with_current(|ctx| ctx.env.sql_used.store(true, std::sync::atomic::Ordering::Relaxed));
        std::ptr::addr_of!(MYSQL_DRIVER.0).cast_mut()
    })
}

/// `int db_destroy(sql_driver *)`: the driver is static.
#[no_mangle]
pub extern "C" fn db_destroy(_driver: *mut SqlDriver) -> c_int {
    0
}

/// `sql_connection *db_connection_create(sql_driver *)`: logs in as the
/// state's thread does (its host and port from the lists, as sysbench
/// deals them); NULL when it cannot, the reason logged.
#[no_mangle]
pub extern "C" fn db_connection_create(_driver: *mut SqlDriver) -> *mut SqlConnection {
    guarded("db_connection_create", std::ptr::null_mut(), || {
        let Some((options, limit)) = context::with_current(|ctx| ((ctx.env.connect)(ctx.tid), ctx.env.result_limit))
        else {
            alert("db_connection_create() called outside a script's thread");
            return std::ptr::null_mut();
        };
        let endpoint = options.endpoint.clone();
        let opened = with_caller(|caller| caller.open(options, limit))
            .unwrap_or_else(|| Err("no event loop runs this thread's SQL".to_owned()));
        match opened {
            Ok(opened) => {
                let con = Box::into_raw(Box::new(SqlConnection::new(opened)));
                // SAFETY: just made; its results name it from now on (it
                // does not move: it is boxed until db_connection_free).
                let inner = unsafe { &mut (*con).inner };
                (inner.rs.owner, inner.none.owner) = (con, con);
                con
            }
            Err(why) => {
                fatal(&format!("unable to connect to MySQL server on {endpoint}, aborting..."));
                fatal(&why);
                std::ptr::null_mut()
            }
        }
    })
}

impl SqlConnection {
    fn new(opened: crate::driver::OpenedConn) -> Self {
        SqlConnection {
            error: DB_ERROR_NONE,
            sql_errno: 0,
            sql_state: std::ptr::null(),
            sql_errmsg: std::ptr::null(),
            driver: std::ptr::addr_of!(MYSQL_DRIVER.0).cast_mut(),
            inner: ConnInner {
                id: Some(opened.id),
                capabilities: opened.capabilities,
                max_packet: opened.max_packet,
                state: SqlConnState::Ready,
                sql_state: CString::default(),
                sql_errmsg: CString::default(),
                rs: SqlResult::empty(ResultSlot::Rows),
                none: SqlResult::empty(ResultSlot::NoRows),
                kept: Vec::new(),
                bulk: None,
                magic: CONN_MAGIC,
            },
        }
    }

    /// Whether the connection can take a call; logs sysbench's alert if not.
    fn usable(&mut self) -> bool {
        if self.inner.state == SqlConnState::Invalid || self.inner.id.is_none() {
            alert("attempt to use an already closed connection");
            self.error = DB_ERROR_FATAL;
            (self.sql_state, self.sql_errmsg) = (std::ptr::null(), std::ptr::null());
            return false;
        }
        if self.inner.state == SqlConnState::ResultSet {
            self.free_result();
        }
        true
    }

    fn free_result(&mut self) {
        self.inner.rs.rows.forget();
        self.inner.rs.row.values = std::ptr::null_mut();
        self.inner.rs.statement = std::ptr::null_mut();
        self.inner.state = SqlConnState::Ready;
    }

    /// Sends `write`'s command and waits for its answer.
    fn call(&mut self, expect: Expect, write: impl FnOnce(&mut Vec<u8>)) -> Result<CallAnswer, CallError> {
        let Some(id) = self.inner.id else { return Err(CallError::Closed) };
        let kept = &mut self.inner.kept;
        with_caller(|caller| caller.call(id, expect, kept, write))
            .unwrap_or_else(|| Err(CallError::Loop("no event loop runs this thread's SQL".to_owned())))
    }

    /// A call failed: sysbench's `check_error` (drv_mysql.c). Sets the
    /// fields the script reads, logs a fatal error, counts it; an ignored
    /// lost connection was opened again and counts as a reconnect.
    fn failed(&mut self, error: &CallError, func: &str, query: &[u8]) -> c_int {
        if std::env::var_os("WB_DEBUG").is_some() {
            eprintln!("DEBUG failed: {error:?}");
        }
        let (state, message) = match error {
            CallError::Server(e) => (e.sql_state_str().unwrap_or("HY000").to_owned(), e.message.clone()),
            other => ("HY000".to_owned(), other.to_string()),
        };
        let errno = error.errno();
        self.set_error_fields(errno, &state, &message);
        if let CallError::Lost { reopened: true, .. } = error {
            // The loop opened it again and counted the reconnect.
            self.error = DB_ERROR_IGNORABLE;
            return self.error;
        }
        if !error.leaves_connection_open() && !matches!(error, CallError::Lost { reopened: true, .. }) {
            self.inner.id = None;
            self.inner.state = SqlConnState::Invalid;
        }
        self.error = DB_ERROR_FATAL;
        if matches!(error, CallError::Cut) {
            // The run's time is up: no error of the script's, and nothing to say.
            return self.error;
        }
        count(CounterKind::Error);
        if context::with_current(|ctx| ctx.env.ignore.ignores(errno)).unwrap_or(false) {
            self.error = DB_ERROR_IGNORABLE;
            return self.error;
        }
        let query = String::from_utf8_lossy(query);
        let message = wirebench_protocol::ServerText(&message);
        fatal(&format!("{func} returned error {errno} ({message}) for query '{query}'"));
        self.error
    }

    fn set_error_fields(&mut self, errno: u16, state: &str, message: &str) {
        self.sql_errno = c_int::from(errno);
        self.inner.sql_state = CString::new(state.replace('\0', "")).unwrap_or_default();
        let message: Vec<u8> = message.bytes().filter(|&b| b != 0).collect();
        self.inner.sql_errmsg = CString::new(message).unwrap_or_default();
        self.sql_state = self.inner.sql_state.as_ptr();
        self.sql_errmsg = self.inner.sql_errmsg.as_ptr();
    }

    /// A read leaves its result set open; the result for the script (for
    /// anything else, the one without rows).
    fn answered(&mut self, counter: CounterKind, nrows: u64, nfields: usize) -> *mut SqlResult {
        self.error = DB_ERROR_NONE;
        count(counter);
        let read = counter == CounterKind::Read;
        self.inner.state = if read { SqlConnState::ResultSet } else { SqlConnState::Ready };
        let rs = if read { &mut self.inner.rs } else { &mut self.inner.none };
        rs.counter = counter as c_int;
        rs.nrows = u32::try_from(nrows).unwrap_or(u32::MAX);
        rs.nfields = if read { u32::try_from(nfields).unwrap_or(u32::MAX) } else { 0 };
        rs
    }
}

impl SqlResult {
    fn empty(slot: ResultSlot) -> Self {
        SqlResult {
            counter: CounterKind::Other as c_int,
            nrows: 0,
            nfields: 0,
            statement: std::ptr::null_mut(),
            ptr: std::ptr::null_mut(),
            row: SqlRow { ptr: std::ptr::null_mut(), values: std::ptr::null_mut() },
            rows: Rows::default(),
            magic: RESULT_MAGIC,
            owner: std::ptr::null_mut(),
            slot,
        }
    }
}

/// Counts for the state's thread, as sysbench's driver does with
/// `sb_counter_inc`.
fn count(kind: CounterKind) {
    context::with_current(|ctx| ctx.count(kind));
}

/// How sysbench classifies an answer: rows make a read, affected rows a
/// write, anything else other.
fn counter_kind_of(result_sets: bool, affected_rows: u64) -> CounterKind {
    if result_sets {
        CounterKind::Read
    } else if affected_rows > 0 {
        CounterKind::Write
    } else {
        CounterKind::Other
    }
}

/// `int db_connection_close(sql_connection *)`.
#[no_mangle]
pub unsafe extern "C" fn db_connection_close(con: *mut SqlConnection) -> c_int {
    // SAFETY: a pointer the script got from db_connection_create.
    let Some(con) = (unsafe { connection(con) }) else { return 1 };
    guarded("db_connection_close", 1, || {
        if con.inner.state == SqlConnState::Invalid {
            alert("attempt to close an already closed connection");
            return 0;
        }
        con.free_result();
        if let Some(id) = con.inner.id.take() {
            with_caller(|caller| caller.close(id));
        }
        con.inner.state = SqlConnState::Invalid;
        0
    })
}

/// `int db_connection_reconnect(sql_connection *)`: closes and logs in
/// again, counted as a reconnect (an error when it fails).
#[no_mangle]
pub unsafe extern "C" fn db_connection_reconnect(con: *mut SqlConnection) -> c_int {
    // SAFETY: a pointer the script got from db_connection_create.
    let Some(con) = (unsafe { connection(con) }) else { return DB_ERROR_FATAL };
    guarded("db_connection_reconnect", DB_ERROR_FATAL, || {
        if con.inner.state == SqlConnState::Invalid {
            alert("attempt to close an already closed connection");
            return 0;
        }
        con.free_result();
        let Some(id) = con.inner.id.take() else { return DB_ERROR_FATAL };
        let reopened = with_caller(|caller| caller.reopen(id)).unwrap_or_else(|| Err("no event loop".to_owned()));
        match reopened {
            Ok(opened) => {
                con.inner.id = Some(opened.id);
                con.inner.capabilities = opened.capabilities;
                con.inner.state = SqlConnState::Ready;
                count(CounterKind::Reconnect);
                DB_ERROR_NONE
            }
            Err(why) => {
                fatal(&why);
                con.inner.state = SqlConnState::Invalid;
                count(CounterKind::Error);
                DB_ERROR_FATAL
            }
        }
    })
}

/// `void db_connection_free(sql_connection *)`: closes it if open, and
/// frees it (the script's garbage collector calls it).
#[no_mangle]
pub unsafe extern "C" fn db_connection_free(con: *mut SqlConnection) {
    // SAFETY: a pointer the script got from db_connection_create, freed once.
    let Some(open) = (unsafe { connection(con) }) else { return };
    if open.inner.state != SqlConnState::Invalid {
        // SAFETY: as above.
        unsafe { db_connection_close(con) };
    }
    // SAFETY: made by Box::into_raw in db_connection_create; the magic is
    // cleared so that a second free is refused.
    let mut con = unsafe { Box::from_raw(con) };
    (con.inner.magic, con.inner.rs.magic, con.inner.none.magic) = (0, 0, 0);
}

/// `sql_result *db_query(sql_connection *, const char *, size_t)`.
#[no_mangle]
pub unsafe extern "C" fn db_query(con: *mut SqlConnection, query: *const c_char, len: usize) -> *mut SqlResult {
    // SAFETY: a pointer the script got from db_connection_create.
    let Some(con) = (unsafe { connection(con) }) else { return std::ptr::null_mut() };
    // SAFETY: Lua passes a string and its length.
    let sql = unsafe { bytes(query, len) };
    guarded("db_query", std::ptr::null_mut(), || {
        if !con.usable() {
            return std::ptr::null_mut();
        }
        match con.call(Expect::WalkText, |out| {
            command::encode_query(out, sql);
        }) {
            Ok(CallAnswer::Walked(outcome)) => query_answered(con, &outcome),
            Ok(_) => std::ptr::null_mut(),
            Err(error) => {
                con.failed(&error, "mysql_drv_query()", sql);
                std::ptr::null_mut()
            }
        }
    })
}

/// A query's answer: its first result set's rows, kept for fetching.
fn query_answered(con: &mut SqlConnection, outcome: &Outcome) -> *mut SqlResult {
    if outcome.result_sets == 0 {
        return con.answered(counter_kind_of(false, outcome.affected_rows), outcome.affected_rows, 0);
    }
    let found = KeptTextRows::new(&con.inner.kept, con.inner.capabilities, con.inner.max_packet);
    let Ok(Some(rows)) = found else {
        let error = found.err().unwrap_or(CallError::Closed);
        con.failed(&error, "mysql_drv_query()", b"<result>");
        return std::ptr::null_mut();
    };
    let nrows = if outcome.result_sets == 1 { outcome.rows } else { first_set_rows(con, rows) };
    let nfields = rows.columns();
    con.inner.rs.rows.forget();
    con.inner.rs.rows.text = Some(rows);
    con.answered(CounterKind::Read, nrows, nfields)
}

/// The rows of the first of several result sets (a procedure's), counted.
fn first_set_rows(con: &mut SqlConnection, mut rows: KeptTextRows) -> u64 {
    let (kept, max_packet) = (&con.inner.kept, con.inner.max_packet);
    let mut joined = Vec::new();
    let mut n = 0;
    while let Ok(Some(_)) = rows.next(kept, max_packet, &mut joined) {
        n += 1;
    }
    n
}

/// `sql_row *db_fetch_row(sql_result *)`: the next row, its values as
/// text (NULL for SQL NULL), valid until the next fetch; NULL past the
/// last row.
#[no_mangle]
pub unsafe extern "C" fn db_fetch_row(rs: *mut SqlResult) -> *mut SqlRow {
    // SAFETY: a result the script got from db_query or db_execute.
    let Some((con, slot)) = (unsafe { connection_of(rs) }) else {
        alert("attempt to fetch row from an invalid result set");
        return std::ptr::null_mut();
    };
    guarded("db_fetch_row", std::ptr::null_mut(), || {
        if con.inner.state != SqlConnState::ResultSet || slot == ResultSlot::NoRows {
            let what = if con.inner.state == SqlConnState::Invalid {
                "attempt to use an already closed connection"
            } else {
                "attempt to fetch row from an invalid result set"
            };
            alert(what);
            return std::ptr::null_mut();
        }
        if con.inner.rs.nrows == 0 || con.inner.rs.nfields == 0 {
            alert("attempt to fetch row from an empty result set");
            return std::ptr::null_mut();
        }
        if let Err(error) = decode_rows(con) {
            alert(&format!("cannot decode the result's rows: {error}"));
            return std::ptr::null_mut();
        }
        next_row(con)
    })
}

/// The connection whose result `rs` is, and which of its results.
///
/// # Safety
/// `rs` is null or a result db_query or db_execute returned.
unsafe fn connection_of<'a>(rs: *mut SqlResult) -> Option<(&'a mut SqlConnection, ResultSlot)> {
    // SAFETY: as the caller promises; the magic catches a stray pointer.
    let result = unsafe { rs.as_ref() }.filter(|r| r.magic == RESULT_MAGIC)?;
    let slot = result.slot;
    // SAFETY: a result's owner is the connection holding it, alive while
    // its results are (both freed by db_connection_free).
    Some((unsafe { connection(result.owner) }?, slot))
}

/// An execution's rows are decoded from its kept packets at the first fetch.
fn decode_rows(con: &mut SqlConnection) -> Result<(), CallError> {
    if con.inner.rs.rows.decoded.is_some() || con.inner.rs.rows.text.is_some() {
        return Ok(());
    }
    // SAFETY: an execution's result names its statement, which the script
    // holds while it fetches (sysbench's rule too).
    let stmt = unsafe { statement_at(con.inner.rs.statement) };
    let columns = stmt.and_then(|s| s.inner.prepared.as_ref()).map(|p| p.columns.clone()).unwrap_or_default();
    let response = decode_walked(&con.inner.kept, con.inner.capabilities, con.inner.max_packet, columns)?;
    let set = response.results.into_iter().find_map(|r| match r {
        QueryResult::ResultSet(set) => Some(set),
        _ => None,
    });
    con.inner.rs.rows.decoded = set;
    Ok(())
}

/// Moves to the next row and lays its values out for the script: a
/// query's in place in the kept packets, an execution's as text.
fn next_row(con: &mut SqlConnection) -> *mut SqlRow {
    let (kept, max_packet) = (&con.inner.kept, con.inner.max_packet);
    let rs = &mut con.inner.rs;
    let rows = &mut rs.rows;
    if let Some(text) = rows.text.as_mut() {
        let Ok(Some(row)) = text.next(kept, max_packet, &mut rows.joined) else { return std::ptr::null_mut() };
        rows.values.clear();
        rows.values.extend(row.values().map(|value| match value {
            Some(bytes) => SqlValue { len: bytes.len() as u32, ptr: bytes.as_ptr().cast() },
            None => SqlValue { len: 0, ptr: std::ptr::null() },
        }));
    } else if !decoded_row(rows) {
        return std::ptr::null_mut();
    }
    rs.row.values = rs.rows.values.as_mut_ptr();
    std::ptr::addr_of_mut!(rs.row)
}

/// An execution's next decoded row, its values as text; false past the
/// last row.
fn decoded_row(rows: &mut Rows) -> bool {
    let Some(set) = rows.decoded.as_ref() else { return false };
    let Some(row) = set.rows.get(rows.next) else { return false };
    rows.next += 1;
    let Ok(values) = row.text_values(&set.columns) else { return false };
    rows.decoded_text.clear();
    rows.spans.clear();
    for value in values {
        rows.spans.push(value.map(|v| {
            let at = rows.decoded_text.len();
            rows.decoded_text.extend_from_slice(&v);
            (at, v.len())
        }));
    }
    let base = rows.decoded_text.as_ptr();
    rows.values.clear();
    rows.values.extend(rows.spans.iter().map(|span| match span {
        // SAFETY: `at` is within `decoded_text`, untouched until the next fetch.
        Some((at, len)) => SqlValue { len: *len as u32, ptr: unsafe { base.add(*at) }.cast() },
        None => SqlValue { len: 0, ptr: std::ptr::null() },
    }));
    true
}

/// `int db_free_results(sql_result *)`.
#[no_mangle]
pub unsafe extern "C" fn db_free_results(rs: *mut SqlResult) -> c_int {
    // SAFETY: a result the script got from db_query or db_execute.
    let Some((con, slot)) = (unsafe { connection_of(rs) }) else {
        alert("attempt to free an invalid result set");
        return 1;
    };
    match con.inner.state {
        SqlConnState::ResultSet if slot == ResultSlot::Rows => {
            con.free_result();
            0
        }
        SqlConnState::Invalid => {
            alert("attempt to use an already closed connection");
            1
        }
        SqlConnState::Ready | SqlConnState::ResultSet => {
            alert("attempt to free an invalid result set");
            1
        }
    }
}

/// `sql_statement *db_prepare(sql_connection *, const char *, size_t)`.
#[no_mangle]
pub unsafe extern "C" fn db_prepare(con: *mut SqlConnection, query: *const c_char, len: usize) -> *mut SqlStatement {
    // SAFETY: a pointer the script got from db_connection_create.
    let Some(con) = (unsafe { connection(con) }) else { return std::ptr::null_mut() };
    // SAFETY: Lua passes a string and its length.
    let sql = unsafe { bytes(query, len) };
    guarded("db_prepare", std::ptr::null_mut(), || {
        if !con.usable() {
            return std::ptr::null_mut();
        }
        match con.call(Expect::Prepared, |out| {
            command::encode_prepare(out, sql);
        }) {
            Ok(CallAnswer::Prepared(prepared)) => {
                let inner = StmtInner {
                    magic: STMT_MAGIC,
                    prepared: Some(prepared),
                    binds: Vec::new(),
                    template: None,
                    query: String::from_utf8_lossy(sql).into_owned(),
                };
                let con_ptr: *mut SqlConnection = con;
                Box::into_raw(Box::new(SqlStatement { connection: con_ptr, inner }))
            }
            Ok(_) => std::ptr::null_mut(),
            Err(error) => {
                prepare_failed(con, &error);
                std::ptr::null_mut()
            }
        }
    })
}

/// sysbench's driver logs a statement the server refuses and fails the
/// call; the error is not counted, and the connection's error fields stay
/// unset (sysbench's `check_error` then raises "SQL API error").
fn prepare_failed(con: &mut SqlConnection, error: &CallError) {
    fatal("mysql_stmt_prepare() failed");
    fatal(&format!("MySQL error: {} \"{error}\"", error.errno()));
    if !error.leaves_connection_open() {
        con.inner.id = None;
        con.inner.state = SqlConnState::Invalid;
    }
    (con.sql_state, con.sql_errmsg) = (std::ptr::null(), std::ptr::null());
    con.error = DB_ERROR_FATAL;
}

/// `int db_bind_param(sql_statement *, sql_bind *, size_t)`: the buffers
/// are the script's, read at each execution.
#[no_mangle]
pub unsafe extern "C" fn db_bind_param(stmt: *mut SqlStatement, params: *mut SqlBind, len: usize) -> c_int {
    // SAFETY: a pointer the script got from db_prepare.
    let Some(stmt) = (unsafe { statement_at(stmt) }) else { return 1 };
    if params.is_null() && len > 0 {
        return 1;
    }
    // SAFETY: the script passes an array of `len` binds.
    let binds = if len == 0 { &[][..] } else { unsafe { std::slice::from_raw_parts(params, len) } };
    let count = stmt.inner.prepared.as_ref().map_or(0, |p| p.params.len());
    if binds.len() != count {
        alert(&format!("wrong number of parameters in a prepared statement: {} given, {count} expected", binds.len()));
        return 1;
    }
    stmt.inner.binds = binds.to_vec();
    stmt.inner.template = None;
    0
}

/// `int db_bind_result(sql_statement *, sql_bind *, size_t)`: results
/// are read with `db_fetch_row`; nothing to bind.
#[no_mangle]
pub extern "C" fn db_bind_result(_stmt: *mut SqlStatement, _results: *mut SqlBind, _len: usize) -> c_int {
    0
}

/// `sql_result *db_execute(sql_statement *)`.
#[no_mangle]
pub unsafe extern "C" fn db_execute(stmt: *mut SqlStatement) -> *mut SqlResult {
    // SAFETY: a pointer the script got from db_prepare.
    let Some(stmt) = (unsafe { statement_at(stmt) }) else { return std::ptr::null_mut() };
    // SAFETY: the statement's connection outlives it in the script (it
    // holds both); checked by its magic.
    let Some(con) = (unsafe { connection(stmt.connection) }) else { return std::ptr::null_mut() };
    guarded("db_execute", std::ptr::null_mut(), || execute_statement(con, stmt))
}

fn execute_statement(con: &mut SqlConnection, stmt: &mut SqlStatement) -> *mut SqlResult {
    let stmt_ptr: *mut SqlStatement = stmt;
    if !con.usable() {
        return std::ptr::null_mut();
    }
    let Some(prepared) = stmt.inner.prepared.as_ref() else {
        alert("attempt to execute a closed statement");
        con.error = DB_ERROR_FATAL;
        return std::ptr::null_mut();
    };
    let (id, nfields) = (prepared.statement_id(), prepared.columns.len());
    // SAFETY: the binds point to the script's buffers, alive while it
    // holds the statement (sysbench reads them the same way).
    let params = match unsafe { bound_values(&stmt.inner.binds) } {
        Ok(params) => params,
        Err(why) => {
            alert(&why);
            con.error = DB_ERROR_FATAL;
            return std::ptr::null_mut();
        }
    };
    if !stmt.inner.template.as_mut().is_some_and(|t| patch(t, &params)) {
        stmt.inner.template = template_for_params(id, &params);
    }
    let template = &stmt.inner.template;
    let answer = con.call(Expect::Walk { keep_rows: nfields > 0 }, |out| match template {
        Some(template) => out.extend_from_slice(template.packet()),
        None => {
            command::encode_execute(out, id, &params);
        }
    });
    match answer {
        Ok(CallAnswer::Walked(outcome)) => {
            let reads = outcome.result_sets > 0;
            let nrows = if reads { outcome.rows } else { outcome.affected_rows };
            let rs = con.answered(counter_kind_of(reads, outcome.affected_rows), nrows, nfields);
            if reads {
                con.inner.rs.statement = stmt_ptr;
            }
            rs
        }
        Ok(_) => std::ptr::null_mut(),
        Err(error) => {
            let query = stmt.inner.query.clone();
            con.failed(&error, "mysql_stmt_execute()", query.as_bytes());
            std::ptr::null_mut()
        }
    }
}

/// The values the binds hold now, read from the script's buffers.
///
/// # Safety
/// Each bind's pointers are valid for what its type says (sysbench's
/// `bind_create` makes them so).
unsafe fn bound_values<'b>(binds: &[SqlBind]) -> Result<SmallVec<[Param<'b>; INLINE_PARAMS]>, String> {
    let mut params = SmallVec::with_capacity(binds.len());
    for bind in binds {
        // SAFETY: as the caller promises.
        let null = !bind.is_null.is_null() && unsafe { *bind.is_null } != 0;
        if null || bind.buffer.is_null() {
            params.push(Param::Null);
            continue;
        }
        params.push(match bind.kind {
            // SAFETY: an integer bind's buffer is an int64_t (bind_create).
            SQL_TYPE_TINYINT | SQL_TYPE_SMALLINT | SQL_TYPE_INT | SQL_TYPE_BIGINT => {
                Param::I64(unsafe { *bind.buffer.cast::<i64>() })
            }
            // SAFETY: a floating bind's buffer is a double.
            SQL_TYPE_FLOAT | SQL_TYPE_DOUBLE => Param::F64(unsafe { *bind.buffer.cast::<f64>() }),
            SQL_TYPE_CHAR | SQL_TYPE_VARCHAR => {
                // SAFETY: data_len is the script's length cell, at most max_len.
                let len = if bind.data_len.is_null() { 0 } else { unsafe { *bind.data_len } };
                let len = len.min(bind.max_len) as usize;
                // SAFETY: the buffer holds max_len bytes.
                Param::Bytes(unsafe { std::slice::from_raw_parts(bind.buffer.cast::<u8>(), len) })
            }
            other => {
                return Err(format!(
                    "unsupported parameter type {other} (sysbench binds integers, doubles and strings)"
                ))
            }
        });
    }
    Ok(params)
}

/// Writes `params` into `template`; false if one does not fit its slot
/// (another type, a string of another length, NULL).
fn patch(template: &mut ExecuteTemplate, params: &[Param]) -> bool {
    template.param_count() == params.len()
        && params.iter().enumerate().all(|(i, p)| !matches!(p, Param::Null) && template.set(i, *p).is_ok())
}

/// A template laid out for `params` and holding them, if each has a
/// fixed size.
fn template_for_params(statement_id: u32, params: &[Param]) -> Option<ExecuteTemplate> {
    let slots = params.iter().map(|p| match p {
        Param::I64(_) => Some(ParamSlot::Int64),
        Param::F64(_) => Some(ParamSlot::Double),
        Param::Bytes(b) => Some(ParamSlot::Bytes { len: b.len() }),
        _ => None,
    });
    let slots: Option<SmallVec<[ParamSlot; INLINE_PARAMS]>> = slots.collect();
    let mut template = ExecuteTemplate::new(statement_id, &slots?).ok()?;
    patch(&mut template, params).then_some(template)
}

/// `int db_close(sql_statement *)`: COM_STMT_CLOSE, and the statement is
/// freed (the garbage collector calls it too).
#[no_mangle]
pub unsafe extern "C" fn db_close(stmt: *mut SqlStatement) -> c_int {
    // SAFETY: a pointer the script got from db_prepare, closed once.
    if unsafe { statement_at(stmt) }.is_none() {
        return 0;
    }
    // SAFETY: made by Box::into_raw in db_prepare.
    let mut owned = unsafe { Box::from_raw(stmt) };
    owned.inner.magic = 0;
    guarded("db_close", 0, || {
        // SAFETY: the connection, if still alive (checked by its magic).
        let Some(con) = (unsafe { connection(owned.connection) }) else { return 0 };
        if con.inner.rs.statement == stmt {
            con.free_result();
        }
        let Some(prepared) = owned.inner.prepared.take() else { return 0 };
        if con.inner.id.is_some() && con.inner.state != SqlConnState::Invalid {
            let _ = con.call(Expect::Nothing, |out| command::encode_stmt_close(out, prepared.statement_id()));
        }
        0
    })
}

/// `int db_bulk_insert_init(sql_connection *, const char *, size_t)`.
#[no_mangle]
pub unsafe extern "C" fn db_bulk_insert_init(con: *mut SqlConnection, query: *const c_char, len: usize) -> c_int {
    // SAFETY: a pointer the script got from db_connection_create.
    let Some(con) = (unsafe { connection(con) }) else { return 1 };
    // SAFETY: Lua passes a string and its length.
    let head = unsafe { bytes(query, len) };
    if con.inner.state == SqlConnState::Invalid {
        alert("attempt to use an already closed connection");
        return 1;
    }
    let mut sql = Vec::with_capacity(BULK_PACKET_SIZE);
    sql.extend_from_slice(head);
    sql.push(b' ');
    con.inner.bulk = Some(Bulk { head: sql.len(), sql, rows: 0 });
    0
}

/// `int db_bulk_insert_next(sql_connection *, const char *, size_t)`:
/// appends the row, first sending what is buffered when the row would take
/// it past sysbench's packet size.
#[no_mangle]
pub unsafe extern "C" fn db_bulk_insert_next(con: *mut SqlConnection, row: *const c_char, len: usize) -> c_int {
    // SAFETY: a pointer the script got from db_connection_create.
    let Some(con) = (unsafe { connection(con) }) else { return 1 };
    // SAFETY: Lua passes a string and its length.
    let row = unsafe { bytes(row, len) };
    guarded("db_bulk_insert_next", 1, || {
        let Some(bulk) = con.inner.bulk.as_ref() else {
            alert("attempt to call bulk_insert_next() before bulk_insert_init()");
            return 1;
        };
        if bulk.rows > 0 && bulk.sql.len() + row.len() + 1 > BULK_PACKET_SIZE && bulk_send(con) != 0 {
            return 1;
        }
        let Some(bulk) = con.inner.bulk.as_mut() else { return 1 };
        if bulk.rows > 0 {
            bulk.sql.push(b',');
        }
        bulk.sql.extend_from_slice(row);
        bulk.rows += 1;
        0
    })
}

/// `int db_bulk_insert_done(sql_connection *)`: sends what is buffered.
#[no_mangle]
pub unsafe extern "C" fn db_bulk_insert_done(con: *mut SqlConnection) -> c_int {
    // SAFETY: a pointer the script got from db_connection_create.
    let Some(con) = (unsafe { connection(con) }) else { return 1 };
    guarded("db_bulk_insert_done", 1, || {
        let sent = bulk_send(con);
        con.inner.bulk = None;
        sent
    })
}

/// Sends the rows buffered, if any, as one INSERT; 0 when it went well.
fn bulk_send(con: &mut SqlConnection) -> c_int {
    let Some(bulk) = con.inner.bulk.as_mut().filter(|b| b.rows > 0) else { return 0 };
    let head = bulk.head;
    let sql = std::mem::take(&mut bulk.sql);
    bulk.rows = 0;
    let result = if con.usable() {
        con.call(Expect::WalkText, |out| {
            command::encode_query(out, &sql);
        })
    } else {
        Err(CallError::Closed)
    };
    if let Some(bulk) = con.inner.bulk.as_mut() {
        bulk.sql = sql;
        bulk.sql.truncate(head);
    }
    match result {
        Ok(CallAnswer::Walked(outcome)) => {
            query_answered(con, &outcome);
            0
        }
        Ok(_) => 0,
        Err(error) => {
            con.failed(&error, "mysql_drv_query()", b"<bulk insert>");
            1
        }
    }
}
