//! Output that cannot be written: every command, its standard output a pipe
//! nobody reads (`| head` gone) or `/dev/full`, ends with the documented
//! status and never panics; a run whose interim report fails stops instead
//! of running on unreported. No server: `--mysql-dry-run` and the null
//! server's help.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use crate::common;

/// One of every command that prints: version, help texts, the four test
/// commands (without a server), and the null server (its lines go to
/// stderr, see `null_server_lines_into_a_closed_pipe`).
const COMMANDS: &[&[&str]] = &[
    &["--version"],
    &["--help"],
    &["null-server", "--help"],
    &["capture", "--help"],
    &["oltp_read_write", "help"],
    &["oltp_read_write", "--mysql-dry-run", "--tables=2", "--table-size=10", "prepare"],
    &["oltp_read_write", "--mysql-dry-run", "prewarm"],
    &["oltp_read_write", "--mysql-dry-run", "--time=1", "run"],
    &["oltp_read_write", "--mysql-dry-run", "--tables=2", "cleanup"],
];

fn run_with_stdout(args: &[&str], stdout: impl Into<Stdio>) -> Output {
    common::wirebench().args(args).stdin(Stdio::null()).stdout(stdout).output().unwrap()
}

fn assert_no_panic(args: &[&str], out: &Output) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
}

/// A stream whose reading end is closed before wirebench starts: its first
/// write fails with EPIPE, whatever the timing. (A socket pair, which
/// fails the same way as a pipe; `std::io::pipe` is newer than the MSRV.)
fn closed_pipe() -> Stdio {
    let (reader, writer) = std::os::unix::net::UnixStream::pair().unwrap();
    drop(reader);
    Stdio::from(std::os::fd::OwnedFd::from(writer))
}

#[test]
fn every_command_into_a_closed_pipe_exits_141_quietly() {
    for args in COMMANDS {
        let out = run_with_stdout(args, closed_pipe());
        assert_no_panic(args, &out);
        assert_eq!(out.status.code(), Some(141), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("cannot write"), "{args:?}: a closed pipe is not worth a word: {stderr}");
    }
}

#[test]
fn every_command_into_a_full_disk_says_so_in_one_line() {
    for args in COMMANDS {
        let out = run_with_stdout(args, File::create("/dev/full").unwrap());
        assert_no_panic(args, &out);
        assert_eq!(out.status.code(), Some(74), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        let stderr = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = stderr.lines().filter(|l| l.contains("cannot write")).collect();
        assert_eq!(
            lines,
            ["wirebench: cannot write to standard output: No space left on device (os error 28); check where the \
              output goes (a full disk, a closed pipe)"],
            "{args:?}"
        );
    }
}

/// `wirebench ... run | head -n 12`: the reader leaves after the header,
/// the next interim report fails, and the run stops there rather than
/// measuring for the remaining seconds.
#[test]
fn a_run_whose_reader_leaves_stops_at_the_next_report() {
    let started = Instant::now();
    let mut child = common::wirebench()
        .args(["oltp_read_write", "--mysql-dry-run", "--time=20", "--report-interval=1", "run"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while !line.starts_with("Threads started!") {
        line.clear();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "stdout ended before the run started");
    }
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    assert_no_panic(&["run"], &out);
    assert_eq!(out.status.code(), Some(141), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(started.elapsed() < Duration::from_secs(10), "ran on for {:?} with nobody reading", started.elapsed());
}

/// The null server's lines are its output, on stderr: nobody reading them
/// ends it as a closed stdout ends the other commands.
#[test]
fn null_server_lines_into_a_closed_pipe() {
    let mut child = common::wirebench()
        .args(["null-server", "--listen=127.0.0.1:0"])
        .stdout(Stdio::null())
        .stderr(closed_pipe())
        .spawn()
        .unwrap();
    let (status, _) = common::exit_within(&mut child, Duration::from_secs(20))
        .unwrap_or_else(|| panic!("the null server went on with nobody reading its lines"));
    assert_eq!(status.code(), Some(141));
}
