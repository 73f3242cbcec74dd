//! `sysbench.sql`'s connections, statements and results. A call sends its
//! command on the connection's non-blocking socket and returns; the
//! prelude then waits for the answer: a state running on a loop
//! (`loops.rs`) yields to the loop, which resumes it once the answer is
//! in; any other state (the main state, a command's) waits on the socket
//! itself, as sysbench's calls block on libmysqlclient. Every query of
//! `run` is counted as the engine counts it (read, write or other, from
//! its answer), an ignored error as an error, a connection opened again
//! as a reconnect.
//!
//! A failed SQL call does not raise here: it returns `nil` and the error's
//! description, and the prelude raises it at the script's line, as
//! sysbench's `check_error` does.

use std::cell::RefCell;
use std::rc::Rc;

use mlua::{Lua, MultiValue, Table, UserData, UserDataMethods, Value, Variadic};
use smallvec::SmallVec;
use wirebench_protocol::command::{ExecuteTemplate, Param, ParamSlot};
use wirebench_protocol::response::{PreparedStatement, QueryResult, Response, ResultSet};

use super::state::ThreadCtx;
use crate::client::{ClientError, ConnectOptions, Connection, PolledAnswer, PolledConnection};
use crate::driver::{CR_SERVER_GONE_ERROR, CR_SERVER_LOST};
use crate::stats::QueryKind;

/// libmysqlclient's CR_SERVER_LOST_EXTENDED, which sysbench also reconnects on.
const CR_SERVER_LOST_EXTENDED: u16 = 2055;

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
            let conn = Rc::new(RefCell::new(SqlConn {
                conn: None,
                options,
                bulk: None,
                finish: Finish::Query,
                answer: None,
                watched: None,
                serial: 0,
                fetched: None,
            }));
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

/// One connection, its bulk INSERT buffer, and the call under way.
pub(crate) struct SqlConn {
    conn: Option<PolledConnection>,
    options: ConnectOptions,
    bulk: Option<Bulk>,
    /// What the answer of the call under way becomes for the script.
    finish: Finish,
    /// The call's answer, once it is in (or the error that ended it).
    answer: Option<Result<PolledAnswer, ClientError>>,
    /// How a loop's epoll watches `conn`'s socket, if it does.
    watched: Option<SocketWatch>,
    /// Counts the calls: a result names the call it came from, and only
    /// the latest call's rows can be fetched (sysbench's driver keeps only
    /// a connection's latest result set).
    serial: u64,
    /// The latest execution's rows, decoded when first fetched.
    fetched: Option<ResultSet>,
}

/// What a loop's epoll waits for on a connection's socket: its answer,
/// and also room to write while a command is not all out (never
/// otherwise: each answer read would wake the loop again for the room it
/// makes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SocketWatch {
    Read,
    ReadWrite,
}

/// What a call makes of its answer.
enum Finish {
    /// `con:query()`: a result with its rows as text.
    Query,
    /// `stmt:execute()` of a statement with `nfields` columns: a result
    /// whose rows are decoded only if fetched.
    Execute { nfields: usize },
    /// `con:prepare()`: a statement.
    Prepare,
    /// The rows a bulk INSERT buffered are sent: then `row` (if any) is
    /// appended to the emptied buffer.
    Bulk { row: Option<String> },
}

struct Bulk {
    sql: String,
    /// Length of the `INSERT ... VALUES` head.
    head: usize,
    rows: usize,
}

impl SqlConn {
    /// What a loop's epoll must be told, if anything, to watch the
    /// connection's socket as its call now needs (for its answer, and for
    /// room to write while the command is not all out): the socket, how,
    /// and whether epoll watches it already. Recorded as told.
    pub(crate) fn rewatch(&mut self) -> Option<(std::os::fd::RawFd, SocketWatch, bool)> {
        let conn = self.conn.as_ref()?;
        let watch = if conn.wants_write() { SocketWatch::ReadWrite } else { SocketWatch::Read };
        let known = self.watched.replace(watch);
        (known != Some(watch)).then(|| (conn.fd(), watch, known.is_some()))
    }

