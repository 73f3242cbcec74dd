//! `wirebench replay` of real clients' traffic, captured with tcpdump on
//! loopback and imported (`capture import --from=pcap`): sysbench with
//! prepared statements, the `mariadb` CLI, a Python application using
//! server-side prepared statements (tests/clients/python_prepared, on the
//! Python scripts/test.sh makes for record.rs), and a
//! connection opened before the capture began. Replayed against the same
//! data, every statement runs as often as it was captured and answers as it
//! did; a row changed since shows as a difference, with an example.
//!
//! Needs the test server, tcpdump and the right to capture (root, as CI
//! runs), and for each client the client (scripts/test.sh installs them).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::capture_import::{import, joined_session};
use crate::common::{self, ScratchDir, TestServer};
use crate::pcap_capture::{tool, Tcpdump};
use crate::record::python_with_connector;
use crate::replay_schedule::{replay, replay_line, succeeded};

/// The database of this file's tables (scripts/mariadb.sh makes it).
const DATABASE: &str = "sbtest_replay";

/// A capture of what `client` sends to the test server: tcpdump around it,
/// then imported. A capture the kernel dropped packets of is made again,
/// each attempt after `fresh` (the data as the client first found it).
fn capture_of(
    server: &TestServer,
    dir: &ScratchDir,
    name: &str,
    mut fresh: impl FnMut(),
    mut client: impl FnMut(),
) -> Option<PathBuf> {
    let tcpdump = tool("tcpdump")?;
    let mut attempt = 0;
    Some(common::in_one_of_three_runs(|| {
        attempt += 1;
        fresh();
        let pcap = dir.0.join(format!("{name}-{attempt}.pcap"));
        let capture = Tcpdump::start(&tcpdump, server.port, &pcap);
        client();
        let dropped = capture.stop();
        if dropped > 0 {
            return Err(format!("tcpdump dropped {dropped} packets"));
        }
        let out = dir.0.join(format!("{name}-{attempt}.wbc"));
        import("pcap", &pcap, &out, Some(server.port));
        Ok(out)
    }))
}

/// Runs `sql` through the `mariadb` CLI as `sbtest` over TCP, without TLS
/// (a capture of TLS shows nothing); its output.
#[track_caller]
fn mariadb_cli(server: &TestServer, sql: &str) -> String {
    let out = Command::new("mariadb")
        .args(["--no-defaults", "--protocol=tcp", "--skip-ssl", "--batch", "--user=sbtest", "--password=sbtest"])
        .arg(format!("--host={}", server.host))
        .arg(format!("--port={}", server.port))
        .arg(format!("--database={DATABASE}"))
        .arg(format!("--execute={sql}"))
        .output()
        .expect("run mariadb");
    assert!(out.status.success(), "{sql}: {}", common::text(&out.stderr));
    common::text(&out.stdout)
}

/// The replay at `--speed=max`, its result line; it must succeed.
#[track_caller]
fn replayed(server: &TestServer, capture: &Path) -> Value {
    let output = replay(server, capture, &["--speed=max"]);
    succeeded(&output);
    replay_line(&output)
}

/// Every statement replayed as often as captured, none failed, and what
/// was sent is all the capture held.
#[track_caller]
fn replayed_as_captured(line: &Value) {
    let statements = line["statements"].as_array().expect("statements");
    assert!(!statements.is_empty(), "{line}");
    for s in statements {
        assert_eq!(s["count"], s["captured_count"], "{}: {line}", s["statement"]);
    }
    let replayed: u64 = statements.iter().map(|s| s["count"].as_u64().unwrap_or(0)).sum();
    assert_eq!(line["commands"].as_u64(), Some(replayed), "{line}");
    assert_eq!(line["errors"], 0, "{line}");
    assert_eq!(line["not_replayed"], serde_json::json!({}), "{line}");
    assert_eq!(line["end"], "completed", "{line}");
}

fn statement<'a>(line: &'a Value, text: &str) -> &'a Value {
    let statements = line["statements"].as_array().expect("statements");
    statements.iter().find(|s| s["statement"] == text).unwrap_or_else(|| panic!("no statement {text}: {line}"))
}

