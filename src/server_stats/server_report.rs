//! The server's figures as text: a block after the final report, and
//! with `--server-stats=interim` a line after each interim line. Their
//! labels are none of sysbench's, so a parser of its report finds its
//! lines where they were and no second match.

use std::fmt;

use super::consistency::ConsistencyCheck;
use super::figures::{ServerLocation, ServerResult};
use super::status::STATUS_COUNTERS;

/// The block after the final report.
pub struct ServerBlock<'a> {
    pub result: &'a ServerResult,
}

/// `    label:` padded so that values start where sysbench's do.
struct FigureLabel<'a>(&'a str);

impl fmt::Display for FigureLabel<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "    {:<37}", format!("{}:", self.0))
    }
}

impl fmt::Display for ServerBlock<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (delta, figures) = (&self.result.delta, &self.result.figures);
        self.fmt_heading(f)?;
        if let Some(process) = delta.process {
            if let Some(us) = figures.cpu_us_per_query {
                let queries = process.cpu_us() as f64 / us;
                let part = |part_us: u64| part_us as f64 / queries;
                let (user, system) = (part(process.cpu_user_us), part(process.cpu_system_us));
                writeln!(f, "{}{us:.2} us (user {user:.2}, system {system:.2})", FigureLabel("CPU per query"))?;
            }
            if let Some(us) = figures.cpu_us_per_transaction {
                writeln!(f, "{}{us:.2} us", FigureLabel("CPU per transaction"))?;
            }
            if let Some(cores) = figures.cpu_cores {
                writeln!(f, "{}{cores:.2} cores", FigureLabel("CPU busy"))?;
            }
            writeln!(
                f,
                "{}{:.1} MiB at the end",
                FigureLabel("resident memory"),
                process.rss_bytes as f64 / 1048576.0
            )?;
            if let (Some(v), Some(i)) = (figures.voluntary_switches_per_query, figures.involuntary_switches_per_query) {
                writeln!(f, "{}{v:.2} voluntary, {i:.2} involuntary", FigureLabel("context switches per query"))?;
            }
        }
        if let Some(hit) = figures.buffer_pool_hit_ratio {
            writeln!(f, "{}{:.3}%", FigureLabel("buffer pool hit ratio"), hit * 100.0)?;
        }
        if let Some(rows) = figures.rows_read_per_query {
            writeln!(f, "{}{rows:.2}", FigureLabel("rows read per query"))?;
        }
        if let Some(reads) = figures.disk_reads_per_query {
            writeln!(f, "{}{reads:.4}", FigureLabel("disk reads per query"))?;
        }
        if let Some(running) = delta.threads_running {
            writeln!(f, "{}{running} at the end", FigureLabel("threads running"))?;
        }
        self.fmt_counters(f)?;
        if let Some(check) = self.result.consistency.filter(|c| !c.consistent) {
            fmt_inconsistent(f, &check)?;
        }
        Ok(())
    }
}

