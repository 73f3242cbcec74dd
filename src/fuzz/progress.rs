//! What a run prints: the banner before it starts, a line per
//! `--report-interval`, and the summary at the end.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use super::fuzz_options::FuzzOptions;

/// Counters at one moment of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Progress {
    pub elapsed: Duration,
    /// Sessions run to their end ("execs").
    pub sessions: u64,
    pub packets: u64,
    /// Packets the safety check kept back.
    pub withheld: u64,
    pub states: usize,
    pub corpus: usize,
    pub checks: u64,
    pub failures: usize,
}

/// What is about to happen, before anything is sent.
pub fn banner(options: &FuzzOptions, seed: u64) -> String {
    let t = &options.target;
    let mut out = String::new();
    let _ = writeln!(out, "wirebench fuzz: sending malformed MySQL protocol traffic to {}", t.endpoint);
    let _ = writeln!(
        out,
        "  as user {:?} into database {:?}, the only database it names: its tables get created, changed and dropped",
        t.user, t.database
    );
    let time = options.time.map_or_else(
        || "no time limit".to_owned(),
        |d| format!("{} s (a failure found may take {} s more to confirm)", d.as_secs(), options.overtime.as_secs()),
    );
    let _ = writeln!(
        out,
        "  {} connections, {time}, seed {seed} (--rand-seed={seed} runs the same sessions), compressed protocol {}",
        options.threads,
        if t.compression { "on" } else { "off" }
    );
    let on_failure = match (&options.restart_cmd, options.keep_going) {
        (Some(cmd), true) => format!("keep going, restarting the server with: {cmd}"),
        (None, true) => "keep going, waiting for the server to come back by itself".to_owned(),
        (Some(cmd), false) => {
            format!("stop at the first (restarting the server to confirm and minimise it with: {cmd})")
        }
        (None, false) => "stop at the first".to_owned(),
    };
    let _ = writeln!(out, "  on a failure: {on_failure}; reproducers go to {}", options.fuzz_dir.display());
    out.push_str("  This crashes servers and destroys data: point it only at a throwaway server.\n");
    out
}

fn per_second(count: u64, over: Duration) -> f64 {
    let secs = over.as_secs_f64();
    if secs > 0.0 {
        count as f64 / secs
    } else {
        0.0
    }
}

/// One interim line, with rates since the previous one.
pub fn interim_line(now: &Progress, previous: &Progress) -> String {
    let span = now.elapsed.saturating_sub(previous.elapsed);
    format!(
        "[ {}s ] execs/s: {:.2} sessions: {} packets/s: {:.2} states: {} corpus: {} checks: {} failures: {}",
        now.elapsed.as_secs(),
        per_second(now.sessions - previous.sessions.min(now.sessions), span),
        now.sessions,
        per_second(now.packets - previous.packets.min(now.packets), span),
        now.states,
        now.corpus,
        now.checks,
        now.failures
    )
}

/// The summary at the end: totals, rates, the states over time, the reproducers.
pub fn summary(end: &Progress, timeline: &[(u64, usize)], reproducers: &[PathBuf], unsaved: &[String]) -> String {
    let mut out = String::from("\nwirebench fuzz summary:\n");
    let secs = end.elapsed.as_secs_f64();
    let _ = writeln!(out, "    time:                {secs:.1} s");
    let _ = writeln!(
        out,
        "    sessions (execs):    {} ({:.2} per second)",
        end.sessions,
        per_second(end.sessions, end.elapsed)
    );
    let _ = writeln!(
        out,
        "    packets sent:        {} ({:.2} per second)",
        end.packets,
        per_second(end.packets, end.elapsed)
    );
    let _ = writeln!(out, "    withheld (safety):   {} packets", end.withheld);
    let _ = writeln!(out, "    distinct states:     {}", end.states);
    let _ = writeln!(out, "    corpus:              {} sessions", end.corpus);
    let _ = writeln!(out, "    control checks:      {}", end.checks);
    let _ = writeln!(out, "    failures:            {}", end.failures);
    if !timeline.is_empty() {
        let points: Vec<String> = timeline.iter().map(|(t, n)| format!("{t}s: {n}")).collect();
        let _ = writeln!(out, "    states over time:    {}", points.join(", "));
    }
    for path in reproducers {
        let _ = writeln!(out, "    reproducer:          {}", path.display());
    }
    for why in unsaved {
        let _ = writeln!(out, "    not saved:           {why}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interim_rates_are_over_the_interval() {
        let before = Progress { elapsed: Duration::from_secs(10), sessions: 100, packets: 1000, ..Default::default() };
        let now = Progress {
            elapsed: Duration::from_secs(20),
            sessions: 300,
            packets: 3000,
            withheld: 0,
            states: 42,
            corpus: 17,
            checks: 9,
            failures: 0,
        };
        assert_eq!(
            interim_line(&now, &before),
            "[ 20s ] execs/s: 20.00 sessions: 300 packets/s: 200.00 states: 42 corpus: 17 checks: 9 failures: 0"
        );
    }

    #[test]
    fn the_summary_names_every_reproducer() {
        let end = Progress { elapsed: Duration::from_secs(2), sessions: 10, failures: 1, ..Default::default() };
        let text = summary(&end, &[(1, 5)], &[PathBuf::from("/tmp/x.repro")], &[]);
        assert!(text.contains("sessions (execs):    10 (5.00 per second)"));
        assert!(text.contains("states over time:    1s: 5"));
        assert!(text.contains("reproducer:          /tmp/x.repro"));
    }
}
