//! Counting `?` parameter markers the way MariaDB's lexer finds them
//! (`sql_lex.cc`), so a server emulator can answer COM_STMT_PREPARE with the
//! right `num_params`.
//!
//! What the lexer skips: strings in `'...'` and `"..."` (backslash escapes
//! and doubled quotes), identifiers in `` `...` `` (doubled backticks; a
//! backslash is an ordinary character there), `#` and `-- ` comments to the
//! end of the line (`--` counts only when followed by a space or a control
//! character), and `/* ... */` comments (not nested: the first `*/` ends it).
//!
//! Executable comments `/*! ... */` and MariaDB's `/*M! ... */` are code, so
//! their markers count; `*/` closes them. A version after the `!` (5 or 6
//! digits, `/*!50110 ... */`) makes the body code only if it is not newer
//! than the server; MariaDB also skips `/*!` bodies versioned 50700..=99999
//! (MySQL 5.7+ syntax) unless written `/*M!`. A skipped body may hold one
//! level of ordinary comments.
//!
//! A `?` directly followed by an identifier character (letter, digit, `_`,
//! `$`, or any byte of 0x80 and above, which covers multi-byte characters)
//! is not a marker: the server refuses to treat it as one so that replacing
//! it with a value in the binary log cannot glue two tokens together.
//!
//! Assumed: the default sql_mode (no ANSI_QUOTES, no NO_BACKSLASH_ESCAPES)
//! and an ASCII-compatible connection charset where a quote or backslash
//! byte never occurs inside a multi-byte character (utf8mb4, latin1, binary).

/// The number of parameter markers in `sql`, as a server of version
/// `server_version` (MYSQL_VERSION_ID form: 101106 for 10.11.6) counts them.
///
/// Text after an unterminated string or comment is not counted: the server
/// rejects such a statement anyway.
pub fn count_placeholders(sql: &[u8], server_version: u32) -> usize {
    let byte = |i: usize| sql.get(i).copied();
    let mut count = 0;
    let mut in_executable_comment = false;
    let mut i = 0;
    while let Some(c) = byte(i) {
        i = match c {
            b'\'' | b'"' => skip_string(sql, i + 1, c),
            b'`' => skip_quoted_identifier(sql, i + 1),
            b'#' => skip_line(sql, i + 1),
            b'-' if byte(i + 1) == Some(b'-') && byte(i + 2).map_or(true, is_space_or_control) => skip_line(sql, i + 2),
            b'/' if byte(i + 1) == Some(b'*') => {
                let marker_len = match (byte(i + 2), byte(i + 3)) {
                    (Some(b'!'), _) => Some(3),
                    (Some(b'M'), Some(b'!')) => Some(4),
                    _ => None,
                };
                match marker_len {
                    Some(len) => {
                        let body = i + len;
                        let digits = version_digits(sql, body);
                        let is_code =
                            digits == 0 || executable_version_applies(sql, body, digits, len == 4, server_version);
                        if is_code {
                            in_executable_comment = true;
                            body + digits
                        } else {
                            match skip_comment(sql, body + digits, true) {
                                Some(end) => end,
                                None => return count,
                            }
                        }
                    }
                    None => match skip_comment(sql, i + 2, false) {
                        Some(end) => end,
                        None => return count,
                    },
                }
            }
            b'*' if in_executable_comment && byte(i + 1) == Some(b'/') => {
                in_executable_comment = false;
                i + 2
            }
            b'?' => {
                if !byte(i + 1).is_some_and(is_identifier_byte) {
                    count += 1;
                }
                i + 1
            }
            _ => i + 1,
        };
    }
    count
}

/// The index just past the closing quote of a string whose body starts at `i`.
fn skip_string(sql: &[u8], mut i: usize, quote: u8) -> usize {
    while let Some(&c) = sql.get(i) {
        if c == b'\\' {
            i += 2;
        } else if c == quote {
            if sql.get(i + 1) != Some(&quote) {
                return i + 1;
            }
            i += 2;
        } else {
            i += 1;
        }
    }
    sql.len()
}

