//! `wirebench merge`: the JSON results of one run's shards put back
//! together. Counters add; histograms add exactly (the files keep them,
//! see `recorded.rs`), so the merged percentiles are those of one
//! histogram of every shard's events; intervals are aligned on absolute
//! time, each shard's interval going to the slot of the common
//! `--report-interval` grid (from `--start-at`) its end is nearest to. A
//! slot that some shard did not cover whole (it started late, ended
//! early, or has no interval there) says so: a line is never a part of
//! the run passed off as all of it.
//!
//! Files of different runs are refused (their [`RunIdentity`] differs,
//! which names the option); missing shards, late starts and other options
//! that differ are noted.
//!
//! The server (`--server-stats`) is sampled by one shard only, shard 0,
//! since the shards share it: its samples are the run's, not added to any
//! other's, and its figures per query are divided by every shard's
//! queries here.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use super::record::{
    CounterTotals, IdleResult, IntervalResult, PartialShard, RunEnd, RunInfo, RunResult, FORMAT_VERSION,
};
use super::recorded::{Recorded, RecordedError};
use super::result_line::ResultLine;
use super::shard_info::ShardInfo;
use crate::server_stats::{ClientCounts, ConsistencyCheck, RunStatements, ServerDelta, ServerFigures, ServerResult};
use crate::stats::report::{ArrivalStats, QueueStats};
use crate::stats::{ClientLoad, ConnStats, Counters, Interval, Latencies, RateSummary};

/// How late after `--start-at` a shard may start before merge says so.
pub const LATE_MS: f64 = 50.0;

/// Options whose values are expected to differ between shards, so merge
/// does not note them.
const PER_SHARD_OPTIONS: &[&str] = &["shard", "shards", "hdr-log", "hdr_log", "label", "format", "chart"];

/// Why files cannot be merged; each names the file.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("cannot read {}: {source}", .path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error(
        "{} line {line} is not a wirebench JSON result ({source}): merge reads what `wirebench ... --format=json \
         run > FILE` writes on each shard",
        .path.display()
    )]
    NotAResult { path: PathBuf, line: usize, source: serde_json::Error },
    #[error("{} holds no final result (did the shard stop before its report?): merge needs each shard's whole output", .path.display())]
    NoFinalResult { path: PathBuf },
    #[error("{} holds a --threads sweep: merge takes single runs, one file per shard", .path.display())]
    Sweep { path: PathBuf },
    #[error("{} holds a capacity search: merge takes single runs, one file per shard (a search is not sharded)", .path.display())]
    Search { path: PathBuf },
    #[error(
        "{} holds a replay: merge puts a run's shards together; a replay's shards each compare their own \
         connections with the capture (read each shard's differences, or replay in one instance)",
        .path.display()
    )]
    Replay { path: PathBuf },
    #[error("{} was written by a newer wirebench (result format {found}): merge it with that version", .path.display())]
    NewerFormat { path: PathBuf, found: u32 },
    #[error(
        "{} has no shard or histogram fields (written by an older wirebench, or edited): rerun the shards with this \
         wirebench and --format=json",
        .path.display()
    )]
    NotMergeable { path: PathBuf },
    #[error(
        "{}: the interval ending {end_s:.3} s into the run has no histograms (written by an older wirebench, or \
         edited): merge the file the shard's `wirebench ... --format=json run` wrote",
        .path.display()
    )]
    IntervalNotMergeable { path: PathBuf, end_s: f64 },
    #[error("{} is already a merge of {shards} shards: merge the shards' own files", .path.display())]
    AlreadyMerged { path: PathBuf, shards: u32 },
    #[error("{}: {source}", .path.display())]
    Recorded { path: PathBuf, source: RecordedError },
    #[error(
        "{} and {} are not shards of the same run: {differences}; merge takes the files of one run, whose shards share \
         these options and --start-at",
        .first.display(), .other.display()
    )]
    DifferentRuns { first: PathBuf, other: PathBuf, differences: String },
    #[error(
        "shard {index}/{count} is given twice, in {} and {}: give each shard's file once",
        .first.display(), .other.display()
    )]
    DuplicateShard { index: u32, count: u32, first: PathBuf, other: PathBuf },
    #[error("merge needs the JSON results of a run's shards: wirebench merge shard-0.json shard-1.json ...")]
    NoFiles,
    #[error("{} is not a shard's --hdr-log: {why}", .path.display())]
    NotALog { path: PathBuf, why: String },
    #[error(
        "merge takes the shards' JSON results (which hold the counters and the same histograms) or their --hdr-log \
         files, not both: {} is a log, {} a JSON result",
        .log.display(), .json.display()
    )]
    MixedInputs { log: PathBuf, json: PathBuf },
    #[error(
        "--format=json needs the shards' JSON results: from --hdr-log files merge prints the latencies only; run \
         the shards with --format=json"
    )]
    JsonFromLogs,
}

/// One shard's output: its final result and its intervals.
#[derive(Debug, Clone, PartialEq)]
pub struct ShardFile {
    pub path: PathBuf,
    pub result: RunResult,
    pub intervals: Vec<IntervalResult>,
}

