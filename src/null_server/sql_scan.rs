//! Just enough SQL to fake an answer: what kind of statement a text is, and
//! the columns of a SELECT list. Nothing here allocates: the column
//! iterator borrows from the statement text, so a COM_QUERY can be answered
//! from a scan of its bytes.

use std::ops::Range;

/// What a statement asks for, as far as its answer's shape goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Statement<'a> {
    /// A SELECT: columns from the select list, from the table after FROM.
    Select(Select<'a>),
    /// SHOW ...: a two-column result without rows.
    Show,
    /// INSERT, UPDATE, DELETE, REPLACE: OK with one affected row, so that
    /// sysbench counts them as writes.
    Write,
    /// Everything else (BEGIN, COMMIT, SET, CREATE, ...): a plain OK.
    Other,
}

/// A SELECT's select list and source table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Select<'a> {
    /// The text between SELECT (and its modifiers) and FROM or the clause
    /// that ends the list.
    pub list: &'a [u8],
    /// `sbtest1` in `FROM sbtest1` or `` FROM `db`.`sbtest1` ``; empty
    /// when there is no FROM or it is not a plain table name.
    pub table: &'a [u8],
    /// `db` in `FROM db.sbtest1`.
    pub schema: Option<&'a [u8]>,
    /// There is a FROM clause; without one a SELECT yields exactly one row.
    pub has_from: bool,
}

/// Which canned column a select-list item becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnKind {
    /// sysbench's `c`: CHAR(120).
    C,
    /// sysbench's `pad`: CHAR(60).
    Pad,
    /// `id`: INT.
    Id,
    /// `k`: INT.
    K,
    /// SUM(...): DECIMAL(32,0).
    Sum,
    /// AVG(...): DECIMAL(14,4).
    Avg,
    /// COUNT(...): BIGINT.
    Count,
    /// @@version, VERSION().
    Version,
    /// @@version_comment.
    VersionComment,
    /// Anything else: a VARCHAR whose value is its own name, which makes
    /// `SELECT 1` answer 1 and `SELECT 'x'` answer x.
    Text,
}

/// One column of a result set derived from a select-list item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnSpec<'a> {
    pub name: &'a [u8],
    pub kind: ColumnKind,
    /// A reference to a table column (so its definition names the table).
    pub from_table: bool,
    /// An aggregate without GROUP BY yields one row whatever the table holds.
    pub aggregate: bool,
}

/// The columns `*` stands for: sysbench's table layout.
const STAR: [(&[u8], ColumnKind); 4] =
    [(b"id", ColumnKind::Id), (b"k", ColumnKind::K), (b"c", ColumnKind::C), (b"pad", ColumnKind::Pad)];

/// Keywords that end a select list when there is no FROM.
const LIST_END: [&[u8]; 11] =
    [b"from", b"where", b"group", b"having", b"order", b"limit", b"into", b"for", b"union", b"window", b"procedure"];

/// Modifiers that may follow SELECT before the first item.
const SELECT_MODIFIERS: [&[u8]; 11] = [
    b"all",
    b"distinct",
    b"distinctrow",
    b"high_priority",
    b"straight_join",
    b"sql_small_result",
    b"sql_big_result",
    b"sql_buffer_result",
    b"sql_cache",
    b"sql_no_cache",
    b"sql_calc_found_rows",
];

pub fn classify(sql: &[u8]) -> Statement<'_> {
    let start = skip_space_and_comments(sql, 0);
    let mut at = start;
    // `(SELECT ...)`: a parenthesised query is still a query.
    while sql.get(at) == Some(&b'(') {
        at = skip_space_and_comments(sql, at + 1);
    }
    let word = word_at(sql, at);
    if word.eq_ignore_ascii_case(b"select") {
        return Statement::Select(parse_select(sql, at + word.len()));
    }
    let word = word_at(sql, start);
    if word.eq_ignore_ascii_case(b"show") {
        Statement::Show
    } else if [&b"insert"[..], b"update", b"delete", b"replace"].iter().any(|w| word.eq_ignore_ascii_case(w)) {
        Statement::Write
    } else {
        Statement::Other
    }
}

