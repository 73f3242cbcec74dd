//! sysbench Lua scripts through wirebench's Lua engine, against the real
//! MariaDB (database sbtest_lua, which only these tests use, one at a time):
//! the stock scripts of /usr/share/sysbench give the statement counts of
//! the built-in tests with the same seed, and the scripts in tests/lua/
//! exercise the rest of the API. Skipped without a server or without the
//! stock scripts, unless WIREBENCH_REQUIRE_SERVER=1.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use common::{Ran, TestServer};

static SERIAL: Mutex<()> = Mutex::new(());

const STOCK_DIR: &str = "/usr/share/sysbench";

fn login(server: &TestServer) -> Vec<String> {
    server.login_args("sbtest_lua")
}

/// The stdout of a run that must succeed (`what` it was).
fn ok(ran: Ran, what: &str) -> String {
    assert!(ran.succeeded(), "{what}: {ran}");
    ran.stdout
}

/// The report's read, write, other, total, transactions and ignored errors.
fn counts(report: &str) -> Vec<u64> {
    ["read:", "write:", "other:", "total:", "transactions:", "ignored errors:"]
        .iter()
        .map(|label| {
            let line = report
                .lines()
                .find(|l| l.trim_start().starts_with(label))
                .unwrap_or_else(|| panic!("no {label} in\n{report}"));
            line.trim_start()[label.len()..].split_whitespace().next().unwrap().parse().unwrap()
        })
        .collect()
}

fn setup() -> Option<(TestServer, std::sync::MutexGuard<'static, ()>)> {
    let server = TestServer::find()?;
    if !Path::new(STOCK_DIR).join("oltp_common.lua").exists() {
        common::unavailable(&format!("no sysbench scripts in {STOCK_DIR} (apt-get install sysbench)"));
        return None;
    }
    Some((server, SERIAL.lock().unwrap_or_else(|e| e.into_inner())))
}

/// `test`'s counts from a seeded run of `events` events on fresh tables,
/// through the built-in engine or (`lua`) the Lua engine, with `options`.
fn seeded_run(server: &TestServer, test: &str, lua: bool, events: u32, threads: u32, options: &[&str]) -> Vec<u64> {
    let script = format!("{STOCK_DIR}/{test}.lua");
    let mut common = login(server);
    let sizes: &[&str] = match test {
        "bulk_insert" => &[],
        "select_random_points" | "select_random_ranges" => &["--table-size=500"],
        _ => &["--tables=2", "--table-size=500"],
    };
    common.extend(sizes.iter().map(|s| (*s).to_owned()));
    common.push(format!("--threads={threads}"));
    common.extend(options.iter().map(|s| (*s).to_owned()));
    let with = |extra: &[&str]| {
        let mut args = vec![script.clone()];
        args.extend(common.iter().cloned());
        args.extend(extra.iter().map(|s| (*s).to_owned()));
        if lua {
            args.push("--lua".to_owned());
        }
        args
    };
    ok(common::run_wirebench(&with(&["cleanup"])), "cleanup");
    ok(common::run_wirebench(&with(&["prepare"])), "prepare");
    let events = format!("--events={events}");
    let report =
        ok(common::run_wirebench(&with(&[&events, "--rand-seed=7", "run"])), &format!("{test} run (lua: {lua})"));
    ok(common::run_wirebench(&with(&["cleanup"])), "cleanup");
    counts(&report)
}

