//! `prepare`, `prewarm` and `cleanup`: the commands that create, warm and
//! drop the test's tables, over the async client, as sysbench's threads
//! run them (table t+1, t+1+threads, ... by thread t).

use std::sync::Arc;

use super::output::Output;
use super::setup::{connect_options, connect_unless_dry, for_each_connection, rand_params, seed};
use super::RunError;
use crate::cli::Bench;
use crate::rand::Rng;
use crate::stats::report;
use crate::transport::tls::ClientTls;
use crate::workload::{ScriptContext, Workload};

pub(super) async fn prepare(
    bench: &Bench,
    tls: Option<&ClientTls>,
    workload: Arc<dyn Workload>,
) -> Result<(), RunError> {
    let (params, seed) = (rand_params(bench)?, seed(bench));
    let table_size = bench.test_options.table_size;
    let threads = bench.general.threads;
    per_thread(bench, tls, move |thread| {
        let rng = Rng::for_thread(seed, thread, params);
        let mut loading = String::new();
        let statements = workload.prepare(ScriptContext { thread, threads }, rng);
        statements.map(move |sql| {
            if let Some(message) = progress_message(&sql, &mut loading, table_size) {
                Output::Stdout.line(message)?;
            }
            Ok(sql)
        })
    })
    .await
}

pub(super) async fn prewarm(
    bench: &Bench,
    tls: Option<&ClientTls>,
    workload: Arc<dyn Workload>,
) -> Result<(), RunError> {
    let threads = bench.general.threads;
    per_thread(bench, tls, move |thread| workload.prewarm(ScriptContext { thread, threads }).into_iter().map(Ok)).await
}

pub(super) async fn cleanup(
    bench: &Bench,
    tls: Option<&ClientTls>,
    workload: Arc<dyn Workload>,
) -> Result<(), RunError> {
    let mut conn = connect_unless_dry(&connect_options(bench, tls, 0), bench.mysql.dry_run).await?;
    for sql in workload.cleanup() {
        if let Some(table) = sql.strip_prefix("DROP TABLE IF EXISTS ") {
            Output::Stdout.line(format_args!("Dropping table '{table}'..."))?;
        }
        if let Some(conn) = conn.as_mut() {
            conn.query_drop(&sql).await?;
        }
    }
    Ok(())
}

/// One connection per `--threads` ("worker threads" to sysbench), all at
/// once, each running the statements `statements(thread)` yields (none
/// sent with `--mysql-dry-run`) until the first failure, its own or (the
/// progress messages) the output's.
async fn per_thread<I>(bench: &Bench, tls: Option<&ClientTls>, statements: impl Fn(u32) -> I) -> Result<(), RunError>
where
    I: Iterator<Item = Result<String, RunError>> + Send + 'static,
{
    Output::Stdout.print(report::INITIALIZING_WORKERS)?;
    let threads = bench.general.threads as usize;
    let dry_run = bench.mysql.dry_run;
    for_each_connection(threads, threads, |n| {
        let options = connect_options(bench, tls, n);
        let sql = statements(n as u32);
        async move {
            let mut conn = connect_unless_dry(&options, dry_run).await?;
            for sql in sql {
                let sql = sql?;
                if let Some(conn) = conn.as_mut() {
                    conn.query_drop(&sql).await?;
                }
            }
            Ok(())
        }
    })
    .await?;
    Ok(())
}

/// sysbench's prepare messages, derived from the statement being run;
/// `loading` remembers which table's rows are being inserted.
fn progress_message(sql: &str, loading: &mut String, table_size: u32) -> Option<String> {
    let table_after = |prefix: &str| sql.strip_prefix(prefix).and_then(|rest| rest.split(['(', ' ', '\n']).next());
    if let Some(table) = table_after("CREATE TABLE ") {
        return Some(format!("Creating table '{table}'..."));
    }
    if let Some(table) = table_after("INSERT INTO ") {
        if loading != table {
            table.clone_into(loading);
            return Some(format!("Inserting {table_size} records into '{table}'"));
        }
        return None;
    }
    if sql.starts_with("CREATE INDEX") {
        let table = sql.split(" ON ").nth(1)?.split('(').next()?;
        return Some(format!("Creating a secondary index on '{table}'..."));
    }
    None
}
