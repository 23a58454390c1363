//! A first index's disk-usage figures while its rows are held back from
//! SQLite ([`super::backlog`]).
//!
//! `du` reads each folder's `dir_totals` row, and those are SQLite's: a
//! first index of 1M entries is *ready* (searchable from the name index)
//! seconds before they are written. So the writer, as it hands the held
//! rows to the name index, also adds each to a small tree of its own: the
//! folders' totals (as `dir_totals` would have them), each entry's
//! allocated size (the one figure of `du` the name index lacks), the files
//! with several links and the unlisted rows' links (counted once per query,
//! as [`crate::queries::du`] counts them). When the walk ends the folders'
//! totals are summed up the tree once (ids run parents first after a walk),
//! and `du` answers from this tree and the name index until the rows are
//! persisted; then the tree is dropped.
//!
//! Anything the writer did not expect inside the window (a row changed or
//! deleted rather than inserted, a folder whose id is not above its
//! parent's) marks the tree unusable: `du` then waits for SQLite, as before.

use std::collections::HashMap;

use super::model::{EntryRow, Kind, Totals, Unlisted};

/// No parent (a root's own folder), or not known yet.
const NONE: u32 = u32::MAX;

/// One folder: its parent and its totals (its own entries' while the walk
/// runs, its whole subtree's once summed up).
#[derive(Clone, Copy, Debug)]
struct Folder {
    parent: u32,
    totals: Totals,
}

impl Default for Folder {
    fn default() -> Self {
        Folder {
            parent: NONE,
            totals: Totals::default(),
        }
    }
}

/// A file with several links inside the held tree: counted once per inode
/// by each query.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeldLink {
    pub id: i64,
    pub parent: i64,
    pub dev: u64,
    pub ino: u64,
    /// Allocated and apparent bytes.
    pub bytes: u64,
    pub apparent: u64,
}

/// The held first index's figures for `du`.
#[derive(Debug, Default)]
pub struct HeldTree {
    /// The first id the walk could take: entry `id` is at `id - base`.
    base: i64,
    /// Allocated size in 512-byte blocks, by entry (u32::MAX: in `big`).
    blocks: Vec<u32>,
    big: HashMap<u32, u64>,
    folders: HashMap<u32, Folder>,
    links: Vec<HeldLink>,
    /// The unlisted rows, by the folder holding them.
    unlisted: Vec<(i64, Unlisted)>,
    /// The root's own folder.
    top: Option<i64>,
    /// Summed up: the walk is over and every folder holds its subtree's
    /// totals.
    complete: bool,
    /// Something the tree cannot follow happened: answer from SQLite.
    broken: bool,
}

impl HeldTree {
    pub(super) fn new(base: i64) -> Self {
        HeldTree {
            base,
            ..Default::default()
        }
    }

    fn local(&self, id: i64) -> Option<u32> {
        let l = id.checked_sub(self.base)?;
        u32::try_from(l).ok().filter(|&l| l != NONE)
    }

    /// A row the walk inserted (handed to the name index now).
    pub(super) fn insert(&mut self, row: &EntryRow) {
        let Some(at) = self.local(row.id) else {
            self.broken = true;
            return;
        };
        let parent = match row.parent_id {
            None => {
                self.top = Some(row.id);
                NONE
            }
            Some(p) => match self.local(p) {
                Some(p) if p < at => p,
                _ => {
                    self.broken = true;
                    return;
                }
            },
        };
        let i = at as usize;
        if self.blocks.len() <= i {
            self.blocks.resize(i + 1, 0);
        }
        if row.blocks >= u64::from(u32::MAX) {
            self.blocks[i] = u32::MAX;
            self.big.insert(at, row.blocks);
        } else {
            self.blocks[i] = row.blocks as u32;
        }
        let own = row.contribution();
        if row.kind == Kind::Dir {
            let f = self.folders.entry(at).or_default();
            f.parent = parent;
            f.totals.add(own);
        } else {
            if row.nlink > 1 {
                self.links.push(HeldLink {
                    id: row.id,
                    parent: row.parent_id.unwrap_or(0),
                    dev: row.dev,
                    ino: row.ino,
                    bytes: row.blocks * 512,
                    apparent: row.size,
                });
            }
            if parent != NONE {
                self.folders.entry(parent).or_default().totals.add(own);
            }
        }
    }

    /// What the rules keep out of folder `dir` (sent once per folder by a
    /// first index's walk).
    pub(super) fn set_unlisted(&mut self, dir: i64, rows: &[Unlisted]) {
        let Some(at) = self.local(dir) else {
            self.broken = true;
            return;
        };
        let f = self.folders.entry(at).or_default();
        for u in rows {
            f.totals.add(u.totals);
        }
        self.unlisted.extend(rows.iter().map(|u| (dir, u.clone())));
    }

