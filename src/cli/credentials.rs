//! The login (user, password, host, port, socket, database) from where the
//! mysql client finds it, beneath the command line.
//!
//! Highest first:
//! 1. the command line (and `--config-file`);
//! 2. mysql option files, a later one winning: `~/.my.cnf`, then
//!    `--defaults-extra-file`; or `--defaults-file` alone; or none with
//!    `--no-defaults`. Groups `[client]` and `[wirebench]` (`option_file.rs`);
//! 3. the environment: `MYSQL_PWD`, `MYSQL_HOST`, `MYSQL_TCP_PORT`,
//!    `MYSQL_UNIX_PORT`;
//! 4. sysbench's defaults.
//!
//! This is the mysql client's order. sysbench 1.0.20 reads no option file;
//! its libmariadb (Debian 12) applies `MYSQL_PWD` when the password is
//! empty and `MYSQL_UNIX_PORT` for host `localhost`, and ignores
//! `MYSQL_HOST` and `MYSQL_TCP_PORT` (sysbench always passes a host and a
//! port). So a value from these sources is always said in a note, naming
//! the file or variable and the options it gave (a password only as
//! hidden): a pasted sysbench command line must not quietly mean something
//! else. An empty value counts as none, as libmariadb reads an empty
//! password. `socket` is the socket host `localhost` means, as for the
//! mysql client, not `--mysql-socket` (which replaces every host).

use std::path::PathBuf;

use super::cli_error::CliError;
use super::option_file::{read_option_file, FileSetting, LoginKey};
use super::opts::Opts;
use super::terminal::{self, TerminalError};
use super::{value, MysqlOptions};

/// The environment variables the mysql client reads for the login.
const LOGIN_VARIABLES: [(&str, LoginKey); 4] = [
    ("MYSQL_PWD", LoginKey::Password),
    ("MYSQL_HOST", LoginKey::Host),
    ("MYSQL_TCP_PORT", LoginKey::Port),
    ("MYSQL_UNIX_PORT", LoginKey::Socket),
];

/// What a command line may draw on besides its arguments, passed in so
/// that parsing depends on its inputs only.
#[derive(Debug, Clone)]
pub struct CredentialSources {
    /// The `MYSQL_*` login variables that are set, as (name, value).
    pub env: Vec<(&'static str, String)>,
    /// The home directory, where `.my.cnf` is looked for; `None`: none read.
    pub home: Option<PathBuf>,
    /// Asks for a password (given the prompt), for `--mysql-password`
    /// without a value.
    pub ask_password: fn(&str) -> Result<String, TerminalError>,
}

impl CredentialSources {
    /// Nothing but the arguments: no environment, no `~/.my.cnf`, no
    /// terminal.
    pub fn none() -> Self {
        CredentialSources { env: Vec::new(), home: None, ask_password: terminal::no_terminal }
    }

