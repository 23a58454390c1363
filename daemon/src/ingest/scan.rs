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

use crate::LockOk;
use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use rusqlite::{Connection, OptionalExtension};

use crate::Error;
use crate::ingest::exclude::{Rules, Verdict};
use crate::ingest::watch::{WatchRef, Watcher, is_cookie};
use crate::platform::fs::{self as pfs, DirRef, Stat};
use crate::store::{
    EntryRow, FLAG_UNREADABLE, Kind, Op, Store, Totals, Unlisted, WriteHandle, unix_now,
};

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
}

/// An entry the index already has under the folder being reconciled.
#[derive(Clone, Debug)]
pub(crate) struct Known {
    id: i64,
    kind: Kind,
    size: u64,
    blocks: u64,
    mtime_ns: i64,
    dev: u64,
    ino: u64,
    nlink: u64,
    mode: u32,
    flags: u32,
}

impl Known {
    /// A folder that held several hundred entries, going by its own size
    /// (ext4: a 4 KiB block per 100-200 names; btrfs: twice their bytes).
    /// Only picks how its children are read back.
    fn is_wide_dir(&self) -> bool {
        self.kind == Kind::Dir && self.size >= 16 * 1024
    }
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

fn name_bytes(name: &OsStr) -> Vec<u8> {
    name.as_encoded_bytes().to_vec()
}

fn unchanged(k: &Known, r: &EntryRow) -> bool {
    k.kind == r.kind
        && k.size == r.size
        && k.mtime_ns == r.mtime_ns
        && k.ino == r.ino
        && k.nlink == r.nlink
        && k.blocks == r.blocks
        && k.mode == r.mode
        && k.flags == r.flags
}

const KNOWN_COLUMNS: &str = "name, id, kind, size, blocks, mtime_ns, dev, ino, nlink, flags, mode";

fn known_from_sql(r: &rusqlite::Row<'_>) -> rusqlite::Result<Known> {
    Ok(Known {
        id: r.get(1)?,
        kind: Kind::from_i64(r.get(2)?),
        size: r.get::<_, i64>(3)? as u64,
        blocks: r.get::<_, i64>(4)? as u64,
        mtime_ns: r.get(5)?,
        dev: r.get::<_, i64>(6)? as u64,
        ino: r.get::<_, i64>(7)? as u64,
        nlink: r.get::<_, i64>(8)? as u64,
        flags: r.get(9)?,
        mode: r.get(10)?,
    })
}

fn load_one(conn: &Connection, id: i64) -> Result<Option<Known>, Error> {
    let mut stmt =
        conn.prepare_cached(&format!("SELECT {KNOWN_COLUMNS} FROM entries WHERE id=?1"))?;
    Ok(stmt.query_row([id], known_from_sql).optional()?)
}

fn load_children(conn: &Connection, id: i64, wide: bool) -> Result<HashMap<Vec<u8>, Known>, Error> {
    if !wide {
        let mut out = HashMap::new();
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {KNOWN_COLUMNS} FROM entries WHERE parent_id=?1"
        ))?;
        let mut rows = stmt.query([id])?;
        while let Some(r) = rows.next()? {
            out.insert(r.get::<_, Vec<u8>>(0)?, known_from_sql(r)?);
        }
        return Ok(out);
    }
    // A wide folder's children were given ids as it was listed, so they
    // are usually one run of ids: read that run of the table in order
    // rather than seek each row from the index (a folder of 200k files:
    // 18% of an unchanged restart's time went to those seeks).
    let (count, lo, hi): (i64, Option<i64>, Option<i64>) = conn
        .prepare_cached("SELECT COUNT(*), MIN(id), MAX(id) FROM entries WHERE parent_id=?1")?
        .query_row([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    let mut out = HashMap::with_capacity(count as usize);
    let (Some(lo), Some(hi)) = (lo, hi) else {
        return Ok(out);
    };
    let mut rows_of = |sql: &str, args: &[i64]| -> Result<(), Error> {
        let mut stmt = conn.prepare_cached(sql)?;
        let mut rows = stmt.query(rusqlite::params_from_iter(args))?;
        while let Some(r) = rows.next()? {
            out.insert(r.get::<_, Vec<u8>>(0)?, known_from_sql(r)?);
        }
        Ok(())
    };
    if count >= 256 && (hi - lo + 1) <= count * 2 {
        // `+parent_id`: the range of ids, not the parent index, drives it.
        rows_of(
            &format!(
                "SELECT {KNOWN_COLUMNS} FROM entries WHERE id BETWEEN ?2 AND ?3 AND +parent_id=?1"
            ),
            &[id, lo, hi],
        )?;
    } else {
        rows_of(
            &format!("SELECT {KNOWN_COLUMNS} FROM entries WHERE parent_id=?1"),
            &[id],
        )?;
    }
    Ok(out)
}

/// Folders with this many entries or more have them `lstat`ed by several
/// threads at once: a Downloads folder of 200k files is otherwise the work
/// of one thread while the others wait.
const WIDE_FOLDER: usize = 4096;

/// `lstat` of every name in a wide folder, in order, on several threads;
/// `None` for the daemon's own cookie files.
fn lstat_all(dfd: DirRef<'_>, names: &pfs::Names) -> Vec<Option<std::io::Result<Stat>>> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8);
    let chunk = names.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let parts: Vec<_> = names
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    part.iter()
                        .map(|(name, _)| {
                            let os = pfs::os(name);
                            (!is_cookie(os)).then(|| pfs::lstat_at(dfd, os))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        parts
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}

/// A difference between the disk and the index, as `verify` reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    pub kind: DiffKind,
    pub path: PathBuf,
    /// What differs, in words (e.g. "size 10 -> 12").
    pub detail: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiffKind {
    /// On disk, not in the index.
    Missing,
    /// In the index, not on disk.
    Extra,
    /// In both, with different metadata or type.
    Stale,
}

/// One finding of the reconcile. Paths are empty unless the sink
/// [wants them](Sink::wants_paths).
enum Found {
    Insert(EntryRow, PathBuf),
    Update(EntryRow, Option<Known>, PathBuf),
    Delete(Known, PathBuf),
    /// What the rules keep out of one folder, as it should now be recorded.
    Unlisted(i64, Vec<Unlisted>),
}

/// Where the reconcile's findings go: the writer (scan) or a report
/// (verify). Shared by the walk's threads; each folder's findings arrive
/// in one call, a folder's before any of its subfolders'.
trait Sink: Sync {
    /// Whether paths are used (building them costs an allocation per
    /// entry, which a scan of millions does not need).
    fn wants_paths(&self) -> bool;
    fn new_id(&self) -> i64;
    fn emit(&self, found: Vec<Found>) -> Result<(), Error>;
    /// Whether the walk may read the index through a view up to
    /// [`READ_SPAN`] old. True for a scan: nothing but the walk itself
    /// writes entries while it runs (the watcher's batches wait on the
    /// same thread), and it reads each folder's rows once, before it sends
    /// any change to them. Not for verify, which runs beside the writer.
    fn reads_may_lag(&self) -> bool {
        false
    }
}

/// How long a walk's thread keeps one read transaction across folders.
/// A statement outside a transaction takes and drops SQLite's shared lock
/// and WAL snapshot on its own: about a tenth of an unchanged restart's
/// CPU in a profile (README, Performance: "Unchanged restart").
const READ_SPAN: std::time::Duration = std::time::Duration::from_millis(25);

/// Rows per batch sent to the writer: one transaction commits many
/// folders' changes, not one folder's.
const BATCH: usize = 8192;

/// Sends the folders' changes to the writer, in batches, in the order the
/// folders were reconciled, and counts them.
struct WriteSink<'a> {
    store: &'a Store,
    writer: &'a WriteHandle,
    progress: &'a Progress,
    /// Changes not sent yet. Shared by the walk's threads, and sent while
    /// held, so that the order of `emit` calls is the writer's order.
    pending: Mutex<Vec<Op>>,
}

impl<'a> WriteSink<'a> {
    fn new(store: &'a Store, writer: &'a WriteHandle, progress: &'a Progress) -> Self {
        WriteSink {
            store,
            writer,
            progress,
            pending: Mutex::new(Vec::new()),
        }
    }

    /// Sends what is left.
    fn finish(&self) -> Result<(), Error> {
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

/// Collects differences instead of writing them.
#[derive(Default)]
struct VerifySink {
    next_id: AtomicI64,
    found: Mutex<Vec<Difference>>,
    /// Where each `Extra` path is in `found`: a folder that replaced a
    /// file is found missing later (when it is listed), and the two are one
    /// change of type.
    extra_at: Mutex<HashMap<PathBuf, usize>>,
}

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::File => "file",
        Kind::Dir => "folder",
        Kind::Symlink => "symlink",
        Kind::Other => "special file",
    }
}

fn what_differs(k: &Known, row: &EntryRow) -> String {
    let mut what = Vec::new();
    if k.size != row.size {
        what.push(format!("size {} -> {}", k.size, row.size));
    }
    if k.mtime_ns != row.mtime_ns {
        what.push(format!("mtime {} -> {}", k.mtime_ns, row.mtime_ns));
    }
    if k.ino != row.ino {
        what.push(format!("inode {} -> {}", k.ino, row.ino));
    }
    if k.nlink != row.nlink {
        what.push(format!("links {} -> {}", k.nlink, row.nlink));
    }
    if k.blocks != row.blocks {
        what.push(format!("blocks {} -> {}", k.blocks, row.blocks));
    }
    if k.mode != row.mode {
        what.push(format!(
            "mode {:o} -> {:o}",
            k.mode & 0o7777,
            row.mode & 0o7777
        ));
    }
    if k.flags != row.flags {
        what.push(format!(
            "readable {} -> {}",
            k.flags & FLAG_UNREADABLE == 0,
            row.flags & FLAG_UNREADABLE == 0
        ));
    }
    what.join(", ")
}

impl Sink for VerifySink {
    fn wants_paths(&self) -> bool {
        true
    }
    fn new_id(&self) -> i64 {
        self.next_id.fetch_sub(1, Ordering::Relaxed) - 1
    }
    fn emit(&self, found: Vec<Found>) -> Result<(), Error> {
        let mut out = self.found.lock_ok();
        let mut extra_at = self.extra_at.lock_ok();
        for f in found {
            match f {
                Found::Insert(row, path) => {
                    // A delete and an insert of one path is a change of type.
                    if let Some(at) = extra_at.remove(&path) {
                        let d = &mut out[at];
                        d.kind = DiffKind::Stale;
                        d.detail = format!("type {} -> {}", d.detail, kind_name(row.kind));
                        continue;
                    }
                    out.push(Difference {
                        kind: DiffKind::Missing,
                        path,
                        detail: kind_name(row.kind).into(),
                    });
                }
                Found::Update(row, old, path) => out.push(Difference {
                    kind: DiffKind::Stale,
                    path,
                    detail: old.map(|k| what_differs(&k, &row)).unwrap_or_default(),
                }),
                Found::Delete(old, path) => {
                    extra_at.insert(path.clone(), out.len());
                    out.push(Difference {
                        kind: DiffKind::Extra,
                        path,
                        detail: kind_name(old.kind).into(),
                    });
                }
                Found::Unlisted(..) => {}
            }
        }
        Ok(())
    }
}

/// Walks `target` and writes the differences to the index. Returns once
/// every change is committed.
pub fn scan(
    store: &Store,
    writer: &WriteHandle,
    target: &ScanTarget,
    progress: &Progress,
    cancel: &AtomicBool,
    watcher: Option<&Arc<Watcher>>,
) -> Result<Outcome, Error> {
    let started = std::time::Instant::now();
    let sink = WriteSink::new(store, writer, progress);
    let links = Links::new(!target.is_root);
    let result = reconcile(store, target, progress, cancel, watcher, &sink, &links);
    sink.finish()?;
    if let Ok(start_id) = result
        && target.is_root
    {
        writer.send(vec![Op::RootScanned {
            root_id: target.root_id,
            entry_id: start_id,
            at: unix_now(),
        }])?;
    }
    // What was sent is committed even when cancelled; the next start's
    // reconcile finishes the job.
    writer.flush()?;
    let start_id = result?;
    // A folder scanned on its own (new, moved in, or recrawled) may hold
    // hard links to files elsewhere: their link counts changed too.
    let refreshed = refresh_links(store, writer, links.take())?;
    let outcome = Outcome {
        start_id,
        scanned: progress.scanned.load(Ordering::Relaxed),
        errors: progress.errors.load(Ordering::Relaxed),
        changes: progress.changes.load(Ordering::Relaxed) + refreshed,
    };
    tracing::info!(
        path = %target.start.display(),
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
    let sink = VerifySink::default();
    reconcile(
        store,
        target,
        progress,
        &AtomicBool::new(false),
        None,
        &sink,
        &Links::new(false),
    )?;
    Ok(sink.found.into_inner().unwrap_or_else(|e| e.into_inner()))
}

/// Inodes (dev, ino) whose other paths need their link counts refreshed,
/// each with the largest link count a fresh `lstat` reported for it (0:
/// only a deleted link was seen).
pub(crate) type LinkCounts = HashMap<(u64, u64), u64>;

/// Inodes with several links whose rows changed, collected so that the
/// other indexed paths of each inode get their link counts refreshed.
struct Links {
    on: bool,
    inodes: Mutex<LinkCounts>,
}

impl Links {
    fn new(on: bool) -> Links {
        Links {
            on,
            inodes: Mutex::new(HashMap::new()),
        }
    }

    /// Notes an entry written (new `row`) or deleted (`old`) when either
    /// side says it has several links.
    fn note(&self, row: Option<&EntryRow>, old: Option<&Known>) {
        if !self.on {
            return;
        }
        let mut set = self.inodes.lock_ok();
        if let Some(r) = row
            && r.kind != Kind::Dir
            && (r.nlink > 1 || old.is_some_and(|k| k.nlink > 1))
        {
            let n = set.entry((r.dev, r.ino)).or_default();
            *n = (*n).max(r.nlink);
        }
        if let Some(k) = old
            && k.kind != Kind::Dir
            && k.nlink > 1
        {
            set.entry((k.dev, k.ino)).or_default();
        }
    }

    /// Notes the multi-link files of a folder's subtree, before it is deleted.
    fn note_subtree(&self, conn: &Connection, dir: i64) -> Result<(), Error> {
        if !self.on {
            return Ok(());
        }
        let mut set = self.inodes.lock_ok();
        linked_under(conn, dir, &mut set)
    }

    fn take(&self) -> LinkCounts {
        std::mem::take(&mut *self.inodes.lock_ok())
    }
}

/// Adds the inodes with several links of entry `id` (a file, or every file
/// under a folder) to `set`: about to be deleted, they lose a link.
pub(crate) fn linked_under(conn: &Connection, id: i64, set: &mut LinkCounts) -> Result<(), Error> {
    let mut stmt = conn.prepare_cached(
        "WITH RECURSIVE sub(id) AS (SELECT ?1 UNION ALL SELECT e.id FROM entries e JOIN sub ON e.parent_id = sub.id WHERE e.kind = 1)
         SELECT e.dev, e.ino FROM entries e JOIN sub ON e.id = sub.id OR e.parent_id = sub.id
         WHERE e.nlink > 1 AND e.kind <> 1",
    )?;
    let found = stmt.query_map([id], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))?;
    for f in found {
        let (d, i) = f?;
        set.entry((d as u64, i as u64)).or_default();
    }
    Ok(())
}

/// The absolute path of entry `id`, from the tree.
pub(crate) fn path_of(conn: &Connection, id: i64) -> Result<Option<PathBuf>, Error> {
    let mut stmt = conn.prepare_cached("SELECT parent_id, name FROM entries WHERE id=?1")?;
    let mut parts: Vec<Vec<u8>> = Vec::new();
    let mut cur = id;
    loop {
        let Some((parent, name)) = stmt
            .query_row([cur], |r| {
                Ok((r.get::<_, Option<i64>>(0)?, r.get::<_, Vec<u8>>(1)?))
            })
            .optional()?
        else {
            return Ok(None);
        };
        parts.push(name);
        match parent {
            Some(p) => cur = p,
            None => break,
        }
    }
    let mut path = PathBuf::new();
    for p in parts.iter().rev() {
        path.push(pfs::os(p));
    }
    Ok(Some(path))
}

/// How many refreshes an inode with an out-of-date path is tried again in.
const RELINK_TRIES: u8 = 8;

/// Re-reads every indexed path of the given inodes and writes what
/// changed: a link made or removed anywhere changes the link count (and the
/// ctime) of every other path of the inode, and the kernel tells only the
/// folder where it happened. Returns the rows updated.
pub(crate) fn refresh_links(
    store: &Store,
    writer: &WriteHandle,
    mut inodes: LinkCounts,
) -> Result<u64, Error> {
    // Inodes whose paths were out of date at an earlier refresh (see below).
    let retried = std::mem::take(&mut *store.relink.lock_ok());
    for &inode in retried.keys() {
        inodes.entry(inode).or_default();
    }
    if inodes.is_empty() {
        return Ok(0);
    }
    let conn = store.open_reader()?;
    let mut ids: HashSet<i64> = HashSet::new();
    // Inodes with fewer indexed multi-link paths than links.
    let mut short: HashSet<(u64, u64)> = HashSet::new();
    {
        let mut linked = conn.prepare_cached(
            "SELECT id FROM entries WHERE ino=?1 AND dev=?2 AND nlink > 1 AND kind <> 1",
        )?;
        for (&(dev, ino), &links) in &inodes {
            let found = linked.query_map(rusqlite::params![ino as i64, dev as i64], |r| {
                r.get::<_, i64>(0)
            })?;
            let mut n = 0u64;
            for id in found {
                ids.insert(id?);
                n += 1;
            }
            if n < links {
                short.insert((dev, ino));
            }
        }
    }
    // Paths whose row still says one link (a link was made elsewhere) are
    // not in the multi-link index: when some link is unaccounted for, one
    // pass over the table finds them, for all such inodes at once. (It also
    // runs when the missing links are outside every root.)
    let inos: Vec<String> = short.iter().map(|(_, i)| (*i as i64).to_string()).collect();
    let devs: HashSet<u64> = short.iter().map(|(d, _)| *d).collect();
    if !short.is_empty() {
        let mut stmt = conn.prepare(&format!(
            "SELECT id, dev, ino FROM entries WHERE nlink = 1 AND kind <> 1 AND ino IN ({})",
            inos.join(",")
        ))?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(2)?,
            ))
        })?;
        for row in rows {
            let (id, dev, ino) = row?;
            if devs.contains(&(dev as u64)) && short.contains(&(dev as u64, ino as u64)) {
                ids.insert(id);
            }
        }
    }
    // A few times: a path the index keeps is out of date only until its
    // event is applied.
    let again = |old: &Known| {
        let tries = retried.get(&(old.dev, old.ino)).copied().unwrap_or(0);
        if tries < RELINK_TRIES {
            store.relink.lock_ok().insert((old.dev, old.ino), tries + 1);
        }
    };
    let mut ops = Vec::new();
    for id in ids {
        let (Some(old), Some(path)) = (load_one(&conn, id)?, path_of(&conn, id)?) else {
            continue;
        };
        // Gone or replaced: the event for that is on its way. Or a folder
        // above it was renamed and the index does not know it yet: a later
        // refresh, after that rename is applied, tries again.
        let Ok(s) = pfs::lstat(&path) else {
            again(&old);
            continue;
        };
        if s.ino != old.ino || s.dev != old.dev || s.kind != old.kind {
            again(&old);
            continue;
        }
        let mut row = row_from_stat(id, None, Vec::new(), &s);
        row.flags = old.flags;
        if !unchanged(&old, &row) {
            ops.push(Op::Update(row));
        }
    }
    let n = ops.len() as u64;
    if n > 0 {
        writer.send(ops)?;
        writer.flush()?;
    }
    Ok(n)
}

