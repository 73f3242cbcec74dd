//! How `prepare` sends the rows: MariaDB's COM_STMT_BULK_EXECUTE of a
//! prepared INSERT where the server has it, else LOAD DATA LOCAL INFILE
//! from memory where the server takes it (its `local_infile`, on by
//! default in MariaDB, off in MySQL 8), sysbench's INSERTs otherwise, as
//! `--prepare-method` asks.

use wirebench_protocol::command::bulk_execute_head_len;
use wirebench_protocol::Capabilities;

use super::output::{stderr_line, Console, Level};
use super::setup::{connect_options, connect_unless_dry};
use super::RunError;
use crate::cli::Bench;
use crate::client::Connection;
use crate::transport::tls::ClientTls;
use crate::workload::{bulk_param_types, BatchForm, DataCharset, PrepareMethod};

/// What `prepare` does with the rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RowsBy {
    /// sysbench's multi-row INSERTs.
    Insert,
    /// LOAD DATA LOCAL INFILE, the data in packets of at most
    /// `max_payload` bytes (the server's `max_allowed_packet`), read as
    /// `charset`.
    LoadData { max_payload: usize, charset: DataCharset },
    /// COM_STMT_BULK_EXECUTE of `INSERT INTO sbtestN(id, k, c, pad)
    /// VALUES(?, ?, ?, ?)`, each packet at most `max_payload` bytes, the
    /// strings read as `charset`.
    BulkExecute { max_payload: usize, charset: DataCharset },
}

impl RowsBy {
    /// How the workload should lay out its batches of rows for this.
    pub(super) fn batch_form(self) -> BatchForm {
        match self {
            RowsBy::Insert | RowsBy::LoadData { .. } => BatchForm::Lines,
            RowsBy::BulkExecute { max_payload, charset } => BatchForm::BulkRows {
                max_bytes: max_payload.saturating_sub(bulk_execute_head_len(bulk_param_types(charset).len())),
            },
        }
    }
}

/// How `prepare` loads the rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct LoadPlan {
    pub(super) rows_by: RowsBy,
    /// The server's cores when it runs on this host (this host's), else
    /// `None`: not known.
    pub(super) server_cores: Option<u32>,
}

/// How many of `threads` connections load the rows of `sources` threads'
/// tables: one a table at least, more only up to the server's cores where
/// they are known. Beyond them the connections of a table only contend:
/// they cost the server more CPU for no time gained (docs/prepare.md has
/// the figures).
pub(super) fn loading_connections(threads: u32, sources: u32, server_cores: Option<u32>) -> u32 {
    match server_cores {
        Some(cores) => threads.min(sources.max(cores)),
        None => threads,
    }
}

/// What the server allows, from the probe connection.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ServerOffer {
    /// `max_allowed_packet` and the database's character set, or why the
    /// rows cannot go as data at all (ids numbered otherwise, unreadable settings).
    settings: Result<(usize, String), String>,
    /// LOAD DATA LOCAL INFILE, or why not.
    local_infile: Result<(), String>,
    /// COM_STMT_BULK_EXECUTE, or why not.
    bulk: Result<(), String>,
}

/// Decides, asking the server on a connection of its own when it may
/// matter. `has_data` says whether the test can load its rows as data.
pub(super) async fn rows_by(bench: &Bench, tls: Option<&ClientTls>, has_data: bool) -> Result<LoadPlan, RunError> {
    let method = bench.test_options.prepare_method;
    let unknown = LoadPlan { rows_by: RowsBy::Insert, server_cores: None };
    if !has_data || bench.mysql.dry_run {
        return Ok(unknown);
    }
    let mut options = connect_options(bench, tls, 0);
    (options.local_infile, options.bulk_operations) = (true, true);
    let Some(mut conn) = connect_unless_dry(&options, false).await? else { return Ok(unknown) };
    let server_cores = conn
        .server_is_on_this_host()
        .then(|| std::thread::available_parallelism().map_or(1, |n| u32::try_from(n.get()).unwrap_or(u32::MAX)));
    let offer = if method == PrepareMethod::Insert { None } else { Some(server_offer(&mut conn).await) };
    // Best effort: the answer is what counted.
    let _ = conn.quit().await;
    let Some(offer) = offer else { return Ok(LoadPlan { rows_by: RowsBy::Insert, server_cores }) };
    let rows_by = match choose(method, offer?, &bench.test_options.mysql_table_options)? {
        Ok(rows_by) => rows_by,
        Err(reason) => {
            // Slower than asked for, but never without a word at debug level.
            if Console::current().shows(Level::Info) {
                stderr_line(format_args!("wirebench: prepare sends INSERTs: {reason}"));
            }
            RowsBy::Insert
        }
    };
    Ok(LoadPlan { rows_by, server_cores })
}

