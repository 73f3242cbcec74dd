//! The cores the event loops may be pinned to: those this process may run
//! on (`sched_getaffinity`, which `taskset` and cgroups set). Pinning to
//! any other fails, and a loop would then run unpinned without a word, so
//! `--cpus` is checked against them before anything starts. And how a
//! loop thread asks to get its core back quickly ([`ask_short_slice`]),
//! and how long it waited for one ([`own_run_delay`]).

use std::fmt;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::time::Duration;

/// The cores this process may run on, ascending; `None` when the kernel
/// does not say.
pub fn allowed_cpus() -> Option<Vec<usize>> {
    core_affinity::get_core_ids().map(|ids| ids.into_iter().map(|id| id.id).collect())
}

/// Refuses the first of `wanted` this process may not run on. When the
/// allowed set is unknown, every core passes: pinning is then best effort.
pub fn check_loop_cpus(wanted: &[usize]) -> Result<(), CpuUnavailable> {
    let Some(allowed) = allowed_cpus() else { return Ok(()) };
    match wanted.iter().find(|cpu| !allowed.contains(cpu)) {
        Some(&cpu) => Err(CpuUnavailable { cpu, allowed }),
        None => Ok(()),
    }
}

/// A `--cpus` core outside the process's allowed set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "--cpus: this process may not run on cpu {cpu}; it may run on cpus {} (its affinity, set by taskset or \
     cgroups): choose among those",
    CpuRanges(.allowed)
)]
pub struct CpuUnavailable {
    pub cpu: usize,
    pub allowed: Vec<usize>,
}

/// Ascending cores written as `--cpus` takes them: `0-3,6`.
struct CpuRanges<'a>(&'a [usize]);

impl fmt::Display for CpuRanges<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.0.iter().copied().peekable();
        let mut first = true;
        while let Some(start) = rest.next() {
            let mut end = start;
            while rest.next_if(|&next| Some(next) == end.checked_add(1)).is_some() {
                end += 1;
            }
            let separator = if first { "" } else { "," };
            first = false;
            if end == start {
                write!(f, "{separator}{start}")?;
            } else {
                write!(f, "{separator}{start}-{end}")?;
            }
        }
        Ok(())
    }
}

/// The time slice a loop thread asks for (the shortest the kernel grants).
const LOOP_SLICE_NS: u64 = 100_000;

/// `struct sched_attr` (sched_setattr(2)), up to the utilisation clamps.
#[repr(C)]
#[derive(Debug, Default)]
struct SchedAttr {
    size: u32,
    policy: u32,
    flags: u64,
    nice: i32,
    priority: u32,
    runtime: u64,
    deadline: u64,
    period: u64,
    util_min: u32,
    util_max: u32,
}

/// Asks the kernel (EEVDF, Linux 6.12) to give the calling thread short
/// time slices. An answer that wakes a sleeping loop then preempts
/// whatever else runs on its core at once, instead of waiting for that
/// task's slice to end (docs/benchmarking.md#short-time-slices). A
/// loop's share of its core does not change (that is its weight, its
/// nice value, which is kept), only how soon it gets its turn. Only a
/// thread of the normal policy is touched (not one `chrt` made real-time
/// or idle); an older kernel ignores the request, and a refusal changes
/// nothing: both leave the default slice.
pub(crate) fn ask_short_slice() {
    let mut attr = SchedAttr::default();
    let size = std::mem::size_of::<SchedAttr>() as u32;
    // SAFETY: `attr` is valid for `size` bytes of writes; 0 is this thread.
    let rc = unsafe { libc::syscall(libc::SYS_sched_getattr, 0, &mut attr as *mut SchedAttr, size, 0) };
    if rc != 0 || attr.policy != libc::SCHED_OTHER as u32 {
        return;
    }
    attr.size = size;
    attr.runtime = LOOP_SLICE_NS;
    // SAFETY: `attr` is a whole, initialised sched_attr of `size` bytes.
    unsafe { libc::syscall(libc::SYS_sched_setattr, 0, &attr as *const SchedAttr, 0) };
}

/// The calling thread's run delay so far (its time ready to run without a
/// core: the second field of `/proc/thread-self/schedstat`, "run_ns
/// delay_ns slices"), where the kernel keeps schedstat.
pub(crate) fn own_run_delay() -> Option<Duration> {
    let file = File::open("/proc/thread-self/schedstat").ok()?;
    let mut buf = [0u8; 96];
    let n = file.read_at(&mut buf, 0).ok()?;
    let text = std::str::from_utf8(buf.get(..n)?).ok()?;
    text.split_ascii_whitespace().nth(1)?.parse().ok().map(Duration::from_nanos)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_written_as_cpus_takes_them() {
        assert_eq!(CpuRanges(&[0, 1, 2, 3, 6, 8, 9]).to_string(), "0-3,6,8-9");
        assert_eq!(CpuRanges(&[5]).to_string(), "5");
        assert_eq!(CpuRanges(&[]).to_string(), "");
    }

    #[test]
    fn a_core_outside_the_affinity_is_refused_naming_the_allowed_ones() {
        let allowed = allowed_cpus().unwrap();
        assert_eq!(check_loop_cpus(&allowed), Ok(()));
        let outside = allowed.iter().max().unwrap() + 1;
        let err = check_loop_cpus(&[outside]).unwrap_err();
        assert_eq!(err.cpu, outside);
        let message = err.to_string();
        assert!(message.contains(&format!("may not run on cpu {outside}")), "{message}");
        assert!(message.contains(&CpuRanges(&allowed).to_string()), "{message}");
    }

    /// The calling thread's slice as the scheduler shows it, if it does.
    fn own_slice_ns() -> Option<u64> {
        let sched = std::fs::read_to_string("/proc/thread-self/sched").ok()?;
        let line = sched.lines().find(|l| l.starts_with("se.slice"))?;
        line.rsplit(':').next()?.trim().parse().ok()
    }

    #[test]
    fn a_loop_thread_asks_for_a_short_slice_and_keeps_its_nice_value() {
        std::thread::spawn(|| {
            let Some(before) = own_slice_ns() else { return };
            assert!(before > LOOP_SLICE_NS, "the default slice is longer: {before}");
            // SAFETY: plain calls about this thread (its id, its nice value).
            let tid = unsafe { libc::syscall(libc::SYS_gettid) } as libc::id_t;
            assert_eq!(unsafe { libc::setpriority(libc::PRIO_PROCESS, tid, 3) }, 0);
            ask_short_slice();
            assert_eq!(own_slice_ns(), Some(LOOP_SLICE_NS));
            // SAFETY: as above.
            assert_eq!(unsafe { libc::getpriority(libc::PRIO_PROCESS, tid) }, 3, "nice is kept");
        })
        .join()
        .unwrap();
    }
}