/// A folder waiting to be listed.
struct DirJob {
    /// The parent's open handle (kept open until this folder is opened)
    /// and the folder's name in it; `None` for the start folder.
    parent: Option<(Arc<pfs::Listing>, Vec<u8>)>,
    /// The watcher's handle on the parent folder (none for the start
    /// folder, or when the parent is not watched).
    parent_watch: Option<WatchRef>,
    path: PathBuf,
    /// The folder's own row as its parent's `lstat` saw it, and what the
    /// index had; emitted once the folder is opened (or found unreadable).
    row: EntryRow,
    old: Option<Known>,
}

/// What one walk shares between its threads.
struct Walk<'a> {
    store: &'a Store,
    rules: &'a Rules,
    root_dev: u64,
    cross: bool,
    progress: &'a Progress,
    cancel: &'a AtomicBool,
    watcher: Option<&'a Arc<Watcher>>,
    sink: &'a dyn Sink,
    links: &'a Links,
    /// Folders that have unlisted rows (read once: most folders have none,
    /// and a query per folder would cost a restart dearly).
    has_unlisted: HashSet<i64>,
    /// Folders to list (a stack: depth first keeps few handles open), and
    /// how many threads are busy with one.
    queue: Mutex<(Vec<DirJob>, usize)>,
    wake: Condvar,
    failed: Mutex<Option<Error>>,
    stop: AtomicBool,
}

