//! `wirebench replay FILE search --slo=...` against `null-server --serial`
//! (one command at a time, 4 ms each: 250 commands/s at most) of a
//! capture sending 100 commands a second: no speed above 2.5 can hold
//! the bound (the queue grows without end there), and speed 1 takes 40%
//! of the server. What is asserted is the search's decision: it finds a
//! speed within those limits and confirms it, or it says the client was
//! the limit and what to do; never a speed the server cannot serve.

use std::borrow::Cow;
use std::path::PathBuf;

use serde_json::Value;
use wirebench_capture::format::{
    BlockSettings, CaptureHeader, CaptureWriter, CloseReason, Command, ConnectionClose, ConnectionOpen, Record, Source,
};

use crate::search::{json_lines, null_args, serial_server, CAPACITY};
use crate::{common, light_on_the_cores};

const MS: u64 = 1_000_000;
const T0: u64 = 1_790_000_000_000 * MS;
/// The capture's commands a second.
const CAPTURED_RATE: u64 = 100;

/// One connection sending a point select every 10 ms for `seconds`.
fn steady_capture(dir: &common::ScratchDir, seconds: u64) -> PathBuf {
    let header = CaptureHeader::new(Source::Record, "replay_search.rs");
    let mut writer = CaptureWriter::create(Vec::new(), &header, BlockSettings::default()).unwrap();
    let open = ConnectionOpen { at_ns: T0, conn: 1, user: Some(Cow::Borrowed(b"x")), ..ConnectionOpen::default() };
    writer.append(&Record::Open(open)).unwrap();
    let every = 1_000 / CAPTURED_RATE * MS;
    let commands = seconds * CAPTURED_RATE;
    for n in 0..commands {
        let payload = format!("\x03SELECT c FROM sbtest1 WHERE id={}", n % 1000 + 1).into_bytes();
        let command = Command { at_ns: T0 + n * every, conn: 1, payload: Cow::Owned(payload), ..Command::default() };
        writer.append(&Record::Command(command)).unwrap();
    }
    let end = T0 + commands * every;
    writer.append(&Record::Close(ConnectionClose { at_ns: end, conn: 1, reason: CloseReason::Quit })).unwrap();
    let path = dir.0.join("steady.wbc");
    std::fs::write(&path, writer.finish().unwrap()).unwrap();
    path
}

#[test]
fn a_replay_search_finds_a_speed_the_server_can_serve() {
    let _light = light_on_the_cores();
    let server = serial_server();
    let dir = common::ScratchDir::new("replay-search");
    let capture = steady_capture(&dir, 60);
    let capture = capture.to_str().unwrap();
    let steps = ["--slo=99:50", "--search-time=3", "--search-pause=0", "--search-confirm-time=4", "--format=json"];
    let mut args = vec!["replay", capture, "search"];
    args.extend(steps);
    let out = common::run_wirebench(&null_args(&server, &args));
    let lines = json_lines(&out.stdout);
    let summary = lines.iter().find(|l| l["type"] == "search").unwrap_or_else(|| panic!("no search line: {out}"));
    let steps = summary["steps"].as_array().unwrap();
    let ceiling = CAPACITY / CAPTURED_RATE as f64;
    let probe = &steps[0];
    assert_eq!((probe["phase"].as_str(), &probe["target_speed"]), (Some("probe"), &Value::Null), "{probe}");
    let held = probe["achieved_speed"].as_f64().unwrap();
    assert!(held <= ceiling * 1.1, "the probe held {held}, past what the server serves ({ceiling}): {probe}");
    match summary["end"].as_str() {
        Some("found") => {
            assert!(out.succeeded(), "{out}");
            let found = summary["max_speed"].as_f64().unwrap();
            assert!(found <= ceiling * 1.1, "found --speed={found}, past what the server serves ({ceiling})");
            let confirm = steps.iter().find(|s| s["phase"] == "confirm" && s["target_speed"].as_f64() == Some(found));
            let confirm = confirm.unwrap_or_else(|| panic!("no confirming step at {found}: {summary}"));
            assert_eq!(confirm["verdict"], "pass", "{confirm}");
            assert!(out.stderr.contains("the replay holds") || out.stdout.contains("the replay holds"), "{out}");
            let over = steps.iter().filter(|s| s["target_speed"].as_f64().is_some_and(|s| s > ceiling * 1.1));
            for step in over {
                assert_ne!(step["verdict"], "pass", "a speed the server cannot serve passed: {step}");
            }
        }
        Some("client_bound") => {
            // A busy machine: the search says so, and what to do.
            assert_eq!(out.code, Some(1), "{out}");
            assert!(
                out.stderr.contains("the client was the limit") && out.stderr.contains("Give the client more"),
                "{}",
                out.stderr
            );
        }
        other => panic!("the search ended {other:?}: {summary}\n{}", out.stderr),
    }
}
