//! The command line against what sysbench meant.
//!
//! - Every sysbench command line of `/work/shared/seeds/*.txt` (copied here)
//!   parses to what that sysbench version ran.
//! - The 0.4/0.5 forms run the 0.4/0.5 tests (`Bench::legacy`), with a note
//!   per legacy option.
//! - Refusals are one line that names the option and what to do; random
//!   argument soup never panics.
//! - `parity_with_sysbench` runs the installed sysbench 1.0.20 on a list of
//!   option lines: whatever it refuses, wirebench refuses, except for a few
//!   listed, deliberate extensions. Without a sysbench binary
//!   (`WIREBENCH_SYSBENCH` names one) the sysbench tests are skipped, unless
//!   `WIREBENCH_REQUIRE_SERVER=1`.

use crate::common;

use common::{sysbench, ScratchDir};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command as Process, Stdio};
use std::time::{Duration, Instant};

use wirebench::cli::{
    parse, test_help, Bench, CliError, Command, Dialect, ForcedShutdown, Invocation, Personality, StartupWarning,
};
use wirebench::client::Endpoint;
use wirebench::driver::{Arrival, IgnoreErrors, IoBackend, PollMode, PsMode};
use wirebench::rand::Distribution;
use wirebench::workload::legacy::{Dist04, EngineTrx, LegacyTest, NontrxMode, Oltp04Mode, Rand04, Seed04};
use wirebench::workload::Test;

// ---------------------------------------------------------------------------
// Shell splitting for the pasted command lines

/// Splits a pasted command line as a shell would: blanks separate words,
/// `'…'` and `"…"` quote, a backslash escapes (and `\` + newline joins
/// lines), and an unquoted `>`, `|` or `;` ends the command. Newlines count
/// as blanks, because blogs break long commands anywhere. The program name
/// (`sysbench`, `sysbench-0.5`, ...) is dropped.
fn shell_split(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '"' => {
                in_word = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => word.extend(chars.next()),
                        _ => word.push(q),
                    }
                }
            }
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(escaped) => {
                    in_word = true;
                    word.push(escaped);
                }
            },
            '>' | '|' | ';' => break,
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    if words.first().is_some_and(|w| w.starts_with("sysbench")) {
        words.remove(0);
    }
    words
}

fn os(words: &[String]) -> Vec<OsString> {
    words.iter().map(OsString::from).collect()
}

fn parse_line(line: &str) -> Result<Invocation, CliError> {
    parse(os(&shell_split(line)))
}

fn bench(line: &str) -> Bench {
    match parse_line(line) {
        Ok(Invocation::Bench(bench)) => *bench,
        other => panic!("{line}\n  parsed to {other:?}"),
    }
}

fn refused(line: &str) -> CliError {
    match parse_line(line) {
        Err(err) => err,
        Ok(ok) => panic!("{line}\n  was accepted: {ok:?}"),
    }
}

fn has_note(bench: &Bench, needle: &str) -> bool {
    bench.notes.iter().any(|n| n.contains(needle))
}

#[test]
fn shell_split_handles_quotes_continuations_and_redirections() {
    assert_eq!(shell_split("sysbench a  'b c' \"d\\\"e\" f\\ g"), ["a", "b c", "d\"e", "f g"]);
    assert_eq!(shell_split("sysbench a \\\n b >>/tmp/log c"), ["a", "b"]);
    assert_eq!(shell_split("sysbench-0.5 --x=1\n--y=2 run"), ["--x=1", "--y=2", "run"]);
    assert_eq!(shell_split("--p='Renwole.com#Node' run"), ["--p=Renwole.com#Node", "run"]);
}

// ---------------------------------------------------------------------------
// The seeds' command lines

/// Seed 000 (sysbench 0.4, MariaDB 10 vs MySQL 5.6). The article shows the
/// command as numbered lines 1.-4.; this is the command they make up.
const SEED_000: &str = "sysbench  --test=oltp --mysql-table-engine=innodb    
--oltp-table-size=10000000 --max-requests=0 --max-time=900    
--num-threads=512 --mysql-host=10.8.8.100 --mysql-port=3308    
--mysql-user=admin --mysql-password=123456  --mysql-db=test run ";

/// Seed 001 (sysbench 0.4), scenes 1 and 2 (the same line).
const SEED_001_WRITES: &str = "sysbench --test=oltp --mysql-table-engine=innodb --oltp-table-size=2000000 --oltp-distinct-ranges=0 --mysql-db=test --mysql-user=root --mysql-password=123456 --oltp-order-ranges=0 --oltp-range-size=100 --oltp-point-selects=0 --oltp-simple-ranges=0 --oltp-sum-ranges=0 --oltp-test-mode=complex --max-requests=2000000 --num-threads=20 --max-time=40 run";

/// Seed 001, scene 3.
const SEED_001_READS: &str = "sysbench --test=oltp --mysql-table-engine=innodb --oltp-table-size=2000000 --oltp-distinct-ranges=0 --mysql-db=test --mysql-user=root --mysql-password=123456 --oltp-read-only=on --oltp-test-mode=complex --max-requests=2000000 --num-threads=20 --max-time=40 run";

/// Seed 001, scene 4.
const SEED_001_UPDATE_KEY: &str = "sysbench --test=oltp --mysql-table-engine=innodb --oltp-table-size=2000000 --oltp-distinct-ranges=0 --mysql-db=test --mysql-user=root --mysql-password=123456 --oltp-nontrx-mode=update_key --oltp-test-mode=nontrx --max-requests=2000000 --num-threads=30 --max-time=40 run";

/// Seed 002 (sysbench 0.5), as printed, with `--num-threads=...` standing
/// for each client count of its table.
const SEED_002: &str = "sysbench-0.5 --test=lua/oltp.lua --oltp-table-size=1000000 
--oltp-read-only=on --oltp_point_selects=1000 
--oltp_sum_ranges=0 --oltp_simple_ranges=0 
--oltp_order_ranges=0 --oltp_distinct_ranges=0 
--max-requests=0 --max-time=100 --num-threads=... run";
const SEED_002_CLIENTS: [u32; 9] = [1, 2, 4, 8, 16, 32, 64, 128, 256];

/// Seed 003 (sysbench 1.0.20): prepare and run, MySQL and Percona.
const SEED_003_PREPARE_MYSQL: &str = "sysbench /usr/local/sysbench-1.0.20/src/lua/oltp_read_write.lua --mysql-host=127.0.0.1 --mysql-port=13306 --mysql-db=dbtest --mysql-user=wxroot --mysql-password='Renwole.com#Node' --table_size=1000000 --tables=10 --threads=20 --events=0 --report-interval=10 --time=120 --range_size=500 prepare";
const SEED_003_RUN_MYSQL: &str = "sysbench /usr/local/sysbench-1.0.20/src/lua/oltp_read_write.lua --mysql-host=127.0.0.1 --mysql-port=13306 --mysql-db=dbtest  --mysql-user=wxroot --mysql-password='Renwole.com#Node' --table_size=1000000 --tables=10 --threads=20 --events=0 --report-interval=10 --time=120 --range_size=500 run >>/opt/sysbench/result/oltp_read_write.log";
const SEED_003_PREPARE_PERCONA: &str = "sysbench /usr/local/sysbench-1.0.20/src/lua/oltp_read_write.lua --mysql-host=127.0.0.1 --mysql-port=13306 --mysql-db=dbtest --mysql-user=root --mysql-password='new_password' --table_size=1000000 --tables=10 --threads=20 --events=0 --report-interval=10 --time=120 --range_size=500 prepare";
const SEED_003_RUN_PERCONA: &str = "sysbench /usr/local/sysbench-1.0.20/src/lua/oltp_read_write.lua --mysql-host=127.0.0.1 --mysql-port=13306 --mysql-db=dbtest  --mysql-user=wxroot --mysql-password='new_password' --table_size=1000000 --tables=10 --threads=20 --events=0 --report-interval=10 --time=120 --range_size=500 run >>oltp_read_write.log";

/// Seed 004 (sysbench 0.4), as printed: without a command.
const SEED_004: &str = "sysbench --test=oltp --mysql-table-engine=innodb --oltp-table-size=40000000 \\
--oltp-test-mode=complex --max-requests=0 --max-time=600 \\
--num-threads=128";

