//! Error answers that betray a fault inside the server. A server that
//! answers a statement with an exception's class name, "object is not
//! subscriptable" or a panic message has a bug even though it stays up,
//! as an HTTP 500 tells a web fuzzer. Such an answer is a failure of its
//! own kind (`internal-error`); the ordinary errors of a bad statement
//! (a syntax error, an unknown table, ...) never are, whatever they say.
//!
//! The rule: ERR 1815 (ER_INTERNAL_ERROR) is one; any other ERR is one
//! when its message holds one of the patterns (compared without regard
//! to case) that the packet it answers did not hold itself: an error
//! that quotes the client's own words ("near 'NullPointerException'")
//! says nothing about the server.

use std::fmt;

/// ER_INTERNAL_ERROR: the server says so itself.
pub const ER_INTERNAL_ERROR: u16 = 1815;

/// What a message says when the server's own code failed: exception
/// names (Java, Python, JavaScript, .NET), runtime errors (Go, Rust,
/// C and C++ sanitizers and assertions).
pub const PATTERNS: &[&str] = &[
    "internal error",
    "exception",
    "traceback (most recent call last)",
    "is not subscriptable",
    "object has no attribute",
    "nonetype",
    "typeerror",
    "keyerror",
    "indexerror",
    "attributeerror",
    "unboundlocalerror",
    "cannot read properties of",
    "is not a function",
    "undefined is not",
    "panicked at",
    "panic:",
    "runtime error",
    "nil pointer dereference",
    "index out of range",
    "called `option::unwrap()`",
    "called `result::unwrap()`",
    "assertion",
    "segmentation fault",
    "stack overflow",
    "unreachable code",
];

/// The errors of a bad statement or a refused request, never findings:
/// access denied (1044, 1045), no database (1046), unknown command
/// (1047), unknown database (1049), table exists (1050), unknown table
/// (1051, 1146), ambiguous or unknown column (1052, 1054), empty query
/// (1065), syntax (1064, 1149), wrong arguments (1210), unknown prepared
/// statement (1243), not supported by prepared statements (1295), a
/// SIGNAL the statement raised itself (1643, 1644).
pub const BAD_STATEMENT_CODES: &[u16] =
    &[1044, 1045, 1046, 1047, 1049, 1050, 1051, 1052, 1054, 1064, 1065, 1146, 1149, 1210, 1243, 1295, 1643, 1644];

/// The patterns in force: the built-in ones and `--internal-error-pattern`'s.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InternalErrors {
    /// The user's, as given (a reproducer records them).
    pub extra: Vec<String>,
}

/// An error answer that betrays an internal fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InternalError {
    pub code: u16,
    /// The server's message, made printable.
    pub message: String,
    /// What gave it away: a pattern, or the code.
    pub pattern: String,
}

impl fmt::Display for InternalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ERR {}: {} (it says {:?})", self.code, self.message, self.pattern)
    }
}

impl InternalErrors {
    pub fn new(extra: Vec<String>) -> InternalErrors {
        InternalErrors { extra: extra.into_iter().filter(|p| !p.trim().is_empty()).collect() }
    }

    /// Whether ERR `code` with `message`, the answer to the packet whose
    /// payload was `sent`, betrays an internal fault.
    pub fn judge(&self, code: u16, message: &[u8], sent: &[u8]) -> Option<InternalError> {
        let printable = printable(message);
        let found = |pattern: String| Some(InternalError { code, message: printable.clone(), pattern });
        if code == ER_INTERNAL_ERROR {
            return found(format!("ERR {ER_INTERNAL_ERROR} (ER_INTERNAL_ERROR)"));
        }
        if BAD_STATEMENT_CODES.contains(&code) {
            return None;
        }
        let said = message.to_ascii_lowercase();
        let asked = sent.to_ascii_lowercase();
        let patterns = PATTERNS.iter().map(|p| p.to_string()).chain(self.extra.iter().map(|p| p.to_ascii_lowercase()));
        patterns.filter(|p| contains(&said, p.as_bytes()) && !contains(&asked, p.as_bytes())).find_map(found)
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}

/// At most 300 characters, control characters as `.`.
fn printable(message: &[u8]) -> String {
    let text = String::from_utf8_lossy(message);
    let mut out: String = text.chars().take(300).map(|c| if c.is_control() { '.' } else { c }).collect();
    if text.chars().count() > 300 {
        out.push_str("...");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_faults_are_told_from_bad_statements() {
        let judge = InternalErrors::default();
        let sent = b"\x03SELECT c FROM sbtest1 WHERE id=1";
        let python = judge.judge(1105, b"'NoneType' object is not subscriptable", sent).unwrap();
        assert_eq!(python.pattern, "is not subscriptable");
        assert!(judge.judge(1105, b"java.lang.NullPointerException", sent).is_some());
        assert!(judge.judge(1105, b"thread 'main' panicked at src/x.rs:3", sent).is_some());
        assert!(judge.judge(1815, b"Internal error: bad plan", sent).is_some());
        assert!(judge.judge(1815, b"whatever", sent).is_some(), "the code says it");
        assert_eq!(judge.judge(1064, b"You have an error in your SQL syntax near 'x'", sent), None);
        assert_eq!(judge.judge(1146, b"Table 'x.y' doesn't exist (internal error)", sent), None, "never 1146");
        assert_eq!(judge.judge(1105, b"prepared statements are not served", sent), None);
        assert_eq!(judge.judge(1045, b"Access denied for user 'x'", sent), None);
    }

    #[test]
    fn an_error_quoting_the_clients_words_is_no_finding_and_patterns_extend() {
        let judge = InternalErrors::new(vec!["Wedged".into(), " ".into()]);
        assert_eq!(judge.extra, ["Wedged"]);
        let sent = b"\x03SELECT 'AssertionError'";
        assert_eq!(judge.judge(1105, b"unknown column 'assertionerror'", sent), None);
        assert!(judge.judge(1105, b"the planner is WEDGED", b"\x03SELECT 1").is_some());
        let long = judge.judge(1105, &[b'x'; 400].iter().chain(b" exception").copied().collect::<Vec<_>>(), b"");
        assert!(long.unwrap().message.ends_with("..."));
    }
}