    /// Reads what has come; true once the call's answer (or its failure) is in.
    pub(crate) fn progress(&mut self) -> bool {
        if self.answer.is_some() {
            return true;
        }
        let Some(conn) = self.conn.as_mut() else { return true };
        match conn.progress() {
            Ok(None) => false,
            Ok(Some(answer)) => {
                self.answer = Some(Ok(answer));
                true
            }
            Err(error) => {
                self.failed(error);
                true
            }
        }
    }

    /// The call failed: a server's error leaves the connection as it is,
    /// any other (lost, broken protocol) closes it.
    fn failed(&mut self, error: ClientError) {
        if error.server_error().is_none() {
            self.conn = None;
        }
        self.answer = Some(Err(error));
    }

    /// The run's time is up while the call waited: the connection is
    /// dropped with its unread answer.
    pub(crate) fn cut(&mut self) {
        self.conn = None;
    }

    /// Starts a call with `send`; false when it failed at once (the
    /// failure is the answer).
    fn start(&mut self, finish: Finish, send: impl FnOnce(&mut PolledConnection) -> Result<(), ClientError>) -> bool {
        self.finish = finish;
        self.answer = None;
        self.serial += 1;
        self.fetched = None;
        let sent = match self.conn.as_mut() {
            Some(conn) => send(conn),
            None => Err(closed()),
        };
        match sent {
            Ok(()) => true,
            Err(error) => {
                self.failed(error);
                false
            }
        }
    }
}

/// Opens (or opens again) `conn`'s connection, waiting for it.
fn open(lua: &Lua, conn: &Rc<RefCell<SqlConn>>) -> Result<(), Failure> {
    let options = conn.borrow().options.clone();
    let runtime = context(lua).map(|ctx| (ctx.runtime.clone(), ctx.cut_at));
    let Ok((runtime, cut_at)) = runtime else { return Err(cut_failure("no thread context")) };
    let opened = runtime.block_on(async {
        let connect = Connection::connect(&options);
        match cut_at {
            Some(at) => tokio::time::timeout_at(at.into(), connect).await.ok(),
            None => Some(connect.await),
        }
    });
    let polled = match opened {
        Some(Ok(opened)) => PolledConnection::from_connection(opened, options.max_packet_size as usize),
        Some(Err(error)) => Err(error),
        None => return Err(cut_failure(CUT_MARK)),
    };
    match polled {
        Ok(polled) => {
            let mut guard = conn.borrow_mut();
            guard.conn = Some(polled);
            guard.watched = None;
            Ok(())
        }
        Err(error) => Err(failure(lua, &error)),
    }
}

