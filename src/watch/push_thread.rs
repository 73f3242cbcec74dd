//! `--metrics-push`: a thread of its own posts each interval's request to
//! the remote-write receiver, so that a slow or absent receiver never
//! holds up the report thread. Only the newest request waits to be sent:
//! one that arrives while another is in flight replaces the one waiting
//! (the counters are cumulative, so the newer carries the older's
//! figures). The last, at the end of the command, is retried until it
//! lands or [`FINAL_PUSH_TIMEOUT`] passes, so that a short Job lands its
//! final figures through a receiver's brief outage; when no push has
//! landed yet, the receiver is not there, and it is tried once. The end
//! waits no longer than that in all, whatever the receiver does: `--time`
//! ends the command.
//!
//! A failure never stops the command: each kind (refused, timed out, an
//! HTTP status) is said once on standard error, with what to check; the
//! last request's outcome goes to the command, which says it.

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use base64::Engine as _;

use super::settings::PushTarget;
use super::Say;

/// How long one attempt may take to connect, and to send or read.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
const IO_TIMEOUT: Duration = Duration::from_secs(10);

/// How long the command's end waits for its last request to land.
pub const FINAL_PUSH_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a push failed; each is said once per command.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum PushFailure {
    /// The host name did not resolve.
    Resolve(String),
    /// No connection: refused, unreachable, timed out.
    Connect(String),
    /// Connected, but sending or reading failed or timed out.
    Exchange(String),
    /// The receiver answered with an error status.
    Status { code: u16, said: String },
}

impl PushFailure {
    /// The kind, for saying each once: a status is its own kind.
    fn kind(&self) -> (u8, u16) {
        match self {
            PushFailure::Resolve(_) => (0, 0),
            PushFailure::Connect(_) => (1, 0),
            PushFailure::Exchange(_) => (2, 0),
            PushFailure::Status { code, .. } => (3, *code),
        }
    }

    /// What went wrong and what to check.
    pub fn explain(&self, url: &str) -> String {
        let what = match self {
            PushFailure::Resolve(e) => format!("cannot resolve the host ({e}): check the URL's host name"),
            PushFailure::Connect(e) => {
                format!("cannot connect ({e}): is the receiver running, and reachable from this host?")
            }
            PushFailure::Exchange(e) => format!("the request failed ({e})"),
            PushFailure::Status { code: 404, said } => format!(
                "the receiver answered 404 ({said}): is the path right (Prometheus: /api/v1/write), and Prometheus \
                 started with --web.enable-remote-write-receiver?"
            ),
            PushFailure::Status { code: code @ (401 | 403), said } => {
                format!("the receiver answered {code} ({said}): give its credentials as http://USER:PASSWORD@host/...")
            }
            PushFailure::Status { code, said } => format!("the receiver answered {code} ({said})"),
        };
        format!("--metrics-push to {url}: {what}")
    }
}

/// What the thread and the command share.
struct PushState {
    /// The newest request not yet sent, and whether it is the last.
    waiting: Option<(Vec<u8>, bool)>,
    /// The last request's outcome, once its attempts are over.
    last_done: Option<Result<(), PushFailure>>,
    stop: bool,
    said: BTreeSet<(u8, u16)>,
    /// Requests that landed.
    landed: u64,
}

struct PushShared {
    state: Mutex<PushState>,
    changed: Condvar,
}

impl PushShared {
    fn lock(&self) -> MutexGuard<'_, PushState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The pushing thread's handle.
pub struct Pusher {
    shared: Arc<PushShared>,
    thread: Option<JoinHandle<()>>,
}

impl Pusher {
    /// Starts the thread; `say` writes a line on standard error.
    pub fn start(target: PushTarget, say: Say) -> std::io::Result<Pusher> {
        let state = PushState { waiting: None, last_done: None, stop: false, said: BTreeSet::new(), landed: 0 };
        let shared = Arc::new(PushShared { state: Mutex::new(state), changed: Condvar::new() });
        let theirs = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("wirebench-push".to_owned())
            .stack_size(256 * 1024)
            .spawn(move || push_loop(&theirs, &target, say))?;
        Ok(Pusher { shared, thread: Some(thread) })
    }

