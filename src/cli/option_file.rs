//! The mysql client's option files (`~/.my.cnf`, `--defaults-file`), read
//! as `my_load_defaults` reads them: `[group]` headers, `name=value` and
//! bare `name` lines, `#` and `;` comment lines, a `#` outside quotes ending
//! a value, quoted values with backslash escapes, `!include FILE` and
//! `!includedir DIR` (its `*.cnf` files, by name). Only the login of groups
//! `[client]` and `[wirebench]` is kept; `credentials.rs` decides what it
//! overrides. Like the mysql client, a world-writable file is skipped, and
//! unknown names in `[client]` are ignored (they belong to other programs).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::cli_error::CliError;
use super::defs;
use super::small_file::read_small_text;

/// The groups read: every mysql client's, and wirebench's own.
const GROUPS: &[&str] = &["client", "wirebench"];

/// How deep `!include` may nest; the mysql client stops at 10 too, which
/// also ends a file that includes itself.
const MAX_INCLUDE_DEPTH: usize = 10;

/// One setting of the login an option file can give.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum LoginKey {
    User,
    Password,
    Host,
    Port,
    Socket,
    Database,
}

impl LoginKey {
    const ALL: [(&'static str, LoginKey); 6] = [
        ("user", LoginKey::User),
        ("password", LoginKey::Password),
        ("host", LoginKey::Host),
        ("port", LoginKey::Port),
        ("socket", LoginKey::Socket),
        ("database", LoginKey::Database),
    ];

    fn from_name(name: &str) -> Option<LoginKey> {
        LoginKey::ALL.iter().find(|(n, _)| *n == name).map(|(_, key)| *key)
    }

    pub(crate) fn name(self) -> &'static str {
        LoginKey::ALL.iter().find(|(_, key)| *key == self).map_or("", |(n, _)| *n)
    }
}

/// One login setting read from an option file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileSetting {
    pub key: LoginKey,
    /// `None` for a bare name: a bare `password` asks on the terminal.
    pub value: Option<String>,
    pub path: PathBuf,
    pub line: usize,
}

/// The login settings of `path` and the files it includes, in the order
/// read (a later one wins). Notes say which files were skipped and why.
pub(crate) fn read_option_file(path: &Path, notes: &mut Vec<String>) -> Result<Vec<FileSetting>, CliError> {
    let mut reader = OptionFileReader { settings: Vec::new(), notes };
    reader.read_at_depth(path, 0)?;
    Ok(reader.settings)
}

/// What is wrong with one line of an option file.
#[derive(Debug, thiserror::Error)]
enum OptionLineError {
    #[error("no ']' after [{0}")]
    UnclosedGroup(String),
    #[error("unknown directive: the directives are !include FILE and !includedir DIR")]
    UnknownDirective,
    #[error("no option name before '='")]
    NoName,
    #[error("no closing {0} quote")]
    UnclosedQuote(char),
    #[error("an option before any [group]: put it under [client]")]
    NoGroup,
    #[error(
        "[wirebench] takes user, password, host, port, socket and database, not '{0}' (write loose-{0} to have it \
         ignored)"
    )]
    NotALoginKey(String),
    #[error("!includedir {dir}: {source}")]
    IncludeDir { dir: String, source: std::io::Error },
}

struct OptionFileReader<'a> {
    settings: Vec<FileSetting>,
    notes: &'a mut Vec<String>,
}

impl OptionFileReader<'_> {
    fn read_at_depth(&mut self, path: &Path, depth: usize) -> Result<(), CliError> {
        let fail = |message: String| CliError::OptionFile { path: path.display().to_string(), message };
        if depth > MAX_INCLUDE_DEPTH {
            return Err(fail(format!("!include nested more than {MAX_INCLUDE_DEPTH} deep: does it include itself?")));
        }
        if is_world_writable(path) {
            self.notes.push(format!(
                "option file {} is writable by anyone, so anyone could have put a login in it: ignored, as the \
                 mysql client ignores it (chmod o-w it)",
                path.display()
            ));
            return Ok(());
        }
        let text = read_small_text(path).map_err(|e| fail(e.to_string()))?;
        let mut group: Option<String> = None;
        for (index, raw_line) in text.lines().enumerate() {
            let line = index + 1;
            let at_line = |problem: OptionLineError| fail(format!("line {line}: {problem}"));
            match classify_option_line(raw_line.trim()).map_err(at_line)? {
                Line::Blank => {}
                Line::Group(name) => group = Some(name),
                Line::Include(target) => self.read_at_depth(Path::new(&target), depth + 1)?,
                Line::IncludeDir(dir) => {
                    for file in include_dir_files(Path::new(&dir)).map_err(at_line)? {
                        self.read_at_depth(&file, depth + 1)?;
                    }
                }
                Line::Setting { name, value } => {
                    let group = group.as_deref().ok_or(OptionLineError::NoGroup).map_err(at_line)?;
                    self.keep_login_setting(group, &name, value, (path, line)).map_err(at_line)?;
                }
            }
        }
        Ok(())
    }

    /// Keeps a login setting of `[client]` or `[wirebench]`, found at
    /// `(path, line)`.
    fn keep_login_setting(
        &mut self,
        group: &str,
        name: &str,
        value: Option<String>,
        (path, line): (&Path, usize),
    ) -> Result<(), OptionLineError> {
        if !GROUPS.contains(&group) {
            return Ok(());
        }
        let normal = defs::key(name);
        let (loose, bare_name) = match normal.strip_prefix("loose_") {
            Some(rest) => (true, rest),
            None => (false, normal.as_str()),
        };
        match LoginKey::from_name(bare_name) {
            Some(key) => self.settings.push(FileSetting { key, value, path: path.to_owned(), line }),
            None if group == "wirebench" && !loose => return Err(OptionLineError::NotALoginKey(name.to_owned())),
            None => {}
        }
        Ok(())
    }
}

