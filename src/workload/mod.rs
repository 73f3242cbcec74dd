//! Workloads: what to send. Each sysbench 1.0.20 test is one file here, the
//! sysbench 0.4 and 0.5 tests are in [`legacy`]; the driver (how to send
//! it) and the stats collector (what happened) know nothing of SQL.
//!
//! A workload names the statements every connection prepares, makes one
//! [`Script`] per connection, and produces the SQL of the `prepare`,
//! `prewarm` and `cleanup` commands. A script emits one command at a time,
//! when the driver has room to send it: with `--pipeline=1` that is sysbench's
//! closed loop (send, wait for the answer, send the next), with more it keeps
//! several commands in flight. Emitting patches a pre-encoded
//! COM_STMT_EXECUTE in place and appends it to the send buffer (with
//! `--db-ps-mode=disable`, renders it as COM_QUERY text instead: see
//! [`EmulatedStatement`]): no allocation per query.
//!
//! Layer: below the driver; it may import rand and the protocol crate, and
//! owns the list of tests ([`Test`]) and their options ([`OltpOptions`]).
//!
//! Files:
//! - `test.rs`: the eleven tests, the one list of them; one file per test:
//!   `oltp_read_only.rs`, `oltp_read_write.rs`, `oltp_write_only.rs`,
//!   `oltp_point_select.rs`, `oltp_update_index.rs`,
//!   `oltp_update_non_index.rs`, `oltp_delete.rs`, `oltp_insert.rs`,
//!   `select_random_points.rs`, `select_random_ranges.rs`, `bulk_insert.rs`.
//! - `oltp_workload.rs`: the OLTP tests' event engine (`oltp_common.lua`);
//!   `oltp_statements.rs`: its statements and event steps;
//!   `table_load.rs`: their tables' `prepare`, `prewarm` and `cleanup`;
//!   `oltp_options.rs`: their options.
//! - `common.rs`: what sysbench's scripts share below their statements
//!   (the `c` and `pad` templates, the bulk-insert size, `%d`).
//! - `sbtest_insert.rs`: the one-row INSERT of oltp_insert and 0.5's
//!   insert.lua and oltp.lua.
//! - `table_data.rs`: `prepare`'s rows as data for LOAD DATA.
//! - `emulated.rs`: `--db-ps-mode=disable`'s emulated statements; `kind.rs`:
//!   each statement's kind, for the per-statement report.
//! - `legacy/`: the sysbench 0.4 and 0.5 tests.
//! - `testkit.rs` (tests): a script run into memory, its commands decoded.

mod common;
mod emulated;
mod kind;
pub mod legacy;
mod oltp_options;
mod oltp_statements;
mod oltp_workload;
mod sbtest_insert;
mod table_data;
mod table_load;
mod test;

pub(crate) mod bulk_insert;
pub(crate) mod oltp_delete;
pub(crate) mod oltp_insert;
pub(crate) mod oltp_point_select;
pub(crate) mod oltp_read_only;
pub(crate) mod oltp_read_write;
pub(crate) mod oltp_update_index;
pub(crate) mod oltp_update_non_index;
pub(crate) mod oltp_write_only;
pub(crate) mod select_random_points;
pub(crate) mod select_random_ranges;

#[cfg(test)]
pub(crate) mod testkit;

pub use emulated::EmulatedStatement;
pub(crate) use emulated::MarkerMismatch;
pub(crate) use kind::StatementKind;
pub use oltp_options::OltpOptions;
pub(crate) use oltp_options::OptionsError;
pub(crate) use oltp_options::PrepareMethod;
#[cfg(test)]
pub(crate) use table_data::RowBatch;
pub(crate) use table_data::{bulk_param_types, BatchForm, DataCharset, PrepareStep};
pub use test::Test;

use wirebench_protocol::command::{ExecuteTemplate, ParamSlot};
use wirebench_protocol::framing;
use wirebench_protocol::response::RowFormat;
use wirebench_protocol::UsageError;

use crate::rand::Rng;

