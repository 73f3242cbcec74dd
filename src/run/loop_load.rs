//! How busy the client's event loops were over each interval, while the
//! run goes on: each loop thread's time on a core and its time ready to
//! run without one (the first two fields of `/proc/self/task/TID/schedstat`)
//! over the interval's wall time, averaged over the loops. The run's own
//! figure at the end (`LoopUsage::busy_share`) leaves spinning out; this
//! one cannot tell spinning from work, so under `--poll=spin` it reads
//! near 1.

use std::collections::HashMap;
use std::time::Instant;

/// The loop threads' names start with one of these (`driver::spawn_pinned`).
const LOOP_THREADS: &[&str] = &["wirebench-loop", "wirebench-dry"];

/// The loops' schedstat at the last reading.
pub(super) struct LoopBusyMeter {
    /// What the loop threads' names start with.
    names: &'static [&'static str],
    /// Each loop thread's (on-core + waiting) ns, by thread id.
    last: HashMap<u32, u64>,
    at: Instant,
}

impl LoopBusyMeter {
    pub(super) fn start() -> LoopBusyMeter {
        Self::of_threads(LOOP_THREADS)
    }

    fn of_threads(names: &'static [&'static str]) -> LoopBusyMeter {
        LoopBusyMeter { names, last: loop_times(names).unwrap_or_default(), at: Instant::now() }
    }

    /// The loops' busy share since the last call, 0 to 1; `None` where
    /// /proc has no schedstat, or no loop ran.
    pub(super) fn busy_share(&mut self) -> Option<f64> {
        let now = loop_times(self.names)?;
        let wall_ns = self.at.elapsed().as_nanos() as f64;
        self.at = Instant::now();
        // A loop that ended in the interval took its last figures with it:
        // the share is of the loops still running.
        let busy: u64 = now.iter().map(|(tid, ns)| ns.saturating_sub(self.last.get(tid).copied().unwrap_or(0))).sum();
        let loops = now.len();
        self.last = now;
        (loops > 0 && wall_ns > 0.0).then(|| (busy as f64 / wall_ns / loops as f64).clamp(0.0, 1.0))
    }
}

/// Each loop thread's (a thread whose name starts with one of `names`)
/// time on a core plus its time waiting for one, in ns.
fn loop_times(names: &[&str]) -> Option<HashMap<u32, u64>> {
    let mut times = HashMap::new();
    for entry in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let path = entry.path();
        let is_loop = std::fs::read_to_string(path.join("comm"))
            .is_ok_and(|name| names.iter().any(|prefix| name.starts_with(prefix)));
        if !is_loop {
            continue;
        }
        let Some(tid) = entry.file_name().to_str().and_then(|t| t.parse().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(path.join("schedstat")) else { continue };
        let mut fields = stat.split_ascii_whitespace().map(|f| f.parse::<u64>().unwrap_or(0));
        times.insert(tid, fields.next().unwrap_or(0) + fields.next().unwrap_or(0));
    }
    Some(times)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A thread of the names read that spins shows as busy; threads of
    /// other names are not read.
    #[test]
    fn a_spinning_loop_thread_reads_as_busy() {
        if !std::path::Path::new("/proc/self/task").exists() {
            return;
        }
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let theirs = stop.clone();
        let spinner = std::thread::Builder::new()
            .name("load-test-spin".to_owned())
            .spawn(move || while !theirs.load(std::sync::atomic::Ordering::Relaxed) {})
            .unwrap();
        let mut load = LoopBusyMeter::of_threads(&["load-test-spin"]);
        let until = Instant::now() + std::time::Duration::from_millis(300);
        while Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let busy = load.busy_share();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        spinner.join().unwrap();
        // On a core or waiting for one the whole time: near 1 however
        // loaded the machine is.
        assert!(busy.is_some_and(|b| b > 0.8), "{busy:?}");
    }
}
