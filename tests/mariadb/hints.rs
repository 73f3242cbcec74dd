//! The advice a failed command gives against the test MariaDB: `prepare`
//! over the tables of an earlier one says to run `cleanup` first, and a
//! run with more `--tables` than were prepared says how many there are
//! and what to do, whether its statements are prepared (the error comes
//! at their PREPARE) or sent as text (at the first event).
//!
//! The tables go in database sbtest_quickstart, which the README's quick
//! start (docs.rs) cleans up before and after it runs; the files take
//! turns at the server.

use crate::common::{self, Ran};

use common::TestServer;

const DB: &str = "sbtest_quickstart";

/// `oltp_read_only --table-size=100 OPTIONS LOGIN COMMAND` against the test
/// server: `args` are the options, then the command.
fn read_only(server: &TestServer, args: &[&str]) -> Ran {
    let (options, command) = args.split_at(args.len() - 1);
    let mut all: Vec<String> = ["oltp_read_only", "--table-size=100"].iter().map(|s| (*s).to_owned()).collect();
    all.extend(options.iter().map(|s| (*s).to_owned()));
    all.extend(server.login_args(DB));
    all.extend(command.iter().map(|s| (*s).to_owned()));
    common::run_wirebench(&all)
}

fn failed(output: Ran, what: &str) -> String {
    let stderr = output.stderr.clone();
    assert_eq!(output.code, Some(1), "{what} must fail: {}\n{stderr}", output.stdout.clone());
    stderr
}

#[test]
fn prepare_twice_and_more_tables_than_prepared_say_what_to_do() {
    let Some(server) = TestServer::find() else { return };
    let cleanup = read_only(&server, &["--tables=8", "cleanup"]);
    assert!(cleanup.succeeded(), "{}", cleanup.stderr.clone());
    let prepared = read_only(&server, &["--tables=2", "prepare"]);
    assert!(prepared.succeeded(), "{}", prepared.stderr.clone());

    let again = failed(read_only(&server, &["--tables=2", "prepare"]), "a second prepare");
    assert!(again.contains("ERROR 1050 (42S01): Table 'sbtest"), "{again}");
    assert!(
        again.contains("already exists; the test's tables are there from an earlier prepare: run cleanup"),
        "{again}"
    );

    let fewer = "the database has sbtest1 to sbtest2 only: they were prepared with --tables=2 and this run has \
                 --tables=4; run with --tables=2, or run cleanup with --tables=2, then prepare with --tables=4";
    for mode in ["--db-ps-mode=auto", "--db-ps-mode=disable"] {
        let run = failed(read_only(&server, &["--tables=4", mode, "--events=200", "run"]), mode);
        assert!(run.contains("ERROR 1146") || run.contains("error 1146"), "{mode}: {run}");
        assert!(run.contains(fewer), "{mode}: {run}");
    }
    let cleanup = read_only(&server, &["--tables=8", "cleanup"]);
    assert!(cleanup.succeeded(), "{}", cleanup.stderr.clone());
    let none = failed(read_only(&server, &["--tables=4", "--events=200", "run"]), "a run with no tables");
    assert!(none.contains("the database has none of the test's sbtestN tables: run prepare"), "{none}");
}