impl ServerBlock<'_> {
    fn fmt_heading(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(source) = &self.result.source else { return f.write_str("\nServer statistics:\n") };
        let process = match (source.location, source.pid) {
            (ServerLocation::ThisHost, Some(pid)) => format!(", its process {pid} on this host"),
            (ServerLocation::GivenPid, Some(pid)) => format!(", its process {pid} (--server-pid)"),
            _ => String::new(),
        };
        writeln!(f, "\nServer statistics (SHOW GLOBAL STATUS of {}{process}):", source.endpoint)?;
        match source.location {
            ServerLocation::Elsewhere => f.write_str(
                "    only its status counters: the server is on another host (--server-pid=PID names this host's \
                 own server behind a port forward)\n",
            )?,
            ServerLocation::ThisHostUnfound => f.write_str(
                "    only its status counters: the server is on this host, but its process could not be found \
                 through the socket (another user's?); --server-pid=PID names it\n",
            )?,
            ServerLocation::ThisHost | ServerLocation::GivenPid => {}
        }
        let (index, count) = source.shard;
        match source.merged_shards {
            _ if count <= 1 => {}
            None => writeln!(
                f,
                "    shard {index}/{count} sampled the server for the whole run: its figures per query and the \
                 check of its Questions are in `wirebench merge`'s report"
            )?,
            Some(_) => writeln!(
                f,
                "    sampled by shard {index}/{count} alone, for the whole run: per query of every shard's queries"
            )?,
        }
        Ok(())
    }

    /// Each status counter's increase, per query, per transaction and per
    /// second.
    fn fmt_counters(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (delta, figures) = (&self.result.delta, &self.result.figures);
        if delta.status.is_empty() {
            return Ok(());
        }
        writeln!(
            f,
            "\n    {:<32}{:>14}{:>12}{:>12}{:>14}",
            "status counter", "total", "per query", "per trx", "per s"
        )?;
        let cell = |value: Option<&f64>| value.map_or_else(|| "-".to_owned(), |v| format!("{v:.3}"));
        let listed = STATUS_COUNTERS.iter().filter_map(|&name| Some((name, delta.status.get(name)?)));
        for (name, total) in listed {
            writeln!(
                f,
                "    {name:<32}{total:>14}{:>12}{:>12}{:>14}",
                cell(figures.per_query.get(name)),
                cell(figures.per_transaction.get(name)),
                figures.per_second.get(name).map_or_else(|| "-".to_owned(), |v| format!("{v:.2}")),
            )?;
        }
        Ok(())
    }
}

/// The check failed: what each side counted, and what it means.
fn fmt_inconsistent(f: &mut fmt::Formatter<'_>, check: &ConsistencyCheck) -> fmt::Result {
    let (more, allowed) =
        if check.unexplained > 0 { ("more", check.allowed_above) } else { ("fewer", check.allowed_below) };
    writeln!(
        f,
        "\n    WARNING: the server counted {} statements {more} than this run and the sampler sent (Questions grew \
         {}; the sampler sent {}, the run {}; up to {allowed} apart is explained by statements in flight and the \
         connections' COM_QUIT)",
        check.unexplained.unsigned_abs(),
        check.server_statements,
        check.sampler_statements,
        check.run_statements,
    )?;
    if check.unexplained > 0 {
        f.write_str("    another client used the server during the run: the server's figures above include its work\n")
    } else {
        f.write_str(
            "    the server's counters went back during the run (FLUSH STATUS, a restart?): its figures are not \
             the run's\n",
        )
    }
}

/// `--server-stats=interim`: the interval's headline figures, after its
/// interim line.
pub struct ServerInterimLine<'a> {
    /// As the interim line's `[ Ns ]`.
    pub time_total_s: f64,
    pub result: &'a ServerResult,
    /// The interim line's ` at TIME`, in a sharded run or one with
    /// `--start-at`.
    pub at: Option<&'a str>,
}

