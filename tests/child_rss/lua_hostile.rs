//! A Lua script against servers that misbehave after the login, as the
//! built-in tests are checked against them: rows that never end, a result
//! announcing 2^40 columns, garbage, an answer that never comes, a reset,
//! and an error message full of terminal escapes. Each run ends near its
//! `--time` (or at once, with an error that names what happened), in
//! bounded memory, and prints no raw control byte. Each case runs over
//! TCP on both backends, and over a unix socket, where a script state alone
//! on its loop awaits its answers on the socket itself
//! (`driver::WaitMode::OnSocket`): the server here is this process, on
//! the run's cores.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::os::unix::net::UnixListener;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{greeting, ScratchDir};
use wirebench_protocol::Capabilities;

/// How the scripted server answers every command after the login.
#[derive(Clone, Copy, Debug)]
enum Misbehaviour {
    /// A result set of one column whose rows never end.
    EndlessRows,
    /// A result announcing 2^40 columns, whose definitions never end.
    HugeColumnCount,
    /// Bytes that are no answer: a column count whose length-encoded
    /// integer says three bytes follow where one does (a tolerant client
    /// ignores bytes after a whole count, as libmariadb does, but not a
    /// length that lies), then half a header.
    Garbage,
    /// Nothing, ever.
    Stall,
    /// The connection is closed.
    Reset,
    /// An ERR whose message is terminal escape sequences.
    HostileError,
}

fn send(stream: &mut impl Write, seq: u8, payload: &[u8]) -> std::io::Result<()> {
    let len = payload.len().to_le_bytes();
    stream.write_all(&[len[0], len[1], len[2], seq])?;
    stream.write_all(payload)
}

fn receive(stream: &mut impl Read) -> std::io::Result<Vec<u8>> {
    let mut header = [0; 4];
    stream.read_exact(&mut header)?;
    let mut payload = vec![0; u32::from_le_bytes([header[0], header[1], header[2], 0]) as usize];
    stream.read_exact(&mut payload)?;
    Ok(payload)
}

/// Logs the client in, then misbehaves at its first command.
fn serve(mut stream: impl Read + Write, how: Misbehaviour) -> std::io::Result<()> {
    let caps = Capabilities::LONG_PASSWORD
        | Capabilities::PROTOCOL_41
        | Capabilities::SECURE_CONNECTION
        | Capabilities::PLUGIN_AUTH
        | Capabilities::CONNECT_WITH_DB
        | Capabilities::TRANSACTIONS
        | Capabilities::MULTI_RESULTS
        | Capabilities::DEPRECATE_EOF;
    send(&mut stream, 0, &greeting("10.11.19-MariaDB", caps, "mysql_native_password"))?;
    receive(&mut stream)?;
    send(&mut stream, 2, &[0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00])?;
    receive(&mut stream)?;
    match how {
        Misbehaviour::EndlessRows => {
            send(&mut stream, 1, &[0x01])?;
            send(&mut stream, 2, &column_definition())?;
            let row = [&[250u8][..], &[b'x'; 250]].concat();
            let mut seq = 3u8;
            loop {
                send(&mut stream, seq, &row)?;
                seq = seq.wrapping_add(1);
            }
        }
        Misbehaviour::HugeColumnCount => {
            send(&mut stream, 1, &[0xfe, 0, 0, 0, 0, 0, 1, 0, 0])?;
            let mut seq = 2u8;
            loop {
                send(&mut stream, seq, &column_definition())?;
                seq = seq.wrapping_add(1);
            }
        }
        // A packet out of sequence, then bytes that frame nothing.
        Misbehaviour::Garbage => stream.write_all(&[0x02, 0x00, 0x00, 0x09, 0xfd, b'h', 0xff, 0x17])?,
        // sleep: a server that stalls, the fault under test.
        Misbehaviour::Stall => std::thread::sleep(Duration::from_secs(30)),
        Misbehaviour::Reset => return Ok(()),
        Misbehaviour::HostileError => {
            let mut err = vec![0xff];
            err.extend_from_slice(&1064u16.to_le_bytes());
            err.extend_from_slice(b"#42000");
            err.extend_from_slice("\u{1b}[2J\u{1b}[31mRED\u{1b}]0;pwned\u{7}\r".as_bytes());
            send(&mut stream, 1, &err)?;
        }
    }
    let _ = stream.read_to_end(&mut Vec::new());
    Ok(())
}

