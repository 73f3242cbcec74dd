//! Where a server runs, looked up once per distinct server of a run: on
//! this host or another, its process, the cores its threads may run on,
//! and how many threads it has. The wait plan ([`super::plan_wait`]) reads
//! nothing else about the server.

use std::collections::HashMap;

use crate::client::peer::{listener_pid, status_entry, status_number, PeerProcess};
use crate::client::Endpoint;

/// Where one server runs, as this process sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerPlacement {
    /// Reached over a unix socket.
    pub unix: bool,
    pub host: ServerHost,
    /// How many of the run's connections (or script states) go to it.
    pub connections: usize,
}

/// Which host a server runs on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerHost {
    Other,
    /// This host; its process when it could be found (another user's may
    /// not be: its descriptors cannot be read).
    This(Option<ServerProcess>),
}

/// A server process on this host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerProcess {
    pub pid: u32,
    /// Every core any of its threads may run on (a server's connection
    /// threads may be pinned apart from its main thread); `None`: unknown.
    pub cpus: Option<Vec<usize>>,
    /// Its threads (`Threads:` of `/proc/PID/status`).
    pub threads: Option<u64>,
}

impl ServerPlacement {
    /// Whether the server may run on one of `ours` (the cores this process
    /// may use, `None`: unknown). One on this host whose process or cores
    /// were not found is taken to: the cautious guess.
    pub fn shares_cores(&self, ours: Option<&[usize]>) -> bool {
        match &self.host {
            ServerHost::Other => false,
            ServerHost::This(Some(ServerProcess { cpus: Some(theirs), .. })) => {
                ours.map_or(true, |ours| theirs.iter().any(|cpu| ours.contains(cpu)))
            }
            ServerHost::This(_) => true,
        }
    }

    /// Whether it runs on this host.
    pub fn on_this_host(&self) -> bool {
        matches!(self.host, ServerHost::This(_))
    }

    /// Whether it looks like it runs a thread per connection, as MySQL and
    /// MariaDB do by default: its process has at least as many threads as
    /// the run has connections to it (threads kept from earlier
    /// connections, its thread cache, serve the next ones). An event-loop
    /// server (a proxy, the null server) has a few threads for all.
    pub fn thread_per_connection(&self) -> bool {
        let ServerHost::This(Some(process)) = &self.host else { return false };
        process.threads.is_some_and(|n| n >= self.connections as u64)
    }
}

/// Every server of a run, each looked up once.
#[derive(Debug, Default)]
pub struct ServerPlacements(HashMap<Endpoint, ServerPlacement>);

impl ServerPlacements {
    /// The servers of `endpoints` (one per connection or script state).
    /// `peer` says what an open connection to a server shows of it (the
    /// peer's credentials for a unix socket, `/proc/net/tcp` for TCP), when
    /// there is one; else the server is found from its endpoint alone (the
    /// process listening on its socket or port).
    pub fn look_up<'e>(
        endpoints: impl Iterator<Item = &'e Endpoint>,
        peer: impl Fn(&Endpoint) -> Option<PeerProcess>,
    ) -> ServerPlacements {
        let mut connections: HashMap<&Endpoint, usize> = HashMap::new();
        for endpoint in endpoints {
            *connections.entry(endpoint).or_default() += 1;
        }
        let placements = connections.into_iter().map(|(endpoint, connections)| {
            let seen = peer(endpoint).unwrap_or_else(|| from_endpoint(endpoint));
            let host = match seen {
                PeerProcess::Elsewhere => ServerHost::Other,
                PeerProcess::ThisHost(pid) => ServerHost::This(pid.map(server_process)),
            };
            let unix = matches!(endpoint, Endpoint::Unix(_));
            (endpoint.clone(), ServerPlacement { unix, host, connections })
        });
        ServerPlacements(placements.collect())
    }

    /// The server at `endpoint`, if it was looked up.
    pub fn get(&self, endpoint: &Endpoint) -> Option<&ServerPlacement> {
        self.0.get(endpoint)
    }

    /// Every server.
    pub fn all(&self) -> impl Iterator<Item = &ServerPlacement> {
        self.0.values()
    }
}

/// Where the server at `endpoint` runs, found without connecting.
fn from_endpoint(endpoint: &Endpoint) -> PeerProcess {
    if endpoint.is_on_this_host() {
        PeerProcess::ThisHost(listener_pid(endpoint))
    } else {
        PeerProcess::Elsewhere
    }
}

fn server_process(pid: u32) -> ServerProcess {
    let threads = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| status_number(&status, "Threads:"));
    ServerProcess { pid, cpus: process_cpus(pid), threads }
}

/// Every core any thread of process `pid` may run on.
fn process_cpus(pid: u32) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).ok()?.flatten() {
        let Ok(status) = std::fs::read_to_string(task.path().join("status")) else { continue };
        let Some(list) = status_entry(&status, "Cpus_allowed_list:") else { continue };
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

    /// This process is the server here: a unix socket's listener and a
    /// connected peer both lead to it, its cores and its threads.
    #[test]
    fn the_server_process_is_found_through_its_socket_or_its_endpoint() {
        let me = std::process::id();
        let own = server_process(me);
        assert_eq!(own.cpus, process_cpus(me));
        assert!(own.cpus.is_some() && own.threads.is_some_and(|n| n >= 1));
        let dir = std::env::temp_dir().join(format!("wirebench-placement-{me}"));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("server.sock");
        let _ = std::fs::remove_file(&path);
        let _listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let endpoint = Endpoint::Unix(path.clone());
        let found = ServerPlacements::look_up([&endpoint, &endpoint].into_iter(), |_| None);
        let placement = found.get(&endpoint).unwrap();
        assert!(placement.unix && placement.on_this_host());
        assert_eq!(placement.connections, 2);
        assert!(matches!(&placement.host, ServerHost::This(Some(p)) if p.pid == me));
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        let peer = PeerProcess::ThisHost(crate::client::peer::unix_peer_pid(&a));
        let tcp = Endpoint::Tcp { host: "127.0.0.1".into(), port: 1 };
        let through_peer = ServerPlacements::look_up([&tcp].into_iter(), |_| Some(peer));
        let placement = through_peer.get(&tcp).unwrap();
        assert!(!placement.unix && matches!(&placement.host, ServerHost::This(Some(p)) if p.pid == me));
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_server_shares_our_cores_unless_shown_otherwise() {
        let process = |cpus: Option<Vec<usize>>| ServerHost::This(Some(ServerProcess { pid: 7, cpus, threads: None }));
        let at = |host| ServerPlacement { unix: true, host, connections: 1 };
        assert!(!at(ServerHost::Other).shares_cores(Some(&[0])));
        assert!(at(ServerHost::This(None)).shares_cores(Some(&[0])));
        assert!(at(process(None)).shares_cores(Some(&[0])));
        assert!(at(process(Some(vec![0, 1]))).shares_cores(Some(&[0])));
        assert!(!at(process(Some(vec![1]))).shares_cores(Some(&[0])));
        assert!(at(process(Some(vec![1]))).shares_cores(None), "our cores unknown");
    }
}
