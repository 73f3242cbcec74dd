//! Help texts, laid out as sysbench 1.0.20's `sb_print_options` lays them
//! out (`sysbench oltp_read_write help`, `sysbench --help`): as `sysbench`,
//! sysbench's sections and words wherever they are true of wirebench; as
//! wirebench, the same options and what wirebench adds.

use std::fmt::Write as _;

use super::defs::{self, OptDef};
use super::{Personality, Test};

/// sysbench 1.0.20's help line for options whose wirebench line says more
/// (the extensions, what is ignored), where sysbench's words are true of
/// wirebench too; `sysbench --help` and `sysbench TEST help` use these.
const SYSBENCH_WORDING: &[(&str, &str)] = &[
    ("threads", "number of threads to use"),
    ("rand-type", "random numbers distribution {uniform,gaussian,special,pareto}"),
    ("mysql-ssl", "use SSL connections, if available in the client library"),
    ("mysql-ssl-cipher", "use specific cipher for SSL connections"),
    ("mysql-compression", "use compression, if available in the client library"),
    (
        "pgsql_variant",
        "Use this PostgreSQL variant when running with the PostgreSQL driver. The only currently supported variant is \
         'redshift'. When enabled, create_secondary is automatically disabled, and delete_inserts is set to 0",
    ),
];

/// `--mysql-*` options of wirebench's own (libmysqlclient's, not
/// sysbench's): listed by `wirebench --help` only.
/// `TEST help`: the test's options with their defaults, sorted by name, as
/// `sysbench TEST help` prints them; as wirebench, without the
/// PostgreSQL-only `--pgsql_variant`, which it ignores.
pub fn test_help(test: Test, personality: Personality) -> String {
    if !test.uses_oltp_common() {
        return format!("{test} has no options of its own: it inserts into tables sbtest1..sbtestN, N = --threads\n");
    }
    let extra: &[OptDef] = match test {
        Test::SelectRandomPoints => defs::RANDOM_POINTS,
        Test::SelectRandomRanges => defs::RANDOM_RANGES,
        _ => &[],
    };
    let shown = |d: &OptDef| personality == Personality::Sysbench || d.name != "pgsql_variant";
    let mut options: Vec<OptDef> = defs::OLTP.iter().chain(extra).filter(|d| shown(d)).copied().collect();
    options.sort_by_key(|d| d.name);
    let mut out = format!("{test} options:\n");
    print_options(&mut out, &options, personality);
    out
}

/// `--help`.
pub fn general_help(personality: Personality) -> String {
    match personality {
        Personality::Wirebench => wirebench_help(),
        Personality::Sysbench => sysbench_help(),
    }
}

