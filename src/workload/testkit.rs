//! Test support: runs a script into an in-memory sink and decodes the
//! commands it wrote, so tests compare SQL and parameter values; reads
//! sysbench's installed scripts, to compare with their text.

use std::path::Path;

use wirebench_protocol::buf::Reader;
use wirebench_protocol::command::{ExecuteTemplate, ParamSlot};
use wirebench_protocol::constants::command::{COM_QUERY, COM_STMT_EXECUTE};
use wirebench_protocol::constants::ColumnType;

use super::{CommandSink, Script, ScriptContext, StatementSpec, Step, Workload};
use crate::rand::{RandParams, Rng};

/// A parameter value of a decoded COM_STMT_EXECUTE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DecodedParam {
    Int(i64),
    Bytes(Vec<u8>),
    Null,
}

impl DecodedParam {
    pub(crate) fn int(&self) -> i64 {
        match self {
            DecodedParam::Int(v) => *v,
            other => panic!("expected an integer, got {other:?}"),
        }
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        match self {
            DecodedParam::Bytes(v) => v,
            other => panic!("expected a string, got {other:?}"),
        }
    }
}

/// One command a script wrote, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DecodedCommand {
    Query(String),
    /// A COM_STMT_EXECUTE: the statement's index and SQL, and the values.
    Execute {
        stmt: usize,
        sql: String,
        params: Vec<DecodedParam>,
    },
}

impl DecodedCommand {
    pub(crate) fn sql(&self) -> &str {
        match self {
            DecodedCommand::Query(sql) | DecodedCommand::Execute { sql, .. } => sql,
        }
    }

    pub(crate) fn params(&self) -> &[DecodedParam] {
        match self {
            DecodedCommand::Query(_) => &[],
            DecodedCommand::Execute { params, .. } => params,
        }
    }

    /// The line format of the sysbench traces in `testdata/sysbench`.
    pub(crate) fn trace_line(&self) -> String {
        let escape = |s: &str| s.replace('\\', "\\\\").replace('\n', "\\n");
        match self {
            DecodedCommand::Query(sql) => format!("Q\t{}", escape(sql)),
            DecodedCommand::Execute { sql, params, .. } => {
                let mut line = format!("E\t{}", escape(sql));
                for p in params {
                    match p {
                        DecodedParam::Int(v) => line.push_str(&format!("\ti:{v}")),
                        DecodedParam::Bytes(b) => line.push_str(&format!("\ts:{}", String::from_utf8_lossy(b))),
                        DecodedParam::Null => line.push_str("\tNULL"),
                    }
                }
                line
            }
        }
    }
}

/// A script with the templates of its workload's statements (statement
/// ids = indexes) and a generator.
pub(crate) struct Harness {
    statements: Vec<StatementSpec>,
    templates: Vec<ExecuteTemplate>,
    script: Box<dyn Script>,
    pub(crate) rng: Rng,
    out: Vec<u8>,
}

pub(crate) fn context(thread: u32, threads: u32) -> ScriptContext {
    ScriptContext { thread, threads }
}

/// Worker 0's generator for `--rand-seed=seed` and the default `--rand-*`.
pub(crate) fn rng(seed: u32) -> Rng {
    Rng::for_thread(seed, 0, RandParams::default())
}

impl Harness {
    pub(crate) fn new(workload: &dyn Workload, context: ScriptContext, rng: Rng) -> Harness {
        let statements = workload.statements();
        let templates =
            statements.iter().enumerate().map(|(i, s)| ExecuteTemplate::new(i as u32, &s.slots).unwrap()).collect();
        Harness { statements, templates, script: workload.script(context), rng, out: Vec::new() }
    }

    pub(crate) fn script(&self) -> &dyn Script {
        &*self.script
    }

    pub(crate) fn script_mut(&mut self) -> &mut dyn Script {
        &mut *self.script
    }

    /// One call of `Script::next`: exactly one command must come out.
    pub(crate) fn step(&mut self) -> (DecodedCommand, Step) {
        self.out.clear();
        let mut sink = CommandSink::new(&mut self.templates, &mut self.out);
        let step = self.script.next(&mut self.rng, &mut sink).unwrap();
        assert!(sink.take_format().is_some(), "next() wrote no command");
        let (command, rest) = decode(&self.out, &self.statements);
        assert!(rest.is_empty(), "next() wrote more than one command: {} bytes left", rest.len());
        (command, step)
    }