fn sysbench_run(binary: &Path, server: &TestServer, command: &str) {
    let mut args = vec!["oltp_read_write".to_owned()];
    args.extend(server.login_args(DATABASE));
    // One thread: the replay's order is the capture's, so are its answers.
    let options = ["--tables=1", "--table-size=100", "--db-ps-mode=auto", "--events=40", "--threads=1", "--time=0"];
    args.extend(options.map(String::from));
    args.push(command.to_owned());
    let out = Command::new(binary).args(&args).output().expect("run sysbench");
    assert!(out.status.success(), "sysbench {command}: {}{}", common::text(&out.stdout), common::text(&out.stderr));
}

/// sysbench's read/write test writes: the replay runs against the tables
/// as they were before the capture (prepared again), as an upgrade test
/// restores a backup. Then a row the range reads all see is changed.
#[test]
fn a_sysbench_run_replays_as_captured_and_a_changed_row_differs() {
    let Some(server) = TestServer::find() else { return };
    let Some(sysbench) = common::sysbench() else { return };
    let _serial = common::serial();
    let dir = ScratchDir::new("replay-sysbench");
    let fresh_tables = || {
        sysbench_run(&sysbench, &server, "cleanup");
        sysbench_run(&sysbench, &server, "prepare");
        // sysbench's rows are random even with --rand-seed: made the same.
        mariadb_cli(&server, "UPDATE sbtest1 SET k = id, c = CONCAT('c-', id), pad = CONCAT('p-', id)");
    };
    let Some(capture) = capture_of(&server, &dir, "sysbench", fresh_tables, || {
        sysbench_run(&sysbench, &server, "run");
    }) else {
        return;
    };
    fresh_tables();
    let line = replayed(&server, &capture);
    replayed_as_captured(&line);
    assert_eq!((&line["connections"]["opened"], &line["differences"]), (&1.into(), &0.into()), "{line}");
    let point = statement(&line, "select c from sbtest1 where id = ?");
    assert_eq!(point["differences"], serde_json::json!({}), "{line}");
    assert_eq!(point["count"], 40 * 10, "{line}");

    // Every range of 100 ids from 1 on a table of 100 rows holds the last.
    fresh_tables();
    mariadb_cli(&server, "UPDATE sbtest1 SET c = 'changed since the capture' WHERE id = 100");
    let line = replayed(&server, &capture);
    let range = statement(&line, "select c from sbtest1 where id between ? and ?");
    let differences = range["differences"].as_object().expect("differences");
    assert!(differences.get("checksum").and_then(Value::as_u64).is_some_and(|n| n > 0), "{range}");
    let example = &range["examples"][0];
    assert_eq!(example["kind"], "checksum", "{range}");
    // The example is the execute with its values: a range holding the row.
    let text = example["text"].as_str().unwrap_or_default();
    let params = text.strip_prefix("EXECUTE stmt ").and_then(|t| t.split_once(" params (")).map(|(_, p)| p);
    let bounds: Vec<u64> =
        params.map_or(vec![], |p| p.trim_end_matches(')').split(", ").flat_map(str::parse).collect());
    assert!(text.contains(" (select c from sbtest1 where id between ? and ?) params ("), "{example}");
    assert!(matches!(bounds[..], [from, to] if from <= 100 && 100 <= to), "{example}");
    assert!(line["differences"].as_u64().is_some_and(|n| n > 0), "{line}");
    sysbench_run(&sysbench, &server, "cleanup");
}

/// The CLI's session: its own query at login, `use` (COM_INIT_DB), SET,
/// writes and reads of a table it makes afresh, so that the replay finds
/// what the capture found.
#[test]
fn a_mariadb_cli_session_replays_as_captured() {
    let Some(server) = TestServer::find() else { return };
    let _serial = common::serial();
    let dir = ScratchDir::new("replay-cli");
    let session = "DROP TABLE IF EXISTS cli_items; \
                   CREATE TABLE cli_items (id INT PRIMARY KEY, name VARCHAR(20)); \
                   INSERT INTO cli_items VALUES (1, 'one'), (2, 'two'), (3, 'three'); \
                   UPDATE cli_items SET name = 'TWO' WHERE id >= 2; \
                   use sbtest_replay; SET @n = 2; \
                   SELECT id, name FROM cli_items WHERE id > @n - 1 ORDER BY id; \
                   SELECT COUNT(*) FROM cli_items";
    let Some(capture) = capture_of(
        &server,
        &dir,
        "cli",
        || {},
        || {
            mariadb_cli(&server, session);
        },
    ) else {
        return;
    };
    let line = replayed(&server, &capture);
    replayed_as_captured(&line);
    assert_eq!(line["differences"], 0, "{line}");
    assert_eq!(line["unknown_answers"], 0, "{line}");
    let update = statement(&line, "update cli_items set name = ? where id >= ?");
    assert_eq!((&update["count"], &update["differences"]), (&1.into(), &serde_json::json!({})), "{line}");
    assert_eq!(statement(&line, "COM_INIT_DB")["count"], 1, "{line}");
    let read = statement(&line, "select id, name from cli_items where id > @n - ? order by id");
    assert_eq!((&read["rows"], &read["captured_rows"]), (&2.into(), &2.into()), "{line}");
}

