//! `wirebench compare a.json b.json` of replays: pt-upgrade's question
//! (what got slower, what answers differently) at speed. The replays'
//! totals side by side, then per statement (matched by fingerprint id)
//! each file's runs, p99 latency, errors and differences from the
//! capture, and what changed against the first file, the statements
//! that changed first.

use std::collections::BTreeMap;

use super::replay_record::{shortened, ReplayResult, ReplayStatementResult};
use super::table::Table;

/// A p99 this many times the first file's, and over [`NOTICED_MS`] apart,
/// is slower (or faster, the other way).
const SLOWER_RATIO: f64 = 1.2;
const NOTICED_MS: f64 = 0.05;
/// The longest statement text in a table.
const SHOWN_TEXT: usize = 70;

/// The replays' totals, a column per file.
pub fn replay_totals(files: &[(&str, &ReplayResult)]) -> Table {
    let mut header = vec!["".to_owned()];
    header.extend(files.iter().map(|(label, _)| (*label).to_owned()));
    let row = |name: &str, cell: &dyn Fn(&ReplayResult) -> String| {
        let mut row = vec![name.to_owned()];
        row.extend(files.iter().map(|(_, r)| cell(r)));
        row
    };
    let p = |r: &ReplayResult, percentile: f64| r.latency_ms.at(percentile).map_or("-".into(), |ms| format!("{ms:.3}"));
    let rows = vec![
        row("speed", &|r| r.speed.map_or_else(|| "max".to_owned(), |s| format!("{s}"))),
        row("commands", &|r| r.commands.to_string()),
        row("qps", &|r| format!("{:.2}", r.rates.qps)),
        row("p99 ms", &|r| p(r, 99.0)),
        row("errors", &|r| r.errors.to_string()),
        row("differences", &|r| r.differences.to_string()),
        row("late starts", &|r| r.late_starts.to_string()),
        row("speed held", &|r| format!("{:.2}", r.achieved_speed)),
    ];
    Table { title: "Replays".to_owned(), header, rows }
}

/// What changed for one statement in one file against the first.
fn verdict(base: Option<&ReplayStatementResult>, other: Option<&ReplayStatementResult>) -> (String, f64) {
    let (Some(base), Some(other)) = (base, other) else {
        return (if other.is_some() { "only here" } else { "not run" }.to_owned(), 0.0);
    };
    let mut said = Vec::new();
    let rate = |s: &ReplayStatementResult, n: u64| if s.count == 0 { 0.0 } else { n as f64 / s.count as f64 };
    if rate(other, other.errors_total()) > rate(base, base.errors_total()) {
        said.push("more errors".to_owned());
    }
    let new_codes: Vec<&String> = other.errors.keys().filter(|code| !base.errors.contains_key(*code)).collect();
    if !new_codes.is_empty() {
        let codes: Vec<&str> = new_codes.iter().map(|c| c.as_str()).collect();
        said.push(format!("new errors {}", codes.join(",")));
    }
    if rate(other, other.differences_total()) > rate(base, base.differences_total()) {
        said.push("answers differ".to_owned());
    }
    let mut weight = 0.0;
    if let (Some(b), Some(o)) = (base.latency_ms, other.latency_ms) {
        if o.p99 > b.p99 * SLOWER_RATIO && o.p99 - b.p99 > NOTICED_MS {
            said.push(format!("slower {:.1}x", o.p99 / b.p99.max(1e-6)));
            weight = o.p99 / b.p99.max(1e-6);
        } else if b.p99 > o.p99 * SLOWER_RATIO && b.p99 - o.p99 > NOTICED_MS {
            said.push(format!("faster {:.1}x", b.p99 / o.p99.max(1e-6)));
        }
    }
    if said.iter().any(|s| !s.starts_with("faster") && !s.starts_with("slower")) {
        weight += 1e6;
    }
    (said.join(", "), weight)
}

