//! Which captured commands a replay sends, and in what form: most as they
//! were captured; a log's statement texts as queries; and never what
//! cannot mean the same on another server or would harm it (a login of
//! the capture's, a replication stream, KILL of the capture's thread ids,
//! a shutdown, a local file the capture does not hold). What is not sent
//! is counted by why.

use std::borrow::Cow;

use wirebench_capture::format::{Command, Source};
use wirebench_protocol::constants::command::{
    COM_BINLOG_DUMP, COM_BINLOG_DUMP_GTID, COM_CHANGE_USER, COM_CONNECT, COM_CONNECT_OUT, COM_DAEMON,
    COM_DELAYED_INSERT, COM_PROCESS_KILL, COM_QUERY, COM_QUIT, COM_REGISTER_SLAVE, COM_SHUTDOWN, COM_SLEEP,
    COM_STMT_CLOSE, COM_STMT_EXECUTE, COM_STMT_PREPARE, COM_STMT_RESET, COM_STMT_SEND_LONG_DATA, COM_TABLE_DUMP,
    COM_TIME,
};

/// Why a captured command is not replayed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Unreplayed {
    /// A statement prepared before the capture began: its text is not in it.
    PreparedBeforeCapture,
    /// `--read-only`: it writes.
    Writes,
    /// A log's prepare: the log has the statement's runs as text, which
    /// run as queries.
    LogPrepare,
    /// A log's close or reset of a prepared statement: it names no id.
    LogStatementCommand,
    /// COM_CHANGE_USER: the replay logs in as its own users.
    ChangeUser,
    /// A replication stream or registration.
    Replication,
    /// KILL and COM_PROCESS_KILL: their thread ids are the capture's.
    Kill,
    /// COM_SHUTDOWN.
    Shutdown,
    /// LOAD DATA LOCAL INFILE: the file is not in the capture.
    LocalInfile,
    /// A command no server acts on from a client (COM_SLEEP, COM_CONNECT, ...).
    NotAClientCommand,
}

impl Unreplayed {
    pub const ALL: [Unreplayed; 10] = [
        Unreplayed::PreparedBeforeCapture,
        Unreplayed::Writes,
        Unreplayed::LogPrepare,
        Unreplayed::LogStatementCommand,
        Unreplayed::ChangeUser,
        Unreplayed::Replication,
        Unreplayed::Kill,
        Unreplayed::Shutdown,
        Unreplayed::LocalInfile,
        Unreplayed::NotAClientCommand,
    ];

    /// Its name in the JSON result.
    pub fn name(self) -> &'static str {
        match self {
            Unreplayed::PreparedBeforeCapture => "prepared_before_capture",
            Unreplayed::Writes => "writes",
            Unreplayed::LogPrepare => "log_prepare",
            Unreplayed::LogStatementCommand => "log_statement_command",
            Unreplayed::ChangeUser => "change_user",
            Unreplayed::Replication => "replication",
            Unreplayed::Kill => "kill",
            Unreplayed::Shutdown => "shutdown",
            Unreplayed::LocalInfile => "local_infile",
            Unreplayed::NotAClientCommand => "not_a_client_command",
        }
    }
}

/// What to do with a captured command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rule<'a> {
    /// Send this payload (the captured one, or a log's text as a query).
    Send(Cow<'a, [u8]>),
    Skip(Unreplayed),
    /// COM_QUIT: the connection's close does it.
    Quit,
}

/// What a replay does with `command`, from a capture of `source`.
pub fn rule_for<'a>(command: &'a Command<'_>, source: Source) -> Rule<'a> {
    let payload: &'a [u8] = &command.payload;
    let Some((&byte, rest)) = payload.split_first() else { return Rule::Skip(Unreplayed::NotAClientCommand) };
    let from_log = matches!(source, Source::GeneralLog | Source::SlowLog);
    if command.text_form {
        return match byte {
            COM_STMT_EXECUTE => Rule::Send(Cow::Owned([&[COM_QUERY][..], rest].concat())),
            _ => Rule::Skip(Unreplayed::LogStatementCommand),
        };
    }
    match byte {
        COM_QUIT => Rule::Quit,
        COM_STMT_PREPARE if from_log => Rule::Skip(Unreplayed::LogPrepare),
        COM_STMT_CLOSE | COM_STMT_RESET | COM_STMT_SEND_LONG_DATA if from_log => {
            Rule::Skip(Unreplayed::LogStatementCommand)
        }
        COM_QUERY if is_kill(rest) => Rule::Skip(Unreplayed::Kill),
        COM_QUERY if is_local_infile(rest) => Rule::Skip(Unreplayed::LocalInfile),
        COM_CHANGE_USER => Rule::Skip(Unreplayed::ChangeUser),
        COM_BINLOG_DUMP | COM_BINLOG_DUMP_GTID | COM_TABLE_DUMP | COM_REGISTER_SLAVE => {
            Rule::Skip(Unreplayed::Replication)
        }
        COM_PROCESS_KILL => Rule::Skip(Unreplayed::Kill),
        COM_SHUTDOWN => Rule::Skip(Unreplayed::Shutdown),
        COM_SLEEP | COM_CONNECT | COM_TIME | COM_DELAYED_INSERT | COM_CONNECT_OUT | COM_DAEMON => {
            Rule::Skip(Unreplayed::NotAClientCommand)
        }
        _ => Rule::Send(Cow::Borrowed(payload)),
    }
}

