//! Disk usage of a first index that is not in SQLite yet: the same figures
//! as [`super::disk_usage`], from the name index (names, kinds, apparent
//! sizes, the tree's shape) and the writer's held tree (folders' totals,
//! allocated sizes, files of several links: [`crate::store::held`]).

use super::{Ancestry, ChildLinks, Report, Usage};
use crate::Error;
use crate::index::Snapshot;
use crate::store::Kind;
use crate::store::held::HeldTree;

/// Disk usage of entry `id` (at `path`) and of its children, `top` of them
/// (0: all), as [`super::disk_usage`] answers once the rows are in SQLite.
pub fn disk_usage(
    snap: &Snapshot,
    tree: &HeldTree,
    id: i64,
    path: Vec<u8>,
    top: usize,
    apparent: bool,
) -> Result<Report, Error> {
    let at = u32::try_from(id).map_err(|_| Error::NotFound(lossy(&path)))?;
    let kind = snap
        .entry_kind(at)
        .ok_or_else(|| Error::NotFound(lossy(&path)))?;
    if kind != Kind::Dir {
        return Ok(Report {
            total: Usage {
                path,
                kind: Some(kind),
                bytes: tree.allocated(id),
                apparent: snap.entry_size(at),
                files: 1,
                ..Usage::default()
            },
            children: Vec::new(),
            children_total: 0,
        });
    }
    let mut ancestry = Ancestry::new(id, |d| Ok(tree.folder_parent(d)));
    let mut linked = ChildLinks::default();
    for (dir, u) in tree.unlisted() {
        linked.unlisted(ancestry.branch(*dir)?, &u.links);
    }
    for m in tree.links() {
        let inode = (m.dev as i64, m.ino as i64, m.bytes, m.apparent);
        linked.indexed(ancestry.branch(m.parent)?, m.id, inode);
    }

    let t = tree.totals(id).unwrap_or_default();
    let mut total = Usage {
        path: path.clone(),
        kind: Some(Kind::Dir),
        ..Usage::of_totals(t)
    };
    linked.total.onto(&mut total);

    let mut children = Vec::new();
    let mut ids = Vec::new();
    snap.walk_below(at, &mut |c, _| {
        ids.push(c);
        false
    });
    for c in ids {
        let Some(kind) = snap.entry_kind(c) else {
            continue;
        };
        let cid = i64::from(c);
        let mut u = match tree.totals(cid) {
            Some(t) if kind == Kind::Dir => Usage::of_totals(t),
            _ => Usage {
                bytes: tree.allocated(cid),
                apparent: snap.entry_size(c),
                files: 1,
                ..Usage::default()
            },
        };
        u.kind = Some(kind);
        u.id = cid;
        u.path = crate::platform::bytes::child(&path, &snap.entry_name(c));
        u.depth = 1;
        if kind == Kind::Dir {
            linked
                .per_child
                .remove(&cid)
                .unwrap_or_default()
                .onto(&mut u);
        }
        children.push(u);
    }
    // The folders the rules keep out of the target, measured by size.
    for (dir, u) in tree.unlisted() {
        if *dir != id || u.name.is_empty() {
            continue;
        }
        children.push(Usage {
            path: crate::platform::bytes::child(&path, &u.name),
            kind: Some(Kind::Dir),
            excluded: true,
            measured_at: u.measured_at,
            depth: 1,
            ..Usage::of_totals(u.totals)
        });
    }
    Ok(Report::ranked(total, children, top, apparent))
}

fn lossy(path: &[u8]) -> String {
    String::from_utf8_lossy(path).into_owned()
}
