//! `capture info`: a capture read whole and summed up, as text or JSON.

use std::fmt::Write as _;
use std::fs::File;
use std::io::BufReader;

use serde_json::{json, Map, Value};
use wirebench_capture::fingerprint::fingerprint_id;
use wirebench_capture::format::{CaptureReader, Ending};
use wirebench_capture::info::{summarize, CaptureInfo, StatementInfo};

use super::{CaptureCommandError, InfoOptions};

/// Reads the capture and sums it up.
pub fn info(options: &InfoOptions) -> Result<CaptureInfo, CaptureCommandError> {
    let path = &options.file;
    let file = File::open(path).map_err(|source| CaptureCommandError::Open { path: path.clone(), source })?;
    let reader = CaptureReader::open(BufReader::with_capacity(1 << 20, file))
        .map_err(|source| CaptureCommandError::Read { path: path.clone(), source })?;
    summarize(reader).map_err(|source| CaptureCommandError::Read { path: path.clone(), source })
}

/// `2023-10-10T12:00:00.123456Z` for ns since the epoch.
fn iso_utc(ns: u64) -> String {
    let seconds = ns / 1_000_000_000;
    let (days, rest) = ((seconds / 86_400) as i64, seconds % 86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (h, m, s) = (rest / 3600, rest % 3600 / 60, rest % 60);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{:06}Z", ns % 1_000_000_000 / 1000)
}

fn resolution(ns: u64) -> String {
    match ns {
        0 | 1 => "to the nanosecond".into(),
        1_000 => "to the microsecond".into(),
        1_000_000_000 => "to the second".into(),
        other => format!("to {other} ns"),
    }
}

fn ending_line(ending: &Ending) -> String {
    match ending {
        Ending::Clean(_) => "whole (it has its end block)".into(),
        Ending::Truncated { offset, reason } => {
            format!("cut off at byte {offset} ({reason}): every record before that was read")
        }
    }
}

/// The text of `capture info`.
pub fn render_info_text(options: &InfoOptions, info: &CaptureInfo) -> String {
    let h = &info.header;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "capture {} (format {}.{}, written by {})",
        options.file.display(),
        h.version.0,
        h.version.1,
        h.writer
    );
    let _ = writeln!(
        out,
        "  from: {} {}; times {}; answers: {}",
        h.source.name(),
        h.source_name,
        resolution(h.time_resolution_ns),
        h.answers.name()
    );
    let _ = writeln!(out, "  file: {}", ending_line(&info.ending));
    if let Some(first) = info.first_ns {
        let _ = writeln!(out, "  span: {} for {:.3} s", iso_utc(first), info.duration_ns() as f64 / 1e9);
    }
    let users: Vec<String> = info.users.iter().map(|(u, n)| format!("{u} {n}")).collect();
    let _ = writeln!(
        out,
        "  connections: {} ({} open before the capture began); users: {}",
        info.connections,
        info.already_open,
        users.join(", ")
    );
    let closes: Vec<String> = info.closes.iter().map(|(how, n)| format!("{how} {n}")).collect();
    if !closes.is_empty() {
        let _ = writeln!(out, "  ended: {}", closes.join(", "));
    }
    let errors: Vec<String> = info.errors_by_code.iter().map(|(code, n)| format!("{code}: {n}")).collect();
    let _ = write!(out, "  commands: {}; answers: {}; errors: {}", info.commands, info.answers, info.errors());
    if !errors.is_empty() {
        let _ = write!(out, " ({})", errors.join(", "));
    }
    out.push('\n');
    if info.unknown_statement > 0 {
        let _ = writeln!(out, "  commands on statements prepared before the capture began: {}", info.unknown_statement);
    }
    if info.gaps > 0 {
        let _ = writeln!(out, "  gaps (bytes lost or unreadable): {}", info.gaps);
    }
    out.push_str("\nby command:\n");
    for (name, count) in &info.by_command {
        let _ = writeln!(out, "  {name:<24} {count:>12}");
    }
    statement_table(&mut out, "top statements by count", &info.top_by_count(options.top), info.commands);
    let by_time = info.top_by_time(options.top);
    if by_time.is_empty() {
        out.push_str("\ntop statements by time: none (the capture has no answers, so no times)\n");
    } else {
        statement_table(&mut out, "top statements by time", &by_time, info.commands);
    }
    out
}

