//! The SQLite index: the [`Store`] handle (where the index lives, the pool
//! of read-only connections, entry ids) and everything that touches the
//! database's tables. Every statement on `entries` lives under this folder.
//!
//! - [`model`]: the row and operation types ([`EntryRow`], [`Op`], ...);
//! - [`open`]: opening, corruption recovery and migrations;
//! - [`writer`]: the single writer thread, which applies batches of [`Op`]s;
//! - [`backlog`]: a first index's rows, in the name index before SQLite
//!   (`packed`: the compact form they wait in);
//! - [`tree`]: the per-folder aggregates (`dir_totals`, `unlisted`) and the
//!   writer's changes to the tree's shape;
//! - [`entries`]: typed reads of `entries` for the rest of the daemon;
//! - [`lookup`]: roots, and an absolute path's entry;
//! - [`hashes`]: content hashes cached for duplicate finding;
//! - [`content`]: the content index's tables;
//! - [`media`]: media metadata (photos, songs, videos).
//! - [`labels`]: the user's bookmarks and tags, by entry id.
//! - [`searches`]: each user's saved searches and search history.
//! - [`journal`]: the fleet's journal of committed batches, and the reads
//!   the fleet link ships from.
//! - [`fleet_text`]: files' text as the fleet's `tsvector`s and `content:`
//!   as its `tsquery`s (`[fleet] content = true`).
//!
//! Every mutation goes through [`Writer`]: callers send batches of [`Op`]s
//! and the writer thread applies each batch in one transaction, keeping the
//! per-directory aggregates (`dir_totals`) current as it goes. Readers use
//! [`Store::read`], which hands out pooled read-only connections; WAL lets
//! them run while the writer commits.

use crate::LockOk;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, OpenFlags};

use crate::{Critical, Error};

pub mod backlog;
pub mod content;
pub mod entries;
pub mod fleet_text;
pub mod hashes;
pub mod held;
pub mod journal;
pub mod labels;
pub mod lookup;
pub mod media;
pub mod model;
pub mod open;
mod packed;
pub mod scan_reads;
pub mod searches;
pub mod stem;
pub mod summaries;
pub mod tree;
pub mod writer;

pub use entries::{load_row, row_from_sql};
pub use lookup::{RootRow, resolve, root_of, roots};
pub use model::{
    Change, EntryRow, FLAG_UNREADABLE, HashRow, Kind, Linked, Mirror, Op, Totals, Unlisted,
    pack_links, unpack_links,
};
pub use open::SCHEMA_VERSION;
pub use tree::{dir_totals, unlisted_of};
pub use writer::{WriteHandle, Writer};

/// Read connections kept for reuse. Opening one costs a file open and a
/// schema read; with 50 clients calling at once (benches/load.py) and 4
/// kept, most du, stat, ls and tree calls opened their own.
pub const READERS_KEPT: usize = 16;

/// Where the index lives and how it was opened.
pub struct Store {
    db_path: PathBuf,
    readers: Mutex<Vec<Connection>>,
    next_id: AtomicI64,
    /// Entry rows inserted, updated or deleted since start-up.
    pub rows_written: AtomicU64,
    /// Commits that wrote media rows (`PutMedia`, `DropMedia`), counted
    /// after each commit: `status` counts the rows again only after one.
    pub media_writes: AtomicU64,
    /// Things the user should hear about in `status` (e.g. recovery).
    pub notices: Mutex<Vec<String>>,
    /// Inodes with several links whose link-count refresh met a path the
    /// index had not caught up with (a folder above it renamed, the event
    /// still to come), with the refreshes tried so far: tried again with
    /// the next ones.
    pub relink: Mutex<HashMap<(u64, u64), u8>>,
    /// A first index's rows held back from SQLite ([`backlog`]).
    pub backlog: backlog::Backlog,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("db_path", &self.db_path)
            .finish()
    }
}

/// Seconds since the Unix epoch, as the index records times.
pub fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

