//! The name index: every entry's name, place and few figures in memory,
//! beside SQLite, which the store's single writer keeps equal to the index
//! (through [`crate::store::Mirror`], implemented here by
//! [`SnapshotMirror`]), change by change as it commits.
//!
//! Why in memory: a term matches when it is a substring of the entry's path
//! relative to its root, so an entry matches through its own name or through
//! any folder above it. Resolving that in SQL means enumerating whole
//! subtrees per term. Here, folded names live in one contiguous arena that a
//! SIMD substring search (`memchr::memmem`) scans in a few milliseconds, and
//! one forward pass over the parent array spreads matches down the tree
//! (ids are allocated in walk order, so a folder's id is smaller than its
//! children's). SQLite stays the source of truth: the [`Snapshot`] is loaded
//! from it at start-up and then given every commit.
//!
//! - [`snapshot`]: the columns, loading, applying changes, compacting, and
//!   read-only views of single entries;
//! - [`grams`]: the trigram filter over the name arena;
//! - [`slots`]: compact columns (sparse slots, name offsets, parents);
//! - [`events`]: the change events subscribers are told of;
//! - [`quiet`]: commits counted, for work done ahead once they stop;
//! - [`fold`], [`kinds`], [`ext`]: how names are folded, classed by kind
//!   and keyed by extension.

use std::sync::{Arc, RwLock};
use std::time::Instant;

use crate::store::{Change, Mirror};
use crate::{Error, RwLockOk};

pub mod events;
pub(crate) mod ext;
pub mod fold;
pub(crate) mod grams;
pub mod kinds;
pub mod quiet;
pub(crate) mod slots;
pub mod snapshot;

pub use events::{ChangeEvent, ChangeKind};
pub use snapshot::{Snapshot, read_loaded};

/// Keeps the search snapshot equal to the index (see [`crate::store::Mirror`])
/// and tells subscribers what changed.
#[derive(Debug)]
pub struct SnapshotMirror {
    pub snapshot: Arc<RwLock<Snapshot>>,
    pub events: tokio::sync::broadcast::Sender<ChangeEvent>,
}

impl Mirror for SnapshotMirror {
    fn load(&mut self, conn: &rusqlite::Connection) -> Result<(), Error> {
        let t = Instant::now();
        let mut loaded = match Snapshot::load(conn) {
            Ok(s) => s,
            Err(e) => {
                // Answered from as it is (empty, then kept current by every
                // commit) rather than waited for forever.
                self.snapshot.write_ok().mark_loaded();
                return Err(e);
            }
        };
        tracing::info!(
            entries = loaded.len(),
            heap = loaded.heap_bytes(),
            ms = t.elapsed().as_millis() as u64,
            "search snapshot loaded"
        );
        let commits = self.snapshot.read_ok().commits.clone();
        commits.applying(|| {
            let mut snapshot = self.snapshot.write_ok();
            loaded.commits = snapshot.commits.clone();
            *snapshot = loaded;
        });
        crate::platform::process::release_memory();
        Ok(())
    }

    fn apply(&mut self, changes: Vec<Change>) {
        // Work done ahead under a read lock lets go when it sees the flag
        // (see `quiet`): the change is searchable without waiting for it.
        let commits = self.snapshot.read_ok().commits.clone();
        let events = commits.applying(|| {
            let mut snapshot = self.snapshot.write_ok();
            if self.events.receiver_count() == 0 {
                snapshot.apply(changes, None);
                return Vec::new();
            }
            let mut events = Vec::new();
            snapshot.apply(changes, Some(&mut events));
            events
        });
        for e in events {
            let _ = self.events.send(e);
        }
    }

    fn idle(&mut self) {
        let t = Instant::now();
        let mut snapshot = self.snapshot.write_ok();
        let before = snapshot.heap_bytes();
        snapshot.shrink();
        tracing::debug!(
            before,
            after = snapshot.heap_bytes(),
            ms = t.elapsed().as_millis() as u64,
            "search snapshot shrunk"
        );
    }
}
