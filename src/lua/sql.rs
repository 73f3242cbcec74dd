//! `sysbench.sql`'s connections, statements and results over the async
//! client, each call blocking on the state's own runtime as sysbench's
//! calls block on libmysqlclient. Every query of `run` is counted as the
//! engine counts it (read, write or other, from its answer), an ignored
//! error as an error, a connection opened again as a reconnect.
//!
//! A failed SQL call does not raise here: it returns `nil` and the error's
//! description, and the prelude raises it at the script's line, as
//! sysbench's `check_error` does.

use std::cell::RefCell;
use std::future::Future;
use std::rc::Rc;

use mlua::{Lua, Table, UserData, UserDataMethods, Value};
use wirebench_protocol::command::{encode_execute, Param};
use wirebench_protocol::response::{PreparedStatement, QueryResult, Response, ResultSet, RowFormat};

use super::state::ThreadCtx;
use crate::client::{ClientError, ConnectOptions, Connection};
use crate::driver::{CR_SERVER_GONE_ERROR, CR_SERVER_LOST};

/// libmysqlclient's CR_SERVER_LOST_EXTENDED, which sysbench also reconnects on.
const CR_SERVER_LOST_EXTENDED: u16 = 2055;
use crate::stats::QueryKind;

/// sysbench's `BULK_PACKET_SIZE`: a bulk INSERT is sent before it grows past this.
const BULK_PACKET_SIZE: usize = 512 * 1024;

/// Marks the error raised when `--time` (and its grace) passed while a
/// call waited: the thread stops without counting the event.
pub(crate) const CUT_MARK: &str = "wirebench: the run's time is up";

/// Adds `connect` and `driver_made` to `raw`.
pub(crate) fn install(lua: &Lua, raw: &Table) -> mlua::Result<()> {
    raw.set(
        "driver_made",
        lua.create_function(|lua, ()| {
            context(lua)?.env.sql_used.store(true, std::sync::atomic::Ordering::Relaxed);
            Ok(())
        })?,
    )?;
    raw.set(
        "connect",
        lua.create_function(|lua, ()| {
            let options = {
                let ctx = context(lua)?;
                (ctx.env.connect)(ctx.tid)
            };
            let conn = Rc::new(RefCell::new(SqlConn { conn: None, options, bulk: None }));
            match open(lua, &conn) {
                Ok(()) => Ok((Some(SqlHandle(conn)), None)),
                Err(failure) => Ok((None, Some(failure.into_lua(lua)?))),
            }
        })?,
    )
}

fn context(lua: &Lua) -> mlua::Result<mlua::AppDataRefMut<'_, ThreadCtx>> {
    lua.app_data_mut::<ThreadCtx>().ok_or_else(|| mlua::Error::runtime("no thread context"))
}

/// A failed call: what `check_error` gets (`sql_errno`, `sql_state`,
/// `sql_errmsg`) and whether `--mysql-ignore-errors` lists it.
struct Failure {
    errno: u16,
    state: String,
    message: String,
    ignorable: bool,
}

impl Failure {
    fn into_lua(self, lua: &Lua) -> mlua::Result<Table> {
        let t = lua.create_table()?;
        t.set("sql_errno", self.errno)?;
        t.set("sql_state", self.state)?;
        t.set("sql_errmsg", self.message)?;
        t.set("ignorable", self.ignorable)?;
        Ok(t)
    }
}

/// One connection and its bulk INSERT buffer.
struct SqlConn {
    conn: Option<Connection>,
    options: ConnectOptions,
    bulk: Option<Bulk>,
}

struct Bulk {
    sql: String,
    /// Length of the `INSERT ... VALUES` head.
    head: usize,
    rows: usize,
}

/// Runs `fut` on the state's runtime, giving up at the run's cut.
fn block<T>(lua: &Lua, fut: impl Future<Output = Result<T, ClientError>>) -> mlua::Result<Result<T, ClientError>> {
    let (runtime, cut_at) = {
        let ctx = context(lua)?;
        (ctx.runtime.clone(), ctx.cut_at)
    };
    runtime.block_on(async move {
        match cut_at {
            Some(at) => tokio::time::timeout_at(at, fut).await.map_err(|_| mlua::Error::runtime(CUT_MARK)),
            None => Ok(fut.await),
        }
    })
}

