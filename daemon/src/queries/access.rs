//! Who may see what, in machine-wide mode (`fsindexd --system`).
//!
//! One daemon running as root indexes everything, and answers each caller
//! with only what that caller could see for itself, the way plocate does:
//! an entry is visible when the caller can read and search (`r` and `x`)
//! every folder above it, from `/` down to its parent. The caller is the
//! process on the other end of the unix socket (`SO_PEERCRED`), with the
//! groups it holds at that moment (`/proc/PID/status`).
//!
//! Permission bits are read live with `lstat`, never from the index, so a
//! `chmod` takes effect at once. ACLs are not consulted: a folder opened to
//! a user only through an ACL stays hidden from that user.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Mutex, RwLock};

use rusqlite::Connection;

#[cfg(target_os = "linux")]
use crate::LockOk;
use crate::ingest::watch::Watcher;
use crate::queries::du::{Report, Usage};
use crate::queries::search::Snapshot;
use crate::{Error, RwLockOk};

/// The calling user: uid and every group it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller {
    pub uid: u32,
    pub gids: Vec<u32>,
}

/// Read permission, as in `access(2)`.
pub const R: u32 = 4;
/// Search (execute) permission.
pub const X: u32 = 1;

impl Caller {
    /// The caller behind a unix socket: its uid and gid from the socket,
    /// its supplementary groups as [`crate::platform::peer::groups`] finds
    /// them (none when that process is already gone: fewer rights, never
    /// more).
    pub fn from_peer(uid: u32, gid: u32, pid: Option<i32>) -> Caller {
        let mut gids = vec![gid];
        if let Some(pid) = pid {
            gids.extend(crate::platform::peer::groups(pid, uid));
        }
        gids.sort_unstable();
        gids.dedup();
        Caller { uid, gids }
    }

    /// Whether this caller has every bit of `want` (`R`, `X`, or both) on
    /// a file with this owner and mode, as the kernel decides without ACLs.
    pub fn allows(&self, owner: u32, group: u32, mode: u32, want: u32) -> bool {
        if self.uid == 0 {
            return true;
        }
        let bits = if owner == self.uid {
            mode >> 6
        } else if self.gids.binary_search(&group).is_ok() {
            mode >> 3
        } else {
            mode
        } & 7;
        bits & want == want
    }

    /// `allows` on the file at `path` (not following a final symlink);
    /// false when it cannot be examined.
    pub fn may(&self, path: &Path, want: u32) -> bool {
        crate::platform::fs::lstat(path).is_ok_and(|m| self.allows(m.uid, m.gid, m.mode, want))
    }
}

/// One request's view: the caller, and what has been learnt of folders so
/// far (a search meets the same folders again and again).
#[derive(Debug)]
pub struct View {
    pub caller: Caller,
    /// Folder path -> the caller can read and search it and every folder
    /// above it.
    chain: HashMap<Vec<u8>, bool>,
}

impl View {
    pub fn new(caller: Caller) -> View {
        View {
            caller,
            chain: HashMap::new(),
        }
    }

    /// Can the caller read and search this folder? (Its ancestors aside.)
    pub fn opens(&self, dir: &Path) -> bool {
        crate::platform::fs::lstat(dir)
            .is_ok_and(|m| m.is_dir() && self.caller.allows(m.uid, m.gid, m.mode, R | X))
    }

    /// Can the caller open this folder and every folder above it?
    pub fn reaches(&mut self, dir: &[u8]) -> bool {
        if let Some(&known) = self.chain.get(dir) {
            return known;
        }
        let path = crate::platform::bytes::path_buf(dir);
        let ok = match parent_bytes(dir) {
            Some(up) => self.reaches(up) && self.opens(&path),
            None => self.opens(&path),
        };
        self.chain.insert(dir.to_vec(), ok);
        ok
    }

    /// Is the entry at this absolute path visible to the caller?
    pub fn sees(&mut self, path: &[u8]) -> bool {
        match parent_bytes(path) {
            Some(up) => self.reaches(up),
            // `/` itself.
            None => true,
        }
    }
}

