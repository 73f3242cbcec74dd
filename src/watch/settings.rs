//! The watch's configuration, which it owns: `cli` reads `--metrics-listen`,
//! `--metrics-push`, `--metrics-label`, `--web` and `--report-html` into
//! it (`cli/watch_args.rs`), with the checks below.

use std::net::SocketAddr;
use std::path::PathBuf;

/// What to serve, push and write while a command runs and when it ends.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WatchSettings {
    /// `--metrics-listen`: where `/metrics` is served.
    pub listen: Option<SocketAddr>,
    /// `--metrics-push`: where the series are sent by remote write.
    pub push: Option<PushTarget>,
    /// `--web`: where the live page is served.
    pub web: Option<SocketAddr>,
    /// `--report-html`: the page written at the end, self-contained.
    pub report_html: Option<PathBuf>,
    /// `--metrics-label`: labels every series carries.
    pub labels: Vec<SeriesLabel>,
}

impl WatchSettings {
    /// Whether anything is asked for.
    pub fn any(&self) -> bool {
        self.listen.is_some() || self.push.is_some() || self.web.is_some() || self.report_html.is_some()
    }
}

/// `wirebench report FILE... --html=FILE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportOptions {
    /// JSON results: one run, sweep or search, or the shards of one run.
    pub files: Vec<PathBuf>,
    pub html: PathBuf,
}

/// Labels wirebench sets itself, which `--metrics-label` may not name:
/// the series' own, and Prometheus's reserved `__` prefix.
pub const RESERVED_LABELS: &[&str] =
    &["test", "shard", "kind", "code", "state", "verdict", "le", "quantile", "percentile", "shards"];

/// One `--metrics-label=KEY=VALUE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeriesLabel {
    pub name: String,
    pub value: String,
}

/// Why a `--metrics-label` cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LabelError {
    #[error("expected KEY=VALUE, e.g. --metrics-label=env=staging")]
    NoEquals,
    #[error(
        "{0:?} is not a Prometheus label name: a letter or _ first, then letters, digits and _ \
         (e.g. env, cluster_name)"
    )]
    BadName(String),
    #[error("{0:?} is a label wirebench sets itself (or reserved by Prometheus): choose another name")]
    Reserved(String),
}

impl SeriesLabel {
    /// `KEY=VALUE`, the name checked against Prometheus's label syntax.
    pub fn parse(text: &str) -> Result<SeriesLabel, LabelError> {
        let (name, value) = text.split_once('=').ok_or(LabelError::NoEquals)?;
        let name = name.trim();
        let mut chars = name.chars();
        let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
        if !first_ok || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(LabelError::BadName(name.to_owned()));
        }
        if name.starts_with("__") || RESERVED_LABELS.contains(&name) {
            return Err(LabelError::Reserved(name.to_owned()));
        }
        Ok(SeriesLabel { name: name.to_owned(), value: value.to_owned() })
    }
}

/// `--metrics-push=URL`: a Prometheus remote-write receiver over HTTP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushTarget {
    /// The URL without its credentials, for messages.
    pub shown: String,
    pub host: String,
    pub port: u16,
    /// The path and query, from the first `/`.
    pub path: String,
    /// `user:password@` of the URL, for HTTP basic authentication.
    pub basic_auth: Option<String>,
}

/// Why a `--metrics-push` URL cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PushUrlError {
    #[error(
        "https is not supported: push to the receiver over http (in a cluster, its service's http port), or through \
         a local agent (Prometheus in agent mode, Grafana Alloy) that forwards over https"
    )]
    Https,
    #[error("expected an http:// URL such as http://prometheus:9090/api/v1/write")]
    NotHttp,
    #[error("no host in the URL: expected http://HOST[:PORT]/PATH, e.g. http://prometheus:9090/api/v1/write")]
    NoHost,
    #[error("{0:?} is not a port number (1 to 65535)")]
    BadPort(String),
}

