//! One thread's `prepare` steps taken by several connections at once, so
//! that `--threads` above `--tables` load each table over several
//! connections. The rows stay sysbench's: the steps come from the one
//! generator of the thread sysbench would load the table with, in its
//! order; only the sending is shared. A batch of rows (LOAD DATA's data, or
//! an INSERT) carries its ids, so batches may reach the server in any order.
//!
//! A statement (CREATE TABLE, CREATE INDEX) is a barrier: it is taken only
//! when no batch is in flight, and nothing is taken while it is, so the
//! rows go into a created table and the index is built after all of them,
//! as sysbench does.

use std::iter::Peekable;
use tokio::sync::{Mutex, Notify};

use super::table_progress::TableProgress;
use super::RunError;
use crate::workload::PrepareStep;

/// The steps of one thread, shared by the connections that send them.
pub(super) struct SharedSteps<I: Iterator> {
    /// Held while the next batch is generated: an async lock, so that the
    /// connections waiting for it take turns (it is fair) without holding
    /// up the runtime's threads, which carry the others' traffic.
    state: Mutex<SharedState<I>>,
    /// Something was finished, so a waiting connection may go on.
    finished: Notify,
}

struct SharedState<I: Iterator> {
    steps: Peekable<I>,
    rows_in_flight: u32,
    statement_in_flight: bool,
    /// The table the last finished step touched, complete once a step of
    /// another finishes or the steps run out.
    table: Option<String>,
}

/// What [`SharedSteps::take`] found.
enum Turn<T> {
    Take(T),
    Wait,
    Done,
}

