//! The figures a delta gives with the run's own counts beside it: per
//! query, per transaction, per second; and what a result keeps of the
//! server.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::consistency::ConsistencyCheck;
use super::delta::ServerDelta;

/// What the run counted over the same span, which the server's work is
/// divided by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientCounts {
    /// sysbench's queries: reads, writes and others.
    pub queries: u64,
    /// Events, which sysbench's report calls transactions.
    pub transactions: u64,
}

/// The figures of one span.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerFigures {
    /// The headline: the server's CPU time (user and system) per query
    /// the run sent, in µs. None for a server elsewhere, or without the
    /// run's queries (a shard's result: see `wirebench merge`).
    pub cpu_us_per_query: Option<f64>,
    pub cpu_us_per_transaction: Option<f64>,
    /// CPU seconds per second: how many cores the server kept busy.
    pub cpu_cores: Option<f64>,
    /// Share of InnoDB's page requests the buffer pool answered, 0 to 1
    /// (1 - Innodb_buffer_pool_reads / Innodb_buffer_pool_read_requests).
    pub buffer_pool_hit_ratio: Option<f64>,
    /// Innodb_rows_read per query (MySQL), or Rows_read (MariaDB, which
    /// has no Innodb_rows_read since 10.6; it counts every engine's).
    pub rows_read_per_query: Option<f64>,
    /// Innodb_buffer_pool_reads (pages read from disk) per query.
    pub disk_reads_per_query: Option<f64>,
    pub voluntary_switches_per_query: Option<f64>,
    pub involuntary_switches_per_query: Option<f64>,
    /// Every status counter's increase per query, per transaction and
    /// per second.
    pub per_query: BTreeMap<String, f64>,
    pub per_transaction: BTreeMap<String, f64>,
    pub per_second: BTreeMap<String, f64>,
}

/// `n / d`, none when `d` is 0.
fn ratio(n: f64, d: u64) -> Option<f64> {
    (d > 0).then(|| n / d as f64)
}

impl ServerFigures {
    /// `counts`: the run's over the same span; none leaves every per-query
    /// and per-transaction figure out.
    pub fn of(delta: &ServerDelta, counts: Option<ClientCounts>) -> ServerFigures {
        let (queries, transactions) = counts.map_or((0, 0), |c| (c.queries, c.transactions));
        let per = |total: u64, d: u64| ratio(total as f64, d);
        let counter = |name: &str| delta.counter(name);
        let cpu_us = delta.process.map(|p| p.cpu_us());
        let seconds_us = (delta.seconds * 1e6) as u64;
        let hit_ratio = match (counter("Innodb_buffer_pool_read_requests"), counter("Innodb_buffer_pool_reads")) {
            (Some(requests), Some(reads)) if requests > 0 => {
                Some((1.0 - reads as f64 / requests as f64).clamp(0.0, 1.0))
            }
            _ => None,
        };
        let map = |d: u64| -> BTreeMap<String, f64> {
            if d == 0 {
                return BTreeMap::new();
            }
            delta.status.iter().map(|(name, &n)| (name.clone(), n as f64 / d as f64)).collect()
        };
        let per_second = if delta.seconds > 0.0 {
            delta.status.iter().map(|(name, &n)| (name.clone(), n as f64 / delta.seconds)).collect()
        } else {
            BTreeMap::new()
        };
        ServerFigures {
            cpu_us_per_query: cpu_us.and_then(|us| per(us, queries)),
            cpu_us_per_transaction: cpu_us.and_then(|us| per(us, transactions)),
            cpu_cores: cpu_us.and_then(|us| per(us, seconds_us)),
            buffer_pool_hit_ratio: hit_ratio,
            rows_read_per_query: counter("Innodb_rows_read").or(counter("Rows_read")).and_then(|n| per(n, queries)),
            disk_reads_per_query: counter("Innodb_buffer_pool_reads").and_then(|n| per(n, queries)),
            voluntary_switches_per_query: delta.process.and_then(|p| per(p.voluntary_switches, queries)),
            involuntary_switches_per_query: delta.process.and_then(|p| per(p.involuntary_switches, queries)),
            per_query: map(queries),
            per_transaction: map(transactions),
            per_second,
        }
    }
}

/// Where the sampled server is, as far as this host can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerLocation {
    /// On this host, its process found through the sampler's socket.
    ThisHost,
    /// On this host, but its process could not be found (another user's,
    /// over TCP): status counters only.
    ThisHostUnfound,
    /// `--server-pid`: a process of this host named on the command line.
    GivenPid,
    /// On another host: status counters only.
    Elsewhere,
}