#[test]
fn stock_scripts_count_as_the_built_in_tests() {
    let Some((server, _serial)) = setup() else { return };
    let tests = [
        "oltp_read_only",
        "oltp_read_write",
        "oltp_write_only",
        "oltp_point_select",
        "oltp_update_index",
        "oltp_update_non_index",
        "oltp_delete",
        "oltp_insert",
        "select_random_points",
        "select_random_ranges",
        "bulk_insert",
    ];
    for test in tests {
        for threads in [1, 2] {
            let mut built_in = seeded_run(&server, test, false, 60, threads, &[]);
            let mut lua = seeded_run(&server, test, true, 60, threads, &[]);
            if threads > 1 {
                // Whether a DELETE or UPDATE finds its row (a write, else an
                // other) depends on how two threads' events interleave.
                for counts in [&mut built_in, &mut lua] {
                    counts[1] += counts[2];
                    counts[2] = 0;
                }
            }
            // bulk_insert's INSERTs: one per thread that drew any of the
            // events, and which threads do depends on timing.
            if built_in[5] + lua[5] > 0 || (test == "bulk_insert" && threads > 1) {
                // Or a deadlock between the two threads re-ran an event's
                // statements: only the events still must agree.
                assert_eq!(lua[4], built_in[4], "{test} --threads={threads}: transactions");
                continue;
            }
            assert_eq!(lua, built_in, "{test} --threads={threads}: read, write, other, total, transactions, errors");
            assert!(built_in[3] > 0, "{test}: no query ran");
        }
    }
}

/// A script's connections speak TLS and the compressed protocol through
/// the loops as the built-in tests' do: the same counts.
#[test]
fn a_script_runs_over_tls_and_compression() {
    let Some((server, _serial)) = setup() else { return };
    let built_in = seeded_run(&server, "oltp_read_only", false, 40, 2, &[]);
    for options in [&["--mysql-compression=on"][..], &["--mysql-ssl=REQUIRED", "--mysql-compression=on"]] {
        let lua = seeded_run(&server, "oltp_read_only", true, 40, 2, options);
        assert_eq!(lua, built_in, "{options:?}: read, write, other, total, transactions, errors");
    }
}

fn script(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/lua").join(name).display().to_string()
}

fn run_script(server: &TestServer, name: &str, extra: &[&str]) -> Ran {
    let mut args = vec![script(name)];
    args.extend(login(server));
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    common::run_wirebench(&args)
}

/// tests/lua/api.lua: every SQL call, result sets, bulk inserts, prepared
/// statements, options, custom commands, histograms and rand, each
/// checked by the script itself (an assert fails the command).
#[test]
fn the_api_works_against_mariadb() {
    let Some((server, _serial)) = setup() else { return };
    let help = ok(run_script(&server, "api.lua", &["help"]), "help");
    assert!(help.contains("api.lua options:\n  --rows=N rows in the table [10]\n"), "{help}");
    let prepared = ok(run_script(&server, "api.lua", &["--rows=25", "prepare"]), "prepare");
    assert!(prepared.contains("api.lua: 25 rows in t_api"), "{prepared}");
    let checked = ok(run_script(&server, "api.lua", &["--rows=25", "check"]), "custom command");
    assert!(checked.contains("check: ok"), "{checked}");
    let parallel = ok(run_script(&server, "api.lua", &["--threads=3", "per_thread"]), "parallel command");
    for tid in 0..3 {
        assert!(parallel.contains(&format!("per_thread {tid}\n")), "{parallel}");
    }
    let report = ok(
        run_script(
            &server,
            "api.lua",
            &["--rows=25", "--events=40", "--threads=2", "--mysql-ignore-errors=1062", "run"],
        ),
        "run",
    );
    // Each event: a point select, an update (one row), and every 10th call
    // of a thread an ignored duplicate key, which each thread says.
    let restarts: u64 =
        report.lines().filter_map(|l| l.strip_prefix("restarts ")).map(|n| n.parse::<u64>().unwrap()).sum();
    assert_eq!(report.lines().filter(|l| l.starts_with("restarts ")).count(), 2, "{report}");
    assert!((3..=4).contains(&restarts), "{report}");
    assert_eq!(counts(&report), vec![40, 40, 0, 80, 40, restarts], "{report}");
    assert!(report.contains("       value  ------------- distribution ------------- count\n"), "{report}");
    ok(run_script(&server, "api.lua", &["cleanup"]), "cleanup");
}

