//! What a result records of the client host it ran on: its name and the
//! state of its clock (shards on several hosts are compared by them).

use crate::results::shard_info::ClockState;

/// This host's name, as `hostname` prints it (Linux keeps it in
/// /proc); empty when it cannot be read.
pub(super) fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map(|name| name.trim().to_owned()).unwrap_or_default()
}

/// This host's clock as `adjtimex(2)` reports it (read only: modes 0);
/// `None` where the call fails.
pub(super) fn clock_state() -> Option<ClockState> {
    // SAFETY: a zeroed `timex` is a valid argument; with `modes` 0 the
    // kernel only writes the struct, which lives for the call.
    let mut timex: libc::timex = unsafe { std::mem::zeroed() };
    let state = unsafe { libc::adjtimex(&mut timex) };
    if state < 0 {
        return None;
    }
    Some(ClockState {
        synchronized: state != libc::TIME_ERROR && timex.status & libc::STA_UNSYNC == 0,
        max_error_ms: timex.maxerror as f64 / 1e3,
        estimated_error_ms: timex.esterror as f64 / 1e3,
    })
}
