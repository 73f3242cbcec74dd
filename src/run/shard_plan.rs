//! `--shard=I/N` and `--start-at`: this instance's part of a run that N
//! instances carry out together, and the instant they all start at.
//!
//! The command line's `--threads`, `--events`, `--rate` and
//! `--rate-stages` are the whole run's. A shard runs the connections [`Shard::range`] gives it, each
//! with the number it has in the whole run: its generator
//! (`Rng::for_thread(seed, n)`), its host of a `--mysql-host` list, its
//! tables in `prepare` and its ids (bulk_insert's table, oltp_insert's
//! unique ids) are those one instance would give connection n, so shards
//! never collide and the same `--rand-seed` repeats each shard's draws.
//! `--events`, `--rate` and each stage's rate are split between the
//! shards that have connections (`--idle-connections` and its login rate
//! too, in `idle_connections.rs`); `cleanup`'s DROPs go round the shards.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::host_facts::host_name;
use super::interrupt::{Interrupts, Signal};
use super::output::stderr_line;
use super::RunError;
use crate::cli::{Bench, Command};
use crate::driver::Shard;

/// How far in the past `--start-at` may be when the command starts: a
/// launcher that took a moment longer than planned still runs, late (and
/// says so); one that reuses an old time is refused.
const START_AT_SLACK: Duration = Duration::from_secs(5);

/// This instance's connections, numbered as in the whole run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ShardThreads {
    /// The whole run's number of this instance's first connection.
    pub first: u32,
    /// `--threads`: the whole run's connections.
    pub total: u32,
}

impl ShardThreads {
    /// The whole run's number of this instance's connection `n`.
    pub(super) fn global(self, n: usize) -> u32 {
        self.first.saturating_add(n as u32)
    }
}

/// What this instance does of the command.
#[derive(Debug)]
pub(super) enum ShardPlan {
    /// `bench` with this shard's `--threads`, `--events` and `--rate`.
    Run { bench: Box<Bench>, threads: ShardThreads },
    /// Nothing: why, to be said on stderr.
    Idle(String),
}

/// This shard's part of `bench`'s command (the whole of it unsplit).
pub(super) fn plan_shard(bench: &Bench) -> ShardPlan {
    let shard = bench.general.shard;
    let total = bench.general.threads;
    let mine = shard.range(u64::from(total));
    let threads = ShardThreads { first: mine.start as u32, total };
    let mut part = bench.clone();
    part.general.threads = (mine.end - mine.start) as u32;
    if shard.is_whole() || bench.command == Command::Cleanup {
        return ShardPlan::Run { bench: Box::new(part), threads };
    }
    let idle = |why: String| ShardPlan::Idle(format!("wirebench: shard {shard} has nothing to do: {why}"));
    let Some(active) = shard.among_first(total) else {
        return idle(format!("--threads={total} gives {} shards a connection each, and no more", total));
    };
    if bench.command != Command::Run {
        return ShardPlan::Run { bench: Box::new(part), threads };
    }
    if let Some(events) = bench.general.events {
        match active.share(events) {
            0 => return idle(format!("--events={events} leaves none to this one of {} shards", active.count())),
            share => part.general.events = Some(share),
        }
    }
    if let Some(rate) = bench.general.rate {
        match active.share(u64::from(rate)) {
            0 => return idle(format!("--rate={rate} leaves no events/s to this one of {} shards", active.count())),
            share => part.general.rate = Some(share as u32),
        }
    }
    if let Some(stages) = &bench.general.rate_stages {
        let mine = stages.share(active);
        if mine.peak() == 0 {
            return idle(format!("--rate-stages={stages} leaves no events/s to this one of {} shards", active.count()));
        }
        part.general.rate_stages = Some(mine);
    }
    ShardPlan::Run { bench: Box::new(part), threads }
}

/// `cleanup`'s statements that are this shard's: every N-th, from the I-th.
pub(super) fn shard_statements(shard: Shard, statements: Vec<String>) -> Vec<String> {
    let (index, count) = (shard.index() as usize, shard.count() as usize);
    statements.into_iter().enumerate().filter(|(k, _)| k % count == index).map(|(_, sql)| sql).collect()
}

/// `--start-at` already more than a few seconds past when the command
/// starts is refused before anything connects.
pub(super) fn check_start_at(start_at: Option<SystemTime>) -> Result<(), RunError> {
    let Some(start_at) = start_at else { return Ok(()) };
    match SystemTime::now().duration_since(start_at) {
        Ok(ago) if ago > START_AT_SLACK => Err(RunError::StartAtPassed { ago_s: ago.as_secs_f64() }),
        _ => Ok(()),
    }
}

/// Waits for `--start-at`, if given, or for the signal that comes
/// meanwhile. The last milliseconds are slept by the thread itself, which
/// wakes within tens of microseconds, where tokio's timer rounds to a
/// millisecond.
pub(super) fn wait_for_start(
    bench: &Bench,
    runtime: &tokio::runtime::Runtime,
    interrupts: &Interrupts,
) -> Result<(), Signal> {
    let Some(start_at) = bench.general.start_at else { return Ok(()) };
    let coarse = time_until(start_at).saturating_sub(Duration::from_millis(5));
    runtime.block_on(interrupts.or_signal(async move { tokio::time::sleep(coarse).await }))?;
    // A sleep runs on the monotonic clock, which may fall a hair behind the
    // wall clock --start-at is read on: sleep again until the wall clock
    // has reached it, so that no shard starts before the instant.
    loop {
        let left = time_until(start_at);
        if left.is_zero() {
            return Ok(());
        }
        std::thread::sleep(left);
    }
}

