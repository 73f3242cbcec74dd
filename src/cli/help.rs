//! Help texts, laid out as sysbench 1.0.20's `sb_print_options` lays them
//! out (`sysbench oltp_read_write help`, `sysbench --help`).

use std::fmt::Write as _;

use super::defs::{self, OptDef};
use super::Test;

/// `wirebench TEST help`: the test's options with their defaults, sorted by
/// name, as `sysbench TEST help` prints them (without the PostgreSQL-only
/// `--pgsql_variant`).
pub fn test_help(test: Test) -> String {
    if !test.uses_oltp_common() {
        return format!("{test} has no options of its own: it inserts into tables sbtest1..sbtestN, N = --threads\n");
    }
    let extra: &[OptDef] = match test {
        Test::SelectRandomPoints => defs::RANDOM_POINTS,
        Test::SelectRandomRanges => defs::RANDOM_RANGES,
        _ => &[],
    };
    let mut options: Vec<OptDef> =
        defs::OLTP.iter().chain(extra).filter(|d| d.name != "pgsql_variant").copied().collect();
    options.sort_by_key(|d| d.name);
    let mut out = format!("{test} options:\n");
    print_options(&mut out, &options);
    out
}

/// `wirebench --help`.
pub fn general_help() -> String {
    let mut out = String::new();
    out.push_str("Usage:\n  wirebench [options]... testname command\n");
    out.push_str("  wirebench null-server --listen=ADDR --socket=PATH --cpus=LIST\n");
    out.push_str("  wirebench fuzz [options]                (see wirebench fuzz --help)\n");
    out.push_str("  wirebench fuzz-replay FILE [options]\n\n");
    out.push_str("Commands implemented by most tests: prepare prewarm run cleanup help\n\n");
    section(&mut out, "General options:", defs::GENERAL);
    section(&mut out, "Pseudo-Random Numbers Generator options:", defs::RAND);
    section(&mut out, "Log options:", defs::LOG);
    section(&mut out, "General database options:", defs::DB);
    section(&mut out, "mysql options:", defs::MYSQL);
    section(&mut out, "Options of sysbench 1.1 (master), refused by sysbench 1.0.20:", defs::MASTER);
    section(&mut out, "wirebench options:", defs::ENGINE);
    out.push_str("Tests:\n");
    for test in Test::ALL {
        let _ = writeln!(out, "  {test}");
    }
    out.push_str(
        "\nTESTNAME may also be a path to the test's .lua script. sysbench 0.4/0.5 command lines (--test=oltp, \
         --test=tests/db/oltp.lua, --oltp-*, --num-threads, --max-requests, ...) are read too, and a note says how \
         each legacy option was understood.\n\n",
    );
    out.push_str("See 'wirebench <testname> help' for a list of options for each test.\n\n");
    out
}

/// `wirebench null-server --help`.
pub fn null_server_help() -> String {
    let mut out = String::from("Usage:\n  wirebench null-server --listen=ADDR --socket=PATH --cpus=LIST\n\n");
    section(&mut out, "null-server options:", defs::NULL_SERVER);
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
         what crashes it, hangs it or blows up its memory; each failure is saved as a reproducer that \
         `wirebench fuzz-replay` sends again. Only servers on this host, unless --fuzz-allow-remote: it destroys \
         data. Exit status: 0 no failure within --time, 3 failures found (reproducers written), 1 usage or \
         connection error.\n\n",
    );
    section(&mut out, "fuzz options:", defs::FUZZ);
    section(&mut out, "server watch options:", defs::FUZZ_WATCH);
    section(&mut out, "connection options:", &fuzz_connection_options());
    out
}

/// `wirebench fuzz-replay --help`.
pub fn fuzz_replay_help() -> String {
    let mut out = String::from("Usage:\n  wirebench fuzz-replay FILE [options]\n\n");
    out.push_str(
        "Sends a reproducer's sessions again, then checks the server with the control connection. Exit status: 3 \
         the failure happened again, 0 the server survived, 1 usage or connection error.\n\n",
    );
    section(&mut out, "server watch options:", defs::FUZZ_WATCH);
    section(&mut out, "connection options:", &fuzz_connection_options());
    out
}

fn section(out: &mut String, title: &str, options: &[OptDef]) {
    out.push_str(title);
    out.push('\n');
    print_options(out, options);
}

/// `  --name=FMT   description [default]`, the description column aligned
/// one space after the longest name and format.
fn print_options(out: &mut String, options: &[OptDef]) {
    let width = options.iter().map(|d| d.name.len() + d.kind.format().len()).max().unwrap_or(0);
    for def in options {
        let pad = width - def.name.len() + 1;
        let _ = write!(out, "  --{}{:<pad$}{}", def.name, def.kind.format(), def.help);
        if let Some(default) = def.default {
            let _ = write!(out, " [{default}]");
        }
        out.push('\n');
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first lines of `sysbench oltp_read_write help` (1.0.20).
    #[test]
    fn test_help_matches_sysbench_layout() {
        let help = test_help(Test::OltpReadWrite);
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
        assert!(test_help(Test::SelectRandomPoints).contains("  --random_points=N "));
        assert!(test_help(Test::SelectRandomRanges).contains("  --number_of_ranges=N "));
    }

    #[test]
    fn general_help_lists_every_group() {
        let help = general_help();
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
