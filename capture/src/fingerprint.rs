//! A statement's fingerprint: its text with every literal made `?`, so that
//! `SELECT c FROM sbtest1 WHERE id=42` and `select c  from sbtest1 where
//! id = 7` are one statement in `capture info` and in a replay's
//! per-statement table.
//!
//! The rules follow pt-query-digest's `fingerprint` (Percona Toolkit),
//! computed on tokens instead of regular expressions:
//!
//! - string, number, hex, bit and boolean literals and NULL become `?`
//!   (a sign before a number belongs to it where it cannot be an operator);
//! - `IN (?, ?, ...)` becomes `in(?+)`, and `VALUES (...), (...)` whose groups
//!   hold only literals becomes `values(?+)`;
//! - `LIMIT ?, ?` and `LIMIT ? OFFSET ?` become `limit ?`;
//! - `CALL name(...)` becomes `call name`, `USE db` becomes `use ?`;
//! - comments go, but `/*! ... */` and `/*+ ... */` stay: the server executes them;
//! - everything outside strings is lowercased and spaced one way: one space
//!   between tokens, none before `)` or `,`, none after `(`, none around
//!   `.`, none between a name and its `(`.
//!
//! Where it differs from pt-query-digest: digits inside a name are kept
//! (`sbtest1` stays `sbtest1`, where pt-query-digest makes it `sbtest?`
//! and merges the tables), and spacing is made uniform (pt keeps `id=?`
//! and `id = ?` apart).

use wirebench_protocol::response::Xxh64;

/// One token of a statement.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    /// A keyword or a name, lowercased; a quoted name keeps its quotes.
    Word(Vec<u8>),
    /// A literal (or a `?` placeholder): printed `?`.
    Value,
    /// `(`, `)`, `,`, `.`, `;`.
    Punct(u8),
    /// An operator: `=`, `<=`, `:=`, `+`, ...
    Operator(Vec<u8>),
    /// `/*! ... */` or `/*+ ... */`, whitespace collapsed.
    Hint(Vec<u8>),
}

/// The fingerprint of a statement's text.
pub fn fingerprint(sql: &[u8]) -> String {
    let mut tokens = tokenize(sql);
    collapse_lists(&mut tokens);
    shorten(&mut tokens);
    String::from_utf8_lossy(&render(&tokens)).into_owned()
}

/// A short id of a fingerprint: its XXH64, in hex (16 digits).
pub fn fingerprint_id(fingerprint: &str) -> String {
    format!("{:016x}", Xxh64::hash(fingerprint.as_bytes()))
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80
}

fn tokenize(sql: &[u8]) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut i = 0;
    while let Some(&b) = sql.get(i) {
        let rest = sql.get(i..).unwrap_or_default();
        let next = rest.get(1).copied();
        i += match b {
            b if b.is_ascii_whitespace() => 1,
            b'#' => line_end(rest),
            b'-' if next == Some(b'-')
                && rest.get(2).map_or(true, |c| c.is_ascii_whitespace() || c.is_ascii_control()) =>
            {
                line_end(rest)
            }
            b'/' if next == Some(b'*') => comment(rest, &mut tokens),
            b'\'' | b'"' => {
                tokens.push(Token::Value);
                quoted(rest, b)
            }
            b'`' => {
                let len = quoted(rest, b'`');
                tokens.push(Token::Word(rest.get(..len).unwrap_or_default().to_ascii_lowercase()));
                len
            }
            b'?' => {
                tokens.push(Token::Value);
                1
            }
            b'0'..=b'9' => number_or_word(rest, &mut tokens),
            b'.' if next.is_some_and(|c| c.is_ascii_digit()) && !follows_name(&tokens) => {
                number_or_word(rest, &mut tokens)
            }
            b'+' | b'-' if next.is_some_and(|c| c.is_ascii_digit() || c == b'.') && sign_allowed(&tokens) => {
                1 + number_or_word(rest.get(1..).unwrap_or_default(), &mut tokens)
            }
            b'(' | b')' | b',' | b'.' | b';' => {
                tokens.push(Token::Punct(b));
                1
            }
            b'@' => word(rest, &mut tokens),
            b if is_word_byte(b) => word(rest, &mut tokens),
            _ => operator(rest, &mut tokens),
        };
    }
    tokens
}

/// Bytes to the end of the line (a `#` or `-- ` comment).
fn line_end(rest: &[u8]) -> usize {
    rest.iter().position(|&b| b == b'\n').map_or(rest.len(), |n| n + 1)
}

