//! Walking a root (or a folder under one) and reconciling it with the index.
//!
//! The initial scan and the restart reconcile are one algorithm: a pool of
//! threads takes folders from a shared stack, and for each one opens it
//! relative to its parent's open handle (`openat`), lists it (`getdents`),
//! `lstat`s each child relative to it (`fstatat`), loads the children the
//! index already has, compares each by (kind, size, mtime, inode, links,
//! blocks, mode), and emits only the differences: inserts, updates, and subtree
//! deletes for children that are gone. An unchanged tree writes nothing.
//! No system call is handed a full path, so trees deeper than `PATH_MAX`
//! are walked like any other (as GNU find does), and the kernel never
//! re-resolves a long path per entry.
//!
//! A folder's changes reach the writer before any of its subfolders is
//! taken up, so a parent's row is always committed before (or with) its
//! children's. Symlinks are recorded, never followed; other file systems
//! are not entered (like `du -x`); unreadable folders and vanishing files
//! are counted and logged, never fatal.
//!
//! Every child is judged by the [`Rules`] before anything else happens to
//! it. What they keep out is never indexed, entered for listing, or watched,
//! and whatever the index had of it is deleted; but its bytes still count,
//! so that `du` never drops them silently: an excluded folder becomes an
//! [`Unlisted`] row of its own (its name, and its sizes measured by a
//! sizes-only walk), and the BLOCK and SKIP tiers' files and folders are
//! summed into one nameless row per folder (sizes only: their names never
//! reach the index).
//!
//! One job per file:
//! - this file: what a scan is given and returns, and where the
//!   reconcile's findings go (the writer for a scan, a report for verify);
//! - `walk`: the walk itself, its threads and the per-folder compare;
//! - `diff`: the differences `verify` reports;
//! - `links`: refreshing the other paths of files with several links;
//! - `unlisted`: what the rules keep out of a folder, measured by size;
//! - `roots`: where a root is and what a walk of it reaches.
//!
//! The reads of `entries` that all of these make live in
//! [`crate::store::scan_reads`].

use crate::LockOk;
use std::ffi::OsStr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::Error;
use crate::ingest::exclude::Rules;
use crate::ingest::watch::Watcher;
use crate::platform::fs::Stat;
use crate::store::{EntryRow, Kind, Op, Store, Unlisted, WriteHandle, unix_now};

mod diff;
mod links;
mod roots;
mod unlisted;
mod walk;

use diff::VerifySink;
use walk::{Walked, reconcile};

pub use diff::{DiffKind, Difference};
pub(in crate::ingest) use links::Links;
pub(crate) use links::{LinkCounts, linked_under, refresh_links};
pub use roots::{canonical_root, reachable, through_symlink};
pub(in crate::ingest) use unlisted::Hidden;
pub use walk::Paused;

/// What to scan.
#[derive(Clone, Debug)]
pub struct ScanTarget {
    pub root_id: i64,
    /// The folder to walk: the root itself or a folder under it.
    pub start: PathBuf,
    /// The start folder's entry, when the index has it.
    pub start_id: Option<i64>,
    /// True when `start` is the root (its entry is the root's own folder).
    pub is_root: bool,
    pub cross_filesystems: bool,
    /// What is indexed (one set of rules for the whole walk).
    pub rules: Arc<Rules>,
}

/// Live counters of a running scan, read by status and progress streams.
#[derive(Debug, Default)]
pub struct Progress {
    pub scanned: AtomicU64,
    pub errors: AtomicU64,
    pub changes: AtomicU64,
}

/// How a scan ended.
#[derive(Clone, Copy, Debug, Default)]
pub struct Outcome {
    pub start_id: i64,
    pub scanned: u64,
    pub errors: u64,
    /// Changes sent to the writer (inserts, updates, subtree deletes).
    pub changes: u64,
    /// A first index whose rows reached the name index before SQLite: the
    /// scan returned at *ready*, and [`crate::store::backlog`] says when
    /// they are persisted.
    pub held: bool,
}

/// An entry the index already has under the folder being reconciled: its
/// row as the store reads it. Among a folder's children, as
/// [`scan_reads::children`](crate::store::scan_reads::children) returns
/// them, the name is the key and the row's own `name` is empty.
pub(in crate::ingest) type Known = EntryRow;

/// A folder that held several hundred entries, going by its own size
/// (ext4: a 4 KiB block per 100-200 names; btrfs: twice their bytes).
/// Only picks how its children are read back.
fn is_wide_dir(k: &Known) -> bool {
    k.kind == Kind::Dir && k.size >= 16 * 1024
}

