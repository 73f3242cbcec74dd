//! A tcpdump of the test server's port on loopback, for the tests that
//! make captures from real clients (`capture_import.rs`, `replay_clients.rs`):
//! it listens once started, and stops only once every packet sent before is
//! in its file.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::common;

/// A tool of the base system, or `None` after `common::unavailable`.
pub(crate) fn tool(name: &str) -> Option<PathBuf> {
    let found = ["/usr/bin", "/usr/sbin", "/bin", "/sbin"].iter().map(|d| Path::new(d).join(name)).find(|p| p.exists());
    if found.is_none() {
        common::unavailable(&format!("{name} is not installed (Debian package {name})"));
    }
    found
}

/// tcpdump writing the server's port's packets on loopback to `file`,
/// listening once this returns.
pub(crate) struct Tcpdump {
    child: Child,
    stderr: std::sync::mpsc::Receiver<String>,
    file: PathBuf,
}

/// The UDP port of the datagram that marks the end of a capture (the
/// discard port: nothing needs to listen there).
const MARKER_PORT: u16 = 9;

impl Tcpdump {
    pub(crate) fn start(binary: &Path, port: u16, file: &Path) -> Tcpdump {
        let mut child = Command::new(binary)
            // A 64 MiB buffer: the kernel drops what a busy tcpdump has no room for.
            .args(["-i", "lo", "-B", "65536", "-U", "-n", "-w"])
            .arg(file)
            .arg(format!("tcp port {port} or udp port {MARKER_PORT}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start tcpdump");
        let stderr = child.stderr.take().expect("piped");
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let capture = Tcpdump { child, stderr: lines, file: file.to_owned() };
        loop {
            match capture.stderr.recv_timeout(Duration::from_secs(60)) {
                Ok(line) if line.contains("listening on") => return capture,
                Ok(_) => {}
                Err(e) => panic!("tcpdump never said it was listening: {e}"),
            }
        }
    }

    /// Stops it once every packet sent so far is in its file (a datagram
    /// sent last is), and returns how many packets the kernel dropped.
    pub(crate) fn stop(mut self) -> u64 {
        let marker = format!("wirebench capture test {} ends", std::process::id());
        let socket = std::net::UdpSocket::bind("127.0.0.1:0").expect("a UDP socket");
        common::wait_until("tcpdump to write the end marker", Duration::from_secs(60), || {
            let _ = socket.send_to(marker.as_bytes(), ("127.0.0.1", MARKER_PORT));
            // sleep: paces the marker's resends.
            std::thread::sleep(Duration::from_millis(20));
            std::fs::read(&self.file).is_ok_and(|bytes| bytes.windows(marker.len()).any(|w| w == marker.as_bytes()))
        });
        let killed = Command::new("kill").args(["-INT", &self.child.id().to_string()]).status().expect("run kill");
        assert!(killed.success(), "kill -INT tcpdump");
        let status = self.child.wait().expect("tcpdump ends");
        assert!(status.success() || status.code().is_none(), "tcpdump: {status}");
        let rest: Vec<String> = self.stderr.iter().collect();
        let dropped = rest.iter().find_map(|l| l.strip_suffix(" packets dropped by kernel")?.trim().parse().ok());
        dropped.unwrap_or_else(|| panic!("tcpdump said nothing of drops: {rest:?}"))
    }
}

/// A test that fails before `stop` leaves no tcpdump running.
impl Drop for Tcpdump {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
