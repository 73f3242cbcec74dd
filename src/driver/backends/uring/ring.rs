//! The ring itself: whether this kernel can run the loop ([`probe`]), the
//! ring built with the cheapest completion delivery it offers, and what
//! each entry's `user_data` says (which connection, which operation).

use std::fmt;
use std::io;
use std::time::Duration;

use io_uring::{opcode, types, IoUring};

pub(super) use crate::driver::event_loop::is_transient;
use crate::driver::event_loop::loop_io::Op;

/// Bits of an entry's `user_data` that say which operation it is
/// ([`Op`]); the connection's index is in the rest.
pub(super) const OP_BITS: u32 = 2;

/// IORING_RECVSEND_POLL_FIRST (Linux 5.19): a receive queued right after
/// its query's send would find nothing yet, so it waits for data at once
/// instead of trying a `tcp_recvmsg` that fails first.
pub(super) const RECV_POLL_FIRST: u16 = 1;

pub(super) fn user_data(conn: usize, op: Op) -> u64 {
    ((conn as u64) << OP_BITS) | op as u64
}

pub(super) fn decode_user_data(data: u64) -> (usize, Op) {
    let op = match data & ((1 << OP_BITS) - 1) {
        0 => Op::Recv,
        1 => Op::Send,
        _ => Op::Cancel,
    };
    ((data >> OP_BITS) as usize, op)
}

/// Why `--io=uring` cannot run here.
#[derive(Debug)]
pub enum UringUnavailable {
    /// `/proc/sys/kernel/io_uring_disabled` is set (to this value).
    Disabled { setting: String, source: io::Error },
    /// The kernel refused to create a ring.
    NoInstance(io::Error),
    /// Waits cannot time out (IORING_FEAT_EXT_ARG, Linux 5.11).
    NoExtArg,
    /// The kernel refused to say which operations it supports.
    NoProbe(io::Error),
    /// An operation the loop needs is missing (`IORING_OP_` and this name).
    MissingOp(&'static str),
}

impl fmt::Display for UringUnavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("--io=uring: ")?;
        match self {
            UringUnavailable::Disabled { setting, source } => write!(
                f,
                "io_uring is disabled on this machine (/proc/sys/kernel/io_uring_disabled = {setting}): {source}"
            )?,
            UringUnavailable::NoInstance(e) => write!(f, "cannot create an io_uring instance: {e}")?,
            UringUnavailable::NoExtArg => {
                f.write_str("this kernel's io_uring cannot wait with a timeout (IORING_FEAT_EXT_ARG, Linux 5.11)")?
            }
            UringUnavailable::NoProbe(e) => write!(f, "cannot probe io_uring operations: {e}")?,
            UringUnavailable::MissingOp(name) => write!(f, "this kernel's io_uring has no IORING_OP_{name}")?,
        }
        f.write_str("; use --io=epoll")
    }
}

impl std::error::Error for UringUnavailable {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            UringUnavailable::Disabled { source: e, .. }
            | UringUnavailable::NoInstance(e)
            | UringUnavailable::NoProbe(e) => Some(e),
            UringUnavailable::NoExtArg | UringUnavailable::MissingOp(_) => None,
        }
    }
}

/// For a test that needs io_uring: whether this kernel has it; without it
/// the test is skipped, or fails under WIREBENCH_REQUIRE_URING=1 (as
/// scripts/test.sh sets it), so a suite meant to test the ring cannot pass
/// without running it.
#[cfg(test)]
pub(crate) fn ring_here() -> bool {
    let Err(why) = probe() else { return true };
    assert!(std::env::var("WIREBENCH_REQUIRE_URING").as_deref() != Ok("1"), "WIREBENCH_REQUIRE_URING=1 but {why}");
    eprintln!("skipped: {why}");
    false
}

/// Whether this kernel lets the process use io_uring with what the loop
/// needs (send/recv operations, timed waits); why not when it does not.
pub fn probe() -> Result<(), UringUnavailable> {
    let ring = IoUring::new(8).map_err(|e| match std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled") {
        Ok(v) if v.trim() != "0" => UringUnavailable::Disabled { setting: v.trim().to_owned(), source: e },
        _ => UringUnavailable::NoInstance(e),
    })?;
    if !ring.params().is_feature_ext_arg() {
        return Err(UringUnavailable::NoExtArg);
    }
    let mut ops = io_uring::Probe::new();
    ring.submitter().register_probe(&mut ops).map_err(UringUnavailable::NoProbe)?;
    for (code, name) in
        [(opcode::Send::CODE, "SEND"), (opcode::Recv::CODE, "RECV"), (opcode::AsyncCancel::CODE, "ASYNC_CANCEL")]
    {
        if !ops.is_supported(code) {
            return Err(UringUnavailable::MissingOp(name));
        }
    }
    Ok(())
}

/// How a ring delivers completions, which also dates the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Delivery {
    /// Task work deferred to our own waits: Linux 6.1 or later.
    Deferred,
    /// Cooperative task work: 5.19 or later.
    Cooperative,
    Plain,
}

/// Creates the ring with the cheapest completion delivery the kernel
/// offers: task work deferred to our own waits (Linux 6.1), else
/// cooperative task work (5.19), else the default.
pub(super) fn build_ring(entries: u32) -> io::Result<(IoUring, Delivery)> {
    let cq = entries.saturating_mul(2);
    let deferred = IoUring::builder()
        .setup_cqsize(cq)
        .setup_single_issuer()
        .setup_defer_taskrun()
        .setup_taskrun_flag()
        .build(entries);
    if let Ok(ring) = deferred {
        return Ok((ring, Delivery::Deferred));
    }
    if let Ok(ring) = IoUring::builder().setup_cqsize(cq).setup_coop_taskrun().setup_taskrun_flag().build(entries) {
        return Ok((ring, Delivery::Cooperative));
    }
    Ok((IoUring::builder().setup_cqsize(cq).build(entries)?, Delivery::Plain))
}

pub(super) fn cancel_entry(i: usize, op: Op) -> io_uring::squeue::Entry {
    opcode::AsyncCancel::new(user_data(i, op)).build().user_data(user_data(i, Op::Cancel))
}

pub(super) fn timespec(d: Duration) -> types::Timespec {
    types::Timespec::new().sec(d.as_secs()).nsec(d.subsec_nanos())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_data_round_trips() {
        for conn in [0, 1, 7, 1 << 20, usize::MAX >> OP_BITS] {
            for op in [Op::Recv, Op::Send, Op::Cancel] {
                assert_eq!(decode_user_data(user_data(conn, op)), (conn, op));
            }
        }
    }
}
