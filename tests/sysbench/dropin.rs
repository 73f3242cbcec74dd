//! wirebench installed as `sysbench` (a symlink named `sysbench` to the
//! binary under test) against the real sysbench 1.0.20, run the way a
//! script runs them, on the same server: for every test its help,
//! prepare, prewarm, run (`--events`, fixed `--rand-seed`) and cleanup, at
//! every `--verbosity` for some and the default for all, with one and two
//! threads; the refused command lines; the warnings; `--version` and
//! `--help`. Standard output, standard error and the exit status must be
//! the same, apart from:
//!
//! - the figures that depend on timing (rates, times, latencies, the
//!   spread of events over threads), masked by [`mask`];
//! - the order of lines that sysbench's threads print in whatever order
//!   they run (and which their Lua `print` can even interleave);
//! - the differences docs/as-sysbench.md lists, each
//!   checked here as exactly that difference: the banner's parentheses,
//!   `--help`'s drivers and compiled-in tests, no test name at all.
//!
//! Needs the test server and sysbench 1.0.20 (see tests/common); without
//! them the tests are skipped, or fail with WIREBENCH_REQUIRE_SERVER=1.
//! The refusals, warnings, help and version need no server.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{ScratchDir, TestServer};
use wirebench::cli::SYSBENCH_BANNER_LINE;
use wirebench::workload::Test;

/// sysbench's banner; wirebench's says what runs instead of a LuaJIT.
const SYSBENCH_BANNER_PREFIX: &str = "sysbench 1.0.20 (using ";

// The tests that create tables run one at a time.
use crate::common::serial;

/// The two programs: the real sysbench and wirebench under its name.
struct Pair {
    sysbench: PathBuf,
    ours: PathBuf,
    _dir: ScratchDir,
}

impl Pair {
    /// `None` (the test is skipped) without sysbench 1.0.20.
    fn new(name: &str) -> Option<Pair> {
        let sysbench = common::sysbench()?;
        let dir = ScratchDir::new(&format!("dropin-{name}"));
        let ours = dir.0.join("sysbench");
        std::os::unix::fs::symlink(common::WIREBENCH, &ours).expect("symlink wirebench as sysbench");
        Some(Pair { sysbench, ours, _dir: dir })
    }

    /// Both programs with `args`, compared; a difference fails the test.
    fn same(&self, args: &[String], order: Order) -> Said {
        let theirs = said(&self.sysbench, args);
        let ours = said(&self.ours, args);
        compare(args, &theirs, &ours, order);
        ours
    }
}

/// What a program said: its streams and exit status.
#[derive(Debug, Clone, PartialEq)]
struct Said {
    stdout: String,
    stderr: String,
    status: Option<i32>,
}

fn said(program: &Path, args: &[String]) -> Said {
    let output = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{} does not start: {e}", program.display()));
    Said {
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        status: output.status.code(),
    }
}

/// Whether the lines come in a fixed order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Order {
    Fixed,
    /// Threads print them, in any order ([`difference_in_any_order`]).
    AnyOrder,
}

fn compare(args: &[String], theirs: &Said, ours: &Said, order: Order) {
    let shown = args.join(" ");
    assert_eq!(ours.status, theirs.status, "sysbench {shown}: exit status\nours:\n{ours:#?}\ntheirs:\n{theirs:#?}");
    for (stream, ours_text, theirs_text) in
        [("stdout", &ours.stdout, &theirs.stdout), ("stderr", &ours.stderr, &theirs.stderr)]
    {
        let (ours_lines, theirs_lines) = (masked_lines(ours_text, true), masked_lines(theirs_text, false));
        let difference = match order {
            Order::Fixed => (ours_lines != theirs_lines).then(|| first_difference(&ours_lines, &theirs_lines)),
            Order::AnyOrder => difference_in_any_order(&ours_lines, &theirs_lines),
        };
        if let Some(difference) = difference {
            panic!("sysbench {shown}: {stream} differs\n{difference}\nours:\n{ours_text}\ntheirs:\n{theirs_text}");
        }
    }
}