impl ShardFile {
    /// Reads `text`, the contents of `path`.
    pub fn parse(path: &Path, text: &str) -> Result<ShardFile, MergeError> {
        let (mut result, mut intervals) = (None, Vec::new());
        for (index, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let parsed = serde_json::from_str::<ResultLine>(line).map_err(|source| MergeError::NotAResult {
                path: path.to_owned(),
                line: index + 1,
                source,
            })?;
            match parsed {
                ResultLine::Interval(interval) => intervals.push(interval),
                ResultLine::Final(run) if run.step.is_none() && result.is_none() => result = Some(*run),
                ResultLine::Final(_) | ResultLine::Sweep(_) => return Err(MergeError::Sweep { path: path.to_owned() }),
                ResultLine::SearchStep(_) | ResultLine::Search(_) => {
                    return Err(MergeError::Search { path: path.to_owned() })
                }
                ResultLine::Replay(_) => return Err(MergeError::Replay { path: path.to_owned() }),
            }
        }
        let result = result.ok_or_else(|| MergeError::NoFinalResult { path: path.to_owned() })?;
        if result.run.format_version > FORMAT_VERSION {
            return Err(MergeError::NewerFormat { path: path.to_owned(), found: result.run.format_version });
        }
        Ok(ShardFile { path: path.to_owned(), result, intervals })
    }

    /// The shard fields, when the file is a shard's own.
    fn shard(&self) -> Result<&ShardInfo, MergeError> {
        let shard = self.result.run.shard.as_ref();
        let shard = shard.filter(|_| self.result.recorded.is_some());
        let shard = shard.ok_or_else(|| MergeError::NotMergeable { path: self.path.clone() })?;
        match shard.merged_from {
            Some(shards) => Err(MergeError::AlreadyMerged { path: self.path.clone(), shards }),
            None => Ok(shard),
        }
    }

    /// Unix time of the measured run's start (after `--warmup-time`).
    fn measured_from_unix_s(&self) -> f64 {
        let started = self.result.run.shard.as_ref().and_then(|s| s.started_unix_s).unwrap_or(0.0);
        started + f64::from(self.result.warmup_s)
    }

    /// Unix time the shard's intervals are cut from: `--start-at` (after
    /// `--warmup-time`), the instant every shard counts from, else its own
    /// measured start.
    fn grid_from_unix_s(&self) -> f64 {
        match self.result.run.shard.as_ref().and_then(|s| s.start_at_unix_s) {
            Some(start_at) => start_at + f64::from(self.result.warmup_s),
            None => self.measured_from_unix_s(),
        }
    }

    /// The stretch of time the shard's intervals cover, Unix seconds.
    fn intervals_span(&self) -> Option<(f64, f64)> {
        let first = self.intervals.iter().map(|i| i.start_unix_s).reduce(f64::min)?;
        let last = self.intervals.iter().map(|i| i.start_unix_s + i.interval_s).reduce(f64::max)?;
        Some((first, last))
    }
}

/// What merge says besides the report: on standard error, and as the
/// report's first lines.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MergeNotes {
    /// `--shards` of the run.
    pub count: u32,
    /// Shard indexes of the run that no file holds.
    pub missing: Vec<u32>,
    /// Shards that started more than [`LATE_MS`] after `--start-at`, by how
    /// many ms.
    pub late: Vec<(String, f64)>,
    /// Options given differently: the option, then each shard's value.
    pub differing: Vec<(String, Vec<(String, String)>)>,
    /// Shards beside the first that sampled the server too (by
    /// `--server-stats` forced on them): their samples are not used.
    pub extra_samplers: Vec<String>,
}

impl fmt::Display for MergeNotes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for index in &self.missing {
            writeln!(
                f,
                "wirebench: merge: shard {index}/{} is absent: the merged figures lack its connections' work; add its \
                 file",
                self.count
            )?;
        }
        for (shard, late_ms) in &self.late {
            writeln!(f, "wirebench: merge: {shard} started {late_ms:.1} ms after --start-at (more than {LATE_MS} ms)")?;
        }
        for shard in &self.extra_samplers {
            writeln!(
                f,
                "wirebench: merge: {shard} sampled the server too: only the first sampling shard's figures are used, \
                 so that the one server is counted once"
            )?;
        }
        for (option, values) in &self.differing {
            let values: Vec<String> = values.iter().map(|(shard, value)| format!("{shard}: {value}")).collect();
            writeln!(f, "wirebench: merge: --{option} differs between shards ({})", values.join(", "))?;
        }
        Ok(())
    }
}

/// The shards checked: one run, each shard once.
fn check(files: &[ShardFile]) -> Result<MergeNotes, MergeError> {
    let first = files.first().ok_or(MergeError::NoFiles)?;
    let base = first.shard()?;
    let mut seen: BTreeMap<u32, &Path> = BTreeMap::new();
    let mut notes = MergeNotes::default();
    for file in files {
        let shard = file.shard()?;
        let differences = base.identity.differences(&shard.identity);
        if !differences.is_empty() {
            let differences: Vec<String> =
                differences.iter().map(|(option, a, b)| format!("{option} {a} against {b}")).collect();
            return Err(MergeError::DifferentRuns {
                first: first.path.clone(),
                other: file.path.clone(),
                differences: differences.join(", "),
            });
        }
        if let Some(earlier) = seen.insert(shard.index, &file.path) {
            return Err(MergeError::DuplicateShard {
                index: shard.index,
                count: shard.count,
                first: earlier.to_owned(),
                other: file.path.clone(),
            });
        }
        if shard.start_at_unix_s.is_some() && shard.late_ms > LATE_MS {
            notes.late.push((shard.name(), shard.late_ms));
        }
    }
    notes.count = base.count;
    notes.missing = (0..base.count).filter(|i| !seen.contains_key(i)).collect();
    notes.differing = differing_options(files);
    Ok(notes)
}

