//! A table of text cells, written as aligned text, Markdown or CSV: the
//! sweep's table and `compare`'s.

use std::fmt::Write as _;

use super::result_options::TableFormat;

/// A title, a header row and rows of cells; the first column is a label
/// (left-aligned in text), the others numbers (right-aligned).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    pub title: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    pub fn render(&self, format: TableFormat) -> String {
        match format {
            TableFormat::Text => self.text(),
            TableFormat::Markdown => self.markdown(),
            TableFormat::Csv => self.csv(),
        }
    }

    fn widths(&self) -> Vec<usize> {
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (i, cell) in row.iter().enumerate() {
                match widths.get_mut(i) {
                    Some(w) => *w = (*w).max(cell.chars().count()),
                    None => widths.push(cell.chars().count()),
                }
            }
        }
        widths
    }

    /// The title, then columns two spaces apart.
    pub fn text(&self) -> String {
        let widths = self.widths();
        let mut out = format!("{}\n", self.title);
        let mut line = |cells: &[String]| {
            let mut text = String::new();
            for (i, (cell, width)) in cells.iter().zip(&widths).enumerate() {
                let width = *width;
                if i == 0 {
                    let _ = write!(text, "{cell:<width$}");
                } else {
                    let _ = write!(text, "  {cell:>width$}");
                }
            }
            out.push_str(text.trim_end());
            out.push('\n');
        };
        line(&self.header);
        for row in &self.rows {
            line(row);
        }
        out
    }

    /// The title in bold, then a pipe table with the numbers right-aligned.
    pub fn markdown(&self) -> String {
        let escape = |cell: &String| cell.replace('|', "\\|");
        let mut out = format!("**{}**\n\n", self.title);
        let row = |cells: &[String]| format!("| {} |\n", cells.iter().map(escape).collect::<Vec<_>>().join(" | "));
        out.push_str(&row(&self.header));
        let rule: Vec<&str> = (0..self.header.len()).map(|i| if i == 0 { "---" } else { "---:" }).collect();
        out.push_str(&format!("| {} |\n", rule.join(" | ")));
        for cells in &self.rows {
            out.push_str(&row(cells));
        }
        out
    }

    /// RFC 4180: the header row, then the rows; no title.
    pub fn csv(&self) -> String {
        let mut out = csv_line(&self.header);
        for row in &self.rows {
            out.push_str(&csv_line(row));
        }
        out
    }
}

/// One CSV record, cells quoted where they must be, ended by a newline.
pub fn csv_line(cells: &[String]) -> String {
    let quoted: Vec<String> = cells.iter().map(|c| csv_cell(c)).collect();
    format!("{}\n", quoted.join(","))
}

fn csv_cell(cell: &str) -> String {
    if cell.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", cell.replace('"', "\"\""))
    } else {
        cell.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table {
        Table {
            title: "QPS".to_owned(),
            header: vec!["threads".into(), "MariaDB 10.11".into(), "a|b".into()],
            rows: vec![
                vec!["1".into(), "22166.00".into(), "-".into()],
                vec!["256".into(), "5.00".into(), "+2.6%".into()],
            ],
        }
    }

    #[test]
    fn text_aligns_labels_left_and_numbers_right() {
        assert_eq!(
            table().text(),
            "QPS\n\
             threads  MariaDB 10.11    a|b\n\
             1             22166.00      -\n\
             256               5.00  +2.6%\n"
        );
    }

    #[test]
    fn markdown_escapes_pipes_and_aligns_numbers_right() {
        assert_eq!(
            table().markdown(),
            "**QPS**\n\n\
             | threads | MariaDB 10.11 | a\\|b |\n\
             | --- | ---: | ---: |\n\
             | 1 | 22166.00 | - |\n\
             | 256 | 5.00 | +2.6% |\n"
        );
    }

    #[test]
    fn csv_quotes_what_needs_quoting() {
        assert_eq!(csv_line(&["a".into(), "b,c".into(), "say \"hi\"".into()]), "a,\"b,c\",\"say \"\"hi\"\"\"\n");
        assert_eq!(table().csv().lines().next(), Some("threads,MariaDB 10.11,a|b"));
    }
}
