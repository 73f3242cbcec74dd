//! `--hdr-log=FILE`: the latencies as an HdrHistogram interval log, the
//! standard format the HdrHistogram project's tools read
//! (`HistogramLogProcessor`, HdrHistogram's plotter, the `hdrhistogram`
//! crate's `IntervalLogIterator`).
//!
//! One line per histogram per interval, values in nanoseconds (the Max
//! column too; `HistogramLogProcessor -outputValueUnitRatio 1000000`
//! prints milliseconds): the events' latency untagged (under `--rate` from each arrival), `Tag=service` for
//! their service time under `--rate`, and `Tag=<kind>` for each statement
//! kind that ran in the interval (`Tag=point_select`, `Tag=commit`, ...).

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::Histogram;

use super::collector::Latencies;

/// Why the log could not be written.
#[derive(Debug, thiserror::Error)]
pub enum HdrLogError {
    #[error("--hdr-log={}: cannot create the file: {source}; give a path in a directory you may write to", path.display())]
    Create { path: PathBuf, source: io::Error },
    #[error("--hdr-log={}: cannot write: {reason}; the log stops here, the run goes on", path.display())]
    Write { path: PathBuf, reason: String },
}

/// The column names the Java writer puts after the header.
const LEGEND: &[u8] = b"\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n";

/// An open interval log.
pub struct HdrLog {
    path: PathBuf,
    out: BufWriter<File>,
    serializer: V2DeflateSerializer,
    /// Whether to write the `service` histograms (under `--rate`).
    service: bool,
}

impl HdrLog {
    /// Creates (or truncates) `path` and writes the log's header, with
    /// `comment` (a line, none when empty) after wirebench's own; the
    /// intervals' times count from `start`.
    pub fn create(path: &Path, start: SystemTime, service: bool, comment: &str) -> Result<HdrLog, HdrLogError> {
        let file = File::create(path).map_err(|source| HdrLogError::Create { path: path.to_owned(), source })?;
        let mut log = HdrLog {
            path: path.to_owned(),
            out: BufWriter::new(file),
            serializer: V2DeflateSerializer::new(),
            service,
        };
        let mut builder = IntervalLogWriterBuilder::new();
        builder.add_comment(concat!("Logged by wirebench ", env!("CARGO_PKG_VERSION"), "; values in nanoseconds"));
        if !comment.is_empty() {
            builder.add_comment(comment);
        }
        builder.with_start_time(start).with_base_time(start);
        let header = builder.begin_log_with(&mut log.out, &mut log.serializer).map(drop);
        let written = header.and_then(|()| log.out.write_all(LEGEND));
        written.map_err(|e| log.write_error(e))?;
        Ok(log)
    }

    /// Writes one interval: `from` after the start, `length` long.
    pub fn write_interval(
        &mut self,
        from: Duration,
        length: Duration,
        latencies: &Latencies,
    ) -> Result<(), HdrLogError> {
        let mut lines: Vec<(Option<&str>, &Histogram<u64>)> = vec![(None, latencies.events.histogram())];
        if self.service {
            lines.push((Some("service"), latencies.service.histogram()));
        }
        for (name, kind) in latencies.kinds.iter().filter(|(_, k)| k.count > 0) {
            lines.push((Some(name), kind.latency.histogram()));
        }
        let builder = IntervalLogWriterBuilder::new();
        let mut writer = builder
            .begin_log_with(&mut self.out, &mut self.serializer)
            .map_err(|e| HdrLogError::Write { path: self.path.clone(), reason: e.to_string() })?;
        for (tag, histogram) in lines {
            let tag = tag.and_then(Tag::new);
            if let Err(e) = writer.write_histogram(histogram, from, length, tag) {
                return Err(HdrLogError::Write { path: self.path.clone(), reason: e.to_string() });
            }
        }
        self.out.flush().map_err(|e| self.write_error(e))
    }

    fn write_error(&self, e: io::Error) -> HdrLogError {
        HdrLogError::Write { path: self.path.clone(), reason: e.to_string() }
    }
}

#[cfg(test)]
mod tests {
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    use hdrhistogram::serialization::Deserializer;

    use super::*;

    /// What a log holds, read back with the crate: per tag, the total count.
    fn counts(bytes: &[u8]) -> Vec<(Option<String>, u64, Duration)> {
        let mut found = Vec::new();
        for entry in IntervalLogIterator::new(bytes) {
            let LogEntry::Interval(interval) = entry.unwrap() else { continue };
            let decoded = base64_decode(interval.encoded_histogram());
            let h: Histogram<u64> = Deserializer::new().deserialize(&mut decoded.as_slice()).unwrap();
            found.push((interval.tag().map(|t| t.as_str().to_owned()), h.len(), interval.start_timestamp()));
        }
        found
    }

    fn base64_decode(text: &str) -> Vec<u8> {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.decode(text).unwrap()
    }

    #[test]
    fn intervals_read_back_per_tag() {
        let dir = std::env::temp_dir().join(format!("wirebench-hdr-log-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("run.hlog");
        let mut log = HdrLog::create(&path, SystemTime::now(), true, "wirebench shard=1/3").unwrap();
        let mut latencies = Latencies::new(&["point_select", "commit", "other"]);
        for us in 1..=10 {
            latencies.events.record_ns(us * 1_000);
            latencies.service.record_ns(us * 500);
            latencies.kinds.record(0, us * 900);
        }
        log.write_interval(Duration::ZERO, Duration::from_secs(1), &latencies).unwrap();
        latencies.reset();
        latencies.events.record_ns(5);
        latencies.kinds.record(1, 5);
        log.write_interval(Duration::from_secs(1), Duration::from_secs(1), &latencies).unwrap();
        drop(log);
        let text = std::fs::read(&path).unwrap();
        assert!(text.starts_with(b"#Logged by wirebench"), "{}", String::from_utf8_lossy(&text));
        assert!(String::from_utf8_lossy(&text).lines().nth(1) == Some("#wirebench shard=1/3"));
        let found = counts(&text);
        let tags: Vec<(Option<&str>, u64)> = found.iter().map(|(t, n, _)| (t.as_deref(), *n)).collect();
        assert_eq!(
            tags,
            [
                (None, 10),
                (Some("service"), 10),
                (Some("point_select"), 10),
                (None, 1),
                (Some("service"), 0),
                (Some("commit"), 1)
            ]
        );
        assert_eq!(found[3].2, Duration::from_secs(1));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_file_that_cannot_be_created_is_named() {
        let Err(e) = HdrLog::create(Path::new("/nonexistent-dir/x.hlog"), SystemTime::now(), false, "") else {
            panic!("created")
        };
        assert!(e.to_string().starts_with("--hdr-log=/nonexistent-dir/x.hlog: cannot create the file: "), "{e}");
    }
}