fn skip_quoted_identifier(sql: &[u8], mut i: usize) -> usize {
    while let Some(&c) = sql.get(i) {
        if c == b'`' {
            if sql.get(i + 1) != Some(&b'`') {
                return i + 1;
            }
            i += 2;
        } else {
            i += 1;
        }
    }
    sql.len()
}

/// Past a `#` or `-- ` comment. The lexer also stops at a NUL byte.
fn skip_line(sql: &[u8], i: usize) -> usize {
    let rest = sql.get(i..).unwrap_or_default();
    match rest.iter().position(|&c| c == b'\n' || c == 0) {
        Some(end) => i + end,
        None => sql.len(),
    }
}

/// Past the `*/` closing a comment whose body starts at `i`, or `None` if it
/// never closes. With `allow_nested`, one level of `/* ... */` inside is
/// skipped whole (the lexer's `consume_comment(1)`).
fn skip_comment(sql: &[u8], mut i: usize, allow_nested: bool) -> Option<usize> {
    while let Some(&c) = sql.get(i) {
        let next = sql.get(i + 1).copied();
        if allow_nested && c == b'/' && next == Some(b'*') {
            i = skip_comment(sql, i + 2, false)?;
        } else if c == b'*' && next == Some(b'/') {
            return Some(i + 2);
        } else {
            i += 1;
        }
    }
    None
}

/// How many version digits follow an executable-comment marker: 5 or 6, or
/// 0 when fewer than 5 digits follow (then the body is unconditional code).
fn version_digits(sql: &[u8], i: usize) -> usize {
    let digits = sql.get(i..).unwrap_or_default().iter().take(6).take_while(|c| c.is_ascii_digit()).count();
    if digits >= 5 {
        digits
    } else {
        0
    }
}

fn executable_version_applies(sql: &[u8], i: usize, digits: usize, mariadb_syntax: bool, server_version: u32) -> bool {
    let version = sql.get(i..i + digits).unwrap_or_default().iter().fold(0u32, |v, &d| v * 10 + u32::from(d - b'0'));
    version <= server_version && (!(50700..=99999).contains(&version) || mariadb_syntax)
}

/// `my_isspace || my_iscntrl` for ASCII-compatible charsets.
fn is_space_or_control(c: u8) -> bool {
    c <= b' ' || c == 0x7F
}