/// `wirebench --help`: sysbench's options, then what wirebench adds.
fn wirebench_help() -> String {
    let wirebench = Personality::Wirebench;
    let mut out = String::new();
    out.push_str("Usage:\n  wirebench [options]... testname command\n");
    out.push_str("  wirebench null-server --listen=ADDR --socket=PATH --cpus=LIST\n");
    out.push_str("  wirebench fuzz [options]                (see wirebench fuzz --help)\n");
    out.push_str("  wirebench fuzz-replay FILE [options]\n");
    out.push_str(
        "  wirebench compare [--format=text|markdown|csv] [--metric=qps] [--chart=FILE.svg] A.json B.json ...\n",
    );
    out.push_str("  wirebench merge [--format=text|json] [--percentile=LIST] shard-0.json shard-1.json ...\n");
    out.push_str("  wirebench report RESULTS.json --html=FILE   (a page of saved results, docs/watching.md)\n");
    out.push_str(
        "  wirebench capture import --from=pcap|general-log|slow-log IN --out=FILE   (see wirebench capture --help)\n",
    );
    out.push_str("  wirebench capture info FILE [--format=text|json]\n");
    out.push_str(
        "  wirebench replay FILE [run|search] [--speed=N|max] [--mysql-host=...]   (see wirebench replay --help)\n\
         \x20 wirebench record --listen=HOST:PORT --upstream=HOST:PORT --out=FILE   (a recording proxy; see wirebench \
         record --help)\n\n",
    );
    out.push_str("Commands implemented by most tests: prepare run cleanup help\n");
    out.push_str("  and search: the highest --rate that holds the --slo latency bounds (docs/search.md)\n\n");
    section(&mut out, "General options:", defs::GENERAL, wirebench);
    section(&mut out, "Pseudo-Random Numbers Generator options:", defs::RAND, wirebench);
    section(&mut out, "Log options:", defs::LOG, wirebench);
    section(&mut out, "General database options:", defs::DB, wirebench);
    section(&mut out, "mysql options:", defs::MYSQL, wirebench);
    section(
        &mut out,
        "mysql options of wirebench (libmysqlclient's, not sysbench's):",
        defs::MYSQL_WIREBENCH,
        wirebench,
    );
    section(&mut out, "Options of sysbench 1.1 (master), refused by sysbench 1.0.20:", defs::MASTER, wirebench);
    section(&mut out, "wirebench options:", defs::ENGINE, wirebench);
    section(&mut out, "wirebench result options:", defs::RESULTS, wirebench);
    section(
        &mut out,
        "wirebench watch options (metrics, the live page, the report; docs/watching.md):",
        defs::WATCH,
        wirebench,
    );
    section(&mut out, "wirebench search options (the search command, docs/search.md):", defs::SEARCH, wirebench);
    section(&mut out, "mysql client option files (for the login; sysbench reads none):", defs::OPTION_FILES, wirebench);
    out.push_str("Tests:\n");
    for test in Test::ALL {
        let _ = writeln!(out, "  {test}");
    }
    out.push_str(
        "\nTESTNAME may also be a path to the test's .lua script, or to a Lua script of one's own; with no TESTNAME, \
         or - for it, the Lua script on standard input runs (wirebench [options] - run < my_test.lua). sysbench \
         0.4/0.5 command lines (--test=oltp, \
         --test=tests/db/oltp.lua, --oltp-*, --num-threads, --max-requests, ...) are read too, and a note says how \
         each legacy option was understood.\n\n",
    );
    out.push_str(
        "Installed under the name sysbench (a symlink), wirebench prints what sysbench 1.0.20 prints: its version, \
         banner, help and messages.\n\n",
    );
    out.push_str("See 'wirebench <testname> help' for a list of options for each test.\n\n");
    out.push_str(
        "Manual: docs/README.md in wirebench's source tree, one chapter a topic (connecting, TLS, latency, \
         results, shards, Lua scripts, 0.4/0.5 lines, exit status, fuzzing, the engine); README.md there has the \
         quick start and how to read a report.\n",
    );
    out
}

/// `sysbench --help` as sysbench 1.0.20's `print_help()` lays it out, its
/// quirks included (the verbosity apart from the other log options, the
/// blank lines around the database options); the drivers and tests listed
/// are those wirebench has.
fn sysbench_help() -> String {
    let sysbench = Personality::Sysbench;
    let mut out = String::new();
    out.push_str("Usage:\n  sysbench [options]... [testname] [command]\n\n");
    out.push_str("Commands implemented by most tests: prepare run cleanup help\n\n");
    section(&mut out, "General options:", defs::GENERAL, sysbench);
    section(&mut out, "Pseudo-Random Numbers Generator options:", defs::RAND, sysbench);
    // The text and operation log handlers register their options apart.
    let (verbosity, report_options) = defs::LOG.split_at_checked(1).unwrap_or((defs::LOG, &[]));
    section(&mut out, "Log options:", verbosity, sysbench);
    print_options(&mut out, report_options, sysbench);
    out.push_str("General database options:\n\n");
    print_options(&mut out, defs::DB, sysbench);
    out.push_str("\nCompiled-in database drivers:\n  mysql - MySQL driver\n\n");
    section(&mut out, "mysql options:", defs::MYSQL, sysbench);
    out.push_str("Compiled-in tests:\n");
    for test in Test::ALL {
        let _ = writeln!(out, "  {test} - sysbench 1.0.20's {test}.lua, built in");
    }
    out.push_str("\nSee 'sysbench <testname> help' for a list of options for each test.\n\n");
    out
}

/// `wirebench null-server --help`.
pub fn null_server_help() -> String {
    let mut out = String::from("Usage:\n  wirebench null-server --listen=ADDR --socket=PATH --cpus=LIST\n\n");
    section(&mut out, "null-server options:", defs::NULL_SERVER, Personality::Wirebench);
    out
}

