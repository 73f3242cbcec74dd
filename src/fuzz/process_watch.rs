//! Watching the server beyond its connections: its process (`--server-pid`:
//! gone, or its RSS grown past `--server-rss-growth`) and its error log
//! (`--server-log`: new lines reporting a signal, a failed assertion or a
//! sanitizer). They confirm and describe what the control connection saw,
//! and catch what it cannot (a crash the server restarted itself after).

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use super::fuzz_error::FuzzError;
use super::fuzz_options::{PidSource, WatchOptions};

/// Log lines that report a crash.
pub const LOG_PATTERNS: &[&str] = &["got signal", "Assertion", "AddressSanitizer"];
/// Log lines kept in a report at most.
const MAX_LOG_LINES: usize = 20;

/// One thing the watch saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sighting {
    ProcessGone { pid: u32 },
    RssGrowth { pid: u32, from_kib: u64, to_kib: u64 },
    LogLines(Vec<String>),
}

#[derive(Debug)]
pub struct ProcessWatch {
    pid: Option<PidSource>,
    current: Option<u32>,
    rss_base_kib: u64,
    rss_growth_kib: u64,
    log: Option<(PathBuf, u64)>,
}

impl ProcessWatch {
    /// Checks that the process and the log are there, and takes the RSS
    /// and the log's end as the starting point.
    pub fn start(options: &WatchOptions) -> Result<ProcessWatch, FuzzError> {
        let log = match &options.log {
            Some(path) => {
                let len = std::fs::metadata(path)
                    .map_err(|source| FuzzError::ServerLog { path: path.clone(), source })?
                    .len();
                Some((path.clone(), len))
            }
            None => None,
        };
        let mut watch = ProcessWatch {
            pid: options.pid.clone(),
            current: None,
            rss_base_kib: 0,
            rss_growth_kib: options.rss_growth / 1024,
            log,
        };
        if let Some(source) = &watch.pid {
            let pid = resolve_pid(source)?;
            if !alive(pid) {
                return Err(FuzzError::NotRunning { pid });
            }
            watch.current = Some(pid);
            watch.rss_base_kib = rss_kib(pid).unwrap_or(0);
        }
        Ok(watch)
    }

    /// After a restart: the new process (from the pid file) and its RSS.
    pub fn rebase(&mut self) {
        if let Some(Ok(pid)) = self.pid.as_ref().map(resolve_pid) {
            self.current = Some(pid);
            self.rss_base_kib = rss_kib(pid).unwrap_or(0);
        }
        if let Some((path, offset)) = &mut self.log {
            *offset = std::fs::metadata(&*path).map_or(*offset, |m| m.len());
        }
    }

    /// What changed since the last look.
    pub fn look(&mut self) -> Vec<Sighting> {
        let mut seen = Vec::new();
        if let Some(pid) = self.current {
            if !alive(pid) {
                seen.push(Sighting::ProcessGone { pid });
            } else if let Some(rss) = rss_kib(pid) {
                if rss > self.rss_base_kib.saturating_add(self.rss_growth_kib) {
                    seen.push(Sighting::RssGrowth { pid, from_kib: self.rss_base_kib, to_kib: rss });
                }
            }
        }
        if let Some((path, offset)) = &mut self.log {
            let lines = new_log_lines(path, offset);
            if !lines.is_empty() {
                seen.push(Sighting::LogLines(lines));
            }
        }
        seen
    }
}

fn resolve_pid(source: &PidSource) -> Result<u32, FuzzError> {
    let path = match source {
        PidSource::Pid(pid) => return Ok(*pid),
        PidSource::File(path) => path,
    };
    let text = std::fs::read_to_string(path).map_err(|source| FuzzError::PidFile { path: path.clone(), source })?;
    text.trim().parse().map_err(|_| FuzzError::BadPidFile { path: path.clone(), text: text.trim().to_owned() })
}

/// Running, and not a zombie.
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.rsplit_once(')').is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The log's lines past `offset` that match [`LOG_PATTERNS`]; moves `offset`
/// to the end (to 0 first if the log was truncated or rotated).
fn new_log_lines(path: &Path, offset: &mut u64) -> Vec<String> {
    let Ok(mut file) = std::fs::File::open(path) else { return Vec::new() };
    let len = file.metadata().map_or(0, |m| m.len());
    if len < *offset {
        *offset = 0;
    }
    let mut text = Vec::new();
    if file.seek(SeekFrom::Start(*offset)).is_err() || file.read_to_end(&mut text).is_err() {
        return Vec::new();
    }
    // Only whole lines: a line being written is read at the next look.
    let whole = text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    *offset += whole as u64;
    String::from_utf8_lossy(text.get(..whole).unwrap_or_default())
        .lines()
        .filter(|line| LOG_PATTERNS.iter().any(|p| line.contains(p)))
        .take(MAX_LOG_LINES)
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn log_lines_matching_a_crash_are_reported_once() {
        let dir = std::env::temp_dir().join(format!("wirebench-watch-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("error.log");
        std::fs::write(&log, "old line got signal 11\n").unwrap();
        let mut watch = ProcessWatch::start(&WatchOptions { log: Some(log.clone()), ..Default::default() }).unwrap();
        assert!(watch.look().is_empty(), "lines before the start do not count");
        let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
        write!(f, "[Note] fine\n[ERROR] mariadbd got signal 11 ;\nAssertion `x' fai").unwrap();
        assert_eq!(watch.look(), vec![Sighting::LogLines(vec!["[ERROR] mariadbd got signal 11 ;".into()])]);
        writeln!(f, "led").unwrap();
        assert_eq!(watch.look(), vec![Sighting::LogLines(vec!["Assertion `x' failed".into()])]);
        assert!(watch.look().is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn this_process_is_alive_and_has_an_rss() {
        let pid = std::process::id();
        let mut watch =
            ProcessWatch::start(&WatchOptions { pid: Some(PidSource::Pid(pid)), rss_growth: 1 << 40, log: None })
                .unwrap();
        assert!(watch.look().is_empty());
        assert!(matches!(
            ProcessWatch::start(&WatchOptions { pid: Some(PidSource::Pid(u32::MAX - 1)), ..Default::default() }),
            Err(FuzzError::NotRunning { .. })
        ));
    }
}