impl fmt::Display for ServerInterimLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (delta, figures) = (&self.result.delta, &self.result.figures);
        write!(f, "[ {:.0}s ] server:", self.time_total_s)?;
        if let Some(us) = figures.cpu_us_per_query {
            write!(f, " cpu/q: {us:.2}us")?;
        }
        if let Some(cores) = figures.cpu_cores {
            write!(f, " cores: {cores:.2}")?;
        }
        if let Some(rows) = figures.rows_read_per_query {
            write!(f, " rows/q: {rows:.2}")?;
        }
        if let Some(hit) = figures.buffer_pool_hit_ratio {
            write!(f, " bp hit: {:.2}%", hit * 100.0)?;
        }
        if let Some(reads) = figures.per_second.get("Innodb_buffer_pool_reads") {
            write!(f, " disk reads/s: {reads:.2}")?;
        }
        if let Some(waits) = figures.per_second.get("Innodb_row_lock_waits") {
            write!(f, " lock waits/s: {waits:.2}")?;
        }
        if let Some(running) = delta.threads_running {
            write!(f, " running: {running}")?;
        }
        match self.at {
            Some(at) => writeln!(f, " at {at}"),
            None => writeln!(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server_stats::consistency::RunStatements;
    use crate::server_stats::figures::{ClientCounts, ServerFigures, ServerSource};
    use crate::server_stats::{ProcessDelta, ServerDelta};

    fn result(location: ServerLocation, questions: u64) -> ServerResult {
        let status = [("Questions", questions), ("Com_select", 1000), ("Innodb_rows_read", 1000)];
        let process = ProcessDelta {
            cpu_user_us: 30_000,
            cpu_system_us: 15_000,
            rss_bytes: 100 << 20,
            voluntary_switches: 990,
            involuntary_switches: 10,
        };
        let delta = ServerDelta {
            seconds: 2.0,
            status: status.iter().map(|(n, v)| ((*n).to_owned(), *v)).collect(),
            threads_running: Some(1),
            process: (location == ServerLocation::ThisHost).then_some(process),
            sampler_statements: 3,
        };
        let figures = ServerFigures::of(&delta, Some(ClientCounts { queries: 1000, transactions: 100 }));
        let run = RunStatements { statements: 1000, events: 100, connections: 2, ..RunStatements::default() };
        let source = ServerSource {
            endpoint: "unix:/tmp/s.sock".to_owned(),
            location,
            pid: Some(42),
            every_s: Some(1),
            shard: (0, 1),
            from_unix_s: 0.0,
            to_unix_s: 2.0,
            busy_edges: 0,
            edge_blur_s: 0.0,
            merged_shards: None,
        };
        let consistency = super::super::ConsistencyCheck::of(&delta, run);
        ServerResult { delta, figures, source: Some(source), consistency }
    }

    #[test]
    fn the_block_leads_with_cpu_per_query() {
        let text = ServerBlock { result: &result(ServerLocation::ThisHost, 1003) }.to_string();
        let expected = "\nServer statistics (SHOW GLOBAL STATUS of unix:/tmp/s.sock, its process 42 on this host):\n\
            \x20   CPU per query:                       45.00 us (user 30.00, system 15.00)\n\
            \x20   CPU per transaction:                 450.00 us\n\
            \x20   CPU busy:                            0.02 cores\n\
            \x20   resident memory:                     100.0 MiB at the end\n\
            \x20   context switches per query:          0.99 voluntary, 0.01 involuntary\n\
            \x20   rows read per query:                 1.00\n\
            \x20   threads running:                     1 at the end\n\
            \n\
            \x20   status counter                           total   per query     per trx         per s\n\
            \x20   Questions                                 1003       1.003      10.030        501.50\n\
            \x20   Com_select                                1000       1.000      10.000        500.00\n\
            \x20   Innodb_rows_read                          1000       1.000      10.000        500.00\n";
        assert_eq!(text, expected);
    }

    #[test]
    fn a_remote_server_says_what_is_missing_and_another_client_is_named() {
        let text = ServerBlock { result: &result(ServerLocation::Elsewhere, 1503) }.to_string();
        assert!(text.contains("only its status counters: the server is on another host"), "{text}");
        assert!(!text.contains("CPU per query"), "{text}");
        assert!(
            text.contains("WARNING: the server counted 500 statements more than this run and the sampler sent"),
            "{text}"
        );
        assert!(text.contains("another client used the server during the run"), "{text}");
    }

    #[test]
    fn the_interim_line_has_the_headline_figures() {
        let r = result(ServerLocation::ThisHost, 1003);
        let line = ServerInterimLine { time_total_s: 10.0, result: &r, at: None }.to_string();
        assert_eq!(line, "[ 10s ] server: cpu/q: 45.00us cores: 0.02 rows/q: 1.00 running: 1\n");
        let at = ServerInterimLine { time_total_s: 10.0, result: &r, at: Some("2026-01-01T00:00:10.000Z") };
        assert!(at.to_string().ends_with(" running: 1 at 2026-01-01T00:00:10.000Z\n"));
    }
}
