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
//! - An unpinned loop holding one connection, one query in flight, to a
//!   server that shares our cores over a unix socket and runs a thread per
//!   connection waits on that socket, as sysbench's threads do
//!   (docs/benchmarking.md#waits-on-the-socket).
//! - A pinned loop spins (adaptively) when its core is its own: no server
//!   may run on it, and against another host a core is left over for the
//!   kernel's network work and the report thread; else it sleeps. What the
//!   loop runs does not change whose core it is, so a script's pinned
//!   loops follow the built-in tests' rule.
//! - An unpinned loop of a script's states whose servers run off our cores
//!   looks briefly before it sleeps ([`WaitMode::Brief`],
//!   docs/benchmarking.md#a-brief-look); other unpinned loops sleep.
//!
//! Files: `placement.rs`: where a server runs, looked up once per server.

mod placement;

use std::fmt;

pub use placement::{ServerHost, ServerPlacement, ServerPlacements, ServerProcess};

use super::{Backend, PollMode};

/// How a loop waits for answers, resolved for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitMode {
    /// Sleeps in the kernel.
    Sleep,
    /// Looks for answers until [`BRIEF_SPIN`](super::spin::BRIEF_SPIN) has
    /// passed since the wait began (sending what is queued included: after
    /// a send mostly a single look), then sleeps.
    Brief,
    /// Spins as long as answers have been taking, then sleeps; not while
    /// another task wants its core (`busy_core.rs`).
    Adaptive,
    /// Never sleeps.
    Spin,
    /// Each exchange on the connection's own socket: `send`, then `recv`,
    /// waiting in `poll(2)` (the loop holds one connection).
    OnSocket,
}

impl WaitMode {
    /// Whether a wait may spin before (or instead of) sleeping.
    pub fn spins(self) -> bool {
        matches!(self, WaitMode::Brief | WaitMode::Adaptive | WaitMode::Spin)
    }
}

