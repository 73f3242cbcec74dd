//! Splitting the arguments into `--name[=value]` options and positional
//! words, and reading `--config-file`, before any option is interpreted.

use std::path::Path;

use super::cli_error::CliError;
use super::defs::{self, Kind};
use super::small_file::read_small_text;

/// One option as written, before interpretation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RawOpt {
    /// As typed, without the leading `--`.
    pub name: String,
    /// `name` with `-` turned into `_`, as sysbench compares names.
    pub key: String,
    /// `None` for a bare `--name`.
    pub value: Option<String>,
    pub origin: Origin,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Origin {
    Arg,
    Config { path: String, line: usize },
}

impl RawOpt {
    pub(crate) fn arg(name: &str, value: Option<&str>) -> Self {
        RawOpt { name: name.to_owned(), key: defs::key(name), value: value.map(str::to_owned), origin: Origin::Arg }
    }

    /// How to name this option in a message: `--threads`, or
    /// `threads (config file F, line N)`.
    pub(crate) fn label(&self) -> String {
        match &self.origin {
            Origin::Arg => format!("--{}", self.name),
            Origin::Config { path, line } => format!("{} (config file {path}, line {line})", self.name),
        }
    }

    /// The option as the user wrote it, for notes: `--oltp-table-size=100`;
    /// a password as `(hidden)`.
    pub(crate) fn shown(&self) -> String {
        let prefix = match self.origin {
            Origin::Arg => "--",
            Origin::Config { .. } => "",
        };
        match &self.value {
            Some(_) if defs::is_secret(&self.key) => format!("{prefix}{}=(hidden)", self.name),
            Some(value) => format!("{prefix}{}={value}", self.name),
            None => format!("{prefix}{}", self.name),
        }
    }
}

/// The arguments after the program name, split.
#[derive(Debug, Default)]
pub(crate) struct CommandLine {
    pub opts: Vec<RawOpt>,
    pub positionals: Vec<Positional>,
}

/// A word without `--`: the test name or the command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Positional {
    pub word: String,
    /// The bare `--name` just before it, if any: `--threads 4` is a
    /// mistake worth naming.
    pub after_bare: Option<RawOpt>,
}

/// Anything starting with `--` is an option (`--name=value` or bare
/// `--name`; sysbench has no `--name value` form), anything else a
/// positional word, exactly as sysbench's `parse_general_arguments` splits.
pub(crate) fn split(args: Vec<String>) -> CommandLine {
    let mut line = CommandLine::default();
    let mut previous_bare = None;
    for arg in args {
        match arg.strip_prefix("--") {
            Some(option) => {
                let (name, value) = match option.split_once('=') {
                    Some((name, value)) => (name, Some(value)),
                    None => (option, None),
                };
                let opt = RawOpt::arg(name, value);
                previous_bare = opt.value.is_none().then(|| opt.clone());
                line.opts.push(opt);
            }
            None => line.positionals.push(Positional { word: arg, after_bare: previous_bare.take() }),
        }
    }
    line
}

/// A config file read as sysbench's `read_config()` reads it: one
/// `name=value` per line, lines without `=` skipped, values separated by
/// commas or blanks, `'…'` or `"…"` quoting, `#` starting a comment.
///
/// Where sysbench 1.0.20 misreads a file, wirebench reads what was meant and
/// says so in `notes`: blanks around the name (sysbench then ignores the
/// line), `#` before the name, and booleans set to off (sysbench turns every
/// boolean listed in a file on). Unknown names are left for the caller to
/// refuse; sysbench only warns about them. Unlike sysbench, at most 1 MiB
/// is read ([`read_small_text`]).
pub(crate) fn read_config_file(path: &Path, notes: &mut Vec<String>) -> Result<Vec<RawOpt>, CliError> {
    let shown = path.display().to_string();
    let text =
        read_small_text(path).map_err(|e| CliError::ConfigFile { path: shown.clone(), message: e.to_string() })?;
    parse_config(&shown, &text, notes)
}

