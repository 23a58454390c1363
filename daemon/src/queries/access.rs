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

use rusqlite::Connection;

use crate::Error;
use crate::queries::du::{Report, Usage};
use crate::store::Kind;

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
pub fn closed_under(
    conn: &Connection,
    id: i64,
    path: &[u8],
    view: &View,
) -> Result<Vec<Closed>, Error> {
    let mut out = Vec::new();
    let kind: i64 = conn.query_row("SELECT kind FROM entries WHERE id=?1", [id], |r| r.get(0))?;
    if Kind::from_i64(kind) != Kind::Dir {
        return Ok(out);
    }
    // Every folder below, then a walk from the top that stops at each
    // closed one.
    let mut stmt = conn.prepare_cached(
        "WITH RECURSIVE sub(id) AS (
             SELECT id FROM entries WHERE parent_id = ?1 AND kind = 1
             UNION ALL
             SELECT e.id FROM entries e JOIN sub ON e.parent_id = sub.id WHERE e.kind = 1)
         SELECT e.id, e.parent_id, e.name FROM entries e JOIN sub USING (id)",
    )?;
    let mut children: HashMap<i64, Vec<(i64, Vec<u8>)>> = HashMap::new();
    let mut rows = stmt.query([id])?;
    while let Some(r) = rows.next()? {
        children
            .entry(r.get(1)?)
            .or_default()
            .push((r.get(0)?, r.get(2)?));
    }
    let mut stack = vec![(id, path.to_vec())];
    while let Some((dir, p)) = stack.pop() {
        if !view.opens(&crate::platform::bytes::path_buf(&p)) {
            out.push(Closed {
                id: dir,
                inside: inside(conn, dir, &p)?,
                path: p,
            });
            continue;
        }
        for (child, name) in children.remove(&dir).unwrap_or_default() {
            stack.push((child, crate::platform::bytes::child(&p, &name)));
        }
    }
    Ok(out)
}

/// The figures of what folder `id` holds, without its own entry.
fn inside(conn: &Connection, id: i64, path: &[u8]) -> Result<Usage, Error> {
    let mut u = crate::queries::du::disk_usage(conn, id, path.to_vec(), 1, false)?.total;
    let (size, blocks): (i64, i64) =
        conn.query_row("SELECT size, blocks FROM entries WHERE id=?1", [id], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?;
    u.bytes = u.bytes.saturating_sub(blocks as u64 * 512);
    u.apparent = u.apparent.saturating_sub(size as u64);
    u.dirs = u.dirs.saturating_sub(1);
    Ok(u)
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
