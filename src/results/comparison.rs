//! `wirebench compare A.json B.json ...`: result files read back, and the
//! tables of seed 002 made from them: a figure (QPS by default) per
//! connection count per result, then each result relative to the first.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::record::{StepFigures, FORMAT_VERSION};
use super::replay_comparison::{replay_statements, replay_totals};
use super::replay_record::ReplayResult;
use super::result_line::ResultLine;
use super::result_options::{Metric, TableFormat};
use super::search_record::{search_table, SearchSummary};
use super::sweep::cell;
use super::table::Table;

/// Why a result file cannot be compared; each names the file.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    #[error("cannot read {}: {source}", .path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error(
        "{} line {line} is not a wirebench JSON result ({source}): compare reads what `wirebench ... --format=json \
         run > FILE` writes",
        .path.display()
    )]
    NotAResult { path: PathBuf, line: usize, source: serde_json::Error },
    #[error(
        "{} holds no final result (a run stopped before its report?): compare needs the last line a \
         --format=json run writes",
        .path.display()
    )]
    NoFinalResult { path: PathBuf },
    #[error(
        "{} holds two results at --threads={threads}: compare takes one run or one sweep per file; split the file",
        .path.display()
    )]
    SameThreadsTwice { path: PathBuf, threads: u32 },
    #[error(
        "{} was written by a newer wirebench (result format {found}, this one reads {FORMAT_VERSION}): compare it \
         with that version",
        .path.display()
    )]
    NewerFormat { path: PathBuf, found: u32 },
    #[error("compare needs at least one result file: wirebench compare A.json B.json ...")]
    NoFiles,
    #[error(
        "{} holds a capacity search and {} does not: compare puts searches beside searches and runs beside runs",
        .search.display(), .run.display()
    )]
    SearchBesideRun { search: PathBuf, run: PathBuf },
    #[error(
        "{} holds a replay and {} does not: compare puts replays beside replays and runs beside runs",
        .replay.display(), .run.display()
    )]
    ReplayBesideRun { replay: PathBuf, run: PathBuf },
}

/// One file's results: a run (one step) or a sweep (a step per
/// connection count), by thread count.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultFile {
    /// `--label`, else the server's version, else the file's name.
    pub label: String,
    pub steps: Vec<StepFigures>,
    /// A capacity search's summary, when the file holds one (its steps
    /// then have no final results).
    pub search: Option<SearchSummary>,
    /// The test (or Lua script) that ran.
    pub test: String,
    /// A replay's result, when the file holds one (it then has no steps).
    pub replay: Option<Box<ReplayResult>>,
}

impl ResultFile {
    /// Reads the final objects of `text`, the contents of `path`.
    pub fn parse(path: &Path, text: &str) -> Result<ResultFile, CompareError> {
        let mut steps: Vec<StepFigures> = Vec::new();
        let mut label = None;
        let mut search = None;
        let mut replay = None;
        let mut test = String::new();
        for (index, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let parsed = serde_json::from_str::<ResultLine>(line).map_err(|source| CompareError::NotAResult {
                path: path.to_owned(),
                line: index + 1,
                source,
            })?;
            let result = match parsed {
                ResultLine::Final(result) => result,
                ResultLine::Search(summary) => {
                    label = label.or_else(|| summary.run.label.clone()).or_else(|| summary.run.server_version.clone());
                    test.clone_from(&summary.run.test);
                    search = Some(summary);
                    continue;
                }
                ResultLine::Replay(result) => {
                    if result.run.format_version > FORMAT_VERSION {
                        return Err(CompareError::NewerFormat {
                            path: path.to_owned(),
                            found: result.run.format_version,
                        });
                    }
                    label = label.or_else(|| result.run.label.clone()).or_else(|| result.run.server_version.clone());
                    test.clone_from(&result.run.test);
                    replay = Some(result);
                    continue;
                }
                _ => continue,
            };
            if result.run.format_version > FORMAT_VERSION {
                return Err(CompareError::NewerFormat { path: path.to_owned(), found: result.run.format_version });
            }
            if steps.iter().any(|s| s.threads == result.threads) {
                return Err(CompareError::SameThreadsTwice { path: path.to_owned(), threads: result.threads });
            }
            label = label.or_else(|| result.run.label.clone()).or_else(|| result.run.server_version.clone());
            test.clone_from(&result.run.test);
            steps.push(result.figures());
        }
        if steps.is_empty() && search.is_none() && replay.is_none() {
            return Err(CompareError::NoFinalResult { path: path.to_owned() });
        }
        steps.sort_by_key(|s| s.threads);
        let label = label.unwrap_or_else(|| file_name(path));
        Ok(ResultFile { label, steps, search, test, replay })
    }

    fn at(&self, threads: u32, metric: Metric) -> Option<f64> {
        metric.of(self.steps.iter().find(|s| s.threads == threads)?)
    }
}

fn file_name(path: &Path) -> String {
    path.file_stem().unwrap_or(path.as_os_str()).to_string_lossy().into_owned()
}

/// Results side by side, the first the baseline.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub files: Vec<ResultFile>,
    pub metric: Metric,
}