/// The options (outside the run's identity, which [`check`] compares)
/// that not every shard gave the same.
fn differing_options(files: &[ShardFile]) -> Vec<(String, Vec<(String, String)>)> {
    let mut names: Vec<&String> = files.iter().flat_map(|f| f.result.run.options.keys()).collect();
    names.sort();
    names.dedup();
    let mut differing = Vec::new();
    for name in names.into_iter().filter(|n| !PER_SHARD_OPTIONS.contains(&n.as_str())) {
        let values: Vec<(String, String)> = files
            .iter()
            .map(|f| {
                let shard = f.result.run.shard.as_ref().map_or_else(|| "?".to_owned(), ShardInfo::name);
                (shard, f.result.run.options.get(name).cloned().unwrap_or_else(|| "(not given)".to_owned()))
            })
            .collect();
        if values.iter().any(|(_, v)| *v != values[0].1) {
            differing.push((name.clone(), values));
        }
    }
    differing
}

/// One slot of the merged intervals.
#[derive(Debug, Clone)]
pub struct MergedInterval {
    /// Seconds from the grid's origin ([`MergedRun::measured_from_unix_s`])
    /// to this slot's end.
    pub end_s: f64,
    pub length_s: f64,
    /// The connections of the shards that reported in this slot.
    pub threads: u32,
    /// The shards (of those merged) that did not run through the whole
    /// slot, with how much of it they ran: the line is a part of the run.
    pub partial: Vec<PartialShard>,
    pub interval: Interval,
    pub queue: Option<QueueStats>,
    /// The shards' targets and late or dropped arrivals, added up.
    pub arrivals: Option<ArrivalStats>,
    /// The sampling shard's server delta of this slot.
    pub server: Option<ServerDelta>,
}

/// The whole run, as the shards' files add up to it.
#[derive(Debug, Clone)]
pub struct MergedRun {
    pub info: RunInfo,
    pub notes: MergeNotes,
    /// The shards merged, in index order.
    pub shards: Vec<ShardInfo>,
    pub threads: u32,
    pub end: RunEnd,
    pub warmup_s: u32,
    /// From the earliest shard's measured start to the last one's end.
    pub time_s: f64,
    /// Unix time the merged intervals count from: `--start-at` (after the
    /// warm-up), or without it the earliest shard's measured start.
    pub measured_from_unix_s: f64,
    pub counters: Counters,
    pub latencies: Latencies,
    pub connections: Vec<ConnStats>,
    pub rate: Option<RateSummary>,
    pub intervals: Vec<MergedInterval>,
    /// `--server-stats`: the sampling shard's totals, per query of the
    /// whole run's, checked against every shard's statements.
    pub server: Option<ServerResult>,
    /// `--idle-connections`: every shard's, added up.
    pub idle_connections: Option<IdleResult>,
}

/// Merges `files`, the JSON results of one run's shards; statement kinds
/// are named from `kind_names`.
pub fn merge_shards(files: Vec<ShardFile>, kind_names: &'static [&'static str]) -> Result<MergedRun, MergeError> {
    let notes = check(&files)?;
    let mut files = files;
    files.sort_by_key(|f| f.result.run.shard.as_ref().map_or(0, |s| s.index));
    let from = files.iter().map(ShardFile::measured_from_unix_s).fold(f64::INFINITY, f64::min);
    let to = files.iter().map(|f| f.measured_from_unix_s() + f.result.time_s).fold(f64::NEG_INFINITY, f64::max);
    let time_s = (to - from).max(0.0);
    let mut latencies = Latencies::new(kind_names);
    let (mut counters, mut connections) = (Counters::default(), Vec::new());
    for file in &files {
        let recorded =
            file.result.recorded.as_ref().ok_or_else(|| MergeError::NotMergeable { path: file.path.clone() })?;
        let read = recorded
            .latencies(kind_names)
            .map_err(|source| MergeError::Recorded { path: file.path.clone(), source })?;
        latencies.merge(&read);
        counters.merge(&counters_of(&file.result.counters));
        connections.extend(recorded.connections());
    }
    let sampler = sampling_shard(&files);
    let grid_from = files.iter().map(ShardFile::grid_from_unix_s).fold(f64::INFINITY, f64::min);
    let intervals = merge_intervals(&files, grid_from, kind_names, sampler)?;
    let first = files.first().ok_or(MergeError::NoFiles)?;
    let mut notes = notes;
    notes.extra_samplers = files
        .iter()
        .enumerate()
        .filter(|(i, f)| Some(*i) != sampler && f.result.server.is_some())
        .filter_map(|(_, f)| Some(f.result.run.shard.as_ref()?.name()))
        .collect();
    let server = sampler.and_then(|i| merged_server(&files, i, &counters));
    Ok(MergedRun {
        info: merged_info(first, &files),
        notes,
        shards: files.iter().filter_map(|f| f.result.run.shard.clone()).collect(),
        threads: files.iter().map(|f| f.result.threads).sum(),
        end: files.iter().map(|f| f.result.end).max_by_key(|e| severity(*e)).unwrap_or(RunEnd::Completed),
        warmup_s: files.iter().map(|f| f.result.warmup_s).max().unwrap_or(0),
        time_s,
        measured_from_unix_s: grid_from,
        rate: merged_rate(&files, counters.events, time_s),
        counters,
        latencies,
        connections,
        intervals,
        server,
        idle_connections: IdleResult::sum(files.iter().filter_map(|f| f.result.idle_connections.as_ref())),
    })
}