/// Per statement: each file's figures and what changed against the first.
pub fn replay_statements(files: &[(&str, &ReplayResult)]) -> Table {
    let by_id: Vec<BTreeMap<&str, &ReplayStatementResult>> =
        files.iter().map(|(_, r)| r.statements.iter().map(|s| (s.id.as_str(), s)).collect()).collect();
    let mut ids: Vec<&str> = by_id.iter().flat_map(|m| m.keys().copied()).collect();
    ids.sort_unstable();
    ids.dedup();
    let mut header = vec!["statement".to_owned()];
    for (label, _) in files {
        header.push(format!("{label} runs"));
        header.push(format!("{label} p99 ms"));
        header.push(format!("{label} errors"));
        header.push(format!("{label} diffs"));
    }
    for (label, _) in files.iter().skip(1) {
        header.push(format!("{label} vs {}", files.first().map_or("", |(l, _)| *l)));
    }
    let mut rows: Vec<(f64, Vec<String>)> = Vec::new();
    for id in ids {
        let found: Vec<Option<&ReplayStatementResult>> = by_id.iter().map(|m| m.get(id).copied()).collect();
        let Some(any) = found.iter().flatten().next() else { continue };
        let mut row = vec![shortened(&any.statement, SHOWN_TEXT)];
        for s in &found {
            row.push(s.map_or("-".into(), |s| s.count.to_string()));
            row.push(s.and_then(|s| s.latency_ms).map_or("-".into(), |l| format!("{:.3}", l.p99)));
            row.push(s.map_or("-".into(), |s| s.errors_total().to_string()));
            row.push(s.map_or("-".into(), |s| s.differences_total().to_string()));
        }
        let mut weight = 0.0f64;
        for other in found.iter().skip(1) {
            let (said, w) = verdict(found.first().copied().flatten(), *other);
            row.push(if said.is_empty() { "same".to_owned() } else { said });
            weight = weight.max(w);
        }
        rows.push((weight, row));
    }
    rows.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let title = "Per statement (matched by fingerprint; each against the first file)".to_owned();
    Table { title, header, rows: rows.into_iter().map(|(_, row)| row).collect() }
}

#[cfg(test)]
mod tests {
    use super::super::replay_record::LatencyBrief;
    use super::*;

    fn statement(id: &str, count: u64, p99: f64, errors: u64, differences: u64) -> ReplayStatementResult {
        ReplayStatementResult {
            statement: format!("select {id}"),
            id: id.to_owned(),
            count,
            captured_count: count,
            errors: if errors > 0 { BTreeMap::from([("1213".to_owned(), errors)]) } else { BTreeMap::new() },
            latency_ms: Some(LatencyBrief { p50: p99 / 2.0, p99, max: p99 * 2.0 }),
            captured_latency_ms: None,
            rows: count,
            captured_rows: count,
            differences: if differences > 0 {
                BTreeMap::from([("rows".to_owned(), differences)])
            } else {
                BTreeMap::new()
            },
            unknown: 0,
            examples: Vec::new(),
        }
    }

    /// A statement slower, one that fails more, one that answers
    /// differently, one the same: the changed ones first, each said.
    #[test]
    fn what_changed_comes_first_and_is_said() {
        let base = [statement("a", 100, 1.0, 0, 0), statement("b", 100, 1.0, 0, 0), statement("c", 100, 1.0, 0, 0)];
        let other = [
            statement("a", 100, 1.05, 0, 0),
            statement("b", 100, 3.0, 0, 0),
            statement("c", 100, 1.0, 2, 5),
            statement("d", 10, 1.0, 0, 0),
        ];
        let verdicts: Vec<(String, String)> = base
            .iter()
            .map(Some)
            .chain([None])
            .zip(&other)
            .map(|(b, o)| (o.id.clone(), verdict(b, Some(o)).0))
            .collect();
        assert_eq!(
            verdicts,
            [
                ("a".to_owned(), String::new()),
                ("b".to_owned(), "slower 3.0x".to_owned()),
                ("c".to_owned(), "more errors, new errors 1213, answers differ".to_owned()),
                ("d".to_owned(), "only here".to_owned()),
            ]
        );
    }
}
