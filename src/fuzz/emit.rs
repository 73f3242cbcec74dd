//! `wirebench fuzz-replay FILE --emit=python`: the reproducer as a Python 3
//! script a server's developers can run without wirebench. The script's
//! code is `emit.py` (its own docstring says what it does); this fills in
//! the reproducer: what was seen, the account and database its login
//! names, the deadline that judged it, and each session's packets in hex
//! with their live ranges and the answers they got.

use std::fmt::Write as _;
use std::path::Path;

use super::exec::{Phase, SentPacket};
use super::fields::LiveValue;
use super::fuzz_options::DEFAULT_DEADLINE;
use super::internal_error;
use super::reproducer::{sessions_to_replay, Reproducer};
use super::spec::WrapEdit;

const TEMPLATE: &str = include_str!("emit.py");
const PLACE: &str = "# @@REPRODUCER@@\n";

/// The whole script.
pub fn python_script(reproducer: &Reproducer, file: &Path) -> String {
    let name = file.file_name().map_or_else(|| file.display().to_string(), |n| n.to_string_lossy().into_owned());
    TEMPLATE.replacen(PLACE, &python_data(reproducer, &name), 1)
}

/// The reproducer as Python constants.
fn python_data(r: &Reproducer, name: &str) -> String {
    let mut out = String::new();
    let deadline = r.deadline.unwrap_or(DEFAULT_DEADLINE).as_secs_f64();
    let kind = r.failure_kind().name();
    for (constant, value) in [
        ("REPRODUCER", py_str(name)),
        ("OBSERVED", py_str(&r.observed)),
        ("FAILURE", py_str(kind)),
        ("SERVER_SEEN", py_str(&r.server)),
        ("USER", py_str(&r.user)),
        ("DATABASE", py_str(&r.database)),
        ("DEADLINE", format!("{deadline:?}")),
        ("PRE_AUTH", if r.pre_auth { "True" } else { "False" }.to_owned()),
        (
            "INTERNAL_PATTERNS",
            py_list(internal_error::PATTERNS.iter().copied().chain(r.error_patterns.iter().map(String::as_str))),
        ),
    ] {
        let _ = writeln!(out, "{constant} = {value}");
    }
    let names: Vec<&str> = r.setup.tables.iter().map(|t| t.name.as_str()).collect();
    let rows: usize = r.setup.tables.iter().map(|t| t.rows.len()).sum();
    let _ = writeln!(out, "SETUP_SAID = {}", py_str(&format!("{} ({rows} rows)", names.join(", "))));
    out.push_str("\n# What the sessions need in DATABASE, made first: each table dropped if there, created as\n");
    out.push_str("# SHOW CREATE TABLE gave it when the failure was found, and its rows inserted.\nSETUP = [\n");
    for statement in r.setup.statements() {
        let _ = writeln!(out, "    {},", py_str(&statement));
    }
    out.push_str("]\n");
    out.push_str("\n# The sessions, run at the same time, each on its own connection.\nSESSIONS = [\n");
    for (session, packets) in sessions_to_replay(r) {
        let _ = writeln!(out, "    ({}, [", py_str(&session));
        for packet in packets {
            python_packet(&mut out, packet);
        }
        out.push_str("    ]),\n");
    }
    out.push_str("]\n");
    out
}

fn python_packet(out: &mut String, packet: &SentPacket) {
    let r = &packet.rendered;
    let phase = match r.phase {
        Phase::Login => "login",
        Phase::SslRequest => "ssl-request",
        Phase::AuthReply => "auth-reply",
        Phase::Command => "command",
    };
    let _ = write!(out, "        packet({}", py_str(phase));
    if !r.spots.is_empty() {
        let spots: Vec<String> = r
            .spots
            .iter()
            .map(|spot| {
                let what = match &spot.live {
                    LiveValue::Scramble { plugin } => format!("\"scramble\", {}", py_str(plugin)),
                    LiveValue::Statement { prepare } => format!("\"statement\", {prepare}"),
                    LiveValue::AuthReply => "\"auth-reply\", None".to_owned(),
                };
                format!("({what}, {}, {})", spot.range.start, spot.range.len())
            })
            .collect();
        let _ = write!(out, ", live=[{}]", spots.join(", "));
    }
    if !r.wrap.is_empty() {
        let edits: Vec<String> = r.wrap.iter().map(py_wrap).collect();
        let _ = write!(out, ", wrap=[{}]", edits.join(", "));
    }
    if let Some(state) = &packet.answered {
        let text = state.to_string();
        let answer = text.split_once(" -> ").map_or(text.as_str(), |(_, a)| a);
        let _ = write!(out, ", recorded={}", py_str(answer));
    }
    out.push_str(", hexdata=(\n");
    for chunk in r.bytes.chunks(16) {
        let hex: Vec<String> = chunk.chunks(4).map(|g| g.iter().map(|b| format!("{b:02x}")).collect()).collect();
        let ascii: String =
            chunk.iter().map(|&b| if b.is_ascii_graphic() || b == b' ' { b as char } else { '.' }).collect();
        let _ = writeln!(out, "            {:<37}  # {ascii}", format!("\"{}\"", hex.join(" ")));
    }
    if r.bytes.is_empty() {
        out.push_str("            \"\"\n");
    }
    out.push_str("        )),\n");
}

fn py_wrap(edit: &WrapEdit) -> String {
    match edit {
        WrapEdit::Seq(s) => format!("(\"seq\", {s})"),
        WrapEdit::PayloadLength(n) => format!("(\"payload-length\", {n})"),
        WrapEdit::PlainLength(n) => format!("(\"plain-length\", {n})"),
        WrapEdit::Corrupt(bit) => format!("(\"corrupt\", {bit})"),
    }
}

/// A Python list of string literals.
fn py_list<'a>(items: impl Iterator<Item = &'a str>) -> String {
    let items: Vec<String> = items.map(py_str).collect();
    format!("[{}]", items.join(", "))
}

/// A Python string literal: printable ASCII as it is, the rest escaped.
fn py_str(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            ' '..='~' => out.push(c),
            c if u32::from(c) <= 0xFFFF => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => {
                let _ = write!(out, "\\U{:08x}", u32::from(c));
            }
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_python_literals() {
        assert_eq!(py_str("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(py_str("tab\there é 😀"), r#""tab\u0009here \u00e9 \U0001f600""#);
    }

    #[test]
    fn the_template_has_its_place() {
        assert_eq!(TEMPLATE.matches(PLACE).count(), 1);
    }
}