/// The statement's first word after blanks and comments, lowercased (up
/// to 16 bytes).
fn first_word(sql: &[u8]) -> Vec<u8> {
    let mut at = 0;
    loop {
        while sql.get(at).is_some_and(u8::is_ascii_whitespace) {
            at += 1;
        }
        match (sql.get(at), sql.get(at + 1)) {
            (Some(b'/'), Some(b'*')) if sql.get(at + 2) != Some(&b'!') => {
                let end = sql.get(at + 2..).and_then(|s| s.windows(2).position(|w| w == b"*/"));
                at = end.map_or(sql.len(), |n| at + 2 + n + 2);
            }
            (Some(b'#'), _) | (Some(b'-'), Some(b'-')) => {
                at = sql.get(at..).and_then(|s| s.iter().position(|&b| b == b'\n')).map_or(sql.len(), |n| at + n);
            }
            _ => break,
        }
    }
    let word = sql.get(at..).unwrap_or_default();
    word.iter().take_while(|b| b.is_ascii_alphabetic()).take(16).map(u8::to_ascii_lowercase).collect()
}

fn is_kill(sql: &[u8]) -> bool {
    first_word(sql) == b"kill"
}

/// LOAD DATA LOCAL INFILE (the server would ask for the client's file).
fn is_local_infile(sql: &[u8]) -> bool {
    if first_word(sql) != b"load" {
        return false;
    }
    let lower = sql.get(..256).unwrap_or(sql).to_ascii_lowercase();
    let words: Vec<&[u8]> = lower.split(u8::is_ascii_whitespace).filter(|w| !w.is_empty()).collect();
    words.windows(2).any(|w| w[0] == b"local" && w[1] == b"infile")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(payload: &[u8], text_form: bool) -> Command<'static> {
        Command { payload: Cow::Owned(payload.to_vec()), text_form, ..Command::default() }
    }

    #[test]
    fn commands_are_sent_as_captured_but_for_the_few_that_cannot_be() {
        let cases: &[(&[u8], bool, Source, Rule<'_>)] = &[
            (b"\x03SELECT 1", false, Source::Pcap, Rule::Send(Cow::Borrowed(b"\x03SELECT 1"))),
            (b"\x17SELECT 1", true, Source::GeneralLog, Rule::Send(Cow::Borrowed(b"\x03SELECT 1"))),
            (b"\x19", true, Source::GeneralLog, Rule::Skip(Unreplayed::LogStatementCommand)),
            (b"\x16SELECT ?", false, Source::GeneralLog, Rule::Skip(Unreplayed::LogPrepare)),
            (b"\x16SELECT ?", false, Source::Record, Rule::Send(Cow::Borrowed(b"\x16SELECT ?"))),
            (b"\x03 /* x */ KILL 12", false, Source::Pcap, Rule::Skip(Unreplayed::Kill)),
            (b"\x03killer()", false, Source::Pcap, Rule::Send(Cow::Borrowed(b"\x03killer()"))),
            (b"\x03LOAD DATA LOCAL INFILE 'x' INTO TABLE t", false, Source::Pcap, Rule::Skip(Unreplayed::LocalInfile)),
            (
                b"\x03LOAD DATA INFILE 'x' INTO TABLE t",
                false,
                Source::Pcap,
                Rule::Send(Cow::Borrowed(b"\x03LOAD DATA INFILE 'x' INTO TABLE t")),
            ),
            (b"\x11root\x00", false, Source::Pcap, Rule::Skip(Unreplayed::ChangeUser)),
            (b"\x08", false, Source::Pcap, Rule::Skip(Unreplayed::Shutdown)),
            (b"\x0c\x01\x00\x00\x00", false, Source::Pcap, Rule::Skip(Unreplayed::Kill)),
            (b"\x12", false, Source::Pcap, Rule::Skip(Unreplayed::Replication)),
            (b"\x01", false, Source::Pcap, Rule::Quit),
            (b"", false, Source::Pcap, Rule::Skip(Unreplayed::NotAClientCommand)),
        ];
        for (payload, text_form, source, expected) in cases {
            let command = command(payload, *text_form);
            assert_eq!(rule_for(&command, *source), *expected, "{payload:?}");
        }
    }
}
