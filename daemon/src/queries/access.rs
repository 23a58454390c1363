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
//!
//! This module holds the rules and what follows from them over the index:
//! whether a caller's uid and groups allow a mode ([`Caller::allows`]), the
//! folders it cannot open under a path and what they hold
//! ([`closed_folders`], [`closed_figures`]), and answers with those taken
//! out ([`hide_report`]). Reading the bits (the caller's groups, each
//! folder's `lstat`, and the cache of them) is the engine's
//! (`engine/visibility.rs`), which tells this module what it found.

use rusqlite::Connection;

use crate::Error;
use crate::index::Snapshot;
use crate::queries::du::{Report, Usage};

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

/// A folder under a measured path that the caller cannot open: like `du`
/// run by that caller, its own blocks count and what is inside does not.
#[derive(Clone, Debug)]
pub struct Closed {
    pub id: i64,
    pub path: Vec<u8>,
    /// What is inside it (its figures without its own entry).
    pub inside: Usage,
}

/// The folders at or below folder `top` (path `path`) that the caller
/// cannot open, topmost only: nothing below a closed folder is examined.
/// Folders are found in the snapshot, parents before children; `opens(dir,
/// parent)` says, once for each folder reached, whether the caller can
/// open it. Each comes with its path.
pub fn closed_folders(
    snapshot: &Snapshot,
    top: u32,
    path: &[u8],
    opens: &mut dyn FnMut(u32, Option<u32>) -> bool,
) -> Vec<(u32, Vec<u8>)> {
    let mut closed: Vec<(u32, Vec<u8>)> = Vec::new();
    snapshot.walk_folders(top, &mut |dir, parent| {
        let open = opens(dir, parent);
        if !open {
            let p = if dir == top {
                path.to_vec()
            } else {
                snapshot.path(dir)
            };
            closed.push((dir, p));
        }
        open
    });
    closed
}

/// The closed folders [`closed_folders`] found, each with the figures of
/// what it holds; one gone from the index meanwhile is left out.
pub fn closed_figures(conn: &Connection, found: Vec<(u32, Vec<u8>)>) -> Result<Vec<Closed>, Error> {
    let mut out = Vec::with_capacity(found.len());
    for (dir, p) in found {
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

// Unix only: permission bits as Unix reads them.
#[cfg(all(test, unix))]
mod tests {
    use super::*;

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
}
