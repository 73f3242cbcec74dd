//! `wirebench record`: the recording proxy, from its command line to its
//! summary. It checks what would fail later at once (the upstream is down,
//! a port is taken, the file exists, a certificate does not load), starts
//! the recording thread and the driver's relay loops, and waits for the
//! end: Ctrl-C or SIGTERM, `--time`, `--max-size`, or a loop that failed.
//! Then the loops close their connections and send their last records,
//! and the file gets its end block.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::io::AsyncReadExt;
use wirebench_capture::format::{BlockSettings, CaptureHeader, Source};

use super::interrupt::{Interrupts, Signal};
use super::output::{stderr_line, Output, OutputError};
use super::watching::start_record_watch;
use crate::client::{Endpoint, Stream};
use crate::driver::relay::{
    start_recording, start_relay, ListenAddress, ListenError, RecordOptions, RecordingError, RecordingProgress,
    RecordingSettings, RecordingSummary, RelayListeners, RelayOptions,
};
use crate::driver::{
    allowed_cpus, check_loop_cpus, Clock, CpuUnavailable, DriverError, Finished, LoopContext, RunControl,
};
use crate::stats::{RelayCounts, StatsBoard};
use crate::transport::tls::{self, TlsConfigError};
use crate::watch::{Watch, WatchError, WatchSettings};

/// How often the recording seals a block: what a crash may lose.
const FLUSH_EVERY: Duration = Duration::from_secs(1);