/// A `/* */` comment: dropped, unless it is one the server executes.
fn comment(rest: &[u8], tokens: &mut Vec<Token>) -> usize {
    let end = rest.windows(2).skip(2).position(|w| w == b"*/").map_or(rest.len(), |n| n + 4);
    if matches!(rest.get(2), Some(b'!' | b'+')) {
        let mut hint = Vec::new();
        for &b in rest.get(..end).unwrap_or_default() {
            if b.is_ascii_whitespace() {
                if hint.last() != Some(&b' ') {
                    hint.push(b' ');
                }
            } else {
                hint.push(b.to_ascii_lowercase());
            }
        }
        tokens.push(Token::Hint(hint));
    }
    end
}

/// A quoted string or name: its length with the quotes. A doubled quote
/// and, in strings, a backslash escape stay inside.
fn quoted(rest: &[u8], quote: u8) -> usize {
    let mut i = 1;
    while let Some(&b) = rest.get(i) {
        if b == b'\\' && quote != b'`' {
            i += 2;
        } else if b == quote {
            if rest.get(i + 1) == Some(&quote) {
                i += 2;
            } else {
                return i + 1;
            }
        } else {
            i += 1;
        }
    }
    rest.len()
}

/// A number (a literal), or a name that starts with digits (`1abc` is one in MySQL).
fn number_or_word(rest: &[u8], tokens: &mut Vec<Token>) -> usize {
    let digits = |from: usize| rest.get(from..).unwrap_or_default().iter().take_while(|b| b.is_ascii_digit()).count();
    let mut i = digits(0);
    let radix = matches!(rest, [b'0', b'x' | b'X' | b'b' | b'B', ..]);
    if radix {
        i = 2 + rest.get(2..).unwrap_or_default().iter().take_while(|b| b.is_ascii_hexdigit()).count();
    } else {
        if rest.get(i) == Some(&b'.') {
            i += 1 + digits(i + 1);
        }
        if matches!(rest.get(i), Some(b'e' | b'E')) {
            let sign = usize::from(matches!(rest.get(i + 1), Some(b'+' | b'-')));
            let exponent = digits(i + 1 + sign);
            if exponent > 0 {
                i += 1 + sign + exponent;
            }
        }
    }
    if rest.get(i).is_some_and(|&b| is_word_byte(b)) {
        return word(rest, tokens);
    }
    tokens.push(Token::Value);
    i
}

fn word(rest: &[u8], tokens: &mut Vec<Token>) -> usize {
    let at_signs = rest.iter().take_while(|&&b| b == b'@').count();
    let len = at_signs + rest.get(at_signs..).unwrap_or_default().iter().take_while(|&&b| is_word_byte(b)).count();
    let text: Vec<u8> = rest.get(..len).unwrap_or_default().iter().map(u8::to_ascii_lowercase).collect();
    // A charset introducer (`_utf8mb4'x'`) or a hex/bit/national string: one literal.
    let prefix = text.first() == Some(&b'_') || matches!(text.as_slice(), b"x" | b"b" | b"n");
    if prefix && matches!(rest.get(len), Some(b'\'' | b'"')) {
        tokens.push(Token::Value);
        let quote = rest.get(len).copied().unwrap_or(b'\'');
        return len + quoted(rest.get(len..).unwrap_or_default(), quote);
    }
    match text.as_slice() {
        b"null" | b"true" | b"false" => tokens.push(Token::Value),
        _ => tokens.push(Token::Word(text)),
    }
    len.max(1)
}

fn operator(rest: &[u8], tokens: &mut Vec<Token>) -> usize {
    const TWO: [&[u8]; 10] = [b"<=", b">=", b"<>", b"!=", b":=", b"||", b"&&", b"<<", b">>", b"->"];
    let len = if rest.get(..3) == Some(b"<=>") || rest.get(..3) == Some(b"->>") {
        3
    } else if TWO.iter().any(|op| rest.get(..2) == Some(*op)) {
        2
    } else {
        1
    };
    tokens.push(Token::Operator(rest.get(..len).unwrap_or_default().to_vec()));
    len
}

/// Whether a `.` here joins a name to what follows (`t.5col`).
fn follows_name(tokens: &[Token]) -> bool {
    matches!(tokens.last(), Some(Token::Word(_)))
}

/// Whether a `+` or `-` here is a sign rather than an operator: not after
/// something that ends an operand.
fn sign_allowed(tokens: &[Token]) -> bool {
    !matches!(tokens.last(), Some(Token::Word(_) | Token::Value | Token::Punct(b')')))
        || matches!(tokens.last(), Some(Token::Word(w)) if is_keyword_before_operand(w))
}

