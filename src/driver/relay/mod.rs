//! The recording proxy (`wirebench record`) as a driver facility:
//! applications connect to it as to their server; for each it opens a
//! connection upstream, forwards every byte both ways unchanged, and hands
//! a copy of each direction to the capture crate's
//! [`ConnectionTap`](wirebench_capture::tap::ConnectionTap), which turns it
//! into capture records. No thread per connection: the driver's pinned
//! loops (`--cpus`), each a tokio current-thread runtime, run one task per
//! proxied pair; loop 0 also accepts, and hands connections round-robin.
//!
//! What the proxy must understand of the protocol, it reads itself: the
//! client's first packet (an SSLRequest means TLS: the proxy ends the
//! client's TLS with `--ssl-cert`/`--ssl-key` and opens TLS upstream, or
//! refuses the client when it has no certificate). Everything else, the
//! authentication exchange (any plugin), compression, large packets, LOCAL
//! INFILE, COM_CHANGE_USER, cursors, multi-results, passes as bytes; the
//! tap reads its copy, inflated once the login turned compression on.
//!
//! Records go from each loop to the recording thread in batches, a few
//! dozen times a second, each with the loop's promise of how far its
//! clock has gone; the recording thread merges the loops in time order
//! and writes one capture.
//!
//! Files:
//! - `listen.rs`: where the proxy listens, the listeners and the acceptor;
//! - `relay_loop.rs`: one loop, its pairs and its batches of records;
//!   `loop_shared.rs`: what its pairs share (the clock, the batch);
//! - `pair.rs`: one application's connection and its upstream one;
//! - `relay_socket.rs`: a socket both directions of a pair use, TLS
//!   handshakes on it;
//! - `tap_copy.rs`: the copy of one direction the tap reads;
//! - `recording.rs`: the thread that merges the loops' records into the file;
//!   `traffic_count.rs`: its count of them, for the watch.

mod listen;
mod loop_shared;
mod pair;
mod recording;
mod relay_loop;
mod relay_socket;
mod tap_copy;
mod traffic_count;

use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

pub use listen::{ListenAddress, ListenError, RelayListeners};
pub use recording::{
    start_recording, RecordingError, RecordingProgress, RecordingSettings, RecordingSummary, RecordingThread, Shipment,
};

use super::{DriverError, LoopContext};
use crate::client::Endpoint;
use crate::transport::tls::{ClientTls, ServerTls, TlsOptions};

/// `wirebench record`'s command line, read: what the run layer builds the
/// relay and the recording from (the files are read then, not here).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordOptions {
    /// `--listen`, once or more.
    pub listen: Vec<ListenAddress>,
    /// `--upstream` or `--upstream-socket`.
    pub upstream: Endpoint,
    pub out: PathBuf,
    pub cpus: Option<Vec<usize>>,
    /// `--time`: `None` records until a signal.
    pub time: Option<Duration>,
    /// `--max-size`, bytes.
    pub max_bytes: Option<u64>,
    /// `--ssl-cert` and `--ssl-key`.
    pub serve_tls: Option<(PathBuf, PathBuf)>,
    /// `--mysql-ssl*`: the upstream's TLS for a client that uses TLS.
    pub upstream_tls: TlsOptions,
    /// `--mysql-connect-timeout`.
    pub connect_timeout: Duration,
}

/// What the proxy does, whoever runs it.
#[derive(Clone)]
pub struct RelayOptions {
    /// Where the server is.
    pub upstream: Endpoint,
    /// A loop per core listed, pinned; `None`: one per core this process may use.
    pub cpus: Option<Vec<usize>>,
    /// `--ssl-cert`/`--ssl-key`: the TLS a client that asks for it is served.
    pub serve_tls: Option<ServerTls>,
    /// The TLS upstream for a client that uses TLS (`--mysql-ssl*`, or
    /// TLS without a certificate check).
    pub upstream_tls: Option<ClientTls>,
    /// How long opening a connection upstream may take.
    pub connect_timeout: Duration,
    /// Where the proxy's remarks go (a client refused, the upstream down): one line each.
    pub notices: RelayNotices,
}

/// Takes the proxy's remarks, one line each, without a trailing newline.
pub type RelayNotices = Arc<dyn Fn(&str) + Send + Sync>;

/// Starts one pinned loop per `cpus` entry (at least one); loop 0 accepts
/// from `listeners`; `inlet` takes every loop's records (loop i's are
/// source i). Each loop ends once `context.control` is stopped, its pairs
/// closed and their records sent.
pub fn start_relay(
    options: RelayOptions,
    cpus: Vec<Option<usize>>,
    listeners: RelayListeners,
    inlet: std::sync::mpsc::SyncSender<Shipment>,
    context: &LoopContext,
) -> io::Result<Vec<JoinHandle<Result<(), DriverError>>>> {
    let plans = relay_loop::plan_relay_loops(options, cpus, listeners, inlet, context.clock);
    super::spawn_pinned("wirebench-relay", plans.into_iter(), context, relay_loop::run_relay_loop)
}
