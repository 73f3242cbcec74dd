//! The server's process, when it runs on this host: what `/proc` says of
//! its CPU time, memory and context switches.
//!
//! CPU time is the process's (`/proc/PID/stat`: every thread's, those
//! that have ended included), in clock ticks (1/100 s on Linux). Context
//! switches are counted per thread only (`/proc/PID/task/TID/status`), so
//! a delta adds up the threads alive at both samples, and whole those
//! started in between; a thread that ended in between takes its last
//! switches with it (a server's connection threads are cached, so few
//! end during a run).

use std::collections::BTreeMap;
use std::io;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::client::peer::status_number;

/// One look at the process.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcessReading {
    /// CPU time in user mode, in microseconds.
    pub user_us: u64,
    /// CPU time in the kernel on its behalf, in microseconds.
    pub system_us: u64,
    /// Resident memory (`VmRSS`), in bytes.
    pub rss_bytes: u64,
    /// Per thread id: voluntary and involuntary context switches so far.
    pub switches: BTreeMap<u32, (u64, u64)>,
}

impl ProcessReading {
    /// Reads process `pid` now.
    pub fn read(pid: u32) -> io::Result<ProcessReading> {
        let dir = Path::new("/proc").join(pid.to_string());
        let stat = std::fs::read_to_string(dir.join("stat"))?;
        let (user_ticks, system_ticks) = cpu_ticks(&stat).ok_or_else(|| malformed(&dir, "stat"))?;
        let tick_us = 1_000_000 / clock_ticks_per_second();
        let status = std::fs::read_to_string(dir.join("status"))?;
        let rss_kb = status_number(&status, "VmRSS:").ok_or_else(|| malformed(&dir, "status"))?;
        let mut switches = BTreeMap::new();
        for task in std::fs::read_dir(dir.join("task"))?.flatten() {
            let Some(tid) = task.file_name().to_str().and_then(|name| name.parse::<u32>().ok()) else { continue };
            // A thread that ended since the listing is simply not counted.
            let Ok(text) = std::fs::read_to_string(task.path().join("status")) else { continue };
            let voluntary = status_number(&text, "voluntary_ctxt_switches:").unwrap_or(0);
            let involuntary = status_number(&text, "nonvoluntary_ctxt_switches:").unwrap_or(0);
            switches.insert(tid, (voluntary, involuntary));
        }
        Ok(ProcessReading {
            user_us: user_ticks.saturating_mul(tick_us),
            system_us: system_ticks.saturating_mul(tick_us),
            rss_bytes: rss_kb.saturating_mul(1024),
            switches,
        })
    }
}

fn malformed(dir: &Path, file: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("{}/{file} is not as Linux writes it", dir.display()))
}

/// utime and stime, the 14th and 15th fields of `/proc/PID/stat`: counted
/// after the command name, which is in parentheses and may hold spaces and
/// parentheses itself.
fn cpu_ticks(stat: &str) -> Option<(u64, u64)> {
    let (_, after_name) = stat.rsplit_once(')')?;
    let mut fields = after_name.split_ascii_whitespace().skip(11);
    Some((fields.next()?.parse().ok()?, fields.next()?.parse().ok()?))
}

/// `sysconf(_SC_CLK_TCK)`: the unit of `/proc`'s CPU times (100 on every
/// Linux port but a few old ones).
fn clock_ticks_per_second() -> u64 {
    // SAFETY: sysconf only reads a system constant.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    u64::try_from(ticks).ok().filter(|&t| t > 0 && t <= 1_000_000).unwrap_or(100)
}

/// What the process did between two readings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessDelta {
    /// CPU time in user mode, µs.
    pub cpu_user_us: u64,
    /// CPU time in the kernel on the server's behalf, µs.
    pub cpu_system_us: u64,
    /// Resident memory at the later reading, in bytes.
    pub rss_bytes: u64,
    /// Its threads gave up the CPU to wait (for I/O, a lock, the client).
    pub voluntary_switches: u64,
    /// Its threads were preempted while they could have run on.
    pub involuntary_switches: u64,
}