/// Opens (or opens again) `conn`'s connection.
fn open(lua: &Lua, conn: &Rc<RefCell<SqlConn>>) -> Result<(), Failure> {
    let options = conn.borrow().options.clone();
    match block(lua, async move { Connection::connect(&options).await }) {
        Ok(Ok(opened)) => {
            conn.borrow_mut().conn = Some(opened);
            Ok(())
        }
        Ok(Err(error)) => Err(failure(lua, &error)),
        Err(cut) => {
            Err(Failure { errno: CR_SERVER_LOST, state: "HY000".into(), message: cut.to_string(), ignorable: false })
        }
    }
}

/// What a client error is to the script: the server's error, or a lost
/// connection (2013, as libmysqlclient says).
fn failure(lua: &Lua, error: &ClientError) -> Failure {
    let (errno, state, message) = match error.server_error() {
        Some(e) => (e.code, e.sql_state_str().unwrap_or("HY000").to_owned(), e.message.clone()),
        None => (CR_SERVER_LOST, "HY000".to_owned(), error.to_string()),
    };
    let ignorable = context(lua).is_ok_and(|ctx| ctx.env.ignore.ignores(errno));
    Failure { errno, state, message, ignorable }
}

/// Counts a query of `run` as the engine does.
fn count(lua: &Lua, result_sets: bool, affected_rows: u64) -> mlua::Result<()> {
    if let Some(stats) = context(lua)?.stats.as_mut() {
        stats.record_query(QueryKind::classify(result_sets, affected_rows));
    }
    Ok(())
}

/// Counts a failed call as sysbench's driver does: an error, except a
/// lost connection that `--mysql-ignore-errors` lists, which is opened
/// again (sysbench's retry loop) and counted as a reconnect.
fn after_error(lua: &Lua, conn: &Rc<RefCell<SqlConn>>, mut failure: Failure) -> mlua::Result<Table> {
    let lost = matches!(failure.errno, CR_SERVER_LOST | CR_SERVER_GONE_ERROR | CR_SERVER_LOST_EXTENDED);
    if failure.ignorable && lost && reopen(lua, conn)? {
        if let Some(stats) = context(lua)?.stats.as_mut() {
            stats.record_reconnect();
        }
        return failure.into_lua(lua);
    }
    // A lost connection that could not be opened again ends the script.
    failure.ignorable &= !lost;
    if let Some(stats) = context(lua)?.stats.as_mut() {
        stats.record_error();
    }
    failure.into_lua(lua)
}

/// How long sysbench's reconnect loop waits between two attempts.
const RECONNECT_PAUSE: std::time::Duration = std::time::Duration::from_millis(1);

/// sysbench's `mysql_drv_reconnect`: tries again until the connection
/// opens; false when the run was stopped meanwhile (a fatal error
/// elsewhere, a signal). `--time` ends the wait as it ends any call.
fn reopen(lua: &Lua, conn: &Rc<RefCell<SqlConn>>) -> mlua::Result<bool> {
    conn.borrow_mut().conn = None;
    loop {
        match open(lua, conn) {
            Ok(()) => return Ok(true),
            Err(failure) if failure.message.contains(CUT_MARK) => return Err(mlua::Error::runtime(CUT_MARK)),
            Err(_) => {}
        }
        if context(lua)?.control.as_ref().is_some_and(|c| c.is_stopped()) {
            return Ok(false);
        }
        std::thread::sleep(RECONNECT_PAUSE);
    }
}

/// The error for a call on a connection that is not open.
fn closed() -> ClientError {
    ClientError::Usage {
        endpoint: crate::client::Endpoint::tcp("-", 0),
        message: "the connection is closed (disconnect() was called, or it was lost)".to_owned(),
    }
}

