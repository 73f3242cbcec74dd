//! What the watch's tests (`metrics_prometheus.rs`, `watch_page.rs`)
//! share: a run whose standard error is read as it comes (it names the
//! addresses it serves), a throwaway Prometheus, headless Chromium, and a
//! plain HTTP GET.

use std::io::{BufRead, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use crate::common::{self, ScratchDir};

/// A light run against no server: `--mysql-dry-run` at a fixed rate, so
/// its loops sleep between events instead of taking the cores.
pub const DRY: &[&str] = &["oltp_point_select", "--mysql-dry-run", "--threads=2", "--rate=2000"];

/// A free TCP port on 127.0.0.1 (taken and given back).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A wirebench run started in the background, its stderr read as it
/// comes.
pub struct Running {
    child: Child,
    stderr: Receiver<String>,
    seen: Vec<String>,
}

impl Running {
    pub fn start(args: &[String]) -> Running {
        let mut child = common::wirebench()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("wirebench starts");
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        Running { child, stderr: rx, seen: Vec::new() }
    }

    /// Waits for a stderr line containing `part`, and returns it.
    #[track_caller]
    pub fn wait_for(&mut self, part: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.stderr.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if line.contains(part) {
                        return line;
                    }
                }
                Err(e) => panic!("no stderr line with {part:?} ({e}); seen:\n{}", self.seen.join("\n")),
            }
        }
    }

    /// The address in the stderr line `what on http://ADDRESS/...`.
    #[track_caller]
    pub fn address_of(&mut self, what: &str) -> SocketAddr {
        let line = self.wait_for(&format!("{what} on http://"));
        let rest = line.split("on http://").nth(1).unwrap();
        rest.split('/').next().unwrap().parse().unwrap()
    }

    /// Ctrl-C: the run stops and reports what ran.
    pub fn interrupt(&self) {
        let status = Command::new("kill").args(["-INT", &self.child.id().to_string()]).status().unwrap();
        assert!(status.success());
    }

    /// Waits for the end; stdout, and every stderr line.
    pub fn finish(mut self) -> (Output, Vec<String>) {
        let output = self.child.wait_with_output().unwrap();
        self.seen.extend(self.stderr.try_iter());
        // The reader thread sends the last lines as the pipe closes.
        while let Ok(line) = self.stderr.recv_timeout(Duration::from_secs(5)) {
            self.seen.push(line);
        }
        (output, self.seen)
    }
}

/// A GET: the status, the headers, the body.
pub fn http_get(address: SocketAddr, path: &str, accept: Option<&str>) -> (u16, String, String) {
    let mut conn = TcpStream::connect(address).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let accept = accept.map(|a| format!("Accept: {a}\r\n")).unwrap_or_default();
    write!(conn, "GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n{accept}\r\n").unwrap();
    let mut answer = String::new();
    conn.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, head.to_owned(), body.to_owned())
}

/// `tool` on the PATH (`--version` works), else `None` after
/// `common::unavailable`.
pub fn tool(tool: &str, package: &str) -> Option<PathBuf> {
    let found = Command::new(tool).arg("--version").output().is_ok_and(|o| o.status.success());
    if !found {
        common::unavailable(&format!("{tool} is not installed: apt-get install {package} (scripts/test.sh does)"));
        return None;
    }
    Some(PathBuf::from(tool))
}

/// A throwaway Prometheus in a scratch directory, stopped on drop.
pub struct Prometheus {
    child: Child,
    pub address: SocketAddr,
    _dir: ScratchDir,
}

impl Prometheus {
    /// Started with `config` (YAML) and `flags`; waits until it is ready.
    pub fn start(config: &str, flags: &[&str]) -> Option<Prometheus> {
        let binary = tool("prometheus", "prometheus")?;
        let dir = ScratchDir::new("prometheus");
        let config_file = dir.write("prometheus.yml", config);
        let address: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
        let log = std::fs::File::create(dir.0.join("prometheus.log")).unwrap();
        let child = Command::new(binary)
            .arg(format!("--config.file={}", config_file.display()))
            .arg(format!("--storage.tsdb.path={}", dir.0.join("data").display()))
            .arg(format!("--web.listen-address={address}"))
            .arg("--log.level=warn")
            .args(flags)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("prometheus starts");
        let prometheus = Prometheus { child, address, _dir: dir };
        common::wait_until("prometheus to be ready", Duration::from_secs(60), || {
            TcpStream::connect(address).is_ok() && http_get(address, "/-/ready", None).0 == 200
        });
        Some(prometheus)
    }

