//! Who is at the other end of a local connection, as the OS vouches for it
//! (machine-wide mode answers each caller with what it may see).
//!
//! Linux: `SO_PEERCRED` (uid, gid, pid). macOS: `getpeereid` (uid, gid; no
//! pid, so no supplementary groups: a caller gets fewer rights, never
//! more). Both come through tonic's `UdsConnectInfo`. Windows: the daemon
//! serves loopback TCP guarded by its token (see `main.rs`), which tells no
//! peer; there the machine-wide instance's token is readable by
//! administrators alone, so every caller it answers is one.

/// The caller's uid, gid and (where the OS tells) pid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Peer {
    pub uid: u32,
    pub gid: u32,
    pub pid: Option<i32>,
}

/// The peer of the unix socket connection `req` came on.
#[cfg(unix)]
pub fn of<T>(req: &tonic::Request<T>) -> Option<Peer> {
    let cred = req
        .extensions()
        .get::<tonic::transport::server::UdsConnectInfo>()?
        .peer_cred?;
    Some(Peer {
        uid: cred.uid(),
        gid: cred.gid(),
        pid: cred.pid(),
    })
}

/// No unix sockets (see the module doc).
#[cfg(not(unix))]
pub fn of<T>(_req: &tonic::Request<T>) -> Option<Peer> {
    None
}

/// Supplementary groups of process `pid` whose effective uid is `uid`.
/// Linux: `/proc/PID/status` (a recycled pid of another user gives none).
/// Elsewhere: none.
pub fn groups(pid: i32, uid: u32) -> Vec<u32> {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return Vec::new();
    };
    let mut gids = Vec::new();
    let mut uid_matches = false;
    for line in status.lines() {
        if let Some(rest) = line.strip_prefix("Uid:") {
            // Real, effective, saved, fs: the socket's uid is the
            // effective one.
            uid_matches = rest
                .split_whitespace()
                .nth(1)
                .and_then(|u| u.parse::<u32>().ok())
                == Some(uid);
        }
        if let Some(rest) = line.strip_prefix("Groups:")
            && uid_matches
        {
            gids.extend(
                rest.split_whitespace()
                    .filter_map(|g| g.parse::<u32>().ok()),
            );
        }
    }
    gids
}