/// The walk-and-compare shared by scan and verify; returns the start
/// folder's entry id.
fn reconcile(
    store: &Store,
    target: &ScanTarget,
    progress: &Progress,
    cancel: &AtomicBool,
    watcher: Option<&Arc<Watcher>>,
    sink: &dyn Sink,
    links: &Links,
) -> Result<i64, Error> {
    let conn = store.open_reader()?;
    let start_stat = pfs::lstat(&target.start)?;
    if !start_stat.is_dir() {
        return Err(Error::InvalidArgument(format!(
            "{} is not a folder",
            target.start.display()
        )));
    }
    let name = match (target.is_root, target.start.file_name()) {
        (true, _) | (false, None) => name_bytes(target.start.as_os_str()),
        (false, Some(n)) => name_bytes(n),
    };
    let (id, parent_id, old) = match target.start_id {
        Some(id) => {
            let parent_id = if target.is_root {
                None
            } else {
                conn.query_row("SELECT parent_id FROM entries WHERE id=?1", [id], |r| {
                    r.get::<_, Option<i64>>(0)
                })?
            };
            (id, parent_id, load_one(&conn, id)?)
        }
        None => (sink.new_id(), None, None),
    };
    let has_unlisted = conn
        .prepare("SELECT DISTINCT parent_id FROM unlisted")?
        .query_map([], |r| r.get::<_, i64>(0))?
        .collect::<Result<_, _>>()?;
    drop(conn);
    let walk = Walk {
        has_unlisted,
        store,
        rules: &target.rules,
        root_dev: start_stat.dev,
        cross: target.cross_filesystems,
        progress,
        cancel,
        watcher,
        sink,
        links,
        queue: Mutex::new((
            vec![DirJob {
                parent: None,
                parent_watch: None,
                path: target.start.clone(),
                row: row_from_stat(id, parent_id, name, &start_stat),
                old,
            }],
            0,
        )),
        wake: Condvar::new(),
        failed: Mutex::new(None),
        stop: AtomicBool::new(false),
    };
    // Threads of this walk's own, started from the calling thread, so
    // they inherit its priority (the scanner runs at nice 19 and idle I/O;
    // `fsctl verify` walks at the caller's).
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| walk.work());
        }
    });
    if let Some(e) = walk.failed.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
    Ok(id)
}

