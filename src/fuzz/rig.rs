//! Running sessions again against the server under test, bringing it back
//! first when it is down: what confirming, minimising and replaying a
//! failure need.

use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use thiserror::Error;
use tokio::time::Instant;

use super::control::{internal_failure, Checker, Failure, FailureKind};
use super::exec::{run_session, Limits, Outgoing, SessionOutcome};
use super::fuzz_options::Target;
use super::internal_error::InternalErrors;
use super::lines::err_line;
use super::run_clock::{past, sleep_until_end, within, OUT_OF_TIME};
use super::table_setup::Setup;
use super::vigil::Vigil;

/// How long `--restart-cmd` itself may run.
const RESTART_CMD_LIMIT: Duration = Duration::from_secs(120);

/// Why the server could not be brought back.
#[derive(Debug, Error)]
pub enum RestartError {
    #[error("cannot run --restart-cmd {cmd:?}: {source}")]
    Spawn { cmd: String, source: std::io::Error },
    #[error("--restart-cmd {cmd:?} exited with {status}: check that it restarts the server (it runs with sh -c)")]
    Failed { cmd: String, status: ExitStatus },
    #[error("--restart-cmd {cmd:?} did not finish within {} s", .limit.as_secs())]
    TooSlow { cmd: String, limit: Duration },
    #[error("the server did not answer again within {} s{}", .waited.as_secs(), if *.restart_cmd { "; give it longer with --fuzz-restart-wait" } else { "; give --restart-cmd to bring it back, or --fuzz-restart-wait for longer" })]
    NotBack { waited: Duration, restart_cmd: bool },
    #[error("{OUT_OF_TIME} while waiting for the server to come back; give a longer --time or --fuzz-overtime")]
    OutOfTime,
}

/// The server under test, its control connection, and how to restart it.
#[derive(Debug)]
pub struct Rig {
    pub target: Target,
    pub limits: Limits,
    pub checker: Checker,
    pub restart_cmd: Option<String>,
    /// Restarts so far.
    pub restarts: u32,
    /// The last check failed: no need to check again before restarting.
    pub known_down: bool,
    /// The sessions' late answers wait for this rig's checks.
    pub vigil: Arc<Vigil>,
    /// How long a restarted (or self-restarting) server may take to
    /// answer again (`--fuzz-restart-wait`).
    pub restart_wait: Duration,
    /// The time spent waiting for the server to come back, in all: what
    /// the time limits of confirming and minimising leave out.
    pub waited: Duration,
    /// The tables the next sessions need: made afresh before they run.
    pub setup: Setup,
    /// The run's hard end (`--time` plus `--fuzz-overtime`): nothing
    /// waits for the server past it; `None` without a limit.
    pub end: Option<Instant>,
    /// Which error answers betray an internal fault.
    pub judge: Arc<InternalErrors>,
}

impl Rig {
    /// Makes sure the server answers: if not, runs `--restart-cmd` (or,
    /// without one, waits for the server to come back by itself, as under
    /// mysqld_safe or systemd) and waits until it answers.
    pub async fn ensure_up(&mut self) -> Result<(), RestartError> {
        if self.out_of_time() {
            return Err(RestartError::OutOfTime);
        }
        self.checker.rebase();
        if !std::mem::take(&mut self.known_down) && self.checker.check().await.is_none() {
            return Ok(());
        }
        let began = Instant::now();
        let back = self.bring_back().await;
        self.waited += began.elapsed();
        back
    }

    /// Whether the run's hard end has passed: what is left of confirming
    /// and minimising gives up, and the failure is saved as far as it got.
    pub fn out_of_time(&self) -> bool {
        past(self.end)
    }

    async fn bring_back(&mut self) -> Result<(), RestartError> {
        match &self.restart_cmd {
            Some(cmd) => within(self.end, run_restart_cmd(cmd)).await.ok_or(RestartError::OutOfTime)??,
            None => err_line(format_args!(
                "wirebench fuzz: waiting up to {} s for the server to come back by itself (no --restart-cmd)",
                self.restart_wait.as_secs()
            )),
        }
        self.restarts += 1;
        self.wait_back().await
    }

    /// Waits up to `--fuzz-restart-wait` for the server to answer the
    /// control connection again (after a restart, or while one goes on).
    pub async fn wait_back(&mut self) -> Result<(), RestartError> {
        let until = Instant::now() + self.restart_wait;
        let mut pause = Duration::from_millis(20);
        while Instant::now() < until {
            if self.out_of_time() {
                return Err(RestartError::OutOfTime);
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_millis(500));
            self.checker.rebase();
            if within(self.end, self.checker.check()).await.ok_or(RestartError::OutOfTime)?.is_none() {
                self.known_down = false;
                return Ok(());
            }
        }
        Err(RestartError::NotBack { waited: self.restart_wait, restart_cmd: self.restart_cmd.is_some() })
    }

