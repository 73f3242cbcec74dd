//! The fuzzing workers: each runs sessions back to back on fresh
//! connections, a new session chosen from the corpus and mutated (or fresh
//! from the grammar, or a seed as it is), and records what it reached.

use std::collections::{HashSet, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::time::Instant;

use super::control::{internal_failure, Failure};
use super::corpus::{Corpus, Coverage};
use super::exec::{run_session, Ending, Limits, SessionOutcome};
use super::fuzz_error::FuzzError;
use super::fuzz_options::Target;
use super::fuzz_rng::FuzzRng;
use super::generate::{fresh_pre_auth_session, fresh_session};
use super::internal_error::InternalErrors;
use super::mutate::{mutate_plan, Pool};
use super::seeds::Seeds;
use super::spec::{LoginForm, SessionPlan};
use super::vigil::Vigil;

/// Sessions kept for a reproducer: the failing one may need those before it.
pub const HISTORY: usize = 16;
/// A worker whose connection was refused waits this long before the next.
const REFUSED_PAUSE: Duration = Duration::from_millis(100);

/// A session that ran.
#[derive(Debug, Clone)]
pub struct FinishedSession {
    /// In the order sessions started.
    pub number: u64,
    /// In the order they finished.
    pub index: u64,
    pub plan: SessionPlan,
    pub outcome: SessionOutcome,
}

/// What the workers, the control loop and the reporter share.
#[derive(Debug)]
pub struct CampaignShared {
    pub target: Target,
    pub limits: Limits,
    pub seed: u64,
    pub seeds: Seeds,
    pub started: Instant,
    pub stop: AtomicBool,
    /// Sessions started (their numbers).
    pub sessions: AtomicU64,
    pub finished: AtomicU64,
    /// Sessions that had finished when the last good check started: the
    /// server was well after them.
    pub checked_through: AtomicU64,
    pub packets: AtomicU64,
    /// Packets the safety check kept back.
    pub withheld: AtomicU64,
    pub checks: AtomicU64,
    pub failures: AtomicU64,
    pub coverage: Mutex<Coverage>,
    pub corpus: Mutex<Corpus>,
    pub history: Mutex<VecDeque<FinishedSession>>,
    /// Late answers wait for the control connection's checks; a failure
    /// halts the sessions.
    pub vigil: Vigil,
    /// After a login finding, the form of login every session uses (with
    /// the database or without, then COM_INIT_DB): the other form is the
    /// one the server does not complete, already saved.
    pub login_form: Option<LoginForm>,
    /// What the run found so far: kept here so that a run abandoned at
    /// its hard end still names every reproducer it saved.
    pub found: Mutex<Found>,
    /// Which error answers betray an internal fault.
    pub judge: InternalErrors,
    pub internal: Mutex<InternalSeen>,
    /// Pre-auth mode: sessions are what comes before the login's answer.
    pub pre_auth: bool,
}

/// A session's internal-error answer, for the control loop to stop the
/// epoch on, and the (code, pattern) of each one reported, so that
/// `--keep-going` reports each once.
#[derive(Debug, Default)]
pub struct InternalSeen {
    pub next: Option<Failure>,
    pub reported: HashSet<(u16, String)>,
}

/// The reproducers saved, and the failures that could not be.
#[derive(Debug, Default)]
pub struct Found {
    pub reproducers: Vec<PathBuf>,
    pub unsaved: Vec<String>,
}

impl CampaignShared {
    /// Notes a failure's reproducer, or why it was not saved.
    pub fn found(&self, saved: Result<PathBuf, FuzzError>) {
        let mut found = lock_shared(&self.found);
        match saved {
            Ok(path) => found.reproducers.push(path),
            Err(e) => found.unsaved.push(e.to_string()),
        }
    }
}

/// A lock that outlives a worker that panicked while holding it: the data
/// (counters, a corpus) stays usable.
pub fn lock_shared<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// One worker's loop, until `shared.stop`; `stream` picks its random stream.
pub async fn fuzz_worker(shared: Arc<CampaignShared>, stream: u64) {
    let mut rng = FuzzRng::new(shared.seed, stream.wrapping_add(1));
    while !shared.stop.load(Ordering::Relaxed) {
        let number = shared.sessions.fetch_add(1, Ordering::Relaxed);
        let mut plan = next_plan(&shared, &mut rng);
        if let Some(form) = shared.login_form {
            plan = plan.with_login_form(form);
        }
        let outcome = run_session(&shared.target, &plan.packets, &shared.limits, &shared.judge, &shared.vigil).await;
        let index = shared.finished.fetch_add(1, Ordering::Relaxed);
        let refused = matches!(outcome.ending, Ending::ConnectFailed(_));
        record(&shared, FinishedSession { number, index, plan, outcome });
        if refused {
            // The server is probably down: give the control connection
            // time to say so rather than hammer a closed port.
            tokio::time::sleep(REFUSED_PAUSE).await;
        }
    }
}

/// The next session: mostly a mutant of the corpus, sometimes a fresh one
/// from the grammar or a seed as recorded.
fn next_plan(shared: &CampaignShared, rng: &mut FuzzRng) -> SessionPlan {
    match rng.below(20) {
        0..=2 if shared.pre_auth => return fresh_pre_auth_session(rng),
        0..=2 => return fresh_session(rng, &shared.seeds),
        3 => {
            if let Some(seed) = rng.pick(&shared.seeds.plans) {
                return seed.clone();
            }
        }
        _ => {}
    }
    let (base, donor) = {
        let corpus = lock_shared(&shared.corpus);
        (corpus.pick(rng).cloned(), corpus.pick(rng).cloned())
    };
    let Some(base) = base else { return fresh_session(rng, &shared.seeds) };
    let pool = Pool {
        seeds: &shared.seeds,
        donor: donor.as_ref(),
        database: &shared.target.database,
        compression: shared.target.compression,
        pre_auth: shared.pre_auth,
    };
    mutate_plan(&base, rng, &pool)
}

fn record(shared: &CampaignShared, finished: FinishedSession) {
    shared.packets.fetch_add(finished.outcome.sent.len() as u64, Ordering::Relaxed);
    shared.withheld.fetch_add(finished.outcome.withheld.len() as u64, Ordering::Relaxed);
    let new = lock_shared(&shared.coverage).merge(&finished.outcome.states, shared.started.elapsed());
    if new > 0 {
        // What was never sent did not reach these states: its mutants
        // need not carry it.
        let kept =
            finished.outcome.withheld.iter().rev().fold(finished.plan.clone(), |plan, &at| plan.without_packet(at));
        lock_shared(&shared.corpus).add(kept, finished.outcome.took);
    }
    if finished.outcome.ending.is_suspicious() {
        // It ended as a dead server ends sessions: look now.
        shared.vigil.ask();
    }
    if let Some((state, error)) = &finished.outcome.internal_error {
        let mut internal = lock_shared(&shared.internal);
        if internal.reported.insert((error.code, error.pattern.clone())) {
            internal.next.get_or_insert_with(|| internal_failure(state, error));
            shared.vigil.ask();
        }
    }
    if finished.outcome.sent.is_empty() {
        // It sent nothing: no part in any failure, and no room to take
        // from the sessions that did.
        return;
    }
    let mut history = lock_shared(&shared.history);
    history.push_back(finished);
    while history.len() > HISTORY {
        history.pop_front();
    }
}