/// An index row from a live `lstat`.
pub(crate) fn row_from_stat(id: i64, parent_id: Option<i64>, name: Vec<u8>, s: &Stat) -> EntryRow {
    EntryRow {
        id,
        parent_id,
        name,
        kind: s.kind,
        size: s.size,
        blocks: s.blocks,
        mtime_ns: s.mtime_ns,
        dev: s.dev,
        ino: s.ino,
        nlink: s.nlink,
        mode: s.mode,
        flags: 0,
    }
}

pub(in crate::ingest) fn name_bytes(name: &OsStr) -> Vec<u8> {
    name.as_encoded_bytes().to_vec()
}

pub(in crate::ingest) fn unchanged(k: &Known, r: &EntryRow) -> bool {
    k.kind == r.kind
        && k.size == r.size
        && k.mtime_ns == r.mtime_ns
        && k.ino == r.ino
        && k.nlink == r.nlink
        && k.blocks == r.blocks
        && k.mode == r.mode
        && k.flags == r.flags
}

/// One finding of the reconcile. Paths are empty unless the sink
/// [wants them](Sink::wants_paths).
pub(in crate::ingest) enum Found {
    Insert(EntryRow, PathBuf),
    Update(EntryRow, Option<Known>, PathBuf),
    Delete(Known, PathBuf),
    /// What the rules keep out of one folder, as it should now be recorded.
    Unlisted(i64, Vec<Unlisted>),
}

/// Where the reconcile's findings go: the writer (scan) or a report
/// (verify). Shared by the walk's threads; each folder's findings arrive
/// in one call, a folder's before any of its subfolders'.
pub(in crate::ingest) trait Sink: Sync {
    /// Whether paths are used (building them costs an allocation per
    /// entry, which a scan of millions does not need).
    fn wants_paths(&self) -> bool;
    fn new_id(&self) -> i64;
    fn emit(&self, found: Vec<Found>) -> Result<(), Error>;
    /// Whether the walk may read the index through a view up to
    /// [`READ_SPAN`](walk::READ_SPAN) old. True for a scan: nothing but the walk itself
    /// writes entries while it runs (the watcher's batches wait on the
    /// same thread), and it reads each folder's rows once, before it sends
    /// any change to them. Not for verify, which runs beside the writer.
    fn reads_may_lag(&self) -> bool {
        false
    }
    /// The walk is a root's first index (the index has nothing of it).
    fn first_index(&self) -> Result<(), Error> {
        Ok(())
    }
}

/// Rows per batch sent to the writer: one transaction commits many
/// folders' changes, not one folder's.
const BATCH: usize = 8192;

/// Sends the folders' changes to the writer, in batches, in the order the
/// folders were reconciled, and counts them.
pub(in crate::ingest) struct WriteSink<'a> {
    store: &'a Store,
    /// The root walked, and whether its first index's rows are held back
    /// from SQLite until the walk ends (see [`crate::store::backlog`]).
    root_id: i64,
    held: AtomicBool,
    writer: &'a WriteHandle,
    progress: &'a Progress,
    /// Changes not sent yet. Shared by the walk's threads, and sent while
    /// held, so that the order of `emit` calls is the writer's order.
    pending: Mutex<Vec<Op>>,
}

impl<'a> WriteSink<'a> {
    pub(in crate::ingest) fn new(
        store: &'a Store,
        writer: &'a WriteHandle,
        progress: &'a Progress,
        root_id: i64,
    ) -> Self {
        WriteSink {
            store,
            root_id,
            held: AtomicBool::new(false),
            writer,
            progress,
            pending: Mutex::new(Vec::new()),
        }
    }

    /// Sends what is left.
    pub(in crate::ingest) fn finish(&self) -> Result<(), Error> {
        let mut pending = self.pending.lock_ok();
        if pending.is_empty() {
            return Ok(());
        }
        self.writer.send(std::mem::take(&mut *pending))
    }
}

impl Sink for WriteSink<'_> {
    fn wants_paths(&self) -> bool {
        false
    }
    fn new_id(&self) -> i64 {
        self.store.alloc_id()
    }
    fn reads_may_lag(&self) -> bool {
        true
    }
    fn first_index(&self) -> Result<(), Error> {
        self.writer.send(vec![Op::HoldBegin {
            root_id: self.root_id,
            first_id: self.store.next_id(),
        }])?;
        self.held.store(true, Ordering::Relaxed);
        Ok(())
    }
    fn emit(&self, found: Vec<Found>) -> Result<(), Error> {
        if found.is_empty() {
            return Ok(());
        }
        self.progress
            .changes
            .fetch_add(found.len() as u64, Ordering::Relaxed);
        let mut pending = self.pending.lock_ok();
        pending.extend(found.into_iter().map(|f| match f {
            Found::Insert(row, _) => Op::Insert(row),
            Found::Update(row, _, _) => Op::Update(row),
            Found::Delete(old, _) => Op::Delete { id: old.id },
            Found::Unlisted(dir, rows) => Op::SetUnlisted { dir, rows },
        }));
        if pending.len() >= BATCH {
            self.writer.send(std::mem::take(&mut *pending))?;
        }
        Ok(())
    }
}

