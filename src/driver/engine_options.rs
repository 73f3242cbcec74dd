//! The driver's own settings: how the engine runs (`--cpus`, `--io`,
//! `--poll`, `--pipeline`, `--idle-connections`), how statements go out (`--db-ps-mode`) and
//! which server errors a connection survives (`--mysql-ignore-errors`).
//! The command line fills them; nothing here knows it.

use std::ops::Range;
use std::time::Duration;

use crate::driver::Shard;

/// `--db-ps-mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PsMode {
    /// Server-side prepared statements.
    #[default]
    Auto,
    /// Client-side substitution into COM_QUERY text.
    Disable,
}

/// `--mysql-ignore-errors`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IgnoreErrors {
    List(Vec<u16>),
    All,
}

impl Default for IgnoreErrors {
    /// sysbench's: deadlock (1213), record changed (1020), lock wait timeout (1205).
    fn default() -> Self {
        IgnoreErrors::List(vec![1213, 1020, 1205])
    }
}

impl IgnoreErrors {
    pub fn ignores(&self, code: u16) -> bool {
        match self {
            IgnoreErrors::All => true,
            IgnoreErrors::List(codes) => codes.contains(&code),
        }
    }
}

/// The engine's options (wirebench's own: `--cpus`, `--io`, `--poll`, `--pipeline`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineOptions {
    /// `--cpus=0,2,4-7`: run the engine threads on these CPUs; `None` for
    /// all of them.
    pub cpus: Option<Vec<usize>>,
    pub io: IoBackend,
    pub poll: PollMode,
    /// `--pipeline=N`: events in flight per connection; 1 is sysbench's
    /// one-at-a-time behaviour.
    pub pipeline: u32,
    /// `--idle-connections` and how they are held.
    pub idle: IdleSettings,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            cpus: None,
            io: IoBackend::Auto,
            poll: PollMode::Auto,
            pipeline: 1,
            idle: IdleSettings::default(),
        }
    }
}

/// `--io`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IoBackend {
    /// io_uring where the kernel allows it, else epoll.
    #[default]
    Auto,
    Uring,
    Epoll,
}

/// `--poll`: what an engine thread does with nothing to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PollMode {
    /// Per loop, as the wait plan decides (`driver::plan_wait`).
    #[default]
    Auto,
    /// Block in the kernel.
    Sleep,
    /// `adaptive`, retired: accepted so that command lines that name it
    /// still run, and waits as `Sleep` (the wait plan says why).
    AdaptiveRetired,
    /// Never block (burns the CPU, lowest latency).
    Spin,
}

/// `--idle-connections`, `--idle-ping-interval`, `--idle-connect-rate`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdleSettings {
    /// Idle connections of the whole run (all shards).
    pub count: u64,
    pub ping_interval: Duration,
    /// Logins per second of the whole run (all shards).
    pub connect_rate: u32,
}

impl Default for IdleSettings {
    fn default() -> Self {
        IdleSettings { count: 0, ping_interval: Duration::from_secs(10), connect_rate: 1000 }
    }
}

impl IdleSettings {
    /// This shard's part: its connections (by their number in the run) and
    /// its share of the login rate (at least one a second).
    pub fn for_shard(&self, shard: Shard) -> (Range<u64>, u32) {
        let rate = shard.share(u64::from(self.connect_rate)).max(1);
        (shard.range(self.count), u32::try_from(rate).unwrap_or(u32::MAX))
    }
}
