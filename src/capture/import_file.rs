//! The import: the input opened (a file, or standard input for `-`), the
//! capture written to a temporary file beside `--out` and renamed to it
//! once whole, so that a failed import leaves nothing behind and never
//! replaces a file.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use wirebench_capture::format::BlockSettings;
use wirebench_capture::import::general_log::import_general_log;
use wirebench_capture::import::pcap::import_pcap;
use wirebench_capture::import::slow_log::import_slow_log;
use wirebench_capture::import::{ImportError, ImportReport, ImportSettings};

use super::{CaptureCommandError, ImportFrom, ImportOptions};

/// Imports `options.input` into `options.output`.
pub fn import(options: &ImportOptions) -> Result<ImportReport, CaptureCommandError> {
    let output = &options.output;
    if output.exists() {
        return Err(CaptureCommandError::OutputExists { path: output.clone() });
    }
    let input = open_input(&options.input)?;
    let temporary = temporary_beside(output);
    let settings = ImportSettings {
        source_name: options.input.display().to_string(),
        created_ns: SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64),
        writer: format!("wirebench {}", env!("CARGO_PKG_VERSION")),
        blocks: BlockSettings::default(),
    };
    let written = run_import(options, input, &settings, OnFirstWrite { path: temporary.clone(), file: None });
    let report = match written {
        Ok(report) => report,
        Err(error) => {
            let _ = std::fs::remove_file(&temporary);
            return Err(error);
        }
    };
    // Not over a file that appeared meanwhile: the link fails where it exists.
    let placed = std::fs::hard_link(&temporary, output).or_else(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => Err(e),
        _ => std::fs::rename(&temporary, output),
    });
    let _ = std::fs::remove_file(&temporary);
    match placed {
        Ok(()) => Ok(report),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            Err(CaptureCommandError::OutputExists { path: output.clone() })
        }
        Err(source) => Err(CaptureCommandError::Write { path: output.clone(), source }),
    }
}

/// The temporary file, made when the import writes its first byte: an
/// input that is not what `--from` says is refused before any file appears.
struct OnFirstWrite {
    path: PathBuf,
    file: Option<BufWriter<File>>,
}

impl Write for OnFirstWrite {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if self.file.is_none() {
            self.file = Some(BufWriter::with_capacity(1 << 20, File::create(&self.path)?));
        }
        match self.file.as_mut() {
            Some(file) => file.write(bytes),
            None => Ok(0),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.as_mut().map_or(Ok(()), Write::flush)
    }
}

fn run_import(
    options: &ImportOptions,
    input: Box<dyn Read>,
    settings: &ImportSettings,
    out: OnFirstWrite,
) -> Result<ImportReport, CaptureCommandError> {
    let input = BufReader::with_capacity(1 << 20, input);
    let result = match options.from {
        ImportFrom::Pcap => import_pcap(input, options.port, settings, out),
        ImportFrom::GeneralLog => import_general_log(input, settings, out),
        ImportFrom::SlowLog => import_slow_log(input, settings, out),
    };
    let (out, report) = result.map_err(|source| match source {
        ImportError::Write(wirebench_capture::format::WriteError::Io(source)) => {
            CaptureCommandError::Write { path: options.output.clone(), source }
        }
        source => CaptureCommandError::Import { path: options.input.clone(), source },
    })?;
    let write_error = |source| CaptureCommandError::Write { path: options.output.clone(), source };
    let Some(file) = out.file else { return Ok(report) };
    let file = file.into_inner().map_err(|e| write_error(e.into_error()))?;
    file.sync_all().map_err(write_error)?;
    Ok(report)
}

fn open_input(path: &Path) -> Result<Box<dyn Read>, CaptureCommandError> {
    if path == Path::new("-") {
        return Ok(Box::new(std::io::stdin()));
    }
    let file = File::open(path).map_err(|source| CaptureCommandError::Open { path: path.to_owned(), source })?;
    Ok(Box::new(file))
}

/// `.NAME.partial-PID` in the output's directory (a rename stays on one file system).
fn temporary_beside(output: &Path) -> PathBuf {
    let name = output.file_name().map_or_else(|| "capture".into(), |n| n.to_string_lossy().into_owned());
    output.with_file_name(format!(".{name}.partial-{}", std::process::id()))
}

/// What `capture import` prints: what was written, then what could not be read.
pub fn render_import(options: &ImportOptions, report: &ImportReport) -> String {
    let totals = report.totals;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "wrote {}: {} records over {:.3} s",
        options.output.display(),
        totals.records,
        totals.last_ns.saturating_sub(totals.first_ns) as f64 / 1e9
    );
    let _ = writeln!(
        out,
        "  connections: {} ({} open before the capture began); commands: {}; answers: {}",
        report.connections, report.already_open, report.commands, report.answers
    );
    let mut notes = Vec::new();
    if report.answers_missing > 0 {
        notes.push(format!(
            "{} commands have no answer in the capture (it ended first, or lost bytes)",
            report.answers_missing
        ));
    }
    if report.unknown_statement_commands > 0 {
        notes.push(format!(
            "{} commands on {} prepared statements the capture never saw prepared (prepared before it began): a \
             replay cannot run them",
            report.unknown_statement_commands, report.unknown_statement_ids
        ));
    }
    if report.gaps > 0 {
        notes.push(format!(
            "{} gaps where bytes were lost or could not be read; reading resumed at the next whole command",
            report.gaps
        ));
    }
    if report.logins_refused > 0 {
        notes.push(format!("{} logins the server refused", report.logins_refused));
    }
    for what in &report.not_importable {
        notes.push(format!("not importable: {what}"));
    }
    for (what, count) in &report.skipped {
        notes.push(format!("passed over: {count} {what}"));
    }
    if report.times_stepped_back > 0 {
        notes.push(format!(
            "{} packets were timed before the packet before them (captured on several CPUs or interfaces): taken \
             at that packet's time",
            report.times_stepped_back
        ));
    }
    if report.late.count > 0 {
        notes.push(format!(
            "{} records came after later ones and were moved forward, by at most {:.6} s",
            report.late.count,
            report.late.max_ns as f64 / 1e9
        ));
    }
    if let Some(offset) = report.cut_at {
        notes.push(format!(
            "the input ends inside a packet at byte {offset} (its capture was cut off): read up to there"
        ));
    }
    for note in notes {
        let _ = writeln!(out, "  note: {note}");
    }
    out
}