#[test]
fn seed_000_oltp_complex_512_threads_900_seconds() {
    let b = bench(SEED_000);
    assert_eq!((b.test, b.command, b.dialect), (Test::OltpReadWrite, Command::Run, Dialect::V0_4));
    assert_eq!((b.legacy, b.legacy_options.oltp04_mode), (Some(LegacyTest::Oltp04), Oltp04Mode::Complex));
    assert_eq!(b.general.threads, 512);
    assert_eq!(b.general.time, Some(900));
    assert_eq!(b.general.events, None, "--max-requests=0 is no limit");
    assert_eq!(b.test_options.table_size, 10_000_000);
    assert_eq!(b.test_options.tables, 1);
    assert_eq!(b.test_options.mysql_storage_engine, "innodb");
    assert_eq!(b.mysql.servers.hosts, ["10.8.8.100"]);
    assert_eq!(b.mysql.servers.ports, [3308]);
    assert_eq!((b.mysql.user.as_str(), b.mysql.password.as_str(), b.mysql.db.as_str()), ("admin", "123456", "test"));
    assert_eq!(b.test_options.point_selects, 10);
    assert!(
        has_note(&b, "legacy --test=oltp: sysbench 0.4's oltp test, a transaction of reads and writes"),
        "{:#?}",
        b.notes
    );
    // One note per legacy option, naming it as written.
    for option in [
        "--mysql-table-engine=innodb",
        "--oltp-table-size=10000000",
        "--max-requests=0",
        "--max-time=900",
        "--num-threads=512",
    ] {
        assert!(has_note(&b, &format!("legacy {option}")), "no note for {option}: {:#?}", b.notes);
    }
}

#[test]
fn seed_001_scenes() {
    for b in [bench(SEED_001_WRITES), bench(SEED_001_READS), bench(SEED_001_UPDATE_KEY)] {
        assert_eq!(b.general.events, Some(2_000_000));
        assert_eq!(b.general.time, Some(40));
        assert_eq!(b.test_options.table_size, 2_000_000);
        assert_eq!(b.test_options.distinct_ranges, 0);
        assert_eq!((b.mysql.user.as_str(), b.mysql.db.as_str()), ("root", "test"));
    }

    let writes = bench(SEED_001_WRITES);
    assert_eq!(writes.test, Test::OltpReadWrite);
    assert_eq!(writes.general.threads, 20);
    let t = &writes.test_options;
    assert_eq!(
        (t.point_selects, t.simple_ranges, t.sum_ranges, t.order_ranges, t.distinct_ranges),
        (0, 0, 0, 0, 0),
        "no reads left"
    );
    assert_eq!((t.index_updates, t.non_index_updates, t.delete_inserts, t.range_size), (1, 1, 1, 100));
    assert!(has_note(&writes, "legacy --test=oltp --oltp-test-mode=complex: sysbench 0.4's oltp test"));
    assert_eq!(writes.legacy, Some(LegacyTest::Oltp04));

    let reads = bench(SEED_001_READS);
    assert_eq!(reads.test, Test::OltpReadOnly);
    assert!(reads.legacy_options.read_only);
    assert_eq!(reads.test_options.point_selects, 10);
    assert!(has_note(&reads, "--oltp-read-only=on"));

    let update = bench(SEED_001_UPDATE_KEY);
    assert_eq!(update.test, Test::OltpUpdateIndex);
    assert_eq!(update.legacy_options.oltp04_mode, Oltp04Mode::Nontrx(NontrxMode::UpdateKey));
    assert_eq!(update.general.threads, 30);
    assert_eq!(update.test_options.index_updates, 1);
    assert!(
        has_note(
            &update,
            "legacy --test=oltp --oltp-test-mode=nontrx --oltp-nontrx-mode=update_key: sysbench 0.4's oltp test, \
             nontrx mode update_key: one UPDATE of k per event"
        ),
        "{:#?}",
        update.notes
    );
    assert!(has_note(&update, "--oltp-distinct-ranges=0: --distinct-ranges=0"));
}

#[test]
fn seed_002_read_only_with_1000_point_selects() {
    // As printed, the line is not runnable: sysbench refuses '...' too.
    let err = parse_line(SEED_002).unwrap_err();
    assert!(err.to_string().contains("--num-threads"), "{err}");

    for clients in SEED_002_CLIENTS {
        let b = bench(&SEED_002.replace("--num-threads=...", &format!("--num-threads={clients}")));
        assert_eq!((b.test, b.command, b.dialect), (Test::OltpReadOnly, Command::Run, Dialect::V0_5));
        assert_eq!(b.legacy, Some(LegacyTest::Oltp05));
        assert!(b.legacy_options.read_only);
        assert_eq!(b.general.threads, clients);
        assert_eq!(b.general.time, Some(100));
        assert_eq!(b.general.events, None);
        let t = &b.test_options;
        assert_eq!(t.table_size, 1_000_000);
        assert_eq!(t.point_selects, 1000);
        assert_eq!((t.simple_ranges, t.sum_ranges, t.order_ranges, t.distinct_ranges), (0, 0, 0, 0));
        assert!(t.range_selects);
        assert!(
            has_note(
                &b,
                "legacy --test=lua/oltp.lua --oltp-read-only=on: sysbench 0.5's oltp.lua, a transaction of reads only"
            ),
            "{:#?}",
            b.notes
        );
    }
}

#[test]
fn seed_003_sysbench_1_0_20_lua_paths() {
    for (line, command, user, password) in [
        (SEED_003_PREPARE_MYSQL, Command::Prepare, "wxroot", "Renwole.com#Node"),
        (SEED_003_RUN_MYSQL, Command::Run, "wxroot", "Renwole.com#Node"),
        (SEED_003_PREPARE_PERCONA, Command::Prepare, "root", "new_password"),
        (SEED_003_RUN_PERCONA, Command::Run, "wxroot", "new_password"),
    ] {
        let b = bench(line);
        assert_eq!((b.test, b.command, b.dialect), (Test::OltpReadWrite, command, Dialect::V1_0));
        assert_eq!(b.general.threads, 20);
        assert_eq!(b.general.time, Some(120));
        assert_eq!(b.general.events, None);
        assert_eq!(b.general.report_interval, Some(10));
        assert_eq!((b.test_options.table_size, b.test_options.tables, b.test_options.range_size), (1_000_000, 10, 500));
        assert_eq!(b.mysql.servers.endpoint(0), Endpoint::tcp("127.0.0.1", 13306));
        assert_eq!((b.mysql.user.as_str(), b.mysql.password.as_str(), b.mysql.db.as_str()), (user, password, "dbtest"));
        assert!(b.notes.is_empty(), "a plain 1.0.20 line needs no note: {:#?}", b.notes);
    }
}

#[test]
fn seed_004_needs_a_command_as_0_4_did() {
    // sysbench 0.4 answered "Missing required command argument."
    let err = refused(SEED_004);
    assert!(matches!(err, CliError::MissingCommand { .. }), "{err}");
    assert!(err.to_string().contains("add run"), "{err}");

    let b = bench(&format!("{SEED_004} run"));
    assert_eq!((b.test, b.command), (Test::OltpReadWrite, Command::Run));
    assert_eq!(b.general.threads, 128);
    assert_eq!(b.general.time, Some(600));
    assert_eq!(b.general.events, None);
    assert_eq!(b.test_options.table_size, 40_000_000);
}

// ---------------------------------------------------------------------------
// sysbench 1.0.20 syntax

#[test]
fn defaults_are_sysbench_1_0_20s() {
    let b = bench("oltp_read_write run");
    let g = &b.general;
    assert_eq!((g.threads, g.time, g.events, g.rate, g.report_interval), (1, Some(10), None, None, None));
    assert_eq!((g.percentile, g.histogram, g.forced_shutdown, g.verbosity), (Some(95), false, ForcedShutdown::Off, 3));
    assert_eq!(g.thread_stack_size, 64 * 1024);
    assert_eq!(b.rand.distribution, Distribution::Special);
    assert_eq!((b.rand.spec_iter, b.rand.spec_pct, b.rand.spec_res, b.rand.seed), (12, 1, 75, 0));
    assert_eq!(b.rand.pareto_h, 0.2);
    assert_eq!(b.db.ps_mode, PsMode::Auto);
    assert_eq!(b.mysql.servers.hosts, ["localhost"]);
    assert_eq!(b.mysql.servers.ports, [3306]);
    assert!(b.mysql.servers.sockets.is_empty());
    assert_eq!((b.mysql.user.as_str(), b.mysql.password.as_str(), b.mysql.db.as_str()), ("sbtest", "", "sbtest"));
    assert_eq!(b.mysql.ignore_errors, IgnoreErrors::List(vec![1213, 1020, 1205]));
    let t = &b.test_options;
    assert_eq!((t.tables, t.table_size, t.range_size, t.point_selects), (1, 10_000, 100, 10));
    assert_eq!((t.simple_ranges, t.sum_ranges, t.order_ranges, t.distinct_ranges), (1, 1, 1, 1));
    assert_eq!((t.index_updates, t.non_index_updates, t.delete_inserts), (1, 1, 1));
    assert_eq!(
        (t.range_selects, t.auto_inc, t.skip_trx, t.secondary, t.create_secondary),
        (true, true, false, false, true)
    );
    assert_eq!(t.mysql_storage_engine, "innodb");
    assert_eq!((t.random_points, t.number_of_ranges, t.delta), (10, 10, 5));
    assert_eq!(b.engine.cpus, None);
    assert_eq!((b.engine.io, b.engine.poll, b.engine.pipeline), (IoBackend::Auto, PollMode::Auto, 1));
    assert!(b.notes.is_empty());
}