impl Store {
    /// Opens (or creates) the index and starts the writer thread, without
    /// the fleet's journal.
    pub fn open(db_path: &Path, mirror: Box<dyn Mirror>) -> Result<(Arc<Store>, Writer), Critical> {
        Store::open_with(db_path, mirror, false)
    }

    /// [`Store::open`], with the fleet's journal kept when `journal` is on
    /// (a fleet is configured): every committed batch is also recorded in
    /// `fleet_journal` ([`journal`]).
    pub fn open_with(
        db_path: &Path,
        mirror: Box<dyn Mirror>,
        journal: bool,
    ) -> Result<(Arc<Store>, Writer), Critical> {
        let (conn, notice) = open::open_writer(db_path)?;
        journal::configure(&conn, journal)?;
        let max_id = entries::max_id(&conn)?;
        let store = Arc::new(Store {
            db_path: db_path.to_owned(),
            readers: Mutex::new(Vec::new()),
            next_id: AtomicI64::new(max_id + 1),
            rows_written: AtomicU64::new(0),
            media_writes: AtomicU64::new(0),
            relink: Mutex::new(Default::default()),
            backlog: Default::default(),
            notices: Mutex::new(notice.into_iter().collect()),
        });
        let writer = writer::start(conn, store.clone(), mirror, journal)?;
        Ok((store, writer))
    }

    pub fn db_path(&self) -> &Path {
        &self.db_path
    }

    /// A fresh, unused entry id. Ids are allocated in walk order, so a
    /// folder's id is always smaller than its children's.
    /// The id [`Self::alloc_id`] gives next (a first index's walk takes
    /// every id from it on).
    pub fn next_id(&self) -> i64 {
        self.next_id.load(Ordering::Relaxed)
    }

    pub fn alloc_id(&self) -> i64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// A dedicated read-only connection (for long work such as a scan).
    pub fn open_reader(&self) -> Result<Connection, Error> {
        let c = Connection::open_with_flags(
            &self.db_path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        c.pragma_update(None, "cache_size", -2048)?;
        c.busy_timeout(std::time::Duration::from_secs(30))?;
        Ok(c)
    }

    /// Lets the pooled readers' page caches go (each may hold 2 MiB after
    /// a burst of queries; the writer shrinks its own when idle).
    pub fn shrink_readers(&self) {
        for c in self.readers.lock_ok().iter() {
            let _ = c.execute_batch("PRAGMA shrink_memory");
        }
    }

    /// Runs `f` with a pooled read-only connection (a new one when all are
    /// in use, kept afterwards while fewer than [`READERS_KEPT`] are).
    pub fn read<T>(&self, f: impl FnOnce(&Connection) -> Result<T, Error>) -> Result<T, Error> {
        let conn = self.readers.lock_ok().pop();
        let conn = match conn {
            Some(c) => c,
            None => self.open_reader()?,
        };
        let out = f(&conn);
        let mut pool = self.readers.lock_ok();
        if pool.len() < READERS_KEPT {
            pool.push(conn);
        }
        out
    }

    /// Heap bytes SQLite holds in this process (page caches, prepared
    /// statements, schemas) across every connection.
    #[allow(unsafe_code)]
    pub fn sqlite_heap_bytes() -> u64 {
        // SAFETY: reads SQLite's own counter; no arguments, no pointers.
        unsafe { rusqlite::ffi::sqlite3_memory_used() }.max(0) as u64
    }

    /// Bytes on disk: index.db plus its WAL.
    pub fn disk_bytes(&self) -> u64 {
        let wal = self.db_path.with_extension("db-wal");
        [&self.db_path, &wal]
            .iter()
            .filter_map(|p| std::fs::metadata(p).ok())
            .map(|m| m.len())
            .sum()
    }

    /// Adds a notice shown by `status`.
    pub fn notice(&self, msg: String) {
        self.notices.lock_ok().push(msg);
    }
}
