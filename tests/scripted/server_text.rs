//! What a server writes reaches the terminal only made safe: a scripted
//! server with escape sequences in its version string and a 64 KiB ERR
//! message full of them; wirebench's stderr carries neither raw control
//! bytes nor more than a bounded piece of the message.

use crate::common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};

use common::greeting;
use wirebench_protocol::Capabilities;

fn send(stream: &mut TcpStream, seq: u8, payload: &[u8]) {
    let len = payload.len().to_le_bytes();
    stream.write_all(&[len[0], len[1], len[2], seq]).unwrap();
    stream.write_all(payload).unwrap();
}

fn receive(stream: &mut TcpStream) -> Vec<u8> {
    let mut header = [0; 4];
    stream.read_exact(&mut header).unwrap();
    let mut payload = vec![0; u32::from_le_bytes([header[0], header[1], header[2], 0]) as usize];
    stream.read_exact(&mut payload).unwrap();
    payload
}

/// Clears the screen, turns the text red, retitles the window, rings the
/// bell, starts a new line.
const HOSTILE: &str = "\u{1b}[2J\u{1b}[31mRED\u{1b}]0;pwned\u{7}\r\n\u{9b}1m";

/// Accepts one connection: a greeting whose version carries [`HOSTILE`],
/// OK to any login, and a 64 KiB ERR of it to the first command.
fn hostile_server(listener: TcpListener) {
    let (mut stream, _) = listener.accept().unwrap();
    let caps = Capabilities::LONG_PASSWORD
        | Capabilities::PROTOCOL_41
        | Capabilities::SECURE_CONNECTION
        | Capabilities::PLUGIN_AUTH
        | Capabilities::CONNECT_WITH_DB
        | Capabilities::TRANSACTIONS
        | Capabilities::MULTI_RESULTS;
    send(&mut stream, 0, &greeting(&format!("8.0.36{HOSTILE}"), caps, "mysql_native_password"));
    receive(&mut stream);
    send(&mut stream, 2, &[0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00]);
    receive(&mut stream);
    let mut err = vec![0xff];
    err.extend_from_slice(&1064u16.to_le_bytes());
    err.extend_from_slice(b"#42000");
    while err.len() < 64 * 1024 {
        err.extend_from_slice(HOSTILE.as_bytes());
    }
    send(&mut stream, 1, &err);
    let _ = stream.read_to_end(&mut Vec::new());
}

#[test]
fn server_text_is_printed_without_control_characters_and_cut() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || hostile_server(listener));
    let out = common::wirebench()
        .args(["oltp_point_select", "--mysql-host=127.0.0.1", "--mysql-compression=on", "cleanup"])
        .arg(format!("--mysql-port={port}"))
        .output()
        .unwrap();
    server.join().unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(!stderr.chars().any(|c| c.is_control() && c != '\n'), "raw control characters reached stderr: {stderr:?}");
    let version = stderr.lines().find(|l| l.contains("does not offer the compressed protocol")).unwrap();
    assert!(version.contains("(8.0.36\\u{1b}[2J\\u{1b}[31mRED\\u{1b}]0;pwned\\u{7}\\r\\n\\u{9b}1m)"), "{version}");
    let fatal = stderr.lines().find(|l| l.starts_with("FATAL:")).unwrap();
    assert!(fatal.contains("ERROR 1064 (42000): \\u{1b}[2J\\u{1b}[31mRED"), "{fatal}");
    assert!(fatal.contains(" [... cut: ") && fatal.ends_with(" more bytes from the server]"), "{fatal}");
    assert!(fatal.len() < 2048, "{} bytes of a 64 KiB message shown", fatal.len());
}
