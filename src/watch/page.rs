//! The page of `--web` and `--report-html`: one HTML file with its style,
//! its script and the charting library (uPlot, vendored from npm in
//! `page/vendor/uplot/`) inline, and the command's result lines as JSON.
//! The report is the page with every line and no live updates; the live
//! page has the lines so far and asks `/events` for the rest. Nothing is
//! fetched from elsewhere: it works with the network off.

use std::sync::Arc;

const TEMPLATE: &str = include_str!("page/page.html");
const PAGE_JS: &str = include_str!("page/page.js");
const PAGE_CSS: &str = include_str!("page/page.css");
const UPLOT_JS: &str = include_str!("page/vendor/uplot/uPlot.iife.min.js");
const UPLOT_CSS: &str = include_str!("page/vendor/uplot/uPlot.min.css");

/// One command's (or, for `compare`, one file's) result lines.
#[derive(Debug, Clone)]
pub struct PageSource {
    pub label: String,
    /// Each a JSON object (a result line, or a fuzzing run's progress).
    pub lines: Vec<Arc<str>>,
}

/// What a page shows.
#[derive(Debug, Clone)]
pub struct PageContent {
    pub title: String,
    pub subtitle: String,
    /// A live page: it asks `/events?from=N` for the lines after these.
    pub live: bool,
    pub sources: Vec<PageSource>,
}

/// The whole page.
pub fn page_html(content: &PageContent) -> String {
    let data = page_data(content);
    let mut out = String::with_capacity(TEMPLATE.len() + UPLOT_JS.len() + PAGE_JS.len() + data.len() + 4096);
    let mut rest = TEMPLATE;
    while let Some(at) = rest.find("{{") {
        let (before, after) = rest.split_at(at);
        out.push_str(before);
        let Some(end) = after.find("}}") else {
            out.push_str(after);
            return out;
        };
        match after.get(2..end).unwrap_or_default() {
            "VERSION" => out.push_str(env!("CARGO_PKG_VERSION")),
            "TITLE" => out.push_str(&html_escaped(&content.title)),
            "UPLOT_CSS" => out.push_str(UPLOT_CSS),
            "PAGE_CSS" => out.push_str(PAGE_CSS),
            "UPLOT_JS" => out.push_str(UPLOT_JS),
            "PAGE_JS" => out.push_str(PAGE_JS),
            "DATA" => out.push_str(&data),
            other => out.push_str(other),
        }
        rest = after.get(end + 2..).unwrap_or_default();
    }
    out.push_str(rest);
    out
}

/// The page's JSON, safe inside a `<script>` element: every `<` is
/// written `\u003c`, so no `</script>` in a label or an error message
/// can end it.
fn page_data(content: &PageContent) -> String {
    let text = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_owned());
    let events_from = if content.live { content.sources.first().map_or(0, |s| s.lines.len()) } else { 0 };
    let mut out = format!(
        "{{\"title\":{},\"subtitle\":{},\"live\":{},\"events_url\":\"/events\",\"events_from\":{events_from},\"sources\":[",
        text(&content.title),
        text(&content.subtitle),
        content.live
    );
    for (i, source) in content.sources.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&format!("{{\"label\":{},\"lines\":[", text(&source.label)));
        for (j, line) in source.lines.iter().enumerate() {
            if j > 0 {
                out.push(',');
            }
            out.push_str(line);
        }
        out.push_str("]}");
    }
    out.push_str("]}");
    out.replace('<', "\\u003c")
}

fn html_escaped(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_holds_its_script_library_and_data_inline() {
        let content = PageContent {
            title: "oltp <read>".to_owned(),
            subtitle: String::new(),
            live: false,
            sources: vec![PageSource {
                label: "a</script>".to_owned(),
                lines: vec![Arc::from("{\"type\":\"x\",\"s\":\"</script>\"}")],
            }],
        };
        let html = page_html(&content);
        assert!(html.contains("<title>oltp &lt;read&gt;</title>"), "escaped title");
        assert!(!html.contains("{{"), "every placeholder filled");
        assert_eq!(html.matches("</script>").count(), 3, "no data line ends a script element");
        assert!(html.contains("var uPlot=function()"), "uPlot inline");
        assert!(!html.contains("src=\"http") && !html.contains("href=\"http"), "nothing fetched from the network");
        let start = html.find("id=\"wirebench-data\">").unwrap() + "id=\"wirebench-data\">".len();
        let json = &html[start..start + html[start..].find("</script>").unwrap()];
        let data: serde_json::Value = serde_json::from_str(json).unwrap();
        assert_eq!(data["sources"][0]["label"], "a</script>");
        assert_eq!(data["sources"][0]["lines"][0]["s"], "</script>");
        assert_eq!(data["live"], false);
    }

    /// The vendored files are those the README names (npm's uplot 1.6.32).
    #[test]
    fn the_vendored_library_is_the_one_named() {
        use sha2::{Digest, Sha256};
        let readme = include_str!("page/vendor/uplot/README.md");
        for (name, file) in [("uPlot.iife.min.js", UPLOT_JS), ("uPlot.min.css", UPLOT_CSS)] {
            let hash: String = Sha256::digest(file.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
            assert!(readme.contains(&hash), "{name}'s sha256 {hash} is not the one README.md names");
        }
    }
}
