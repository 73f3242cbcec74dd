//! How `prepare` sends the rows: LOAD DATA LOCAL INFILE from memory where
//! the server takes it (its `local_infile`, on by default in MariaDB, off
//! in MySQL 8), sysbench's INSERTs otherwise, as `--prepare-method` asks.

use super::output::{stderr_line, Console, Level};
use super::setup::{connect_options, connect_unless_dry};
use super::RunError;
use crate::cli::Bench;
use crate::client::Connection;
use crate::transport::tls::ClientTls;
use crate::workload::{DataCharset, PrepareMethod};

/// What `prepare` does with the rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RowsBy {
    /// sysbench's multi-row INSERTs.
    Insert,
    /// LOAD DATA LOCAL INFILE, the data in packets of at most
    /// `max_payload` bytes (the server's `max_allowed_packet`), read as
    /// `charset`.
    LoadData { max_payload: usize, charset: DataCharset },
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
        (Ok((max_payload, database_charset)), _) => {
            let charset = data_charset(&database_charset, &bench.test_options.mysql_table_options);
            Ok(RowsBy::LoadData { max_payload, charset })
        }
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

/// How the server should read the rows: unconverted when the tables'
/// columns write ASCII as ASCII, which they do in the database's default
/// character set unless it is one of 2 or 4 bytes a character; table
/// options that may name another keep the conversion.
fn data_charset(database_charset: &str, table_options: &str) -> DataCharset {
    let wide = ["ucs2", "utf16", "utf16le", "utf32"].contains(&database_charset.to_ascii_lowercase().as_str());
    let options = table_options.to_ascii_lowercase();
    let names_one = ["charset", "character", "collate"].iter().any(|word| options.contains(word));
    if wide || names_one || database_charset.is_empty() {
        DataCharset::Utf8mb4
    } else {
        DataCharset::Binary
    }
}

/// The server's `max_allowed_packet` and the database's character set
/// when it takes LOAD DATA LOCAL INFILE on this connection, else why not.
async fn server_takes_local_infile(conn: &mut Connection) -> Result<Result<(usize, String), String>, RunError> {
    if !conn.login().capabilities.contains(wirebench_protocol::Capabilities::LOCAL_FILES) {
        return Ok(Err("the server does not offer LOAD DATA LOCAL INFILE (no CLIENT_LOCAL_FILES)".to_owned()));
    }
    let sql = "SELECT @@local_infile, @@max_allowed_packet, @@auto_increment_increment, @@auto_increment_offset, \
               @@character_set_database";
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
        [on, max, "1", "1", charset] if *on == "1" || on.eq_ignore_ascii_case("ON") => max
            .parse()
            .map(|max| (max, (*charset).to_owned()))
            .map_err(|_| format!("@@max_allowed_packet is {max:?}, not a number")),
        [on @ ("0" | "OFF"), ..] => {
            Err(format!("the server has local_infile={on} (SET GLOBAL local_infile=1 allows it)"))
        }
        // The data carries ids 1, 2, 3...: those of sysbench's INSERTs only
        // when the server numbers rows one by one from 1.
        [_, _, increment, offset, _] => Err(format!(
            "auto_increment_increment={increment} and auto_increment_offset={offset} number rows otherwise than \
             the ids the data carries"
        )),
        _ => Err(format!("the server's settings read as {values:?}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_go_unconverted_only_into_columns_that_write_ascii_as_ascii() {
        for charset in ["utf8mb4", "latin1", "utf8mb3", "ascii", "gbk"] {
            assert_eq!(data_charset(charset, ""), DataCharset::Binary, "{charset}");
        }
        for charset in ["ucs2", "utf16", "UTF16LE", "utf32", ""] {
            assert_eq!(data_charset(charset, ""), DataCharset::Utf8mb4, "{charset}");
        }
        for options in ["DEFAULT CHARSET=ucs2", "CHARACTER SET utf32", "COLLATE utf16_bin"] {
            assert_eq!(data_charset("utf8mb4", options), DataCharset::Utf8mb4, "{options}");
        }
        assert_eq!(data_charset("utf8mb4", "ROW_FORMAT=DYNAMIC"), DataCharset::Binary);
    }
}