impl Comparison {
    /// Two files with the same label get their file names added.
    pub fn new(files: Vec<(PathBuf, ResultFile)>, metric: Metric) -> Result<Comparison, CompareError> {
        if files.is_empty() {
            return Err(CompareError::NoFiles);
        }
        let search = files.iter().find(|(_, f)| f.search.is_some());
        if let (Some((search, _)), Some((run, _))) = (search, files.iter().find(|(_, f)| f.search.is_none())) {
            return Err(CompareError::SearchBesideRun { search: search.clone(), run: run.clone() });
        }
        let replay = files.iter().find(|(_, f)| f.replay.is_some());
        if let (Some((replay, _)), Some((run, _))) = (replay, files.iter().find(|(_, f)| f.replay.is_none())) {
            return Err(CompareError::ReplayBesideRun { replay: replay.clone(), run: run.clone() });
        }
        let labels: Vec<String> = files.iter().map(|(_, f)| f.label.clone()).collect();
        let files = files
            .into_iter()
            .map(|(path, mut file)| {
                if labels.iter().filter(|l| **l == file.label).count() > 1 {
                    file.label = format!("{} ({})", file.label, file_name(&path));
                }
                file
            })
            .collect();
        Ok(Comparison { files, metric })
    }

    /// Every connection count any file has, ascending.
    fn thread_counts(&self) -> Vec<u32> {
        let all: BTreeSet<u32> = self.files.iter().flat_map(|f| f.steps.iter().map(|s| s.threads)).collect();
        all.into_iter().collect()
    }

    /// Seed 002's first table: the metric per connection count per result.
    pub fn absolute(&self) -> Table {
        let mut header = vec!["threads".to_owned()];
        header.extend(self.files.iter().map(|f| f.label.clone()));
        let rows = self
            .thread_counts()
            .into_iter()
            .map(|threads| {
                let mut row = vec![threads.to_string()];
                row.extend(self.files.iter().map(|f| cell(f.at(threads, self.metric))));
                row
            })
            .collect();
        Table { title: capitalised(self.metric.title()), header, rows }
    }

    /// Seed 002's second table: each result against the first, in %; none
    /// with one file.
    pub fn relative(&self) -> Option<Table> {
        let (base, others) = self.files.split_first()?;
        if others.is_empty() {
            return None;
        }
        let mut header = vec!["threads".to_owned()];
        header.extend(others.iter().map(|f| format!("{} vs {}", f.label, base.label)));
        let rows = self
            .thread_counts()
            .into_iter()
            .map(|threads| {
                let mut row = vec![threads.to_string()];
                row.extend(others.iter().map(|f| change(base.at(threads, self.metric), f.at(threads, self.metric))));
                row
            })
            .collect();
        Some(Table { title: format!("Relative {} (%)", self.metric.title()), header, rows })
    }

    /// Both tables as one, for CSV: the figures, then the changes.
    pub fn wide(&self) -> Table {
        let mut table = self.absolute();
        let metric = self.metric.name();
        for (name, file) in table.header.iter_mut().skip(1).zip(&self.files) {
            *name = format!("{} {metric}", file.label);
        }
        if let Some(relative) = self.relative() {
            table.header.extend(relative.header.into_iter().skip(1).map(|h| format!("{h} %")));
            for (row, changes) in table.rows.iter_mut().zip(relative.rows) {
                row.extend(changes.into_iter().skip(1));
            }
        }
        table
    }

    /// What the reader of the tables must know: results of different tests
    /// side by side measure different work (a transaction of
    /// oltp_read_only is sixteen statements, one of oltp_point_select one),
    /// so their changes are not one server against another.
    pub fn warnings(&self) -> Vec<String> {
        let mut tests: Vec<&str> = self.files.iter().map(|f| f.test.as_str()).collect();
        tests.dedup();
        if tests.len() < 2 {
            return Vec::new();
        }
        let each: Vec<String> = self.files.iter().map(|f| format!("{}: {}", f.label, f.test)).collect();
        vec![format!(
            "the results are of different tests ({}): their figures measure different work, so the changes \
             against the first are not those of one server against another; compare results of one test",
            each.join(", ")
        )]
    }

    /// Whether the files hold capacity searches (all of them do, or none).
    pub fn of_searches(&self) -> bool {
        self.files.iter().all(|f| f.search.is_some())
    }

    /// Whether the files hold replays (all of them do, or none).
    pub fn of_replays(&self) -> bool {
        self.files.iter().all(|f| f.replay.is_some())
    }

    pub fn render(&self, format: TableFormat) -> String {
        if self.of_replays() {
            let replays: Vec<(&str, &ReplayResult)> =
                self.files.iter().filter_map(|f| Some((f.label.as_str(), f.replay.as_deref()?))).collect();
            let (totals, statements) = (replay_totals(&replays), replay_statements(&replays));
            if format == TableFormat::Csv {
                return statements.csv();
            }
            return format!("{}\n{}", totals.render(format), statements.render(format));
        }
        if self.of_searches() {
            let searches: Vec<_> = self.files.iter().filter_map(|f| f.search.as_ref().map(|s| (&f.label, s))).collect();
            let table = search_table(&searches);
            return if format == TableFormat::Csv { table.csv() } else { table.render(format) };
        }
        if format == TableFormat::Csv {
            return self.wide().csv();
        }
        let mut out = self.absolute().render(format);
        if let Some(relative) = self.relative() {
            out.push('\n');
            out.push_str(&relative.render(format));
        }
        out
    }
}

