//! The reproducer file: what failed, how to replay it, and the exact bytes
//! of the failing session (and of the sessions just before it), as text an
//! engineer can read:
//!
//! ```text
//! wirebench fuzz reproducer 1
//! observed: the server is down: connection refused (...)
//! failure: down
//! server: 10.11.19-MariaDB
//! fuzz-deadline: 5.0 s
//! seed: 42
//! ...
//! session failing
//! packet login live=scramble:mysql_native_password@36+20
//!   # answer: login -> OK
//!   5b000001 8da20a00 ffffff00 2d000000  00000000 00000000 00000000 00000000  |[.......-.......|
//! packet command live=statement:0@5+4
//! ...
//! end
//! ```
//!
//! Each packet is its packet-stream bytes, header included, in hex. `live=`
//! names the bytes recomputed on each connection (the login's answer to
//! the server's nonce; the id the server gives a prepared statement), so a
//! replay logs in and names the same statements; everything else is sent
//! as it is. `wrap=` breaks the compressed packet carrying it. The user and
//! the database are in the login's bytes: a replay logs in as `user:` to
//! `database:` (only the password comes from its command line).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::control::FailureKind;
use super::exec::{step_of, Phase, Rendered, SentPacket};
use super::feedback_state::State;
use super::fields::{LiveSpot, LiveValue};
use super::fuzz_error::FuzzError;
use super::reproducer_format::{ReproducerError, MAGIC, MAGIC_V1};
use super::spec::WrapEdit;
use super::table_setup::{Setup, TableSetup};

/// Whether the failure came back when its session was run again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reproduces {
    /// The failing session alone brings it back.
    Alone,
    /// Only with the sessions before it, run at the same time.
    WithHistory,
    /// Not confirmed: why.
    NotConfirmed(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Reproducer {
    pub observed: String,
    pub details: Vec<String>,
    /// `None` in files that do not say.
    pub kind: Option<FailureKind>,
    /// The server's version, from its greeting; empty when unknown.
    pub server: String,
    /// The control connection's deadline when the failure was found: what
    /// counted as a hang (`None` in files that do not say).
    pub deadline: Option<Duration>,
    pub seed: u64,
    /// The failing session's number in the run.
    pub session: u64,
    pub found_after: Duration,
    pub target: String,
    pub user: String,
    pub database: String,
    pub compression: bool,
    /// How minimisation went, in words.
    pub minimised: String,
    /// `--internal-error-pattern`s the run was given: a replay judges
    /// error answers by them too.
    pub error_patterns: Vec<String>,
    /// Found fuzzing what comes before the login's answer: a replay's
    /// control check is a well-formed login that must get the answer it
    /// got before the replay.
    pub pre_auth: bool,
    pub reproduces: Reproduces,
    /// The tables the sessions need, made before they run.
    pub setup: Setup,
    pub failing: Vec<SentPacket>,
    /// The sessions before it, oldest first.
    pub history: Vec<Vec<SentPacket>>,
}

impl Reproducer {
    /// The kind of failure: as the file says, or as its `observed:` line
    /// reads (files of older versions do not say).
    pub fn failure_kind(&self) -> FailureKind {
        let seen = |words: &str| self.observed.contains(words);
        self.kind.unwrap_or(if seen("the server hangs") {
            FailureKind::Hang
        } else if seen("server log:") {
            FailureKind::Log
        } else if seen("refuses the control connection") {
            FailureKind::Refusing
        } else if seen("is gone") {
            FailureKind::ProcessGone
        } else if seen(" grew from ") {
            FailureKind::Memory
        } else {
            FailureKind::Down
        })
    }

    /// The file's text.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{MAGIC}");
        out.push_str(
            "# Replay: wirebench fuzz-replay THIS_FILE [--mysql-host=... --mysql-port=... | --mysql-socket=...]\n",
        );
        out.push_str("# (exit status 3: the failure happened again; 0: the server survived)\n");
        out.push_str("# Without wirebench: wirebench fuzz-replay THIS_FILE --emit=python > repro.py\n");
        let _ = writeln!(out, "observed: {}", self.observed);
        for detail in &self.details {
            let _ = writeln!(out, "detail: {detail}");
        }
        if let Some(kind) = self.kind {
            let _ = writeln!(out, "failure: {}", kind.name());
        }
        if !self.server.is_empty() {
            let _ = writeln!(out, "server: {}", self.server);
        }
        if let Some(deadline) = self.deadline {
            let _ = writeln!(out, "fuzz-deadline: {} s", deadline.as_secs_f64());
        }
        if self.pre_auth {
            out.push_str("mode: pre-auth\n");
        }
        for pattern in &self.error_patterns {
            let _ = writeln!(out, "internal-error-pattern: {pattern}");
        }
        let reproduces = match &self.reproduces {
            Reproduces::Alone => "alone".to_owned(),
            Reproduces::WithHistory => "with-history".to_owned(),
            Reproduces::NotConfirmed(why) => format!("not confirmed: {why}"),
        };
        for (key, value) in [
            ("seed", self.seed.to_string()),
            ("session", self.session.to_string()),
            ("found-after", format!("{:.1} s", self.found_after.as_secs_f64())),
            ("target", self.target.clone()),
            ("user", self.user.clone()),
            ("database", self.database.clone()),
            ("compression", if self.compression { "on" } else { "off" }.to_owned()),
            ("minimised", self.minimised.clone()),
            ("reproduces", reproduces),
        ] {
            let _ = writeln!(out, "{key}: {value}");
        }
        write_setup(&mut out, &self.setup);
        write_session(&mut out, "failing", &self.failing);
        for session in &self.history {
            write_session(&mut out, "history", session);
        }
        out
    }

    /// Writes the file in `dir`, under a name that is not taken yet.
    pub fn save(&self, dir: &Path, kind: &str) -> Result<PathBuf, FuzzError> {
        std::fs::create_dir_all(dir).map_err(|source| FuzzError::FuzzDir { path: dir.to_owned(), source })?;
        let mut n = 0;
        let path = loop {
            let suffix = if n == 0 { String::new() } else { format!("-{n}") };
            let path = dir.join(format!("failure-{kind}-session{}{suffix}.repro", self.session));
            if !path.exists() {
                break path;
            }
            n += 1;
        };
        std::fs::write(&path, self.to_text())
            .map_err(|source| FuzzError::WriteReproducer { path: path.clone(), source })?;
        Ok(path)
    }
}