/// The parent of an absolute path, as bytes (`/a/b` -> `/a`, `/a` -> `/`,
/// `/` -> none).
pub fn parent_bytes(p: &[u8]) -> Option<&[u8]> {
    let p = match p {
        [rest @ .., b'/'] if !rest.is_empty() => rest,
        _ => p,
    };
    if p == b"/" || p.is_empty() {
        return None;
    }
    match memchr::memrchr(b'/', p) {
        Some(0) => Some(b"/"),
        Some(i) => Some(&p[..i]),
        None => None,
    }
}

// Unix only: they check permission bits against real files' owners.
#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn parents() {
        assert_eq!(parent_bytes(b"/a/b"), Some(&b"/a"[..]));
        assert_eq!(parent_bytes(b"/a"), Some(&b"/"[..]));
        assert_eq!(parent_bytes(b"/a/b/"), Some(&b"/a"[..]));
        assert_eq!(parent_bytes(b"/"), None);
    }

    #[test]
    fn mode_bits_as_the_kernel_reads_them() {
        let alice = Caller {
            uid: 1000,
            gids: vec![100, 1000],
        };
        // Owner bits win even when they are narrower than the others'.
        assert!(!alice.allows(1000, 5, 0o077, R));
        assert!(alice.allows(1000, 5, 0o500, R | X));
        assert!(alice.allows(1, 100, 0o050, R | X));
        assert!(!alice.allows(1, 100, 0o705, R | X));
        assert!(alice.allows(1, 2, 0o005, R | X));
        assert!(!alice.allows(1, 2, 0o770, X));
        assert!(!alice.allows(1, 2, 0o001, R | X));
        let root = Caller {
            uid: 0,
            gids: vec![0],
        };
        assert!(root.allows(1, 2, 0, R | X));
    }

    #[test]
    fn a_private_folder_hides_what_is_inside() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let open = t.path().join("open");
        let shut = t.path().join("shut");
        std::fs::create_dir_all(shut.join("deep")).unwrap();
        std::fs::create_dir_all(&open).unwrap();
        std::fs::set_permissions(&shut, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let me = std::fs::metadata(t.path()).unwrap().uid();
        // Someone who is neither the owner nor in its group.
        let other = Caller {
            uid: me.wrapping_add(12345),
            gids: vec![54321],
        };
        let mut view = View::new(other);
        let b = |p: &Path| p.as_os_str().as_encoded_bytes().to_vec();
        assert!(view.sees(&b(&open.join("x"))) || !view.reaches(&b(t.path())));
        assert!(view.sees(&b(&shut)) == view.reaches(&b(t.path())));
        assert!(!view.sees(&b(&shut.join("deep"))));
        assert!(!view.sees(&b(&shut.join("deep/file"))));
    }
}

/// A folder under a measured path that the caller cannot open: like `du`
/// run by that caller, its own blocks count and what is inside does not.
#[derive(Clone, Debug)]
pub struct Closed {
    pub id: i64,
    pub path: Vec<u8>,
    /// What is inside it (its figures without its own entry).
    pub inside: Usage,
}