/// Index of a statement in [`Workload::statements`].
pub type StmtId = usize;

/// A statement every connection prepares before the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatementSpec {
    pub sql: String,
    /// Parameter types, in order: sysbench binds integers and strings.
    pub slots: Vec<ParamSlot>,
}

/// Which SQL a command carried, to name it when the server refuses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandSql {
    /// Statement `StmtId` of [`Workload::statements`], executed, or sent as
    /// text with its values (`--db-ps-mode=disable`).
    Statement(StmtId),
    /// Fixed SQL, or for SQL built with values, its form (values as
    /// sysbench's Lua script formats them: `%d`, `'%s'`).
    Text(&'static [u8]),
}

/// Who a script runs for: sysbench's thread number decides some tests'
/// id ranges (select_random_points) and tables (bulk_insert).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScriptContext {
    /// 0-based connection ("thread") number.
    pub thread: u32,
    /// Number of connections in the run (`--threads`).
    pub threads: u32,
}

/// What a script reports after writing a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// More commands of this event follow.
    More,
    /// The command just written is the event's last.
    Last,
}

/// A script's failure: a bug or a bad parameter, never a server answer.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    #[error("statement {stmt}: {source}")]
    Param { stmt: StmtId, source: UsageError },
    #[error("statement {0} is not prepared on this connection")]
    UnknownStatement(StmtId),
}

/// Where a script writes its commands: the connection's prepared
/// statements and its send buffer.
pub struct CommandSink<'a> {
    templates: &'a mut [ExecuteTemplate],
    /// With `--db-ps-mode=disable`: executes go out as text.
    emulated: Option<&'a [EmulatedStatement]>,
    out: &'a mut Vec<u8>,
    format: Option<RowFormat>,
    sql: CommandSql,
    /// The kind of the last COM_QUERY written (an execute's kind is its
    /// statement's, [`Workload::statement_kinds`]).
    query_kind: StatementKind,
}

impl<'a> CommandSink<'a> {
    pub fn new(templates: &'a mut [ExecuteTemplate], out: &'a mut Vec<u8>) -> Self {
        CommandSink {
            templates,
            emulated: None,
            out,
            format: None,
            sql: CommandSql::Text(b""),
            query_kind: StatementKind::Other,
        }
    }

    /// Sends executes as COM_QUERY text rendered from the patched templates
    /// (sysbench's `--db-ps-mode=disable`) when `emulated` is given, one
    /// per statement.
    pub fn emulating(mut self, emulated: Option<&'a [EmulatedStatement]>) -> Self {
        self.emulated = emulated;
        self
    }

    /// Patches statement `stmt`'s parameters with `fill`, then appends its
    /// COM_STMT_EXECUTE to the send buffer, or, when emulating, a COM_QUERY
    /// with the values substituted into its SQL.
    pub fn execute(
        &mut self,
        stmt: StmtId,
        fill: impl FnOnce(&mut ExecuteTemplate) -> Result<(), UsageError>,
    ) -> Result<(), WorkloadError> {
        let template = self.templates.get_mut(stmt).ok_or(WorkloadError::UnknownStatement(stmt))?;
        fill(template).map_err(|source| WorkloadError::Param { stmt, source })?;
        match self.emulated {
            None => {
                self.out.extend_from_slice(template.packet());
                self.format = Some(RowFormat::Binary);
            }
            Some(emulated) => {
                let statement = emulated.get(stmt).ok_or(WorkloadError::UnknownStatement(stmt))?;
                let start = framing::start_packet(self.out);
                self.out.push(wirebench_protocol::constants::command::COM_QUERY);
                statement.render(template, self.out);
                framing::finish_packet(self.out, start, 0);
                self.format = Some(RowFormat::Text);
            }
        }
        self.sql = CommandSql::Statement(stmt);
        Ok(())
    }