fn column_definition() -> Vec<u8> {
    let mut def = Vec::new();
    for field in [&b"def"[..], b"", b"t", b"t", b"c", b"c"] {
        def.push(field.len() as u8);
        def.extend_from_slice(field);
    }
    def.extend_from_slice(&[0x0c, 0x21, 0x00, 0xff, 0xff, 0x00, 0x00, 0xfd, 0x00, 0x00, 0x00, 0x00, 0x00]);
    def
}

/// Where the scripted server listens.
enum Listening {
    Tcp(u16),
    Unix(PathBuf),
}

impl Listening {
    fn args(&self) -> Vec<String> {
        match self {
            Listening::Tcp(port) => vec!["--mysql-host=127.0.0.1".to_owned(), format!("--mysql-port={port}")],
            Listening::Unix(path) => vec![format!("--mysql-socket={}", path.display())],
        }
    }
}

/// A server misbehaving `how` on every connection it accepts, over TCP or
/// (given a directory) a unix socket in `dir`.
fn start(how: Misbehaviour, dir: Option<&ScratchDir>) -> Listening {
    if let Some(dir) = dir {
        let path = dir.0.join("hostile.sock");
        let listener = UnixListener::bind(&path).unwrap();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                std::thread::spawn(move || serve(stream, how));
            }
        });
        return Listening::Unix(path);
    }
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || serve(stream, how));
        }
    });
    Listening::Tcp(port)
}

const SCRIPT: &str = "\
function thread_init()
  con = sysbench.sql.driver():connect()
end
function event()
  local rs = con:query('SELECT c FROM t')
end
";

/// What a run of the script against a server misbehaving `how` did.
struct Ran {
    status: std::process::ExitStatus,
    took: Duration,
    peak_rss_kb: i64,
    stderr: String,
    stdout: String,
}

/// Runs over TCP against each backend (the default, io_uring where the
/// kernel has it, and epoll), and over a unix socket with the default;
/// `check` judges each run.
fn on_each_backend(how: Misbehaviour, extra: &[&str], check: impl Fn(&Ran)) {
    for (io, unix) in [("--io=auto", false), ("--io=epoll", false), ("--io=auto", true)] {
        let mut args = extra.to_vec();
        args.extend([io, "--verbosity=4"]);
        let ran = run(how, &args, unix);
        assert_contained(&ran, how);
        let on_socket = ran.stderr.matches("waits for each answer on its connection's socket").count() == 2;
        assert_eq!(on_socket, unix && io_uring(), "{how:?} {io} unix={unix}: {}", ran.stderr);
        check(&ran);
    }
}

/// Whether wirebench runs on io_uring here (`--io=auto`'s choice).
fn io_uring() -> bool {
    let probe = common::wirebench()
        .args(["oltp_point_select", "--mysql-dry-run", "--io=uring", "--events=1", "run"])
        .output()
        .unwrap();
    probe.status.success()
}

