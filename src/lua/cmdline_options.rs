//! A script's options: read from its `sysbench.cmdline.options` table,
//! given values from the command line, exported into `sysbench.opt`, and
//! listed by `help` as sysbench lists them.

use std::fmt::Write as _;

use mlua::{Lua, Table, Value};

use super::ScriptError;

/// An option's value as the script sees it in `sysbench.opt`.
#[derive(Debug, Clone, PartialEq)]
pub enum OptValue {
    Bool(bool),
    Number(f64),
    Text(String),
    List(Vec<String>),
    /// sysbench exports nothing for a file option.
    Nil,
}

/// `sysbench.cmdline.ARG_*`: how a value is read and shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OptKind {
    Bool,
    Int,
    Size,
    Double,
    Text,
    List,
    File,
}

impl OptKind {
    pub(crate) fn from_arg_type(n: i64) -> Option<OptKind> {
        Some(match n {
            1 => OptKind::Bool,
            2 => OptKind::Int,
            3 => OptKind::Size,
            4 => OptKind::Double,
            5 => OptKind::Text,
            6 => OptKind::List,
            7 => OptKind::File,
            _ => return None,
        })
    }

    /// How `help` shows the value after the name.
    fn placeholder(self) -> &'static str {
        match self {
            OptKind::Bool => "[=on|off]",
            OptKind::Int | OptKind::Double => "=N",
            OptKind::Size => "=SIZE",
            OptKind::Text => "=STRING",
            OptKind::List => "=[LIST,...]",
            OptKind::File => "=FILENAME",
        }
    }
}

/// One entry of `sysbench.cmdline.options`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ScriptOption {
    pub name: String,
    pub description: String,
    /// The default as sysbench writes it (`on`, `10000`, `a,b`).
    pub default: Option<String>,
    pub kind: OptKind,
}

/// The script's option definitions, sorted by name as sysbench sorts them.
pub(crate) fn definitions(lua: &Lua) -> Result<Vec<ScriptOption>, ScriptError> {
    let sysbench: Table = lua.globals().get("sysbench")?;
    let cmdline: Table = sysbench.get("cmdline")?;
    let options = match cmdline.get::<Value>("options")? {
        Value::Nil => return Ok(Vec::new()),
        Value::Table(options) => options,
        other => {
            return Err(ScriptError::BadDefinition(format!(
                "wrong type for sysbench.cmdline.options: {}",
                other.type_name()
            )))
        }
    };
    let mut defs = Vec::new();
    for pair in options.pairs::<Value, Value>() {
        let (name, def) = pair?;
        let (Value::String(name), Value::Table(def)) = (name, def) else {
            return Err(ScriptError::BadDefinition("wrong table structure in sysbench.cmdline.options".to_owned()));
        };
        defs.push(definition(name.to_str()?.to_owned(), &def)?);
    }
    defs.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(defs)
}

fn definition(name: String, def: &Table) -> Result<ScriptOption, ScriptError> {
    let description = match def.get::<Value>(1)? {
        Value::String(s) => s.to_str()?.to_owned(),
        Value::Nil => return Err(ScriptError::BadDefinition(format!("nil description for option {name}"))),
        other => other.to_string()?,
    };
    let default_value: Value = def.get(2)?;
    let (default, implied) = match &default_value {
        Value::Nil => (None, OptKind::Text),
        Value::Boolean(b) => (Some(if *b { "on" } else { "off" }.to_owned()), OptKind::Bool),
        Value::Integer(_) | Value::Number(_) => (Some(default_value.to_string()?), OptKind::Double),
        Value::Table(list) => {
            let items: Vec<String> =
                list.sequence_values::<Value>().map(|v| v?.to_string()).collect::<mlua::Result<_>>()?;
            (Some(items.join(",")), OptKind::List)
        }
        other => (Some(other.to_string()?), OptKind::Text),
    };
    let kind = match def.get::<Value>(3)? {
        Value::Nil => Some(implied),
        Value::Integer(n) => OptKind::from_arg_type(n),
        Value::Number(n) => OptKind::from_arg_type(n as i64),
        _ => None,
    }
    .ok_or_else(|| ScriptError::BadDefinition(format!("cannot determine type for option {name}")))?;
    Ok(ScriptOption { name, description, default, kind })
}

/// Each option's value: the command line's, else its default. An option
/// the script does not define is refused, as sysbench refuses it.
pub(crate) fn values(
    defs: &[ScriptOption],
    given: &[(String, Option<String>)],
    script: &str,
) -> Result<Vec<(String, OptValue)>, ScriptError> {
    for (name, value) in given {
        if !defs.iter().any(|d| d.name == *name) {
            let shown = value.as_ref().map_or(name.clone(), |v| format!("{name}={v}"));
            return Err(ScriptError::UnknownOption { name: shown, script: script.to_owned() });
        }
    }
    defs.iter()
        .map(|def| {
            let stated = given.iter().rev().find(|(name, _)| *name == def.name).map(|(_, v)| v.as_deref());
            let text = match stated {
                Some(None) if def.kind == OptKind::Bool => Some("on"),
                Some(value) => value,
                None => def.default.as_deref(),
            };
            Ok((def.name.clone(), typed(def, text)?))
        })
        .collect()
}

