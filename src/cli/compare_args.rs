//! `wirebench compare [--format=text|markdown|csv] [--metric=qps|tps|p95|p99|server_cpu_per_query|...]
//! [--chart=FILE.svg] A.json B.json ...`.

use std::path::PathBuf;

use super::cli_error::CliError;
use super::defs;
use super::raw::RawOpt;
use super::result_args::{chart_path, output_path};
use super::{value, Invocation};
use crate::results::{CompareOptions, Metric, TableFormat};

pub(crate) fn parse_compare(opts: &[RawOpt], files: &[&str]) -> Result<Invocation, CliError> {
    for opt in opts {
        if defs::is_in(defs::COMPARE, &opt.key) {
            continue;
        }
        let suggestion = defs::closest(&opt.name, defs::COMPARE.iter().map(|d| d.name)).map(|n| format!("--{n}"));
        if defs::find(&opt.key).is_some() {
            return Err(CliError::NotHere {
                option: opt.label(),
                reason: "not a compare option: compare takes --format, --metric, --chart and --report-html, then the \
                         result files"
                    .to_owned(),
            });
        }
        return Err(CliError::UnknownOption { option: opt.label(), suggestion, written: opt.shown() });
    }
    let last = |key: &str| opts.iter().rev().find(|o| o.key == key);
    if last("help").map_or(Ok(false), value::boolean)? {
        return Ok(Invocation::CompareHelp);
    }
    let mut options = CompareOptions {
        files: files.iter().map(PathBuf::from).collect(),
        format: TableFormat::default(),
        metric: Metric::default(),
        chart: None,
        report_html: None,
    };
    if let Some(opt) = last("format") {
        options.format = value::choice(opt, &TableFormat::NAMES, "text, markdown or csv")?;
    }
    if let Some(opt) = last("metric") {
        options.metric = value::choice(opt, &Metric::NAMES, &Metric::expected())?;
    }
    if let Some(opt) = last("chart") {
        options.chart = Some(chart_path(opt)?);
    }
    if let Some(opt) = last("report_html") {
        options.report_html = Some(output_path(opt, "comparison.html")?);
    }
    if options.files.is_empty() {
        return Err(CliError::Conflict(
            "compare needs result files: wirebench compare A.json B.json ..., each written by `wirebench ... \
             --format=json run > A.json`"
                .to_owned(),
        ));
    }
    Ok(Invocation::Compare(options))
}
