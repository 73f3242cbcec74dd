//! Feedback and corpus: the distinct states every session reached, and
//! the sessions that reached one first, which are mutated further.

use std::collections::HashSet;
use std::time::Duration;

use super::feedback_state::State;
use super::fuzz_rng::FuzzRng;
use super::spec::SessionPlan;

/// Sessions kept at most; the oldest non-seed ones go first.
const MAX_ENTRIES: usize = 4096;

/// Every state seen, and how their count grew.
#[derive(Debug, Default)]
pub struct Coverage {
    seen: HashSet<State>,
    /// (time into the run, distinct states then), one point per growth.
    growth: Vec<(Duration, usize)>,
}

impl Coverage {
    /// Adds a session's states; returns how many were new.
    pub fn merge(&mut self, states: &[State], at: Duration) -> usize {
        let before = self.seen.len();
        self.seen.extend(states.iter().copied());
        let new = self.seen.len() - before;
        if new > 0 {
            self.growth.push((at, self.seen.len()));
        }
        new
    }

    pub fn len(&self) -> usize {
        self.seen.len()
    }

    /// The states, sorted.
    pub fn states(&self) -> Vec<State> {
        let mut states: Vec<State> = self.seen.iter().copied().collect();
        states.sort();
        states
    }

    /// The distinct-state count at `at` into the run.
    pub fn count_at(&self, at: Duration) -> usize {
        self.growth.iter().take_while(|(t, _)| *t <= at).last().map_or(0, |(_, n)| *n)
    }
}

#[derive(Debug, Clone)]
struct Entry {
    plan: SessionPlan,
    seed: bool,
    /// How long its run took: faster sessions are picked more often.
    took: Duration,
}

/// The sessions worth mutating.
#[derive(Debug, Default)]
pub struct Corpus {
    entries: Vec<Entry>,
}

impl Corpus {
    pub fn with_seeds(seeds: &[SessionPlan]) -> Corpus {
        let entry = |plan: &SessionPlan| Entry { plan: plan.clone(), seed: true, took: Duration::ZERO };
        Corpus { entries: seeds.iter().map(entry).collect() }
    }

    /// Keeps a session that reached new states in `took`.
    pub fn add(&mut self, plan: SessionPlan, took: Duration) {
        if self.entries.len() >= MAX_ENTRIES {
            if let Some(oldest) = self.entries.iter().position(|e| !e.seed) {
                self.entries.remove(oldest);
            }
        }
        self.entries.push(Entry { plan, seed: false, took });
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// A session to mutate: half the time among the newest, which found
    /// states most recently, else among all; the faster of two drawn, so
    /// that sessions that stall (waiting for answers that never come) do
    /// not take over the run.
    pub fn pick(&self, rng: &mut FuzzRng) -> Option<&SessionPlan> {
        let len = self.entries.len();
        let recent = rng.one_in(2);
        let draw = |rng: &mut FuzzRng| {
            let at = if recent { len.saturating_sub(1 + rng.below(len.min(32))) } else { rng.below(len) };
            self.entries.get(at)
        };
        let (a, b) = (draw(rng), draw(rng));
        let faster = match (a, b) {
            (Some(a), Some(b)) if b.took < a.took => b,
            (Some(a), _) => a,
            _ => return None,
        };
        Some(&faster.plan)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz::feedback_state::{AnswerClass, ClientMessage};

    #[test]
    fn only_new_states_count_and_growth_is_kept() {
        let mut c = Coverage::default();
        let a = State { step: ClientMessage::Login, class: AnswerClass::Ok, code: 0 };
        let b = State { step: ClientMessage::Command(3), class: AnswerClass::Err, code: 1064 };
        assert_eq!(c.merge(&[a, a, b], Duration::from_secs(1)), 2);
        assert_eq!(c.merge(&[a], Duration::from_secs(2)), 0);
        assert_eq!(c.len(), 2);
        assert_eq!(c.count_at(Duration::from_millis(500)), 0);
        assert_eq!(c.count_at(Duration::from_secs(3)), 2);
    }

    #[test]
    fn seeds_stay_when_the_corpus_is_full() {
        let mut corpus = Corpus::with_seeds(&[SessionPlan::default()]);
        for _ in 0..MAX_ENTRIES + 10 {
            corpus.add(SessionPlan::default(), Duration::from_millis(1));
        }
        assert_eq!(corpus.len(), MAX_ENTRIES);
        assert!(corpus.entries[0].seed);
        let mut rng = FuzzRng::new(1, 1);
        assert!(corpus.pick(&mut rng).is_some());
    }

    #[test]
    fn faster_sessions_are_picked_more_often() {
        let slow = SessionPlan { packets: vec![crate::fuzz::spec::PlannedPacket::new(crate::fuzz::spec::Spec::Ping)] };
        let mut corpus = Corpus::default();
        corpus.add(slow.clone(), Duration::from_millis(300));
        corpus.add(SessionPlan::default(), Duration::from_millis(1));
        let mut rng = FuzzRng::new(2, 2);
        let slow_picks = (0..1000).filter(|_| corpus.pick(&mut rng) == Some(&slow)).count();
        assert!((150..350).contains(&slow_picks), "{slow_picks}");
    }
}
