//! How each loop waits for answers: [`plan_wait`] decides it, for every
//! loop the engine runs (a built-in test's, a script's, the loop of a
//! script's other commands), from one description of the loop
//! ([`LoopSite`]) and one lookup of where its servers run
//! ([`ServerPlacement`], once per distinct server). It returns a resolved
//! [`WaitMode`], never `--poll=auto`, and the reason, which
//! `--verbosity=4` prints per loop. Nothing else chooses how a loop
//! waits: the run layer lays the loops out and passes the answer on.
//!
//! The rule for `--poll=auto` (an explicit `--poll` is obeyed as given):
//!
//! - The epoll backend sleeps in `epoll_wait`; a script's other commands
//!   (its top level, `prepare`, `cleanup`, ...) sleep.
//! - A script's unpinned loop holding one state's connection, one query
//!   in flight, to a server that shares our cores over a unix socket and
//!   runs a thread per connection waits on that socket, as sysbench's
//!   threads do (docs/benchmarking.md#waits-on-the-socket). A built-in
//!   test's loops keep the ring there: their pinned loop on the ring drove
//!   as many queries for less of the client's CPU
//!   (docs/benchmarking.md#built-in-tests-on-the-ring).
//! - A pinned loop sleeps, whoever else runs on its core: spinning there
//!   gained no more than the rounds' spread and cost more of the client's
//!   CPU (docs/benchmarking.md#adaptive-spinning-against-sleeping). What the
//!   loop runs does not change that, so a script's pinned loops follow the
//!   built-in tests' rule.
//! - An unpinned loop of a script's states whose servers run off our cores
//!   looks briefly before it sleeps ([`WaitMode::Brief`],
//!   docs/benchmarking.md#a-brief-look); other unpinned loops sleep.
//!
//! Files: `placement.rs`: where a server runs, looked up once per server;
//! `spin.rs`: how long a loop spins before it sleeps.

mod placement;
pub(crate) mod spin;

use std::fmt;

#[cfg(test)]
use placement::{ServerHost, ServerProcess};
pub use placement::{ServerPlacement, ServerPlacements};

use super::{Backend, PollMode};

/// How a loop waits for answers, resolved for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitMode {
    /// Sleeps in the kernel.
    Sleep,
    /// Looks for answers until [`BRIEF_SPIN`](spin::BRIEF_SPIN) has
    /// passed since the wait began (sending what is queued included: after
    /// a send mostly a single look), then sleeps.
    Brief,
    /// Never sleeps.
    Spin,
    /// Each exchange on the connection's own socket: `send`, then `recv`,
    /// waiting in `poll(2)` (the loop holds one connection).
    OnSocket,
}

impl WaitMode {
    /// Whether a wait may spin before (or instead of) sleeping.
    pub fn spins(self) -> bool {
        matches!(self, WaitMode::Brief | WaitMode::Spin)
    }
}

impl PollMode {
    /// The wait an explicit `--poll` asks for, and why; `None` for `auto`,
    /// which [`plan_wait`] resolves.
    fn explicit(self) -> Option<LoopWait> {
        match self {
            PollMode::Auto => None,
            PollMode::Sleep => Some(LoopWait::asked(WaitMode::Sleep)),
            PollMode::AdaptiveRetired => Some(LoopWait { mode: WaitMode::Sleep, why: WaitReason::AdaptiveRetired }),
            PollMode::Spin => Some(LoopWait::asked(WaitMode::Spin)),
        }
    }
}

/// How a loop waits, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoopWait {
    pub mode: WaitMode,
    pub why: WaitReason,
}

/// Why a loop waits as it does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WaitReason {
    /// `--poll=` said so.
    Asked,
    /// `--poll=adaptive`, retired: it gained no more than the rounds' spread.
    AdaptiveRetired,
    /// The epoll backend (`--io=epoll`) always waits in `epoll_wait`.
    Epoll,
    /// A script's command other than `run`: its tasks run once.
    ScriptCommand,
    /// One connection to a server on our cores over a unix socket, a
    /// thread per connection.
    OnItsSocket,
    /// The loop is pinned to a core.
    Pinned,
    /// The loop is not pinned to a core (its affinity is unknown).
    Unpinned,
    /// `--lua-thread-per-state`: a loop per state.
    LoopPerState,
    /// A script's unpinned loop whose servers may run on our cores.
    ServerOnOurCores,
    /// A script's unpinned loop whose servers run off our cores.
    ServerOffOurCores,
}