/// `wirebench compare --help`.
pub fn compare_help() -> String {
    let mut out = String::from(
        "Usage:\n  wirebench compare [options] A.json B.json ...\n\n\
         Reads results written by `wirebench ... --format=json run > FILE` (a run, or a sweep with a --threads list), \
         and prints a figure per connection count per file, named by --label or the server's version, then each \
         file against the first, in %. Manual: docs/results.md.\n\n",
    );
    section(&mut out, "compare options:", defs::COMPARE, Personality::Wirebench);
    out
}

/// `wirebench merge --help`.
pub fn merge_help() -> String {
    let mut out = String::from(
        "Usage:\n  wirebench merge [options] shard-0.json shard-1.json ...\n\n\
         Reads the results the shards of one run wrote (`wirebench ... --shard=I/N --start-at=TIME --format=json run > \
         shard-I.json`), adds their counters and histograms, and prints sysbench's report of the whole run, with \
         exact percentiles. It names missing shards, shards that started late and options that differ, and refuses \
         files of different runs. Given the shards' --hdr-log files instead, it prints the run's latencies from them. \
         Manual: docs/shards.md.\n\n",
    );
    section(&mut out, "merge options:", defs::MERGE, Personality::Wirebench);
    out
}

/// `wirebench report --help`.
pub fn report_help() -> String {
    let mut out = String::from(
        "Usage:\n  wirebench report [options] RESULTS.json ...\n\n\
         Reads results written by `wirebench ... --format=json run > FILE` (a run, a sweep, a search, or `wirebench \
         merge --format=json`'s; several files that are the shards of one run are merged first) and writes them as \
         one HTML page: the totals as text, the charts, the steps. The page is self-contained: it opens from disk \
         with the network off, and prints. Manual: docs/watching.md.\n\n",
    );
    section(&mut out, "report options:", defs::REPORT, Personality::Wirebench);
    out
}

/// `wirebench capture --help`.
pub fn capture_help() -> String {
    let mut out = String::from(
        "Usage:\n  wirebench capture import --from=pcap|general-log|slow-log IN --out=FILE [--port=N]\n  \
         wirebench capture info FILE [--format=text|json] [--top=N]\n\n\
         import makes a capture (one file: every connection's login, commands and answers, in time order) from a \
         tcpdump or tshark capture of the client/server traffic (pcap or pcapng; IN may be - for standard input), \
         or from a server's general query log or slow query log written with long_query_time=0. What the source \
         lacks (a log's answers, its times to the microsecond) is left out, never made up; what could not be read \
         (TLS, the compressed protocol, statements prepared before the capture began) is named. info sums a \
         capture up: connections, span, commands by kind, the statements run most often and longest. Manual: \
         docs/capture.md.\n\n",
    );
    section(&mut out, "capture import options:", defs::CAPTURE_IMPORT, Personality::Wirebench);
    section(&mut out, "capture info options:", defs::CAPTURE_INFO, Personality::Wirebench);
    out
}

/// `wirebench replay --help`.
pub fn replay_help() -> String {
    let mut out = String::from(
        "Usage:\n  wirebench replay FILE [run] [--speed=N|max] [options]\n  \
         wirebench replay FILE search --slo=PERCENTILE:MS,... [options]\n\n\
         Sends a capture's traffic (wirebench capture import, wirebench record) to a server again: every captured \
         connection is opened on the engine's loops when it was, logged in as --mysql-user (or as --user-map says) \
         into its captured database, and sends its commands in their order, each at its captured time divided by \
         --speed; prepared statements are prepared again. The report is sysbench's, then a table per statement \
         (runs, errors, latency beside the captured latency, rows) and the differences from the capture (a \
         statement that fails now and did not then, or the reverse; other affected rows, row counts or rows), each \
         with an example. search finds the highest --speed that holds the --slo bounds. --format=json ends with a \
         replay result, which wirebench compare reads. Manual: docs/replay.md.\n\n",
    );
    let wirebench = Personality::Wirebench;
    section(&mut out, "replay options:", defs::REPLAY, wirebench);
    let shown = |group: &[OptDef], keep: &[&str]| -> Vec<OptDef> {
        group.iter().filter(|d| keep.contains(&d.name)).copied().collect()
    };
    let mut general =
        shown(defs::GENERAL, &["time", "report-interval", "percentile", "histogram", "verbosity", "shard", "start-at"]);
    for def in general.iter_mut().filter(|d| d.name == "time") {
        // Without --time a replay runs to the capture's end.
        (def.default, def.help) = (None, "stop after this many seconds (default: at the capture's end)");
    }
    section(&mut out, "run options a replay takes:", &general, wirebench);
    let results: Vec<OptDef> = defs::RESULTS.iter().filter(|d| d.name != "sweep-pause").copied().collect();
    section(&mut out, "results:", &results, wirebench);
    section(&mut out, "search:", defs::SEARCH, wirebench);
    section(&mut out, "metrics options (docs/watching.md):", defs::WATCH, wirebench);
    let mysql: Vec<OptDef> = defs::MYSQL.iter().filter(|d| d.name != "mysql-dry-run").copied().collect();
    section(&mut out, "mysql options:", &mysql, wirebench);
    let engine = shown(defs::ENGINE, &["cpus", "io", "shard", "shards", "start-at"]);
    section(&mut out, "engine options:", &engine, wirebench);
    out
}

