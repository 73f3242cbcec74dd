//! `prepare`, `prewarm` and `cleanup`: the commands that create, warm and
//! drop the test's tables, over the async client, as sysbench's threads
//! run them (table t+1, t+1+threads, ... by thread t). A signal stops them
//! where they stand, and they say what they had done.

use std::sync::Arc;

use wirebench_protocol::response::PreparedStatement;

use super::interrupt::Interrupts;
use super::load_method::{loading_connections, rows_by, LoadPlan, RowsBy};
use super::missing_table::{tables_like, MissingTable, TableCensus, NO_SUCH_TABLE};
use super::output::{alert_line, stderr_line, Level, Output};
use super::setup::{connect_options, connect_unless_dry, for_each_connection, rand_params, seed};
use super::shard_plan::{shard_statements, ShardThreads};
use super::shared_steps::SharedSteps;
use super::table_progress::TableProgress;
use super::{RunError, RunOutcome};
use crate::cli::{Bench, Command, Dialect};
use crate::client::Connection;
use crate::rand::Rng;
use crate::stats::report;
use crate::transport::tls::ClientTls;
use crate::workload::{bulk_param_types, BatchForm, PrepareStep, ScriptContext, Workload};

pub(super) async fn prepare(
    bench: &Bench,
    shard_threads: ShardThreads,
    tls: Option<&ClientTls>,
    workload: Arc<dyn Workload>,
    interrupts: &Interrupts,
) -> Result<RunOutcome, RunError> {
    let (params, seed) = (rand_params(bench)?, seed(bench));
    let threads = shard_threads.total;
    let first = || (ScriptContext { thread: 0, threads }, Rng::for_thread(seed, 0, params));
    let has_data = workload.prepare_data(first().0, first().1, BatchForm::Lines).is_some();
    let LoadPlan { rows_by, server_cores } = rows_by(bench, tls, has_data).await?;
    let total = prepared_tables(bench);
    // Rows that carry their ids make the same table in any order, so the
    // connections beyond one per table can share the tables' loads.
    let any_order = match rows_by {
        RowsBy::LoadData { .. } | RowsBy::BulkExecute { .. } => true,
        RowsBy::Insert => workload.prepare_numbered(first().0, first().1).is_some(),
    };
    // A shard's connections share only what no other shard sends: with
    // shards, each loads its own tables alone.
    let whole = bench.general.shard.is_whole();
    let sources = if any_order && whole && total > 0 { threads.min(total) } else { bench.general.threads };
    let loaders = loading_connections(bench.general.threads, sources, server_cores);
    let shared = sources < loaders;
    let progress = Arc::new(TableProgress::default());
    let statements = move |n| {
        let thread = shard_threads.global(n as usize);
        let rng = Rng::for_thread(seed, thread, params);
        let steps = load_steps(workload.as_ref(), ScriptContext { thread, threads }, rng, rows_by, shared);
        let workload = workload.clone();
        let mut loading = String::new();
        steps.map(move |step| {
            if let Some(message) = workload.progress_line(step_sql(&step).as_ref(), &mut loading) {
                Output::report().line(message)?;
            }
            Ok(step)
        })
    };
    let work = per_thread(bench, shard_threads, tls, (statements, sources, loaders), &progress, rows_by);
    let work = with_load_reports(bench.general.report_interval, &progress, work);
    stop_on_signal(interrupts, Command::Prepare, work, || progress.prepare_summary(total)).await
}

/// The steps of one thread's load, its rows as `rows_by` says; `shared`
/// when other connections help send them, in any order.
fn load_steps(
    workload: &dyn Workload,
    context: ScriptContext,
    rng: Rng,
    rows_by: RowsBy,
    shared: bool,
) -> Box<dyn Iterator<Item = PrepareStep> + Send> {
    let none = || -> Box<dyn Iterator<Item = PrepareStep> + Send> { Box::new(std::iter::empty()) };
    match rows_by {
        RowsBy::LoadData { .. } | RowsBy::BulkExecute { .. } => {
            workload.prepare_data(context, rng, rows_by.batch_form()).unwrap_or_else(none)
        }
        RowsBy::Insert if shared => workload.prepare_numbered(context, rng).unwrap_or_else(none),
        RowsBy::Insert => Box::new(workload.prepare(context, rng).map(PrepareStep::Sql)),
    }
}

