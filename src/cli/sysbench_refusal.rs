//! sysbench's own words for a command line it refuses too: when wirebench
//! runs as `sysbench`, a refusal reads as sysbench 1.0.20's would
//! (tests/sysbench/dropin.rs compares the two programs whole).

use super::cli_error::CliError;
use super::test_name::{self, TestRef};

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

    /// The texts and streams of `sysbench 1.0.20` (tests/sysbench/dropin.rs runs
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