/// The folders the caller cannot open at or below entry `id` (path
/// `path`), topmost only: nothing below a closed folder is examined.
/// Folders are found in the snapshot; what each one's `lstat` says comes
/// from `known` where it can vouch for it, else from a live `lstat`.
pub fn closed_under(
    conn: &Connection,
    snapshot: &Snapshot,
    id: i64,
    path: &[u8],
    view: &View,
    known: Option<(&Permissions, &Watcher)>,
) -> Result<Vec<Closed>, Error> {
    let Ok(top) = u32::try_from(id) else {
        return Ok(Vec::new());
    };
    let mut session = known.and_then(|(p, w)| p.session(w, snapshot));
    // Bit per id: a folder gone into is trusted (see `Session::look`):
    // only a trusted folder's subfolders may be answered from the cache.
    let mut trusted: Vec<u64> = Vec::new();
    let mut above = false;
    if let Some(s) = session.as_mut() {
        trusted = vec![0; snapshot.id_bound() / 64 + 1];
        // The folders above `top`, from its root down.
        let mut chain = Vec::new();
        let mut at = snapshot.entry_parent(top);
        while let Some(a) = at {
            chain.push(a);
            at = snapshot.entry_parent(a);
        }
        let mut ok = true;
        for &a in chain.iter().rev() {
            ok = ok && s.look(snapshot, a, ok).1;
        }
        above = ok;
    }
    let mut closed: Vec<(u32, Vec<u8>)> = Vec::new();
    snapshot.walk_folders(top, &mut |dir, parent| {
        let (meta, trust) = match session.as_mut() {
            Some(s) => {
                let up = parent.map_or(above, |p| bit(&trusted, p));
                s.look(snapshot, dir, up)
            }
            None => (Session::live(snapshot, dir).0, false),
        };
        let opens = meta.is_some_and(|m| view.caller.allows(m.uid, m.gid, m.mode, R | X));
        if opens {
            if trust {
                set_bit(&mut trusted, dir);
            }
        } else {
            let p = if dir == top {
                path.to_vec()
            } else {
                snapshot.path(dir)
            };
            closed.push((dir, p));
        }
        opens
    });
    if let Some(s) = session {
        s.finish();
    }
    let mut out = Vec::with_capacity(closed.len());
    for (dir, p) in closed {
        // Gone from the index a moment ago: nothing of it is counted.
        let Some(inside) = inside(conn, dir as i64, &p)? else {
            continue;
        };
        out.push(Closed {
            id: dir as i64,
            inside,
            path: p,
        });
    }
    Ok(out)
}

/// What `lstat` says of a folder, as far as permission goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Perm {
    pub uid: u32,
    pub gid: u32,
    pub mode: u32,
}

impl Perm {
    /// Everyone may read and search it: owner, group and others all have
    /// `r` and `x`.
    fn wide(self) -> bool {
        self.mode & 0o555 == 0o555
    }
}

/// What the cache's contents hold for: the watcher's folder epoch, the
/// snapshot's layout, the mount table's changes. Each only grows.
type Stamp = [u64; 3];

/// What `lstat` said of watched folders, by entry id, in machine-wide mode
/// (one per daemon). An entry stands only while nothing could have changed
/// it without the daemon knowing, so a `chmod`, `chown`, rename or mount
/// still takes effect for the very next query:
///
/// - the folder had a watch of the inotify backend (checked before its
///   `lstat`), which reports the folder's own owner and mode changes, and
///   so did every folder above it up to its root, which report renames,
///   removals and new folders below them;
/// - the watcher counts every such event ([`Watcher::folder_epoch`]) and
///   vouches, when asked, that every event so far is counted: an event not
///   yet read means "unsure", and unsure means a live `lstat`;
/// - the snapshot's folders are where they were ([`Snapshot::layout`]): ids
///   map to the same paths;
/// - the mount table is unchanged (`/proc/self/mountinfo` polls as changed
///   on any mount or unmount), and each root's folder is still the same
///   inode (its parent is not watched): both checked on every query.
///
/// Any change to one of these empties the cache. Folders that are polled,
/// beyond the watch cap, or under the notify or poll backends are never
/// cached: they are `lstat`ed live, as is everything outside machine-wide
/// mode's fast path.
#[derive(Debug)]
pub struct Permissions {
    cached: RwLock<Cached>,
    /// `/proc/self/mountinfo`, open, and how many changes it has shown.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    mounts: Mutex<Option<(std::fs::File, u64)>>,
}

#[derive(Debug, Default)]
struct Cached {
    stamp: Stamp,
    /// Bit per id: the folder's entry is here (in `narrow`, or wide).
    known: Vec<u64>,
    /// Bit per id: the folder is open to everyone.
    wide: Vec<u64>,
    narrow: HashMap<u32, Perm>,
    /// A root folder's identity (dev, ino) when its entry was made.
    roots: HashMap<u32, (u64, u64)>,
}

fn bit(v: &[u64], i: u32) -> bool {
    v.get(i as usize / 64)
        .is_some_and(|w| w >> (i % 64) & 1 == 1)
}

fn set_bit(v: &mut Vec<u64>, i: u32) {
    let w = i as usize / 64;
    if v.len() <= w {
        v.resize(w + 1, 0);
    }
    v[w] |= 1 << (i % 64);
}