/// The index (in `files`, sorted by shard) of the first file with the
/// server's figures.
fn sampling_shard(files: &[ShardFile]) -> Option<usize> {
    files.iter().position(|f| f.result.server.is_some())
}

/// How much faster than its average a shard may run outside the sampler's
/// span (see [`merged_server`]).
const UNEVEN_RATE: f64 = 2.0;

/// The sampling shard's server totals for the whole run: its delta, the
/// figures per query of every shard's, and the check of `Questions`
/// against every shard's statements, its tolerance widened by what the
/// other shards ran outside the sampler's span (their clocks' start and
/// end apart from its samples) and their events in flight at its edges.
fn merged_server(files: &[ShardFile], sampler: usize, counters: &Counters) -> Option<ServerResult> {
    let sampled = files.get(sampler)?.result.server.as_ref()?;
    let mut source = sampled.source.clone()?;
    source.merged_shards = Some(files.len() as u32);
    let delta = sampled.delta.clone();
    let counts = ClientCounts { queries: counters.queries(), transactions: counters.events };
    let statements = counters.queries().saturating_add(counters.errors);
    let whole_rate = if delta.seconds > 0.0 { statements as f64 / delta.seconds } else { 0.0 };
    let mut edge_statements = whole_rate * source.edge_blur_s;
    for (_, file) in files.iter().enumerate().filter(|(i, _)| *i != sampler) {
        let result = &file.result;
        let own = result.counters.queries.saturating_add(result.counters.ignored_errors);
        let per_event = own.div_ceil(result.counters.transactions.max(1)).max(1);
        let (start, end) = (file.measured_from_unix_s(), file.measured_from_unix_s() + result.time_s);
        let outside_s = (source.from_unix_s - start).abs() + (end - source.to_unix_s).abs();
        let rate = if result.time_s > 0.0 { own as f64 / result.time_s } else { 0.0 };
        // A shard's rate is not even over its span: once the sampler's
        // shard is done, it gets that shard's share of the cores (measured
        // on the 2-core VM: two thirds of a shard's statements in the last
        // half of its span). Twice its average rate, and never more than
        // it ran.
        let outside = (UNEVEN_RATE * rate * outside_s).min(own as f64);
        edge_statements += outside + 2.0 * f64::from(result.threads) * per_event as f64;
    }
    let run = RunStatements {
        statements,
        events: counters.events,
        connections: files.iter().map(|f| u64::from(f.result.threads)).sum(),
        reconnects: counters.reconnects,
        busy_edges: source.busy_edges,
        edge_statements: edge_statements.ceil() as u64,
        // Each idle connection still open at the end sent its COM_QUIT.
        idle_quits: IdleResult::sum(files.iter().filter_map(|f| f.result.idle_connections.as_ref()))
            .map_or(0, |idle| idle.open),
    };
    Some(ServerResult {
        figures: ServerFigures::of(&delta, Some(counts)),
        consistency: ConsistencyCheck::of(&delta, run),
        delta,
        source: Some(source),
    })
}

fn counters_of(totals: &CounterTotals) -> Counters {
    Counters {
        reads: totals.reads,
        writes: totals.writes,
        others: totals.others,
        events: totals.transactions,
        errors: totals.ignored_errors,
        reconnects: totals.reconnects,
        failed_reconnects: 0,
    }
}

/// How badly a shard ended: the merged run ended as its worst shard.
fn severity(end: RunEnd) -> u8 {
    match end {
        RunEnd::Completed => 0,
        RunEnd::Cut => 1,
        RunEnd::ForcedShutdown => 2,
        RunEnd::Interrupted => 3,
    }
}

/// The first shard's description of the run, for the whole run: every
/// host named, the shard fields saying how many shards were merged.
fn merged_info(first: &ShardFile, files: &[ShardFile]) -> RunInfo {
    let mut info = first.result.run.clone();
    let mut hosts: Vec<&str> = Vec::new();
    for host in files.iter().map(|f| f.result.run.host.as_str()) {
        if !hosts.contains(&host) {
            hosts.push(host);
        }
    }
    info.host = hosts.join(",");
    info.options.retain(|name, _| !PER_SHARD_OPTIONS.contains(&name.as_str()));
    let shards: Vec<&ShardInfo> = files.iter().filter_map(|f| f.result.run.shard.as_ref()).collect();
    if let Some(shard) = info.shard.as_mut() {
        shard.index = 0;
        shard.merged_from = Some(shards.len() as u32);
        shard.started_unix_s = shards.iter().filter_map(|s| s.started_unix_s).reduce(f64::min);
        shard.late_ms = shards.iter().map(|s| s.late_ms).fold(0.0, f64::max);
        shard.clock = None;
    }
    info
}