#[test]
fn options_anywhere_dashes_and_underscores_lists_and_flags() {
    let b = bench(
        "--threads=8 oltp_read_only --table_size=500 --table-size=600 run --skip-trx --range_selects=off \
         --mysql-host=a,b --mysql-port=1,2,3 --mysql_ignore_errors=1062,all --report-checkpoints=60,10 \
         --rand-type=pareto --rand_pareto_h=0.3 --rand-seed=-7 --percentile=99 --histogram=on --forced-shutdown=5% \
         --db-ps-mode=disable --cpus=0,2-3 --io=epoll --poll=spin --pipeline=4",
    );
    assert_eq!((b.test, b.command), (Test::OltpReadOnly, Command::Run));
    assert_eq!(b.general.threads, 8);
    assert_eq!(b.test_options.table_size, 600, "the last one wins");
    assert!(b.test_options.skip_trx);
    assert!(!b.test_options.range_selects);
    assert_eq!(b.mysql.ignore_errors, IgnoreErrors::All);
    assert_eq!(b.general.report_checkpoints, [10, 60]);
    assert_eq!((b.rand.distribution, b.rand.pareto_h, b.rand.seed), (Distribution::Pareto, 0.3, -7));
    assert_eq!((b.general.percentile, b.general.histogram), (Some(99), true));
    assert_eq!(b.general.forced_shutdown, ForcedShutdown::PercentOfTime(5));
    assert_eq!(b.general.forced_shutdown.grace_secs(b.general.time), Some(0));
    assert_eq!(b.db.ps_mode, PsMode::Disable);
    assert_eq!(b.engine.cpus, Some(vec![0, 2, 3]));
    assert_eq!((b.engine.io, b.engine.poll, b.engine.pipeline), (IoBackend::Epoll, PollMode::Spin, 4));
    // Connections go through every port of a host, then the next host.
    let endpoints: Vec<Endpoint> = (0..7).map(|n| b.mysql.servers.endpoint(n)).collect();
    assert_eq!(
        endpoints,
        [
            Endpoint::tcp("a", 1),
            Endpoint::tcp("a", 2),
            Endpoint::tcp("a", 3),
            Endpoint::tcp("b", 1),
            Endpoint::tcp("b", 2),
            Endpoint::tcp("b", 3),
            Endpoint::tcp("a", 1)
        ]
    );

    let sockets = bench("oltp_point_select run --mysql-socket=/s1,/s2 --mysql-host=ignored");
    assert_eq!(sockets.mysql.servers.endpoint(0), Endpoint::unix("/s1"));
    assert_eq!(sockets.mysql.servers.endpoint(3), Endpoint::unix("/s2"));
}

#[test]
fn deprecated_1_0_aliases_win_only_above_their_defaults() {
    let b =
        bench("oltp_read_write run --num-threads=4 --threads=8 --max-requests=100 --events=5 --max-time=3 --tx-rate=9");
    assert_eq!((b.general.threads, b.general.events, b.general.time, b.general.rate), (4, Some(100), Some(3), Some(9)));
    // As sysbench 1.0.20 warns, in its order.
    let warned: Vec<String> = b.warnings.iter().map(StartupWarning::sysbench_text).collect();
    assert_eq!(
        warned,
        [
            "WARNING: --num-threads is deprecated, use --threads instead",
            "WARNING: --max-requests is deprecated, use --events instead",
            "WARNING: --max-time is deprecated, use --time instead",
            "WARNING: --tx-rate is deprecated, use --rate instead",
        ]
    );
    assert!(b.warnings[0].note().starts_with("--num-threads=4 is deprecated"), "{:?}", b.warnings);
    assert!(b.notes.is_empty(), "{:#?}", b.notes);

    let b = bench("oltp_read_write run --num-threads=1 --threads=8 --max-requests=0 --events=5 --max-time=0");
    assert_eq!((b.general.threads, b.general.events, b.general.time), (8, Some(5), Some(10)));
    assert!(b.warnings.is_empty(), "{:?}", b.warnings);

    let b = bench("--test=oltp_read_write run");
    assert_eq!(b.test, Test::OltpReadWrite);
    assert_eq!(b.warnings.len(), 1);
    assert!(b.warnings[0].note().starts_with("--test=oltp_read_write is deprecated"));
    assert!(!b.warnings[0].sysbench_on_stdout());

    let b = bench("oltp_read_write prepare --time=0");
    assert_eq!(b.warnings, [StartupWarning::NoLimit]);
    assert!(bench("oltp_read_write prepare --time=0 --events=1").warnings.is_empty());
}

#[test]
fn every_script_path_and_name() {
    for test in Test::ALL {
        let command = if test == Test::BulkInsert { "run" } else { "help" };
        for name in [test.name().to_owned(), format!("/usr/share/sysbench/{}.lua", test.name())] {
            let b = bench(&format!("{name} {command}"));
            assert_eq!(b.test, test, "{name}");
        }
    }
}

#[test]
fn point_select_runs_one_select_per_event() {
    let b = bench("oltp_point_select run --point-selects=5 --index-updates=3");
    assert_eq!(b.test_options.point_selects, 1);
    assert!(has_note(&b, "--point-selects=5: oltp_point_select runs 1 point select"), "{:#?}", b.notes);
    assert!(has_note(&b, "--index-updates=3: ignored by oltp_point_select"), "{:#?}", b.notes);
    // Options that only shape prepare are never "ignored".
    let b = bench("oltp_update_index run --tables=4 --table-size=99 --secondary=on --mysql_storage_engine=myisam");
    assert!(b.notes.is_empty(), "{:#?}", b.notes);
}

#[test]
fn select_random_tests_use_sbtest1_only() {
    let b = bench("select_random_points run --tables=3 --random-points=20");
    assert_eq!(b.test_options.random_points, 20);
    assert!(has_note(&b, "reads only sbtest1"));
    assert!(bench("select_random_points prepare --tables=3").notes.is_empty());
    let err = refused("select_random_ranges cleanup --tables=3");
    assert!(err.to_string().contains("does not support --tables > 1"), "{err}");
    let b = bench("select_random_ranges run --number-of-ranges=3 --delta=7");
    assert_eq!((b.test_options.number_of_ranges, b.test_options.delta), (3, 7));
}

#[test]
fn help_and_version() {
    assert_eq!(parse_line("--help").unwrap(), Invocation::Help { null_server: false });
    assert_eq!(parse_line("oltp_read_write run --help").unwrap(), Invocation::Help { null_server: false });
    assert_eq!(parse_line("--version").unwrap(), Invocation::Version);
    assert_eq!(bench("oltp_read_write help").command, Command::Help);
    assert!(refused("oltp_read_write help --foo=1").to_string().contains("--foo"));
    assert!(matches!(refused("bulk_insert help"), CliError::UnsupportedCommand { .. }));
    assert!(matches!(refused("bulk_insert prewarm"), CliError::UnsupportedCommand { .. }));
    assert_eq!(bench("oltp_read_only prewarm").command, Command::Prewarm);
}