// The child is reaped by libc::wait4 (for its rusage), which clippy cannot see.
#[allow(clippy::zombie_processes)]
fn run(how: Misbehaviour, extra: &[&str], unix: bool) -> Ran {
    let dir = ScratchDir::new(&format!("lua_hostile_{how:?}_{}", if unix { "unix" } else { "tcp" }));
    let listening = start(how, unix.then_some(&dir));
    let script = dir.write("hostile.lua", SCRIPT);
    let started = Instant::now();
    let child = common::wirebench()
        .arg(&script)
        .args(["--mysql-user=u", "--mysql-password=p", "--threads=2", "--time=3"])
        .args(listening.args())
        .args(extra)
        .arg("run")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let mut stdout = child.stdout.unwrap();
    let mut stderr = child.stderr.unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let mut out = String::new();
    let _ = stdout.read_to_string(&mut out);
    let (mut status, mut usage) = (0, unsafe { std::mem::zeroed::<libc::rusage>() });
    // SAFETY: waits for our own child, into our own locals.
    unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    Ran {
        status: std::process::ExitStatus::from_raw(status),
        took: started.elapsed(),
        peak_rss_kb: usage.ru_maxrss,
        stderr: reader.join().unwrap(),
        stdout: out,
    }
}

/// Bounded: far below what keeping the answer would take, and nothing a
/// terminal would act on.
fn assert_contained(ran: &Ran, how: Misbehaviour) {
    assert!(ran.took < Duration::from_secs(12), "{how:?}: took {:?}\n{}", ran.took, ran.stderr);
    assert!(ran.peak_rss_kb < 200 * 1024, "{how:?}: {} KiB resident at peak\n{}", ran.peak_rss_kb, ran.stderr);
    let printed = format!("{}{}", ran.stdout, ran.stderr);
    assert!(!printed.chars().any(|c| c.is_control() && c != '\n' && c != '\t'), "{how:?}: {printed:?}");
}

#[test]
fn endless_rows_fail_at_the_result_bound_naming_it() {
    on_each_backend(Misbehaviour::EndlessRows, &["--lua-result-limit=8M"], |ran| {
        assert_eq!(ran.status.code(), Some(1), "{}", ran.stderr);
        assert!(ran.stderr.contains("a result of more than 8388608 bytes: raise --lua-result-limit"), "{}", ran.stderr);
    });
}

#[test]
fn a_result_of_two_to_the_forty_columns_is_refused_in_bounded_memory() {
    on_each_backend(Misbehaviour::HugeColumnCount, &["--lua-result-limit=1M"], |ran| {
        assert_eq!(ran.status.code(), Some(1), "{}", ran.stderr);
    });
}

#[test]
fn garbage_is_a_protocol_error() {
    on_each_backend(Misbehaviour::Garbage, &[], |ran| {
        assert_eq!(ran.status.code(), Some(1), "{}", ran.stderr);
        assert!(ran.stderr.contains("broke the protocol"), "{}", ran.stderr);
    });
}

/// An answer that never comes: the run ends at its time plus the grace,
/// the waiting calls cut off.
#[test]
fn a_stalled_server_ends_the_run_at_its_time() {
    on_each_backend(Misbehaviour::Stall, &[], |ran| {
        assert!(ran.took >= Duration::from_secs(3), "{:?}", ran.took);
        assert!(ran.stdout.contains("total time:"), "{}\n{}", ran.stdout, ran.stderr);
    });
}

/// A reset is a lost connection: fatal, named as libmysqlclient names it;
/// with 2013 ignored, opened again (each attempt reset again) until the
/// run's time, which ends it without an error.
#[test]
fn a_reset_is_a_lost_connection() {
    on_each_backend(Misbehaviour::Reset, &[], |ran| {
        assert_eq!(ran.status.code(), Some(1), "{}", ran.stderr);
        assert!(ran.stderr.contains("2013"), "{}", ran.stderr);
    });
    on_each_backend(Misbehaviour::Reset, &["--mysql-ignore-errors=2013"], |ran| {
        assert_eq!(ran.status.code(), Some(0), "{}", ran.stderr);
        assert!(ran.stdout.contains("reconnects:"), "{}", ran.stdout);
    });
}

#[test]
fn a_servers_error_text_reaches_the_terminal_escaped() {
    on_each_backend(Misbehaviour::HostileError, &[], |ran| {
        assert_eq!(ran.status.code(), Some(1), "{}", ran.stderr);
        assert!(ran.stderr.contains("\\u{1b}[2J\\u{1b}[31mRED"), "{}", ran.stderr);
    });
}