/// A script's errors name the script, the line and the function, as
/// sysbench names them, and fail the command.
#[test]
fn script_errors_name_script_line_and_function() {
    let Some((server, _serial)) = setup() else { return };
    let cases: [(&str, &[&str], &str); 6] = [
        ("errors.lua", &["--pipeline=4", "run"], "--pipeline does not apply to a Lua script yet"),
        ("syntax.lua", &["run"], "syntax.lua:3: "),
        ("errors.lua", &["--fail=thread_init", "run"], "`thread_init' function failed: "),
        ("errors.lua", &["--fail=event", "--events=5", "run"], "`thread_run' function failed: "),
        ("errors.lua", &["--fail=sql", "--events=5", "run"], "SQL error, errno = 1146, state = '42S02'"),
        ("errors.lua", &["--nosuch=1", "run"], "invalid option: --nosuch=1"),
    ];
    for (name, args, expected) in cases {
        let output = run_script(&server, name, args);
        let stderr = &output.stderr;
        assert!(!output.succeeded(), "{name} {args:?} succeeded");
        assert!(stderr.contains(expected), "{name} {args:?}: {stderr}");
        if name == "errors.lua" && (expected.contains("failed") || expected.starts_with("SQL")) {
            assert!(stderr.contains("errors.lua:"), "{name} {args:?} names no line: {stderr}");
        }
    }
}

/// tests/lua/report_hooks.lua: report_intermediate and report_cumulative
/// replace the reports (interim lines, checkpoints, the final report) and
/// get sysbench's stat table; the script asserts the fields' types.
#[test]
fn report_hooks_replace_the_reports() {
    let Some((server, _serial)) = setup() else { return };
    let counted = ok(run_script(&server, "report_hooks.lua", &["--events=50", "--threads=2", "run"]), "events");
    assert!(
        counted.contains("\ncumulative threads_running=0 events=50 reads=50 writes=0 other=50 errors=0 reconnects=0\n"),
        "{counted}"
    );
    assert!(!counted.contains("SQL statistics:"), "{counted}");
    let timed = ok(
        run_script(
            &server,
            "report_hooks.lua",
            &["--time=3", "--report-interval=1", "--report-checkpoints=2", "--threads=2", "run"],
        ),
        "timed",
    );
    let lines: Vec<&str> =
        timed.lines().filter(|l| l.contains("threads_running=") || l.contains("Checkpoint")).collect();
    assert!(!timed.contains("SQL statistics:") && !timed.contains("] thds:"), "{timed}");
    let at = lines.iter().position(|l| *l == "[ 2s ] Checkpoint report:").unwrap_or_else(|| panic!("{timed}"));
    assert!(lines[at + 1].starts_with("cumulative threads_running=2 "), "{timed}");
    assert!(lines.last().unwrap().starts_with("cumulative threads_running=0 "), "{timed}");
    assert!(lines.iter().filter(|l| l.starts_with("intermediate threads_running=2 ")).count() >= 2, "{timed}");
    let cumulative = lines.iter().filter(|l| l.starts_with("cumulative")).count();
    assert_eq!(cumulative, 2, "{timed}");
}

/// `sysbench.rand.uniform_uint64()` as sysbench returns it: a uint64_t
/// cdata with every bit of the draw (a Lua number would round the draws
/// above 2^53). Recorded from sysbench 1.0.20 with the same script and
/// seed; needs no server.
#[test]
fn uniform_uint64_is_sysbench_s_exact_uint64() {
    let output = common::run_wirebench(&[
        script("uint64.lua"),
        "--events=1".into(),
        "--rand-seed=5".into(),
        "--verbosity=0".into(),
        "run".into(),
    ]);
    let expected = "11690631621109684197ULL\n11548090647718126998ULL\n7762135257998954424ULL\n648622287\tcdata\n";
    assert_eq!(ok(output, "uint64.lua"), expected);
}