/// What a loop runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoopRuns {
    /// A built-in test's connections.
    Test,
    /// A script's states (`run`); `thread_per_state`: a loop per state.
    ScriptStates { thread_per_state: bool },
    /// A script's other command (top level, `prepare`, `cleanup`, ...).
    ScriptCommand,
}

/// What is asked of every loop of a run, and what it runs on.
#[derive(Debug, Clone, Copy)]
pub struct WaitRequest<'a> {
    /// `--poll`.
    pub asked: PollMode,
    pub backend: Backend,
    /// `--pipeline`.
    pub pipeline: u32,
    /// The cores this process may use (`None`: unknown).
    pub our_cpus: Option<&'a [usize]>,
}

/// One loop, as the wait plan sees it.
#[derive(Debug, Clone)]
pub struct LoopSite<'a> {
    /// The core it is pinned to.
    pub cpu: Option<usize>,
    /// Connections (or script states) it holds.
    pub connections: usize,
    pub runs: LoopRuns,
    /// The servers its connections go to.
    pub servers: Vec<&'a ServerPlacement>,
}

/// How the loop at `site` waits, and why (the module's rule).
pub fn plan_wait(request: &WaitRequest<'_>, site: &LoopSite<'_>) -> LoopWait {
    let wait = |mode, why| LoopWait { mode, why };
    if let Some(explicit) = request.asked.explicit() {
        return explicit;
    }
    if request.backend == Backend::Tokio {
        return wait(WaitMode::Sleep, WaitReason::Epoll);
    }
    if site.runs == LoopRuns::ScriptCommand {
        return wait(WaitMode::Sleep, WaitReason::ScriptCommand);
    }
    if suits_socket_waits(request, site) {
        return wait(WaitMode::OnSocket, WaitReason::OnItsSocket);
    }
    if site.cpu.is_some() {
        return wait(WaitMode::Sleep, WaitReason::Pinned);
    }
    match site.runs {
        LoopRuns::ScriptStates { thread_per_state: true } => wait(WaitMode::Sleep, WaitReason::LoopPerState),
        LoopRuns::ScriptStates { .. } if site.servers.iter().any(|s| s.shares_cores(request.our_cpus)) => {
            wait(WaitMode::Sleep, WaitReason::ServerOnOurCores)
        }
        LoopRuns::ScriptStates { .. } => wait(WaitMode::Brief, WaitReason::ServerOffOurCores),
        LoopRuns::Test | LoopRuns::ScriptCommand => wait(WaitMode::Sleep, WaitReason::Unpinned),
    }
}

/// Whether the loop waits on its connection's socket: a script's, unpinned,
/// one connection, to a server that suits it ([`server_suits_socket_waits`]).
fn suits_socket_waits(request: &WaitRequest<'_>, site: &LoopSite<'_>) -> bool {
    matches!(site.runs, LoopRuns::ScriptStates { .. })
        && site.cpu.is_none()
        && site.connections == 1
        && !site.servers.is_empty()
        && site.servers.iter().all(|s| server_suits_socket_waits(request, s))
}

/// Whether a connection to `server` suits waiting on its own socket: one
/// query in flight, to a server on our cores over a unix socket that runs
/// a thread per connection.
fn server_suits_socket_waits(request: &WaitRequest<'_>, server: &ServerPlacement) -> bool {
    request.pipeline <= 1 && server.unix && server.thread_per_connection() && server.shares_cores(request.our_cpus)
}

impl LoopWait {
    /// `mode`, as an explicit `--poll` (or a test) asks for it.
    pub fn asked(mode: WaitMode) -> LoopWait {
        LoopWait { mode, why: WaitReason::Asked }
    }

    /// `event loop I (cpu C) sleeps when idle: why`, as `--verbosity=4`
    /// prints it.
    pub fn describe(&self, index: usize, cpu: Option<usize>) -> impl fmt::Display + '_ {
        Described { wait: self, index, cpu }
    }
}

struct Described<'a> {
    wait: &'a LoopWait,
    index: usize,
    cpu: Option<usize>,
}

