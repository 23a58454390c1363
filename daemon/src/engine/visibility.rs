//! What a caller may see, read live from the file system: the groups a
//! caller holds ([`caller_from_peer`]), whether it may open a folder or
//! read a file by their `lstat` now ([`View`], [`may`]), the folders under
//! a path it cannot open ([`closed_under`]), and the cache of watched
//! folders' permissions that machine-wide mode answers from
//! ([`Permissions`]). The rules themselves, and what follows from them over
//! the index, are [`crate::queries::access`]'s.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Mutex, RwLock};

use rusqlite::Connection;

#[cfg(target_os = "linux")]
use crate::LockOk;
use crate::index::Snapshot;
use crate::ingest::watch::Watcher;
use crate::queries::access::{self, Caller, Closed, R, X, parent_bytes};
use crate::{Error, RwLockOk};

/// The longest path lstat takes (Linux's PATH_MAX less its NUL; other
/// systems take less).
pub const LONGEST_PATH: usize = 4095;

/// The caller behind a unix socket: its uid and gid from the socket,
/// its supplementary groups as [`crate::platform::peer::groups`] finds
/// them (none when that process is already gone: fewer rights, never
/// more).
pub fn caller_from_peer(uid: u32, gid: u32, pid: Option<i32>) -> Caller {
    let mut gids = vec![gid];
    if let Some(pid) = pid {
        gids.extend(crate::platform::peer::groups(pid, uid));
    }
    gids.sort_unstable();
    gids.dedup();
    Caller { uid, gids }
}

/// [`Caller::allows`] on the file at `path` (not following a final
/// symlink); false when it cannot be examined.
pub fn may(caller: &Caller, path: &Path, want: u32) -> bool {
    crate::platform::fs::lstat(path).is_ok_and(|m| caller.allows(m.uid, m.gid, m.mode, want))
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

    /// Can the caller open this folder and every folder above it? (A folder
    /// whose path is longer than [`LONGEST_PATH`] never.)
    pub fn reaches(&mut self, dir: &[u8]) -> bool {
        if let Some(&known) = self.chain.get(dir) {
            return known;
        }
        // lstat cannot reach a longer path (ENAMETOOLONG), so no caller
        // opens it; and a made-up path of 40,000 parts, followed up here
        // one level at a time, overflowed the stack and kept each of its
        // prefixes (gigabytes).
        if dir.len() > LONGEST_PATH {
            return false;
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

/// The folders the caller cannot open at or below entry `id` (path
/// `path`), topmost only, each with what it holds (see
/// [`access::closed_folders`]). What each folder's `lstat` says comes from
/// `known` where it can vouch for it, else from a live `lstat`.
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
    let found = with_opens(snapshot, top, view, known, |opens| {
        access::closed_folders(snapshot, top, path, opens)
    });
    access::closed_figures(conn, found)
}

/// The folders at or below folder `top` that the caller can open, each
/// with every folder between it and `top`: a bit per id. (`top`'s own
/// parents are the caller's to check.)
pub fn open_folders(
    snapshot: &Snapshot,
    top: u32,
    view: &View,
    known: Option<(&Permissions, &Watcher)>,
) -> Vec<u64> {
    let mut open = Vec::new();
    with_opens(snapshot, top, view, known, |opens| {
        snapshot.walk_folders(top, &mut |dir, parent| {
            let o = opens(dir, parent);
            if o {
                set_bit(&mut open, dir);
            }
            o
        })
    });
    open
}

/// Hands `walk` the answer to "may the caller open this folder?" for the
/// folders of a walk down from `top` (each asked after its parent, with
/// it), from `known` where it can vouch for them, else from a live `lstat`.
fn with_opens<R>(
    snapshot: &Snapshot,
    top: u32,
    view: &View,
    known: Option<(&Permissions, &Watcher)>,
    walk: impl FnOnce(&mut dyn FnMut(u32, Option<u32>) -> bool) -> R,
) -> R {
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
    let found = walk(&mut |dir, parent| {
        let (meta, trust) = match session.as_mut() {
            Some(s) => {
                let up = parent.map_or(above, |p| bit(&trusted, p));
                s.look(snapshot, dir, up)
            }
            None => (Session::live(snapshot, dir).0, false),
        };
        let opens = meta.is_some_and(|m| view.caller.allows(m.uid, m.gid, m.mode, R | X));
        if opens && trust {
            set_bit(&mut trusted, dir);
        }
        opens
    });
    if let Some(s) = session {
        s.finish();
    }
    found
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

pub fn bit(v: &[u64], i: u32) -> bool {
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

// Unix only: they check permission bits against real files' owners.
#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

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