#[test]
fn null_server() {
    match parse_line("null-server --listen=127.0.0.1:3307 --socket=/tmp/n.sock --cpus=1-2").unwrap() {
        Invocation::NullServer(options) => {
            assert_eq!(options.listen, Some("127.0.0.1:3307".parse().unwrap()));
            assert_eq!(options.socket, Some(PathBuf::from("/tmp/n.sock")));
            assert_eq!(options.cpus, Some(vec![1, 2]));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(parse_line("null-server --help").unwrap(), Invocation::Help { null_server: true });
    assert!(refused("null-server").to_string().contains("--listen"));
    assert!(refused("null-server --listen=3307 --threads=2").to_string().contains("not a null-server option"));
    assert!(refused("null-server --lisen=3307").to_string().contains("did you mean --listen?"));
    assert!(matches!(refused("null-server --listen=nowhere:x"), CliError::InvalidValue { .. }));
    let several = refused("null-server --listen=127.0.0.1:3307,3308").to_string();
    assert!(several.contains("listens on one TCP address"), "{several}");
}

#[test]
fn config_file_then_command_line() {
    let dir = ScratchDir::new("config");
    let path = dir.0.join("sb.cfg");
    std::fs::write(
        &path,
        "# a comment line\nthreads=4\nmysql-host=db1, db2\nmysql-password = \"pass word\"\ntable_size=77\n\
         report-interval=5 # trailing\nhistogram=off\n",
    )
    .unwrap();
    let b = bench(&format!("oltp_read_write run --config-file={} --report-interval=2", path.display()));
    assert_eq!(b.general.threads, 4);
    assert_eq!(b.mysql.servers.hosts, ["db1", "db2"]);
    assert_eq!(b.mysql.password, "pass word");
    assert_eq!(b.test_options.table_size, 77);
    assert_eq!(b.general.report_interval, Some(2), "the command line wins");
    assert!(!b.general.histogram);
    assert!(has_note(&b, "histogram=off read as off"), "{:#?}", b.notes);
    assert!(has_note(&b, "blanks around it"), "{:#?}", b.notes);

    std::fs::write(&path, "thraeds=4\n").unwrap();
    let err = refused(&format!("oltp_read_write run --config-file={}", path.display()));
    assert!(err.to_string().contains("did you mean --threads?"), "{err}");
    assert!(err.to_string().contains("line 1"), "{err}");
    let err = refused("oltp_read_write run --config-file=/nonexistent/wirebench.cfg");
    assert!(matches!(err, CliError::ConfigFile { .. }), "{err}");
}

/// An option file is small: an endless device, a huge file and a FIFO
/// nobody writes are refused in one line, quickly, without reading them
/// whole.
#[test]
fn config_file_is_read_within_a_bound() {
    let err = refused("oltp_read_write run --config-file=/dev/zero").to_string();
    assert!(err.starts_with("config file /dev/zero: it holds more than 1048576 bytes (1 MiB)"), "{err}");

    let dir = ScratchDir::new("config-bound");
    let huge = dir.write("huge.cfg", &"# padding\n".repeat(200_000));
    let err = refused(&format!("oltp_read_write run --config-file={}", huge.display())).to_string();
    assert!(err.contains("huge.cfg: it holds more than 1048576 bytes"), "{err}");

    let fifo = dir.0.join("never.fifo");
    assert!(Process::new("mkfifo").arg(&fifo).status().unwrap().success());
    let started = Instant::now();
    let err = refused(&format!("oltp_read_write run --config-file={}", fifo.display())).to_string();
    assert!(err.contains("never.fifo: still reading after 5 s"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(15), "{:?}", started.elapsed());
    assert!(!err.contains('\n'));
}

// ---------------------------------------------------------------------------
// sysbench 0.4/0.5 syntax

#[test]
fn legacy_0_4_modes() {
    use Oltp04Mode::{Complex, Nontrx, Simple};
    for (options, test, mode) in [
        ("", Test::OltpReadWrite, Complex),
        ("--oltp-test-mode=complex --oltp-read-only=on", Test::OltpReadOnly, Complex),
        ("--oltp-write-only", Test::OltpWriteOnly, Complex),
        ("--oltp-test-mode=simple", Test::OltpPointSelect, Simple),
        ("--oltp-test-mode=nontrx", Test::OltpPointSelect, Nontrx(NontrxMode::Select)),
        ("--oltp-test-mode=nontrx --oltp-nontrx-mode=select", Test::OltpPointSelect, Nontrx(NontrxMode::Select)),
        ("--oltp-test-mode=nontrx --oltp-nontrx-mode=update_key", Test::OltpUpdateIndex, Nontrx(NontrxMode::UpdateKey)),
        (
            "--oltp-test-mode=nontrx --oltp-nontrx-mode=update_nokey",
            Test::OltpUpdateNonIndex,
            Nontrx(NontrxMode::UpdateNokey),
        ),
        ("--oltp-test-mode=nontrx --oltp-nontrx-mode=insert", Test::OltpInsert, Nontrx(NontrxMode::Insert)),
        ("--oltp-test-mode=nontrx --oltp-nontrx-mode=delete", Test::OltpDelete, Nontrx(NontrxMode::Delete)),
    ] {
        let b = bench(&format!("sysbench --test=oltp {options} run"));
        assert_eq!(
            (b.test, b.legacy, b.legacy_options.oltp04_mode),
            (test, Some(LegacyTest::Oltp04), mode),
            "{options}"
        );
    }
    let b = bench("--test=oltp --oltp-write-only run");
    assert!(b.legacy_options.write_only && !b.legacy_options.read_only);
    let b = bench("--test=oltp --oltp-test-mode=nontrx --oltp-read-only=on run");
    assert!(has_note(&b, "--oltp-read-only=on: ignored in --oltp-test-mode=nontrx"), "{:#?}", b.notes);
    let b = bench("--test=oltp --oltp-test-mode=nontrx run");
    assert!(has_note(&b, "nontrx mode select: one SELECT pad per event"), "{:#?}", b.notes);
    let b = bench("--test=oltp --oltp-test-mode=nontrx --oltp-nontrx-mode=insert run");
    assert!(has_note(&b, "TRUNCATE TABLE sbtest before the run"), "{:#?}", b.notes);
}

/// `--test=oltp` is 0.5's oltp.lua (found in 0.5's data directory) on a
/// line with 0.5's options, and both kinds together are refused.
#[test]
fn bare_oltp_on_a_0_5_line() {
    for option in ["--oltp-tables-count=8", "--oltp-create-secondary=off", "--rand-init=on", "--mysql-table-options=X"]
    {
        let b = bench(&format!("--test=oltp {option} run"));
        assert_eq!((b.legacy, b.dialect), (Some(LegacyTest::Oltp05), Dialect::V0_5), "{option}");
        assert!(has_note(&b, &format!("legacy --test=oltp with {option} (a 0.5 option): 0.5's oltp.lua")));
    }
    let b = bench("--test=oltp --oltp-tables-count=8 --oltp-read-only=on run");
    assert_eq!((b.test, b.test_options.tables), (Test::OltpReadOnly, 8));
    assert!(b.legacy_options.read_only);
    let err = refused("--test=oltp --oltp-tables-count=8 --oltp-test-mode=complex run").to_string();
    assert!(err.contains("--oltp-test-mode=complex (a sysbench 0.4 option) and --oltp-tables-count=8"), "{err}");
    assert_eq!(bench("--test=oltp --oltp-test-mode=complex run").legacy, Some(LegacyTest::Oltp04));
}

#[test]
fn legacy_0_5_scripts() {
    for (script, test, legacy) in [
        ("oltp.lua", Test::OltpReadWrite, LegacyTest::Oltp05),
        ("oltp_simple.lua", Test::OltpPointSelect, LegacyTest::OltpSimple05),
        ("select.lua", Test::OltpPointSelect, LegacyTest::Select05),
        ("insert.lua", Test::OltpInsert, LegacyTest::Insert05),
        ("delete.lua", Test::OltpDelete, LegacyTest::Delete05),
        ("update_index.lua", Test::OltpUpdateIndex, LegacyTest::UpdateIndex05),
        ("update_non_index.lua", Test::OltpUpdateNonIndex, LegacyTest::UpdateNonIndex05),
        ("select_random_points.lua", Test::SelectRandomPoints, LegacyTest::SelectRandomPoints05),
        ("select_random_ranges.lua", Test::SelectRandomRanges, LegacyTest::SelectRandomRanges05),
        ("bulk_insert.lua", Test::BulkInsert, LegacyTest::BulkInsert05),
    ] {
        for dir in ["tests/db/", "/usr/local/src/sysbench-0.5/sysbench/tests/db/", "tests/include/oltp_legacy/"] {
            let b = bench(&format!("--test={dir}{script} --oltp-tables-count=8 --num-threads=2 run"));
            assert_eq!((b.test, b.legacy), (test, Some(legacy)), "{dir}{script}");
            assert_eq!(b.test_options.tables, 8);
            assert!(has_note(&b, &format!("legacy --test={dir}{script}: sysbench 0.5's {script}")), "{:#?}", b.notes);
        }
    }
    let b = bench("--test=tests/db/oltp.lua --oltp-write-only=on --oltp-test-mode=nontrx run");
    assert_eq!(b.test, Test::OltpWriteOnly);
    assert!(b.legacy_options.write_only);
    assert!(has_note(&b, "--oltp-test-mode=nontrx: ignored, as 0.5's oltp.lua ignored it"), "{:#?}", b.notes);
    let b = bench("--test=tests/db/parallel_prepare.lua --oltp-tables-count=16 --num-threads=4 run");
    assert_eq!((b.test, b.command, b.test_options.tables), (Test::OltpReadWrite, Command::Prepare, 16));
    assert_eq!(b.legacy, Some(LegacyTest::ParallelPrepare05));
    let b = bench("--test=tests/db/select_random_ranges.lua --random-ranges-delta=9 --number-of-ranges=4 run");
    assert_eq!((b.test_options.delta, b.test_options.number_of_ranges), (9, 4));
    let err = refused("--test=tests/db/oltp.lua prewarm").to_string();
    assert!(err.contains("no prewarm"), "{err}");
}

#[test]
fn legacy_limits_and_defaults() {
    // 0.4/0.5: 10000 requests and no time limit unless told otherwise.
    let b = bench("--test=oltp run");
    assert_eq!((b.general.events, b.general.time), (Some(10_000), None));
    assert!(has_note(&b, "default of 10000 requests"));
    assert!(has_note(&b, "no time limit"));
    let b = bench("--test=oltp --max-time=60 run");
    assert_eq!((b.general.events, b.general.time), (Some(10_000), Some(60)));
    let b = bench("--test=oltp --max-requests=0 run");
    assert_eq!((b.general.events, b.general.time), (None, None));
    let b = bench("--test=oltp --max-requests=50 --max-time=0 run");
    assert_eq!((b.general.events, b.general.time), (Some(50), None));
    // A 1.0 limit on a 0.4 line is still a limit.
    let b = bench("--test=oltp --time=30 run");
    assert_eq!((b.general.events, b.general.time), (Some(10_000), Some(30)));
}

#[test]
fn legacy_options_map_to_1_0_options() {
    let b = bench(
        "--test=oltp --oltp-table-size=5 --oltp-range-size=7 --oltp-point-selects=2 --oltp-simple-ranges=3 \
         --oltp-sum-ranges=4 --oltp-order-ranges=5 --oltp-distinct-ranges=6 --oltp-index-updates=7 \
         --oltp-non-index-updates=8 --oltp-delete-inserts=9 --oltp-skip-trx=on --oltp-range-selects=off \
         --oltp-auto-inc=off --oltp-secondary=on --oltp-dist-type=uniform --oltp-dist-iter=3 --oltp-dist-pct=4 \
         --oltp-dist-res=50 --seed-rng=42 --mysql-table-engine=myisam --mysql-create-options=ROW_FORMAT=COMPRESSED \
         --oltp-reconnect-mode=session --oltp-connect-delay=10000 --oltp-user-delay-min=0 --oltp-table-name=sbtest \
         --myisam-max-rows=100 --mysql-engine-trx=auto --tx-jitter=0 run",
    );
    let t = &b.test_options;
    assert_eq!((t.table_size, t.range_size, t.point_selects, t.simple_ranges, t.sum_ranges), (5, 7, 2, 3, 4));
    assert_eq!((t.order_ranges, t.distinct_ranges, t.index_updates, t.non_index_updates), (5, 6, 7, 8));
    assert_eq!(t.delete_inserts, 9);
    assert_eq!((t.skip_trx, t.range_selects, t.auto_inc, t.secondary), (true, false, false, true));
    assert_eq!(t.mysql_storage_engine, "myisam");
    assert_eq!(t.mysql_table_options, "ROW_FORMAT=COMPRESSED");
    assert_eq!(
        (b.rand.distribution, b.rand.spec_iter, b.rand.spec_pct, b.rand.spec_res),
        (Distribution::Uniform, 3, 4, 50)
    );
    assert_eq!(b.rand.seed, 42);
    assert!(has_note(&b, "LOCK TABLES"), "{:#?}", b.notes);
    // One note per legacy option (+ test choice, LOCK TABLES, the default-limit notes).
    let legacy_options = 28;
    assert_eq!(b.notes.iter().filter(|n| n.starts_with("legacy --")).count(), legacy_options + 1, "{:#?}", b.notes);

    let l = &b.legacy_options;
    assert_eq!((l.table_name.as_str(), l.myisam_max_rows, l.engine_trx), ("sbtest", 100, EngineTrx::Auto));
    let rand04 = Rand04 { distribution: Dist04::Uniform, iter: 3, pct: 4, res: 50, seed: Seed04::Srand48(42) };
    assert_eq!(l.rand04, rand04, "0.4's generator and distribution");
    assert_eq!(bench("--test=oltp run").legacy_options.rand04, Rand04::default());
    assert_eq!(Rand04::default().seed, Seed04::Unseeded, "0.4 seeds nothing unless told");
    assert!(matches!(bench("--test=oltp --init-rng=on run").legacy_options.rand04.seed, Seed04::Srand48(t) if t > 0));
    assert_eq!(bench("--test=oltp --seed-rng=0 run").legacy_options.rand04.seed, Seed04::Unseeded);
    let b = bench(
        "--test=oltp --oltp-table-name=orders --mysql-engine-trx=NO --oltp-point-select-all-cols --myisam-max-rows=0 \
         run",
    );
    let l = &b.legacy_options;
    assert_eq!((l.table_name.as_str(), l.engine_trx, l.point_select_all_cols), ("orders", EngineTrx::No, true));
    assert_eq!(l.myisam_max_rows, 0);
    assert!(has_note(&b, "LOCK TABLES"), "{:#?}", b.notes);
    let b = bench("--test=tests/db/oltp.lua --oltp-table-name=orders --mysql-engine-trx=no run");
    assert_eq!((b.legacy_options.table_name.as_str(), b.legacy_options.engine_trx), ("sbtest", EngineTrx::Auto));
    assert!(has_note(&b, "--oltp-table-name=orders: ignored, as 0.5's oltp.lua ignored it"), "{:#?}", b.notes);

    let b = bench("--test=oltp --init-rng=on run");
    assert_eq!(b.rand.seed, 0);
    assert!(has_note(&b, "--init-rng=on: --rand-seed=0"));
    let b = bench("--test=tests/db/oltp.lua --rand-init=on --rand-seed=5 run");
    assert_eq!(b.rand.seed, 5, "the last one written wins");
    let b = bench("--test=tests/db/oltp.lua --rand-seed=5 --rand-init=on run");
    assert_eq!(b.rand.seed, 0, "the last one written wins");
}

#[test]
fn legacy_options_without_equivalent_are_refused() {
    for (line, needle) in [
        ("--test=oltp --oltp-reconnect-mode=transaction run", "keeps each connection"),
        ("--test=oltp --oltp-reconnect-mode=random run", "keeps each connection"),
        ("--test=oltp --oltp-user-delay-min=10 run", "--rate"),
        ("--test=oltp --oltp-user-delay-max=10 run", "--rate"),
        ("--test=oltp --oltp-test-mode=sp --oltp-sp-name=p run", "stored procedure"),
        ("--test=oltp --oltp-sp-name=p run", "stored procedure"),
        ("--test=oltp --oltp-point-select-mysql-handler=on run", "drop the option"),
        ("--test=oltp --tx-jitter=100 run", "Poisson"),
        ("--test=tests/db/oltp.lua --oltp-reconnect=on run", "keeps each connection"),
    ] {
        let err = refused(line);
        assert!(matches!(err, CliError::NoEquivalent { .. }), "{line}: {err:?}");
        assert!(err.to_string().contains("no equivalent"), "{line}: {err}");
        assert!(err.to_string().contains(needle), "{line}: {err}");
    }
    for (line, needle) in [
        ("--test=oltp --oltp-read-only --oltp-write-only run", "mutually exclusive"),
        ("--test=oltp --init-rng=on --seed-rng=3 run", "exclusive"),
        ("--test=oltp --oltp-test-mode=fast run", "simple, complex or nontrx"),
        ("--test=oltp --oltp-test-mode=nontrx --oltp-nontrx-mode=upsert run", "update_key"),
        ("--test=oltp --oltp-table-name=a-b run", "letters, digits"),
        ("--test=oltp --mysql-engine-trx=maybe run", "yes, no or auto"),
        ("--test=oltp --oltp-dist-type=pareto run", "uniform, gaussian or special (sysbench 0.4's)"),
    ] {
        let err = refused(line);
        assert!(err.to_string().contains(needle), "{line}: {err}");
    }
}

// ---------------------------------------------------------------------------
// Refusals

#[test]
fn refusals_name_the_culprit_and_the_fix() {
    for (line, needles) in [
        ("oltp_read_write run --thread=2", &["unknown option --thread", "did you mean --threads?"][..]),
        ("oltp_read_write run --tabel-size=2", &["did you mean --table_size?"]),
        ("oltp_read_only run --tabels=4", &["unknown option --tabels (did you mean --tables?)"]),
        ("oltp_read_write run --threads=abc", &["--threads", "'abc'", "number of threads >= 1"]),
        ("oltp_read_write run --threads=0", &["--threads", "'0'"]),
        ("oltp_read_write run --threads=-1", &["--threads", "'-1'"]),
        ("oltp_read_write run --threads", &["--threads needs a value: --threads=N"]),
        ("oltp_read_write run --time=-5", &["--time", "seconds >= 0"]),
        ("oltp_read_write run --rand-type=foo", &["'foo'", "uniform, gaussian, special or pareto"]),
        ("oltp_read_write run --percentile=101", &["--percentile", "1 to 100"]),
        ("oltp_read_write run --histogram=on --percentile=0", &["--histogram cannot be used with --percentile=0"]),
        ("oltp_read_write run --skip-trx=yes", &["--skip-trx", "on, off, true, false, 1 or 0"]),
        ("oltp_read_write run --table-size=abc", &["--table-size", "number of rows"]),
        ("oltp_read_write run --table-size=0", &["--table-size", "from 1"]),
        ("oltp_read_write run --tables=0", &["--tables", ">= 1"]),
        ("oltp_read_write run --mysql-port=abc", &["--mysql-port", "1 to 65535"]),
        ("oltp_read_write run --mysql-ignore-errors=deadlock", &["1213,1020,1205, or all"]),
        ("oltp_read_write run --db-driver=pgsql", &["MySQL/MariaDB"]),
        ("oltp_read_write run --db-ps-mode=on", &["auto or disable"]),
        ("oltp_read_write run --verbosity=9", &["--verbosity", "0 (critical only) to 5"]),
        ("oltp_read_write run --forced-shutdown=soon", &["--forced-shutdown", "percentage"]),
        ("oltp_read_write run --oltp-table-size=5", &["sysbench 0.4/0.5 option", "use --table-size=5"]),
        ("oltp_read_write run --oltp-read-only=on", &["use the oltp_read_only test"]),
        ("oltp_read_write run --mysql-table-engine=innodb", &["use --mysql-storage-engine=innodb"]),
        ("oltp_read_write run --random-points=5", &["an option of select_random_points, not of oltp_read_write"]),
        ("oltp_read_write run --cpus=a", &["--cpus", "CPU numbers"]),
        ("oltp_read_write run --pipeline=0", &["--pipeline"]),
        ("oltp_read_write run --io=aio", &["auto, uring or epoll"]),
        ("oltp_read_write --threads 4 run", &["write --threads=4"]),
        ("oltp_read_write run extra", &["unexpected argument 'extra'", "--name=value"]),
        ("-threads=4 oltp_read_write run", &["unexpected argument '-threads=4'"]),
        ("oltp_read_writ run", &["unknown test 'oltp_read_writ'", "did you mean oltp_read_write?"]),
        ("fileio run", &["wirebench does not run", "database tests"]),
        ("oltp_read_write frob", &["unknown command 'frob'", "prepare, prewarm, run, cleanup or help"]),
        ("oltp_read_write", &["missing command after 'oltp_read_write'", "add run"]),
        ("run", &["'run' is a command, with no test named before it", "- run < my_test.lua"]),
        ("--threads=2 - run extra", &["unexpected argument 'extra'"]),
    ] {
        let err = refused(line);
        let message = err.to_string();
        assert!(!message.contains('\n'), "{line}: one line, got {message:?}");
        for needle in needles {
            assert!(message.contains(needle), "{line}: {message:?} lacks {needle:?}");
        }
    }
}

/// No test name, or `-` for it, is a Lua script on standard input, as in
/// sysbench 1.0.20; a command may follow `-`.
#[test]
fn no_test_name_is_a_script_on_stdin() {
    use wirebench::lua::{ScriptOrigin, STDIN_SCRIPT_NAME};
    for (line, command) in
        [("", None), ("--threads=2", None), ("- run --threads=2", Some("run")), ("--test=- prepare", Some("prepare"))]
    {
        let b = bench(line);
        let script = b.script.unwrap_or_else(|| panic!("{line:?}: no script"));
        assert_eq!(script.origin, ScriptOrigin::Stdin, "{line:?}");
        assert_eq!(script.path, Path::new(STDIN_SCRIPT_NAME), "{line:?}");
        assert_eq!(script.command.as_deref(), command, "{line:?}");
    }
}

#[test]
fn non_utf8_argument_is_refused() {
    use std::os::unix::ffi::OsStringExt;
    let args = vec![OsString::from("oltp_read_write"), OsString::from_vec(b"--mysql-db=\xff".to_vec())];
    assert!(matches!(parse(args), Err(CliError::NotUnicode(_))));
}

/// `--mysql-server-public-key-path` is read and checked once, at parse
/// time; `--mysql-get-server-public-key` is a flag, off by default.
#[test]
fn server_public_key_options() {
    use rsa::pkcs8::EncodePublicKey;
    let key = rsa::RsaPrivateKey::new(&mut rsa::rand_core::OsRng, 1024).unwrap();
    let pem = key.to_public_key().to_public_key_pem(rsa::pkcs8::LineEnding::LF).unwrap();
    let path = std::env::temp_dir().join(format!("wirebench-cli-key-{}.pem", std::process::id()));
    std::fs::write(&path, &pem).unwrap();
    let given = bench(&format!("oltp_read_write run --mysql-server-public-key-path={}", path.display()));
    assert_eq!(given.mysql.server_key.pem.as_deref(), Some(pem.as_bytes()));
    assert!(!given.mysql.server_key.fetch);
    assert!(bench("oltp_read_write run --mysql-get-server-public-key").mysql.server_key.fetch);
    let default = bench("oltp_read_write run").mysql.server_key;
    assert!(default.pem.is_none() && !default.fetch, "refuse by default, as libmysqlclient");
    std::fs::write(&path, "not a key\n").unwrap();
    for line in [
        format!("oltp_read_write run --mysql-server-public-key-path={}", path.display()),
        "oltp_read_write run --mysql-server-public-key-path=/nonexistent/key.pem".to_owned(),
    ] {
        let message = refused(&line).to_string();
        assert!(!message.contains('\n'), "{line}: one line, got {message:?}");
        assert!(message.starts_with("--mysql-server-public-key-path: cannot use "), "{message}");
        assert!(message.contains("RSA public key in PEM form"), "{message}");
    }
    std::fs::remove_file(path).unwrap();
}

/// Argument soup from pieces of real options never panics.
#[test]
fn random_argument_lists_never_panic() {
    const PIECES: &[&str] = &[
        "oltp_read_write",
        "run",
        "help",
        "prepare",
        "null-server",
        "--test=oltp",
        "--test=tests/db/oltp.lua",
        "--threads=",
        "--threads=4",
        "--threads",
        "--time=-1",
        "--events=99999999999",
        "--rand-type=zipfian",
        "--oltp-test-mode=nontrx",
        "--oltp-nontrx-mode=",
        "--oltp-read-only",
        "--oltp-write-only=1",
        "--max-requests",
        "--config-file",
        "--config-file=/nonexistent",
        "--mysql-port=,",
        "--mysql-ignore-errors=",
        "--cpus=1-0",
        "--listen=",
        "--socket=",
        "--",
        "-",
        "--=",
        "--table-size=1e99",
        "--forced-shutdown=%",
        "--report-checkpoints=,",
        "select_random_points",
        "bulk_insert",
        "cleanup",
        "--tables=2",
        "--percentile=0",
        "--histogram",
        "é",
        "--é=é",
        "--rand-pareto-h=nan",
        "--thread-stack-size=99999999999T",
        "--mysql-host=",
        "--help=maybe",
        "x.lua",
        "/",
    ];
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..20_000 {
        let len = (next() % 7) as usize;
        let args: Vec<OsString> =
            (0..len).map(|_| OsString::from(PIECES[(next() % PIECES.len() as u64) as usize])).collect();
        if let Err(err) = parse(args.clone()) {
            assert!(!err.to_string().contains('\n'), "{args:?}: {err}");
        }
    }
}

// ---------------------------------------------------------------------------
// Against the real sysbench 1.0.20

/// Whether sysbench exits 0 on `args` (run in `dir`, with a time limit).
fn sysbench_accepts(sysbench: &Path, dir: &Path, args: &[String]) -> bool {
    let mut child = Process::new(sysbench)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (status, _) = common::exit_within(&mut child, Duration::from_secs(30))
        .unwrap_or_else(|| panic!("sysbench {args:?} did not finish in 30 s"));
    status.success()
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Outcome {
    /// Both accept.
    Accepted,
    /// Both refuse.
    Refused,
    /// sysbench runs it (with a warning, or silently with a nonsense
    /// value); wirebench refuses.
    Stricter,
    /// sysbench refuses; wirebench accepts on purpose (its own options,
    /// sysbench master options, 0.4/0.5 lines, unchecked script paths).
    Extension,
}

/// Each line gets `--mysql-dry-run` appended, so sysbench never connects;
/// `run` lines carry `--events=1`. `CF` is replaced with a config file.
const PARITY: &[(&str, Outcome)] = &[
    ("oltp_read_write run --events=1", Outcome::Accepted),
    ("--threads=2 oltp_read_write --events=1 run", Outcome::Accepted),
    ("oltp_read_write run --events=1 --threads=+4", Outcome::Accepted),
    ("oltp_read_write run --events=1 --threads=2 --threads=3", Outcome::Accepted),
    ("oltp_read_write run --events=1 --num-threads=4 --threads=8", Outcome::Accepted),
    ("oltp_read_write run --events=1 --max-requests=0 --max-time=5", Outcome::Accepted),
    ("oltp_read_write run --events=1 --skip-trx", Outcome::Accepted),
    ("oltp_read_write run --events=1 --skip-trx=off --range_selects=true --auto-inc=1", Outcome::Accepted),
    ("oltp_read_write run --events=1 --forced-shutdown=10%", Outcome::Accepted),
    ("oltp_read_write run --events=1 --forced-shutdown=OFF", Outcome::Accepted),
    ("oltp_read_write run --events=1 --mysql-ignore-errors=all", Outcome::Accepted),
    ("oltp_read_write run --events=1 --mysql-ignore-errors=", Outcome::Accepted),
    ("oltp_read_write run --events=1 --report-checkpoints=5,1", Outcome::Accepted),
    ("oltp_read_write run --events=1 --rand-type=pareto --rand-pareto-h=0.3", Outcome::Accepted),
    ("oltp_read_write run --events=1 --rand-type=gaussian --rand-spec-iter=3 --rand-seed=9", Outcome::Accepted),
    ("oltp_read_write run --events=1 --db-ps-mode=disable --db-debug=off", Outcome::Accepted),
    ("oltp_read_write run --events=1 --mysql-host=a,b --mysql-port=3306,3307", Outcome::Accepted),
    ("oltp_read_write run --events=1 --percentile=0 --verbosity=0 --histogram=off", Outcome::Accepted),
    ("oltp_read_write run --events=1 --time=0 --rate=100 --report-interval=1", Outcome::Accepted),
    ("oltp_read_write run --events=1 --table-size=1e3", Outcome::Accepted),
    ("oltp_read_write run --events=1 --config-file=CF", Outcome::Accepted),
    ("/usr/share/sysbench/oltp_read_write.lua run --events=1", Outcome::Accepted),
    ("--test=oltp_read_write run --events=1", Outcome::Accepted),
    ("oltp_point_select run --events=1 --point-selects=5", Outcome::Accepted),
    ("oltp_insert run --events=1 --auto-inc=off", Outcome::Accepted),
    ("select_random_points run --events=1 --tables=2 --random_points=4", Outcome::Accepted),
    ("select_random_points prepare --tables=2 --table-size=100", Outcome::Accepted),
    ("select_random_ranges help --delta=3", Outcome::Accepted),
    ("oltp_read_write prepare --table-size=100 --tables=2 --threads=2", Outcome::Accepted),
    ("oltp_read_write prewarm", Outcome::Accepted),
    ("oltp_read_write cleanup --tables=3", Outcome::Accepted),
    ("oltp_write_only help", Outcome::Accepted),
    ("bulk_insert run --events=1", Outcome::Accepted),
    ("oltp_read_write run --events=1 --threads=abc", Outcome::Refused),
    ("oltp_read_write run --events=1 --threads=0", Outcome::Refused),
    ("oltp_read_write run --events=1 --threads=-1", Outcome::Refused),
    ("oltp_read_write run --events=1 --threads=", Outcome::Refused),
    ("oltp_read_write run --events=1 --threads=2x", Outcome::Refused),
    ("oltp_read_write run --events=1 --num-threads=abc", Outcome::Refused),
    ("--threads 4 oltp_read_write run --events=1", Outcome::Refused),
    ("oltp_read_write run --events=1 --foo=1", Outcome::Refused),
    ("oltp_read_write run --events=1 --thread=2", Outcome::Refused),
    ("oltp_read_write run --events=1 --Threads=2", Outcome::Refused),
    ("oltp_read_write run --events=1 --", Outcome::Refused),
    ("oltp_read_write run --events=1 --debug=yes", Outcome::Refused),
    ("oltp_read_write run --events=1 --skip-trx=yes", Outcome::Refused),
    ("oltp_read_write run --events=1 --skip-trx=ON", Outcome::Refused),
    ("oltp_read_write run --events=1 --skip_trx=", Outcome::Refused),
    ("oltp_read_write run --events=1 --mysql-dry-run=2", Outcome::Refused),
    ("oltp_read_write run --events=1 --rand-type=foo", Outcome::Refused),
    ("oltp_read_write run --events=1 --percentile=101", Outcome::Refused),
    ("oltp_read_write run --events=1 --percentile=-1", Outcome::Refused),
    ("oltp_read_write run --events=1 --histogram=on --percentile=0", Outcome::Refused),
    ("oltp_read_write run --events=1 --histogram --percentile=0", Outcome::Refused),
    ("oltp_read_write run --time=abc", Outcome::Refused),
    ("oltp_read_write run --time=99999999999", Outcome::Refused),
    ("oltp_read_write run --events=1 --verbosity=6", Outcome::Refused),
    ("oltp_read_write run --events=1 --verbosity=-1", Outcome::Refused),
    ("oltp_read_write run --events=1 --forced-shutdown=abc", Outcome::Refused),
    ("oltp_read_write run --events=1 --db-ps-mode=foo", Outcome::Refused),
    ("oltp_read_write run --events=1 --db-driver=foo", Outcome::Refused),
    ("oltp_read_write run --events=1 --tables=0", Outcome::Refused),
    ("oltp_read_write run --events=1 --rate=-1", Outcome::Refused),
    ("oltp_read_write run --events=1 --thread-stack-size=abc", Outcome::Refused),
    ("oltp_read_write run --events=1 --report-checkpoints=abc", Outcome::Refused),
    ("oltp_read_write run --events=1 --mysql-host=", Outcome::Refused),
    ("oltp_read_write run --events=1 --mysql-port=", Outcome::Refused),
    ("oltp_read_write run --events=1 --random-points=3", Outcome::Refused),
    ("oltp_read_write run --events=1 --number-of-ranges=3", Outcome::Refused),
    ("oltp_read_write run --events=1 --oltp-table-size=3", Outcome::Refused),
    ("oltp_read_write run --events=1 --num-threads=4 --oltp-read-only=on", Outcome::Refused),
    ("oltp_read_write run --events=1 --mysql-table-engine=innodb", Outcome::Refused),
    ("oltp_read_write run --events=1 --pgsql-host=x --db-driver=pgsql --mysql-host=", Outcome::Refused),
    ("foo run", Outcome::Refused),
    ("oltp_read_write frob", Outcome::Refused),
    ("oltp_read_write", Outcome::Refused),
    ("oltp_read_write run extra", Outcome::Refused),
    ("bulk_insert help", Outcome::Refused),
    ("bulk_insert prewarm", Outcome::Refused),
    ("select_random_points cleanup --tables=2", Outcome::Refused),
    ("select_random_ranges cleanup --tables=2", Outcome::Refused),
    ("oltp_read_write help --foo=1", Outcome::Refused),
    ("oltp_read_write help --threads=abc", Outcome::Refused),
    ("oltp_read_write help --rand-type=foo", Outcome::Refused),
    ("oltp_read_write run --events=1 --table-size=abc", Outcome::Stricter),
    ("oltp_read_write run --events=1 --table_size=-5", Outcome::Stricter),
    ("oltp_read_write run --events=1 --table-size=1.5", Outcome::Stricter),
    ("oltp_read_write run --events=1 --mysql-port=abc", Outcome::Stricter),
    ("oltp_read_write run --events=1 --mysql-ignore-errors=foo", Outcome::Stricter),
    ("oltp_read_write run --events=1 --rand-spec-iter=0", Outcome::Stricter),
    ("oltp_read_write run --events=1 --rand-pareto-h=abc", Outcome::Stricter),
    ("oltp_read_write run --events=1 --time=-1", Outcome::Stricter),
    ("oltp_read_write run --events=1 --report-interval=-1", Outcome::Stricter),
    ("oltp_read_write run --events=1 --mysql-user", Outcome::Stricter),
    ("oltp_read_write run --events=1 --mysql-storage-engine=", Outcome::Stricter),
    ("oltp_read_write run --events=1 --config-file=/nonexistent/wirebench.cfg", Outcome::Stricter),
    ("select_random_points run --events=1 --random-points=0", Outcome::Stricter),
    ("bulk_insert run --events=1 --foo=bar", Outcome::Stricter),
    ("oltp_read_write run --events=1 --rand-type=zipfian", Outcome::Extension),
    ("oltp_read_write run --events=1 --warmup-time=3", Outcome::Extension),
    ("oltp_read_write run --events=1 --cpus=0 --pipeline=2", Outcome::Extension),
    ("oltp_read_write.lua run --events=1", Outcome::Extension),
    ("--test=oltp run --max-requests=1", Outcome::Extension),
    ("--test=tests/db/oltp.lua run --max-requests=1", Outcome::Extension),
];

#[test]
fn parity_with_sysbench() {
    let Some(sysbench) = sysbench() else { return };
    let dir = ScratchDir::new("parity");
    let config = dir.0.join("sb.cfg");
    std::fs::write(&config, "threads=2\nreport-interval=1\n").unwrap();
    let mut failures = Vec::new();
    for &(line, expected) in PARITY {
        let mut args = shell_split(&line.replace("CF", &config.display().to_string()));
        args.push("--mysql-dry-run".to_owned());
        let sysbench_ok = sysbench_accepts(&sysbench, &dir.0, &args);
        let wirebench = parse(os(&args));
        let observed = match (sysbench_ok, &wirebench) {
            (true, Ok(_)) => Outcome::Accepted,
            (false, Err(_)) => Outcome::Refused,
            (true, Err(_)) => Outcome::Stricter,
            (false, Ok(_)) => Outcome::Extension,
        };
        if observed != expected {
            failures.push(format!("{line}: expected {expected:?}, got {observed:?} (wirebench: {wirebench:?})"));
        }
    }
    assert!(failures.is_empty(), "{} of {} lines differ:\n{}", failures.len(), PARITY.len(), failures.join("\n"));
}

/// `wirebench TEST help` is `sysbench TEST help` without the version
/// header and the PostgreSQL-only `--pgsql_variant`.
#[test]
fn test_help_matches_sysbench() {
    let Some(sysbench) = sysbench() else { return };
    for test in Test::ALL.into_iter().filter(|t| t.uses_oltp_common()) {
        let output = Process::new(&sysbench).args([test.name(), "help"]).output().unwrap();
        assert!(output.status.success(), "sysbench {test} help failed");
        let text = String::from_utf8(output.stdout).unwrap();
        let expected: String = text
            .lines()
            .skip_while(|l| !l.ends_with(" options:"))
            .filter(|l| !l.starts_with("  --pgsql_variant"))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(test_help(test, Personality::Wirebench), expected, "{test}");
    }
}

/// `--threads=1,2,4` is a sweep: one run per value, in the order given;
/// prepare and cleanup (and the machine check) use the largest.
#[test]
fn a_threads_list_is_a_sweep() {
    let sweep = bench("oltp_read_only --threads=8,1,2,4 --sweep-pause=3 run");
    assert_eq!(sweep.general.sweep, [8, 1, 2, 4]);
    assert_eq!((sweep.general.threads, sweep.general.sweep_pause), (8, 3));
    assert_eq!(sweep.test_options.threads, 8);
    let single = bench("oltp_read_only --threads=4 --sweep-pause=3 run");
    assert!(single.general.sweep.is_empty());
    assert!(has_note(&single, "--sweep-pause=3: ignored, as --threads is not a list"), "{:?}", single.notes);
    assert!(bench("oltp_read_only --threads=4, run").general.sweep.is_empty(), "one value is no sweep");
    for (line, needle) in [
        ("oltp_read_only --threads=1,2,1 run", "each count once (1 is given twice)"),
        ("oltp_read_only --threads=1,x run", "a number of threads >= 1, or a list"),
        ("oltp_read_only --threads=0,1 run", "a number of threads >= 1, or a list"),
        ("oltp_read_only --threads=1,2 --num-threads=4 run", "give the connection counts in --threads alone"),
    ] {
        let message = refused(line).to_string();
        assert!(message.contains(needle), "{line}: {message}");
    }
    let many = (1..=65).map(|n| n.to_string()).collect::<Vec<_>>().join(",");
    assert!(refused(&format!("oltp_read_only --threads={many} run")).to_string().contains("1 to 64 thread counts"));
}

#[test]
fn result_options_are_read_into_the_results_layer() {
    use wirebench::results::OutputFormat;
    let json = bench("oltp_read_only --format=json --label='MariaDB 10.11' --mysql-password=pw run");
    assert_eq!(json.results.format, OutputFormat::Json);
    assert_eq!(json.results.label.as_deref(), Some("MariaDB 10.11"));
    assert_eq!(json.results.options_given.get("mysql-password").map(String::as_str), Some("(hidden)"));
    assert_eq!(json.results.options_given.get("format").map(String::as_str), Some("json"));
    let csv = bench("oltp_read_only --format=csv --report-interval=10 --chart=/tmp/c.svg run");
    assert_eq!(csv.results.format, OutputFormat::Csv);
    assert_eq!(csv.results.chart.as_deref(), Some(std::path::Path::new("/tmp/c.svg")));
    assert!(
        bench("oltp_read_only --threads=1,2 --chart=c.svg run").results.chart.is_some(),
        "a sweep needs no interval"
    );
    for (line, needle) in [
        ("oltp_read_only --format=yaml run", "expected text, json or csv"),
        ("oltp_read_only --format=csv run", "add --report-interval=N"),
        ("oltp_read_only --chart=c.svg run", "add --report-interval=N"),
        ("oltp_read_only --label= run", "--label needs a value"),
    ] {
        let message = refused(line).to_string();
        assert!(message.contains(needle), "{line}: {message}");
    }
}

#[test]
fn compare_takes_files_and_its_own_options() {
    use wirebench::results::{Metric, TableFormat};
    let Invocation::Compare(options) = parse_line("compare --format=markdown --metric=p99 a.json b.json").unwrap()
    else {
        panic!("not a compare")
    };
    assert_eq!(options.files, [std::path::PathBuf::from("a.json"), "b.json".into()]);
    assert_eq!((options.format, options.metric, options.chart), (TableFormat::Markdown, Metric::P99, None));
    assert_eq!(parse_line("compare --help").unwrap(), Invocation::CompareHelp);
    for (line, needle) in [
        ("compare", "compare needs result files"),
        ("compare --format=json a.json", "expected text, markdown or csv"),
        ("compare --threads=4 a.json", "not a compare option"),
        ("compare --metrc=qps a.json", "did you mean --metric?"),
        ("compare --format markdown a.json", "write --format=markdown"),
    ] {
        let message = refused(line).to_string();
        assert!(message.contains(needle), "{line}: {message}");
    }
}

#[test]
fn merge_takes_shard_files_and_a_run_s_percentiles() {
    use wirebench::results::OutputFormat;
    let line = "merge --format=json --percentile=50,99.9 --per-statement s0.json s1.json";
    let Invocation::Merge(options) = parse_line(line).unwrap() else { panic!("not a merge") };
    assert_eq!(options.files, [std::path::PathBuf::from("s0.json"), "s1.json".into()]);
    assert_eq!((options.format, options.percentile, options.per_statement), (OutputFormat::Json, Some(50), true));
    assert_eq!(options.percentiles, [50.0, 99.9]);
    let Invocation::Merge(options) = parse_line("merge s0.json").unwrap() else { panic!("not a merge") };
    assert_eq!((options.format, options.percentiles, options.percentile), (OutputFormat::Text, vec![95.0], Some(95)));
    assert_eq!(parse_line("merge --help").unwrap(), Invocation::MergeHelp);
    for (line, needle) in [
        ("merge", "merge needs the shards' result files"),
        ("merge --format=csv a.json", "expected text or json"),
        ("merge --percentile=101 a.json", "a percentile from 1 to 100"),
        ("merge --threads=4 a.json", "not a merge option"),
        ("merge --per-statment a.json", "did you mean --per-statement?"),
    ] {
        let message = refused(line).to_string();
        assert!(message.contains(needle), "{line}: {message}");
    }
}

/// wirebench's latency options: the `--percentile` list (sysbench's line
/// keeps its first whole value, else 95), `--per-statement`,
/// `--rate-arrival`, `--hdr-log`, and what each refuses.
#[test]
fn latency_options() {
    let g = bench("oltp_read_write run").general;
    assert_eq!(
        (g.percentiles, g.per_statement, g.hdr_log, g.rate_arrival),
        (vec![95.0], false, None, Arrival::Poisson)
    );
    let g = bench("oltp_read_write run --percentile=50,95,99,99.9").general;
    assert_eq!((g.percentile, g.percentiles), (Some(50), vec![50.0, 95.0, 99.0, 99.9]));
    let g = bench("oltp_read_write run --percentile=99.9,50").general;
    assert_eq!((g.percentile, g.percentiles), (Some(95), vec![99.9, 50.0]));
    let g = bench("oltp_read_write run --percentile=0").general;
    assert_eq!((g.percentile, g.percentiles), (None, vec![]));
    let g = bench("oltp_read_write run --per-statement --rate-arrival=fixed --hdr-log=/tmp/x.hlog").general;
    assert!(g.per_statement);
    assert_eq!(g.rate_arrival, Arrival::Fixed);
    assert_eq!(g.hdr_log, Some(std::path::PathBuf::from("/tmp/x.hlog")));
    for (line, expected) in [
        ("oltp_read_write run --percentile=50,0", "a list such as 50,95,99,99.9"),
        ("oltp_read_write run --percentile=50,abc", "a list such as 50,95,99,99.9"),
        ("oltp_read_write run --percentile=100.5", "at most 100"),
        ("oltp_read_write run --rate-arrival=uniform", "poisson or fixed"),
        ("oltp_read_write run --hdr-log=", "--hdr-log"),
    ] {
        let message = refused(line).to_string();
        assert!(message.contains(expected), "{line}: {message}");
    }
}