/// `+2.6%`: `value` against `base`; `-` when either is missing or the base
/// is 0.
fn change(base: Option<f64>, value: Option<f64>) -> String {
    match (base, value) {
        (Some(base), Some(value)) if base != 0.0 => format!("{:+.1}%", (value - base) / base * 100.0),
        _ => "-".to_owned(),
    }
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| first.to_uppercase().chain(chars).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::record::RunEnd;

    fn file(label: &str, qps: &[(u32, f64)]) -> ResultFile {
        let steps = qps
            .iter()
            .map(|&(threads, qps)| StepFigures {
                threads,
                tps: qps,
                qps,
                p95_ms: None,
                p99_ms: None,
                ignored_errors: 0,
                end: RunEnd::Completed,
                server: None,
            })
            .collect();
        ResultFile { label: label.to_owned(), steps, search: None, test: "oltp_read_only".to_owned(), replay: None }
    }

    /// Two tests side by side are named; one test in every file is not.
    #[test]
    fn different_tests_are_warned_of() {
        let same = Comparison { files: vec![file("a", &[(1, 1.0)]), file("b", &[(1, 2.0)])], metric: Metric::Qps };
        assert!(same.warnings().is_empty());
        let mut other = file("b", &[(1, 2.0)]);
        other.test = "oltp_point_select".to_owned();
        let mixed = Comparison { files: vec![file("a", &[(1, 1.0)]), other], metric: Metric::Qps };
        let warnings = mixed.warnings();
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0].starts_with("the results are of different tests (a: oltp_read_only, b: oltp_point_select)"),
            "{warnings:?}"
        );
    }

    /// Seed 002's first rows: MariaDB 10.1.8 against 10.0.21 is +2.6 % at
    /// one client, +2.3 % at two.
    #[test]
    fn seed_002_relative_figures() {
        let a = file("MariaDB 10.0.21", &[(1, 22166.0), (2, 41220.0)]);
        let b = file("MariaDB 10.1.8", &[(1, 22748.0), (2, 42155.0)]);
        let c = file("MySQL 5.7.9", &[(1, 21499.0)]);
        let comparison = Comparison { files: vec![a, b, c], metric: Metric::Qps };
        let relative = comparison.relative().unwrap();
        assert_eq!(relative.header[1], "MariaDB 10.1.8 vs MariaDB 10.0.21");
        assert_eq!(relative.rows[0], ["1", "+2.6%", "-3.0%"]);
        assert_eq!(relative.rows[1], ["2", "+2.3%", "-"]);
        let csv = comparison.render(TableFormat::Csv);
        assert_eq!(
            csv.lines().next(),
            Some(
                "threads,MariaDB 10.0.21 qps,MariaDB 10.1.8 qps,MySQL 5.7.9 qps,MariaDB 10.1.8 vs MariaDB 10.0.21 %,\
                 MySQL 5.7.9 vs MariaDB 10.0.21 %"
            )
        );
        assert_eq!(csv.lines().nth(2), Some("2,41220.00,42155.00,-,+2.3%,-"));
    }

    #[test]
    fn one_file_has_no_relative_table() {
        let comparison = Comparison { files: vec![file("a", &[(1, 1.0)])], metric: Metric::Qps };
        assert!(comparison.relative().is_none());
        assert_eq!(comparison.render(TableFormat::Text), "Queries per second\nthreads     a\n1        1.00\n");
    }

    #[test]
    fn same_labels_get_file_names() {
        let files = vec![
            (PathBuf::from("/r/one.json"), file("10.11", &[(1, 1.0)])),
            (PathBuf::from("/r/two.json"), file("10.11", &[(1, 2.0)])),
        ];
        let comparison = Comparison::new(files, Metric::Qps).unwrap();
        assert_eq!(comparison.files[0].label, "10.11 (one)");
        assert_eq!(comparison.files[1].label, "10.11 (two)");
        assert!(matches!(Comparison::new(Vec::new(), Metric::Qps), Err(CompareError::NoFiles)));
    }

    #[test]
    fn bad_files_are_named() {
        let path = Path::new("x.json");
        let err = ResultFile::parse(path, "{\"type\":\"final\"}\n").unwrap_err();
        assert!(err.to_string().starts_with("x.json line 1 is not a wirebench JSON result"), "{err}");
        let err = ResultFile::parse(path, "\n").unwrap_err();
        assert!(matches!(err, CompareError::NoFinalResult { .. }), "{err}");
        let err = ResultFile::parse(path, "SQL statistics:\n").unwrap_err();
        assert!(matches!(err, CompareError::NotAResult { line: 1, .. }), "{err}");
    }
}
