//! `wirebench compare A.json B.json ...`: the result files read, the
//! tables printed, the chart drawn.

use std::path::PathBuf;

use super::output::{stderr_line, Output};
use super::RunError;
use crate::results::{chart, CompareError, CompareOptions, Comparison, ResultFile};

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
    Ok(())
}

fn read_result(path: &PathBuf) -> Result<ResultFile, CompareError> {
    let text = std::fs::read_to_string(path).map_err(|source| CompareError::Read { path: path.clone(), source })?;
    ResultFile::parse(path, &text)
}