fn cut_failure(message: &str) -> Failure {
    Failure { errno: CR_SERVER_LOST, state: "HY000".into(), message: message.to_owned(), ignorable: false }
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

/// `raw:wait()`: waits here for the answer of the call under way, until
/// the run's cut.
fn wait_here(lua: &Lua, conn: &Rc<RefCell<SqlConn>>) -> mlua::Result<()> {
    let cut_at = context(lua)?.cut_at;
    let mut guard = conn.borrow_mut();
    if guard.answer.is_some() {
        return Ok(());
    }
    let Some(polled) = guard.conn.as_mut() else {
        guard.answer = Some(Err(closed()));
        return Ok(());
    };
    match polled.wait(cut_at) {
        Ok(Some(answer)) => guard.answer = Some(Ok(answer)),
        Ok(None) => {
            guard.cut();
            return Err(mlua::Error::runtime(CUT_MARK));
        }
        Err(error) => guard.failed(error),
    }
    Ok(())
}

/// `raw:answer()`: the call's answer as the script gets it, counted (the
/// loop resumes a state with it, `raw:wait()` returns it). An execution's answer is three numbers rather than a table, which the
/// prelude makes: `nrows`, then `nfields` and the call's serial after the
/// error slot.
pub(crate) type LuaAnswer = (Value, Option<Table>, Option<usize>, Option<u64>);

pub(crate) fn call_answer(lua: &Lua, conn: &Rc<RefCell<SqlConn>>) -> mlua::Result<LuaAnswer> {
    let (answer, finish) = {
        let mut guard = conn.borrow_mut();
        let finish = std::mem::replace(&mut guard.finish, Finish::Query);
        (guard.answer.take().unwrap_or_else(|| Err(closed())), finish)
    };
    let answer = match answer {
        Ok(answer) => answer,
        Err(error) => {
            let failure = failure(lua, &error);
            if matches!(finish, Finish::Prepare) {
                // sysbench's driver counts the errors of queries and executions only.
                return Ok((Value::Nil, Some(failure.into_lua(lua)?), None, None));
            }
            return Ok((Value::Nil, Some(after_error(lua, conn, failure)?), None, None));
        }
    };
    match (finish, answer) {
        (Finish::Query, PolledAnswer::Response(response)) => {
            Ok((Value::Table(query_result(lua, &response)?), None, None, None))
        }
        (Finish::Execute { nfields }, PolledAnswer::Walked(outcome)) => {
            count(lua, outcome.result_sets > 0, outcome.affected_rows)?;
            let nrows = if outcome.result_sets > 0 { outcome.rows } else { outcome.affected_rows };
            Ok((Value::Number(nrows as f64), None, Some(nfields), Some(conn.borrow().serial)))
        }
        (Finish::Bulk { row }, PolledAnswer::Response(response)) => {
            count_response(lua, &response)?;
            bulk_sent(&mut conn.borrow_mut(), row);
            Ok((Value::Boolean(true), None, None, None))
        }
        (Finish::Prepare, PolledAnswer::Prepared(statement)) => {
            let statement =
                SqlStatement { conn: conn.clone(), statement: Some(statement), types: Vec::new(), template: None };
            Ok((Value::UserData(lua.create_userdata(statement)?), None, None, None))
        }
        (_, other) => Err(mlua::Error::runtime(format!("wirebench: an answer of the wrong kind: {other:?}"))),
    }
}

/// `con:query(sql)`: the result as a table (`nrows`,/// `con:query(sql)`'s result as a table (`nrows`, `nfields`, `rows`), counted.
fn query_result(lua: &Lua, response: &Response) -> mlua::Result<Table> {
    let table = result_table(lua, response)?;
    count_response(lua, response)?;
    Ok(table)
}

fn count_response(lua: &Lua, response: &Response) -> mlua::Result<()> {
    count(lua, response.result_sets().next().is_some(), affected_rows(response))
}

fn affected_rows(response: &Response) -> u64 {
    response.results.iter().map(|r| if let QueryResult::Ok(ok) = r { ok.affected_rows } else { 0 }).sum()
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

/// A connection as Lua holds it. Its calls only start: the prelude then
/// waits (`wait`, or a yield to the loop) and takes the `answer`.
pub(crate) struct SqlHandle(pub(crate) Rc<RefCell<SqlConn>>);

impl UserData for SqlHandle {
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_method("query", |_, this, sql: mlua::String| {
            Ok(this.0.borrow_mut().start(Finish::Query, |c| c.send_query(&sql.as_bytes())))
        });
        methods.add_method("prepare", |_, this, sql: mlua::String| {
            Ok(this.0.borrow_mut().start(Finish::Prepare, |c| c.send_prepare(&sql.as_bytes())))
        });
        methods.add_method("wait", |lua, this, ()| {
            wait_here(lua, &this.0)?;
            call_answer(lua, &this.0)
        });
        methods.add_method("answer", |lua, this, ()| call_answer(lua, &this.0));
        methods.add_method("bulk_insert_init", |_, this, sql: mlua::String| {
            let sql = sql.to_str()?.to_owned();
            this.0.borrow_mut().bulk = Some(Bulk { head: sql.len(), sql, rows: 0 });
            Ok(())
        });
        methods.add_method("bulk_insert_next", |_, this, row: mlua::String| bulk_next(&this.0, &row.to_str()?));
        methods.add_method("bulk_insert_done", |_, this, ()| {
            let mut guard = this.0.borrow_mut();
            let started = bulk_send(&mut guard, None);
            guard.bulk = None;
            Ok(started)
        });
        methods.add_method("disconnect", |_, this, ()| {
            if let Some(conn) = this.0.borrow_mut().conn.take() {
                conn.quit();
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

/// `con:bulk_insert_next(row)`: appends the row, or first sends what the
/// buffer holds when the row would take it past sysbench's limit (the row
/// follows once that is answered). Whether a call started (`nil`: none).
fn bulk_next(conn: &Rc<RefCell<SqlConn>>, row: &str) -> mlua::Result<Option<bool>> {
    let mut guard = conn.borrow_mut();
    let bulk = guard
        .bulk
        .as_mut()
        .ok_or_else(|| mlua::Error::runtime("bulk_insert_next() called before bulk_insert_init()"))?;
    if bulk.sql.len() + row.len() + 1 + usize::from(bulk.rows > 0) > BULK_PACKET_SIZE && bulk.rows > 0 {
        return Ok(bulk_send(&mut guard, Some(row.to_owned())));
    }
    bulk_append(bulk, row);
    Ok(None)
}

fn bulk_append(bulk: &mut Bulk, row: &str) {
    if bulk.rows > 0 {
        bulk.sql.push(',');
    }
    bulk.sql.push_str(row);
    bulk.rows += 1;
}

/// Sends the rows buffered, if any, emptying the buffer.
fn bulk_send(conn: &mut SqlConn, row: Option<String>) -> Option<bool> {
    let bulk = conn.bulk.as_mut().filter(|b| b.rows > 0)?;
    let sql = std::mem::take(&mut bulk.sql);
    bulk.sql.push_str(&sql[..bulk.head]);
    bulk.rows = 0;
    Some(conn.start(Finish::Bulk { row }, |c| c.send_query(sql.as_bytes())))
}

/// The bulk INSERT was answered: the row that did not fit goes in.
fn bulk_sent(conn: &mut SqlConn, row: Option<String>) {
    if let (Some(bulk), Some(row)) = (conn.bulk.as_mut(), row) {
        bulk_append(bulk, &row);
    }
}

/// A prepared statement, executed with its parameters as bound.
struct SqlStatement {
    conn: Rc<RefCell<SqlConn>>,
    statement: Option<PreparedStatement>,
    /// The parameters' types (`sysbench.sql.type`), from `bind_param`.
    types: Vec<i64>,
    /// The COM_STMT_EXECUTE laid out for the values' types and sizes,
    /// each execution patching the values in (while they keep those
    /// sizes: sysbench's strings do).
    template: Option<ExecuteTemplate>,
}

impl UserData for SqlStatement {
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_method_mut("execute", |_, this, values: MultiValue| execute_statement(this, &values));
        methods.add_method_mut("bind_types", |_, this, types: Variadic<i64>| {
            this.types = types.to_vec();
            Ok(())
        });
        methods.add_method_mut("close", |_, this, ()| {
            let Some(statement) = this.statement.take() else { return Ok(()) };
            if let Some(conn) = this.conn.borrow_mut().conn.as_mut() {
                // No answer to wait for; a lost connection shows on the next call.
                let _ = conn.send_close_statement(statement.statement_id());
            }
            Ok(())
        });
        methods.add_method("nparams", |_, this, ()| Ok(this.statement.as_ref().map_or(0, |s| s.params.len())));
        methods.add_method("row", |lua, this, (serial, n): (u64, usize)| fetch_row(lua, this, serial, n));
        methods.add_meta_method("__tostring", |_, _, ()| Ok("<sql_statement>"));
    }
}

/// sysbench's bind types as the prelude stores them (`sysbench.sql.type`).
const SQL_TYPE_BIGINT: i64 = 4;
const SQL_TYPE_DOUBLE: i64 = 6;

/// Parameters encoded without a heap allocation.
const INLINE_PARAMS: usize = 8;

/// `stmt:execute()` with the values of the parameters bound (`values`, of
/// the types `bind_types` gave): starts it.
fn execute_statement(this: &mut SqlStatement, values: &MultiValue) -> mlua::Result<bool> {
    let statement = this.statement.as_ref().ok_or_else(|| mlua::Error::runtime("execute() on a closed statement"))?;
    if values.len() != statement.params.len() || this.types.len() != values.len() {
        return Err(mlua::Error::runtime(format!(
            "the statement takes {} parameters and {} are bound: call stmt:bind_param() with all of them",
            statement.params.len(),
            this.types.len()
        )));
    }
    let texts: SmallVec<[Option<mlua::BorrowedBytes>; INLINE_PARAMS]> =
        values.iter().map(|v| if let Value::String(s) = v { Some(s.as_bytes()) } else { None }).collect();
    let mut params: SmallVec<[Param; INLINE_PARAMS]> = SmallVec::with_capacity(values.len());
    for ((value, kind), text) in values.iter().zip(&this.types).zip(&texts) {
        params.push(match (value, *kind, text) {
            (_, _, Some(bytes)) => Param::Bytes(bytes),
            (Value::Nil, _, _) => Param::Null,
            (Value::Integer(n), SQL_TYPE_DOUBLE, _) => Param::F64(*n as f64),
            (Value::Number(n), SQL_TYPE_DOUBLE, _) => Param::F64(*n),
            (Value::Integer(n), SQL_TYPE_BIGINT, _) => Param::I64(*n),
            (Value::Number(n), SQL_TYPE_BIGINT, _) => Param::I64(*n as i64),
            (other, _, _) => return Err(mlua::Error::runtime(format!("cannot bind a {} value", other.type_name()))),
        });
    }
    let (id, nfields) = (statement.statement_id(), statement.columns.len());
    let finish = Finish::Execute { nfields };
    if !this.template.as_mut().is_some_and(|t| patch(t, &params)) {
        this.template = template_for_params(id, &params);
    }
    let keep = nfields > 0;
    Ok(match &this.template {
        Some(template) => this.conn.borrow_mut().start(finish, |c| c.send_encoded_execute(template.packet(), keep)),
        None => this.conn.borrow_mut().start(finish, |c| c.send_execute_walked(id, &params, keep)),
    })
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

/// Row `n` (from 1) of the result of call `serial` on `conn`, a
/// statement's execution, as `fetch_row` gives it: values as text, NULL as
/// nil; `nil` past the last row.
fn fetch_row(lua: &Lua, this: &SqlStatement, serial: u64, n: usize) -> mlua::Result<Option<Table>> {
    let mut guard = this.conn.borrow_mut();
    if guard.serial != serial {
        return Err(mlua::Error::runtime(
            "fetch_row() on a result set that a later query on the same connection replaced: fetch its rows \
             before the next query (a connection keeps only its latest result set, as in sysbench)",
        ));
    }
    if guard.fetched.is_none() {
        let columns = this.statement.as_ref().map(|s| s.columns.clone()).unwrap_or_default();
        let polled = guard.conn.as_ref().ok_or_else(|| mlua::Error::runtime("the connection is closed"))?;
        let response = polled.kept_response(columns).map_err(mlua::Error::external)?;
        guard.fetched = response.results.into_iter().find_map(|r| match r {
            QueryResult::ResultSet(rs) => Some(rs),
            _ => None,
        });
    }
    let Some(rows) = guard.fetched.as_ref() else { return Ok(None) };
    let Some(row) = n.checked_sub(1).and_then(|i| rows.rows.get(i)) else { return Ok(None) };
    let values = lua.create_table()?;
    for (i, value) in row.text_values(&rows.columns).map_err(mlua::Error::external)?.into_iter().enumerate() {
        if let Some(value) = value {
            values.raw_set(i + 1, lua.create_string(&value)?)?;
        }
    }
    Ok(Some(values))
}
