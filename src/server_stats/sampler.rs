//! The sampling connection: a thread of its own with a current-thread
//! tokio runtime and the async client, which takes a sample whenever the
//! report thread asks and hands it back. Nothing here runs on an event
//! loop, and the report thread never waits on the socket itself.

use std::io;
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

use super::delta::ServerSample;
use super::figures::ServerLocation;
use super::process::ProcessReading;
use super::status::{status_query, StatusReading, STATUS_COUNTERS};
use crate::client::{ClientError, ConnectOptions, Connection, PeerProcess};

/// How long one `SHOW GLOBAL STATUS` may take before the connection is
/// given up (and opened again for the next sample).
const QUERY_WAIT: Duration = Duration::from_secs(10);

/// What the sampler needs.
#[derive(Debug, Clone)]
pub struct SamplerConfig {
    /// How the sampling connection logs in: as the run's first connection.
    pub connect: ConnectOptions,
    /// `--server-pid`.
    pub pid: Option<u32>,
}

/// Why the sampler could not start, or its first sample failed.
#[derive(Debug, thiserror::Error)]
pub enum SamplerError {
    #[error("--server-stats: cannot start the sampling thread: {0}")]
    Thread(io::Error),
    #[error("--server-stats: the sampling connection cannot log in: {0}")]
    Connect(ClientError),
    #[error(
        "--server-pid={pid}: process {pid} cannot be read on this host ({source}): give the pid of the server's own \
         process (`pidof mariadbd mysqld`), as the user that runs it or root"
    )]
    NoProcess { pid: u32, source: io::Error },
    #[error("--server-stats: the first SHOW GLOBAL STATUS failed: {0}")]
    FirstSample(String),
    #[error(
        "--server-stats: the server's SHOW GLOBAL STATUS has none of the variables sampled (Questions, Com_select, \
         Rows_read, ...): it is not MySQL or MariaDB; --server-stats=off leaves it alone"
    )]
    NoCounters,
}

/// An answer to the `id`th request.
struct SampleAnswer {
    id: u64,
    sample: Result<ServerSample, String>,
}

/// The report thread's end of the sampling thread. Dropped, the thread
/// ends once its sample in progress is done.
pub struct Sampler {
    requests: mpsc::Sender<u64>,
    answers: mpsc::Receiver<SampleAnswer>,
    /// The id of the last request.
    asked: u64,
    pub endpoint: String,
    pub location: ServerLocation,
    /// The process read beside the status variables.
    pub pid: Option<u32>,
}

impl Sampler {
    /// Starts the thread, which logs in and finds the server's process;
    /// waits until it has.
    pub fn start(config: SamplerConfig) -> Result<Sampler, SamplerError> {
        let (request_tx, request_rx) = mpsc::channel();
        let (answer_tx, answer_rx) = mpsc::channel();
        let (ready_tx, ready_rx) = mpsc::sync_channel(1);
        let endpoint = config.connect.endpoint.to_string();
        std::thread::Builder::new()
            .name("server-stats".to_owned())
            .spawn(move || serve_samples(config, &ready_tx, &request_rx, &answer_tx))
            .map_err(SamplerError::Thread)?;
        let ready = ready_rx.recv().map_err(|_| SamplerError::Thread(io::Error::other("it ended at once")))?;
        let (location, pid) = ready?;
        Ok(Sampler { requests: request_tx, answers: answer_rx, asked: 0, endpoint, location, pid })
    }

    /// Asks for a sample now; its id.
    pub fn ask(&mut self) -> u64 {
        self.asked += 1;
        // A thread that ended answers nothing: `answer` says so.
        let _ = self.requests.send(self.asked);
        self.asked
    }

    /// The sample of request `id`, waiting for it `wait` at most; the
    /// answers to earlier requests that come first are dropped.
    pub fn answer(&mut self, id: u64, wait: Duration) -> Result<ServerSample, String> {
        let deadline = Instant::now() + wait;
        loop {
            match self.answers.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(answer) if answer.id == id => return answer.sample,
                Ok(_) => continue,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    return Err(format!("no answer to SHOW GLOBAL STATUS within {:.1} s", wait.as_secs_f64()))
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => return Err("the sampling thread has ended".to_owned()),
            }
        }
    }
}