fn is_keyword_before_operand(word: &[u8]) -> bool {
    matches!(
        word,
        b"select"
            | b"where"
            | b"and"
            | b"or"
            | b"not"
            | b"between"
            | b"in"
            | b"values"
            | b"value"
            | b"set"
            | b"limit"
            | b"offset"
            | b"then"
            | b"else"
            | b"when"
            | b"return"
            | b"by"
            | b"having"
            | b"like"
    )
}

fn is(token: Option<&Token>, word: &[u8]) -> bool {
    matches!(token, Some(Token::Word(w)) if w == word)
}

/// `in (?, ?)` and `values (?, ?), (?, ?)` become one `(?+)`.
fn collapse_lists(tokens: &mut Vec<Token>) {
    let mut out = Vec::with_capacity(tokens.len());
    let mut i = 0;
    while let Some(token) = tokens.get(i) {
        out.push(token.clone());
        i += 1;
        let list_word = is(Some(token), b"in") || is(Some(token), b"values") || is(Some(token), b"value");
        if !list_word {
            continue;
        }
        let repeats = !is(Some(token), b"in");
        let mut end = i;
        let mut groups = 0;
        while let Some(len) = literal_group(tokens.get(end..).unwrap_or_default()) {
            groups += 1;
            end += len;
            if !repeats
                || tokens.get(end) != Some(&Token::Punct(b','))
                || literal_group(tokens.get(end + 1..).unwrap_or_default()).is_none()
            {
                break;
            }
            end += 1;
        }
        if groups > 0 {
            out.extend([Token::Punct(b'('), Token::Word(b"?+".to_vec()), Token::Punct(b')')]);
            i = end;
        }
    }
    *tokens = out;
}

/// The length of a `( ?, ?, ... )` group at the start of `tokens`.
fn literal_group(tokens: &[Token]) -> Option<usize> {
    if tokens.first() != Some(&Token::Punct(b'(')) {
        return None;
    }
    let mut expect_value = true;
    for (n, token) in tokens.iter().enumerate().skip(1) {
        match token {
            Token::Value if expect_value => expect_value = false,
            Token::Punct(b',') if !expect_value => expect_value = true,
            Token::Punct(b')') if !expect_value => return Some(n + 1),
            _ => return None,
        }
    }
    None
}

/// `limit ?, ?` and `limit ? offset ?` become `limit ?`; `call p(...)`
/// becomes `call p`; `use db` becomes `use ?`.
fn shorten(tokens: &mut Vec<Token>) {
    if is(tokens.first(), b"call") && matches!(tokens.get(1), Some(Token::Word(_))) {
        let name_end = 2 + tokens
            .get(2..)
            .unwrap_or_default()
            .windows(2)
            .take_while(|w| w.first() == Some(&Token::Punct(b'.')))
            .count()
            * 2;
        tokens.truncate(name_end.min(tokens.len()));
        return;
    }
    if is(tokens.first(), b"use") && tokens.len() == 2 {
        if let Some(db) = tokens.get_mut(1) {
            *db = Token::Value;
        }
        return;
    }
    let mut i = 0;
    while i < tokens.len() {
        let limit = is(tokens.get(i), b"limit") && tokens.get(i + 1) == Some(&Token::Value);
        let second = tokens.get(i + 2) == Some(&Token::Punct(b',')) || is(tokens.get(i + 2), b"offset");
        if limit && second && tokens.get(i + 3) == Some(&Token::Value) {
            tokens.drain(i + 2..i + 4);
        }
        i += 1;
    }
}