/// `--rate`'s figures for the whole run: the shards' targets add up, as
/// their backlogs do; the target is missed when any shard missed its part.
fn merged_rate(files: &[ShardFile], events: u64, time_s: f64) -> Option<RateSummary> {
    let rates: Vec<_> = files.iter().filter_map(|f| f.result.rate.as_ref()).collect();
    let first = rates.first()?;
    Some(RateSummary {
        target: rates.iter().map(|r| r.target_tps).sum(),
        arrival: if first.arrival == "fixed" { "fixed" } else { "poisson" },
        achieved: if time_s > 0.0 { events as f64 / time_s } else { 0.0 },
        waiting: rates.iter().map(|r| r.backlog).sum(),
        oldest_wait_s: rates.iter().map(|r| r.oldest_wait_s).fold(0.0, f64::max),
        missed: rates.iter().any(|r| !r.target_met),
        dropped: rates.iter().any(|r| r.stages).then(|| rates.iter().filter_map(|r| r.dropped).sum()),
        late: rates.iter().map(|r| r.late_starts).sum(),
        // The busiest shard's client, and the longest client delay, say
        // whether any part was client-bound.
        client: rates.iter().filter_map(|r| r.client).max_by(|a, b| a.busy_share.total_cmp(&b.busy_share)).map(|c| {
            ClientLoad {
                delay: rates
                    .iter()
                    .filter_map(|r| r.client.and_then(|c| c.load().delay))
                    .max_by(|a, b| a.p99_ms.total_cmp(&b.p99_ms)),
                ..c.load()
            }
        }),
    })
}

/// The shards' intervals on one grid: its step the report interval (the
/// median interval length, which a late or early tick does not move, to
/// whole seconds as `--report-interval` gives it), its origin `from`; each
/// slot then says which shards did not cover it.
fn merge_intervals(
    files: &[ShardFile],
    from: f64,
    kind_names: &'static [&'static str],
    sampler: Option<usize>,
) -> Result<Vec<MergedInterval>, MergeError> {
    let mut lengths: Vec<f64> = files.iter().flat_map(|f| f.intervals.iter().map(|i| i.interval_s)).collect();
    lengths.sort_by(f64::total_cmp);
    let Some(&median) = lengths.get(lengths.len() / 2) else { return Ok(Vec::new()) };
    let step = median.round().max(1.0);
    let mut slots: BTreeMap<i64, (MergedInterval, Vec<usize>)> = BTreeMap::new();
    for (index, file) in files.iter().enumerate() {
        for interval in &file.intervals {
            let slot = slot_ending(interval.start_unix_s + interval.interval_s, from, step);
            let (merged, shards) =
                slots.entry(slot).or_insert_with(|| (empty_slot(slot, step, kind_names), Vec::new()));
            if let (true, Some(server)) = (sampler == Some(index), &interval.server) {
                merged.server = Some(match &merged.server {
                    Some(earlier) => earlier.then(&server.delta),
                    None => server.delta.clone(),
                });
            }
            let recorded = interval
                .recorded
                .as_ref()
                .ok_or_else(|| MergeError::IntervalNotMergeable { path: file.path.clone(), end_s: interval.time_s })?;
            // Two intervals of one shard in a slot (a report thread that
            // woke half an interval late) are its one set of connections.
            if !shards.contains(&index) {
                merged.threads += interval.threads;
                shards.push(index);
            }
            add_interval(merged, interval, recorded, kind_names)
                .map_err(|source| MergeError::Recorded { path: file.path.clone(), source })?;
        }
    }
    Ok(slots
        .into_iter()
        .map(|(slot, (mut merged, shards))| {
            merged.partial = partial_shards(files, &shards, (from + slot as f64 * step, step));
            merged
        })
        .collect())
}

fn empty_slot(slot: i64, step: f64, kind_names: &'static [&'static str]) -> MergedInterval {
    MergedInterval {
        end_s: (slot + 1) as f64 * step,
        length_s: step,
        threads: 0,
        partial: Vec::new(),
        interval: Interval::new(kind_names),
        queue: None,
        arrivals: None,
        server: None,
    }
}

/// The shards of `files` that did not run through the whole slot that
/// starts at `start` (Unix seconds) and lasts `step`: those with an
/// interval there (`reported`, indexes into `files`) ran as much of it
/// as their intervals' span covers (less when they started late or ended
/// early); the others ran none of it. A shard short by [`LATE_MS`] or
/// less covered it, as a start that late is not named either.
fn partial_shards(files: &[ShardFile], reported: &[usize], (start, step): (f64, f64)) -> Vec<PartialShard> {
    let mut partial = Vec::new();
    for (index, file) in files.iter().enumerate() {
        let ran_s = match (reported.contains(&index), file.intervals_span()) {
            (true, Some((first, last))) => (last.min(start + step) - first.max(start)).clamp(0.0, step),
            _ => 0.0,
        };
        if step - ran_s > LATE_MS / 1e3 {
            let shard =
                file.result.run.shard.as_ref().map_or_else(|| "?".to_owned(), |s| format!("{}/{}", s.index, s.count));
            partial.push(PartialShard { shard, ran_s, of_s: step });
        }
    }
    partial
}