/// `wirebench record --help`.
pub fn record_help() -> String {
    let mut out = String::from(
        "Usage:\n  wirebench record --listen=HOST:PORT|PATH --upstream=HOST:PORT|--upstream-socket=PATH --out=FILE \
         [options]\n\n\
         A recording proxy: applications connect to --listen as to their server; record forwards every packet \
         both ways unchanged (any login, compression, TLS with --ssl-cert/--ssl-key) and writes a capture: each \
         connection's login (user, database, character set, capabilities; never a password), each command with its \
         time and bytes, its answer summed up (OK, error, rows and their checksum) and the server's time to \
         answer. Ctrl-C or SIGTERM, --time or --max-size end it with a whole file; a file cut off by a crash reads \
         to its last whole block. `wirebench capture info FILE` sums it up. An upstream that is down when record \
         starts is an error; one that goes down later, each application sees as a server it cannot reach. \
         Manual: docs/record.md.\n\n",
    );
    section(&mut out, "record options:", defs::RECORD, Personality::Wirebench);
    section(&mut out, "metrics options (docs/watching.md):", defs::WATCH, Personality::Wirebench);
    let upstream: Vec<OptDef> = [defs::MYSQL, defs::MYSQL_WIREBENCH, defs::MASTER]
        .iter()
        .flat_map(|group| group.iter())
        .filter(|d| defs::RECORD_UPSTREAM.contains(&d.name))
        .copied()
        .collect();
    section(
        &mut out,
        "upstream options, the TLS to the server for applications that use TLS (--mysql-ssl not given: TLS \
         without checking the server's certificate; =off: such applications are refused):",
        &upstream,
        Personality::Wirebench,
    );
    out
}

/// The connection options fuzzing takes, as `--help` lists them.
fn fuzz_connection_options() -> Vec<OptDef> {
    defs::MYSQL.iter().filter(|d| defs::FUZZ_CONNECTION.contains(&d.name)).copied().collect()
}

/// `wirebench fuzz --help`.
pub fn fuzz_help() -> String {
    let mut out = String::from("Usage:\n  wirebench fuzz [options]\n\n");
    out.push_str(
        "Sends malformed client traffic at a MySQL/MariaDB server (or anything speaking its protocol) and catches \
         what crashes it, hangs it, blows up its memory or makes it answer with an internal error; each failure \
         is saved as a reproducer that `wirebench fuzz-replay` sends again. A server that refuses the login (or \
         --pre-auth) is fuzzed before the login's answer. Only servers on this host, unless --fuzz-allow-remote: \
         it destroys data. --time ends every run (a failure found may take --fuzz-overtime more). Exit status: 0 \
         no failure within --time, 3 failures found (reproducers written), 1 usage or connection error. Manual: \
         docs/fuzzing.md.\n\n",
    );
    let wirebench = Personality::Wirebench;
    section(&mut out, "fuzz options:", defs::FUZZ, wirebench);
    section(&mut out, "server watch options:", defs::FUZZ_WATCH, wirebench);
    section(&mut out, "metrics options (docs/watching.md):", defs::WATCH, wirebench);
    section(&mut out, "connection options:", &fuzz_connection_options(), wirebench);
    out
}

