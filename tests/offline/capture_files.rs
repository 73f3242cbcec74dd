//! `wirebench capture` on files that are not what they should be: a capture
//! cut off (read to its last whole block, and said so), one damaged (refused
//! with the offset), a file that is no capture, an import that would write
//! over a file, a pcap with no MySQL traffic on the port.

use std::path::Path;
use std::process::Output;

use crate::common::{self, ScratchDir};

const GENERAL_LOG: &str = "mariadbd, Version: 10.11.19-MariaDB-0+deb12u1 (Debian 12). started with:
Tcp port: 3306  Unix socket: /run/mysqld/mysqld.sock
Time\t\t    Id Command\tArgument
231010 12:00:00\t     9 Connect\tapp@10.0.0.7 on shop using TCP/IP
";

/// A general log of `n` statements on one connection.
fn general_log(n: usize) -> String {
    let mut log = GENERAL_LOG.to_owned();
    for i in 0..n {
        let second =
            if i % 50 == 0 { format!("231010 12:{:02}:{:02}", i / 3000 % 60, i / 50 % 60) } else { String::new() };
        log.push_str(&format!(
            "{second}\t{}     9 Query\tSELECT name, price FROM items WHERE id = {}\n",
            if second.is_empty() { "\t" } else { "" },
            i * 7919 % 100_000
        ));
    }
    log.push_str("\t\t     9 Quit\t\n");
    log
}

fn run(args: &[&str]) -> Output {
    common::wirebench().args(args).output().expect("run wirebench")
}

fn import_log(dir: &ScratchDir, statements: usize) -> std::path::PathBuf {
    let log = dir.write("general.log", &general_log(statements));
    let capture = dir.0.join("general.wbc");
    let out = run(&[
        "capture",
        "import",
        "--from=general-log",
        &log.display().to_string(),
        &format!("--out={}", capture.display()),
    ]);
    assert!(out.status.success(), "{}", common::text(&out.stderr));
    assert!(
        common::text(&out.stdout).contains(&format!("commands: {}", statements + 1)),
        "{}",
        common::text(&out.stdout)
    );
    capture
}

fn info(path: &Path) -> Output {
    run(&["capture", "info", &path.display().to_string()])
}

#[test]
fn a_whole_capture_is_summed_up() {
    let dir = ScratchDir::new("capture-whole");
    let capture = import_log(&dir, 500);
    let out = info(&capture);
    let text = common::text(&out.stdout);
    assert!(out.status.success(), "{}", common::text(&out.stderr));
    assert!(text.contains("file: whole"), "{text}");
    assert!(text.contains("COM_QUERY                         500"), "{text}");
    assert!(text.contains("500 100.0%") || text.contains("       500  99.8%"), "{text}");
    assert!(text.contains("select name, price from items where id = ?"), "{text}");
    assert!(text.contains("times to the second; answers: none"), "{text}");
    let json = run(&["capture", "info", "--format=json", &capture.display().to_string()]);
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON");
    assert_eq!(value["by_command"]["COM_QUERY"], 500);
    assert_eq!(value["complete"], true);
    assert_eq!(value["connections"]["users"]["app"], 1);
}

#[test]
fn a_capture_cut_off_reads_to_its_last_whole_block_and_says_so() {
    let dir = ScratchDir::new("capture-cut");
    // Enough statements for several blocks.
    let capture = import_log(&dir, 40_000);
    let bytes = std::fs::read(&capture).unwrap();
    let cut = dir.0.join("cut.wbc");
    std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3]).unwrap();
    let out = info(&cut);
    let (stdout, stderr) = (common::text(&out.stdout), common::text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("is cut off at byte"), "{stderr}");
    assert!(stdout.contains("file: cut off at byte"), "{stdout}");
    let commands: u64 = common::number_after(&stdout.replace(';', " "), "commands:");
    assert!(commands > 10_000 && commands < 40_000, "the whole blocks' commands: {commands}");
}

