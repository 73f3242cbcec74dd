//! Every workload against the real MariaDB and the real sysbench 1.0.20.
//!
//! For each case (a test and its sysbench options):
//! 1. wirebench's `prepare` (seeded, so the data is the same every time),
//!    then a sequential mini-driver runs N events of the workload's script:
//!    each command is sent with `Connection::send_command` and counted as
//!    sysbench counts (result set = read, affected rows > 0 = write, else
//!    other); then the tables' checksums and SHOW CREATE TABLE are taken;
//! 2. the same `prepare` again, then `sysbench <test> run --events=N
//!    --threads=1` with the same `--rand-seed` on the same data: its
//!    read/write/other/transactions counts and the tables afterwards must be
//!    identical to wirebench's, which holds only if every command and value
//!    was the same;
//! 3. `sysbench <test> prepare`: its SHOW CREATE TABLE and row counts must
//!    be wirebench's (sysbench's data itself is random whatever the seed:
//!    1.0.20 seeds only `run`).
//!
//! The cases create and drop `sbtest1`, `sbtest2`, … in the database named
//! by WIREBENCH_WORKLOAD_DB (default `sbtest`), so they run one at a time
//! (a lock in this file) and must not overlap other users of those tables.
//! Skipped without a server or without sysbench (`WIREBENCH_SYSBENCH`
//! names the binary), unless WIREBENCH_REQUIRE_SERVER=1.

use crate::common;

use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;

use common::TestServer;
use wirebench::client::Connection;
use wirebench::rand::{srandom_seed, RandConfig, RandParams, Rng};
use wirebench::workload::{CommandSink, OltpOptions, ScriptContext, Step, Test, Workload};
use wirebench_protocol::command::ExecuteTemplate;
use wirebench_protocol::response::Response;

static SERIAL: Mutex<()> = Mutex::new(());

fn database() -> String {
    std::env::var("WIREBENCH_WORKLOAD_DB").unwrap_or_else(|_| "sbtest".to_string())
}

/// The sysbench binary, or `None` (with a message) to skip.
fn sysbench() -> Option<PathBuf> {
    let candidates = match std::env::var_os("WIREBENCH_SYSBENCH") {
        Some(path) => vec![PathBuf::from(path)],
        None => vec![PathBuf::from("/usr/bin/sysbench"), PathBuf::from("sysbench")],
    };
    let found =
        candidates.into_iter().find(|p| Command::new(p).arg("--version").output().is_ok_and(|o| o.status.success()));
    if found.is_none() {
        common::unavailable("no runnable sysbench (apt-get install sysbench, or set WIREBENCH_SYSBENCH)");
    }
    found
}

/// Per-command counts, as sysbench reports them.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Counts {
    read: u64,
    write: u64,
    other: u64,
    events: u64,
}

/// A sysbench test with its options, written as on sysbench's command line.
struct Case {
    test: &'static str,
    args: &'static [&'static str],
    events: u64,
    /// Whether the tables must match after the run (not when ids come from
    /// `sysbench.rand.unique()`, which Debian's sysbench seeds differently
    /// on every run).
    same_data: bool,
}

struct Parsed {
    options: OltpOptions,
    rand: RandConfig,
}

/// The case's options as wirebench's own command line reads them.
fn parse(test: &str, args: &[&str]) -> Parsed {
    let words = std::iter::once(test).chain(args.iter().copied()).chain(std::iter::once("run"));
    match wirebench::cli::parse(words.map(std::ffi::OsString::from)) {
        Ok(wirebench::cli::Invocation::Bench(bench)) => Parsed { options: bench.test_options, rand: bench.rand },
        other => panic!("{test} {args:?}: {other:?}"),
    }
}

const PREPARE_SEED: u32 = 12345;
const RUN_SEED: i32 = 777;

struct Rig {
    server: TestServer,
    sysbench: PathBuf,
    db: String,
    runtime: tokio::runtime::Runtime,
}

impl Rig {
    fn new() -> Option<Rig> {
        let server = TestServer::find()?;
        let sysbench = sysbench()?;
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        Some(Rig { server, sysbench, db: database(), runtime })
    }

    async fn connect(&self) -> Connection {
        let options = self.server.options(self.server.tcp()).database(self.db.clone());
        Connection::connect(&options).await.unwrap_or_else(|e| panic!("{e}"))
    }