    /// This process's environment, `$HOME` and `/dev/tty`.
    pub fn of_this_process() -> Self {
        let env = LOGIN_VARIABLES
            .iter()
            .filter_map(|&(name, _)| std::env::var(name).ok().map(|value| (name, value)))
            .collect();
        let home = std::env::var_os("HOME").filter(|home| !home.is_empty()).map(PathBuf::from);
        CredentialSources { env, home, ask_password: terminal::ask_on_terminal }
    }
}

/// Where a login setting came from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Source {
    File { path: PathBuf, line: usize },
    Variable(&'static str),
}

impl Source {
    /// The file or `the environment`, for grouping the notes.
    fn place(&self) -> String {
        match self {
            Source::File { path, .. } => format!("option file {}", path.display()),
            Source::Variable(_) => "the environment".to_owned(),
        }
    }
}

/// A login setting below the command line.
#[derive(Debug, Clone)]
struct Supplied {
    key: LoginKey,
    /// `None`: a bare `password` line, to ask on the terminal.
    value: Option<String>,
    source: Source,
}

/// Completes `mysql` (read from the command line) from the option files
/// and the environment, and asks for the password when the command line
/// or a file says so and `needs_login`. Notes say what came from where.
pub(crate) fn complete_login(
    mysql: &mut MysqlOptions,
    opts: &Opts,
    sources: &CredentialSources,
    needs_login: bool,
    notes: &mut Vec<String>,
) -> Result<(), CliError> {
    let mut supplied = supplied_from_environment(sources);
    for (path, required) in option_files(opts, sources)? {
        if required || path.exists() {
            supplied.extend(read_option_file(&path, notes)?.into_iter().map(supplied_from_file));
        }
    }
    let mut used: Vec<(Source, String)> = Vec::new();
    for key in [LoginKey::User, LoginKey::Host, LoginKey::Port, LoginKey::Socket, LoginKey::Database] {
        if set_on_command_line(opts, key) || (key == LoginKey::Socket && !has_localhost(mysql)) {
            continue;
        }
        if let Some(winner) = supplied.iter().rev().find(|s| s.key == key && s.value.as_deref() != Some("")) {
            used.push((winner.source.clone(), apply_supplied(mysql, winner)?));
        }
    }
    if let Some(shown) = complete_password(mysql, opts, &supplied, sources, needs_login)? {
        used.push(shown);
    }
    notes.extend(login_notes(&used));
    Ok(())
}

fn supplied_from_environment(sources: &CredentialSources) -> Vec<Supplied> {
    let key_of = |name: &str| LOGIN_VARIABLES.iter().find(|(n, _)| *n == name).map(|(_, key)| *key);
    let supplied = sources.env.iter().filter_map(|(name, value)| {
        let key = key_of(name)?;
        Some(Supplied { key, value: Some(value.clone()), source: Source::Variable(name) })
    });
    supplied.collect()
}

fn supplied_from_file(setting: FileSetting) -> Supplied {
    Supplied { key: setting.key, value: setting.value, source: Source::File { path: setting.path, line: setting.line } }
}

/// The option files to read, in order, each with whether it must exist:
/// `--defaults-file` alone, or `~/.my.cnf` (if there) then
/// `--defaults-extra-file`; none with `--no-defaults`.
fn option_files(opts: &Opts, sources: &CredentialSources) -> Result<Vec<(PathBuf, bool)>, CliError> {
    let file_named = |key: &str| -> Result<Option<PathBuf>, CliError> {
        opts.get(key).map(|opt| value::text(opt, "FILE").map(PathBuf::from)).transpose()
    };
    let only = file_named("defaults_file")?;
    let extra = file_named("defaults_extra_file")?;
    if opts.flag("no_defaults", false)? {
        if only.is_some() || extra.is_some() {
            return Err(CliError::Conflict(
                "--no-defaults reads no option file, so it cannot go with --defaults-file or --defaults-extra-file"
                    .to_owned(),
            ));
        }
        return Ok(Vec::new());
    }
    if let Some(only) = only {
        return Ok(vec![(only, true)]);
    }
    let home = sources.home.as_ref().map(|home| (home.join(".my.cnf"), false));
    Ok(home.into_iter().chain(extra.map(|extra| (extra, true))).collect())
}

/// The `--mysql-*` option the command line sets `key` with, if it does.
/// `--mysql-socket` replaces every host, so it also stands for `host`,
/// `port` and `socket`.
fn set_on_command_line(opts: &Opts, key: LoginKey) -> bool {
    let option = match key {
        LoginKey::User => "mysql_user",
        LoginKey::Password => "mysql_password",
        LoginKey::Host => "mysql_host",
        LoginKey::Port => "mysql_port",
        LoginKey::Socket => "mysql_socket",
        LoginKey::Database => "mysql_db",
    };
    let sockets = matches!(key, LoginKey::Host | LoginKey::Port) && opts.peek("mysql_socket").is_some();
    opts.peek(option).is_some() || sockets
}

fn has_localhost(mysql: &MysqlOptions) -> bool {
    mysql.servers.hosts.iter().any(|host| host == "localhost")
}

/// Sets `supplied` in `mysql`; how the note shows it.
fn apply_supplied(mysql: &mut MysqlOptions, supplied: &Supplied) -> Result<String, CliError> {
    let Some(value) = supplied.value.clone() else {
        return Err(refuse_supplied(supplied, "needs a value: only password may stand alone, to be asked for"));
    };
    let shown = match supplied.key {
        LoginKey::User => format!("--mysql-user={value}"),
        LoginKey::Host => format!("--mysql-host={value}"),
        LoginKey::Port => format!("--mysql-port={value}"),
        LoginKey::Socket => format!("the socket of host localhost, {value}"),
        LoginKey::Database => format!("--mysql-db={value}"),
        LoginKey::Password => "--mysql-password (hidden)".to_owned(),
    };
    match supplied.key {
        LoginKey::User => mysql.user = value,
        LoginKey::Host => mysql.servers.hosts = vec![value],
        LoginKey::Port => {
            let port = parse_port(&value).ok_or_else(|| refuse_supplied(supplied, "not a port from 1 to 65535"))?;
            mysql.servers.ports = vec![port];
        }
        LoginKey::Socket => mysql.servers.localhost_socket = Some(PathBuf::from(value)),
        LoginKey::Database => mysql.db = value,
        LoginKey::Password => mysql.password = value,
    }
    Ok(shown + &origin_suffix(&supplied.source))
}

fn parse_port(text: &str) -> Option<u16> {
    text.trim().parse::<u16>().ok().filter(|&port| port > 0)
}

/// ` (MYSQL_PWD)` or ` (line 3)`.
fn origin_suffix(source: &Source) -> String {
    match source {
        Source::File { line, .. } => format!(" (line {line})"),
        Source::Variable(name) => format!(" ({name})"),
    }
}

/// A bad setting, named by where it is, its value not repeated (it may
/// be a password).
fn refuse_supplied(supplied: &Supplied, problem: &str) -> CliError {
    let what = supplied.key.name();
    match &supplied.source {
        Source::File { path, line } => CliError::OptionFile {
            path: path.display().to_string(),
            message: format!("line {line}: {what}: {problem}"),
        },
        Source::Variable(name) => {
            CliError::Environment { variable: name, message: format!("{problem}; unset it or fix it") }
        }
    }
}

/// The password: the command line's unless empty, else the strongest
/// non-empty source's; asked for on the terminal when the winner is bare.
fn complete_password(
    mysql: &mut MysqlOptions,
    opts: &Opts,
    supplied: &[Supplied],
    sources: &CredentialSources,
    needs_login: bool,
) -> Result<Option<(Source, String)>, CliError> {
    let on_command_line = opts.peek("mysql_password");
    if on_command_line.is_some_and(|opt| opt.value.is_none()) {
        ask_for_password(mysql, sources, needs_login, on_command_line.map_or(String::new(), |o| o.label()))?;
        return Ok(None);
    }
    if !mysql.password.is_empty() {
        return Ok(None);
    }
    let winner = supplied.iter().rev().find(|s| s.key == LoginKey::Password && s.value.as_deref() != Some(""));
    let Some(winner) = winner else { return Ok(None) };
    if winner.value.is_none() {
        let place = format!("{}{}", winner.source.place(), origin_suffix(&winner.source));
        ask_for_password(mysql, sources, needs_login, format!("password alone in {place}"))?;
        return Ok(None);
    }
    Ok(Some((winner.source.clone(), apply_supplied(mysql, winner)?)))
}

fn ask_for_password(
    mysql: &mut MysqlOptions,
    sources: &CredentialSources,
    needs_login: bool,
    asked_by: String,
) -> Result<(), CliError> {
    if !needs_login {
        return Ok(());
    }
    mysql.password = (sources.ask_password)("Enter password: ")
        .map_err(|e| CliError::NoTerminal { option: asked_by, reason: e.to_string() })?;
    Ok(())
}

/// One note per file or for the environment, in the order they were used.
fn login_notes(used: &[(Source, String)]) -> Vec<String> {
    let mut places: Vec<String> = Vec::new();
    for (source, _) in used {
        if !places.contains(&source.place()) {
            places.push(source.place());
        }
    }
    places
        .into_iter()
        .map(|place| {
            let items: Vec<&str> =
                used.iter().filter(|(s, _)| s.place() == place).map(|(_, shown)| shown.as_str()).collect();
            let why = if place == "the environment" {
                "as the mysql client reads it; sysbench 1.0.20 applies MYSQL_PWD and MYSQL_UNIX_PORT only"
            } else {
                "sysbench reads no option file; the command line wins over it, and --no-defaults ignores it"
            };
            format!("{place} gives {} ({why})", items.join(", "))
        })
        .collect()
}
