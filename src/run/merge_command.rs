//! `wirebench merge shard-0.json ...`: the shards' files read, merged
//! (`results::shard_merge`), and the whole run's report printed as a single
//! run's would be, or its JSON result lines; or, from the shards'
//! `--hdr-log` files (`results::log_merge`), the whole run's latencies.

use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};

use super::output::{stderr_line, Console, Level, Output, OutputError};
use super::RunError;
use crate::cli::Personality;
use crate::results::clock::rfc3339_utc;
use crate::results::log_merge::{merge_logs, MergedLogs, ShardLog};
use crate::results::record::{IntervalSpan, Measured, PartialShard, RunShape};
use crate::results::recorded::RecordedHistograms;
use crate::results::shard_merge::{self, MergeError, MergedRun, ShardFile};
use crate::results::{IntervalResult, LatencyListing, MergeOptions, OutputFormat, ResultLine, RunResult};
use crate::server_stats::{ClientCounts, ServerBlock, ServerResult};
use crate::stats::report::{FinalReport, InterimReport};
use crate::stats::{PerStatementBlock, PercentileBlock};
use crate::workload::StatementKind;

/// Prints the merge of `options.files`: the notes on standard error, the
/// report (on standard error with `--format=json`, whose lines go to
/// standard output).
pub fn merge(options: &MergeOptions) -> Result<(), RunError> {
    let (mut files, mut logs) = (Vec::new(), Vec::new());
    for path in &options.files {
        match read_input(path)? {
            Input::Result(file) => files.push(*file),
            Input::Log(log) => logs.push(log),
        }
    }
    if let (Some(log), Some(file)) = (logs.first(), files.first()) {
        return Err(MergeError::MixedInputs { log: log.path.clone(), json: file.path.clone() }.into());
    }
    if !logs.is_empty() {
        return merge_log_files(&logs, options);
    }
    let run = shard_merge::merge_shards(files, StatementKind::NAMES)?;
    for line in run.notes.to_string().lines() {
        stderr_line(line);
    }
    print_report(&run, options)?;
    if options.format == OutputFormat::Json {
        print_json(&run, options)?;
    }
    Ok(())
}

/// A shard's file: its JSON result, or its `--hdr-log`.
enum Input {
    Result(Box<ShardFile>),
    Log(ShardLog),
}

/// A JSON result starts with `{`; an interval log with its `#` comments.
fn read_input(path: &Path) -> Result<Input, MergeError> {
    let text = std::fs::read_to_string(path).map_err(|source| MergeError::Read { path: path.to_owned(), source })?;
    match text.trim_start().starts_with('#') {
        true => ShardLog::parse(path, &text).map(Input::Log),
        false => ShardFile::parse(path, &text).map(|file| Input::Result(Box::new(file))),
    }
}

/// The shards' `--hdr-log` files merged: the events' latencies per
/// interval and for the whole run (the counters are not in the logs).
fn merge_log_files(logs: &[ShardLog], options: &MergeOptions) -> Result<(), RunError> {
    if options.format == OutputFormat::Json {
        return Err(MergeError::JsonFromLogs.into());
    }
    let merged = merge_logs(logs)?;
    for line in merged.notes.to_string().lines() {
        stderr_line(line);
    }
    print_log_report(&merged, &options.percentiles)?;
    Ok(())
}

fn print_log_report(merged: &MergedLogs, percentiles: &[f64]) -> Result<(), OutputError> {
    Level::Notice.print(format_args!(
        "Merged {} of {} shards' --hdr-log files of run {} (latencies only: the counters are in the shards' JSON \
         results)\n\n",
        merged.shards, merged.count, merged.run_id
    ))?;
    for (end_s, _, latency) in &merged.slots {
        let at = wall_clock(merged.from_unix_s + end_s);
        let p = |p: f64| latency.percentile_ms(p);
        Level::Notice.print(format_args!(
            "[ {end_s:.0}s ] events: {} lat (ms) p50: {:.2} p95: {:.2} p99: {:.2} max: {:.2} at {at}\n",
            latency.count(),
            p(50.0),
            p(95.0),
            p(99.0),
            latency.max_ns() as f64 / 1e6
        ))?;
    }
    let total = &merged.total;
    Level::Notice.print(format_args!(
        "\nLatency (ms), from the histograms (3 significant digits):\n    events: {}\n    min: {:.2}\n    max: {:.2}\n",
        total.count(),
        total.min_ns() as f64 / 1e6,
        total.max_ns() as f64 / 1e6
    ))?;
    Level::Notice.print(PercentileBlock { percentiles, latency: total, service: None })
}

/// The wall-clock time `s` Unix seconds, as interim lines show it.
fn wall_clock(unix_s: f64) -> String {
    rfc3339_utc(UNIX_EPOCH + Duration::from_secs_f64(unix_s.max(0.0)))
}

