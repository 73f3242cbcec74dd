//! Minimising a failing session before it is saved: drop packets, then
//! drop edits, then shrink what is left (statement text, parameter lists,
//! connection attributes, long data), then the setup (the tables the
//! session needs: their rows, then the tables, then half the rows at a
//! time), keeping each change only when a re-run (the server restarted
//! first when needed, the setup made afresh) fails the same way.

use std::time::Duration;

use tokio::time::Instant;

use super::control::Failure;
use super::exec::{Ending, SentPacket};
use super::rig::{same_bug, Rig};
use super::run_clock::OUT_OF_TIME;
use super::spec::{OwnedParam, SessionPlan, Spec};
use super::table_setup::{Setup, TableSetup};

/// Re-runs minimising the session may take at most.
const MAX_RUNS: u32 = 60;
/// And how long, not counting the waits for the server to come back
/// (`--fuzz-restart-wait` bounds each of those): a server that takes a
/// minute to restart gets its 60 re-runs too.
const MAX_TIME: Duration = Duration::from_secs(90);
/// Re-runs and time minimising the setup may take besides: a setup is
/// made small in a few runs (a table at a time, then halves of rows), and
/// a long session that used up the session's budget still gets them.
const SETUP_RUNS: u32 = 20;
const SETUP_TIME: Duration = Duration::from_secs(30);

/// A smaller session that still fails.
#[derive(Debug, Clone)]
pub struct Minimised {
    pub plan: SessionPlan,
    /// The packets of its last failing run.
    pub sent: Vec<SentPacket>,
    pub runs: u32,
    /// Why it stopped early, if it did.
    pub cut_short: Option<String>,
    /// The tables it needs (made before each re-run).
    pub setup: Setup,
}

struct Search<'r> {
    rig: &'r mut Rig,
    failure: Failure,
    best: Minimised,
    started: Instant,
    /// The rig's waits for the server before the search began.
    waited_before: Duration,
    /// The phase's budget: re-runs in all, and time from `started`.
    run_limit: u32,
    time_limit: Duration,
    /// The budget ran out (the search goes on only in a phase with a
    /// budget of its own).
    spent: bool,
}

impl Search<'_> {
    /// Whether `candidate` fails the same way; if so it becomes the best.
    async fn keep_if_failing(&mut self, candidate: SessionPlan) -> bool {
        let setup = self.best.setup.clone();
        self.keep_if_failing_with(candidate, setup).await
    }

    /// Whether the best session with `setup` fails the same way; if so
    /// that setup becomes the best.
    async fn keep_setup_if_failing(&mut self, setup: Setup) -> bool {
        let plan = self.best.plan.clone();
        self.keep_if_failing_with(plan, setup).await
    }

    async fn keep_if_failing_with(&mut self, candidate: SessionPlan, setup: Setup) -> bool {
        if self.best.cut_short.is_some() || self.spent {
            return false;
        }
        let waiting = self.rig.waited.saturating_sub(self.waited_before);
        if self.best.runs >= self.run_limit || self.started.elapsed().saturating_sub(waiting) >= self.time_limit {
            self.spent = true;
            return false;
        }
        let mut tries = 0;
        let (failure, outcome) = loop {
            if let Err(why) = self.rig.ensure_up().await {
                self.best.cut_short = Some(why.to_string());
                return false;
            }
            self.rig.setup = setup.clone();
            let (failure, outcomes) = self.rig.run_and_check(vec![candidate.packets.clone()]).await;
            if self.rig.out_of_time() {
                self.best.cut_short = Some(format!("stopped when {OUT_OF_TIME}"));
                return false;
            }
            let outcome = outcomes.into_iter().next();
            // No connection at all: the server was not back yet, whatever
            // the check before said. That run says nothing; run it again
            // once the server answers.
            let not_back = outcome.as_ref().is_some_and(|o| matches!(o.ending, Ending::ConnectFailed(_)));
            tries += 1;
            if !not_back || tries == 3 {
                break (failure, outcome);
            }
            let began = Instant::now();
            let back = self.rig.wait_back().await;
            self.rig.waited += began.elapsed();
            if let Err(why) = back {
                self.best.cut_short = Some(why.to_string());
                return false;
            }
        };
        self.best.runs += 1;
        match (failure, outcome) {
            (Some(f), Some(outcome)) if same_bug(&f, &self.failure) => {
                self.best.plan = candidate;
                self.best.sent = outcome.sent;
                self.best.setup = setup;
                true
            }
            _ => false,
        }
    }
}