/// The sessions a replay sends, named for messages: the failing one last,
/// after the history when it needs it.
pub fn sessions_to_replay(reproducer: &Reproducer) -> Vec<(String, &[SentPacket])> {
    let mut sessions: Vec<(String, &[SentPacket])> = Vec::new();
    if reproducer.reproduces != Reproduces::Alone {
        for (n, history) in reproducer.history.iter().enumerate() {
            sessions.push((format!("history session {}", n + 1), history));
        }
    }
    sessions.push(("the failing session".to_owned(), &reproducer.failing));
    sessions
}

/// The setup section: each table's CREATE statement, a line each, and
/// its rows, a tuple a line.
fn write_setup(out: &mut String, setup: &Setup) {
    if setup.is_empty() {
        return;
    }
    out.push_str("\n# What the sessions need in the database, made before they run: each table dropped if\n");
    out.push_str("# there, created as SHOW CREATE TABLE gave it when the failure was found, and its rows inserted.\n");
    out.push_str("setup\n");
    for table in &setup.tables {
        let _ = writeln!(out, "table {}", table.name);
        for line in table.create.lines() {
            let _ = writeln!(out, "  create {line}");
        }
        for row in &table.rows {
            let _ = writeln!(out, "  row {row}");
        }
    }
    out.push_str("end\n");
}

/// A line of the setup section; `Ok(true)` at its `end`.
fn parse_setup_line(trimmed: &str, setup: &mut Setup) -> Result<bool, ReproducerError> {
    let bad = || ReproducerError::BadSetupLine(trimmed.to_owned());
    if trimmed == "end" {
        return Ok(true);
    }
    if let Some(name) = trimmed.strip_prefix("table ") {
        setup.tables.push(TableSetup { name: name.trim().to_owned(), create: String::new(), rows: Vec::new() });
        return Ok(false);
    }
    let table = setup.tables.last_mut().ok_or_else(bad)?;
    if let Some(line) = trimmed.strip_prefix("create ").or((trimmed == "create").then_some("")) {
        if !table.create.is_empty() {
            table.create.push('\n');
        }
        table.create.push_str(line);
    } else if let Some(row) = trimmed.strip_prefix("row ") {
        table.rows.push(row.trim().to_owned());
    } else {
        return Err(bad());
    }
    Ok(false)
}