/// mysql-connector-python's prepared cursor: COM_STMT_PREPARE, then
/// COM_STMT_EXECUTE with binary parameters, COM_STMT_CLOSE at the end;
/// its statement ids mapped to the replay's own.
#[test]
fn a_python_application_with_prepared_statements_replays_as_captured() {
    let Some(server) = TestServer::find() else { return };
    let Some(python) = python_with_connector() else { return };
    let client = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/python_prepared");
    let _serial = common::serial();
    let dir = ScratchDir::new("replay-python");
    let fresh_table = || {
        mariadb_cli(
            &server,
            "DROP TABLE IF EXISTS replay_items; \
             CREATE TABLE replay_items (id INT PRIMARY KEY, name VARCHAR(20), qty INT); \
             INSERT INTO replay_items SELECT seq, CONCAT('item ', seq), 0 FROM seq_1_to_10",
        );
    };
    let rounds = 20;
    let Some(capture) = capture_of(&server, &dir, "python", fresh_table, || {
        let out = Command::new(&python)
            .arg(client.join("app.py"))
            .args([&server.host, &server.port.to_string(), "sbtest", "sbtest", DATABASE, &rounds.to_string()])
            .output()
            .expect("run python3");
        assert!(out.status.success(), "app.py: {}{}", common::text(&out.stdout), common::text(&out.stderr));
    }) else {
        return;
    };
    fresh_table();
    let line = replayed(&server, &capture);
    replayed_as_captured(&line);
    assert_eq!(line["differences"], 0, "{line}");
    let lookup = statement(&line, "select id, name, qty from replay_items where id = ?");
    assert_eq!((&lookup["count"], &lookup["rows"]), (&rounds.into(), &rounds.into()), "{line}");
    let bump = statement(&line, "update replay_items set qty = qty + ? where id = ?");
    assert_eq!(bump["count"], rounds, "{line}");
    assert!(statement(&line, "COM_STMT_PREPARE")["count"].as_u64().is_some_and(|n| n >= 2), "{line}");
    // The last read sums what the replay's updates wrote, as the capture's did.
    let total = statement(&line, "select count(*), sum(qty) from replay_items");
    assert_eq!(total["differences"], serde_json::json!({}), "{line}");
}

/// A connection open before tcpdump started: its commands replay on a
/// connection opened at the start; the execute of a statement it prepared
/// before is counted as not replayed, never sent with a wrong id.
#[test]
fn a_connection_open_before_the_capture_replays_what_it_can() {
    let Some(server) = TestServer::find() else { return };
    let Some(tcpdump) = tool("tcpdump") else { return };
    let _serial = common::serial();
    let dir = ScratchDir::new("replay-joined");
    let pcap = dir.0.join("joined.pcap");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(joined_session(&server, &tcpdump, &pcap));
    let capture = dir.0.join("joined.wbc");
    import("pcap", &pcap, &capture, Some(server.port));

    let output = replay(&server, &capture, &["--speed=max"]);
    succeeded(&output);
    let line = replay_line(&output);
    assert_eq!(line["capture"]["already_open"], 1, "{line}");
    assert_eq!(line["not_replayed"], serde_json::json!({"prepared_before_capture": 1}), "{line}");
    // SELECT 1 AS one, 2 AS two and SELECT 4 on the joined one, SELECT 3 on the other.
    assert_eq!(line["commands"], 3, "{line}");
    assert_eq!((&line["errors"], &line["differences"]), (&0.into(), &0.into()), "{line}");
    assert_eq!(line["connections"]["opened"], 2, "{line}");
    let text = common::text(&output.stderr) + &common::text(&output.stdout);
    assert!(!text.contains("panicked"), "{text}");
}
