//! Which process is at the other end of a connection, when it runs on
//! this host: the event loops' polling leaves its cores alone, and
//! `--server-stats` reads its CPU time and memory in `/proc`.
//!
//! A unix socket names its peer (SO_PEERCRED). A TCP connection does not:
//! the peer's end is found in `/proc/net/tcp{,6}` (the socket whose local
//! address is our peer's and remote address ours), then the process among
//! those whose descriptors we may read (our own user's, or all as root).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::AsRawFd;

/// Where the server at the other end of a connection runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeerProcess {
    /// On this host; its process when it could be found.
    ThisHost(Option<u32>),
    /// On another host.
    Elsewhere,
}

impl PeerProcess {
    /// The process behind a TCP connection from `ours` to `theirs`.
    pub fn of_tcp(ours: SocketAddr, theirs: SocketAddr) -> PeerProcess {
        if is_local(ours.ip(), theirs.ip()) {
            PeerProcess::ThisHost(tcp_peer_pid(ours, theirs))
        } else {
            PeerProcess::Elsewhere
        }
    }
}

/// Whether a TCP peer is on this host: a loopback address, or one of our
/// own (the kernel then picks that same address as ours).
pub fn is_local(ours: IpAddr, theirs: IpAddr) -> bool {
    theirs.is_loopback() || ours.to_canonical() == theirs.to_canonical()
}

/// The process at the other end of a unix socket (SO_PEERCRED: the one
/// that listened, for a connected client socket); `None` for another kind
/// of socket, or a process in another pid namespace.
pub fn unix_peer_pid(socket: &impl AsRawFd) -> Option<u32> {
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
pub fn tcp_peer_pid(ours: SocketAddr, theirs: SocketAddr) -> Option<u32> {
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

/// The process listening at `endpoint` on this host, found without
/// connecting: the socket bound to its path (`/proc/net/unix`) or
/// listening on its TCP port, and the process holding it.
pub fn listener_pid(endpoint: &super::Endpoint) -> Option<u32> {
    let inode = match endpoint {
        super::Endpoint::Unix(path) => unix_listener_inode(path),
        super::Endpoint::Tcp { port, .. } => tcp_listener_inode(*port),
    };
    inode.and_then(process_with_socket)
}

/// The inode of the socket listening at `path` (`/proc/net/unix`: the
/// path is the last field, flags 00010000 mark a listening socket). The
/// path matches as the server bound it, or through the links and relative
/// steps of either side (`--mysql-socket=./x.sock`, `/var/run` -> `/run`).
fn unix_listener_inode(path: &std::path::Path) -> Option<u64> {
    let table = std::fs::read_to_string("/proc/net/unix").ok()?;
    let real = std::fs::canonicalize(path).ok();
    let same_file = |bound: &str| {
        std::path::Path::new(bound) == path
            || real.as_ref().is_some_and(|real| std::fs::canonicalize(bound).is_ok_and(|b| &b == real))
    };
    table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        (fields.get(3) == Some(&"00010000") && same_file(fields.get(7)?)).then_some(())?;
        fields.get(6)?.parse().ok()
    })
}

/// The inode of a socket listening on TCP `port` (state 0A) on any address.
fn tcp_listener_inode(port: u16) -> Option<u64> {
    let tables = ["/proc/net/tcp", "/proc/net/tcp6"].iter().filter_map(|path| std::fs::read_to_string(path).ok());
    tables.into_iter().find_map(|table| {
        table.lines().skip(1).find_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let local = proc_net_addr(fields.get(1)?)?;
            (local.port() == port && fields.get(3) == Some(&"0A")).then_some(())?;
            fields.get(9)?.parse().ok().filter(|&inode| inode != 0)
        })
    })
}

/// The value after `label` (`"Threads:"`, `"Cpus_allowed_list:"`) in the
/// text of a `/proc/PID/status` file, trimmed.
pub fn status_entry<'a>(status: &'a str, label: &str) -> Option<&'a str> {
    status.lines().find_map(|line| line.strip_prefix(label)).map(str::trim)
}

/// The number a `/proc/PID/status` entry starts with (`VmRSS:  1234 kB`
/// is 1234).
pub fn status_number(status: &str, label: &str) -> Option<u64> {
    status_entry(status, label)?.split_ascii_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_entries_are_read_by_label() {
        let status = "Name:\tmariadbd\nThreads:\t21\nVmRSS:\t  123456 kB\nCpus_allowed_list:\t0-1\n\
                      voluntary_ctxt_switches:\t12\nnonvoluntary_ctxt_switches:\t3\n";
        assert_eq!(status_number(status, "Threads:"), Some(21));
        assert_eq!(status_number(status, "VmRSS:"), Some(123_456));
        assert_eq!(status_number(status, "voluntary_ctxt_switches:"), Some(12));
        assert_eq!(status_number(status, "nonvoluntary_ctxt_switches:"), Some(3));
        assert_eq!(status_entry(status, "Cpus_allowed_list:"), Some("0-1"));
        assert_eq!(status_number(status, "VmSwap:"), None);
        assert_eq!(status_number(status, "Name:"), None);
    }

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

    /// This process is the server here: both kinds of socket lead to it.
    #[test]
    fn the_peer_process_is_found_through_its_socket() {
        let me = std::process::id();
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        assert_eq!(unix_peer_pid(&a), Some(me));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (_accepted, _) = listener.accept().unwrap();
        let (ours, theirs) = (client.local_addr().unwrap(), client.peer_addr().unwrap());
        assert_eq!(PeerProcess::of_tcp(ours, theirs), PeerProcess::ThisHost(Some(me)));
        assert_eq!(unix_peer_pid(&client), None, "not a unix socket");
        let far: SocketAddr = "192.0.2.1:3306".parse().unwrap();
        assert_eq!(PeerProcess::of_tcp(ours, far), PeerProcess::Elsewhere);
    }

    /// A listener is found by the path it was bound to, and through a
    /// link or a relative path that leads to the same file.
    #[test]
    fn a_unix_listener_is_found_by_any_path_to_its_file() {
        let me = std::process::id();
        let dir = std::env::temp_dir().join(format!("wirebench-peer-{me}"));
        std::fs::create_dir_all(&dir).unwrap();
        let bound = dir.join("server.sock");
        let _ = std::fs::remove_file(&bound);
        let _listener = std::os::unix::net::UnixListener::bind(&bound).unwrap();
        let link = dir.join("link.sock");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&bound, &link).unwrap();
        let through_dot = dir.join(".").join("server.sock");
        for path in [&bound, &link, &through_dot] {
            let endpoint = crate::client::Endpoint::Unix(path.clone());
            assert_eq!(listener_pid(&endpoint), Some(me), "{}", path.display());
        }
        let nobody = crate::client::Endpoint::Unix(dir.join("absent.sock"));
        assert_eq!(listener_pid(&nobody), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
