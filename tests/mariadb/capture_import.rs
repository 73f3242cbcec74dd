//! `wirebench capture import` from what the test MariaDB and the network
//! recorded of real clients: a tcpdump of a sysbench run on loopback, its
//! commands counted against tshark's MySQL dissector; the server's general
//! and slow logs of a run; a connection opened before tcpdump started.
//!
//! Needs the test server, sysbench, tcpdump and tshark (scripts/test.sh
//! installs them), and the right to capture (root, as CI runs).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::{self, ScratchDir, TestServer};
use crate::pcap_capture::{tool, Tcpdump};
use wirebench::client::Connection;
use wirebench_capture::format::{CaptureReader, Record};
use wirebench_protocol::command::Param;

const EVENTS: u64 = 30;
const THREADS: u64 = 2;
const DATABASE: &str = "sbtest_capture";

fn sysbench_args(server: &TestServer, command: &str) -> Vec<String> {
    let mut args = vec!["oltp_read_write".to_owned()];
    args.extend(server.login_args(DATABASE));
    args.extend(["--tables=1", "--table-size=100", "--db-ps-mode=auto"].map(String::from));
    args.extend([format!("--events={EVENTS}"), format!("--threads={THREADS}"), "--time=0".into(), command.into()]);
    args
}

/// Runs sysbench; its report.
#[track_caller]
fn sysbench(binary: &Path, server: &TestServer, command: &str) -> String {
    let out = Command::new(binary).args(sysbench_args(server, command)).output().expect("run sysbench");
    assert!(out.status.success(), "sysbench {command}: {}{}", common::text(&out.stdout), common::text(&out.stderr));
    common::text(&out.stdout)
}

/// What sysbench's report counted: statements read, written, other
/// (BEGIN, COMMIT), in all, and errors it ignored (deadlocks, retried).
/// The statement that failed is in none of the counts: a capture holds
/// `total + errors` of them.
#[derive(Debug, PartialEq, Eq)]
struct Counted {
    read: u64,
    write: u64,
    other: u64,
    total: u64,
    errors: u64,
}

fn counted(report: &str) -> Counted {
    Counted {
        read: common::number_after(report, "read:"),
        write: common::number_after(report, "write:"),
        other: common::number_after(report, "other:"),
        total: common::number_after(report, "total:"),
        errors: common::number_after(report, "ignored errors:"),
    }
}

impl Counted {
    /// Statements sent, the failed ones included.
    fn sent(&self) -> u64 {
        self.total + self.errors
    }
}

/// Statements in `capture info`'s list: selects, writes, BEGIN and COMMIT
/// (sysbench's read, write and other, each with the failed ones).
fn counted_in(info: &Value) -> (u64, u64, u64) {
    let mut by_kind = (0, 0, 0);
    for s in info["top_by_count"].as_array().expect("top_by_count") {
        let (statement, n) = (s["statement"].as_str().unwrap_or(""), s["count"].as_u64().unwrap_or(0));
        match statement.split(' ').next() {
            Some("select") => by_kind.0 += n,
            Some("update" | "delete" | "insert") => by_kind.1 += n,
            Some("begin" | "commit") => by_kind.2 += n,
            _ => {}
        }
    }
    by_kind
}

pub(crate) fn import(from: &str, input: &Path, out: &Path, port: Option<u16>) -> String {
    let mut command = common::wirebench();
    command.args(["capture", "import", &format!("--from={from}")]).arg(input).arg(format!("--out={}", out.display()));
    if let Some(port) = port {
        command.arg(format!("--port={port}"));
    }
    let output = command.output().expect("run wirebench");
    assert!(
        output.status.success(),
        "capture import: {}{}",
        common::text(&output.stdout),
        common::text(&output.stderr)
    );
    common::text(&output.stdout)
}

