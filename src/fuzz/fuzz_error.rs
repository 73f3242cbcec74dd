//! What stops `wirebench fuzz` or `fuzz-replay` before it can say whether
//! the server fails (exit status 1): each says what happened and what to do.

use std::io;
use std::path::PathBuf;

use thiserror::Error;

use super::reproducer_format::ReproducerError;
use crate::client::{ClientError, Endpoint};

#[derive(Debug, Error)]
pub enum FuzzError {
    #[error(
        "{endpoint} is not on this host: wirebench fuzz sends malformed packets that crash servers and destroy \
         data, so it only fuzzes a server on this host (a unix socket or a loopback address); add \
         --fuzz-allow-remote if that server is a throwaway one (see docs/fuzzing.md#run-it-safely)"
    )]
    RemoteTarget { endpoint: Endpoint },
    #[error("cannot resolve host {host:?} to check that it is this host: {reason}; give an IP address")]
    Resolve { host: String, reason: String },
    #[error("cannot log in to the server under test before fuzzing: {source}; check the --mysql-* options and that the server is running")]
    Connect { source: ClientError },
    #[error(
        "the server fails the control connection's COM_PING and SELECT 1 before anything was fuzzed ({summary}): \
         the fuzzer cannot tell what its packets do to it; wirebench's client accepts what libmariadb accepts \
         (docs/connecting.md)"
    )]
    NotWellBefore { summary: String },
    #[error(
        "{option}={given}, but the reproducer's packets were recorded with {recorded}, and its login's bytes name \
         it: leave {option} out (the replay takes the reproducer's), or give {option}={recorded}"
    )]
    NotAsRecorded { option: &'static str, given: String, recorded: String },
    #[error(
        "packet {packet} of {session} would not be sent: {reason}; fuzz-replay sends a reproducer's packets exactly \
         or not at all, so remove that packet from the file (wirebench fuzz never sends it)"
    )]
    WouldWithhold { session: String, packet: usize, reason: String },
    #[error(
        "{reason}; fuzz-replay makes only the tables the reproducer's sessions name, in its database, so fix or \
         remove that table in the file's setup section"
    )]
    UnsafeSetup { reason: String },
    #[error(
        "cannot make the tables the reproducer needs (its setup section): {source}; check that the account may \
         create and drop tables in the reproducer's database"
    )]
    Setup { source: ClientError },
    #[error("the server does not answer before the replay ({reason}): start it, then replay")]
    DownBeforeReplay { reason: String },
    #[error(
        "--seed-capture={}: {reason}; give a capture file (`wirebench record`, `wirebench capture import`), or \
         leave --seed-capture out",
        path.display()
    )]
    SeedCapture { path: PathBuf, reason: String },
    #[error("cannot create the reproducer directory {path}: {source}; give a writable --fuzz-dir")]
    FuzzDir { path: PathBuf, source: io::Error },
    #[error("cannot write reproducer {path}: {source}; give a writable --fuzz-dir")]
    WriteReproducer { path: PathBuf, source: io::Error },
    #[error("cannot read reproducer {path}: {source}")]
    ReadReproducer { path: PathBuf, source: io::Error },
    #[error("{path}, line {line}: {source}; is it a file `wirebench fuzz` wrote?")]
    BadReproducer { path: PathBuf, line: usize, source: ReproducerError },
    #[error(
        "the server failed ({0}) before any session sent a packet: there is nothing to save; is it failing by itself?"
    )]
    NoCulprit(String),
    #[error("--server-pid: cannot read pid file {path}: {source}")]
    PidFile { path: PathBuf, source: io::Error },
    #[error("--server-pid: pid file {path} holds {text:?}, not a process id")]
    BadPidFile { path: PathBuf, text: String },
    #[error("--server-pid: process {pid} is not running; give the server's pid or its pid file")]
    NotRunning { pid: u32 },
    #[error("--server-log {path}: {source}; give a log file the server writes and this user can read")]
    ServerLog { path: PathBuf, source: io::Error },
    #[error(
        "the server did not complete the logins and checks made before fuzzing within --time plus --fuzz-overtime; \
         check that it answers a login (wirebench run's `--mysql-*` options), or give a longer --time"
    )]
    OutOfTimeBeforeFuzzing,
    #[error("cannot start the async runtime: {0}")]
    Runtime(io::Error),
}