fn time_until(instant: SystemTime) -> Duration {
    instant.duration_since(SystemTime::now()).unwrap_or(Duration::ZERO)
}

/// With `--start-at`, one line on stderr for whoever gathers the shards'
/// outputs: which shard, on which host, by its own clock started when
/// (its clock started, `late` after `--start-at`), and how late.
pub(super) fn say_started(bench: &Bench, late: Duration) {
    let Some(start_at) = bench.general.start_at else { return };
    let unix = |t: SystemTime| t.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs_f64();
    stderr_line(format_args!(
        "wirebench: shard {} on {} started at {:.6} (Unix seconds, this host's clock), {:.3} ms after --start-at={:.3}",
        bench.general.shard,
        host_name(),
        unix(start_at + late),
        late.as_secs_f64() * 1e3,
        unix(start_at),
    ));
    if late > Duration::from_secs(1) {
        stderr_line(format_args!(
            "wirebench: warning: shard {} started {:.1} s late: connecting took longer than the time left before \
             --start-at; give the shards more time ahead",
            bench.general.shard,
            late.as_secs_f64()
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bench(shard: (u32, u32), threads: u32, events: Option<u64>, rate: Option<u32>) -> Bench {
        let args = ["oltp_point_select", "run"].map(std::ffi::OsString::from);
        let Ok(crate::cli::Invocation::Bench(mut bench)) = crate::cli::parse(args) else { panic!("parsed") };
        bench.general.shard = Shard::new(shard.0, shard.1).unwrap();
        bench.general.threads = threads;
        bench.general.events = events;
        bench.general.rate = rate;
        *bench
    }

    fn part(plan: ShardPlan) -> (u32, Option<u64>, Option<u32>, ShardThreads) {
        match plan {
            ShardPlan::Run { bench, threads } => {
                (bench.general.threads, bench.general.events, bench.general.rate, threads)
            }
            ShardPlan::Idle(why) => panic!("idle: {why}"),
        }
    }

    /// The shards' threads, events and rates add up to the command line's.
    #[test]
    fn shards_split_threads_events_and_rate() {
        let parts: Vec<_> = (0..3).map(|i| part(plan_shard(&bench((i, 3), 10, Some(100), Some(50))))).collect();
        assert_eq!(parts.iter().map(|p| p.0).collect::<Vec<_>>(), [4, 3, 3]);
        assert_eq!(parts.iter().map(|p| p.1.unwrap()).sum::<u64>(), 100);
        assert_eq!(parts.iter().map(|p| p.2.unwrap()).collect::<Vec<_>>(), [17, 17, 16]);
        assert_eq!(parts.iter().map(|p| p.3.first).collect::<Vec<_>>(), [0, 4, 7]);
        assert!(parts.iter().all(|p| p.3.total == 10));
    }

    /// With fewer connections than shards, the events go to the shards
    /// that have connections, and the others say they have nothing to do.
    #[test]
    fn shards_without_connections_are_idle_and_lose_no_events() {
        let plans: Vec<_> = (0..3).map(|i| plan_shard(&bench((i, 3), 2, Some(5), None))).collect();
        let events: Vec<_> = plans
            .into_iter()
            .map(|p| match p {
                ShardPlan::Run { bench, .. } => bench.general.events.unwrap(),
                ShardPlan::Idle(why) => {
                    assert!(why.contains("shard 2/3 has nothing to do: --threads=2"), "{why}");
                    0
                }
            })
            .collect();
        assert_eq!(events, [3, 2, 0]);
        let ShardPlan::Idle(why) = plan_shard(&bench((1, 2), 4, Some(1), None)) else { panic!("1 event, 2 shards") };
        assert!(why.contains("--events=1 leaves none"), "{why}");
        let ShardPlan::Idle(why) = plan_shard(&bench((1, 2), 4, None, Some(1))) else { panic!("1 event/s, 2 shards") };
        assert!(why.contains("--rate=1 leaves no events/s"), "{why}");
    }

    #[test]
    fn cleanup_statements_go_round_the_shards() {
        let drops: Vec<String> = (1..=7).map(|t| format!("DROP TABLE sbtest{t}")).collect();
        let mine = shard_statements(Shard::new(1, 3).unwrap(), drops.clone());
        assert_eq!(mine, ["DROP TABLE sbtest2", "DROP TABLE sbtest5"]);
        assert_eq!(shard_statements(Shard::WHOLE, drops.clone()), drops);
    }

    #[test]
    fn a_start_time_long_past_is_refused() {
        let past = SystemTime::now() - Duration::from_secs(60);
        let error = check_start_at(Some(past)).unwrap_err().to_string();
        assert!(error.starts_with("--start-at is 6") && error.contains("s in the past"), "{error}");
        assert!(check_start_at(Some(SystemTime::now() - Duration::from_secs(1))).is_ok());
        assert!(check_start_at(Some(SystemTime::now() + Duration::from_secs(60))).is_ok());
        assert!(check_start_at(None).is_ok());
    }
}