fn info(capture: &Path) -> Value {
    let output = common::wirebench()
        .args(["capture", "info", "--format=json", "--top=100"])
        .arg(capture)
        .output()
        .expect("run wirebench");
    assert!(output.status.success(), "capture info: {}", common::text(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {}", common::text(&output.stdout)))
}

fn count(info: &Value, path: &[&str]) -> u64 {
    path.iter().fold(info, |v, key| &v[*key]).as_u64().unwrap_or(0)
}

/// tshark's MySQL dissector's count of each command byte in a pcap.
fn tshark_commands(tshark: &Path, pcap: &Path, port: u16) -> BTreeMap<u64, u64> {
    let out = Command::new(tshark)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .args(["-n", "-r"])
        .arg(pcap)
        .args(["-d", &format!("tcp.port=={port},mysql"), "-Y", "mysql.command", "-T", "fields", "-e", "mysql.command"])
        .output()
        .expect("run tshark");
    assert!(out.status.success(), "tshark: {}", common::text(&out.stderr));
    let mut counts = BTreeMap::new();
    // A segment holding several commands gives them comma-separated.
    for command in common::text(&out.stdout).split(['\n', ',']).filter(|c| !c.trim().is_empty()) {
        *counts.entry(command.trim().parse().expect("a command number")).or_default() += 1;
    }
    counts
}

/// The command names `capture info` counts, by command byte.
fn by_command_bytes(info: &Value) -> BTreeMap<u64, u64> {
    let names =
        [("COM_QUIT", 1), ("COM_QUERY", 3), ("COM_STMT_PREPARE", 22), ("COM_STMT_EXECUTE", 23), ("COM_STMT_CLOSE", 25)];
    let by_command = info["by_command"].as_object().expect("by_command");
    by_command
        .iter()
        .map(|(name, n)| {
            let byte = names.iter().find(|(n, _)| n == name).unwrap_or_else(|| panic!("a command {name} in {info}")).1;
            (byte, n.as_u64().unwrap_or(0))
        })
        .collect()
}

#[test]
fn a_tcpdump_of_a_sysbench_run_counts_as_tsharks_dissector() {
    let Some(server) = TestServer::find() else { return };
    let (Some(sysbench_binary), Some(tcpdump), Some(tshark)) = (common::sysbench(), tool("tcpdump"), tool("tshark"))
    else {
        return;
    };
    let _serial = common::serial();
    let dir = ScratchDir::new("capture-pcap");
    sysbench(&sysbench_binary, &server, "prepare");
    let mut attempt = 0;
    let (pcap, report, info) = common::in_one_of_three_runs(|| {
        attempt += 1;
        let pcap = dir.0.join(format!("run-{attempt}.pcap"));
        let capture = Tcpdump::start(&tcpdump, server.port, &pcap);
        let report = sysbench(&sysbench_binary, &server, "run");
        let dropped = capture.stop();
        if dropped > 0 {
            return Err(format!("tcpdump dropped {dropped} packets"));
        }
        let out = dir.0.join(format!("run-{attempt}.wbc"));
        let imported = import("pcap", &pcap, &out, Some(server.port));
        assert!(imported.contains("connections: 2 (0 open before"), "{imported}");
        Ok((pcap, report, info(&out)))
    });
    sysbench(&sysbench_binary, &server, "cleanup");
    assert_eq!(by_command_bytes(&info), tshark_commands(&tshark, &pcap, server.port), "{info}");
    // Every statement sysbench executed is there, each with its answer.
    let sysbench_counted = counted(&report);
    assert_eq!(count(&info, &["by_command", "COM_STMT_EXECUTE"]), sysbench_counted.sent(), "{report}\n{info}");
    let (read, write, other) = counted_in(&info);
    assert_eq!(read + write + other, sysbench_counted.sent(), "{report}\n{info}");
    assert!(read >= sysbench_counted.read && write >= sysbench_counted.write, "{report}\n{info}");
    assert_eq!(count(&info, &["errors"]), sysbench_counted.errors, "deadlocks sysbench ignored: {report}\n{info}");
    let closes = count(&info, &["by_command", "COM_STMT_CLOSE"]) + count(&info, &["by_command", "COM_QUIT"]);
    assert_eq!(count(&info, &["answers"]) + closes, count(&info, &["commands"]));
    assert_eq!((count(&info, &["connections", "total"]), count(&info, &["gaps"])), (THREADS, 0));
    assert_eq!(info["answer_coverage"], "whole");
    assert_eq!(info["complete"], true);
}

/// Runs SQL as the server's administrator (the OS user over the socket).
fn as_admin(server: &TestServer, sql: &str) -> String {
    let socket = server.socket.as_ref().expect("the test server's socket (WIREBENCH_TEST_SOCKET)");
    let out = Command::new("mariadb")
        .args(["--no-defaults", "--protocol=socket", "--batch", "--skip-column-names"])
        .arg(format!("--socket={}", socket.display()))
        .arg(format!("--execute={sql}"))
        .output()
        .expect("run mariadb");
    assert!(out.status.success(), "{sql}: {}", common::text(&out.stderr));
    common::text(&out.stdout)
}

/// The server's general and slow logs into files, while it lives; the
/// settings it found are put back.
struct ServerLogs<'a> {
    server: &'a TestServer,
    before: String,
}

impl<'a> ServerLogs<'a> {
    fn on(server: &'a TestServer, dir: &Path) -> Self {
        let before = as_admin(
            server,
            "SELECT CONCAT_WS(',', @@log_output, @@long_query_time, @@general_log_file, @@slow_query_log_file)",
        );
        let (general, slow) = (dir.join("general.log"), dir.join("slow.log"));
        as_admin(
            server,
            &format!(
                "SET GLOBAL log_output='FILE', general_log_file='{}', slow_query_log_file='{}', long_query_time=0, \
                 general_log=1, slow_query_log=1",
                general.display(),
                slow.display()
            ),
        );
        ServerLogs { server, before: before.trim().to_owned() }
    }
}

impl Drop for ServerLogs<'_> {
    fn drop(&mut self) {
        let parts: Vec<&str> = self.before.split(',').collect();
        if let [output, long, general, slow] = parts[..] {
            as_admin(
                self.server,
                &format!(
                    "SET GLOBAL general_log=0, slow_query_log=0, log_output='{output}', long_query_time={long}, \
                     general_log_file='{general}', slow_query_log_file='{slow}'"
                ),
            );
        }
    }
}