    /// The commands of the next event, then the draw sysbench's
    /// `sb_event_stop` makes from the thread's generator (the latency
    /// histogram picks a random slot with `sb_rand_uniform_uint64()` when
    /// `--percentile` is not 0, its default being 95): without it the next
    /// event's values would not be sysbench's.
    pub(crate) fn event(&mut self) -> Vec<DecodedCommand> {
        let mut commands = Vec::new();
        loop {
            let (command, step) = self.step();
            commands.push(command);
            if step == Step::Last {
                self.rng.next_u64();
                return commands;
            }
            assert!(commands.len() < 100_000, "an event that does not end");
        }
    }
}

/// Decodes the first command in `bytes`; returns it and the bytes after it.
pub(crate) fn decode<'a>(bytes: &'a [u8], statements: &[StatementSpec]) -> (DecodedCommand, &'a [u8]) {
    let mut r = Reader::new(bytes);
    let len = r.u24("length").unwrap() as usize;
    assert_eq!(r.u8("sequence id").unwrap(), 0, "commands start at sequence id 0");
    let payload = r.take(len, "payload").unwrap();
    let rest = r.rest();
    let mut p = Reader::new(payload);
    let command = match p.u8("command").unwrap() {
        COM_QUERY => DecodedCommand::Query(String::from_utf8(p.rest().to_vec()).unwrap()),
        COM_STMT_EXECUTE => {
            let stmt = p.u32("statement id").unwrap() as usize;
            assert_eq!(p.u8("flags").unwrap(), 0);
            assert_eq!(p.u32("iterations").unwrap(), 1);
            let spec = &statements[stmt];
            let n = spec.slots.len();
            let mut params = Vec::new();
            if n > 0 {
                let nulls = p.take(n.div_ceil(8), "null bitmap").unwrap().to_vec();
                assert_eq!(p.u8("new params bound").unwrap(), 1);
                let types = p.take(2 * n, "types").unwrap().to_vec();
                for (i, slot) in spec.slots.iter().enumerate() {
                    let ty = types[2 * i];
                    if nulls[i / 8] & (1 << (i % 8)) != 0 {
                        params.push(DecodedParam::Null);
                        continue;
                    }
                    match slot {
                        ParamSlot::Int64 => {
                            assert_eq!((ty, types[2 * i + 1]), (ColumnType::LongLong as u8, 0));
                            params.push(DecodedParam::Int(p.u64("int").unwrap() as i64));
                        }
                        ParamSlot::Int32 => {
                            assert_eq!((ty, types[2 * i + 1]), (ColumnType::Long as u8, 0));
                            params.push(DecodedParam::Int(i64::from(p.u32("int").unwrap() as i32)));
                        }
                        ParamSlot::Bytes { len } => {
                            assert_eq!(ty, ColumnType::String as u8);
                            let v = p.lenenc_bytes("string").unwrap();
                            assert_eq!(v.len(), *len);
                            params.push(DecodedParam::Bytes(v.to_vec()));
                        }
                        other => panic!("workloads bind only BIGINT, INT and strings, not {other:?}"),
                    }
                }
            }
            p.finish("execute").unwrap();
            DecodedCommand::Execute { stmt, sql: spec.sql.clone(), params }
        }
        other => panic!("unexpected command byte {other:#x}"),
    };
    (command, rest)
}

/// `sql` with its `sbtestN` table number replaced by `N`, and the number.
pub(crate) fn split_table(sql: &str) -> (String, Option<u32>) {
    let Some(at) = sql.find("sbtest") else { return (sql.to_string(), None) };
    let digits_at = at + "sbtest".len();
    let digits: String = sql[digits_at..].chars().take_while(char::is_ascii_digit).collect();
    let shape = format!("{}N{}", &sql[..digits_at], &sql[digits_at + digits.len()..]);
    (shape, digits.parse().ok())
}

/// Each command's SQL with the table number replaced by `N`.
pub(crate) fn shapes(event: &[DecodedCommand]) -> Vec<String> {
    event.iter().map(|c| split_table(c.sql()).0).collect()
}

/// `s` has the shape of a `#`-template: digits where the template has `#`.
pub(crate) fn fits_template(s: &[u8], template: &[u8]) -> bool {
    s.len() == template.len()
        && s.iter().zip(template).all(|(&b, &t)| if t == b'#' { b.is_ascii_digit() } else { b == t })
}