/// Whether sysbench's output holds our lines, in any order. Its threads'
/// Lua `print` writes a message and its newline apart, so two threads can
/// write `A` `B` `\n` `\n`: each of our lines is taken out of its text
/// wherever it stands, and only newlines, as many as ours, may remain.
fn difference_in_any_order(ours: &[String], theirs: &[String]) -> Option<String> {
    let mut rest = theirs.join("\n");
    let mut lines: Vec<&String> = ours.iter().filter(|l| !l.is_empty()).collect();
    // The longest first, so that no line is taken out of a longer one.
    lines.sort_by_key(|l| std::cmp::Reverse(l.len()));
    for line in lines {
        match rest.find(line.as_str()) {
            Some(at) => rest.replace_range(at..at + line.len(), ""),
            None => return Some(format!("ours has {line:?}, theirs has not")),
        }
    }
    let newlines = |text: &str| text.matches('\n').count();
    if rest.chars().any(|c| c != '\n') || newlines(&rest) != newlines(&ours.join("\n")) {
        return Some(format!("theirs has more: {rest:?}"));
    }
    None
}

fn first_difference(ours: &[String], theirs: &[String]) -> String {
    let n = ours.iter().zip(theirs).take_while(|(a, b)| a == b).count();
    format!("first difference at line {}: ours {:?}, theirs {:?}", n + 1, ours.get(n), theirs.get(n))
}

/// The lines of an output with the timing figures masked; the banner is
/// checked (ours exactly, sysbench's by its shape) and made one token.
fn masked_lines(text: &str, ours: bool) -> Vec<String> {
    let mut lines: Vec<String> = text.lines().map(mask).collect();
    // How many rows a histogram has depends on the latencies.
    lines.dedup_by(|a, b| a == HISTOGRAM_ROW && b == HISTOGRAM_ROW);
    if !text.is_empty() && !text.ends_with('\n') {
        lines.push("(no newline at the end)".to_owned());
    }
    for line in &mut lines {
        let is_banner = if ours { line == SYSBENCH_BANNER_LINE } else { line.starts_with(SYSBENCH_BANNER_PREFIX) };
        if is_banner {
            "<banner>".clone_into(line);
        }
    }
    lines
}

/// A report line with the figures that depend on timing replaced by `#`:
/// per-second rates, total time, latencies, the execution time per thread
/// and the spread of events over threads. Counts stay.
fn mask(line: &str) -> String {
    if is_histogram_row(line) {
        return HISTOGRAM_ROW.to_owned();
    }
    let trimmed = line.trim_start();
    let label_end = |label: &str| line.len() - trimmed.len() + label.len();
    for label in ["total time:", "min:", "avg:", "max:", "sum:", "execution time (avg/stddev):"] {
        if trimmed.starts_with(label) {
            return format!("{} #", &line[..label_end(label)]);
        }
    }
    if let Some((head, _)) = line.split_once("th percentile:") {
        return format!("{head}th percentile: #");
    }
    if trimmed.starts_with("events (avg/stddev):") {
        if let Some((head, _stddev)) = line.rsplit_once('/') {
            return format!("{head}/#");
        }
    }
    if let Some((count, rate)) = line.split_once(" (") {
        if rate.ends_with(" per sec.)") {
            return format!("{count} (# per sec.)");
        }
    }
    line.to_owned()
}

const HISTOGRAM_ROW: &str = "<histogram row>";

/// `%12.3f |%-40.*s %lu`: `       0.052 |*****                                    12`.
fn is_histogram_row(line: &str) -> bool {
    let Some((value, rest)) = line.split_once(" |") else { return false };
    let bar = rest.trim_end_matches(|c: char| c.is_ascii_digit());
    value.len() == 12
        && value.trim_start().parse::<f64>().is_ok()
        && bar.len() == 41
        && bar.ends_with(' ')
        && bar.trim_end().chars().all(|c| c == '*')
        && bar.len() < rest.len()
}

/// The login to the test server, and small tables.
fn server_args(server: &TestServer) -> Vec<String> {
    server.login_args("sbtest")
}

fn args(base: &[String], more: &[&str]) -> Vec<String> {
    base.iter().cloned().chain(more.iter().map(|s| (*s).to_owned())).collect()
}