type Ready = Result<(ServerLocation, Option<u32>), SamplerError>;

/// The thread: logs in, says where the server is, then answers requests
/// until the report thread's end is dropped.
fn serve_samples(
    config: SamplerConfig,
    ready: &mpsc::SyncSender<Ready>,
    requests: &mpsc::Receiver<u64>,
    answers: &mpsc::Sender<SampleAnswer>,
) {
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            let _ = ready.send(Err(SamplerError::Thread(e)));
            return;
        }
    };
    let mut conn = match runtime.block_on(Connection::connect(&config.connect)) {
        Ok(conn) => Some(conn),
        Err(e) => {
            let _ = ready.send(Err(SamplerError::Connect(e)));
            return;
        }
    };
    let found = conn.as_ref().map_or(PeerProcess::Elsewhere, Connection::server_process);
    let place = locate(found, config.pid);
    let pid = match &place {
        Ok((_, pid)) => *pid,
        Err(_) => None,
    };
    let failed = place.is_err();
    if ready.send(place).is_err() || failed {
        // The report thread was told, or has gone.
        if let Some(conn) = conn {
            log_out_sampler(&runtime, conn);
        }
        return;
    }
    let sql = status_query();
    let mut own_statements = 0u64;
    while let Ok(id) = requests.recv() {
        let status = runtime.block_on(query_status(&mut conn, &config.connect, &sql, &mut own_statements));
        let sample = status.map(|status| ServerSample {
            at: Instant::now(),
            wall: SystemTime::now(),
            status,
            process: pid.and_then(|pid| ProcessReading::read(pid).ok()),
            own_statements,
        });
        if answers.send(SampleAnswer { id, sample }).is_err() {
            break;
        }
    }
    if let Some(conn) = conn {
        log_out_sampler(&runtime, conn);
    }
}

/// Logs the sampling connection out, briefly: a server that does not
/// answer is left as it is.
fn log_out_sampler(runtime: &tokio::runtime::Runtime, conn: Connection) {
    let _ = runtime.block_on(async { tokio::time::timeout(Duration::from_secs(1), conn.quit()).await });
}

/// Where the server is, from its socket and `--server-pid`; a process
/// that cannot be read is as good as not found.
fn locate(found: PeerProcess, given: Option<u32>) -> Ready {
    if let Some(pid) = given {
        return match ProcessReading::read(pid) {
            Ok(_) => Ok((ServerLocation::GivenPid, Some(pid))),
            Err(source) => Err(SamplerError::NoProcess { pid, source }),
        };
    }
    Ok(match found {
        PeerProcess::ThisHost(Some(pid)) if ProcessReading::read(pid).is_ok() => (ServerLocation::ThisHost, Some(pid)),
        PeerProcess::ThisHost(_) => (ServerLocation::ThisHostUnfound, None),
        PeerProcess::Elsewhere => (ServerLocation::Elsewhere, None),
    })
}

/// One `SHOW GLOBAL STATUS`, on the connection (opened again if the last
/// one was lost); `own_statements` counts it once sent.
async fn query_status(
    conn: &mut Option<Connection>,
    options: &ConnectOptions,
    sql: &str,
    own_statements: &mut u64,
) -> Result<StatusReading, String> {
    if conn.is_none() {
        *conn = Some(Connection::connect(options).await.map_err(|e| e.to_string())?);
    }
    let Some(open) = conn.as_mut() else { return Err("no sampling connection".to_owned()) };
    *own_statements += 1;
    match tokio::time::timeout(QUERY_WAIT, open.query(sql)).await {
        Ok(Ok(response)) => StatusReading::from_response(&response),
        Ok(Err(e @ ClientError::Server { .. })) => Err(e.to_string()),
        Ok(Err(e)) => {
            *conn = None;
            Err(e.to_string())
        }
        Err(_) => {
            *conn = None;
            Err(format!("no answer to SHOW GLOBAL STATUS within {} s", QUERY_WAIT.as_secs()))
        }
    }
}

/// Whether a first sample holds anything this module knows.
pub(super) fn has_counters(status: &StatusReading) -> bool {
    STATUS_COUNTERS.iter().any(|name| status.get(name).is_some())
}