/// `con:query(sql)`: the result as a table (`nrows`, `nfields`, `rows`).
fn query(lua: &Lua, conn: &Rc<RefCell<SqlConn>>, sql: &str) -> mlua::Result<(Option<Table>, Option<Table>)> {
    let mut taken = conn.borrow_mut().conn.take();
    let answer = block(lua, async {
        match taken.as_mut() {
            Some(c) => c.query(sql).await,
            None => Err(closed()),
        }
    })?;
    conn.borrow_mut().conn = taken;
    match answer {
        Ok(response) => {
            let table = result_table(lua, &response)?;
            let affected =
                response.results.iter().map(|r| if let QueryResult::Ok(ok) = r { ok.affected_rows } else { 0 }).sum();
            count(lua, response.result_sets().next().is_some(), affected)?;
            Ok((Some(table), None))
        }
        Err(error) => {
            let failure = failure(lua, &error);
            Ok((None, Some(after_error(lua, conn, failure)?)))
        }
    }
}

/// sysbench's result: `nrows` (rows, or affected rows), `nfields`, and the
/// rows as text for `fetch_row`.
fn result_table(lua: &Lua, response: &Response) -> mlua::Result<Table> {
    let table = lua.create_table()?;
    let rows = lua.create_table()?;
    let (mut nrows, mut nfields) = (0u64, 0usize);
    for result in &response.results {
        match result {
            QueryResult::Ok(ok) => nrows = ok.affected_rows,
            QueryResult::ResultSet(rs) => {
                nfields = rs.columns.len();
                let text = rs.text_rows().map_err(mlua::Error::external)?;
                nrows = text.len() as u64;
                for row in text {
                    let values = lua.create_table()?;
                    for (i, value) in row.into_iter().enumerate() {
                        if let Some(value) = value {
                            values.raw_set(i + 1, lua.create_string(&value)?)?;
                        }
                    }
                    rows.raw_push(values)?;
                }
            }
            _ => {}
        }
    }
    table.set("nrows", nrows)?;
    table.set("nfields", nfields)?;
    table.set("rows", rows)?;
    Ok(table)
}

/// A connection as Lua holds it.
struct SqlHandle(Rc<RefCell<SqlConn>>);

impl UserData for SqlHandle {
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_method("query", |lua, this, sql: mlua::String| query(lua, &this.0, &sql.to_str()?));
        methods.add_method("prepare", |lua, this, sql: mlua::String| prepare(lua, &this.0, &sql.to_str()?));
        methods.add_method("bulk_insert_init", |_, this, sql: mlua::String| {
            let sql = sql.to_str()?.to_owned();
            this.0.borrow_mut().bulk = Some(Bulk { head: sql.len(), sql, rows: 0 });
            Ok(())
        });
        methods.add_method("bulk_insert_next", |lua, this, row: mlua::String| bulk_next(lua, &this.0, &row.to_str()?));
        methods.add_method("bulk_insert_done", |lua, this, ()| {
            let flushed = bulk_flush(lua, &this.0)?;
            this.0.borrow_mut().bulk = None;
            Ok(flushed)
        });
        methods.add_method("disconnect", |lua, this, ()| {
            let taken = this.0.borrow_mut().conn.take();
            if let Some(conn) = taken {
                let _ = block(lua, conn.quit())?;
            }
            Ok(())
        });
        // sysbench's db_connection_reconnect: the retry loop, counted as a reconnect.
        methods.add_method("reconnect", |lua, this, ()| {
            let reopened = reopen(lua, &this.0)?;
            if let Some(stats) = context(lua)?.stats.as_mut() {
                if reopened {
                    stats.record_reconnect();
                } else {
                    stats.record_error();
                }
            }
            Ok(reopened)
        });
        methods.add_meta_method("__tostring", |_, _, ()| Ok("<sql_connection>"));
    }
}

/// `con:bulk_insert_next(row)`: appends the row, sending what the buffer
/// holds first when the row would take it past sysbench's limit.
fn bulk_next(lua: &Lua, conn: &Rc<RefCell<SqlConn>>, row: &str) -> mlua::Result<Option<Table>> {
    let full = {
        let guard = conn.borrow();
        let bulk = guard
            .bulk
            .as_ref()
            .ok_or_else(|| mlua::Error::runtime("bulk_insert_next() called before bulk_insert_init()"))?;
        bulk.sql.len() + row.len() + 1 + usize::from(bulk.rows > 0) > BULK_PACKET_SIZE
    };
    if full {
        if let Some(error) = bulk_flush(lua, conn)? {
            return Ok(Some(error));
        }
    }
    let mut guard = conn.borrow_mut();
    if let Some(bulk) = guard.bulk.as_mut() {
        if bulk.rows > 0 {
            bulk.sql.push(',');
        }
        bulk.sql.push_str(row);
        bulk.rows += 1;
    }
    Ok(None)
}

