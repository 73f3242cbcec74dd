//! Text a server sent, made safe to print. An ERR message, a version
//! string or a plugin name comes from the peer, which may be hostile: raw,
//! a 64 KiB message of terminal escape sequences would reach the user's
//! terminal (recolour it, retitle the window, hide what follows). Every
//! place that shows server text shows it through [`ServerText`].

use std::fmt::{self, Write};

/// The most of one server text that is shown, in bytes. libmysqlclient
/// keeps an error message in `MYSQL_ERRMSG_SIZE` (512) bytes, so sysbench
/// never shows more either.
pub const SERVER_TEXT_LIMIT: usize = 512;

/// Displays a server's text on one line, with what a terminal would act on
/// made visible instead: `\n`, `\r` and `\t` as those escapes, any other
/// control character (C0, DEL, C1, which includes ESC and so every escape
/// sequence) and the bidirectional overrides as `\u{..}`. Text past
/// [`SERVER_TEXT_LIMIT`] bytes is cut, and the cut is said.
#[derive(Debug, Clone, Copy)]
pub struct ServerText<'a>(pub &'a str);

impl fmt::Display for ServerText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.0;
        let shown = cut_at_char_boundary(text, SERVER_TEXT_LIMIT);
        let mut clean_from = 0;
        for (at, c) in shown.char_indices() {
            if !is_unsafe_to_print(c) {
                continue;
            }
            f.write_str(shown.get(clean_from..at).unwrap_or_default())?;
            match c {
                '\n' => f.write_str("\\n")?,
                '\r' => f.write_str("\\r")?,
                '\t' => f.write_str("\\t")?,
                other => write!(f, "\\u{{{:x}}}", u32::from(other))?,
            }
            clean_from = at + c.len_utf8();
        }
        f.write_str(shown.get(clean_from..).unwrap_or_default())?;
        if shown.len() < text.len() {
            f.write_char(' ')?;
            write!(f, "[... cut: {} more bytes from the server]", text.len() - shown.len())?;
        }
        Ok(())
    }
}

/// Control characters, and the Unicode controls that reorder what follows
/// them on screen (the "Trojan Source" characters).
fn is_unsafe_to_print(c: char) -> bool {
    c.is_control() || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// The longest prefix of `text` of at most `max` bytes that ends on a
/// character boundary.
fn cut_at_char_boundary(text: &str, max: usize) -> &str {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.get(..end).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_unchanged() {
        let message = "Table 'sbtest.sbtest1' doesn't exist — «ü»";
        assert_eq!(ServerText(message).to_string(), message);
    }

    #[test]
    fn controls_and_escape_sequences_become_visible() {
        let shown = ServerText("a\u{1b}[2J\u{1b}]0;title\u{7}b\nc\td\r\u{7f}\u{9b}\u{202e}e\0").to_string();
        assert_eq!(shown, "a\\u{1b}[2J\\u{1b}]0;title\\u{7}b\\nc\\td\\r\\u{7f}\\u{9b}\\u{202e}e\\u{0}");
        assert!(!shown.chars().any(is_unsafe_to_print));
    }

    #[test]
    fn long_text_is_cut_on_a_character_boundary_and_says_so() {
        let long = "é".repeat(1000);
        let shown = ServerText(&long).to_string();
        let (kept, marker) = shown.split_once(" [... cut: ").unwrap();
        assert_eq!(kept, "é".repeat(256));
        assert_eq!(marker, "1488 more bytes from the server]");
        let odd = format!("x{}", "é".repeat(300));
        let kept = ServerText(&odd).to_string();
        assert!(kept.starts_with(&format!("x{}", "é".repeat(255))), "{kept}");
        assert_eq!(ServerText(&"x".repeat(SERVER_TEXT_LIMIT)).to_string().len(), SERVER_TEXT_LIMIT);
    }
}
