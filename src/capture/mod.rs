//! `wirebench capture import` and `wirebench capture info`: captures made
//! from a pcap or a server's log, and a capture summed up. The format,
//! the imports and the fingerprints are the `wirebench-capture` crate's
//! (the workspace's `capture` folder); this layer opens the files, writes the capture safely
//! (to a temporary file renamed at the end, never over an existing one)
//! and renders what the commands print.
//!
//! Layer: below `run` and `cli`, which convert the command line into
//! [`CaptureCommand`]; it imports no other module of the crate.
//!
//! Files: `import_file.rs` (the import, and its report as text),
//! `info_report.rs` (`capture info`'s text and JSON).

mod import_file;
mod info_report;

use std::path::PathBuf;

pub use import_file::{import, render_import};
pub use info_report::{info, render_info_json, render_info_text};

/// The capture commands, as the command line gave them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CaptureCommand {
    Import(ImportOptions),
    Info(InfoOptions),
}

/// What a capture is imported from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportFrom {
    Pcap,
    GeneralLog,
    SlowLog,
}

impl ImportFrom {
    pub const NAMES: [(&'static str, ImportFrom); 3] =
        [("pcap", ImportFrom::Pcap), ("general-log", ImportFrom::GeneralLog), ("slow-log", ImportFrom::SlowLog)];
}

/// `wirebench capture import --from=... IN --out=FILE [--port=N]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportOptions {
    pub from: ImportFrom,
    /// The input; `-` is standard input.
    pub input: PathBuf,
    pub output: PathBuf,
    /// The server's TCP port, for a pcap.
    pub port: u16,
}

/// How `capture info` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InfoFormat {
    Text,
    Json,
}

impl InfoFormat {
    pub const NAMES: [(&'static str, InfoFormat); 2] = [("text", InfoFormat::Text), ("json", InfoFormat::Json)];
}

/// `wirebench capture info FILE [--format=text|json] [--top=N]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InfoOptions {
    pub file: PathBuf,
    pub format: InfoFormat,
    /// Statements listed by count and by time.
    pub top: usize,
}

/// Why a capture command failed; each says what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CaptureCommandError {
    #[error("cannot read {}: {source}", path.display())]
    Open { path: PathBuf, source: std::io::Error },
    #[error("{}: {source}", path.display())]
    Import { path: PathBuf, source: wirebench_capture::import::ImportError },
    #[error("{} exists: give another --out, or remove it first (an import never writes over a file)", path.display())]
    OutputExists { path: PathBuf },
    #[error("cannot write {}: {source} (check the directory exists, its permissions and the disk's space)", path.display())]
    Write { path: PathBuf, source: std::io::Error },
    #[error("{}: {source}", path.display())]
    Read { path: PathBuf, source: wirebench_capture::format::ReadError },
}
