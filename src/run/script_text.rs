//! A Lua script's text, read once before any Lua state loads it: from its
//! file, or from standard input as sysbench 1.0.20 reads a script when no
//! test is named (`sysbench [options] < my.lua`, or `-` for the name).

use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::sync::Arc;

use super::output::{Level, OutputError};
use crate::lua::{ScriptCall, ScriptOrigin};

/// A script larger than this is no script: `yes |` or `/dev/zero` on
/// standard input would otherwise fill the memory before Lua refused it.
pub(super) const MAX_SCRIPT_BYTES: u64 = 16 * 1024 * 1024;

/// What keeps a script's text from being read.
#[derive(Debug, thiserror::Error)]
pub enum ScriptTextError {
    #[error("cannot read the script {}: {source}; give the path of a sysbench Lua script", .path.display())]
    File { path: PathBuf, source: std::io::Error },
    #[error(
        "cannot read the script from standard input: {0}; send a Lua script there (wirebench [options] - run < \
         my_test.lua), or name a test (wirebench [options] TESTNAME COMMAND)"
    )]
    Stdin(std::io::Error),
    #[error(
        "no test named and standard input is empty: name a test (wirebench [options] TESTNAME COMMAND, \
         `wirebench --help` lists them) or send a Lua script on standard input (wirebench [options] - run < \
         my_test.lua)"
    )]
    EmptyStdin,
    #[error(
        "the script on standard input is over {} MiB, which no Lua script is: send the script itself \
         (wirebench [options] - run < my_test.lua)",
        MAX_SCRIPT_BYTES >> 20
    )]
    TooLarge,
    #[error(transparent)]
    Output(#[from] OutputError),
}

/// `call`'s script, read from where it is.
pub(super) fn read_script(call: &ScriptCall) -> Result<Arc<[u8]>, ScriptTextError> {
    match call.origin {
        ScriptOrigin::File => std::fs::read(&call.path)
            .map(Arc::from)
            .map_err(|source| ScriptTextError::File { path: call.path.clone(), source }),
        ScriptOrigin::Stdin => {
            let stdin = std::io::stdin();
            if stdin.is_terminal() {
                // sysbench's words, then it waits for the script and Ctrl-D.
                Level::Notice.line("Reading the script from the standard input:\n")?;
            }
            read_stdin_script(stdin.lock())
        }
    }
}

/// A script from `input` (standard input), refused when empty (a Lua
/// chunk of nothing but blanks does nothing, and most likely the test name
/// was forgotten) or too large.
fn read_stdin_script(input: impl Read) -> Result<Arc<[u8]>, ScriptTextError> {
    let mut text = Vec::new();
    input.take(MAX_SCRIPT_BYTES + 1).read_to_end(&mut text).map_err(ScriptTextError::Stdin)?;
    if text.len() as u64 > MAX_SCRIPT_BYTES {
        return Err(ScriptTextError::TooLarge);
    }
    if text.iter().all(u8::is_ascii_whitespace) {
        return Err(ScriptTextError::EmptyStdin);
    }
    Ok(Arc::from(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_is_read_whole_and_bytes_as_they_are() {
        let text = b"-- \xff is no UTF-8, which Lua does not mind\nfunction event() end\n";
        assert_eq!(&*read_stdin_script(&text[..]).unwrap(), &text[..]);
    }

    #[test]
    fn empty_blank_and_endless_inputs_are_refused() {
        for blank in ["", " \n\t\n"] {
            let error = read_stdin_script(blank.as_bytes()).unwrap_err();
            assert!(matches!(error, ScriptTextError::EmptyStdin), "{blank:?}: {error}");
        }
        let endless = std::io::repeat(b'x');
        let error = read_stdin_script(endless).unwrap_err().to_string();
        assert!(error.starts_with("the script on standard input is over 16 MiB"), "{error}");
    }

    #[test]
    fn a_failing_read_is_named() {
        struct Broken;
        impl Read for Broken {
            fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
                Err(std::io::Error::from_raw_os_error(libc::EISDIR))
            }
        }
        let error = read_stdin_script(Broken).unwrap_err().to_string();
        assert!(error.starts_with("cannot read the script from standard input: Is a directory"), "{error}");
    }
}
