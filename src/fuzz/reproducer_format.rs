//! The reproducer file's format marker and what can be wrong with one of
//! its lines: below the error type of the fuzzer (`fuzz_error.rs`), which
//! reports a bad file, and the reproducer (`reproducer.rs`), which reads
//! and writes the files.

use thiserror::Error;

/// The first line of every reproducer file this version writes: version 2
/// adds the `setup` section (the tables the session needs).
pub(crate) const MAGIC: &str = "wirebench fuzz reproducer 2";
/// The first line of the files of version 1, which still replay (with no
/// setup: they run against whatever the database holds).
pub(crate) const MAGIC_V1: &str = "wirebench fuzz reproducer 1";

/// What is wrong with a line of a reproducer file.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ReproducerError {
    #[error("the first line is not {MAGIC:?} (or {MAGIC_V1:?})")]
    NoMagic,
    #[error("{0}: expected `table NAME`, `create SQL`, `row (VALUES)` or `end` in the setup section")]
    BadSetupLine(String),
    #[error("`end` outside a session")]
    StrayEnd,
    #[error("the last session (or the setup) has no `end`")]
    Unterminated,
    #[error("no `session failing` with packets")]
    NoFailingSession,
    #[error("expected `key: value`, got {0:?}")]
    NotKeyValue(String),
    #[error("{key}: {value:?} is not a number")]
    NotANumber { key: String, value: String },
    #[error(
        "failure: {0:?} is not a kind of failure (down, hang, refusing, process-gone, memory, log, \
         protocol-deviation, login, internal-error or login-changed)"
    )]
    UnknownFailure(String),
    #[error("unknown packet phase {0:?} (login, ssl-request, auth-reply or command)")]
    UnknownPhase(String),
    #[error("unknown packet attribute {0:?} (live=... or wrap=...)")]
    UnknownAttribute(String),
    #[error("bytes before the first `packet` line")]
    BytesOutsidePacket,
    #[error("{0:?} is not whole bytes of hex")]
    NotHex(String),
    #[error("live={0}: expected scramble:PLUGIN@START+LEN or statement:N@START+LEN")]
    BadLive(String),
    #[error("wrap edit {0:?}: expected seq:N, payload-length:N, plain-length:N or corrupt:N")]
    BadWrap(String),
}