/// What was merged, the interim lines on one time grid, and sysbench's
/// final report with wirebench's additions.
fn print_report(run: &MergedRun, options: &MergeOptions) -> Result<(), OutputError> {
    Level::Notice.print(format_args!("{}\n\n", merged_heading(run)))?;
    let percentile = u32::from(options.percentile.unwrap_or(0));
    for slot in &run.intervals {
        let at = wall_clock(run.measured_from_unix_s + slot.end_s) + &partial_mark(&slot.partial);
        Level::Notice.print(InterimReport {
            time_total_s: slot.end_s,
            time_interval_s: slot.length_s,
            threads_running: slot.threads,
            counters: &slot.interval.counters,
            latency: &slot.interval.latencies.sysbench,
            percentile,
            queue: slot.queue,
            arrivals: slot.arrivals,
            at: Some(&at),
            sql: true,
        })?;
    }
    if !run.intervals.is_empty() {
        Level::Notice.print("\n")?;
    }
    Level::Notice.print(FinalReport {
        time_total_s: run.time_s,
        time_interval_s: run.time_s,
        counters: &run.counters,
        latency: &run.latencies.sysbench,
        percentile,
        connections: &run.connections,
        unfinished_on_forced_shutdown: 0,
        additions: &additions(run, options),
        sql: true,
    })?;
    match run.server.as_ref().filter(|_| Console::current().personality == Personality::Wirebench) {
        Some(result) => Level::Notice.print(ServerBlock { result }),
        None => Ok(()),
    }
}

/// After an interim line's time, the shards that did not run through its
/// whole interval: ` (partial: shard 1/2 ran 1.40 s of 2.00 s)`.
fn partial_mark(partial: &[PartialShard]) -> String {
    if partial.is_empty() {
        return String::new();
    }
    let shards: Vec<String> = partial.iter().map(PartialShard::to_string).collect();
    format!(" (partial: {})", shards.join(", "))
}

/// `Merged 3 of 3 shards of run 1a2b... (oltp_point_select on h1,h2,h3),
/// started at ...`.
fn merged_heading(run: &MergedRun) -> String {
    let Some(shard) = run.info.shard.as_ref() else { return String::new() };
    let started = shard.started_unix_s.map(|s| format!(", started at {}", wall_clock(s))).unwrap_or_default();
    let late =
        if shard.late_ms > 0.0 { format!(" (latest {:.1} ms after --start-at)", shard.late_ms) } else { String::new() };
    format!(
        "Merged {} of {} shards of run {} ({} on {}){started}{late}",
        run.shards.len(),
        shard.count,
        shard.run_id,
        run.info.test,
        run.info.host
    )
}

/// As a run's: the `--percentile` list when more than one whole
/// percentile, the `--rate` block, `--per-statement`.
fn additions(run: &MergedRun, options: &MergeOptions) -> String {
    let listed = options.percentiles.len() > 1 || options.percentiles.iter().any(|p| p.fract() != 0.0);
    let mut out = String::new();
    if listed || run.rate.is_some() {
        // Recorded apart only under --rate, as a run's totals.
        let (events, service) = (&run.latencies.events, &run.latencies.service);
        let service = run.rate.map(|_| if service.count() > 0 { service } else { events });
        let block = PercentileBlock { percentiles: &options.percentiles, latency: &run.latencies.events, service };
        out += &block.to_string();
    }
    if let Some(rate) = run.rate {
        out += &rate.to_string();
    }
    if options.per_statement {
        out += &PerStatementBlock { kinds: &run.latencies.kinds, percentiles: &options.percentiles }.to_string();
    }
    out
}

/// The merged intervals and the final result, as a run's `--format=json`
/// writes them (histograms included), the shard fields saying how many
/// shards were merged.
fn print_json(run: &MergedRun, options: &MergeOptions) -> Result<(), OutputError> {
    for line in merged_lines(run, options, RecordedHistograms::Kept) {
        Output::Stdout.json_line(&line)?;
    }
    Ok(())
}

/// The merged run's result lines: its intervals, then its final result.
pub(super) fn merged_lines(run: &MergedRun, options: &MergeOptions, histograms: RecordedHistograms) -> Vec<ResultLine> {
    let listing = LatencyListing::new(&options.percentiles, options.percentile, run.rate.is_some(), histograms);
    let mut lines = Vec::with_capacity(run.intervals.len() + 1);
    for slot in &run.intervals {
        let span = IntervalSpan {
            threads: slot.threads,
            end_s: slot.end_s,
            length_s: slot.length_s,
            measured_from_unix_s: run.measured_from_unix_s,
        };
        let counters = &slot.interval.counters;
        let counts = ClientCounts { queries: counters.queries(), transactions: counters.events };
        let server = slot.server.clone().map(|delta| Box::new(ServerResult::interval(delta, Some(counts))));
        let interval = IntervalResult {
            server,
            partial_shards: slot.partial.clone(),
            ..IntervalResult::new(span, &slot.interval, &listing, slot.queue).with_arrivals(slot.arrivals)
        };
        lines.push(ResultLine::Interval(interval));
    }
    let shape = RunShape {
        info: &run.info,
        step: None,
        threads: run.threads,
        end: run.end,
        warmup_s: run.warmup_s,
        listing: &listing,
    };
    let measured = Measured {
        counters: &run.counters,
        latencies: &run.latencies,
        connections: &run.connections,
        time_s: run.time_s,
        rate_window_s: run.time_s,
        rate: run.rate,
    };
    let result = RunResult {
        server: run.server.clone(),
        idle_connections: run.idle_connections.clone(),
        ..RunResult::new(shape, measured)
    };
    lines.push(ResultLine::Final(Box::new(result)));
    lines
}