/// Sends the rows buffered, if any.
fn bulk_flush(lua: &Lua, conn: &Rc<RefCell<SqlConn>>) -> mlua::Result<Option<Table>> {
    let sql = {
        let mut guard = conn.borrow_mut();
        let Some(bulk) = guard.bulk.as_mut().filter(|b| b.rows > 0) else { return Ok(None) };
        let sql = bulk.sql.clone();
        bulk.sql.truncate(bulk.head);
        bulk.rows = 0;
        sql
    };
    let (_, error) = query(lua, conn, &sql)?;
    Ok(error)
}

/// `con:prepare(sql)`: a statement, or the error (not counted: sysbench's
/// driver counts the errors of queries and executions only).
fn prepare(lua: &Lua, conn: &Rc<RefCell<SqlConn>>, sql: &str) -> mlua::Result<(Option<SqlStatement>, Option<Table>)> {
    let mut taken = conn.borrow_mut().conn.take();
    let answer = block(lua, async {
        match taken.as_mut() {
            Some(c) => c.prepare(sql).await,
            None => Err(closed()),
        }
    })?;
    conn.borrow_mut().conn = taken;
    match answer {
        Ok(statement) => {
            Ok((Some(SqlStatement { conn: conn.clone(), statement: Some(statement), packet: Vec::new() }), None))
        }
        Err(error) => Ok((None, Some(failure(lua, &error).into_lua(lua)?))),
    }
}

/// A prepared statement, executed with its parameters encoded into one
/// COM_STMT_EXECUTE buffer reused from call to call.
struct SqlStatement {
    conn: Rc<RefCell<SqlConn>>,
    statement: Option<PreparedStatement>,
    packet: Vec<u8>,
}

impl UserData for SqlStatement {
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_method_mut("execute", |lua, this, params: Table| execute(lua, this, &params));
        methods.add_method_mut("close", |lua, this, ()| {
            let Some(statement) = this.statement.take() else { return Ok(()) };
            let mut taken = this.conn.borrow_mut().conn.take();
            let id = statement.statement_id();
            let _ = block(lua, async {
                match taken.as_mut() {
                    Some(c) => c.close_statement(id).await,
                    None => Ok(()),
                }
            })?;
            this.conn.borrow_mut().conn = taken;
            Ok(())
        });
        methods.add_method("nparams", |_, this, ()| Ok(this.statement.as_ref().map_or(0, |s| s.params.len())));
        methods.add_meta_method("__tostring", |_, _, ()| Ok("<sql_statement>"));
    }
}

/// sysbench's bind types as the prelude stores them (`sysbench.sql.type`).
const SQL_TYPE_BIGINT: i64 = 4;
const SQL_TYPE_DOUBLE: i64 = 6;

