//! `wirebench replay` against the test MariaDB, of captures written here
//! with the capture crate's writer, whose times are exact: `--speed` and
//! `--time` decide which commands are due before the end, `--multiply`
//! runs copies of each connection, a file cut off or damaged or not a
//! capture at all, a captured user the server refuses. What is asserted
//! is what the product decides (which commands it sends, what it says),
//! never how fast a loaded machine ran them.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;
use wirebench_capture::format::{
    Answer, BlockSettings, CaptureHeader, CaptureWriter, CloseReason, Command, ConnectionClose, ConnectionOpen, Record,
    Source,
};
use wirebench_protocol::response::AnswerKind;

use crate::common::{self, ScratchDir, TestServer};

const SECOND: u64 = 1_000_000_000;
const T0: u64 = 1_790_000_000 * SECOND;

/// One connection of user `app` into sbtest, sending `SELECT n` at
/// second n for n in 0..commands (each answered 1 ms later), then quitting.
fn one_a_second(commands: u64) -> Vec<Record<'static>> {
    let mut records = vec![Record::Open(ConnectionOpen {
        at_ns: T0,
        conn: 1,
        user: Some(Cow::Borrowed(b"app")),
        database: Some(Cow::Borrowed(b"sbtest")),
        ..ConnectionOpen::default()
    })];
    for n in 0..commands {
        let at = T0 + n * SECOND;
        records.push(Record::Command(Command {
            at_ns: at,
            conn: 1,
            answer_follows: true,
            payload: Cow::Owned(format!("\x03SELECT {n}").into_bytes()),
            ..Command::default()
        }));
        records.push(Record::Answer(Answer {
            at_ns: at + 1_000_000,
            conn: 1,
            kind: Some(AnswerKind::ResultSet),
            result_sets: Some(1),
            columns: Some(1),
            rows: Some(1),
            ..Answer::default()
        }));
    }
    let end = T0 + commands * SECOND;
    records.push(Record::Command(Command {
        at_ns: end,
        conn: 1,
        payload: Cow::Borrowed(b"\x01"),
        ..Command::default()
    }));
    records.push(Record::Close(ConnectionClose { at_ns: end, conn: 1, reason: CloseReason::Quit }));
    records
}

fn write_capture(dir: &ScratchDir, name: &str, records: &[Record<'_>]) -> PathBuf {
    let header = CaptureHeader::new(Source::Record, "replay_schedule.rs");
    // Small blocks: a cut or a damaged byte falls inside the records.
    let settings = BlockSettings { target_bytes: 64, level: 1 };
    let mut writer = CaptureWriter::create(Vec::new(), &header, settings).unwrap();
    for record in records {
        writer.append(record).unwrap();
    }
    let path = dir.0.join(name);
    std::fs::write(&path, writer.finish().unwrap()).unwrap();
    path
}

/// `wirebench replay FILE` as `sbtest` with `args`, JSON results.
pub(crate) fn replay(server: &TestServer, capture: &Path, args: &[&str]) -> Output {
    common::wirebench()
        .arg("replay")
        .arg(capture)
        .args(server.login_args("sbtest"))
        .arg("--format=json")
        .args(args)
        .output()
        .expect("run wirebench")
}

/// The replay's result line.
#[track_caller]
pub(crate) fn replay_line(output: &Output) -> Value {
    let stdout = common::text(&output.stdout);
    let line = stdout.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()).find(|v| v["type"] == "replay");
    line.unwrap_or_else(|| panic!("no replay line: {stdout}\n{}", common::text(&output.stderr)))
}

#[track_caller]
pub(crate) fn succeeded(output: &Output) {
    assert!(output.status.success(), "{}\n{}", common::text(&output.stdout), common::text(&output.stderr));
}

/// At `--speed=1` with `--time=1` only the command due at second 0 goes
/// out: the others are due after the end. Four times as fast, the four
/// are due within the first second, and all go out within `--time=2`.
#[test]
fn speed_decides_which_commands_are_due_before_the_end() {
    let Some(server) = TestServer::find() else { return };
    let dir = ScratchDir::new("replay-speed");
    let capture = write_capture(&dir, "seconds.wbc", &one_a_second(4));
    let slow = replay(&server, &capture, &["--speed=1", "--time=1"]);
    succeeded(&slow);
    let slow = replay_line(&slow);
    assert_eq!((slow["commands"].as_u64(), slow["reached_s"].as_f64()), (Some(1), Some(0.0)), "{slow}");
    let fast = replay(&server, &capture, &["--speed=4", "--time=2"]);
    succeeded(&fast);
    let fast = replay_line(&fast);
    assert_eq!((fast["commands"].as_u64(), fast["reached_s"].as_f64()), (Some(4), Some(3.0)), "{fast}");
    assert_eq!(fast["speed"], 4.0);
    // The capture's answers hold no checksum: rows are compared, and match.
    assert_eq!(fast["differences"], 0, "{fast}");
}