/// One walk thread's read transaction, held for up to [`READ_SPAN`]
/// across folders when the sink allows it.
struct Reading<'c> {
    conn: &'c Connection,
    held: bool,
    since: Option<std::time::Instant>,
}

impl<'c> Reading<'c> {
    fn new(conn: &'c Connection, held: bool) -> Self {
        Reading {
            conn,
            held,
            since: None,
        }
    }

    /// Before a folder: opens a transaction, or renews one held too long.
    fn begin(&mut self) -> Result<(), Error> {
        if !self.held {
            return Ok(());
        }
        if self.since.is_some_and(|t| t.elapsed() >= READ_SPAN) {
            self.end();
        }
        if self.since.is_none() {
            self.conn.execute_batch("BEGIN")?;
            self.since = Some(std::time::Instant::now());
        }
        Ok(())
    }

    fn end(&mut self) {
        if self.since.take().is_some() {
            // Read-only: a failed end loses nothing, and the transaction
            // is rolled back when the connection closes.
            let _ = self.conn.execute_batch("COMMIT");
        }
    }
}

impl Drop for Reading<'_> {
    fn drop(&mut self) {
        self.end();
    }
}

impl Walk<'_> {
    /// One thread of the walk: takes folders until none is left.
    fn work(&self) {
        let conn = match self.store.open_reader() {
            Ok(c) => c,
            Err(e) => return self.fail(e),
        };
        let mut reading = Reading::new(&conn, self.sink.reads_may_lag());
        loop {
            let job = {
                let mut q = self.queue.lock_ok();
                loop {
                    if self.stop.load(Ordering::Relaxed) {
                        return;
                    }
                    if let Some(job) = q.0.pop() {
                        q.1 += 1;
                        break job;
                    }
                    // Not held while this thread waits.
                    reading.end();
                    if q.1 == 0 {
                        self.wake.notify_all();
                        return;
                    }
                    q = self.wake.wait(q).unwrap_or_else(|e| e.into_inner());
                }
            };
            let result = if self.cancel.load(Ordering::Relaxed) {
                Err(Error::Cancelled)
            } else {
                reading.begin().and_then(|()| self.folder(&conn, job))
            };
            let mut q = self.queue.lock_ok();
            q.1 -= 1;
            match result {
                Ok(children) => {
                    q.0.extend(children);
                }
                Err(e) => {
                    drop(q);
                    self.fail(e);
                    return;
                }
            }
            self.wake.notify_all();
        }
    }

    fn fail(&self, e: Error) {
        let mut f = self.failed.lock_ok();
        if f.is_none() {
            *f = Some(e);
        }
        self.stop.store(true, Ordering::Relaxed);
        self.wake.notify_all();
    }

    fn path_if(&self, dir: &Path, name: &[u8]) -> PathBuf {
        if self.sink.wants_paths() {
            dir.join(pfs::os(name))
        } else {
            PathBuf::new()
        }
    }

    fn own_path(&self, path: &Path) -> PathBuf {
        if self.sink.wants_paths() {
            path.to_owned()
        } else {
            PathBuf::new()
        }
    }

    /// Lists one folder, reconciles its children, and returns its
    /// subfolders to walk.
    fn folder(&self, conn: &Connection, job: DirJob) -> Result<Vec<DirJob>, Error> {
        let DirJob {
            parent,
            parent_watch,
            path,
            mut row,
            old,
        } = job;
        let mut found = Vec::new();
        let opened = match &parent {
            Some((pdir, name)) => {
                pfs::listing_fd(pdir).and_then(|pfd| pfs::open_dir_at(pfd, pfs::os(name)))
            }
            None => {
                self.progress.scanned.fetch_add(1, Ordering::Relaxed);
                pfs::open_dir(&path)
            }
        };
        drop(parent);
        let mut watch = None;
        let listing = match opened {
            Ok(fd) => {
                // Watched before it is looked at: whatever changes after
                // this produces an event, whatever before is in the fstat
                // and the listing that follow.
                if let Some(w) = self.watcher {
                    watch = w.watch_dir_fd(&path, pfs::dir_ref(&fd), parent_watch);
                }
                if let Ok(s) = pfs::fstat(pfs::dir_ref(&fd))
                    && s.ino == row.ino
                {
                    row.size = s.size;
                    row.blocks = s.blocks;
                    row.mtime_ns = s.mtime_ns;
                    row.nlink = s.nlink;
                    row.mode = s.mode;
                }
                pfs::list(fd)
            }
            Err(e) => Err(e),
        };
        let (names, dir) = match listing {
            Ok(l) => l,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound || pfs::is_replaced(&e) => {
                // Gone (or replaced) since its parent saw it: the event for
                // that follows; the index forgets what it had.
                tracing::debug!("scan: {} vanished during the scan", path.display());
                if let Some(k) = old {
                    self.links.note_subtree(conn, k.id)?;
                    found.push(Found::Delete(k, self.own_path(&path)));
                }
                self.sink.emit(found)?;
                return Ok(Vec::new());
            }
            Err(e) => {
                row.flags |= FLAG_UNREADABLE;
                self.progress.errors.fetch_add(1, Ordering::Relaxed);
                tracing::warn!("scan: cannot read folder {}: {e}", path.display());
                // What it held can no longer be known.
                let known = match &old {
                    Some(k) => load_children(conn, k.id, k.is_wide_dir())?,
                    None => HashMap::new(),
                };
                self.emit_row(&mut found, row.clone(), old.as_ref(), self.own_path(&path));
                for (name, k) in known {
                    if k.kind == Kind::Dir {
                        self.links.note_subtree(conn, k.id)?;
                    }
                    self.links.note(None, Some(&k));
                    found.push(Found::Delete(k, self.path_if(&path, &name)));
                }
                if old.is_some() {
                    self.unlisted(conn, &mut found, row.id, Vec::new())?;
                }
                self.sink.emit(found)?;
                return Ok(Vec::new());
            }
        };
        let id = row.id;
        let existing = old.is_some();
        let wide = old.as_ref().is_some_and(Known::is_wide_dir);
        self.emit_row(&mut found, row, old.as_ref(), self.own_path(&path));
        let dfd = pfs::listing_fd(&dir)?;
        let mut known = if existing {
            load_children(conn, id, wide)?
        } else {
            HashMap::new()
        };
        let folder = self.rules.folder(&path);
        let mut hidden = Hidden::default();
        let mut subdirs = Vec::new();
        let mut pre = if names.len() >= WIDE_FOLDER {
            lstat_all(dfd, &names)
        } else {
            Vec::new()
        };
        for (k, (name, is_dir_hint)) in names.into_iter().enumerate() {
            let os = pfs::os(&name);
            if is_cookie(os) {
                continue;
            }
            self.progress.scanned.fetch_add(1, Ordering::Relaxed);
            // Taken already, for a wide folder.
            let mut pre = pre.get_mut(k).and_then(Option::take);
            // The listing usually says whether it is a folder; when it
            // does not, lstat first.
            let mut stat = None;
            let is_dir = match is_dir_hint {
                Some(d) => d,
                None => match pre.take().unwrap_or_else(|| pfs::lstat_at(dfd, os)) {
                    Ok(s) => {
                        stat = Some(s);
                        s.is_dir()
                    }
                    Err(_) => false,
                },
            };
            let verdict = folder.verdict(os, is_dir);
            if verdict.hides() {
                // Kept out (what the index had of it is deleted below),
                // but its bytes are counted.
                hidden.add_measured(dfd, &name, verdict, is_dir, self.root_dev, self.cross);
                continue;
            }
            let s = match stat
                .map_or_else(|| pre.take().unwrap_or_else(|| pfs::lstat_at(dfd, os)), Ok)
            {
                Ok(s) => s,
                Err(e) => {
                    self.progress.errors.fetch_add(1, Ordering::Relaxed);
                    if e.kind() == std::io::ErrorKind::NotFound {
                        tracing::debug!(
                            "scan: {} vanished during the scan",
                            path.join(os).display()
                        );
                    } else {
                        // Cannot stat but it is there: keep what the index knows.
                        tracing::warn!("scan: cannot stat {}: {e}", path.join(os).display());
                        known.remove(&name);
                    }
                    continue;
                }
            };
            if s.is_dir() && !self.cross && s.dev != self.root_dev {
                // A mount point: leave it out (its entry, if any, is deleted).
                continue;
            }
            let old = known.remove(&name);
            let mut row = row_from_stat(0, Some(id), name, &s);
            let old = match old {
                Some(k) if k.kind == row.kind => {
                    row.id = k.id;
                    Some(k)
                }
                other => {
                    if let Some(k) = other {
                        if k.kind == Kind::Dir {
                            self.links.note_subtree(conn, k.id)?;
                        }
                        self.links.note(None, Some(&k));
                        found.push(Found::Delete(k, self.path_if(&path, &row.name)));
                    }
                    row.id = self.sink.new_id();
                    None
                }
            };
            if row.kind == Kind::Dir {
                subdirs.push((row, old));
            } else {
                if row.nlink > 1
                    && let Some(w) = self.watcher
                {
                    w.watch_linked_file(&path.join(pfs::os(&row.name)), (row.dev, row.ino), watch);
                }
                let p = self.path_if(&path, &row.name);
                self.emit_row(&mut found, row, old.as_ref(), p);
            }
        }
        // Whatever the index has that the listing did not show is gone.
        for (name, k) in known {
            if k.kind == Kind::Dir {
                self.links.note_subtree(conn, k.id)?;
            }
            self.links.note(None, Some(&k));
            found.push(Found::Delete(k, self.path_if(&path, &name)));
        }
        self.unlisted(conn, &mut found, id, hidden.rows())?;
        // This folder's changes go before any of its subfolders' (the
        // writer needs a parent's row before its children's).
        self.sink.emit(found)?;
        let dir = Arc::new(dir);
        Ok(subdirs
            .into_iter()
            .map(|(row, old)| DirJob {
                path: path.join(pfs::os(&row.name)),
                parent: Some((dir.clone(), row.name.clone())),
                parent_watch: watch,
                row,
                old,
            })
            .collect())
    }

    /// A folder's or file's own row: inserted when new, updated when it
    /// differs from the index.
    fn emit_row(&self, found: &mut Vec<Found>, row: EntryRow, old: Option<&Known>, path: PathBuf) {
        match old {
            None => {
                self.links.note(Some(&row), None);
                found.push(Found::Insert(row, path));
            }
            Some(k) if !unchanged(k, &row) => {
                self.links.note(Some(&row), Some(k));
                found.push(Found::Update(row, Some(k.clone()), path));
            }
            Some(_) => {}
        }
    }

    /// Records what the rules keep out of folder `dir` when it differs
    /// from what the index has.
    fn unlisted(
        &self,
        conn: &Connection,
        found: &mut Vec<Found>,
        dir: i64,
        rows: Vec<Unlisted>,
    ) -> Result<(), Error> {
        if rows.is_empty() && !self.has_unlisted.contains(&dir) {
            return Ok(());
        }
        let before = crate::store::unlisted_of(conn, dir)?;
        if !same_unlisted(&before, &rows) {
            found.push(Found::Unlisted(dir, rows));
        }
        Ok(())
    }
}

