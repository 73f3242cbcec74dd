//! What the report thread keeps of the server between samples: where the
//! totals start, where the current interval starts, and how sharp the
//! totals' edges are.
//!
//! An edge taken while the connections are sending is blurred: the run's
//! side of it is the moment each loop hands its counts over (the report
//! thread's collection), the server's the moment it runs the sample's
//! statement. The sample is asked for before the collection, so that the
//! two overlap; the blur is the time from the first of them to the last,
//! and what the run sends in that time may be on either side.

use std::time::{Duration, Instant, UNIX_EPOCH};

use super::delta::{ServerDelta, ServerSample};
use super::figures::ServerSource;
use super::sampler::{has_counters, Sampler, SamplerError};
use super::SamplingMode;

/// How long the first sample may take, before any load.
const FIRST_WAIT: Duration = Duration::from_secs(10);

/// When the run's side of an edge was cut: the report thread's collection
/// of the loops' counts, from its start to its end.
pub type EdgeCut = (Instant, Instant);

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
    /// When `base` was taken while the connections were sending: its
    /// blur, in seconds.
    base_blur_s: Option<f64>,
    /// Why the totals cannot be had: a sample that should have moved
    /// `base` failed.
    base_lost: Option<String>,
    /// A request asked for and not yet answered, and when it was asked.
    pending: Option<(u64, Instant)>,
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
            base_blur_s: None,
            base_lost: None,
            pending: None,
        })
    }

    pub fn mode(&self) -> SamplingMode {
        self.mode
    }

    /// Asks for the next sample now, without waiting for it: the report
    /// thread collects the loops' counts meanwhile.
    pub fn ask(&mut self) {
        if self.pending.is_none() {
            self.pending = Some((self.sampler.ask(), Instant::now()));
        }
    }

    /// The sample asked for (or asked now), waiting `wait` at most; and
    /// the blur of the edge it makes with `cut`, in seconds.
    fn take_sample(&mut self, wait: Duration, cut: Option<EdgeCut>) -> Result<(ServerSample, f64), String> {
        let (id, asked_at) = match self.pending.take() {
            Some(pending) => pending,
            None => (self.sampler.ask(), Instant::now()),
        };
        let sample = self.sampler.answer(id, wait)?;
        let (from, to) = match cut {
            Some((start, end)) => (start.min(asked_at), end.max(sample.at)),
            None => (asked_at, sample.at),
        };
        Ok((sample, to.saturating_duration_since(from).as_secs_f64()))
    }

    /// What the server did since the last interval; the next one starts
    /// here. A sample that failed leaves the interval without figures,
    /// and the next one spans both.
    pub fn interval(&mut self, wait: Duration) -> Result<ServerDelta, String> {
        let (sample, _) = self.take_sample(wait, None)?;
        let delta = ServerDelta::between(&self.last, &sample);
        self.last = sample;
        Ok(delta)
    }

    /// `--warmup-time` is over, the loops' counts cut at `cut`: the totals
    /// and the intervals start here.
    pub fn end_warmup(&mut self, wait: Duration, cut: EdgeCut) -> Result<(), String> {
        self.restart_totals(wait, cut, true)
    }

    /// A `--report-checkpoints` report: the totals start again here, as
    /// the run's do.
    pub fn checkpoint(&mut self, wait: Duration, cut: EdgeCut) -> Result<(), String> {
        self.restart_totals(wait, cut, false)
    }

    fn restart_totals(&mut self, wait: Duration, cut: EdgeCut, intervals_too: bool) -> Result<(), String> {
        match self.take_sample(wait, Some(cut)) {
            Ok((sample, blur_s)) => {
                if intervals_too {
                    self.last = sample.clone();
                }
                self.base = sample;
                self.base_blur_s = Some(blur_s);
                self.base_lost = None;
                Ok(())
            }
            Err(e) => {
                self.base_lost = Some(format!("the sample where the totals start again failed ({e})"));
                Err(e)
            }
        }
    }

    /// The totals, from `base` to a sample taken now, and whose they are;
    /// `busy_end` is the cut of the run's counts when the connections may
    /// still be sending.
    pub fn totals(&mut self, wait: Duration, busy_end: Option<EdgeCut>) -> Result<(ServerDelta, ServerSource), String> {
        if let Some(why) = &self.base_lost {
            return Err(why.clone());
        }
        let (end, end_blur_s) = self.take_sample(wait, busy_end)?;
        let delta = ServerDelta::between(&self.base, &end);
        let unix = |sample: &ServerSample| sample.wall.duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64());
        let end_blur_s = busy_end.map(|_| end_blur_s);
        let source = ServerSource {
            endpoint: self.sampler.endpoint.clone(),
            location: self.sampler.location,
            pid: self.sampler.pid,
            every_s: self.every_s,
            shard: self.shard,
            from_unix_s: unix(&self.base),
            to_unix_s: unix(&end),
            busy_edges: u32::from(self.base_blur_s.is_some()) + u32::from(end_blur_s.is_some()),
            edge_blur_s: self.base_blur_s.unwrap_or(0.0) + end_blur_s.unwrap_or(0.0),
            merged_shards: None,
        };
        self.last = end;
        Ok((delta, source))
    }
}