fn parse_select(sql: &[u8], after_select: usize) -> Select<'_> {
    let mut at = skip_space_and_comments(sql, after_select);
    loop {
        let word = word_at(sql, at);
        if word.is_empty() || !SELECT_MODIFIERS.iter().any(|m| word.eq_ignore_ascii_case(m)) {
            break;
        }
        at = skip_space_and_comments(sql, at + word.len());
    }
    let end = find_top_level(sql, at, |i| {
        sql.get(i) == Some(&b';') || sql.get(i) == Some(&b')') || LIST_END.iter().any(|kw| keyword_at(sql, i, kw))
    })
    .unwrap_or(sql.len());
    let list = sql.get(at..end).unwrap_or_default();
    let has_from = keyword_at(sql, end, b"from");
    let (table, schema) = if has_from { table_after(sql, end + b"from".len()) } else { (&[][..], None) };
    Select { list, table, schema, has_from }
}

/// The table named at `at`: `t`, `` `t` ``, `db.t`.
fn table_after(sql: &[u8], at: usize) -> (&[u8], Option<&[u8]>) {
    let at = skip_space_and_comments(sql, at);
    let Some(first) = identifier_at(sql, at) else { return (&[], None) };
    if sql.get(first.end) == Some(&b'.') {
        if let Some(second) = identifier_at(sql, first.end + 1) {
            return (slice(sql, &unquote_range(sql, second)), Some(slice(sql, &unquote_range(sql, first))));
        }
    }
    (slice(sql, &unquote_range(sql, first)), None)
}

impl<'a> Select<'a> {
    pub fn columns(&self) -> Columns<'a> {
        Columns { list: self.list, at: 0, star: None }
    }

    /// No FROM, or aggregates only (and at least one): the answer has
    /// exactly one row.
    pub fn is_single_row(&self) -> bool {
        !self.has_from || self.is_aggregate()
    }

    fn is_aggregate(&self) -> bool {
        let mut columns = self.columns().peekable();
        columns.peek().is_some() && columns.all(|c| c.aggregate)
    }
}

/// The columns of a select list, `*` expanded to sysbench's four.
#[derive(Debug, Clone)]
pub struct Columns<'a> {
    list: &'a [u8],
    at: usize,
    star: Option<usize>,
}

impl<'a> Iterator for Columns<'a> {
    type Item = ColumnSpec<'a>;

    fn next(&mut self) -> Option<ColumnSpec<'a>> {
        loop {
            if let Some(i) = self.star {
                if let Some(&(name, kind)) = STAR.get(i) {
                    self.star = Some(i + 1);
                    return Some(ColumnSpec { name, kind, from_table: true, aggregate: false });
                }
                self.star = None;
            }
            if self.at >= self.list.len() {
                return None;
            }
            let list = self.list;
            let end = find_top_level(list, self.at, |i| list.get(i) == Some(&b',')).unwrap_or(list.len());
            let item = without_comments(list.get(self.at..end).unwrap_or_default());
            self.at = end + 1;
            if item.is_empty() {
                continue;
            }
            if item == b"*" || item.ends_with(b".*") {
                self.star = Some(0);
                continue;
            }
            return Some(column_spec(item));
        }
    }
}

fn column_spec(item: &[u8]) -> ColumnSpec<'_> {
    let (expr, alias) = match find_top_level(item, 0, |i| i > 0 && keyword_at(item, i, b"as")) {
        Some(as_at) => {
            (trim(item.get(..as_at).unwrap_or_default()), Some(trim(item.get(as_at + 2..).unwrap_or_default())))
        }
        None => (item, None),
    };
    let column = column_reference(expr);
    let (kind, aggregate) = match column {
        Some(name) => (kind_of_column(name), false),
        None => kind_of_expression(expr),
    };
    let name = match (alias, column) {
        (Some(alias), _) => unquote(alias),
        (None, Some(name)) => name,
        (None, None) => unquote(expr),
    };
    ColumnSpec { name, kind, from_table: column.is_some() && kind != ColumnKind::Text, aggregate }
}

/// `c`, `` `c` ``, `t.c`, `db.t.c` name a column: its unquoted name.
fn column_reference(expr: &[u8]) -> Option<&[u8]> {
    let mut at = 0;
    loop {
        let ident = identifier_at(expr, at)?;
        match expr.get(ident.end) {
            None => return Some(slice(expr, &unquote_range(expr, ident))),
            Some(b'.') => at = ident.end + 1,
            Some(_) => return None,
        }
    }
}

fn kind_of_column(name: &[u8]) -> ColumnKind {
    let is = |column: &[u8]| name.eq_ignore_ascii_case(column);
    if is(b"c") {
        ColumnKind::C
    } else if is(b"pad") {
        ColumnKind::Pad
    } else if is(b"id") {
        ColumnKind::Id
    } else if is(b"k") {
        ColumnKind::K
    } else {
        ColumnKind::Text
    }
}

