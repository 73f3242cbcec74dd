//! After a failure: find the session that causes it (run the suspects
//! again, alone, then all together), minimise it, and save the reproducer.

use std::path::PathBuf;
use std::time::Duration;

use super::control::{Failure, FailureKind};
use super::exec::Ending;
use super::fuzz_error::FuzzError;
use super::fuzz_options::FuzzOptions;
use super::lines::{err_line, out_line};
use super::minimize::{minimise, Minimised};
use super::reproducer::{Reproducer, Reproduces};
use super::rig::{same_bug, Rig};
use super::run_clock::{within, OUT_OF_TIME};
use super::table_setup::{capture, Setup};
use super::worker::FinishedSession;

/// Suspects re-run alone at most.
const SUSPECTS: usize = 8;

/// The sessions to re-run alone, most likely culprit first: those that
/// finished after the last good check and ended as a dead server ends them
/// (closed without ERR, reset, unanswered, or still in flight at the
/// failure), in the order they finished (the first to see the server die
/// is the likeliest to have killed it); then the others after that check;
/// then older ones, newest first. For a hang, the sessions still in flight
/// come first, the one waiting longest for its answer first: the culprit
/// of a hang is usually still waiting. Sessions that sent nothing cannot
/// have caused anything.
fn suspects(history: &[FinishedSession], checked_through: u64, kind: FailureKind) -> Vec<usize> {
    let mut order: Vec<usize> =
        (0..history.len()).filter(|&i| history.get(i).is_some_and(|h| !h.outcome.sent.is_empty())).collect();
    order.sort_by_key(|&i| {
        let Some(h) = history.get(i) else { return (2, None, 4, 0) };
        let waiting = (kind == FailureKind::Hang && h.outcome.ending == Ending::InFlight)
            .then_some(h.outcome.unanswered_since)
            .flatten();
        let after = h.index >= checked_through;
        // An internal error's session is known: it got the answer.
        let answered_it = kind == FailureKind::InternalError && h.outcome.internal_error.is_some();
        let calm = !(h.outcome.ending.is_suspicious() || answered_it);
        let rank = u8::from(!after) * 2 + u8::from(calm);
        (u8::from(waiting.is_none()), waiting, rank, if after { h.index } else { u64::MAX - h.index })
    });
    order
}

/// What confirming found.
struct Confirmed {
    reproduces: Reproduces,
    /// Index of the failing session in the history.
    culprit: usize,
    minimised: Option<Minimised>,
    /// The database's tables as they were once the server was back (or,
    /// when it did not come back, as they were when the run began).
    tables: Setup,
}

async fn confirm(
    rig: &mut Rig,
    history: &[FinishedSession],
    checked_through: u64,
    failure: &Failure,
    tables_at_start: &Setup,
) -> Confirmed {
    let order = suspects(history, checked_through, failure.kind);
    let first = order.first().copied().unwrap_or(0);
    let unconfirmed = |why: String, tables: Setup| Confirmed {
        reproduces: Reproduces::NotConfirmed(why),
        culprit: first,
        minimised: None,
        tables,
    };
    if let Err(why) = rig.ensure_up().await {
        return unconfirmed(why.to_string(), tables_at_start.clone());
    }
    // Pre-auth sessions cannot log in to name a table: nothing to record.
    let recorded = match rig.checker.is_pre_auth() {
        true => Some(Ok(Setup::default())),
        false => within(rig.end, capture(&rig.target, rig.limits.connect)).await,
    };
    let tables = match recorded {
        Some(Ok(tables)) => tables,
        Some(Err(e)) => {
            err_line(format_args!("wirebench fuzz: cannot record the database's tables: {e}"));
            tables_at_start.clone()
        }
        None => return unconfirmed(OUT_OF_TIME.to_owned(), tables_at_start.clone()),
    };
    // Every recorded table is made before each re-run: a session halted
    // by the failure had sent only part of what it sends when run again.
    // Once one fails alone, the tables its run named are the setup the
    // minimiser starts from.
    rig.setup = tables.clone();
    for &i in order.iter().take(SUSPECTS) {
        let Some(suspect) = history.get(i) else { continue };
        let (again, outcomes) = rig.run_and_check(vec![suspect.plan.packets.clone()]).await;
        if rig.out_of_time() {
            return unconfirmed(OUT_OF_TIME.to_owned(), tables);
        }
        match again {
            Some(f) if same_bug(&f, failure) => {
                let sent = outcomes.into_iter().next().map(|o| o.sent).unwrap_or_default();
                rig.setup = tables.for_sessions([&sent[..]]);
                let minimised = minimise(rig, suspect.plan.clone(), sent, failure).await;
                return Confirmed { reproduces: Reproduces::Alone, culprit: i, minimised: Some(minimised), tables };
            }
            Some(_) => {
                if let Err(why) = rig.ensure_up().await {
                    return unconfirmed(why.to_string(), tables);
                }
            }
            None => {}
        }
    }
    let together: Vec<_> = history.iter().map(|h| h.plan.packets.clone()).collect();
    let again = rig.run_and_check(together).await;
    if rig.out_of_time() {
        return unconfirmed(OUT_OF_TIME.to_owned(), tables);
    }
    match again {
        (Some(f), _) if same_bug(&f, failure) => match narrow_down(rig, history, failure, &tables).await {
            Some(minimised) => {
                Confirmed { reproduces: Reproduces::Alone, culprit: minimised.0, minimised: Some(minimised.1), tables }
            }
            None => Confirmed { reproduces: Reproduces::WithHistory, culprit: first, minimised: None, tables },
        },
        _ => unconfirmed(
            format!(
                "it did not happen again when the last {} sessions were run again, alone and together",
                history.len()
            ),
            tables,
        ),
    }
}

