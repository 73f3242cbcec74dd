//! Which shard of which run a result is: what `wirebench merge` reads to
//! put a run's shards back together, and to refuse files of other runs.
//!
//! A run is named by the options its shards must share (its
//! [`RunIdentity`]: the test, the shard count, the whole run's
//! connections, tables, rows, `--events`, `--rate`, `--time`) and by
//! `--start-at`, which no two runs share; `run_id` is a hash of them, the
//! same on every shard of a run and on no other run.

use serde::{Deserialize, Serialize};

/// The options every shard of a run has the same, as they were in effect
/// (defaults included, so `--time=10` and no `--time` agree).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunIdentity {
    pub test: String,
    /// `--shards` (1 for a run in one instance).
    pub shards: u32,
    /// `--threads`: the whole run's connections.
    pub threads: u32,
    pub tables: u32,
    pub table_size: u32,
    /// `--events`, the whole run's; none for no limit.
    pub events: Option<u64>,
    /// `--rate`, the whole run's; none for as fast as possible.
    pub rate: Option<u32>,
    /// `--time`; none for no limit.
    pub time: Option<u32>,
    /// `--rate-stages`, the whole run's. Absent without it, which leaves
    /// the run_id of a run without it as it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_stages: Option<String>,
    /// `--start-at` as Unix time, to the microsecond.
    pub start_at: Option<String>,
    /// For a Lua script (`test` is then its file name): a hash of its text
    /// and of the options given to it. Absent for a built-in test, whose
    /// run_id it leaves as it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<String>,
}

impl RunIdentity {
    /// A 64-bit FNV-1a hash of the identity's JSON, in hex: stable across
    /// builds and hosts, which `std`'s hasher does not promise.
    pub fn run_id(&self) -> String {
        fnv1a_hex(serde_json::to_string(self).unwrap_or_default().as_bytes())
    }

    /// The options on which `other` differs from `self`: the option's
    /// name, `self`'s value, `other`'s value.
    pub fn differences(&self, other: &RunIdentity) -> Vec<(&'static str, String, String)> {
        let shown = |v: Option<String>| v.unwrap_or_else(|| "(none)".to_owned());
        let fields = [
            ("test", Some(self.test.clone()), Some(other.test.clone())),
            ("--shards", Some(self.shards.to_string()), Some(other.shards.to_string())),
            ("--threads", Some(self.threads.to_string()), Some(other.threads.to_string())),
            ("--tables", Some(self.tables.to_string()), Some(other.tables.to_string())),
            ("--table-size", Some(self.table_size.to_string()), Some(other.table_size.to_string())),
            ("--events", self.events.map(|e| e.to_string()), other.events.map(|e| e.to_string())),
            ("--rate", self.rate.map(|r| r.to_string()), other.rate.map(|r| r.to_string())),
            ("--time", self.time.map(|t| t.to_string()), other.time.map(|t| t.to_string())),
            ("--rate-stages", self.rate_stages.clone(), other.rate_stages.clone()),
            ("--start-at", self.start_at.clone(), other.start_at.clone()),
            ("the script's text or options", self.script.clone(), other.script.clone()),
        ];
        fields.into_iter().filter(|(_, a, b)| a != b).map(|(name, a, b)| (name, shown(a), shown(b))).collect()
    }
}

/// A 64-bit FNV-1a hash of `bytes`, in 16 hex digits.
pub fn fnv1a_hex(bytes: &[u8]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &byte in bytes {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// `--start-at` as the identity records it.
pub fn start_at_text(unix_s: f64) -> String {
    format!("{unix_s:.6}")
}

/// Which shard this result is, and when it started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardInfo {
    /// From 0; 0 for a run in one instance.
    pub index: u32,
    /// `--shards`; 1 for a run in one instance.
    pub count: u32,
    /// [`RunIdentity::run_id`] of `identity`.
    pub run_id: String,
    pub identity: RunIdentity,
    /// `--start-at`, Unix seconds.
    pub start_at_unix_s: Option<f64>,
    /// When this shard's events started, by this host's clock, Unix
    /// seconds (before `--warmup-time`); none if it never started.
    pub started_unix_s: Option<f64>,
    /// How long after `--start-at` that was, in ms (0 without it).
    pub late_ms: f64,
    /// This host's clock as the kernel's NTP discipline knows it.
    pub clock: Option<ClockState>,
    /// In `wirebench merge`'s output: how many shards' results it added.
    pub merged_from: Option<u32>,
}

impl ShardInfo {
    /// A shard that has not started yet.
    pub fn new(index: u32, identity: RunIdentity, start_at_unix_s: Option<f64>) -> Self {
        ShardInfo {
            index,
            count: identity.shards,
            run_id: identity.run_id(),
            identity,
            start_at_unix_s,
            started_unix_s: None,
            late_ms: 0.0,
            clock: None,
            merged_from: None,
        }
    }

    /// `shard 1/3`.
    pub fn name(&self) -> String {
        format!("shard {}/{}", self.index, self.count)
    }

    /// The comment lines an `--hdr-log` starts with, so that the log names
    /// its run and shard as the JSON result does.
    pub fn log_comment(&self, host: &str) -> String {
        let started = self.started_unix_s.map_or_else(|| "-".to_owned(), |s| format!("{s:.6}"));
        let start_at = self.start_at_unix_s.map_or_else(|| "-".to_owned(), start_at_text);
        format!(
            "wirebench shard={}/{} run_id={} host={host} start_at={start_at} started={started} late_ms={:.3}",
            self.index, self.count, self.run_id, self.late_ms
        )
    }
}

/// What `adjtimex(2)` says of this host's clock: whether an NTP daemon
/// keeps it synchronised, and the kernel's error bounds. No host can know
/// its offset from another's; these bound it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ClockState {
    pub synchronized: bool,
    /// The kernel's maximum error, ms.
    pub max_error_ms: f64,
    /// The kernel's estimated error, ms.
    pub estimated_error_ms: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity() -> RunIdentity {
        RunIdentity {
            test: "oltp_point_select".to_owned(),
            shards: 3,
            threads: 6,
            tables: 1,
            table_size: 10_000,
            events: None,
            rate: None,
            time: Some(10),
            rate_stages: None,
            start_at: Some(start_at_text(1_767_225_600.25)),
            script: None,
        }
    }

    #[test]
    fn the_run_id_changes_with_each_option_and_start() {
        let base = identity();
        assert_eq!(base.run_id(), identity().run_id());
        assert_eq!(base.run_id().len(), 16);
        let mut other = identity();
        other.start_at = Some(start_at_text(1_767_225_601.25));
        assert_ne!(base.run_id(), other.run_id());
        other = identity();
        other.threads = 7;
        assert_ne!(base.run_id(), other.run_id());
        assert_eq!(base.differences(&other), [("--threads", "6".to_owned(), "7".to_owned())]);
        other.time = None;
        assert_eq!(base.differences(&other)[1], ("--time", "10".to_owned(), "(none)".to_owned()));
    }

    #[test]
    fn the_log_comment_names_the_shard_and_run() {
        let mut shard = ShardInfo::new(1, identity(), Some(1_767_225_600.25));
        shard.started_unix_s = Some(1_767_225_600.251_3);
        shard.late_ms = 1.3;
        let comment = shard.log_comment("client-2");
        assert!(comment.starts_with("wirebench shard=1/3 run_id="), "{comment}");
        assert!(comment.ends_with(" host=client-2 start_at=1767225600.250000 started=1767225600.251300 late_ms=1.300"));
    }
}
