//! `wirebench report RESULTS.json ... --html=FILE`: saved results as the
//! page `--report-html` writes at the end of a run. One file holds a run,
//! a sweep, a search or a merged run; several files are the shards of
//! one run, merged first (as `wirebench merge` does).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::merge_command::merged_lines;
use super::run_error::ReportError;
use super::RunError;
use crate::results::recorded::RecordedHistograms;
use crate::results::shard_merge::{merge_shards, ShardFile};
use crate::results::{MergeOptions, OutputFormat, ResultLine};
use crate::watch::{page_html, PageContent, PageSource, ReportOptions};
use crate::workload::StatementKind;

/// Writes the page of `options.files` to `options.html`.
pub fn report(options: &ReportOptions) -> Result<(), RunError> {
    let lines = match options.files.as_slice() {
        [one] => read_lines(one)?,
        shards => merged_shards(shards)?,
    };
    let content = PageContent {
        title: title_of(&lines),
        subtitle: subtitle_of(&lines, &options.files),
        live: false,
        sources: vec![PageSource { label: String::new(), lines: lines.iter().map(page_line).collect() }],
    };
    std::fs::write(&options.html, page_html(&content))
        .map_err(|source| ReportError::Write { path: options.html.clone(), source })?;
    Ok(())
}

/// A file's result lines, each checked.
pub(super) fn read_lines(path: &Path) -> Result<Vec<ResultLine>, ReportError> {
    let text = std::fs::read_to_string(path).map_err(|source| ReportError::Read { path: path.to_owned(), source })?;
    let mut lines = Vec::new();
    for (index, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let parsed = serde_json::from_str::<ResultLine>(line).map_err(|source| ReportError::NotAResult {
            path: path.to_owned(),
            line: index + 1,
            source,
        })?;
        lines.push(parsed);
    }
    if lines.is_empty() {
        return Err(ReportError::Empty { path: path.to_owned() });
    }
    Ok(lines)
}

/// The shards of one run in `paths`, merged; `wirebench merge`'s checks
/// say what is wrong with files that are not.
fn merged_shards(paths: &[PathBuf]) -> Result<Vec<ResultLine>, RunError> {
    let mut files = Vec::new();
    for path in paths {
        let text = std::fs::read_to_string(path).map_err(|source| ReportError::Read { path: path.clone(), source })?;
        files.push(ShardFile::parse(path, &text)?);
    }
    let run = merge_shards(files, StatementKind::NAMES)?;
    let options = MergeOptions {
        files: paths.to_vec(),
        format: OutputFormat::Json,
        percentiles: vec![50.0, 95.0, 99.0],
        percentile: Some(95),
        per_statement: false,
    };
    Ok(merged_lines(&run, &options, RecordedHistograms::Omitted))
}

/// A line as the page takes it: without the histograms kept for
/// `wirebench merge`, which it does not draw.
pub(super) fn page_line(line: &ResultLine) -> Arc<str> {
    let line = match line {
        ResultLine::Interval(i) => ResultLine::Interval(crate::results::IntervalResult { recorded: None, ..i.clone() }),
        ResultLine::Final(r) => {
            ResultLine::Final(Box::new(crate::results::RunResult { recorded: None, ..(**r).clone() }))
        }
        other => other.clone(),
    };
    Arc::from(serde_json::to_string(&line).unwrap_or_default())
}

/// `wirebench report: oltp_read_only on 10.11.6-MariaDB`.
fn title_of(lines: &[ResultLine]) -> String {
    let info = lines.iter().find_map(|line| match line {
        ResultLine::Final(r) => Some(&r.run),
        ResultLine::Sweep(s) => Some(&s.run),
        ResultLine::Search(s) => Some(&s.run),
        _ => None,
    });
    let Some(info) = info else { return "wirebench report".to_owned() };
    let server = info.server_version.as_deref().map(|v| format!(" on {v}")).unwrap_or_default();
    let label = info.label.as_deref().map(|l| format!(" ({l})")).unwrap_or_default();
    let kind = if lines.iter().any(|l| matches!(l, ResultLine::Search(_) | ResultLine::SearchStep(_))) {
        "capacity search"
    } else {
        "run"
    };
    format!("wirebench {kind}: {}{server}{label}", info.test)
}

/// Where the results came from and when they were made.
fn subtitle_of(lines: &[ResultLine], files: &[PathBuf]) -> String {
    let started = lines.iter().find_map(|line| match line {
        ResultLine::Final(r) => Some(format!("from {} at {}", r.run.host, r.run.start_time)),
        _ => None,
    });
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    format!("{}; results: {}", started.unwrap_or_default(), names.join(", ")).trim_start_matches("; ").to_owned()
}
