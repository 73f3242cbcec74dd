//! The small HTTP server of `--metrics-listen` and `--web`: a thread that
//! accepts, and a short-lived thread per connection (at most
//! [`MAX_CONNECTIONS`] at once; more are answered 503). Each connection
//! has a deadline to send its request and to take the answer, so a slow
//! or silent client costs one thread for seconds and never holds up
//! another, the accept loop or the command. One request per connection
//! (`Connection: close`).
//!
//! Routes: `/metrics` (the exposition), and with `--web` `/` (the live
//! page) and `/events` (its server-sent events); anything else is 404,
//! a method other than GET or HEAD 405, a request that is not HTTP 400.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::exposition::TextFormat;
use super::http_request::{parse_head, HeadError, RequestHead};
use super::live_feed::{FeedRead, LiveFeed};
use super::page::{page_html, PageContent, PageSource};
use super::scoreboard::Scoreboard;

/// Connections served at once.
pub const MAX_CONNECTIONS: usize = 64;
/// How long a client may take to send its request head.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);
/// How long one write to a client may block before it is dropped.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// How often a quiet event stream gets a comment, so proxies keep it.
const KEEP_ALIVE: Duration = Duration::from_secs(15);
/// How long the command's end waits for open connections.
const FINISH_GRACE: Duration = Duration::from_secs(1);

/// What a server serves.
pub struct Site {
    pub scoreboard: Arc<Scoreboard>,
    /// `--web`: the page and its events.
    pub page: Option<LivePage>,
}

/// The live page: its heading and its events.
pub struct LivePage {
    pub feed: Arc<LiveFeed>,
    /// The title and the subtitle, which change once the run has started.
    pub heading: Arc<Mutex<(String, String)>>,
}

impl LivePage {
    /// The page with every event so far; it asks for the rest.
    fn html(&self) -> String {
        let (title, subtitle) = self.heading.lock().unwrap_or_else(PoisonError::into_inner).clone();
        let source = PageSource { label: String::new(), lines: self.feed.all() };
        page_html(&PageContent { title, subtitle, live: true, sources: vec![source] })
    }
}

/// A running server.
pub struct HttpServer {
    address: SocketAddr,
    stopping: Arc<AtomicBool>,
    /// Connections being served.
    open: Arc<AtomicUsize>,
    thread: Option<JoinHandle<()>>,
}

impl HttpServer {
    /// Binds `address` (port 0: any free one) and starts accepting.
    pub fn start(address: SocketAddr, site: Site) -> std::io::Result<HttpServer> {
        let listener = TcpListener::bind(address)?;
        let address = listener.local_addr()?;
        let stopping = Arc::new(AtomicBool::new(false));
        let open = Arc::new(AtomicUsize::new(0));
        let (theirs, open_theirs) = (Arc::clone(&stopping), Arc::clone(&open));
        let thread = std::thread::Builder::new()
            .name("wirebench-http".to_owned())
            .stack_size(256 * 1024)
            .spawn(move || accept_loop(&listener, &Arc::new(site), &theirs, &open_theirs))?;
        Ok(HttpServer { address, stopping, open, thread: Some(thread) })
    }

    /// The command has ended: the connections still open (a live page
    /// taking its last events) get [`FINISH_GRACE`] to finish, then the
    /// server stops.
    pub fn finish(&mut self) {
        let deadline = Instant::now() + FINISH_GRACE;
        while self.open.load(Ordering::Relaxed) > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        self.stop();
    }