/// Whose figures these are, in a final result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerSource {
    /// Where the sampler connected (`host:port`, `unix:PATH`).
    pub endpoint: String,
    pub location: ServerLocation,
    /// The server's process on this host, when read.
    pub pid: Option<u32>,
    /// Seconds between samples: `--report-interval`, or none (the start
    /// and the end only).
    pub every_s: Option<u32>,
    /// The shard that sampled (index, count): in a run split over shards,
    /// only shard 0 does, so that one server is counted once.
    pub shard: (u32, u32),
    /// Unix time of the samples the totals are between.
    pub from_unix_s: f64,
    pub to_unix_s: f64,
    /// Of those two samples, how many were taken while the connections
    /// were sending (see [`RunStatements::busy_edges`]).
    ///
    /// [`RunStatements::busy_edges`]: super::RunStatements::busy_edges
    pub busy_edges: u32,
    /// Those edges' blur added up, in seconds: the time from the first
    /// to the last of the run's cut and the server's sample at each.
    #[serde(default)]
    pub edge_blur_s: f64,
    /// In `wirebench merge`'s result, the number of shards merged; none
    /// in a run's own.
    #[serde(default)]
    pub merged_shards: Option<u32>,
}

/// What a result keeps of the server: the delta and its figures; in a
/// final result, whose they are and the consistency check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerResult {
    pub delta: ServerDelta,
    pub figures: ServerFigures,
    /// A final result's only.
    pub source: Option<ServerSource>,
    /// A final result's only, when the server counts `Questions` and the
    /// run's counts are all of those it sent (not a shard's).
    pub consistency: Option<ConsistencyCheck>,
}

impl ServerResult {
    /// An interval's; `counts` as in [`ServerFigures::of`].
    pub fn interval(delta: ServerDelta, counts: Option<ClientCounts>) -> ServerResult {
        let figures = ServerFigures::of(&delta, counts);
        ServerResult { delta, figures, source: None, consistency: None }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server_stats::process::ProcessDelta;

    fn delta(process: Option<ProcessDelta>) -> ServerDelta {
        let status = [
            ("Questions", 1002),
            ("Com_select", 1000),
            ("Innodb_rows_read", 1000),
            ("Innodb_buffer_pool_read_requests", 4000),
            ("Innodb_buffer_pool_reads", 40),
        ];
        ServerDelta {
            seconds: 2.0,
            status: status.iter().map(|(n, v)| ((*n).to_owned(), *v)).collect(),
            threads_running: Some(2),
            process,
            sampler_statements: 2,
        }
    }

    #[test]
    fn figures_per_query_per_transaction_and_per_second() {
        let process = ProcessDelta {
            cpu_user_us: 30_000,
            cpu_system_us: 10_000,
            rss_bytes: 1 << 30,
            voluntary_switches: 1000,
            involuntary_switches: 10,
        };
        let figures = ServerFigures::of(&delta(Some(process)), Some(ClientCounts { queries: 1000, transactions: 100 }));
        assert_eq!(figures.cpu_us_per_query, Some(40.0));
        assert_eq!(figures.cpu_us_per_transaction, Some(400.0));
        assert_eq!(figures.cpu_cores, Some(0.02));
        assert_eq!(figures.buffer_pool_hit_ratio, Some(0.99));
        assert_eq!(figures.rows_read_per_query, Some(1.0));
        assert_eq!(figures.disk_reads_per_query, Some(0.04));
        assert_eq!(figures.voluntary_switches_per_query, Some(1.0));
        assert_eq!(figures.involuntary_switches_per_query, Some(0.01));
        assert_eq!(figures.per_query.get("Com_select"), Some(&1.0));
        assert_eq!(figures.per_transaction.get("Com_select"), Some(&10.0));
        assert_eq!(figures.per_second.get("Questions"), Some(&501.0));
    }

    /// A server elsewhere has no CPU figures; without the run's counts
    /// (a shard's) nothing is per query, but the rates remain.
    #[test]
    fn what_is_not_known_is_none_not_zero() {
        let remote = ServerFigures::of(&delta(None), Some(ClientCounts { queries: 1000, transactions: 100 }));
        assert_eq!((remote.cpu_us_per_query, remote.cpu_cores), (None, None));
        assert_eq!(remote.rows_read_per_query, Some(1.0));
        let shard = ServerFigures::of(&delta(None), None);
        assert_eq!((shard.rows_read_per_query, shard.per_query.len()), (None, 0));
        assert_eq!(shard.buffer_pool_hit_ratio, Some(0.99));
        assert_eq!(shard.per_second.get("Com_select"), Some(&500.0));
        let idle = ServerFigures::of(&delta(None), Some(ClientCounts { queries: 0, transactions: 0 }));
        assert_eq!((idle.rows_read_per_query, idle.per_transaction.len()), (None, 0));
    }
}