    /// Queues `body` (replacing any still waiting); never blocks on the
    /// receiver.
    pub fn send(&self, body: Vec<u8>) {
        self.shared.lock().waiting = Some((body, false));
        self.shared.changed.notify_all();
    }

    /// Sends `body` as the last request, retrying until it lands or
    /// [`FINAL_PUSH_TIMEOUT`] passes, then stops the thread. Returns the
    /// requests that landed over the command, or the last one's failure.
    pub fn finish(self, body: Vec<u8>) -> Result<u64, PushFailure> {
        self.finish_within(body, FINAL_PUSH_TIMEOUT)
    }

    /// [`finish`](Pusher::finish), waiting at most `wait` in all: a
    /// receiver that holds a request open (an interval's still in flight,
    /// or the last) never keeps the command past it. A thread still
    /// waiting on the receiver then is left behind; the process ends.
    fn finish_within(mut self, body: Vec<u8>, wait: Duration) -> Result<u64, PushFailure> {
        self.shared.lock().waiting = Some((body, true));
        self.shared.changed.notify_all();
        let deadline = Instant::now() + wait;
        let mut state = self.shared.lock();
        while state.last_done.is_none() && Instant::now() < deadline {
            let left = deadline.saturating_duration_since(Instant::now());
            state = self.shared.changed.wait_timeout(state, left).unwrap_or_else(PoisonError::into_inner).0;
        }
        let Some(outcome) = state.last_done.clone() else {
            state.stop = true;
            drop(state);
            self.shared.changed.notify_all();
            self.thread = None;
            let unanswered = format!("no answer within {} s of the end", wait.as_secs_f64());
            return Err(PushFailure::Exchange(unanswered));
        };
        let landed = state.landed;
        drop(state);
        self.stop();
        outcome.map(|()| landed)
    }

