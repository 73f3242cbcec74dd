//! What wirebench adds to sysbench's final report: blocks of their own,
//! after sysbench's latency block and a blank line, never inside it, and
//! with labels sysbench never prints (`p99.9:`, not `99th percentile:`), so
//! that a parser of sysbench's report finds its lines where they were and
//! no second match. Each block prints only when asked for (or, for the
//! `--rate` lines, when the run needs them said); the run decides.
//!
//! Every figure here comes from the HdrHistograms: exact to 3 significant
//! digits, never above the max, with no cap. sysbench's own
//! `95th percentile:` line keeps sysbench's bucket arithmetic, so it can
//! differ from `p95:` here by up to a bucket (about 1.8 %).

use std::fmt;
use std::time::Duration;

use wirebench_protocol::tolerance::Deviations;

use super::kinds::KindTable;
use super::latency::HdrLatency;

fn ms(ns: f64) -> f64 {
    ns / 1e6
}

/// `p50`, `p99.9`: a percentile's label, in its shortest form.
struct Label(f64);

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = format!("p{}", self.0);
        f.pad(&text)
    }
}

/// The `--percentile` list, from the HdrHistogram of the events'
/// latencies; under `--rate` with the service time beside it.
pub struct PercentileBlock<'a> {
    pub percentiles: &'a [f64],
    /// Each event from its start (under `--rate`, its intended start).
    pub latency: &'a HdrLatency,
    /// `Some` under `--rate`: each event from its first send.
    pub service: Option<&'a HdrLatency>,
}

impl fmt::Display for PercentileBlock<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(service) = self.service else {
            f.write_str("\nLatency percentiles (ms):\n")?;
            for &p in self.percentiles {
                writeln!(f, "{:>12}: {:>39.2}", Label(p), self.latency.percentile_ms(p))?;
            }
            return Ok(());
        };
        f.write_str("\nLatency under --rate (ms):\n")?;
        writeln!(f, "{:14}{:>25} {:>16}", "", "from arrival", "service time")?;
        let (l, s) = (self.latency, service);
        let rows = [
            ("min", ms(l.min_ns() as f64), ms(s.min_ns() as f64)),
            ("avg", ms(l.mean_ns()), ms(s.mean_ns())),
            ("max", ms(l.max_ns() as f64), ms(s.max_ns() as f64)),
        ];
        for (label, a, b) in rows {
            writeln!(f, "{label:>12}: {a:>25.2} {b:>16.2}")?;
        }
        for &p in self.percentiles {
            writeln!(f, "{:>12}: {:>25.2} {:>16.2}", Label(p), l.percentile_ms(p), s.percentile_ms(p))?;
        }
        Ok(())
    }
}

/// The event loops' CPU time, and how much of it went to spinning for
/// answers: printed when a loop spun (`--poll`), since that time is spent
/// waiting, not working, and a per-query CPU figure would hide it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClientCpuBlock {
    pub cpu: Duration,
    pub polling: Duration,
}

impl fmt::Display for ClientCpuBlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (cpu, polling) = (self.cpu.as_secs_f64(), self.polling.as_secs_f64());
        let share = if cpu > 0.0 { (polling / cpu * 100.0).min(100.0) } else { 0.0 };
        f.write_str("\nClient CPU (event loops):\n")?;
        writeln!(f, "{:>12}: {:>38.4}s", "total", cpu)?;
        writeln!(f, "{:>12}: {:>38.4}s ({share:.1}% of it spinning with nothing to do)", "polling", polling)
    }
}

/// The server's deviations from the protocol that the connections
/// tolerated, as libmariadb does: packets renumbered, logins without a
/// capability, result sets with bytes after their column count. Printed only when there were some.
pub struct ToleratedBlock<'a> {
    pub deviations: &'a Deviations,
}

impl fmt::Display for ToleratedBlock<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\nServer deviations tolerated (as libmariadb tolerates them):\n")?;
        for (kind, n) in self.deviations.iter() {
            writeln!(f, "{:>24}: {n:>26} {}", kind.key(), kind.unit())?;
        }
        Ok(())
    }
}