    /// Runs `sysbench <test> <args> <command>` and returns its output.
    fn sysbench(&self, test: &str, args: &[&str], extra: &[String], command: &str) -> String {
        let output = Command::new(&self.sysbench)
            .arg(test)
            .arg(format!("--mysql-host={}", self.server.host))
            .arg(format!("--mysql-port={}", self.server.port))
            .args(["--mysql-user=sbtest", "--mysql-password=sbtest"])
            .arg(format!("--mysql-db={}", self.db))
            .args(args)
            .args(extra)
            .arg(command)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(
            output.status.success(),
            "sysbench {test} {args:?} {command} failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        stdout
    }
}

/// The first column of each row of a text result, as strings.
fn column(response: &Response, index: usize) -> Vec<String> {
    let set = response.result_sets().next().expect("a result set");
    set.text_rows()
        .unwrap()
        .into_iter()
        .map(|row| String::from_utf8_lossy(row[index].as_deref().unwrap_or(b"NULL")).into_owned())
        .collect()
}

/// `sbtestN` tables a case may touch.
fn tables(workload: &dyn Workload, options: &OltpOptions) -> Vec<String> {
    let n = if workload.name() == "bulk_insert" { 1 } else { options.tables };
    (1..=n).map(|t| format!("sbtest{t}")).collect()
}

async fn drop_tables(conn: &mut Connection) {
    for t in 1..=8 {
        conn.query_drop(&format!("DROP TABLE IF EXISTS sbtest{t}")).await.unwrap();
    }
}

/// SHOW CREATE TABLE and the row count of each table.
async fn schema(conn: &mut Connection, tables: &[String]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for t in tables {
        let create = column(&conn.query(&format!("SHOW CREATE TABLE {t}")).await.unwrap(), 1).remove(0);
        let rows = column(&conn.query(&format!("SELECT COUNT(*) FROM {t}")).await.unwrap(), 0).remove(0);
        out.push((create, rows));
    }
    out
}

async fn checksums(conn: &mut Connection, tables: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for t in tables {
        out.extend(column(&conn.query(&format!("CHECKSUM TABLE {t} EXTENDED")).await.unwrap(), 1));
    }
    out
}

/// wirebench's `prepare`, one thread.
async fn prepare(conn: &mut Connection, workload: &dyn Workload, rand: &RandParams) {
    let rng = Rng::for_thread(PREPARE_SEED, 0, *rand);
    for sql in workload.prepare(ScriptContext { thread: 0, threads: 1 }, rng) {
        conn.query_drop(&sql).await.unwrap_or_else(|e| panic!("{e}: {}", &sql[..sql.len().min(200)]));
    }
}

/// The mini-driver: `events` events of the script, sent one command at a
/// time, counted as sysbench counts. After each event it takes the draw
/// sysbench's `sb_event_stop` makes for the latency histogram slot
/// (`--percentile` is 95 by default), so the values stay sysbench's.
async fn drive(conn: &mut Connection, workload: &dyn Workload, mut rng: Rng, events: u64) -> Counts {
    let mut templates = Vec::new();
    let mut ids = Vec::new();
    for spec in workload.statements() {
        let statement = conn.prepare(&spec.sql).await.unwrap_or_else(|e| panic!("{e}: {}", spec.sql));
        assert_eq!(statement.params.len(), spec.slots.len(), "{}", spec.sql);
        templates.push(ExecuteTemplate::new(statement.statement_id(), &spec.slots).unwrap());
        ids.push(statement.statement_id());
    }
    let mut script = workload.script(ScriptContext { thread: 0, threads: 1 });
    let mut counts = Counts::default();
    let mut out = Vec::new();
    let mut done = 0;
    while done < events {
        out.clear();
        let mut sink = CommandSink::new(&mut templates, &mut out);
        let step = script.next(&mut rng, &mut sink).unwrap();
        let format = sink.take_format().expect("a command");
        let outcome = conn.send_command(&out, format).await.unwrap();
        assert!(outcome.error.is_none(), "{:?}", outcome.error);
        if outcome.result_sets > 0 {
            counts.read += 1;
        } else if outcome.affected_rows > 0 {
            counts.write += 1;
        } else {
            counts.other += 1;
        }
        if step == Step::Last {
            rng.next_u64();
            counts.events += script.last_event_weight();
            done += 1;
        }
    }
    for id in ids {
        conn.close_statement(id).await.unwrap();
    }
    counts
}

/// sysbench's "SQL statistics" counts.
fn sysbench_counts(report: &str) -> Counts {
    let value = |label: &str| -> u64 {
        let line =
            report.lines().find(|l| l.trim_start().starts_with(label)).unwrap_or_else(|| panic!("{label} in {report}"));
        line[line.find(label).unwrap() + label.len()..].split_whitespace().next().unwrap().parse().unwrap()
    };
    Counts {
        read: value("read:"),
        write: value("write:"),
        other: value("other:"),
        events: value("total number of events:"),
    }
}

fn check(case: &Case) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(rig) = Rig::new() else { return };
    let parsed = parse(case.test, case.args);
    let workload = Test::from_name(case.test).unwrap().workload(&parsed.options).unwrap();
    let rand = RandParams::new(&parsed.rand).unwrap();
    let tables = tables(&*workload, &parsed.options);
    let run_rng = Rng::for_thread(srandom_seed(RUN_SEED, 0), 0, rand);
    rig.runtime.block_on(async {
        let mut conn = rig.connect().await;

        drop_tables(&mut conn).await;
        prepare(&mut conn, &*workload, &rand).await;
        let ours_prepared = schema(&mut conn, &tables).await;
        let ours = drive(&mut conn, &*workload, run_rng.clone(), case.events).await;
        let ours_after = (checksums(&mut conn, &tables).await, schema(&mut conn, &tables).await);

        for sql in workload.cleanup() {
            conn.query_drop(&sql).await.unwrap();
        }
        prepare(&mut conn, &*workload, &rand).await;
        // bulk_insert's events are rows: sysbench sends them as one INSERT.
        let events = if case.test == "bulk_insert" { ours.events } else { case.events };
        let report = rig.sysbench(
            case.test,
            case.args,
            &[format!("--events={events}"), "--threads=1".into(), format!("--rand-seed={RUN_SEED}")],
            "run",
        );
        let theirs = sysbench_counts(&report);
        let theirs_after = (checksums(&mut conn, &tables).await, schema(&mut conn, &tables).await);

        drop_tables(&mut conn).await;
        rig.sysbench(case.test, case.args, &["--threads=1".into()], "prepare");
        let theirs_prepared = schema(&mut conn, &tables).await;
        rig.sysbench(case.test, case.args, &["--threads=1".into()], "cleanup");
        drop_tables(&mut conn).await;

        assert_eq!(ours, theirs, "{} {:?}: counts (wirebench, sysbench)", case.test, case.args);
        assert_eq!(ours_prepared, theirs_prepared, "{} {:?}: schema after prepare", case.test, case.args);
        if case.same_data {
            assert_eq!(ours_after, theirs_after, "{} {:?}: tables after the run", case.test, case.args);
        }
        eprintln!("{} {:?}: {ours:?}", case.test, case.args);
    });
}