/// Why `wirebench record` could not start, or ended in failure.
#[derive(Debug, thiserror::Error)]
pub enum RecordRunError {
    #[error("cannot start the runtime: {0}")]
    Runtime(io::Error),
    #[error("cannot watch for Ctrl-C and SIGTERM: {0}")]
    Signals(io::Error),
    #[error(
        "cannot reach the server at {endpoint}: {problem}; start it, or give the server's address with --upstream \
         or --upstream-socket"
    )]
    UpstreamDown { endpoint: Endpoint, problem: String },
    #[error(transparent)]
    Listen(#[from] ListenError),
    #[error("--out={path}: {problem}")]
    Out { path: String, problem: String },
    #[error(transparent)]
    Tls(#[from] TlsConfigError),
    #[error("cannot read the current directory (for --mysql-ssl=on's files): {0}")]
    CurrentDir(io::Error),
    #[error(transparent)]
    Cpus(#[from] CpuUnavailable),
    #[error("cannot start the proxy's threads: {0}")]
    Threads(io::Error),
    /// The file failed mid-way: it holds what was written before.
    #[error("{0}; the capture holds what was written before (readable to its last whole block)")]
    Recording(#[from] RecordingError),
    #[error("the proxy stopped: {0}")]
    Loop(#[from] DriverError),
    #[error(transparent)]
    Output(#[from] OutputError),
    /// `--metrics-listen` or `--web` cannot listen, or the report cannot
    /// be written.
    #[error(transparent)]
    Watch(#[from] WatchError),
}

/// How a recording ended: by a signal, or by itself (`--time`, `--max-size`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordEnd {
    Signal(Signal),
    Time,
    Full,
}

/// Records until the end comes, watched as `--metrics-listen` and the like
/// ask; prints what was written.
pub fn record_command(options: &RecordOptions, watching: &WatchSettings) -> Result<RecordEnd, RecordRunError> {
    let watch = start_record_watch(watching, options)?;
    let outcome = record_watched(options, watch.clone());
    super::finish_watch(watch, outcome)
}

fn record_watched(options: &RecordOptions, watch: Option<Arc<Watch>>) -> Result<RecordEnd, RecordRunError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(RecordRunError::Runtime)?;
    let interrupts = Interrupts::watch(&runtime).map_err(RecordRunError::Signals)?;
    let relay = relay_options(options)?;
    let probe = runtime.block_on(interrupts.or_signal(probe_upstream(&options.upstream, options.connect_timeout)));
    match probe {
        Ok(result) => result?,
        Err(signal) => return Ok(RecordEnd::Signal(signal)),
    }
    let listeners = RelayListeners::bind(&options.listen)?;
    let cpus = relay_cpus(options)?;
    let file = create_out(&options.out)?;
    let recorder = Recorder::start(options, (relay, listeners, cpus), file, progress_to(watch))?;
    interrupts.attach(&recorder.context.control, &recorder.context.finished);
    say_listening(options, &recorder.listening)?;
    let end = recorder.wait(options.time, &interrupts);
    let summary = recorder.finish()?;
    Output::Stdout.print(render_summary(&options.out, &summary, end))?;
    Ok(end)
}

/// The relay's options, its TLS files read.
fn relay_options(options: &RecordOptions) -> Result<RelayOptions, RecordRunError> {
    let serve_tls = options.serve_tls.as_ref().map(|(cert, key)| tls::server_tls(cert, key)).transpose()?;
    let cwd = std::env::current_dir().map_err(RecordRunError::CurrentDir)?;
    let upstream_tls = tls::client_tls(&options.upstream_tls, &cwd)?;
    if serve_tls.is_some() {
        for note in &upstream_tls.notes {
            stderr_line(format_args!("wirebench: upstream TLS: {note}"));
        }
    }
    Ok(RelayOptions {
        upstream: options.upstream.clone(),
        cpus: options.cpus.clone(),
        serve_tls,
        upstream_tls: upstream_tls.tls,
        connect_timeout: options.connect_timeout,
        notices: Arc::new(|line: &str| stderr_line(format_args!("wirebench record: {line}"))),
    })
}

/// The server answers: its greeting's first bytes come within the time limit.
async fn probe_upstream(endpoint: &Endpoint, limit: Duration) -> Result<(), RecordRunError> {
    let down = |problem: String| RecordRunError::UpstreamDown { endpoint: endpoint.clone(), problem };
    let greeting = async {
        let mut stream = Stream::open(endpoint).await?;
        let mut first = [0u8; 5];
        stream.read_exact(&mut first).await?;
        Ok::<_, io::Error>(first)
    };
    match tokio::time::timeout(limit, greeting).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(down(e.to_string())),
        Err(_) => Err(down(format!("no greeting within {} s (--mysql-connect-timeout)", limit.as_secs()))),
    }
}

/// The loops' cores: `--cpus`, or every core this process may use.
fn relay_cpus(options: &RecordOptions) -> Result<Vec<Option<usize>>, RecordRunError> {
    match &options.cpus {
        Some(cpus) => {
            check_loop_cpus(cpus)?;
            Ok(cpus.iter().map(|&c| Some(c)).collect())
        }
        None => Ok(allowed_cpus().map_or_else(|| vec![None], |cpus| cpus.into_iter().map(Some).collect())),
    }
}

/// The capture file, new: record never writes over a file.
fn create_out(path: &Path) -> Result<File, RecordRunError> {
    OpenOptions::new().write(true).create_new(true).open(path).map_err(|e| RecordRunError::Out {
        path: path.display().to_string(),
        problem: match e.kind() {
            io::ErrorKind::AlreadyExists => {
                "the file exists: record never writes over a file; choose another name or remove it".to_owned()
            }
            _ => e.to_string(),
        },
    })
}

/// The recording thread and the loops, running.
struct Recorder {
    context: LoopContext,
    loops: Vec<JoinHandle<Result<(), DriverError>>>,
    recording: JoinHandle<Result<RecordingSummary, RecordingError>>,
    full: Arc<std::sync::atomic::AtomicBool>,
    listening: Vec<ListenAddress>,
}

impl Recorder {
    fn start(
        options: &RecordOptions,
        (relay, listeners, cpus): (RelayOptions, RelayListeners, Vec<Option<usize>>),
        file: File,
        progress: RecordingProgress,
    ) -> Result<Recorder, RecordRunError> {
        let listening = listening_on(&options.listen, &listeners);
        let loops = cpus.len().max(1);
        let context = LoopContext {
            board: StatsBoard::new(&vec![0; loops]),
            control: RunControl::new(None, loops),
            clock: Clock::start(),
            deadline_ns: None,
            ignore: Default::default(),
            finished: Finished::default(),
            usage: Default::default(),
            idle: None,
        };
        let full = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stop = {
            let (control, finished, full) = (context.control.clone(), context.finished.clone(), full.clone());
            move || {
                full.store(true, std::sync::atomic::Ordering::Relaxed);
                control.stop();
                finished.alert();
            }
        };
        let settings = recording_settings(options, &listening);
        let recording = start_recording(file, settings, loops, stop, progress).map_err(RecordRunError::Threads)?;
        let loops = start_relay(relay, cpus, listeners, recording.inlet, &context).map_err(RecordRunError::Threads)?;
        Ok(Recorder { context, loops, recording: recording.thread, full, listening })
    }

    /// Waits for the end: a signal, `--time`, the file full or failed, or
    /// a loop that stopped.
    fn wait(&self, time: Option<Duration>, interrupts: &Interrupts) -> RecordEnd {
        let deadline = time.map(|t| Instant::now() + t);
        let finished = &self.context.finished;
        let ended = finished.wait(self.loops.len(), deadline);
        self.context.control.stop();
        if !ended {
            while !finished.wait(self.loops.len(), None) {}
        }
        match interrupts.first_signal() {
            Some(signal) => RecordEnd::Signal(signal),
            None if self.full.load(std::sync::atomic::Ordering::Relaxed) => RecordEnd::Full,
            None => RecordEnd::Time,
        }
    }

    /// The loops' first failure, else the recording's summary.
    fn finish(self) -> Result<RecordingSummary, RecordRunError> {
        let mut failed = None;
        for handle in self.loops {
            let failure = match handle.join() {
                Ok(result) => result.err().map(RecordRunError::Loop),
                Err(_) => Some(RecordRunError::Threads(io::Error::other("a relay loop panicked"))),
            };
            if let Some(e) = failure {
                failed.get_or_insert(e);
            }
        }
        let summary = self.recording.join().map_err(|_| RecordingError::Thread("it panicked".into()))??;
        match failed {
            Some(e) => Err(e),
            None => Ok(summary),
        }
    }
}

/// The recording's counts to the watch, each block and at the end.
fn progress_to(watch: Option<Arc<Watch>>) -> RecordingProgress {
    let Some(watch) = watch else { return Box::new(|_: &RelayCounts| {}) };
    let started = Instant::now();
    Box::new(move |counts: &RelayCounts| watch.record(counts, started.elapsed().as_secs_f64()))
}

/// The addresses as bound (a port 0 resolved).
fn listening_on(asked: &[ListenAddress], listeners: &RelayListeners) -> Vec<ListenAddress> {
    let unix = asked.iter().filter(|a| matches!(a, ListenAddress::Unix(_))).cloned();
    listeners.tcp_addresses().into_iter().map(ListenAddress::Tcp).chain(unix).collect()
}

fn recording_settings(options: &RecordOptions, listening: &[ListenAddress]) -> RecordingSettings {
    let listen: Vec<String> = listening.iter().map(ToString::to_string).collect();
    let mut header = CaptureHeader::new(Source::Record, format!("{} -> {}", listen.join(", "), options.upstream));
    header.created_ns = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    header.writer = format!("wirebench {}", env!("CARGO_PKG_VERSION"));
    RecordingSettings {
        header,
        blocks: BlockSettings::default(),
        max_bytes: options.max_bytes,
        flush_every: FLUSH_EVERY,
    }
}

fn say_listening(options: &RecordOptions, listening: &[ListenAddress]) -> Result<(), OutputError> {
    let listen: Vec<String> = listening.iter().map(ToString::to_string).collect();
    let until = match options.time {
        Some(time) => format!("for {} s (Ctrl-C or SIGTERM ends it sooner)", time.as_secs()),
        None => "until Ctrl-C or SIGTERM".to_owned(),
    };
    Output::Stderr.line(format_args!(
        "wirebench record: listening on {}, forwarding to {}, recording into {} {until}",
        listen.join(" and "),
        options.upstream,
        options.out.display()
    ))
}

fn render_summary(out: &Path, summary: &RecordingSummary, end: RecordEnd) -> String {
    let totals = summary.totals;
    let counts = &summary.counts;
    let why = match end {
        RecordEnd::Signal(signal) => format!("{signal}"),
        RecordEnd::Time => "--time".to_owned(),
        RecordEnd::Full => "--max-size".to_owned(),
    };
    let mut text = format!(
        "wrote {}: {} records over {:.3} s, {} bytes (ended by {why})\n  connections: {}; commands: {}; answers: {}\n",
        out.display(),
        totals.records,
        totals.last_ns.saturating_sub(totals.first_ns) as f64 / 1e9,
        summary.bytes,
        counts.connections,
        counts.commands,
        counts.answers,
    );
    if counts.logins_refused > 0 {
        text.push_str(&format!("  {} logins the server refused\n", counts.logins_refused));
    }
    if counts.gaps > 0 {
        text.push_str(&format!("  {} places where the traffic could not be read as the protocol\n", counts.gaps));
    }
    for what in &counts.not_importable {
        text.push_str(&format!("  not recorded: {what}\n"));
    }
    text
}
