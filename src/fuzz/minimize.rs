//! Minimising a failing session before it is saved: drop packets, then
//! drop edits, then shrink what is left (statement text, parameter lists,
//! connection attributes, long data), keeping each change only when a
//! re-run (the server restarted first when needed) fails the same way.

use std::time::Duration;

use tokio::time::Instant;

use super::control::Failure;
use super::exec::SentPacket;
use super::rig::{same_bug, Rig};
use super::spec::{SessionPlan, Spec};

/// Re-runs one minimisation may take at most.
const MAX_RUNS: u32 = 60;
/// And how long.
const MAX_TIME: Duration = Duration::from_secs(90);

/// A smaller session that still fails.
#[derive(Debug, Clone)]
pub struct Minimised {
    pub plan: SessionPlan,
    /// The packets of its last failing run.
    pub sent: Vec<SentPacket>,
    pub runs: u32,
    /// Why it stopped early, if it did.
    pub cut_short: Option<String>,
}

struct Search<'r> {
    rig: &'r mut Rig,
    failure: Failure,
    best: Minimised,
    until: Instant,
}

impl Search<'_> {
    /// Whether `candidate` fails the same way; if so it becomes the best.
    async fn keep_if_failing(&mut self, candidate: SessionPlan) -> bool {
        if self.best.cut_short.is_some() {
            return false;
        }
        if self.best.runs >= MAX_RUNS || Instant::now() >= self.until {
            self.best.cut_short = Some(format!("stopped after {} re-runs", self.best.runs));
            return false;
        }
        if let Err(why) = self.rig.ensure_up().await {
            self.best.cut_short = Some(why);
            return false;
        }
        self.best.runs += 1;
        let (failure, outcomes) = self.rig.run_and_check(vec![candidate.packets.clone()]).await;
        match (failure, outcomes.into_iter().next()) {
            (Some(f), Some(outcome)) if same_bug(&f, &self.failure) => {
                self.best.plan = candidate;
                self.best.sent = outcome.sent;
                true
            }
            _ => false,
        }
    }
}

/// Minimises `plan`, which failed with `failure` (its run sent `sent`).
pub async fn minimise(rig: &mut Rig, plan: SessionPlan, sent: Vec<SentPacket>, failure: &Failure) -> Minimised {
    let best = Minimised { plan, sent, runs: 0, cut_short: None };
    let mut search = Search { rig, failure: failure.clone(), best, until: Instant::now() + MAX_TIME };
    drop_packets(&mut search).await;
    drop_edits(&mut search).await;
    shrink_contents(&mut search).await;
    search.best
}

async fn drop_packets(search: &mut Search<'_>) {
    let mut at = search.best.plan.packets.len();
    while at > 0 && search.best.plan.packets.len() > 1 {
        at -= 1;
        let mut candidate = search.best.plan.clone();
        candidate.packets.remove(at);
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

/// Halves text and data, drops parameters and attributes, one at a time.
async fn shrink_contents(search: &mut Search<'_>) {
    for packet in 0..search.best.plan.packets.len() {
        while let Some(candidate) = shrunk(&search.best.plan, packet) {
            if !search.keep_if_failing(candidate).await {
                break;
            }
        }
    }
}

/// `plan` with packet `at`'s content made smaller, if it can be.
fn shrunk(plan: &SessionPlan, at: usize) -> Option<SessionPlan> {
    let mut plan = plan.clone();
    let spec = &mut plan.packets.get_mut(at)?.spec;
    match spec {
        Spec::Query(bytes)
        | Spec::Prepare(bytes)
        | Spec::SendLongData { data: bytes, .. }
        | Spec::Other { body: bytes, .. }
            if bytes.len() > 8 =>
        {
            bytes.truncate(bytes.len() / 2);
        }
        Spec::Execute { params, .. } if params.len() > 1 => {
            params.pop();
        }
        Spec::Login(login) if !login.connect_attrs.is_empty() => {
            login.connect_attrs.pop();
        }
        Spec::ChangeUser { connect_attrs } if !connect_attrs.is_empty() => {
            connect_attrs.pop();
        }
        _ => return None,
    }
    Some(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz::spec::{OwnedParam, PlannedPacket};

    #[test]
    fn shrinking_halves_text_and_drops_parameters() {
        let plan = SessionPlan {
            packets: vec![
                PlannedPacket::new(Spec::Query(b"SELECT 1234567890".to_vec())),
                PlannedPacket::new(Spec::Execute {
                    stmt: crate::fuzz::spec::StmtRef::Prepared(0),
                    flags: 0,
                    params: vec![OwnedParam::I8(1), OwnedParam::I8(2)],
                }),
                PlannedPacket::new(Spec::Ping),
            ],
        };
        let text = shrunk(&plan, 0).unwrap();
        assert_eq!(text.packets[0].spec, Spec::Query(b"SELECT 1".to_vec()));
        assert!(shrunk(&text, 0).is_none(), "8 bytes or fewer stay");
        let params = shrunk(&plan, 1).unwrap();
        assert!(matches!(&params.packets[1].spec, Spec::Execute { params, .. } if params.len() == 1));
        assert!(shrunk(&params, 1).is_none());
        assert!(shrunk(&plan, 2).is_none());
    }
}