fn statement_table(out: &mut String, title: &str, rows: &[&StatementInfo], commands: u64) {
    let _ = writeln!(out, "\n{title}:");
    let _ = writeln!(
        out,
        "  {:>10} {:>6} {:>12} {:>10} {:>10} {:>7}  statement",
        "count", "share", "total (s)", "mean (ms)", "max (ms)", "errors"
    );
    for s in rows {
        let share = 100.0 * s.count as f64 / commands.max(1) as f64;
        let mean =
            if s.answered > 0 { format!("{:.3}", s.total_ns as f64 / s.answered as f64 / 1e6) } else { "-".into() };
        let max = if s.answered > 0 { format!("{:.3}", s.max_ns as f64 / 1e6) } else { "-".into() };
        let total = if s.answered > 0 { format!("{:.3}", s.total_ns as f64 / 1e9) } else { "-".into() };
        let _ = writeln!(
            out,
            "  {:>10} {:>5.1}% {total:>12} {mean:>10} {max:>10} {:>7}  {}",
            s.count,
            share,
            s.errors,
            shorten(&s.statement)
        );
    }
}

/// A statement cut to one line of 200 characters at most.
fn shorten(statement: &str) -> String {
    let line: String = statement.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    if line.chars().count() > 200 {
        format!("{}...", line.chars().take(197).collect::<String>())
    } else {
        line
    }
}

fn statement_json(s: &StatementInfo) -> Value {
    json!({
        "statement": s.statement,
        "id": fingerprint_id(&s.statement),
        "count": s.count,
        "prepares": s.prepares,
        "answered": s.answered,
        "total_s": s.total_ns as f64 / 1e9,
        "mean_ms": if s.answered > 0 { Some(s.total_ns as f64 / s.answered as f64 / 1e6) } else { None },
        "max_ms": if s.answered > 0 { Some(s.max_ns as f64 / 1e6) } else { None },
        "errors": s.errors,
        "rows": s.rows,
    })
}

/// The JSON of `capture info` (schema: docs/capture.md).
pub fn render_info_json(options: &InfoOptions, info: &CaptureInfo) -> String {
    let h = &info.header;
    let (complete, cut_at, cut_reason) = match &info.ending {
        Ending::Clean(_) => (true, None, None),
        Ending::Truncated { offset, reason } => (false, Some(*offset), Some(*reason)),
    };
    let counts = |map: &std::collections::BTreeMap<String, u64>| -> Map<String, Value> {
        map.iter().map(|(k, v)| (k.clone(), json!(v))).collect()
    };
    let errors: Map<String, Value> = info.errors_by_code.iter().map(|(k, v)| (k.to_string(), json!(v))).collect();
    let closes: Map<String, Value> = info.closes.iter().map(|(k, v)| ((*k).to_owned(), json!(v))).collect();
    let value = json!({
        "type": "capture_info",
        "file": options.file.display().to_string(),
        "format_version": format!("{}.{}", h.version.0, h.version.1),
        "source": { "kind": h.source.name(), "name": h.source_name, "writer": h.writer },
        "time_resolution_ns": h.time_resolution_ns,
        "answer_coverage": h.answers.name(),
        "complete": complete,
        "cut_at": cut_at,
        "cut_reason": cut_reason,
        "first": info.first_ns.map(iso_utc),
        "duration_s": info.duration_ns() as f64 / 1e9,
        "connections": { "total": info.connections, "already_open": info.already_open, "users": counts(&info.users), "ended": closes },
        "commands": info.commands,
        "answers": info.answers,
        "errors": info.errors(),
        "errors_by_code": errors,
        "unknown_statement_commands": info.unknown_statement,
        "gaps": info.gaps,
        "by_command": counts(&info.by_command),
        "top_by_count": info.top_by_count(options.top).into_iter().map(statement_json).collect::<Vec<_>>(),
        "top_by_time": info.top_by_time(options.top).into_iter().map(statement_json).collect::<Vec<_>>(),
    });
    format!("{value}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_times() {
        assert_eq!(iso_utc(0), "1970-01-01T00:00:00.000000Z");
        assert_eq!(iso_utc(1_696_939_200_123_456_789), "2023-10-10T12:00:00.123456Z");
        assert_eq!(iso_utc(951_782_400_000_000_000), "2000-02-29T00:00:00.000000Z");
    }
}