fn write_session(out: &mut String, name: &str, packets: &[SentPacket]) {
    let _ = writeln!(out, "\nsession {name}");
    for packet in packets {
        let r = &packet.rendered;
        let phase = match r.phase {
            Phase::Login => "login",
            Phase::SslRequest => "ssl-request",
            Phase::AuthReply => "auth-reply",
            Phase::Command => "command",
        };
        let _ = write!(out, "packet {phase}");
        for spot in &r.spots {
            let what = match &spot.live {
                LiveValue::Scramble { plugin } => format!("scramble:{plugin}"),
                LiveValue::Statement { prepare } => format!("statement:{prepare}"),
                LiveValue::AuthReply => "auth-reply:".to_owned(),
            };
            let _ = write!(out, " live={what}@{}+{}", spot.range.start, spot.range.len());
        }
        if !r.wrap.is_empty() {
            let edits: Vec<String> = r.wrap.iter().map(wrap_text).collect();
            let _ = write!(out, " wrap={}", edits.join(","));
        }
        out.push('\n');
        if let Some(state) = packet.answered {
            let _ = writeln!(out, "  # answer: {state}");
        }
        for chunk in r.bytes.chunks(16) {
            let hex: Vec<String> = chunk.chunks(4).map(|g| g.iter().map(|b| format!("{b:02x}")).collect()).collect();
            let ascii: String = chunk
                .iter()
                .map(|&b| if b.is_ascii_graphic() && b != b'|' || b == b' ' { b as char } else { '.' })
                .collect();
            let _ = writeln!(out, "  {:<35}  |{ascii}|", hex.join(" "));
        }
    }
    out.push_str("end\n");
}

fn wrap_text(edit: &WrapEdit) -> String {
    match edit {
        WrapEdit::Seq(s) => format!("seq:{s}"),
        WrapEdit::PayloadLength(n) => format!("payload-length:{n}"),
        WrapEdit::PlainLength(n) => format!("plain-length:{n}"),
        WrapEdit::Corrupt(bit) => format!("corrupt:{bit}"),
    }
}

/// Reads a reproducer file.
pub fn read_reproducer(path: &Path) -> Result<Reproducer, FuzzError> {
    let text =
        std::fs::read_to_string(path).map_err(|source| FuzzError::ReadReproducer { path: path.to_owned(), source })?;
    parse_reproducer(&text).map_err(|(line, source)| FuzzError::BadReproducer { path: path.to_owned(), line, source })
}

/// Parses a reproducer's text; an error names its line (from 1).
pub fn parse_reproducer(text: &str) -> Result<Reproducer, (usize, ReproducerError)> {
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    match lines.next() {
        Some((_, first)) if first.trim() == MAGIC || first.trim() == MAGIC_V1 => {}
        _ => return Err((1, ReproducerError::NoMagic)),
    }
    let mut r = Reproducer {
        observed: String::new(),
        details: Vec::new(),
        kind: None,
        server: String::new(),
        deadline: None,
        seed: 0,
        session: 0,
        found_after: Duration::ZERO,
        target: String::new(),
        user: String::new(),
        database: String::new(),
        compression: false,
        minimised: String::new(),
        error_patterns: Vec::new(),
        pre_auth: false,
        reproduces: Reproduces::Alone,
        setup: Setup::default(),
        failing: Vec::new(),
        history: Vec::new(),
    };
    let mut session: Option<SessionText> = None;
    let mut in_setup = false;
    for (number, line) in lines {
        let trimmed = line.trim();
        if in_setup && !trimmed.is_empty() && !trimmed.starts_with('#') {
            // Only the line's indentation goes: a CREATE statement keeps its own.
            let text = line.trim_start().trim_end_matches(['\r', '\n']);
            in_setup = !parse_setup_line(text, &mut r.setup).map_err(|reason| (number, reason))?;
            continue;
        }
        if session.is_none() && trimmed == "setup" {
            in_setup = true;
            continue;
        }
        if let (Some(answer), Some(s)) = (trimmed.strip_prefix("# answer:"), &mut session) {
            s.note_answer(answer.trim());
            continue;
        }
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if let Some(name) = trimmed.strip_prefix("session ") {
            session = Some(SessionText { name: name.trim().to_owned(), packets: Vec::new(), answers: Vec::new() });
        } else if trimmed == "end" {
            let Some(s) = session.take() else { return Err((number, ReproducerError::StrayEnd)) };
            let (name, packets) = s.finish();
            if name == "failing" {
                r.failing = packets;
            } else {
                r.history.push(packets);
            }
        } else if let Some(s) = &mut session {
            parse_packet_line(line, &mut s.packets).map_err(|reason| (number, reason))?;
        } else {
            parse_header_line(trimmed, &mut r).map_err(|reason| (number, reason))?;
        }
    }
    if session.is_some() || in_setup {
        return Err((text.lines().count(), ReproducerError::Unterminated));
    }
    if r.failing.is_empty() {
        return Err((text.lines().count(), ReproducerError::NoFailingSession));
    }
    Ok(r)
}

