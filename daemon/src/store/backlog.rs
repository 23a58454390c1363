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
//! exact (du, ls, info, map, dupes, the watcher's own reconcile) wait for
//! [`Backlog::wait`] first; search does not.
//!
//! A kill inside the window loses nothing that matters: SQLite holds a
//! prefix of whole batches (a folder's row before its children's), the
//! root's `entry_id` is set only by the last of them (`RootScanned`), and
//! the next start's scan goes on from the root's folder row, adding what
//! is missing.

use crate::LockOk;
use std::sync::{Condvar, Mutex};

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
    held: Mutex<Held>,
    done: Condvar,
}

impl Backlog {
    /// What is held now.
    pub fn held(&self) -> Held {
        *self.held.lock_ok()
    }

    /// True when everything sent to the writer before a first index's end
    /// is in SQLite (always, outside a first index).
    pub fn persisted(&self) -> bool {
        self.held.lock_ok().root_id.is_none()
    }

    /// Waits until [`Self::persisted`].
    pub fn wait(&self) {
        let mut held = self.held.lock_ok();
        while held.root_id.is_some() {
            held = self.done.wait(held).unwrap_or_else(|e| e.into_inner());
        }
    }

    pub(super) fn begin(&self, root_id: i64) {
        *self.held.lock_ok() = Held {
            root_id: Some(root_id),
            entries: 0,
            pending: 0,
        };
    }

    pub(super) fn hold(&self, ops: u64, entries: u64) {
        let mut held = self.held.lock_ok();
        held.pending += ops;
        held.entries += entries;
    }

    pub(super) fn committed(&self, ops: u64) {
        let mut held = self.held.lock_ok();
        held.pending = held.pending.saturating_sub(ops);
    }

    /// Everything held is committed.
    pub(super) fn end(&self) {
        *self.held.lock_ok() = Held::default();
        self.done.notify_all();
    }
}