/// Minimises `plan`, which failed with `failure` (its run sent `sent`).
pub async fn minimise(rig: &mut Rig, plan: SessionPlan, sent: Vec<SentPacket>, failure: &Failure) -> Minimised {
    let setup = rig.setup.clone();
    let best = Minimised { plan, sent, runs: 0, cut_short: None, setup };
    let waited_before = rig.waited;
    let mut search = Search {
        rig,
        failure: failure.clone(),
        best,
        started: Instant::now(),
        waited_before,
        run_limit: MAX_RUNS,
        time_limit: MAX_TIME,
        spent: false,
    };
    drop_packets(&mut search).await;
    drop_edits(&mut search).await;
    shrink_contents(&mut search).await;
    let session_spent = std::mem::take(&mut search.spent);
    let waiting = search.rig.waited.saturating_sub(search.waited_before);
    search.run_limit = search.best.runs + SETUP_RUNS;
    search.time_limit = search.started.elapsed().saturating_sub(waiting) + SETUP_TIME;
    minimise_setup(&mut search).await;
    if search.best.cut_short.is_none() && (session_spent || search.spent) {
        search.best.cut_short = Some(format!("stopped after {} re-runs", search.best.runs));
    }
    search.best
}

/// The setup made smaller: the tables the session no longer names, then
/// every row, then each table, then half of a table's rows at a time
/// (the first half, else the second), each kept only if it still fails.
async fn minimise_setup(search: &mut Search<'_>) {
    let named = search.best.setup.for_sessions([&search.best.sent[..]]);
    if named != search.best.setup {
        search.keep_setup_if_failing(named).await;
    }
    let rowless = Setup {
        tables: search.best.setup.tables.iter().map(|t| TableSetup { rows: Vec::new(), ..t.clone() }).collect(),
    };
    if rowless != search.best.setup {
        search.keep_setup_if_failing(rowless).await;
    }
    let mut at = search.best.setup.tables.len();
    while at > 0 {
        at -= 1;
        let mut fewer = search.best.setup.clone();
        fewer.tables.remove(at);
        search.keep_setup_if_failing(fewer).await;
    }
    for table in 0..search.best.setup.tables.len() {
        loop {
            let rows = search.best.setup.tables.get(table).map_or(0, |t| t.rows.len());
            if rows < 2 || search.best.cut_short.is_some() {
                break;
            }
            let halves = [(0, rows / 2), (rows / 2, rows)];
            let mut kept = false;
            for (from, to) in halves {
                let mut half = search.best.setup.clone();
                if let Some(t) = half.tables.get_mut(table) {
                    t.rows = t.rows.get(from..to).unwrap_or_default().to_vec();
                }
                if search.keep_setup_if_failing(half).await {
                    kept = true;
                    break;
                }
            }
            if !kept {
                break;
            }
        }
    }
}

async fn drop_packets(search: &mut Search<'_>) {
    let mut at = search.best.plan.packets.len();
    while at > 0 && search.best.plan.packets.len() > 1 {
        at -= 1;
        let candidate = search.best.plan.without_packet(at);
        search.keep_if_failing(candidate).await;
    }
}

async fn drop_edits(search: &mut Search<'_>) {
    for packet in 0..search.best.plan.packets.len() {
        for list in 0..3 {
            let len = |plan: &SessionPlan| {
                plan.packets.get(packet).map_or(0, |p| [p.edits.len(), p.frame.len(), p.wrap.len()][list])
            };
            let mut at = len(&search.best.plan);
            while at > 0 {
                at -= 1;
                let mut candidate = search.best.plan.clone();
                if let Some(p) = candidate.packets.get_mut(packet) {
                    match list {
                        0 => {
                            p.edits.remove(at);
                        }
                        1 => {
                            p.frame.remove(at);
                        }
                        _ => {
                            p.wrap.remove(at);
                        }
                    }
                }
                search.keep_if_failing(candidate).await;
                at = at.min(len(&search.best.plan));
            }
        }
    }
}

/// Halves text, data and string parameters, drops parameters and
/// attributes: each kind of shrinking as long as the failure stays.
async fn shrink_contents(search: &mut Search<'_>) {
    for packet in 0..search.best.plan.packets.len() {
        for shrink in shrinks(&search.best.plan, packet) {
            while let Some(candidate) = shrunk(&search.best.plan, packet, shrink) {
                if !search.keep_if_failing(candidate).await {
                    break;
                }
            }
        }
    }
}

/// One way to make a packet's content smaller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shrink {
    /// Statement text, long data or a command's body: its first half.
    HalveBytes,
    /// String parameter `n`: its first half.
    HalveParam(usize),
    /// The last parameter dropped.
    DropParam,
    /// The last connection attribute dropped.
    DropAttribute,
}

