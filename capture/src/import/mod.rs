//! Captures made from what a server or the network already recorded: a
//! pcap or pcapng file of the client/server traffic ([`pcap`]), a server's
//! general query log ([`general_log`]), its slow query log at
//! `long_query_time=0` ([`slow_log`]). Each writes the same format; what
//! its source lacks (answers, exact times) is left out, never made up, and
//! [`ImportReport`] says what was found and what could not be read.

mod emit;
pub mod frame;
pub mod general_log;
mod guess;
mod log_lines;
pub(crate) mod mysql_conn;
pub mod pcap;
pub mod pcap_file;
mod seek;
pub mod slow_log;
pub mod tcp;

use std::collections::BTreeMap;

pub use emit::LateRecords;

use crate::format::{BlockSettings, Totals, WriteError};
use pcap_file::PcapError;

/// What every import takes besides its input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportSettings {
    /// The input's name, kept in the capture's header.
    pub source_name: String,
    /// Now, ns since the Unix epoch (the header's creation time).
    pub created_ns: u64,
    /// The program, e.g. `wirebench 0.1.0`.
    pub writer: String,
    pub blocks: BlockSettings,
}

/// What an import found, and what it could not read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ImportReport {
    /// What was written.
    pub totals: Totals,
    pub connections: u64,
    /// Connections open before the capture began, joined at their first whole command.
    pub already_open: u64,
    pub commands: u64,
    pub answers: u64,
    /// Commands whose answer the capture does not hold (it ended, or lost bytes).
    pub answers_missing: u64,
    /// Commands on prepared statements whose prepare the capture never saw,
    /// and how many such statements.
    pub unknown_statement_commands: u64,
    pub unknown_statement_ids: u64,
    /// Places where bytes were lost or could not be read.
    pub gaps: u64,
    pub logins_refused: u64,
    /// Connections that could not be read, each with why (TLS, the
    /// compressed protocol, not MySQL).
    pub not_importable: Vec<String>,
    /// What was passed over, by kind, and how many.
    pub skipped: BTreeMap<String, u64>,
    /// Records whose time came before one already written.
    pub late: LateRecords,
    /// Packets timed before the packet before them (several capturing
    /// CPUs or interfaces, a clock step), taken at that packet's time.
    pub times_stepped_back: u64,
    /// The input was cut off at this offset (a capture tool killed).
    pub cut_at: Option<u64>,
}

impl ImportReport {
    pub(crate) fn skip(&mut self, what: &str) {
        *self.skipped.entry(what.to_owned()).or_default() += 1;
    }

    /// Adds the counts of another reading of the same capture (a
    /// recording proxy's loops each count their own connections). The
    /// totals are the writer's, not added.
    pub fn merge(&mut self, other: ImportReport) {
        self.connections += other.connections;
        self.already_open += other.already_open;
        self.commands += other.commands;
        self.answers += other.answers;
        self.answers_missing += other.answers_missing;
        self.unknown_statement_commands += other.unknown_statement_commands;
        self.unknown_statement_ids += other.unknown_statement_ids;
        self.gaps += other.gaps;
        self.logins_refused += other.logins_refused;
        self.not_importable.extend(other.not_importable);
        for (what, n) in other.skipped {
            *self.skipped.entry(what).or_default() += n;
        }
        self.late.count += other.late.count;
        self.late.max_ns = self.late.max_ns.max(other.late.max_ns);
        self.times_stepped_back += other.times_stepped_back;
        self.cut_at = self.cut_at.or(other.cut_at);
    }
}

/// Why an import failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    #[error(transparent)]
    Pcap(#[from] PcapError),
    #[error("{0}")]
    NoMysqlTraffic(String),
    #[error(
        "the capture's packets are of link type {0}, which wirebench cannot read: it reads {links}; capture with \
         tcpdump -i lo, -i any or on an Ethernet interface",
        links = frame::LINK_TYPES
    )]
    UnsupportedLink(u32),
    #[error("{0}")]
    NotALog(String),
    #[error(transparent)]
    Write(#[from] WriteError),
    #[error("could not read the input: {0}")]
    Io(#[from] std::io::Error),
}