/// What `--rate` asked for and what ran.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateSummary {
    /// `--rate`, events per second.
    pub target: u32,
    /// "poisson" or "fixed".
    pub arrival: &'static str,
    /// Events completed per second of the measured time.
    pub achieved: f64,
    /// Arrivals due by the end and never started.
    pub waiting: u64,
    /// How long the oldest of them had waited at the end, in seconds.
    pub oldest_wait_s: f64,
    /// Whether the target counts as not met (the run decides how).
    pub missed: bool,
    /// `--rate-stages` (`target` is then the mean target over the measured
    /// time): arrivals dropped, not started within a second of their time.
    pub dropped: Option<u64>,
    /// Events started more than a second after their arrival.
    pub late: u64,
    /// Whether the client kept up: known once the loops have ended.
    pub client: Option<ClientLoad>,
}

/// How hard the client's own event loops worked for a run: when they were
/// busy nearly all the time, an event that arrived waited for the client,
/// and the latencies and rate are the client's limit, not the server's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClientLoad {
    /// The loops' CPU time less spinning, plus their time ready to run
    /// without a core, over their lives (0 to 1).
    pub busy_share: f64,
    /// The loops' time ready to run while another task had their core.
    pub run_delay_s: f64,
    /// That time's share of their time (0 to 1): a loop that waits for a
    /// core much of the time is starved, whatever it does when it runs.
    pub core_wait_share: f64,
    /// Under `--rate`: the client's own delay of the events
    /// ([`Latencies::client_delay`](super::Latencies)).
    pub delay: Option<ClientDelay>,
}

/// The client's own delay of a run's events (ms): from when each could
/// have started to when its first command went to the kernel.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClientDelay {
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

impl ClientDelay {
    /// The percentiles of `delay`; `None` when nothing was recorded.
    pub fn of(delay: Option<&super::HdrLatency>) -> Option<Self> {
        let delay = delay.filter(|d| d.count() > 0)?;
        Some(ClientDelay {
            p50_ms: delay.percentile_ms(50.0),
            p99_ms: delay.percentile_ms(99.0),
            max_ms: delay.max_ns() as f64 / 1e6,
        })
    }
}

impl fmt::Display for ClientDelay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "client delay p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms", self.p50_ms, self.p99_ms, self.max_ms)
    }
}

impl fmt::Display for RateSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(dropped) = self.dropped else { return self.fmt_constant(f) };
        writeln!(
            f,
            "\nRate: --rate-stages, mean target {}/s ({} arrivals), achieved {:.2}/s",
            self.target, self.arrival, self.achieved
        )?;
        writeln!(f, "Dropped: {dropped} arrivals could not start within 1 s of their time and were not run")?;
        self.fmt_client(f)
    }
}

impl RateSummary {
    fn fmt_constant(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "\nRate: target {}/s ({} arrivals), achieved {:.2}/s", self.target, self.arrival, self.achieved)?;
        if self.missed {
            writeln!(
                f,
                "Target rate not met: {} arrivals were still waiting at the end, the oldest for {:.3}s; latency \
                 counts from each arrival, so it includes that wait",
                self.waiting, self.oldest_wait_s
            )?;
        }
        self.fmt_client(f)
    }

    /// `Client load:`, once the loops have ended.
    fn fmt_client(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(client) = self.client else { return Ok(()) };
        write!(
            f,
            "Client load: event loops busy {:.1}% of their time ({:.3}s of it waiting for a core), ",
            client.busy_share * 100.0,
            client.run_delay_s,
        )?;
        if let Some(delay) = client.delay {
            write!(f, "{delay}, ")?;
        }
        writeln!(f, "{} late starts", self.late)
    }
}

/// `--per-statement`: each statement kind that ran, with its count, its
/// errors and its latency (from the statement's send to its answer).
pub struct PerStatementBlock<'a> {
    pub kinds: &'a KindTable,
    pub percentiles: &'a [f64],
}