    /// An instant query's vector: each series' labels and value.
    pub fn query(&self, expression: &str) -> Vec<(serde_json::Value, f64)> {
        let path = format!("/api/v1/query?query={}", url_encoded(expression));
        let (status, _, body) = http_get(self.address, &path, None);
        assert_eq!(status, 200, "{expression}: {body}");
        let answer: serde_json::Value = serde_json::from_str(&body).unwrap();
        let result = answer["data"]["result"].as_array().cloned().unwrap_or_default();
        result
            .into_iter()
            .map(|series| {
                let value = series["value"][1].as_str().unwrap().parse().unwrap();
                (series["metric"].clone(), value)
            })
            .collect()
    }

    /// The single value of `expression`, if it has one.
    pub fn value(&self, expression: &str) -> Option<f64> {
        let result = self.query(expression);
        assert!(result.len() <= 1, "{expression}: {result:?}");
        result.first().map(|(_, v)| *v)
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn url_encoded(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Headless Chromium's DOM of `url` once the page has loaded and its
/// scripts have run (a live page: until its event stream ends), and the
/// page's console lines, none expected. The network is off but for this
/// host.
pub fn chromium_dom(chromium: &Path, url: &str, dir: &Path) -> (String, Vec<String>) {
    // Into files: the DOM holds the page's inline script, more than a
    // pipe's buffer.
    let (dom_file, log_file) = (dir.join("dom.html"), dir.join("chromium.log"));
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1200,1600",
            "--virtual-time-budget=10000",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", dir.join("chromium").display()))
        .arg(url)
        .stdout(std::fs::File::create(&dom_file).unwrap())
        .stderr(std::fs::File::create(&log_file).unwrap())
        .spawn()
        .expect("chromium starts");
    let deadline = Duration::from_secs(180);
    common::exit_within(&mut child, deadline).unwrap_or_else(|| panic!("chromium took more than {deadline:?}"));
    let log = std::fs::read_to_string(&log_file).unwrap_or_default();
    let console = log.lines().filter(|l| l.contains(":CONSOLE")).map(str::to_owned).collect();
    (std::fs::read_to_string(&dom_file).unwrap(), console)
}

/// The value of `attribute` on the `<body>` of `dom`.
pub fn body_attribute(dom: &str, attribute: &str) -> Option<String> {
    let body = &dom[dom.find("<body")?..];
    let tag = &body[..body.find('>')?];
    let at = tag.find(&format!("{attribute}=\""))? + attribute.len() + 2;
    Some(tag[at..].split('"').next()?.to_owned())
}

/// Each chart's name and its points (`data-chart`, `data-points`), in
/// the page's order.
pub fn charts(dom: &str) -> Vec<(String, usize)> {
    dom.split("data-chart=\"")
        .skip(1)
        .map(|rest| {
            let name = rest.split('"').next().unwrap().to_owned();
            let points = rest.split("data-points=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
            (name, points)
        })
        .collect()
}

/// A TCP relay in front of a server that notes when a client asks for
/// `path`: a test learns that the browser has opened the page's event
/// stream, however long the browser took to start.
pub struct RequestSpy {
    pub address: SocketAddr,
    seen: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl RequestSpy {
    pub fn start(upstream: SocketAddr, path: &'static str) -> RequestSpy {
        use std::sync::atomic::{AtomicBool, Ordering};
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let seen = std::sync::Arc::new(AtomicBool::new(false));
        let noted = seen.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let (Ok(client), Ok(server)) = (client, TcpStream::connect(upstream)) else { continue };
                let (mut client_in, mut server_out) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                let noted = noted.clone();
                let wanted = format!("GET {path}");
                std::thread::spawn(move || {
                    let mut buf = [0u8; 4096];
                    while let Ok(n) = client_in.read(&mut buf) {
                        if n == 0 || server_out.write_all(&buf[..n]).is_err() {
                            break;
                        }
                        if buf[..n].starts_with(wanted.as_bytes()) {
                            noted.store(true, Ordering::Relaxed);
                        }
                    }
                });
                let (mut server_in, mut client_out) = (server, client);
                std::thread::spawn(move || std::io::copy(&mut server_in, &mut client_out));
            }
        });
        RequestSpy { address, seen }
    }

    /// Whether a client has asked for the path.
    pub fn seen(&self) -> bool {
        self.seen.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// The lines of the page's own data (`<script id="wirebench-data">` in
/// its DOM) of `kind` (`interval`, `final`, ...).
pub fn page_lines(dom: &str, kind: &str) -> usize {
    page_data(dom, kind).len()
}

/// Those lines themselves.
pub fn page_data(dom: &str, kind: &str) -> Vec<serde_json::Value> {
    let start = dom.find("id=\"wirebench-data\">").expect("the page's data") + "id=\"wirebench-data\">".len();
    let end = start + dom[start..].find("</script>").unwrap();
    let data: serde_json::Value = serde_json::from_str(&dom[start..end]).unwrap();
    data["sources"][0]["lines"].as_array().unwrap().iter().filter(|l| l["type"] == kind).cloned().collect()
}