/// Checks the values of one oltp_common event: tables in range and the same
/// within a run of one statement (a group), ids in `1..=table_size`, ranges
/// `range_size` long, strings from the templates, and each INSERT re-adding
/// the id the DELETE before it removed, in the same table.
pub(crate) fn check_oltp_event(event: &[DecodedCommand], options: &crate::workload::OltpOptions) {
    use super::common::{C_TEMPLATE, PAD_TEMPLATE};
    let size = i64::from(options.table_size);
    let in_range = |v: &DecodedParam| (1..=size).contains(&v.int());
    let mut previous: Option<(String, Option<u32>, &DecodedCommand)> = None;
    for command in event {
        let (shape, table) = split_table(command.sql());
        if let Some(t) = table {
            assert!((1..=options.tables).contains(&t), "table {t} out of range in {command:?}");
        }
        let p = command.params();
        match shape.as_str() {
            "SELECT c FROM sbtestN WHERE id=?"
            | "UPDATE sbtestN SET k=k+1 WHERE id=?"
            | "DELETE FROM sbtestN WHERE id=?" => {
                assert!(in_range(&p[0]), "{command:?}")
            }
            "SELECT c FROM sbtestN WHERE id BETWEEN ? AND ?"
            | "SELECT SUM(k) FROM sbtestN WHERE id BETWEEN ? AND ?"
            | "SELECT c FROM sbtestN WHERE id BETWEEN ? AND ? ORDER BY c"
            | "SELECT DISTINCT c FROM sbtestN WHERE id BETWEEN ? AND ? ORDER BY c" => {
                assert!(in_range(&p[0]), "{command:?}");
                assert_eq!(p[1].int(), p[0].int() + i64::from(options.range_size) - 1, "{command:?}");
            }
            "UPDATE sbtestN SET c=? WHERE id=?" => {
                assert!(fits_template(p[0].bytes(), C_TEMPLATE), "{command:?}");
                assert!(in_range(&p[1]), "{command:?}");
            }
            "INSERT INTO sbtestN (id, k, c, pad) VALUES (?, ?, ?, ?)" => {
                let Some((before, before_table, delete)) = &previous else { panic!("INSERT first in {event:?}") };
                assert_eq!(before, "DELETE FROM sbtestN WHERE id=?", "INSERT not after DELETE");
                assert_eq!((*before_table, delete.params()[0].int()), (table, p[0].int()), "DELETE/INSERT differ");
                assert!(in_range(&p[1]), "{command:?}");
                assert!(fits_template(p[2].bytes(), C_TEMPLATE), "{command:?}");
                assert!(fits_template(p[3].bytes(), PAD_TEMPLATE), "{command:?}");
            }
            "BEGIN" | "COMMIT" => assert!(p.is_empty()),
            other => panic!("unexpected statement {other:?}"),
        }
        if let Some((before, before_table, _)) = &previous {
            let pair = before.starts_with("INSERT") && shape.starts_with("DELETE");
            if *before == shape || pair {
                assert_eq!(*before_table, table, "a group changed tables: {event:?}");
            }
        }
        previous = Some((shape, table, command));
    }
}

/// An installed sysbench script, or `None` (with a message) when
/// sysbench is not installed; with WIREBENCH_REQUIRE_SERVER=1 a missing
/// script fails the test instead.
pub(crate) fn lua_script(name: &str) -> Option<String> {
    let dir = std::env::var("WIREBENCH_SYSBENCH_SCRIPTS").unwrap_or_else(|_| "/usr/share/sysbench".to_string());
    let path = Path::new(&dir).join(name);
    match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(e) if std::env::var("WIREBENCH_REQUIRE_SERVER").is_ok_and(|v| v == "1") => {
            panic!("{}: {e} (WIREBENCH_REQUIRE_SERVER=1)", path.display())
        }
        Err(e) => {
            eprintln!(
                "skipped: {}: {e} (set WIREBENCH_SYSBENCH_SCRIPTS to sysbench's script directory)",
                path.display()
            );
            None
        }
    }
}

/// The Lua long strings (`[[...]]`) of a script, the newline right
/// after `[[` dropped as Lua does.
pub(crate) fn long_strings(lua: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = lua;
    while let Some(start) = rest.find("[[") {
        let body = &rest[start + 2..];
        let end = body.find("]]").expect("unterminated long string");
        let text = &body[..end];
        found.push(text.strip_prefix('\n').unwrap_or(text).to_string());
        rest = &body[end + 2..];
    }
    found
}

/// Lua's `string.format` for `%d`, `%u`, `%s` and `%%`, enough for the scripts.
pub(crate) fn lua_format(format: &str, args: &[&str]) -> String {
    let mut out = String::new();
    let mut args = args.iter();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('%') => out.push('%'),
            Some('d' | 'u' | 's') => out.push_str(args.next().expect("too few arguments")),
            other => panic!("format {other:?}"),
        }
    }
    assert!(args.next().is_none(), "too many arguments");
    out
}
