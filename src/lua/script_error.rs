//! What goes wrong with a script, worded as sysbench words it where it has
//! a message for it (`` `event' function failed: ./t.lua:12: ... ``).

/// A script that cannot be loaded or whose function failed.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// A syntax error, or an error while the script's top level ran.
    #[error("{}", ScriptText(.message))]
    Load { message: String },
    /// A script function (`event`, `thread_init`, a command) failed; the
    /// message names the script and line, as Lua wrote it (with any
    /// server text in it made safe to print).
    #[error("`{function}' function failed: {}", ScriptText(.message))]
    Function { function: String, message: String },
    #[error("cannot find the event() function in {script}")]
    NoEvent { script: String },
    #[error("unknown command '{command}' for {script}: it has prepare, run, cleanup, help{custom}")]
    UnknownCommand { command: String, script: String, custom: String },
    #[error("{script} has no {command} command")]
    NoCommand { command: String, script: String },
    #[error("invalid option: --{name} (not an option of sysbench or of {script}; `{script} help` lists the script's)")]
    UnknownOption { name: String, script: String },
    #[error("invalid value for --{name}: '{value}' ({expected})")]
    BadValue { name: String, value: String, expected: &'static str },
    #[error("wrong option definition in sysbench.cmdline.options: {0}")]
    BadDefinition(String),
    #[error("the script's {command} command failed (it returned false)")]
    CommandFailed { command: String },
    #[error("Lua: {0}")]
    Lua(String),
    /// The event loop running the script's states failed.
    #[error("{0}")]
    Engine(String),
}

impl ScriptError {
    /// A failed call of the script's `function`: Lua's message without its
    /// stack traceback, which sysbench does not print either.
    pub(crate) fn function(function: &str, error: &mlua::Error) -> Self {
        ScriptError::Function { function: function.to_owned(), message: lua_message(error) }
    }

    pub(crate) fn load(error: &mlua::Error) -> Self {
        ScriptError::Load { message: lua_message(error) }
    }
}

impl From<mlua::Error> for ScriptError {
    fn from(error: mlua::Error) -> Self {
        ScriptError::Lua(lua_message(&error))
    }
}

/// The message a Lua error carries: for an error raised in Lua, its text
/// (`./t.lua:3: boom`), without mlua's wrapping and traceback.
pub(crate) fn lua_message(error: &mlua::Error) -> String {
    let text = match error {
        mlua::Error::CallbackError { cause, .. } => return lua_message(cause),
        mlua::Error::WithContext { cause, .. } => return lua_message(cause),
        mlua::Error::RuntimeError(text) | mlua::Error::SyntaxError { message: text, .. } => text.clone(),
        other => other.to_string(),
    };
    let first = text.split("\nstack traceback:").next().unwrap_or(&text);
    first.trim_end().to_owned()
}

/// A script's error message, made safe to print: it may carry a server's
/// text (`SQL error, errno = 1064, state = '42000': ...`), so control
/// characters other than line breaks and tabs, which Lua's own multi-line
/// messages use, are shown escaped as `ServerText` shows them.
pub(crate) struct ScriptText<'a>(pub &'a str);

impl std::fmt::Display for ScriptText<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for piece in self.0.split_inclusive(['\n', '\t']) {
            let (text, kept) = match piece.strip_suffix(['\n', '\t']) {
                Some(text) => (text, piece.get(text.len()..).unwrap_or_default()),
                None => (piece, ""),
            };
            write!(f, "{}{kept}", wirebench_protocol::ServerText(text))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_text_escapes_what_a_terminal_acts_on_but_keeps_lines() {
        let shown = ScriptText("t.lua:3: SQL error: \u{1b}[2Jboom\r\n\tnext line").to_string();
        assert_eq!(shown, "t.lua:3: SQL error: \\u{1b}[2Jboom\\r\n\tnext line");
    }
}
