//! A bulk INSERT (`db_bulk_insert_init`, `_next`, `_done`): rows appended
//! to one `INSERT ... VALUES` and sent before it grows past sysbench's
//! packet size, as sysbench's `db_driver.c` does.

use std::ffi::{c_char, c_int};

use wirebench_protocol::command;

use super::alert;
use super::bytes;
use super::sql_result::query_answered;
use super::sql_structs::{connection, Bulk, SqlConnState, SqlConnection};
use crate::driver::{CallAnswer, CallError, Expect};
use crate::lua::ffi::guarded;

/// sysbench's `BULK_PACKET_SIZE`: a bulk INSERT is sent before it grows past this.
const BULK_PACKET_SIZE: usize = 512 * 1024;

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

#[cfg(test)]
mod tests {
    use super::super::sql_fixtures::FakeConn;
    use super::*;

    /// Calls `f` with a Rust string as C's pointer and length.
    fn with_text(text: &str, f: impl FnOnce(*const c_char, usize) -> c_int) -> c_int {
        f(text.as_ptr().cast(), text.len())
    }

    #[test]
    fn rows_are_joined_into_one_insert() {
        let mut con = FakeConn::new();
        // SAFETY: a connection made as db_connection_create makes one.
        unsafe {
            assert_eq!(with_text("INSERT INTO t VALUES", |p, n| db_bulk_insert_init(con.0, p, n)), 0);
            assert_eq!(with_text("(1,'a')", |p, n| db_bulk_insert_next(con.0, p, n)), 0);
            assert_eq!(with_text("(2,'b')", |p, n| db_bulk_insert_next(con.0, p, n)), 0);
        }
        let bulk = con.get().inner.bulk.as_ref().unwrap();
        assert_eq!(String::from_utf8_lossy(&bulk.sql), "INSERT INTO t VALUES (1,'a'),(2,'b')");
        assert_eq!((bulk.head, bulk.rows), ("INSERT INTO t VALUES ".len(), 2));
    }

    /// A row that would take the INSERT past sysbench's packet size sends
    /// what is buffered first: here the send fails (no loop), and so does
    /// the call, the buffer back to its head.
    #[test]
    fn a_row_past_the_packet_size_sends_the_buffered_rows_first() {
        let mut con = FakeConn::new();
        let row = format!("('{}')", "x".repeat(BULK_PACKET_SIZE / 2));
        // SAFETY: a connection made as db_connection_create makes one.
        unsafe {
            assert_eq!(with_text("INSERT INTO t VALUES", |p, n| db_bulk_insert_init(con.0, p, n)), 0);
            assert_eq!(with_text(&row, |p, n| db_bulk_insert_next(con.0, p, n)), 0, "the first row always fits");
            assert_eq!(with_text(&row, |p, n| db_bulk_insert_next(con.0, p, n)), 1);
        }
        let bulk = con.get().inner.bulk.as_ref().unwrap();
        assert_eq!((bulk.sql.as_slice(), bulk.rows), (&b"INSERT INTO t VALUES "[..], 0));
        assert_eq!(con.get().inner.state, SqlConnState::Invalid);
        // SAFETY: as above.
        assert_eq!(unsafe { db_bulk_insert_done(con.0) }, 0, "nothing left to send");
        assert!(con.get().inner.bulk.is_none());
    }

    #[test]
    fn out_of_order_calls_and_closed_connections_are_refused() {
        let mut con = FakeConn::new();
        // SAFETY: a connection made as db_connection_create makes one; NULL is none.
        unsafe {
            assert_eq!(with_text("(1)", |p, n| db_bulk_insert_next(con.0, p, n)), 1, "before init");
            assert_eq!(db_bulk_insert_done(con.0), 0);
            assert_eq!(with_text("INSERT INTO t VALUES", |p, n| db_bulk_insert_init(con.0, p, n)), 0);
            assert_eq!(with_text("(1)", |p, n| db_bulk_insert_next(con.0, p, n)), 0);
            assert_eq!(db_bulk_insert_done(con.0), 1, "the send fails: no loop");
            assert!(con.get().inner.bulk.is_none());
            assert_eq!(with_text("INSERT INTO t VALUES", |p, n| db_bulk_insert_init(con.0, p, n)), 1, "closed");
            assert_eq!(with_text("INSERT", |p, n| db_bulk_insert_init(std::ptr::null_mut(), p, n)), 1);
            assert_eq!(db_bulk_insert_done(std::ptr::null_mut()), 1);
        }
    }
}