impl PushTarget {
    /// `http://[user:password@]host[:port][/path]`; port 80 by default,
    /// path `/` when none is given.
    pub fn parse(url: &str) -> Result<PushTarget, PushUrlError> {
        let url = url.trim();
        let rest = match url.split_once("://") {
            Some((scheme, rest)) if scheme.eq_ignore_ascii_case("http") => rest,
            Some((scheme, _)) if scheme.eq_ignore_ascii_case("https") => return Err(PushUrlError::Https),
            _ => return Err(PushUrlError::NotHttp),
        };
        let (authority, path) = match rest.find(['/', '?']) {
            Some(at) => rest.split_at(at),
            None => (rest, "/"),
        };
        let path = if path.starts_with('?') { format!("/{path}") } else { path.to_owned() };
        let (credentials, host_port) = match authority.rsplit_once('@') {
            Some((credentials, host_port)) => (Some(credentials), host_port),
            None => (None, authority),
        };
        let (host, port) = split_host_port(host_port)?;
        if host.is_empty() {
            return Err(PushUrlError::NoHost);
        }
        let shown = format!("http://{host_port}{path}");
        let basic_auth = credentials.map(percent_decoded);
        Ok(PushTarget { shown, host, port, path, basic_auth })
    }
}

/// `host`, `host:port`, `[v6]` or `[v6]:port`.
fn split_host_port(text: &str) -> Result<(String, u16), PushUrlError> {
    let parse_port = |p: &str| p.parse::<u16>().ok().filter(|&n| n > 0).ok_or(PushUrlError::BadPort(p.to_owned()));
    if let Some(v6) = text.strip_prefix('[') {
        let (host, after) = v6.split_once(']').ok_or(PushUrlError::NoHost)?;
        let port = match after.strip_prefix(':') {
            Some(port) => parse_port(port)?,
            None => 80,
        };
        return Ok((host.to_owned(), port));
    }
    match text.rsplit_once(':') {
        Some((host, port)) => Ok((host.to_owned(), parse_port(port)?)),
        None => Ok((text.to_owned(), 80)),
    }
}

/// `%40` and the like in a URL's credentials, as browsers and curl read them.
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while let Some(&b) = bytes.get(at) {
        let hex = bytes.get(at + 1..at + 3).and_then(|h| std::str::from_utf8(h).ok());
        match (b, hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(decoded)) => {
                out.push(decoded);
                at += 3;
            }
            _ => {
                out.push(b);
                at += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_follow_prometheus_syntax() {
        let label = SeriesLabel::parse("env=staging=2").unwrap();
        assert_eq!((label.name.as_str(), label.value.as_str()), ("env", "staging=2"));
        assert_eq!(SeriesLabel::parse("_x1=").unwrap().value, "");
        assert_eq!(SeriesLabel::parse("env"), Err(LabelError::NoEquals));
        assert_eq!(SeriesLabel::parse("1env=a"), Err(LabelError::BadName("1env".into())));
        assert_eq!(SeriesLabel::parse("my-env=a"), Err(LabelError::BadName("my-env".into())));
        assert_eq!(SeriesLabel::parse("test=a"), Err(LabelError::Reserved("test".into())));
        assert_eq!(SeriesLabel::parse("__name__=a"), Err(LabelError::Reserved("__name__".into())));
    }

    #[test]
    fn push_urls_are_split_and_their_credentials_kept_apart() {
        let t = PushTarget::parse("http://prometheus:9090/api/v1/write").unwrap();
        assert_eq!((t.host.as_str(), t.port, t.path.as_str()), ("prometheus", 9090, "/api/v1/write"));
        assert_eq!(t.basic_auth, None);
        let t = PushTarget::parse("HTTP://me:p%40ss@10.0.0.1/push?tenant=a").unwrap();
        assert_eq!((t.host.as_str(), t.port, t.path.as_str()), ("10.0.0.1", 80, "/push?tenant=a"));
        assert_eq!(t.basic_auth.as_deref(), Some("me:p@ss"));
        assert_eq!(t.shown, "http://10.0.0.1/push?tenant=a", "no password in messages");
        let t = PushTarget::parse("http://[::1]:9201").unwrap();
        assert_eq!((t.host.as_str(), t.port, t.path.as_str()), ("::1", 9201, "/"));
        assert_eq!(PushTarget::parse("https://x/api/v1/write"), Err(PushUrlError::Https));
        assert_eq!(PushTarget::parse("prometheus:9090"), Err(PushUrlError::NotHttp));
        assert_eq!(PushTarget::parse("http:///api"), Err(PushUrlError::NoHost));
        assert_eq!(PushTarget::parse("http://h:0/"), Err(PushUrlError::BadPort("0".into())));
        assert_eq!(PushTarget::parse("http://h:99999/"), Err(PushUrlError::BadPort("99999".into())));
    }
}
