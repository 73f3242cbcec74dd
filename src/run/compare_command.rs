//! `wirebench compare A.json B.json ...`: the result files read, the
//! tables printed, the chart drawn.

use std::path::PathBuf;

use super::output::{stderr_line, Output};
use super::report_command::{page_line, read_lines};
use super::RunError;
use crate::results::{chart, CompareError, CompareOptions, Comparison, ResultFile};
use crate::watch::{page_html, PageContent, PageSource};

/// Prints the comparison of `options.files` on standard output.
pub fn compare(options: &CompareOptions) -> Result<(), RunError> {
    let mut files = Vec::new();
    for path in &options.files {
        files.push((path.clone(), read_result(path)?));
    }
    let comparison = Comparison::new(files, options.metric)?;
    for warning in comparison.warnings() {
        stderr_line(format_args!("wirebench: compare: warning: {warning}"));
    }
    Output::Stdout.print(comparison.render(options.format))?;
    if let Some(path) = &options.chart {
        if comparison.of_replays() {
            stderr_line(format_args!(
                "wirebench: compare: --chart draws runs and searches; replays are compared in the tables only, \
                 each replay's own --chart draws it over time: {} not written",
                path.display()
            ));
            return Ok(());
        }
        let svg = if comparison.of_searches() {
            let searches: Vec<_> =
                comparison.files.iter().filter_map(|f| Some((f.label.clone(), f.search.clone()?))).collect();
            chart::searches("wirebench compare: capacity searches", &searches)?
        } else {
            let results: Vec<_> = comparison.files.iter().map(|f| (f.label.clone(), f.steps.clone())).collect();
            chart::by_connections("wirebench compare", &results)?
        };
        chart::write_chart(path, &svg)?;
    }
    if let Some(path) = &options.report_html {
        write_page(path, options, &comparison)?;
    }
    Ok(())
}

/// `--report-html`: each file's results, named as the tables name them.
fn write_page(path: &PathBuf, options: &CompareOptions, comparison: &Comparison) -> Result<(), RunError> {
    let mut sources = Vec::new();
    for (file, compared) in options.files.iter().zip(&comparison.files) {
        let lines = read_lines(file)?;
        sources.push(PageSource { label: compared.label.clone(), lines: lines.iter().map(page_line).collect() });
    }
    let labels: Vec<&str> = comparison.files.iter().map(|f| f.label.as_str()).collect();
    let content = PageContent {
        title: format!("wirebench compare: {}", labels.join(" vs ")),
        subtitle: format!("{} results, the first the baseline", labels.len()),
        live: false,
        sources,
    };
    std::fs::write(path, page_html(&content))
        .map_err(|source| super::run_error::ReportError::Write { path: path.clone(), source })?;
    Ok(())
}

fn read_result(path: &PathBuf) -> Result<ResultFile, CompareError> {
    let text = std::fs::read_to_string(path).map_err(|source| CompareError::Read { path: path.clone(), source })?;
    ResultFile::parse(path, &text)
}
