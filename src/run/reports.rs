//! What the report thread prints while the loops run and at the end:
//! sysbench's interim lines, checkpoint reports and final report.

use std::time::Duration;

use super::output::{Console, Level, OutputError};
use super::result_sink::ResultSink;
use crate::cli::{Bench, GeneralOptions};
use crate::results::record::Measured;
use crate::results::RunEnd;
use crate::stats::report::{CheckpointLine, FinalReport, InterimReport, QueueStats};
use crate::stats::{Collector, Interval};

/// How long the report thread waits for the loops to hand over their data.
const COLLECT_TIMEOUT: Duration = Duration::from_millis(50);

/// What the report thread keeps between reports.
pub(super) struct Reports<'a> {
    pub(super) collector: Collector,
    /// Where `--format`'s lines go.
    sink: &'a mut ResultSink,
    /// Data a checkpoint collected that the next interim line must still show.
    owed: Interval,
    percentile: u32,
    threads: u32,
    last_interim_ns: u64,
    last_checkpoint_ns: u64,
}

impl<'a> Reports<'a> {
    pub(super) fn new(collector: Collector, general: &GeneralOptions, sink: &'a mut ResultSink) -> Self {
        Reports {
            collector,
            sink,
            owed: Interval::default(),
            percentile: u32::from(general.percentile.unwrap_or(0)),
            threads: general.threads,
            last_interim_ns: 0,
            last_checkpoint_ns: 0,
        }
    }

    /// Collects what the loops did since the last collection.
    pub(super) fn collect(&mut self) {
        let interval = self.collector.collect(COLLECT_TIMEOUT);
        self.owed.counters.merge(&interval.counters);
        self.owed.latency.merge(&interval.latency);
    }

    /// One `--report-interval` line (two with `--rate`).
    pub(super) fn interim(&mut self, now_ns: u64, queue: Option<QueueStats>) -> Result<(), OutputError> {
        self.collect();
        let line = InterimReport {
            time_total_s: now_ns as f64 / 1e9,
            time_interval_s: (now_ns - self.last_interim_ns) as f64 / 1e9,
            threads_running: self.threads,
            counters: &self.owed.counters,
            latency: &self.owed.latency,
            percentile: self.percentile,
            queue,
        };
        Level::Notice.print(line)?;
        let window = (line.time_total_s, line.time_interval_s);
        self.sink.interval(window, &self.owed.counters, &self.owed.latency, queue)?;
        self.owed.counters = Default::default();
        self.owed.latency.reset();
        self.last_interim_ns = now_ns;
        Ok(())
    }

    /// A `--report-checkpoints` report: everything since the start or the
    /// last checkpoint, which then starts afresh (sysbench's
    /// `report_cumulative()` resets its cumulative counters, histogram and
    /// per-thread timers); interim lines are not affected.
    pub(super) fn checkpoint(&mut self, now_ns: u64) -> Result<(), OutputError> {
        self.collect();
        let line = CheckpointLine { time_total_s: now_ns as f64 / 1e9 };
        Level::Notice.print(format_args!("{line}{}", self.cumulative(now_ns, 0)))?;
        self.collector.reset_totals();
        self.last_checkpoint_ns = now_ns;
        Ok(())
    }

    /// The final numbers at `end_ns`, to `--format`'s output (the text
    /// report is [`cumulative`](Self::cumulative)'s).
    pub(super) fn final_result(&mut self, bench: &Bench, end_ns: u64, end: RunEnd) -> Result<(), OutputError> {
        let totals = self.collector.totals();
        let measured = Measured {
            counters: &totals.counters,
            latency: &totals.latency,
            connections: &totals.connections,
            time_s: end_ns as f64 / 1e9,
            rate_window_s: end_ns.saturating_sub(self.last_checkpoint_ns) as f64 / 1e9,
        };
        self.sink.final_result(bench, measured, end)
    }

    /// The cumulative report at `now_ns`: its rates are over the time since
    /// the last checkpoint.
    pub(super) fn cumulative(&self, now_ns: u64, unfinished_on_forced_shutdown: u32) -> FinalReport<'_> {
        let totals = self.collector.totals();
        FinalReport {
            time_total_s: now_ns as f64 / 1e9,
            time_interval_s: now_ns.saturating_sub(self.last_checkpoint_ns) as f64 / 1e9,
            counters: &totals.counters,
            latency: &totals.latency,
            percentile: self.percentile,
            connections: &totals.connections,
            unfinished_on_forced_shutdown,
        }
    }
}

/// sysbench's DEBUG lines as its threads start (`--verbosity=5`): the
/// report, event generator and checkpoint threads', then each worker's
/// (a connection, to wirebench), once every connection is open.
pub(super) fn print_threads_starting(general: &GeneralOptions) -> Result<(), OutputError> {
    if !Console::current().shows(Level::Debug) {
        return Ok(());
    }
    if general.report_interval.is_some() {
        Level::Debug.line("Reporting thread started")?;
    }
    if general.rate.is_some() {
        Level::Debug.line("Event generating thread started")?;
    }
    if !general.report_checkpoints.is_empty() {
        Level::Debug.line("Checkpoints report thread started")?;
    }
    for thread in 0..general.threads {
        Level::Debug.line(format_args!("Worker thread (#{thread}) started"))?;
        Level::Debug.line(format_args!("Worker thread (#{thread}) initialized"))?;
    }
    Ok(())
}

/// sysbench's INFO lines at the end of a run that reached its limit
/// (`--verbosity=4`): each worker thread says which limit stopped it, the
/// logger folds the repeats into one line, then "Done.".
pub(super) fn print_limit_reached(general: &GeneralOptions, events: u64) -> Result<(), OutputError> {
    let limit = match general.events {
        Some(max) if events >= max => "Event",
        _ if general.time.is_some() => "Time",
        _ => return Ok(()),
    };
    Level::Info.print(format_args!("{limit} limit exceeded, exiting...\n"))?;
    if general.threads > 1 {
        Level::Info.print(format_args!("(last message repeated {} times)\n", general.threads - 1))?;
    }
    Level::Info.print("Done.\n\n")
}