/// `--multiply=3` replays three copies of each connection, each with
/// every command; on either backend of the engine's loop (io_uring where
/// the kernel has it, the socket loop with `--io=epoll`).
#[test]
fn multiply_runs_copies_of_each_connection() {
    let Some(server) = TestServer::find() else { return };
    let dir = ScratchDir::new("replay-multiply");
    let capture = write_capture(&dir, "seconds.wbc", &one_a_second(3));
    for io in ["--io=auto", "--io=epoll"] {
        let output = replay(&server, &capture, &["--speed=max", "--multiply=3", io]);
        succeeded(&output);
        let result = replay_line(&output);
        assert_eq!(result["commands"], 9, "{io}: {result}");
        assert_eq!(result["connections"]["opened"], 3, "{io}: {result}");
        assert_eq!(result["connections"]["replayed"], 3, "{io}: {result}");
        let select = result["statements"].as_array().unwrap().iter().find(|s| s["statement"] == "select ?").unwrap();
        assert_eq!((select["count"].as_u64(), select["captured_count"].as_u64()), (Some(9), Some(3)), "{select}");
    }
}

/// A capture cut off is replayed as far as it goes, and said to be; one
/// damaged inside is replayed up to the damage, then the command fails
/// naming the offset; a file that is no capture is refused before any
/// connection opens, saying what it is.
#[test]
fn cut_damaged_and_foreign_files() {
    let Some(server) = TestServer::find() else { return };
    let dir = ScratchDir::new("replay-files");
    let whole = std::fs::read(write_capture(&dir, "whole.wbc", &one_a_second(20))).unwrap();

    let cut = dir.0.join("cut.wbc");
    std::fs::write(&cut, &whole[..whole.len() * 2 / 3]).unwrap();
    let output = replay(&server, &cut, &["--speed=max"]);
    succeeded(&output);
    assert!(common::text(&output.stderr).contains("is cut off at byte"), "{}", common::text(&output.stderr));
    let result = replay_line(&output);
    assert_eq!(result["capture"]["complete"], false);
    let replayed = result["commands"].as_u64().unwrap();
    assert!(replayed > 0 && replayed < 20, "{result}");

    let damaged = dir.0.join("damaged.wbc");
    let mut bytes = whole.clone();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x55;
    std::fs::write(&damaged, &bytes).unwrap();
    let output = replay(&server, &damaged, &["--speed=max"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = common::text(&output.stderr);
    assert!(stderr.contains("damaged at byte"), "{stderr}");
    assert_eq!(replay_line(&output)["capture"]["complete"], false);

    let pcap = dir.write("traffic.pcap", "");
    std::fs::write(&pcap, [0xD4, 0xC3, 0xB2, 0xA1, 2, 0, 4, 0]).unwrap();
    let output = replay(&server, &pcap, &[]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = common::text(&output.stderr);
    assert!(stderr.contains("it is a pcap file: import it first"), "{stderr}");
    assert!(!common::text(&output.stdout).contains("Threads started"), "refused before it ran");
}

/// A captured user mapped to a login the server refuses ends the replay
/// before it starts, naming the captured user and what to pass.
#[test]
fn a_refused_login_names_the_captured_user_and_what_to_pass() {
    let Some(server) = TestServer::find() else { return };
    let dir = ScratchDir::new("replay-refused");
    let capture = write_capture(&dir, "seconds.wbc", &one_a_second(2));
    let output = replay(&server, &capture, &["--user-map=app:no_such_user:secret"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = common::text(&output.stderr);
    assert!(stderr.contains("refused the login as no_such_user, which replays app"), "{stderr}");
    assert!(stderr.contains("--user-map=app:USER:PASSWORD"), "{stderr}");
    assert!(!stderr.contains("secret"), "{stderr}");
}