/// Runs `work`; every `--report-interval` seconds meanwhile, one line on
/// stderr with the rows each table being loaded has and its rows/s over
/// the interval (sysbench's prepare reports nothing, so stdout stays its).
async fn with_load_reports(
    interval: Option<u32>,
    progress: &TableProgress,
    work: impl std::future::Future<Output = Result<(), RunError>>,
) -> Result<(), RunError> {
    let Some(secs) = interval else { return work.await };
    let period = std::time::Duration::from_secs(u64::from(secs));
    let start = tokio::time::Instant::now();
    let mut ticks = tokio::time::interval_at(start + period, period);
    let mut before: std::collections::HashMap<String, u64> = std::collections::HashMap::new();
    tokio::pin!(work);
    loop {
        tokio::select! {
            done = &mut work => return done,
            _ = ticks.tick() => {
                let now = progress.loading();
                let tables: Vec<String> = now.iter().map(|(table, rows)| {
                    let per_sec = rows.saturating_sub(before.get(table).copied().unwrap_or(0)) / u64::from(secs);
                    format!("{table} {rows} rows ({per_sec} rows/s)")
                }).collect();
                if !tables.is_empty() {
                    let elapsed = start.elapsed().as_secs();
                    stderr_line(format_args!("wirebench: [ {elapsed}s ] prepare: {}", tables.join(", ")));
                }
                before = now.into_iter().collect();
            }
        }
    }
}

/// The SQL a step sends.
fn step_sql(step: &PrepareStep) -> std::borrow::Cow<'_, str> {
    match step {
        PrepareStep::Sql(sql) | PrepareStep::Insert(sql) => sql.into(),
        PrepareStep::Rows(batch) => batch.sql().into(),
    }
}

pub(super) async fn prewarm(
    bench: &Bench,
    shard_threads: ShardThreads,
    tls: Option<&ClientTls>,
    workload: Arc<dyn Workload>,
    interrupts: &Interrupts,
) -> Result<RunOutcome, RunError> {
    let threads = shard_threads.total;
    let progress = Arc::new(TableProgress::default());
    let statements = move |n| {
        workload.prewarm(ScriptContext { thread: shard_threads.global(n as usize), threads }).into_iter().map(|sql| {
            // oltp_common.lua's cmd_prewarm() prints this before each table's ANALYZE.
            if let Some(table) = sql.strip_prefix("ANALYZE TABLE ") {
                Output::report().line(format_args!("Prewarming table {table}"))?;
            }
            Ok(PrepareStep::Sql(sql))
        })
    };
    let all = bench.general.threads;
    let work = per_thread(bench, shard_threads, tls, (statements, all, all), &progress, RowsBy::Insert);
    let summary = || {
        progress.stop_sending();
        "it only reads, so there is nothing to undo".to_owned()
    };
    stop_on_signal(interrupts, Command::Prewarm, work, summary).await
}

pub(super) async fn cleanup(
    bench: &Bench,
    tls: Option<&ClientTls>,
    workload: Arc<dyn Workload>,
    interrupts: &Interrupts,
) -> Result<RunOutcome, RunError> {
    let progress = TableProgress::default();
    let statements = shard_statements(bench.general.shard, workload.cleanup());
    if statements.is_empty() && !bench.general.shard.is_whole() {
        stderr_line(format_args!("wirebench: shard {} has no table to drop", bench.general.shard));
        return Ok(RunOutcome::Completed);
    }
    let total = statements.len() as u32;
    let work = async {
        let mut conn = connect_unless_dry(&connect_options(bench, tls, 0), bench.mysql.dry_run).await?;
        for sql in statements {
            if let Some(message) = workload.progress_line(&sql, &mut String::new()) {
                Output::report().line(message)?;
            }
            if let Some(conn) = conn.as_mut() {
                if !progress.sending(&sql) {
                    break;
                }
                conn.query_drop(&sql).await?;
                progress.done(&sql, None);
            }
        }
        Ok(())
    };
    stop_on_signal(interrupts, Command::Cleanup, work, || progress.cleanup_summary(total)).await
}

