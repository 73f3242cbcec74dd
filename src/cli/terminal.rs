//! Asking for the password on the terminal, as the mysql client does for
//! `-p` without a value: on `/dev/tty` (not stdin, which may be a pipe),
//! with echo off.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::fd::AsRawFd;

/// The longest password read; a terminal line is shorter anyway.
const MAX_PASSWORD_BYTES: u64 = 4096;

/// Why no password came from the terminal.
#[derive(Debug, thiserror::Error)]
pub enum TerminalError {
    /// No controlling terminal (a cron job, a pipeline, `setsid`).
    #[error("cannot open /dev/tty: {0}")]
    Unavailable(io::Error),
    #[error("cannot read the password from /dev/tty: {0}")]
    Read(io::Error),
    /// Parsing without a terminal ([`CredentialSources::none`](super::CredentialSources::none)).
    #[error("no terminal was given to ask on")]
    NotGiven,
}

/// Writes `prompt` to the terminal and reads one line without echoing it.
pub fn ask_on_terminal(prompt: &str) -> Result<String, TerminalError> {
    let tty = OpenOptions::new().read(true).write(true).open("/dev/tty").map_err(TerminalError::Unavailable)?;
    let line = {
        // Echo off before the prompt, as getpass(3): what is typed once
        // the prompt shows is never echoed.
        let _quiet = EchoOff::on(&tty).map_err(TerminalError::Read)?;
        (&tty).write_all(prompt.as_bytes()).and_then(|()| (&tty).flush()).map_err(TerminalError::Read)?;
        read_line(&tty).map_err(TerminalError::Read)
    };
    // The user's Enter was not echoed either.
    let _ = (&tty).write_all(b"\n");
    line
}

/// For parsing with no terminal at hand: always [`TerminalError::NotGiven`].
pub fn no_terminal(_prompt: &str) -> Result<String, TerminalError> {
    Err(TerminalError::NotGiven)
}

fn read_line(tty: &File) -> io::Result<String> {
    let mut line = String::new();
    BufReader::new(tty.take(MAX_PASSWORD_BYTES)).read_line(&mut line)?;
    let end = line.trim_end_matches(['\n', '\r']).len();
    line.truncate(end);
    Ok(line)
}

/// The terminal's echo turned off until this is dropped, which restores
/// the settings found (also when reading fails).
struct EchoOff<'a> {
    tty: &'a File,
    saved: libc::termios,
}

impl<'a> EchoOff<'a> {
    fn on(tty: &'a File) -> io::Result<Self> {
        let fd = tty.as_raw_fd();
        // SAFETY: termios is plain old data; an all-zero value is valid
        // and tcgetattr overwrites it.
        let mut saved: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: fd is an open descriptor owned by `tty`, which outlives
        // this call; `saved` is a valid termios to write into.
        if unsafe { libc::tcgetattr(fd, &mut saved) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let mut quiet = saved;
        quiet.c_lflag &= !(libc::ECHO | libc::ECHOE | libc::ECHOK | libc::ECHONL);
        // SAFETY: as above; `quiet` is the terminal's own settings with
        // echo flags changed.
        if unsafe { libc::tcsetattr(fd, libc::TCSAFLUSH, &quiet) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(EchoOff { tty, saved })
    }
}

impl Drop for EchoOff<'_> {
    fn drop(&mut self) {
        // SAFETY: the descriptor is still open (`tty` is borrowed for this
        // guard's life); `saved` is what tcgetattr returned for it.
        unsafe {
            libc::tcsetattr(self.tty.as_raw_fd(), libc::TCSAFLUSH, &self.saved);
        }
    }
}