/// Nothing to write: the same figures, and no excluded folder among them
/// (an excluded folder's row shows when it was last measured, so each
/// measurement is recorded; the nameless sum shows no time).
fn same_unlisted(a: &[Unlisted], b: &[Unlisted]) -> bool {
    a.len() == b.len()
        && a.iter().all(|x| {
            x.name.is_empty()
                && b.iter()
                    .any(|y| y.name == x.name && y.totals == x.totals && y.links == x.links)
        })
}

/// What the rules keep out of one folder: the excluded folders by name,
/// everything else summed into one nameless row.
#[derive(Default)]
struct Hidden {
    named: Vec<Unlisted>,
    sum: Totals,
    any_sum: bool,
    /// The files counted in `sum` (those of folders measured into it: the
    /// ones with several links), each inode once.
    seen: Seen,
}

/// Files with several links met by a sizes-only walk, by (dev, ino), with
/// their allocated and apparent bytes.
pub(crate) type Seen = HashMap<(u64, u64), (u64, u64)>;

/// An unlisted row's links, in a stable order.
fn linked(seen: Seen) -> Vec<crate::store::Linked> {
    let mut links: Vec<crate::store::Linked> = seen
        .into_iter()
        .map(|((dev, ino), sizes)| crate::store::Linked {
            dev,
            ino,
            sizes: Some(sizes),
        })
        .collect();
    links.sort_unstable();
    links
}