/// The sessions reproduce the failure together but no suspect did alone
/// (on a loaded machine more sessions finish between two checks than
/// [`SUSPECTS`]): halves of them run together until one session does it
/// alone, in about log2(sessions) runs; then it is minimised. `None` when
/// only sessions together cause it.
async fn narrow_down(
    rig: &mut Rig,
    history: &[FinishedSession],
    failure: &Failure,
    tables: &Setup,
) -> Option<(usize, Minimised)> {
    rig.ensure_up().await.ok()?;
    let mut range = 0..history.len();
    while range.len() > 1 {
        let mid = range.start + range.len() / 2;
        let mut reproducing = None;
        for half in [range.start..mid, mid..range.end] {
            let sessions = history.get(half.clone())?.iter().map(|h| h.plan.packets.clone()).collect();
            rig.setup = tables.clone();
            let (again, _) = rig.run_and_check(sessions).await;
            if again.is_some() {
                rig.ensure_up().await.ok()?;
            }
            if again.is_some_and(|f| same_bug(&f, failure)) {
                reproducing = Some(half);
                break;
            }
        }
        range = reproducing?;
    }
    let culprit = history.get(range.start)?;
    rig.setup = tables.clone();
    let (again, outcomes) = rig.run_and_check(vec![culprit.plan.packets.clone()]).await;
    again.filter(|f| same_bug(f, failure))?;
    let sent = outcomes.into_iter().next().map(|o| o.sent).unwrap_or_default();
    rig.setup = tables.for_sessions([&sent[..]]);
    let minimised = minimise(rig, culprit.plan.clone(), sent, failure).await;
    Some((range.start, minimised))
}

/// What is known of a failure when the fuzzing stops.
pub struct FailureReport<'a> {
    pub options: &'a FuzzOptions,
    pub seed: u64,
    /// The sessions that ran last, in the order they finished.
    pub history: &'a [FinishedSession],
    pub checked_through: u64,
    pub failure: &'a Failure,
    pub found_after: Duration,
    /// The server's version, from the control connection's greeting.
    pub server: &'a str,
    /// The database's tables when the run began: the setup when they
    /// cannot be recorded again after the failure.
    pub tables_at_start: &'a Setup,
    /// The run fuzzed what comes before the login's answer.
    pub pre_auth: bool,
}

/// Confirms, minimises and saves one failure; returns the reproducer's
/// path. Ctrl-C cuts the confirming short: what was found is saved as it is.
pub async fn handle_failure(rig: &mut Rig, report: &FailureReport<'_>) -> Result<PathBuf, FuzzError> {
    let failure = report.failure;
    err_line(format_args!("wirebench fuzz: FAILURE: {}", failure.summary));
    for detail in &failure.details {
        err_line(format_args!("  {detail}"));
    }
    err_line(format_args!(
        "wirebench fuzz: re-running the last {} sessions to find the one that causes it",
        report.history.len()
    ));
    let first = suspects(report.history, report.checked_through, failure.kind).first().copied().unwrap_or(0);
    let confirmed = tokio::select! {
        confirmed = confirm(rig, report.history, report.checked_through, failure, report.tables_at_start) => confirmed,
        _ = tokio::signal::ctrl_c() => Confirmed {
            reproduces: Reproduces::NotConfirmed("interrupted (Ctrl-C) while confirming".to_owned()),
            culprit: first,
            minimised: None,
            tables: report.tables_at_start.clone(),
        },
    };
    rig.setup = Setup::default();
    let path = save_reproducer(report, confirmed)?;
    out_line(format_args!("wirebench fuzz: FAILURE: {}", failure.summary));
    out_line(format_args!("wirebench fuzz: reproducer written to {}", path.display()));
    Ok(path)
}

