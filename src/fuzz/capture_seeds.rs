//! `--seed-capture=FILE`: the sessions of a capture file (`wirebench
//! record`, `capture import`) as the corpus's first sessions, so that the
//! fuzzer mutates the traffic a server really gets. Each captured
//! connection becomes the payloads of its commands in order; the login is
//! the run's own ([`seeds_from_sessions`](super::seeds::seeds_from_sessions)).
//!
//! The corpus holds what it is given in memory, so the capture is read in
//! one pass and cut to a bounded sample: the first connections seen, the
//! first commands of each, commands of a reasonable size. A log's
//! text-form executes (a statement with its values in place, not the wire
//! form) and commands on statements the capture never saw prepared are
//! left out: sent as they are, they would only be refused.

use std::collections::HashMap;
use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use wirebench_capture::format::{CaptureReader, Record};

use super::fuzz_error::FuzzError;

/// At most this many captured connections become sessions.
pub const MAX_SESSIONS: usize = 256;
/// At most this many commands of each.
pub const MAX_COMMANDS: usize = 64;
/// Commands larger than this are left out (the corpus keeps every byte).
pub const MAX_COMMAND_BYTES: usize = 64 * 1024;

/// The sessions of `path`, each its commands' payloads in order.
pub fn read_capture_sessions(path: &Path) -> Result<Vec<Vec<Vec<u8>>>, FuzzError> {
    let fail = |reason: String| FuzzError::SeedCapture { path: path.to_owned(), reason };
    let file = File::open(path).map_err(|e| fail(format!("cannot open it: {e}")))?;
    let mut reader = CaptureReader::open(BufReader::new(file)).map_err(|e| fail(e.to_string()))?;
    let mut sessions: Vec<Vec<Vec<u8>>> = Vec::new();
    let mut by_conn: HashMap<u64, usize> = HashMap::new();
    while let Some(record) = reader.next_record().map_err(|e| fail(e.to_string()))? {
        let Record::Command(command) = record else { continue };
        if command.text_form || command.unknown_statement || command.payload.len() > MAX_COMMAND_BYTES {
            continue;
        }
        let index = match by_conn.get(&command.conn) {
            Some(&index) => index,
            None if sessions.len() < MAX_SESSIONS => {
                sessions.push(Vec::new());
                by_conn.insert(command.conn, sessions.len() - 1);
                sessions.len() - 1
            }
            None => continue,
        };
        if let Some(session) = sessions.get_mut(index).filter(|s| s.len() < MAX_COMMANDS) {
            session.push(command.payload.into_owned());
        }
    }
    sessions.retain(|s| !s.is_empty());
    if sessions.is_empty() {
        return Err(fail(
            "it holds no command the fuzzer can send (a capture with commands in wire form: `wirebench record`, \
             or `capture import --from=pcap`)"
                .to_owned(),
        ));
    }
    Ok(sessions)
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use wirebench_capture::format::{BlockSettings, CaptureHeader, CaptureWriter, Command, ConnectionOpen, Source};

    use super::*;

    fn capture(dir: &Path, commands: &[(u64, &[u8], bool)]) -> std::path::PathBuf {
        let path = dir.join("seeds.wbcap");
        let file = File::create(&path).unwrap();
        let header = CaptureHeader::new(Source::Record, "test");
        let mut writer = CaptureWriter::create(file, &header, BlockSettings::default()).unwrap();
        for conn in [1, 2] {
            writer.append(&Record::Open(ConnectionOpen { at_ns: conn, conn, ..Default::default() })).unwrap();
        }
        for (n, &(conn, payload, text_form)) in commands.iter().enumerate() {
            let command = Command {
                at_ns: 10 + n as u64,
                conn,
                payload: Cow::Borrowed(payload),
                text_form,
                ..Default::default()
            };
            writer.append(&Record::Command(command)).unwrap();
        }
        writer.finish().unwrap();
        path
    }

    /// A directory of its own for each test, removed at the end.
    struct Scratch(std::path::PathBuf);

    impl Scratch {
        fn new(name: &str) -> Self {
            let dir = std::env::temp_dir().join(format!("wirebench-seed-capture-{name}-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            Scratch(dir)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn each_connection_is_a_session_of_its_commands_in_order() {
        let dir = Scratch::new("order");
        let path = capture(
            &dir.0,
            &[
                (1, b"\x03SELECT 1", false),
                (2, b"\x0e", false),
                (1, b"\x03SELECT 2", false),
                (2, b"\x17Execute x", true),
            ],
        );
        let sessions = read_capture_sessions(&path).unwrap();
        assert_eq!(sessions, vec![vec![b"\x03SELECT 1".to_vec(), b"\x03SELECT 2".to_vec()], vec![b"\x0e".to_vec()]]);
    }

    #[test]
    fn a_file_that_is_no_capture_or_holds_nothing_to_send_is_refused() {
        let dir = Scratch::new("refused");
        let junk = dir.0.join("junk");
        std::fs::write(&junk, b"not a capture").unwrap();
        let err = read_capture_sessions(&junk).unwrap_err().to_string();
        assert!(err.starts_with(&format!("--seed-capture={}: ", junk.display())), "{err}");
        let empty = capture(&dir.0, &[(1, b"\x17Execute x", true)]);
        let err = read_capture_sessions(&empty).unwrap_err().to_string();
        assert!(err.contains("holds no command the fuzzer can send"), "{err}");
    }
}