impl Hidden {
    fn add_measured(
        &mut self,
        dfd: DirRef<'_>,
        name: &[u8],
        v: Verdict,
        is_dir: bool,
        root_dev: u64,
        cross: bool,
    ) {
        let Ok(s) = pfs::lstat_at(dfd, pfs::os(name)) else {
            return; // gone, or not even lstat can see it: nothing to count
        };
        if s.is_dir() && !cross && s.dev != root_dev {
            return; // another file system: du -x does not count it either
        }
        if v == Verdict::Exclude && is_dir && s.is_dir() {
            let mut seen = Seen::new();
            let totals = measure(dfd, name, &s, root_dev, cross, &mut seen);
            self.named.push(Unlisted {
                name: name.to_vec(),
                totals,
                measured_at: unix_now(),
                links: linked(seen),
            });
            return;
        }
        let totals = if s.is_dir() {
            measure(dfd, name, &s, root_dev, cross, &mut self.seen)
        } else {
            // Every file here is noted, one link or several: a link made
            // to it later from another folder is seen there, not here, and
            // du must still count the inode once.
            if !first_met(&mut self.seen, &s) {
                return;
            }
            file_totals(&s)
        };
        self.sum.add(totals);
        self.any_sum = true;
    }

    fn rows(mut self) -> Vec<Unlisted> {
        if self.any_sum {
            self.named.push(Unlisted {
                name: Vec::new(),
                totals: self.sum,
                measured_at: unix_now(),
                links: linked(self.seen),
            });
        }
        self.named
    }
}

