//! The index's rows and operations: what an entry is ([`EntryRow`],
//! [`Kind`]), the aggregates of a subtree ([`Totals`]), what the rules keep
//! out of a folder ([`Unlisted`]), the changes the writer applies ([`Op`])
//! and the ones it reports to what mirrors the index ([`Change`],
//! [`Mirror`]).
//!
//! Types only, and the encodings of their columns (`unlisted.links`): the
//! SQL that reads and writes them lives in the other files of the store.

use std::sync::mpsc;

use rusqlite::Connection;

use crate::Error;

use super::content;

/// Entry kinds, as `lstat` tells them and as stored in `entries.kind`
/// (`kind as u8`). Defined with the file-system calls, which produce them.
pub use crate::platform::fs::Kind;

/// `entries.flags` bit: a folder whose children could not be read.
pub const FLAG_UNREADABLE: u32 = 1;

/// One row of `entries`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryRow {
    pub id: i64,
    pub parent_id: Option<i64>,
    pub name: Vec<u8>,
    pub kind: Kind,
    pub size: u64,
    pub blocks: u64,
    pub mtime_ns: i64,
    pub dev: u64,
    pub ino: u64,
    pub nlink: u64,
    pub mode: u32,
    pub flags: u32,
}

impl EntryRow {
    /// A row for unit tests: the given place and kind, inode = id, one
    /// link, every other figure zero (change fields with `..`).
    #[cfg(test)]
    pub(crate) fn for_test(id: i64, parent_id: Option<i64>, name: &[u8], kind: Kind) -> Self {
        EntryRow {
            id,
            parent_id,
            name: name.to_vec(),
            kind,
            size: 0,
            blocks: 0,
            mtime_ns: 0,
            dev: 0,
            ino: id as u64,
            nlink: 1,
            mode: 0,
            flags: 0,
        }
    }

    /// What this entry adds to the aggregates of every folder above it (and,
    /// for a folder, to its own). Multi-link files add nothing: disk-usage
    /// queries count them once per query from `entries_multilink`.
    pub(super) fn contribution(&self) -> Totals {
        let unreadable = i64::from(self.flags & FLAG_UNREADABLE != 0);
        match self.kind {
            Kind::Dir => Totals {
                bytes: self.blocks as i64 * 512,
                apparent: self.size as i64,
                files: 0,
                dirs: 1,
                incomplete: unreadable,
            },
            _ if self.nlink > 1 => Totals::default(),
            _ => Totals {
                bytes: self.blocks as i64 * 512,
                apparent: self.size as i64,
                files: 1,
                dirs: 0,
                incomplete: 0,
            },
        }
    }
}

/// Aggregates of a subtree, or a change to them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub bytes: i64,
    pub apparent: i64,
    pub files: i64,
    pub dirs: i64,
    pub incomplete: i64,
}

impl Totals {
    pub(crate) fn add(&mut self, o: Totals) {
        self.bytes += o.bytes;
        self.apparent += o.apparent;
        self.files += o.files;
        self.dirs += o.dirs;
        self.incomplete += o.incomplete;
    }
    pub(super) fn neg(self) -> Totals {
        Totals {
            bytes: -self.bytes,
            apparent: -self.apparent,
            files: -self.files,
            dirs: -self.dirs,
            incomplete: -self.incomplete,
        }
    }
    pub(super) fn is_zero(&self) -> bool {
        *self == Totals::default()
    }
}

/// Sizes of what the rules keep out of one folder (a row of `unlisted`):
/// an excluded folder by name, or (`name` empty) the nameless sum of the
/// folder's sensitive-tier entries and excluded files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unlisted {
    pub name: Vec<u8>,
    pub totals: Totals,
    /// Unix seconds of the sizes-only walk that measured it.
    pub measured_at: i64,
    /// The files with several links counted in `totals`, each inode once.
    pub links: Vec<Linked>,
}

/// A file with several links counted in an unlisted row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Linked {
    pub dev: u64,
    pub ino: u64,
    /// Allocated and apparent bytes; `None` in rows written before they
    /// were kept (migration 5), until their folder is scanned again.
    pub sizes: Option<(u64, u64)>,
}