    /// Where it listens (with the port the system chose for port 0).
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Stops accepting; connections still open end at their next write.
    pub fn stop(&mut self) {
        self.stopping.store(true, Ordering::Relaxed);
        // The accept loop blocks in accept(): a connection wakes it.
        let mut wake = self.address;
        if wake.ip().is_unspecified() {
            wake.set_ip(match wake {
                SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
                SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
            });
        }
        let _ = TcpStream::connect_timeout(&wake, Duration::from_secs(1));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn accept_loop(listener: &TcpListener, site: &Arc<Site>, stopping: &AtomicBool, open: &Arc<AtomicUsize>) {
    for conn in listener.incoming() {
        if stopping.load(Ordering::Relaxed) {
            return;
        }
        let Ok(mut conn) = conn else { continue };
        if open.fetch_add(1, Ordering::Relaxed) >= MAX_CONNECTIONS {
            open.fetch_sub(1, Ordering::Relaxed);
            let _ = conn.set_write_timeout(Some(Duration::from_millis(100)));
            let _ = respond(&mut conn, (503, "Service Unavailable"), "text/plain", b"too many connections\n", false);
            continue;
        }
        let (site, open_here) = (Arc::clone(site), Arc::clone(open));
        let spawned = std::thread::Builder::new().name("wirebench-http-conn".to_owned()).stack_size(256 * 1024).spawn(
            move || {
                serve_http_connection(conn, &site);
                open_here.fetch_sub(1, Ordering::Relaxed);
            },
        );
        if spawned.is_err() {
            open.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

fn serve_http_connection(mut conn: TcpStream, site: &Site) {
    let _ = conn.set_write_timeout(Some(WRITE_TIMEOUT));
    let head = match read_head(&mut conn) {
        Ok(Some(head)) => head,
        Ok(None) => return,
        Err(error) => {
            let _ = respond(&mut conn, error.status(), "text/plain", error.explanation(), false);
            return;
        }
    };
    let head_only = head.method == "HEAD";
    if head.method != "GET" && !head_only {
        let _ = respond(&mut conn, (405, "Method Not Allowed"), "text/plain", b"GET or HEAD only\n", false);
        return;
    }
    let _ = match (head.path.as_str(), &site.page) {
        ("/metrics", _) => {
            let format = TextFormat::negotiate(head.accept.as_deref());
            let body = site.scoreboard.exposition(format);
            respond(&mut conn, (200, "OK"), format.content_type(), body.as_bytes(), head_only)
        }
        ("/", Some(page)) => {
            respond(&mut conn, (200, "OK"), "text/html; charset=utf-8", page.html().as_bytes(), head_only)
        }
        ("/events", Some(page)) if !head_only => stream_events(&mut conn, &page.feed, &head),
        _ => {
            let routes: &[u8] = match site.page {
                Some(_) => b"not found: wirebench serves / (the live page), /events and /metrics\n",
                None => b"not found: wirebench serves /metrics\n",
            };
            respond(&mut conn, (404, "Not Found"), "text/plain", routes, head_only)
        }
    };
}

/// The request head, read within [`REQUEST_TIMEOUT`]; `None` when the
/// client went away or took too long.
fn read_head(conn: &mut TcpStream) -> Result<Option<RequestHead>, HeadError> {
    let deadline = Instant::now() + REQUEST_TIMEOUT;
    let mut input = Vec::with_capacity(1024);
    let mut buf = [0u8; 1024];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || conn.set_read_timeout(Some(left)).is_err() {
            return Ok(None);
        }
        let n = match conn.read(&mut buf) {
            Ok(0) | Err(_) => return Ok(None),
            Ok(n) => n,
        };
        input.extend_from_slice(buf.get(..n).unwrap_or_default());
        if let Some(head) = parse_head(&input)? {
            return Ok(Some(head));
        }
    }
}

fn respond(
    conn: &mut TcpStream,
    (code, reason): (u16, &str),
    content_type: &str,
    body: &[u8],
    head_only: bool,
) -> std::io::Result<()> {
    let allow = if code == 405 { "Allow: GET, HEAD\r\n" } else { "" };
    let head = format!(
        "HTTP/1.1 {code} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n{allow}Cache-Control: \
         no-store\r\nConnection: close\r\n\r\n",
        body.len()
    );
    conn.write_all(head.as_bytes())?;
    if !head_only {
        conn.write_all(body)?;
    }
    conn.flush()
}

/// `/events`: every event from the client's `Last-Event-ID` on, then
/// each as it comes, until the command ends (an `end` event) or the
/// client goes away.
fn stream_events(conn: &mut TcpStream, feed: &LiveFeed, head: &RequestHead) -> std::io::Result<()> {
    conn.write_all(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n\
          retry: 1000\n\n",
    )?;
    let mut cursor = head.last_event_id.or(head.from).map_or(0, |id| usize::try_from(id).unwrap_or(usize::MAX));
    loop {
        match feed.read_from(cursor, KEEP_ALIVE) {
            FeedRead::Events(events) => {
                let mut text = String::new();
                for event in &events {
                    cursor += 1;
                    text.push_str(&format!("id: {cursor}\ndata: {event}\n\n"));
                }
                conn.write_all(text.as_bytes())?;
            }
            FeedRead::Quiet => conn.write_all(b": keep-alive\n\n")?,
            FeedRead::Ended => return conn.write_all(b"event: end\ndata: {}\n\n"),
            FeedRead::Closed => return Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::watch::families::{CommonLabels, Family, FamilyKind};

    fn server(page: bool) -> (HttpServer, Arc<LiveFeed>) {
        let scoreboard = Arc::new(Scoreboard::new(CommonLabels(vec![("test".into(), "t".into())])));
        let family = Family::new("wirebench_transactions", FamilyKind::Counter, "Events").with(&[], 5.0);
        scoreboard.publish(vec![family]);
        let feed = Arc::new(LiveFeed::default());
        let heading = Arc::new(Mutex::new(("the title".to_owned(), String::new())));
        let page = page.then(|| LivePage { feed: Arc::clone(&feed), heading });
        let server = HttpServer::start("127.0.0.1:0".parse().unwrap(), Site { scoreboard, page }).unwrap();
        (server, feed)
    }

    fn exchange(address: SocketAddr, request: &[u8]) -> String {
        let mut conn = TcpStream::connect(address).unwrap();
        conn.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        conn.write_all(request).unwrap();
        let mut answer = String::new();
        conn.read_to_string(&mut answer).unwrap();
        answer
    }

    #[test]
    fn routes_and_refusals() {
        let (mut server, _) = server(false);
        let at = server.address();
        let metrics = exchange(at, b"GET /metrics HTTP/1.1\r\nAccept: application/openmetrics-text\r\n\r\n");
        assert!(metrics.starts_with("HTTP/1.1 200 OK\r\n"), "{metrics}");
        assert!(metrics.contains("Content-Type: application/openmetrics-text; version=1.0.0"), "{metrics}");
        assert!(metrics.ends_with("wirebench_transactions_total{test=\"t\"} 5.0\n# EOF\n"), "{metrics}");
        let plain = exchange(at, b"GET /metrics HTTP/1.0\r\n\r\n");
        assert!(plain.contains("text/plain; version=0.0.4") && !plain.contains("# EOF"), "{plain}");
        let head = exchange(at, b"HEAD /metrics HTTP/1.1\r\n\r\n");
        assert!(head.starts_with("HTTP/1.1 200 OK") && head.ends_with("\r\n\r\n"), "{head}");
        assert!(exchange(at, b"GET / HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404 "), "no page without --web");
        assert!(exchange(at, b"POST /metrics HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 405 "));
        assert!(exchange(at, b"hello\r\n\r\n").starts_with("HTTP/1.1 400 "));
        let large = exchange(at, &[b'x'; crate::watch::http_request::MAX_HEAD]);
        assert!(large.starts_with("HTTP/1.1 431 ") && large.ends_with("larger than this server reads (8 KiB)\n"));
        server.stop();
        assert!(TcpStream::connect(at).is_err(), "stopped");
    }

    /// A client that connects and says nothing does not hold up the next.
    #[test]
    fn a_silent_client_does_not_block_the_others() {
        let (server, _) = server(false);
        let silent: Vec<TcpStream> = (0..8).map(|_| TcpStream::connect(server.address()).unwrap()).collect();
        let answer = exchange(server.address(), b"GET /metrics HTTP/1.1\r\n\r\n");
        assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
        // Answered while the server still waits for the silent ones'
        // requests: their connections are open (no end of stream yet).
        for mut conn in silent {
            conn.set_nonblocking(true).unwrap();
            let waiting = conn.read(&mut [0; 1]).map_err(|e| e.kind());
            assert_eq!(waiting, Err(std::io::ErrorKind::WouldBlock), "the server still waits for this one");
        }
    }

    #[test]
    fn events_stream_from_the_last_one_seen_to_the_end() {
        let (server, feed) = server(true);
        feed.publish("{\"n\":1}".into());
        feed.publish("{\"n\":2}".into());
        feed.end();
        let page = exchange(server.address(), b"GET / HTTP/1.1\r\n\r\n");
        assert!(
            page.contains("<title>the title</title>") && page.contains("{\"n\":2}"),
            "the page has the events so far"
        );
        let from = exchange(server.address(), b"GET /events?from=2 HTTP/1.1\r\n\r\n");
        assert!(from.ends_with("retry: 1000\n\nevent: end\ndata: {}\n\n"), "{from}");
        let all = exchange(server.address(), b"GET /events HTTP/1.1\r\n\r\n");
        assert!(all.contains("Content-Type: text/event-stream"), "{all}");
        assert!(all.ends_with("id: 1\ndata: {\"n\":1}\n\nid: 2\ndata: {\"n\":2}\n\nevent: end\ndata: {}\n\n"), "{all}");
        let rest = exchange(server.address(), b"GET /events HTTP/1.1\r\nLast-Event-ID: 1\r\n\r\n");
        assert!(!rest.contains("\"n\":1") && rest.contains("id: 2\ndata: {\"n\":2}"), "{rest}");
    }
}
