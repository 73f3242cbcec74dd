//! Did anyone else use the server? Its `Questions` counts every statement
//! any client sent; less the sampler's own, it should be what the run
//! counted, within what the span's edges blur.

use serde::{Deserialize, Serialize};

use super::delta::ServerDelta;

/// What the run sent over the span, and how sharp the span's edges are.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunStatements {
    /// Queries and ignored errors: each reached the server.
    pub statements: u64,
    pub events: u64,
    pub connections: u64,
    pub reconnects: u64,
    /// The span's edges taken while the connections were sending (the end
    /// of `--warmup-time`, a checkpoint, a forced shutdown): the events in
    /// flight there are on one side for the server, on the other for the
    /// run. The start (before the first event) and the end of a run whose
    /// connections have all finished are sharp.
    pub busy_edges: u32,
    /// Statements the run may have sent within the busy edges' blur (see
    /// `server_watch.rs`), on either side; in `wirebench merge`, also those of the
    /// other shards outside the sampling shard's span.
    pub edge_statements: u64,
    /// The run's idle connections' (`--idle-connections`) statements that
    /// `Questions` counts: their COM_QUIT at the end, which the last
    /// sample may or may not see yet, as the active connections'.
    pub idle_quits: u64,
}

/// The check, with its figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsistencyCheck {
    /// `Questions`' increase.
    pub server_statements: u64,
    /// The sampler's own statements, counted there too.
    pub sampler_statements: u64,
    /// Queries and ignored errors the run counted.
    pub run_statements: u64,
    /// server - sampler - run.
    pub unexplained: i64,
    /// How many fewer the server may count: events in flight at a busy
    /// edge, counted by the run and not (yet) by the server.
    pub allowed_below: u64,
    /// How many more: those events the other way round, the connections'
    /// COM_QUIT at the end (`Questions` counts it), the idle connections'
    /// too, the set-up statements of connections opened again.
    pub allowed_above: u64,
    pub consistent: bool,
}

impl ConsistencyCheck {
    /// None when the server has no `Questions`.
    pub fn of(delta: &ServerDelta, run: RunStatements) -> Option<ConsistencyCheck> {
        let server = delta.counter("Questions")?;
        let others = i128::from(server) - i128::from(delta.sampler_statements) - i128::from(run.statements);
        let unexplained = i64::try_from(others).unwrap_or(if others < 0 { i64::MIN } else { i64::MAX });
        let per_event = if run.events > 0 { run.statements.div_ceil(run.events).max(1) } else { 1 };
        let in_flight = u64::from(run.busy_edges)
            .saturating_mul(run.connections)
            .saturating_mul(per_event)
            .saturating_add(run.edge_statements);
        let allowed_below = in_flight;
        let quits = run.connections.saturating_add(run.idle_quits);
        let allowed_above = in_flight.saturating_add(quits).saturating_add(run.reconnects);
        let consistent = unexplained >= 0 && unexplained.unsigned_abs() <= allowed_above
            || unexplained < 0 && unexplained.unsigned_abs() <= allowed_below;
        Some(ConsistencyCheck {
            server_statements: server,
            sampler_statements: delta.sampler_statements,
            run_statements: run.statements,
            unexplained,
            allowed_below,
            allowed_above,
            consistent,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delta(questions: Option<u64>, sampler: u64) -> ServerDelta {
        ServerDelta {
            seconds: 1.0,
            status: questions.map(|q| ("Questions".to_owned(), q)).into_iter().collect(),
            threads_running: None,
            process: None,
            sampler_statements: sampler,
        }
    }

    const RUN: RunStatements = RunStatements {
        statements: 1000,
        events: 100,
        connections: 4,
        reconnects: 0,
        busy_edges: 0,
        edge_statements: 0,
        idle_quits: 0,
    };

    #[test]
    fn the_run_and_the_sampler_make_up_the_servers_count() {
        let exact = ConsistencyCheck::of(&delta(Some(1003), 3), RUN).unwrap();
        assert!(exact.consistent && exact.unexplained == 0, "{exact:?}");
        let quits = ConsistencyCheck::of(&delta(Some(1007), 3), RUN).unwrap();
        assert!(quits.consistent && quits.allowed_above == 4, "each connection's COM_QUIT: {quits:?}");
        let other_client = ConsistencyCheck::of(&delta(Some(1503), 3), RUN).unwrap();
        assert!(!other_client.consistent && other_client.unexplained == 500, "{other_client:?}");
        let fewer = ConsistencyCheck::of(&delta(Some(990), 3), RUN).unwrap();
        assert!(!fewer.consistent && fewer.unexplained == -13, "a sharp edge allows none: {fewer:?}");
        assert_eq!(ConsistencyCheck::of(&delta(None, 3), RUN), None, "no Questions, no check");
    }

    /// 100 idle connections held beside the 4 active ones: their COM_QUIT
    /// is the run's, whether or not the last sample counted it yet.
    #[test]
    fn the_idle_connections_goodbyes_are_the_runs() {
        let idle = RunStatements { idle_quits: 100, ..RUN };
        for questions in [1003, 1103, 1107] {
            let check = ConsistencyCheck::of(&delta(Some(questions), 3), idle).unwrap();
            assert!(check.consistent && check.allowed_above == 104, "{check:?}");
        }
        assert!(!ConsistencyCheck::of(&delta(Some(1108), 3), idle).unwrap().consistent, "one more is a stranger's");
        assert!(!ConsistencyCheck::of(&delta(Some(1107), 3), RUN).unwrap().consistent, "not counted, a stranger");
    }

    /// An edge taken while the connections ran allows their events in
    /// flight (10 statements each here), either way.
    #[test]
    fn busy_edges_allow_the_events_in_flight() {
        let run = RunStatements { busy_edges: 1, ..RUN };
        let fewer = ConsistencyCheck::of(&delta(Some(963), 3), run).unwrap();
        assert!(fewer.consistent && fewer.allowed_below == 40, "{fewer:?}");
        assert!(!ConsistencyCheck::of(&delta(Some(962), 3), run).unwrap().consistent);
        let more = ConsistencyCheck::of(&delta(Some(1047), 3), run).unwrap();
        assert!(more.consistent && more.allowed_above == 44, "{more:?}");
        let skewed = RunStatements { edge_statements: 100, ..RUN };
        assert!(ConsistencyCheck::of(&delta(Some(903), 3), skewed).unwrap().consistent);
    }
}