    /// Appends a COM_QUERY whose SQL `write` appends to the buffer it is
    /// given (format with `std::io::Write` on it: no allocation); `form` is
    /// what an error names it by, the SQL with its values left out.
    pub fn query_with(&mut self, form: &'static [u8], write: impl FnOnce(&mut Vec<u8>)) {
        let start = framing::start_packet(self.out);
        self.out.push(wirebench_protocol::constants::command::COM_QUERY);
        write(self.out);
        framing::finish_packet(self.out, start, 0);
        self.format = Some(RowFormat::Text);
        self.sql = CommandSql::Text(form);
    }

    /// Appends a COM_QUERY with fixed SQL text.
    pub fn query(&mut self, sql: &'static [u8]) {
        self.query_with(sql, |out| out.extend_from_slice(sql));
    }

    /// Appends a COM_QUERY with fixed SQL text, of kind `kind` (BEGIN).
    pub fn query_as(&mut self, kind: StatementKind, sql: &'static [u8]) {
        self.query(sql);
        self.set_query_kind(kind);
    }

    /// Says what the COM_QUERY just written is (other unless said).
    pub fn set_query_kind(&mut self, kind: StatementKind) {
        self.query_kind = kind;
    }

    /// The kind of the last COM_QUERY written: what
    /// [`query_as`](Self::query_as) said, or other.
    pub fn take_query_kind(&mut self) -> StatementKind {
        std::mem::replace(&mut self.query_kind, StatementKind::Other)
    }

    /// The row format of the last command written, for the response reader.
    pub fn take_format(&mut self) -> Option<RowFormat> {
        self.format.take()
    }

    /// The SQL of the last command written.
    pub fn command_sql(&self) -> CommandSql {
        self.sql
    }
}

/// One connection's generator of events.
///
/// Reproducing sysbench's values: with a fixed `--rand-seed` a script draws
/// exactly what sysbench's Lua `event()` draws, in the same order. sysbench
/// itself draws once more from the same generator after every event: its
/// `sb_event_stop` picks a latency-histogram slot with
/// `sb_rand_uniform_uint64()` whenever `--percentile` is not 0 (default 95).
/// A driver that wants sysbench's exact sequence calls `rng.next_u64()`
/// after each event's [`Step::Last`] command, as the tests do.
pub trait Script: Send {
    /// Writes the next command of the current event into `sink`, starting
    /// a new event after the previous one's last command. Exactly one
    /// command per call.
    fn next(&mut self, rng: &mut Rng, sink: &mut CommandSink<'_>) -> Result<Step, WorkloadError>;

    /// Abandons the rest of the current event (after an ignored error, as
    /// sysbench re-runs `event()` from the start); the next call begins a
    /// new event.
    fn restart_event(&mut self);

    /// How many sysbench events the event just completed stands for: 1,
    /// except for bulk_insert, whose sysbench event appends one row to a
    /// client-side buffer while a wirebench event sends the whole buffer
    /// (see [`bulk_insert`]).
    fn last_event_weight(&self) -> u64 {
        1
    }

    /// How many sysbench events beyond the first one event may stand for
    /// at most (bulk_insert: the rows that fit in one statement). The
    /// session takes that many from the budget before the event, where
    /// `--events` allows, and says how many it got with
    /// [`limit_event_weight`](Self::limit_event_weight).
    fn max_extra_weight(&self) -> u64 {
        0
    }

    /// The next event may stand for at most `limit` sysbench events.
    fn limit_event_weight(&mut self, _limit: u64) {}
}

/// A sysbench test.
pub trait Workload: Send + Sync {
    /// The test's name as sysbench spells it (`oltp_read_only`).
    fn name(&self) -> &'static str;

    /// The statements each connection prepares; a [`StmtId`] indexes this list.
    fn statements(&self) -> Vec<StatementSpec>;

    /// The script of one connection.
    fn script(&self, context: ScriptContext) -> Box<dyn Script>;

