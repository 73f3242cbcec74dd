//! `--poll=auto` (the default): which loops spin before they sleep.
//!
//! A loop that sleeps in the kernel while it waits for answers pays a
//! wake-up per batch of them, and so does whoever wakes it: measured with
//! MariaDB on a core of its own, spinning drove it 20-25% faster. Spinning
//! only pays when the loop's core is its own: on a core the server also
//! runs on, every spin is time taken from the server. So a loop spins
//! (adaptively: briefly, then sleeps) when
//!
//! - it is pinned to a core, and
//! - every server it talks to either runs on this host, is found (its
//!   process through the socket: the peer's credentials for a unix
//!   socket, `/proc/net/tcp` and the processes' descriptors for TCP) and
//!   may not run on that core (`Cpus_allowed_list` of every one of its
//!   threads), or is on another host while this machine has more cores
//!   than loops (one is left for the kernel's network work and the report
//!   thread);
//!
//! and sleeps otherwise, including when a local server's process cannot be
//! found (another user's, without the right to read its descriptors): the
//! cautious guess. An explicit `--poll=` is obeyed as given.

use std::collections::HashMap;
use std::fmt;
use std::net::SocketAddr;

use super::{allowed_cpus, AnswerWait, Backend, LoopPlan, PollMode, StdSocket};
use crate::client::peer::{is_local, tcp_peer_pid, unix_peer_pid};

/// What a loop does with nothing to do, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PollChoice {
    pub index: usize,
    pub cpu: Option<usize>,
    /// Never [`PollMode::Auto`].
    pub mode: PollMode,
    pub why: PollReason,
}

/// Why a loop polls as it does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PollReason {
    /// `--poll=` said so.
    Asked,
    /// The tokio backend (`--io=epoll`) always waits in `epoll_wait`.
    Epoll,
    /// The loop is not pinned to a core (its affinity is unknown).
    Unpinned,
    /// A server on this host may run on the loop's core.
    SharedWithServer { pid: u32 },
    /// A server on this host whose process or cores could not be found.
    ServerNotFound,
    /// Every server runs on this host on other cores, or elsewhere with a
    /// core to spare here.
    CoreOfItsOwn { servers: Vec<u32>, remote: bool },
    /// A server on another host, and no core left over here.
    NoSpareCore { cores: usize, loops: usize },
    /// The loop holds one connection, over a unix socket to a server on
    /// its cores that runs a thread per connection, and waits for its
    /// answers on the socket
    /// ([`AnswerWait::Socket`](super::AnswerWait::Socket)).
    OnItsSocket,
}

impl fmt::Display for PollChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mode = match self.mode {
            PollMode::Sleep => "sleeps when idle",
            PollMode::Adaptive | PollMode::Auto => "spins briefly, then sleeps, when idle",
            PollMode::Spin => "spins when idle",
            PollMode::Brief => "looks for answers a few microseconds, then sleeps, when idle",
        };
        write!(f, "event loop {}", self.index)?;
        if let Some(cpu) = self.cpu {
            write!(f, " (cpu {cpu})")?;
        }
        write!(f, " {mode}: ")?;
        match &self.why {
            PollReason::Asked => f.write_str("as --poll says"),
            PollReason::Epoll => f.write_str("the epoll backend waits in epoll_wait (--io=uring can spin)"),
            PollReason::Unpinned => f.write_str("it is not pinned to a core"),
            PollReason::SharedWithServer { pid } => write!(f, "the server (pid {pid}) may run on its core"),
            PollReason::ServerNotFound => {
                f.write_str("the server is on this host, but its process or cores could not be found")
            }
            PollReason::CoreOfItsOwn { servers, remote } => {
                f.write_str("its core is its own")?;
                for pid in servers {
                    write!(f, "; the server (pid {pid}) runs on other cores")?;
                }
                if *remote {
                    f.write_str("; a server on another host, and this one has a core to spare")?;
                }
                Ok(())
            }
            PollReason::NoSpareCore { cores, loops } => {
                write!(f, "the server is on another host, but the {loops} loops take all {cores} cores here")
            }
            PollReason::OnItsSocket => f.write_str(
                "it waits for each answer on its connection's socket, as sysbench's threads do: the server shares \
                 this host's cores over a unix socket, a thread per connection",
            ),
        }
        .and_then(|()| f.write_str(" (--poll=sleep|adaptive|spin to choose)"))
    }
}