impl Cached {
    fn get(&self, i: u32) -> Option<Perm> {
        if !bit(&self.known, i) {
            return None;
        }
        if bit(&self.wide, i) {
            return Some(Perm {
                uid: 0,
                gid: 0,
                mode: 0o555,
            });
        }
        self.narrow.get(&i).copied()
    }
}

impl Default for Permissions {
    fn default() -> Self {
        Permissions::new()
    }
}

impl Permissions {
    pub fn new() -> Permissions {
        Permissions {
            cached: RwLock::new(Cached::default()),
            mounts: Mutex::new(None),
        }
    }

    /// How many times the mount table has been seen to change; `None` when
    /// it cannot be watched (then nothing is cached).
    #[cfg(not(target_os = "linux"))]
    fn mount_changes(&self) -> Option<u64> {
        None
    }

    /// How many times the mount table has been seen to change; `None` when
    /// it cannot be watched (then nothing is cached).
    #[cfg(target_os = "linux")]
    fn mount_changes(&self) -> Option<u64> {
        let mut m = self.mounts.lock_ok();
        if m.is_none() {
            let f = std::fs::File::open("/proc/self/mountinfo").ok()?;
            // The first poll reports the table as changed; the cache is
            // empty then anyway.
            *m = Some((f, 0));
        }
        let (f, n) = m.as_mut()?;
        use rustix::event::{PollFd, PollFlags, Timespec, poll};
        let mut p = [PollFd::new(f, PollFlags::PRI)];
        let now = Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        poll(&mut p, Some(&now)).ok()?;
        if p[0].revents().intersects(PollFlags::PRI | PollFlags::ERR) {
            *n += 1;
        }
        Some(*n)
    }

    /// Starts a query's use of the cache: `None` when the watcher cannot
    /// vouch for it now (then every folder is `lstat`ed live).
    fn session<'a>(&'a self, watcher: &'a Watcher, snapshot: &Snapshot) -> Option<Session<'a>> {
        let epoch = watcher.folder_epoch()?;
        let mounts = self.mount_changes()?;
        let stamp = [epoch, snapshot.layout(), mounts];
        {
            let mut c = self.cached.write_ok();
            if c.stamp != stamp {
                if stamp.iter().zip(c.stamp.iter()).any(|(new, old)| new < old) {
                    // An older view than the cache's: not this query's.
                    return None;
                }
                c.stamp = stamp;
                c.known.clear();
                c.wide.clear();
                c.narrow.clear();
                c.roots.clear();
            }
        }
        Some(Session {
            perms: self,
            watcher,
            stamp,
            cached: self.cached.read_ok(),
            fills: Vec::new(),
            roots: Vec::new(),
        })
    }
}

/// One query's use of [`Permissions`]: reads under its lock, new entries
/// kept aside and added at the end if the cache still holds for `stamp`.
struct Session<'a> {
    perms: &'a Permissions,
    watcher: &'a Watcher,
    stamp: Stamp,
    cached: std::sync::RwLockReadGuard<'a, Cached>,
    fills: Vec<(u32, Perm)>,
    roots: Vec<(u32, (u64, u64))>,
}