/// `unlisted.links` as stored: a tag byte 1, then (dev, ino, allocated
/// bytes, apparent bytes) per file as little-endian u64s. Nothing for no
/// file.
pub fn pack_links(links: &[Linked]) -> Vec<u8> {
    if links.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::with_capacity(1 + links.len() * 32);
    out.push(1);
    for l in links {
        let (bytes, apparent) = l.sizes.unwrap_or_default();
        for v in [l.dev, l.ino, bytes, apparent] {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    out
}

/// Reads [`pack_links`]'s form, and the older one of (dev, ino) pairs
/// alone (16 bytes each, so never one byte over a multiple of 16).
pub fn unpack_links(b: &[u8]) -> Vec<Linked> {
    // The i-th little-endian u64 of a record.
    let at =
        |c: &[u8], i: usize| u64::from_le_bytes(c[i * 8..i * 8 + 8].try_into().unwrap_or_default());
    match b.split_first() {
        Some((1, rest)) if b.len() % 16 == 1 => rest
            .chunks_exact(32)
            .map(|c| Linked {
                dev: at(c, 0),
                ino: at(c, 1),
                sizes: Some((at(c, 2), at(c, 3))),
            })
            .collect(),
        _ => b
            .chunks_exact(16)
            .map(|c| Linked {
                dev: at(c, 0),
                ino: at(c, 1),
                sizes: None,
            })
            .collect(),
    }
}

/// A committed change, as the in-memory mirror of the index needs it.
#[derive(Debug)]
pub enum Change {
    /// A new entry, or new metadata for an existing one.
    Upsert(EntryRow),
    /// Entries gone (whole subtrees, every id listed).
    Removed(Vec<i64>),
    /// An entry renamed or moved; `subtree` lists its descendants, parents
    /// before children (their depth changed).
    Moved {
        id: i64,
        parent_id: i64,
        name: Vec<u8>,
        subtree: Vec<i64>,
    },
}

/// Something kept equal to the index: loaded by the writer thread before
/// its first commit, then given every commit's changes right after the
/// commit, so it never drifts from SQLite (the search snapshot).
pub trait Mirror: Send + 'static {
    fn load(&mut self, conn: &Connection) -> Result<(), Error>;
    fn apply(&mut self, changes: Vec<Change>);
    /// The writer has gone idle (a scan ended, a burst was written): a
    /// chance to give back what growing left over.
    fn idle(&mut self) {}
}

/// A cached content hash and the file state it was computed for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HashRow {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mtime_ns: i64,
    pub ctime_ns: i64,
    pub partial: Option<Vec<u8>>,
    pub full: Option<Vec<u8>>,
    pub hashed_ns: i64,
}

/// One change to the index.
#[derive(Debug)]
pub enum Op {
    /// A new entry; its id was allocated with [`super::Store::alloc_id`].
    Insert(EntryRow),
    /// New metadata for an existing entry of the same kind.
    Update(EntryRow),
    /// Remove an entry and its whole subtree.
    Delete { id: i64 },
    /// What the rules keep out of folder `dir` is now exactly `rows`
    /// (sizes counted in the folder's aggregates).
    SetUnlisted { dir: i64, rows: Vec<Unlisted> },
    /// Rename or move an entry (with its subtree): one row changes.
    Move {
        id: i64,
        parent_id: i64,
        name: Vec<u8>,
    },
    /// A root's scan finished: record its root entry and the time.
    RootScanned {
        root_id: i64,
        entry_id: i64,
        at: i64,
    },
    /// Add a root (the row; scanning is queued separately).
    AddRoot {
        path: Vec<u8>,
        reply: mpsc::Sender<Result<i64, Error>>,
    },
    /// Remove a root and everything under it.
    RemoveRoot { root_id: i64 },
    /// A root's folder is gone (deleted, moved away, unmounted, or another
    /// folder in its place): its entries leave the index and the root
    /// stays configured, to be scanned afresh when its folder is back.
    RootGone { root_id: i64 },
    /// Acknowledged once everything sent before it is committed (inside a
    /// first index's window, once it is in the name index: see
    /// [`Op::HoldBegin`]).
    Barrier(mpsc::Sender<()>),
    /// A root's first index starts (it has no rows yet): until
    /// [`Op::HoldEnd`], inserted rows go to the mirror at once and are
    /// held back from SQLite ([`super::backlog`]).
    /// `first_id`: no id the walk takes is below it.
    HoldBegin { root_id: i64, first_id: i64 },
    /// The first index's walk is over: what was held back is committed
    /// now, in order, before anything sent after it.
    HoldEnd,
    /// Commit what came before, checkpoint the WAL and stop.
    Shutdown,
    /// Content hashes computed for duplicate finding (cached per inode).
    PutHashes(Vec<HashRow>),
    /// What files say: their rows replace the content index's.
    PutContent(Vec<content::ContentRow>),
    /// Files to read for the content index.
    QueueContent(Vec<i64>),
    /// Files whose content leaves the index (and the queue).
    DropContent(Vec<i64>),
    /// A root's content flag (`fsctl roots add PATH --content`).
    SetRootContent { root_id: i64, on: bool },
    /// Media metadata read from files: their rows replace the old ones.
    PutMedia(Vec<super::media::MediaRow>),
    /// Files whose media rows go (no longer media files, or sensitive).
    DropMedia(Vec<i64>),
    /// One-line summaries made for folder manifests.
    PutSummaries(Vec<super::summaries::SummaryRow>),
    /// Bulk work is over: checkpoint the WAL (so it does not stay large)
    /// and give the page cache back.
    Idle,
    /// PostgreSQL has applied the fleet journal's batches up to this seq:
    /// they are dropped.
    FleetAcked(i64),
    /// A change to the bookmarks or tags; `reply` hears what it did once
    /// it is committed.
    Labels {
        edit: super::labels::Edit,
        reply: mpsc::Sender<super::labels::Outcome>,
    },
    /// A change to a user's saved searches or search history; `reply`
    /// hears what it did once it is committed.
    Searches {
        edit: super::searches::Edit,
        reply: mpsc::Sender<super::searches::Outcome>,
    },
}