/// What one test's tables need: --tables=1 for the select_random scripts,
/// which read sbtest1 only.
fn table_args(test: Test) -> &'static [&'static str] {
    match test {
        Test::SelectRandomPoints | Test::SelectRandomRanges => &["--tables=1", "--table-size=20"],
        _ => &["--tables=2", "--table-size=20"],
    }
}

/// The real sysbench drops the test's tables, whoever made them.
fn drop_tables(pair: &Pair, base: &[String], test: Test) {
    said(&pair.sysbench, &args(base, &[test.name(), "cleanup", "--threads=2"]));
}

/// Fresh tables made by the real sysbench.
fn fresh_tables(pair: &Pair, base: &[String], test: Test) {
    drop_tables(pair, base, test);
    let made = said(&pair.sysbench, &args(base, &[test.name(), "prepare", "--threads=2"]));
    assert_eq!(made.status, Some(0), "sysbench {test} prepare: {made:#?}");
}

/// One command of `test`, by both programs, each on the tables sysbench
/// would have before it (none for prepare, fresh ones for the others).
fn command_both(pair: &Pair, base: &[String], test: Test, command: &[&str], order: Order) {
    let line = args(base, &[&[test.name()], command].concat());
    let needs_tables = command.first() != Some(&"prepare");
    let setup = |pair: &Pair| {
        if needs_tables {
            fresh_tables(pair, base, test)
        } else {
            drop_tables(pair, base, test)
        }
    };
    setup(pair);
    let theirs = said(&pair.sysbench, &line);
    setup(pair);
    let ours = said(&pair.ours, &line);
    compare(&line, &theirs, &ours, order);
}

/// Every test's four table commands and help at the default verbosity,
/// with one thread, then its prepare, prewarm and run with two.
#[test]
fn every_test_says_what_sysbench_says() {
    let Some(server) = TestServer::find() else { return };
    let Some(pair) = Pair::new("tests") else { return };
    let _serial = serial();
    for test in Test::ALL {
        let base = args(&server_args(&server), table_args(test));
        pair.same(&args(&base, &[test.name(), "help"]), Order::Fixed);
        let run = ["run", "--events=12", "--rand-seed=7"];
        for command in [&["prepare"][..], &["prewarm"], &run, &["cleanup"]] {
            command_both(&pair, &base, test, command, Order::Fixed);
        }
        // Two threads: the table lines come in the order the threads run.
        let two = args(&base, &["--threads=2"]);
        for command in [&["prepare"][..], &["prewarm"]] {
            command_both(&pair, &two, test, command, Order::AnyOrder);
        }
        if counts_are_the_same_on_two_threads(test) {
            command_both(&pair, &two, test, &run, Order::Fixed);
        }
        drop_tables(&pair, &base, test);
    }
}

/// Whether a run's counts are the same whichever of two threads runs an
/// event first: not when rows are written (a deadlock is an ignored error
/// and a retry; oltp_delete's hits depend on the order), nor for
/// bulk_insert, whose statements are one per thread that got a row.
fn counts_are_the_same_on_two_threads(test: Test) -> bool {
    matches!(test, Test::OltpReadOnly | Test::OltpPointSelect | Test::SelectRandomPoints | Test::SelectRandomRanges)
}

