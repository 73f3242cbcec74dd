//! How `prepare` sends the rows: LOAD DATA LOCAL INFILE from memory where
//! the server takes it (its `local_infile`, on by default in MariaDB, off
//! in MySQL 8), sysbench's INSERTs otherwise, as `--prepare-method` asks.

use super::output::{stderr_line, Console, Level};
use super::setup::{connect_options, connect_unless_dry};
use super::RunError;
use crate::cli::Bench;
use crate::client::Connection;
use crate::transport::tls::ClientTls;
use crate::workload::PrepareMethod;

/// What `prepare` does with the rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RowsBy {
    /// sysbench's multi-row INSERTs.
    Insert,
    /// LOAD DATA LOCAL INFILE, the data in packets of at most this many
    /// bytes (the server's `max_allowed_packet`).
    LoadData { max_payload: usize },
}

/// Decides, asking the server on a connection of its own when it may
/// matter. `has_data` says whether the test can load its rows as data.
pub(super) async fn rows_by(bench: &Bench, tls: Option<&ClientTls>, has_data: bool) -> Result<RowsBy, RunError> {
    let method = bench.test_options.prepare_method;
    if method == PrepareMethod::Insert || !has_data || bench.mysql.dry_run {
        return Ok(RowsBy::Insert);
    }
    let mut options = connect_options(bench, tls, 0);
    options.local_infile = true;
    let Some(mut conn) = connect_unless_dry(&options, false).await? else { return Ok(RowsBy::Insert) };
    let verdict = server_takes_local_infile(&mut conn).await;
    // Best effort: the answer is what counted.
    let _ = conn.quit().await;
    match (verdict?, method) {
        (Ok(max_payload), _) => Ok(RowsBy::LoadData { max_payload }),
        (Err(reason), PrepareMethod::LoadData) => Err(RunError::LoadDataRefused { reason }),
        (Err(reason), _) => {
            // Slower than asked for, but never without a word at debug level.
            if Console::current().shows(Level::Info) {
                stderr_line(format_args!("wirebench: prepare sends INSERTs: {reason}"));
            }
            Ok(RowsBy::Insert)
        }
    }
}

/// The server's `max_allowed_packet` when it takes LOAD DATA LOCAL INFILE
/// on this connection, else why not.
async fn server_takes_local_infile(conn: &mut Connection) -> Result<Result<usize, String>, RunError> {
    if !conn.login().capabilities.contains(wirebench_protocol::Capabilities::LOCAL_FILES) {
        return Ok(Err("the server does not offer LOAD DATA LOCAL INFILE (no CLIENT_LOCAL_FILES)".to_owned()));
    }
    let sql = "SELECT @@local_infile, @@max_allowed_packet, @@auto_increment_increment, @@auto_increment_offset";
    let response = match conn.query(sql).await {
        Ok(response) => response,
        Err(e) if e.server_error().is_some() => return Ok(Err(format!("cannot read @@local_infile: {e}"))),
        Err(e) => return Err(RunError::Client(e)),
    };
    let values: Vec<String> = response
        .result_sets()
        .flat_map(|rs| rs.text_rows().unwrap_or_default())
        .flatten()
        .map(|v| v.map(|bytes| String::from_utf8_lossy(&bytes).into_owned()).unwrap_or_default())
        .collect();
    Ok(match values.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        [on, max, "1", "1"] if *on == "1" || on.eq_ignore_ascii_case("ON") => {
            max.parse().map_err(|_| format!("@@max_allowed_packet is {max:?}, not a number"))
        }
        [on @ ("0" | "OFF"), ..] => {
            Err(format!("the server has local_infile={on} (SET GLOBAL local_infile=1 allows it)"))
        }
        // The data carries ids 1, 2, 3...: those of sysbench's INSERTs only
        // when the server numbers rows one by one from 1.
        [_, _, increment, offset] => Err(format!(
            "auto_increment_increment={increment} and auto_increment_offset={offset} number rows otherwise than \
             the ids the data carries"
        )),
        _ => Err(format!("the server's settings read as {values:?}")),
    })
}