    fn stop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.changed.notify_all();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Pusher {
    /// A command that ends without [`finish`](Pusher::finish) (it failed)
    /// tells the thread to stop and does not wait for it: a request in
    /// flight may hang on the receiver.
    fn drop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.changed.notify_all();
    }
}

fn push_loop(shared: &PushShared, target: &PushTarget, say: Say) {
    loop {
        let mut state = shared.lock();
        while state.waiting.is_none() && !state.stop {
            state = shared.changed.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
        let Some((body, last)) = state.waiting.take() else { return };
        let retry = last && state.landed > 0;
        drop(state);
        let outcome = if retry { post_until_landed(target, &body) } else { post(target, &body) };
        let mut state = shared.lock();
        match &outcome {
            Ok(()) => state.landed += 1,
            Err(failure) if !last && state.said.insert(failure.kind()) => {
                say(&format!("{}; the run goes on (said once)", failure.explain(&target.shown)));
            }
            Err(_) => {}
        }
        if last {
            state.last_done = Some(outcome);
            shared.changed.notify_all();
            return;
        }
    }
}

/// The last request: tried again (after a pause) until it lands, the
/// receiver refuses it for good (a 4xx other than 429), or time is up.
fn post_until_landed(target: &PushTarget, body: &[u8]) -> Result<(), PushFailure> {
    let deadline = Instant::now() + FINAL_PUSH_TIMEOUT;
    loop {
        let outcome = post(target, body);
        let for_good =
            matches!(&outcome, Err(PushFailure::Status { code, .. }) if (400..500).contains(code) && *code != 429);
        if outcome.is_ok() || for_good || Instant::now() + Duration::from_secs(1) >= deadline {
            return outcome;
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// One POST of `body`; Ok on a 2xx answer.
fn post(target: &PushTarget, body: &[u8]) -> Result<(), PushFailure> {
    let addresses =
        (target.host.as_str(), target.port).to_socket_addrs().map_err(|e| PushFailure::Resolve(e.to_string()))?;
    let mut last_error = None;
    let mut stream = None;
    for address in addresses {
        match TcpStream::connect_timeout(&address, CONNECT_TIMEOUT) {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(e) => last_error = Some(e),
        }
    }
    let Some(mut stream) = stream else {
        return Err(PushFailure::Connect(last_error.map_or("no address".to_owned(), |e| e.to_string())));
    };
    let exchange = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
            PushFailure::Exchange(format!("the receiver did not answer within {} s", IO_TIMEOUT.as_secs()))
        }
        _ => PushFailure::Exchange(e.to_string()),
    };
    stream.set_write_timeout(Some(IO_TIMEOUT)).map_err(exchange)?;
    stream.set_read_timeout(Some(IO_TIMEOUT)).map_err(exchange)?;
    stream.write_all(&request_head(target, body.len())).map_err(exchange)?;
    stream.write_all(body).map_err(exchange)?;
    let answer = read_receiver_answer(&mut stream).map_err(exchange)?;
    match status_of(&answer) {
        Some(code) if (200..300).contains(&code) => Ok(()),
        Some(code) => Err(PushFailure::Status { code, said: body_excerpt(&answer) }),
        None => Err(PushFailure::Exchange("the answer is not HTTP".to_owned())),
    }
}

fn request_head(target: &PushTarget, length: usize) -> Vec<u8> {
    let authorization = target.basic_auth.as_ref().map_or_else(String::new, |credentials| {
        format!("Authorization: Basic {}\r\n", base64::engine::general_purpose::STANDARD.encode(credentials))
    });
    let host = if target.host.contains(':') { format!("[{}]", target.host) } else { target.host.clone() };
    format!(
        "POST {} HTTP/1.1\r\nHost: {host}:{}\r\nUser-Agent: wirebench/{}\r\nContent-Type: application/x-protobuf\r\n\
         Content-Encoding: snappy\r\nX-Prometheus-Remote-Write-Version: 0.1.0\r\n{authorization}Content-Length: \
         {length}\r\nConnection: close\r\n\r\n",
        target.path,
        target.port,
        env!("CARGO_PKG_VERSION"),
    )
    .into_bytes()
}

/// The answer's first 4 KiB: its status line and the start of its body
/// are all that is read.
fn read_receiver_answer(stream: &mut TcpStream) -> std::io::Result<Vec<u8>> {
    let mut answer = Vec::new();
    stream.take(4096).read_to_end(&mut answer)?;
    Ok(answer)
}

/// `HTTP/1.1 204 No Content` → 204.
fn status_of(answer: &[u8]) -> Option<u16> {
    let line = answer.split(|&b| b == b'\n').next()?;
    let text = std::str::from_utf8(line).ok()?;
    let mut words = text.split_whitespace();
    words.next().filter(|w| w.starts_with("HTTP/"))?;
    words.next()?.parse().ok()
}

/// The body's first line, trimmed to 200 characters, or the status line.
fn body_excerpt(answer: &[u8]) -> String {
    let text = String::from_utf8_lossy(answer);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let line = body.lines().map(str::trim).find(|l| !l.is_empty());
    let line = line.or_else(|| head.lines().next().map(str::trim)).unwrap_or_default();
    line.chars().take(200).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    fn target(port: u16) -> PushTarget {
        PushTarget::parse(&format!("http://u:p@127.0.0.1:{port}/api/v1/write")).unwrap()
    }

    /// A receiver that answers each connection with `answers` in turn,
    /// saying on the channel as each request has come, and handing the
    /// requests it read back.
    fn receiver(answers: Vec<&'static str>) -> (u16, std::sync::mpsc::Receiver<()>, JoinHandle<Vec<Vec<u8>>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (came, requests) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            let mut requests = Vec::new();
            for answer in answers {
                let (mut conn, _) = listener.accept().unwrap();
                conn.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                let mut request = Vec::new();
                let mut buf = [0; 4096];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") || !request.ends_with(b"BODY") {
                    let n = conn.read(&mut buf).unwrap();
                    assert!(n > 0, "the request ended early");
                    request.extend_from_slice(&buf[..n]);
                }
                conn.write_all(answer.as_bytes()).unwrap();
                drop(conn);
                requests.push(request);
                let _ = came.send(());
            }
            requests
        });
        (port, requests, thread)
    }