/// The ways packet `at` of `plan` can shrink.
fn shrinks(plan: &SessionPlan, at: usize) -> Vec<Shrink> {
    match plan.packets.get(at).map(|p| &p.spec) {
        Some(Spec::Query(_) | Spec::Prepare(_) | Spec::SendLongData { .. } | Spec::Other { .. }) => {
            vec![Shrink::HalveBytes]
        }
        Some(Spec::Execute { params, .. }) => {
            let mut shrinks: Vec<Shrink> = (0..params.len()).map(Shrink::HalveParam).collect();
            shrinks.push(Shrink::DropParam);
            shrinks
        }
        Some(Spec::Login(_) | Spec::ChangeUser { .. }) => vec![Shrink::DropAttribute],
        _ => Vec::new(),
    }
}

/// `plan` with packet `at` shrunk by `shrink`, if it can be.
fn shrunk(plan: &SessionPlan, at: usize, shrink: Shrink) -> Option<SessionPlan> {
    let mut plan = plan.clone();
    let spec = &mut plan.packets.get_mut(at)?.spec;
    let halve = |bytes: &mut Vec<u8>| (bytes.len() > 8).then(|| bytes.truncate(bytes.len() / 2));
    match (spec, shrink) {
        (
            Spec::Query(bytes)
            | Spec::Prepare(bytes)
            | Spec::SendLongData { data: bytes, .. }
            | Spec::Other { body: bytes, .. },
            Shrink::HalveBytes,
        ) => halve(bytes)?,
        (Spec::Execute { params, .. }, Shrink::HalveParam(n)) => match params.get_mut(n)? {
            OwnedParam::Bytes(bytes) | OwnedParam::VarString(bytes) | OwnedParam::Blob(bytes) => halve(bytes)?,
            _ => return None,
        },
        (Spec::Execute { params, .. }, Shrink::DropParam) if params.len() > 1 => drop(params.pop()),
        (Spec::Login(login), Shrink::DropAttribute) => drop(login.connect_attrs.pop()?),
        (Spec::ChangeUser { connect_attrs }, Shrink::DropAttribute) => drop(connect_attrs.pop()?),
        _ => return None,
    }
    Some(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz::spec::{OwnedParam, PlannedPacket};

    #[test]
    fn dropping_a_prepare_keeps_later_commands_on_their_statements() {
        let plan = SessionPlan {
            packets: vec![
                PlannedPacket::new(Spec::Prepare(b"SELECT ?".to_vec())),
                PlannedPacket::new(Spec::Prepare(b"SELECT 1".to_vec())),
                PlannedPacket::new(Spec::Close(crate::fuzz::spec::StmtRef::Prepared(1))),
                PlannedPacket::new(Spec::Reset(crate::fuzz::spec::StmtRef::Prepared(0))),
            ],
        };
        let without_first = plan.without_packet(0);
        assert_eq!(without_first.packets[1].spec, Spec::Close(crate::fuzz::spec::StmtRef::Prepared(0)));
        assert_eq!(
            without_first.packets[2].spec,
            Spec::Reset(crate::fuzz::spec::StmtRef::Prepared(0)),
            "its own prepare is gone"
        );
        assert_eq!(plan.without_packet(2).packets.len(), 3);
        assert_eq!(plan.without_packet(9), plan);
    }

    #[test]
    fn shrinking_halves_text_and_drops_parameters() {
        let plan = SessionPlan {
            packets: vec![
                PlannedPacket::new(Spec::Query(b"SELECT 1234567890".to_vec())),
                PlannedPacket::new(Spec::Execute {
                    stmt: crate::fuzz::spec::StmtRef::Prepared(0),
                    flags: 0,
                    params: vec![OwnedParam::I8(1), OwnedParam::I8(2), OwnedParam::Blob(vec![7; 100])],
                }),
                PlannedPacket::new(Spec::Ping),
            ],
        };
        let text = shrunk(&plan, 0, Shrink::HalveBytes).unwrap();
        assert_eq!(text.packets[0].spec, Spec::Query(b"SELECT 1".to_vec()));
        assert!(shrunk(&text, 0, Shrink::HalveBytes).is_none(), "8 bytes or fewer stay");
        assert_eq!(
            shrinks(&plan, 1),
            [Shrink::HalveParam(0), Shrink::HalveParam(1), Shrink::HalveParam(2), Shrink::DropParam]
        );
        let string = shrunk(&plan, 1, Shrink::HalveParam(2)).unwrap();
        assert!(
            matches!(&string.packets[1].spec, Spec::Execute { params, .. } if params[2] == OwnedParam::Blob(vec![7; 50]))
        );
        assert!(shrunk(&plan, 1, Shrink::HalveParam(0)).is_none(), "an integer does not halve");
        let params = shrunk(&plan, 1, Shrink::DropParam).unwrap();
        assert!(matches!(&params.packets[1].spec, Spec::Execute { params, .. } if params.len() == 2));
        assert!(shrinks(&plan, 2).is_empty());
    }
}