/// Notes a file with its sizes; false when it was met already.
fn first_met(seen: &mut Seen, s: &Stat) -> bool {
    match seen.entry((s.dev, s.ino)) {
        std::collections::hash_map::Entry::Occupied(_) => false,
        std::collections::hash_map::Entry::Vacant(v) => {
            v.insert((s.blocks * 512, s.size));
            true
        }
    }
}

fn file_totals(s: &Stat) -> Totals {
    Totals {
        bytes: s.blocks as i64 * 512,
        apparent: s.size as i64,
        files: 1,
        dirs: 0,
        incomplete: 0,
    }
}

/// Sizes of the folder `name` in `dfd` and everything under it, counted
/// as `du -s` counts (each inode once, other file systems left out), with
/// no name kept: a sizes-only walk for what the index does not hold. Files
/// with several links count unless already in `seen`, and are added to it.
pub(crate) fn measure(
    dfd: DirRef<'_>,
    name: &[u8],
    s: &Stat,
    root_dev: u64,
    cross: bool,
    seen: &mut Seen,
) -> Totals {
    let mut t = Totals {
        bytes: s.blocks as i64 * 512,
        apparent: s.size as i64,
        files: 0,
        dirs: 1,
        incomplete: 0,
    };
    // Folders to list, by their parent's listing handle and name: only
    // folders with subfolders still to open hold a handle.
    let mut stack: Vec<(Option<Arc<pfs::Listing>>, Vec<u8>)> = vec![(None, name.to_vec())];
    while let Some((parent, name)) = stack.pop() {
        let opened = match &parent {
            Some(p) => pfs::listing_fd(p).and_then(|pfd| pfs::open_dir_at(pfd, pfs::os(&name))),
            None => pfs::open_dir_at(dfd, pfs::os(&name)),
        };
        drop(parent);
        let Ok((names, dir)) = opened.and_then(pfs::list) else {
            t.incomplete += 1;
            continue;
        };
        let dir = Arc::new(dir);
        let Ok(sub_fd) = pfs::listing_fd(&dir) else {
            continue;
        };
        for (name, _) in names {
            let Ok(c) = pfs::lstat_at(sub_fd, pfs::os(&name)) else {
                continue;
            };
            if c.is_dir() {
                if !cross && c.dev != root_dev {
                    continue;
                }
                t.bytes += c.blocks as i64 * 512;
                t.apparent += c.size as i64;
                t.dirs += 1;
                stack.push((Some(dir.clone()), name));
            } else {
                if c.nlink > 1 && !first_met(seen, &c) {
                    continue;
                }
                t.add(file_totals(&c));
            }
        }
    }
    t
}
/// True when a walk of `root` would reach `path`: every folder between
/// them is a real folder (not a symlink) and, unless `cross_filesystems`,
/// on the root's file system, as is `path` itself when it is a folder.
/// What is answered about paths the index does not hold (the SKIP tier)
/// goes no further than a scan would.
pub fn reachable(root: &Path, path: &Path, cross_filesystems: bool) -> bool {
    let (Ok(root_meta), Ok(rest)) = (pfs::lstat(root), path.strip_prefix(root)) else {
        return false;
    };
    let root_dev = root_meta.dev;
    let mut at = root.to_owned();
    let comps: Vec<std::path::Component<'_>> = rest.components().collect();
    for (i, c) in comps.iter().enumerate() {
        let std::path::Component::Normal(name) = c else {
            return false;
        };
        at.push(name);
        let last = i + 1 == comps.len();
        match pfs::lstat(&at) {
            Ok(m) if m.is_dir() => {
                if !cross_filesystems && m.dev != root_dev {
                    return false;
                }
            }
            Ok(_) if last => {}
            _ => return false,
        }
    }
    true
}

/// True when a folder on the way from `root` down to `path` (or `path`
/// itself) is a symlink: a walk started at `path` would leave the root.
pub fn through_symlink(root: &Path, path: &Path) -> bool {
    let Ok(rest) = path.strip_prefix(root) else {
        return false;
    };
    let mut at = root.to_owned();
    rest.components().any(|c| {
        at.push(c);
        pfs::lstat(&at).is_ok_and(|m| m.kind == Kind::Symlink)
    })
}

/// Canonical absolute form of a root path.
pub fn canonical_root(path: &Path) -> Result<PathBuf, Error> {
    let p = fsindex_proto::paths::canonicalize(path).map_err(|e| {
        Error::InvalidArgument(format!("cannot use {} as a root: {e}", path.display()))
    })?;
    if !p.is_dir() {
        return Err(Error::InvalidArgument(format!(
            "cannot use {} as a root: not a folder",
            path.display()
        )));
    }
    Ok(p)
}

/// What a root lets into the index: its rules and whether other file
/// systems are entered.
#[derive(Clone, Copy, Debug)]
pub struct Scope<'a> {
    pub rules: &'a Rules,
    pub cross_filesystems: bool,
    /// Files with several links get a watch of their own.
    pub watcher: Option<&'a Watcher>,
}

/// Where the default file systems ignore case (APFS, NTFS): a name that is
/// new to the index is checked against the folder's listing before it is
/// added, since a stat answers for any spelling.
const MAYBE_CASE_INSENSITIVE: bool = cfg!(any(target_os = "macos", windows));

/// True when `dir` lists `name` byte for byte (listed once into `cache`).
fn listed(cache: &mut Option<HashSet<Vec<u8>>>, dir: &Path, name: &[u8]) -> bool {
    let names = cache.get_or_insert_with(|| {
        pfs::open_dir(dir)
            .and_then(pfs::list)
            .map(|(names, _)| names.into_iter().map(|(n, _)| n).collect())
            .unwrap_or_default()
    });
    names.contains(name)
}

