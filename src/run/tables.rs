//! `prepare`, `prewarm` and `cleanup`: the commands that create, warm and
//! drop the test's tables, over the async client, as sysbench's threads
//! run them (table t+1, t+1+threads, ... by thread t). A signal stops them
//! where they stand, and they say what they had done.

use std::sync::Arc;

use super::interrupt::Interrupts;
use super::output::{alert_line, Level, Output};
use super::setup::{connect_options, connect_unless_dry, for_each_connection, rand_params, seed};
use super::table_progress::TableProgress;
use super::{Outcome, RunError};
use crate::cli::{Bench, Command, Dialect};
use crate::rand::Rng;
use crate::stats::report;
use crate::transport::tls::ClientTls;
use crate::workload::{ScriptContext, Workload};

pub(super) async fn prepare(
    bench: &Bench,
    tls: Option<&ClientTls>,
    workload: Arc<dyn Workload>,
    interrupts: &Interrupts,
) -> Result<Outcome, RunError> {
    let (params, seed) = (rand_params(bench)?, seed(bench));
    let threads = bench.general.threads;
    let progress = Arc::new(TableProgress::default());
    let statements = move |thread| {
        let rng = Rng::for_thread(seed, thread, params);
        let mut loading = String::new();
        let statements = workload.prepare(ScriptContext { thread, threads }, rng);
        let workload = workload.clone();
        statements.map(move |sql| {
            if let Some(message) = workload.progress_line(&sql, &mut loading) {
                Output::report().line(message)?;
            }
            Ok(sql)
        })
    };
    let work = per_thread(bench, tls, statements, &progress);
    let total = prepared_tables(bench);
    stop_on_signal(interrupts, Command::Prepare, work, || progress.prepare_summary(total)).await
}

pub(super) async fn prewarm(
    bench: &Bench,
    tls: Option<&ClientTls>,
    workload: Arc<dyn Workload>,
    interrupts: &Interrupts,
) -> Result<Outcome, RunError> {
    let threads = bench.general.threads;
    let progress = Arc::new(TableProgress::default());
    let statements = move |thread| {
        workload.prewarm(ScriptContext { thread, threads }).into_iter().map(|sql| {
            // oltp_common.lua's cmd_prewarm() prints this before each table's ANALYZE.
            if let Some(table) = sql.strip_prefix("ANALYZE TABLE ") {
                Output::report().line(format_args!("Prewarming table {table}"))?;
            }
            Ok(sql)
        })
    };
    let work = per_thread(bench, tls, statements, &progress);
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
) -> Result<Outcome, RunError> {
    let progress = TableProgress::default();
    let statements = workload.cleanup();
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
                progress.done(&sql);
            }
        }
        Ok(())
    };
    stop_on_signal(interrupts, Command::Cleanup, work, || progress.cleanup_summary(total)).await
}

/// Runs `work`, or stops it where it stands when a signal comes and says
/// what had been done (`summary`).
async fn stop_on_signal(
    interrupts: &Interrupts,
    command: Command,
    work: impl std::future::Future<Output = Result<(), RunError>>,
    summary: impl FnOnce() -> String,
) -> Result<Outcome, RunError> {
    match interrupts.or_signal(work).await {
        Ok(done) => done.map(|()| Outcome::Completed),
        Err(signal) => {
            alert_line(format_args!("wirebench: {command} interrupted by {signal}: {}", summary()));
            Ok(Outcome::Interrupted(signal))
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

/// One connection per `--threads` ("worker threads" to sysbench), all at
/// once, each running the statements `statements(thread)` yields (none
/// sent with `--mysql-dry-run`) until the first failure, its own or (the
/// progress messages) the output's; `progress` hears of each.
async fn per_thread<I>(
    bench: &Bench,
    tls: Option<&ClientTls>,
    statements: impl Fn(u32) -> I,
    progress: &Arc<TableProgress>,
) -> Result<(), RunError>
where
    I: Iterator<Item = Result<String, RunError>> + Send + 'static,
{
    if sysbench_starts_workers(bench) {
        Level::Notice.print(report::INITIALIZING_WORKERS)?;
    }
    let threads = bench.general.threads as usize;
    let dry_run = bench.mysql.dry_run;
    for_each_connection(threads, threads, |n| {
        let options = connect_options(bench, tls, n);
        let sql = statements(n as u32);
        let progress = progress.clone();
        async move {
            let mut conn = connect_unless_dry(&options, dry_run).await?;
            // A thread's tables come one after the other: the one it
            // works on is complete when it moves to the next.
            let mut table: Option<String> = None;
            for sql in sql {
                let sql = sql?;
                let Some(conn) = conn.as_mut() else { continue };
                if !progress.sending(&sql) {
                    // Interrupted: the summary is written, and says nothing of this.
                    return Ok(());
                }
                conn.query_drop(&sql).await?;
                let Some(touched) = progress.done(&sql) else { continue };
                if let Some(previous) = table.as_deref().filter(|&t| t != touched) {
                    progress.complete(previous);
                }
                table = Some(touched);
            }
            if let Some(last) = table {
                progress.complete(&last);
            }
            Ok(())
        }
    })
    .await?;
    Ok(())
}

/// Whether sysbench runs this `prepare` or `prewarm` in worker threads,
/// and so says "Initializing worker threads...": oltp_common.lua's are
/// parallel commands, which `sb_lua_call_custom_command()` runs in threads
/// only when there is more than one; bulk_insert.lua's prepare and the
/// 0.4/0.5 scripts' run in the main thread.
fn sysbench_starts_workers(bench: &Bench) -> bool {
    bench.general.threads > 1 && bench.test.uses_oltp_common() && bench.dialect == Dialect::V1_0
}
