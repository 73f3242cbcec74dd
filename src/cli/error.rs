//! What the command line parser refuses, one line each, with what to do.

use std::fmt;

use super::test_name::{self, TestRef};
use crate::workload::Test;

/// A refused command line. `Display` gives one line that names the culprit
/// and says what to do instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CliError {
    /// No option of that name; `suggestion` is the closest known one,
    /// `written` the argument as given (`--foo=1`).
    #[error("unknown option {option}{}; `wirebench --help` and `wirebench TESTNAME help` list the options", Suggest(.suggestion))]
    UnknownOption { option: String, suggestion: Option<String>, written: String },

    /// A known option that this command line cannot take (a 0.4/0.5 option
    /// with a 1.0 test name, another test's option, ...).
    #[error("{option}: {reason}")]
    NotHere { option: String, reason: String },

    #[error("invalid value for {option}: '{value}' (expected {expected})")]
    InvalidValue { option: String, value: String, expected: String },

    #[error("{option} needs a value: {option}={expected}")]
    MissingValue { option: String, expected: String },

    /// A sysbench 0.4/0.5 option with no equivalent in sysbench 1.0.
    #[error("{option} has no equivalent in sysbench 1.0 or wirebench: {advice} (see docs/legacy.md)")]
    NoEquivalent { option: String, advice: String },

    /// Options that are valid alone but not together.
    #[error("{0}")]
    Conflict(String),

    #[error("unknown test '{name}'{}; the tests are {}", Suggest(.suggestion), TestList)]
    UnknownTest { name: String, suggestion: Option<String> },

    /// sysbench's fileio, cpu, memory, threads and mutex.
    #[error(
        "'{0}' is a sysbench test that wirebench does not run: wirebench runs only the database tests ({TestList})"
    )]
    NotADatabaseTest(String),

    #[error(
        "'{command}' is a command, with no test named before it: name the test (wirebench [options] TESTNAME \
         {command}), or for a Lua script on standard input write - for its name (wirebench [options] - {command} \
         < my_test.lua)"
    )]
    CommandWithoutTest { command: String },

    #[error("missing command after '{test}': add run (or prepare, prewarm, cleanup, help) at the end; sysbench refuses a line without one too")]
    MissingCommand { test: String },

    #[error("unknown command '{command}' for {test}: use prepare, prewarm, run, cleanup or help")]
    UnknownCommand { command: String, test: String },

    /// A command this test does not implement, as in sysbench.
    #[error("{test} does not implement the '{command}' command{}", Advice(.advice))]
    UnsupportedCommand { test: String, command: String, advice: &'static str },

    #[error("unexpected argument '{0}': options are written --name=value (sysbench takes no --name value form), and only TESTNAME and COMMAND come without --")]
    UnexpectedArgument(String),

    #[error("config file {path}: {message}")]
    ConfigFile { path: String, message: String },

    /// A mysql client option file (`~/.my.cnf`, `--defaults-file`).
    #[error("option file {path}: {message}")]
    OptionFile { path: String, message: String },

    /// A login setting from the environment (`MYSQL_TCP_PORT=abc`).
    #[error("environment variable {variable}: {message}")]
    Environment { variable: &'static str, message: String },

    /// `--mysql-password` without a value, and no terminal to ask on.
    #[error("{option} has no value, so the password is asked for on the terminal, and there is none ({reason}): write {option}=PASSWORD, or set MYSQL_PWD, or put password=... in ~/.my.cnf [client]")]
    NoTerminal { option: String, reason: String },

    #[error("argument {0} is not valid UTF-8")]
    NotUnicode(String),
}

/// The tests' names, comma-separated, for messages.
struct TestList;

impl fmt::Display for TestList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, test) in Test::ALL.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(test.name())?;
        }
        Ok(())
    }
}

struct Suggest<'a>(&'a Option<String>);

impl fmt::Display for Suggest<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(name) => write!(f, " (did you mean {name}?)"),
            None => Ok(()),
        }
    }
}

struct Advice(&'static str);

impl fmt::Display for Advice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            Ok(())
        } else {
            write!(f, ": {}", self.0)
        }
    }
}

/// A refused command line, with the `--verbosity` it gave as far as it was
/// read (3 when it gave none): as `sysbench`, the banner comes before some
/// refusals, at verbosity 3 and above.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub error: CliError,
    pub verbosity: u8,
}

/// How sysbench 1.0.20 refuses a command line, in its words, where it
/// refuses it too: the text (none for a refusal that is silent), the
/// stream, whether the banner comes first, and the exit status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SysbenchRefusal {
    pub text: Option<String>,
    /// sysbench's logger (`FATAL: ...`) writes on standard output; its
    /// command line checks, with `fprintf(stderr)`, on standard error.
    pub on_stdout: bool,
    /// sysbench checks the test and command after printing its banner.
    pub after_banner: bool,
    pub status: u8,
}