fn save_reproducer(report: &FailureReport<'_>, confirmed: Confirmed) -> Result<PathBuf, FuzzError> {
    let culprit = report.history.get(confirmed.culprit);
    let (failing, minimised) = match &confirmed.minimised {
        Some(m) => {
            let before = culprit.map_or(0, |c| c.plan.packets.len());
            let mut text = format!("{before} packets -> {} in {} re-runs", m.plan.packets.len(), m.runs);
            if let Some(why) = &m.cut_short {
                text.push_str(&format!(" ({why})"));
            }
            (m.sent.clone(), text)
        }
        None => (culprit.map(|c| c.outcome.sent.clone()).unwrap_or_default(), "no (not confirmed alone)".to_owned()),
    };
    if failing.is_empty() {
        return Err(FuzzError::NoCulprit(report.failure.summary.clone()));
    }
    let history: Vec<Vec<_>> = report
        .history
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != confirmed.culprit)
        .map(|(_, h)| h.outcome.sent.clone())
        .collect();
    let setup = match (&confirmed.minimised, &confirmed.reproduces) {
        (Some(m), _) => m.setup.clone(),
        (None, Reproduces::Alone) => confirmed.tables.for_sessions([&failing[..]]),
        (None, _) => confirmed.tables.for_sessions(history.iter().map(|h| &h[..]).chain([&failing[..]])),
    };
    let t = &report.options.target;
    let reproducer = Reproducer {
        observed: report.failure.summary.clone(),
        details: report.failure.details.clone(),
        kind: Some(report.failure.kind),
        server: report.server.to_owned(),
        deadline: Some(report.options.deadline),
        seed: report.seed,
        session: culprit.map_or(0, |c| c.number),
        found_after: report.found_after,
        target: t.endpoint.to_string(),
        user: t.user.clone(),
        database: t.database.clone(),
        compression: t.compression,
        minimised,
        error_patterns: report.options.internal_errors.extra.clone(),
        pre_auth: report.pre_auth,
        reproduces: confirmed.reproduces,
        setup,
        failing,
        history,
    };
    reproducer.save(&report.options.fuzz_dir, report.failure.kind.name())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz::exec::{SentPacket, SessionOutcome};
    use crate::fuzz::spec::SessionPlan;

    fn finished(index: u64, ending: Ending, sent: usize) -> FinishedSession {
        let packet = SentPacket {
            rendered: crate::fuzz::exec::Rendered {
                phase: crate::fuzz::exec::Phase::Command,
                bytes: vec![1, 0, 0, 0, 0x0e],
                spots: Vec::new(),
                wrap: Vec::new(),
            },
            answered: None,
        };
        let outcome = SessionOutcome {
            sent: vec![packet; sent],
            states: Vec::new(),
            ending,
            withheld: Vec::new(),
            took: std::time::Duration::ZERO,
            unanswered_since: None,
            internal_error: None,
        };
        FinishedSession { number: 100 - index, index, plan: SessionPlan::default(), outcome }
    }

    #[test]
    fn the_first_to_end_badly_after_the_last_good_check_comes_first() {
        let history = vec![
            finished(1, Ending::Reset, 2),
            finished(2, Ending::Completed, 2),
            finished(3, Ending::NoReply, 2),
            finished(4, Ending::ClosedAsExpected, 2),
            finished(5, Ending::Reset, 3),
            finished(6, Ending::ConnectFailed("no greeting".into()), 0),
        ];
        // The check after session 2 was good: 3 and 5 ended badly after it.
        assert_eq!(suspects(&history, 3, FailureKind::Down), vec![2, 4, 3, 0, 1]);
    }

    #[test]
    fn for_a_hang_the_session_waiting_longest_comes_first() {
        let now = tokio::time::Instant::now();
        let in_flight = |index, waited_ms: u64| {
            let mut f = finished(index, Ending::InFlight, 2);
            f.outcome.unanswered_since = Some(now - Duration::from_millis(waited_ms));
            f
        };
        let history = vec![
            finished(1, Ending::NoReply, 2),
            in_flight(2, 10),
            in_flight(3, 900),
            finished(4, Ending::InFlight, 1),
            finished(5, Ending::Reset, 2),
        ];
        assert_eq!(suspects(&history, 0, FailureKind::Hang), vec![2, 1, 0, 3, 4]);
        assert_eq!(suspects(&history, 0, FailureKind::Down), vec![0, 1, 2, 3, 4], "a crash: as they ended");
    }
}
