//! `/metrics`: the families as text, in OpenMetrics 1.0 when the scraper
//! asks for it (Prometheus does, in its `Accept` header) and in
//! Prometheus's text format 0.0.4 otherwise (curl, older scrapers).
//!
//! The two differ in naming a counter's family (`wirebench_queries` in
//! OpenMetrics, whose samples add `_total`; the sample's name in 0.0.4),
//! in `# UNIT` lines, in the info type (a gauge in 0.0.4) and in the
//! closing `# EOF`.

use std::fmt::Write as _;

use super::families::{float_text, CommonLabels, Family, FamilyKind};

/// A text format of the exposition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextFormat {
    OpenMetrics,
    Prometheus004,
}

impl TextFormat {
    /// The format an `Accept` header asks for: OpenMetrics when it names
    /// it (with any parameters or weight), else 0.0.4.
    pub fn negotiate(accept: Option<&str>) -> TextFormat {
        let asks = |range: &str| range.split(';').next().is_some_and(|t| t.trim() == "application/openmetrics-text");
        match accept {
            Some(accept) if accept.split(',').any(asks) => TextFormat::OpenMetrics,
            _ => TextFormat::Prometheus004,
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            TextFormat::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
            TextFormat::Prometheus004 => "text/plain; version=0.0.4; charset=utf-8",
        }
    }
}

/// The exposition of `families`, each sample with `common`'s labels first.
pub fn exposition(families: &[Family], common: &CommonLabels, format: TextFormat) -> String {
    let mut out = String::with_capacity(8 * 1024);
    for family in families.iter().filter(|f| !f.samples.is_empty()) {
        write_family(&mut out, family, common, format);
    }
    if format == TextFormat::OpenMetrics {
        out.push_str("# EOF\n");
    }
    out
}

fn write_family(out: &mut String, family: &Family, common: &CommonLabels, format: TextFormat) {
    let (name, kind) = match (format, family.kind) {
        (TextFormat::OpenMetrics, kind) => (family.name.to_owned(), om_type(kind)),
        (TextFormat::Prometheus004, FamilyKind::Counter) => (format!("{}_total", family.name), "counter"),
        (TextFormat::Prometheus004, FamilyKind::Info) => (format!("{}_info", family.name), "gauge"),
        (TextFormat::Prometheus004, FamilyKind::Gauge) => (family.name.to_owned(), "gauge"),
        (TextFormat::Prometheus004, FamilyKind::Histogram) => (family.name.to_owned(), "histogram"),
    };
    let _ = writeln!(out, "# HELP {name} {}", escaped(family.help, false));
    let _ = writeln!(out, "# TYPE {name} {kind}");
    if let (TextFormat::OpenMetrics, Some(unit)) = (format, family.unit) {
        let _ = writeln!(out, "# UNIT {name} {unit}");
    }
    for sample in &family.samples {
        out.push_str(family.name);
        out.push_str(sample.suffix);
        let common = common.0.iter().map(|(k, v)| (k.as_str(), v.as_str()));
        let labels: Vec<(&str, &str)> = common.chain(sample.labels.iter().map(|(k, v)| (*k, v.as_str()))).collect();
        if !labels.is_empty() {
            out.push('{');
            for (i, (label, value)) in labels.iter().enumerate() {
                let comma = if i > 0 { "," } else { "" };
                let _ = write!(out, "{comma}{label}=\"{}\"", escaped(value, true));
            }
            out.push('}');
        }
        let _ = writeln!(out, " {}", float_text(sample.value));
    }
}

fn om_type(kind: FamilyKind) -> &'static str {
    match kind {
        FamilyKind::Counter => "counter",
        FamilyKind::Gauge => "gauge",
        FamilyKind::Histogram => "histogram",
        FamilyKind::Info => "info",
    }
}

/// A label value (`quotes`) or a HELP text as both formats escape them.
fn escaped(text: &str, quotes: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '"' if quotes => out.push_str("\\\""),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn families() -> Vec<Family> {
        let mut queries = Family::new("wirebench_queries", FamilyKind::Counter, "Queries \\ answered\nby kind");
        queries.push("_total", &[("kind", "read")], 12.0);
        let mut latency = Family::new("wirebench_latency_seconds", FamilyKind::Histogram, "Latency").in_unit("seconds");
        latency.push("_bucket", &[("le", "0.001")], 3.0);
        latency.push("_bucket", &[("le", "+Inf")], 4.0);
        latency.push("_count", &[], 4.0);
        latency.push("_sum", &[], 0.0125);
        vec![
            Family::new("wirebench_run", FamilyKind::Info, "Run").with(&[("server_version", "10.11 \"x\"")], 1.0),
            queries,
            Family::new("wirebench_errors", FamilyKind::Counter, "Errors"),
            latency,
        ]
    }

    #[test]
    fn openmetrics_names_families_and_ends_with_eof() {
        let common = CommonLabels(vec![("test".into(), "oltp_read_only".into())]);
        let text = exposition(&families(), &common, TextFormat::OpenMetrics);
        let expected = "\
# HELP wirebench_run Run
# TYPE wirebench_run info
wirebench_run_info{test=\"oltp_read_only\",server_version=\"10.11 \\\"x\\\"\"} 1.0
# HELP wirebench_queries Queries \\\\ answered\\nby kind
# TYPE wirebench_queries counter
wirebench_queries_total{test=\"oltp_read_only\",kind=\"read\"} 12.0
# HELP wirebench_latency_seconds Latency
# TYPE wirebench_latency_seconds histogram
# UNIT wirebench_latency_seconds seconds
wirebench_latency_seconds_bucket{test=\"oltp_read_only\",le=\"0.001\"} 3.0
wirebench_latency_seconds_bucket{test=\"oltp_read_only\",le=\"+Inf\"} 4.0
wirebench_latency_seconds_count{test=\"oltp_read_only\"} 4.0
wirebench_latency_seconds_sum{test=\"oltp_read_only\"} 0.0125
# EOF
";
        assert_eq!(text, expected);
    }

    #[test]
    fn prometheus_004_names_samples_and_has_no_units() {
        let text = exposition(&families(), &CommonLabels::default(), TextFormat::Prometheus004);
        assert!(text.contains("# TYPE wirebench_run_info gauge\nwirebench_run_info{server_version="), "{text}");
        assert!(text.contains("# TYPE wirebench_queries_total counter\nwirebench_queries_total{kind=\"read\"} 12.0\n"));
        assert!(text.contains("wirebench_latency_seconds_count 4.0\n"), "{text}");
        assert!(!text.contains("# UNIT") && !text.contains("# EOF"), "{text}");
        assert!(!text.contains("wirebench_errors"), "a family with no sample is left out");
    }

    #[test]
    fn openmetrics_is_chosen_when_asked_for() {
        let prometheus = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert_eq!(TextFormat::negotiate(Some(prometheus)), TextFormat::OpenMetrics);
        assert_eq!(TextFormat::negotiate(Some("text/plain")), TextFormat::Prometheus004);
        assert_eq!(TextFormat::negotiate(Some("*/*")), TextFormat::Prometheus004);
        assert_eq!(TextFormat::negotiate(None), TextFormat::Prometheus004);
    }
}