/// `text` read as sysbench reads a value of `def`'s kind.
fn typed(def: &ScriptOption, text: Option<&str>) -> Result<OptValue, ScriptError> {
    let bad = |expected| ScriptError::BadValue {
        name: def.name.clone(),
        value: text.unwrap_or_default().to_owned(),
        expected,
    };
    let Some(text) = text else {
        return Ok(match def.kind {
            OptKind::Bool => OptValue::Bool(false),
            OptKind::Int | OptKind::Size | OptKind::Double => OptValue::Number(0.0),
            OptKind::List => OptValue::List(Vec::new()),
            OptKind::Text => OptValue::Text(String::new()),
            OptKind::File => OptValue::Nil,
        });
    };
    Ok(match def.kind {
        OptKind::Bool => match text {
            "on" | "true" | "yes" | "1" => OptValue::Bool(true),
            "off" | "false" | "no" | "0" => OptValue::Bool(false),
            _ => return Err(bad("on or off")),
        },
        OptKind::Int => OptValue::Number(text.trim().parse::<i64>().map_err(|_| bad("an integer"))? as f64),
        OptKind::Double => OptValue::Number(text.trim().parse::<f64>().map_err(|_| bad("a number"))?),
        OptKind::Size => OptValue::Number(parse_size(text).ok_or_else(|| bad("a size such as 16K, 1M or 2G"))? as f64),
        OptKind::Text => OptValue::Text(text.to_owned()),
        OptKind::List => OptValue::List(text.split(',').filter(|s| !s.is_empty()).map(str::to_owned).collect()),
        OptKind::File => OptValue::Nil,
    })
}

/// sysbench's sizes: a number with an optional K, M, G or T (powers of 1024).
fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, shift) = match text.char_indices().last()? {
        (at, 'k' | 'K') => (&text[..at], 10),
        (at, 'm' | 'M') => (&text[..at], 20),
        (at, 'g' | 'G') => (&text[..at], 30),
        (at, 't' | 'T') => (&text[..at], 40),
        _ => (text, 0),
    };
    digits.parse::<u64>().ok()?.checked_mul(1 << shift)
}

/// Exports sysbench's own options (`general`) and the script's (`given`
/// on the command line) into `sysbench.opt`. A script without
/// `sysbench.cmdline.options` is a 0.5-style one: as sysbench 1.0.20 does
/// for it, any option is accepted (as a string) and every option is also
/// a global variable, unless a global function has its name (`help`).
pub(crate) fn export_all(
    lua: &Lua,
    general: &[(String, OptValue)],
    given: &[(String, Option<String>)],
    script: &str,
) -> Result<(), ScriptError> {
    if declares_options(lua)? {
        let script_values = values(&definitions(lua)?, given, script)?;
        return Ok(export(lua, general, &script_values)?);
    }
    let untyped: Vec<(String, OptValue)> =
        given.iter().map(|(name, value)| (name.clone(), OptValue::Text(value.clone().unwrap_or_default()))).collect();
    export(lua, general, &untyped)?;
    export_globals(lua, general.iter().chain(&untyped))?;
    Ok(())
}

fn declares_options(lua: &Lua) -> mlua::Result<bool> {
    let sysbench: Table = lua.globals().get("sysbench")?;
    let cmdline: Table = sysbench.get("cmdline")?;
    Ok(!cmdline.get::<Value>("options")?.is_nil())
}

fn lua_value(lua: &Lua, value: &OptValue) -> mlua::Result<Value> {
    Ok(match value {
        OptValue::Bool(b) => Value::Boolean(*b),
        OptValue::Number(n) => Value::Number(*n),
        OptValue::Text(s) => Value::String(lua.create_string(s)?),
        OptValue::List(items) => Value::Table(lua.create_sequence_from(items.iter().map(String::as_str))?),
        OptValue::Nil => Value::Nil,
    })
}

/// Sets `sysbench.opt` to sysbench's own options and the script's.
fn export(lua: &Lua, general: &[(String, OptValue)], script: &[(String, OptValue)]) -> mlua::Result<()> {
    let opt = lua.create_table()?;
    for (name, value) in general.iter().chain(script) {
        opt.set(name.as_str(), lua_value(lua, value)?)?;
    }
    lua.globals().get::<Table>("sysbench")?.set("opt", opt)
}

fn export_globals<'a>(lua: &Lua, options: impl Iterator<Item = &'a (String, OptValue)>) -> mlua::Result<()> {
    let globals = lua.globals();
    for (name, value) in options {
        if !matches!(globals.get::<Value>(name.as_str())?, Value::Function(_)) {
            globals.set(name.as_str(), lua_value(lua, value)?)?;
        }
    }
    Ok(())
}

