//! `sql_connection`: a script's connection, opened, closed and reopened on
//! the state's loop, the queries it sends (`db_query`), and the error
//! fields and counters a call's answer sets, as sysbench's `drv_mysql.c`
//! sets them.

use std::ffi::{c_char, c_int, CString};

use wirebench_protocol::command;

use super::sql_driver::{SqlDriver, MYSQL_DRIVER};
use super::sql_result::query_answered;
use super::sql_structs::{connection, ConnInner, ResultSlot, SqlConnState, SqlConnection, SqlResult, CONN_MAGIC};
use super::{alert, bytes, count, fatal, DB_ERROR_FATAL, DB_ERROR_IGNORABLE, DB_ERROR_NONE};
use crate::driver::{with_caller, CallAnswer, CallError, CounterKind, Expect, OpenedConn};
use crate::lua::context;
use crate::lua::ffi::guarded;

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
            Ok(opened) => SqlConnection::boxed(opened),
            Err(why) => {
                fatal(&format!("unable to connect to MySQL server on {endpoint}, aborting..."));
                fatal(&why);
                std::ptr::null_mut()
            }
        }
    })
}

impl SqlConnection {
    /// The connection for the script, boxed: its results name it from now
    /// on (it does not move: it is boxed until db_connection_free).
    pub(super) fn boxed(opened: OpenedConn) -> *mut SqlConnection {
        let con = Box::into_raw(Box::new(SqlConnection::new(opened)));
        // SAFETY: just made, and not shared yet.
        let inner = unsafe { &mut (*con).inner };
        (inner.rs.owner, inner.none.owner) = (con, con);
        con
    }