/// Where a server is, as seen from one connection.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ServerSite {
    Remote,
    /// On this host: its process and the cores its threads may run on,
    /// when found.
    Local(Option<ServerProcess>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct ServerProcess {
    pid: u32,
    cpus: Vec<usize>,
}

/// Sets each loop's polling: `asked` when explicit, else by the rule
/// above; says what was chosen and why. Reads `/proc` once per distinct
/// server, before the run.
pub fn choose_polling(plans: &mut [LoopPlan], backend: Backend, asked: PollMode) -> Vec<PollChoice> {
    let cores = allowed_cpus().map_or(1, |cpus| cpus.len());
    let loops = plans.len();
    let mut sites: HashMap<PeerKey, ServerSite> = HashMap::new();
    let mut choices = Vec::with_capacity(plans.len());
    for (index, plan) in plans.iter_mut().enumerate() {
        let (mode, why) = if asked != PollMode::Auto {
            (asked, PollReason::Asked)
        } else if plan.answers == AnswerWait::Socket && backend == Backend::Uring {
            (PollMode::Sleep, PollReason::OnItsSocket)
        } else if backend == Backend::Tokio {
            (PollMode::Sleep, PollReason::Epoll)
        } else {
            let seen: Vec<ServerSite> = plan
                .connections
                .iter()
                .map(|c| sites.entry(peer_key(&c.socket)).or_insert_with(|| server_site(&c.socket)).clone())
                .collect();
            loop_polling(plan.cpu, &seen, cores, loops)
        };
        plan.poll = mode;
        choices.push(PollChoice { index, cpu: plan.cpu, mode, why });
    }
    choices
}

/// The rule, for a loop on `cpu` whose connections see these servers, on a
/// machine with `cores` cores and `loops` loops.
fn loop_polling(cpu: Option<usize>, sites: &[ServerSite], cores: usize, loops: usize) -> (PollMode, PollReason) {
    let Some(cpu) = cpu else { return (PollMode::Sleep, PollReason::Unpinned) };
    let mut servers = Vec::new();
    let mut remote = false;
    for site in sites {
        match site {
            ServerSite::Local(None) => return (PollMode::Sleep, PollReason::ServerNotFound),
            ServerSite::Local(Some(p)) if p.cpus.contains(&cpu) => {
                return (PollMode::Sleep, PollReason::SharedWithServer { pid: p.pid })
            }
            ServerSite::Local(Some(p)) if !servers.contains(&p.pid) => servers.push(p.pid),
            ServerSite::Local(Some(_)) => {}
            ServerSite::Remote if cores <= loops => return (PollMode::Sleep, PollReason::NoSpareCore { cores, loops }),
            ServerSite::Remote => remote = true,
        }
    }
    (PollMode::Adaptive, PollReason::CoreOfItsOwn { servers, remote })
}

/// What identifies a server cheaply: its address, or the peer process of
/// a unix socket.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum PeerKey {
    Tcp(Option<SocketAddr>),
    Unix(Option<u32>),
}

fn peer_key(socket: &StdSocket) -> PeerKey {
    match socket {
        StdSocket::Tcp(s) => PeerKey::Tcp(s.peer_addr().ok()),
        StdSocket::Unix(s) => PeerKey::Unix(unix_peer_pid(s)),
    }
}

fn server_site(socket: &StdSocket) -> ServerSite {
    let pid = match socket {
        StdSocket::Unix(s) => unix_peer_pid(s),
        StdSocket::Tcp(s) => match (s.local_addr(), s.peer_addr()) {
            (Ok(ours), Ok(theirs)) if is_local(ours.ip(), theirs.ip()) => tcp_peer_pid(ours, theirs),
            (Ok(_), Ok(_)) => return ServerSite::Remote,
            _ => None,
        },
    };
    ServerSite::Local(pid.and_then(|pid| Some(ServerProcess { pid, cpus: process_cpus(pid)? })))
}

/// Whether a server at `endpoint` runs on this host on cores this
/// process may use too (found without connecting: the process listening
/// on its socket or port, and its threads' cores); a server elsewhere does
/// not, and one on this host whose process cannot be found is taken to.
pub fn server_shares_our_cores(endpoint: &crate::client::Endpoint) -> bool {
    endpoint.is_on_this_host() && process_shares_our_cores(crate::client::peer::listener_pid(endpoint))
}

/// Whether process `pid` may run on a core this process may use; one that
/// was not found, or whose cores are unknown, is taken to.
fn process_shares_our_cores(pid: Option<u32>) -> bool {
    match (pid.and_then(process_cpus), allowed_cpus()) {
        (Some(theirs), Some(ours)) => theirs.iter().any(|cpu| ours.contains(cpu)),
        _ => true,
    }
}

/// Whether loops holding `connections` connections to the server at
/// `endpoint` each should wait for their answers on the socket
/// ([`AnswerWait::Socket`]): a unix socket to a server that shares our
/// cores ([`server_shares_our_cores`]) and looks like it runs a thread per
/// connection, as MySQL and MariaDB do by default: its process has at
/// least `connections` threads. An event-loop server (a proxy, the null
/// server) serves every connection from a few threads, and gains nothing
/// from a client thread that waits on each socket (against the null
/// server, 16 such threads drove 95-115k qps where one loop on the ring
/// drove 170k). Threads a server keeps from earlier connections (its
/// thread cache) count: they serve the next ones. Its process is looked
/// up once.
fn socket_waits_suit(endpoint: &crate::client::Endpoint, connections: usize) -> bool {
    if !matches!(endpoint, crate::client::Endpoint::Unix(_)) {
        return false;
    }
    let Some(pid) = crate::client::peer::listener_pid(endpoint) else { return false };
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else { return false };
    let threads = crate::client::peer::status_number(&status, "Threads:");
    threads.is_some_and(|n| n >= connections as u64) && process_shares_our_cores(Some(pid))
}