    #[test]
    fn a_post_carries_the_headers_remote_write_asks_for() {
        let (port, _, thread) = receiver(vec!["HTTP/1.1 204 No Content\r\n\r\n"]);
        assert_eq!(post(&target(port), b"BODY"), Ok(()));
        let request = String::from_utf8(thread.join().unwrap().remove(0)).unwrap();
        assert!(request.starts_with("POST /api/v1/write HTTP/1.1\r\n"), "{request}");
        for header in [
            "Content-Encoding: snappy\r\n",
            "Content-Type: application/x-protobuf\r\n",
            "X-Prometheus-Remote-Write-Version: 0.1.0\r\n",
            "Content-Length: 4\r\n",
            "Authorization: Basic dTpw\r\n",
        ] {
            assert!(request.contains(header), "{header}: {request}");
        }
    }

    #[test]
    fn a_refusal_is_a_status_with_the_receivers_words() {
        let (port, _, thread) =
            receiver(vec!["HTTP/1.1 400 Bad Request\r\nContent-Length: 20\r\n\r\nout of order sample\n"]);
        let failure = post(&target(port), b"BODY").unwrap_err();
        assert_eq!(failure, PushFailure::Status { code: 400, said: "out of order sample".to_owned() });
        thread.join().unwrap();
        let closed = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let failure = post(&target(closed), b"BODY").unwrap_err();
        assert!(matches!(failure, PushFailure::Connect(_)), "{failure:?}");
        assert!(failure.explain("http://x/").contains("is the receiver running"), "{}", failure.explain(""));
    }

    /// Failures of one kind are said once; the last request is retried
    /// until it lands (its failures on the way are not said: it landed).
    #[test]
    fn each_kind_is_said_once_and_the_last_request_lands() {
        static SAID: Mutex<Vec<String>> = Mutex::new(Vec::new());
        let answers = vec![
            "HTTP/1.1 500 Oops\r\n\r\n",
            "HTTP/1.1 500 Oops\r\n\r\n",
            "HTTP/1.1 204 No Content\r\n\r\n",
            "HTTP/1.1 503 Busy\r\n\r\n",
            "HTTP/1.1 204 No Content\r\n\r\n",
        ];
        let (port, requests, thread) = receiver(answers);
        let pusher = Pusher::start(target(port), |line| SAID.lock().unwrap().push(line.to_owned())).unwrap();
        for _ in 0..3 {
            pusher.send(b"BODY".to_vec());
            requests.recv_timeout(Duration::from_secs(30)).unwrap();
        }
        assert_eq!(pusher.finish(b"BODY".to_vec()), Ok(2), "the third and the last landed");
        assert_eq!(thread.join().unwrap().len(), 5);
        let said = SAID.lock().unwrap();
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].contains("answered 500 (HTTP/1.1 500 Oops)"), "{said:?}");
    }

    /// With nothing landed before, the receiver is not there: the last
    /// request is tried once.
    #[test]
    fn a_receiver_never_reached_is_tried_once_at_the_end() {
        let closed = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let pusher = Pusher::start(target(closed), |_| {}).unwrap();
        let failure = pusher.finish(b"BODY".to_vec()).unwrap_err();
        assert!(matches!(failure, PushFailure::Connect(_)), "{failure:?}");
    }

    /// A receiver that takes requests and never answers: the command's
    /// end waits for the last push no longer than it was given, and says
    /// it went unanswered.
    #[test]
    fn a_silent_receiver_never_holds_the_end() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (came, arrived) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for conn in listener.incoming() {
                held.push(conn);
                let _ = came.send(());
            }
        });
        let pusher = Pusher::start(target(port), |_| {}).unwrap();
        pusher.send(b"BODY".to_vec());
        arrived.recv_timeout(Duration::from_secs(30)).unwrap();
        let started = Instant::now();
        let failure = pusher.finish_within(b"BODY".to_vec(), Duration::from_millis(200)).unwrap_err();
        assert!(started.elapsed() < IO_TIMEOUT, "the end waited for the receiver: {:?}", started.elapsed());
        assert_eq!(failure, PushFailure::Exchange("no answer within 0.2 s of the end".to_owned()));
    }
}