/// Reconciles single entries of one folder (paths from watcher events) and
/// the folder's own row. Returns the folders that are new: the caller scans
/// them whole. The changes are sent; the caller flushes. Entries with
/// several links are noted in `links`, for [`refresh_links`].
#[allow(clippy::too_many_arguments)]
pub fn apply_names(
    store: &Store,
    conn: &Connection,
    writer: &WriteHandle,
    dir_id: i64,
    dir: &Path,
    names: &[std::ffi::OsString],
    scope: Scope<'_>,
    links: &mut LinkCounts,
) -> Result<Vec<(PathBuf, i64)>, Error> {
    let Scope {
        rules,
        cross_filesystems,
        watcher,
    } = scope;
    let progress = Progress::default();
    let sink = WriteSink::new(store, writer, &progress);
    let noted = Links::new(true);
    let mut found = Vec::new();
    let mut new_dirs = Vec::new();
    let dir_meta = match pfs::lstat(dir) {
        Ok(m) => m,
        // The folder itself is gone: its parent's event removes it.
        Err(_) => return Ok(new_dirs),
    };
    if let Some(old) = load_one(conn, dir_id)? {
        let mut row = row_from_stat(dir_id, None, Vec::new(), &dir_meta);
        row.flags = old.flags;
        if !unchanged(&old, &row) {
            found.push(Found::Update(row, Some(old), PathBuf::new()));
        }
    }
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {KNOWN_COLUMNS} FROM entries WHERE parent_id=?1 AND name=?2"
    ))?;
    let folder = rules.folder(dir);
    let mut hidden_changed = false;
    // The folder's names, listed once when a new name needs checking.
    let mut listing: Option<HashSet<Vec<u8>>> = None;
    for name in names {
        if is_cookie(name) {
            continue;
        }
        let bytes = name_bytes(name);
        let path = dir.join(name);
        let old = stmt
            .query_row(rusqlite::params![dir_id, bytes], known_from_sql)
            .optional()?;
        let gone = |found: &mut Vec<Found>, k: Known| -> Result<(), Error> {
            if k.kind == Kind::Dir {
                noted.note_subtree(conn, k.id)?;
            }
            noted.note(None, Some(&k));
            found.push(Found::Delete(k, PathBuf::new()));
            Ok(())
        };
        let meta = match pfs::lstat(&path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if let Some(k) = old {
                    gone(&mut found, k)?;
                }
                // It may have been one of the folder's unlisted entries.
                hidden_changed |=
                    folder.verdict(name, false).hides() || folder.verdict(name, true).hides();
                continue;
            }
            Err(e) => {
                progress.errors.fetch_add(1, Ordering::Relaxed);
                // Not even the log may hold a name the rules keep out.
                if !folder.verdict(name, false).hides() && !folder.verdict(name, true).hides() {
                    tracing::warn!("cannot stat {}: {e}", path.display());
                }
                continue;
            }
        };
        if old.is_none() && MAYBE_CASE_INSENSITIVE && !listed(&mut listing, dir, &bytes) {
            // Another spelling of a name the folder holds: on a
            // case-insensitive file system the stat answered for that one
            // (it is indexed under its own name).
            continue;
        }
        if folder.verdict(name, meta.is_dir()).hides() {
            // Kept out; what the index had of it (from before the rules
            // changed) goes, and its bytes are counted afresh.
            if let Some(k) = old {
                gone(&mut found, k)?;
            }
            hidden_changed = true;
            continue;
        }
        if meta.is_dir() && !cross_filesystems && meta.dev != dir_meta.dev {
            continue; // a mount point appeared: not entered (du -x)
        }
        let mut row = row_from_stat(0, Some(dir_id), bytes, &meta);
        if let Some(w) = watcher
            && row.kind != Kind::Dir
            && row.nlink > 1
        {
            w.watch_linked_file(&path, (row.dev, row.ino), None);
        }
        // A folder at the name is the one indexed only if it is the same
        // inode: one moved away and another made or moved in under its name
        // (mv d out; mkdir d, or cp -a into d) holds other entries, so it is
        // a new folder and scanned whole.
        let same = |k: &Known| {
            k.kind == row.kind && (k.kind != Kind::Dir || (k.dev, k.ino) == (row.dev, row.ino))
        };
        match old {
            Some(k) if same(&k) => {
                row.id = k.id;
                row.flags = k.flags;
                if row.kind == Kind::Dir && k.mode != row.mode {
                    // Permissions decide what can be listed: walk it again.
                    new_dirs.push((path.clone(), k.id));
                }
                if !unchanged(&k, &row) {
                    noted.note(Some(&row), Some(&k));
                    found.push(Found::Update(row, Some(k), PathBuf::new()));
                }
            }
            other => {
                if let Some(k) = other {
                    gone(&mut found, k)?;
                }
                row.id = sink.new_id();
                let id = row.id;
                let is_dir = row.kind == Kind::Dir;
                noted.note(Some(&row), None);
                found.push(Found::Insert(row, PathBuf::new()));
                if is_dir {
                    new_dirs.push((path, id));
                }
            }
        }
    }
    if hidden_changed {
        // Count the folder's unlisted entries afresh (a sizes-only pass
        // over the names the rules keep out).
        let root_dev = dir_meta.dev;
        if let Ok(fd) = pfs::open_dir(dir)
            && let Ok((names, listing)) = pfs::list(fd)
            && let Ok(dfd) = pfs::listing_fd(&listing)
        {
            let mut hidden = Hidden::default();
            for (name, hint) in names {
                let os = pfs::os(&name);
                let is_dir =
                    hint.unwrap_or_else(|| pfs::lstat_at(dfd, os).is_ok_and(|s| s.is_dir()));
                let v = folder.verdict(os, is_dir);
                if v.hides() && !is_cookie(os) {
                    hidden.add_measured(dfd, &name, v, is_dir, root_dev, cross_filesystems);
                }
            }
            found.push(Found::Unlisted(dir_id, hidden.rows()));
        }
    }
    for (inode, n) in noted.take() {
        let m = links.entry(inode).or_default();
        *m = (*m).max(n);
    }
    sink.emit(found)?;
    sink.finish()?;
    Ok(new_dirs)
}