/// `!includedir`: the directory's `*.cnf` files, sorted by name.
fn include_dir_files(dir: &Path) -> Result<Vec<PathBuf>, OptionLineError> {
    let entries = std::fs::read_dir(dir)
        .map_err(|source| OptionLineError::IncludeDir { dir: dir.display().to_string(), source })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "cnf") && path.is_file())
        .collect();
    files.sort();
    Ok(files)
}

fn is_world_writable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o002 != 0)
}

/// What one line of an option file is.
#[derive(Debug, PartialEq, Eq)]
enum Line {
    Blank,
    Group(String),
    Include(String),
    IncludeDir(String),
    Setting { name: String, value: Option<String> },
}

fn classify_option_line(line: &str) -> Result<Line, OptionLineError> {
    if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
        return Ok(Line::Blank);
    }
    if let Some(rest) = line.strip_prefix('[') {
        let (name, _) = rest.split_once(']').ok_or_else(|| OptionLineError::UnclosedGroup(rest.to_owned()))?;
        return Ok(Line::Group(name.trim().to_owned()));
    }
    if let Some(dir) = include_directive(line, "!includedir") {
        return Ok(Line::IncludeDir(dir));
    }
    if let Some(file) = include_directive(line, "!include") {
        return Ok(Line::Include(file));
    }
    if line.starts_with('!') {
        return Err(OptionLineError::UnknownDirective);
    }
    let (name, value) = match line.split_once('=') {
        Some((name, value)) => (name.trim(), Some(option_value(value)?)),
        None => (strip_end_comment(line).trim(), None),
    };
    if name.is_empty() {
        return Err(OptionLineError::NoName);
    }
    Ok(Line::Setting { name: name.to_owned(), value })
}

/// `!include FILE`: the word, then blanks, then the path.
fn include_directive(line: &str, word: &str) -> Option<String> {
    let rest = line.strip_prefix(word)?;
    rest.starts_with(char::is_whitespace).then(|| rest.trim().to_owned()).filter(|path| !path.is_empty())
}

/// A value as the mysql client reads it: the end comment removed, blanks
/// trimmed, one pair of surrounding quotes removed, escapes resolved.
fn option_value(raw: &str) -> Result<String, OptionLineError> {
    let text = strip_end_comment(raw).trim();
    let unquoted = match text.chars().next() {
        Some(quote @ ('\'' | '"')) => text
            .strip_prefix(quote)
            .and_then(|inner| inner.strip_suffix(quote))
            .ok_or(OptionLineError::UnclosedQuote(quote))?,
        _ => text,
    };
    Ok(unescape_option_value(unquoted))
}

/// The text before a `#` that is outside quotes.
fn strip_end_comment(text: &str) -> &str {
    let mut quote = None;
    let mut escaped = false;
    for (at, c) in text.char_indices() {
        match (c, quote) {
            _ if escaped => escaped = false,
            ('\\', _) => escaped = true,
            ('#', None) => return text.get(..at).unwrap_or(text),
            ('\'' | '"', None) => quote = Some(c),
            (c, Some(open)) if c == open => quote = None,
            _ => {}
        }
    }
    text
}

/// `\n \t \r \b \s \\ \' \"`; any other backslash is kept, as the mysql
/// client keeps it.
fn unescape_option_value(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('b') => out.push('\u{8}'),
            Some('s') => out.push(' '),
            Some(c @ ('\\' | '\'' | '"')) => out.push(c),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setting(name: &str, value: Option<&str>) -> Line {
        Line::Setting { name: name.to_owned(), value: value.map(str::to_owned) }
    }

    #[test]
    fn lines_as_the_mysql_client_reads_them() {
        assert_eq!(classify_option_line("").unwrap(), Line::Blank);
        assert_eq!(classify_option_line("# user=x").unwrap(), Line::Blank);
        assert_eq!(classify_option_line("; user=x").unwrap(), Line::Blank);
        assert_eq!(classify_option_line("[ client ]").unwrap(), Line::Group("client".to_owned()));
        assert_eq!(classify_option_line("user = alice").unwrap(), setting("user", Some("alice")));
        assert_eq!(classify_option_line("password").unwrap(), setting("password", None));
        assert_eq!(classify_option_line("password=").unwrap(), setting("password", Some("")));
        assert_eq!(classify_option_line("password = s3cr3t # comment").unwrap(), setting("password", Some("s3cr3t")));
        assert_eq!(classify_option_line("password = \"a#b c\"").unwrap(), setting("password", Some("a#b c")));
        assert_eq!(classify_option_line("password='it\\'s'").unwrap(), setting("password", Some("it's")));
        assert_eq!(classify_option_line("password=a\\sb\\\\c\\d").unwrap(), setting("password", Some("a b\\c\\d")));
        assert_eq!(classify_option_line("!include /etc/x.cnf").unwrap(), Line::Include("/etc/x.cnf".to_owned()));
        assert_eq!(classify_option_line("!includedir  /etc/my.d ").unwrap(), Line::IncludeDir("/etc/my.d".to_owned()));
        for bad in ["[client", "=x", "password=\"open", "!inclde x", "!include"] {
            assert!(classify_option_line(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn names_are_the_login_keys() {
        for (name, key) in LoginKey::ALL {
            assert_eq!(LoginKey::from_name(name), Some(key));
            assert_eq!(key.name(), name);
        }
        assert_eq!(LoginKey::from_name("ssl"), None);
    }
}
