//! sysbench 1.0.20's FFI surface in wirebench's Lua states: the C
//! declarations its internal modules make (src/lua/cdefs.lua), compared
//! with the ones the installed sysbench binary embeds; the C functions
//! wirebench's binary exports for `ffi.C`; and a script using each
//! declaration and function (tests/lua/ffi/surface.lua), run by sysbench
//! and by wirebench with the same seed, which must print the same lines
//! and report the same counts.
//!
//! The sysbench comparisons need /usr/bin/sysbench, the surface test the
//! test server too; without them they are skipped, or fail with
//! WIREBENCH_REQUIRE_SERVER=1.

use crate::common;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::TestServer;
use wirebench::lua::EXPORTED_C_FUNCTIONS;

const CDEFS: &str = include_str!("../../src/lua/cdefs.lua");

fn script_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/lua/ffi")
}

/// `binary args...` in tests/lua/ffi, `stdin` on its standard input.
fn run(binary: &Path, args: &[String], stdin: &str) -> Output {
    let mut child = Command::new(binary)
        .args(args)
        .current_dir(script_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e}", binary.display()));
    child.stdin.take().expect("stdin").write_all(stdin.as_bytes()).expect("script on stdin");
    child.wait_with_output().expect("output")
}

fn text(output: &Output) -> (String, String) {
    (String::from_utf8_lossy(&output.stdout).into_owned(), String::from_utf8_lossy(&output.stderr).into_owned())
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

// ---------------------------------------------------------------------
// The declarations
// ---------------------------------------------------------------------

/// The text of each `ffi.cdef[[ ... ]]` block of a Lua source, in order.
fn cdef_blocks(lua: &str) -> Vec<&str> {
    lua.split("ffi.cdef[[").skip(1).map(|rest| rest.split("]]").next().unwrap_or("")).collect()
}

/// C tokens without comments: what LuaJIT's C parser sees.
fn tokens(c: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = c;
    while let Some(ch) = rest.chars().next() {
        if let Some(after) = rest.strip_prefix("/*") {
            rest = after.split_once("*/").map_or("", |(_, r)| r);
        } else if ch.is_whitespace() {
            rest = &rest[ch.len_utf8()..];
        } else if ch.is_ascii_alphanumeric() || ch == '_' {
            let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
            out.push(rest[..end].to_owned());
            rest = &rest[end..];
        } else {
            out.push(ch.to_string());
            rest = &rest[ch.len_utf8()..];
        }
    }
    out
}

#[test]
fn the_tokenizer_can_tell_declarations_apart() {
    assert_eq!(tokens("int /* x */ f(int a);"), tokens("int\n  f ( int a ) ;"));
    assert_ne!(tokens("int f(int a);"), tokens("int f(long a);"));
    assert_eq!(cdef_blocks("a ffi.cdef[[int x;]] b ffi.cdef[[ int y; ]]"), vec!["int x;", " int y; "]);
}

/// src/lua/cdefs.lua makes the declarations the installed sysbench's own
/// modules make, token for token and in the same order (so the same
/// second declarations fail, and the types are the same).
#[test]
fn cdefs_are_sysbench_s_own_declarations() {
    let Some(sysbench) = common::sysbench() else { return };
    let dumper = std::fs::read_to_string(script_dir().join("sysbench_modules.lua")).expect("sysbench_modules.lua");
    let output = run(&sysbench, &[], &dumper);
    let (modules, errors) = text(&output);
    assert!(output.status.success() && modules.contains("-- module sysbench_histogram_lua"), "{modules}{errors}");
    let theirs: Vec<Vec<String>> = cdef_blocks(&modules).into_iter().map(tokens).collect();
    let ours: Vec<Vec<String>> = cdef_blocks(CDEFS).into_iter().map(tokens).collect();
    assert_eq!(theirs.len(), 6, "sysbench's modules make six ffi.cdef calls");
    for (i, (theirs, ours)) in theirs.iter().zip(&ours).enumerate() {
        assert_eq!(ours, theirs, "ffi.cdef block {} differs from sysbench's", i + 1);
    }
    assert_eq!(ours.len(), theirs.len());
}

// ---------------------------------------------------------------------
// The exported functions
// ---------------------------------------------------------------------

/// A script printing, for each name, `ok NAME` when `ffi.C` finds it and
/// `missing NAME: error` when it does not.
fn lookup_script(names: &[&str]) -> String {
    // Scripts declare the counters' functions themselves.
    let mut script = String::from(
        "ffi.cdef[[void sb_counter_inc(int, sb_counter_type); uint64_t sb_counter_val(int, sb_counter_type);\n\
         int usleep(unsigned int);]]\n",
    );
    for name in names {
        script.push_str(&format!(
            "do local ok, err = pcall(function() return ffi.C.{name} end) \
             print(ok and 'ok {name}' or ('missing {name}: ' .. tostring(err))) end\n"
        ));
    }
    script
}

/// Every function wirebench exports is one sysbench's binary exports (or
/// libc's `usleep`), and `ffi.C` finds it in wirebench's.
#[test]
fn the_exported_functions_are_sysbench_s_and_ffi_finds_them() {
    let names: Vec<&str> = EXPORTED_C_FUNCTIONS.to_vec();
    let output = run(Path::new(common::WIREBENCH), &[], &lookup_script(&names));
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}{stderr}");
    for name in EXPORTED_C_FUNCTIONS {
        assert!(stdout.contains(&format!("ok {name}\n")), "{name} is not found through ffi.C:\n{stdout}");
    }
    let Some(sysbench) = common::sysbench() else { return };
    let output = run(&sysbench, &[], &lookup_script(&names));
    let (stdout, stderr) = text(&output);
    for name in &names {
        assert!(stdout.contains(&format!("ok {name}\n")), "sysbench has no {name}:\n{stdout}{stderr}");
    }
}