pub(crate) fn parse_config(path: &str, text: &str, notes: &mut Vec<String>) -> Result<Vec<RawOpt>, CliError> {
    let mut opts = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let Some((raw_name, raw_value)) = line.split_once('=') else { continue };
        let name = raw_name.trim();
        if name.starts_with('#') {
            continue;
        }
        let fail = |message: String| CliError::ConfigFile {
            path: path.to_owned(),
            message: format!("line {number}: {message}"),
        };
        if name.is_empty() {
            return Err(fail("no option name before '='".to_owned()));
        }
        if name.starts_with("--") {
            return Err(fail(format!("write the option without dashes in front: {}=…", name.trim_start_matches('-'))));
        }
        if name != raw_name {
            notes.push(format!(
                "config file {path} line {number}: read '{name}' (sysbench 1.0.20 ignores a name with blanks around it)"
            ));
        }
        let values = config_values(raw_value).map_err(fail)?;
        let key = defs::key(name);
        let kind = defs::find(&key).map(|d| d.kind);
        if kind == Some(Kind::File) {
            return Err(fail("a config file cannot name another config file".to_owned()));
        }
        let value = match (kind, values.as_slice()) {
            (Some(Kind::List), _) => values.join(","),
            (_, []) => String::new(),
            (_, [single]) => single.clone(),
            (_, _) => {
                return Err(fail(format!(
                    "{name} takes one value, found {} (quote a value that contains blanks or commas)",
                    values.len()
                )))
            }
        };
        if kind == Some(Kind::Bool) && matches!(value.as_str(), "off" | "false" | "0") {
            notes.push(format!(
                "config file {path} line {number}: {name}={value} read as off (sysbench 1.0.20 turns on any boolean \
                 listed in a config file)"
            ));
        }
        opts.push(RawOpt {
            name: name.to_owned(),
            key,
            value: Some(value),
            origin: Origin::Config { path: path.to_owned(), line: number },
        });
    }
    Ok(opts)
}

fn config_values(text: &str) -> Result<Vec<String>, String> {
    let mut values = Vec::new();
    let mut rest = text;
    loop {
        rest = rest.trim_start();
        let Some(first) = rest.chars().next() else { break };
        match first {
            '#' => break,
            '\'' | '"' => {
                let inner = skip_first_char(rest);
                let (quoted, after) = inner.split_once(first).ok_or_else(|| format!("no closing {first} quote"))?;
                values.push(quoted.to_owned());
                rest = after.split_once(',').map_or("", |(_, next)| next);
            }
            _ => {
                let end = rest.find(|c: char| c == ',' || c.is_whitespace()).unwrap_or(rest.len());
                let (token, tail) = rest.split_at(end);
                values.push(token.to_owned());
                rest = skip_first_char(tail);
            }
        }
    }
    Ok(values)
}

fn skip_first_char(text: &str) -> &str {
    let mut chars = text.chars();
    chars.next();
    chars.as_str()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn split_keeps_order_and_bare_flags() {
        let line = split(args(&["--threads=4", "oltp_read_write", "--skip-trx", "run", "--mysql-password=a=b"]));
        let words: Vec<&str> = line.positionals.iter().map(|p| p.word.as_str()).collect();
        assert_eq!(words, ["oltp_read_write", "run"]);
        assert_eq!(line.positionals[0].after_bare, None);
        assert_eq!(line.positionals[1].after_bare.as_ref().map(|o| o.key.as_str()), Some("skip_trx"));
        assert_eq!(line.opts.len(), 3);
        assert_eq!(line.opts[0], RawOpt::arg("threads", Some("4")));
        assert_eq!(line.opts[1].value, None);
        assert_eq!(line.opts[1].key, "skip_trx");
        assert_eq!(line.opts[2].value.as_deref(), Some("a=b"));
    }

    #[test]
    fn config_values_follow_sysbench_tokenizing() {
        assert_eq!(config_values("4").unwrap(), ["4"]);
        assert_eq!(config_values(" a,b  c # comment").unwrap(), ["a", "b", "c"]);
        assert_eq!(config_values("'a b', c").unwrap(), ["a b", "c"]);
        assert_eq!(config_values("\"x#y\"").unwrap(), ["x#y"]);
        assert_eq!(config_values("").unwrap(), Vec::<String>::new());
        assert!(config_values("'open").is_err());
    }

    #[test]
    fn config_file_lines() {
        let mut notes = Vec::new();
        let text = "threads=4\n# threads=9\nno equals sign\nmysql-host=a, b\n table-size = 50\nhistogram=off\n";
        let opts = parse_config("cf", text, &mut notes).unwrap();
        let pairs: Vec<(&str, &str)> =
            opts.iter().map(|o| (o.key.as_str(), o.value.as_deref().unwrap_or("-"))).collect();
        assert_eq!(pairs, [("threads", "4"), ("mysql_host", "a,b"), ("table_size", "50"), ("histogram", "off")]);
        assert_eq!(opts[2].origin, Origin::Config { path: "cf".into(), line: 5 });
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes[0].contains("line 5"));
        assert!(notes[1].contains("histogram=off read as off"));
    }

    #[test]
    fn config_file_refusals() {
        let mut notes = Vec::new();
        for bad in ["=4\n", "threads=1 2\n", "config-file=x\n", "--threads=4\n", "mysql-password='abc\n"] {
            let err = parse_config("cf", bad, &mut notes).unwrap_err();
            assert!(matches!(err, CliError::ConfigFile { .. }), "{bad:?}: {err}");
        }
    }
}
