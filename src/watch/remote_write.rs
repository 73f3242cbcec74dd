//! Prometheus remote write 1.0: the families as a `WriteRequest`
//! protobuf, snappy-compressed (block format), as the specification
//! (prometheus.io/docs/specs/remote_write_spec) has it:
//!
//! ```text
//! WriteRequest  { repeated TimeSeries timeseries = 1; repeated MetricMetadata metadata = 3; }
//! TimeSeries    { repeated Label labels = 1; repeated Sample samples = 2; }
//! Label         { string name = 1; string value = 2; }
//! Sample        { double value = 1; int64 timestamp = 2; }  // ms since the Unix epoch
//! MetricMetadata{ MetricType type = 1; string metric_family_name = 2; string help = 4; string unit = 5; }
//! ```
//!
//! Each sample is a series of its own, its labels sorted by name with
//! `__name__` among them; a histogram goes as its `_bucket`, `_count` and
//! `_sum` series, as a scrape stores it.

use super::families::{CommonLabels, Family, FamilyKind};

/// The request body: the protobuf, snappy-compressed.
pub fn write_request(families: &[Family], common: &CommonLabels, timestamp_ms: i64) -> Vec<u8> {
    let protobuf = encode_request(families, common, timestamp_ms);
    // Infallible for an input under snappy's 4 GiB limit; an empty body
    // would only make the receiver answer 400, which is reported.
    snap::raw::Encoder::new().compress_vec(&protobuf).unwrap_or_default()
}

/// The `WriteRequest` protobuf, uncompressed.
fn encode_request(families: &[Family], common: &CommonLabels, timestamp_ms: i64) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 * 1024);
    let mut series = Vec::new();
    for family in families {
        for sample in &family.samples {
            series.clear();
            let name = format!("{}{}", family.name, sample.suffix);
            let mut labels: Vec<(&str, &str)> = vec![("__name__", &name)];
            labels.extend(common.0.iter().map(|(k, v)| (k.as_str(), v.as_str())));
            labels.extend(sample.labels.iter().map(|(k, v)| (*k, v.as_str())));
            labels.sort_by(|a, b| a.0.cmp(b.0));
            for (label, value) in labels {
                let mut message = Vec::new();
                string_field(&mut message, 1, label);
                string_field(&mut message, 2, value);
                bytes_field(&mut series, 1, &message);
            }
            let mut point = Vec::with_capacity(20);
            tag(&mut point, 1, WIRE_FIXED64);
            point.extend_from_slice(&sample.value.to_le_bytes());
            tag(&mut point, 2, WIRE_VARINT);
            varint(&mut point, timestamp_ms as u64);
            bytes_field(&mut series, 2, &point);
            bytes_field(&mut out, 1, &series);
        }
    }
    for family in families.iter().filter(|f| !f.samples.is_empty()) {
        bytes_field(&mut out, 3, &metadata(family));
    }
    out
}

/// A family's `MetricMetadata`.
fn metadata(family: &Family) -> Vec<u8> {
    let (kind, name) = match family.kind {
        FamilyKind::Counter => (1, format!("{}_total", family.name)),
        FamilyKind::Gauge => (2, family.name.to_owned()),
        FamilyKind::Histogram => (3, family.name.to_owned()),
        FamilyKind::Info => (6, format!("{}_info", family.name)),
    };
    let mut out = Vec::new();
    tag(&mut out, 1, WIRE_VARINT);
    varint(&mut out, kind);
    string_field(&mut out, 2, &name);
    string_field(&mut out, 4, family.help);
    if let Some(unit) = family.unit {
        string_field(&mut out, 5, unit);
    }
    out
}

const WIRE_VARINT: u64 = 0;
const WIRE_FIXED64: u64 = 1;
const WIRE_LEN: u64 = 2;

fn tag(out: &mut Vec<u8>, field: u64, wire: u64) {
    varint(out, field << 3 | wire);
}

fn varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn bytes_field(out: &mut Vec<u8>, field: u64, bytes: &[u8]) {
    tag(out, field, WIRE_LEN);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

fn string_field(out: &mut Vec<u8>, field: u64, text: &str) {
    bytes_field(out, field, text.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A protobuf message's fields: (number, varint or fixed64 value, or bytes).
    fn fields(mut bytes: &[u8]) -> Vec<(u64, Result<u64, Vec<u8>>)> {
        fn read_varint(bytes: &mut &[u8]) -> u64 {
            let (mut n, mut shift) = (0, 0);
            loop {
                let b = bytes[0];
                *bytes = &bytes[1..];
                n |= u64::from(b & 0x7f) << shift;
                if b < 0x80 {
                    return n;
                }
                shift += 7;
            }
        }
        let mut out = Vec::new();
        while !bytes.is_empty() {
            let key = read_varint(&mut bytes);
            let value = match key & 7 {
                0 => Ok(read_varint(&mut bytes)),
                1 => {
                    let v = u64::from_le_bytes(bytes[..8].try_into().unwrap());
                    bytes = &bytes[8..];
                    Ok(v)
                }
                2 => {
                    let len = read_varint(&mut bytes) as usize;
                    let v = bytes[..len].to_vec();
                    bytes = &bytes[len..];
                    Err(v)
                }
                other => panic!("wire type {other}"),
            };
            out.push((key >> 3, value));
        }
        out
    }

    fn text(bytes: &[u8]) -> String {
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    #[test]
    fn a_series_has_its_sorted_labels_and_one_sample() {
        let mut queries = Family::new("wirebench_queries", FamilyKind::Counter, "Queries");
        queries.push("_total", &[("kind", "read")], 1234.0);
        let common = CommonLabels(vec![("test".into(), "oltp_point_select".into()), ("env".into(), "ci".into())]);
        let body = write_request(&[queries], &common, 1_700_000_000_123);
        let request = snap::raw::Decoder::new().decompress_vec(&body).unwrap();
        let top = fields(&request);
        assert_eq!(top.iter().map(|f| f.0).collect::<Vec<_>>(), [1, 3], "one series, one metadata");
        let Err(series) = &top[0].1 else { panic!("a message") };
        let mut labels = Vec::new();
        let mut samples = Vec::new();
        for (number, value) in fields(series) {
            let Err(message) = value else { panic!("a message") };
            let inner = fields(&message);
            match number {
                1 => labels.push(inner.iter().map(|f| text(f.1.as_ref().unwrap_err())).collect::<Vec<_>>()),
                2 => samples.push(inner.iter().map(|f| *f.1.as_ref().unwrap()).collect::<Vec<_>>()),
                _ => panic!("field {number}"),
            }
        }
        let expected =
            [["__name__", "wirebench_queries_total"], ["env", "ci"], ["kind", "read"], ["test", "oltp_point_select"]];
        assert_eq!(labels, expected.map(|l| l.map(str::to_owned).to_vec()));
        assert_eq!(samples, [vec![1234.0f64.to_bits(), 1_700_000_000_123]]);
        let Err(metadata) = &top[1].1 else { panic!("a message") };
        let metadata = fields(metadata);
        assert_eq!(metadata[0], (1, Ok(1)), "COUNTER");
        assert_eq!(text(metadata[1].1.as_ref().unwrap_err()), "wirebench_queries_total");
    }

    #[test]
    fn varints_take_seven_bits_a_byte() {
        let mut out = Vec::new();
        varint(&mut out, 300);
        assert_eq!(out, [0xac, 0x02]);
        out.clear();
        varint(&mut out, u64::MAX);
        assert_eq!(out.len(), 10);
    }
}
