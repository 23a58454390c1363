//! What the writer holds back from SQLite during a root's first index.
//!
//! A root's first index (no rows for it yet) is bound by the walk, and on a
//! machine of few cores SQLite's share of the CPU is what keeps it behind
//! `updatedb`. So while such a walk runs, the writer hands its rows to the
//! name index at once (search answers from it as soon as the walk ends:
//! *ready*) and holds them in memory, in order, to commit once the walk is
//! over (*persisted*). Anything sent meanwhile waits behind them, so
//! nothing is reordered.
//!
//! This file owns the shared figures of that window: whether it is open,
//! how many operations wait, how many entries the held-back first index
//! has (for `status` while SQLite does not have them yet), and a way to
//! wait until everything is committed. Reads of `entries` that must be
//! exact (info, map, dupes, the watcher's own reconcile) wait for
//! [`Backlog::wait`] first; search does not, nor do `du` and `ls`, which
//! answer from the name index and the held tree ([`super::held`],
//! [`Backlog::with_tree`]) once the walk is over.
//!
//! A kill inside the window loses nothing that matters: SQLite holds a
//! prefix of whole batches (a folder's row before its children's), the
//! root's `entry_id` is set only by the last of them (`RootScanned`), and
//! the next start's scan goes on from the root's folder row, adding what
//! is missing.

use crate::LockOk;
use std::sync::{Condvar, Mutex};

use super::held::HeldTree;

/// The held-back first index, as `status` shows it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Held {
    /// The root whose first index is not all in SQLite yet.
    pub root_id: Option<i64>,
    /// Entries that first index has inserted so far (the name index has
    /// them all).
    pub entries: u64,
    /// Operations waiting for SQLite, that first index's and anything sent
    /// behind it.
    pub pending: u64,
}

/// Shared between the writer (which changes it) and everyone else.
#[derive(Debug, Default)]
pub struct Backlog {
    held: Mutex<Inner>,
    /// Told when the window closes and when its tree is summed up.
    done: Condvar,
}

#[derive(Debug, Default)]
struct Inner {
    held: Held,
    /// The held first index's figures for `du` ([`super::held`]).
    tree: Option<HeldTree>,
}

impl Backlog {
    /// What is held now.
    pub fn held(&self) -> Held {
        self.held.lock_ok().held
    }

    /// True when everything sent to the writer before a first index's end
    /// is in SQLite (always, outside a first index).
    pub fn persisted(&self) -> bool {
        self.held.lock_ok().held.root_id.is_none()
    }

    /// Waits until [`Self::persisted`].
    pub fn wait(&self) {
        let mut inner = self.held.lock_ok();
        while inner.held.root_id.is_some() {
            inner = self.done.wait(inner).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Runs `f` on the held first index's tree once its walk is over and
    /// the tree is summed up (waiting for that); `None`, at once, when
    /// nothing is held back (everything is in SQLite) or the tree could
    /// not follow the window: the caller reads SQLite after [`Self::wait`].
    pub fn with_tree<T>(&self, f: impl FnOnce(&HeldTree) -> T) -> Option<T> {
        let mut inner = self.held.lock_ok();
        loop {
            // Nothing held back: SQLite has it all.
            inner.held.root_id?;
            match &inner.tree {
                Some(t) if t.usable() => return Some(f(t)),
                Some(t) if t.settled() => return None,
                _ => inner = self.done.wait(inner).unwrap_or_else(|e| e.into_inner()),
            }
        }
    }

    /// Heap bytes of the held tree (0 when there is none).
    pub fn tree_bytes(&self) -> usize {
        self.held
            .lock_ok()
            .tree
            .as_ref()
            .map_or(0, HeldTree::heap_bytes)
    }

    pub(super) fn begin(&self, root_id: i64, first_id: i64) {
        *self.held.lock_ok() = Inner {
            held: Held {
                root_id: Some(root_id),
                entries: 0,
                pending: 0,
            },
            tree: Some(HeldTree::new(first_id)),
        };
    }

    /// Changes the held tree (nothing once it is dropped).
    pub(super) fn tree(&self, f: impl FnOnce(&mut HeldTree)) {
        if let Some(t) = self.held.lock_ok().tree.as_mut() {
            f(t);
        }
    }

    /// The walk is over: the tree's folders are summed up, and whoever
    /// waits in [`Self::with_tree`] is told.
    pub(super) fn walked(&self) {
        if let Some(t) = self.held.lock_ok().tree.as_mut() {
            t.sum_up();
        }
        self.done.notify_all();
    }

    pub(super) fn hold(&self, ops: u64, entries: u64) {
        let mut inner = self.held.lock_ok();
        inner.held.pending += ops;
        inner.held.entries += entries;
    }

    pub(super) fn committed(&self, ops: u64) {
        let mut inner = self.held.lock_ok();
        inner.held.pending = inner.held.pending.saturating_sub(ops);
    }

    /// Everything held is committed: the tree is dropped.
    pub(super) fn end(&self) {
        let tree = std::mem::take(&mut *self.held.lock_ok());
        self.done.notify_all();
        drop(tree);
    }
}
