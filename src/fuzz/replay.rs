//! `wirebench fuzz-replay FILE`: the reproducer's sessions sent again (the
//! sessions before the failing one too, at the same time, when it needs
//! them), then the control connection says whether the server survived.

use std::fmt::Write as _;

use super::campaign::ANSWER_TIMEOUT;
use super::control::{Checker, Failure};
use super::error::FuzzError;
use super::exec::{Limits, Rendered};
use super::lines::out_line;
use super::options::ReplayOptions;
use super::reproducer::{read_reproducer, Reproduces};
use super::rig::Rig;
use super::safety;
use super::watch::Watch;

/// What a replay found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplayVerdict {
    /// The failure happened again (exit status 3).
    Failed(Failure),
    /// The server answers as before (exit status 0).
    Survived,
}

/// Runs `wirebench fuzz-replay`.
pub fn replay(options: &ReplayOptions) -> Result<ReplayVerdict, FuzzError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(FuzzError::Runtime)?;
    runtime.block_on(replay_file(options))
}

async fn replay_file(options: &ReplayOptions) -> Result<ReplayVerdict, FuzzError> {
    let reproducer = read_reproducer(&options.file)?;
    safety::check_target(&options.target.endpoint, options.allow_remote)?;
    let watch = Watch::start(&options.watch)?;
    let mut checker = Checker::new(&options.target, options.deadline, watch);
    if let Some(failure) = checker.check().await {
        return Err(FuzzError::DownBeforeReplay { reason: failure.summary });
    }
    let mut sessions: Vec<Vec<Rendered>> = Vec::new();
    if reproducer.reproduces != Reproduces::Alone {
        sessions.extend(reproducer.history.iter().map(|s| s.iter().map(|p| p.rendered.clone()).collect()));
    }
    sessions.push(reproducer.failing.iter().map(|p| p.rendered.clone()).collect());
    let mut line = format!("wirebench fuzz-replay: {} ({} packets", options.file.display(), reproducer.failing.len());
    if sessions.len() > 1 {
        let _ = write!(line, ", with the {} sessions before it at the same time", sessions.len() - 1);
    }
    let _ = write!(line, ") against {}; it first saw: {}", options.target.endpoint, reproducer.observed);
    out_line(&line);
    let mut rig = Rig {
        target: options.target.clone(),
        limits: Limits { connect: options.deadline, answer: ANSWER_TIMEOUT },
        checker,
        restart_cmd: None,
        restarts: 0,
        known_down: false,
    };
    let (failure, outcomes) = rig.run_and_check(sessions).await;
    if let Some(failing) = outcomes.last() {
        for state in &failing.states {
            out_line(format_args!("  {state}"));
        }
    }
    Ok(match failure {
        Some(failure) => {
            out_line(format_args!("wirebench fuzz-replay: FAILURE again: {}", failure.summary));
            for detail in &failure.details {
                out_line(format_args!("  {detail}"));
            }
            ReplayVerdict::Failed(failure)
        }
        None => {
            out_line("wirebench fuzz-replay: the server survived (it answers the control connection)");
            ReplayVerdict::Survived
        }
    })
}