    fn new(opened: OpenedConn) -> Self {
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
    pub(super) fn usable(&mut self) -> bool {
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

    pub(super) fn free_result(&mut self) {
        self.inner.rs.rows.forget();
        self.inner.rs.row.values = std::ptr::null_mut();
        self.inner.rs.statement = std::ptr::null_mut();
        self.inner.state = SqlConnState::Ready;
    }

    /// Sends `write`'s command and waits for its answer.
    pub(super) fn call(&mut self, expect: Expect, write: impl FnOnce(&mut Vec<u8>)) -> Result<CallAnswer, CallError> {
        let Some(id) = self.inner.id else { return Err(CallError::Closed) };
        let kept = &mut self.inner.kept;
        with_caller(|caller| caller.call(id, expect, kept, write))
            .unwrap_or_else(|| Err(CallError::Loop("no event loop runs this thread's SQL".to_owned())))
    }

    /// A call failed: sysbench's `check_error` (drv_mysql.c). Sets the
    /// fields the script reads, logs a fatal error, counts it; an ignored
    /// lost connection was opened again and counts as a reconnect.
    pub(super) fn failed(&mut self, error: &CallError, func: &str, query: &[u8]) -> c_int {
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
    pub(super) fn answered(&mut self, counter: CounterKind, nrows: u64, nfields: usize) -> *mut SqlResult {
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

#[cfg(test)]
mod tests {
    use std::ffi::CStr;

    use wirebench_protocol::response::ServerError;

    use super::super::sql_fixtures::FakeConn;
    use super::*;

    /// The C string a connection's field points to; `None` for NULL.
    fn text(field: *const c_char) -> Option<String> {
        // SAFETY: NULL, or the connection's own CString, alive while it is.
        (!field.is_null()).then(|| unsafe { CStr::from_ptr(field) }.to_string_lossy().into_owned())
    }

    #[test]
    fn a_server_error_sets_the_fields_the_script_reads_and_keeps_the_connection() {
        let mut con = FakeConn::new();
        let con = con.get();
        let error = CallError::Server(ServerError {
            code: 1146,
            sql_state: Some(*b"42S02"),
            message: "Table 'sbtest.x'\0 doesn't exist".to_owned(),
        });
        assert_eq!(con.failed(&error, "mysql_drv_query()", b"SELECT * FROM x"), DB_ERROR_FATAL);
        assert_eq!((con.error, con.sql_errno), (DB_ERROR_FATAL, 1146));
        assert_eq!(text(con.sql_state).as_deref(), Some("42S02"));
        assert_eq!(text(con.sql_errmsg).as_deref(), Some("Table 'sbtest.x' doesn't exist"));
        assert!(con.inner.id.is_some() && con.inner.state == SqlConnState::Ready);
        assert!(con.usable());
    }

    #[test]
    fn a_closed_connection_is_refused_from_then_on() {
        let mut con = FakeConn::new();
        let con = con.get();
        assert_eq!(con.failed(&CallError::Closed, "mysql_drv_query()", b"SELECT 1"), DB_ERROR_FATAL);
        assert_eq!(con.sql_errno, 2006, "CR_SERVER_GONE_ERROR");
        assert!(con.inner.id.is_none() && con.inner.state == SqlConnState::Invalid);
        assert!(!con.usable());
        assert_eq!(con.error, DB_ERROR_FATAL);
        assert_eq!((text(con.sql_state), text(con.sql_errmsg)), (None, None));
    }

    #[test]
    fn a_read_leaves_its_result_set_open_and_a_write_does_not() {
        let mut con = FakeConn::new();
        let con = con.get();
        let read = con.answered(CounterKind::Read, 3, 2);
        assert_eq!(read, std::ptr::addr_of_mut!(con.inner.rs));
        assert_eq!(con.inner.state, SqlConnState::ResultSet);
        assert_eq!((con.inner.rs.nrows, con.inner.rs.nfields), (3, 2));
        assert_eq!(con.inner.rs.counter, CounterKind::Read as c_int);
        // The next call frees the open result set first.
        assert!(con.usable());
        assert_eq!(con.inner.state, SqlConnState::Ready);
        let write = con.answered(CounterKind::Write, u64::MAX, 9);
        assert_eq!(write, std::ptr::addr_of_mut!(con.inner.none));
        assert_eq!((con.inner.none.nrows, con.inner.none.nfields), (u32::MAX, 0));
        assert_eq!(con.inner.none.counter, CounterKind::Write as c_int);
        assert_eq!((con.inner.state, con.error), (SqlConnState::Ready, DB_ERROR_NONE));
    }

    /// With no loop behind the thread, a query fails as a lost connection
    /// does (libmysqlclient's CR_SERVER_LOST), and the connection is closed.
    #[test]
    fn a_query_without_a_loop_fails_and_closes_the_connection() {
        let mut con = FakeConn::new();
        let sql = "SELECT 1";
        // SAFETY: a connection made as db_connection_create makes one.
        let rs = unsafe { db_query(con.0, sql.as_ptr().cast(), sql.len()) };
        assert!(rs.is_null());
        let con = con.get();
        assert_eq!((con.error, con.sql_errno), (DB_ERROR_FATAL, 2013));
        assert_eq!(text(con.sql_errmsg).as_deref(), Some("no event loop runs this thread's SQL"));
        assert_eq!(con.inner.state, SqlConnState::Invalid);
        // SAFETY: as above.
        assert!(unsafe { db_query(con, sql.as_ptr().cast(), sql.len()) }.is_null());
        assert_eq!(text(con.sql_state), None, "an already closed connection");
    }

    #[test]
    fn close_and_reconnect_follow_the_connections_state() {
        let mut con = FakeConn::new();
        // SAFETY: a connection made as db_connection_create makes one.
        assert_eq!(unsafe { db_connection_reconnect(con.0) }, DB_ERROR_FATAL, "no loop to log in again");
        assert_eq!(con.get().inner.state, SqlConnState::Invalid);
        // SAFETY: as above; closing a closed connection is refused softly.
        assert_eq!(unsafe { db_connection_close(con.0) }, 0);
        assert_eq!(unsafe { db_connection_reconnect(con.0) }, 0);
        let mut open = FakeConn::new();
        // SAFETY: as above.
        assert_eq!(unsafe { db_connection_close(open.0) }, 0);
        assert!(open.get().inner.id.is_none() && open.get().inner.state == SqlConnState::Invalid);
        // SAFETY: NULL is no connection.
        unsafe {
            assert_eq!(db_connection_close(std::ptr::null_mut()), 1);
            assert_eq!(db_connection_reconnect(std::ptr::null_mut()), DB_ERROR_FATAL);
            assert!(db_query(std::ptr::null_mut(), c"SELECT 1".as_ptr(), 8).is_null());
            db_connection_free(std::ptr::null_mut());
        }
    }
}
