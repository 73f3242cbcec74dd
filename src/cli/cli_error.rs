//! What the command line parser refuses, one line each, with what to do.

use std::fmt;

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