impl<I> SharedSteps<I>
where
    I: Iterator<Item = Result<PrepareStep, RunError>>,
{
    pub(super) fn new(steps: I) -> Self {
        SharedSteps {
            state: Mutex::new(SharedState {
                steps: steps.peekable(),
                rows_in_flight: 0,
                statement_in_flight: false,
                table: None,
            }),
            finished: Notify::new(),
        }
    }

    /// The next step this connection may send, waiting while a barrier
    /// holds it back; `None` when all are sent and answered (then the last
    /// table is marked complete in `progress`). Every step taken must be
    /// handed back to [`finished`](Self::finished).
    pub(super) async fn take(&self, progress: &TableProgress) -> Option<Result<PrepareStep, RunError>> {
        loop {
            // Registered before looking, so a step finished in between wakes it.
            let finished = self.finished.notified();
            tokio::pin!(finished);
            finished.as_mut().enable();
            match self.turn(progress).await {
                Turn::Take(step) => return Some(step),
                Turn::Done => return None,
                Turn::Wait => finished.await,
            }
        }
    }

    async fn turn(&self, progress: &TableProgress) -> Turn<Result<PrepareStep, RunError>> {
        let mut state = self.state.lock().await;
        if state.statement_in_flight {
            return Turn::Wait;
        }
        let idle = state.rows_in_flight == 0;
        match state.steps.peek() {
            None if idle => {
                if let Some(last) = state.table.take() {
                    progress.complete(&last);
                }
                Turn::Done
            }
            None | Some(Ok(PrepareStep::Sql(_))) if !idle => Turn::Wait,
            None => Turn::Done,
            Some(Ok(PrepareStep::Rows(_) | PrepareStep::Insert(_))) => {
                state.rows_in_flight += 1;
                state.steps.next().map_or(Turn::Done, Turn::Take)
            }
            Some(Ok(PrepareStep::Sql(_))) => {
                state.statement_in_flight = true;
                state.steps.next().map_or(Turn::Done, Turn::Take)
            }
            Some(Err(_)) => state.steps.next().map_or(Turn::Done, Turn::Take),
        }
    }

    /// `step`, taken from here, is answered; it touched `table`, if any
    /// (a table that a step of another follows is complete).
    pub(super) async fn finished(&self, step: &PrepareStep, table: Option<String>, progress: &TableProgress) {
        let mut state = self.state.lock().await;
        match step {
            PrepareStep::Rows(_) | PrepareStep::Insert(_) => {
                state.rows_in_flight = state.rows_in_flight.saturating_sub(1)
            }
            PrepareStep::Sql(_) => state.statement_in_flight = false,
        }
        if let Some(touched) = table {
            if let Some(previous) = state.table.as_deref().filter(|&t| t != touched) {
                progress.complete(previous);
            }
            state.table = Some(touched);
        }
        drop(state);
        self.finished.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::workload::{BatchForm, RowBatch};

    fn batch(n: u32) -> PrepareStep {
        PrepareStep::Rows(RowBatch { table: 1, rows: 1, data: format!("{n}\n").into_bytes(), form: BatchForm::Lines })
    }

    /// What each of 3 connections sent, in the order sent and answered.
    #[derive(Debug, PartialEq)]
    enum Event {
        Sent(usize, String),
        Answered(usize, String),
    }

    fn name(step: &PrepareStep) -> String {
        match step {
            PrepareStep::Sql(sql) | PrepareStep::Insert(sql) => sql.clone(),
            PrepareStep::Rows(b) => String::from_utf8_lossy(&b.data).trim().to_owned(),
        }
    }

    /// Three connections share CREATE, 6 batches, INDEX: every batch is sent
    /// once, after CREATE was answered and before INDEX was sent; batches
    /// are in flight at the same time; the table is complete at the end.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn connections_share_the_rows_between_barriers() {
        let mut steps = vec![PrepareStep::Sql("CREATE TABLE sbtest1(id INT)".into())];
        steps.extend((1..=6).map(batch));
        steps.push(PrepareStep::Sql("CREATE INDEX k_1 ON sbtest1(k)".into()));
        let shared = Arc::new(SharedSteps::new(steps.into_iter().map(Ok)));
        let progress = Arc::new(TableProgress::default());
        let log = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut tasks = tokio::task::JoinSet::new();
        for n in 0..3 {
            let (shared, progress, log) = (shared.clone(), progress.clone(), log.clone());
            tasks.spawn(async move {
                while let Some(step) = shared.take(&progress).await {
                    let step = step.unwrap();
                    log.lock().unwrap().push(Event::Sent(n, name(&step)));
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                    log.lock().unwrap().push(Event::Answered(n, name(&step)));
                    shared.finished(&step, Some("sbtest1".into()), &progress).await;
                }
            });
        }
        while let Some(joined) = tasks.join_next().await {
            joined.unwrap();
        }
        let log = Arc::try_unwrap(log).unwrap().into_inner().unwrap();
        let at = |wanted: &Event| log.iter().position(|e| e == wanted).unwrap();
        let sent: Vec<&String> =
            log.iter().filter_map(|e| if let Event::Sent(_, s) = e { Some(s) } else { None }).collect();
        assert_eq!(sent.len(), 8, "{log:?}");
        let created = log.iter().position(|e| matches!(e, Event::Answered(_, s) if s.starts_with("CREATE TABLE")));
        let indexing = log.iter().position(|e| matches!(e, Event::Sent(_, s) if s.starts_with("CREATE INDEX")));
        for n in 1..=6 {
            let sent_by = log.iter().find_map(|e| match e {
                Event::Sent(c, s) if *s == n.to_string() => Some(*c),
                _ => None,
            });
            let sent_at = at(&Event::Sent(sent_by.unwrap(), n.to_string()));
            let answered_at = at(&Event::Answered(sent_by.unwrap(), n.to_string()));
            assert!(created.unwrap() < sent_at && answered_at < indexing.unwrap(), "batch {n}: {log:?}");
        }
        let mut in_flight = 0i32;
        let mut most_in_flight = 0;
        for event in &log {
            match event {
                Event::Sent(_, s) if !s.starts_with("CREATE") => in_flight += 1,
                Event::Answered(_, s) if !s.starts_with("CREATE") => in_flight -= 1,
                _ => {}
            }
            most_in_flight = most_in_flight.max(in_flight);
        }
        assert!(most_in_flight > 1, "the batches went one at a time: {log:?}");
        assert_eq!(progress.prepare_summary(1), "complete: sbtest1; not created: 0");
    }
}
