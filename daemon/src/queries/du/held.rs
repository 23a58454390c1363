//! Disk usage of a first index that is not in SQLite yet: the same figures
//! as [`super::disk_usage`], from the name index (names, kinds, apparent
//! sizes, the tree's shape) and the writer's held tree (folders' totals,
//! allocated sizes, files of several links: [`crate::store::held`]).

use std::collections::HashMap;

use super::{Branch, LinkedSum, Report, Usage};
use crate::Error;
use crate::index::Snapshot;
use crate::store::Kind;
use crate::store::held::HeldTree;

/// Where folders sit relative to the target folder, walking the held
/// tree's folder parents (memoised).
struct Ancestry<'t> {
    tree: &'t HeldTree,
    memo: HashMap<i64, Branch>,
}

impl Ancestry<'_> {
    fn branch(&mut self, dir: i64) -> Branch {
        let mut chain = Vec::new();
        let mut cur = dir;
        let found = loop {
            if let Some(b) = self.memo.get(&cur) {
                break *b;
            }
            chain.push(cur);
            match self.tree.folder_parent(cur) {
                Some(p) => cur = p,
                None => break Branch::Outside,
            }
        };
        let mut b = found;
        for &d in chain.iter().rev() {
            b = match b {
                Branch::Target => Branch::Child(d),
                other => other,
            };
            self.memo.insert(d, b);
        }
        b
    }
}

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
    let mut ancestry = Ancestry {
        tree,
        memo: HashMap::from([(id, Branch::Target)]),
    };
    let mut linked_total = LinkedSum::default();
    let mut linked_per_child: HashMap<i64, LinkedSum> = HashMap::new();
    for (dir, u) in tree.unlisted() {
        let child = match ancestry.branch(*dir) {
            Branch::Outside => continue,
            Branch::Target => None,
            Branch::Child(c) => Some(c),
        };
        for l in &u.links {
            linked_total.counted(l);
            if let Some(c) = child {
                linked_per_child.entry(c).or_default().counted(l);
            }
        }
    }
    for m in tree.links() {
        let child = match ancestry.branch(m.parent) {
            Branch::Outside => continue,
            Branch::Target => m.id,
            Branch::Child(c) => c,
        };
        let inode = (m.dev as i64, m.ino as i64, m.bytes, m.apparent);
        linked_total.add(inode);
        linked_per_child.entry(child).or_default().add(inode);
    }

    let t = tree.totals(id).unwrap_or_default();
    let mut total = Usage {
        path: path.clone(),
        kind: Some(Kind::Dir),
        ..Usage::of_totals(t)
    };
    linked_total.onto(&mut total);

    let mut children = Vec::new();
    // After a walk every entry's id is above its parent's.
    for c in at + 1..snap.id_bound() as u32 {
        if snap.entry_parent(c) != Some(at) {
            continue;
        }
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
            linked_per_child
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