/// Where a scan of `target` starts: from its start folder, or from where
/// a stopped walk of a root left off.
pub enum ScanFrom {
    Start(ScanTarget),
    Paused(Paused),
}

impl ScanFrom {
    fn target(&self) -> &ScanTarget {
        match self {
            ScanFrom::Start(t) => t,
            ScanFrom::Paused(p) => &p.target,
        }
    }

    /// The folder the scan is of.
    pub fn start(&self) -> &std::path::Path {
        &self.target().start
    }
}

/// A stopped walk that will not be taken up: a first index's window ends
/// (what was sent is committed; the next scan goes on from it, as after a
/// kill).
pub fn end_paused(writer: &WriteHandle, paused: Paused) {
    if paused.held {
        let _ = writer.send(vec![Op::HoldEnd]);
    }
}

/// Walks a target and writes the differences to the index. Returns once
/// every change is committed, except when it stops and keeps what is left
/// (below).
///
/// When `cancel` stops the walk of a root and `keep` is given, what is
/// left is put there ([`Paused`]) and the scan returns
/// [`Error::Cancelled`] with nothing else done: a first index's window
/// stays open, for the walk to be taken up again ([`ScanFrom::Paused`]) or
/// ended ([`end_paused`]). Without `keep` a stopped scan ends its window
/// (what was sent is committed; the next scan goes on from it).
pub fn scan(
    store: &Store,
    writer: &WriteHandle,
    from: ScanFrom,
    progress: &Progress,
    cancel: &AtomicBool,
    watcher: Option<&Arc<Watcher>>,
    keep: Option<&mut Option<Paused>>,
) -> Result<Outcome, Error> {
    let started = std::time::Instant::now();
    let target = from.target();
    let (root_id, is_root, start) = (target.root_id, target.is_root, target.start.clone());
    let sink = WriteSink::new(store, writer, progress, root_id);
    match &from {
        // A first index still being written would read as missing rows.
        ScanFrom::Start(_) => store.backlog.wait(),
        // Its own window, if any, is still open: the walk goes on in it.
        ScanFrom::Paused(p) => sink.held.store(p.held, Ordering::Relaxed),
    }
    let links = Links::new(!is_root);
    let result = reconcile(store, from, progress, cancel, watcher, &sink, &links);
    sink.finish()?;
    let held = sink.held.load(Ordering::Relaxed);
    let result = match (result, keep) {
        (Ok(Walked::Stopped(mut p)), Some(keep)) if is_root => {
            p.held = held;
            tracing::info!(
                path = %start.display(),
                folders_left = p.folders(),
                "scan stopped; it can go on from here"
            );
            *keep = Some(p);
            return Err(Error::Cancelled);
        }
        (Ok(Walked::Stopped(_)), _) => Err(Error::Cancelled),
        (Ok(Walked::Done(id)), _) => Ok(id),
        (Err(e), _) => Err(e),
    };
    if let Ok(start_id) = result
        && is_root
    {
        writer.send(vec![Op::RootScanned {
            root_id,
            entry_id: start_id,
            at: unix_now(),
        }])?;
    }
    // What was sent is committed even when cancelled; the next start's
    // reconcile finishes the job. For a first index, this is when the name
    // index has it all (ready); SQLite follows (persisted).
    writer.flush()?;
    if held {
        writer.send(vec![Op::HoldEnd])?;
    }
    let start_id = result?;
    // A folder scanned on its own (new, moved in, or recrawled) may hold
    // hard links to files elsewhere: their link counts changed too.
    let refreshed = refresh_links(store, writer, links.take())?;
    let outcome = Outcome {
        start_id,
        scanned: progress.scanned.load(Ordering::Relaxed),
        errors: progress.errors.load(Ordering::Relaxed),
        changes: progress.changes.load(Ordering::Relaxed) + refreshed,
        held,
    };
    tracing::info!(
        path = %start.display(),
        scanned = outcome.scanned,
        changes = outcome.changes,
        errors = outcome.errors,
        ms = started.elapsed().as_millis() as u64,
        "scan done"
    );
    Ok(outcome)
}

/// Walks `target` afresh and returns every difference from the index,
/// changing nothing.
pub fn verify(
    store: &Store,
    target: &ScanTarget,
    progress: &Progress,
) -> Result<Vec<Difference>, Error> {
    store.backlog.wait();
    let sink = VerifySink::default();
    reconcile(
        store,
        ScanFrom::Start(target.clone()),
        progress,
        &AtomicBool::new(false),
        None,
        &sink,
        &Links::new(false),
    )?;
    Ok(sink.found.into_inner().unwrap_or_else(|e| e.into_inner()))
}