/// The slot of the grid (`from`, `step`) an interval ending at
/// `end_unix_s` belongs to: the one whose end is nearest, so shards whose
/// clocks or ticks are a little apart land together, and a shard's first
/// interval, cut short by a late start, lands where it ends.
pub fn slot_ending(end_unix_s: f64, from: f64, step: f64) -> i64 {
    if step <= 0.0 {
        return 0;
    }
    (((end_unix_s - from) / step).round() as i64 - 1).max(0)
}

fn add_interval(
    merged: &mut MergedInterval,
    interval: &IntervalResult,
    recorded: &Recorded,
    kind_names: &'static [&'static str],
) -> Result<(), RecordedError> {
    merged.interval.counters.merge(&counters_of(&interval.counters));
    merged.interval.latencies.merge(&recorded.latencies(kind_names)?);
    if let Some(queue) = interval.queue {
        let sum = merged.queue.get_or_insert_with(QueueStats::default);
        sum.length += queue.length;
        sum.concurrency += queue.concurrency;
    }
    if let Some(target) = interval.target_rate {
        let sum = merged.arrivals.get_or_insert_with(ArrivalStats::default);
        sum.target_rate += target;
        sum.dropped += interval.dropped.unwrap_or(0);
        sum.late += interval.late_starts.unwrap_or(0);
        sum.staged |= interval.dropped.is_some();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::record::{IntervalSpan, Measured, RunShape};
    use crate::results::recorded::RecordedHistograms;
    use crate::results::shard_info::{start_at_text, RunIdentity};
    use crate::results::LatencyListing;

    const KINDS: &[&str] = &["point_select", "other"];
    const START_AT: f64 = 1_767_225_600.0;

    fn identity(count: u32) -> RunIdentity {
        RunIdentity {
            test: "oltp_point_select".to_owned(),
            shards: count,
            threads: 6,
            tables: 1,
            table_size: 1000,
            events: None,
            rate: None,
            time: Some(2),
            rate_stages: None,
            start_at: Some(start_at_text(START_AT)),
            script: None,
        }
    }

    fn latencies(samples_ns: &[u64]) -> Latencies {
        let mut latencies = Latencies::new(KINDS);
        for &ns in samples_ns {
            latencies.sysbench.record_ns(ns);
            latencies.events.record_ns(ns);
            latencies.kinds.record(0, ns / 2);
        }
        latencies
    }

    /// Shard `index` of `count`, started `late_ms` after the start, whose
    /// intervals of 1 s hold `per_interval` (latencies, in ns).
    fn shard_file(index: u32, count: u32, late_ms: f64, per_interval: &[&[u64]]) -> ShardFile {
        let mut shard = ShardInfo::new(index, identity(count), Some(START_AT));
        shard.started_unix_s = Some(START_AT + late_ms / 1e3);
        shard.late_ms = late_ms;
        let info = RunInfo {
            format_version: FORMAT_VERSION,
            wirebench_version: "0.1.0".to_owned(),
            label: None,
            test: "oltp_point_select".to_owned(),
            server_version: None,
            host: format!("client-{index}"),
            start_time: String::new(),
            options: [("threads".to_owned(), "6".to_owned()), ("shard".to_owned(), format!("{index}/{count}"))].into(),
            shard: Some(shard),
        };
        let listing = LatencyListing::new(&[95.0], Some(95), false, RecordedHistograms::Kept);
        let mut total = Interval::new(KINDS);
        let mut intervals = Vec::new();
        for (k, samples) in per_interval.iter().enumerate() {
            let interval = Interval {
                counters: Counters { reads: samples.len() as u64, events: samples.len() as u64, ..Counters::default() },
                latencies: latencies(samples),
            };
            let span = IntervalSpan {
                threads: 2,
                end_s: k as f64 + 1.0,
                length_s: 1.0,
                measured_from_unix_s: START_AT + late_ms / 1e3,
            };
            intervals.push(IntervalResult::new(span, &interval, &listing, None));
            total.merge(&interval);
        }
        let connections = [ConnStats { events: total.counters.events, busy_ns: total.latencies.sysbench.sum_ns() }];
        let shape =
            RunShape { info: &info, step: None, threads: 2, end: RunEnd::Completed, warmup_s: 0, listing: &listing };
        let measured = Measured {
            counters: &total.counters,
            latencies: &total.latencies,
            connections: &connections,
            time_s: per_interval.len() as f64 - late_ms / 1e3,
            rate_window_s: per_interval.len() as f64,
            rate: None,
        };
        let result = RunResult::new(shape, measured);
        ShardFile { path: PathBuf::from(format!("shard-{index}.json")), result, intervals }
    }

    #[test]
    fn intervals_land_on_the_slot_whose_end_is_nearest() {
        let from = START_AT;
        assert_eq!(slot_ending(from + 1.003, from, 1.0), 0);
        assert_eq!(slot_ending(from + 0.996, from, 1.0), 0);
        assert_eq!(slot_ending(from + 2.020, from, 1.0), 1);
        assert_eq!(slot_ending(from + 19.6, from, 10.0), 1);
        assert_eq!(slot_ending(from + 14.4, from, 10.0), 0);
        assert_eq!(slot_ending(from + 0.2, from, 10.0), 0, "a sliver before the first end");
        assert_eq!(slot_ending(from + 5.0, from, 0.0), 0, "no step, one slot");
    }

    /// `file`'s intervals cut as a run with `--start-at` cuts them: on
    /// the common grid from `--start-at`, its first one short by its
    /// lateness.
    fn on_the_common_grid(mut file: ShardFile) -> ShardFile {
        let late_s = file.result.run.shard.as_ref().unwrap().late_ms / 1e3;
        for interval in &mut file.intervals {
            interval.start_unix_s -= late_s;
            interval.time_s -= late_s;
        }
        if let Some(first) = file.intervals.first_mut() {
            first.start_unix_s += late_s;
            first.interval_s -= late_s;
        }
        file
    }

    /// A shard 11 ms late (the server sampled before its start) cuts its
    /// intervals where the other does: every slot holds both, whole.
    #[test]
    fn a_shard_a_little_late_on_the_common_grid_adds_up_in_every_slot() {
        let a = shard_file(0, 2, 0.1, &[&[1_000], &[1_000], &[1_000]]);
        let b = on_the_common_grid(shard_file(1, 2, 11.0, &[&[2_000], &[2_000], &[2_000]]));
        let run = merge_shards(vec![a, b], KINDS).unwrap();
        let events: Vec<u64> = run.intervals.iter().map(|i| i.interval.counters.events).collect();
        assert_eq!(events, [2, 2, 2]);
        assert_eq!(run.intervals.iter().map(|i| i.threads).collect::<Vec<_>>(), [4, 4, 4]);
        assert!(run.intervals.iter().all(|i| i.partial.is_empty()), "{:?}", run.intervals);
        assert_eq!(run.measured_from_unix_s, START_AT, "the grid is --start-at's");
    }

    /// A shard 400 ms late ran 0.6 s of the first slot, and a shard whose
    /// last interval is missing ran none of the last: both lines say so.
    #[test]
    fn a_slot_a_shard_did_not_run_through_is_marked() {
        let a = shard_file(0, 2, 0.0, &[&[1_000], &[1_000], &[1_000]]);
        let b = on_the_common_grid(shard_file(1, 2, 400.0, &[&[2_000], &[2_000]]));
        let run = merge_shards(vec![a, b], KINDS).unwrap();
        let partial: Vec<String> =
            run.intervals.iter().map(|i| i.partial.iter().map(|p| p.to_string()).collect()).collect();
        assert_eq!(partial, ["shard 1/2 ran 0.60 s of 1.00 s", "", "shard 1/2 ran 0.00 s of 1.00 s"]);
        assert_eq!(run.intervals.iter().map(|i| i.threads).collect::<Vec<_>>(), [4, 4, 2]);
    }

    /// Two shards 30 ms apart: their first intervals add up in slot 0,
    /// their second in slot 1, whatever order the files come in.
    #[test]
    fn shards_a_little_apart_are_aligned_on_absolute_time() {
        let a = shard_file(0, 2, 0.0, &[&[1_000_000, 2_000_000], &[3_000_000]]);
        let b = shard_file(1, 2, 30.0, &[&[4_000_000], &[5_000_000, 6_000_000, 7_000_000]]);
        let run = merge_shards(vec![b, a], KINDS).unwrap();
        assert_eq!(run.intervals.len(), 2);
        let events: Vec<u64> = run.intervals.iter().map(|i| i.interval.counters.events).collect();
        assert_eq!(events, [3, 4]);
        assert_eq!(run.intervals.iter().map(|i| i.threads).collect::<Vec<_>>(), [4, 4]);
        assert_eq!(run.intervals[1].interval.latencies.events.max_ns(), 7_000_000);
        assert_eq!((run.intervals[0].end_s, run.intervals[1].end_s), (1.0, 2.0));
        assert_eq!(run.measured_from_unix_s, START_AT);
    }

    /// A shard that started a whole interval late lands a slot later.
    #[test]
    fn a_shard_an_interval_late_is_a_slot_later() {
        let a = shard_file(0, 2, 0.0, &[&[1_000], &[1_000]]);
        let b = shard_file(1, 2, 1000.0, &[&[1_000]]);
        let run = merge_shards(vec![a, b], KINDS).unwrap();
        let events: Vec<u64> = run.intervals.iter().map(|i| i.interval.counters.events).collect();
        assert_eq!(events, [1, 2]);
        assert_eq!(run.notes.late, [("shard 1/2".to_owned(), 1000.0)]);
        let first: Vec<String> = run.intervals[0].partial.iter().map(|p| p.to_string()).collect();
        assert_eq!(first, ["shard 1/2 ran 0.00 s of 1.00 s"]);
        assert!(run.intervals[1].partial.is_empty());
    }

    /// Counters add; the merged histograms are one histogram of every
    /// shard's samples; the time spans the earliest start to the last end.
    #[test]
    fn counts_add_and_histograms_merge_exactly() {
        let (one, two, three): (&[u64], &[u64], &[u64]) =
            (&[1_000, 50_000, 7_000_000], &[2_000_000, 999_000_000], &[12_345, 67_890, 3_000_000, 4_000_000]);
        let files =
            vec![shard_file(0, 3, 0.0, &[one]), shard_file(1, 3, 10.0, &[two]), shard_file(2, 3, 0.0, &[three])];
        let run = merge_shards(files, KINDS).unwrap();
        let all = latencies(&[one, two, three].concat());
        assert_eq!(run.counters.events, 9);
        assert_eq!(run.latencies, all);
        assert_eq!(run.latencies.events.percentile_ns(95.0), all.events.percentile_ns(95.0));
        assert_eq!(run.connections.len(), 3);
        assert_eq!(run.threads, 6);
        assert!((run.time_s - 1.0).abs() < 1e-9, "{}", run.time_s);
        assert_eq!(run.info.host, "client-0,client-1,client-2");
        let shard = run.info.shard.as_ref().unwrap();
        assert_eq!((shard.merged_from, shard.late_ms), (Some(3), 10.0));
        assert!(!run.info.options.contains_key("shard"));
        assert_eq!(run.notes, MergeNotes { count: 3, ..MergeNotes::default() });
    }

    #[test]
    fn a_missing_shard_is_named() {
        let run = merge_shards(vec![shard_file(0, 3, 0.0, &[&[1]]), shard_file(2, 3, 0.0, &[&[1]])], KINDS).unwrap();
        assert_eq!(run.notes.missing, [1]);
        let text = run.notes.to_string();
        assert!(text.starts_with("wirebench: merge: shard 1/3 is absent"), "{text}");
    }

    #[test]
    fn a_shard_given_twice_is_refused() {
        let error =
            merge_shards(vec![shard_file(0, 2, 0.0, &[&[1]]), shard_file(0, 2, 0.0, &[&[1]])], KINDS).unwrap_err();
        assert_eq!(
            error.to_string(),
            "shard 0/2 is given twice, in shard-0.json and shard-0.json: give each shard's file once"
        );
    }

    /// Different --threads or --start-at: not one run, refused naming the
    /// option; another option that differs is noted.
    #[test]
    fn files_of_different_runs_are_refused_naming_the_option() {
        let mut other = shard_file(1, 2, 0.0, &[&[1]]);
        let shard = other.result.run.shard.as_mut().unwrap();
        shard.identity.threads = 8;
        let error = merge_shards(vec![shard_file(0, 2, 0.0, &[&[1]]), other.clone()], KINDS).unwrap_err().to_string();
        assert!(
            error.starts_with("shard-0.json and shard-1.json are not shards of the same run: --threads 6 against 8;"),
            "{error}"
        );
        let shard = other.result.run.shard.as_mut().unwrap();
        shard.identity.threads = 6;
        shard.identity.start_at = Some(start_at_text(START_AT + 60.0));
        let error = merge_shards(vec![shard_file(0, 2, 0.0, &[&[1]]), other.clone()], KINDS).unwrap_err().to_string();
        assert!(error.contains("--start-at 1767225600.000000 against 1767225660.000000"), "{error}");
        let shard = other.result.run.shard.as_mut().unwrap();
        shard.identity.start_at = Some(start_at_text(START_AT));
        other.result.run.options.insert("mysql-host".to_owned(), "db2".to_owned());
        let run = merge_shards(vec![shard_file(0, 2, 0.0, &[&[1]]), other], KINDS).unwrap();
        let text = run.notes.to_string();
        assert_eq!(
            text,
            "wirebench: merge: --mysql-host differs between shards (shard 0/2: (not given), shard 1/2: db2)\n"
        );
    }

    #[test]
    fn a_file_without_shard_fields_or_already_merged_is_refused() {
        let mut old = shard_file(0, 1, 0.0, &[&[1]]);
        old.result.recorded = None;
        let error = merge_shards(vec![old], KINDS).unwrap_err();
        assert!(matches!(error, MergeError::NotMergeable { .. }), "{error}");
        assert!(error.to_string().starts_with("shard-0.json has no shard or histogram fields"), "{error}");
        let mut merged = shard_file(0, 1, 0.0, &[&[1]]);
        merged.result.run.shard.as_mut().unwrap().merged_from = Some(3);
        assert!(merge_shards(vec![merged], KINDS).unwrap_err().to_string().contains("is already a merge of 3 shards"));
    }

    /// An interval's counters without its histograms would merge into
    /// an interval whose latencies miss that shard's events.
    #[test]
    fn an_interval_without_histograms_is_refused() {
        let mut edited = shard_file(1, 2, 0.0, &[&[1_000], &[2_000]]);
        edited.intervals[1].recorded = None;
        let error = merge_shards(vec![shard_file(0, 2, 0.0, &[&[1_000], &[2_000]]), edited], KINDS).unwrap_err();
        assert_eq!(
            error.to_string(),
            "shard-1.json: the interval ending 2.000 s into the run has no histograms (written by an older wirebench, or \
             edited): merge the file the shard's `wirebench ... --format=json run` wrote"
        );
    }

    #[test]
    fn files_read_back_as_written() {
        let file = shard_file(0, 2, 0.0, &[&[1_000], &[2_000]]);
        let mut text = String::new();
        for interval in &file.intervals {
            text += &serde_json::to_string(&ResultLine::Interval(interval.clone())).unwrap();
            text += "\n";
        }
        text += &serde_json::to_string(&ResultLine::Final(Box::new(file.result.clone()))).unwrap();
        assert_eq!(ShardFile::parse(&file.path, &text).unwrap(), file);
        let error = ShardFile::parse(&file.path, "SQL statistics:\n").unwrap_err();
        assert!(matches!(error, MergeError::NotAResult { line: 1, .. }), "{error}");
        let intervals_only = text.lines().next().unwrap();
        assert!(matches!(ShardFile::parse(&file.path, intervals_only), Err(MergeError::NoFinalResult { .. })));
    }
}