/// A session being read: its packets, and the `# answer:` line of each
/// (read once the packet's bytes, which follow it, say what step it was).
struct SessionText {
    name: String,
    packets: Vec<SentPacket>,
    /// (packet index, answer text).
    answers: Vec<(usize, String)>,
}

impl SessionText {
    fn note_answer(&mut self, answer: &str) {
        if let Some(at) = self.packets.len().checked_sub(1) {
            self.answers.push((at, answer.to_owned()));
        }
    }

    /// The name and the packets, with the answers they got. An answer that
    /// does not read (a comment edited by hand) is left out: it is not sent.
    fn finish(mut self) -> (String, Vec<SentPacket>) {
        for (at, answer) in &self.answers {
            if let Some(packet) = self.packets.get_mut(*at) {
                let answer = answer.split_once(" -> ").map_or(answer.as_str(), |(_, a)| a);
                packet.answered = State::parse_answer(step_of(&packet.rendered), answer);
            }
        }
        (self.name, self.packets)
    }
}

fn parse_header_line(line: &str, r: &mut Reproducer) -> Result<(), ReproducerError> {
    let Some((key, value)) = line.split_once(':') else { return Err(ReproducerError::NotKeyValue(line.to_owned())) };
    let value = value.trim();
    let number = |v: &str| {
        v.parse::<u64>().map_err(|_| ReproducerError::NotANumber { key: key.trim().to_owned(), value: v.to_owned() })
    };
    match key.trim() {
        "observed" => r.observed = value.to_owned(),
        "detail" => r.details.push(value.to_owned()),
        "failure" => {
            r.kind =
                Some(FailureKind::from_name(value).ok_or_else(|| ReproducerError::UnknownFailure(value.to_owned()))?)
        }
        "server" => r.server = value.to_owned(),
        "fuzz-deadline" => r.deadline = Some(seconds(key, value)?),
        "seed" => r.seed = number(value)?,
        "session" => r.session = number(value)?,
        "found-after" => r.found_after = seconds(key, value)?,
        "target" => r.target = value.to_owned(),
        "user" => r.user = value.to_owned(),
        "database" => r.database = value.to_owned(),
        "compression" => r.compression = value == "on",
        "minimised" => r.minimised = value.to_owned(),
        "internal-error-pattern" => r.error_patterns.push(value.to_owned()),
        "mode" => r.pre_auth = value == "pre-auth",
        "reproduces" => {
            r.reproduces = match value {
                "alone" => Reproduces::Alone,
                "with-history" => Reproduces::WithHistory,
                other => Reproduces::NotConfirmed(other.trim_start_matches("not confirmed:").trim().to_owned()),
            }
        }
        // Keys a later version adds are for reading, not replaying.
        _ => {}
    }
    Ok(())
}

/// `1.5 s`: a duration a reproducer wrote.
fn seconds(key: &str, value: &str) -> Result<Duration, ReproducerError> {
    let number = value.trim_end_matches('s').trim();
    number
        .parse::<f64>()
        .ok()
        .and_then(|secs| Duration::try_from_secs_f64(secs).ok())
        .ok_or_else(|| ReproducerError::NotANumber { key: key.trim().to_owned(), value: value.to_owned() })
}