/// The way `method` takes with what the server offers: an error for a way
/// asked for by name that the server refuses; for `auto`, bulk execute,
/// else LOAD DATA, else (`Err` with the reason) INSERTs.
fn choose(method: PrepareMethod, offer: ServerOffer, table_options: &str) -> Result<Result<RowsBy, String>, RunError> {
    let (max_payload, charset) = match (offer.settings, method) {
        (Ok(settings), _) => settings,
        (Err(reason), PrepareMethod::BulkExecute) => return Err(RunError::BulkExecuteRefused { reason }),
        (Err(reason), PrepareMethod::LoadData) => return Err(RunError::LoadDataRefused { reason }),
        (Err(reason), _) => return Ok(Err(reason)),
    };
    let charset = data_charset(&charset, table_options);
    let (load_data, bulk) = (RowsBy::LoadData { max_payload, charset }, RowsBy::BulkExecute { max_payload, charset });
    Ok(match method {
        PrepareMethod::BulkExecute => {
            offer.bulk.map_err(|reason| RunError::BulkExecuteRefused { reason })?;
            Ok(bulk)
        }
        PrepareMethod::LoadData => {
            offer.local_infile.map_err(|reason| RunError::LoadDataRefused { reason })?;
            Ok(load_data)
        }
        PrepareMethod::Auto => match (offer.bulk, offer.local_infile) {
            (Ok(()), _) => Ok(bulk),
            (Err(_), Ok(())) => Ok(load_data),
            (Err(no_bulk), Err(no_load)) => Err(format!("{no_bulk}; {no_load}")),
        },
        PrepareMethod::Insert => Err("--prepare-method=insert".to_owned()),
    })
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

/// What the server offers this connection for sending rows as data.
async fn server_offer(conn: &mut Connection) -> Result<ServerOffer, RunError> {
    let capabilities = conn.login().capabilities;
    let bulk = if capabilities.contains(Capabilities::MARIADB_CLIENT_STMT_BULK_OPERATIONS) {
        Ok(())
    } else {
        Err("the server has no COM_STMT_BULK_EXECUTE (no MARIADB_CLIENT_STMT_BULK_OPERATIONS: MariaDB 10.2 or later has it)"
            .to_owned())
    };
    let sql = "SELECT @@local_infile, @@max_allowed_packet, @@auto_increment_increment, @@auto_increment_offset, \
               @@character_set_database";
    let response = match conn.query(sql).await {
        Ok(response) => response,
        Err(e) if e.server_error().is_some() => {
            let reason = format!("cannot read the server's settings: {e}");
            return Ok(ServerOffer { settings: Err(reason.clone()), local_infile: Err(reason), bulk });
        }
        Err(e) => return Err(RunError::Client(e)),
    };
    let values: Vec<String> = response
        .result_sets()
        .flat_map(|rs| rs.text_rows().unwrap_or_default())
        .flatten()
        .map(|v| v.map(|bytes| String::from_utf8_lossy(&bytes).into_owned()).unwrap_or_default())
        .collect();
    let (settings, local_infile) = read_settings(&values);
    let local_infile = if capabilities.contains(Capabilities::LOCAL_FILES) {
        local_infile
    } else {
        Err("the server does not offer LOAD DATA LOCAL INFILE (no CLIENT_LOCAL_FILES)".to_owned())
    };
    Ok(ServerOffer { settings, local_infile, bulk })
}

/// From `@@local_infile, @@max_allowed_packet, @@auto_increment_increment,
/// @@auto_increment_offset, @@character_set_database`: the packet size and
/// character set, or why rows cannot go with their ids; whether
/// `local_infile` is on.
fn read_settings(values: &[String]) -> (Result<(usize, String), String>, Result<(), String>) {
    match values.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        [on, max, increment, offset, charset] => {
            let local_infile = match *on {
                "1" | "ON" | "on" => Ok(()),
                _ => Err(format!("the server has local_infile={on} (SET GLOBAL local_infile=1 allows it)")),
            };
            // The data carries ids 1, 2, 3...: those of sysbench's INSERTs
            // only when the server numbers rows one by one from 1.
            let settings = if (*increment, *offset) != ("1", "1") {
                Err(format!(
                    "auto_increment_increment={increment} and auto_increment_offset={offset} number rows otherwise \
                     than the ids the data carries"
                ))
            } else {
                max.parse()
                    .map(|max| (max, (*charset).to_owned()))
                    .map_err(|_| format!("@@max_allowed_packet is {max:?}, not a number"))
            };
            (settings, local_infile)
        }
        _ => {
            let reason = format!("the server's settings read as {values:?}");
            (Err(reason.clone()), Err(reason))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offer(bulk: bool, local_infile: bool) -> ServerOffer {
        let yes_or = |yes: bool, no: &str| if yes { Ok(()) } else { Err(no.to_owned()) };
        ServerOffer {
            settings: Ok((1 << 30, "utf8mb4".to_owned())),
            local_infile: yes_or(local_infile, "local_infile=0"),
            bulk: yes_or(bulk, "no bulk"),
        }
    }

    fn chosen(method: PrepareMethod, offer: ServerOffer) -> Result<Result<RowsBy, String>, String> {
        choose(method, offer, "").map_err(|e| e.to_string())
    }

    /// auto: bulk execute, else LOAD DATA, else INSERTs with the reasons;
    /// a way asked for by name or an error naming it.
    #[test]
    fn auto_takes_bulk_execute_then_load_data_then_inserts() {
        let bulk = Ok(Ok(RowsBy::BulkExecute { max_payload: 1 << 30, charset: DataCharset::Binary }));
        let load = Ok(Ok(RowsBy::LoadData { max_payload: 1 << 30, charset: DataCharset::Binary }));
        assert_eq!(chosen(PrepareMethod::Auto, offer(true, true)), bulk);
        assert_eq!(chosen(PrepareMethod::Auto, offer(true, false)), bulk);
        assert_eq!(chosen(PrepareMethod::Auto, offer(false, true)), load);
        assert_eq!(chosen(PrepareMethod::Auto, offer(false, false)), Ok(Err("no bulk; local_infile=0".to_owned())));
        assert_eq!(chosen(PrepareMethod::LoadData, offer(true, true)), load);
        assert_eq!(chosen(PrepareMethod::BulkExecute, offer(true, false)), bulk);
        let refused = chosen(PrepareMethod::BulkExecute, offer(false, true)).unwrap_err();
        assert!(refused.starts_with("--prepare-method=bulk-execute: no bulk; run prepare with"), "{refused}");
        let refused = chosen(PrepareMethod::LoadData, offer(true, false)).unwrap_err();
        assert!(refused.starts_with("--prepare-method=load-data: local_infile=0;"), "{refused}");
        let numbered_otherwise =
            ServerOffer { settings: Err("auto_increment_increment=2".to_owned()), ..offer(true, true) };
        assert_eq!(
            chosen(PrepareMethod::Auto, numbered_otherwise.clone()),
            Ok(Err("auto_increment_increment=2".to_owned()))
        );
        assert!(chosen(PrepareMethod::BulkExecute, numbered_otherwise).is_err());
    }

    #[test]
    fn settings_say_local_infile_and_ids() {
        let values = |v: [&str; 5]| v.map(str::to_owned);
        let (settings, local) = read_settings(&values(["1", "1048576", "1", "1", "latin1"]));
        assert_eq!((settings, local), (Ok((1_048_576, "latin1".to_owned())), Ok(())));
        let (settings, local) = read_settings(&values(["0", "1048576", "1", "1", "latin1"]));
        assert!(settings.is_ok() && local.unwrap_err().contains("local_infile=0"));
        let (settings, local) = read_settings(&values(["ON", "1048576", "2", "1", "latin1"]));
        assert!(settings.unwrap_err().contains("auto_increment_increment=2") && local.is_ok());
        assert!(read_settings(&values(["1", "many", "1", "1", "x"])).0.unwrap_err().contains("not a number"));
        assert!(read_settings(&["1".to_owned()]).1.is_err());
    }

    /// One connection a table where the server's cores are all taken; more
    /// up to its cores, or all of them where its cores are not known.
    #[test]
    fn loading_connections_stop_at_the_server_s_cores() {
        assert_eq!(loading_connections(8, 2, Some(2)), 2);
        assert_eq!(loading_connections(8, 8, Some(2)), 8);
        assert_eq!(loading_connections(8, 1, Some(4)), 4);
        assert_eq!(loading_connections(3, 1, Some(16)), 3);
        assert_eq!(loading_connections(8, 2, None), 8);
    }

    /// Bulk rows leave room in the packet for its head.
    #[test]
    fn bulk_batches_fit_the_server_packet() {
        let form = RowsBy::BulkExecute { max_payload: 65536, charset: DataCharset::Utf8mb4 }.batch_form();
        assert_eq!(form, BatchForm::BulkRows { max_bytes: 65536 - 15 });
        assert_eq!(
            RowsBy::LoadData { max_payload: 65536, charset: DataCharset::Binary }.batch_form(),
            BatchForm::Lines
        );
    }

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
