//! What goes wrong with a script, worded as sysbench words it where it has
//! a message for it (`` `event' function failed: ./t.lua:12: ... ``).

/// A script that cannot be loaded or whose function failed.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// A syntax error, or an error while the script's top level ran.
    #[error("{message}")]
    Load { message: String },
    /// A script function (`event`, `thread_init`, a command) failed; the
    /// message names the script and line, as Lua wrote it.
    #[error("`{function}' function failed: {message}")]
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
    #[error("cannot start a thread for the script: {0}")]
    Thread(std::io::Error),
    #[error("the script's thread {0} panicked")]
    ThreadPanicked(u32),
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