    /// SQL for `prepare` run by connection `context.thread`: sysbench spreads
    /// tables over threads (thread t creates tables t+1, t+1+threads, ...).
    /// Statements are produced lazily: data loads are large. By default
    /// oltp_common.lua's load of [`Workload::common_tables`]; nothing
    /// without them.
    fn prepare(&self, context: ScriptContext, rng: Rng) -> Box<dyn Iterator<Item = String> + Send> {
        match self.common_tables() {
            Some((options, rows)) => Box::new(table_load::TableLoad::new(options, rows, context, rng)),
            None => Box::new(std::iter::empty()),
        }
    }

    /// The tables `prepare` loads as oltp_common.lua does: their options
    /// and the rows each gets. `None` for the scripts whose load is sent
    /// only as sysbench sends it, which then have their own `prepare`,
    /// `prewarm`, `cleanup` and `progress_line`; [`Workload::prepare_data`]
    /// and [`Workload::prepare_numbered`] follow from it.
    fn common_tables(&self) -> Option<(&OltpOptions, u32)> {
        None
    }

    /// `prepare` with the rows as data (for LOAD DATA LOCAL INFILE or
    /// COM_STMT_BULK_EXECUTE, in `form`) rather than INSERTs, the same
    /// tables and rows.
    fn prepare_data(
        &self,
        context: ScriptContext,
        rng: Rng,
        form: BatchForm,
    ) -> Option<Box<dyn Iterator<Item = PrepareStep> + Send>> {
        let (options, rows) = self.common_tables()?;
        Some(Box::new(table_data::TableData::new(options, rows, context, rng, form)))
    }

    /// `prepare`'s INSERTs with every row's id in them (`INSERT INTO
    /// sbtest1(id, k, c, pad) ...` also with `auto_inc`, the ids the server
    /// would give), the same tables and rows: several connections may then
    /// send one table's INSERTs ([`PrepareStep::Insert`]) in any order.
    fn prepare_numbered(
        &self,
        context: ScriptContext,
        rng: Rng,
    ) -> Option<Box<dyn Iterator<Item = PrepareStep> + Send>> {
        let (options, rows) = self.common_tables()?;
        Some(table_data::numbered_load(options, rows, context, rng))
    }

    /// SQL for `prewarm`, spread over threads like `prepare`; by default
    /// oltp_common.lua's, on [`Workload::common_tables`].
    fn prewarm(&self, context: ScriptContext) -> Vec<String> {
        self.common_tables().map_or_else(Vec::new, |(options, _)| table_load::prewarm_sql(options, context))
    }

    /// SQL for `cleanup` (run by one connection); by default
    /// oltp_common.lua's, dropping [`Workload::common_tables`].
    fn cleanup(&self) -> Vec<String> {
        self.common_tables().map_or_else(Vec::new, |(options, _)| table_load::cleanup_sql(options.tables))
    }

    /// The line the script prints as `prepare` or `cleanup` is about to
    /// send `sql` (sysbench's "Creating table 'sbtest1'..."), if any.
    /// `loading` is the table whose rows are being inserted: a script
    /// announces a table's rows once, before the first INSERT. By default
    /// oltp_common.lua's, for [`Workload::common_tables`].
    fn progress_line(&self, sql: &str, loading: &mut String) -> Option<String> {
        let (options, _) = self.common_tables()?;
        table_load::oltp_common_progress_line(sql, loading, options.table_size)
    }

    /// SQL run once before `run` starts its events, on a connection of its
    /// own (0.4 emptied its table before a nontrx insert run).
    fn before_run(&self) -> Vec<String> {
        Vec::new()
    }

    /// The kind of each statement of [`statements`](Self::statements), in
    /// the same order, for the per-statement report; other by default.
    fn statement_kinds(&self) -> Vec<StatementKind> {
        vec![StatementKind::Other; self.statements().len()]
    }

    /// Whether every event is one transaction, BEGIN to COMMIT
    /// (oltp_read_only, oltp_read_write and oltp_write_only unless
    /// `--skip_trx=on`). With `--pipeline` > 1 such a test's connections
    /// turn autocommit off, so that what is left of a failed event, already
    /// sent, still runs inside a transaction that its own COMMIT ends.
    fn events_are_transactions(&self) -> bool {
        false
    }
}
