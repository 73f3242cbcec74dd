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
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::AsRawFd;

use super::{allowed_cpus, Backend, LoopPlan, PollMode, StdSocket};

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
    /// The epoll backend always waits in `epoll_wait`.
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
}

impl fmt::Display for PollChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mode = match self.mode {
            PollMode::Sleep => "sleeps when idle",
            PollMode::Adaptive | PollMode::Auto => "spins briefly, then sleeps, when idle",
            PollMode::Spin => "spins when idle",
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
        } else if backend == Backend::Epoll {
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

/// As the client layer decides it: a loopback peer, or one of our own
/// addresses (the kernel then picks that same address as ours).
fn is_local(ours: IpAddr, theirs: IpAddr) -> bool {
    theirs.is_loopback() || ours.to_canonical() == theirs.to_canonical()
}

/// The process at the other end of a unix socket (SO_PEERCRED: the one
/// that listened, for a connected client socket).
fn unix_peer_pid(socket: &std::os::unix::net::UnixStream) -> Option<u32> {
    let mut cred = libc::ucred { pid: 0, uid: 0, gid: 0 };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: `cred` and `len` are valid for writes of the size passed, and
    // the descriptor is the socket's, open for the call.
    let rc = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    (rc == 0 && cred.pid > 0).then_some(cred.pid as u32)
}

/// The process holding the other end of a TCP connection on this host:
/// the socket whose local address is our peer's and remote address ours,
/// found in `/proc/net/tcp{,6}`, then among the processes' descriptors.
fn tcp_peer_pid(ours: SocketAddr, theirs: SocketAddr) -> Option<u32> {
    let inode = ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|path| std::fs::read_to_string(path).ok())
        .find_map(|table| socket_inode(&table, theirs, ours))?;
    process_with_socket(inode)
}

/// The inode of the socket from `local` to `remote` in a `/proc/net/tcp`
/// table (v4-mapped v6 addresses match their v4 form).
fn socket_inode(table: &str, local: SocketAddr, remote: SocketAddr) -> Option<u64> {
    let canonical = |a: SocketAddr| (a.ip().to_canonical(), a.port());
    table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let l = proc_net_addr(fields.get(1)?)?;
        let r = proc_net_addr(fields.get(2)?)?;
        (canonical(l) == canonical(local) && canonical(r) == canonical(remote)).then_some(())?;
        fields.get(9)?.parse().ok().filter(|&inode| inode != 0)
    })
}

/// `0100007F:0D58` (127.0.0.1:3416) or its 32-digit v6 form: the address
/// as the kernel stores it, each 32-bit word printed in host order.
fn proc_net_addr(text: &str) -> Option<SocketAddr> {
    let (addr, port) = text.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |i: usize| -> Option<[u8; 4]> {
        let hex = addr.get(i * 8..i * 8 + 8)?;
        Some(u32::from_str_radix(hex, 16).ok()?.to_ne_bytes())
    };
    let ip = match addr.len() {
        8 => IpAddr::V4(Ipv4Addr::from(word(0)?)),
        32 => {
            let mut bytes = [0u8; 16];
            for (i, chunk) in bytes.chunks_exact_mut(4).enumerate() {
                chunk.copy_from_slice(&word(i)?);
            }
            IpAddr::V6(Ipv6Addr::from(bytes))
        }
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

/// Whether a server at `endpoint` runs on this host on cores this
/// process may use too (found without connecting: the process listening
/// on its socket or port, and its threads' cores); a server elsewhere does
/// not, and one on this host whose process cannot be found is taken to.
pub fn server_shares_our_cores(endpoint: &crate::client::Endpoint) -> bool {
    if !endpoint.is_on_this_host() {
        return false;
    }
    let listener = match endpoint {
        crate::client::Endpoint::Unix(path) => unix_listener_inode(path),
        crate::client::Endpoint::Tcp { port, .. } => tcp_listener_inode(*port),
    };
    let server_cpus = listener.and_then(process_with_socket).and_then(process_cpus);
    match (server_cpus, allowed_cpus()) {
        (Some(theirs), Some(ours)) => theirs.iter().any(|cpu| ours.contains(cpu)),
        _ => true,
    }
}

/// The inode of the socket listening at `path` (`/proc/net/unix`: the
/// path is the last field, state 01 is listening).
fn unix_listener_inode(path: &std::path::Path) -> Option<u64> {
    let table = std::fs::read_to_string("/proc/net/unix").ok()?;
    let wanted = path.to_str()?;
    table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        (fields.get(7) == Some(&wanted) && fields.get(3) == Some(&"00010000")).then_some(())?;
        fields.get(6)?.parse().ok()
    })
}

/// The inode of a socket listening on TCP `port` (state 0A) on any address.
fn tcp_listener_inode(port: u16) -> Option<u64> {
    ["/proc/net/tcp", "/proc/net/tcp6"].iter().filter_map(|path| std::fs::read_to_string(path).ok()).find_map(|table| {
        table.lines().skip(1).find_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let local = proc_net_addr(fields.get(1)?)?;
            (local.port() == port && fields.get(3) == Some(&"0A")).then_some(())?;
            fields.get(9)?.parse().ok().filter(|&inode| inode != 0)
        })
    })
}

/// The first process (that we may look into) with a descriptor on the
/// socket `inode`.
fn process_with_socket(inode: u64) -> Option<u32> {
    let wanted = format!("socket:[{inode}]");
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|entry| {
        let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
        let fds = std::fs::read_dir(entry.path().join("fd")).ok()?;
        fds.flatten()
            .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|l| l.as_os_str() == wanted.as_str()))
            .then_some(pid)
    })
}

/// Every core any thread of process `pid` may run on (a server's
/// connection threads may be pinned apart from its main thread).
fn process_cpus(pid: u32) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).ok()?.flatten() {
        let Ok(status) = std::fs::read_to_string(task.path().join("status")) else { continue };
        let Some(list) = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:")) else { continue };
        cpus.extend(cpu_ranges(list.trim())?);
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
    fn proc_net_addresses_are_read_in_host_order() {
        let v4 = proc_net_addr("0100007F:0D58").unwrap();
        assert_eq!(v4, "127.0.0.1:3416".parse().unwrap());
        let v6 = proc_net_addr("00000000000000000000000001000000:0CEA").unwrap();
        assert_eq!(v6, "[::1]:3306".parse().unwrap());
        let mapped = proc_net_addr("0000000000000000FFFF00000100007F:0D58").unwrap();
        assert_eq!(mapped.ip().to_canonical(), "127.0.0.1".parse::<IpAddr>().unwrap());
        assert_eq!(proc_net_addr("0100007F"), None);
        assert_eq!(proc_net_addr("zz00007F:0D58"), None);
    }

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