#[test]
fn a_damaged_capture_is_refused_with_the_offset() {
    let dir = ScratchDir::new("capture-damaged");
    let capture = import_log(&dir, 40_000);
    let mut bytes = std::fs::read(&capture).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x40;
    let damaged = dir.0.join("damaged.wbc");
    std::fs::write(&damaged, &bytes).unwrap();
    let out = info(&damaged);
    let stderr = common::text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("damaged at byte"), "{stderr}");
    let offset: u64 =
        stderr.split("damaged at byte ").nth(1).and_then(|r| r.split(':').next()).unwrap().parse().unwrap();
    assert!(offset <= middle as u64, "the block holding byte {middle}, reported at {offset}");
}

#[test]
fn files_that_are_no_capture_are_named() {
    let dir = ScratchDir::new("capture-other");
    let log = dir.write("general.log", &general_log(3));
    let out = info(&log);
    assert!(common::text(&out.stderr).contains("--from=general-log"), "{}", common::text(&out.stderr));
    let out = run(&["capture", "import", "--from=slow-log", &log.display().to_string(), "--out=/nonexistent/x.wbc"]);
    assert!(common::text(&out.stderr).contains("not a slow query log"), "{}", common::text(&out.stderr));
}

#[test]
fn an_import_never_writes_over_a_file() {
    let dir = ScratchDir::new("capture-exists");
    let log = dir.write("general.log", &general_log(3));
    let mine = dir.write("mine.txt", "something a user wrote");
    let out = run(&[
        "capture",
        "import",
        "--from=general-log",
        &log.display().to_string(),
        &format!("--out={}", mine.display()),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(common::text(&out.stderr).contains("exists: give another --out"), "{}", common::text(&out.stderr));
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "something a user wrote");
    // A failed import leaves nothing behind.
    let out = run(&[
        "capture",
        "import",
        "--from=pcap",
        &log.display().to_string(),
        &format!("--out={}", dir.0.join("x.wbc").display()),
    ]);
    assert!(common::text(&out.stderr).contains("not a pcap"), "{}", common::text(&out.stderr));
    let left: Vec<_> = std::fs::read_dir(&dir.0).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left.len(), 2, "{left:?}");
}

/// A pcap (µs, Ethernet) of one TCP segment from port 41000 to `port`.
fn pcap_of_one_segment(port: u16) -> Vec<u8> {
    let mut out = Vec::new();
    for v in [0xA1B2_C3D4u32, 0x0004_0002, 0, 0, 262_144, 1] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    let payload = b"GET / HTTP/1.1\r\n\r\n";
    let mut tcp = Vec::new();
    tcp.extend_from_slice(&41000u16.to_be_bytes());
    tcp.extend_from_slice(&port.to_be_bytes());
    tcp.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 1, 0x50, 0x18, 0xFF, 0xFF, 0, 0, 0, 0]);
    tcp.extend_from_slice(payload);
    let mut frame = vec![0u8; 12];
    frame.extend_from_slice(&[0x08, 0x00, 0x45, 0]);
    frame.extend_from_slice(&((20 + tcp.len()) as u16).to_be_bytes());
    frame.extend_from_slice(&[0, 0, 0x40, 0, 64, 6, 0, 0, 127, 0, 0, 1, 127, 0, 0, 1]);
    frame.extend_from_slice(&tcp);
    for v in [1_700_000_000u32, 0, frame.len() as u32, frame.len() as u32] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&frame);
    out
}

#[test]
fn a_pcap_with_no_mysql_traffic_names_the_ports_it_has() {
    let dir = ScratchDir::new("capture-pcap");
    let pcap = dir.0.join("web.pcap");
    std::fs::write(&pcap, pcap_of_one_segment(8080)).unwrap();
    let out = run(&[
        "capture",
        "import",
        "--from=pcap",
        &pcap.display().to_string(),
        &format!("--out={}", dir.0.join("x.wbc").display()),
    ]);
    let stderr = common::text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("no MySQL traffic on port 3306"), "{stderr}");
    assert!(stderr.contains("8080 (1 packets)") && stderr.contains("--port=N"), "{stderr}");
    assert!(!dir.0.join("x.wbc").exists());
}
