//! The commands of the real sysbench 1.0.20, captured with strace
//! (`src/workload/testdata/sysbench/gen.sh`; `sysbench_legacy/gen.sh` for
//! 1.0.20 running the 0.5 scripts of its source tree), against wirebench's:
//! with the same options and `--rand-seed`, every statement, parameter
//! value and data-load query must be identical. Each trace file's second
//! line is the sysbench command line, from which the test takes the test
//! and its options, as wirebench reads that line.

use std::path::Path;

use sha1::{Digest, Sha1};

use crate::rand::{srandom_seed, RandConfig, RandParams, Rng};
use crate::workload::testkit::{context, DecodedCommand, Harness};
use crate::workload::Workload;

struct Trace {
    name: String,
    /// A 0.4 trace: wirebench pads 0.4's strings with spaces.
    padded: bool,
    workload: Box<dyn Workload>,
    command: String,
    rand: RandConfig,
    seed: u32,
    events: usize,
    lines: Vec<String>,
}

fn load(path: &Path) -> Trace {
    let text = std::fs::read_to_string(path).unwrap();
    let header = text.lines().nth(1).unwrap();
    let words: Vec<&str> = header.strip_prefix("# sysbench ").unwrap().split(' ').collect();
    // The header is a sysbench command line: read it as wirebench does.
    let bench = match super::parse(words.iter().map(std::ffi::OsString::from)) {
        Ok(super::Invocation::Bench(bench)) => bench,
        other => panic!("{}: {other:?}", path.display()),
    };
    let workload = match bench.legacy {
        Some(legacy) => legacy.workload(&bench.test_options, &bench.legacy_options),
        None => bench.test.workload(&bench.test_options),
    };
    let trace = Trace {
        name: path.file_stem().unwrap().to_string_lossy().into_owned(),
        padded: path.parent().is_some_and(|dir| dir.ends_with("sysbench_04")),
        workload: workload.unwrap(),
        // 0.5's parallel_prepare.lua prepares in its `run`.
        command: bench.command.name().to_owned(),
        seed: srandom_seed(bench.rand.seed, 0),
        rand: bench.rand,
        events: bench.general.events.unwrap_or(0) as usize,
        lines: text.lines().filter(|l| !l.starts_with('#')).map(str::to_string).collect(),
    };
    // 0.4 seeds nothing unless told: one thread draws the same every run.
    assert!(trace.padded || trace.seed != 0, "{}: traces need a fixed --rand-seed", path.display());
    trace
}

fn traces() -> Vec<Trace> {
    let mut paths = Vec::new();
    for dir in ["sysbench", "sysbench_legacy", "sysbench_04"] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/workload/testdata").join(dir);
        let files = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path());
        paths.extend(files.filter(|p| p.extension().is_some_and(|e| e == "txt")));
    }
    paths.sort();
    assert!(paths.len() >= 40, "trace files missing: {paths:?}");
    paths.iter().map(|p| load(p)).collect()
}

fn trace_rng(trace: &Trace) -> Rng {
    Rng::for_thread(trace.seed, 0, RandParams::new(&trace.rand).unwrap())
}

/// A line with each field's trailing spaces cut (wirebench pads 0.4's
/// strings with spaces, which a CHAR column drops) and, with `digits`,
/// every run of digits replaced by `N`: sysbench 1.0.20 calls
/// `srandom(--rand-seed)` only for `run` (in `print_run_mode`), so its data
/// load is not reproducible and only the statements' shape can be compared.
fn masked(line: &str, digits: bool) -> String {
    let mut out = String::with_capacity(line.len());
    for (i, field) in line.split('\t').enumerate() {
        if i > 0 {
            out.push('\t');
        }
        for ch in field.trim_end_matches(' ').chars() {
            if !digits || !ch.is_ascii_digit() {
                out.push(ch);
            } else if !out.ends_with('N') {
                out.push('N');
            }
        }
    }
    out
}

/// `H`, length, SHA-1 and the first 60 characters, for the large queries.
fn hash_line(sql: &str) -> String {
    let digest: String = Sha1::digest(sql.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
    let head: String = sql.chars().take(60).collect();
    format!("H\t{}\t{digest}\t{}", sql.len(), head.replace('\n', "\\n"))
}

#[test]
fn every_trace_is_reproduced() {
    let mut failures = Vec::new();
    let traces = traces();
    for trace in &traces {
        let ours = match trace.command.as_str() {
            "run" if trace.workload.name() == "bulk_insert" => {
                compare_traces(&trace.name, &bulk_insert_first_flush(trace), &trace.lines[..1], &mut failures);
                continue;
            }
            "run" => run_lines(trace),
            "prepare" => trace.workload.prepare(context(0, 1), trace_rng(trace)).map(|sql| query_line(&sql)).collect(),
            other => panic!("{}: command {other}", trace.name),
        };
        // 0.4's load is all alike: its prepare compares but for the padding.
        let digits = trace.command == "prepare" && !trace.padded;
        if trace.padded || digits {
            let mask = |lines: &[String]| lines.iter().map(|l| masked(l, digits)).collect::<Vec<_>>();
            compare_traces(&trace.name, &mask(&ours), &mask(&trace.lines), &mut failures);
        } else {
            compare_traces(&trace.name, &ours, &trace.lines, &mut failures);
        }
    }
    assert!(failures.is_empty(), "{} of {} traces differ:\n{}", failures.len(), traces.len(), failures.join("\n"));
}

fn query_line(sql: &str) -> String {
    DecodedCommand::Query(sql.to_owned()).trace_line()
}

/// What a run sends: the workload's SQL for before the run (0.4's
/// TRUNCATE), then `--events` events.
fn run_lines(trace: &Trace) -> Vec<String> {
    let mut harness = Harness::new(&*trace.workload, context(0, 1), trace_rng(trace));
    let before = trace.workload.before_run().into_iter().map(|sql| query_line(&sql));
    before.chain((0..trace.events).flat_map(|_| harness.event()).map(|c| c.trace_line())).collect()
}

/// sysbench's first flush is wirebench's first event; its second statement
/// is the remainder flushed at thread_done, whose first row is checked.
fn bulk_insert_first_flush(trace: &Trace) -> Vec<String> {
    let mut harness = Harness::new(&*trace.workload, context(0, 1), trace_rng(trace));
    let DecodedCommand::Query(sql) = harness.event().remove(0) else { panic!("bulk_insert sends COM_QUERY") };
    let rows = harness.script().last_event_weight();
    let table = &sql[..sql.find(" VALUES").unwrap()];
    let next = format!("{table} VALUES({},", rows + 1);
    assert!(trace.lines[1].contains(&next), "{}: sysbench's second statement starts at row {}", trace.name, rows + 1);
    vec![hash_line(&sql)]
}

fn compare_traces(name: &str, ours: &[String], theirs: &[String], failures: &mut Vec<String>) {
    if ours.len() != theirs.len() {
        failures.push(format!("{name}: {} commands, sysbench sent {}", ours.len(), theirs.len()));
    }
    if let Some((i, (ours, theirs))) = ours.iter().zip(theirs).enumerate().find(|(_, (a, b))| a != b) {
        failures.push(format!("{name}: command {i} differs:\n  wirebench {ours}\n  sysbench  {theirs}"));
    }
}