/// Where sysbench 1.0.20's Debian package keeps the script whose check of
/// the command fails first.
const OLTP_COMMON_PATH: &str = "/usr/share/sysbench/oltp_common.lua";

impl CliError {
    /// sysbench's own refusal of what this error refuses, for `sysbench`
    /// (the Lua scripts' errors included); `None` where sysbench has no
    /// words for it (an option's value, wirebench's extensions), so that
    /// wirebench's own message is shown.
    pub fn as_sysbench(&self) -> Option<SysbenchRefusal> {
        let fatal = |text: String| SysbenchRefusal {
            text: Some(format!("FATAL: {text}")),
            on_stdout: true,
            after_banner: true,
            status: 1,
        };
        let stderr = |text: String, after_banner: bool| SysbenchRefusal {
            text: Some(text),
            on_stdout: false,
            after_banner,
            status: 1,
        };
        Some(match self {
            CliError::UnknownTest { name, .. } | CliError::CommandWithoutTest { command: name } => {
                fatal(format!("Cannot find benchmark '{name}': no such built-in test, file or module"))
            }
            // sysbench would run its built-in test: wirebench has none of those.
            CliError::NotADatabaseTest(_) => fatal(self.to_string()),
            CliError::MissingCommand { test } => return missing_command(test),
            CliError::UnknownCommand { command, .. } => stderr(format!("Unknown command: {command}"), true),
            CliError::UnsupportedCommand { test, command, .. } if command == "help" => {
                stderr(format!("'{test}' test does not implement the 'help' command."), true)
            }
            CliError::UnsupportedCommand { command, .. } => stderr(format!("Unknown command: {command}"), true),
            CliError::UnexpectedArgument(word) => stderr(format!("Unrecognized command line argument: {word}"), false),
            CliError::UnknownOption { written, .. } => stderr(format!("invalid option: {written}"), true),
            _ => return None,
        })
    }
}

/// A test named without a command: the scripts built on oltp_common.lua
/// stop with its error; bulk_insert.lua has nothing to do and exits 0.
fn missing_command(test: &str) -> Option<SysbenchRefusal> {
    let TestRef::Modern(test) = test_name::resolve(test).ok()? else { return None };
    Some(if test.uses_oltp_common() {
        SysbenchRefusal {
            text: Some(format!(
                "FATAL: {OLTP_COMMON_PATH}:28: Command is required. Supported commands: prepare, prewarm, run, \
                 cleanup, help"
            )),
            on_stdout: true,
            after_banner: true,
            status: 1,
        }
    } else {
        SysbenchRefusal { text: None, on_stdout: true, after_banner: true, status: 0 }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sysbench_says(error: CliError) -> (Option<String>, bool, bool, u8) {
        let refusal = error.as_sysbench().expect("sysbench refuses it too");
        (refusal.text, refusal.on_stdout, refusal.after_banner, refusal.status)
    }

    /// The texts and streams of `sysbench 1.0.20` (tests/dropin.rs runs
    /// both programs to compare them whole).
    #[test]
    fn sysbench_words_for_a_test_or_command_it_refuses() {
        let unknown = CliError::UnknownTest { name: "nosuch".to_owned(), suggestion: None };
        let text = "FATAL: Cannot find benchmark 'nosuch': no such built-in test, file or module";
        assert_eq!(sysbench_says(unknown), (Some(text.to_owned()), true, true, 1));
        let missing = sysbench_says(CliError::MissingCommand { test: "oltp_point_select".to_owned() });
        assert!(missing.0.is_some_and(|t| t.starts_with("FATAL: /usr/share/sysbench/oltp_common.lua:28: Command")));
        let bulk = CliError::MissingCommand { test: "bulk_insert".to_owned() };
        assert_eq!(sysbench_says(bulk), (None, true, true, 0));
        let frob = CliError::UnknownCommand { command: "frob".to_owned(), test: "oltp_read_only".to_owned() };
        assert_eq!(sysbench_says(frob), (Some("Unknown command: frob".to_owned()), false, true, 1));
        let extra = CliError::UnexpectedArgument("extra".to_owned());
        let text = "Unrecognized command line argument: extra".to_owned();
        assert_eq!(sysbench_says(extra), (Some(text), false, false, 1));
        let legacy = CliError::MissingCommand { test: "oltp".to_owned() };
        assert!(legacy.as_sysbench().is_none(), "a 0.4 line is wirebench's to refuse");
        let value = CliError::InvalidValue { option: "--threads".into(), value: "x".into(), expected: "N".into() };
        assert!(value.as_sysbench().is_none());
    }
}