/// For each server among `endpoints` (one per connection or script state
/// of the run), whether its loops await answers on the socket
/// ([`socket_waits_suit`], with as many connections as it appears here):
/// each server's process is looked up once.
pub fn socket_waits_by_server(
    endpoints: impl Iterator<Item = crate::client::Endpoint>,
) -> HashMap<crate::client::Endpoint, bool> {
    let mut connections: HashMap<crate::client::Endpoint, usize> = HashMap::new();
    for endpoint in endpoints {
        *connections.entry(endpoint).or_default() += 1;
    }
    connections
        .into_iter()
        .map(|(server, count)| {
            let suits = socket_waits_suit(&server, count);
            (server, suits)
        })
        .collect()
}

/// Every core any thread of process `pid` may run on (a server's
/// connection threads may be pinned apart from its main thread).
fn process_cpus(pid: u32) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).ok()?.flatten() {
        let Ok(status) = std::fs::read_to_string(task.path().join("status")) else { continue };
        let Some(list) = crate::client::peer::status_entry(&status, "Cpus_allowed_list:") else { continue };
        cpus.extend(cpu_ranges(list)?);
    }
    cpus.sort_unstable();
    cpus.dedup();
    (!cpus.is_empty()).then_some(cpus)
}

/// `0-3,6` as the kernel writes a cpu list.
fn cpu_ranges(list: &str) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for part in list.split(',').filter(|p| !p.is_empty()) {
        let (start, end) = part.split_once('-').unwrap_or((part, part));
        let (start, end): (usize, usize) = (start.parse().ok()?, end.parse().ok()?);
        cpus.extend(start..=end.min(start.saturating_add(4096)));
    }
    Some(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_are_read_as_the_kernel_writes_them() {
        assert_eq!(cpu_ranges("0-3,6"), Some(vec![0, 1, 2, 3, 6]));
        assert_eq!(cpu_ranges("1"), Some(vec![1]));
        assert_eq!(cpu_ranges("x"), None);
    }

    fn local(pid: u32, cpus: &[usize]) -> ServerSite {
        ServerSite::Local(Some(ServerProcess { pid, cpus: cpus.to_vec() }))
    }

    #[test]
    fn a_loop_spins_only_on_a_core_of_its_own() {
        let own = |servers: Vec<u32>, remote| PollReason::CoreOfItsOwn { servers, remote };
        let cases = [
            (Some(0), vec![local(7, &[1])], 2, 1, PollMode::Adaptive, own(vec![7], false)),
            (Some(0), vec![local(7, &[0, 1])], 2, 1, PollMode::Sleep, PollReason::SharedWithServer { pid: 7 }),
            (
                Some(0),
                vec![local(7, &[1]), local(8, &[0])],
                2,
                1,
                PollMode::Sleep,
                PollReason::SharedWithServer { pid: 8 },
            ),
            (None, vec![local(7, &[1])], 2, 1, PollMode::Sleep, PollReason::Unpinned),
            (Some(0), vec![ServerSite::Local(None)], 2, 1, PollMode::Sleep, PollReason::ServerNotFound),
            (Some(0), vec![ServerSite::Remote], 2, 1, PollMode::Adaptive, own(vec![], true)),
            (Some(0), vec![ServerSite::Remote], 2, 2, PollMode::Sleep, PollReason::NoSpareCore { cores: 2, loops: 2 }),
        ];
        for (cpu, sites, cores, loops, mode, why) in cases {
            assert_eq!(loop_polling(cpu, &sites, cores, loops), (mode, why.clone()), "{cpu:?} {sites:?}");
        }
    }

    /// This process is the server here: both kinds of socket lead to it,
    /// and to the cores its threads may run on.
    #[test]
    fn the_server_process_is_found_through_its_socket() {
        let me = std::process::id();
        let own_cpus = process_cpus(me).unwrap();
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        let unix = server_site(&StdSocket::Unix(a));
        assert_eq!(unix, ServerSite::Local(Some(ServerProcess { pid: me, cpus: own_cpus.clone() })));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (_accepted, _) = listener.accept().unwrap();
        let tcp = server_site(&StdSocket::Tcp(client));
        assert_eq!(tcp, ServerSite::Local(Some(ServerProcess { pid: me, cpus: own_cpus })));
    }

    #[test]
    fn the_choice_says_why() {
        let choice = PollChoice {
            index: 0,
            cpu: Some(0),
            mode: PollMode::Adaptive,
            why: PollReason::CoreOfItsOwn { servers: vec![42], remote: false },
        };
        let line = choice.to_string();
        assert!(line.starts_with("event loop 0 (cpu 0) spins briefly, then sleeps"), "{line}");
        assert!(line.contains("the server (pid 42) runs on other cores"), "{line}");
    }
}
