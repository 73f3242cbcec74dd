//! Where a command's text goes: reports, help and version on standard
//! output, the null server's lines on standard error. `print!` panics when
//! the write fails (a pipe closed by `| head`, a full disk); every write
//! here goes through [`Output`] instead, whose failure is an
//! [`OutputError`] that ends the command, and `main` turns it into an exit
//! status ([`OutputError::exit_status`]).
//!
//! Notes and warnings ([`stderr_line`]) are best effort: when standard
//! error itself fails there is nowhere left to say so.

use std::fmt;
use std::io::{self, Write};

/// Exit status after a closed pipe: what a shell shows for a process
/// killed by SIGPIPE (128 + 13), which is how C tools such as sysbench end
/// under `| head`. Rust ignores SIGPIPE so that a closed server socket is
/// an error, not death, so wirebench exits with the status instead.
pub const EXIT_CLOSED_PIPE: u8 = 141;

/// Exit status after any other output failure (a full disk, an I/O
/// error): `EX_IOERR` from sysexits.h.
pub const EXIT_OUTPUT_FAILED: u8 = 74;

/// A standard stream written whole-text-at-a-time, each write flushed, so
/// that what the user reads is what was printed and a failure shows at the
/// write that caused it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    Stdout,
    Stderr,
}

impl Output {
    /// Writes `text` and flushes.
    pub fn print(self, text: impl fmt::Display) -> Result<(), OutputError> {
        let written = match self {
            Output::Stdout => write_flushed(&mut io::stdout().lock(), &text),
            Output::Stderr => write_flushed(&mut io::stderr().lock(), &text),
        };
        written.map_err(|source| OutputError { stream: self, source })
    }

    /// Writes `text` and a newline, as one write.
    pub fn line(self, text: impl fmt::Display) -> Result<(), OutputError> {
        self.print(format_args!("{text}\n"))
    }

    fn stream_name(self) -> &'static str {
        match self {
            Output::Stdout => "standard output",
            Output::Stderr => "standard error",
        }
    }
}

fn write_flushed(out: &mut impl Write, text: &dyn fmt::Display) -> io::Result<()> {
    write!(out, "{text}")?;
    out.flush()
}

/// One line on standard error (a note, a warning, a fatal error), never
/// failing the caller: if standard error is closed or full, the line is
/// lost, as nothing is left to report it on.
pub fn stderr_line(text: impl fmt::Display) {
    let _ = Output::Stderr.line(text);
}

/// A write to standard output or standard error failed.
#[derive(Debug, thiserror::Error)]
#[error("cannot write to {}: {source}; check where the output goes (a full disk, a closed pipe)", .stream.stream_name())]
pub struct OutputError {
    stream: Output,
    source: io::Error,
}

impl OutputError {
    /// The reader went away (`| head`): not worth a message.
    pub fn is_closed_pipe(&self) -> bool {
        self.source.kind() == io::ErrorKind::BrokenPipe
    }

    /// [`EXIT_CLOSED_PIPE`] or [`EXIT_OUTPUT_FAILED`].
    pub fn exit_status(&self) -> u8 {
        if self.is_closed_pipe() {
            EXIT_CLOSED_PIPE
        } else {
            EXIT_OUTPUT_FAILED
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_pipe_is_quiet_and_a_full_disk_is_named() {
        let pipe = OutputError { stream: Output::Stdout, source: io::Error::from(io::ErrorKind::BrokenPipe) };
        assert!(pipe.is_closed_pipe());
        assert_eq!(pipe.exit_status(), 141);
        let full = OutputError { stream: Output::Stdout, source: io::Error::from_raw_os_error(libc::ENOSPC) };
        assert!(!full.is_closed_pipe());
        assert_eq!(full.exit_status(), 74);
        let message = full.to_string();
        assert!(message.starts_with("cannot write to standard output: No space left on device"), "{message}");
    }
}