/// oltp_read_only and bulk_insert at every verbosity from 0 (only FATAL)
/// to 5 (debug), one thread and two: banner, header, "Initializing worker
/// threads...", the INFO and DEBUG lines, the report, the table lines that
/// sysbench's scripts print at every level.
#[test]
fn every_verbosity_prints_what_sysbench_prints() {
    let Some(server) = TestServer::find() else { return };
    let Some(pair) = Pair::new("verbosity") else { return };
    let _serial = serial();
    for test in [Test::OltpReadOnly, Test::BulkInsert] {
        let base = args(&server_args(&server), table_args(test));
        for verbosity in 0..=5 {
            let level = format!("--verbosity={verbosity}");
            // Two threads change only what shows at 3 and above (0 stands
            // for the quiet levels; every_test_* runs 3).
            let threads: &[&str] = match verbosity {
                0 | 4 | 5 => &["--threads=1", "--threads=2"],
                _ => &["--threads=1"],
            };
            for &threads in threads {
                let line = args(&base, &[&level, threads]);
                // sysbench's threads print their DEBUG and table lines in any order.
                let order = if threads == "--threads=1" { Order::Fixed } else { Order::AnyOrder };
                for command in [&["prepare"][..], &["prewarm"], &["run", "--events=6", "--rand-seed=3"], &["cleanup"]] {
                    let skip = match command[0] {
                        "prewarm" => test == Test::BulkInsert,
                        "run" => threads == "--threads=2" && !counts_are_the_same_on_two_threads(test),
                        _ => false,
                    };
                    if skip {
                        continue;
                    }
                    command_both(&pair, &line, test, command, order);
                }
            }
            pair.same(&args(&base, &[&level, test.name(), "help"]), Order::Fixed);
        }
        drop_tables(&pair, &base, test);
    }
    // A FATAL error, at the quietest level and the default: sysbench's
    // text differs (docs/as-sysbench.md), so only where it goes and the status compare.
    let base = args(&server_args(&server), &["--tables=1", "--table-size=5"]);
    fresh_tables(&pair, &base, Test::OltpPointSelect);
    for verbosity in ["--verbosity=0", "--verbosity=3"] {
        let line = args(&base, &[verbosity, "oltp_point_select", "prepare"]);
        let (theirs, ours) = (said(&pair.sysbench, &line), said(&pair.ours, &line));
        assert_eq!((ours.status, theirs.status), (Some(1), Some(1)));
        assert!(theirs.stdout.contains("FATAL: "), "{theirs:#?}");
        let fatal: Vec<&str> = ours.stdout.lines().filter(|l| l.starts_with("FATAL: ")).collect();
        assert_eq!(fatal.len(), 1, "one FATAL line on stdout, as sysbench's logger writes it: {ours:#?}");
        assert!(fatal[0].contains("1050") && fatal[0].contains("sbtest1"), "{ours:#?}");
        assert_eq!(ours.stderr, "", "{ours:#?}");
    }
    drop_tables(&pair, &base, Test::OltpPointSelect);
}

/// The command lines sysbench refuses after reading the test name, and
/// the one it refuses before: same text, stream, banner and status.
#[test]
fn refusals_are_sysbench_s() {
    let Some(pair) = Pair::new("refusals") else { return };
    let lines: &[&[&str]] = &[
        &["nosuchtest", "run"],
        &["/tmp/no/such/script.lua", "run"],
        &["oltp_read_write"],
        &["select_random_ranges"],
        &["bulk_insert"],
        &["oltp_read_write", "frobnicate"],
        &["bulk_insert", "help"],
        &["bulk_insert", "prewarm"],
        &["oltp_read_write", "run", "extra"],
        &["--no-such-option=1", "oltp_read_write", "run"],
        &["oltp_point_select", "run", "--no-such-option"],
    ];
    for line in lines {
        for verbosity in ["--verbosity=3", "--verbosity=0"] {
            let mut words = vec![verbosity.to_owned()];
            words.extend(line.iter().map(|w| (*w).to_owned()));
            pair.same(&words, Order::Fixed);
        }
    }
    // sysbench looks for a test named `run`; a script on stdin is `-`.
    pair.same(&["--events=5".to_owned(), "run".to_owned()], Order::Fixed);
}