impl ProcessDelta {
    pub fn between(before: &ProcessReading, after: &ProcessReading) -> ProcessDelta {
        let (mut voluntary, mut involuntary) = (0u64, 0u64);
        for (tid, &(v, i)) in &after.switches {
            let (v0, i0) = before.switches.get(tid).copied().unwrap_or((0, 0));
            voluntary = voluntary.saturating_add(v.saturating_sub(v0));
            involuntary = involuntary.saturating_add(i.saturating_sub(i0));
        }
        ProcessDelta {
            cpu_user_us: after.user_us.saturating_sub(before.user_us),
            cpu_system_us: after.system_us.saturating_sub(before.system_us),
            rss_bytes: after.rss_bytes,
            voluntary_switches: voluntary,
            involuntary_switches: involuntary,
        }
    }

    /// CPU time, user and system, µs.
    pub fn cpu_us(&self) -> u64 {
        self.cpu_user_us.saturating_add(self.cpu_system_us)
    }

    /// Two spans one after the other.
    pub fn then(&self, later: &ProcessDelta) -> ProcessDelta {
        ProcessDelta {
            cpu_user_us: self.cpu_user_us.saturating_add(later.cpu_user_us),
            cpu_system_us: self.cpu_system_us.saturating_add(later.cpu_system_us),
            rss_bytes: later.rss_bytes,
            voluntary_switches: self.voluntary_switches.saturating_add(later.voluntary_switches),
            involuntary_switches: self.involuntary_switches.saturating_add(later.involuntary_switches),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_times_are_counted_after_the_command_name() {
        let stat = "6225 (mariadbd (x) 2) S 1 6224 6224 0 -1 4194560 32149 0 0 0 1534 377 0 0 20 0 38 0 4470 0";
        assert_eq!(cpu_ticks(stat), Some((1534, 377)));
        assert_eq!(cpu_ticks("6225 (short) S 1"), None);
    }

    /// Threads alive at both readings count their increase; a thread
    /// started in between counts whole; one that ended counts nothing.
    #[test]
    fn switches_add_up_over_the_threads() {
        let reading = |switches: &[(u32, (u64, u64))], user_us| ProcessReading {
            user_us,
            system_us: 5,
            rss_bytes: 4096,
            switches: switches.iter().copied().collect(),
        };
        let before = reading(&[(1, (10, 1)), (2, (20, 2)), (3, (7, 7))], 1_000);
        let after = reading(&[(1, (15, 1)), (2, (21, 4)), (4, (3, 1))], 31_000);
        let delta = ProcessDelta::between(&before, &after);
        assert_eq!(
            delta,
            ProcessDelta {
                cpu_user_us: 30_000,
                cpu_system_us: 0,
                rss_bytes: 4096,
                voluntary_switches: 5 + 1 + 3,
                involuntary_switches: 2 + 1,
            }
        );
    }

    /// This process, read as a server's would be: its CPU time grows with
    /// work done (on a loaded machine a spin gets only a share of a core,
    /// so it spins until the reading moves, 10 s at most), and its threads
    /// are listed.
    #[test]
    fn this_process_reads_back() {
        let me = std::process::id();
        let before = ProcessReading::read(me).unwrap();
        let start = std::time::Instant::now();
        let mut after = before.clone();
        let mut x = 0u64;
        while ProcessDelta::between(&before, &after).cpu_us() < 20_000 && start.elapsed().as_secs() < 10 {
            for _ in 0..1_000_000 {
                x = std::hint::black_box(x.wrapping_add(1));
            }
            after = ProcessReading::read(me).unwrap();
        }
        let delta = ProcessDelta::between(&before, &after);
        assert!(delta.cpu_us() >= 20_000, "{delta:?} after {:?}", start.elapsed());
        assert!(after.rss_bytes > 0 && !after.switches.is_empty(), "{after:?}");
        assert!(ProcessReading::read(u32::MAX).is_err());
    }
}