    /// A change the tree cannot follow.
    pub(super) fn lose(&mut self) {
        self.broken = true;
    }

    /// The walk is over: each folder's totals become its subtree's.
    pub(super) fn sum_up(&mut self) {
        let mut order: Vec<u32> = self.folders.keys().copied().collect();
        order.sort_unstable_by(|a, b| b.cmp(a));
        for at in order {
            let f = self.folders[&at];
            if f.parent == NONE {
                continue;
            }
            if f.parent >= at {
                self.broken = true;
                return;
            }
            self.folders
                .entry(f.parent)
                .or_default()
                .totals
                .add(f.totals);
        }
        self.complete = true;
        self.blocks.shrink_to_fit();
        self.folders.shrink_to_fit();
        self.links.shrink_to_fit();
    }

    /// Summed up and usable: `du` may answer from it.
    pub fn usable(&self) -> bool {
        self.complete && !self.broken && self.top.is_some()
    }

    /// Summed up or broken: waiting longer changes nothing.
    pub fn settled(&self) -> bool {
        self.complete || self.broken
    }

    /// The root's own folder.
    pub fn top(&self) -> Option<i64> {
        self.top
    }

    /// The totals of folder `id`'s subtree (the folder included), as its
    /// `dir_totals` row will say; `None` for an entry that is no folder.
    pub fn totals(&self, id: i64) -> Option<Totals> {
        self.folders.get(&self.local(id)?).map(|f| f.totals)
    }

    /// The folder above folder `id` (`None` at the root's own folder, or
    /// for an entry that is no folder).
    pub fn folder_parent(&self, id: i64) -> Option<i64> {
        let f = self.folders.get(&self.local(id)?)?;
        (f.parent != NONE).then(|| self.base + i64::from(f.parent))
    }

    /// Entry `id`'s allocated bytes.
    pub fn allocated(&self, id: i64) -> u64 {
        let Some(at) = self.local(id) else {
            return 0;
        };
        match self.blocks.get(at as usize) {
            Some(&u32::MAX) => self.big.get(&at).copied().unwrap_or(0) * 512,
            Some(&b) => u64::from(b) * 512,
            None => 0,
        }
    }

    /// The files with several links.
    pub fn links(&self) -> &[HeldLink] {
        &self.links
    }

    /// The unlisted rows (what the rules keep out of a folder), by the
    /// folder holding them.
    pub fn unlisted(&self) -> &[(i64, Unlisted)] {
        &self.unlisted
    }

    /// Heap bytes, for `status`'s memory breakdown.
    pub fn heap_bytes(&self) -> usize {
        self.blocks.capacity() * 4
            + self.folders.capacity() * (std::mem::size_of::<Folder>() + 8)
            + self.links.capacity() * std::mem::size_of::<HeldLink>()
            + self.big.capacity() * 16
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: i64, parent: Option<i64>, kind: Kind, blocks: u64, size: u64) -> EntryRow {
        EntryRow {
            blocks,
            size,
            ..EntryRow::for_test(id, parent, b"x", kind)
        }
    }

    #[test]
    fn sums_folders_up_the_tree_whatever_order_rows_come_in() {
        let mut t = HeldTree::new(10);
        // Files before their folder's row, folders out of order.
        t.insert(&row(13, Some(11), Kind::File, 8, 4000));
        t.insert(&row(12, Some(10), Kind::Dir, 8, 4096));
        t.insert(&row(11, Some(10), Kind::Dir, 8, 4096));
        t.insert(&row(10, None, Kind::Dir, 8, 4096));
        t.insert(&row(14, Some(12), Kind::File, 16, 5000));
        assert!(!t.usable());
        t.sum_up();
        assert!(t.usable());
        let top = t.totals(10).unwrap();
        assert_eq!(
            (top.bytes, top.apparent, top.files, top.dirs),
            (5 * 8 * 512 + 8 * 512, 3 * 4096 + 9000, 2, 3)
        );
        assert_eq!(t.totals(11).unwrap().bytes, 16 * 512);
        assert_eq!(t.totals(13), None);
        assert_eq!(t.allocated(14), 16 * 512);
        assert_eq!(t.folder_parent(12), Some(10));
        assert_eq!(t.folder_parent(10), None);
    }

    #[test]
    fn a_parent_above_its_child_makes_the_tree_unusable() {
        let mut t = HeldTree::new(1);
        t.insert(&row(1, None, Kind::Dir, 8, 0));
        t.insert(&row(2, Some(3), Kind::Dir, 8, 0));
        t.sum_up();
        assert!(!t.usable());
    }
}