impl fmt::Display for PerStatementBlock<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\nStatements (latency in ms, from each statement's send to its answer):\n")?;
        write!(f, "    {:<18}{:>12}{:>9}{:>10}", "kind", "count", "errors", "avg")?;
        for &p in self.percentiles {
            write!(f, "{:>10}", Label(p))?;
        }
        writeln!(f, "{:>10}", "max")?;
        for (name, kind) in self.kinds.iter().filter(|(_, k)| k.count + k.errors > 0) {
            let l = &kind.latency;
            write!(f, "    {name:<18}{:>12}{:>9}{:>10.3}", kind.count, kind.errors, ms(l.mean_ns()))?;
            for &p in self.percentiles {
                write!(f, "{:>10.3}", l.percentile_ms(p))?;
            }
            writeln!(f, "{:>10.3}", ms(l.max_ns() as f64))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn latencies(values_us: &[u64]) -> HdrLatency {
        let mut h = HdrLatency::new();
        for &us in values_us {
            h.record_ns(us * 1_000);
        }
        h
    }

    #[test]
    fn percentile_lines() {
        let l = latencies(&[100, 200, 300, 400, 1_000]);
        let block = PercentileBlock { percentiles: &[50.0, 99.9], latency: &l, service: None }.to_string();
        assert_eq!(
            block,
            "\nLatency percentiles (ms):\n\
             \x20        p50:                                    0.30\n\
             \x20      p99.9:                                    1.00\n"
        );
        // Right-aligned where sysbench's "         min:" values end.
        assert!(block.lines().skip(2).all(|line| line.len() == "         min: ".len() + 39));
    }

    #[test]
    fn rate_columns() {
        let (l, s) = (latencies(&[10_000, 30_000]), latencies(&[100, 300]));
        let block = PercentileBlock { percentiles: &[95.0], latency: &l, service: Some(&s) }.to_string();
        let lines: Vec<&str> = block.lines().collect();
        assert_eq!(lines[1], "Latency under --rate (ms):");
        assert_eq!(lines[2], format!("{:14}{:>25} {:>16}", "", "from arrival", "service time"));
        assert_eq!(lines[3], format!("{:>12}: {:>25} {:>16}", "min", "10.00", "0.10"));
        assert_eq!(lines[5], format!("{:>12}: {:>25} {:>16}", "max", "30.00", "0.30"));
        assert_eq!(lines[6], format!("{:>12}: {:>25} {:>16}", "p95", "30.00", "0.30"));
    }

    #[test]
    fn rate_summary() {
        let mut r = RateSummary {
            target: 1000,
            arrival: "poisson",
            achieved: 812.345,
            waiting: 0,
            oldest_wait_s: 0.0,
            missed: false,
            dropped: None,
            late: 3,
            client: None,
        };
        assert_eq!(r.to_string(), "\nRate: target 1000/s (poisson arrivals), achieved 812.35/s\n");
        r.client = Some(ClientLoad { busy_share: 0.4321, run_delay_s: 0.0125, core_wait_share: 0.01, delay: None });
        assert_eq!(
            r.to_string(),
            "\nRate: target 1000/s (poisson arrivals), achieved 812.35/s\n\
             Client load: event loops busy 43.2% of their time (0.013s of it waiting for a core), 3 late starts\n"
        );
        let delay = ClientDelay { p50_ms: 0.0123, p99_ms: 0.0851, max_ms: 1.2044 };
        r.client = r.client.map(|c| ClientLoad { delay: Some(delay), ..c });
        assert!(r.to_string().ends_with(
            "(0.013s of it waiting for a core), client delay p50 0.012 ms, p99 0.085 ms, max 1.204 ms, 3 late starts\n"
        ));
        r.client = None;
        r.missed = true;
        r.waiting = 4123;
        r.oldest_wait_s = 3.2144;
        assert!(r
            .to_string()
            .contains("Target rate not met: 4123 arrivals were still waiting at the end, the oldest for 3.214s"));
        r.dropped = Some(17);
        assert_eq!(
            r.to_string(),
            "\nRate: --rate-stages, mean target 1000/s (poisson arrivals), achieved 812.35/s\n\
             Dropped: 17 arrivals could not start within 1 s of their time and were not run\n"
        );
    }

    #[test]
    fn statements_that_ran() {
        let mut kinds = KindTable::new(&["point_select", "begin", "other"]);
        kinds.record(0, 100_000);
        kinds.record(0, 300_000);
        kinds.record_error(1);
        let block = PerStatementBlock { kinds: &kinds, percentiles: &[95.0] }.to_string();
        let lines: Vec<&str> = block.lines().collect();
        assert_eq!(lines.len(), 5, "{block}");
        assert_eq!(
            lines[2],
            format!("    {:<18}{:>12}{:>9}{:>10}{:>10}{:>10}", "kind", "count", "errors", "avg", "p95", "max")
        );
        assert_eq!(
            lines[3],
            format!("    {:<18}{:>12}{:>9}{:>10}{:>10}{:>10}", "point_select", 2, 0, "0.200", "0.300", "0.300")
        );
        assert!(lines[4].starts_with("    begin "), "{block}");
    }
}