/// `error`, with what the database holds of the test's tables when a table
/// was missing; `error` itself when it is another error, or when the
/// tables cannot be listed (the error is still the news).
pub(super) async fn with_table_census(bench: &Bench, tls: Option<&ClientTls>, error: RunError) -> RunError {
    let Some(missing) = error.server_error(NO_SUCH_TABLE).and_then(MissingTable::parse) else { return error };
    let Ok(present) = tables_like(&connect_options(bench, tls, 0), &missing.prefix).await else { return error };
    let tables_option = (bench.legacy.is_none() && bench.test.uses_oltp_common()).then_some(bench.test_options.tables);
    RunError::MissingTable { error: Box::new(error), census: TableCensus { missing, present, tables_option } }
}

/// Runs `work`, or stops it where it stands when a signal comes and says
/// what had been done (`summary`).
async fn stop_on_signal(
    interrupts: &Interrupts,
    command: Command,
    work: impl std::future::Future<Output = Result<(), RunError>>,
    summary: impl FnOnce() -> String,
) -> Result<RunOutcome, RunError> {
    match interrupts.or_signal(work).await {
        Ok(done) => done.map(|()| RunOutcome::Completed),
        Err(signal) => {
            alert_line(format_args!("wirebench: {command} interrupted by {signal}: {}", summary()));
            Ok(RunOutcome::Interrupted(signal))
        }
    }
}

/// How many tables `prepare` makes: `--tables`, or one per thread for
/// bulk_insert.
fn prepared_tables(bench: &Bench) -> u32 {
    if bench.test == crate::workload::Test::BulkInsert {
        bench.general.threads
    } else {
        bench.test_options.tables
    }
}

/// One connection per `--threads` ("worker threads" to sysbench) of this
/// shard, all at once, sending the steps `steps(n)` yields for `sources`
/// of them (none sent with `--mysql-dry-run`) until the first failure, its
/// own or (the progress messages) the output's; `progress` hears of each.
/// With more connections than sources, connection n shares the steps of
/// source n % sources with the others of that source; connections from
/// `loaders` on only connect, as sysbench's threads without a table do.
/// Rows go as `rows_by` says.
async fn per_thread<I>(
    bench: &Bench,
    shard_threads: ShardThreads,
    tls: Option<&ClientTls>,
    (steps, sources, loaders): (impl Fn(u32) -> I, u32, u32),
    progress: &Arc<TableProgress>,
    rows_by: RowsBy,
) -> Result<(), RunError>
where
    I: Iterator<Item = Result<PrepareStep, RunError>> + Send + 'static,
{
    if sysbench_starts_workers(bench) {
        Level::Notice.print(report::INITIALIZING_WORKERS)?;
    }
    let threads = bench.general.threads as usize;
    let dry_run = bench.mysql.dry_run;
    let shared: Vec<Arc<SharedSteps<I>>> = (0..sources.max(1)).map(|t| Arc::new(SharedSteps::new(steps(t)))).collect();
    for_each_connection(threads, threads, |n| {
        let mut options = connect_options(bench, tls, shard_threads.global(n) as usize);
        options.local_infile = matches!(rows_by, RowsBy::LoadData { .. });
        options.bulk_operations = matches!(rows_by, RowsBy::BulkExecute { .. });
        let steps = shared[n % shared.len()].clone();
        let progress = progress.clone();
        async move {
            let mut conn = connect_unless_dry(&options, dry_run).await?;
            if n >= loaders as usize {
                return Ok(());
            }
            let mut insert = None;
            while let Some(step) = steps.take(&progress).await {
                let step = step?;
                let touched = match conn.as_mut() {
                    Some(conn) => {
                        let sql = step_sql(&step);
                        if !progress.sending(&sql) {
                            // Interrupted: the summary is written, and says nothing of this.
                            return Ok(());
                        }
                        let rows = send_step(conn, &step, rows_by, &mut insert).await?;
                        progress.done(&sql, rows)
                    }
                    None => None,
                };
                steps.finished(&step, touched, &progress).await;
            }
            Ok(())
        }
    })
    .await?;
    Ok(())
}