/// A `packet ...` line, or a line of its bytes.
fn parse_packet_line(line: &str, packets: &mut Vec<SentPacket>) -> Result<(), ReproducerError> {
    let trimmed = line.trim();
    if let Some(rest) = trimmed.strip_prefix("packet") {
        let mut words = rest.split_whitespace();
        let phase = match words.next() {
            Some("login") => Phase::Login,
            Some("ssl-request") => Phase::SslRequest,
            Some("auth-reply") => Phase::AuthReply,
            Some("command") => Phase::Command,
            other => return Err(ReproducerError::UnknownPhase(other.unwrap_or_default().to_owned())),
        };
        let mut rendered = Rendered { phase, bytes: Vec::new(), spots: Vec::new(), wrap: Vec::new() };
        for word in words {
            if let Some(live) = word.strip_prefix("live=") {
                rendered.spots.push(parse_live(live)?);
            } else if let Some(wrap) = word.strip_prefix("wrap=") {
                rendered.wrap = wrap.split(',').map(parse_wrap).collect::<Result<_, _>>()?;
            } else {
                return Err(ReproducerError::UnknownAttribute(word.to_owned()));
            }
        }
        packets.push(SentPacket { rendered, answered: None });
        return Ok(());
    }
    let Some(packet) = packets.last_mut() else { return Err(ReproducerError::BytesOutsidePacket) };
    let hex = trimmed.split('|').next().unwrap_or_default();
    for group in hex.split_whitespace() {
        let not_hex = || ReproducerError::NotHex(group.to_owned());
        if group.len() % 2 != 0 {
            return Err(not_hex());
        }
        for pair in group.as_bytes().chunks(2) {
            let pair = std::str::from_utf8(pair).unwrap_or("zz");
            let byte = u8::from_str_radix(pair, 16).map_err(|_| not_hex())?;
            packet.rendered.bytes.push(byte);
        }
    }
    Ok(())
}

/// `scramble:PLUGIN@START+LEN` or `statement:N@START+LEN`.
fn parse_live(text: &str) -> Result<LiveSpot, ReproducerError> {
    let bad = || ReproducerError::BadLive(text.to_owned());
    let (what, place) = text.split_once('@').ok_or_else(bad)?;
    let (start, len) = place.split_once('+').ok_or_else(bad)?;
    let start: usize = start.parse().map_err(|_| bad())?;
    let len: usize = len.parse().map_err(|_| bad())?;
    let live = match what.split_once(':') {
        Some(("scramble", plugin)) => LiveValue::Scramble { plugin: plugin.to_owned() },
        Some(("statement", n)) => LiveValue::Statement { prepare: n.parse().map_err(|_| bad())? },
        Some(("auth-reply", "")) => LiveValue::AuthReply,
        _ => return Err(bad()),
    };
    Ok(LiveSpot { live, range: start..start.saturating_add(len) })
}

