//! Test support: runs a script into an in-memory sink and decodes the
//! commands it wrote, so tests compare SQL and parameter values.

use wirebench_protocol::buf::Reader;
use wirebench_protocol::command::{ExecuteTemplate, ParamSlot};
use wirebench_protocol::constants::command::{COM_QUERY, COM_STMT_EXECUTE};
use wirebench_protocol::constants::ColumnType;

use super::{CommandSink, Script, ScriptContext, StatementSpec, Step, Workload};
use crate::rand::{RandParams, Rng};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Value {
    Int(i64),
    Bytes(Vec<u8>),
}

impl Value {
    pub(crate) fn int(&self) -> i64 {
        match self {
            Value::Int(v) => *v,
            other => panic!("expected an integer, got {other:?}"),
        }
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        match self {
            Value::Bytes(v) => v,
            other => panic!("expected a string, got {other:?}"),
        }
    }
}

/// One decoded command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Command {
    Query(String),
    /// A COM_STMT_EXECUTE: the statement's index and SQL, and the values.
    Execute {
        stmt: usize,
        sql: String,
        params: Vec<Value>,
    },
}

impl Command {
    pub(crate) fn sql(&self) -> &str {
        match self {
            Command::Query(sql) | Command::Execute { sql, .. } => sql,
        }
    }

    pub(crate) fn params(&self) -> &[Value] {
        match self {
            Command::Query(_) => &[],
            Command::Execute { params, .. } => params,
        }
    }

    /// The line format of the sysbench traces in `testdata/sysbench`.
    pub(crate) fn trace_line(&self) -> String {
        let escape = |s: &str| s.replace('\\', "\\\\").replace('\n', "\\n");
        match self {
            Command::Query(sql) => format!("Q\t{}", escape(sql)),
            Command::Execute { sql, params, .. } => {
                let mut line = format!("E\t{}", escape(sql));
                for p in params {
                    match p {
                        Value::Int(v) => line.push_str(&format!("\ti:{v}")),
                        Value::Bytes(b) => line.push_str(&format!("\ts:{}", String::from_utf8_lossy(b))),
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
    pub(crate) fn step(&mut self) -> (Command, Step) {
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
    pub(crate) fn event(&mut self) -> Vec<Command> {
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
pub(crate) fn decode<'a>(bytes: &'a [u8], statements: &[StatementSpec]) -> (Command, &'a [u8]) {
    let mut r = Reader::new(bytes);
    let len = r.u24("length").unwrap() as usize;
    assert_eq!(r.u8("sequence id").unwrap(), 0, "commands start at sequence id 0");
    let payload = r.take(len, "payload").unwrap();
    let rest = r.rest();
    let mut p = Reader::new(payload);
    let command = match p.u8("command").unwrap() {
        COM_QUERY => Command::Query(String::from_utf8(p.rest().to_vec()).unwrap()),
        COM_STMT_EXECUTE => {
            let stmt = p.u32("statement id").unwrap() as usize;
            assert_eq!(p.u8("flags").unwrap(), 0);
            assert_eq!(p.u32("iterations").unwrap(), 1);
            let spec = &statements[stmt];
            let n = spec.slots.len();
            let mut params = Vec::new();
            if n > 0 {
                assert!(p.take(n.div_ceil(8), "null bitmap").unwrap().iter().all(|&b| b == 0), "no NULLs");
                assert_eq!(p.u8("new params bound").unwrap(), 1);
                let types = p.take(2 * n, "types").unwrap().to_vec();
                for (i, slot) in spec.slots.iter().enumerate() {
                    let ty = types[2 * i];
                    match slot {
                        ParamSlot::Int64 => {
                            assert_eq!((ty, types[2 * i + 1]), (ColumnType::LongLong as u8, 0));
                            params.push(Value::Int(p.u64("int").unwrap() as i64));
                        }
                        ParamSlot::Bytes { len } => {
                            assert_eq!(ty, ColumnType::String as u8);
                            let v = p.lenenc_bytes("string").unwrap();
                            assert_eq!(v.len(), *len);
                            params.push(Value::Bytes(v.to_vec()));
                        }
                        other => panic!("workloads bind only BIGINT and strings, not {other:?}"),
                    }
                }
            }
            p.finish("execute").unwrap();
            Command::Execute { stmt, sql: spec.sql.clone(), params }
        }
        other => panic!("unexpected command byte {other:#x}"),
    };
    (command, rest)
}
