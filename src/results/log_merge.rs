//! `wirebench merge` of `--hdr-log` files: the shards' interval logs read
//! back (the `#wirebench shard=...` comment names the shard and run,
//! `BaseTime` plus each interval's offset its absolute start), checked as
//! the JSON results are, and added into one histogram of the events per
//! slot of a common time grid and one for the run. A log holds latencies
//! only: queries, errors and the other counters are in the JSON results.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use hdrhistogram::Histogram;

use super::recorded::decode_histogram;
use super::shard_merge::{slot_ending, MergeError, MergeNotes, LATE_MS};
use crate::stats::HdrLatency;

/// The comment [`super::shard_info::ShardInfo::log_comment`] writes.
const SHARD_COMMENT: &str = "#wirebench shard=";

/// One shard's interval log: which shard, and its events' intervals.
#[derive(Debug, Clone)]
pub struct ShardLog {
    pub path: PathBuf,
    pub index: u32,
    pub count: u32,
    pub run_id: String,
    pub late_ms: f64,
    pub start_at: Option<String>,
    /// Each untagged (events') interval: its absolute start, Unix seconds,
    /// its length, its histogram.
    pub intervals: Vec<(f64, f64, HdrLatency)>,
}

impl ShardLog {
    /// Reads `text`, the contents of `path`.
    pub fn parse(path: &Path, text: &str) -> Result<ShardLog, MergeError> {
        let not_a_log = |why: &str| MergeError::NotALog { path: path.to_owned(), why: why.to_owned() };
        let comment = text.lines().find_map(|l| l.strip_prefix(SHARD_COMMENT));
        let fields = comment.ok_or_else(|| not_a_log("no `#wirebench shard=` line: not a shard's --hdr-log"))?;
        let field = |name: &str| fields.split(' ').find_map(|f| f.strip_prefix(name).and_then(|v| v.strip_prefix('=')));
        let (index, count) = fields.split(' ').next().and_then(|s| s.split_once('/')).unwrap_or(("", ""));
        let mut log = ShardLog {
            path: path.to_owned(),
            index: index.parse().map_err(|_| not_a_log("its shard is not I/N"))?,
            count: count.parse().map_err(|_| not_a_log("its shard is not I/N"))?,
            run_id: field("run_id").unwrap_or_default().to_owned(),
            late_ms: field("late_ms").and_then(|v| v.parse().ok()).unwrap_or(0.0),
            start_at: field("start_at").filter(|v| *v != "-").map(str::to_owned),
            intervals: Vec::new(),
        };
        log.read_intervals(text).map_err(|why| not_a_log(&why))?;
        Ok(log)
    }

    fn read_intervals(&mut self, text: &str) -> Result<(), String> {
        let mut base_s = 0.0;
        for entry in IntervalLogIterator::new(text.as_bytes()) {
            match entry.map_err(|e| format!("an interval log line does not parse ({e:?})"))? {
                LogEntry::BaseTime(base) => base_s = base.as_secs_f64(),
                LogEntry::StartTime(_) => {}
                LogEntry::Interval(interval) if interval.tag().is_none() => {
                    let histogram = decode_histogram(interval.encoded_histogram()).map_err(|e| e.to_string())?;
                    let start_s = base_s + interval.start_timestamp().as_secs_f64();
                    self.intervals.push((start_s, interval.duration().as_secs_f64(), latency_of(&histogram)?));
                }
                LogEntry::Interval(_) => {}
            }
        }
        Ok(())
    }
}

/// A log's histogram as the statistics keep latencies (min, max and sum
/// from the histogram itself: a log keeps nothing more exact).
fn latency_of(histogram: &Histogram<u64>) -> Result<HdrLatency, String> {
    let sum: u128 =
        histogram.iter_recorded().map(|v| u128::from(v.value_iterated_to()) * u128::from(v.count_at_value())).sum();
    HdrLatency::from_parts(histogram, histogram.min(), histogram.max(), sum)
        .ok_or_else(|| "a histogram of another precision than wirebench's".to_owned())
}

/// The logs of one run, added up: the events' latency per slot and for
/// the whole run.
#[derive(Debug, Clone)]
pub struct MergedLogs {
    pub notes: MergeNotes,
    pub shards: usize,
    pub count: u32,
    pub run_id: String,
    /// Unix seconds of the grid's origin: the earliest interval's start.
    pub from_unix_s: f64,
    /// Each slot's end (seconds from `from_unix_s`), length, latencies.
    pub slots: Vec<(f64, f64, HdrLatency)>,
    pub total: HdrLatency,
}

