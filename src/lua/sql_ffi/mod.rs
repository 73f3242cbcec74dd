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
//!
//! Files, one per object of `sysbench.sql` (this file holds the error codes
//! and the logging and counting they share):
//! - `sql_structs.rs`: the structures as `sysbench.sql` declares them, with
//!   what wirebench keeps behind each, and the checks of a script's pointers.
//! - `sql_driver.rs`: the driver (`db_create`, `db_destroy`).
//! - `sql_connection.rs`: a connection (`db_connection_*`, `db_query`), its
//!   calls to the loop and its error fields.
//! - `sql_result.rs`: a result and its rows (`db_fetch_row`,
//!   `db_free_results`).
//! - `sql_statement.rs`: a prepared statement (`db_prepare`, `db_bind_*`,
//!   `db_execute`, `db_close`) and its bound values.
//! - `sql_bulk.rs`: a bulk INSERT (`db_bulk_insert_*`).
//! - `sql_fixtures.rs`: the unit tests' connection without a loop, and a
//!   kept text answer.

mod sql_bulk;
mod sql_connection;
mod sql_driver;
#[cfg(test)]
mod sql_fixtures;
mod sql_result;
mod sql_statement;
mod sql_structs;

use std::ffi::{c_char, c_int};

use super::context;
use crate::driver::CounterKind;

/// `sql_error_t`.
const DB_ERROR_NONE: c_int = 0;
const DB_ERROR_IGNORABLE: c_int = 1;
const DB_ERROR_FATAL: c_int = 2;

/// sysbench's `log_text(LOG_ALERT, ...)`.
fn alert(message: &str) {
    eprintln!("ALERT: {message}");
}

/// sysbench's `log_text(LOG_FATAL, ...)`, with the server's text made safe.
fn fatal(message: &str) {
    eprintln!("FATAL: {message}");
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