/// `stmt:execute()` with the bound parameters (`params[i].value`).
fn execute(lua: &Lua, this: &mut SqlStatement, params: &Table) -> mlua::Result<(Option<Table>, Option<Table>)> {
    let statement = this.statement.as_ref().ok_or_else(|| mlua::Error::runtime("execute() on a closed statement"))?;
    let mut texts: Vec<mlua::String> = Vec::new();
    let mut kinds: Vec<(i64, Value)> = Vec::with_capacity(params.raw_len());
    for param in params.sequence_values::<Table>() {
        let param = param?;
        kinds.push((param.raw_get("type")?, param.raw_get("value")?));
    }
    for (_, value) in &kinds {
        if let Value::String(s) = value {
            texts.push(s.clone());
        }
    }
    let borrowed: Vec<mlua::BorrowedBytes> = texts.iter().map(|s| s.as_bytes()).collect();
    let mut strings = borrowed.iter();
    let mut values = Vec::with_capacity(kinds.len());
    for (kind, value) in &kinds {
        values.push(match (value, *kind) {
            (Value::Nil, _) => Param::Null,
            (Value::String(_), _) => Param::Bytes(strings.next().map_or(&[][..], |b| &b[..])),
            (Value::Integer(n), SQL_TYPE_DOUBLE) => Param::F64(*n as f64),
            (Value::Number(n), SQL_TYPE_DOUBLE) => Param::F64(*n),
            (Value::Integer(n), SQL_TYPE_BIGINT) => Param::I64(*n),
            (Value::Number(n), SQL_TYPE_BIGINT) => Param::I64(*n as i64),
            (other, _) => return Err(mlua::Error::runtime(format!("cannot bind a {} value", other.type_name()))),
        });
    }
    if values.len() != statement.params.len() {
        return Err(mlua::Error::runtime(format!(
            "the statement takes {} parameters and {} are bound: call stmt:bind_param() with all of them",
            statement.params.len(),
            values.len()
        )));
    }
    if !statement.columns.is_empty() {
        let mut taken = this.conn.borrow_mut().conn.take();
        let answer = block(lua, async {
            match taken.as_mut() {
                Some(c) => c.execute(statement, &values).await,
                None => Err(closed()),
            }
        })?;
        this.conn.borrow_mut().conn = taken;
        return match answer {
            Ok(response) => Ok((Some(rows_table(lua, response)?), None)),
            Err(error) => {
                let failure = failure(lua, &error);
                Ok((None, Some(after_error(lua, &this.conn, failure)?)))
            }
        };
    }
    this.packet.clear();
    encode_execute(&mut this.packet, statement.statement_id(), &values);
    let nfields = statement.columns.len();
    let packet = std::mem::take(&mut this.packet);
    let mut taken = this.conn.borrow_mut().conn.take();
    let answer = block(lua, async {
        match taken.as_mut() {
            Some(c) => c.send_command(&packet, RowFormat::Binary).await,
            None => Err(closed()),
        }
    })?;
    this.conn.borrow_mut().conn = taken;
    this.packet = packet;
    match answer {
        Ok(outcome) => {
            count(lua, outcome.result_sets > 0, outcome.affected_rows)?;
            let table = lua.create_table()?;
            table.set("nrows", if outcome.result_sets > 0 { outcome.rows } else { outcome.affected_rows })?;
            table.set("nfields", nfields)?;
            Ok((Some(table), None))
        }
        Err(error) => {
            let failure = failure(lua, &error);
            Ok((None, Some(after_error(lua, &this.conn, failure)?)))
        }
    }
}

/// A prepared statement's result set: `nrows`, `nfields`, and the rows
/// kept as the server sent them, each made a Lua table only when
/// `fetch_row` asks for it.
fn rows_table(lua: &Lua, response: Response) -> mlua::Result<Table> {
    let affected: u64 =
        response.results.iter().map(|r| if let QueryResult::Ok(ok) = r { ok.affected_rows } else { 0 }).sum();
    count(lua, response.result_sets().next().is_some(), affected)?;
    let table = lua.create_table()?;
    let rows = response.results.into_iter().find_map(|r| match r {
        QueryResult::ResultSet(rs) => Some(rs),
        _ => None,
    });
    match rows {
        Some(rows) => {
            table.set("nrows", rows.rows.len())?;
            table.set("nfields", rows.columns.len())?;
            table.set("binary_rows", BinaryRows(rows))?;
        }
        None => {
            table.set("nrows", affected)?;
            table.set("nfields", 0)?;
        }
    }
    Ok(table)
}

/// The rows of a prepared statement's result.
struct BinaryRows(ResultSet);

impl UserData for BinaryRows {
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        // Row `n` (from 1) as `fetch_row` gives it: values as text, NULL as nil.
        methods.add_method("row", |lua, this, n: usize| {
            let Some(row) = n.checked_sub(1).and_then(|i| this.0.rows.get(i)) else { return Ok(None) };
            let values = lua.create_table()?;
            for (i, value) in row.text_values(&this.0.columns).map_err(mlua::Error::external)?.into_iter().enumerate() {
                if let Some(value) = value {
                    values.raw_set(i + 1, lua.create_string(&value)?)?;
                }
            }
            Ok(Some(values))
        });
    }
}