/// Checks the logs are one run's, each shard once, and adds them up.
pub fn merge_logs(logs: &[ShardLog]) -> Result<MergedLogs, MergeError> {
    let first = logs.first().ok_or(MergeError::NoFiles)?;
    let mut seen: BTreeMap<u32, &Path> = BTreeMap::new();
    let mut notes = MergeNotes { count: first.count, ..MergeNotes::default() };
    for log in logs {
        if log.run_id != first.run_id || log.count != first.count {
            let differences = format!("run_id {} against {}", first.run_id, log.run_id);
            return Err(MergeError::DifferentRuns { first: first.path.clone(), other: log.path.clone(), differences });
        }
        if let Some(earlier) = seen.insert(log.index, &log.path) {
            let (index, count, first, other) = (log.index, log.count, earlier.to_owned(), log.path.clone());
            return Err(MergeError::DuplicateShard { index, count, first, other });
        }
        if log.start_at.is_some() && log.late_ms > LATE_MS {
            notes.late.push((format!("shard {}/{}", log.index, log.count), log.late_ms));
        }
    }
    notes.missing = (0..first.count).filter(|i| !seen.contains_key(i)).collect();
    let all = logs.iter().flat_map(|l| l.intervals.iter());
    let from = all.clone().map(|i| i.0).fold(f64::INFINITY, f64::min);
    let mut lengths: Vec<f64> = all.clone().map(|i| i.1).collect();
    lengths.sort_by(f64::total_cmp);
    let step = lengths.get(lengths.len() / 2).copied().unwrap_or(0.0);
    let (mut slots, mut total) = (BTreeMap::<i64, HdrLatency>::new(), HdrLatency::new());
    for (start, length, latency) in all {
        slots.entry(slot_ending(start + length, from, step)).or_default().merge(latency);
        total.merge(latency);
    }
    let slots = slots.into_iter().map(|(slot, l)| ((slot + 1) as f64 * step, step, l)).collect();
    let from_unix_s = if from.is_finite() { from } else { 0.0 };
    Ok(MergedLogs {
        notes,
        shards: seen.len(),
        count: first.count,
        run_id: first.run_id.clone(),
        from_unix_s,
        slots,
        total,
    })
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::*;
    use crate::stats::{HdrLog, Latencies};

    const KINDS: &[&str] = &["point_select"];

    /// A log as `--hdr-log` writes it: shard `index` of 2, started
    /// `late_s` after the epoch's 1e9 s, one 1 s interval per list.
    fn log(dir: &Path, index: u32, late_s: f64, intervals: &[&[u64]]) -> ShardLog {
        let path = dir.join(format!("s{index}.hlog"));
        let start = UNIX_EPOCH + Duration::from_secs_f64(1e9 + late_s);
        let comment = format!("wirebench shard={index}/2 run_id=00000000000000aa host=h start_at=1000000000.000000 started=- late_ms={:.3}", late_s * 1e3);
        let mut writer = HdrLog::create(&path, start, false, &comment).unwrap();
        for (k, samples) in intervals.iter().enumerate() {
            let mut latencies = Latencies::new(KINDS);
            samples.iter().for_each(|&ns| latencies.events.record_ns(ns));
            writer.write_interval(Duration::from_secs(k as u64), Duration::from_secs(1), &latencies).unwrap();
        }
        drop(writer);
        ShardLog::parse(&path, &std::fs::read_to_string(&path).unwrap()).unwrap()
    }

    #[test]
    fn logs_are_aligned_and_added() {
        let dir = std::env::temp_dir().join(format!("wirebench-log-merge-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let a = log(&dir, 0, 0.0, &[&[1_000, 2_000], &[3_000]]);
        let b = log(&dir, 1, 0.02, &[&[4_000], &[5_000, 9_000_000]]);
        assert_eq!((b.index, b.count, b.late_ms, b.intervals.len()), (1, 2, 20.0, 2));
        let merged = merge_logs(&[b.clone(), a.clone()]).unwrap();
        let counts: Vec<u64> = merged.slots.iter().map(|s| s.2.count()).collect();
        assert_eq!(counts, [3, 3]);
        assert_eq!(merged.total.count(), 6);
        assert_eq!(merged.from_unix_s, 1e9);
        let mut direct = Histogram::<u64>::new_with_bounds(1, u64::MAX / 2, 3).unwrap();
        for v in [1_000, 2_000, 3_000, 4_000, 5_000, 9_000_000] {
            direct.record(v).unwrap();
        }
        assert_eq!(merged.total.percentile_ns(50.0), direct.value_at_quantile(0.5));
        assert_eq!(merged.total.histogram(), &direct);
        assert!(merged.notes.missing.is_empty() && merged.notes.late.is_empty());
        let error = merge_logs(&[a.clone(), a.clone()]).unwrap_err().to_string();
        assert!(error.starts_with("shard 0/2 is given twice"), "{error}");
        let mut other = b.clone();
        other.run_id = "00000000000000bb".to_owned();
        let error = merge_logs(&[a.clone(), other]).unwrap_err().to_string();
        assert!(error.contains("not shards of the same run: run_id 00000000000000aa against 00000000000000bb"));
        assert_eq!(merge_logs(&[a]).unwrap().notes.missing, [1]);
        let error = ShardLog::parse(Path::new("x.hlog"), "#[StartTime: 1 (seconds since epoch)]\n").unwrap_err();
        assert!(error.to_string().contains("no `#wirebench shard=` line"), "{error}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