    /// Runs `sessions` at the same time, each on its own connection, then
    /// asks the control connection (see [`Rig::check_for_a_while`]). A
    /// session whose answer is late has the server checked at once (with
    /// the deadline that judged the fuzzing run); a failure then halts the
    /// sessions where they are.
    pub async fn run_and_check<T>(&mut self, sessions: Vec<Vec<T>>) -> (Option<Failure>, Vec<SessionOutcome>)
    where
        T: Outgoing + Send + Sync + 'static,
    {
        let made = within(self.end, self.setup.make(&self.target, self.limits.connect)).await;
        if let Some(Err(e)) = made {
            err_line(format_args!("wirebench fuzz: cannot make the tables the session needs: {e}"));
        }
        self.vigil.resume();
        let tasks: Vec<_> = sessions
            .into_iter()
            .map(|items| {
                let target = self.target.clone();
                let limits = self.limits;
                let vigil = self.vigil.clone();
                let judge = self.judge.clone();
                tokio::spawn(async move { run_session(&target, &items, &limits, &judge, &vigil).await })
            })
            .collect();
        let all_ended = join_sessions(tasks);
        tokio::pin!(all_ended);
        let end = self.end;
        let failed = tokio::select! {
            outcomes = &mut all_ended => Err(outcomes),
            failure = check_when_asked(&self.vigil, &mut self.checker) => Ok(Some(failure)),
            // The run's time is up: the sessions stop where they are,
            // and the caller saves what it has.
            () = sleep_until_end(end) => Ok(None),
        };
        let (failure, outcomes) = match failed {
            Ok(failure) => {
                self.vigil.halt();
                (failure, all_ended.await)
            }
            Err(outcomes) => {
                // An internal error is the session's own answer: the
                // server is up, and that answer is the verdict.
                let internal = outcomes.iter().find_map(|o| o.internal_error.as_ref());
                let internal = internal.map(|(state, error)| internal_failure(state, error));
                let suspicious = outcomes.iter().any(|o| o.ending.is_suspicious());
                match internal {
                    Some(failure) => (Some(failure), outcomes),
                    None => (self.check_for_a_while(suspicious).await, outcomes),
                }
            }
        };
        self.known_down = failure.as_ref().is_some_and(|f| f.kind.may_leave_it_down());
        (failure, outcomes)
    }

    /// Checks the server now and a moment later; after a session that
    /// ended as a dying server ends it, for 1.5 s: a crashing server keeps
    /// answering other connections while its signal handler writes the
    /// backtrace (MariaDB's takes a second or more).
    async fn check_for_a_while(&mut self, suspicious: bool) -> Option<Failure> {
        let pauses: &[u64] = if suspicious { &[0, 100, 200, 400, 800] } else { &[0, 100] };
        for &pause in pauses {
            tokio::time::sleep(Duration::from_millis(pause)).await;
            if let Some(failure) = self.checker.check().await {
                return Some(failure);
            }
        }
        None
    }
}

/// The outcomes of the sessions' tasks, in their order.
async fn join_sessions(tasks: Vec<tokio::task::JoinHandle<SessionOutcome>>) -> Vec<SessionOutcome> {
    let mut outcomes = Vec::new();
    for task in tasks {
        if let Ok(outcome) = task.await {
            outcomes.push(outcome);
        }
    }
    outcomes
}

/// Checks the server whenever a session asks; returns the first failure.
async fn check_when_asked(vigil: &Vigil, checker: &mut Checker) -> Failure {
    loop {
        vigil.asked().await;
        let began = Instant::now();
        match checker.check().await {
            Some(failure) => return failure,
            None => vigil.check_passed(began),
        }
    }
}

/// Whether two failures are the same bug as far as the outside can tell:
/// the same kind, or both a dead server however it showed. A protocol
/// deviation is its own kind: the server was up.
pub fn same_bug(a: &Failure, b: &Failure) -> bool {
    let dead = |f: &Failure| matches!(f.kind, FailureKind::Down | FailureKind::ProcessGone | FailureKind::Log);
    a.kind == b.kind || dead(a) && dead(b)
}

/// Runs `--restart-cmd` through `sh -c` (its output goes to stderr) and
/// waits for it, up to [`RESTART_CMD_LIMIT`].
async fn run_restart_cmd(cmd: &str) -> Result<(), RestartError> {
    err_line(format_args!("wirebench fuzz: restarting the server: {cmd}"));
    let child = std::process::Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .map_err(|source| RestartError::Spawn { cmd: cmd.to_owned(), source })?;
    // Killed when abandoned: too slow, or the run's time is up.
    let mut child = KilledOnDrop(child);
    let until = Instant::now() + RESTART_CMD_LIMIT;
    loop {
        match child.0.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(status)) => return Err(RestartError::Failed { cmd: cmd.to_owned(), status }),
            Ok(None) if Instant::now() < until => tokio::time::sleep(Duration::from_millis(50)).await,
            Ok(None) => return Err(RestartError::TooSlow { cmd: cmd.to_owned(), limit: RESTART_CMD_LIMIT }),
            Err(source) => return Err(RestartError::Spawn { cmd: cmd.to_owned(), source }),
        }
    }
}

/// A child process killed and reaped when dropped, unless it has exited.
struct KilledOnDrop(std::process::Child);

impl Drop for KilledOnDrop {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}
