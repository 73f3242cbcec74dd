//! The series as Prometheus's data model has them: metric families of
//! samples, each sample with its labels. `exposition.rs` writes them as
//! text for a scrape, `remote_write.rs` as a remote-write request: one
//! list, so that the two never disagree.
//!
//! Names follow Prometheus's conventions: the `wirebench_` prefix, base
//! units in the name (`_seconds`, `_ratio`), counters ending in `_total`.

/// What a family's samples mean, as OpenMetrics types them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FamilyKind {
    Counter,
    Gauge,
    /// `_bucket{le=...}`, `_count`, `_sum`.
    Histogram,
    /// A constant 1 whose labels are the information.
    Info,
}

/// One metric family.
#[derive(Debug, Clone, PartialEq)]
pub struct Family {
    /// Without the `_total` of a counter or `_info` of an info.
    pub name: &'static str,
    pub help: &'static str,
    /// The unit, when the name ends with it (`seconds`).
    pub unit: Option<&'static str>,
    pub kind: FamilyKind,
    pub samples: Vec<Sample>,
}

/// One sample: its name is the family's plus `suffix`.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// `_total`, `_bucket`, `_count`, `_sum`, `_info` or nothing.
    pub suffix: &'static str,
    pub labels: Vec<(&'static str, String)>,
    pub value: f64,
}

impl Family {
    pub fn new(name: &'static str, kind: FamilyKind, help: &'static str) -> Family {
        Family { name, help, unit: None, kind, samples: Vec::new() }
    }

    /// With `unit`, which `name` ends with.
    pub fn in_unit(self, unit: &'static str) -> Family {
        Family { unit: Some(unit), ..self }
    }

    /// The sample of a counter, gauge or info, with `labels`.
    pub fn with(mut self, labels: &[(&'static str, &str)], value: f64) -> Family {
        let suffix = match self.kind {
            FamilyKind::Counter => "_total",
            FamilyKind::Info => "_info",
            FamilyKind::Gauge | FamilyKind::Histogram => "",
        };
        self.push(suffix, labels, value);
        self
    }

    pub fn push(&mut self, suffix: &'static str, labels: &[(&'static str, &str)], value: f64) {
        let labels = labels.iter().map(|&(name, value)| (name, value.to_owned())).collect();
        self.samples.push(Sample { suffix, labels, value });
    }
}

/// The labels every sample of a command carries: the test, the shard,
/// and `--metrics-label`'s.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommonLabels(pub Vec<(String, String)>);

/// A float as OpenMetrics and Prometheus's text read it: `+Inf`,
/// `-Inf`, `NaN`, and integers with a `.0` so a bucket's `le` is in its
/// canonical form.
pub fn float_text(value: f64) -> String {
    if value.is_nan() {
        "NaN".to_owned()
    } else if value.is_infinite() {
        if value > 0.0 { "+Inf" } else { "-Inf" }.to_owned()
    } else if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.1}")
    } else {
        format!("{value}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_are_written_as_the_formats_read_them() {
        assert_eq!(float_text(1.0), "1.0");
        assert_eq!(float_text(0.0005), "0.0005");
        assert_eq!(float_text(f64::INFINITY), "+Inf");
        assert_eq!(float_text(f64::NAN), "NaN");
        assert_eq!(float_text(123456789.0), "123456789.0");
        assert_eq!(float_text(1e20), "100000000000000000000");
    }
}
