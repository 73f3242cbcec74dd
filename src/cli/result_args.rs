//! `--format`, `--chart`, `--label`: what `run` writes besides sysbench's
//! report, read into the results layer's [`ResultOptions`].

use std::path::{Path, PathBuf};

use super::cli_error::CliError;
use super::opts::Opts;
use super::raw::RawOpt;
use super::{value, Command, GeneralOptions};
use crate::results::clock::unix_seconds;
use crate::results::shard_info::{start_at_text, RunIdentity};
use crate::results::{OutputFormat, ResultOptions};
use crate::workload::OltpOptions;

pub(crate) fn result_options(
    opts: &Opts,
    general: &GeneralOptions,
    command: Command,
) -> Result<ResultOptions, CliError> {
    let mut results = ResultOptions { options_given: opts.given(), ..ResultOptions::default() };
    if let Some(opt) = opts.get("format") {
        results.format = value::choice(opt, &OutputFormat::NAMES, "text, json or csv")?;
    }
    if let Some(opt) = opts.get("label") {
        let label = value::text(opt, "NAME")?.trim();
        if label.is_empty() {
            return Err(CliError::MissingValue { option: opt.label(), expected: "NAME".to_owned() });
        }
        results.label = Some(label.to_owned());
    }
    if let Some(opt) = opts.get("chart") {
        results.chart = Some(chart_path(opt)?);
    }
    if command == Command::Search {
        check_search_output(&results)?;
    } else {
        check_intervals(&results, general)?;
    }
    Ok(results)
}

/// The options of the whole run that its shards share (`general`'s
/// threads, events and rate are the whole run's here), in effect.
pub(crate) fn run_identity(test: &str, general: &GeneralOptions, test_options: &OltpOptions) -> RunIdentity {
    RunIdentity {
        test: test.to_owned(),
        shards: general.shard.count(),
        threads: general.threads,
        tables: test_options.tables,
        table_size: test_options.table_size,
        events: general.events,
        rate: general.rate,
        time: general.time,
        rate_stages: general.rate_stages.as_ref().map(ToString::to_string),
        start_at: general.start_at.map(|at| start_at_text(unix_seconds(at))),
        script: None,
    }
}

/// `--chart=FILE`: a file in a directory that exists, checked now rather
/// than after a long run.
pub(crate) fn chart_path(opt: &RawOpt) -> Result<PathBuf, CliError> {
    output_path(opt, "chart.svg")
}

/// A file an option names for writing (such as `example`), in a
/// directory that exists: checked now rather than after a long run.
pub(crate) fn output_path(opt: &RawOpt, example: &str) -> Result<PathBuf, CliError> {
    let text = value::text(opt, "FILE")?;
    let path = PathBuf::from(text);
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if text.is_empty() || text.ends_with('/') || !parent.is_dir() {
        return Err(CliError::InvalidValue {
            option: opt.label(),
            value: text.to_owned(),
            expected: format!("a file name such as {example}, in a directory that exists"),
        });
    }
    Ok(path)
}

/// CSV rows, and a single run's chart over time, are made of the
/// `--report-interval` intervals: without one there would be nothing.
/// A search writes its steps as text or JSON lines, and charts them
/// without intervals.
fn check_search_output(results: &ResultOptions) -> Result<(), CliError> {
    if results.format == OutputFormat::Csv {
        return Err(CliError::Conflict(
            "--format=csv with search: a search writes a line per step as text, or as JSON with --format=json"
                .to_owned(),
        ));
    }
    Ok(())
}

fn check_intervals(results: &ResultOptions, general: &GeneralOptions) -> Result<(), CliError> {
    if general.report_interval.is_some() {
        return Ok(());
    }
    if results.format == OutputFormat::Csv {
        return Err(CliError::Conflict(
            "--format=csv writes one row per --report-interval: add --report-interval=N (seconds), or use \
             --format=json for the final figures"
                .to_owned(),
        ));
    }
    if results.chart.is_some() && general.sweep.is_empty() {
        return Err(CliError::Conflict(
            "--chart on a single run draws qps and latency over time, from the --report-interval intervals: add \
             --report-interval=N (seconds), or give --threads a list (1,2,4,...) for a chart against connections"
                .to_owned(),
        ));
    }
    Ok(())
}
