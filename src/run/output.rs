//! Where a command's text goes, and how much of it: reports, help and
//! version on standard output, the null server's lines and wirebench's
//! notes on standard error. `print!` panics when the write fails (a pipe
//! closed by `| head`, a full disk); every write here goes through
//! [`Output`] instead, whose failure is an [`OutputError`] that ends the
//! command, and `main` turns it into an exit status
//! ([`OutputError::exit_status`]).
//!
//! `--verbosity` is checked here, once: each message has sysbench's level
//! ([`Level`], from `sb_logger.h`) and is written when its level is at most
//! the [`Console`]'s verbosity, as sysbench's `text_handler_process` does.
//! What sysbench's Lua scripts `print` (the table messages of `prepare`,
//! `prewarm` and `cleanup`), the help and the version are written at every
//! level, with [`Output::print`].
//!
//! Notes and warnings ([`stderr_line`]) are best effort: when standard
//! error itself fails there is nowhere left to say so.
//!
//! With `--format=json` or `csv`, standard output carries the data alone:
//! the human report (everything [`Level`] prints, the table commands'
//! lines, sysbench's FATAL lines) goes to standard error instead
//! ([`Console::report`]), at the same `--verbosity`.

use std::fmt;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

use crate::cli::Personality;

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

    /// Writes `value` as one line of JSON and flushes. serde_json writes
    /// valid JSON or fails; its failure is the stream's.
    pub fn json_line(self, value: &impl serde::Serialize) -> Result<(), OutputError> {
        let mut text = serde_json::to_vec(value).map_err(|e| OutputError { stream: self, source: e.into() })?;
        text.push(b'\n');
        let written = match self {
            Output::Stdout => write_bytes_flushed(&mut io::stdout().lock(), &text),
            Output::Stderr => write_bytes_flushed(&mut io::stderr().lock(), &text),
        };
        written.map_err(|source| OutputError { stream: self, source })
    }

    /// Where the human report goes: standard output, or standard error
    /// when standard output carries `--format`'s data.
    pub fn report() -> Output {
        Console::current().report
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

fn write_bytes_flushed(out: &mut impl Write, bytes: &[u8]) -> io::Result<()> {
    out.write_all(bytes)?;
    out.flush()
}

/// sysbench's message levels (`log_msg_priority_t`), most severe first: a
/// message is written when its level is at most `--verbosity`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Written at every verbosity, 0 included.
    Fatal = 0,
    /// Something the user must act on.
    Alert = 1,
    Warning = 2,
    /// The banner, the run's header and reports: sysbench's default level.
    Notice = 3,
    /// "Event limit exceeded, exiting...", "Done.".
    Info = 4,
    Debug = 5,
}

impl Level {
    /// Writes `text` on the report's stream ([`Output::report`]) when the
    /// console shows this level;
    /// `text` is written whole, as given (a multi-line report carries no
    /// prefix, as sysbench's NOTICE lines carry none).
    pub fn print(self, text: impl fmt::Display) -> Result<(), OutputError> {
        let console = Console::current();
        if console.shows(self) {
            console.report.print(text)?;
        }
        Ok(())
    }

    /// One `DEBUG: `, `WARNING: `... line on standard output, sysbench's
    /// prefix first, when the console shows this level.
    pub fn line(self, text: impl fmt::Display) -> Result<(), OutputError> {
        self.print(format_args!("{}{text}\n", self.prefix()))
    }

    /// `get_msg_prefix()`.
    fn prefix(self) -> &'static str {
        match self {
            Level::Fatal => "FATAL: ",
            Level::Alert => "ALERT: ",
            Level::Warning => "WARNING: ",
            Level::Debug => "DEBUG: ",
            Level::Notice | Level::Info => "",
        }
    }
}

/// What the user asked to see, under which name, and where: `--verbosity`,
/// the [`Personality`], and the report's stream. `main` installs it once
/// the command line is read; until then (and in unit tests) it is
/// sysbench's default, verbosity 3, as wirebench, on standard output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Console {
    /// 0 (FATAL only) to 5 (debug).
    pub verbosity: u8,
    pub personality: Personality,
    /// Standard error with `--format=json` or `csv`.
    pub report: Output,
}

