//! Answers while a root's first index is searchable but not yet in SQLite
//! ([`crate::store::backlog`]): `du` and `ls` of a path inside it come
//! from the name index and the writer's held tree ([`crate::store::held`])
//! instead of waiting for the rows to be persisted. The name index takes
//! no change inside that window (the watcher's batches wait for SQLite),
//! so both answer the walk's tree, as SQLite will hold it.

use super::Engine;
use super::read::UsageArgs;
use super::visibility::View;
use crate::Error;
use crate::index::Snapshot;
use crate::queries::du;
use crate::store::held::HeldTree;
use crate::store::{EntryRow, Kind};
use std::path::Path;

impl Engine {
    /// `du` of a path inside a held first index (total and children, as a
    /// caller who sees everything asks it); `None`: ask SQLite once the
    /// rows are persisted (nothing held, a deep listing, photos, a filtered
    /// caller, a path outside the held root).
    pub(super) fn held_usage(
        &self,
        args: &UsageArgs,
        view: &Option<View>,
    ) -> Result<Option<du::Report>, Error> {
        if view.is_some()
            || args.sync
            || args.photos
            || args.all
            || args.depth > 1
            || args.files_only
            || args.dirs_only
            || self.store.backlog.persisted()
        {
            return Ok(None);
        }
        let path = super::read::absolute(&args.path)?;
        self.store
            .backlog
            .with_tree(|tree| {
                let snap = crate::index::read_loaded(&self.snapshot);
                let Some(id) = held_entry(&snap, tree, &path) else {
                    return Ok(None);
                };
                du::held::disk_usage(&snap, tree, id, args.path.clone(), args.top, args.apparent)
                    .map(Some)
            })
            .unwrap_or(Ok(None))
    }

    /// `ls` of a path inside a held first index: the entry's row, or a
    /// folder's children's, with the figures `ls` shows (name, kind, size,
    /// time); `None`: ask SQLite once the rows are persisted.
    pub(super) fn held_list(&self, path: &Path) -> Option<Vec<EntryRow>> {
        if self.store.backlog.persisted() {
            return None;
        }
        self.store
            .backlog
            .with_tree(|tree| {
                let snap = crate::index::read_loaded(&self.snapshot);
                let id = held_entry(&snap, tree, path)?;
                let at = id as u32;
                if snap.entry_kind(at)? != Kind::Dir {
                    return Some(vec![row_of(&snap, tree, at)]);
                }
                let mut rows = Vec::new();
                snap.walk_below(at, &mut |c, _| {
                    rows.push(row_of(&snap, tree, c));
                    false
                });
                Some(rows)
            })
            .flatten()
    }
}

/// Entry `i` as a row, from the name index (no inode, mode or flags: what
/// `ls` and `du` do not show).
fn row_of(snap: &Snapshot, tree: &HeldTree, i: u32) -> EntryRow {
    EntryRow {
        id: i64::from(i),
        parent_id: snap.entry_parent(i).map(i64::from),
        name: snap.entry_name(i).into_owned(),
        kind: snap.entry_kind(i).unwrap_or(Kind::Other),
        size: snap.entry_size(i),
        blocks: tree.allocated(i64::from(i)) / 512,
        mtime_ns: snap.entry_mtime_ns(i),
        dev: 0,
        ino: 0,
        nlink: 1,
        mode: 0,
        flags: 0,
    }
}

/// The entry at `path` when it is inside the held first index.
fn held_entry(snap: &Snapshot, tree: &HeldTree, path: &Path) -> Option<i64> {
    let id = held_path(snap, crate::platform::bytes::of(path))?;
    let mut top = id;
    while let Some(p) = snap.entry_parent(top) {
        top = p;
    }
    (Some(i64::from(top)) == tree.top()).then_some(i64::from(id))
}

/// The name index's entry for an absolute path, found by scanning it: a
/// root's entry holds its whole path, each level below is one pass over
/// the parents. Used only while a first index is not in SQLite yet.
pub(super) fn held_path(snapshot: &crate::index::Snapshot, path: &[u8]) -> Option<u32> {
    let sep = crate::platform::bytes::SEP;
    let ids = 0..snapshot.id_bound() as u32;
    let (mut at, rest) = ids
        .clone()
        .filter(|&i| snapshot.entry_kind(i).is_some() && snapshot.entry_parent(i).is_none())
        .filter_map(|i| {
            let name = snapshot.entry_name(i);
            let rest = path.strip_prefix(name.as_ref())?;
            (rest.is_empty() || rest[0] == sep || name.last() == Some(&sep))
                .then(|| (i, rest.to_vec()))
        })
        .max_by_key(|(_, rest)| std::cmp::Reverse(rest.len()))?;
    for part in rest.split(|&b| b == sep).filter(|p| !p.is_empty()) {
        at = ids.clone().find(|&i| {
            snapshot.entry_parent(i) == Some(at)
                && snapshot.entry_kind(i).is_some()
                && snapshot.entry_name(i).as_ref() == part
        })?;
    }
    Some(at)
}