/// `wirebench fuzz-replay --help`.
pub fn fuzz_replay_help() -> String {
    let mut out = String::from("Usage:\n  wirebench fuzz-replay FILE [options]\n\n");
    out.push_str(
        "Sends a reproducer's sessions again, then checks the server with the control connection. Exit status: 3 \
         the failure happened again, 0 the server survived, 1 usage or connection error. It logs in as the \
         reproducer's user to its database (its packets name them); give the account's password. It first makes \
         the tables the reproducer's setup section names there (dropped, created, their rows inserted). \
         --fuzz-deadline defaults to the deadline that found the failure, as the reproducer records it. Manual: \
         docs/fuzzing.md.\n\n",
    );
    let wirebench = Personality::Wirebench;
    section(&mut out, "replay options:", defs::FUZZ_REPLAY, wirebench);
    section(&mut out, "server watch options:", defs::FUZZ_WATCH, wirebench);
    section(&mut out, "connection options:", &fuzz_connection_options(), wirebench);
    out
}

fn section(out: &mut String, title: &str, options: &[OptDef], personality: Personality) {
    out.push_str(title);
    out.push('\n');
    print_options(out, options, personality);
}

/// `  --name=FMT   description [default]`, the description column aligned
/// one space after the longest name and format.
fn print_options(out: &mut String, options: &[OptDef], personality: Personality) {
    let width = options.iter().map(|d| d.name.len() + d.kind.format().len()).max().unwrap_or(0);
    for def in options {
        let pad = width - def.name.len() + 1;
        let _ = write!(out, "  --{}{:<pad$}{}", def.name, def.kind.format(), help_line(def, personality));
        if let Some(default) = def.default {
            let _ = write!(out, " [{default}]");
        }
        out.push('\n');
    }
    out.push('\n');
}

fn help_line(def: &OptDef, personality: Personality) -> &'static str {
    let sysbench_words = SYSBENCH_WORDING.iter().find(|(name, _)| *name == def.name).map(|&(_, words)| words);
    match (personality, sysbench_words) {
        (Personality::Sysbench, Some(words)) => words,
        _ => def.help,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first lines of `sysbench oltp_read_write help` (1.0.20).
    #[test]
    fn test_help_matches_sysbench_layout() {
        let help = test_help(Test::OltpReadWrite, Personality::Wirebench);
        let lines: Vec<&str> = help.lines().collect();
        assert_eq!(lines[0], "oltp_read_write options:");
        assert_eq!(
            lines[1],
            "  --auto_inc[=on|off]           Use AUTO_INCREMENT column as Primary Key (for MySQL), or its \
             alternatives in other DBMS. When disabled, use client-generated IDs [on]"
        );
        assert_eq!(
            lines[3],
            "  --delete_inserts=N            Number of DELETE/INSERT combinations per transaction [1]"
        );
        assert_eq!(lines[6], "  --mysql_storage_engine=STRING Storage engine, if MySQL is used [innodb]");
        assert_eq!(lines[lines.len() - 2], "  --tables=N                    Number of tables [1]");
        assert_eq!(lines.last(), Some(&""));
        assert!(help.ends_with("[1]\n\n"));
        assert!(!help.contains("random_points"));
        assert!(test_help(Test::SelectRandomPoints, Personality::Wirebench).contains("  --random_points=N "));
        assert!(test_help(Test::SelectRandomRanges, Personality::Wirebench).contains("  --number_of_ranges=N "));
    }

    #[test]
    fn general_help_lists_every_group() {
        let help = general_help(Personality::Wirebench);
        for needle in
            ["  --threads=N ", "--rand-type=STRING", "--mysql-ignore-errors=[LIST,...]", "--cpus=", "--pipeline=N"]
        {
            assert!(help.contains(needle), "{needle}");
        }
        assert!(null_server_help().contains("--listen="));
        let fuzz = fuzz_help();
        for needle in ["--restart-cmd=STRING", "--keep-going[=on|off]", "--server-log=STRING", "--mysql-socket="] {
            assert!(fuzz.contains(needle), "{needle}");
        }
        assert!(!fuzz.contains("--mysql-ssl"), "fuzzing speaks plain text only");
        assert!(fuzz_replay_help().contains("--fuzz-deadline=N"));
        assert!(!fuzz_replay_help().contains("--keep-going"));
    }
}