/// A finalizer that calls the generator as its state closes gets its
/// state's generator, as sysbench's thread-local one serves it, and the
/// command ends well.
#[test]
fn a_finalizer_as_the_state_closes_draws_from_its_state() {
    let script = std::fs::read_to_string(script_dir().join("no_state.lua")).expect("no_state.lua");
    let output = run(Path::new(common::WIREBENCH), &[], &script);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("loaded\n") && stdout.contains("finalizer drew 5\n"), "{stdout}");
    assert!(!stderr.contains("ALERT"), "{stderr}");
}

/// Each place a script's code runs (top level, init, thread_init, event,
/// thread_done, done, both report hooks (report_cumulative at the
/// checkpoint and at the end), commands, parallel commands, help) reaches
/// its state's generator and counters through ffi.C.
#[test]
fn every_state_reaches_its_own_generator_and_counters() {
    let cases: [(&[&str], &[&str]); 5] = [
        (
            &["--threads=2", "--time=2", "--report-interval=1", "--report-checkpoints=1", "states.lua", "run"],
            &[
                "top level 0",
                "init",
                "thread_init 0",
                "thread_init 1",
                "event 0",
                "event 1",
                "report_intermediate",
                "report_cumulative",
                "thread_done 0",
                "thread_done 1",
                "report_cumulative",
                "done",
            ],
        ),
        (&["states.lua", "prepare"], &["top level 0", "prepare"]),
        (&["states.lua", "draw"], &["command 0"]),
        (&["--threads=2", "states.lua", "pdraw"], &["command 0", "command 1"]),
        (&["states.lua", "help"], &["help"]),
    ];
    for (list, places) in cases {
        let output = run(Path::new(common::WIREBENCH), &args(list), "");
        let (stdout, stderr) = text(&output);
        assert!(output.status.success(), "{list:?}: {stdout}{stderr}");
        assert!(!stderr.contains("ALERT"), "{list:?}: {stderr}");
        for place in places {
            let line = format!("{place} drew true, other true\n");
            let wanted = places.iter().filter(|p| *p == place).count();
            assert!(stdout.matches(&line).count() >= wanted, "{list:?}: {wanted} x {place}:\n{stdout}");
        }
    }
}

// ---------------------------------------------------------------------
// The surface script, under sysbench and under wirebench
// ---------------------------------------------------------------------

/// The lines the script printed: without the run's header and report,
/// and without the alerts sysbench's own SQL module prints when it
/// collects a result it already freed.
fn script_lines(stdout: &str, stderr: &str) -> Vec<String> {
    const HEADER: [&str; 6] = [
        "sysbench 1.0.20",
        "wirebench ",
        "Running the test with following options:",
        "Number of threads:",
        "Initializing ",
        "Threads started!",
    ];
    let body = stdout.split("SQL statistics:").next().unwrap_or("");
    body.lines()
        .chain(stderr.lines())
        .filter(|l| !l.is_empty() && !HEADER.iter().any(|h| l.starts_with(h)))
        .filter(|l| *l != "ALERT: attempt to free an invalid result set")
        .map(str::to_owned)
        .collect()
}

/// The report's counts: reads, writes, other, total, transactions,
/// queries, ignored errors, reconnects, total number of events.
fn report_counts(stdout: &str) -> Vec<(String, u64)> {
    const NAMES: [&str; 9] = [
        "read:",
        "write:",
        "other:",
        "total:",
        "transactions:",
        "queries:",
        "ignored errors:",
        "reconnects:",
        "total number of events:",
    ];
    let mut counts = Vec::new();
    for line in stdout.lines().map(str::trim) {
        if let Some(name) = NAMES.iter().find(|n| line.starts_with(*n)) {
            let value = line[name.len()..].split_whitespace().next().unwrap_or("");
            counts.push((name.to_string(), value.parse().unwrap_or_else(|_| panic!("{line}"))));
        }
    }
    counts
}

#[test]
fn the_ffi_surface_behaves_as_in_sysbench() {
    let Some(server) = TestServer::find() else { return };
    let Some(sysbench) = common::sysbench() else { return };
    let mut list = server.login_args("sbtest_lua");
    list.extend(args(&["--threads=1", "--events=3", "--rand-seed=9", "surface.lua", "run"]));
    let theirs = run(&sysbench, &list, "");
    let ours = run(Path::new(common::WIREBENCH), &list, "");
    let ((their_out, their_err), (our_out, our_err)) = (text(&theirs), text(&ours));
    assert!(theirs.status.success(), "sysbench: {their_out}{their_err}");
    assert!(ours.status.success(), "wirebench: {our_out}{our_err}");
    let (their_lines, our_lines) = (script_lines(&their_out, &their_err), script_lines(&our_out, &our_err));
    assert!(their_lines.len() > 200, "{their_out}");
    for (i, (theirs, ours)) in their_lines.iter().zip(&our_lines).enumerate() {
        assert_eq!(ours, theirs, "line {} of the script's output", i + 1);
    }
    assert_eq!(our_lines.len(), their_lines.len(), "{our_out}");
    let counts = report_counts(&our_out);
    assert_eq!(counts.len(), 9, "{our_out}");
    assert_eq!(counts, report_counts(&their_out));
}