fn kind_of_expression(expr: &[u8]) -> (ColumnKind, bool) {
    let Some(open) = expr.iter().position(|&b| b == b'(') else {
        return (kind_of_variable(expr), false);
    };
    let function = trim(expr.get(..open).unwrap_or_default());
    let is = |name: &[u8]| function.eq_ignore_ascii_case(name);
    if is(b"sum") {
        (ColumnKind::Sum, true)
    } else if is(b"avg") {
        (ColumnKind::Avg, true)
    } else if is(b"count") {
        (ColumnKind::Count, true)
    } else if is(b"min") || is(b"max") {
        let mut inner = trim(expr.get(open + 1..expr.len().saturating_sub(1)).unwrap_or_default());
        if word_at(inner, 0).eq_ignore_ascii_case(b"distinct") {
            inner = trim(inner.get(b"distinct".len()..).unwrap_or_default());
        }
        match column_reference(inner) {
            Some(name) => (kind_of_column(name), true),
            None => (kind_of_expression(inner).0, true),
        }
    } else if is(b"version") {
        (ColumnKind::Version, false)
    } else {
        (ColumnKind::Text, false)
    }
}

fn kind_of_variable(expr: &[u8]) -> ColumnKind {
    let var = expr.strip_prefix(b"@@").unwrap_or_default();
    let var = var.iter().position(|&b| b == b'.').and_then(|dot| var.get(dot + 1..)).unwrap_or(var);
    if var.eq_ignore_ascii_case(b"version") {
        ColumnKind::Version
    } else if var.eq_ignore_ascii_case(b"version_comment") {
        ColumnKind::VersionComment
    } else {
        ColumnKind::Text
    }
}

/// The first position at or after `from` where `pred` holds, outside
/// quotes, comments and parentheses.
fn find_top_level(sql: &[u8], from: usize, mut pred: impl FnMut(usize) -> bool) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = from;
    while let Some(&c) = sql.get(i) {
        if depth == 0 && pred(i) {
            return Some(i);
        }
        i = match c {
            b'\'' | b'"' | b'`' => skip_quoted(sql, i),
            b'(' => {
                depth += 1;
                i + 1
            }
            b')' => {
                depth = depth.saturating_sub(1);
                i + 1
            }
            b'/' | b'-' | b'#' => skip_comment(sql, i).unwrap_or(i + 1),
            _ => i + 1,
        };
    }
    None
}

/// Past the quoted string or identifier starting at `at`.
fn skip_quoted(sql: &[u8], at: usize) -> usize {
    let Some(&quote) = sql.get(at) else { return at };
    let mut i = at + 1;
    while let Some(&c) = sql.get(i) {
        if c == b'\\' && quote != b'`' {
            i += 2;
        } else if c == quote {
            // A doubled quote stands for itself.
            if sql.get(i + 1) == Some(&quote) {
                i += 2;
            } else {
                return i + 1;
            }
        } else {
            i += 1;
        }
    }
    sql.len()
}

/// Past the comment starting at `at`, if one does.
fn skip_comment(sql: &[u8], at: usize) -> Option<usize> {
    let rest = sql.get(at..)?;
    if rest.starts_with(b"/*") {
        let end = rest.windows(2).skip(2).position(|w| w == b"*/").map_or(sql.len(), |p| at + 2 + p + 2);
        Some(end)
    } else if rest.starts_with(b"#")
        || (rest.starts_with(b"--") && rest.get(2).map_or(true, |c| c.is_ascii_whitespace()))
    {
        Some(rest.iter().position(|&b| b == b'\n').map_or(sql.len(), |p| at + p + 1))
    } else {
        None
    }
}

fn skip_space_and_comments(sql: &[u8], mut at: usize) -> usize {
    loop {
        while sql.get(at).is_some_and(u8::is_ascii_whitespace) {
            at += 1;
        }
        match skip_comment(sql, at) {
            Some(end) => at = end,
            None => return at,
        }
    }
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80
}

/// The word (identifier characters) starting at `at`.
fn word_at(sql: &[u8], at: usize) -> &[u8] {
    let rest = sql.get(at..).unwrap_or_default();
    let len = rest.iter().position(|&b| !is_ident_byte(b)).unwrap_or(rest.len());
    rest.get(..len).unwrap_or_default()
}