/// Sends one step; the rows it loaded, for a batch of rows. `insert` is
/// the connection's prepared INSERT for bulk rows, of the table it loaded last.
async fn send_step(
    conn: &mut Connection,
    step: &PrepareStep,
    rows_by: RowsBy,
    insert: &mut Option<(u32, PreparedStatement)>,
) -> Result<Option<u64>, RunError> {
    let batch = match step {
        PrepareStep::Sql(sql) | PrepareStep::Insert(sql) => {
            return conn.query_drop(sql).await.map(|_| None).map_err(RunError::Client)
        }
        PrepareStep::Rows(batch) => batch,
    };
    match rows_by {
        RowsBy::BulkExecute { charset, .. } => {
            let statement = match insert.take() {
                Some((table, statement)) if table == batch.table => statement,
                other => {
                    if let Some((_, done)) = other {
                        conn.close_statement(done.statement_id()).await?;
                    }
                    conn.prepare(&batch.insert_sql()).await?
                }
            };
            let sent = conn.bulk_execute(&statement, &bulk_param_types(charset), &batch.data).await;
            *insert = Some((batch.table, statement));
            sent?;
        }
        // Batches come only when the rows go as data; a connection without
        // CLIENT_LOCAL_FILES would refuse to send them.
        RowsBy::LoadData { max_payload, charset } => {
            conn.load_data_local(&batch.sql_read_as(charset), &batch.file_name(), &batch.data, max_payload).await?;
        }
        RowsBy::Insert => {
            conn.load_data_local(&batch.sql(), &batch.file_name(), &batch.data, 0).await?;
        }
    }
    Ok(Some(u64::from(batch.rows)))
}

/// Whether sysbench runs this `prepare` or `prewarm` in worker threads,
/// and so says "Initializing worker threads...": oltp_common.lua's are
/// parallel commands, which `sb_lua_call_custom_command()` runs in threads
/// only when there is more than one; bulk_insert.lua's prepare and the
/// 0.4/0.5 scripts' run in the main thread.
fn sysbench_starts_workers(bench: &Bench) -> bool {
    bench.general.threads > 1 && bench.test.uses_oltp_common() && bench.dialect == Dialect::V1_0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rand::RandParams;
    use crate::workload::{oltp_read_write, OltpOptions};

    /// Shared INSERTs carry every row's id, with auto_inc too (the server
    /// would number id-less rows in the order they arrive from the
    /// connections); alone they are sysbench's.
    #[test]
    fn shared_inserts_name_their_ids() {
        let options = OltpOptions { tables: 2, table_size: 5000, auto_inc: true, ..OltpOptions::default() };
        let workload = oltp_read_write::workload(&options).unwrap();
        let inserts = |shared| -> Vec<PrepareStep> {
            let rng = Rng::for_thread(1, 0, RandParams::default());
            let context = ScriptContext { thread: 0, threads: 4 };
            load_steps(&workload, context, rng, RowsBy::Insert, shared)
                .filter(|s| step_sql(s).starts_with("INSERT"))
                .collect()
        };
        // Rows, not a barrier: they go concurrently with the table's other rows.
        let shared = inserts(true);
        assert!(shared.len() > 1);
        assert!(shared.iter().all(
            |s| matches!(s, PrepareStep::Insert(sql) if sql.starts_with("INSERT INTO sbtest1(id, k, c, pad) VALUES("))
        ));
        assert!(step_sql(&shared[0]).starts_with("INSERT INTO sbtest1(id, k, c, pad) VALUES(1, "));
        let alone = inserts(false);
        assert!(alone
            .iter()
            .all(|s| matches!(s, PrepareStep::Sql(sql) if sql.starts_with("INSERT INTO sbtest1(k, c, pad) VALUES("))));
    }
}