/// With no test named (or `-`), sysbench 1.0.20 runs the top level of the
/// script on standard input and exits: its output, its errors
/// (`stdin:LINE:`) and its status are sysbench's. Only an empty standard
/// input differs: sysbench runs nothing and exits 0, wirebench says that
/// no test was named (`tests/mariadb/lua_stdin.rs`).
#[test]
fn a_script_on_stdin_runs_as_sysbench_runs_it() {
    let Some(pair) = Pair::new("stdin") else { return };
    let top = "print('top', sysbench.cmdline.script_path, sysbench.cmdline.command, sysbench.tid, sysbench.opt)\n";
    // The last two are cmdline.t's: commands that are never called.
    let cases: [(&[&str], &str); 7] = [
        (&[], top),
        (&["--threads=3", "-"], top),
        (&["--verbosity=0"], top),
        (&[], "print('hi' \n"),
        (&[], "\nerror('boom')\n"),
        (&[], "sysbench.cmdline.commands = {\n  cmd1 = \"wrong structure\"\n}\n"),
        (&[], "sysbench.cmdline.commands = {\n  cmd1 = { non_existing_func }\n}\n"),
    ];
    for (words, script) in cases {
        let args: Vec<String> = words.iter().map(|w| (*w).to_owned()).collect();
        let theirs = said_with_stdin(&pair.sysbench, &args, script);
        let ours = said_with_stdin(&pair.ours, &args, script);
        compare(&args, &theirs, &ours, Order::Fixed);
    }
}

fn said_with_stdin(program: &Path, args: &[String], input: &str) -> Said {
    use std::io::Write as _;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{} does not start: {e}", program.display()));
    let mut stdin = child.stdin.take().expect("piped stdin");
    stdin.write_all(input.as_bytes()).expect("the script is written");
    drop(stdin);
    let output = child.wait_with_output().expect("the program ends");
    Said {
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        status: output.status.code(),
    }
}

/// The warnings sysbench prints before its banner, at any verbosity, the
/// run header's debug and validation lines, and a dry run's counts (with
/// `--mysql-dry-run`, which needs no server).
#[test]
fn warnings_and_header_lines_are_sysbench_s() {
    let Some(pair) = Pair::new("warnings") else { return };
    let dry = ["--mysql-dry-run"];
    let lines: &[&[&str]] = &[
        &["oltp_point_select", "run", "--num-threads=2", "--max-requests=3"],
        &["oltp_point_select", "run", "--max-time=5", "--tx-rate=1000", "--events=3"],
        &["--verbosity=0", "oltp_point_select", "run", "--num-threads=2", "--events=2"],
        &["--test=oltp_point_select", "run", "--events=2"],
        &["oltp_point_select", "prepare", "--time=0"],
        &["oltp_point_select", "run", "--validate", "--events=4", "--threads=2", "--verbosity=4"],
        // Its rows are its events, in a dry run too.
        &["bulk_insert", "run", "--events=5", "--verbosity=4"],
        // The histogram's rows print at every level, its title at 3.
        &["oltp_point_select", "run", "--events=50", "--histogram", "--verbosity=2"],
        &["oltp_point_select", "run", "--events=50", "--histogram"],
    ];
    for line in lines {
        let words: Vec<String> = line.iter().chain(&dry).map(|w| (*w).to_owned()).collect();
        pair.same(&words, Order::Fixed);
    }
}

#[test]
fn version_is_sysbench_s() {
    let Some(pair) = Pair::new("version") else { return };
    for line in [&["--version"][..], &["--version", "--verbosity=0"], &["oltp_read_write", "--version"]] {
        let words: Vec<String> = line.iter().map(|w| (*w).to_owned()).collect();
        let ours = pair.same(&words, Order::Fixed);
        assert_eq!(ours.stdout, "sysbench 1.0.20\n");
    }
}

/// `--help` is sysbench's, apart from what docs/as-sysbench.md lists: the drivers
/// (mysql only, so no pgsql options), the database driver's line, and the
/// compiled-in tests (wirebench's database tests, not fileio, cpu, ...).
#[test]
fn help_is_sysbench_s_but_for_the_listed_differences() {
    let Some(pair) = Pair::new("help") else { return };
    let words = vec!["--help".to_owned()];
    let (theirs, ours) = (said(&pair.sysbench, &words), said(&pair.ours, &words));
    assert_eq!((ours.status, theirs.status), (Some(0), Some(0)));
    let mut expected = replace_line(
        &theirs.stdout,
        "  --db-driver=STRING  specifies database driver to use ('help' to get list of available drivers) [mysql]\n",
        "  --db-driver=STRING  specifies database driver to use (only mysql) [mysql]\n",
    );
    expected = replace_line(&expected, "  pgsql - PostgreSQL driver\n", "");
    expected = replace_block(&expected, "pgsql options:\n", "");
    let tests: String = Test::ALL.iter().map(|t| format!("  {t} - sysbench 1.0.20's {t}.lua, built in\n")).collect();
    expected = replace_block(&expected, "Compiled-in tests:\n", &format!("Compiled-in tests:\n{tests}\n"));
    assert_eq!(ours.stdout, expected);
    assert!(!ours.stdout.contains("prewarm"), "sysbench's --help does not name prewarm");
    assert_eq!(ours.stderr, "");
}