/// Whether `keyword` (lower case) stands at `at` as a whole word.
fn keyword_at(sql: &[u8], at: usize, keyword: &[u8]) -> bool {
    let before_ok = at == 0 || sql.get(at - 1).is_some_and(|&b| !is_ident_byte(b) && b != b'.' && b != b'@');
    before_ok && word_at(sql, at).eq_ignore_ascii_case(keyword)
}

/// The identifier at `at`, quotes included: `name` or `` `name` ``.
fn identifier_at(sql: &[u8], at: usize) -> Option<Range<usize>> {
    match sql.get(at)? {
        b'`' => Some(at..skip_quoted(sql, at)),
        &b if is_ident_byte(b) && !b.is_ascii_digit() => Some(at..at + word_at(sql, at).len()),
        _ => None,
    }
}

fn unquote_range(sql: &[u8], r: Range<usize>) -> Range<usize> {
    match (sql.get(r.start), sql.get(r.end.wrapping_sub(1))) {
        (Some(&q @ (b'`' | b'\'' | b'"')), Some(&e)) if q == e && r.len() >= 2 => r.start + 1..r.end - 1,
        _ => r,
    }
}

fn unquote(text: &[u8]) -> &[u8] {
    slice(text, &unquote_range(text, 0..text.len()))
}

fn slice<'a>(sql: &'a [u8], r: &Range<usize>) -> &'a [u8] {
    sql.get(r.clone()).unwrap_or_default()
}

/// An item with the comments around it removed.
fn without_comments(item: &[u8]) -> &[u8] {
    let item = item.get(skip_space_and_comments(item, 0)..).unwrap_or_default();
    let end = find_top_level(item, 0, |i| skip_comment(item, i).is_some()).unwrap_or(item.len());
    trim(item.get(..end).unwrap_or_default())
}

