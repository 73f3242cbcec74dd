//! What the report thread keeps of the server between samples: where the
//! totals start, where the current interval starts, and how sharp the
//! totals' edges are.

use std::time::{Duration, UNIX_EPOCH};

use super::delta::{ServerDelta, ServerSample};
use super::figures::ServerSource;
use super::sampler::{has_counters, Sampler, SamplerError};
use super::SamplingMode;

/// How long the first sample may take, before any load.
const FIRST_WAIT: Duration = Duration::from_secs(10);

/// The server's sampling through a run.
pub struct ServerWatch {
    sampler: Sampler,
    mode: SamplingMode,
    /// `--report-interval`, when there is one.
    every_s: Option<u32>,
    /// This instance's shard (index, count).
    shard: (u32, u32),
    /// Where the totals start: the first sample, the end of
    /// `--warmup-time`, or the last checkpoint.
    base: ServerSample,
    /// Where the next interval starts.
    last: ServerSample,
    /// Whether `base` was taken while the connections were sending.
    base_busy: bool,
    /// Why the totals cannot be had: a sample that should have moved
    /// `base` failed.
    base_lost: Option<String>,
    /// A request asked for and not yet answered.
    pending: Option<u64>,
}

impl ServerWatch {
    /// Takes the first sample, before the run's first event.
    pub fn start(
        mut sampler: Sampler,
        mode: SamplingMode,
        every_s: Option<u32>,
        shard: (u32, u32),
    ) -> Result<ServerWatch, SamplerError> {
        let id = sampler.ask();
        let first = sampler.answer(id, FIRST_WAIT).map_err(SamplerError::FirstSample)?;
        if !has_counters(&first.status) {
            return Err(SamplerError::NoCounters);
        }
        Ok(ServerWatch {
            sampler,
            mode,
            every_s,
            shard,
            base: first.clone(),
            last: first,
            base_busy: false,
            base_lost: None,
            pending: None,
        })
    }

    pub fn mode(&self) -> SamplingMode {
        self.mode
    }

    /// Asks for the next sample now, without waiting for it: the report
    /// thread collects the loops' interval meanwhile.
    pub fn ask(&mut self) {
        if self.pending.is_none() {
            self.pending = Some(self.sampler.ask());
        }
    }

    /// The sample asked for (or asked now), waiting `wait` at most.
    fn take(&mut self, wait: Duration) -> Result<ServerSample, String> {
        let id = match self.pending.take() {
            Some(id) => id,
            None => self.sampler.ask(),
        };
        self.sampler.answer(id, wait)
    }

    /// What the server did since the last interval; the next one starts
    /// here. A sample that failed leaves the interval without figures,
    /// and the next one spans both.
    pub fn interval(&mut self, wait: Duration) -> Result<ServerDelta, String> {
        let sample = self.take(wait)?;
        let delta = ServerDelta::between(&self.last, &sample);
        self.last = sample;
        Ok(delta)
    }

    /// `--warmup-time` is over: the totals and the intervals start here.
    pub fn end_warmup(&mut self, wait: Duration) -> Result<(), String> {
        self.rebase(wait, true)
    }

    /// A `--report-checkpoints` report: the totals start again here, as
    /// the run's do.
    pub fn checkpoint(&mut self, wait: Duration) -> Result<(), String> {
        self.rebase(wait, false)
    }

    fn rebase(&mut self, wait: Duration, intervals_too: bool) -> Result<(), String> {
        match self.take(wait) {
            Ok(sample) => {
                if intervals_too {
                    self.last = sample.clone();
                }
                self.base = sample;
                self.base_busy = true;
                self.base_lost = None;
                Ok(())
            }
            Err(e) => {
                let why = format!("the sample where the totals start again failed ({e})");
                self.base_lost = Some(why);
                Err(e)
            }
        }
    }

    /// The totals, from `base` to a sample taken now, and whose they are;
    /// `busy_end` when the connections may still be sending.
    pub fn totals(&mut self, wait: Duration, busy_end: bool) -> Result<(ServerDelta, ServerSource), String> {
        if let Some(why) = &self.base_lost {
            return Err(why.clone());
        }
        let end = self.take(wait)?;
        let delta = ServerDelta::between(&self.base, &end);
        let unix = |sample: &ServerSample| sample.wall.duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64());
        let source = ServerSource {
            endpoint: self.sampler.endpoint.clone(),
            location: self.sampler.location,
            pid: self.sampler.pid,
            every_s: self.every_s,
            shard: self.shard,
            from_unix_s: unix(&self.base),
            to_unix_s: unix(&end),
            busy_edges: u32::from(self.base_busy) + u32::from(busy_end),
            merged_shards: None,
        };
        self.last = end;
        Ok((delta, source))
    }
}