/// `SCRIPT help`'s list, as sysbench's `sb_print_test_options` writes it.
pub(crate) fn help_text(script: &str, defs: &[ScriptOption]) -> String {
    format!("{script} options:\n{}", option_lines(defs))
}

/// The options one a line, names aligned, and an empty line after them
/// (sysbench's `sb_print_options`).
pub(crate) fn option_lines(defs: &[ScriptOption]) -> String {
    let mut text = String::new();
    let names: Vec<String> = defs.iter().map(|d| format!("--{}{}", d.name, d.kind.placeholder())).collect();
    let width = names.iter().map(String::len).max().unwrap_or(0);
    for (def, name) in defs.iter().zip(&names) {
        let _ = write!(text, "  {name:width$} {}", def.description);
        if let Some(default) = &def.default {
            let _ = write!(text, " [{default}]");
        }
        text.push('\n');
    }
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defs_of(script: &str) -> Vec<ScriptOption> {
        let lua = Lua::new();
        lua.load("sysbench = { cmdline = { ARG_INT = 2 } }").exec().unwrap();
        lua.load(script).exec().unwrap();
        definitions(&lua).unwrap()
    }

    #[test]
    fn help_lists_the_options_as_sysbench_does() {
        let defs = defs_of(
            r#"sysbench.cmdline.options = { flag = {"A flag", false}, n = {"A number", 3}, s = {"A string", "x"},
               l = {"A list", {"a","b"}}, i = {"Int", 5, sysbench.cmdline.ARG_INT}, z = {"no default"} }"#,
        );
        // Recorded from sysbench 1.0.20 with the same table.
        let expected = "t1.lua options:\n  --flag[=on|off] A flag [off]\n  --i=N           Int [5]\n  \
                        --l=[LIST,...]  A list [a,b]\n  --n=N           A number [3]\n  \
                        --s=STRING      A string [x]\n  --z=STRING      no default\n\n";
        assert_eq!(help_text("t1.lua", &defs), expected);
    }

    #[test]
    fn values_come_from_the_command_line_or_the_defaults() {
        let defs = defs_of(r#"sysbench.cmdline.options = { on = {"b", false}, n = {"n", 3}, l = {"l", {"a"}} }"#);
        let given = vec![("on".to_owned(), None), ("n".to_owned(), Some("2.5".to_owned()))];
        let values = values(&defs, &given, "t.lua").unwrap();
        assert_eq!(values[0], ("l".to_owned(), OptValue::List(vec!["a".to_owned()])));
        assert_eq!(values[1], ("n".to_owned(), OptValue::Number(2.5)));
        assert_eq!(values[2], ("on".to_owned(), OptValue::Bool(true)));
        let unknown = vec![("foo".to_owned(), Some("1".to_owned()))];
        let err = super::values(&defs, &unknown, "t.lua").unwrap_err().to_string();
        assert!(err.starts_with("invalid option: --foo=1"), "{err}");
        let bad = vec![("n".to_owned(), Some("x".to_owned()))];
        assert!(matches!(super::values(&defs, &bad, "t.lua"), Err(ScriptError::BadValue { .. })));
    }

    #[test]
    fn a_script_without_options_takes_any_option_and_gets_them_as_globals() {
        let general = vec![("threads".to_owned(), OptValue::Number(2.0)), ("help".to_owned(), OptValue::Bool(false))];
        let given = vec![("oltp_tables_count".to_owned(), Some("3".to_owned())), ("flag".to_owned(), None)];
        let lua = Lua::new();
        lua.load("sysbench = { cmdline = {} } function help() end").exec().unwrap();
        export_all(&lua, &general, &given, "t.lua").unwrap();
        let (globals, opt) = (lua.globals(), lua.load("return sysbench.opt").eval::<Table>().unwrap());
        assert_eq!(globals.get::<f64>("threads").unwrap(), 2.0);
        assert_eq!(globals.get::<String>("oltp_tables_count").unwrap(), "3");
        assert_eq!(opt.get::<String>("oltp_tables_count").unwrap(), "3");
        assert_eq!(globals.get::<String>("flag").unwrap(), "");
        assert!(matches!(globals.get::<Value>("help").unwrap(), Value::Function(_)));
        // A 1.0 script (an options table, even an empty one): options are
        // checked and stay in sysbench.opt.
        let lua = Lua::new();
        lua.load("sysbench = { cmdline = { options = {} } }").exec().unwrap();
        assert!(matches!(export_all(&lua, &general, &given, "t.lua"), Err(ScriptError::UnknownOption { .. })));
        export_all(&lua, &general, &[], "t.lua").unwrap();
        assert!(lua.globals().get::<Value>("threads").unwrap().is_nil());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("16K"), Some(16 << 10));
        assert_eq!(parse_size("2g"), Some(2 << 30));
        assert_eq!(parse_size("12"), Some(12));
        assert_eq!(parse_size("x"), None);
    }
}