fn render(tokens: &[Token]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut previous: Option<&Token> = None;
    for token in tokens {
        // A `(` hugs the name before it (a call, `in(`, `t(cols)`), not an operator or a comma.
        let call = *token == Token::Punct(b'(') && matches!(previous, Some(Token::Word(_)));
        let tight_before = call || matches!(token, Token::Punct(b')' | b',' | b'.' | b';'));
        let tight_after = matches!(previous, Some(Token::Punct(b'(' | b'.')));
        if previous.is_some() && !tight_before && !tight_after {
            out.push(b' ');
        }
        match token {
            Token::Word(w) | Token::Operator(w) | Token::Hint(w) => out.extend_from_slice(w),
            Token::Value => out.push(b'?'),
            Token::Punct(p) => out.push(*p),
        }
        previous = Some(token);
    }
    if out.last() == Some(&b';') {
        out.pop();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(sql: &str) -> String {
        fingerprint(sql.as_bytes())
    }

    #[test]
    fn sysbench_statements() {
        assert_eq!(fp("SELECT c FROM sbtest1 WHERE id=4993"), "select c from sbtest1 where id = ?");
        assert_eq!(fp("SELECT c FROM sbtest1 WHERE id = ?"), "select c from sbtest1 where id = ?");
        assert_eq!(
            fp("SELECT c FROM sbtest3 WHERE id BETWEEN 5 AND 104 ORDER BY c"),
            "select c from sbtest3 where id between ? and ? order by c"
        );
        assert_eq!(fp("UPDATE sbtest1 SET k=k+1 WHERE id=5"), "update sbtest1 set k = k + ? where id = ?");
        assert_eq!(
            fp("INSERT INTO sbtest1 (id, k, c, pad) VALUES (5, 4993, '83868641912-287', '67847967377-48000')"),
            "insert into sbtest1(id, k, c, pad) values(?+)"
        );
        assert_eq!(fp("DELETE FROM sbtest1 WHERE id=12"), "delete from sbtest1 where id = ?");
        assert_eq!(fp("BEGIN"), "begin");
        assert_eq!(
            fp("SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN 1 AND 100"),
            "select sum(k) from sbtest1 where id between ? and ?"
        );
    }

    #[test]
    fn literals_of_every_kind() {
        assert_eq!(
            fp("select 'a''b', \"c\\\"d\", 0x1F, X'1f', b'01', 0b101, N'x', _utf8mb4'y'"),
            "select ?, ?, ?, ?, ?, ?, ?, ?"
        );
        assert_eq!(fp("select 1.5e-3, .5, 1., -7, +3, NULL, TRUE, false"), "select ?, ?, ?, ?, ?, ?, ?, ?");
        assert_eq!(fp("select a-1, a - -1, (a)-1 from t"), "select a - ?, a - ?, (a) - ? from t");
        assert_eq!(fp("select t.5col, 1abc from t"), "select t.5col, 1abc from t");
    }

    #[test]
    fn lists_collapse() {
        assert_eq!(fp("SELECT * FROM t WHERE id IN (1, 2, 3)"), "select * from t where id in(?+)");
        assert_eq!(fp("SELECT * FROM t WHERE id in(1)"), "select * from t where id in(?+)");
        assert_eq!(
            fp("SELECT * FROM t WHERE id IN (SELECT id FROM u)"),
            "select * from t where id in(select id from u)"
        );
        assert_eq!(fp("INSERT INTO t VALUES (1,'a'),(2,'b'),(3,'c')"), "insert into t values(?+)");
        assert_eq!(fp("insert into t values (1, now())"), "insert into t values(?, now())");
        assert_eq!(fp("INSERT INTO t VALUES (1,'a'),(2,'b')"), fp("insert into t values (7, 'z')"));
    }

    #[test]
    fn whitespace_case_and_comments_fold() {
        let a = fp("SELECT  c\n\tFROM sbtest1 /* app=web */ WHERE id = 7 -- trailing\n");
        assert_eq!(a, "select c from sbtest1 where id = ?");
        assert_eq!(fp("select c from sbtest1 where id=7 # comment"), a);
        assert_eq!(
            fp("SELECT /*+ MAX_EXECUTION_TIME(1000) */ c FROM t"),
            "select /*+ max_execution_time(1000) */ c from t"
        );
        assert_eq!(fp("/*!40101 SET NAMES utf8 */"), "/*!40101 set names utf8 */");
        assert_eq!(
            fp("select `Weird Name`, @x, @@session.sql_mode from t;"),
            "select `weird name`, @x, @@session.sql_mode from t"
        );
        assert_eq!(fp("select a--b from t"), "select a - - b from t");
    }

    #[test]
    fn limits_calls_and_use() {
        assert_eq!(fp("select * from t limit 10"), "select * from t limit ?");
        assert_eq!(fp("select * from t limit 10, 20"), "select * from t limit ?");
        assert_eq!(fp("select * from t LIMIT 10 OFFSET 20"), "select * from t limit ?");
        assert_eq!(fp("CALL db.proc(1, 'x')"), "call db.proc");
        assert_eq!(fp("USE sbtest"), "use ?");
    }

    #[test]
    fn nothing_breaks_it() {
        for sql in [
            "",
            "'",
            "\"abc",
            "/*",
            "`",
            "-",
            "0x",
            "1e",
            "@",
            "select 'unterminated",
            "\u{ff}\u{fe}",
            "))((",
            "in (",
            "values (1,",
        ] {
            let _ = fp(sql);
        }
        assert_eq!(fp(""), "");
        assert_eq!(fingerprint_id("select 1").len(), 16);
    }
}
