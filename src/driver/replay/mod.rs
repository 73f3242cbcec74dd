//! Replayed connections (`wirebench replay`): a capture's connections run
//! on the engine's loops, each opened when its capture opened it and sending
//! its captured commands at their times, its answers compared with the
//! captured ones. What a loop does here is what it does for a built-in
//! test's connections (the same sockets, transports, waits and timeouts);
//! only what fills a connection and what its answers count for differ.
//!
//! - `feed.rs`: the items the capture's reader hands each loop (the
//!   reader is the replay layer's), in batches through a bounded queue.
//! - `replayed_conn.rs`: one connection's state machine, without I/O
//!   (`replayed_conn_tests.rs`: its tests, against answers made in memory).
//! - `replay_tally.rs`: what a loop counts per statement, and the
//!   differences from the capture.

pub(crate) mod feed;
pub(crate) mod replay_tally;
pub(crate) mod replayed_conn;