impl fmt::Display for Described<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mode = match self.wait.mode {
            WaitMode::Sleep => "sleeps when idle",
            WaitMode::Spin => "spins when idle",
            WaitMode::Brief => "looks for answers a few microseconds, then sleeps, when idle",
            WaitMode::OnSocket => "waits for each answer on its connection's socket, as sysbench's threads do",
        };
        write!(f, "event loop {}", self.index)?;
        if let Some(cpu) = self.cpu {
            write!(f, " (cpu {cpu})")?;
        }
        write!(f, " {mode}: ")?;
        match &self.wait.why {
            WaitReason::Asked => f.write_str("as --poll says"),
            WaitReason::AdaptiveRetired => f.write_str(
                "--poll=adaptive is retired: it gained no more than the rounds' spread \
                 (docs/benchmarking.md#adaptive-spinning-against-sleeping)",
            ),
            WaitReason::Epoll => f.write_str("the epoll backend waits in epoll_wait (--io=uring can spin)"),
            WaitReason::ScriptCommand => f.write_str("a script's command other than run"),
            WaitReason::OnItsSocket => {
                f.write_str("the server shares this host's cores over a unix socket, a thread per connection")
            }
            WaitReason::Pinned => f.write_str(
                "it is pinned to a core, where spinning gained no more than the rounds' spread \
                 (docs/benchmarking.md#adaptive-spinning-against-sleeping)",
            ),
            WaitReason::Unpinned => f.write_str("it is not pinned to a core"),
            WaitReason::LoopPerState => f.write_str("a loop per state (--lua-thread-per-state)"),
            WaitReason::ServerOnOurCores => f.write_str("it is not pinned, and the server may run on our cores"),
            WaitReason::ServerOffOurCores => {
                f.write_str("it is not pinned (its core may be another loop's), and the server runs off our cores")
            }
        }?;
        f.write_str(" (--poll=sleep|spin to choose)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local(pid: u32, cpus: &[usize], threads: u64, unix: bool) -> ServerPlacement {
        let process = ServerProcess { pid, cpus: Some(cpus.to_vec()), threads: Some(threads) };
        ServerPlacement { unix, host: ServerHost::This(Some(process)), connections: 16 }
    }

    fn other_host() -> ServerPlacement {
        ServerPlacement { unix: false, host: ServerHost::Other, connections: 16 }
    }

    fn unfound() -> ServerPlacement {
        ServerPlacement { unix: true, host: ServerHost::This(None), connections: 16 }
    }

    /// A site and its expected wait: (what it runs, pinned to,
    /// connections, servers, backend, pipeline, the mode, why).
    type Case<'a> = (LoopRuns, Option<usize>, usize, Vec<&'a ServerPlacement>, Backend, u32, WaitMode, WaitReason);

    /// Every site the engine has, and how `--poll=auto` makes it wait:
    /// (what it runs, pinned to, connections, servers, backend,
    /// pipeline, the mode, why).
    #[test]
    fn each_site_waits_as_the_rule_says() {
        use LoopRuns::{ScriptCommand, ScriptStates, Test};
        use WaitMode::{Brief, OnSocket, Sleep};
        use WaitReason as R;
        let states = ScriptStates { thread_per_state: false };
        let per_state = ScriptStates { thread_per_state: true };
        let (uring, epoll) = (Backend::Uring, Backend::Tokio);
        let mariadb = local(7, &[0, 1], 64, true); // a unix socket, our cores, a thread per connection
        let mariadb_tcp = local(7, &[0, 1], 64, false);
        let on_core_1 = local(7, &[1], 64, true);
        let off_our_cores = local(7, &[2], 64, true); // pinned apart from every core of ours
        let proxy = local(9, &[0, 1], 4, true); // an event-loop server
        let on_core_0 = local(8, &[0], 64, true);
        let (elsewhere, unfound) = (other_host(), unfound());
        #[rustfmt::skip]
        let cases: Vec<Case<'_>> = vec![
            // Built-in tests: pinned loops, wherever the server runs.
            (Test, Some(0), 16, vec![&on_core_1], uring, 1, Sleep, R::Pinned),
            (Test, Some(0), 16, vec![&mariadb], uring, 1, Sleep, R::Pinned),
            (Test, Some(0), 16, vec![&on_core_1, &on_core_0], uring, 1, Sleep, R::Pinned),
            (Test, Some(0), 16, vec![&unfound], uring, 1, Sleep, R::Pinned),
            (Test, Some(0), 16, vec![&elsewhere], uring, 1, Sleep, R::Pinned),
            (Test, Some(0), 1, vec![&mariadb], uring, 1, Sleep, R::Pinned),
            (Test, Some(0), 16, vec![&elsewhere], epoll, 1, Sleep, R::Epoll),
            // Built-in tests, unpinned (no core to pin to): the ring.
            (Test, None, 1, vec![&mariadb], uring, 1, Sleep, R::Unpinned),
            (Test, None, 1, vec![&mariadb], uring, 4, Sleep, R::Unpinned),
            (Test, None, 1, vec![&mariadb_tcp], uring, 1, Sleep, R::Unpinned),
            (Test, None, 1, vec![&proxy], uring, 1, Sleep, R::Unpinned),
            (Test, None, 1, vec![&off_our_cores], uring, 1, Sleep, R::Unpinned),
            (Test, None, 1, vec![&unfound], uring, 1, Sleep, R::Unpinned),
            (Test, None, 1, vec![&mariadb], epoll, 1, Sleep, R::Epoll),
            // A script's states: the default loops, unpinned.
            (states, None, 8, vec![&elsewhere], uring, 1, Brief, R::ServerOffOurCores),
            (states, None, 8, vec![&off_our_cores], uring, 1, Brief, R::ServerOffOurCores),
            (states, None, 8, vec![&mariadb], uring, 1, Sleep, R::ServerOnOurCores),
            (states, None, 8, vec![&unfound], uring, 1, Sleep, R::ServerOnOurCores),
            (states, None, 1, vec![&mariadb], uring, 1, OnSocket, R::OnItsSocket),
            (states, None, 1, vec![&mariadb_tcp], uring, 1, Sleep, R::ServerOnOurCores),
            (states, None, 8, vec![&elsewhere], epoll, 1, Sleep, R::Epoll),
            // --lua-thread-per-state.
            (per_state, None, 1, vec![&elsewhere], uring, 1, Sleep, R::LoopPerState),
            (per_state, None, 1, vec![&mariadb], uring, 1, OnSocket, R::OnItsSocket),
            // A script's states, pinned (--cpus): the built-in tests' rule.
            (states, Some(0), 8, vec![&elsewhere], uring, 1, Sleep, R::Pinned),
            (states, Some(0), 8, vec![&on_core_1], uring, 1, Sleep, R::Pinned),
            (states, Some(0), 1, vec![&mariadb], uring, 1, Sleep, R::Pinned),
            // A script's other commands.
            (ScriptCommand, None, 1, vec![], uring, 1, Sleep, R::ScriptCommand),
            (ScriptCommand, None, 1, vec![], epoll, 1, Sleep, R::Epoll),
        ];
        let ours = [0, 1];
        for (runs, cpu, connections, servers, backend, pipeline, mode, why) in cases {
            let request = WaitRequest { asked: PollMode::Auto, backend, pipeline, our_cpus: Some(&ours) };
            let site = LoopSite { cpu, connections, runs, servers };
            let wait = plan_wait(&request, &site);
            assert_eq!(wait, LoopWait { mode, why }, "{site:?} on {backend:?}");
        }
    }

    #[test]
    fn an_explicit_poll_is_obeyed_everywhere() {
        let mariadb = local(7, &[0, 1], 64, true);
        let ours = [0, 1];
        let retired = LoopWait { mode: WaitMode::Sleep, why: WaitReason::AdaptiveRetired };
        for (asked, wait) in [
            (PollMode::Sleep, LoopWait::asked(WaitMode::Sleep)),
            (PollMode::AdaptiveRetired, retired),
            (PollMode::Spin, LoopWait::asked(WaitMode::Spin)),
        ] {
            for runs in [LoopRuns::Test, LoopRuns::ScriptStates { thread_per_state: false }, LoopRuns::ScriptCommand] {
                for backend in [Backend::Uring, Backend::Tokio] {
                    let request = WaitRequest { asked, backend, pipeline: 1, our_cpus: Some(&ours) };
                    let site = LoopSite { cpu: None, connections: 1, runs, servers: vec![&mariadb] };
                    assert_eq!(plan_wait(&request, &site), wait);
                }
            }
        }
    }

    #[test]
    fn the_wait_says_why() {
        let wait = LoopWait { mode: WaitMode::Sleep, why: WaitReason::Pinned };
        let line = wait.describe(0, Some(0)).to_string();
        assert!(line.starts_with("event loop 0 (cpu 0) sleeps when idle: it is pinned to a core"), "{line}");
        assert!(line.contains("#adaptive-spinning-against-sleeping"), "{line}");
        let retired = LoopWait { mode: WaitMode::Sleep, why: WaitReason::AdaptiveRetired };
        let line = retired.describe(1, None).to_string();
        assert!(line.contains("sleeps when idle: --poll=adaptive is retired"), "{line}");
        let socket = LoopWait { mode: WaitMode::OnSocket, why: WaitReason::OnItsSocket };
        let line = socket.describe(3, None).to_string();
        assert!(
            line.starts_with(
                "event loop 3 waits for each answer on its connection's socket, as sysbench's threads do: the"
            ),
            "{line}"
        );
    }
}
