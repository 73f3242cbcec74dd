//! What a thread count needs from this machine, checked before anything is
//! allocated or connected: an open file (its socket) per connection, and
//! memory for each connection's buffers and state. A run that cannot fit
//! fails at once with what to raise, instead of failing (or swapping)
//! after thousands of connections are open.

use std::io;

use super::output::stderr_line;
use super::RunError;

/// Open files wirebench needs besides its connections: standard streams,
/// a ring or an epoll instance per loop, the set-up runtime's, a
/// reconnect's runtime, TLS files read at start.
const RESERVED_FILES: u64 = 128;

/// Memory one connection of a run takes at least: its socket buffers in
/// the loop, its session, statement templates and statistics. Measured
/// against the null server (oltp_point_select, oltp_read_write at
/// `--pipeline=4`): 19-20 KiB per connection between 100 and 8,000
/// connections. A little less is asked for, so that a run that would fit
/// is never refused.
const BYTES_PER_CONNECTION: u64 = 18 * 1024;

/// Checks that `threads` connections (and `idle` more, `--idle-connections`,
/// whose state is a few dozen bytes beside their socket) fit: raises the
/// soft open-files limit to the hard one when it is too low (as servers
/// do; said on stderr), and refuses what neither the hard limit nor the
/// available memory allows.
pub(super) fn check_room_for(threads: u32, idle: u64) -> Result<(), RunError> {
    let files = u64::from(threads) + idle + RESERVED_FILES;
    if let Some(raised) = make_room_for_files(threads, idle, files)? {
        stderr_line(format_args!(
            "wirebench: raised the open-files limit (ulimit -n) from {} to {} for --threads={threads}{}",
            raised.from,
            raised.to,
            super::run_error::with_idle(idle)
        ));
    }
    memory_fits(threads, available_memory())
}

/// Whether `threads` connections fit in `available` bytes (unknown: yes).
fn memory_fits(threads: u32, available: Option<u64>) -> Result<(), RunError> {
    let needed = u64::from(threads) * BYTES_PER_CONNECTION;
    match available {
        Some(available) if needed > available => Err(RunError::Memory { threads, needed, available }),
        _ => Ok(()),
    }
}

/// The soft open-files limit before and after it was raised.
struct Raised {
    from: u64,
    to: u64,
}

/// Raises the soft open-files limit to the hard one if `files` do not fit
/// under it; an error when they do not fit under the hard one either.
fn make_room_for_files(threads: u32, idle: u64, files: u64) -> Result<Option<Raised>, RunError> {
    let (soft, hard) = open_files_limits().map_err(RunError::FileLimit)?;
    if files <= soft {
        return Ok(None);
    }
    if files > hard {
        return Err(RunError::OpenFiles { threads, idle, needed: files, limit: hard });
    }
    raise_open_files_limit(hard).map_err(RunError::FileLimit)?;
    Ok(Some(Raised { from: soft, to: hard }))
}

/// RLIMIT_NOFILE: the soft and the hard limit.
fn open_files_limits() -> io::Result<(u64, u64)> {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes the struct it is given, which lives on this
    // stack frame for the whole call.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((limit.rlim_cur, limit.rlim_max))
}

/// Sets the soft RLIMIT_NOFILE to `to`, which must not exceed the hard one.
fn raise_open_files_limit(to: u64) -> io::Result<()> {
    let (_, hard) = open_files_limits()?;
    let limit = libc::rlimit { rlim_cur: to, rlim_max: hard };
    // SAFETY: setrlimit only reads the struct it is given.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Bytes this process can still take: the kernel's MemAvailable, or less
/// when its cgroup (v2) has a limit closer by. `None` when unknown.
fn available_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let host = mem_available(&meminfo)?;
    Some(cgroup_room().map_or(host, |room| room.min(host)))
}

/// `MemAvailable:` of /proc/meminfo, in bytes.
fn mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find_map(|l| l.strip_prefix("MemAvailable:"))?;
    let kib: u64 = line.trim().strip_suffix("kB")?.trim().parse().ok()?;
    Some(kib * 1024)
}

/// `memory.max - memory.current` of this process's cgroup v2, when it has
/// a limit.
fn cgroup_room() -> Option<u64> {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = cgroups.lines().find_map(|l| l.strip_prefix("0::"))?;
    let dir = std::path::Path::new("/sys/fs/cgroup").join(path.trim_start_matches('/'));
    let read = |file: &str| std::fs::read_to_string(dir.join(file)).ok();
    let max: u64 = read("memory.max")?.trim().parse().ok()?;
    let current: u64 = read("memory.current")?.trim().parse().ok()?;
    Some(max.saturating_sub(current))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem_available_reads_meminfo() {
        let meminfo = "MemTotal:       24567892 kB\nMemFree:        17000000 kB\nMemAvailable:   21000000 kB\n";
        assert_eq!(mem_available(meminfo), Some(21_000_000 * 1024));
        assert_eq!(mem_available("MemTotal: 1 kB\n"), None);
    }

    #[test]
    fn memory_for_the_connections_is_checked() {
        let gib = 1u64 << 30;
        assert!(memory_fits(1_000, Some(gib)).is_ok());
        assert!(memory_fits(1_000_000, None).is_ok(), "unknown: not refused");
        let error = memory_fits(1_000_000, Some(gib)).unwrap_err().to_string();
        assert_eq!(
            error,
            "--threads=1000000 needs about 17.2 GiB of memory (at least 18 KiB per connection), and this machine has \
             1.0 GiB available: use fewer --threads, or spread them over several client hosts"
        );
        assert!(available_memory().is_some_and(|bytes| bytes > 0), "read from /proc/meminfo");
    }

    /// More connections than the hard limit allows is refused, naming both
    /// numbers and what to raise; a count that fits needs nothing raised.
    #[test]
    fn files_beyond_the_hard_limit_are_refused() {
        let (_, hard) = open_files_limits().unwrap();
        if hard == libc::RLIM_INFINITY {
            return;
        }
        let threads = u32::try_from(hard).unwrap_or(u32::MAX);
        let error = make_room_for_files(threads, 0, hard + 1).err().unwrap();
        let text = error.to_string();
        assert!(text.contains(&format!("--threads={threads} needs {} open files", hard + 1)), "{text}");
        assert!(text.contains(&format!("at most {hard}")) && text.contains("ulimit -Hn"), "{text}");
        assert!(make_room_for_files(1, 0, 16).unwrap().is_none());
        let text = make_room_for_files(1, hard, hard + 1).err().unwrap().to_string();
        assert!(text.contains(&format!("--threads=1 with --idle-connections={hard} needs")), "{text}");
    }
}