/// `text` with `line` replaced; the line must be there.
fn replace_line(text: &str, line: &str, by: &str) -> String {
    assert!(text.contains(line), "no {line:?} in sysbench's output:\n{text}");
    text.replacen(line, by, 1)
}

/// `text` with the block from `title` to the blank line after it (both
/// included) replaced by `by`.
fn replace_block(text: &str, title: &str, by: &str) -> String {
    let start = text.find(title).unwrap_or_else(|| panic!("no {title:?} in sysbench's output:\n{text}"));
    let end = text[start..].find("\n\n").map_or(text.len(), |n| start + n + 2);
    format!("{}{by}{}", &text[..start], &text[end..])
}

/// wirebench by its own name keeps its own banner and version, and its
/// help lists what it adds (and names prewarm only where sysbench does).
#[test]
fn by_its_own_name_it_is_wirebench() {
    let wirebench = Path::new(common::WIREBENCH);
    let version = said(wirebench, &["--version".to_owned()]);
    assert_eq!(version.stdout, format!("wirebench {} (sysbench 1.0.20 compatible)\n", env!("CARGO_PKG_VERSION")));
    let help = said(wirebench, &["--help".to_owned()]).stdout;
    assert!(help.starts_with("Usage:\n  wirebench [options]... testname command\n"), "{help}");
    assert!(help.contains("Commands implemented by most tests: prepare run cleanup help\n"), "{help}");
    assert!(!help.contains("prewarm"), "{help}");
    for added in ["wirebench options:", "--pipeline=N", "--mysql-server-public-key-path", "null-server"] {
        assert!(help.contains(added), "{added} not in\n{help}");
    }
    let refused = said(wirebench, &["nosuchtest".to_owned(), "run".to_owned()]);
    assert_eq!(refused.status, Some(1));
    assert!(refused.stdout.is_empty() && refused.stderr.starts_with("wirebench: unknown test 'nosuchtest'"));
}

#[test]
fn the_mask_hides_timing_and_keeps_counts() {
    let rate = "    transactions:                        12     (1234.56 per sec.)";
    assert_eq!(mask(rate), "    transactions:                        12     (# per sec.)");
    assert_eq!(mask("         avg:                                    0.66"), "         avg: #");
    assert_eq!(mask("         95th percentile:                        0.87"), "         95th percentile: #");
    assert_eq!(mask("    events (avg/stddev):           6.0000/4.00"), "    events (avg/stddev):           6.0000/#");
    assert_eq!(mask("        read:                            70"), "        read:                            70");
    assert_eq!(mask("Creating table 'sbtest1'..."), "Creating table 'sbtest1'...");
    assert_eq!(mask("       0.052 |*****                                    12"), HISTOGRAM_ROW);
    assert_eq!(mask("     101.259 |                                         1"), HISTOGRAM_ROW);
    assert_eq!(
        mask("       value  ------------- distribution ------------- count"),
        "       value  ------------- distribution ------------- count"
    );
}

#[test]
fn lines_in_any_order_may_be_interleaved_but_not_missing() {
    let lines = |text: &str| text.lines().map(str::to_owned).collect::<Vec<_>>();
    let ours = lines("x\n\nA...\nB...\nC\n");
    assert_eq!(difference_in_any_order(&ours, &lines("x\n\nB...A...\n\nC\n")), None);
    assert!(difference_in_any_order(&ours, &lines("x\n\nB...\n\nC\n")).is_some());
    assert!(difference_in_any_order(&ours, &lines("x\n\nA...B...\nC\n")).is_some(), "a newline short");
    assert!(difference_in_any_order(&ours, &lines("x\n\nA...\nB...\nC\nD\n")).is_some());
}