fn is_identifier_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MARIADB_10_11: u32 = 101106;

    fn count(sql: &str) -> usize {
        count_placeholders(sql.as_bytes(), MARIADB_10_11)
    }

    #[test]
    fn plain_markers() {
        assert_eq!(count("SELECT c FROM sbtest1 WHERE id=?"), 1);
        assert_eq!(count("INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)"), 4);
        assert_eq!(count("SELECT c FROM t WHERE id BETWEEN ? AND ?"), 2);
        assert_eq!(count("SELECT 1"), 0);
        assert_eq!(count(""), 0);
        assert_eq!(count("??"), 2, "a ? followed by ? is still a marker");
        assert_eq!(count("SELECT ?,?+?"), 3);
    }

    #[test]
    fn quoted_text_is_skipped() {
        assert_eq!(count("SELECT '?', \"?\", `?` FROM t WHERE a=?"), 1);
        assert_eq!(count("SELECT 'it''s ?', ?"), 1, "doubled quote");
        assert_eq!(count(r"SELECT 'a\'?', ?"), 1, "backslash-escaped quote");
        assert_eq!(count(r#"SELECT "a\"?" , "b""?", ?"#), 1);
        assert_eq!(count(r"SELECT 'a\\', ?"), 1, "escaped backslash ends before the quote");
        assert_eq!(count("SELECT `a``?`, ?"), 1, "doubled backtick");
        // In a quoted identifier a backslash is an ordinary character.
        assert_eq!(count(r"SELECT `a\`, ?"), 1);
        assert_eq!(count("SELECT x'3F', _utf8mb4'?', N'?', ?"), 1);
    }

    #[test]
    fn comments_are_skipped() {
        assert_eq!(count("SELECT ? -- ?\n, ?"), 2);
        assert_eq!(count("SELECT ? --\t?\n"), 1, "a tab also starts the comment");
        assert_eq!(count("SELECT 1--?"), 1, "-- without a space is two minus signs");
        assert_eq!(count("SELECT ? # ? ?\n, ?"), 2);
        assert_eq!(count("SELECT ? #?"), 1);
        assert_eq!(count("SELECT /* ? */ ?"), 1);
        assert_eq!(count("SELECT /* ? /* ? */ ?"), 1, "comments do not nest: the first */ ends it");
        assert_eq!(count("SELECT /*/ ? */ ?"), 1, "the * of /* cannot also close it");
        assert_eq!(count("SELECT 1 */ ?"), 1, "a stray */ outside a comment is an operator");
    }

    #[test]
    fn executable_comments_are_code() {
        assert_eq!(count("SELECT /*! ? */ ?"), 2);
        assert_eq!(count("SELECT /*!*/ ?"), 1);
        assert_eq!(count("SELECT /*M! ? */ ?"), 2);
        assert_eq!(count("SELECT /*!50100 ? */"), 1);
        assert_eq!(count("SELECT /*!40101?*/"), 1, "the marker right after the version");
        assert_eq!(count("SELECT /*M!100500 ? */"), 1);
        assert_eq!(count("SELECT /*! ? /* ? */ ? */ ?"), 3, "an ordinary comment inside executable code");
        assert_eq!(count("SELECT /*!1234 ? */"), 1, "4 digits are not a version: code");
    }

    #[test]
    fn versioned_comments_the_server_skips() {
        assert_eq!(count("SELECT /*!999999 ? */ ?"), 1, "newer than the server");
        assert_eq!(count("SELECT /*M!999999 ? */ ?"), 1);
        assert_eq!(count("SELECT /*!50700 ? */ ?"), 1, "MySQL 5.7+ syntax is skipped by MariaDB");
        assert_eq!(count("SELECT /*!80023 ? */ ?"), 1);
        assert_eq!(count("SELECT /*M!50700 ? */ ?"), 2, "unless written /*M!");
        assert_eq!(count("SELECT /*!999999 ?, /* ? */ ? */ ?"), 1, "one nested comment is skipped whole");
        assert_eq!(count_placeholders(b"SELECT /*!100500 ? */", 100403), 0);
        assert_eq!(count_placeholders(b"SELECT /*!100500 ? */", 100500), 1);
    }

    #[test]
    fn marker_glued_to_an_identifier_is_not_a_marker() {
        assert_eq!(count("SELECT ?a"), 0);
        assert_eq!(count("SELECT ?1, ?_, ?$"), 0);
        assert_eq!(count("SELECT ?é"), 0);
        assert_eq!(count("SELECT ?)"), 1);
    }

    #[test]
    fn unterminated_text_stops_counting() {
        assert_eq!(count("SELECT ?, '?"), 1);
        assert_eq!(count("SELECT ?, `?"), 1);
        assert_eq!(count("SELECT ? /* ?"), 1);
        assert_eq!(count("SELECT ? /*!99999 ?"), 1);
        assert_eq!(count("SELECT '\\"), 0);
    }

    proptest! {
        #[test]
        fn never_panics_and_never_overcounts(sql in proptest::collection::vec(any::<u8>(), 0..256), v in any::<u32>()) {
            let n = count_placeholders(&sql, v);
            prop_assert!(n <= sql.iter().filter(|&&c| c == b'?').count());
        }

        #[test]
        fn markers_between_plain_words_all_count(words in proptest::collection::vec("[a-z ]{0,8}", 1..20)) {
            // Words joined by " ? ": every marker is a separate token.
            let sql = words.join(" ? ");
            prop_assert_eq!(count(&sql), words.len() - 1);
            // The same text inside a string or comment has none.
            prop_assert_eq!(count(&format!("'{sql}'")), 0);
            prop_assert_eq!(count(&format!("/*{sql}*/")), 0);
            prop_assert_eq!(count(&format!("#{sql}")), 0);
        }
    }
}