fn trim(s: &[u8]) -> &[u8] {
    s.trim_ascii()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn select(sql: &str) -> Select<'_> {
        match classify(sql.as_bytes()) {
            Statement::Select(s) => s,
            other => panic!("{sql:?} classified as {other:?}"),
        }
    }

    fn columns(sql: &str) -> Vec<(String, ColumnKind)> {
        select(sql).columns().map(|c| (String::from_utf8_lossy(c.name).into_owned(), c.kind)).collect()
    }

    fn named(cols: &[(&str, ColumnKind)]) -> Vec<(String, ColumnKind)> {
        cols.iter().map(|(n, k)| (n.to_string(), *k)).collect()
    }

    #[test]
    fn classifies_statements() {
        assert_eq!(classify(b"BEGIN"), Statement::Other);
        assert_eq!(classify(b"  commit"), Statement::Other);
        assert_eq!(classify(b"INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)"), Statement::Write);
        assert_eq!(classify(b"UPDATE sbtest1 SET k=k+1 WHERE id=?"), Statement::Write);
        assert_eq!(classify(b"delete FROM sbtest1 WHERE id=?"), Statement::Write);
        assert_eq!(classify(b"REPLACE INTO t VALUES (1)"), Statement::Write);
        assert_eq!(classify(b"SHOW VARIABLES LIKE 'x'"), Statement::Show);
        assert_eq!(classify(b"CREATE TABLE sbtest1 (id INT)"), Statement::Other);
        assert_eq!(classify(b"SELECTED"), Statement::Other);
        assert_eq!(classify(b""), Statement::Other);
        assert!(matches!(classify(b"/* hint */ SELECT 1"), Statement::Select(_)));
        assert!(matches!(classify(b"(SELECT c FROM t)"), Statement::Select(_)));
    }

    #[test]
    fn sysbench_select_lists() {
        assert_eq!(columns("SELECT c FROM sbtest1 WHERE id=?"), named(&[("c", ColumnKind::C)]));
        assert_eq!(
            columns("SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c"),
            named(&[("c", ColumnKind::C)])
        );
        assert_eq!(
            columns("SELECT DISTINCT c FROM sbtest3 WHERE id BETWEEN ? AND ? ORDER BY c"),
            named(&[("c", ColumnKind::C)])
        );
        assert_eq!(
            columns("SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN ? AND ?"),
            named(&[("SUM(k)", ColumnKind::Sum)])
        );
        assert_eq!(
            columns("SELECT id, k, c, pad\n FROM sbtest1\n WHERE k IN (?, ?, ?)"),
            named(&[("id", ColumnKind::Id), ("k", ColumnKind::K), ("c", ColumnKind::C), ("pad", ColumnKind::Pad)])
        );
        assert_eq!(
            columns("SELECT AVG(id) FROM (SELECT * FROM sbtest1 FORCE KEY (PRIMARY) LIMIT 100) t"),
            named(&[("AVG(id)", ColumnKind::Avg)])
        );
        assert_eq!(
            columns("SELECT COUNT(*) FROM (SELECT * FROM sbtest1 WHERE k LIKE '%0%' LIMIT 100) t"),
            named(&[("COUNT(*)", ColumnKind::Count)])
        );
    }

    #[test]
    fn tables_and_aggregates() {
        let s = select("SELECT c FROM sbtest7 WHERE id=?");
        assert_eq!((s.table, s.schema), (&b"sbtest7"[..], None));
        let s = select("SELECT c FROM `db`.`sbtest1`");
        assert_eq!((s.table, s.schema), (&b"sbtest1"[..], Some(&b"db"[..])));
        let s = select("SELECT COUNT(*) FROM (SELECT 1) t");
        assert_eq!(s.table, b"");
        assert!(s.is_single_row());
        assert!(select("SELECT MAX(id), SUM(k) FROM t").is_single_row());
        assert!(!select("SELECT c, SUM(k) FROM t GROUP BY c").is_single_row());
        assert!(!select("SELECT c FROM t").is_single_row());
        assert!(select("SELECT 1").is_single_row());
        assert!(select("SELECT @@version").is_single_row());
    }

    #[test]
    fn variables_literals_aliases_and_stars() {
        assert_eq!(columns("SELECT @@version"), named(&[("@@version", ColumnKind::Version)]));
        assert_eq!(
            columns("select @@version_comment limit 1"),
            named(&[("@@version_comment", ColumnKind::VersionComment)])
        );
        assert_eq!(columns("SELECT @@GLOBAL.version;"), named(&[("@@GLOBAL.version", ColumnKind::Version)]));
        assert_eq!(columns("SELECT VERSION()"), named(&[("VERSION()", ColumnKind::Version)]));
        assert_eq!(columns("SELECT 1"), named(&[("1", ColumnKind::Text)]));
        assert_eq!(columns("SELECT 'a,b' , 2"), named(&[("a,b", ColumnKind::Text), ("2", ColumnKind::Text)]));
        assert_eq!(columns("SELECT SUM(k) AS total FROM t"), named(&[("total", ColumnKind::Sum)]));
        assert_eq!(columns("SELECT t.`c` AS `x` FROM t"), named(&[("x", ColumnKind::C)]));
        assert_eq!(columns("SELECT MIN(id) FROM t"), named(&[("MIN(id)", ColumnKind::Id)]));
        assert_eq!(columns("SELECT CONCAT(c, ',', pad) FROM t"), named(&[("CONCAT(c, ',', pad)", ColumnKind::Text)]));
        assert_eq!(
            columns("SELECT t.*, 1 FROM t"),
            named(&[
                ("id", ColumnKind::Id),
                ("k", ColumnKind::K),
                ("c", ColumnKind::C),
                ("pad", ColumnKind::Pad),
                ("1", ColumnKind::Text)
            ])
        );
        assert_eq!(columns("SELECT SQL_NO_CACHE id FROM t"), named(&[("id", ColumnKind::Id)]));
        assert_eq!(columns("SELECT fromage FROM t"), named(&[("fromage", ColumnKind::Text)]));
        assert_eq!(columns("SELECT c -- comment, not a column\n FROM t"), named(&[("c", ColumnKind::C)]));
    }

    #[test]
    fn never_panics_on_odd_text() {
        for sql in [
            "SELECT",
            "SELECT ,,,",
            "SELECT (((",
            "SELECT ')",
            "SELECT `",
            "SELECT /*",
            "SELECT a AS",
            "SELECT MIN(",
            "SELECT @@",
            "SELECT x FROM",
            "SELECT x FROM `",
            "SELECT x FROM a.",
            "(",
            "--",
        ] {
            if let Statement::Select(s) = classify(sql.as_bytes()) {
                let _ = s.columns().count();
                let _ = s.is_single_row();
            }
        }
        let bytes: Vec<u8> = (0..=255u8).cycle().take(4096).collect();
        let mut sql = b"SELECT ".to_vec();
        sql.extend_from_slice(&bytes);
        if let Statement::Select(s) = classify(&sql) {
            let _ = s.columns().count();
        }
    }
}