impl PollMode {
    /// The wait an explicit `--poll` asks for; `None` for `auto`, which
    /// [`plan_wait`] resolves.
    fn explicit(self) -> Option<WaitMode> {
        match self {
            PollMode::Auto => None,
            PollMode::Sleep => Some(WaitMode::Sleep),
            PollMode::Adaptive => Some(WaitMode::Adaptive),
            PollMode::Spin => Some(WaitMode::Spin),
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
    /// The epoll backend (`--io=epoll`) always waits in `epoll_wait`.
    Epoll,
    /// A script's command other than `run`: its tasks run once.
    ScriptCommand,
    /// One connection to a server on our cores over a unix socket, a
    /// thread per connection.
    OnItsSocket,
    /// A server on this host may run on the loop's core.
    SharedWithServer { pid: u32 },
    /// A server on this host whose process or cores could not be found.
    ServerNotFound,
    /// Every server runs on this host on other cores, or on another host
    /// with a core to spare here.
    CoreOfItsOwn { servers: Vec<u32>, other_host: bool },
    /// A server on another host, and no core left over here.
    NoSpareCore { cores: usize, loops: usize },
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
    /// The run's loops.
    pub loops: usize,
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
    if let Some(mode) = request.asked.explicit() {
        return wait(mode, WaitReason::Asked);
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
    if let Some(cpu) = site.cpu {
        let cores = request.our_cpus.map_or(1, <[usize]>::len);
        let (mode, why) = pinned_wait(cpu, &site.servers, cores, request.loops);
        return wait(mode, why);
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

/// Whether the loop waits on its connection's socket: unpinned, one
/// connection, one query in flight, to a server on our cores over a unix
/// socket that runs a thread per connection.
fn suits_socket_waits(request: &WaitRequest<'_>, site: &LoopSite<'_>) -> bool {
    site.cpu.is_none()
        && site.connections == 1
        && request.pipeline <= 1
        && !site.servers.is_empty()
        && site.servers.iter().all(|s| s.unix && s.thread_per_connection() && s.shares_cores(request.our_cpus))
}

/// A pinned loop on `cpu` whose connections go to `servers`, on a machine
/// with `cores` cores and `loops` loops: adaptive when its core is its own.
fn pinned_wait(cpu: usize, servers: &[&ServerPlacement], cores: usize, loops: usize) -> (WaitMode, WaitReason) {
    let mut pids = Vec::new();
    let mut other_host = false;
    for server in servers {
        match &server.host {
            ServerHost::This(Some(ServerProcess { pid, cpus: Some(cpus), .. })) => {
                if cpus.contains(&cpu) {
                    return (WaitMode::Sleep, WaitReason::SharedWithServer { pid: *pid });
                }
                if !pids.contains(pid) {
                    pids.push(*pid);
                }
            }
            ServerHost::This(_) => return (WaitMode::Sleep, WaitReason::ServerNotFound),
            ServerHost::Other if cores <= loops => return (WaitMode::Sleep, WaitReason::NoSpareCore { cores, loops }),
            ServerHost::Other => other_host = true,
        }
    }
    (WaitMode::Adaptive, WaitReason::CoreOfItsOwn { servers: pids, other_host })
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
            WaitMode::Adaptive => "spins briefly, then sleeps, when idle",
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
            WaitReason::Epoll => f.write_str("the epoll backend waits in epoll_wait (--io=uring can spin)"),
            WaitReason::ScriptCommand => f.write_str("a script's command other than run"),
            WaitReason::OnItsSocket => {
                f.write_str("the server shares this host's cores over a unix socket, a thread per connection")
            }
            WaitReason::SharedWithServer { pid } => write!(f, "the server (pid {pid}) may run on its core"),
            WaitReason::ServerNotFound => {
                f.write_str("the server is on this host, but its process or cores could not be found")
            }
            WaitReason::CoreOfItsOwn { servers, other_host } => {
                f.write_str("its core is its own")?;
                for pid in servers {
                    write!(f, "; the server (pid {pid}) runs on other cores")?;
                }
                if *other_host {
                    f.write_str("; a server on another host, and this one has a core to spare")?;
                }
                Ok(())
            }
            WaitReason::NoSpareCore { cores, loops } => {
                write!(f, "the server is on another host, but the {loops} loops take all {cores} cores here")
            }
            WaitReason::Unpinned => f.write_str("it is not pinned to a core"),
            WaitReason::LoopPerState => f.write_str("a loop per state (--lua-thread-per-state)"),
            WaitReason::ServerOnOurCores => f.write_str("it is not pinned, and the server may run on our cores"),
            WaitReason::ServerOffOurCores => {
                f.write_str("it is not pinned (its core may be another loop's), and the server runs off our cores")
            }
        }?;
        f.write_str(" (--poll=sleep|adaptive|spin to choose)")
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
    /// connections, servers, loops, backend, pipeline, the mode, why).
    type Case<'a> =
        (LoopRuns, Option<usize>, usize, Vec<&'a ServerPlacement>, usize, Backend, u32, WaitMode, WaitReason);

    /// Every site the engine has, and how `--poll=auto` makes it wait:
    /// (what it runs, pinned to, connections, servers, loops, backend,
    /// pipeline, the mode, why).
    #[test]
    fn each_site_waits_as_the_rule_says() {
        use LoopRuns::{ScriptCommand, ScriptStates, Test};
        use WaitMode::{Adaptive, Brief, OnSocket, Sleep};
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
        let own = |servers: Vec<u32>, other_host| R::CoreOfItsOwn { servers, other_host };
        #[rustfmt::skip]
        let cases: Vec<Case<'_>> = vec![
            // Built-in tests: pinned loops.
            (Test, Some(0), 16, vec![&on_core_1], 1, uring, 1, Adaptive, own(vec![7], false)),
            (Test, Some(0), 16, vec![&mariadb], 1, uring, 1, Sleep, R::SharedWithServer { pid: 7 }),
            (Test, Some(0), 16, vec![&on_core_1, &on_core_0], 1, uring, 1, Sleep, R::SharedWithServer { pid: 8 }),
            (Test, Some(0), 16, vec![&unfound], 1, uring, 1, Sleep, R::ServerNotFound),
            (Test, Some(0), 16, vec![&elsewhere], 1, uring, 1, Adaptive, own(vec![], true)),
            (Test, Some(0), 16, vec![&elsewhere], 2, uring, 1, Sleep, R::NoSpareCore { cores: 2, loops: 2 }),
            (Test, Some(0), 16, vec![&elsewhere], 1, epoll, 1, Sleep, R::Epoll),
            // Built-in tests: a loop per connection, unpinned.
            (Test, None, 1, vec![&mariadb], 16, uring, 1, OnSocket, R::OnItsSocket),
            (Test, None, 1, vec![&mariadb], 16, uring, 4, Sleep, R::Unpinned),
            (Test, None, 1, vec![&mariadb_tcp], 16, uring, 1, Sleep, R::Unpinned),
            (Test, None, 1, vec![&proxy], 16, uring, 1, Sleep, R::Unpinned),
            (Test, None, 1, vec![&off_our_cores], 16, uring, 1, Sleep, R::Unpinned),
            (Test, None, 1, vec![&unfound], 16, uring, 1, Sleep, R::Unpinned),
            (Test, None, 1, vec![&mariadb], 16, epoll, 1, Sleep, R::Epoll),
            // A script's states: the default loops, unpinned.
            (states, None, 8, vec![&elsewhere], 2, uring, 1, Brief, R::ServerOffOurCores),
            (states, None, 8, vec![&off_our_cores], 2, uring, 1, Brief, R::ServerOffOurCores),
            (states, None, 8, vec![&mariadb], 2, uring, 1, Sleep, R::ServerOnOurCores),
            (states, None, 8, vec![&unfound], 2, uring, 1, Sleep, R::ServerOnOurCores),
            (states, None, 1, vec![&mariadb], 16, uring, 1, OnSocket, R::OnItsSocket),
            (states, None, 1, vec![&mariadb_tcp], 16, uring, 1, Sleep, R::ServerOnOurCores),
            (states, None, 8, vec![&elsewhere], 2, epoll, 1, Sleep, R::Epoll),
            // --lua-thread-per-state.
            (per_state, None, 1, vec![&elsewhere], 16, uring, 1, Sleep, R::LoopPerState),
            (per_state, None, 1, vec![&mariadb], 16, uring, 1, OnSocket, R::OnItsSocket),
            // A script's states, pinned (--cpus): the built-in tests' rule.
            (states, Some(0), 8, vec![&elsewhere], 1, uring, 1, Adaptive, own(vec![], true)),
            (states, Some(0), 8, vec![&elsewhere], 2, uring, 1, Sleep, R::NoSpareCore { cores: 2, loops: 2 }),
            (states, Some(0), 8, vec![&on_core_1], 1, uring, 1, Adaptive, own(vec![7], false)),
            (states, Some(0), 1, vec![&mariadb], 1, uring, 1, Sleep, R::SharedWithServer { pid: 7 }),
            // A script's other commands.
            (ScriptCommand, None, 1, vec![], 1, uring, 1, Sleep, R::ScriptCommand),
            (ScriptCommand, None, 1, vec![], 1, epoll, 1, Sleep, R::Epoll),
        ];
        let ours = [0, 1];
        for (runs, cpu, connections, servers, loops, backend, pipeline, mode, why) in cases {
            let request = WaitRequest { asked: PollMode::Auto, backend, pipeline, our_cpus: Some(&ours), loops };
            let site = LoopSite { cpu, connections, runs, servers };
            let wait = plan_wait(&request, &site);
            assert_eq!(wait, LoopWait { mode, why }, "{site:?} with {loops} loops on {backend:?}");
        }
    }

    #[test]
    fn an_explicit_poll_is_obeyed_everywhere() {
        let mariadb = local(7, &[0, 1], 64, true);
        let ours = [0, 1];
        for (asked, mode) in [(PollMode::Sleep, WaitMode::Sleep), (PollMode::Adaptive, WaitMode::Adaptive)]
            .into_iter()
            .chain([(PollMode::Spin, WaitMode::Spin)])
        {
            for runs in [LoopRuns::Test, LoopRuns::ScriptStates { thread_per_state: false }, LoopRuns::ScriptCommand] {
                for backend in [Backend::Uring, Backend::Tokio] {
                    let request = WaitRequest { asked, backend, pipeline: 1, our_cpus: Some(&ours), loops: 16 };
                    let site = LoopSite { cpu: None, connections: 1, runs, servers: vec![&mariadb] };
                    assert_eq!(plan_wait(&request, &site), LoopWait { mode, why: WaitReason::Asked });
                }
            }
        }
    }

    #[test]
    fn the_wait_says_why() {
        let wait = LoopWait {
            mode: WaitMode::Adaptive,
            why: WaitReason::CoreOfItsOwn { servers: vec![42], other_host: false },
        };
        let line = wait.describe(0, Some(0)).to_string();
        assert!(line.starts_with("event loop 0 (cpu 0) spins briefly, then sleeps"), "{line}");
        assert!(line.contains("the server (pid 42) runs on other cores"), "{line}");
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