impl Session<'_> {
    /// A folder's live `lstat`: its permission, none when it is not a
    /// folder (any more) or cannot be examined; and its path.
    fn live(snapshot: &Snapshot, dir: u32) -> (Option<Perm>, Vec<u8>, Option<(u64, u64)>) {
        let path = snapshot.path(dir);
        let m = crate::platform::fs::lstat(&crate::platform::bytes::path_buf(&path))
            .ok()
            .filter(|m| m.is_dir());
        let perm = m.as_ref().map(|m| Perm {
            uid: m.uid,
            gid: m.gid,
            mode: m.mode,
        });
        (perm, path, m.map(|m| (m.dev, m.ino)))
    }

    /// What `lstat` says of folder `dir` (none: not a folder, or not
    /// there), and whether the cache may vouch for the folders below it
    /// (`up`: whether it may for `dir`'s parent).
    fn look(&mut self, snapshot: &Snapshot, dir: u32, up: bool) -> (Option<Perm>, bool) {
        let root = snapshot.entry_parent(dir).is_none();
        if up
            && !root
            && let Some(p) = self.cached.get(dir)
        {
            return (Some(p), true);
        }
        // A root's folder: its parent is not watched, so it is examined
        // every time, and trusted while it is the inode it was.
        if root && let Some(&id) = self.cached.roots.get(&dir) {
            let (perm, _, now) = Session::live(snapshot, dir);
            return (perm, perm.is_some() && now == Some(id));
        }
        if !up && !root {
            return (Session::live(snapshot, dir).0, false);
        }
        // Watched first, examined second: a change after the watch was
        // checked is counted, one before it is in the lstat.
        let path = snapshot.path(dir);
        let watched = self
            .watcher
            .watches_folder(&crate::platform::bytes::path_buf(&path));
        let (perm, _, id) = Session::live(snapshot, dir);
        let Some(perm) = perm else {
            return (None, false);
        };
        if !watched {
            return (Some(perm), false);
        }
        if root {
            if let Some(id) = id {
                self.roots.push((dir, id));
            }
        } else {
            self.fills.push((dir, perm));
        }
        (Some(perm), true)
    }

    /// Adds what was learnt, if the cache still holds for this session's
    /// stamp (else it was emptied meanwhile, and this may be stale).
    fn finish(self) {
        let Session {
            perms,
            stamp,
            cached,
            fills,
            roots,
            ..
        } = self;
        drop(cached);
        if fills.is_empty() && roots.is_empty() {
            return;
        }
        let mut c = perms.cached.write_ok();
        if c.stamp != stamp {
            return;
        }
        for (i, p) in fills {
            set_bit(&mut c.known, i);
            if p.wide() {
                set_bit(&mut c.wide, i);
            } else {
                c.narrow.insert(i, p);
            }
        }
        c.roots.extend(roots);
    }
}

/// The figures of what folder `id` holds, without its own entry; none
/// when the index no longer has it.
fn inside(conn: &Connection, id: i64, path: &[u8]) -> Result<Option<Usage>, Error> {
    let Some(row) = crate::store::entries::load_row(conn, id)? else {
        return Ok(None);
    };
    let mut u = crate::queries::du::disk_usage(conn, id, path.to_vec(), 1, false)?.total;
    u.bytes = u.bytes.saturating_sub(row.blocks * 512);
    u.apparent = u.apparent.saturating_sub(row.size);
    u.dirs = u.dirs.saturating_sub(1);
    Ok(Some(u))
}

/// Is `inner` the path `outer` or below it?
pub fn within(inner: &[u8], outer: &[u8]) -> bool {
    inner.starts_with(outer)
        && (inner.len() == outer.len() || outer.last() == Some(&b'/') || inner[outer.len()] == b'/')
}

/// Takes what the closed folders hold out of one row's figures; true when
/// the row is inside one of them (and must not be shown at all).
pub fn hide_in(u: &mut Usage, closed: &[Closed]) -> bool {
    for c in closed {
        if within(&u.path, &c.path) && u.path.len() > c.path.len() {
            return true;
        }
        if within(&c.path, &u.path) {
            u.bytes = u.bytes.saturating_sub(c.inside.bytes);
            u.apparent = u.apparent.saturating_sub(c.inside.apparent);
            u.files = u.files.saturating_sub(c.inside.files);
            u.dirs = u.dirs.saturating_sub(c.inside.dirs);
            u.incomplete = true;
        }
    }
    false
}

/// A du report as the caller would see it: rows inside closed folders gone,
/// the rest without what the closed folders hold, re-ranked and cut to
/// `top` (0: all).
pub fn hide_report(report: &mut Report, closed: &[Closed], top: usize, apparent: bool) {
    if closed.is_empty() {
        if top > 0 {
            report.children.truncate(top);
        }
        return;
    }
    hide_in(&mut report.total, closed);
    report.children.retain_mut(|u| !hide_in(u, closed));
    report.children.sort_by(|a, b| {
        let key = |u: &Usage| if apparent { u.apparent } else { u.bytes };
        key(b).cmp(&key(a)).then_with(|| a.path.cmp(&b.path))
    });
    report.children_total = report.children.len();
    if top > 0 {
        report.children.truncate(top);
    }
}