const SMALL: [&str; 2] = ["--tables=2", "--table-size=200"];

macro_rules! case {
    ($name:ident, $test:literal, [$($arg:expr),*], $events:expr) => {
        case!($name, $test, [$($arg),*], $events, true);
    };
    ($name:ident, $test:literal, [$($arg:expr),*], $events:expr, $same_data:expr) => {
        #[test]
        fn $name() {
            check(&Case { test: $test, args: &[$($arg),*], events: $events, same_data: $same_data });
        }
    };
}

case!(oltp_read_only, "oltp_read_only", [SMALL[0], SMALL[1]], 20);
case!(
    oltp_read_only_no_trx_no_ranges,
    "oltp_read_only",
    [SMALL[0], SMALL[1], "--skip_trx=on", "--range_selects=off"],
    30
);
case!(oltp_read_write, "oltp_read_write", [SMALL[0], SMALL[1]], 30);
case!(
    oltp_read_write_variants,
    "oltp_read_write",
    [
        SMALL[0],
        SMALL[1],
        "--auto_inc=off",
        "--secondary=on",
        "--create_secondary=off",
        "--delete_inserts=2",
        "--range_size=50",
        "--rand-type=uniform"
    ],
    30
);
case!(oltp_write_only, "oltp_write_only", [SMALL[0], SMALL[1], "--rand-type=pareto"], 30);
case!(oltp_point_select, "oltp_point_select", [SMALL[0], SMALL[1]], 50);
case!(oltp_update_index, "oltp_update_index", [SMALL[0], SMALL[1]], 50);
case!(oltp_update_non_index, "oltp_update_non_index", [SMALL[0], SMALL[1], "--non_index_updates=2"], 50);
// Deletes: rows vanish, later deletes of the same id count as "other".
case!(oltp_delete, "oltp_delete", ["--tables=2", "--table-size=50", "--rand-type=uniform"], 80);
case!(oltp_insert, "oltp_insert", [SMALL[0], SMALL[1]], 50);
case!(oltp_insert_no_auto_inc, "oltp_insert", [SMALL[0], SMALL[1], "--auto_inc=off"], 50, false);
case!(select_random_points, "select_random_points", ["--tables=1", "--table-size=200", "--random_points=5"], 40);
case!(
    select_random_ranges,
    "select_random_ranges",
    ["--tables=1", "--table-size=200", "--number_of_ranges=3", "--delta=7"],
    40
);
case!(bulk_insert, "bulk_insert", [], 1);