static VERBOSITY: AtomicU8 = AtomicU8::new(Level::Notice as u8);
static NAMED_SYSBENCH: AtomicBool = AtomicBool::new(false);
static REPORT_ON_STDERR: AtomicBool = AtomicBool::new(false);

impl Console {
    /// sysbench's: the report on standard output.
    pub fn new(verbosity: u8, personality: Personality) -> Console {
        Console { verbosity, personality, report: Output::Stdout }
    }

    /// Makes this the console every write consults.
    pub fn install(self) {
        VERBOSITY.store(self.verbosity, Ordering::Relaxed);
        NAMED_SYSBENCH.store(self.personality == Personality::Sysbench, Ordering::Relaxed);
        REPORT_ON_STDERR.store(self.report == Output::Stderr, Ordering::Relaxed);
    }

    pub fn current() -> Console {
        let personality =
            if NAMED_SYSBENCH.load(Ordering::Relaxed) { Personality::Sysbench } else { Personality::Wirebench };
        let report = if REPORT_ON_STDERR.load(Ordering::Relaxed) { Output::Stderr } else { Output::Stdout };
        Console { verbosity: VERBOSITY.load(Ordering::Relaxed), personality, report }
    }

    pub fn shows(self, level: Level) -> bool {
        level as u8 <= self.verbosity
    }

    /// Where `FATAL:` lines go: sysbench's logger writes them on standard
    /// output, where scripts written for it grep them, so as `sysbench`
    /// they go with the report; as wirebench, on standard error, apart from
    /// the report.
    fn fatal_stream(self) -> Output {
        match self.personality {
            Personality::Sysbench => self.report,
            Personality::Wirebench => Output::Stderr,
        }
    }
}

/// One of wirebench's own lines on standard error (a note, a warning),
/// written at `--verbosity` 2 and above, where sysbench writes its
/// warnings; never failing the caller: if standard error is closed or
/// full, the line is lost, as nothing is left to report it on.
pub fn stderr_line(text: impl fmt::Display) {
    if Console::current().shows(Level::Warning) {
        let _ = Output::Stderr.line(text);
    }
}

/// A line on standard error about something the user must act on (what an
/// interrupted command left behind), written at `--verbosity` 1 and above.
pub fn alert_line(text: impl fmt::Display) {
    if Console::current().shows(Level::Alert) {
        let _ = Output::Stderr.line(text);
    }
}

/// `FATAL: ` and `text`, at every verbosity, best effort; on standard
/// output as `sysbench`, on standard error as wirebench.
pub fn fatal_line(text: impl fmt::Display) {
    let _ = Console::current().fatal_stream().line(format_args!("FATAL: {text}"));
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

    /// sysbench's `text_handler_process`: a message shows when its
    /// priority is at most the verbosity; FATAL at 0 too.
    #[test]
    fn a_level_shows_up_to_the_verbosity() {
        let at = |verbosity| Console::new(verbosity, Personality::Wirebench);
        assert!(at(0).shows(Level::Fatal));
        assert!(!at(0).shows(Level::Alert));
        assert!(at(2).shows(Level::Warning) && !at(2).shows(Level::Notice));
        assert!(at(3).shows(Level::Notice) && !at(3).shows(Level::Info));
        assert!(at(5).shows(Level::Debug));
        assert_eq!(Level::Debug.prefix(), "DEBUG: ");
        assert_eq!(Level::Notice.prefix(), "");
        assert_eq!(at(3).fatal_stream(), Output::Stderr);
        assert_eq!(Console::new(0, Personality::Sysbench).fatal_stream(), Output::Stdout);
        let json = Console { report: Output::Stderr, ..Console::new(3, Personality::Sysbench) };
        assert_eq!(json.fatal_stream(), Output::Stderr, "standard output carries the data alone");
    }

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