#[test]
fn the_general_and_slow_logs_of_a_sysbench_run() {
    let Some(server) = TestServer::find() else { return };
    let Some(sysbench_binary) = common::sysbench() else { return };
    let _serial = common::serial();
    let dir = ScratchDir::new("capture-logs");
    // The server writes the logs, maybe as another user.
    std::fs::set_permissions(&dir.0, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    sysbench(&sysbench_binary, &server, "prepare");
    let report = {
        let _logs = ServerLogs::on(&server, &dir.0);
        sysbench(&sysbench_binary, &server, "run")
    };
    sysbench(&sysbench_binary, &server, "cleanup");
    let sysbench_counted = counted(&report);
    let sent = |info: &Value| {
        let (read, write, other) = counted_in(info);
        read + write + other
    };

    let general = dir.0.join("general.wbc");
    let imported = import("general-log", &dir.0.join("general.log"), &general, None);
    assert!(imported.contains("answers: 0"), "{imported}");
    let general = info(&general);
    assert_eq!(general["answer_coverage"], "none");
    assert_eq!(count(&general, &["by_command", "COM_STMT_EXECUTE"]), sysbench_counted.sent(), "{report}\n{general}");
    assert_eq!(sent(&general), sysbench_counted.sent(), "{report}\n{general}");
    // Each of sysbench's threads prepared its 11 statements.
    assert_eq!(count(&general, &["by_command", "COM_STMT_PREPARE"]), 11 * THREADS, "{general}");
    assert_eq!(count(&general, &["connections", "users", "sbtest"]), THREADS, "{general}");

    let slow = dir.0.join("slow.wbc");
    import("slow-log", &dir.0.join("slow.log"), &slow, None);
    let slow = info(&slow);
    assert_eq!(slow["answer_coverage"], "partial");
    // The slow log holds the statements, each with its time and rows; a
    // statement that failed is logged too.
    assert_eq!(sent(&slow), sysbench_counted.sent(), "{report}\n{slow}");
    let top = &slow["top_by_time"][0];
    assert!(top["answered"].as_u64().unwrap() > 0 && top["total_s"].as_f64().unwrap() > 0.0, "{slow}");
}

/// A connection opens and prepares a statement; tcpdump starts; that
/// connection runs a query and the statement, another one logs in and
/// queries, both quit.
pub(crate) async fn joined_session(server: &TestServer, tcpdump: &Path, pcap: &Path) {
    let mut before = Connection::connect(&server.options(server.tcp())).await.unwrap();
    let statement = before.prepare("SELECT CONCAT('x', ?) AS c").await.unwrap();
    let capture = Tcpdump::start(tcpdump, server.port, pcap);
    before.query("SELECT 1 AS one, 2 AS two").await.unwrap();
    before.execute(&statement, &[Param::I32(7)]).await.unwrap();
    let mut after = Connection::connect(&server.options(server.tcp())).await.unwrap();
    after.query("SELECT 3").await.unwrap();
    after.quit().await.unwrap();
    before.query("SELECT 4").await.unwrap();
    before.quit().await.unwrap();
    assert_eq!(capture.stop(), 0, "tcpdump dropped packets");
}

#[test]
fn a_connection_open_before_tcpdump_started_is_joined() {
    let Some(server) = TestServer::find() else { return };
    let Some(tcpdump) = tool("tcpdump") else { return };
    let _serial = common::serial();
    let dir = ScratchDir::new("capture-joined");
    let pcap = dir.0.join("joined.pcap");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(joined_session(&server, &tcpdump, &pcap));

    let out = dir.0.join("joined.wbc");
    let report = import("pcap", &pcap, &out, Some(server.port));
    assert!(report.contains("connections: 2 (1 open before the capture began)"), "{report}");
    assert!(report.contains("1 commands on 1 prepared statements the capture never saw prepared"), "{report}");
    let mut reader = CaptureReader::open(std::fs::File::open(&out).unwrap()).unwrap();
    let mut records = Vec::new();
    while let Some(record) = reader.next_record().unwrap() {
        records.push(record.into_owned());
    }
    let joined = records.iter().find_map(|r| match r {
        Record::Open(o) if o.already_open => Some(o.conn),
        _ => None,
    });
    let joined = joined.expect("a connection open before the capture");
    let commands: Vec<(Vec<u8>, bool)> = records
        .iter()
        .filter_map(|r| match r {
            Record::Command(c) if c.conn == joined => Some((c.payload.to_vec(), c.unknown_statement)),
            _ => None,
        })
        .collect();
    assert_eq!(commands.len(), 4, "{commands:?}");
    assert_eq!(commands[0], (b"\x03SELECT 1 AS one, 2 AS two".to_vec(), false));
    assert!(commands[1].1, "the execute of a statement prepared before the capture is flagged");
    let answers: Vec<(Option<u64>, Option<u64>)> = records
        .iter()
        .filter_map(|r| match r {
            Record::Answer(a) if a.conn == joined => Some((a.columns, a.rows)),
            _ => None,
        })
        .collect();
    // Its capabilities were found from its answers: the first one's two columns, one row.
    assert_eq!(answers.first(), Some(&(Some(2), Some(1))), "{answers:?}");
    assert_eq!(answers.len(), 3, "{answers:?}");
    let opened_later = records.iter().find_map(|r| match r {
        Record::Open(o) if !o.already_open => Some(o.user.as_deref().map(<[u8]>::to_vec)),
        _ => None,
    });
    assert_eq!(opened_later, Some(Some(b"sbtest".to_vec())));
}
