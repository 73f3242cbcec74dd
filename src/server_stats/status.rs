//! `SHOW GLOBAL STATUS`: which variables are read, and their values.

use std::collections::BTreeMap;

use wirebench_protocol::response::Response;

/// The status counters sampled (their increase is what a delta holds), as
/// MySQL and MariaDB spell them. A name a server does not have is skipped:
/// MariaDB 10.6 and later have no `Innodb_rows_*` (their `Rows_read` and
/// `Handler_write/update/delete` count rows for every engine), MySQL no
/// `Rows_read`, `Handler_read_retry` or `Handler_read_rnd_deleted`.
pub const STATUS_COUNTERS: &[&str] = &[
    "Questions",
    "Com_select",
    "Com_insert",
    "Com_update",
    "Com_delete",
    "Com_commit",
    "Com_rollback",
    "Innodb_rows_read",
    "Innodb_rows_inserted",
    "Innodb_rows_updated",
    "Innodb_rows_deleted",
    "Rows_read",
    "Rows_sent",
    "Handler_write",
    "Handler_update",
    "Handler_delete",
    "Innodb_buffer_pool_read_requests",
    "Innodb_buffer_pool_reads",
    "Innodb_data_reads",
    "Innodb_data_writes",
    "Innodb_row_lock_waits",
    "Innodb_row_lock_time",
    "Innodb_deadlocks",
    "Created_tmp_disk_tables",
    "Handler_read_first",
    "Handler_read_key",
    "Handler_read_last",
    "Handler_read_next",
    "Handler_read_prev",
    "Handler_read_retry",
    "Handler_read_rnd",
    "Handler_read_rnd_deleted",
    "Handler_read_rnd_next",
    "Bytes_sent",
    "Bytes_received",
];

/// The gauge sampled: its value, not its increase.
pub const THREADS_RUNNING: &str = "Threads_running";

/// The statement each sample sends. The server filters the rows (a few
/// hundred otherwise, about 18 KB each time on MariaDB 10.11), though it
/// still scans them all.
pub(super) fn status_query() -> String {
    let names: Vec<String> = STATUS_COUNTERS.iter().chain([&THREADS_RUNNING]).map(|name| format!("'{name}'")).collect();
    format!("SHOW GLOBAL STATUS WHERE Variable_name IN ({})", names.join(","))
}

/// One sample's values, by the names of [`STATUS_COUNTERS`] and
/// [`THREADS_RUNNING`] the server has.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatusReading {
    pub values: BTreeMap<&'static str, u64>,
}

impl StatusReading {
    /// The rows of `SHOW GLOBAL STATUS` (name, value): the names sampled,
    /// matched without regard to case (MySQL 5.7 wrote some in another);
    /// a value that is no whole number is left out.
    pub fn from_rows<'a>(rows: impl IntoIterator<Item = (&'a [u8], &'a [u8])>) -> StatusReading {
        let mut values = BTreeMap::new();
        for (name, value) in rows {
            let Some(known) = known_name(name) else { continue };
            let Some(value) = std::str::from_utf8(value).ok().and_then(|v| v.trim().parse::<u64>().ok()) else {
                continue;
            };
            values.insert(known, value);
        }
        StatusReading { values }
    }

    /// The answer to [`status_query`]: its one result set's first two
    /// columns.
    pub(super) fn from_response(response: &Response) -> Result<StatusReading, String> {
        let Some(set) = response.result_sets().next() else {
            return Err("SHOW GLOBAL STATUS returned no result set".to_owned());
        };
        let rows = set.text_rows().map_err(|e| format!("SHOW GLOBAL STATUS: {e}"))?;
        let pairs = rows.iter().filter_map(|row| match row.as_slice() {
            [Some(name), Some(value), ..] => Some((name.as_slice(), value.as_slice())),
            _ => None,
        });
        Ok(StatusReading::from_rows(pairs))
    }

    pub fn get(&self, name: &str) -> Option<u64> {
        self.values.get(name).copied()
    }
}

fn known_name(name: &[u8]) -> Option<&'static str> {
    STATUS_COUNTERS.iter().chain([&THREADS_RUNNING]).copied().find(|known| known.as_bytes().eq_ignore_ascii_case(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_read_by_name_whatever_the_case() {
        let rows: [(&[u8], &[u8]); 5] = [
            (b"Questions", b"1200"),
            (b"INNODB_ROWS_READ", b"77"),
            (b"Threads_running", b"3"),
            (b"Uptime", b"99"),
            (b"Com_select", b"OFF"),
        ];
        let reading = StatusReading::from_rows(rows);
        assert_eq!(reading.get("Questions"), Some(1200));
        assert_eq!(reading.get("Innodb_rows_read"), Some(77));
        assert_eq!(reading.get(THREADS_RUNNING), Some(3));
        assert_eq!(reading.get("Uptime"), None, "not sampled");
        assert_eq!(reading.get("Com_select"), None, "not a number");
    }

    #[test]
    fn the_query_names_every_variable_sampled() {
        let sql = status_query();
        assert!(sql.starts_with("SHOW GLOBAL STATUS WHERE Variable_name IN ('Questions','Com_select',"), "{sql}");
        assert!(sql.ends_with(",'Bytes_received','Threads_running')"), "{sql}");
    }
}
