//! `sql_statement`: a prepared statement (`db_prepare`), the script's
//! buffers bound to its parameters (`db_bind_param`), read at each
//! execution into a COM_STMT_EXECUTE that is patched in place while the
//! values keep their sizes, and its close.

use std::ffi::{c_char, c_int};

use smallvec::SmallVec;
use wirebench_protocol::command::{self, ExecuteTemplate, Param, ParamSlot};

use super::sql_structs::{
    connection, statement_at, SqlBind, SqlConnState, SqlConnection, SqlResult, SqlStatement, StmtInner, STMT_MAGIC,
};
use super::{alert, bytes, counter_kind_of, fatal, DB_ERROR_FATAL};
use crate::driver::{CallAnswer, CallError, Expect};
use crate::lua::ffi::guarded;

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

#[cfg(test)]
mod tests {
    use std::ffi::{c_ulong, c_void};

    use super::super::sql_fixtures::FakeConn;
    use super::*;

    fn bind(
        kind: c_int,
        buffer: *mut c_void,
        data_len: *mut c_ulong,
        max_len: c_ulong,
        is_null: *mut c_char,
    ) -> SqlBind {
        SqlBind { kind, buffer, data_len, max_len, is_null }
    }

    #[test]
    fn binds_are_read_from_the_scripts_buffers_as_their_types_say() {
        let (mut int, mut double, mut text) = (42i64, 1.5f64, *b"hello world");
        let (mut five, mut too_long, mut yes, mut no): (c_ulong, c_ulong, c_char, c_char) = (5, 99, 1, 0);
        let null: *mut c_void = std::ptr::null_mut();
        let int_at = std::ptr::addr_of_mut!(int).cast();
        let binds = [
            bind(SQL_TYPE_INT, int_at, null.cast(), 8, &mut no),
            bind(SQL_TYPE_DOUBLE, std::ptr::addr_of_mut!(double).cast(), null.cast(), 8, null.cast()),
            bind(SQL_TYPE_VARCHAR, text.as_mut_ptr().cast(), &mut five, 11, null.cast()),
            bind(SQL_TYPE_CHAR, text.as_mut_ptr().cast(), &mut too_long, 11, null.cast()),
            bind(SQL_TYPE_BIGINT, int_at, null.cast(), 8, &mut yes),
            bind(SQL_TYPE_TINYINT, null, null.cast(), 8, null.cast()),
        ];
        // SAFETY: each bind's pointers are valid for its type.
        let params = unsafe { bound_values(&binds) }.unwrap();
        let want = [
            Param::I64(42),
            Param::F64(1.5),
            Param::Bytes(b"hello"),
            Param::Bytes(b"hello world"),
            Param::Null,
            Param::Null,
        ];
        assert_eq!(params.as_slice(), want);
        let odd = [bind(7, int_at, null.cast(), 8, null.cast())];
        // SAFETY: as above.
        let err = unsafe { bound_values(&odd) }.unwrap_err();
        assert!(err.starts_with("unsupported parameter type 7"), "{err}");
    }

    /// The template's packet is what encode_execute writes, before and
    /// after patching; a value of another size does not fit it.
    #[test]
    fn an_execution_is_patched_in_place_while_the_sizes_hold() {
        let encoded = |params: &[Param]| {
            let mut out = Vec::new();
            command::encode_execute(&mut out, 9, params);
            out
        };
        let first = [Param::I64(1), Param::F64(0.5), Param::Bytes(b"ab")];
        let mut template = template_for_params(9, &first).unwrap();
        assert_eq!(template.packet(), encoded(&first));
        let second = [Param::I64(-7), Param::F64(2.25), Param::Bytes(b"cd")];
        assert!(patch(&mut template, &second));
        assert_eq!(template.packet(), encoded(&second));
        assert!(!patch(&mut template, &[Param::I64(1), Param::F64(0.5), Param::Bytes(b"abc")]));
        assert!(!patch(&mut template, &[Param::I64(1), Param::Null, Param::Bytes(b"ab")]));
        assert!(!patch(&mut template, &first[..2]));
        assert!(template_for_params(9, &[Param::Null]).is_none());
    }

    /// A statement whose prepare left nothing on the server (as after a
    /// close): parameters it does not have are refused, and it is not run.
    #[test]
    fn a_statement_without_its_prepared_one_is_refused() {
        let mut con = FakeConn::new();
        let inner = StmtInner {
            magic: STMT_MAGIC,
            prepared: None,
            binds: Vec::new(),
            template: None,
            query: "SELECT ?".into(),
        };
        let stmt = Box::into_raw(Box::new(SqlStatement { connection: con.0, inner }));
        let mut value = 1i64;
        let mut one =
            [bind(SQL_TYPE_INT, std::ptr::addr_of_mut!(value).cast(), std::ptr::null_mut(), 8, std::ptr::null_mut())];
        // SAFETY: a statement made as db_prepare makes one, on a live connection.
        unsafe {
            assert_eq!(db_bind_param(stmt, one.as_mut_ptr(), 1), 1, "it takes no parameter");
            assert_eq!(db_bind_param(stmt, std::ptr::null_mut(), 0), 0);
            assert_eq!(db_bind_result(stmt, std::ptr::null_mut(), 0), 0);
            assert!(db_execute(stmt).is_null());
        }
        assert_eq!(con.get().error, DB_ERROR_FATAL);
        assert!(con.get().inner.id.is_some(), "the connection goes on");
        // SAFETY: closed once; NULL is no statement.
        unsafe {
            assert_eq!(db_close(stmt), 0);
            assert_eq!(db_close(std::ptr::null_mut()), 0);
            assert_eq!(db_bind_param(std::ptr::null_mut(), std::ptr::null_mut(), 0), 1);
            assert!(db_execute(std::ptr::null_mut()).is_null());
        }
    }

    /// A prepare that cannot reach the server fails as sysbench's driver
    /// fails it: no statement, the error fields unset.
    #[test]
    fn a_prepare_without_a_loop_fails_with_the_fields_unset() {
        let mut con = FakeConn::new();
        let sql = "SELECT ?";
        // SAFETY: a connection made as db_connection_create makes one.
        assert!(unsafe { db_prepare(con.0, sql.as_ptr().cast(), sql.len()) }.is_null());
        let con = con.get();
        assert_eq!(con.error, DB_ERROR_FATAL);
        assert!(con.sql_state.is_null() && con.sql_errmsg.is_null());
        assert_eq!(con.inner.state, SqlConnState::Invalid);
    }
}
