//! `sql_result`: what a call returns to the script, and the rows it
//! fetches from it (`db_fetch_row`): a query's read in place from the
//! connection's kept packets, an execution's decoded at the first fetch.

use std::ffi::c_int;

use wirebench_protocol::response::{Outcome, QueryResult};

use super::sql_structs::{
    connection, statement_at, ResultSlot, Rows, SqlConnState, SqlConnection, SqlResult, SqlRow, SqlValue, RESULT_MAGIC,
};
use super::{alert, counter_kind_of};
use crate::driver::{decode_walked, CallError, CounterKind, KeptTextRows};
use crate::lua::ffi::guarded;

impl SqlResult {
    pub(super) fn empty(slot: ResultSlot) -> Self {
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

/// A query's answer: its first result set's rows, kept for fetching.
pub(super) fn query_answered(con: &mut SqlConnection, outcome: &Outcome) -> *mut SqlResult {
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

#[cfg(test)]
mod tests {
    use super::super::sql_fixtures::{text_answer, FakeConn};
    use super::*;

    /// The values of the row `db_fetch_row` gave: `None` for NULL.
    fn values(row: *mut SqlRow, columns: usize) -> Vec<Option<String>> {
        assert!(!row.is_null());
        // SAFETY: a row db_fetch_row returned, valid until the next fetch.
        let values = unsafe { std::slice::from_raw_parts((*row).values, columns) };
        let text = |v: &SqlValue| {
            // SAFETY: a value points into the result's bytes, `len` long.
            (!v.ptr.is_null()).then(|| unsafe {
                String::from_utf8_lossy(std::slice::from_raw_parts(v.ptr.cast(), v.len as usize)).into_owned()
            })
        };
        values.iter().map(text).collect()
    }

    #[test]
    fn a_querys_rows_are_fetched_in_place_nulls_included() {
        let mut con = FakeConn::new();
        let c = con.get();
        c.inner.kept = text_answer(2, &[&[Some("1"), Some("abc")], &[None, Some("")]]);
        let rs = query_answered(c, &Outcome { result_sets: 1, rows: 2, ..Outcome::default() });
        assert_eq!(rs, std::ptr::addr_of_mut!(c.inner.rs));
        assert_eq!((c.inner.rs.nrows, c.inner.rs.nfields), (2, 2));
        assert_eq!(c.inner.rs.counter, CounterKind::Read as c_int);
        // SAFETY: the result query_answered returned, its connection alive.
        unsafe {
            assert_eq!(values(db_fetch_row(rs), 2), [Some("1".to_owned()), Some("abc".to_owned())]);
            assert_eq!(values(db_fetch_row(rs), 2), [None, Some(String::new())]);
            assert!(db_fetch_row(rs).is_null());
            assert_eq!(db_free_results(rs), 0);
            assert_eq!(db_free_results(rs), 1, "freed already");
            assert!(db_fetch_row(rs).is_null());
        }
    }

    #[test]
    fn the_first_of_several_result_sets_is_the_one_counted() {
        let mut con = FakeConn::new();
        let c = con.get();
        c.inner.kept = text_answer(1, &[&[Some("a")], &[Some("b")]]);
        query_answered(c, &Outcome { result_sets: 2, rows: 5, ..Outcome::default() });
        assert_eq!(c.inner.rs.nrows, 2);
    }

    #[test]
    fn a_write_or_an_empty_set_has_no_row_to_fetch() {
        let mut con = FakeConn::new();
        let c = con.get();
        let rs = query_answered(c, &Outcome { affected_rows: 3, ..Outcome::default() });
        assert_eq!(rs, std::ptr::addr_of_mut!(c.inner.none));
        assert_eq!((c.inner.none.nrows, c.inner.none.counter), (3, CounterKind::Write as c_int));
        // SAFETY: the result query_answered returned, its connection alive.
        unsafe {
            assert!(db_fetch_row(rs).is_null());
            assert_eq!(db_free_results(rs), 1);
        }
        let c = con.get();
        c.inner.kept = text_answer(1, &[]);
        let empty = query_answered(c, &Outcome { result_sets: 1, ..Outcome::default() });
        assert_eq!(c.inner.state, SqlConnState::ResultSet);
        // SAFETY: as above; NULL is no result.
        unsafe {
            assert!(db_fetch_row(empty).is_null());
            assert_eq!(db_free_results(empty), 0);
            assert!(db_fetch_row(std::ptr::null_mut()).is_null());
            assert_eq!(db_free_results(std::ptr::null_mut()), 1);
        }
    }

    #[test]
    fn a_kept_answer_that_breaks_off_fails_the_call() {
        let mut con = FakeConn::new();
        let c = con.get();
        let mut kept = text_answer(3, &[]);
        kept.truncate(12);
        c.inner.kept = kept;
        assert!(query_answered(c, &Outcome { result_sets: 1, ..Outcome::default() }).is_null());
        assert_eq!((c.error, c.inner.state), (super::super::DB_ERROR_FATAL, SqlConnState::Invalid));
    }
}
