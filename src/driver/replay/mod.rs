//! Replayed connections (`wirebench replay`): a capture's connections run
//! on the engine's loops, each opened when its capture opened it and sending
//! its captured commands at their times, its answers compared with the
//! captured ones. A replayed connection is a connection of the loop like a
//! built-in test's (the same sockets, transports, waits and timeouts);
//! only what fills it and what its answers count for differ.
//!
//! - `feed.rs`: the items the capture's reader hands each loop (the
//!   reader is the replay layer's), in batches through a bounded queue.
//! - `replayed_conn.rs`: one connection's state machine, without I/O
//!   (`replayed_conn_tests.rs`: its tests, against answers made in memory).
//! - `replay_work.rs`: that state machine as a loop connection's work,
//!   behind the client's login.
//! - `replay_tally.rs`: what a loop counts per statement, and the
//!   differences from the capture.
//!
//! The loop's part (its feed's intake, the connections' timers, their
//! ends) is `event_loop/replay_conns.rs`; the loops are started by
//! `backends::spawn_replay_loops`.

pub(crate) mod feed;
pub(crate) mod replay_tally;
pub(crate) mod replay_work;
pub(crate) mod replayed_conn;

use std::sync::Mutex;

use wirebench_protocol::Capabilities;

use super::Backend;
use crate::client::ConnectOptions;
use feed::FeedReceiver;
use replay_tally::ReplayTally;
use replayed_conn::ReplaySchedule;

/// How long before its time a connection starts its login.
pub const OPEN_LEAD_NS: u64 = 100_000_000;

/// The capabilities of a captured login that change what its session
/// answers: they are asked for again.
pub const SESSION_CAPABILITIES: Capabilities = Capabilities(
    Capabilities::FOUND_ROWS.0
        | Capabilities::IGNORE_SPACE.0
        | Capabilities::INTERACTIVE.0
        | Capabilities::MARIADB_CLIENT_STMT_BULK_OPERATIONS.0,
);

/// What every replay loop shares: how to log in, when captured times are
/// due, and where each loop leaves its tally as it ends.
#[derive(Debug)]
pub struct ReplaySettings {
    /// By the feed's login number: 0 is `--mysql-user`'s.
    pub logins: Vec<ConnectOptions>,
    pub schedule: ReplaySchedule,
    /// The loops' tallies, merged as each ends.
    pub tally: Mutex<ReplayTally>,
    /// The loops' backend: io_uring, or (`--io=epoll`, or a kernel without
    /// it) each connection's socket waited on in `poll(2)`.
    pub backend: Backend,
}

/// One loop of a replay: its core and its feed.
pub struct ReplayLoopPlan {
    pub cpu: Option<usize>,
    pub feed: FeedReceiver,
}
