//! What a fuzz run prints, best effort: a closed or full stdout or stderr
//! (`wirebench fuzz | head`) must not stop a run that is saving
//! reproducers, nor panic as `println!` does.

use std::fmt;
use std::io::Write;

/// A line on standard output: the banner, progress, results.
pub fn out_line(text: impl fmt::Display) {
    let _ = writeln!(std::io::stdout().lock(), "{text}");
}

/// A line on standard error: what the run is doing about a failure.
pub fn err_line(text: impl fmt::Display) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}