fn parse_wrap(text: &str) -> Result<WrapEdit, ReproducerError> {
    let bad = || ReproducerError::BadWrap(text.to_owned());
    let (what, n) = text.split_once(':').ok_or_else(bad)?;
    let n: u32 = n.parse().map_err(|_| bad())?;
    Ok(match what {
        "seq" => WrapEdit::Seq(u8::try_from(n).map_err(|_| bad())?),
        "payload-length" => WrapEdit::PayloadLength(n),
        "plain-length" => WrapEdit::PlainLength(n),
        "corrupt" => WrapEdit::Corrupt(n),
        _ => return Err(bad()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz::feedback_state::{AnswerClass, ClientMessage, State};

    fn sample() -> Reproducer {
        let login = Rendered {
            phase: Phase::Login,
            bytes: (0..40u8).collect(),
            spots: vec![LiveSpot {
                live: LiveValue::Scramble { plugin: "mysql_native_password".into() },
                range: 8..28,
            }],
            wrap: Vec::new(),
        };
        let execute = Rendered {
            phase: Phase::Command,
            bytes: b"\x0b\x00\x00\x00\x17\x01\x00\x00\x00\x00\x01\x00\x00\x00|#".to_vec(),
            spots: vec![LiveSpot { live: LiveValue::Statement { prepare: 0 }, range: 5..9 }],
            wrap: vec![WrapEdit::Seq(9), WrapEdit::Corrupt(77)],
        };
        let answered = Some(State { step: ClientMessage::Command(0x17), class: AnswerClass::Closed, code: 0 });
        Reproducer {
            observed: "the server is down".into(),
            details: vec!["server log: got signal 11".into()],
            kind: Some(FailureKind::Log),
            server: "10.11.19-MariaDB".into(),
            deadline: Some(Duration::from_millis(500)),
            seed: 42,
            session: 7,
            found_after: Duration::from_millis(1500),
            target: "127.0.0.1:3411".into(),
            user: "sbtest".into(),
            database: "sbtest".into(),
            compression: true,
            minimised: "5 packets -> 2 in 6 re-runs".into(),
            error_patterns: vec!["Wedged: the planner".into()],
            pre_auth: true,
            reproduces: Reproduces::NotConfirmed("the server did not come back".into()),
            setup: Setup {
                tables: vec![TableSetup {
                    name: "sbtest1".into(),
                    create:
                        "CREATE TABLE `sbtest1` (\n  `id` int(11) NOT NULL,\n\n  PRIMARY KEY (`id`)\n) ENGINE=InnoDB"
                            .into(),
                    rows: vec!["('1')".into(), "('2')".into()],
                }],
            },
            failing: vec![
                SentPacket { rendered: login.clone(), answered: None },
                SentPacket { rendered: execute, answered },
            ],
            history: vec![vec![SentPacket { rendered: login, answered: None }]],
        }
    }

    #[test]
    fn the_text_reads_back_to_the_same_reproducer() {
        let r = sample();
        let text = r.to_text();
        assert!(text.contains("packet command live=statement:0@5+4 wrap=seq:9,corrupt:77\n  # answer: COM_STMT_EXECUTE -> connection closed\n"), "{text}");
        assert!(text.contains("  0b000000 17010000 00000100 00007c23  |...............#|\n"), "{text}");
        assert!(text.contains("\nfailure: log\nserver: 10.11.19-MariaDB\nfuzz-deadline: 0.5 s\n"), "{text}");
        assert_eq!(parse_reproducer(&text).unwrap(), r);
    }

    #[test]
    fn the_setup_reads_back_and_version_1_files_still_read() {
        let r = sample();
        let text = r.to_text();
        assert!(text.starts_with("wirebench fuzz reproducer 2\n"), "{text}");
        assert!(
            text.contains("\nsetup\ntable sbtest1\n  create CREATE TABLE `sbtest1` (\n  create   `id` int(11) NOT NULL,\n  create \n"),
            "{text}"
        );
        assert!(text.contains("  row ('2')\nend\n"), "{text}");
        assert_eq!(parse_reproducer(&text).unwrap().setup, r.setup);
        let old = text.replacen("reproducer 2", "reproducer 1", 1);
        let start = old.find("\n# What the sessions need").unwrap();
        let end = old.find("\nsession failing").unwrap();
        let old = format!("{}{}", &old[..start], &old[end..]);
        let read = parse_reproducer(&old).unwrap();
        assert!(read.setup.is_empty());
        assert_eq!(read.failing, r.failing);
        let text = format!("{MAGIC}\nsetup\nrow (1)\nend\n");
        assert!(matches!(parse_reproducer(&text).unwrap_err(), (3, ReproducerError::BadSetupLine(_))));
    }

    #[test]
    fn answers_in_flight_and_edited_by_hand() {
        let mut r = sample();
        let pending = State { step: ClientMessage::Command(0x17), class: AnswerClass::Pending, code: 0 };
        r.failing[1].answered = Some(pending);
        let text = r.to_text();
        assert!(text.contains("# answer: COM_STMT_EXECUTE -> none yet (in flight when the server failed)\n"), "{text}");
        assert_eq!(parse_reproducer(&text).unwrap(), r);
        let edited = text.replace("-> none yet (in flight when the server failed)", "-> whatever");
        assert_eq!(parse_reproducer(&edited).unwrap().failing[1].answered, None);
    }

    #[test]
    fn broken_files_say_where() {
        assert_eq!(parse_reproducer("hello").unwrap_err(), (1, ReproducerError::NoMagic));
        let text = format!("{MAGIC}\nseed: x\n");
        let number = ReproducerError::NotANumber { key: "seed".into(), value: "x".into() };
        assert_eq!(parse_reproducer(&text).unwrap_err(), (2, number));
        let text = format!("{MAGIC}\nsession failing\npacket command\n  0g\nend\n");
        assert_eq!(parse_reproducer(&text).unwrap_err(), (4, ReproducerError::NotHex("0g".into())));
        let text = format!("{MAGIC}\nsession failing\n  00\nend\n");
        assert_eq!(parse_reproducer(&text).unwrap_err(), (3, ReproducerError::BytesOutsidePacket));
        let text = format!("{MAGIC}\nfailure: meltdown\n");
        assert_eq!(parse_reproducer(&text).unwrap_err(), (2, ReproducerError::UnknownFailure("meltdown".into())));
        let text = format!("{MAGIC}\nfuzz-deadline: soon\n");
        assert!(matches!(parse_reproducer(&text).unwrap_err(), (2, ReproducerError::NotANumber { .. })));
        let text = format!("{MAGIC}\nsession failing\npacket command live=scramble\nend\n");
        assert_eq!(
            parse_reproducer(&text).unwrap_err().1.to_string(),
            "live=scramble: expected scramble:PLUGIN@START+LEN or statement:N@START+LEN"
        );
    }
}
