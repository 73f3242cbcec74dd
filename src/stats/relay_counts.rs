//! What a recording proxy (`wirebench record`) saw pass, counted with the
//! figures a run keeps: commands answered by sysbench's kind and errors
//! ([`Counters`]), errors by the server's code ([`ErrorCodes`]), the
//! server's time to answer ([`HdrLatency`]); and the proxy's own: commands
//! by command byte, connections, the capture's bytes, connections the
//! server could not be reached for.
//!
//! The recording thread counts every record it writes; the watch reads a
//! copy each second. Every figure only grows, from the recording's start.

use std::collections::BTreeMap;

use super::{Counters, ErrorCodes, HdrLatency};

/// The proxy's figures since the recording began.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RelayCounts {
    /// Commands answered: `reads` (a result set), `writes` (rows
    /// changed), `others`, by sysbench's rule; `errors`, answered with an
    /// error. The rest stays zero.
    pub answered: Counters,
    pub error_codes: ErrorCodes,
    /// From each command's last byte read to its answer's last byte read,
    /// as the proxy saw them: the server's time, with the upstream
    /// network's.
    pub answer_time: HdrLatency,
    /// Commands recorded, by command byte (COM_QUERY's 3, ...).
    pub commands: BTreeMap<u8, u64>,
    /// Connections whose login the capture holds, and those since closed.
    pub connections_opened: u64,
    pub connections_closed: u64,
    /// Applications answered ERR 2003: the server could not be reached.
    pub upstream_failures: u64,
    /// Bytes written to the capture file.
    pub capture_bytes: u64,
}

impl RelayCounts {
    /// Connections open now.
    pub fn connections_open(&self) -> u64 {
        self.connections_opened.saturating_sub(self.connections_closed)
    }

    /// Commands recorded, of every kind.
    pub fn commands_total(&self) -> u64 {
        self.commands.values().sum()
    }
}
